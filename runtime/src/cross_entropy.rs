//! `cross_entropy` with class-index targets as one native host step of
//! compiled CPU plans, for f32 logits `[N, C]` without class weights or
//! label smoothing (the language-model loss): each row's maximum and sum
//! of exponentials in two passes over the row (the second from cache),
//! on 16 lanes of AVX-512 with kiln-math's `exp` ([`crate::avx512`]),
//! else in the widest vectors LLVM makes of plain loops, then one element
//! picked per row. Decomposed, the loss is `log_softmax` and a one-hot pick that
//! read each row three times with the exponentials in 4-lane Cranelift
//! vectors; the decomposition stays the definition (the interpreter runs
//! it), and other forms of the op still lower to it.
//!
//! The arithmetic is the decomposition's: `m = amax(row)` (NaN
//! propagates), `s = Σ exp(x − m)` with kiln-math's f32 `exp` summed in
//! f64 and rounded once, `logp = (x_t − m) − log(s)` with kiln-math's `log`,
//! the loss `−logp`; an ignored target gives 0 and no weight, a target
//! outside `[0, C)` picks nothing (−0.0, counted), as the one-hot pick
//! does (PyTorch raises there). Reductions: `none` writes each row's
//! loss, `sum` their sum, `mean` the sum over the count of targets not
//! ignored (NaN for none), each sum in f64 and rounded once. Results
//! differ from the decomposition's only by summation order.

use kiln_ir::graph::{Func, Inst};
use kiln_ir::{DType, LossReduction, Op, Result};
use kiln_math::Function;
use rayon::prelude::*;

use crate::spatial::Operand;
use crate::wide::widest_vectors;

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
                let row: &[f32] = if col_stride == 1 {
                    std::slice::from_raw_parts(first, c)
                } else {
                    copy.clear();
                    copy.extend((0..c).map(|j| *first.offset(j as isize * col_stride as isize)));
                    copy
                };
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
            let picked = match usize::try_from(target) {
                Ok(j) if j < c => {
                    let (m, s) = max_and_sum(row);
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
            let total: f64 = rows.iter().map(|(l, _)| f64::from(*l)).sum();
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

/// `(amax(row), Σ exp(row − amax))` (see the module doc), the sum rounded
/// to f32: 16 lanes of AVX-512 where the CPU has it, else the widest
/// vectors LLVM makes of the plain loops.
fn max_and_sum(row: &[f32]) -> (f32, f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F.
        let (m, s) = unsafe { max_and_sum_avx512(row) };
        return (m, s as f32);
    }
    let mut stats = [0f64; 2];
    // SAFETY: plain slice arithmetic.
    unsafe { max_and_sum_wide(row, &mut stats) };
    (stats[0] as f32, stats[1] as f32)
}

/// [`max_and_sum`] on 16 lanes: the maximum in two registers (NaN
/// propagating), then kiln-math's `exp` on 16 lanes ([`crate::avx512`]),
/// each exponential widened to f64 and summed in four registers. The row's
/// last partial vector is loaded under a mask, −inf in the lanes past its
/// end (which add e^−inf = 0).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn max_and_sum_avx512(row: &[f32]) -> (f32, f64) {
    use kiln_math::Builder;
    use std::arch::x86_64::*;
    // SAFETY: this function runs only where the CPU has AVX-512F.
    let b = &mut unsafe { crate::avx512::Avx512::new() };
    let n = row.len();
    let p = row.as_ptr();
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    let load_tail = |i: usize| {
        let mask = crate::avx512::first_lanes(n - i);
        // SAFETY: only the lanes before the row's end are read.
        unsafe { _mm512_mask_loadu_ps(ninf, mask, p.add(i)) }
    };
    // NaN-propagating, as the reference's amax (a select, not a branch).
    let top_of = |b: &mut crate::avx512::Avx512, top: __m512, x: __m512| {
        let take = b.gt(x, top) | b.is_nan(x);
        b.select(take, x, top)
    };
    let (mut t0, mut t1) = (ninf, ninf);
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: 32 elements from i are inside the row.
        let (x0, x1) = unsafe { (_mm512_loadu_ps(p.add(i)), _mm512_loadu_ps(p.add(i + 16))) };
        t0 = top_of(b, t0, x0);
        t1 = top_of(b, t1, x1);
        i += 32;
    }
    while i + 16 <= n {
        // SAFETY: 16 elements from i are inside the row.
        t0 = top_of(b, t0, unsafe { _mm512_loadu_ps(p.add(i)) });
        i += 16;
    }
    if i < n {
        t1 = top_of(b, t1, load_tail(i));
    }
    let top = top_of(b, t0, t1);
    let mut lanes = [0f32; 16];
    // SAFETY: 16 lanes into 16 floats.
    unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), top) };
    let m = lanes
        .iter()
        .fold(f32::NEG_INFINITY, |m, &x| crate::lines::nan_max(m, x));
    let mv = b.f32(m);
    let mut sums = [_mm512_setzero_pd(); 4];
    let mut add = |sums: &mut [__m512d; 4], k: usize, x: __m512| {
        let shifted = b.sub(x, mv);
        let e = kiln_math::algorithms::exp(b, shifted);
        let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(e));
        let hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(
            _mm512_castps_pd(e),
        )));
        sums[k] = _mm512_add_pd(sums[k], lo);
        sums[k + 1] = _mm512_add_pd(sums[k + 1], hi);
    };
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: 32 elements from i are inside the row.
        let (x0, x1) = unsafe { (_mm512_loadu_ps(p.add(i)), _mm512_loadu_ps(p.add(i + 16))) };
        add(&mut sums, 0, x0);
        add(&mut sums, 2, x1);
        i += 32;
    }
    while i + 16 <= n {
        // SAFETY: 16 elements from i are inside the row.
        add(&mut sums, 0, unsafe { _mm512_loadu_ps(p.add(i)) });
        i += 16;
    }
    if i < n {
        add(&mut sums, 2, load_tail(i));
    }
    let total = _mm512_add_pd(
        _mm512_add_pd(sums[0], sums[1]),
        _mm512_add_pd(sums[2], sums[3]),
    );
    (m, _mm512_reduce_add_pd(total))
}

