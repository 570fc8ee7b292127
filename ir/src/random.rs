//! Random ops: `rand`, `randn`, `randint`, `uniform`, `normal`,
//! `bernoulli`, `exponential`, `cauchy`, `log_normal`, `geometric`,
//! `multinomial`, and the dropouts built on `bernoulli`.
//!
//! PyTorch's ops draw from a generator object whose state advances with
//! each call; Kiln's graphs are values, so each random op carries a `seed`
//! attribute instead, and its result is a pure function of the seed and
//! the position: element `i` (in logical, row-major order, whatever the
//! result's strides) is computed from Philox4x32-10 at counter `i` under
//! the key `seed` (the generator PyTorch's CUDA backend uses; the
//! algorithm is in `kiln_runtime::philox`, the transforms there too). Two
//! ops with the same seed and shape draw the same numbers, so the
//! optimizer may merge or recompute them freely; a program that wants
//! independent draws gives them different seeds. The bits are not
//! PyTorch's (its CPU generator is a Mersenne twister); the distributions
//! are, and the tests check them (moments, Kolmogorov–Smirnov).
//!
//! This module holds the ops' inference rules, with PyTorch's checks and
//! messages, and the expansions of the dropouts.

use crate::dtype::DType;
use crate::error::{ErrorKind, Result};
use crate::graph::{Operand, ValueId};
use crate::infer::{Arg, InferCtx, Inferred, err, nth_tensor, single, wrong_rule};
use crate::ops::expand::Emitter;
use crate::ops::{BinaryOp, Op};
use crate::scalar::{F64, Scalar};
use crate::support::{AtenKernel, DTypeSet};

use crate::types::TensorType;

/// A double as C++'s `operator<<` prints it (`%g`, six significant
/// digits: `1`, `-0.5`, `3e+38`, `nan`), the form of PyTorch's messages.
pub fn cpp_double(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-5..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        trim(&format!("{v:.*}", (5 - exp).max(0) as usize))
    }
}

/// Kiln draws real numbers only: a complex random tensor is refused (PyTorch
/// draws its real and imaginary parts separately).
fn refuse_complex(op: &str, dtype: DType) -> Result<()> {
    if dtype.is_complex() {
        return Err(err(
            ErrorKind::Unsupported,
            format!("{op}: Kiln does not draw complex random numbers ({dtype})"),
        ));
    }
    Ok(())
}

/// The C++ name PyTorch's distribution checks print for a dtype (`long
/// int`, `short unsigned int`).
fn cpp_type_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short int",
        DType::U16 => "short unsigned int",
        DType::I32 => "int",
        DType::U32 => "unsigned int",
        DType::I64 => "long int",
        DType::U64 => "long unsigned int",
        DType::C64 => "c10::complex<float>",
        DType::C128 => "c10::complex<double>",
        DType::C32 => "c10::complex<c10::Half>",
        DType::F16 => "c10::Half",
        _ => dtype.scalar_type_name(),
    }
}

/// PyTorch's message when a continuous distribution is asked of a
/// non-float dtype (`exponential` names the ScalarType, `cauchy` the C++
/// type).
fn continuous_only(distribution: &str, dtype: DType, cpp: bool) -> Result<()> {
    if !dtype.is_floating_point() {
        let name = if cpp {
            cpp_type_name(dtype)
        } else {
            dtype.scalar_type_name()
        };
        return Err(err(
            ErrorKind::DType,
            format!(
                "{distribution} distribution is a continuous probability distribution. dtype must be a floating point but you specified {name}"
            ),
        ));
    }
    Ok(())
}

fn check_size(size: &[i64]) -> Result<()> {
    crate::infer::check_shape(size)
}

