//! `kiln-math`: Kiln's f32 elementary functions (exp, expm1, log, log1p,
//! tanh, erf, erfc, sin, cos, atan, asin, acos, atan2), each written once, as a
//! sequence of IEEE f32 operations over a [`Builder`].
//!
//! A backend implements [`Builder`] and gets every function: the reference
//! interpreter evaluates one f32 at a time ([`eval`]), the Cranelift
//! backend emits the same operations on scalars or 4-lane vectors, and the
//! CUDA backend prints them as a device function. Every step is one
//! correctly rounded IEEE operation (a fused multiply-add rounds once), so
//! all backends compute the same bits, and the accuracy measured here
//! holds for each of them.
//!
//! Accuracy, measured against the correctly rounded result over 2^24
//! inputs spread over every f32 exponent (`tests::accuracy`; atan2 on
//! 2^24 pairs, `tests::accuracy2`), in ulps:
//!
//! | function | max error | algorithm |
//! |---|---|---|
//! | exp | 1 | range reduction by ln 2 (two-part constant), degree-5 polynomial (Cephes' `expf`), scaling by 2^n in two halves |
//! | log | 1 | x = 2^e·m with m in [√½, √2), log(m) = 2s + s·R(s²) with s = (m−1)/(m+1), degree-3 minimax R |
//! | tanh | 1 | \|x\| < 0.55: x + x³·P(x²) (degree-5 minimax P); else 1 − 2/(e^{2\|x\|}+1) with the sign of x |
//! | erf | 2 | \|x\| < 1: x·P(x²) (degree-7); \|x\| < 4: 1 − e^{Q(\|x\|)} (Q of degree 6 fitted to ln erfc, its error weighted by erfc); else ±1 |
//! | sin, cos | 2 | reduction by π/2 in three parts to \|r\| ≤ π/4, minimax polynomials for sin and cos on r, chosen by quadrant; \|x\| > 8192: the f64 function, rounded |
//! | atan | 1 | \|x\| > 1: π/2 − atan(1/\|x\|); q > ½: π/4 + atan((q−1)/(q+1)); t + t³·P(t²) on \|t\| ≤ ½ (degree-5 minimax P), the multiple of π/4 in two parts added last |
//! | asin, acos | 1 | \|x\| ≤ ½: x + x³·P(x²) (degree-5 minimax P); else through s = √((1−\|x\|)/2): asin = π/2 − 2·asin(s), acos = 2·asin(s) or π − 2·asin(s), the square root's rounding error carried by a fused multiply-add |
//! | erfc | 4 | x < ¼: 1 − erf(x); else e^{−x²}·P with minimax P fitted to erfc(x)·e^{x²} on [¼, 1) (degree 9 in x), [1, 4) (degree 10 in 1/x), [4, 10.2] (degree 7 in 1/x), x² in two parts; beyond 10.2: 0 |
//! | expm1 | 1 | as exp, then 2^n·(e^r − 1) + (2^n − 1) in one fused multiply-add (2^n − 1 exact for \|n\| ≤ 24); beyond, e^x; below −18, −1 |
//! | log1p | 1 | u = 1 + x rounded, log(u) + (x − (u − 1))/u (the rounding error of u, divided by u) |
//! | atan2 | 2 | the smaller of \|x\|, \|y\| over the larger, then as atan, the octant's multiple of π/4 (0 … π) in two parts added last; C's signed zeros and infinities |
//!
//! The polynomial coefficients were fitted for this crate (minimax in
//! relative error, by Lawson's iteration in double precision, then
//! rounded to f32; `tests::accuracy` is the check that matters).

// The special functions (erfinv, digamma, i0, i1, zeta) are f64 functions
// in `special`, and torch.special's orthogonal polynomials in
// `polynomials`, computed in f64 and rounded once for every dtype.
pub mod algorithms;
pub mod polynomials;
pub mod scalar;
pub mod special;

pub use scalar::{Scalar, eval, eval2, exact, exact2};

