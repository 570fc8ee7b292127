//! Reductions, index reductions and matrix products of the reference
//! interpreter. Floats accumulate in f64 and round once (at least as
//! accurate as PyTorch's f32 cascade sums and f16-in-f32 accumulation);
//! integers accumulate in their computation dtype with wrap-around, as
//! PyTorch's int64 sums do.

use kiln_ir::infer::{matmul_shape, reduced_dims};
use kiln_ir::ops::Fold;
use kiln_ir::view::{broadcast_shapes, wrap_dim};
use kiln_ir::{ArgReduceOp, DType, Error, ErrorKind, ReduceOp, Result, TensorType};

use super::round_result;
use crate::convert::{Elem, convert, wrap_int};
use crate::tensor::{Indices, Tensor};

/// The output index an input index reduces into.
fn out_index(index: &[i64], reduced: &[bool], keepdim: bool) -> Vec<i64> {
    index
        .iter()
        .zip(reduced)
        .filter_map(|(&i, &r)| match (r, keepdim) {
            (false, _) => Some(i),
            (true, true) => Some(0),
            (true, false) => None,
        })
        .collect()
}

/// The reference arithmetic of every fold, one arm each: floats exactly
/// in f64 (rounded once at the end), integers wrapping in the computation
/// dtype, NaN propagating through max and min.
fn fold(f: Fold, acc: Elem, x: Elem, compute: DType) -> Elem {
    match (f, acc, x) {
        (Fold::Sum, Elem::F(a), Elem::F(b)) => Elem::F(a + b),
        (Fold::Sum, Elem::C(ar, ai), Elem::C(br, bi)) => Elem::C(ar + br, ai + bi),
        (Fold::Sum, Elem::I(a), Elem::I(b)) => Elem::I(wrap_int(a.wrapping_add(b), compute)),
        (Fold::Prod, Elem::F(a), Elem::F(b)) => Elem::F(a * b),
        (Fold::Prod, Elem::C(ar, ai), Elem::C(br, bi)) => {
            Elem::C(ar * br - ai * bi, ar * bi + ai * br)
        }
        (Fold::Prod, Elem::I(a), Elem::I(b)) => Elem::I(wrap_int(a.wrapping_mul(b), compute)),
        (Fold::Max, Elem::F(a), Elem::F(b)) => Elem::F(super::elementwise::float_max(a, b)),
        (Fold::Max, Elem::I(a), Elem::I(b)) => Elem::I(a.max(b)),
        (Fold::Min, Elem::F(a), Elem::F(b)) => Elem::F(super::elementwise::float_min(a, b)),
        (Fold::Min, Elem::I(a), Elem::I(b)) => Elem::I(a.min(b)),
        (Fold::Or, a, b) => Elem::B(a.truthy() || b.truthy()),
        (Fold::And, a, b) => Elem::B(a.truthy() && b.truthy()),
        // Inference admits no other pairing.
        (_, a, _) => a,
    }
}

/// sum, prod, amax, amin (mean runs through its decomposition).
#[allow(clippy::too_many_arguments)]
pub fn reduce(
    op: ReduceOp,
    x: &Tensor,
    compute: DType,
    dims: Option<&[i64]>,
    keepdim: bool,
    natural: DType,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let r = reduced_dims(dims, x.shape().len())?;
    let f = Fold::of(op, compute);
    let out_shape = &out_ty.shape;
    let n_out: i64 = out_shape.iter().product();
    let identity = convert(Elem::from_scalar(f.identity(compute)), compute);
    let mut acc: Vec<Elem> = vec![identity; n_out as usize];
    let out_strides_c = kiln_ir::layout::contiguous_strides(out_shape);
    let shape = x.shape().to_vec();
    for (index, v) in Indices::new(&shape).zip(x.values()) {
        let o = out_index(&index, &r, keepdim);
        let k: i64 = o.iter().zip(&out_strides_c).map(|(a, b)| a * b).sum();
        let v = convert(v, compute);
        let slot = &mut acc[k as usize];
        *slot = fold(f, *slot, v, compute);
    }
    let mut out = Tensor::zeros_strided(out_shape, Some(strides), natural, out_ty.device)?;
    for (index, a) in Indices::new(out_shape).zip(acc) {
        out.set(&index, round_result(a, natural))?;
    }
    Ok(out)
}

