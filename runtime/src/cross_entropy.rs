//! `cross_entropy` with class-index targets as one native host step of
//! compiled CPU plans, for f32 logits `[N, C]` without class weights or
//! label smoothing (the language-model loss): each row's maximum and sum
//! of exponentials in two passes over the row (the second from cache),
//! on 16 lanes of AVX-512 with kiln-math's `exp` ([`crate::avx512`]),
//! else in the widest vectors LLVM makes of plain loops, then one element
//! picked per row (the row passes are softmax's, [`crate::softmax`]). Decomposed, the loss is `log_softmax` and a one-hot pick that
//! read each row three times with the exponentials in 4-lane Cranelift
//! vectors; the decomposition stays the definition (the interpreter runs
//! it), and other forms of the op still lower to it.
//!
//! The arithmetic is the decomposition's: `m = amax(row)` (NaN
//! propagates), `s = Σ exp(x − m)` with kiln-math's f32 `exp` summed in
//! f64 and rounded once (eight terms to a lane in f32 first, as softmax's
//! rows, [`crate::softmax`]), `logp = (x_t − m) − log(s)` with kiln-math's `log`,
//! the loss `−logp`; an ignored target gives 0 and no weight, a target
//! outside `[0, C)` picks nothing (−0.0, counted), as the one-hot pick
//! does (PyTorch raises there). Reductions: `none` writes each row's
//! loss, `sum` their sum, `mean` the sum over the count of targets not
//! ignored (NaN for none), each sum in f64 and rounded once. Results
//! differ from the decomposition's only by summation order and those
//! roundings.

use kiln_ir::graph::{Func, Inst};
use kiln_ir::{DType, LossReduction, Op, Result};
use kiln_math::Function;
use rayon::prelude::*;

use crate::spatial::Operand;

/// Whether the host runs this instruction as one native step: a
/// `cross_entropy` of f32 logits `[N, C]` (N, C ≥ 1) against i64 (or
/// i32) class indices `[N]`, without weights or label smoothing. Decomposition
/// keeps these for the CPU backend.
pub fn fused(func: &Func, inst: &Inst) -> bool {
    let Op::CrossEntropy {
        label_smoothing, ..
    } = inst.op
    else {
        return false;
    };
    let operand = |i: usize| inst.operands.get(i).and_then(|o| o.value());
    let (Some(x), Some(t)) = (operand(0), operand(1)) else {
        return false;
    };
    let (xt, tt) = (func.ty(x), func.ty(t));
    inst.results.len() == 1
        && operand(2).is_none()
        && label_smoothing.0 == 0.0
        && xt.dtype == DType::F32
        && func.ty(inst.result()).dtype == DType::F32
        && xt.rank() == 2
        && xt.shape.iter().all(|&n| n >= 1)
        && matches!(tt.dtype, DType::I64 | DType::I32)
        && tt.shape == xt.shape[..1]
}

/// Runs `op` (a [`fused`] cross_entropy) from logits `x` and targets `t`
/// (of dtype `t_dtype`: i64, or i32 where the plan narrowed them) into
/// `out`; `false` when this file has no kernel for it.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; `out` must not overlap the operands.
pub unsafe fn cross_entropy(
    op: &Op,
    x: Operand,
    t: (Operand, DType),
    out: Operand,
) -> Result<bool> {
    let Op::CrossEntropy {
        reduction,
        ignore_index,
        ..
    } = op
    else {
        return Ok(false);
    };
    let (t, t_dtype) = t;
    if x.geometry.rank() != 2 || !matches!(t_dtype, DType::I64 | DType::I32) {
        return Ok(false);
    }
    let (n, c) = (x.geometry.shape[0], x.geometry.shape[1] as usize);
    let (row_stride, col_stride) = (x.geometry.strides[0], x.geometry.strides[1]);
    let logits = crate::strided::Shared(x.ptr.cast::<f32>());
    let targets = crate::strided::Shared(t.ptr);
    let (t_offset, t_stride) = (t.geometry.offset, t.geometry.strides[0]);
    let x_offset = x.geometry.offset;
    // Each row's loss and whether it counts (rows on rayon's threads).
    let rows: Vec<(f32, bool)> = (0..n)
        .into_par_iter()
        .map_init(Vec::new, |copy: &mut Vec<f32>, i| {
            // SAFETY: row i's elements and target i are inside their
            // buffers (the caller's contract).
            let (row, target) = unsafe {
                let first = logits.ptr().offset((x_offset + i * row_stride) as isize);
                let row = crate::strided::row(first, c, col_stride, copy);
                let at = (t_offset + i * t_stride) as isize;
                let target = if t_dtype == DType::I64 {
                    *targets.ptr().cast::<i64>().offset(at)
                } else {
                    i64::from(*targets.ptr().cast::<i32>().offset(at))
                };
                (row, target)
            };
            if target == *ignore_index {
                return (0.0, false);
            }
            // The next row, when contiguous, is fetched while this one's
            // exponentials are computed (rayon hands a thread runs of
            // consecutive rows).
            let ahead = (col_stride == 1 && i + 1 < n).then(|| {
                // SAFETY: row i + 1's c elements are inside the buffer,
                // which nothing writes during the step.
                unsafe {
                    let first = logits
                        .ptr()
                        .offset((x_offset + (i + 1) * row_stride) as isize);
                    std::slice::from_raw_parts(first, c)
                }
            });
            let picked = match usize::try_from(target) {
                Ok(j) if j < c => {
                    let (m, s) = crate::softmax::max_and_sum_ahead(row, None, ahead);
                    (row[j] - m) - kiln_math::eval(Function::Log, s)
                }
                _ => 0.0,
            };
            (-picked, true)
        })
        .collect();
    let out_ptr = out.ptr.cast::<f32>();
    match reduction {
        LossReduction::None => {
            let (offset, stride) = (out.geometry.offset, out.geometry.strides[0]);
            for (i, (loss, _)) in rows.iter().enumerate() {
                // SAFETY: element i of the [N] output is inside its buffer.
                unsafe { *out_ptr.offset((offset + i as i64 * stride) as isize) = *loss };
            }
        }
        LossReduction::Sum | LossReduction::Mean => {
            // From +0, as PyTorch's nll_loss and the decomposition's sum
            // (Rust's float `sum` starts from -0.0: all-zero losses would
            // sum to -0.0).
            let total = rows.iter().fold(0.0, |s, (l, _)| s + f64::from(*l));
            let value = if *reduction == LossReduction::Mean {
                let count = rows.iter().filter(|(_, counts)| *counts).count();
                (total as f32) / (count as f32)
            } else {
                total as f32
            };
            // SAFETY: the 0-dim output's one element is inside its buffer.
            unsafe { *out_ptr.offset(out.geometry.offset as isize) = value };
        }
        LossReduction::Batchmean => return Ok(false),
    }
    Ok(true)
}