/// `bernoulli`'s kernel: PyTorch's scalar-`p` kernel takes every real
/// dtype and bool; its tensor kernel only floats.
pub fn bernoulli_kernel(op: &Op, _: &[Arg<'_>], _: &Inferred) -> Result<Option<AtenKernel>> {
    Ok(match op {
        Op::Bernoulli { p: Some(_), .. } => Some(AtenKernel::new(
            "bernoulli_scalar_cpu_",
            DTypeSet::REAL_NUMBERS.union(DTypeSet::BOOL),
        )),
        _ => Some(AtenKernel::new("bernoulli_tensor_cpu_p_", DTypeSet::FLOATS)),
    })
}

/// `rand` and `randn`: `size` in `dtype` (the default float dtype).
pub fn infer_rand(op: &Op, _: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let (size, dtype) = match op {
        Op::Rand { size, dtype, .. } | Op::Randn { size, dtype, .. } => (size, dtype),
        _ => return Err(wrong_rule("rand")),
    };
    check_size(size)?;
    let d = dtype.unwrap_or(ctx.default_dtype.dtype());
    refuse_complex(op.name(), d)?;
    Ok(single(size.clone(), d, vec![]))
}

/// `randint {low, high, size, dtype}`: int64 unless `dtype` says; `low <
/// high`, both within an integer dtype's range (PyTorch's messages).
pub fn infer_randint(op: &Op, _: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Randint {
        low,
        high,
        size,
        dtype,
        ..
    } = op
    else {
        return Err(wrong_rule("randint"));
    };
    check_size(size)?;
    let d = dtype.unwrap_or(DType::I64);
    if d.is_complex() {
        return Err(err(
            ErrorKind::DType,
            "check_random_bounds handles only integral, floating-point and boolean types",
        ));
    }
    if low >= high {
        return Err(err(
            ErrorKind::Attribute,
            format!("random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"),
        ));
    }
    // A float dtype must hold the bounds (f16 only can fail for i64 ones).
    let range = integer_range(d).or_else(|| (d == DType::F16).then_some((-65504, 65504)));
    if let Some((min, max)) = range {
        if i128::from(*low) < min {
            return Err(err(
                ErrorKind::Attribute,
                format!("from is out of bounds for {}", cpp_type_name(d)),
            ));
        }
        if i128::from(*high) - 1 > max {
            return Err(err(
                ErrorKind::Attribute,
                format!("to - 1 is out of bounds for {}", cpp_type_name(d)),
            ));
        }
    }
    Ok(single(size.clone(), d, vec![]))
}

/// The values an integer (or bool) dtype holds.
fn integer_range(d: DType) -> Option<(i128, i128)> {
    Some(match d {
        DType::Bool => (0, 1),
        DType::U8 => (0, u8::MAX.into()),
        DType::I8 => (i8::MIN.into(), i8::MAX.into()),
        DType::I16 => (i16::MIN.into(), i16::MAX.into()),
        DType::U16 => (0, u16::MAX.into()),
        DType::I32 => (i32::MIN.into(), i32::MAX.into()),
        DType::U32 => (0, u32::MAX.into()),
        DType::I64 => (i64::MIN.into(), i64::MAX.into()),
        DType::U64 => (0, u64::MAX.into()),
        _ => return None,
    })
}

/// The ops that fill a tensor like their input (`uniform`, `exponential`,
/// `cauchy`, `log_normal`, `geometric`, `bernoulli`): its shape and dtype,
/// with each distribution's checks of its parameters and dtype.
pub fn infer_like(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = nth_tensor(args, 0)?;
    let d = x.dtype;
    let attribute = |message: String| Err(err(ErrorKind::Attribute, message));
    match op {
        Op::Uniform { from, to, .. } => {
            refuse_complex("uniform", d)?;
            // PyTorch checks the dtype (its kernel's dispatch) before the bounds.
            AtenKernel::new("check_uniform_bounds", DTypeSet::FLOATS).check(d)?;
            if from.0 > to.0 {
                return attribute(format!(
                    "uniform_ expects to return a [from, to) range, but found from={} > to={}",
                    cpp_double(from.0),
                    cpp_double(to.0)
                ));
            }
        }
        Op::Exponential { lambd, .. } => {
            // NaN passes PyTorch's check too (`lambda > 0` is its only test).
            if lambd.0 <= 0.0 {
                return attribute(format!(
                    "exponential_ expects lambda > 0.0, but found lambda={}",
                    cpp_double(lambd.0)
                ));
            }
            continuous_only("Exponential", d, false)?;
        }
        Op::Cauchy { sigma, .. } => {
            if sigma.0 <= 0.0 {
                return attribute(format!(
                    "cauchy_ expects sigma > 0.0, but found sigma={}",
                    cpp_double(sigma.0)
                ));
            }
            continuous_only("Cauchy", d, true)?;
        }
        Op::LogNormal { std, .. } => {
            if std.0 <= 0.0 {
                return attribute(format!(
                    "log_normal_ expects std > 0.0, but found std={}",
                    cpp_double(std.0)
                ));
            }
        }
        Op::Geometric { p, .. } => {
            if !(p.0 > 0.0 && p.0 < 1.0) {
                return attribute(format!(
                    "geometric_ expects p to be in (0, 1), but got p={}",
                    cpp_double(p.0)
                ));
            }
        }
        Op::Bernoulli { p: Some(p), .. } => {
            if !(0.0..=1.0).contains(&p.0) {
                return attribute(format!(
                    "bernoulli_ expects p to be in [0, 1], but got p={}",
                    cpp_double(p.0)
                ));
            }
        }
        Op::Bernoulli { p: None, .. } => {
            // The probabilities are the input's values (checked when it
            // runs); PyTorch's kernel for them refuses these dtypes first.
            if d.is_complex() || DTypeSet::BARE_UINTS.contains(d) {
                return Err(err(
                    ErrorKind::DType,
                    format!(
                        "\"bernoulli_tensor_cpu_self_\" not implemented for '{}'",
                        d.scalar_type_name()
                    ),
                ));
            }
        }
        _ => return Err(wrong_rule("random fill")),
    }
    Ok(single(x.shape.clone(), d, vec![Some(d)]))
}

/// `normal(mean, std)`: each a tensor or a number; the tensors broadcast
/// together; the result has the mean's dtype when it is a tensor, else the
/// std's, else `dtype` (the default float dtype) over `size`, which only
/// two numbers need.
pub fn infer_normal(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Normal {
        size,
        dtype,
        device,
        ..
    } = op
    else {
        return Err(wrong_rule("normal"));
    };
    let (mean, std) = match args {
        [mean, std] => (mean, std),
        _ => return Err(err(ErrorKind::Arity, "normal takes a mean and a std")),
    };
    if let Arg::Scalar(s) = std
        && s.to_f64() < 0.0
    {
        return Err(err(
            ErrorKind::Attribute,
            format!(
                "normal expects std >= 0.0, but found std {}",
                cpp_double(s.to_f64())
            ),
        ));
    }
    // PyTorch checks a tensor std's minimum first, which these dtypes lack.
    if let Arg::Tensor(t) = std
        && DTypeSet::BARE_UINTS.contains(t.dtype)
    {
        return Err(err(
            ErrorKind::DType,
            format!(
                "\"min_all\" not implemented for '{}'",
                t.dtype.scalar_type_name()
            ),
        ));
    }
    let tensors: Vec<&TensorType> = [mean, std]
        .iter()
        .filter_map(|a| match a {
            Arg::Tensor(t) => Some(*t),
            _ => None,
        })
        .collect();
    let (shape, d) = match tensors.as_slice() {
        [] => {
            let size = size.as_ref().ok_or_else(|| {
                err(
                    ErrorKind::Attribute,
                    "normal of a number mean and a number std needs a size",
                )
            })?;
            check_size(size)?;
            (size.clone(), dtype.unwrap_or(ctx.default_dtype.dtype()))
        }
        [first, rest @ ..] => {
            if size.is_some() || dtype.is_some() || device.is_some() {
                return Err(err(
                    ErrorKind::Attribute,
                    "normal takes a size, dtype and device only when mean and std are numbers",
                ));
            }
            let mut shape = first.shape.clone();
            for t in rest {
                shape = crate::view::broadcast_shapes(&shape, &t.shape)?;
            }
            (shape, first.dtype)
        }
    };
    refuse_complex("normal", d)?;
    let operand = |a: &Arg<'_>| match a {
        Arg::Tensor(_) => Some(d),
        _ => None,
    };
    Ok(single(shape, d, vec![operand(mean), operand(std)]))
}

