//! The functions, each a sequence of [`Builder`] operations: what every
//! backend computes. Constants are f32 values (as written, they round to
//! the f32 the comment names; the tests pin their bits through results).
//!
//! Every function here is `#[inline(always)]`, so that a caller compiled
//! for wider vectors than the crate (the runtime's AVX-512 builder, in
//! functions compiled for AVX-512F) compiles the whole algorithm for them:
//! an algorithm left out of line is compiled without those features and
//! calls each of its vector operations as a function.

use crate::{Builder, Function};

/// Above this, e^x is inf in f32 (clamping keeps 2^n finite).
pub const EXP_HI: f32 = 89.0;
/// Below this, e^x is 0 in f32 (e^−104 is below half the least subnormal).
pub const EXP_LO: f32 = -104.0;
/// Below this, e^x − 1 rounds to −1 in f32 (e^−18 is below half an ulp
/// of 1).
pub const EXPM1_LO: f32 = -18.0;
/// Below this |x|, e^x − 1 and log(1 + x) round to x.
pub const EXPM1_TINY: f32 = 5.960_464_5e-8; // 2^-24
/// ln 2's leading bits, so that n·`EXP_LN2_HI` is exact.
pub const EXP_LN2_HI: f32 = 0.693_359_4;
/// ln 2 minus [`EXP_LN2_HI`].
pub const EXP_LN2_LO: f32 = -2.121_944_4e-4;
/// Coefficients of r^5 .. r^2 and the r^2 term's constant (Cephes `expf`).
pub const EXP_POLY: [f32; 6] = [
    1.987_569_1e-4,
    1.398_199_9e-3,
    8.333_452e-3,
    4.166_579_6e-2,
    1.666_666_5e-1,
    5.000_000_1e-1,
];

/// ln 2 with its last 8 bits zero, so e·`LOG_LN2_HI` is exact for any
/// exponent e.
pub const LOG_LN2_HI: f32 = 0.693_145_75;
/// ln 2 minus [`LOG_LN2_HI`].
pub const LOG_LN2_LO: f32 = 1.428_606_8e-6;
/// R(z) = z·(c1 + z·(c2 + z·c3)) ≈ (log((1+s)/(1−s)) − 2s)/s, z = s².
pub const LOG_POLY: [f32; 3] = [0.666_667_8, 0.399_771_12, 0.298_843_83];
/// The bits of √½ rounded to f32: mantissas are reduced to [√½, √2).
const SQRT_HALF_BITS: i32 = 0x3f35_04f3;

/// Below this |x|, tanh is x + x³·P(x²).
pub const TANH_SMALL: f32 = 0.55;
/// P(z), constant term first.
pub const TANH_POLY: [f32; 5] = [
    -0.333_333_16,
    0.133_325_86,
    -0.053_852_31,
    0.021_071_674,
    -0.006_274_233,
];

