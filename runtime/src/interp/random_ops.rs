//! The random ops on the interpreter (every backend runs them here): each
//! element from Philox at its logical position ([`crate::philox`]), turned
//! into its distribution in f64 and rounded to the result's dtype.

use kiln_ir::{DType, Error, ErrorKind, Op, Result, TensorType};

use super::{broadcast_elems, fill};
use crate::convert::{Elem, convert};
use crate::philox::{open_unit, standard_normal, u64_of, unit, words};
use crate::tensor::Tensor;

/// Significand digits of a float dtype: how many random bits a uniform
/// value in [0, 1) can hold exactly.
fn digits(dtype: DType) -> u32 {
    match dtype {
        DType::F16 => 11,
        DType::BF16 => 8,
        DType::F32 => 24,
        _ => 53,
    }
}

/// A real value rounded to `dtype` (integers as a float-to-integer cast).
fn real(v: f64, dtype: DType) -> Elem {
    convert(Elem::F(v), dtype)
}

/// An operand's values broadcast to `shape`, as f64, in logical order.
fn broadcast_values(t: &Tensor, shape: &[i64]) -> Result<Vec<f64>> {
    Ok(broadcast_elems(t, shape)?
        .into_iter()
        .map(Elem::f64)
        .collect())
}

/// Runs a random op (`None`: not one).
pub(super) fn run(
    op: &Op,
    operands: &[Option<&Tensor>],
    scalars: &[Option<f64>],
    out: &TensorType,
    strides: &[i64],
) -> Result<Option<Tensor>> {
    let d = out.dtype;
    let index = |i: i64| i as u64;
    let t = match op {
        Op::Rand { seed, .. } => fill(out, strides, |i| {
            real(unit(words(*seed, index(i)), digits(d)), d)
        })?,
        Op::Uniform { from, to, seed } => {
            let (from, to) = (from.0, to.0);
            fill(out, strides, |i| {
                real(
                    from + unit(words(*seed, index(i)), digits(d)) * (to - from),
                    d,
                )
            })?
        }
        Op::Randn { seed, .. } => fill(out, strides, |i| {
            real(standard_normal(words(*seed, index(i))), d)
        })?,
        Op::Normal { seed, .. } => {
            let side = |k: usize| -> Result<Vec<f64>> {
                match (
                    operands.get(k).copied().flatten(),
                    scalars.get(k).copied().flatten(),
                ) {
                    (Some(t), _) => broadcast_values(t, &out.shape),
                    (None, Some(v)) => Ok(vec![v; out.numel() as usize]),
                    (None, None) => Err(Error::new(
                        ErrorKind::Arity,
                        "normal takes a mean and a std",
                    )),
                }
            };
            let (mean, std) = (side(0)?, side(1)?);
            if std.iter().any(|s| !(*s >= 0.0)) {
                return Err(Error::new(
                    ErrorKind::Runtime,
                    "normal expects all elements of std >= 0.0",
                ));
            }
            fill(out, strides, |i| {
                let k = i as usize;
                real(
                    mean[k] + std[k] * standard_normal(words(*seed, index(i))),
                    d,
                )
            })?
        }
        Op::Randint {
            low, high, seed, ..
        } => {
            let range = (i128::from(*high) - i128::from(*low)) as u128;
            fill(out, strides, |i| {
                let v =
                    i128::from(*low) + (u128::from(u64_of(words(*seed, index(i)))) % range) as i128;
                convert(Elem::I(v), d)
            })?
        }
        Op::Bernoulli { p, seed } => {
            let probabilities = match p {
                Some(p) => vec![p.0; out.numel() as usize],
                None => {
                    let x =
                        operands.first().copied().flatten().ok_or_else(|| {
                            Error::new(ErrorKind::Arity, "bernoulli takes a tensor")
                        })?;
                    let p = broadcast_values(x, &out.shape)?;
                    if p.iter().any(|p| !(0.0..=1.0).contains(p)) {
                        return Err(Error::new(
                            ErrorKind::Runtime,
                            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
                        ));
                    }
                    p
                }
            };
            fill(out, strides, |i| {
                let hit = unit(words(*seed, index(i)), 53) < probabilities[i as usize];
                convert(Elem::I(i128::from(hit)), d)
            })?
        }
        Op::Exponential { lambd, seed } => fill(out, strides, |i| {
            // −ln of a value in (0, 1]: 0 is possible, infinity is not.
            let u = 1.0 - unit(words(*seed, index(i)), 53);
            real(-u.ln() / lambd.0, d)
        })?,
        Op::Cauchy {
            median,
            sigma,
            seed,
        } => fill(out, strides, |i| {
            let u = open_unit(words(*seed, index(i)));
            real(
                median.0 + sigma.0 * (std::f64::consts::PI * (u - 0.5)).tan(),
                d,
            )
        })?,
        Op::LogNormal { mean, std, seed } => fill(out, strides, |i| {
            real(
                (mean.0 + std.0 * standard_normal(words(*seed, index(i)))).exp(),
                d,
            )
        })?,
        Op::Geometric { p, seed } => fill(out, strides, |i| {
            // The number of trials to the first success: ⌈ln u / ln(1 − p)⌉
            // for u in (0, 1), at least 1.
            let u = open_unit(words(*seed, index(i)));
            real((u.ln() / (-p.0).ln_1p()).ceil().max(1.0), d)
        })?,
        Op::Multinomial {
            num_samples,
            replacement,
            seed,
        } => {
            let x = operands
                .first()
                .copied()
                .flatten()
                .ok_or_else(|| Error::new(ErrorKind::Arity, "multinomial takes a tensor"))?;
            multinomial(x, *num_samples, *replacement, *seed, out, strides)?
        }
        _ => return Ok(None),
    };
    Ok(Some(t))
}