/// `multinomial(input, num_samples, replacement)`: int64 positions,
/// `[num_samples]` or `[rows, num_samples]`.
pub fn infer_multinomial(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Multinomial {
        num_samples,
        replacement,
        ..
    } = op
    else {
        return Err(wrong_rule("multinomial"));
    };
    let x = nth_tensor(args, 0)?;
    if !(1..=2).contains(&x.rank()) {
        return Err(err(ErrorKind::Shape, "prob_dist must be 1 or 2 dim"));
    }
    if !x.dtype.is_floating_point() {
        return Err(err(
            ErrorKind::DType,
            format!(
                "multinomial only supports floating-point dtypes for input, got: {}",
                x.dtype.scalar_type_name()
            ),
        ));
    }
    let categories = x.shape[x.rank() - 1];
    if !replacement && *num_samples > categories {
        return Err(err(
            ErrorKind::Attribute,
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        ));
    }
    if *num_samples <= 0 {
        return Err(err(
            ErrorKind::Attribute,
            "cannot sample n_sample <= 0 samples",
        ));
    }
    let mut shape = x.shape[..x.rank() - 1].to_vec();
    shape.push(*num_samples);
    Ok(single(shape, DType::I64, vec![None]))
}

/// PyTorch's check of a dropout probability.
fn check_probability(p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(err(
            ErrorKind::Attribute,
            format!(
                "dropout probability has to be between 0 and 1, but got {}",
                cpp_double(p)
            ),
        ));
    }
    Ok(())
}