/// erf(x) = x·P(x²) for |x| < 1; constant term first (a minimax fit: its
/// first coefficient is one ulp above 2/√π's f32, not that constant).
#[allow(clippy::approx_constant)]
pub const ERF_SMALL: [f32; 7] = [
    1.128_379_1,
    -0.376_126_26,
    0.112_835_854,
    -0.026_853_811,
    0.005_188_328,
    -0.000_801_019_25,
    7.853_858e-5,
];
/// ln erfc(x) = P(x − [`ERF_LOG_ERFC_CENTER`]) for 1 ≤ x ≤ 4, where erf
/// is 1 − e^P: fitted for P's error times erfc(x), which is what reaches
/// erf (`fits/erf_log_erfc.py`); constant term first.
pub const ERF_LOG_ERFC: [f32; 7] = [
    -7.806_818,
    -5.352_694,
    -0.943_885_3,
    -0.010_717_722,
    0.002_457_831_3,
    -0.000_155_977_95,
    0.000_185_577_53,
];
/// The center of [`ERF_LOG_ERFC`]'s variable.
pub const ERF_LOG_ERFC_CENTER: f32 = 2.5;
/// erfc(x)·e^{x²} = P(x − [`ERFC_NEAR_CENTER`]) for 1/4 ≤ x < 1;
/// constant term first.
pub const ERFC_NEAR: [f32; 10] = [
    0.556_813_9,
    -0.432_361_8,
    0.286_587_7,
    -0.168_829_66,
    0.090_535_88,
    -0.044_898_096,
    0.020_799_007,
    -0.009_105_62,
    0.003_988_165_4,
    -0.001_556_511,
];
/// The center of [`ERFC_NEAR`]'s variable.
pub const ERFC_NEAR_CENTER: f32 = 0.625;
/// erfc(x)·e^{x²} = Q(1/x − [`ERFC_CENTER`]) for 1 ≤ x < 4, fitted for
/// erfc's relative error; constant term first.
pub const ERFC_MID: [f32; 11] = [
    0.305_953,
    0.382_283_78,
    -0.172_394_9,
    0.043_767_043,
    0.023_337_865,
    -0.046_945_667,
    0.043_075_252,
    -0.026_895_303,
    0.005_812_215,
    0.025_932_623,
    -0.036_745_35,
];
/// erfc(x)·e^{x²} = R(1/x − [`ERFC_FAR_CENTER`]) for x ≥ 4; constant
/// term first.
pub const ERFC_FAR: [f32; 8] = [
    0.097_285_964,
    0.540_068_9,
    -0.128_512_52,
    -0.180_179_66,
    0.228_074_15,
    0.030_370_848,
    -0.390_688_6,
    0.377_789_26,
];
/// The center of [`ERFC_FAR`]'s variable.
pub const ERFC_FAR_CENTER: f32 = 0.175;
/// Below this x, erfc(x) = 1 − erf(x) loses under an ulp.
pub const ERFC_ONE_MINUS: f32 = 0.25;
/// Above this x, erfc(x) is below half the least f32 subnormal: 0 (and
/// x² above [`EXP_LO`]'s magnitude).
pub const ERFC_ZERO: f32 = 10.2;
/// The center of [`ERFC_MID`]'s variable.
pub const ERFC_CENTER: f32 = 0.625;
/// Above this |x|, erf is ±1 in f32.
pub const ERF_ONE: f32 = 4.0;

/// 2/π.
pub const TWO_OVER_PI: f32 = std::f32::consts::FRAC_2_PI;
/// π/2 in three parts (each the f32 nearest to what the earlier leave).
pub const HALF_PI: [f32; 3] = [1.570_796_4, -4.371_138_8e-8, -1.715_124_5e-15];
/// sin(r) = r + r³·S(r²) for |r| ≤ π/4; constant term first.
pub const SIN_POLY: [f32; 4] = [
    -0.166_666_67,
    0.008_333_329,
    -0.000_198_393_13,
    2.718_121_6e-6,
];
/// cos(r) = 1 − r²/2 + r⁴·C(r²) for |r| ≤ π/4; constant term first.
pub const COS_POLY: [f32; 4] = [
    0.041_666_668,
    -0.001_388_888_3,
    2.479_946e-5,
    -2.720_575_5e-7,
];
/// Above this |x|, sin and cos are the f64 functions, rounded.
pub const TRIG_FAST_LIMIT: f32 = 8192.0;

/// `coeffs[0] + z·(coeffs[1] + z·(...))` by fused multiply-adds.
#[inline(always)]
fn horner<B: Builder>(b: &mut B, z: B::F, coeffs: &[f32]) -> B::F {
    let (last, rest) = coeffs.split_last().expect("a polynomial has coefficients");
    let mut p = b.f32(*last);
    for &c in rest.iter().rev() {
        let c = b.f32(c);
        p = b.fma(p, z, c);
    }
    p
}

/// `magnitude` (not negative) with the sign of `sign`.
#[inline(always)]
fn with_sign_of<B: Builder>(b: &mut B, magnitude: B::F, sign: B::F) -> B::F {
    let m = b.bits(magnitude);
    let s = b.bits(sign);
    let sign_bit = b.i32(i32::MIN);
    let s = b.iand(s, sign_bit);
    let r = b.ior(m, s);
    b.from_bits(r)
}

/// e^x.
#[inline(always)]
pub fn exp<B: Builder>(b: &mut B, x: B::F) -> B::F {
    // Clamp above (a NaN input is selected back at the end). Below
    // EXP_LO the result is 0: those lanes compute e^0 and are replaced,
    // so that masked attention scores (finfo.min) make no subnormal
    // intermediates, which cost a microcode assist each on x86.
    let hi = b.f32(EXP_HI);
    let lo = b.f32(EXP_LO);
    let above = b.gt(x, hi);
    let xc = b.select(above, hi, x);
    let below = b.lt(xc, lo);
    let zero = b.f32(0.0);
    let xc = b.select(below, zero, xc);
    let p = exp_in_range(b, xc);
    let p = b.select(below, zero, p);
    let nan = b.is_nan(x);
    b.select(nan, x, p)
}

