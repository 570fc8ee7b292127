//! Scans of the reference interpreter: `cumsum`, `cumprod`,
//! `logcumsumexp`, `cummax` and `cummin`, line by line along one dim, with
//! PyTorch's CPU accumulator dtypes (`acc_type<T, false>`: f32 accumulates
//! in f64, f16 and bf16 in f32, complex64 in complex128, integers in
//! int64) and its rounding of every output to the result dtype.
//!
//! The CPU backend runs them here, inside its compiled plans (an
//! `interpret` step), except cumsum and cumprod of f32, f64 and i64,
//! logcumsumexp of f32 and f64, and cummax and cummin of f32, f64, i32 and
//! i64, which it runs natively with this arithmetic (`crate::lines`); the
//! CUDA backend has generated kernels with this arithmetic for most
//! (`kiln_cuda::scan`).

use kiln_ir::layout::ResultLayout;
use kiln_ir::view::wrap_dim;
use kiln_ir::{DType, Op, Result, TensorType};

use crate::convert::{Elem, convert};
use crate::tensor::{Indices, Tensor};

fn add(a: Elem, b: Elem) -> Elem {
    match (a, b) {
        (Elem::I(x), Elem::I(y)) => Elem::I(x.wrapping_add(y)),
        (Elem::C(..), _) | (_, Elem::C(..)) => {
            let ((ar, ai), (br, bi)) = (a.complex(), b.complex());
            Elem::C(ar + br, ai + bi)
        }
        _ => Elem::F(a.f64() + b.f64()),
    }
}

fn mul(a: Elem, b: Elem) -> Elem {
    match (a, b) {
        (Elem::I(x), Elem::I(y)) => Elem::I(x.wrapping_mul(y)),
        (Elem::C(..), _) | (_, Elem::C(..)) => {
            let ((ar, ai), (br, bi)) = (a.complex(), b.complex());
            Elem::C(ar * br - ai * bi, ar * bi + ai * br)
        }
        _ => Elem::F(a.f64() * b.f64()),
    }
}

/// PyTorch's `_log_add_exp_helper(x, acc)`: NaN in the running value
/// stays, and a NaN `x` makes it NaN (C++'s `std::min`/`std::max` return
/// their first operand when a comparison fails, where Rust's `min`/`max`
/// would drop the NaN); two equal infinities give `x`. (The native
/// logcumsumexp's step too, `crate::lines`.)
pub(crate) fn log_add_exp(x: f64, acc: f64) -> f64 {
    let (lo, hi) = if acc.is_nan() {
        (acc, acc)
    } else {
        (if acc < x { acc } else { x }, if x < acc { acc } else { x })
    };
    if lo != hi || lo.is_finite() {
        hi + (lo - hi).exp().ln_1p()
    } else {
        x
    }
}

/// Whether `x` takes over as the running maximum (`max`) or minimum
/// ([`crate::lines::takes_over`], PyTorch's rule).
fn takes_over(x: Elem, best: Elem, max: bool) -> bool {
    use crate::lines::takes_over as rule;
    match (x, best) {
        (Elem::F(x), Elem::F(b)) => rule(x, b, max),
        (Elem::I(x), Elem::I(b)) => rule(x, b, max),
        (Elem::B(x), Elem::B(b)) => rule(x, b, max),
        _ => false,
    }
}

