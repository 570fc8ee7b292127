//! The op table: every op Kiln has, each declared once.
//!
//! The primitive families come first (the pointwise ops and reductions
//! every backend computes, in exhaustive matches over these enums), then
//! every op of the IR with its attributes, operand slots and rules. How to
//! add an op: README, "Adding an op".

use crate::complex_parts;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::Result;
use crate::infer;
use crate::layout::{self, MemoryFormat};
use crate::random;
use crate::scalar::{F64, Scalar};
use crate::spatial;
use crate::support::{self, AtenKernel, DTypeSet as S};

use super::attrs::{
    AttrType, AttrValue, Attrs, ConvPadding, GeluApproximate, LossReduction, ScatterReduce,
    SearchSide,
};
use super::def::{
    Alias, Cost, KernelRule, LayoutRule, OpDef, Results, Rules, Slot, SlotKind, Traits,
};
use super::define::{define_kind, define_ops};
use super::expand;
use super::mha;
use super::prims::{
    BinaryDef, BinaryKernel, ReduceDef, Refusal, RefuseWhen, ResultDType, ScalarOperands, UnaryDef,
};
use super::select_member;

const fn refuse(when: RefuseWhen, message: &'static str) -> Refusal {
    Refusal { when, message }
}

/// The primitive unary pointwise ops, as a callback macro: `unary_ops!(m)`
/// invokes `m!` with the table's rows (the tracing API generates its
/// methods from them).
#[macro_export]
macro_rules! unary_ops {
    ($callback:ident) => {
        $callback! {
            /// Primitive pointwise ops of one operand.
            UnaryOp: UnaryDef {
                /// `torch.neg`: `-x`.
                Neg(neg) => UnaryDef::new("neg_cpu", S::NUMBERS).refuse(&[refuse(
                    RefuseWhen::InputBool,
                    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                )]),
                /// `torch.abs` (real for complex inputs).
                Abs(abs) => UnaryDef::new("abs_cpu", S::NUMBERS.union(S::FLOAT8_SIGNED))
                    .result(ResultDType::Real),
                /// `torch.exp`.
                Exp(exp) => UnaryDef::transcendental("exp_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.log`, the natural logarithm.
                Log(log) => UnaryDef::transcendental("log_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.log2`.
                Log2(log2) => UnaryDef::transcendental("log2_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.log1p`: `log(1 + x)`, accurate near 0.
                Log1p(log1p) => UnaryDef::transcendental("log1p_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.expm1`: `exp(x) - 1`, accurate near 0.
                Expm1(expm1) => UnaryDef::transcendental("expm1_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.sqrt`.
                Sqrt(sqrt) => UnaryDef::transcendental("sqrt_vml_cpu"),
                /// `torch.rsqrt`: `1 / sqrt(x)`, two roundings.
                Rsqrt(rsqrt) => UnaryDef::transcendental("rsqrt_cpu"),
                /// `torch.sin`.
                Sin(sin) => UnaryDef::transcendental("sin_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.cos`.
                Cos(cos) => UnaryDef::transcendental("cos_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.tanh`.
                Tanh(tanh) => UnaryDef::transcendental("tanh_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.relu`: `max(x, 0)`, NaN kept, `relu(-0.0) = -0.0`.
                Relu(relu) => UnaryDef::new("clamp_min_scalar_cpu", S::ROUNDABLE).refuse(&[
                    refuse(RefuseWhen::InputComplex, "clamp is not supported for complex types"),
                    refuse(RefuseWhen::InputBool, "Boolean inputs not supported for relu"),
                ]),
                /// `torch.erf`.
                Erf(erf) => UnaryDef {
                    int_to_float: true,
                    cost: Cost::Costly,
                    ..UnaryDef::new("erf_vml_cpu", S::FLOATS)
                }
                .traits(Traits::APPROXIMATE),
                /// `torch.floor`.
                Floor(floor) => UnaryDef { cost: Cost::Costly, ..UnaryDef::rounding("floor_vml_cpu") }
                    .traits(Traits::DISCONTINUOUS)
                    .refuse(&[refuse(RefuseWhen::InputComplex, "floor is not supported for complex inputs")]),
                /// `torch.ceil`.
                Ceil(ceil) => UnaryDef { cost: Cost::Costly, ..UnaryDef::rounding("ceil_vml_cpu") }
                    .traits(Traits::DISCONTINUOUS)
                    .refuse(&[refuse(RefuseWhen::InputComplex, "ceil is not supported for complex inputs")]),
                /// `torch.round`: half to even.
                Round(round) => UnaryDef { cost: Cost::Costly, ..UnaryDef::rounding("round_vml_cpu") }
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.trunc`.
                Trunc(trunc) => UnaryDef { cost: Cost::Costly, ..UnaryDef::rounding("trunc_vml_cpu") }
                    .traits(Traits::DISCONTINUOUS)
                    .refuse(&[refuse(RefuseWhen::InputComplex, "trunc is not supported for complex inputs")]),
                /// `torch.sign`: -1, 0 or 1 (0 for NaN).
                Sign(sign) => UnaryDef::new("sign_cpu", S::REAL_NUMBERS.union(S::BOOL)).traits(Traits::DISCONTINUOUS).refuse(&[refuse(
                    RefuseWhen::InputComplex,
                    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.",
                )]),
                /// `torch.reciprocal`: `1 / x`.
                Reciprocal(reciprocal) => UnaryDef::transcendental("reciprocal_cpu"),
                /// `torch.logical_not`: `x == 0`.
                LogicalNot(logical_not) => UnaryDef::new("logical_not_cpu", S::LOGICAL)
                    .result(ResultDType::Bool)
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.bitwise_not`: `~x`.
                BitwiseNot(bitwise_not) => UnaryDef::new("bitwise_not_cpu", S::BITWISE),
                /// `torch.isnan`.
                Isnan(isnan) => UnaryDef::new("isnan", S::ALL).result(ResultDType::Bool),
                /// `torch.atan` (`arctan`).
                Atan(atan) => UnaryDef::transcendental("atan_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.asin` (`arcsin`): NaN outside [-1, 1].
                Asin(asin) => UnaryDef::transcendental("asin_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.acos` (`arccos`): NaN outside [-1, 1].
                Acos(acos) => UnaryDef::transcendental("acos_vml_cpu").traits(Traits::APPROXIMATE),
                /// `torch.erfc`: `1 - erf(x)`, accurate where it is small.
                Erfc(erfc) => UnaryDef {
                    int_to_float: true,
                    cost: Cost::Costly,
                    ..UnaryDef::new("erfc_vml_cpu", S::FLOATS)
                }
                .traits(Traits::APPROXIMATE),
                /// `torch.signbit`: whether the sign bit is set (true for
                /// -0.0 and NaNs with the sign bit, false for unsigned
                /// integers and bool).
                Signbit(signbit) => UnaryDef::new("signbit_cpu", S::ROUNDABLE.union(S::BOOL))
                    .result(ResultDType::Bool)
                    .refuse(&[refuse(RefuseWhen::InputComplex, "signbit is not implemented for complex tensors.")]),
                /// `torch.erfinv`: the inverse error function (±inf at ±1,
                /// NaN outside [-1, 1]); in f64, rounded once.
                Erfinv(erfinv) => UnaryDef::special("erfinv_vml_cpu"),
                /// `torch.lgamma`: `ln|Γ(x)|` (+inf at 0, -0, the negative
                /// integers and ±inf); in f64, rounded once.
                Lgamma(lgamma) => UnaryDef::special("lgamma_vml_cpu"),
                /// `torch.digamma`: `Γ'(x)/Γ(x)` (∓inf at ±0, NaN at the
                /// negative integers and -inf); in f64, rounded once.
                Digamma(digamma) => UnaryDef::special("digamma"),
                /// `torch.i0`: the modified Bessel function of the first kind,
                /// order 0; in f64, rounded once.
                I0(i0) => UnaryDef::special("i0_vml_cpu"),
                /// `torch.special.i0e`: `e^{-|x|}·i0(x)`.
                SpecialI0e(special_i0e) => UnaryDef::special("i0e_cpu"),
                /// `torch.special.i1`: the modified Bessel function of the
                /// first kind, order 1 (odd).
                SpecialI1(special_i1) => UnaryDef::special("i1_cpu"),
                /// `torch.special.i1e`: `e^{-|x|}·i1(x)`.
                SpecialI1e(special_i1e) => UnaryDef::special("i1e_cpu"),
                /// `torch.special.erfcx`: `e^{x²}·erfc(x)`, finite where
                /// erfc underflows (inf below about −26.7).
                SpecialErfcx(special_erfcx) => UnaryDef::special_f32_f64("erfcx_cpu"),
                /// `torch.special.bessel_j0`: the Bessel function of the
                /// first kind, order 0; in f64 (libm's, fdlibm's
                /// algorithm; CUDA's own on the GPU), rounded once.
                SpecialBesselJ0(special_bessel_j0) => UnaryDef::special_f32_f64("bessel_j0_cpu"),
                /// `torch.special.bessel_j1`: the Bessel function of the
                /// first kind, order 1 (odd); as `special_bessel_j0`.
                SpecialBesselJ1(special_bessel_j1) => UnaryDef::special_f32_f64("bessel_j1_cpu"),
                /// `torch.special.bessel_y0`: the Bessel function of the
                /// second kind, order 0 (−inf at 0, NaN below); as
                /// `special_bessel_j0`.
                SpecialBesselY0(special_bessel_y0) => UnaryDef::special_f32_f64("bessel_y0_cpu"),
                /// `torch.special.bessel_y1`: the Bessel function of the
                /// second kind, order 1 (−inf at 0, NaN below); as
                /// `special_bessel_j0`.
                SpecialBesselY1(special_bessel_y1) => UnaryDef::special_f32_f64("bessel_y1_cpu"),
                /// `torch.special.modified_bessel_i0`: `i0` under
                /// torch.special's newer name and dtypes (f32 and f64).
                SpecialModifiedBesselI0(special_modified_bessel_i0) => UnaryDef::special_f32_f64("modified_bessel_i0_cpu"),
                /// `torch.special.modified_bessel_i1`: `special_i1` under
                /// torch.special's newer name and dtypes.
                SpecialModifiedBesselI1(special_modified_bessel_i1) => UnaryDef::special_f32_f64("modified_bessel_i1_cpu"),
                /// `torch.special.modified_bessel_k0`: the modified Bessel
                /// function of the second kind, order 0 (+inf at 0, NaN
                /// below); in f64 (`kiln_math::special::k0`), rounded once.
                SpecialModifiedBesselK0(special_modified_bessel_k0) => UnaryDef::special_f32_f64("modified_bessel_k0_cpu"),
                /// `torch.special.modified_bessel_k1`: order 1; as
                /// `special_modified_bessel_k0`.
                SpecialModifiedBesselK1(special_modified_bessel_k1) => UnaryDef::special_f32_f64("modified_bessel_k1_cpu"),
                /// `torch.special.scaled_modified_bessel_k0`: `e^x·K₀(x)`,
                /// finite where K₀ underflows.
                SpecialScaledModifiedBesselK0(special_scaled_modified_bessel_k0) => UnaryDef::special_f32_f64("scaled_modified_bessel_k0_cpu"),
                /// `torch.special.scaled_modified_bessel_k1`: `e^x·K₁(x)`.
                SpecialScaledModifiedBesselK1(special_scaled_modified_bessel_k1) => UnaryDef::special_f32_f64("scaled_modified_bessel_k1_cpu"),
                /// `torch.special.spherical_bessel_j0`: `sin(x)/x`, 1 at 0
                /// and 0 at ±inf.
                SpecialSphericalBesselJ0(special_spherical_bessel_j0) => UnaryDef::special_f32_f64("spherical_bessel_j0_cpu"),
                /// `torch.special.airy_ai`: the Airy function Ai (a
                /// double-double Maclaurin series below |x| = 9, the
                /// asymptotic expansions beyond), 0 at ±inf.
                SpecialAiryAi(special_airy_ai) => UnaryDef::special_f32_f64("airy_ai_cpu"),
                /// `torch.special.ndtri`: the standard normal quantile
                /// (erfinv in the centre, Newton on ln erfcx in the tails),
                /// −inf at 0, +inf at 1, NaN outside [0, 1].
                SpecialNdtri(special_ndtri) => UnaryDef::special_f32_f64("ndtri_cpu"),
            }
        }
    };
}

/// The primitive binary pointwise ops, as a callback macro (see
/// [`unary_ops!`]).
#[macro_export]
macro_rules! binary_ops {
    ($callback:ident) => {
        $callback! {
            /// Primitive pointwise ops of two operands (tensors or scalar literals).
            BinaryOp: BinaryDef {
                /// `torch.add`.
                Add(add) => BinaryDef::kernel("add_stub", S::NUMBERS.union(S::BOOL)).commutative(),
                /// `torch.sub`.
                Sub(sub) => BinaryDef::kernel("add_stub", S::NUMBERS.union(S::BOOL)).refuse(&[
                    refuse(
                        RefuseWhen::AllBool,
                        "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
                    ),
                    refuse(
                        RefuseWhen::AnyBool,
                        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                    ),
                ]),
                /// `torch.mul`.
                Mul(mul) => BinaryDef::new(BinaryKernel::Mul).commutative().opmath_scalar(),
                /// `torch.div`: true division (integers divide as floats).
                Div(div) => BinaryDef::new(BinaryKernel::Div(None))
                    .int_to_float()
                    .opmath_scalar()
                    .costly(),
                /// `torch.div(rounding_mode="trunc")`.
                DivTrunc(div [rounding_mode = "trunc"]) => BinaryDef::new(BinaryKernel::Div(Some("trunc")))
                    .opmath_scalar()
                    .costly()
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.div(rounding_mode="floor")`: Python's `//`.
                DivFloor(div [rounding_mode = "floor"]) => BinaryDef::new(BinaryKernel::Div(Some("floor")))
                    .opmath_scalar()
                    .costly()
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.remainder`: Python's `%` (the sign of the divisor).
                Remainder(remainder) => BinaryDef::kernel("remainder_cpu", S::REAL_NUMBERS)
                    .costly()
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.pow`.
                Pow(pow) => BinaryDef::kernel("pow", S::FLOATS_COMPLEX.union(S::INTS))
                    .costly()
                    .traits(Traits::APPROXIMATE),
                /// `torch.maximum`: NaN propagates.
                Maximum(maximum) => BinaryDef::kernel("maximum_cpu", S::ROUNDABLE.union(S::BOOL))
                    .commutative()
                    .scalars(ScalarOperands::Neither)
                    .refuse(&[refuse(RefuseWhen::AnyComplex, "maximum not implemented for complex tensors.")]),
                /// `torch.minimum`: NaN propagates.
                Minimum(minimum) => BinaryDef::kernel("minimum_cpu", S::ROUNDABLE.union(S::BOOL))
                    .commutative()
                    .scalars(ScalarOperands::Neither)
                    .refuse(&[refuse(RefuseWhen::AnyComplex, "minimum not implemented for complex tensors.")]),
                /// `torch.eq`.
                Eq(eq) => BinaryDef::comparison("eq_cpu", S::ALL).commutative(),
                /// `torch.ne`.
                Ne(ne) => BinaryDef::comparison("ne_cpu", S::ALL).commutative(),
                /// `torch.lt`.
                Lt(lt) => BinaryDef::comparison("lt_cpu", S::REAL_NUMBERS.union(S::BOOL)),
                /// `torch.le`.
                Le(le) => BinaryDef::comparison("le_cpu", S::REAL_NUMBERS.union(S::BOOL)),
                /// `torch.gt`.
                Gt(gt) => BinaryDef::comparison("gt_cpu", S::REAL_NUMBERS.union(S::BOOL)),
                /// `torch.ge`.
                Ge(ge) => BinaryDef::comparison("ge_cpu", S::REAL_NUMBERS.union(S::BOOL)),
                /// `torch.logical_and`.
                LogicalAnd(logical_and) => BinaryDef::logical("logical_and_cpu"),
                /// `torch.logical_or`.
                LogicalOr(logical_or) => BinaryDef::logical("logical_or_cpu"),
                /// `torch.logical_xor`.
                LogicalXor(logical_xor) => BinaryDef::logical("logical_xor_cpu"),
                /// `torch.bitwise_and`.
                BitwiseAnd(bitwise_and) => BinaryDef::bitwise("bitwise_and_cpu"),
                /// `torch.bitwise_or`.
                BitwiseOr(bitwise_or) => BinaryDef::bitwise("bitwise_or_cpu"),
                /// `torch.bitwise_xor`.
                BitwiseXor(bitwise_xor) => BinaryDef::bitwise("bitwise_xor_cpu"),
                /// `torch.atan2` (`arctan2`): the angle of the point
                /// (`other`, `input`), in [-π, π] (integers in the default
                /// float dtype).
                Atan2(atan2) => BinaryDef::kernel("atan2_cpu", S::FLOATS)
                    .int_to_float()
                    .costly()
                    .scalars(ScalarOperands::Neither)
                    .traits(Traits::APPROXIMATE),
                /// `torch.fmod`: C's remainder, with the sign of the
                /// dividend (exact for floats; integer division by zero
                /// is PyTorch's ZeroDivisionError).
                Fmod(fmod) => BinaryDef::kernel("fmod_cpu", S::REAL_NUMBERS)
                    .scalars(ScalarOperands::Second)
                    .costly()
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.gcd`: C's Euclid on `|a|`, `|b|` in the integer's own
                /// width (so `gcd(MIN, 0)` is MIN, as PyTorch's kernel wraps).
                Gcd(gcd) => BinaryDef::kernel("gcd_cpu", S::INTS)
                    .scalars(ScalarOperands::Neither)
                    .costly()
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.lcm`: `|a / gcd(a, b) · b|` wrapped as PyTorch's
                /// kernel wraps it (0 where the gcd is 0).
                Lcm(lcm) => BinaryDef::kernel("lcm_cpu", S::INTS)
                    .scalars(ScalarOperands::Neither)
                    .costly()
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.bitwise_left_shift` (`<<`): 0 for a shift that is
                /// negative or at least the width.
                BitwiseLeftShift(bitwise_left_shift) => BinaryDef::kernel("lshift_cpu", S::INTS)
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.bitwise_right_shift` (`>>`): arithmetic for signed
                /// integers; a shift that is negative or at least the width
                /// gives the sign (0 or -1).
                BitwiseRightShift(bitwise_right_shift) => BinaryDef::kernel("rshift_cpu", S::INTS)
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.nextafter`: the next value of the computation dtype
                /// after `input` towards `other` (f16 and bf16 step in their
                /// own formats).
                Nextafter(nextafter) => BinaryDef::kernel("nextafter_cpu", S::FLOATS)
                    .scalars(ScalarOperands::Neither)
                    .traits(Traits::DISCONTINUOUS),
                /// `torch.special.zeta`: the Hurwitz zeta function
                /// `Σ_k (q + k)^-x` of `x` (`input`) and `q` (`other`),
                /// integers in the default float dtype (f16 and bf16
                /// refused); in f64, rounded once.
                SpecialZeta(special_zeta) => BinaryDef::special_f32_f64("zeta_cpu"),
                /// `torch.igamma` (`torch.special.gammainc`): the regularized
                /// lower incomplete gamma function P(a, x) of `a` (`input`)
                /// and `x` (`other`), in f64 (`kiln_math::special::gamma_inc`);
                /// floats only (integers refused, as PyTorch's kernel), no
                /// scalar operands; SciPy's values on the domain's edges.
                Igamma(igamma) => BinaryDef::kernel("igamma_cpu", S::FLOATS)
                    .scalars(ScalarOperands::Neither)
                    .costly()
                    .traits(Traits::APPROXIMATE),
                /// `torch.igammac` (`torch.special.gammaincc`): the upper one,
                /// Q(a, x) = 1 − P(a, x); as `igamma`.
                Igammac(igammac) => BinaryDef::kernel("igammac_cpu", S::FLOATS)
                    .scalars(ScalarOperands::Neither)
                    .costly()
                    .traits(Traits::APPROXIMATE),
                /// `torch.special.chebyshev_polynomial_t`: Chebyshev's polynomial of the first kind `T_n(x)` of `x`
                /// (`input`) and the degree `n` (`other`, truncated to an
                /// integer as C does; negative: 0), by ATen's algorithm in
                /// f64 (`kiln_math::polynomials`); integers in the default
                /// float dtype, f16 and bf16 refused.
                SpecialChebyshevPolynomialT(special_chebyshev_polynomial_t) => BinaryDef::polynomial("chebyshev_polynomial_t_cpu"),
                /// `torch.special.chebyshev_polynomial_u`: of the second kind `U_n(x)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialChebyshevPolynomialU(special_chebyshev_polynomial_u) => BinaryDef::polynomial("chebyshev_polynomial_u_cpu"),
                /// `torch.special.chebyshev_polynomial_v`: of the third kind `V_n(x)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialChebyshevPolynomialV(special_chebyshev_polynomial_v) => BinaryDef::polynomial("chebyshev_polynomial_v_cpu"),
                /// `torch.special.chebyshev_polynomial_w`: of the fourth kind `W_n(x)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialChebyshevPolynomialW(special_chebyshev_polynomial_w) => BinaryDef::polynomial("chebyshev_polynomial_w_cpu"),
                /// `torch.special.shifted_chebyshev_polynomial_t`: `T_n(2x - 1)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialShiftedChebyshevPolynomialT(special_shifted_chebyshev_polynomial_t) => BinaryDef::polynomial("shifted_chebyshev_polynomial_t_cpu"),
                /// `torch.special.shifted_chebyshev_polynomial_u`: `U_n(2x - 1)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialShiftedChebyshevPolynomialU(special_shifted_chebyshev_polynomial_u) => BinaryDef::polynomial("shifted_chebyshev_polynomial_u_cpu"),
                /// `torch.special.shifted_chebyshev_polynomial_v`: `V_n(2x - 1)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialShiftedChebyshevPolynomialV(special_shifted_chebyshev_polynomial_v) => BinaryDef::polynomial("shifted_chebyshev_polynomial_v_cpu"),
                /// `torch.special.shifted_chebyshev_polynomial_w`: `W_n(2x - 1)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialShiftedChebyshevPolynomialW(special_shifted_chebyshev_polynomial_w) => BinaryDef::polynomial("shifted_chebyshev_polynomial_w_cpu"),
                /// `torch.special.hermite_polynomial_h`: the physicists' Hermite polynomial `H_n(x)` (NaN above degree 128 for f32, 512 for f64, as PyTorch); as
                /// `special_chebyshev_polynomial_t`.
                SpecialHermitePolynomialH(special_hermite_polynomial_h) => BinaryDef::polynomial("hermite_polynomial_h_cpu"),
                /// `torch.special.hermite_polynomial_he`: the probabilists' Hermite polynomial `He_n(x)` (degree limits as `H`); as
                /// `special_chebyshev_polynomial_t`.
                SpecialHermitePolynomialHe(special_hermite_polynomial_he) => BinaryDef::polynomial("hermite_polynomial_he_cpu"),
                /// `torch.special.laguerre_polynomial_l`: Laguerre's polynomial `L_n(x)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialLaguerrePolynomialL(special_laguerre_polynomial_l) => BinaryDef::polynomial("laguerre_polynomial_l_cpu"),
                /// `torch.special.legendre_polynomial_p`: Legendre's polynomial `P_n(x)`; as
                /// `special_chebyshev_polynomial_t`.
                SpecialLegendrePolynomialP(special_legendre_polynomial_p) => BinaryDef::polynomial("legendre_polynomial_p_cpu"),
            }
        }
    };
}

unary_ops!(define_kind);
binary_ops!(define_kind);

/// The pattern of torch.special's orthogonal polynomial ops, in a match on
/// [`BinaryOp`](crate::BinaryOp) (`polynomial_ops!() => ...`): one family
/// that each backend computes with one function of the polynomial, so the
/// family is listed once and every match stays exhaustive.
#[macro_export]
macro_rules! polynomial_ops {
    () => {
        $crate::BinaryOp::SpecialChebyshevPolynomialT
            | $crate::BinaryOp::SpecialChebyshevPolynomialU
            | $crate::BinaryOp::SpecialChebyshevPolynomialV
            | $crate::BinaryOp::SpecialChebyshevPolynomialW
            | $crate::BinaryOp::SpecialShiftedChebyshevPolynomialT
            | $crate::BinaryOp::SpecialShiftedChebyshevPolynomialU
            | $crate::BinaryOp::SpecialShiftedChebyshevPolynomialV
            | $crate::BinaryOp::SpecialShiftedChebyshevPolynomialW
            | $crate::BinaryOp::SpecialHermitePolynomialH
            | $crate::BinaryOp::SpecialHermitePolynomialHe
            | $crate::BinaryOp::SpecialLaguerrePolynomialL
            | $crate::BinaryOp::SpecialLegendrePolynomialP
    };
}

define_kind! {
    /// Primitive value reductions.
    ReduceOp: ReduceDef {
        /// `torch.sum`.
        Sum(sum) => ReduceDef::new("sum_cpu", S::SUMMABLE),
        /// `torch.prod`.
        Prod(prod) => ReduceDef::new("prod_out_cpu", S::SUMMABLE),
        /// `torch.amax`: NaN propagates.
        Amax(amax) => ReduceDef::new("max_values_cpu", S::REAL_NUMBERS.union(S::BOOL)),
        /// `torch.amin`: NaN propagates.
        Amin(amin) => ReduceDef::new("min_values_cpu", S::REAL_NUMBERS.union(S::BOOL)),
    }
}

define_kind! {
    /// Primitive index reductions: the position of the first extreme.
    ArgReduceOp: ReduceDef {
        /// `torch.argmax`.
        Argmax(argmax) => ReduceDef::new("argmax_cpu", S::REAL_NUMBERS),
        /// `torch.argmin`.
        Argmin(argmin) => ReduceDef::new("argmin_cpu", S::REAL_NUMBERS),
    }
}

const POINTWISE: Traits = Traits::POINTWISE;
const VIEW: Traits = Traits::VIEW;
const REDUCTION: Traits = Traits::REDUCTION;
const COPY: Traits = Traits::COPY;
const CREATION: Traits = Traits::CREATION;

/// A pointwise op laid out by TensorIterator.
const fn pointwise(infer: crate::ops::def::InferFn, cost: Cost) -> Rules {
    Rules::new(infer, LayoutRule::Pointwise, cost).traits(POINTWISE)
}

/// A view of its operand (PyTorch's view geometry).
const fn view() -> Rules {
    Rules::new(
        infer::view,
        LayoutRule::Custom(layout::view_layout),
        Cost::View,
    )
    .traits(VIEW)
}

/// A reduction-like op: a fresh contiguous result.
const fn reduction(infer: crate::ops::def::InferFn, cost: Cost) -> Rules {
    Rules::new(infer, LayoutRule::Contiguous, cost).traits(REDUCTION)
}

/// Every dtype but the float8 and packed float4 formats (the ops PyTorch
/// dispatches over all "regular" dtypes: tril, triu, flip and fliplr;
/// flipud takes every dtype).
const NOT_PACKED_OR_FLOAT8: S = S::ROUNDABLE
    .union(S::COMPLEX)
    .union(S::COMPLEX_HALF)
    .union(S::BOOL);

/// What pixel_shuffle, pixel_unshuffle and channel_shuffle take: every
/// dtype but complex32, the float8 and float4 formats and the bare
/// unsigned integers.
const SHUFFLES: S = S::FLOATS_COMPLEX.union(S::INTS).union(S::BOOL);

/// What the reflection and replication pads take: floats, complex and the
/// signed-capable integers (not bool, complex32, float8 or the bare
/// unsigned integers).
const PADS: S = S::FLOATS_COMPLEX.union(S::INTS);

/// What `index_copy` and `index_fill` take: every dtype but the bare
/// unsigned integers and the float8 and float4 formats.
const INDEX_WRITES: S = S::ALL
    .without(S::BARE_UINTS)
    .without(S::FLOAT8)
    .without(S::FLOAT4);

const fn fixed(name: &'static str, dtypes: S) -> KernelRule {
    KernelRule::Fixed(AtenKernel::new(name, dtypes))
}

define_ops! {
    /// A primitive unary pointwise op (`neg`, `exp`, ...).
    Unary { #[kind] op: UnaryOp } (input: Tensor)
        => pointwise(infer::unary, Cost::Cheap).kernel(KernelRule::Custom(support::unary_kernel));
    /// A primitive binary pointwise op (`add`, `div`, `eq`, ...).
    Binary { #[kind] op: BinaryOp } (input: Any, other: Any)
        => pointwise(infer::binary, Cost::Cheap).kernel(KernelRule::Custom(support::binary_kernel));
    /// `torch.where(condition, input, other)`.
    Where "where" (condition: Tensor, input: Any, other: Any)
        => pointwise(infer::where_, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .kernel(KernelRule::Custom(support::where_kernel));
    /// `torch.clamp` with scalar bounds (attributes) or tensor bounds
    /// (operands), or one of each.
    Clamp "clamp" { min: Option<Scalar> = None, max: Option<Scalar> = None }
        (input: Tensor, min: Optional, max: Optional)
        => pointwise(infer::clamp, Cost::Cheap)
            .kernel(KernelRule::Custom(support::clamp_kernel))
            .expand(expand::clamp);
    /// `Tensor.to(dtype)`: PyTorch's conversion (the promotion pass inserts these).
    Cast "cast" { dtype: DType } (input: Tensor)
        => Rules::new(infer::cast, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Cheap)
            .traits(POINTWISE)
            .kernel(KernelRule::Custom(support::copy_kernel));
    /// A primitive value reduction (`sum`, `prod`, `amax`, `amin`).
    Reduce { #[kind] op: ReduceOp, dims: Option<Vec<i64>> = None, keepdim: bool = false, dtype: Option<DType> = None }
        (input: Tensor)
        => reduction(infer::reduce, Cost::Reduction).kernel(KernelRule::Custom(support::reduce_kernel));
    /// `torch.mean`.
    Mean "mean" { dims: Option<Vec<i64>> = None, keepdim: bool = false, dtype: Option<DType> = None }
        (input: Tensor)
        => reduction(infer::mean, Cost::Reduction)
            .kernel(fixed("sum_cpu", S::SUMMABLE))
            .expand(expand::mean);
    /// `torch.var`: the mean squared deviation, divided by
    /// `max(n - correction, 0)`; complex inputs give a real variance.
    Var "var" { dims: Option<Vec<i64>> = None, correction: Scalar = Scalar::Int(1), keepdim: bool = false } (input: Tensor)
        => reduction(infer::var_std, Cost::Reduction)
            .expand(expand::var_std);
    /// `torch.std`: the square root of `var`.
    Std "std" { dims: Option<Vec<i64>> = None, correction: Scalar = Scalar::Int(1), keepdim: bool = false } (input: Tensor)
        => reduction(infer::var_std, Cost::Reduction)
            .traits(Traits::APPROXIMATE)
            .expand(expand::var_std);
    /// `torch.var_mean`: `var` and `mean`, two results.
    VarMean "var_mean" { dims: Option<Vec<i64>> = None, correction: Scalar = Scalar::Int(1), keepdim: bool = false } (input: Tensor)
        => reduction(infer::var_std, Cost::Reduction)
            .results(Results::Fixed(2))
            .expand(expand::var_std);
    /// `torch.std_mean`: `std` and `mean`, two results.
    StdMean "std_mean" { dims: Option<Vec<i64>> = None, correction: Scalar = Scalar::Int(1), keepdim: bool = false } (input: Tensor)
        => reduction(infer::var_std, Cost::Reduction)
            .results(Results::Fixed(2))
            .traits(Traits::APPROXIMATE)
            .expand(expand::var_std);
    /// `torch.logsumexp`: `log(sum(exp(x)))` computed as PyTorch does,
    /// shifted by the (finite) maximum; integers in the default float dtype.
    Logsumexp "logsumexp" { dims: Vec<i64>, keepdim: bool = false } (input: Tensor)
        => reduction(infer::logsumexp, Cost::Reduction)
            .traits(Traits::APPROXIMATE)
            .expand(expand::logsumexp);
    /// `torch.nansum`: the sum with NaN counted as zero.
    Nansum "nansum" { dims: Option<Vec<i64>> = None, keepdim: bool = false, dtype: Option<DType> = None } (input: Tensor)
        => reduction(infer::nan_reduction, Cost::Reduction)
            .expand(expand::nan_reduction);
    /// `torch.nanmean`: the mean of the elements that are not NaN.
    Nanmean "nanmean" { dims: Option<Vec<i64>> = None, keepdim: bool = false, dtype: Option<DType> = None } (input: Tensor)
        => reduction(infer::nan_reduction, Cost::Reduction)
            .expand(expand::nan_reduction);
    /// `torch.count_nonzero`: an int64 count.
    CountNonzero "count_nonzero" { dims: Option<Vec<i64>> = None } (input: Tensor)
        => reduction(infer::count_nonzero, Cost::Reduction)
            .expand(expand::count_nonzero);
    /// `torch.linalg.vector_norm`: `ord` 2 (default), 1, 0, ±inf or any
    /// other p, over `dims`, in opmath; a real result.
    LinalgVectorNorm "linalg_vector_norm" { ord: Scalar = Scalar::Int(2), dims: Option<Vec<i64>> = None, keepdim: bool = false, dtype: Option<DType> = None } (input: Tensor)
        => reduction(infer::vector_norm, Cost::Reduction)
            .traits(Traits::APPROXIMATE)
            .expand(expand::vector_norm);
    /// `torch.cumsum`: running sums along `dim` (integers and bool in int64),
    /// accumulated as PyTorch's CPU kernel does (f32 in f64, f16/bf16 in f32).
    /// The scans run on the interpreter, natively for their common dtypes
    /// on the CPU (`kiln_runtime::lines`) and as generated kernels on CUDA
    /// (`kiln_cuda::scan`), with the interpreter's arithmetic.
    Cumsum "cumsum" { dim: i64, dtype: Option<DType> = None } (input: Tensor)
        => Rules::new(infer::scan, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("cumsum_cpu", S::NUMBERS.union(S::BOOL)));
    /// `torch.cumprod`: running products along `dim`.
    Cumprod "cumprod" { dim: i64, dtype: Option<DType> = None } (input: Tensor)
        => Rules::new(infer::scan, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("cumprod_cpu", S::NUMBERS.union(S::BOOL)));
    /// `torch.logcumsumexp`: running `log(sum(exp))` along `dim`.
    Logcumsumexp "logcumsumexp" { dim: i64 } (input: Tensor)
        => Rules::new(infer::scan, LayoutRule::Contiguous, Cost::Kernel)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("logcumsumexp_out_cpu", S::FLOATS));
    /// `torch.cummax`: running maxima along `dim` and where each was (the
    /// last position of equal values; NaN, once met, stays).
    Cummax "cummax" { dim: i64 } (input: Tensor)
        => Rules::new(infer::scan, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("cummax_cpu", S::REAL_NUMBERS.union(S::BOOL)));
    /// `torch.cummin`: running minima along `dim` and where each was.
    Cummin "cummin" { dim: i64 } (input: Tensor)
        => Rules::new(infer::scan, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("cummin_cpu", S::REAL_NUMBERS.union(S::BOOL)));
    /// `torch.max(x, dim, keepdim)`: the largest values along `dim` and
    /// where they are (the first; NaN counts as the largest).
    MaxDim "max" { dim: i64, keepdim: bool = false } (input: Tensor)
        => reduction(infer::extreme_dim, Cost::Reduction)
            .results(Results::Fixed(2))
            .kernel(fixed("max_cpu", S::REAL_NUMBERS.union(S::BOOL)))
            .expand(expand::extreme_dim);
    /// `torch.min(x, dim, keepdim)`: the smallest values and where they are.
    MinDim "min" { dim: i64, keepdim: bool = false } (input: Tensor)
        => reduction(infer::extreme_dim, Cost::Reduction)
            .results(Results::Fixed(2))
            .kernel(fixed("min_cpu", S::REAL_NUMBERS.union(S::BOOL)))
            .expand(expand::extreme_dim);
    /// `torch.any`: whether some element is nonzero (NaN is).
    Any "any" { dims: Option<Vec<i64>> = None, keepdim: bool = false } (input: Tensor)
        => reduction(infer::any_all, Cost::Reduction).expand(expand::any_all);
    /// `torch.all`: whether every element is nonzero.
    All "all" { dims: Option<Vec<i64>> = None, keepdim: bool = false } (input: Tensor)
        => reduction(infer::any_all, Cost::Reduction).expand(expand::any_all);
    /// A primitive index reduction (`argmax`, `argmin`).
    ArgReduce { #[kind] op: ArgReduceOp, dim: Option<i64> = None, keepdim: bool = false } (input: Tensor)
        => reduction(infer::arg_reduce, Cost::Reduction)
            .traits(Traits::DISCONTINUOUS)
            .kernel(KernelRule::Custom(support::arg_reduce_kernel));
    /// `torch.softmax`.
    Softmax "softmax" { dim: i64, dtype: Option<DType> = None } (input: Tensor)
        => reduction(infer::softmax, Cost::Rows)
            .kernel(KernelRule::Custom(support::softmax_kernel))
            .expand(expand::softmax);
    /// `torch.log_softmax`.
    LogSoftmax "log_softmax" { dim: i64, dtype: Option<DType> = None } (input: Tensor)
        => reduction(infer::softmax, Cost::Rows)
            .kernel(KernelRule::Custom(support::softmax_kernel))
            .expand(expand::softmax);
    /// `torch.nn.functional.layer_norm`.
    LayerNorm "layer_norm" { normalized_shape: Vec<i64>, #[shown] eps: F64 = F64(1e-5) }
        (input: Tensor, weight: Optional, bias: Optional)
        => reduction(infer::layer_norm, Cost::Rows)
            .kernel(fixed("LayerNormKernelImpl", S::FLOATS))
            .expand(expand::layer_norm);
    /// `torch.nn.functional.gelu`.
    Gelu "gelu" { approximate: GeluApproximate = GeluApproximate::None } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("GeluKernelImpl", S::FLOATS))
            .expand(expand::gelu);
    /// `torch.nn.functional.silu`: `x · sigmoid(x)`.
    Silu "silu" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("silu_cpu", S::FLOATS_COMPLEX))
            .expand(expand::silu);
    /// `torch.nn.functional.softplus`: `log(1 + exp(beta·x)) / beta`, or `x`
    /// where `beta·x > threshold`.
    Softplus "softplus" { beta: Scalar = Scalar::Int(1), threshold: Scalar = Scalar::Int(20) } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("softplus_cpu", S::FLOATS))
            .expand(expand::softplus);
    /// `torch.nn.functional.hardswish`: `x · relu6(x + 3) / 6`.
    Hardswish "hardswish" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .kernel(fixed("hardswish_cpu", S::FLOATS))
            .expand(expand::hardswish);
    /// `torch.nn.functional.elu`: `x·scale` where `x > 0`, else
    /// `expm1(x·input_scale)·alpha·scale` (PyTorch's CPU kernel).
    Elu "elu" { alpha: F64 = F64(1.0), scale: F64 = F64(1.0), input_scale: F64 = F64(1.0) } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("elu_cpu", S::FLOATS))
            .expand(expand::elu);
    /// `torch.nn.functional.selu`: elu with SELU's alpha and scale.
    Selu "selu" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("elu_cpu", S::FLOATS))
            .expand(expand::elu);
    /// `torch.nn.functional.celu`: elu with `input_scale = 1/alpha`.
    Celu "celu" { alpha: F64 = F64(1.0) } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("elu_cpu", S::FLOATS))
            .expand(expand::elu);
    /// `torch.nn.functional.leaky_relu`: `x > 0 ? x : x·negative_slope`.
    LeakyRelu "leaky_relu" { negative_slope: F64 = F64(0.01) } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .kernel(fixed("leaky_relu_cpu", S::FLOATS))
            .expand(expand::leaky_relu);
    /// `torch.nn.functional.rrelu` in eval mode: leaky_relu with slope
    /// `(lower + upper) / 2` (training mode is random and refused).
    Rrelu "rrelu" { lower: F64 = F64(0.125), upper: F64 = F64(1.0 / 3.0), training: bool = false } (input: Tensor)
        => pointwise(infer::rrelu, Cost::Cheap)
            .kernel(fixed("leaky_relu_cpu", S::FLOATS))
            .expand(expand::leaky_relu);
    /// `torch.nn.functional.hardtanh`: clamp to `[min_val, max_val]`, in
    /// the input's dtype.
    Hardtanh "hardtanh" { min_val: Scalar = Scalar::Int(-1), max_val: Scalar = Scalar::Int(1) } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .kernel(fixed("clamp_scalar_cpu", S::ROUNDABLE))
            .expand(expand::hardtanh);
    /// `torch.nn.functional.relu6`: hardtanh to `[0, 6]`.
    Relu6 "relu6" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .kernel(fixed("clamp_scalar_cpu", S::ROUNDABLE))
            .expand(expand::hardtanh);
    /// `torch.nn.functional.hardsigmoid`: `min(max(x + 3, 0), 6) / 6`.
    Hardsigmoid "hardsigmoid" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .kernel(fixed("hardsigmoid_cpu", S::FLOATS))
            .expand(expand::hardsigmoid);
    /// `torch.nn.functional.mish`: `x · tanh(log1p(exp(x)))`.
    Mish "mish" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("mish_cpu", S::FLOATS))
            .expand(expand::mish);
    /// `torch.nn.functional.softsign`: `x / (|x| + 1)` (integers in the
    /// default float dtype, as PyTorch's Python definition divides).
    Softsign "softsign" (input: Tensor)
        => pointwise(infer::int_result_float, Cost::Cheap)
            .kernel(fixed("div_true_kernel", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::softsign);
    /// `torch.nn.functional.tanhshrink`: `x - tanh(x)`.
    Tanhshrink "tanhshrink" (input: Tensor)
        => pointwise(infer::int_result_float, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("tanh_vml_cpu", S::FLOATS_COMPLEX.union(S::INTS).union(S::BARE_UINTS)))
            .expand(expand::tanhshrink);
    /// `torch.nn.functional.softshrink`: `x ∓ lambd` outside
    /// `[-lambd, lambd]`, `x·0` inside (so NaN stays NaN, -0.3 gives -0).
    Softshrink "softshrink" { lambd: F64 = F64(0.5) } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .kernel(fixed("softshrink_cpu", S::FLOATS))
            .expand(expand::shrink);
    /// `torch.nn.functional.hardshrink`: `0` inside `[-lambd, lambd]`, else `x`.
    Hardshrink "hardshrink" { lambd: F64 = F64(0.5) } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .kernel(fixed("hardshrink_cpu", S::FLOATS))
            .expand(expand::shrink);
    /// `torch.nn.functional.threshold`: `value` where `x <= threshold`, else `x`.
    Threshold "threshold" { threshold: Scalar, value: Scalar } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .kernel(fixed("threshold_cpu", S::REAL_NUMBERS))
            .expand(expand::threshold);
    /// `torch.nn.functional.logsigmoid`: `min(x, 0) - log1p(exp(-|x|))`.
    Logsigmoid "logsigmoid" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("log_sigmoid_cpu", S::FLOATS))
            .expand(expand::logsigmoid);
    /// `torch.nn.functional.softmin`: `softmax(-x)`.
    Softmin "softmin" { dim: i64, dtype: Option<DType> = None } (input: Tensor)
        => reduction(infer::softmax, Cost::Rows)
            .kernel(KernelRule::Custom(support::softmax_kernel))
            .expand(expand::softmin);
    /// `torch.nn.functional.glu`: `a · sigmoid(b)` of the two halves of `dim`.
    Glu "glu" { dim: i64 = -1 } (input: Tensor)
        => Rules::new(infer::glu, LayoutRule::Contiguous, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("glu_cpu", S::FLOATS))
            .expand(expand::glu);
    /// `torch.square`: `x·x` (bool squares as int64, as `pow(x, 2)`).
    Square "square" (input: Tensor)
        => pointwise(infer::square, Cost::Cheap)
            .kernel(fixed("mul_kernel", S::NUMBERS))
            .expand(expand::square);
    /// `torch.positive`: the input itself (bool refused, as PyTorch's `+`).
    Positive "positive" (input: Tensor)
        => pointwise(infer::positive, Cost::Cheap)
            .expand(expand::positive);
    /// `torch.isinf`.
    Isinf "isinf" (input: Tensor)
        => pointwise(infer::predicate, Cost::Cheap)
            .expand(expand::predicate);
    /// `torch.isfinite`: neither infinite nor NaN.
    Isfinite "isfinite" (input: Tensor)
        => pointwise(infer::predicate, Cost::Cheap)
            .expand(expand::predicate);
    /// `torch.isposinf`.
    Isposinf "isposinf" (input: Tensor)
        => pointwise(infer::predicate, Cost::Cheap)
            .expand(expand::predicate);
    /// `torch.isneginf`.
    Isneginf "isneginf" (input: Tensor)
        => pointwise(infer::predicate, Cost::Cheap)
            .expand(expand::predicate);
    /// `torch.frac`: `x - trunc(x)`.
    Frac "frac" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Cheap)
            .kernel(fixed("frac_cpu", S::FLOATS))
            .expand(expand::frac);
    /// `torch.deg2rad`: `x · (π/180)` (integers in the default float dtype).
    Deg2rad "deg2rad" (input: Tensor)
        => pointwise(infer::int_to_float, Cost::Cheap)
            .kernel(fixed("mul_kernel", S::FLOATS))
            .expand(expand::angle_units);
    /// `torch.rad2deg`: `x · (180/π)`.
    Rad2deg "rad2deg" (input: Tensor)
        => pointwise(infer::int_to_float, Cost::Cheap)
            .kernel(fixed("mul_kernel", S::FLOATS))
            .expand(expand::angle_units);
    /// `torch.logit`: `log(z / (1 - z))` with `z` clamped to
    /// `[eps, 1 - eps]` when `eps` is given.
    Logit "logit" { eps: Option<F64> = None } (input: Tensor)
        => pointwise(infer::int_to_float, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("logit_cpu", S::FLOATS))
            .expand(expand::logit);
    /// `torch.nan_to_num`: NaN, +inf and -inf replaced (by 0 and the
    /// dtype's largest and lowest finite values unless given).
    NanToNum "nan_to_num" { nan: Option<F64> = None, posinf: Option<F64> = None, neginf: Option<F64> = None } (input: Tensor)
        => pointwise(infer::nan_to_num, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .expand(expand::nan_to_num);
    /// `torch.sinc`: `sin(πx) / (πx)`, 1 at 0, in opmath.
    Sinc "sinc" (input: Tensor)
        => pointwise(infer::int_to_float, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("sinc_cpu", S::FLOATS_COMPLEX))
            .expand(expand::sinc);
    /// `torch.xlogy`: `x·log(y)`, 0 where `x == 0`, NaN where `y` is NaN.
    Xlogy "xlogy" (input: Any, other: Any)
        => pointwise(infer::promoted, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("xlogy_cpu", S::FLOATS))
            .expand(expand::xlogy);
    /// `torch.sgn`: `sign` of real tensors; `z/|z|` of complex ones (0 for
    /// 0), in the opmath dtype.
    Sgn "sgn" (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .kernel(fixed("sign_cpu", S::REAL_NUMBERS.union(S::BOOL).union(S::COMPLEX).union(S::COMPLEX_HALF)))
            .expand(expand::sgn);
    /// `torch.round(x, decimals=d)` (ATen's `round.decimals`; written
    /// `round` with a `decimals` attribute): PyTorch's scaled round in
    /// opmath, `rint(x·10^d)/10^d`, or `rint(x/10^-d)·10^-d` for negative
    /// `d`, `10^|d|` rounded to opmath.
    RoundDecimals "round" { #[shown] decimals: i64 = 0 } (input: Tensor)
        => pointwise(infer::same_dtype, Cost::Costly)
            .traits(Traits::DISCONTINUOUS)
            .kernel(fixed("round_cpu", S::FLOATS))
            .expand(expand::round_decimals);
    /// `torch.polygamma(n, x)`: digamma for `n = 0`, else
    /// `(-1)^(n+1)·n!·ζ(n+1, x)` as PyTorch computes it (`n!` and the
    /// product in opmath); integers in the default float dtype.
    Polygamma "polygamma" { n: i64 } (input: Tensor)
        => pointwise(infer::polygamma, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(KernelRule::Custom(support::polygamma_kernel))
            .expand(expand::polygamma);
    /// `torch.special.xlog1py`: `x·log1p(y)`, as xlogy.
    SpecialXlog1py "special_xlog1py" (input: Any, other: Any)
        => pointwise(infer::promoted, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("xlog1py_cpu", S::FLOATS))
            .expand(expand::xlogy);
    /// `torch.fmax`: the maximum, ignoring a NaN operand.
    Fmax "fmax" (input: Tensor, other: Tensor)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("fmax_cpu", S::ROUNDABLE.union(S::BOOL)))
            .expand(expand::fmax_fmin);
    /// `torch.fmin`: the minimum, ignoring a NaN operand.
    Fmin "fmin" (input: Tensor, other: Tensor)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("fmin_cpu", S::ROUNDABLE.union(S::BOOL)))
            .expand(expand::fmax_fmin);
    /// `torch.heaviside`: `values` where `x == 0`, else `x > 0`.
    Heaviside "heaviside" (input: Tensor, values: Tensor)
        => pointwise(infer::heaviside, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .expand(expand::heaviside);
    /// `torch.logaddexp`: `log(exp(a) + exp(b))` computed stably.
    Logaddexp "logaddexp" (input: Tensor, other: Tensor)
        => pointwise(infer::promoted, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("logaddexp_cpu", S::FLOATS))
            .expand(expand::logaddexp);
    /// `torch.lerp` with a scalar or tensor `weight`, in opmath:
    /// `self + w·(end - self)` where `|w| < 0.5`, else
    /// `end - (end - self)·(1 - w)`.
    Lerp "lerp" (input: Tensor, end: Tensor, weight: Any)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("lerp_kernel_scalar", S::FLOATS_COMPLEX))
            .expand(expand::lerp);
    /// `torch.addcmul`: `self + value·t1·t2`.
    Addcmul "addcmul" { value: Scalar = Scalar::Int(1) } (input: Tensor, tensor1: Tensor, tensor2: Tensor)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("addcmul_cpu_out", S::NUMBERS))
            .expand(expand::addc);
    /// `torch.addcdiv`: `self + value·t1 / t2` (integers refused, as PyTorch).
    Addcdiv "addcdiv" { value: Scalar = Scalar::Int(1) } (input: Tensor, tensor1: Tensor, tensor2: Tensor)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("addcdiv_cpu_out", S::FLOATS_COMPLEX))
            .expand(expand::addc);
    /// `torch.clamp_min`: `clamp(x, min=min)`.
    ClampMin "clamp_min" { min: Scalar } (input: Tensor)
        => pointwise(infer::clamp_one, Cost::Cheap)
            .kernel(fixed("clamp_min_scalar_cpu", S::ROUNDABLE))
            .expand(expand::clamp_one);
    /// `torch.clamp_max`: `clamp(x, max=max)`.
    ClampMax "clamp_max" { max: Scalar } (input: Tensor)
        => pointwise(infer::clamp_one, Cost::Cheap)
            .kernel(fixed("clamp_max_scalar_cpu", S::ROUNDABLE))
            .expand(expand::clamp_one);
    /// `torch.float_power`: `pow` in float64 (complex128 for complex).
    FloatPower "float_power" (input: Any, exponent: Any)
        => pointwise(infer::promoted, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("pow", S::FLOATS_COMPLEX))
            .expand(expand::float_power);
    /// `torch.true_divide`: `div`.
    TrueDivide "true_divide" (input: Any, other: Any)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("div_true_kernel", S::FLOATS_COMPLEX))
            .expand(expand::divide_alias);
    /// `torch.floor_divide`: `div` with `rounding_mode = "floor"`.
    FloorDivide "floor_divide" (input: Any, other: Any)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("div_floor_kernel", S::REAL_NUMBERS))
            .expand(expand::divide_alias);
    /// `torch.tan`: `sin(x) / cos(x)` in opmath.
    Tan "tan" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("tan_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.sinh`: `(expm1(x) - expm1(-x)) / 2` (accurate near 0), and
    /// `±exp(|x|/2)²/2` where `exp(|x|)` alone would overflow.
    Sinh "sinh" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("sinh_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.cosh`: `(exp(x) + exp(-x)) / 2`, and `exp(|x|/2)²/2` where
    /// `exp(|x|)` alone would overflow.
    Cosh "cosh" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("cosh_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.asinh`: `sign(x)·log1p(|x| + x²/(1 + √(1 + x²)))`, and
    /// `sign(x)·(log|x| + ln 2)` where x² would overflow.
    Asinh "asinh" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("asinh_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.acosh`: `log1p((x - 1) + √((x - 1)(x + 1)))` (NaN below 1).
    Acosh "acosh" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("acosh_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.atanh`: `sign(x)·log1p(2|x| / (1 - |x|)) / 2`.
    Atanh "atanh" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("atanh_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.log10`: `log(x) / ln 10`.
    Log10 "log10" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("log10_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.exp2`: `pow(2, x)`.
    Exp2 "exp2" (input: Tensor)
        => pointwise(infer::real_math, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("exp2_vml_cpu", S::FLOATS))
            .expand(expand::real_math);
    /// `torch.hypot`: `√(a² + b²)` without overflow (in f64 for f32,
    /// f16 and bf16; f64 as `max·√(1 + (min/max)²)`), infinite when either
    /// operand is.
    Hypot "hypot" (input: Tensor, other: Tensor)
        => pointwise(infer::promoted, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("hypot_cpu", S::FLOATS))
            .expand(expand::hypot);
    /// `torch.copysign`: `|input|` with the sign bit of `other` (integers
    /// in the default float dtype).
    Copysign "copysign" (input: Tensor, other: Any)
        => pointwise(infer::promoted, Cost::Cheap)
            .kernel(fixed("copysign_cpu", S::FLOATS))
            .expand(expand::copysign);
    /// `torch.logaddexp2`: `log2(2^a + 2^b)` computed stably.
    Logaddexp2 "logaddexp2" (input: Tensor, other: Tensor)
        => pointwise(infer::promoted, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("logaddexp2_cpu", S::FLOATS))
            .expand(expand::logaddexp);
    /// `torch.ldexp`: `input · 2^other` rounded once to the promoted dtype
    /// (integers in the default float dtype), `2^other` rounded to
    /// `other`'s dtype where that is a float, as PyTorch's
    /// `mul(input, pow(2, other))`.
    Ldexp "ldexp" (input: Tensor, other: Tensor)
        => pointwise(infer::ldexp, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(fixed("pow", S::FLOATS_COMPLEX))
            .expand(expand::ldexp);
    /// `torch.sigmoid`.
    Sigmoid "sigmoid" (input: Tensor)
        => pointwise(infer::int_to_float, Cost::Costly)
            .traits(Traits::APPROXIMATE)
            .kernel(KernelRule::Custom(support::sigmoid_kernel))
            .expand(expand::sigmoid);
    /// `torch.narrow`: `length` elements of `dim` from `start` (negative:
    /// from the end); a `slice` view.
    Narrow "narrow" { dim: i64, start: i64, length: i64 } (input: Tensor)
        => view().expand(expand::derived_view);
    /// `torch.movedim` (and `moveaxis`): the `source` dims moved to
    /// `destination`; a `permute` view.
    Movedim "movedim" { source: Vec<i64>, destination: Vec<i64> } (input: Tensor)
        => view().expand(expand::derived_view);
    /// `torch.broadcast_to`: an `expand` view.
    BroadcastTo "broadcast_to" { size: Vec<i64> } (input: Tensor)
        => view().expand(expand::derived_view);
    /// `torch.unflatten`: `dim` split into `sizes` (one may be -1); a `view`.
    Unflatten "unflatten" { dim: i64, sizes: Vec<i64> } (input: Tensor)
        => view().expand(expand::derived_view);
    /// `torch.atleast_1d`: a 0-dim input as `[1]`, others as they are.
    Atleast1d "atleast_1d" (input: Tensor) => view().expand(expand::derived_view);
    /// `torch.atleast_2d`: `[1, 1]` or `[1, n]`, others as they are.
    Atleast2d "atleast_2d" (input: Tensor) => view().expand(expand::derived_view);
    /// `torch.atleast_3d`: `[1, 1, 1]`, `[1, n, 1]` or `[a, b, 1]`.
    Atleast3d "atleast_3d" (input: Tensor) => view().expand(expand::derived_view);
    /// `torch.roll`: elements shifted along `dims` (the flattened tensor
    /// when `dims` is empty), wrapping around: slices joined by `cat`.
    Roll "roll" { shifts: Vec<i64>, dims: Vec<i64> = Vec::new() } (input: Tensor)
        => Rules::new(infer::roll, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .expand(expand::roll);
    /// `Tensor.repeat`: the tensor tiled `repeats` times along each dim.
    Repeat "repeat" { repeats: Vec<i64> } (input: Tensor)
        => Rules::new(infer::repeat, LayoutRule::Contiguous, Cost::Copy)
            .expand(expand::repeat);
    /// `torch.tile`: `repeat` with `dims` padded with leading 1s.
    Tile "tile" { dims: Vec<i64> } (input: Tensor)
        => Rules::new(infer::repeat, LayoutRule::Contiguous, Cost::Copy)
            .expand(expand::repeat);
    /// `torch.tril`: elements on and below the `diagonal`-th diagonal of the
    /// last two dims, zeros elsewhere.
    Tril "tril" { diagonal: i64 = 0 } (input: Tensor)
        => Rules::new(infer::triangle, LayoutRule::Contiguous, Cost::Cheap)
            .kernel(fixed("tril", NOT_PACKED_OR_FLOAT8))
            .expand(expand::triangle);
    /// `torch.triu`: elements on and above the `diagonal`-th diagonal.
    Triu "triu" { diagonal: i64 = 0 } (input: Tensor)
        => Rules::new(infer::triangle, LayoutRule::Contiguous, Cost::Cheap)
            .kernel(fixed("triu", NOT_PACKED_OR_FLOAT8))
            .expand(expand::triangle);
    /// `torch.flip`: the order of `dims` reversed (run as `index_select`s).
    Flip "flip" { dims: Vec<i64> } (input: Tensor)
        => Rules::new(infer::flip, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Copy)
            .kernel(fixed("flip_cpu", NOT_PACKED_OR_FLOAT8))
            .expand(expand::flip);
    /// `torch.rot90`: `k` quarter turns in the plane of `dims`, from the
    /// first dim towards the second (PyTorch's flips and transposes, so
    /// odd turns give a transposed copy's strides).
    Rot90 "rot90" { k: i64 = 1, dims: Vec<i64> = vec![0, 1] } (input: Tensor)
        => Rules::new(infer::rot90, LayoutRule::Custom(layout::rot90_layout), Cost::Copy)
            .expand(expand::rot90);
    /// `torch.fliplr`: `flip` of dim 1.
    Fliplr "fliplr" (input: Tensor)
        => Rules::new(infer::flip, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Copy)
            .kernel(fixed("flip_cpu", NOT_PACKED_OR_FLOAT8))
            .expand(expand::flip);
    /// `torch.flipud`: `flip` of dim 0.
    Flipud "flipud" (input: Tensor)
        => Rules::new(infer::flip, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Copy)
            .expand(expand::flip);
    /// `torch.constant_pad_nd` (`F.pad` with mode "constant"): `pad` holds
    /// (before, after) pairs from the last dim backwards; negative amounts
    /// crop.
    ConstantPadNd "constant_pad_nd" { pad: Vec<i64>, value: Scalar = Scalar::Int(0) } (input: Tensor)
        => Rules::new(infer::constant_pad_nd, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .expand(expand::constant_pad_nd);
    /// `torch.argsort`: the positions `sort` orders the input by.
    Argsort "argsort" { #[shown] dim: i64 = -1, descending: bool = false, stable: bool = false } (input: Tensor)
        => Rules::new(infer::argsort, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("sort", S::ROUNDABLE.union(S::BOOL)))
            .expand(expand::argsort);
    /// `torch.repeat_interleave` with a static count: each element repeated
    /// `repeats` times along `dim` (of the flattened input without one).
    RepeatInterleave "repeat_interleave" { repeats: i64, dim: Option<i64> = None } (input: Tensor)
        => Rules::new(infer::repeat_interleave, LayoutRule::Contiguous, Cost::Copy)
            .expand(expand::repeat_interleave);
    /// `torch.reshape`: a view where the strides allow one, else a copy.
    Reshape "reshape" { shape: Vec<i64> } (input: Tensor) => view();
    /// `Tensor.view`: an error where the strides allow no view.
    View "view" { shape: Vec<i64> } (input: Tensor) => view();
    /// `torch.permute`.
    Permute "permute" { dims: Vec<i64> } (input: Tensor) => view();
    /// `torch.transpose`.
    Transpose "transpose" { dim0: i64, dim1: i64 } (input: Tensor) => view();
    /// `torch.t`.
    T "t" (input: Tensor) => view();
    /// `Tensor.expand`.
    Expand "expand" { shape: Vec<i64> } (input: Tensor) => view();
    /// `torch.squeeze`: without `dims`, every size-1 dim.
    Squeeze "squeeze" { dims: Option<Vec<i64>> = None } (input: Tensor) => view();
    /// `torch.unsqueeze`.
    Unsqueeze "unsqueeze" { dim: i64 } (input: Tensor) => view();
    /// `x[start:end:step]` along `dim` (bounds clamped, as PyTorch does).
    Slice "slice" { #[shown] dim: i64 = 0, start: Option<i64> = None, end: Option<i64> = None, #[shown] step: i64 = 1 }
        (input: Tensor) => view();
    /// `torch.select`.
    Select "select" { dim: i64, index: i64 } (input: Tensor) => view();
    /// `torch.flatten`: a view where the strides allow one, else a copy.
    Flatten "flatten" { #[shown] start_dim: i64 = 0, #[shown] end_dim: i64 = -1 } (input: Tensor) => view();
    /// `Tensor.contiguous`: the operand itself when it already is.
    Contiguous "contiguous" { memory_format: MemoryFormat = MemoryFormat::Contiguous } (input: Tensor)
        => Rules::new(infer::copy, LayoutRule::Custom(layout::copy_layout), Cost::Copy).traits(COPY);
    /// `torch.clone`, or `clone {strides}`: a copy with exactly these
    /// dense strides (a Kiln extension the decomposition uses to keep a
    /// composite's layout).
    Clone "clone" { strides: Option<Vec<i64>> = None, memory_format: MemoryFormat = MemoryFormat::Preserve }
        (input: Tensor)
        => Rules::new(infer::copy, LayoutRule::Custom(layout::copy_layout), Cost::Copy).traits(COPY);
    /// `Tensor.to`: dtype, device and memory format, each optional.
    To "to" {
        dtype: Option<DType> = None,
        device: Option<Device> = None,
        memory_format: MemoryFormat = MemoryFormat::Preserve,
        copy: bool = false,
    } (input: Tensor)
        => Rules::new(infer::copy, LayoutRule::Custom(layout::copy_layout), Cost::Copy)
            .traits(COPY)
            .kernel(KernelRule::Custom(support::copy_kernel));
    /// `torch.cat`.
    Cat "cat" { #[shown] dim: i64 = 0 } (tensors: List)
        => Rules::new(infer::cat, LayoutRule::Custom(layout::cat_layout), Cost::Kernel);
    /// `torch.stack`: the tensors joined along a new dim.
    Stack "stack" { #[shown] dim: i64 = 0 } (tensors: List)
        => Rules::new(infer::stack, LayoutRule::Custom(layout::stack_layout), Cost::Kernel)
            .expand(expand::stack);
    /// `torch.topk`: the `k` largest (or smallest) values along `dim`, and
    /// their positions (NaN counts as the largest).
    Topk "topk" { k: i64, #[shown] dim: i64 = -1, largest: bool = true, sorted: bool = true }
        (input: Tensor)
        => Rules::new(infer::topk, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("topk_cpu", S::REAL_NUMBERS));
    /// `torch.sort`: values along `dim` in order, and their positions
    /// (stable: equal values keep their order; NaN counts as the largest).
    Sort "sort" { #[shown] dim: i64 = -1, descending: bool = false, stable: bool = false }
        (input: Tensor)
        => Rules::new(infer::sort, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("sort", S::ROUNDABLE.union(S::BOOL)));
    /// `torch.aminmax`: the smallest and the largest values, over `dim` or
    /// every dim.
    Aminmax "aminmax" { dim: Option<i64> = None, keepdim: bool = false } (input: Tensor)
        => reduction(infer::aminmax, Cost::Reduction)
            .results(Results::Fixed(2))
            .kernel(fixed("aminmax_cpu", S::REAL_NUMBERS.union(S::BOOL)))
            .expand(expand::aminmax);
    /// `torch.unbind`: the slices along `dim`, one result each.
    Unbind "unbind" { #[shown] dim: i64 = 0 } (input: Tensor)
        => Rules::new(infer::unbind, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.split` into pieces of `split_size` along `dim` (the last may
    /// be shorter).
    Split "split" { split_size: i64, #[shown] dim: i64 = 0 } (input: Tensor)
        => Rules::new(infer::split, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.split_with_sizes`: pieces of these sizes along `dim`.
    SplitWithSizes "split_with_sizes" { split_sizes: Vec<i64>, #[shown] dim: i64 = 0 } (input: Tensor)
        => Rules::new(infer::split, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.chunk` into `chunks` pieces of equal size along `dim` (the
    /// last may be shorter, and there may be fewer).
    Chunk "chunk" { chunks: i64, #[shown] dim: i64 = 0 } (input: Tensor)
        => Rules::new(infer::split, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.tensor_split`: `sections` pieces of nearly equal size (the
    /// first `size % sections` one longer), or the pieces between the
    /// positions `indices` lists (clamped as slices; some may be empty).
    TensorSplit "tensor_split" { sections: Option<i64> = None, indices: Option<Vec<i64>> = None, #[shown] dim: i64 = 0 } (input: Tensor)
        => Rules::new(infer::split, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.hsplit`: `tensor_split` along dim 1 (0 for vectors), whose
    /// size `sections` must divide.
    Hsplit "hsplit" { sections: Option<i64> = None, indices: Option<Vec<i64>> = None } (input: Tensor)
        => Rules::new(infer::split, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.vsplit`: `tensor_split` along dim 0 of a 2-D or larger tensor.
    Vsplit "vsplit" { sections: Option<i64> = None, indices: Option<Vec<i64>> = None } (input: Tensor)
        => Rules::new(infer::split, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.dsplit`: `tensor_split` along dim 2 of a 3-D or larger tensor.
    Dsplit "dsplit" { sections: Option<i64> = None, indices: Option<Vec<i64>> = None } (input: Tensor)
        => Rules::new(infer::split, LayoutRule::Custom(layout::split_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::split);
    /// `torch.diagonal`: the `offset`-th diagonal of the plane of `dim1`
    /// and `dim2` as a last dim (a view: the two strides summed, the
    /// storage offset moved to the diagonal's first element).
    Diagonal "diagonal" { offset: i64 = 0, dim1: i64 = 0, dim2: i64 = 1 } (input: Tensor) => view();
    /// `Tensor.unfold`: the windows of `size` elements every `step` along
    /// `dimension`, each window a new last dim (a view).
    Unfold "unfold" { dimension: i64, size: i64, step: i64 } (input: Tensor) => view();
    /// `torch.as_strided`: any sizes and strides over the input's storage
    /// (from `storage_offset`, else the input's own), within it.
    AsStrided "as_strided" { size: Vec<i64>, stride: Vec<i64>, storage_offset: Option<i64> = None } (input: Tensor)
        => Rules::new(infer::as_strided, LayoutRule::Custom(layout::view_layout), Cost::View)
            .traits(VIEW);
    /// `torch.diag`: a vector on the `diagonal`-th diagonal of a square
    /// matrix of zeros, or a copy of a matrix's `diagonal`-th diagonal.
    Diag "diag" { diagonal: i64 = 0 } (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Copy)
            .expand(expand::diag);
    /// `torch.diag_embed`: the last dim on the `offset`-th diagonals of
    /// new dims `dim1` and `dim2` (of the result), zeros elsewhere.
    DiagEmbed "diag_embed" { offset: i64 = 0, dim1: i64 = -2, dim2: i64 = -1 } (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Copy)
            .expand(expand::diag);
    /// `torch.diagflat`: the flattened input on the `offset`-th diagonal of
    /// a square matrix of zeros.
    Diagflat "diagflat" { offset: i64 = 0 } (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Copy)
            .expand(expand::diag);
    /// `torch.diagonal_scatter`: a copy of `input` with `src` (converted to
    /// the input's dtype) written over `input.diagonal(offset, dim1, dim2)`.
    DiagonalScatter "diagonal_scatter" { offset: i64 = 0, dim1: i64 = 0, dim2: i64 = 1 } (input: Tensor, src: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Copy)
            .expand(expand::diag);
    /// `zeros_like`: zeros in the input's shape, laid out as `empty_like`
    /// lays out the memory format asked for (preserve: the input's strides
    /// where dense, else its dims' order), in `dtype` (the input's).
    ZerosLike "zeros_like" { dtype: Option<DType> = None, memory_format: MemoryFormat = MemoryFormat::Preserve } (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::like_layout), Cost::Creation)
            .expand(expand::like);
    /// `ones_like`: ones, as `zeros_like`.
    OnesLike "ones_like" { dtype: Option<DType> = None, memory_format: MemoryFormat = MemoryFormat::Preserve } (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::like_layout), Cost::Creation)
            .expand(expand::like);
    /// `full_like`: `fill_value` (converted to the dtype), as `zeros_like`.
    FullLike "full_like" { fill_value: Scalar, dtype: Option<DType> = None, memory_format: MemoryFormat = MemoryFormat::Preserve } (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::like_layout), Cost::Creation)
            .expand(expand::like);
    /// `empty_like`: as `zeros_like` (Kiln fills what PyTorch leaves
    /// uninitialized with zeros).
    EmptyLike "empty_like" { dtype: Option<DType> = None, memory_format: MemoryFormat = MemoryFormat::Preserve } (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::like_layout), Cost::Creation)
            .expand(expand::like);
    /// `torch.empty`: a tensor of `size` in `memory_format` (zero-filled).
    Empty "empty" { size: Vec<i64>, dtype: Option<DType> = None, device: Option<Device> = None, memory_format: MemoryFormat = MemoryFormat::Contiguous } ()
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::empty_layout), Cost::Creation)
            .traits(CREATION)
            .expand(expand::like);
    /// `torch.empty_strided`: a tensor of `size` with exactly `stride`
    /// (zero-filled; dense strides only).
    EmptyStrided "empty_strided" { size: Vec<i64>, stride: Vec<i64>, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::empty_layout), Cost::Creation)
            .traits(CREATION)
            .expand(expand::like);
    /// `torch.logspace`: `base` to the powers of `steps` evenly spaced
    /// exponents from `start` to `end`, as PyTorch's CPU kernel computes
    /// them (exponents from the start for the first half, from the end for
    /// the rest, in f64; integers from a float32 base, truncated).
    Logspace "logspace" { start: Scalar, end: Scalar, steps: i64, base: F64 = F64(10.0), dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .expand(expand::logspace);
    /// `torch.tril_indices`: the positions (rows, then columns) on and below
    /// the `offset`-th diagonal of a `row`×`col` matrix, row by row. Run by
    /// the interpreter on every backend.
    TrilIndices "tril_indices" { row: i64, col: i64, offset: i64 = 0, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(infer::tri_indices, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("tril_indices", S::of(DType::I32).union(S::of(DType::I64))));
    /// `torch.triu_indices`: the positions on and above the `offset`-th
    /// diagonal, as `tril_indices`.
    TriuIndices "triu_indices" { row: i64, col: i64, offset: i64 = 0, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(infer::tri_indices, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("triu_indices", S::of(DType::I32).union(S::of(DType::I64))));
    /// `torch.kthvalue`: the `k`-th smallest value along `dim` (NaN the
    /// largest) and its position (among equal values, the first in a
    /// stable sort: PyTorch leaves the choice unspecified). Interpreted.
    Kthvalue "kthvalue" { k: i64, #[shown] dim: i64 = -1, keepdim: bool = false } (input: Tensor)
        => Rules::new(infer::select_dim, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(KernelRule::Custom(support::select_kernel));
    /// `torch.median`: the lower median along `dim` and its position, or of
    /// every element (one result); a NaN is the median where there is one
    /// (the first NaN along `dim`). Interpreted.
    Median "median" { dim: Option<i64> = None, keepdim: bool = false } (input: Tensor)
        => Rules::new(infer::select_dim, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Variable)
            .kernel(KernelRule::Custom(support::median_kernel));
    /// `torch.nanmedian`: `median` of the values that are not NaN (NaN
    /// where all are). Interpreted.
    Nanmedian "nanmedian" { dim: Option<i64> = None, keepdim: bool = false } (input: Tensor)
        => Rules::new(infer::select_dim, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Variable)
            .kernel(KernelRule::Custom(support::median_kernel));
    /// `torch.broadcast_tensors`: each tensor expanded to their common
    /// shape, a view of its own operand (an `expand` each).
    BroadcastTensors "broadcast_tensors" (tensors: List)
        => Rules::new(infer::view_list, LayoutRule::Custom(layout::view_list_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::view_list);
    /// `torch.meshgrid`: each 0-D or 1-D tensor laid along its own dim of
    /// the grid of all their sizes ("xy": the first two dims swapped), a
    /// view of its own operand (a `view` and an `expand` each).
    Meshgrid "meshgrid" { indexing: String = String::from("ij") } (tensors: List)
        => Rules::new(infer::view_list, LayoutRule::Custom(layout::view_list_layout), Cost::View)
            .traits(VIEW)
            .results(Results::Variable)
            .expand(expand::view_list);
    /// `torch.mode`: the most frequent value along `dim` (the smallest of
    /// equally frequent ones; NaNs never equal) and its last position.
    /// Interpreted.
    Mode "mode" { #[shown] dim: i64 = -1, keepdim: bool = false } (input: Tensor)
        => Rules::new(infer::select_dim, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(KernelRule::Custom(support::select_kernel));
    /// `torch.index_select`: the entries at `index` (int32 or int64)
    /// along `dim`; an index out of range is PyTorch's IndexError.
    IndexSelect "index_select" { dim: i64 } (input: Tensor, index: Tensor)
        => Rules::new(infer::index_select, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("index_select", S::ALL));
    /// `torch.gather`: `out[i][j] = input[index[i][j]][j]` along `dim`; the
    /// index's shape. Run by the interpreter on every backend; an index out
    /// of range is PyTorch's run-time error.
    Gather "gather" { dim: i64, sparse_grad: bool = false } (input: Tensor, index: Tensor)
        => Rules::new(infer::gather, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("gather", S::ALL));
    /// `torch.scatter`: a copy of `input` with `src` (a tensor, or a value)
    /// written at `index` along `dim` (the last write wins).
    Scatter "scatter" { dim: i64 } (input: Tensor, index: Tensor, src: Any)
        => Rules::new(infer::scatter, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Kernel)
            .kernel(fixed("scatter", S::ALL));
    /// `torch.scatter_add`: `src` added into a copy of `input` at `index`.
    ScatterAdd "scatter_add" { dim: i64 } (input: Tensor, index: Tensor, src: Tensor)
        => Rules::new(infer::scatter, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Kernel)
            .kernel(fixed("scatter_add", S::ALL));
    /// `torch.scatter_reduce`: `src` combined into a copy of `input` at
    /// `index` by `reduce`, with or without the input's own value.
    ScatterReduce "scatter_reduce" { dim: i64, reduce: ScatterReduce, include_self: bool = true } (input: Tensor, index: Tensor, src: Tensor)
        => Rules::new(infer::scatter, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Kernel)
            .kernel(fixed("scatter_reduce", S::ALL));
    /// `torch.index_add`: `alpha·source` slices added into a copy of
    /// `input` at the positions `index` lists along `dim`.
    IndexAdd "index_add" { dim: i64, alpha: Scalar = Scalar::Int(1) } (input: Tensor, index: Tensor, source: Tensor)
        => Rules::new(infer::index_add, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Kernel)
            .kernel(fixed("index_add_cpu_", S::ALL));
    /// `torch.take`: elements of the flattened input (negative indices
    /// count from the end), in the index's shape.
    Take "take" (input: Tensor, index: Tensor)
        => Rules::new(infer::take, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("take", S::ALL));
    /// `torch.index_copy`: a copy of `input` (contiguous, as PyTorch's
    /// out-of-place form) with the slices of `source` written at the
    /// positions `index` lists along `dim` (the last write wins).
    IndexCopy "index_copy" { dim: i64 } (input: Tensor, index: Tensor, source: Tensor)
        => Rules::new(infer::index_copy, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("index_copy_cpu", INDEX_WRITES));
    /// `torch.index_fill`: a copy of `input` with the slices at the
    /// positions `index` lists along `dim` set to `value` (a number or a
    /// 0-D tensor, converted to the input's dtype).
    IndexFill "index_fill" { dim: i64 } (input: Tensor, index: Tensor, value: Any)
        => Rules::new(infer::index_fill, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Kernel)
            .kernel(fixed("index_fill_cpu", INDEX_WRITES));
    /// `torch.take_along_dim`: `gather` along `dim` after broadcasting the
    /// input and the indices against each other away from `dim` (with no
    /// `dim`, of the flattened input).
    TakeAlongDim "take_along_dim" { dim: Option<i64> = None } (input: Tensor, indices: Tensor)
        => Rules::new(infer::take_along_dim, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed(
                "gather_expanded_index",
                S::ALL.without(S::FLOAT8).without(S::FLOAT4).without(S::COMPLEX_HALF),
            ))
            .expand(expand::take_along_dim);
    /// `torch.searchsorted`: for each value of `input` (a tensor or a
    /// number), its insertion position in the last dim of `sorted_sequence`
    /// (1-D, or with `input`'s leading dims), read in `sorter`'s order when
    /// given; a binary search in the common dtype, as PyTorch's kernel (so
    /// NaN and unsorted sequences give its positions). `right` (or `side =
    /// "right"`) goes after equal entries; int64 positions, or int32.
    Searchsorted "searchsorted" { out_int32: bool = false, right: bool = false, side: Option<SearchSide> = None }
        (sorted_sequence: Tensor, input: Any, sorter: Optional)
        => Rules::new(infer::searchsorted, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("searchsorted_out_cpu", S::REAL_NUMBERS));
    /// `torch.bucketize`: `searchsorted` of `input` in the 1-D `boundaries`.
    Bucketize "bucketize" { out_int32: bool = false, right: bool = false } (input: Any, boundaries: Tensor)
        => Rules::new(infer::searchsorted, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("searchsorted_out_cpu", S::REAL_NUMBERS))
            .expand(expand::bucketize);
    /// `torch.masked_scatter`: a copy of `input` broadcast with `mask`
    /// (contiguous, as PyTorch's out-of-place form), the elements of
    /// `source` (any shape, same dtype) written in order where `mask` is
    /// true; too few source elements is PyTorch's run-time error.
    MaskedScatter "masked_scatter" (input: Tensor, mask: Tensor, source: Tensor)
        => Rules::new(infer::masked_scatter, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed(
                "masked_scatter",
                S::ALL.without(S::COMPLEX_HALF).without(S::BARE_UINTS).without(S::FLOAT8).without(S::FLOAT4),
            ));
    /// `torch.nn.functional.prelu` (ATen's `prelu`, `_prelu_kernel`):
    /// `x > 0 ? x : weight · x`, with one weight or one per channel (dim
    /// 1); laid out as TensorIterator lays out the input with the weight
    /// viewed as `[1, C, 1, ...]`.
    Prelu "prelu" (input: Tensor, weight: Tensor)
        => Rules::new(infer::prelu, LayoutRule::Custom(layout::prelu_layout), Cost::Cheap)
            .kernel(fixed("prelu_cpu", S::FLOATS))
            .expand(expand::prelu);
    /// `torch.nn.functional.max_unpool1d` as PyTorch computes it:
    /// `max_unpool2d` of the input and indices with a trailing dim of one
    /// (`output_size` is the output length; ATen has no max_unpool1d).
    MaxUnpool1d "max_unpool1d" { output_size: Vec<i64> } (input: Tensor, indices: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Kernel)
            .expand(expand::max_unpool1d);
    /// `torch.nn.functional.gaussian_nll_loss` (a Python function in
    /// PyTorch: Kiln names it after it): `0.5·(log(max(var, eps)) + (input
    /// - target)² / max(var, eps))`, plus `0.5·log(2π)` with `full`; `var`
    /// a tensor (of the input's shape, one dim short, or with one dim of
    /// one) or a non-negative number. PyTorch's data-dependent check that
    /// no `var` entry is negative is not made (such entries are clamped).
    GaussianNllLoss "gaussian_nll_loss" { full: bool = false, eps: F64 = F64(1e-6), reduction: LossReduction = LossReduction::Mean }
        (input: Tensor, target: Tensor, var: Any)
        => reduction(infer::by_expansion, Cost::Reduction)
            .traits(Traits::APPROXIMATE)
            .expand(expand::more_losses);
    /// `torch.nn.functional.cosine_embedding_loss` (ATen's
    /// `cosine_embedding_loss`): `1 - cos(x1, x2)` where the target is 1,
    /// `max(0, cos - margin)` where it is -1, zero elsewhere; the cosine
    /// along the last dim of 2-D (1-D with a 0-D target) inputs.
    CosineEmbeddingLoss "cosine_embedding_loss" { margin: F64 = F64(0.0), reduction: LossReduction = LossReduction::Mean }
        (input1: Tensor, input2: Tensor, target: Tensor)
        => reduction(infer::by_expansion, Cost::Reduction)
            .traits(Traits::APPROXIMATE)
            .expand(expand::more_losses);
    /// `torch.nn.functional.multilabel_soft_margin_loss` (a Python function
    /// in PyTorch: Kiln names it after it): `-(t·logsigmoid(x) + (1 -
    /// t)·logsigmoid(-x))`, times `weight`, averaged over the last dim.
    MultilabelSoftMarginLoss "multilabel_soft_margin_loss" { reduction: LossReduction = LossReduction::Mean }
        (input: Tensor, target: Tensor, weight: Optional)
        => reduction(infer::by_expansion, Cost::Reduction)
            .traits(Traits::APPROXIMATE)
            .expand(expand::more_losses);
    /// `torch.nn.functional.triplet_margin_loss` (ATen's
    /// `triplet_margin_loss`, with the functional's check that `margin` is
    /// positive): `max(0, margin + d(a, p) - d(a, n))` with pairwise
    /// `p`-norm distances, `d(a, n)` the smaller of it and `d(p, n)` with
    /// `swap`.
    TripletMarginLoss "triplet_margin_loss" {
        margin: F64 = F64(1.0),
        p: F64 = F64(2.0),
        eps: F64 = F64(1e-6),
        swap: bool = false,
        reduction: LossReduction = LossReduction::Mean,
    } (anchor: Tensor, positive: Tensor, negative: Tensor)
        => reduction(infer::by_expansion, Cost::Reduction)
            .traits(Traits::APPROXIMATE)
            .expand(expand::more_losses);
    /// `torch.nn.functional.local_response_norm` as it computes it: each
    /// value divided by `(k + alpha·mean of the squares of the `size`
    /// neighbouring channels)^beta` (an `avg_pool` over zero-padded
    /// channels).
    LocalResponseNorm "local_response_norm" { size: i64, alpha: F64 = F64(1e-4), beta: F64 = F64(0.75), k: F64 = F64(1.0) }
        (input: Tensor)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Rows)
            .traits(Traits::APPROXIMATE)
            .expand(expand::local_response_norm);
    /// ATen's `native_layer_norm`: `layer_norm`'s result, and the mean and
    /// `1/sqrt(var + eps)` of each normalized slice (`[*, 1, ...]`, in the
    /// input's dtype, or f32 with f32 parameters of a reduced-precision
    /// input), all contiguous.
    NativeLayerNorm "native_layer_norm" { normalized_shape: Vec<i64>, eps: F64 }
        (input: Tensor, weight: Optional, bias: Optional)
        => Rules::new(infer::native_norms, LayoutRule::Contiguous, Cost::Rows)
            .results(Results::Fixed(3))
            .kernel(fixed("LayerNormKernelImpl", S::FLOATS))
            .expand(expand::native_norms);
    /// ATen's `native_batch_norm`: `batch_norm`'s result (in the input's
    /// suggested memory format), and in training the batch's mean and
    /// `1/sqrt(var + eps)` per channel (`save_mean`, `save_invstd`), empty
    /// in evaluation, as PyTorch's CPU kernel returns them; the running
    /// statistics are not updated (a side effect).
    NativeBatchNorm "native_batch_norm" { training: bool, momentum: F64, eps: F64 }
        (input: Tensor, weight: Optional, bias: Optional, running_mean: Optional, running_var: Optional)
        => Rules::new(infer::native_norms, LayoutRule::Custom(layout::native_norm_layout), Cost::Rows)
            .results(Results::Fixed(3))
            .kernel(fixed("batch_norm", S::FLOATS))
            .expand(expand::native_norms);
    /// ATen's `embedding_bag` (`_embedding_bag`, `_embedding_bag_forward_only`):
    /// the sum (times `per_sample_weights`), mean or max (`mode` 0, 1, 2) of
    /// the weight's rows `indices` lists, bag by bag between `offsets`
    /// (the last one the end with `include_last_offset`), rows equal to
    /// `padding_idx` (non-negative) left out; and ATen's bookkeeping
    /// results `offset2bag`, `bag_size`, `max_indices` with the shapes and
    /// values its CPU kernel gives. Bad offsets and indices are PyTorch's
    /// run-time errors.
    EmbeddingBag "embedding_bag" {
        scale_grad_by_freq: bool = false,
        #[shown] mode: i64 = 0,
        sparse: bool = false,
        include_last_offset: bool = false,
        padding_idx: Option<i64> = None,
    } (weight: Tensor, indices: Tensor, offsets: Tensor, per_sample_weights: Optional)
        => Rules::new(infer::embedding_bag, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Fixed(4));
    /// ATen's `native_group_norm`: `group_norm`'s result (in the input's
    /// suggested memory format) and each sample's groups' mean and
    /// `1/sqrt(var + eps)` (`[N, group]`); `N`, `C`, `HxW` must describe
    /// the input.
    NativeGroupNorm "native_group_norm" { n: i64, c: i64, hxw: i64, group: i64, eps: F64 }
        (input: Tensor, weight: Optional, bias: Optional)
        => Rules::new(infer::native_norms, LayoutRule::Custom(layout::native_norm_layout), Cost::Rows)
            .results(Results::Fixed(3))
            .kernel(fixed("GroupNormKernelImpl", S::FLOATS))
            .expand(expand::native_norms);
    /// `F.pad(mode="reflect")` of the last dim (`reflection_pad1d`): new positions
    /// mirrored about the ends (not repeating them), negative padding cropping (`ops::padding`).
    ReflectionPad1d "reflection_pad1d" { padding: Vec<i64> } (input: Tensor)
        => Rules::new(infer::pad, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("reflection_pad1d", PADS))
            .expand(expand::pad);
    /// `F.pad(mode="reflect")` of the last two dims (`reflection_pad2d`): new positions
    /// mirrored about the ends (not repeating them), negative padding cropping (`ops::padding`).
    ReflectionPad2d "reflection_pad2d" { padding: Vec<i64> } (input: Tensor)
        => Rules::new(infer::pad, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("reflection_pad2d", PADS))
            .expand(expand::pad);
    /// `F.pad(mode="reflect")` of the last three dims (`reflection_pad3d`): new positions
    /// mirrored about the ends (not repeating them), negative padding cropping (`ops::padding`).
    ReflectionPad3d "reflection_pad3d" { padding: Vec<i64> } (input: Tensor)
        => Rules::new(infer::pad, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("reflection_pad3d", PADS))
            .expand(expand::pad);
    /// `F.pad(mode="replicate")` of the last dim (`replication_pad1d`): new positions
    /// the end positions repeated, negative padding cropping (`ops::padding`).
    ReplicationPad1d "replication_pad1d" { padding: Vec<i64> } (input: Tensor)
        => Rules::new(infer::pad, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("replication_pad1d", PADS))
            .expand(expand::pad);
    /// `F.pad(mode="replicate")` of the last two dims (`replication_pad2d`): new positions
    /// the end positions repeated, negative padding cropping (`ops::padding`).
    ReplicationPad2d "replication_pad2d" { padding: Vec<i64> } (input: Tensor)
        => Rules::new(infer::pad, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("replication_pad2d", PADS))
            .expand(expand::pad);
    /// `F.pad(mode="replicate")` of the last three dims (`replication_pad3d`): new positions
    /// the end positions repeated, negative padding cropping (`ops::padding`).
    ReplicationPad3d "replication_pad3d" { padding: Vec<i64> } (input: Tensor)
        => Rules::new(infer::pad, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("replication_pad3d", PADS))
            .expand(expand::pad);
    /// `torch.slice_scatter`: a copy of `input` with `src` (converted to
    /// the input's dtype) written over `input[start:end:step]` along `dim`.
    SliceScatter "slice_scatter" { #[shown] dim: i64 = 0, start: Option<i64> = None, end: Option<i64> = None, #[shown] step: i64 = 1 }
        (input: Tensor, src: Tensor)
        => Rules::new(infer::slice_scatter, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Copy)
            .expand(expand::slice_scatter);
    /// `torch.select_scatter`: a copy of `input` with `src` written over
    /// `input.select(dim, index)`.
    SelectScatter "select_scatter" { dim: i64, index: i64 } (input: Tensor, src: Tensor)
        => Rules::new(infer::slice_scatter, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Copy)
            .expand(expand::slice_scatter);
    /// `F.pixel_shuffle`: `[*, C·r², H, W]` to `[*, C, H·r, W·r]`, each
    /// channel group of r² spread over an r×r block (the input's suggested
    /// memory format).
    PixelShuffle "pixel_shuffle" { upscale_factor: i64 } (input: Tensor)
        => Rules::new(infer::pixel_shuffle, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("pixel_shuffle", SHUFFLES))
            .expand(expand::pixel_shuffle);
    /// `F.pixel_unshuffle`: the inverse of `pixel_shuffle`.
    PixelUnshuffle "pixel_unshuffle" { downscale_factor: i64 } (input: Tensor)
        => Rules::new(infer::pixel_shuffle, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("pixel_unshuffle", SHUFFLES))
            .expand(expand::pixel_shuffle);
    /// `F.channel_shuffle`: the channels (dim 1) of `groups` groups
    /// interleaved (ShuffleNet).
    ChannelShuffle "channel_shuffle" { groups: i64 } (input: Tensor)
        => Rules::new(infer::pixel_shuffle, LayoutRule::Custom(layout::suggested_format_layout), Cost::Copy)
            .kernel(fixed("channel_shuffle", SHUFFLES))
            .expand(expand::pixel_shuffle);
    /// `torch.hstack`: `cat` of the `atleast_1d` tensors along dim 0 when
    /// they are 1-D, else dim 1.
    Hstack "hstack" (tensors: List)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::cat_layout), Cost::Copy)
            .expand(expand::stacks);
    /// `torch.vstack` (`row_stack`): `cat` of the `atleast_2d` tensors
    /// along dim 0.
    Vstack "vstack" (tensors: List)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::cat_layout), Cost::Copy)
            .expand(expand::stacks);
    /// `torch.dstack`: `cat` of the `atleast_3d` tensors along dim 2.
    Dstack "dstack" (tensors: List)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::cat_layout), Cost::Copy)
            .expand(expand::stacks);
    /// `torch.column_stack`: `cat` along dim 1 of the tensors, 0-D and 1-D
    /// ones as columns (`[n, 1]`).
    ColumnStack "column_stack" (tensors: List)
        => Rules::new(infer::by_expansion, LayoutRule::Custom(layout::cat_layout), Cost::Copy)
            .expand(expand::stacks);
    /// `x[i, :, j]` with tensors (ATen's `index.Tensor`): the entries at
    /// the positions the index tensors hold (broadcast together; `none`
    /// keeps a dim whole), in PyTorch's result shape and strides
    /// (`kiln_ir::advanced_index`). Run by the interpreter on every
    /// backend; a position out of range is PyTorch's IndexError.
    Index "index" (input: Tensor, indices: OptionalList)
        => Rules::new(infer::index, LayoutRule::Custom(layout::index_layout), Cost::Kernel)
            .kernel(fixed("index_cpu", S::ALL.without(S::FLOAT4)));
    /// `torch.index_put` (`x[i, :, j] = values`): a copy of `input` with
    /// `values`, broadcast to the indexed shape, written at the positions
    /// (the last write wins), or added to what is there with `accumulate`.
    IndexPut "index_put" { accumulate: bool = false } (input: Tensor, indices: OptionalList, values: Tensor)
        => Rules::new(infer::index_put, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Kernel)
            .kernel(fixed(
                "index_put",
                S::ALL
                    .without(S::BARE_UINTS)
                    .without(S::FLOAT4)
                    .without(S::of(DType::F8E8M0FNU)),
            ));
    /// `torch.nn.functional.embedding`: the rows of `weight` at `indices`
    /// (`padding_idx`, `scale_grad_by_freq` and `sparse` only change the
    /// gradient).
    Embedding "embedding" { padding_idx: i64 = -1, scale_grad_by_freq: bool = false, sparse: bool = false }
        (weight: Tensor, indices: Tensor)
        => Rules::new(infer::embedding, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("index_select", S::ALL));
    /// `F.scaled_dot_product_attention`, as PyTorch's math reference
    /// computes it: `softmax(q @ kᵀ · scale + mask) @ v`, the causal mask
    /// lower-triangular, grouped-query heads repeated with `enable_gqa`.
    /// Inference only: a `dropout_p` other than 0 is refused.
    ScaledDotProductAttention "scaled_dot_product_attention" {
        dropout_p: F64 = F64(0.0),
        is_causal: bool = false,
        scale: Option<F64> = None,
        enable_gqa: bool = false,
    } (query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional)
        => Rules::new(infer::scaled_dot_product_attention, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("_scaled_dot_product_flash_attention_for_cpu", S::FLOATS))
            .expand(expand::scaled_dot_product_attention);
    /// `F.multi_head_attention_forward` (`nn.MultiheadAttention`'s
    /// computation, sequence-first) in inference, as PyTorch's function
    /// computes it (`kiln_ir::ops::mha`): the output `[L, N, E]` and, with
    /// `need_weights`, the attention weights (`[N, L, S]` averaged over the
    /// heads, or `[N, H, L, S]`); unbatched `[L, E]` queries drop `N`.
    /// Without `need_weights` the attention is one
    /// `scaled_dot_product_attention`. Dropout in training is refused.
    MultiHeadAttentionForward "multi_head_attention_forward" {
        embed_dim_to_check: i64,
        num_heads: i64,
        add_zero_attn: bool = false,
        dropout_p: F64 = F64(0.0),
        training: bool = true,
        need_weights: bool = true,
        use_separate_proj_weight: bool = false,
        average_attn_weights: bool = true,
        is_causal: bool = false,
    } (
        query: Tensor, key: Tensor, value: Tensor, in_proj_weight: Optional, in_proj_bias: Optional,
        bias_k: Optional, bias_v: Optional, out_proj_weight: Tensor, out_proj_bias: Optional,
        key_padding_mask: Optional, attn_mask: Optional, q_proj_weight: Optional,
        k_proj_weight: Optional, v_proj_weight: Optional, static_k: Optional, static_v: Optional
    )
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Kernel)
            .results(Results::Variable)
            .expand(mha::multi_head_attention_forward);
    /// `torch.nn.functional.linear`: `input @ weightᵀ + bias`.
    Linear "linear" (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(infer::linear, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmm_impl_cpu_", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::linear);
    /// `torch.einsum`: the operands' products summed over the subscripts
    /// the output drops (`kiln_ir::einsum` reads the equation), contracted
    /// left to right as PyTorch does without opt_einsum: `sum`s, `mul`s and
    /// batched `matmul`s. `path` (opt_einsum's order) is accepted and only
    /// changes the order of the products.
    Einsum "einsum" { equation: String, path: Option<Vec<i64>> = None } (tensors: List)
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Kernel)
            .expand(expand::einsum);
    /// `torch.mm`: the product of two matrices.
    Mm "mm" (input: Tensor, mat2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmm_impl_cpu_", S::FLOATS_COMPLEX.union(S::FLOAT8_SIGNED).union(S::INTS)))
            .expand(expand::products);
    /// `torch.bmm`: a batch of matrix products (`[b, n, m] @ [b, m, p]`).
    Bmm "bmm" (input: Tensor, mat2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("bmm", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.mv`: a matrix times a vector.
    Mv "mv" (input: Tensor, vec: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmv_impl_cpu", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.dot`: the inner product of two vectors (no conjugation).
    Dot "dot" (input: Tensor, tensor: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("dot", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.outer`: `input[:, None] * vec2` (type promotion, as `mul`).
    Outer "outer" (input: Tensor, vec2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Cheap)
            .expand(expand::products);
    /// `torch.inner`: sums of products over the last dims (`mul` for a
    /// 0-D operand).
    Inner "inner" (input: Tensor, other: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .expand(expand::products);
    /// `torch.addmm`: `beta·input + alpha·(mat1 @ mat2)` (`input` ignored,
    /// NaN included, where `beta` is 0).
    Addmm "addmm" { beta: Scalar = Scalar::Int(1), alpha: Scalar = Scalar::Int(1) }
        (input: Tensor, mat1: Tensor, mat2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmm_impl_cpu_", S::FLOATS_COMPLEX.union(S::FLOAT8_SIGNED).union(S::INTS)))
            .expand(expand::products);
    /// `torch.addmv`: `beta·input + alpha·(mat @ vec)`.
    Addmv "addmv" { beta: Scalar = Scalar::Int(1), alpha: Scalar = Scalar::Int(1) }
        (input: Tensor, mat: Tensor, vec: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmv_impl_cpu", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.addr`: `beta·input + alpha·outer(vec1, vec2)` (type
    /// promotion; bool as logical and/or).
    Addr "addr" { beta: Scalar = Scalar::Int(1), alpha: Scalar = Scalar::Int(1) }
        (input: Tensor, vec1: Tensor, vec2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addr_cpu", S::FLOATS_COMPLEX.union(S::INTS).union(S::BOOL)))
            .expand(expand::products);
    /// `torch.baddbmm`: `beta·input + alpha·bmm(batch1, batch2)`.
    Baddbmm "baddbmm" { beta: Scalar = Scalar::Int(1), alpha: Scalar = Scalar::Int(1) }
        (input: Tensor, batch1: Tensor, batch2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("bmm", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.addbmm`: `beta·input + alpha·Σ_b batch1[b] @ batch2[b]`.
    Addbmm "addbmm" { beta: Scalar = Scalar::Int(1), alpha: Scalar = Scalar::Int(1) }
        (input: Tensor, batch1: Tensor, batch2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmm_impl_cpu_", S::FLOATS_COMPLEX.union(S::FLOAT8_SIGNED).union(S::INTS)))
            .expand(expand::products);
    /// `torch.trace`: the sum of a matrix's diagonal (integers sum in
    /// int64).
    Trace "trace" (input: Tensor)
        => reduction(infer::products, Cost::Reduction)
            .kernel(fixed("trace", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.linalg.vecdot`: `sum(conj(x) · y, dim)` after broadcasting.
    LinalgVecdot "linalg_vecdot" { dim: i64 = -1 } (x: Tensor, y: Tensor)
        => reduction(infer::products, Cost::Reduction)
            .expand(expand::products);
    /// `torch.kron`: the Kronecker product (type promotion, as `mul`).
    Kron "kron" (input: Tensor, other: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Cheap)
            .expand(expand::products);
    /// `torch.tensordot`: the sums of products over `dims_self` of `input`
    /// and `dims_other` of `other`, as PyTorch computes it: size-1
    /// contracted dims summed first, then both operands permuted and
    /// reshaped to matrices for one `mm`.
    Tensordot "tensordot" { dims_self: Vec<i64>, dims_other: Vec<i64> } (input: Tensor, other: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmm_impl_cpu_", S::FLOATS_COMPLEX.union(S::FLOAT8_SIGNED).union(S::INTS)))
            .expand(expand::products);
    /// `torch.vdot`: `dot` with the first vector conjugated.
    Vdot "vdot" (input: Tensor, other: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("dot", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.nn.functional.bilinear`: `y[..., o] = Σ_ij x1[..., i]·
    /// weight[o, i, j]·x2[..., j] + bias[o]`, as ATen's `_trilinear`
    /// contracts it (`x1` with `weight` first, then with `x2`).
    Bilinear "bilinear" (input1: Tensor, input2: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("bmm", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.linalg.multi_dot`: the chain of matrix products in the order
    /// PyTorch picks (the cheapest parenthesization), a 1-D first operand
    /// a row and a 1-D last operand a column, dropped from the result.
    LinalgMultiDot "linalg_multi_dot" (tensors: List)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("addmm_impl_cpu_", S::FLOATS_COMPLEX.union(S::FLOAT8_SIGNED).union(S::INTS)))
            .expand(expand::products);
    /// `torch.linalg.cross`: the cross product of 3-vectors along `dim`,
    /// broadcasting the other dims (`a1·b2 - a2·b1`, ... in the dtype).
    LinalgCross "linalg_cross" { dim: i64 = -1 } (input: Tensor, other: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Cheap)
            .kernel(fixed("cross", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.cross`: `linalg_cross` along `dim`, by default the first dim
    /// of `input` of size 3.
    Cross "cross" { dim: Option<i64> = None } (input: Tensor, other: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Cheap)
            .kernel(fixed("cross", S::FLOATS_COMPLEX.union(S::INTS)))
            .expand(expand::products);
    /// `torch.cdist` (ATen's `_cdist_forward`): the `p`-norm distances
    /// between the rows of `x1` and of `x2`, batch dims broadcast, computed
    /// directly for every `p` (PyTorch uses a matrix product for `p = 2`
    /// with more than 25 rows; `compute_mode` is checked, not followed).
    Cdist "cdist" { p: F64 = F64(2.0), compute_mode: Option<i64> = None } (x1: Tensor, x2: Tensor)
        => Rules::new(infer::products, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("cdist", S::of(DType::F32).union(S::of(DType::F64))))
            .traits(Traits::APPROXIMATE)
            .expand(expand::products);
    /// `torch.nn.functional.rms_norm`: `x · rsqrt(mean(x²) + eps) · weight`
    /// over the normalized dims, in opmath; `eps` defaults to the opmath
    /// dtype's machine epsilon.
    RmsNorm "rms_norm" { normalized_shape: Vec<i64>, eps: Option<F64> = None }
        (input: Tensor, weight: Optional)
        => reduction(infer::norms, Cost::Rows)
            .kernel(fixed("rms_norm", S::FLOATS))
            .expand(expand::norms);
    /// `torch.nn.functional.group_norm`: each sample's channels in
    /// `num_groups` groups, each normalized by its mean and (biased)
    /// variance, then a per-channel weight and bias.
    GroupNorm "group_norm" { num_groups: i64, #[shown] eps: F64 = F64(1e-5), cudnn_enabled: bool = true }
        (input: Tensor, weight: Optional, bias: Optional)
        => reduction(infer::norms, Cost::Rows)
            .kernel(fixed("GroupNormKernelImpl", S::FLOATS))
            .expand(expand::norms);
    /// `torch.nn.functional.batch_norm`: `(x - mean) / sqrt(var + eps) ·
    /// weight + bias` per channel (dim 1), with the running statistics
    /// (`training = false`) or the batch's own (`training = true`; the
    /// running statistics' update is a side effect Kiln does not make).
    BatchNorm "batch_norm" { training: bool = false, momentum: F64 = F64(0.1), #[shown] eps: F64 = F64(1e-5), cudnn_enabled: bool = true }
        (input: Tensor, weight: Optional, bias: Optional, running_mean: Optional, running_var: Optional)
        => reduction(infer::norms, Cost::Rows)
            .kernel(fixed("batch_norm", S::FLOATS))
            .expand(expand::norms);
    /// `torch.nn.functional.instance_norm`: batch_norm per sample and
    /// channel, with each instance's statistics (`use_input_stats`) or the
    /// running ones.
    InstanceNorm "instance_norm" { use_input_stats: bool = true, momentum: F64 = F64(0.1), #[shown] eps: F64 = F64(1e-5), cudnn_enabled: bool = true }
        (input: Tensor, weight: Optional, bias: Optional, running_mean: Optional, running_var: Optional)
        => reduction(infer::norms, Cost::Rows)
            .kernel(fixed("batch_norm", S::FLOATS))
            .expand(expand::norms);
    /// `torch.nn.functional.normalize`: `x / max(‖x‖_p, eps)` along `dim`.
    Normalize "normalize" { p: F64 = F64(2.0), dim: i64 = 1, eps: F64 = F64(1e-12) } (input: Tensor)
        => reduction(infer::norms, Cost::Rows)
            .expand(expand::norms);
    /// `torch.nn.functional.mse_loss`: `(input - target)²`, reduced.
    MseLoss "mse_loss" { reduction: LossReduction = LossReduction::Mean } (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("mse_cpu", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.l1_loss`: `|input - target|`, reduced.
    L1Loss "l1_loss" { reduction: LossReduction = LossReduction::Mean } (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("l1_loss", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.smooth_l1_loss`: `0.5·z²/beta` where
    /// `z = |input - target| < beta`, else `z - 0.5·beta`.
    SmoothL1Loss "smooth_l1_loss" { reduction: LossReduction = LossReduction::Mean, beta: F64 = F64(1.0) }
        (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("smooth_l1_loss", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.huber_loss`: `0.5·z²` where
    /// `z = |input - target| < delta`, else `delta·(z - 0.5·delta)`.
    HuberLoss "huber_loss" { reduction: LossReduction = LossReduction::Mean, delta: F64 = F64(1.0) }
        (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("huber_loss", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.binary_cross_entropy`: `-(t·log(x) + (1-t)·log(1-x))`,
    /// each log clamped to at least -100, times `weight`.
    BinaryCrossEntropy "binary_cross_entropy" { reduction: LossReduction = LossReduction::Mean }
        (input: Tensor, target: Tensor, weight: Optional)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("binary_cross_entropy", S::FLOATS))
            .traits(Traits::APPROXIMATE)
            .expand(expand::losses);
    /// `torch.nn.functional.binary_cross_entropy_with_logits`:
    /// `(1 - t)·x - logsigmoid(x)·((pos_weight - 1)·t + 1)`, times `weight`.
    BinaryCrossEntropyWithLogits "binary_cross_entropy_with_logits" { reduction: LossReduction = LossReduction::Mean }
        (input: Tensor, target: Tensor, weight: Optional, pos_weight: Optional)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("binary_cross_entropy_with_logits", S::FLOATS))
            .traits(Traits::APPROXIMATE)
            .expand(expand::losses);
    /// `torch.nn.functional.kl_div`: `xlogy(t, t) - t·input`, or
    /// `exp(t)·(t - input)` with `log_target`; `batchmean` divides the sum
    /// by the batch size.
    KlDiv "kl_div" { reduction: LossReduction = LossReduction::Mean, log_target: bool = false }
        (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("kl_div", S::FLOATS))
            .traits(Traits::APPROXIMATE)
            .expand(expand::losses);
    /// `torch.nn.functional.soft_margin_loss`: `log1p(exp(-input·target))`.
    SoftMarginLoss "soft_margin_loss" { reduction: LossReduction = LossReduction::Mean }
        (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("soft_margin_loss", S::FLOATS))
            .traits(Traits::APPROXIMATE)
            .expand(expand::losses);
    /// `torch.nn.functional.margin_ranking_loss`:
    /// `max(0, -target·(input1 - input2) + margin)`.
    MarginRankingLoss "margin_ranking_loss" { margin: F64 = F64(0.0), reduction: LossReduction = LossReduction::Mean }
        (input1: Tensor, input2: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("margin_ranking_loss", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.hinge_embedding_loss`: `x` where the target is
    /// not -1, plus `max(0, margin - x)` where it is not 1.
    HingeEmbeddingLoss "hinge_embedding_loss" { margin: F64 = F64(1.0), reduction: LossReduction = LossReduction::Mean }
        (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("hinge_embedding_loss", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.poisson_nll_loss`: `exp(x) - t·x` (or
    /// `x - t·log(x + eps)`), plus Stirling's term with `full`.
    PoissonNllLoss "poisson_nll_loss" { log_input: bool = true, full: bool = false, eps: F64 = F64(1e-8), reduction: LossReduction = LossReduction::Mean }
        (input: Tensor, target: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("poisson_nll_loss", S::FLOATS))
            .traits(Traits::APPROXIMATE)
            .expand(expand::losses);
    /// `torch.nn.functional.cosine_similarity`: `Σ (x1/‖x1‖)·(x2/‖x2‖)`
    /// along `dim`, each norm at least `eps`.
    CosineSimilarity "cosine_similarity" { dim: i64 = 1, eps: F64 = F64(1e-8) } (x1: Tensor, x2: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("cosine_similarity", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.pairwise_distance`: `‖x1 - x2 + eps‖_p` along
    /// the last dim.
    PairwiseDistance "pairwise_distance" { p: F64 = F64(2.0), eps: F64 = F64(1e-6), keepdim: bool = false }
        (x1: Tensor, x2: Tensor)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("pairwise_distance", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.nll_loss` with class-index targets: `-input`
    /// at each target's class (a one-hot comparison with the classes and
    /// a sum: exact), times its weight; `ignore_index` targets count for
    /// nothing (out-of-range targets, which PyTorch refuses when it runs,
    /// pick no class).
    NllLoss "nll_loss" { reduction: LossReduction = LossReduction::Mean, ignore_index: i64 = -100 }
        (input: Tensor, target: Tensor, weight: Optional)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("nll_loss", S::FLOATS))
            .expand(expand::losses);
    /// `torch.nn.functional.cross_entropy`: `nll_loss(log_softmax(input))`
    /// for class-index targets (with label smoothing), or
    /// `-Σ target·log_softmax(input)` for class probabilities.
    CrossEntropy "cross_entropy" {
        reduction: LossReduction = LossReduction::Mean,
        ignore_index: i64 = -100,
        label_smoothing: F64 = F64(0.0),
    } (input: Tensor, target: Tensor, weight: Optional)
        => reduction(infer::losses, Cost::Reduction)
            .kernel(fixed("cross_entropy", S::FLOATS))
            .traits(Traits::APPROXIMATE)
            .expand(expand::losses);
    /// `torch.masked_fill`: `value` where `mask` (bool, broadcast) is true,
    /// in the input's dtype.
    MaskedFill "masked_fill" { value: Scalar } (input: Tensor, mask: Tensor)
        => pointwise(infer::masked_fill, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .kernel(fixed("masked_fill", S::NUMBERS.union(S::BOOL)))
            .expand(expand::masked_fill);
    /// `torch.nn.functional.one_hot`: int64 `[..., num_classes]`, 1 at each
    /// value's class (`num_classes` must be given: PyTorch's -1 reads the
    /// values).
    OneHot "one_hot" { num_classes: i64 = -1 } (input: Tensor)
        => Rules::new(infer::one_hot, LayoutRule::Contiguous, Cost::Cheap)
            .traits(Traits::DISCONTINUOUS)
            .expand(expand::one_hot);
    /// ATen's `convolution`: `input [N, C, *]` with `weight [O, C/groups, *k]`
    /// (transposed: `[C, O/groups, *k]`), every parameter given; what
    /// `torch.export` produces for the `conv*` functions. Run by the
    /// interpreter on every backend.
    Convolution "convolution" {
        stride: Vec<i64>,
        padding: Vec<i64>,
        dilation: Vec<i64>,
        transposed: bool,
        output_padding: Vec<i64>,
        groups: i64,
    } (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(spatial::infer_convolution, LayoutRule::Custom(spatial::conv_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::conv_kernel));
    /// `torch.nn.functional.conv1d`: `convolution` with a batch dim added
    /// to an unbatched input, and `padding` `"same"` or `"valid"` settled.
    Conv1d "conv1d" {
        stride: Vec<i64> = vec![1],
        padding: ConvPadding = ConvPadding::Sizes(vec![0]),
        dilation: Vec<i64> = vec![1],
        groups: i64 = 1,
    } (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(spatial::infer_conv_call, LayoutRule::Custom(spatial::conv_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::conv_kernel))
            .expand(expand::conv_call);
    /// `torch.nn.functional.conv2d`: `convolution` with a batch dim added
    /// to an unbatched input, and `padding` `"same"` or `"valid"` settled.
    Conv2d "conv2d" {
        stride: Vec<i64> = vec![1],
        padding: ConvPadding = ConvPadding::Sizes(vec![0]),
        dilation: Vec<i64> = vec![1],
        groups: i64 = 1,
    } (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(spatial::infer_conv_call, LayoutRule::Custom(spatial::conv_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::conv_kernel))
            .expand(expand::conv_call);
    /// `torch.nn.functional.conv3d`: `convolution` with a batch dim added
    /// to an unbatched input, and `padding` `"same"` or `"valid"` settled.
    Conv3d "conv3d" {
        stride: Vec<i64> = vec![1],
        padding: ConvPadding = ConvPadding::Sizes(vec![0]),
        dilation: Vec<i64> = vec![1],
        groups: i64 = 1,
    } (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(spatial::infer_conv_call, LayoutRule::Custom(spatial::conv_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::conv_kernel))
            .expand(expand::conv_call);
    /// `torch.nn.functional.conv_transpose1d`: a transposed `convolution`
    /// (ATen's argument order: `groups` before `dilation`).
    ConvTranspose1d "conv_transpose1d" {
        stride: Vec<i64> = vec![1],
        padding: Vec<i64> = vec![0],
        output_padding: Vec<i64> = vec![0],
        groups: i64 = 1,
        dilation: Vec<i64> = vec![1],
    } (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(spatial::infer_conv_call, LayoutRule::Custom(spatial::conv_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::conv_kernel))
            .expand(expand::conv_call);
    /// `torch.nn.functional.conv_transpose2d`: a transposed `convolution`
    /// (ATen's argument order: `groups` before `dilation`).
    ConvTranspose2d "conv_transpose2d" {
        stride: Vec<i64> = vec![1],
        padding: Vec<i64> = vec![0],
        output_padding: Vec<i64> = vec![0],
        groups: i64 = 1,
        dilation: Vec<i64> = vec![1],
    } (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(spatial::infer_conv_call, LayoutRule::Custom(spatial::conv_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::conv_kernel))
            .expand(expand::conv_call);
    /// `torch.nn.functional.conv_transpose3d`: a transposed `convolution`
    /// (ATen's argument order: `groups` before `dilation`).
    ConvTranspose3d "conv_transpose3d" {
        stride: Vec<i64> = vec![1],
        padding: Vec<i64> = vec![0],
        output_padding: Vec<i64> = vec![0],
        groups: i64 = 1,
        dilation: Vec<i64> = vec![1],
    } (input: Tensor, weight: Tensor, bias: Optional)
        => Rules::new(spatial::infer_conv_call, LayoutRule::Custom(spatial::conv_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::conv_kernel))
            .expand(expand::conv_call);
    /// `torch.nn.functional.max_pool1d`: the largest value of each window
    /// (NaN wins); padding never wins.
    MaxPool1d "max_pool1d" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("max_pool1d_impl", S::FLOATS));
    /// `max_pool1d` with `return_indices`: also where each maximum is, as
    /// a flat position in the input's spatial dims (int64).
    MaxPool1dWithIndices "max_pool1d_with_indices" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("max_pool2d", S::FLOATS.union(S::INTS)));
    /// `torch.nn.functional.max_pool2d`: the largest value of each window
    /// (NaN wins); padding never wins.
    MaxPool2d "max_pool2d" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("max_pool2d", S::FLOATS.union(S::INTS)));
    /// `max_pool2d` with `return_indices`: also where each maximum is, as
    /// a flat position in the input's spatial dims (int64).
    MaxPool2dWithIndices "max_pool2d_with_indices" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("max_pool2d", S::FLOATS.union(S::INTS)));
    /// `torch.nn.functional.max_pool3d`: the largest value of each window
    /// (NaN wins); padding never wins.
    MaxPool3d "max_pool3d" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("max_pool3d", S::FLOATS.union(S::INTS)));
    /// `max_pool3d` with `return_indices`: also where each maximum is, as
    /// a flat position in the input's spatial dims (int64).
    MaxPool3dWithIndices "max_pool3d_with_indices" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        dilation: Vec<i64> = vec![1],
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("max_pool3d", S::FLOATS.union(S::INTS)));
    /// `torch.nn.functional.avg_pool1d`: the mean of each window.
    AvgPool1d "avg_pool1d" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        ceil_mode: bool = false,
        count_include_pad: bool = true,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("avg_pool2d", S::FLOATS.union(S::of(DType::I64))));
    /// `torch.nn.functional.avg_pool2d`: the mean of each window, or its
    /// sum divided by `divisor_override`.
    AvgPool2d "avg_pool2d" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        ceil_mode: bool = false,
        count_include_pad: bool = true,
        divisor_override: Option<i64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("avg_pool2d", S::FLOATS.union(S::of(DType::I64))));
    /// `torch.nn.functional.avg_pool3d`: the mean of each window, or its
    /// sum divided by `divisor_override`.
    AvgPool3d "avg_pool3d" {
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        padding: Vec<i64> = vec![0],
        ceil_mode: bool = false,
        count_include_pad: bool = true,
        divisor_override: Option<i64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed(
                "avg_pool3d_out_frame",
                S::of(DType::F32).union(S::of(DType::F64)).union(S::of(DType::I64)),
            ));
    /// `torch.nn.functional.adaptive_avg_pool1d`: means over windows chosen
    /// to give `output_size` exactly.
    AdaptiveAvgPool1d "adaptive_avg_pool1d" { output_size: Vec<i64> } (input: Tensor)
        => Rules::new(spatial::infer_adaptive, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("adaptive_avg_pool2d", S::FLOATS));
    /// `torch.nn.functional.adaptive_avg_pool2d`: means over windows chosen
    /// to give `output_size` exactly.
    AdaptiveAvgPool2d "adaptive_avg_pool2d" { output_size: Vec<i64> } (input: Tensor)
        => Rules::new(spatial::infer_adaptive, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("adaptive_avg_pool2d", S::FLOATS));
    /// `torch.nn.functional.adaptive_avg_pool3d`: means over windows chosen
    /// to give `output_size` exactly.
    AdaptiveAvgPool3d "adaptive_avg_pool3d" { output_size: Vec<i64> } (input: Tensor)
        => Rules::new(spatial::infer_adaptive, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("adaptive_avg_pool3d_cpu", S::FLOATS));
    /// `torch.nn.functional.adaptive_max_pool1d` with its positions: maxima
    /// over windows chosen to give `output_size` exactly.
    AdaptiveMaxPool1d "adaptive_max_pool1d" { output_size: Vec<i64> } (input: Tensor)
        => Rules::new(spatial::infer_adaptive, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("adaptive_max_pool2d", S::FLOATS));
    /// `torch.nn.functional.adaptive_max_pool2d` with its positions: maxima
    /// over windows chosen to give `output_size` exactly.
    AdaptiveMaxPool2d "adaptive_max_pool2d" { output_size: Vec<i64> } (input: Tensor)
        => Rules::new(spatial::infer_adaptive, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("adaptive_max_pool2d", S::FLOATS));
    /// `torch.nn.functional.adaptive_max_pool3d` with its positions: maxima
    /// over windows chosen to give `output_size` exactly.
    AdaptiveMaxPool3d "adaptive_max_pool3d" { output_size: Vec<i64> } (input: Tensor)
        => Rules::new(spatial::infer_adaptive, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .results(Results::Fixed(2))
            .kernel(fixed("adaptive_max_pool3d_cpu", S::FLOATS));
    /// `interpolate(mode="nearest")` in 1-D: each output reads the
    /// source `floor(dst · in/out)` (`1/scale` where a scale is given).
    UpsampleNearest1d "upsample_nearest1d" {
        output_size: Vec<i64>,
        scales: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("compute_indices_weights_nearest", S::FLOATS.union(S::of(DType::U8))));
    /// `interpolate(mode="nearest-exact")` in 1-D: each output reads the
    /// source `floor((dst + ½) · in/out)` (`1/scale` where a scale is given).
    UpsampleNearestExact1d "_upsample_nearest_exact1d" {
        output_size: Vec<i64>,
        scales: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("compute_indices_weights_nearest", S::FLOATS.union(S::of(DType::U8))));
    /// `interpolate(mode="nearest")` in 2-D: each output reads the
    /// source `floor(dst · in/out)` (`1/scale` where a scale is given).
    UpsampleNearest2d "upsample_nearest2d" {
        output_size: Vec<i64>,
        scales_h: Option<F64> = None,
        scales_w: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("upsample_nearest2d_channels_last", S::FLOATS.union(S::of(DType::U8))));
    /// `interpolate(mode="nearest-exact")` in 2-D: each output reads the
    /// source `floor((dst + ½) · in/out)` (`1/scale` where a scale is given).
    UpsampleNearestExact2d "_upsample_nearest_exact2d" {
        output_size: Vec<i64>,
        scales_h: Option<F64> = None,
        scales_w: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("upsample_nearest2d_channels_last", S::FLOATS.union(S::of(DType::U8))));
    /// `interpolate(mode="nearest")` in 3-D: each output reads the
    /// source `floor(dst · in/out)` (`1/scale` where a scale is given).
    UpsampleNearest3d "upsample_nearest3d" {
        output_size: Vec<i64>,
        scales_d: Option<F64> = None,
        scales_h: Option<F64> = None,
        scales_w: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("compute_indices_weights_nearest", S::FLOATS.union(S::of(DType::U8))));
    /// `interpolate(mode="nearest-exact")` in 3-D: each output reads the
    /// source `floor((dst + ½) · in/out)` (`1/scale` where a scale is given).
    UpsampleNearestExact3d "_upsample_nearest_exact3d" {
        output_size: Vec<i64>,
        scales_d: Option<F64> = None,
        scales_h: Option<F64> = None,
        scales_w: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("compute_indices_weights_nearest", S::FLOATS.union(S::of(DType::U8))));
    /// `interpolate(mode="linear")`: linear resampling to
    /// `output_size`, pixel centres or (`align_corners`) corners aligned.
    UpsampleLinear1d "upsample_linear1d" {
        output_size: Vec<i64>,
        align_corners: bool,
        scales: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("compute_indices_weights_linear", S::FLOATS));
    /// `interpolate(mode="bilinear")`: bilinear resampling to
    /// `output_size`, pixel centres or (`align_corners`) corners aligned.
    UpsampleBilinear2d "upsample_bilinear2d" {
        output_size: Vec<i64>,
        align_corners: bool,
        scales_h: Option<F64> = None,
        scales_w: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("upsample_bilinear2d_channels_last", S::FLOATS));
    /// `interpolate(mode="bicubic")`: bicubic (Keys, a = −0.75, clamped at the border) resampling to
    /// `output_size`, pixel centres or (`align_corners`) corners aligned.
    UpsampleBicubic2d "upsample_bicubic2d" {
        output_size: Vec<i64>,
        align_corners: bool,
        scales_h: Option<F64> = None,
        scales_w: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("compute_indices_weights_cubic", S::FLOATS));
    /// `interpolate(mode="trilinear")`: trilinear resampling to
    /// `output_size`, pixel centres or (`align_corners`) corners aligned.
    UpsampleTrilinear3d "upsample_trilinear3d" {
        output_size: Vec<i64>,
        align_corners: bool,
        scales_d: Option<F64> = None,
        scales_h: Option<F64> = None,
        scales_w: Option<F64> = None,
    } (input: Tensor)
        => Rules::new(spatial::infer_resample, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(fixed("compute_indices_weights_linear", S::FLOATS));
    /// `torch.nn.functional.lp_pool1d`: `(Σ xᵖ)^(1/p)` over each window,
    /// computed as PyTorch does, through `avg_pool1d` of `xᵖ`.
    LpPool1d "lp_pool1d" {
        norm_type: F64,
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_lp_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::lp_pool_kernel))
            .expand(expand::lp_pool);
    /// `torch.nn.functional.lp_pool2d`: `(Σ xᵖ)^(1/p)` over each window,
    /// computed as PyTorch does, through `avg_pool2d` of `xᵖ`.
    LpPool2d "lp_pool2d" {
        norm_type: F64,
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_lp_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::lp_pool_kernel))
            .expand(expand::lp_pool);
    /// `torch.nn.functional.lp_pool3d`: `(Σ xᵖ)^(1/p)` over each window,
    /// computed as PyTorch does, through `avg_pool3d` of `xᵖ`.
    LpPool3d "lp_pool3d" {
        norm_type: F64,
        kernel_size: Vec<i64>,
        stride: Vec<i64> = Vec::new(),
        ceil_mode: bool = false,
    } (input: Tensor)
        => Rules::new(spatial::infer_lp_pool, LayoutRule::Custom(spatial::pool_layout), Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::lp_pool_kernel))
            .expand(expand::lp_pool);
    /// `torch.nn.functional.max_unpool2d`: `input` written into zeros of
    /// `output_size` at the flat spatial positions `indices` holds (what
    /// `max_pool2d_with_indices` gives); a position out of range is
    /// PyTorch's run-time error.
    MaxUnpool2d "max_unpool2d" { output_size: Vec<i64> } (input: Tensor, indices: Tensor)
        => Rules::new(spatial::infer_max_unpool, LayoutRule::Custom(spatial::unpool_layout), Cost::Kernel)
            .kernel(fixed("max_unpool2d", S::FLOATS));
    /// `torch.nn.functional.max_unpool3d` (`stride` and `padding` are
    /// only checked).
    MaxUnpool3d "max_unpool3d" { output_size: Vec<i64>, stride: Vec<i64>, padding: Vec<i64> } (input: Tensor, indices: Tensor)
        => Rules::new(spatial::infer_max_unpool, LayoutRule::Custom(spatial::unpool_layout), Cost::Kernel)
            .kernel(fixed("max_unpool3d", S::FLOATS));
    /// `torch.nn.functional.unfold`: the sliding blocks of a 4-D (or
    /// unbatched 3-D) input as columns, `[N, C·kh·kw, L]`.
    Im2col "im2col" { kernel_size: Vec<i64>, dilation: Vec<i64>, padding: Vec<i64>, stride: Vec<i64> } (input: Tensor)
        => Rules::new(spatial::infer_im2col, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("im2col_out_cpu", S::FLOATS.union(S::COMPLEX).union(S::BOOL)));
    /// `torch.nn.functional.fold`: columns `[N, C·kh·kw, L]` summed back
    /// into an image of `output_size`.
    Col2im "col2im" {
        output_size: Vec<i64>,
        kernel_size: Vec<i64>,
        dilation: Vec<i64>,
        padding: Vec<i64>,
        stride: Vec<i64>,
    } (input: Tensor)
        => Rules::new(spatial::infer_col2im, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("col2im_out_cpu", S::FLOATS.union(S::BOOL)));
    /// `torch.nn.functional.grid_sample` on 4-D inputs: each output
    /// position reads `input` at the normalized coordinates `grid` gives
    /// (`interpolation_mode` 0 bilinear, 1 nearest, 2 bicubic;
    /// `padding_mode` 0 zeros, 1 border, 2 reflection).
    GridSampler2d "grid_sampler_2d" { interpolation_mode: i64, padding_mode: i64, align_corners: bool } (input: Tensor, grid: Tensor)
        => Rules::new(spatial::infer_grid_sampler, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("grid_sampler_2d_cpu_kernel_impl", S::FLOATS));
    /// `grid_sample` on 5-D inputs (bilinear and nearest).
    GridSampler3d "grid_sampler_3d" { interpolation_mode: i64, padding_mode: i64, align_corners: bool } (input: Tensor, grid: Tensor)
        => Rules::new(spatial::infer_grid_sampler, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(fixed("grid_sampler3d_cpu", S::FLOATS));
    /// `torch.nn.functional.affine_grid`: the sampling grid of the affine
    /// maps `theta` (`[N, 2, 3]` or `[N, 3, 4]`) over an output of `size`.
    AffineGridGenerator "affine_grid_generator" { size: Vec<i64>, align_corners: bool } (theta: Tensor)
        => Rules::new(spatial::infer_affine_grid, LayoutRule::Contiguous, Cost::Kernel)
            .kernel(KernelRule::Custom(spatial::affine_grid_kernel));
    /// `torch.rand`: `size` values uniform in [0, 1), drawn from `seed`
    /// (every random op: see [`crate::random`]).
    Rand "rand" { size: Vec<i64>, seed: i64, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(random::infer_rand, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("check_uniform_bounds", S::FLOATS));
    /// `torch.randn`: `size` standard normal values drawn from `seed`.
    Randn "randn" { size: Vec<i64>, seed: i64, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(random::infer_rand, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("normal_kernel_cpu", S::FLOATS));
    /// `torch.randint`: `size` integers uniform in [low, high), int64
    /// unless `dtype` says.
    Randint "randint" { #[shown] low: i64 = 0, high: i64, size: Vec<i64>, seed: i64, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(random::infer_randint, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("random_update_from_to", S::ROUNDABLE.union(S::BOOL)));
    /// `torch.ops.aten.uniform` (`Tensor.uniform_` out of place): the
    /// input's shape, dtype and strides, values uniform in [from, to).
    Uniform "uniform" { #[shown] from: F64 = F64(0.0), #[shown] to: F64 = F64(1.0), seed: i64 } (input: Tensor)
        => Rules::new(random::infer_like, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Creation)
            .kernel(fixed("check_uniform_bounds", S::FLOATS));
    /// `torch.normal(mean, std)`: each a tensor (broadcast together) or a
    /// number; two numbers take `size` (and `dtype`, `device`).
    Normal "normal" { seed: i64, size: Option<Vec<i64>> = None, dtype: Option<DType> = None, device: Option<Device> = None } (mean: Any, std: Any)
        => Rules::new(random::infer_normal, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("normal_kernel_cpu", S::FLOATS));
    /// `torch.bernoulli`: 1 with probability `p` (or the input's value at
    /// each position when there is no `p`), else 0, in the input's dtype.
    Bernoulli "bernoulli" { p: Option<F64> = None, seed: i64 } (input: Tensor)
        => Rules::new(random::infer_like, LayoutRule::Contiguous, Cost::Creation)
            .kernel(KernelRule::Custom(random::bernoulli_kernel));
    /// `Tensor.exponential_` out of place: values of density λ·e^(−λx).
    Exponential "exponential" { #[shown] lambd: F64 = F64(1.0), seed: i64 } (input: Tensor)
        => Rules::new(random::infer_like, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Creation)
            .kernel(fixed("exponential_cpu", S::FLOATS));
    /// `Tensor.cauchy_` out of place.
    Cauchy "cauchy" { #[shown] median: F64 = F64(0.0), #[shown] sigma: F64 = F64(1.0), seed: i64 } (input: Tensor)
        => Rules::new(random::infer_like, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Creation)
            .kernel(fixed("cauchy_cpu", S::FLOATS));
    /// `Tensor.log_normal_` out of place: `exp` of normal values of this
    /// mean and std.
    LogNormal "log_normal" { #[shown] mean: F64 = F64(1.0), #[shown] std: F64 = F64(2.0), seed: i64 } (input: Tensor)
        => Rules::new(random::infer_like, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Creation)
            .kernel(fixed("log_normal_cpu", S::FLOATS));
    /// `Tensor.geometric_` out of place: the number of trials to the first
    /// success, each succeeding with probability `p`.
    Geometric "geometric" { p: F64, seed: i64 } (input: Tensor)
        => Rules::new(random::infer_like, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Creation)
            .kernel(fixed("geometric_cpu", S::REAL_NUMBERS));
    /// `torch.multinomial`: `num_samples` category positions per row of
    /// weights, with or without replacement.
    Multinomial "multinomial" { num_samples: i64, #[shown] replacement: bool = false, seed: i64 } (input: Tensor)
        => Rules::new(random::infer_multinomial, LayoutRule::Contiguous, Cost::Kernel);
    /// `torch.dropout` (`F.dropout`): in training, each element zeroed
    /// with probability `p` and the rest scaled by 1/(1 − p).
    Dropout "dropout" { p: F64, train: bool, seed: i64 } (input: Tensor)
        => Rules::new(random::infer_dropout, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Cheap)
            .expand(random::dropout);
    /// `torch.feature_dropout` (`F.dropout2d`/`3d`): whole channels zeroed.
    FeatureDropout "feature_dropout" { p: F64, train: bool, seed: i64 } (input: Tensor)
        => Rules::new(random::infer_dropout, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Cheap)
            .expand(random::dropout);
    /// `torch.native_dropout` (what `torch.export` gives for a dropout in
    /// training): the output and the bool mask of kept elements.
    NativeDropout "native_dropout" { p: F64, train: Option<bool>, seed: i64 } (input: Tensor)
        => Rules::new(random::infer_dropout, LayoutRule::Custom(layout::preserve_copy_layout), Cost::Cheap)
            .results(Results::Fixed(2))
            .expand(random::native_dropout);
    /// `torch.real`: a complex tensor's real parts (laid out where
    /// PyTorch's view has them: twice the strides); a real tensor itself.
    Real "real" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Cheap);
    /// `torch.imag`: a complex tensor's imaginary parts.
    Imag "imag" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Cheap);
    /// `torch.complex(real, imag)`.
    Complex "complex" (real: Tensor, imag: Tensor)
        => Rules::new(complex_parts::infer_pair, LayoutRule::Pointwise, Cost::Cheap);
    /// `torch.conj`: the complex conjugate (PyTorch's lazy view, computed);
    /// a real tensor itself.
    Conj "conj" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Cheap)
            .expand(complex_parts::expand);
    /// `torch.conj_physical`: the conjugate as a copy.
    ConjPhysical "conj_physical" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Cheap)
            .expand(complex_parts::expand);
    /// `torch.angle`: the argument of complex values; π for negative real
    /// values, 0 otherwise, NaN kept.
    Angle "angle" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Costly)
            .kernel(fixed("angle_cpu", S::REAL_NUMBERS.union(S::COMPLEX).union(S::BOOL).union(S::BARE_UINTS)))
            .expand(complex_parts::expand);
    /// `torch.isreal`: whether each imaginary part is 0 (true for real
    /// tensors).
    Isreal "isreal" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Cheap)
            .expand(complex_parts::expand);
    /// `torch.polar(abs, angle)`: `abs·(cos θ + i·sin θ)`.
    Polar "polar" (abs: Tensor, angle: Tensor)
        => Rules::new(complex_parts::infer_pair, LayoutRule::Pointwise, Cost::Costly)
            .expand(complex_parts::expand);
    /// `torch.view_as_real`: `[..., 2]` real and imaginary parts.
    ViewAsReal "view_as_real" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Cheap)
            .expand(complex_parts::expand);
    /// `torch.view_as_complex`: pairs of the last dim (of size 2, stride 1)
    /// as complex values.
    ViewAsComplex "view_as_complex" (input: Tensor)
        => Rules::new(complex_parts::infer_part, LayoutRule::Custom(complex_parts::layout), Cost::Cheap)
            .expand(complex_parts::expand);
    /// `torch.matmul`.
    Matmul "matmul" (input: Tensor, other: Tensor)
        => Rules::new(infer::matmul, LayoutRule::Contiguous, Cost::Kernel).kernel(fixed(
            "addmm_impl_cpu_",
            S::FLOATS_COMPLEX.union(S::FLOAT8_SIGNED).union(S::INTS),
        ));
    /// `torch.full` (`zeros` and `ones` are `full` of 0.0 and 1.0).
    Full "full" { shape: Vec<i64>, value: Scalar, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(infer::full, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(KernelRule::Custom(support::full_kernel))
            .aliases(&[
                Alias { name: "zeros", attr: "value", value: 0.0 },
                Alias { name: "ones", attr: "value", value: 1.0 },
            ]);
    /// `torch.eye`: ones on the diagonal of an `n`×`m` matrix (`m`
    /// defaults to `n`).
    Eye "eye" { n: i64, m: Option<i64> = None, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("eye", S::ALL.without(S::COMPLEX_HALF).without(S::BARE_UINTS).without(S::FLOAT4)))
            .expand(expand::eye);
    /// `torch.linspace`: `steps` values from `start` to `end`, as PyTorch's
    /// kernel computes them (from the start for the first half, from the
    /// end for the rest, in the dtype; integers in f64, truncated). Its
    /// kernel's dtypes are checked only when it runs (more than one step).
    Linspace "linspace" { start: Scalar, end: Scalar, steps: i64, dtype: Option<DType> = None, device: Option<Device> = None } ()
        => Rules::new(infer::by_expansion, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .expand(expand::linspace);
    /// `torch.arange`.
    Arange "arange" {
        #[shown] start: Scalar = Scalar::Int(0),
        end: Scalar,
        #[shown] step: Scalar = Scalar::Int(1),
        dtype: Option<DType> = None,
        device: Option<Device> = None,
    } ()
        => Rules::new(infer::arange, LayoutRule::Contiguous, Cost::Creation)
            .traits(CREATION)
            .kernel(fixed("arange_cpu", S::REAL_NUMBERS));
}

/// Checks that the table's rows agree with themselves.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_op() {
        let names = super::super::Op::names();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        // div's rounding modes share its name, and round.decimals round's.
        assert_eq!(names.len(), unique.len() + 3, "{names:?}");
        assert!(names.contains(&"zeros") && names.contains(&"neg"));
        // `round` is the unary op, with a `decimals` attribute round.decimals.
        let plain = super::super::Op::parse("round", Attrs::new(vec![])).unwrap();
        assert_eq!(plain, super::super::Op::Unary { op: UnaryOp::Round });
        let decimals = Attrs::new(vec![(
            "decimals".into(),
            AttrValue::Scalar(Scalar::Int(-2)),
        )]);
        let scaled = super::super::Op::parse("round", decimals).unwrap();
        assert_eq!(scaled, super::super::Op::RoundDecimals { decimals: -2 });
    }

    #[test]
    fn families_cover_their_members() {
        assert_eq!(UnaryOp::ALL.len(), 49);
        // 30, the twelve orthogonal polynomials, igamma and igammac.
        assert_eq!(BinaryOp::ALL.len(), 44);
        assert_eq!(UnaryOp::Exp.def().kernel.name, "exp_vml_cpu");
        let _: Result<()> = Ok(());
    }
}