/// e^x for x in [[`EXP_LO`], [`EXP_HI`]]: [`exp`] without its clamps and
/// its NaN select, for callers that keep it in range (outside, the result
/// is arbitrary, and a builder may meet an infinity or NaN as an integer).
#[inline(always)]
fn exp_in_range<B: Builder>(b: &mut B, x: B::F) -> B::F {
    let (n, u) = exp_reduced(b, x);
    let one = b.f32(1.0);
    let p = b.add(u, one);
    b.scale_by_pow2(p, n)
}

/// x = n·ln 2 + r with |r| ≤ ln 2 / 2: the integer n (as an f32) and
/// e^r − 1, as r + r²·P(r) (Cephes' `expf` polynomial).
#[inline(always)]
fn exp_reduced<B: Builder>(b: &mut B, x: B::F) -> (B::F, B::F) {
    let log2e = b.f32(std::f32::consts::LOG2_E);
    let t = b.mul(x, log2e);
    let n = b.round(t);
    let minus_n = b.neg(n);
    let ln2_hi = b.f32(EXP_LN2_HI);
    let ln2_lo = b.f32(EXP_LN2_LO);
    let r = b.fma(minus_n, ln2_hi, x);
    let r = b.fma(minus_n, ln2_lo, r);
    let mut p = b.f32(EXP_POLY[0]);
    for &k in &EXP_POLY[1..] {
        let k = b.f32(k);
        p = b.fma(p, r, k);
    }
    let r2 = b.mul(r, r);
    (n, b.fma(p, r2, r))
}

/// `p`·2^n for an integral n in [−150, 128], in two halves, so that a
/// subnormal result rounds once: [`Builder::scale_by_pow2`]'s default.
#[inline(always)]
pub fn scale_by_pow2_in_halves<B: Builder>(b: &mut B, mut p: B::F, n: B::F) -> B::F {
    let ni = b.to_i32(n);
    let n1 = b.sar(ni, 1);
    let n2 = b.isub(ni, n1);
    let bias = b.i32(127);
    for part in [n1, n2] {
        let biased = b.iadd(part, bias);
        let bits = b.shl(biased, 23);
        let pow2 = b.from_bits(bits);
        p = b.mul(p, pow2);
    }
    p
}

/// e^x − 1.
#[inline(always)]
pub fn expm1<B: Builder>(b: &mut B, x: B::F) -> B::F {
    // x = n·ln 2 + r: e^x − 1 = 2^n·(e^r − 1) + (2^n − 1), one fused
    // multiply-add, where 2^n − 1 is exact (|n| ≤ 24; n = 0 near zero,
    // where this is r + r²·P(r) itself). Above, the −1 is below half an
    // ulp of e^x; below −18 the result rounds to −1.
    let hi = b.f32(EXP_HI);
    let lo = b.f32(EXPM1_LO);
    let above = b.gt(x, hi);
    let xc = b.select(above, hi, x);
    let below = b.lt(xc, lo);
    let xc = b.select(below, lo, xc);
    let (n, u) = exp_reduced(b, xc);
    let one = b.f32(1.0);
    // 2^n as one f32 for n ≤ 24 (the other lanes are not selected).
    let limit = b.f32(24.0);
    let large = b.gt(n, limit);
    let small_n = b.select(large, limit, n);
    let ni = b.to_i32(small_n);
    let bias = b.i32(127);
    let biased = b.iadd(ni, bias);
    let bits = b.shl(biased, 23);
    let pow2 = b.from_bits(bits);
    let pow2_minus_1 = b.sub(pow2, one);
    let near = b.fma(pow2, u, pow2_minus_1);
    let p = b.add(u, one);
    let far = b.scale_by_pow2(p, n);
    let r = b.select(large, far, near);
    // |x| < 2^−24: x itself (its sign kept, subnormals exact).
    let ax = b.abs(x);
    let tiny_limit = b.f32(EXPM1_TINY);
    let tiny = b.lt(ax, tiny_limit);
    let r = b.select(tiny, x, r);
    let nan = b.is_nan(x);
    b.select(nan, x, r)
}