/// argmax/argmin: the first index of the extreme value; NaN counts as the
/// extreme (PyTorch propagates it).
pub fn arg_reduce(
    op: ArgReduceOp,
    x: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let better = |a: Elem, b: Elem| -> bool {
        let (a, b) = (a.f64(), b.f64());
        if b.is_nan() {
            return false;
        }
        if a.is_nan() {
            return true;
        }
        match op {
            ArgReduceOp::Argmax => a > b,
            ArgReduceOp::Argmin => a < b,
        }
    };
    let int_better = |a: Elem, b: Elem| match (a, b) {
        (Elem::I(a), Elem::I(b)) => match op {
            ArgReduceOp::Argmax => a > b,
            ArgReduceOp::Argmin => a < b,
        },
        _ => better(a, b),
    };
    let rank = x.shape().len();
    let (r, keep) = match dim {
        None => (vec![true; rank], keepdim),
        Some(d) => {
            let mut r = vec![false; rank];
            if rank > 0 {
                r[wrap_dim(d, rank)?] = true;
            }
            (r, keepdim)
        }
    };
    let out_shape = &out_ty.shape;
    let out_c = kiln_ir::layout::contiguous_strides(out_shape);
    let n_out: i64 = out_shape.iter().product();
    let mut best: Vec<Option<(Elem, i64)>> = vec![None; n_out as usize];
    let shape = x.shape().to_vec();
    for (index, v) in Indices::new(&shape).zip(x.values()) {
        let o = out_index(&index, &r, keep);
        let k: i64 = o.iter().zip(&out_c).map(|(a, b)| a * b).sum();
        // The position along the reduced dims, in row-major order.
        let pos = index
            .iter()
            .zip(&shape)
            .zip(&r)
            .filter(|(_, r)| **r)
            .fold(0i64, |p, ((i, s), _)| p * s + i);
        let slot = &mut best[k as usize];
        match slot {
            Some((b, _)) if !int_better(v, *b) => {}
            _ => *slot = Some((v, pos)),
        }
    }
    let mut out = Tensor::zeros_strided(out_shape, Some(strides), DType::I64, out_ty.device)?;
    for (index, b) in Indices::new(out_shape).zip(best) {
        let (_, pos) =
            b.ok_or_else(|| Error::new(ErrorKind::Shape, format!("{}: empty input", op.name())))?;
        out.set(&index, Elem::I(pos as i128))?;
    }
    Ok(out)
}

/// torch.matmul for 1-D, 2-D and batched operands.
pub fn matmul(a: &Tensor, b: &Tensor, out_ty: &TensorType, strides: &[i64]) -> Result<Tensor> {
    let dtype = a.dtype();
    let (sa, sb) = (a.shape(), b.shape());
    matmul_shape(sa, sb)?;
    let a2: Vec<i64> = if sa.len() == 1 {
        vec![1, sa[0]]
    } else {
        sa.to_vec()
    };
    let b2: Vec<i64> = if sb.len() == 1 {
        vec![sb[0], 1]
    } else {
        sb.to_vec()
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let n = b2[b2.len() - 1];
    let batch = broadcast_shapes(&a2[..a2.len() - 2], &b2[..b2.len() - 2])?;
    let a_batch = &a2[..a2.len() - 2];
    let b_batch = &b2[..b2.len() - 2];
    let compute = dtype.opmath();
    let read =
        |t: &Tensor, shape2: &[i64], bidx: &[i64], own_batch: &[i64], i: i64, j: i64| -> Elem {
            let off = bidx.len() - own_batch.len();
            let mut index: Vec<i64> = own_batch
                .iter()
                .enumerate()
                .map(|(d, s)| if *s == 1 { 0 } else { bidx[off + d] })
                .collect();
            index.push(i);
            index.push(j);
            // Undo the 1-D promotion.
            let index = if t.shape().len() == 1 {
                vec![if shape2[0] == 1 { j } else { i }]
            } else {
                index
            };
            convert(t.get(&index), compute)
        };
    let mut values = Vec::new();
    for bidx in Indices::new(&batch) {
        for i in 0..m {
            for j in 0..n {
                let mut acc = if dtype.is_complex() {
                    Elem::C(0.0, 0.0)
                } else if dtype.is_integral() || dtype.is_bool() {
                    Elem::I(0)
                } else {
                    Elem::F(0.0)
                };
                for p in 0..k {
                    let x = read(a, &a2, &bidx, a_batch, i, p);
                    let y = read(b, &b2, &bidx, b_batch, p, j);
                    acc = match (acc, x, y) {
                        (Elem::F(s), Elem::F(x), Elem::F(y)) => Elem::F(s + x * y),
                        (Elem::C(sr, si), Elem::C(xr, xi), Elem::C(yr, yi)) => {
                            Elem::C(sr + xr * yr - xi * yi, si + xr * yi + xi * yr)
                        }
                        (Elem::I(s), x, y) => Elem::I(wrap_int(
                            s.wrapping_add(x.int().wrapping_mul(y.int())),
                            dtype,
                        )),
                        (acc, _, _) => acc,
                    };
                }
                values.push(round_result(acc, dtype));
            }
        }
    }
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), dtype, out_ty.device)?;
    let shape = out_ty.shape.clone();
    for (index, v) in Indices::new(&shape).zip(values) {
        out.set(&index, v)?;
    }
    Ok(out)
}