/// Runs the scan `op` over `x` (already of the result dtype's values).
pub fn scan(
    op: &Op,
    x: &Tensor,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    let mut outs = super::fresh_results(types, layouts)?;
    let d = types[0].dtype;
    let acc = kiln_ir::ops::scan_accumulator(d);
    let dim = match op {
        Op::Cumsum { dim, .. }
        | Op::Cumprod { dim, .. }
        | Op::Logcumsumexp { dim }
        | Op::Cummax { dim }
        | Op::Cummin { dim } => *dim,
        _ => return Ok(outs),
    };
    let mut shape = x.shape().to_vec();
    let scalar = shape.is_empty();
    if scalar {
        shape.push(1);
    }
    let axis = wrap_dim(dim, shape.len())?;
    if !scalar && float_cumulative(op, x, &mut outs[0], axis)? {
        return Ok(outs);
    }
    let n = shape[axis];
    let mut line = shape.clone();
    line[axis] = 1;
    // A zero-dim tensor is read and written at `[]`, one line of one.
    let at = |index: &[i64]| -> Vec<i64> { if scalar { Vec::new() } else { index.to_vec() } };
    // The sums and products fold from their identity, as PyTorch's CPU
    // scans (so a first -0.0 sums to +0.0); cummax and cummin start at
    // the first element.
    let identity = match op {
        Op::Cumsum { .. } => Some(convert(Elem::I(0), acc)),
        Op::Cumprod { .. } => Some(convert(Elem::I(1), acc)),
        Op::Logcumsumexp { .. } => Some(convert(Elem::F(f64::NEG_INFINITY), acc)),
        _ => None,
    };
    for start in Indices::new(&line) {
        let mut index = start.clone();
        let mut running: Option<Elem> = identity;
        let mut best_at = 0i64;
        for i in 0..n {
            index[axis] = i;
            let v = convert(x.get(&at(&index)), d);
            let next = match (op, running) {
                // cummax and cummin keep values as they are; the sums and
                // products run in the accumulator.
                (Op::Cummax { .. } | Op::Cummin { .. }, None) => v,
                (_, None) => convert(v, acc),
                (Op::Cumsum { .. }, Some(r)) => convert(add(r, convert(v, acc)), acc),
                (Op::Cumprod { .. }, Some(r)) => convert(mul(r, convert(v, acc)), acc),
                (Op::Logcumsumexp { .. }, Some(r)) => {
                    convert(Elem::F(log_add_exp(convert(v, acc).f64(), r.f64())), acc)
                }
                (Op::Cummax { .. } | Op::Cummin { .. }, Some(r)) => {
                    if takes_over(v, r, matches!(op, Op::Cummax { .. })) {
                        best_at = i;
                        v
                    } else {
                        r
                    }
                }
                _ => return Ok(outs),
            };
            running = Some(next);
            outs[0].set(&at(&index), convert(next, d))?;
            if outs.len() > 1 {
                outs[1].set(&at(&index), Elem::I(i128::from(best_at)))?;
            }
        }
    }
    Ok(outs)
}

/// cumsum and cumprod of f32 or f64 on the storages directly: the f64
/// accumulator from 0 or 1, every output rounded once: the arithmetic of
/// [`scan`]'s general loop, which
/// takes an `Elem` per element and is some 30 times slower. `false` for
/// the other scans and dtypes.
fn float_cumulative(op: &Op, x: &Tensor, out: &mut Tensor, axis: usize) -> Result<bool> {
    let product = match op {
        Op::Cumsum { .. } => false,
        Op::Cumprod { .. } => true,
        _ => return Ok(false),
    };
    let d = out.dtype();
    if x.dtype() != d || !matches!(d, DType::F32 | DType::F64) {
        return Ok(false);
    }
    let shape = x.shape().to_vec();
    let (xs, os) = (x.strides().to_vec(), out.strides().to_vec());
    let (xo, oo) = (x.offset(), out.offset());
    let size = d.itemsize();
    let src = x.storage().bytes();
    let dst = out.bytes_mut()?;
    let read = |at: i64| -> f64 {
        let at = at as usize * size;
        if size == 4 {
            let mut b = [0u8; 4];
            b.copy_from_slice(&src[at..at + 4]);
            f64::from(f32::from_le_bytes(b))
        } else {
            let mut b = [0u8; 8];
            b.copy_from_slice(&src[at..at + 8]);
            f64::from_le_bytes(b)
        }
    };
    let mut write = |at: i64, v: f64| {
        let at = at as usize * size;
        if size == 4 {
            dst[at..at + 4].copy_from_slice(&(v as f32).to_le_bytes());
        } else {
            dst[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
    };
    if shape.contains(&0) {
        return Ok(true);
    }
    // Every line along `axis`, the other dims by an odometer.
    let mut index = vec![0i64; shape.len()];
    loop {
        let base = |strides: &[i64], offset: i64| {
            offset + index.iter().zip(strides).map(|(i, s)| i * s).sum::<i64>()
        };
        let (bx, bo) = (base(&xs, xo), base(&os, oo));
        let mut acc = if product { 1.0 } else { 0.0 };
        for i in 0..shape[axis] {
            let v = read(bx + i * xs[axis]);
            acc = if product { acc * v } else { acc + v };
            write(bo + i * os[axis], acc);
        }
        let mut k = shape.len();
        loop {
            if k == 0 {
                return Ok(true);
            }
            k -= 1;
            if k == axis {
                continue;
            }
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
}