/// log(1 + x).
#[inline(always)]
pub fn log1p<B: Builder>(b: &mut B, x: B::F) -> B::F {
    // u = 1 + x rounded; log(1 + x) = log(u) + (x − (u − 1))/u, where
    // x − (u − 1) is the rounding error of u (exact for |x| ≤ 1; beyond,
    // the term is far below an ulp of log u).
    let one = b.f32(1.0);
    let u = b.add(one, x);
    let log_u = log(b, u);
    let u_minus_1 = b.sub(u, one);
    let err = b.sub(x, u_minus_1);
    let correction = b.div(err, u);
    let corrected = b.add(log_u, correction);
    // u = 0 (−inf), u < 0 or NaN (NaN), u = inf: log(u) alone.
    let zero = b.f32(0.0);
    let inf = b.f32(f32::INFINITY);
    let positive = b.gt(u, zero);
    let finite = b.lt(u, inf);
    let r = b.select(finite, corrected, log_u);
    let r = b.select(positive, r, log_u);
    // |x| < 2^−24: x itself (its sign kept, subnormals exact).
    let ax = b.abs(x);
    let tiny_limit = b.f32(EXPM1_TINY);
    let tiny = b.lt(ax, tiny_limit);
    b.select(tiny, x, r)
}

/// The natural logarithm.
#[inline(always)]
pub fn log<B: Builder>(b: &mut B, x: B::F) -> B::F {
    // Subnormals are scaled into the normal range first.
    let min_normal = b.f32(f32::MIN_POSITIVE);
    let tiny = b.lt(x, min_normal);
    let scale = b.f32(8_388_608.0); // 2^23
    let scaled = b.mul(x, scale);
    let xs = b.select(tiny, scaled, x);
    // x = 2^e·m with m in [√½, √2): offsetting the bits by 1 − √½ moves
    // the mantissa boundary from 1 to √½.
    let bits = b.bits(xs);
    let offset = b.i32(0x3f80_0000 - SQRT_HALF_BITS);
    let ix = b.iadd(bits, offset);
    let exponent = b.sar(ix, 23);
    let bias = b.i32(127);
    let exponent = b.isub(exponent, bias);
    let mantissa_mask = b.i32(0x007f_ffff);
    let mantissa = b.iand(ix, mantissa_mask);
    let base = b.i32(SQRT_HALF_BITS);
    let m_bits = b.iadd(mantissa, base);
    let m = b.from_bits(m_bits);
    let e = b.to_f32(exponent);
    let zero = b.f32(0.0);
    let minus_23 = b.f32(-23.0);
    let e_shift = b.select(tiny, minus_23, zero);
    let e = b.add(e, e_shift);
    // log(m) = f − f²/2 + s·(f²/2 + R(s²)), s = f/(2+f): m − 1 is exact.
    let one = b.f32(1.0);
    let f = b.sub(m, one);
    let two = b.f32(2.0);
    let den = b.add(f, two);
    let s = b.div(f, den);
    let z = b.mul(s, s);
    let p = horner(b, z, &LOG_POLY);
    let r = b.mul(z, p);
    let half = b.f32(0.5);
    let hf = b.mul(half, f);
    let hfsq = b.mul(hf, f);
    let t = b.add(hfsq, r);
    let ln2_lo = b.f32(LOG_LN2_LO);
    let ln2_hi = b.f32(LOG_LN2_HI);
    let lo = b.mul(e, ln2_lo);
    let v = b.fma(s, t, lo);
    let v = b.sub(v, hfsq);
    let v = b.add(v, f);
    let v = b.fma(e, ln2_hi, v);
    // log(0) = −inf, log(x < 0) = NaN, log(inf) = inf, NaN stays.
    let positive = b.gt(x, zero);
    let minus_inf = b.f32(f32::NEG_INFINITY);
    let v = b.select(positive, v, minus_inf);
    let negative = b.lt(x, zero);
    let nan = b.f32(f32::NAN);
    let v = b.select(negative, nan, v);
    let max = b.f32(f32::MAX);
    let inf = b.gt(x, max);
    let v = b.select(inf, x, v);
    let is_nan = b.is_nan(x);
    b.select(is_nan, x, v)
}

/// The hyperbolic tangent: computed on |x|, given the sign of x (which
/// keeps tanh(−0) = −0).
#[inline(always)]
pub fn tanh<B: Builder>(b: &mut B, x: B::F) -> B::F {
    let a = b.abs(x);
    // Small |x|: |x| + |x|³·P(x²).
    let z = b.mul(a, a);
    let p = horner(b, z, &TANH_POLY);
    let a3 = b.mul(a, z);
    let small = b.fma(a3, p, a);
    // Otherwise 1 − 2/(e^{2|x|} + 1), which saturates to 1 (and passes a
    // NaN through).
    let two_a = b.add(a, a);
    let t = exp(b, two_a);
    let one = b.f32(1.0);
    let den = b.add(t, one);
    let two = b.f32(2.0);
    let q = b.div(two, den);
    let large = b.sub(one, q);
    let limit = b.f32(TANH_SMALL);
    let is_small = b.lt(a, limit);
    let r = b.select(is_small, small, large);
    with_sign_of(b, r, x)
}

