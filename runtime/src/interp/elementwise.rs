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
use kiln_math::polynomials::{self, Polynomial};
use kiln_math::{Function, Function2, special};
use num_traits::Float;

use crate::convert::{Elem, wrap_int};

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

/// `std::max`-style: `a` unless `a < b`; a NaN operand propagates (the
/// first, with its sign: `signbit` sees it, and PyTorch's CPU kernels keep
/// it, as the Cranelift backend's `a + b` for NaN does). The rule of every
/// float maximum of the interpreter: `maximum`, `amax`'s fold,
/// `scatter_reduce`'s amax.
pub(crate) fn float_max(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if a < b {
        b
    } else {
        a
    }
}

/// As [`float_max`], the smaller.
pub(crate) fn float_min(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        a
    } else if b.is_nan() {
        b
    } else if b < a {
        b
    } else {
        a
    }
}

/// PyTorch's integer power, wrapping: `base ** exp` by squaring, and for a
/// negative exponent `1 / base^|exp|` truncated (0 unless |base| is 1).
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
type Complex = (f64, f64);

fn c_mul(a: Complex, b: Complex) -> Complex {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

fn c_div(a: Complex, b: Complex) -> Complex {
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

fn c_exp(a: Complex) -> Complex {
    let e = a.0.exp();
    (e * a.1.cos(), e * a.1.sin())
}

fn c_log(a: Complex) -> Complex {
    (a.0.hypot(a.1).ln(), a.1.atan2(a.0))
}

fn c_sqrt(a: Complex) -> Complex {
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

/// `i·z`.
fn c_times_i((re, im): Complex) -> Complex {
    (-im, re)
}

/// `√((1 − z)(1 + z))`: `√(1 − z²)` without cancelling near ±1.
fn c_cofactor(z: Complex) -> Complex {
    c_sqrt(c_mul((1.0 - z.0, -z.1), (1.0 + z.0, z.1)))
}

/// `log(a)` for `a = u + v` where `(u + v)(u − v) = 1`: the logarithm of
/// whichever of `u ± v` is larger in magnitude (`log(u − v) = −log(u + v)`),
/// so that neither sum cancels.
fn c_log_unit_pair(u: Complex, v: Complex) -> Complex {
    let plus = (u.0 + v.0, u.1 + v.1);
    let minus = (u.0 - v.0, u.1 - v.1);
    if plus.0.hypot(plus.1) >= minus.0.hypot(minus.1) {
        c_log(plus)
    } else {
        let (re, im) = c_log(minus);
        (-re, -im)
    }
}

/// Beyond this magnitude, `asin z` is `(angle, log 2|z|)` to f64's precision
/// (the next term of `asinh w = log 2w + 1/(4w²) + …` is below half an
/// ulp), and `1 − z²` in the formula would overflow from about 1e154.
const ASIN_LARGE: f64 = 1e8;

/// Below this magnitude, `asin z = z` to f64's precision (the next term,
/// `z³/6`, is below half an ulp), where the formula's logarithm of a
/// number within 1e-300 of 1 would round to 0.
const ASIN_SMALL: f64 = 1e-9;

/// `log 2|z|` of `x + iy` (`x, y ≥ 0`), without overflow: the imaginary
/// part of `asin z` past [`ASIN_LARGE`], where `asin(x + iy)` is
/// `atan2(x, y) + i·log 2|z|` in the first quadrant, infinities included
/// (C99's `casin(∞ + iy) = π/2 + i∞`, `casin(x + i∞) = 0 + i∞`,
/// `casin(∞ + i∞) = π/4 + i∞`, NaN + i∞ for ∞ + iNaN).
fn log_twice_abs(x: f64, y: f64) -> f64 {
    let (big, small) = if x >= y { (x, y) } else { (y, x) };
    let log_abs = if !(x.is_finite() && y.is_finite()) {
        // hypot(∞, NaN) is ∞.
        x.hypot(y).ln()
    } else {
        big.ln() + 0.5 * (small / big).powi(2).ln_1p()
    };
    std::f64::consts::LN_2 + log_abs
}

/// `asin` of a NaN part, as C99's `casin` (from `casinh`'s table):
/// `±0 + iNaN` for `±0 + iNaN`, `NaN ± i∞` where the other part is
/// infinite, else NaN + iNaN. `None` without a NaN. (The magnitude tests
/// below would not see the NaN: `f64::max` ignores it.)
fn c_asin_nan(x: f64, y: f64) -> Option<Complex> {
    if !(x.is_nan() || y.is_nan()) {
        return None;
    }
    Some(if x == 0.0 {
        (x, f64::NAN)
    } else if x.is_infinite() || y.is_infinite() {
        (f64::NAN, f64::INFINITY.copysign(y))
    } else {
        (f64::NAN, f64::NAN)
    })
}

/// `asin z = −i·log(i·z + √(1 − z²))` (for real z in [−1, 1] the
/// logarithm's argument is on the unit circle, so its angle is exact),
/// with `z` itself below [`ASIN_SMALL`] and the logarithm's asymptote
/// past [`ASIN_LARGE`] ([`log_twice_abs`]), where the formula underflows
/// or overflows (it gave NaN for 1e160 + 1e160i and ∞ + 1i; glibc's
/// `casin`, which PyTorch calls, gives π/4 + 369.45i and π/2 + i∞).
/// Computed on `|x| + i|y|` with the signs copied back (asin is odd, and
/// the asin of a conjugate is the conjugate), so that the parts' signs,
/// zeros' included, follow z's as C99's `casin` gives them: the formula
/// itself gave `asin(0 + 1.5i)` a real part of −0.0.
fn c_asin((x, y): Complex) -> Complex {
    if let Some(nan) = c_asin_nan(x, y) {
        return nan;
    }
    let (ax, ay) = (x.abs(), y.abs());
    let (re, im) = if ax.max(ay) > ASIN_LARGE {
        (ax.atan2(ay), log_twice_abs(ax, ay))
    } else if ax.max(ay) < ASIN_SMALL {
        (ax, ay)
    } else {
        let (re, im) = c_log_unit_pair(c_cofactor((ax, ay)), c_times_i((ax, ay)));
        (im, -re)
    };
    (re.copysign(x), im.copysign(y))
}

/// `acos z = −i·log(z + i·√(1 − z²))`; past [`ASIN_LARGE`] and below
/// [`ASIN_SMALL`], `π/2 − asin z` by [`c_asin`]'s asymptote and `z`
/// (`atan2(y, x) − i·log 2|z|`, and `π/2 − x − iy`), on `|x| + i|y|`
/// with C99's `cacos` signs (`cacos(−z) = π − cacos(z)`, the conjugate's
/// is the conjugate: `cacos(−∞ + i0) = π − i∞`).
fn c_acos(z: Complex) -> Complex {
    let (x, y) = z;
    if let Some((_, im)) = c_asin_nan(x, y) {
        // C99: cacos(±0 + iNaN) = π/2 + iNaN, else asin's with the
        // imaginary part negated.
        let re = if x == 0.0 {
            std::f64::consts::FRAC_PI_2
        } else {
            f64::NAN
        };
        return (re, -im);
    }
    let (ax, ay) = (x.abs(), y.abs());
    let (re, im) = if ax.max(ay) > ASIN_LARGE {
        (ay.atan2(ax), log_twice_abs(ax, ay))
    } else if ax.max(ay) < ASIN_SMALL {
        (std::f64::consts::FRAC_PI_2 - ax, ay)
    } else {
        let (re, im) = c_log_unit_pair(z, c_times_i(c_cofactor(z)));
        return (im, -re);
    };
    let re = if x.is_sign_negative() {
        std::f64::consts::PI - re
    } else {
        re
    };
    (re, im.copysign(-y))
}

/// `atan z = (i/2)·(log(1 − i·z) − log(1 + i·z))` in Kahan's form: the
/// real part `atan2(2x, 1 − x² − y²)/2`, the imaginary part
/// `log(((1 + y)² + x²) / ((1 − y)² + x²))/4`, by `log1p(4y / ((1 − y)² +
/// x²))` where that quotient is small (no difference of large
/// logarithms, no `log1p` near −1).
fn c_atan((x, y): Complex) -> Complex {
    let re = (2.0 * x).atan2((1.0 - y) * (1.0 + y) - x * x) / 2.0;
    let below = (1.0 - y) * (1.0 - y) + x * x;
    let q = 4.0 * y / below;
    let im = if q.abs() < 0.5 {
        q.ln_1p() / 4.0
    } else {
        (((1.0 + y) * (1.0 + y) + x * x) / below).ln() / 4.0
    };
    (re, im)
}

fn c_pow(a: Complex, b: Complex) -> Complex {
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

/// A float function of floats and complex numbers (`None`: not defined
/// for complex).
fn analytic(
    x: Elem,
    op: UnaryOp,
    real: impl Fn(f64) -> f64,
    complex: Option<fn(Complex) -> Complex>,
) -> Result<Elem> {
    match (x, complex) {
        (Elem::F(f), _) => Ok(Elem::F(real(f))),
        (Elem::C(re, im), Some(c)) => {
            let (r, i) = c((re, im));
            Ok(Elem::C(r, i))
        }
        (other, _) => Err(unsupported_value(op.name(), other)),
    }
}

/// The kiln-math algorithm that computes `op` in f32 (for f32, f16 and
/// bf16, whose opmath is f32), where there is one: the one list the
/// interpreter, the Cranelift lowering and the CUDA C share, so that
/// every backend computes the same bits. The other ops compute in f64 and
/// round once.
pub fn f32_algorithm(op: UnaryOp) -> Option<Function> {
    use UnaryOp::*;
    Some(match op {
        Exp => Function::Exp,
        Expm1 => Function::Expm1,
        Log => Function::Log,
        Log1p => Function::Log1p,
        Sin => Function::Sin,
        Cos => Function::Cos,
        Tanh => Function::Tanh,
        Erf => Function::Erf,
        Erfc => Function::Erfc,
        Atan => Function::Atan,
        Asin => Function::Asin,
        Acos => Function::Acos,
        _ => return None,
    })
}

/// A real f32 value by kiln-math's algorithm for `f` (complex values have
/// no f32 form here).
fn f32_function(x: Elem, op: UnaryOp, f: Function) -> Result<Elem> {
    analytic(x, op, |v| f64::from(kiln_math::eval(f, v as f32)), None)
}

fn unsupported_value(op: &str, x: Elem) -> Error {
    let dtype = match x {
        Elem::B(_) => DType::Bool,
        Elem::I(_) => DType::I64,
        Elem::F(_) => DType::F64,
        Elem::C(..) => DType::C128,
    };
    unsupported(op, dtype)
}

/// A unary op on a value already converted to the computation dtype: the
/// reference semantics of every primitive unary op, one arm each.
pub fn unary(op: UnaryOp, x: Elem, compute: DType) -> Result<Elem> {
    use UnaryOp::*;
    // Ops that round several times do so in the opmath precision.
    let single = compute.opmath() == DType::F32;
    let r = match op {
        Neg => match x {
            Elem::F(f) => Elem::F(-f),
            Elem::I(i) => Elem::I(-i),
            Elem::C(re, im) => Elem::C(-re, -im),
            Elem::B(_) => return Err(unsupported_value(op.name(), x)),
        },
        Abs => match x {
            Elem::F(f) => Elem::F(f.abs()),
            Elem::I(i) => Elem::I(i.abs()),
            Elem::C(re, im) => Elem::F(re.hypot(im)),
            Elem::B(b) => Elem::B(b),
        },
        // f32 (and f16/bf16) by kiln-math's algorithms, which the
        // compiled kernels share; f64 and complex by the library.
        _ if single && let Some(f) = f32_algorithm(op) => f32_function(x, op, f)?,
        Erfc => analytic(x, op, libm::erfc, None)?,
        Atan => analytic(x, op, f64::atan, Some(c_atan))?,
        Asin => analytic(x, op, f64::asin, Some(c_asin))?,
        Acos => analytic(x, op, f64::acos, Some(c_acos))?,
        Exp => analytic(x, op, f64::exp, Some(c_exp))?,
        Log => analytic(x, op, f64::ln, Some(c_log))?,
        Log2 => analytic(
            x,
            op,
            f64::log2,
            Some(|c| {
                let (r, i) = c_log(c);
                (r / std::f64::consts::LN_2, i / std::f64::consts::LN_2)
            }),
        )?,
        Log1p => analytic(x, op, f64::ln_1p, Some(|(re, im)| c_log((1.0 + re, im))))?,
        Expm1 => analytic(
            x,
            op,
            f64::exp_m1,
            Some(|c| {
                let (re, im) = c_exp(c);
                (re - 1.0, im)
            }),
        )?,
        Sqrt => analytic(x, op, f64::sqrt, Some(c_sqrt))?,
        // PyTorch's rsqrt is `1 / sqrt(x)` in the opmath type: two roundings.
        Rsqrt if single => analytic(x, op, |f| (1.0f32 / (f as f32).sqrt()) as f64, None)?,
        Rsqrt => analytic(
            x,
            op,
            |f| 1.0 / f.sqrt(),
            Some(|c| c_div((1.0, 0.0), c_sqrt(c))),
        )?,
        Sin => analytic(
            x,
            op,
            f64::sin,
            Some(|(re, im)| (re.sin() * im.cosh(), re.cos() * im.sinh())),
        )?,
        Cos => analytic(
            x,
            op,
            f64::cos,
            Some(|(re, im)| (re.cos() * im.cosh(), -re.sin() * im.sinh())),
        )?,
        Tanh => analytic(
            x,
            op,
            f64::tanh,
            Some(|(re, im)| {
                // tanh(x+iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y)
                let d = (2.0 * re).cosh() + (2.0 * im).cos();
                ((2.0 * re).sinh() / d, (2.0 * im).sin() / d)
            }),
        )?,
        Relu => match x {
            Elem::F(f) => Elem::F(if f.is_nan() || f >= 0.0 { f } else { 0.0 }),
            Elem::I(i) => Elem::I(i.max(0)),
            Elem::B(b) => Elem::B(b),
            Elem::C(..) => return Err(unsupported_value(op.name(), x)),
        },
        Erf => analytic(x, op, libm::erf, None)?,
        Floor | Ceil | Round | Trunc => match x {
            Elem::F(f) => Elem::F(match op {
                Floor => f.floor(),
                Ceil => f.ceil(),
                Round => f.round_ties_even(),
                _ => f.trunc(),
            }),
            // Integers (and bool) are their own rounding.
            Elem::I(_) | Elem::B(_) => x,
            Elem::C(..) => return Err(unsupported_value(op.name(), x)),
        },
        Sign => match x {
            Elem::F(f) => Elem::F(((0.0 < f) as i32 - (f < 0.0) as i32) as f64),
            Elem::I(i) => Elem::I(i.signum()),
            Elem::B(b) => Elem::B(b),
            Elem::C(..) => return Err(unsupported_value(op.name(), x)),
        },
        Reciprocal => analytic(x, op, |f| 1.0 / f, Some(|c| c_div((1.0, 0.0), c)))?,
        LogicalNot => Elem::B(!x.truthy()),
        BitwiseNot => match x {
            Elem::I(i) => Elem::I(!i),
            Elem::B(b) => Elem::B(!b),
            _ => return Err(unsupported_value(op.name(), x)),
        },
        // Special functions: in f64 (kiln_math::special, libm's lgamma),
        // rounded once by the caller.
        Erfinv => analytic(x, op, special::erfinv, None)?,
        Lgamma => analytic(x, op, libm::lgamma, None)?,
        Digamma => analytic(x, op, special::digamma, None)?,
        I0 => analytic(x, op, special::i0, None)?,
        SpecialI0e => analytic(x, op, special::i0e, None)?,
        SpecialI1 => analytic(x, op, special::i1, None)?,
        SpecialI1e => analytic(x, op, special::i1e, None)?,
        SpecialErfcx => analytic(x, op, special::erfcx, None)?,
        // Bessel J and Y: libm's (fdlibm's algorithms).
        SpecialBesselJ0 => analytic(x, op, libm::j0, None)?,
        SpecialBesselJ1 => analytic(x, op, libm::j1, None)?,
        SpecialBesselY0 => analytic(x, op, libm::y0, None)?,
        SpecialBesselY1 => analytic(x, op, libm::y1, None)?,
        SpecialModifiedBesselI0 => analytic(x, op, special::i0, None)?,
        SpecialModifiedBesselI1 => analytic(x, op, special::i1, None)?,
        SpecialModifiedBesselK0 => analytic(x, op, special::k0, None)?,
        SpecialModifiedBesselK1 => analytic(x, op, special::k1, None)?,
        SpecialScaledModifiedBesselK0 => analytic(x, op, special::k0e, None)?,
        SpecialScaledModifiedBesselK1 => analytic(x, op, special::k1e, None)?,
        SpecialSphericalBesselJ0 => analytic(x, op, special::spherical_j0, None)?,
        SpecialAiryAi => analytic(x, op, special::airy_ai, None)?,
        SpecialNdtri => analytic(x, op, special::ndtri, None)?,
        // The sign bit itself: -0.0 and NaNs with it set count.
        Signbit => match x {
            Elem::F(f) => Elem::B(f.is_sign_negative()),
            Elem::I(i) => Elem::B(i < 0),
            Elem::B(_) => Elem::B(false),
            Elem::C(..) => return Err(unsupported_value(op.name(), x)),
        },
        Isnan => Elem::B(match x {
            Elem::F(f) => f.is_nan(),
            Elem::C(re, im) => re.is_nan() || im.is_nan(),
            Elem::I(_) | Elem::B(_) => false,
        }),
    };
    Ok(match r {
        Elem::I(i) => Elem::I(wrap_int(i, compute)),
        other => other,
    })
}

/// `pow(tensor, scalar)` in the form [`kiln_ir::Op::pow_scalar_form`] picks.
pub fn pow_scalar(x: Elem, e: Elem, exponent: Scalar, compute: DType) -> Result<Elem> {
    let is_float = matches!(x, Elem::F(_) | Elem::C(..));
    // Each product rounds to the opmath precision, as PyTorch's kernel
    // computes `x * x * x` in opmath_t.
    let mul = |a: Elem, b: Elem| {
        binary(BinaryOp::Mul, a, b, compute).map(|p| crate::convert::convert(p, compute.opmath()))
    };
    match kiln_ir::Op::pow_scalar_form(exponent, is_float) {
        PowForm::Identity => Ok(x),
        PowForm::One => Ok(match x {
            Elem::C(..) => Elem::C(1.0, 0.0),
            Elem::F(_) => Elem::F(1.0),
            Elem::B(_) => Elem::B(true),
            Elem::I(_) => Elem::I(1),
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

/// Applies an arithmetic op by the values' class: floats, integers (the
/// caller wraps), bool, complex; `None` where the op has no meaning.
struct Arith {
    float: fn(f64, f64) -> f64,
    int: fn(i128, i128) -> Option<i128>,
    bool: Option<fn(bool, bool) -> bool>,
    complex: Option<fn(Complex, Complex) -> Complex>,
}

impl Arith {
    fn apply(&self, op: BinaryOp, a: Elem, b: Elem, compute: DType) -> Result<Elem> {
        match (a, b) {
            (Elem::F(x), Elem::F(y)) => Ok(Elem::F((self.float)(x, y))),
            (Elem::I(x), Elem::I(y)) => match (self.int)(x, y) {
                Some(r) => Ok(Elem::I(wrap_int(r, compute))),
                None => Err(zero_division()),
            },
            (Elem::B(x), Elem::B(y)) => match self.bool {
                Some(f) => Ok(Elem::B(f(x, y))),
                None => Err(unsupported(op.name(), compute)),
            },
            (Elem::C(ar, ai), Elem::C(br, bi)) => match self.complex {
                Some(f) => {
                    let (r, i) = f((ar, ai), (br, bi));
                    Ok(Elem::C(r, i))
                }
                None => Err(unsupported(op.name(), compute)),
            },
            (a, b) => Err(Error::new(
                ErrorKind::Runtime,
                format!(
                    "{}: operands {a:?} and {b:?} were not converted to {compute}",
                    op.name()
                ),
            )),
        }
    }
}

fn ordering(a: Elem, b: Elem) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Elem::F(x), Elem::F(y)) => x.partial_cmp(&y),
        (Elem::I(x), Elem::I(y)) => Some(x.cmp(&y)),
        (Elem::B(x), Elem::B(y)) => Some(x.cmp(&y)),
        (Elem::C(ar, ai), Elem::C(br, bi)) => {
            (ar == br && ai == bi).then_some(std::cmp::Ordering::Equal)
        }
        _ => None,
    }
}

/// The orthogonal polynomial an op of torch.special computes (None for
/// every other op): the one map from ops to `kiln_math`'s polynomials,
/// which the CUDA backend asks too.
pub fn polynomial(op: BinaryOp) -> Option<Polynomial> {
    use BinaryOp::*;
    Some(match op {
        SpecialChebyshevPolynomialT => Polynomial::ChebyshevT,
        SpecialChebyshevPolynomialU => Polynomial::ChebyshevU,
        SpecialChebyshevPolynomialV => Polynomial::ChebyshevV,
        SpecialChebyshevPolynomialW => Polynomial::ChebyshevW,
        SpecialShiftedChebyshevPolynomialT => Polynomial::ShiftedChebyshevT,
        SpecialShiftedChebyshevPolynomialU => Polynomial::ShiftedChebyshevU,
        SpecialShiftedChebyshevPolynomialV => Polynomial::ShiftedChebyshevV,
        SpecialShiftedChebyshevPolynomialW => Polynomial::ShiftedChebyshevW,
        SpecialHermitePolynomialH => Polynomial::HermiteH,
        SpecialHermitePolynomialHe => Polynomial::HermiteHe,
        SpecialLaguerrePolynomialL => Polynomial::LaguerreL,
        SpecialLegendrePolynomialP => Polynomial::LegendreP,
        _ => return None,
    })
}

/// A binary op on values already converted to the computation dtype (the
/// operands of logical ops keep theirs: only truthiness counts): the
/// reference semantics of every primitive binary op, one arm each.
pub fn binary(op: BinaryOp, a: Elem, b: Elem, compute: DType) -> Result<Elem> {
    use BinaryOp::*;
    use std::cmp::Ordering::*;
    // Ops that round several times do so in the opmath precision.
    let single = compute.opmath() == DType::F32;
    let complex_order = || Err(unsupported(op.name(), compute));
    match op {
        Add => Arith {
            float: |x, y| x + y,
            int: |x, y| Some(x.wrapping_add(y)),
            bool: Some(|x, y| x || y),
            complex: Some(|x, y| (x.0 + y.0, x.1 + y.1)),
        }
        .apply(op, a, b, compute),
        Sub => Arith {
            float: |x, y| x - y,
            int: |x, y| Some(x.wrapping_sub(y)),
            bool: None,
            complex: Some(|x, y| (x.0 - y.0, x.1 - y.1)),
        }
        .apply(op, a, b, compute),
        Mul => Arith {
            float: |x, y| x * y,
            int: |x, y| Some(x.wrapping_mul(y)),
            bool: Some(|x, y| x && y),
            complex: Some(c_mul),
        }
        .apply(op, a, b, compute),
        Div => match (a, b) {
            (Elem::I(x), Elem::I(y)) => Ok(Elem::F(x as f64 / y as f64)),
            _ => Arith {
                float: |x, y| x / y,
                int: |_, _| None,
                bool: None,
                complex: Some(c_div),
            }
            .apply(op, a, b, compute),
        },
        DivTrunc => Arith {
            float: if single {
                |x, y| ((x as f32) / (y as f32)).trunc() as f64
            } else {
                |x, y| (x / y).trunc()
            },
            int: |x, y| (y != 0).then(|| x.wrapping_div(y)),
            bool: None,
            complex: None,
        }
        .apply(op, a, b, compute),
        DivFloor => Arith {
            float: if single {
                |x, y| float_div_floor(x as f32, y as f32) as f64
            } else {
                float_div_floor
            },
            int: |x, y| {
                (y != 0)
                    .then(|| x.div_euclid(y) - if y < 0 && x.rem_euclid(y) != 0 { 1 } else { 0 })
            },
            bool: None,
            complex: None,
        }
        .apply(op, a, b, compute),
        Remainder => Arith {
            float: if single {
                |x, y| float_remainder(x as f32, y as f32) as f64
            } else {
                float_remainder
            },
            int: |x, y| {
                (y != 0).then(|| {
                    let m = x % y;
                    if m != 0 && (y < 0) != (m < 0) {
                        m + y
                    } else {
                        m
                    }
                })
            },
            bool: None,
            complex: None,
        }
        .apply(op, a, b, compute),
        Pow => Arith {
            float: f64::powf,
            int: |x, y| Some(int_pow(x, y)),
            // x ** 1 == x and x ** 0 == 1.
            bool: Some(|x, y| x || !y),
            complex: Some(c_pow),
        }
        .apply(op, a, b, compute),
        Maximum => Arith {
            float: float_max,
            int: |x, y| Some(x.max(y)),
            bool: Some(|x, y| x || y),
            complex: None,
        }
        .apply(op, a, b, compute),
        Minimum => Arith {
            float: float_min,
            int: |x, y| Some(x.min(y)),
            bool: Some(|x, y| x && y),
            complex: None,
        }
        .apply(op, a, b, compute),
        Eq => Ok(Elem::B(ordering(a, b) == Some(Equal))),
        Ne => Ok(Elem::B(ordering(a, b) != Some(Equal))),
        Lt | Le | Gt | Ge if matches!(a, Elem::C(..)) => complex_order(),
        Lt => Ok(Elem::B(ordering(a, b) == Some(Less))),
        Le => Ok(Elem::B(matches!(ordering(a, b), Some(Less | Equal)))),
        Gt => Ok(Elem::B(ordering(a, b) == Some(Greater))),
        Ge => Ok(Elem::B(matches!(ordering(a, b), Some(Greater | Equal)))),
        LogicalAnd => Ok(Elem::B(a.truthy() && b.truthy())),
        LogicalOr => Ok(Elem::B(a.truthy() || b.truthy())),
        LogicalXor => Ok(Elem::B(a.truthy() != b.truthy())),
        BitwiseAnd => bitwise(op, a, b, compute, |x, y| x & y),
        BitwiseOr => bitwise(op, a, b, compute, |x, y| x | y),
        BitwiseXor => bitwise(op, a, b, compute, |x, y| x ^ y),
        // C's fmod: Rust's `%` on floats is it, exact in any precision;
        // integers truncate (i128 holds MIN % -1 without overflow).
        Fmod => Arith {
            float: |x, y| x % y,
            int: |x, y| (y != 0).then(|| x % y),
            bool: None,
            complex: None,
        }
        .apply(op, a, b, compute),
        Gcd | Lcm | BitwiseLeftShift | BitwiseRightShift => match (a, b) {
            (Elem::I(x), Elem::I(y)) => Ok(Elem::I(int_in_width(op, x, y, compute))),
            _ => Err(unsupported(op.name(), compute)),
        },
        Nextafter => match (a, b) {
            (Elem::F(x), Elem::F(y)) => Ok(Elem::F(next_after(x, y, compute))),
            _ => Err(unsupported(op.name(), compute)),
        },
        // Integers arrive converted to floats (inference's int_to_float).
        SpecialZeta => match (a, b) {
            (Elem::F(x), Elem::F(q)) => Ok(Elem::F(special::zeta(x, q))),
            _ => Err(unsupported(op.name(), compute)),
        },
        Igamma | Igammac => match (a, b) {
            (Elem::F(a), Elem::F(x)) => Ok(Elem::F(special::gamma_inc(a, x, op == Igamma))),
            _ => Err(unsupported(op.name(), compute)),
        },
        // The orthogonal polynomials, in f64 (Hermite's degree limit is
        // the dtype's); integers arrive converted to floats.
        kiln_ir::polynomial_ops!() => match (a, b, polynomial(op)) {
            (Elem::F(x), Elem::F(n), Some(p)) => Ok(Elem::F(polynomials::polynomial(
                p,
                x,
                n,
                compute == DType::F32,
            ))),
            _ => Err(unsupported(op.name(), compute)),
        },
        // Integers arrive converted to floats (inference's int_to_float).
        Atan2 => match (a, b) {
            (Elem::F(y), Elem::F(x)) if single => Ok(Elem::F(f64::from(kiln_math::eval2(
                Function2::Atan2,
                y as f32,
                x as f32,
            )))),
            (Elem::F(y), Elem::F(x)) => Ok(Elem::F(y.atan2(x))),
            _ => Err(unsupported(op.name(), compute)),
        },
    }
}

/// gcd, lcm and the shifts of integers of `d`, as PyTorch's C++ kernels
/// compute them in that width: values wrap to it after each step where C++
/// would (`|MIN|` is MIN), and i8/i16/u8 arithmetic happens in `int`.
pub fn int_in_width(op: BinaryOp, a: i128, b: i128, d: DType) -> i128 {
    let wrap = |v: i128| wrap_int(v, d);
    let gcd = |a: i128, b: i128| {
        let (mut a, mut b) = (wrap(a.abs()), wrap(b.abs()));
        // Operands stay within the width, so `%` never overflows here
        // (and a MIN divisor only meets non-negative dividends).
        while a != 0 {
            let c = a;
            a = b % a;
            b = c;
        }
        b
    };
    let bits = i128::from(d.bits());
    match op {
        BinaryOp::Gcd => gcd(a, b),
        BinaryOp::Lcm => {
            let g = gcd(a, b);
            if g == 0 {
                return 0;
            }
            // i8, i16 and u8 promote to int, where the product cannot
            // overflow; i32 and i64 wrap the quotient and the product.
            if bits <= 16 {
                wrap((a / g * b).abs())
            } else {
                wrap(wrap(wrap(a / g) * b).abs())
            }
        }
        // A shift outside [0, width) gives 0, or the sign for >>.
        BinaryOp::BitwiseLeftShift if b < 0 || b >= bits => 0,
        BinaryOp::BitwiseLeftShift => wrap(a << b),
        BinaryOp::BitwiseRightShift if b < 0 || b >= bits => {
            if a < 0 {
                -1
            } else {
                0
            }
        }
        BinaryOp::BitwiseRightShift => a >> b,
        // Not integer-width ops (`binary` routes only the four above here).
        _ => 0,
    }
}

/// `nextafter` in the format of `d` (f16 and bf16 step by their own
/// units): `b` where they are equal, NaN where either is.
pub fn next_after(a: f64, b: f64, d: DType) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if a == b {
        return b;
    }
    // One step of the format's bits away from zero (towards b) or back.
    let up = (b > a) == (a > 0.0);
    let step = |bits: u64, sign: u64| -> u64 {
        if a == 0.0 {
            // The least subnormal with b's sign.
            if b > 0.0 { 1 } else { sign | 1 }
        } else if up {
            bits + 1
        } else {
            bits - 1
        }
    };
    match d {
        DType::F64 => f64::from_bits(step(a.to_bits(), 1 << 63)),
        DType::F16 => {
            let h = half::f16::from_f64(a).to_bits();
            half::f16::from_bits(step(u64::from(h), 1 << 15) as u16).to_f64()
        }
        DType::BF16 => {
            let h = half::bf16::from_f64(a).to_bits();
            half::bf16::from_bits(step(u64::from(h), 1 << 15) as u16).to_f64()
        }
        _ => f64::from(f32::from_bits(
            step(u64::from((a as f32).to_bits()), 1 << 31) as u32,
        )),
    }
}

/// A bitwise op on integers (wrapped) or bools.
fn bitwise(
    op: BinaryOp,
    a: Elem,
    b: Elem,
    compute: DType,
    f: fn(i128, i128) -> i128,
) -> Result<Elem> {
    match (a, b) {
        (Elem::I(x), Elem::I(y)) => Ok(Elem::I(wrap_int(f(x, y), compute))),
        (Elem::B(x), Elem::B(y)) => Ok(Elem::B(f(x as i128, y as i128) != 0)),
        _ => Err(unsupported(op.name(), compute)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytorch_edge_cases() {
        assert_eq!(float_div_floor(-3.0f64, 2.0), -2.0);
        assert_eq!(float_div_floor(1.0f64, 0.0), f64::INFINITY);
        assert_eq!(float_remainder(-3.0f64, 2.0), 1.0);
        assert!(float_max(f64::NAN, 1.0).is_nan());
        // A NaN operand propagates with its sign (signbit sees it; PyTorch
        // gives signbit(clamp(remainder(-1.5, 0), max=-0.5)) = True).
        assert!(float_min(1.0, -f64::NAN).is_sign_negative());
        assert!(float_max(-f64::NAN, f64::NAN).is_sign_negative());
        assert_eq!(float_max(-0.0, 0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(int_pow(2, -1), 0);
        assert_eq!(int_pow(-1, -3), -1);
        assert_eq!(
            binary(BinaryOp::DivFloor, Elem::I(-7), Elem::I(2), DType::I64).unwrap(),
            Elem::I(-4)
        );
        assert_eq!(
            binary(BinaryOp::Remainder, Elem::I(3), Elem::I(-2), DType::I64).unwrap(),
            Elem::I(-1)
        );
        assert!(binary(BinaryOp::DivTrunc, Elem::I(1), Elem::I(0), DType::I64).is_err());
        // fmod: the dividend's sign, integer division by zero refused as
        // PyTorch refuses it, and C's exact remainder where the quotient
        // overflows (PyTorch's vectorized CPU kernel gives NaN there).
        assert_eq!(
            binary(BinaryOp::Fmod, Elem::I(-7), Elem::I(2), DType::I8).unwrap(),
            Elem::I(-1)
        );
        assert_eq!(
            binary(BinaryOp::Fmod, Elem::I(-128), Elem::I(-1), DType::I8).unwrap(),
            Elem::I(0)
        );
        let err = binary(BinaryOp::Fmod, Elem::I(1), Elem::I(0), DType::I32).unwrap_err();
        assert_eq!(err.message(), "ZeroDivisionError");
        let tiny = f64::from(f32::from_bits(0x0020_0000)); // 2^-128
        let r = binary(BinaryOp::Fmod, Elem::F(2.0), Elem::F(tiny), DType::F32).unwrap();
        assert_eq!(r, Elem::F(0.0));
        let r = binary(BinaryOp::Fmod, Elem::F(-7.5), Elem::F(2.0), DType::F32).unwrap();
        assert_eq!(r, Elem::F(-1.5));
        let r = binary(BinaryOp::Fmod, Elem::F(-0.0), Elem::F(1.0), DType::F64).unwrap();
        assert!(matches!(r, Elem::F(z) if z == 0.0 && z.is_sign_negative()));
        // gcd, lcm and shifts in the integer's width, as PyTorch computes
        // them (measured in torch 2.15).
        let w = |op, a, b, d| int_in_width(op, a, b, d);
        assert_eq!(w(BinaryOp::Gcd, -(1 << 31), 6, DType::I32), -2);
        assert_eq!(w(BinaryOp::Gcd, -128, 0, DType::I8), -128);
        assert_eq!(w(BinaryOp::Lcm, 100, 127, DType::I8), -100);
        assert_eq!(w(BinaryOp::Lcm, -6, 4, DType::I64), 12);
        assert_eq!(w(BinaryOp::Lcm, 0, 0, DType::I32), 0);
        assert_eq!(w(BinaryOp::BitwiseLeftShift, 5, 7, DType::I8), -128);
        assert_eq!(w(BinaryOp::BitwiseLeftShift, 5, 8, DType::I8), 0);
        assert_eq!(w(BinaryOp::BitwiseLeftShift, 5, -1, DType::I64), 0);
        assert_eq!(w(BinaryOp::BitwiseRightShift, -5, 1, DType::I32), -3);
        assert_eq!(w(BinaryOp::BitwiseRightShift, -5, 100, DType::I32), -1);
        assert_eq!(w(BinaryOp::BitwiseRightShift, 250, 255, DType::U8), 0);
        // nextafter steps in the dtype's own format.
        assert_eq!(next_after(1.0, 2.0, DType::F16), 1.0009765625);
        assert_eq!(next_after(1.0, 0.0, DType::BF16), 0.99609375);
        assert_eq!(
            next_after(0.0, -1.0, DType::F32),
            -f64::from(f32::from_bits(1))
        );
        assert_eq!(
            next_after(-0.0, 0.0, DType::F64).to_bits(),
            0.0f64.to_bits()
        );
        assert_eq!(next_after(f64::INFINITY, 0.0, DType::F64), f64::MAX);
        assert!(next_after(1.0, f64::NAN, DType::F32).is_nan());
        // signbit reads the bit: -0.0 and a negative NaN.
        assert_eq!(
            unary(UnaryOp::Signbit, Elem::F(-0.0), DType::F32).unwrap(),
            Elem::B(true)
        );
        assert_eq!(
            unary(UnaryOp::Signbit, Elem::F(-f64::NAN), DType::F64).unwrap(),
            Elem::B(true)
        );
        assert_eq!(
            unary(UnaryOp::Signbit, Elem::F(f64::NAN), DType::F16).unwrap(),
            Elem::B(false)
        );
        assert_eq!(
            unary(UnaryOp::Sign, Elem::F(f64::NAN), DType::F32).unwrap(),
            Elem::F(0.0)
        );
        assert_eq!(
            unary(UnaryOp::Abs, Elem::I(-128), DType::I8).unwrap(),
            Elem::I(-128)
        );
    }
}
#[cfg(test)]
mod complex_inverse_trig {
    use super::{c_acos, c_asin};

    /// Within 2 ulps, or the same non-finite value (NaN as NaN).
    fn close(got: f64, want: f64) -> bool {
        if !want.is_finite() {
            return got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan());
        }
        let ulp = f64::from_bits(want.abs().to_bits() + 1) - want.abs();
        (got - want).abs() <= 2.0 * ulp
    }

    /// Far from 1, near 0 and at infinity, as PyTorch gives them
    /// (`torch.asin`/`torch.acos` on complex128, which call glibc's
    /// `casin`/`cacos`): the formula overflowed to NaN from |z| ≈ 1e154
    /// and at ∞, and lost the imaginary part of tiny z.
    #[test]
    fn special_values_are_c99s() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let cases = [
            (
                (1e10, 1e10),
                (0.7853981633974483, 24.065571700780374),
                (0.7853981633974483, -24.065571700780374),
            ),
            (
                (1e160, 1e160),
                (0.7853981633974483, 369.4533356498872),
                (0.7853981633974483, -369.4533356498872),
            ),
            (
                (1e300, -1e300),
                (0.7853981633974483, -691.8152486690535),
                (0.7853981633974483, 691.8152486690535),
            ),
            (
                (0.5, 1e300),
                (5e-301, 691.4686750787736),
                (1.5707963267948966, -691.4686750787736),
            ),
            ((inf, 1.0), (1.5707963267948966, inf), (0.0, -inf)),
            ((1.0, inf), (0.0, inf), (1.5707963267948966, -inf)),
            (
                (inf, inf),
                (0.7853981633974483, inf),
                (0.7853981633974483, -inf),
            ),
            (
                (-inf, 0.0),
                (-1.5707963267948966, inf),
                (3.141592653589793, -inf),
            ),
            ((0.0, inf), (0.0, inf), (1.5707963267948966, -inf)),
            ((inf, nan), (nan, inf), (nan, -inf)),
            ((nan, 1.0), (nan, nan), (nan, nan)),
            ((nan, 0.0), (nan, nan), (nan, nan)),
            ((0.0, nan), (0.0, nan), (1.5707963267948966, nan)),
            ((1e-10, nan), (nan, nan), (nan, nan)),
            ((nan, inf), (nan, inf), (nan, -inf)),
            (
                (1e-300, 1e-300),
                (1e-300, 1e-300),
                (1.5707963267948966, -1e-300),
            ),
            (
                (3.0, 1e-20),
                (1.5707963267948966, 1.762747174039086),
                (3.5355339059327375e-21, -1.762747174039086),
            ),
        ];
        for (z, asin, acos) in cases {
            let (a, c) = (c_asin(z), c_acos(z));
            assert!(
                close(a.0, asin.0) && close(a.1, asin.1),
                "asin{z:?} = {a:?}, want {asin:?}"
            );
            assert!(
                close(c.0, acos.0) && close(c.1, acos.1),
                "acos{z:?} = {c:?}, want {acos:?}"
            );
        }
        // (acos(1e20 + 0.5i)'s real part is 5e-21, as complex64 gives it;
        // complex128's glibc gives 0.)
        assert!(close(c_acos((1e20, 0.5)).0, 5e-21));
    }
}