/// `dropout` and `feature_dropout`: in training with `0 < p < 1` PyTorch
/// divides a noise tensor of the input's dtype by `1 − p` in place, which
/// an integer input refuses.
fn dropout_noise_dtype(x: &TensorType, ctx: &InferCtx, native: bool) -> Result<()> {
    if native {
        // native_dropout multiplies the input by its bool mask first.
        crate::promotion::promote_types(x.dtype, DType::Bool)?;
    }
    if !x.dtype.is_complex() {
        // The noise is a bernoulli draw in the input's dtype.
        AtenKernel::new(
            "bernoulli_scalar_cpu_",
            DTypeSet::REAL_NUMBERS.union(DTypeSet::BOOL),
        )
        .check(x.dtype)?;
    }
    if !x.dtype.is_floating_point() && !x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            format!(
                "result type {} can't be cast to the desired output type {}",
                ctx.default_dtype.dtype().scalar_type_name(),
                x.dtype.scalar_type_name()
            ),
        ));
    }
    Ok(())
}

/// `dropout`, `feature_dropout` and `native_dropout`: the input's type
/// (and a bool mask for `native_dropout`), with PyTorch's checks.
pub fn infer_dropout(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = nth_tensor(args, 0)?;
    let mut results = vec![TensorType::new(x.shape.clone(), x.dtype)];
    match op {
        Op::Dropout { p, train, .. } | Op::FeatureDropout { p, train, .. } => {
            check_probability(p.0)?;
            let feature = matches!(op, Op::FeatureDropout { .. });
            if feature && x.rank() < 2 && *train {
                return Err(err(
                    ErrorKind::Shape,
                    "Feature dropout requires at least 2 dimensions in the input",
                ));
            }
            if *train && p.0 > 0.0 && p.0 < 1.0 && x.numel() != 0 {
                dropout_noise_dtype(x, ctx, false)?;
                refuse_complex(op.name(), x.dtype)?;
            }
        }
        Op::NativeDropout { p, train, .. } => {
            if train.unwrap_or(true) {
                // PyTorch's native_dropout draws bernoulli(1 − p) and
                // reports that p.
                let keep = 1.0 - p.0;
                if !(0.0..=1.0).contains(&keep) {
                    return Err(err(
                        ErrorKind::Attribute,
                        format!(
                            "bernoulli_ expects p to be in [0, 1], but got p={}",
                            cpp_double(keep)
                        ),
                    ));
                }
                dropout_noise_dtype(x, ctx, true)?;
                refuse_complex(op.name(), x.dtype)?;
            }
            results.push(TensorType::new(x.shape.clone(), DType::Bool));
        }
        _ => return Err(wrong_rule("dropout")),
    }
    Ok(Inferred {
        natural_dtype: x.dtype,
        results,
        operand_dtypes: vec![None],
    })
}