/// e^{−v²} with v² = hi + lo exactly: e^{−hi}·(1 − lo), lo being below
/// an ulp of hi (at v = ±inf, lo is NaN).
#[inline(always)]
fn exp_minus_square<B: Builder>(b: &mut B, v: B::F) -> B::F {
    let hi = b.mul(v, v);
    let minus_hi = b.neg(hi);
    let lo = b.fma(v, v, minus_hi);
    let e = exp(b, minus_hi);
    let minus_e = b.neg(e);
    b.fma(minus_e, lo, e)
}

/// The error function: x·P(x²) for |x| < 1, 1 − e^{Q(|x|)} with Q fitted
/// to ln erfc below 4 (sign restored), ±1 beyond; a NaN argument is
/// returned as it is (as [`exp`] returns it). (1 − e^{−x²}·R(1/|x|),
/// before, took a division and x² in two parts: erf cost 1.8× exp.)
#[inline(always)]
pub fn erf<B: Builder>(b: &mut B, x: B::F) -> B::F {
    let a = b.abs(x);
    // |x| < 1: x·P(x²).
    let z = b.mul(x, x);
    let p = horner(b, z, &ERF_SMALL);
    let small = b.mul(x, p);
    let one = b.f32(1.0);
    let is_small = b.lt(a, one);
    let limit = b.f32(ERF_ONE);
    let saturated = b.gt(a, limit);
    // 1 ≤ |x| < 4: 1 − e^{Q(|x|)}, Q ≈ ln erfc (e^Q ≤ erfc(1) = 0.157, so
    // the subtraction loses under an ulp; the fit's error, times erfc,
    // is under 1e-8 with its coefficients in f32). Rare
    // where erf is used most (GELU's x/√2 of activations near zero), so
    // computed only where some lane needs it. The closure is inlined as
    // the functions are (module doc): left out of line, a builder's vector
    // operations in it would be calls.
    let r = b.unless_rare(
        is_small,
        small,
        #[inline(always)]
        |b| {
            // Past 4 at 4, where 1 − e^{Q(4)} (e^Q = 1.5e-8) rounds to 1:
            // the saturated ±1 itself, and Q in [−18, 0] in every lane but
            // a NaN's, so exp's clamps are not needed (past 4, Q grows:
            // e^Q would make subnormal or infinite intermediates).
            let ac = b.select(saturated, limit, a);
            let center = b.f32(ERF_LOG_ERFC_CENTER);
            let t = b.sub(ac, center);
            let q = horner(b, t, &ERF_LOG_ERFC);
            let e = exp_in_range(b, q);
            let mid = b.sub(one, e);
            with_sign_of(b, mid, x)
        },
    );
    let nan = b.is_nan(x);
    b.select(nan, x, r)
}

/// The complementary error function 1 − erf(x), accurate where it is
/// small: x < 1/4 as 1 − erf(x) (no cancellation there); else
/// e^{−x²}·P with P a polynomial fitted to erfc(x)·e^{x²} on [1/4, 1) (in
/// x), [1, 4) and [4, 10.2] (in 1/x), and e^{−x²} with x² in two parts
/// (`exp_minus_square`); 0 beyond 10.2.
#[inline(always)]
pub fn erfc<B: Builder>(b: &mut B, x: B::F) -> B::F {
    let one = b.f32(1.0);
    let e_small = erf(b, x);
    let small = b.sub(one, e_small);
    let near_center = b.f32(ERFC_NEAR_CENTER);
    let t = b.sub(x, near_center);
    let near = horner(b, t, &ERFC_NEAR);
    let u = b.div(one, x);
    let mid_center = b.f32(ERFC_CENTER);
    let um = b.sub(u, mid_center);
    let mid = horner(b, um, &ERFC_MID);
    let far_center = b.f32(ERFC_FAR_CENTER);
    let uf = b.sub(u, far_center);
    let far = horner(b, uf, &ERFC_FAR);
    let four = b.f32(ERF_ONE);
    let is_far = b.lt(x, four);
    let q = b.select(is_far, mid, far);
    let is_near = b.lt(x, one);
    let q = b.select(is_near, near, q);
    let e = exp_minus_square(b, x);
    let r = b.mul(e, q);
    let limit = b.f32(ERFC_ONE_MINUS);
    let is_small = b.lt(x, limit);
    let r = b.select(is_small, small, r);
    // Past ERFC_ZERO (and at +inf, where x² − hi is NaN): 0. A NaN input
    // fails every comparison and stays NaN through the polynomials.
    let zero = b.f32(0.0);
    let cutoff = b.f32(ERFC_ZERO);
    let is_zero = b.gt(x, cutoff);
    b.select(is_zero, zero, r)
}

