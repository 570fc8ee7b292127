//! The reference semantics of every primitive pointwise op on one element.
//!
//! Operands arrive converted to the op's computation dtype (and scalar
//! literals to its opmath precision); the result is exact f64 arithmetic on
//! those values, which the caller rounds to opmath and then to the result
//! dtype. For `+ - * /` and `sqrt` this is exactly IEEE arithmetic in the
//! narrower format (double rounding through f64 is innocuous for one
//! operation), so results match PyTorch bit for bit; transcendental
//! functions are at least as accurate as PyTorch's. Integers wrap as C++
//! does in PyTorch's kernels, and integer division by zero is PyTorch's
//! `ZeroDivisionError`.

use kiln_ir::{BinaryOp, DType, Error, ErrorKind, PowForm, Result, Scalar, UnaryOp};
use num_traits::Float;

use crate::convert::{V, wrap_int};

fn zero_division() -> Error {
    Error::new(ErrorKind::Runtime, "ZeroDivisionError")
}

fn unsupported(op: &str, dtype: DType) -> Error {
    Error::new(
        ErrorKind::DType,
        format!("{op} has no reference implementation for {dtype}"),
    )
}

/// Python's floor-mod of floats, PyTorch's `remainder`, in the precision
/// of `T` (the computation's opmath type).
pub fn float_remainder<T: Float>(a: T, b: T) -> T {
    let m = a % b;
    if m != T::zero() && (b < T::zero()) != (m < T::zero()) {
        m + b
    } else {
        m
    }
}

/// PyTorch's `div_floor` for floats (c10's `div_floor_floating`), in `T`.
pub fn float_div_floor<T: Float>(a: T, b: T) -> T {
    if b == T::zero() {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != T::zero() && (b < T::zero()) != (m < T::zero()) {
        div = div - T::one();
    }
    if div != T::zero() {
        let floored = div.floor();
        let half = T::one() / (T::one() + T::one());
        if div - floored > half {
            floored + T::one()
        } else {
            floored
        }
    } else {
        T::zero().copysign(a / b)
    }
}

/// Ops made of several roundings run in the opmath precision (f32 for
/// f32/f16/bf16), as PyTorch's kernels do; single roundings are exact in f64.
fn in_opmath(
    x: f64,
    y: f64,
    single: bool,
    f32_op: fn(f32, f32) -> f32,
    f64_op: fn(f64, f64) -> f64,
) -> f64 {
    if single {
        f32_op(x as f32, y as f32) as f64
    } else {
        f64_op(x, y)
    }
}

/// `std::max`-style: `a` unless `a < b`, NaN from either side propagates.
fn float_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if a < b {
        b
    } else {
        a
    }
}

fn float_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else if b < a {
        b
    } else {
        a
    }
}