/// `multinomial` row by row. With replacement, sample `j` of row `r` is
/// the category where `u·total` falls in the running sum of the weights
/// (`u` from position `r·num_samples + j`). Without, the categories with
/// the `num_samples` largest keys `wᵢ / Eᵢ` (`Eᵢ` exponential, from
/// position `r·categories + i`), largest first: the exponential race,
/// which draws without replacement with probabilities proportional to the
/// weights (PyTorch's CPU kernel uses it too); categories of weight 0 come
/// last, lowest position first.
fn multinomial(
    x: &Tensor,
    num_samples: i64,
    replacement: bool,
    seed: i64,
    out: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let categories = *x.shape().last().unwrap_or(&0) as usize;
    let weights: Vec<f64> = x.values().into_iter().map(Elem::f64).collect();
    let rows = if categories == 0 {
        0
    } else {
        weights.len() / categories
    };
    let n = num_samples as usize;
    let mut samples = Vec::with_capacity(rows * n);
    for r in 0..rows {
        let w = &weights[r * categories..(r + 1) * categories];
        if w.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(Error::new(
                ErrorKind::Runtime,
                "probability tensor contains either `inf`, `nan` or element < 0",
            ));
        }
        let total: f64 = w.iter().sum();
        if !(total > 0.0) {
            return Err(Error::new(
                ErrorKind::Runtime,
                "invalid multinomial distribution (sum of probabilities <= 0)",
            ));
        }
        if replacement {
            let last = w.iter().rposition(|v| *v > 0.0).unwrap_or(0);
            for j in 0..n {
                let target = unit(words(seed, (r * n + j) as u64), 53) * total;
                let mut running = 0.0;
                let mut pick = last;
                for (c, v) in w.iter().enumerate() {
                    running += v;
                    if *v > 0.0 && running > target {
                        pick = c;
                        break;
                    }
                }
                samples.push(pick as i64);
            }
        } else {
            let mut keys: Vec<(f64, usize)> = w
                .iter()
                .enumerate()
                .map(|(c, v)| {
                    let e = -open_unit(words(seed, (r * categories + c) as u64)).ln();
                    (v / e, c)
                })
                .collect();
            keys.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            samples.extend(keys.iter().take(n).map(|(_, c)| *c as i64));
        }
    }
    fill(out, strides, |i| Elem::I(i128::from(samples[i as usize])))
}