/// sin, or cos (a quarter turn later), computed on |x|: sin(−x) is
/// −sin(x) (which keeps sin(−0) = −0), cos(−x) is cos(x).
#[inline(always)]
fn sin_cos<B: Builder>(b: &mut B, x: B::F, f: Function) -> B::F {
    let a = b.abs(x);
    let two_over_pi = b.f32(TWO_OVER_PI);
    let t = b.mul(a, two_over_pi);
    let k = b.round(t);
    // Quadrants of |x| ≤ 8192 fit easily; others (and NaN) take 0 here
    // and the exact path below.
    let bound = b.f32(16384.0);
    let in_range = b.lt(k, bound);
    let zero = b.f32(0.0);
    let k = b.select(in_range, k, zero);
    let minus_k = b.neg(k);
    let mut r = a;
    for part in HALF_PI {
        let part = b.f32(part);
        r = b.fma(minus_k, part, r);
    }
    let z = b.mul(r, r);
    let sp = horner(b, z, &SIN_POLY);
    let r3 = b.mul(r, z);
    let s = b.fma(r3, sp, r);
    let cp = horner(b, z, &COS_POLY);
    let minus_half = b.f32(-0.5);
    let one = b.f32(1.0);
    let c0 = b.fma(minus_half, z, one);
    let z2 = b.mul(z, z);
    let c = b.fma(z2, cp, c0);
    // Quadrant q: sin, cos, −sin, −cos of r.
    let mut q = b.to_i32(k);
    if f == Function::Cos {
        let quarter = b.i32(1);
        q = b.iadd(q, quarter);
    }
    let one_bit = b.i32(1);
    let odd = b.iand(q, one_bit);
    let swap = b.nonzero(odd);
    let v = b.select(swap, c, s);
    let two_bit = b.i32(2);
    let half_turn = b.iand(q, two_bit);
    let mut flip = b.shl(half_turn, 30);
    if f == Function::Sin {
        let sign_bit = b.i32(i32::MIN);
        let xb = b.bits(x);
        let sign = b.iand(xb, sign_bit);
        flip = b.ixor(flip, sign);
    }
    let bits = b.bits(v);
    let bits = b.ixor(bits, flip);
    let fast = b.from_bits(bits);
    let limit = b.f32(TRIG_FAST_LIMIT);
    let large = b.gt(a, limit);
    b.exact(f, x, large, fast)
}

/// The sine.
#[inline(always)]
pub fn sin<B: Builder>(b: &mut B, x: B::F) -> B::F {
    sin_cos(b, x, Function::Sin)
}

/// The cosine.
#[inline(always)]
pub fn cos<B: Builder>(b: &mut B, x: B::F) -> B::F {
    sin_cos(b, x, Function::Cos)
}

/// π/4 with its last two bits zero, so that k·`PIO4_HI` is exact for
/// k = 0..4 (the angles the arctangents add: 0, π/4, π/2, 3π/4, π).
pub const PIO4_HI: f32 = f32::from_bits(0x3f49_0fd8);
/// π/4 minus [`PIO4_HI`].
pub const PIO4_LO: f32 = f32::from_bits(0x3428_885a);
/// π/2 rounded to f32.
pub const PIO2_HI: f32 = f32::from_bits(0x3fc9_0fdb);
/// π/2 minus [`PIO2_HI`].
pub const PIO2_LO: f32 = f32::from_bits(0xb33b_bd2e);
/// π rounded to f32.
pub const PI_HI: f32 = f32::from_bits(0x4049_0fdb);
/// π minus [`PI_HI`].
pub const PI_LO: f32 = f32::from_bits(0xb3bb_bd2e);
/// atan(t) = t + t·z·P(z), z = t², for |t| ≤ 1/2; constant term first.
pub const ATAN_POLY: [f32; 6] = [
    -0.333_333_28,
    0.199_994_89,
    -0.142_720_6,
    0.109_408_12,
    -0.079_833_776,
    0.038_713_086,
];
/// asin(s) = s + s·z·P(z), z = s², for |s| ≤ 1/2; constant term first.
pub const ASIN_POLY: [f32; 6] = [
    0.166_666_6,
    0.075_005_054,
    0.044_516_697,
    0.031_810_004,
    0.014_429_477,
    0.037_529_916,
];