/// A function this crate defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Function {
    /// e^x.
    Exp,
    /// The natural logarithm.
    Log,
    /// The hyperbolic tangent.
    Tanh,
    /// The error function.
    Erf,
    /// The sine.
    Sin,
    /// The cosine.
    Cos,
    /// The arctangent.
    Atan,
    /// The arcsine.
    Asin,
    /// The arccosine.
    Acos,
    /// The complementary error function, 1 − erf(x).
    Erfc,
    /// e^x − 1.
    Expm1,
    /// log(1 + x).
    Log1p,
}

impl Function {
    /// Every function.
    pub const ALL: [Function; 12] = [
        Function::Exp,
        Function::Log,
        Function::Tanh,
        Function::Erf,
        Function::Sin,
        Function::Cos,
        Function::Atan,
        Function::Asin,
        Function::Acos,
        Function::Erfc,
        Function::Expm1,
        Function::Log1p,
    ];

    /// Its name in generated code (`kiln_{name}_f32`).
    pub fn name(self) -> &'static str {
        match self {
            Function::Exp => "exp",
            Function::Log => "log",
            Function::Tanh => "tanh",
            Function::Erf => "erf",
            Function::Sin => "sin",
            Function::Cos => "cos",
            Function::Atan => "atan",
            Function::Asin => "asin",
            Function::Acos => "acos",
            Function::Erfc => "erfc",
            Function::Expm1 => "expm1",
            Function::Log1p => "log1p",
        }
    }

    /// The largest error of [`eval`] against the correctly rounded value,
    /// in ulps, as stated in the crate documentation and tested.
    pub fn max_ulps(self) -> u32 {
        match self {
            Function::Exp | Function::Log | Function::Tanh => 1,
            Function::Erf | Function::Sin | Function::Cos => 2,
            Function::Atan | Function::Asin | Function::Acos => 1,
            Function::Erfc => 4,
            Function::Expm1 | Function::Log1p => 1,
        }
    }

    /// The function's operations on `x`, through a builder. Always inlined,
    /// as every algorithm is ([`algorithms`]).
    #[inline(always)]
    pub fn build<B: Builder>(self, b: &mut B, x: B::F) -> B::F {
        match self {
            Function::Exp => algorithms::exp(b, x),
            Function::Log => algorithms::log(b, x),
            Function::Tanh => algorithms::tanh(b, x),
            Function::Erf => algorithms::erf(b, x),
            Function::Sin => algorithms::sin(b, x),
            Function::Cos => algorithms::cos(b, x),
            Function::Atan => algorithms::atan(b, x),
            Function::Asin => algorithms::asin(b, x),
            Function::Acos => algorithms::acos(b, x),
            Function::Erfc => algorithms::erfc(b, x),
            Function::Expm1 => algorithms::expm1(b, x),
            Function::Log1p => algorithms::log1p(b, x),
        }
    }
}

/// A function of two arguments this crate defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Function2 {
    /// `atan2(y, x)`: the angle of the point (x, y).
    Atan2,
}

impl Function2 {
    /// Every two-argument function.
    pub const ALL: [Function2; 1] = [Function2::Atan2];

    /// Its name in generated code (`kiln_{name}_f32`).
    pub fn name(self) -> &'static str {
        match self {
            Function2::Atan2 => "atan2",
        }
    }

    /// The largest error of [`eval2`] against the correctly rounded
    /// value, in ulps, as stated in the crate documentation and tested.
    pub fn max_ulps(self) -> u32 {
        match self {
            Function2::Atan2 => 2,
        }
    }

    /// The function's operations on `(a, b)` (`atan2`: `(y, x)`), through
    /// a builder. Always inlined, as every algorithm is ([`algorithms`]).
    #[inline(always)]
    pub fn build<B: Builder>(self, b: &mut B, a: B::F, c: B::F) -> B::F {
        match self {
            Function2::Atan2 => algorithms::atan2(b, a, c),
        }
    }
}