/// Lanes of the row passes' accumulators (two AVX-512 registers of f32).
const LANES: usize = 32;

widest_vectors! {
    /// `stats = [amax(row), Σ exp(row − amax)]` (see the module doc).
    unsafe fn max_and_sum_wide(row: &[f32], stats: &mut [f64; 2]) => max_and_sum_plain
}

#[inline(always)]
unsafe fn max_and_sum_plain(row: &[f32], stats: &mut [f64; 2]) {
    let top_of = crate::lines::nan_max::<f32>;
    let mut tops = [f32::NEG_INFINITY; LANES];
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (t, &x) in tops.iter_mut().zip(chunk) {
            *t = top_of(*t, x);
        }
    }
    let mut m = f32::NEG_INFINITY;
    for x in tops.iter().chain(tail).copied() {
        m = top_of(m, x);
    }
    let exp = |x: f32| kiln_math::algorithms::exp(&mut kiln_math::scalar::Scalar, x - m);
    let mut sums = [0f64; LANES];
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (s, &x) in sums.iter_mut().zip(chunk) {
            *s += f64::from(exp(x));
        }
    }
    let mut s: f64 = sums.iter().sum();
    for &x in tail {
        s += f64::from(exp(x));
    }
    *stats = [f64::from(m), s];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX-512 row passes (where the CPU has them) against the plain
    /// loops: the same maximum, the same sum up to its order, on rows of
    /// every length up to 100 (full vectors and masked tails) with
    /// infinities and NaN.
    #[test]
    fn row_passes_agree() {
        let mut state = 7u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state as f32 / u32::MAX as f32) * 20.0 - 10.0
        };
        for len in 1..100 {
            for special in [
                None,
                Some(f32::INFINITY),
                Some(f32::NEG_INFINITY),
                Some(f32::NAN),
            ] {
                let mut row: Vec<f32> = (0..len).map(|_| next()).collect();
                if let Some(x) = special {
                    row[len / 2] = x;
                }
                let mut stats = [0f64; 2];
                // SAFETY: plain slice arithmetic.
                unsafe { max_and_sum_wide(&row, &mut stats) };
                let (m, s) = max_and_sum(&row);
                let want = (stats[0] as f32, stats[1] as f32);
                let same = |a: f32, b: f32, tol: f32| {
                    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * b.abs()
                };
                assert!(
                    same(m, want.0, 0.0),
                    "len {len} {special:?}: max {m} vs {}",
                    want.0
                );
                assert!(
                    same(s, want.1, 1e-6),
                    "len {len} {special:?}: sum {s} vs {}",
                    want.1
                );
            }
        }
    }
}