/// Whether the sign bit of `x` is set (true for −0 and negative NaNs).
#[inline(always)]
fn sign_bit<B: Builder>(b: &mut B, x: B::F) -> B::M {
    let bits = b.bits(x);
    let sign = b.i32(i32::MIN);
    let s = b.iand(bits, sign);
    b.nonzero(s)
}

/// The angle of the point (`den`, `num`) with 0 ≤ `num` ≤ `den` turned
/// into its octant: `k`·π/4 ± atan(q), q = `num`/`den` in [0, 1]. `swap`
/// says the point's coordinates were exchanged (the angle is π/2 − θ),
/// `left` that it lies left of the y axis (π − θ). The constants are
/// summed first, as k·π/4 in two parts, and the small arctangent added
/// last, so the result rounds about once.
#[inline(always)]
fn atan_octant<B: Builder>(b: &mut B, q: B::F, swap: B::M, left: Option<B::M>) -> B::F {
    // q > 1/2: atan(q) = π/4 + atan(t), t = (q − 1)/(q + 1) in (−1/3, 0]
    // (q − 1 is exact); else t = q. Either way |t| ≤ 1/2.
    let half = b.f32(0.5);
    let upper = b.gt(q, half);
    let one = b.f32(1.0);
    let qm = b.sub(q, one);
    let qp = b.add(q, one);
    let tu = b.div(qm, qp);
    let t = b.select(upper, tu, q);
    let z = b.mul(t, t);
    let p = horner(b, z, &ATAN_POLY);
    let tz = b.mul(t, z);
    let small = b.fma(tz, p, t);
    // The angle is c + σ·(B + small) with B = π/4 or 0, c = 0, π/2
    // (swapped), π (left, not swapped) or π/2 (both), and σ = −1 when
    // exactly one of swap and left holds: k = c/(π/4) + σ·B/(π/4).
    let zero = b.f32(0.0);
    let two = b.f32(2.0);
    let base = b.select(upper, one, zero);
    let minus_base = b.neg(base);
    let minus_small = b.neg(small);
    let c = b.select(swap, two, zero);
    let signed_base = b.select(swap, minus_base, base);
    let signed_small = b.select(swap, minus_small, small);
    let (k_int, signed_base, signed_small) = match left {
        None => (c, signed_base, signed_small),
        Some(left) => {
            let four = b.f32(4.0);
            let c_left = b.select(swap, two, four);
            let flipped_base = b.select(swap, base, minus_base);
            let flipped_small = b.select(swap, small, minus_small);
            (
                b.select(left, c_left, c),
                b.select(left, flipped_base, signed_base),
                b.select(left, flipped_small, signed_small),
            )
        }
    };
    let k = b.add(k_int, signed_base);
    let hi = b.f32(PIO4_HI);
    let lo = b.f32(PIO4_LO);
    let k_hi = b.mul(k, hi);
    let k_lo = b.mul(k, lo);
    let tail = b.add(k_lo, signed_small);
    b.add(k_hi, tail)
}

/// The arctangent, computed on |x| (atan(−x) = −atan(x), which keeps
/// atan(−0) = −0): |x| > 1 is reduced by atan(|x|) = π/2 − atan(1/|x|).
#[inline(always)]
pub fn atan<B: Builder>(b: &mut B, x: B::F) -> B::F {
    let a = b.abs(x);
    let one = b.f32(1.0);
    let swap = b.gt(a, one);
    let inv = b.div(one, a);
    let q = b.select(swap, inv, a);
    let r = atan_octant(b, q, swap, None);
    // A NaN input makes q NaN, and so the result.
    with_sign_of(b, r, x)
}

/// The two-argument arctangent `atan2(y, x)`: the angle of the point
/// (x, y), in [−π, π], with C's special values (signed zeros pick ±0 or
/// ±π, two infinities an odd multiple of π/4).
#[inline(always)]
pub fn atan2<B: Builder>(b: &mut B, y: B::F, x: B::F) -> B::F {
    let ax = b.abs(x);
    let ay = b.abs(y);
    let swap = b.gt(ay, ax);
    let num = b.select(swap, ax, ay);
    let den = b.select(swap, ay, ax);
    let q = b.div(num, den);
    // 0/0 (both zero) is the angle 0 of the octant, inf/inf (both
    // infinite: the smaller one is) its diagonal.
    let zero = b.f32(0.0);
    let positive = b.gt(den, zero);
    let q = b.select(positive, q, zero);
    let max = b.f32(f32::MAX);
    let infinite = b.gt(num, max);
    let one = b.f32(1.0);
    let q = b.select(infinite, one, q);
    let left = sign_bit(b, x);
    let r = atan_octant(b, q, swap, Some(left));
    let r = with_sign_of(b, r, y);
    let x_nan = b.is_nan(x);
    let r = b.select(x_nan, x, r);
    let y_nan = b.is_nan(y);
    b.select(y_nan, y, r)
}