/// The operations the functions are written in: f32 values (`F`), i32
/// values (`I`) and masks (`M`), each one lane or several. Every float
/// operation is IEEE f32 with rounding to nearest, ties to even.
pub trait Builder {
    /// An f32 value (or lanes of them).
    type F: Copy;
    /// An i32 value.
    type I: Copy;
    /// A truth value.
    type M: Copy;

    /// An f32 constant.
    fn f32(&mut self, v: f32) -> Self::F;
    /// An i32 constant.
    fn i32(&mut self, v: i32) -> Self::I;
    /// `a + b`.
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `a - b`.
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b`.
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `a / b`.
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `√a`, correctly rounded.
    fn sqrt(&mut self, a: Self::F) -> Self::F;
    /// `a * b + c`, rounded once.
    fn fma(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    /// `-a` (flips the sign bit).
    fn neg(&mut self, a: Self::F) -> Self::F;
    /// `|a|` (clears the sign bit).
    fn abs(&mut self, a: Self::F) -> Self::F;
    /// `a` rounded to an integral value, ties to even.
    fn round(&mut self, a: Self::F) -> Self::F;
    /// `a < b` (false when either is NaN).
    fn lt(&mut self, a: Self::F, b: Self::F) -> Self::M;
    /// `a > b` (false when either is NaN).
    fn gt(&mut self, a: Self::F, b: Self::F) -> Self::M;
    /// Whether `a` is NaN.
    fn is_nan(&mut self, a: Self::F) -> Self::M;
    /// `m ? a : b`.
    fn select(&mut self, m: Self::M, a: Self::F, b: Self::F) -> Self::F;
    /// Whether the integer is not zero.
    fn nonzero(&mut self, a: Self::I) -> Self::M;
    /// An integral f32 within i32's range, converted exactly.
    fn to_i32(&mut self, a: Self::F) -> Self::I;
    /// An i32 converted to f32 (exact for |a| ≤ 2^24).
    fn to_f32(&mut self, a: Self::I) -> Self::F;
    /// `a + b` (wrapping).
    fn iadd(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// `a - b` (wrapping).
    fn isub(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// `a & b`.
    fn iand(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// `a | b`.
    fn ior(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// `a ^ b`.
    fn ixor(&mut self, a: Self::I, b: Self::I) -> Self::I;
    /// `a << n`.
    fn shl(&mut self, a: Self::I, n: u32) -> Self::I;
    /// `a >> n`, arithmetic.
    fn sar(&mut self, a: Self::I, n: u32) -> Self::I;
    /// The bits of an f32.
    fn bits(&mut self, a: Self::F) -> Self::I;
    /// The f32 of some bits.
    fn from_bits(&mut self, a: Self::I) -> Self::F;
    /// `p`·2^n for an integral `n` in [−150, 128] (as an f32), rounded
    /// once (p is in [1/2, 2]: only a subnormal or infinite result
    /// rounds). By default two multiplications by powers of two built
    /// from n's bits ([`algorithms::scale_by_pow2_in_halves`]); a builder
    /// with an instruction for it (AVX-512's `vscalefps`) gives the same
    /// value in one.
    #[inline(always)]
    fn scale_by_pow2(&mut self, p: Self::F, n: Self::F) -> Self::F
    where
        Self: Sized,
    {
        algorithms::scale_by_pow2_in_halves(self, p, n)
    }
    /// Where `when` holds, `f` by [`exact`] (the f64 function, rounded
    /// once: for arguments the fast path does not cover); elsewhere `fast`.
    fn exact(&mut self, f: Function, x: Self::F, when: Self::M, fast: Self::F) -> Self::F;
    /// Where `usual` holds, `common`; elsewhere `rare(self)`: a branch of
    /// a function that few arguments take (erf's for |x| ≥ 1). A builder
    /// of several lanes may compute `rare` only when some lane needs it,
    /// with a branch around it; by default both are computed and one
    /// selected. The result is the same either way.
    fn unless_rare(
        &mut self,
        usual: Self::M,
        common: Self::F,
        rare: impl FnOnce(&mut Self) -> Self::F,
    ) -> Self::F
    where
        Self: Sized,
    {
        let r = rare(self);
        self.select(usual, common, r)
    }
}
