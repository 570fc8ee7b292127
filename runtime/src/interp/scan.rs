//! Scans of the reference interpreter: `cumsum`, `cumprod`,
//! `logcumsumexp`, `cummax` and `cummin`, line by line along one dim, with
//! PyTorch's CPU accumulator dtypes (`acc_type<T, false>`: f32 accumulates
//! in f64, f16 and bf16 in f32, complex64 in complex128, integers in
//! int64) and its rounding of every output to the result dtype.
//!
//! These ops have no generated kernel yet: every backend runs them here,
//! inside its compiled plan (an `interpret` step).

use kiln_ir::layout::ResultLayout;
use kiln_ir::view::wrap_dim;
use kiln_ir::{DType, Op, Result, TensorType};

use crate::convert::{Elem, convert};
use crate::tensor::{Indices, Tensor};

/// PyTorch's CPU accumulator for a scan whose result is `d`.
fn accumulator(d: DType) -> DType {
    match d {
        DType::F32 => DType::F64,
        DType::F16 | DType::BF16 => DType::F32,
        DType::C64 | DType::C32 => DType::C128,
        d if d.is_integral() || d.is_bool() => DType::I64,
        d => d,
    }
}

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
/// stays; two equal infinities give `x`.
fn log_add_exp(x: f64, acc: f64) -> f64 {
    let (lo, hi) = if acc.is_nan() {
        (acc, acc)
    } else {
        (x.min(acc), x.max(acc))
    };
    if lo != hi || lo.is_finite() {
        hi + (lo - hi).exp().ln_1p()
    } else {
        x
    }
}

/// Whether `x` takes over as the running maximum (`max`) or minimum:
/// PyTorch's `x >= best || isnan(x)` (so the last of equal values wins,
/// and NaN sticks once met: nothing compares above it).
fn takes_over(x: Elem, best: Elem, max: bool) -> bool {
    match (x, best) {
        (Elem::F(x), Elem::F(b)) => x.is_nan() || if max { x >= b } else { x <= b },
        (Elem::I(x), Elem::I(b)) => {
            if max {
                x >= b
            } else {
                x <= b
            }
        }
        (Elem::B(x), Elem::B(b)) => {
            if max {
                x >= b
            } else {
                x <= b
            }
        }
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
    let acc = accumulator(d);
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
    let n = shape[axis];
    let mut line = shape.clone();
    line[axis] = 1;
    // A zero-dim tensor is read and written at `[]`, one line of one.
    let at = |index: &[i64]| -> Vec<i64> { if scalar { Vec::new() } else { index.to_vec() } };
    for start in Indices::new(&line) {
        let mut index = start.clone();
        let mut running: Option<Elem> = None;
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