/// The input, once.
fn the_input(operands: &[Operand]) -> Result<ValueId> {
    match operands.first() {
        Some(Operand::Value(x)) => Ok(*x),
        _ => Err(err(ErrorKind::Arity, "dropout takes a tensor")),
    }
}

/// `dropout` and `feature_dropout` as PyTorch's `_dropout_impl` computes
/// them: the input itself when `p = 0`, not training, or empty; times a
/// zero when `p = 1`; else times `noise`, a `bernoulli(1 − p)` draw in the
/// input's dtype (over `[N, C, 1, ...]` for `feature_dropout`) divided by
/// `1 − p`.
pub fn dropout(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (p, train, seed, feature) = match op {
        Op::Dropout { p, train, seed } => (p.0, *train, *seed, false),
        Op::FeatureDropout { p, train, seed } => (p.0, *train, *seed, true),
        _ => return Ok(None),
    };
    let x = the_input(operands)?;
    let ty = e.ty(x).clone();
    if p == 0.0 || !train || ty.numel() == 0 {
        return Ok(Some(vec![x]));
    }
    if p == 1.0 {
        let zero = e.push(
            Op::Full {
                shape: vec![],
                value: Scalar::Int(0),
                dtype: Some(ty.dtype),
                device: Some(ty.device),
            },
            vec![],
        )?;
        return Ok(Some(vec![e.binary(
            BinaryOp::Mul,
            x,
            Operand::Value(zero),
        )?]));
    }
    let noise_shape = if feature {
        let mut shape = vec![1; ty.rank()];
        shape[..2].copy_from_slice(&ty.shape[..2]);
        shape
    } else {
        ty.shape.clone()
    };
    let zeros = e.push(
        Op::Full {
            shape: noise_shape,
            value: Scalar::Int(0),
            dtype: Some(ty.dtype),
            device: Some(ty.device),
        },
        vec![],
    )?;
    let keep = Scalar::Float(1.0 - p);
    let noise = e.push(
        Op::Bernoulli {
            p: Some(F64(1.0 - p)),
            seed,
        },
        vec![Operand::Value(zeros)],
    )?;
    let noise = e.binary(BinaryOp::Div, noise, Operand::Scalar(keep))?;
    Ok(Some(vec![e.binary(
        BinaryOp::Mul,
        x,
        Operand::Value(noise),
    )?]))
}

/// `native_dropout` as PyTorch's CPU kernel computes it: in training, a
/// `bernoulli(1 − p)` mask in the input's dtype, the output `input · mask
/// · scale` with `scale = 1/(1 − p)` (0 when `p = 1`), and the mask as
/// bool; not training, a copy and a mask of ones.
pub fn native_dropout(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::NativeDropout { p, train, seed } = op else {
        return Ok(None);
    };
    let x = the_input(operands)?;
    let ty = e.ty(x).clone();
    if !train.unwrap_or(true) {
        let ones = e.push(
            Op::Full {
                shape: ty.shape.clone(),
                value: Scalar::Bool(true),
                dtype: Some(DType::Bool),
                device: Some(ty.device),
            },
            vec![],
        )?;
        let copy = e.push(
            Op::Clone {
                strides: None,
                memory_format: crate::layout::MemoryFormat::Preserve,
            },
            vec![Operand::Value(x)],
        )?;
        return Ok(Some(vec![copy, ones]));
    }
    let keep = 1.0 - p.0;
    let scale = if keep == 0.0 { 0.0 } else { 1.0 / keep };
    let zeros = e.push(
        Op::Full {
            shape: ty.shape.clone(),
            value: Scalar::Int(0),
            dtype: Some(ty.dtype),
            device: Some(ty.device),
        },
        vec![],
    )?;
    let mask = e.push(
        Op::Bernoulli {
            p: Some(F64(keep)),
            seed: *seed,
        },
        vec![Operand::Value(zeros)],
    )?;
    let kept = e.binary(BinaryOp::Mul, x, Operand::Value(mask))?;
    let out = e.binary(BinaryOp::Mul, kept, Operand::Scalar(Scalar::Float(scale)))?;
    let mask = e.cast(mask, DType::Bool)?;
    Ok(Some(vec![out, mask]))
}