pub fn int_pow(base: i128, exp: i128) -> i128 {
    if exp < 0 {
        // PyTorch's integer power: 1/b^|e| truncated.
        return match base {
            1 => 1,
            -1 => {
                if exp % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    let mut result: i128 = 1;
    let mut b = base;
    let mut e = exp;
    while e > 0 {
        if e & 1 == 1 {
            result = result.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    result
}

// Complex helpers on (re, im).
type C = (f64, f64);

fn c_mul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

fn c_div(a: C, b: C) -> C {
    // Smith's algorithm, as std::complex division.
    if b.1.abs() <= b.0.abs() {
        let r = b.1 / b.0;
        let d = b.0 + b.1 * r;
        ((a.0 + a.1 * r) / d, (a.1 - a.0 * r) / d)
    } else {
        let r = b.0 / b.1;
        let d = b.0 * r + b.1;
        ((a.0 * r + a.1) / d, (a.1 * r - a.0) / d)
    }
}

fn c_exp(a: C) -> C {
    let e = a.0.exp();
    (e * a.1.cos(), e * a.1.sin())
}

fn c_log(a: C) -> C {
    (a.0.hypot(a.1).ln(), a.1.atan2(a.0))
}

fn c_sqrt(a: C) -> C {
    // Without cancellation: take the root of the larger part first.
    let (re, im) = a;
    if re == 0.0 && im == 0.0 {
        return (0.0, im);
    }
    let t = ((re.abs() + re.hypot(im)) / 2.0).sqrt();
    if re >= 0.0 {
        (t, im / (2.0 * t))
    } else {
        (im.abs() / (2.0 * t), t.copysign(im))
    }
}

fn c_pow(a: C, b: C) -> C {
    // A zero base follows glibc's cpow (what PyTorch calls): exp(b·log 0).
    if a.0 == 0.0 && a.1 == 0.0 {
        return match b.0.partial_cmp(&0.0) {
            Some(std::cmp::Ordering::Greater) => (0.0, 0.0),
            Some(std::cmp::Ordering::Less) => (f64::INFINITY, f64::NAN),
            _ => (f64::NAN, f64::NAN),
        };
    }
    c_exp(c_mul(b, c_log(a)))
}

fn complex_unary(op: UnaryOp, a: C) -> Result<V> {
    let (re, im) = a;
    Ok(match op {
        UnaryOp::Neg => V::C(-re, -im),
        UnaryOp::Abs => V::F(re.hypot(im)),
        UnaryOp::Exp => {
            let (r, i) = c_exp(a);
            V::C(r, i)
        }
        UnaryOp::Log => {
            let (r, i) = c_log(a);
            V::C(r, i)
        }
        UnaryOp::Log2 => {
            let (r, i) = c_log(a);
            V::C(r / std::f64::consts::LN_2, i / std::f64::consts::LN_2)
        }
        UnaryOp::Sqrt => {
            let (r, i) = c_sqrt(a);
            V::C(r, i)
        }
        UnaryOp::Rsqrt => {
            let (r, i) = c_div((1.0, 0.0), c_sqrt(a));
            V::C(r, i)
        }
        UnaryOp::Sin => V::C(re.sin() * im.cosh(), re.cos() * im.sinh()),
        UnaryOp::Cos => V::C(re.cos() * im.cosh(), -re.sin() * im.sinh()),
        UnaryOp::Tanh => {
            // tanh(x+iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y)
            let d = (2.0 * re).cosh() + (2.0 * im).cos();
            V::C((2.0 * re).sinh() / d, (2.0 * im).sin() / d)
        }
        UnaryOp::Reciprocal => {
            let (r, i) = c_div((1.0, 0.0), a);
            V::C(r, i)
        }
        UnaryOp::LogicalNot => V::B(re == 0.0 && im == 0.0),
        UnaryOp::Isnan => V::B(re.is_nan() || im.is_nan()),
        other => return Err(unsupported(other.name(), DType::C128)),
    })
}

fn float_unary(op: UnaryOp, x: f64) -> Result<V> {
    Ok(V::F(match op {
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Log2 => x.log2(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Relu => {
            if x.is_nan() || x >= 0.0 || x == 0.0 {
                x
            } else {
                0.0
            }
        }
        UnaryOp::Erf => libm::erf(x),
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Round => x.round_ties_even(),
        UnaryOp::Trunc => x.trunc(),
        UnaryOp::Sign => ((0.0 < x) as i32 - (x < 0.0) as i32) as f64,
        UnaryOp::Reciprocal => 1.0 / x,
        UnaryOp::LogicalNot => return Ok(V::B(x == 0.0)),
        UnaryOp::Isnan => return Ok(V::B(x.is_nan())),
        other => return Err(unsupported(other.name(), DType::F64)),
    }))
}

fn int_unary(op: UnaryOp, i: i128) -> Result<V> {
    Ok(match op {
        UnaryOp::Neg => V::I(-i),
        UnaryOp::Abs => V::I(i.abs()),
        UnaryOp::Relu => V::I(i.max(0)),
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc => V::I(i),
        UnaryOp::Sign => V::I(i.signum()),
        UnaryOp::BitwiseNot => V::I(!i),
        UnaryOp::LogicalNot => V::B(i == 0),
        UnaryOp::Isnan => V::B(false),
        other => return Err(unsupported(other.name(), DType::I64)),
    })
}

fn bool_unary(op: UnaryOp, b: bool) -> Result<V> {
    Ok(match op {
        UnaryOp::Sign => V::B(b),
        UnaryOp::BitwiseNot | UnaryOp::LogicalNot => V::B(!b),
        UnaryOp::Isnan => V::B(false),
        UnaryOp::Abs
        | UnaryOp::Relu
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Round
        | UnaryOp::Trunc => V::B(b),
        other => return Err(unsupported(other.name(), DType::Bool)),
    })
}

/// Kiln's f32 exponential (for f32, f16 and bf16): range reduction by
/// ln 2 in two steps, a degree-5 polynomial (Cephes' `expf`) in fused
/// multiply-adds, and scaling by 2^n in two halves so subnormal results
/// round once. Every step is one IEEE f32 operation (an FMA rounds once),
/// so the compiled kernels, which emit the same steps, give the same bits.
/// Within 1 ulp of the correctly rounded value (see the test below).
pub fn exp_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    let x = x.min(EXP_F32_HI).max(EXP_F32_LO);
    let n = (x * std::f32::consts::LOG2_E).round_ties_even();
    let r = (-n).mul_add(EXP_F32_LN2_HI, x);
    let r = (-n).mul_add(EXP_F32_LN2_LO, r);
    let mut p = EXP_F32_POLY[0];
    for &k in &EXP_F32_POLY[1..] {
        p = p.mul_add(r, k);
    }
    let p = p.mul_add(r * r, r);
    let p = p + 1.0;
    let n = n as i32;
    let n1 = n >> 1;
    let n2 = n - n1;
    let pow2 = |e: i32| f32::from_bits(((e + 127) << 23) as u32);
    p * pow2(n1) * pow2(n2)
}

/// Beyond these, e^x is inf or 0 in f32 (clamping keeps 2^n finite).
pub const EXP_F32_HI: f32 = 89.0;
pub const EXP_F32_LO: f32 = -104.0;
/// ln 2 split so that n·`EXP_F32_LN2_HI` is exact.
pub const EXP_F32_LN2_HI: f32 = 0.693_359_4;
pub const EXP_F32_LN2_LO: f32 = -2.121_944_4e-4;
/// Coefficients of r^5 .. r^2 and the r^2 term's constant (Cephes `expf`).
pub const EXP_F32_POLY: [f32; 6] = [
    1.987_569_1e-4,
    1.398_199_9e-3,
    8.333_452e-3,
    4.166_579_6e-2,
    1.666_666_5e-1,
    5.000_000_1e-1,
];

/// A unary op on a value already converted to the computation dtype.
pub fn unary(op: UnaryOp, x: V, compute: DType) -> Result<V> {
    match x {
        V::F(f) if op == UnaryOp::Exp && compute.opmath() == DType::F32 => {
            Ok(V::F(exp_f32(f as f32) as f64))
        }
        // PyTorch's rsqrt is `1 / sqrt(x)` in the opmath type: two roundings.
        V::F(f) if op == UnaryOp::Rsqrt && compute.opmath() == DType::F32 => {
            Ok(V::F((1.0f32 / (f as f32).sqrt()) as f64))
        }
        V::C(re, im) => complex_unary(op, (re, im)),
        V::F(f) => float_unary(op, f),
        V::I(i) => int_unary(op, i).map(|v| match v {
            V::I(r) => V::I(wrap_int(r, compute)),
            other => other,
        }),
        V::B(b) => bool_unary(op, b),
    }
}

fn compare(op: BinaryOp, ord: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinaryOp::Eq => ord == Some(Equal),
        BinaryOp::Ne => ord != Some(Equal),
        BinaryOp::Lt => ord == Some(Less),
        BinaryOp::Le => matches!(ord, Some(Less | Equal)),
        BinaryOp::Gt => ord == Some(Greater),
        BinaryOp::Ge => matches!(ord, Some(Greater | Equal)),
        _ => unreachable!("only comparisons compare"),
    }
}

/// `pow(tensor, scalar)` in the form [`kiln_ir::Op::pow_scalar_form`] picks.
pub fn pow_scalar(x: V, e: V, exponent: Scalar, compute: DType) -> Result<V> {
    let is_float = matches!(x, V::F(_) | V::C(..));
    // Each product rounds to the opmath precision, as PyTorch's kernel
    // computes `x * x * x` in opmath_t.
    let mul = |a: V, b: V| {
        binary(BinaryOp::Mul, a, b, compute).map(|p| crate::convert::convert(p, compute.opmath()))
    };
    match kiln_ir::Op::pow_scalar_form(exponent, is_float) {
        PowForm::Identity => Ok(x),
        PowForm::One => Ok(match x {
            V::C(..) => V::C(1.0, 0.0),
            V::F(_) => V::F(1.0),
            V::B(_) => V::B(true),
            V::I(_) => V::I(1),
        }),
        PowForm::Square => mul(x, x),
        PowForm::Cube => mul(mul(x, x)?, x),
        PowForm::Sqrt => unary(UnaryOp::Sqrt, x, compute),
        PowForm::Rsqrt => unary(UnaryOp::Rsqrt, x, compute),
        PowForm::Reciprocal => unary(UnaryOp::Reciprocal, x, compute),
        PowForm::ReciprocalSquare => unary(UnaryOp::Reciprocal, mul(x, x)?, compute),
        PowForm::General => binary(BinaryOp::Pow, x, e, compute),
    }
}

/// A binary op on values already converted to the computation dtype.
pub fn binary(op: BinaryOp, a: V, b: V, compute: DType) -> Result<V> {
    use BinaryOp::*;
    if op.is_logical() {
        let (x, y) = (a.truthy(), b.truthy());
        return Ok(V::B(match op {
            LogicalAnd => x && y,
            LogicalOr => x || y,
            _ => x != y,
        }));
    }
    match (a, b) {
        (V::C(ar, ai), V::C(br, bi)) => {
            let (x, y) = ((ar, ai), (br, bi));
            let c = |r: C| Ok(V::C(r.0, r.1));
            match op {
                Add => c((ar + br, ai + bi)),
                Sub => c((ar - br, ai - bi)),
                Mul => c(c_mul(x, y)),
                Div => c(c_div(x, y)),
                Pow => c(c_pow(x, y)),
                Eq => Ok(V::B(ar == br && ai == bi)),
                Ne => Ok(V::B(!(ar == br && ai == bi))),
                other => Err(unsupported(other.name(), compute)),
            }
        }
        (V::F(x), V::F(y)) => {
            let single = compute.opmath() == DType::F32;
            Ok(match op {
                Add => V::F(x + y),
                Sub => V::F(x - y),
                Mul => V::F(x * y),
                Div => V::F(x / y),
                DivTrunc => V::F(in_opmath(
                    x,
                    y,
                    single,
                    |a, b| (a / b).trunc(),
                    |a, b| (a / b).trunc(),
                )),
                DivFloor => V::F(in_opmath(x, y, single, float_div_floor, float_div_floor)),
                Remainder => V::F(in_opmath(x, y, single, float_remainder, float_remainder)),
                Pow => V::F(x.powf(y)),
                Maximum => V::F(float_max(x, y)),
                Minimum => V::F(float_min(x, y)),
                Eq | Ne | Lt | Le | Gt | Ge => V::B(compare(op, x.partial_cmp(&y))),
                other => return Err(unsupported(other.name(), compute)),
            })
        }
        (V::I(x), V::I(y)) => {
            let r = match op {
                Add => x.wrapping_add(y),
                Sub => x.wrapping_sub(y),
                Mul => x.wrapping_mul(y),
                DivTrunc => {
                    if y == 0 {
                        return Err(zero_division());
                    }
                    x.wrapping_div(y)
                }
                DivFloor => {
                    if y == 0 {
                        return Err(zero_division());
                    }
                    x.div_euclid(y) - if y < 0 && x.rem_euclid(y) != 0 { 1 } else { 0 }
                }
                Remainder => {
                    if y == 0 {
                        return Err(zero_division());
                    }
                    let m = x % y;
                    if m != 0 && (y < 0) != (m < 0) {
                        m + y
                    } else {
                        m
                    }
                }
                Pow => int_pow(x, y),
                Maximum => x.max(y),
                Minimum => x.min(y),
                BitwiseAnd => x & y,
                BitwiseOr => x | y,
                BitwiseXor => x ^ y,
                Eq | Ne | Lt | Le | Gt | Ge => return Ok(V::B(compare(op, Some(x.cmp(&y))))),
                Div => return Ok(V::F(x as f64 / y as f64)),
                other => return Err(unsupported(other.name(), compute)),
            };
            Ok(V::I(wrap_int(r, compute)))
        }
        (V::B(x), V::B(y)) => Ok(V::B(match op {
            Add | Maximum | BitwiseOr => x || y,
            Mul | Minimum | BitwiseAnd => x && y,
            BitwiseXor => x != y,
            // x ** 1 == x and x ** 0 == 1.
            Pow => x || !y,
            Eq | Ne | Lt | Le | Gt | Ge => compare(op, Some(x.cmp(&y))),
            other => return Err(unsupported(other.name(), compute)),
        })),
        (a, b) => Err(Error::new(
            ErrorKind::Runtime,
            format!(
                "{}: operands {a:?} and {b:?} were not converted to {compute}",
                op.name()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Units in the last place between two finite f32 values.
    fn ulps(a: f32, b: f32) -> u32 {
        let key = |x: f32| {
            let b = x.to_bits() as i32;
            if b < 0 { i32::MIN - b } else { b }
        };
        (key(a) as i64 - key(b) as i64).unsigned_abs() as u32
    }

    #[test]
    fn exp_f32_is_within_one_ulp() {
        let mut worst = 0;
        // Every 97th f32 from -104 to 89: about 11 million values.
        let (lo, hi) = ((-104.0f32).to_bits(), 89.0f32.to_bits());
        let mut check = |x: f32| {
            let exact = (x as f64).exp() as f32;
            let got = exp_f32(x);
            if exact.is_finite() || got.is_finite() {
                worst = worst.max(ulps(got, exact));
            }
        };
        for bits in (0..hi).step_by(97).chain((0x8000_0000..lo).step_by(97)) {
            check(f32::from_bits(bits));
        }
        assert!(worst <= 1, "exp_f32 is off by {worst} ulps");
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(0.0), 1.0);
    }

    #[test]
    fn pytorch_edge_cases() {
        assert_eq!(float_div_floor(-3.0f64, 2.0), -2.0);
        assert_eq!(float_div_floor(1.0f64, 0.0), f64::INFINITY);
        assert_eq!(float_remainder(-3.0f64, 2.0), 1.0);
        assert!(float_max(f64::NAN, 1.0).is_nan());
        assert_eq!(float_max(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(int_pow(2, -1), 0);
        assert_eq!(int_pow(-1, -3), -1);
        assert_eq!(
            binary(BinaryOp::DivFloor, V::I(-7), V::I(2), DType::I64).unwrap(),
            V::I(-4)
        );
        assert_eq!(
            binary(BinaryOp::Remainder, V::I(3), V::I(-2), DType::I64).unwrap(),
            V::I(-1)
        );
        assert!(binary(BinaryOp::DivTrunc, V::I(1), V::I(0), DType::I64).is_err());
        assert_eq!(
            unary(UnaryOp::Sign, V::F(f64::NAN), DType::F32).unwrap(),
            V::F(0.0)
        );
        assert_eq!(
            unary(UnaryOp::Abs, V::I(-128), DType::I8).unwrap(),
            V::I(-128)
        );
    }
}