/// For |x| > 1/2: s = √((1 − |x|)/2) and w = asin(s) − s, so that
/// asin(|x|) = π/2 − 2(s + w) and acos(|x|) = 2(s + w). w carries the
/// rounding error of the square root (from the exact residual
/// z − s², by a fused multiply-add), which the doubling would otherwise
/// make an ulp of the result.
#[inline(always)]
fn asin_far<B: Builder>(b: &mut B, a: B::F) -> (B::F, B::F) {
    let one = b.f32(1.0);
    let half = b.f32(0.5);
    // 1 − |x| is exact for |x| ≥ 1/2, and halving it too.
    let d = b.sub(one, a);
    let z = b.mul(d, half);
    let s = b.sqrt(z);
    let p = horner(b, z, &ASIN_POLY);
    let sz = b.mul(s, z);
    let poly = b.mul(sz, p);
    let minus_s = b.neg(s);
    let residual = b.fma(minus_s, s, z);
    let two_s = b.add(s, s);
    // s = 0 (|x| = 1) has no residual: 0/0 would be NaN.
    let zero = b.f32(0.0);
    let positive = b.gt(s, zero);
    let den = b.select(positive, two_s, one);
    let c = b.div(residual, den);
    let w = b.add(poly, c);
    (s, w)
}

/// The arcsine, computed on |x| with the sign of x (asin(−0) = −0):
/// |x| ≤ 1/2 by the polynomial; beyond, asin(|x|) = π/2 − 2·asin(s) with
/// s = √((1 − |x|)/2). |x| > 1 gives NaN (the square root of a negative).
#[inline(always)]
pub fn asin<B: Builder>(b: &mut B, x: B::F) -> B::F {
    let a = b.abs(x);
    let z = b.mul(a, a);
    let p = horner(b, z, &ASIN_POLY);
    let az = b.mul(a, z);
    let near = b.fma(az, p, a);
    let (s, w) = asin_far(b, a);
    // π/2 − (2s + (2w − π/2's low part)).
    let two_s = b.add(s, s);
    let two_w = b.add(w, w);
    let lo = b.f32(PIO2_LO);
    let tail = b.sub(two_w, lo);
    let v = b.add(two_s, tail);
    let hi = b.f32(PIO2_HI);
    let far = b.sub(hi, v);
    let half = b.f32(0.5);
    let is_far = b.gt(a, half);
    let r = b.select(is_far, far, near);
    with_sign_of(b, r, x)
}

/// The arccosine: |x| ≤ 1/2 as π/2 − asin(x); x > 1/2 as 2·asin(s),
/// x < −1/2 as π − 2·asin(s), s = √((1 − |x|)/2). |x| > 1 gives NaN.
#[inline(always)]
pub fn acos<B: Builder>(b: &mut B, x: B::F) -> B::F {
    // π/2 − (x − (π/2's low part − x·z·P(z))).
    let z = b.mul(x, x);
    let p = horner(b, z, &ASIN_POLY);
    let xz = b.mul(x, z);
    let xzp = b.mul(xz, p);
    let pio2_lo = b.f32(PIO2_LO);
    let tail = b.sub(pio2_lo, xzp);
    let v = b.sub(x, tail);
    let pio2_hi = b.f32(PIO2_HI);
    let near = b.sub(pio2_hi, v);
    let a = b.abs(x);
    let (s, w) = asin_far(b, a);
    // x > 1/2: 2(s + w).
    let sw = b.add(s, w);
    let right = b.add(sw, sw);
    // x < −1/2: π − (2s + (2w − π's low part)).
    let two_s = b.add(s, s);
    let two_w = b.add(w, w);
    let pi_lo = b.f32(PI_LO);
    let tail = b.sub(two_w, pi_lo);
    let v = b.add(two_s, tail);
    let pi_hi = b.f32(PI_HI);
    let left = b.sub(pi_hi, v);
    let half = b.f32(0.5);
    let is_right = b.gt(x, half);
    let minus_half = b.f32(-0.5);
    let is_left = b.lt(x, minus_half);
    let r = b.select(is_right, right, near);
    b.select(is_left, left, r)
}
