//! The functions on one f32 at a time: the reference semantics the
//! interpreter uses, and what the accuracy tests measure.

use crate::{Builder, Function, Function2};

/// The [`Builder`] of plain f32 arithmetic.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scalar;

impl Builder for Scalar {
    type F = f32;
    type I = i32;
    type M = bool;

    #[inline]
    fn f32(&mut self, v: f32) -> f32 {
        v
    }
    #[inline]
    fn i32(&mut self, v: i32) -> i32 {
        v
    }
    #[inline]
    fn add(&mut self, a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline]
    fn sub(&mut self, a: f32, b: f32) -> f32 {
        a - b
    }
    #[inline]
    fn mul(&mut self, a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline]
    fn div(&mut self, a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline]
    fn sqrt(&mut self, a: f32) -> f32 {
        a.sqrt()
    }
    #[inline]
    fn fma(&mut self, a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    #[inline]
    fn neg(&mut self, a: f32) -> f32 {
        -a
    }
    #[inline]
    fn abs(&mut self, a: f32) -> f32 {
        a.abs()
    }
    #[inline]
    fn round(&mut self, a: f32) -> f32 {
        a.round_ties_even()
    }
    #[inline]
    fn lt(&mut self, a: f32, b: f32) -> bool {
        a < b
    }
    #[inline]
    fn gt(&mut self, a: f32, b: f32) -> bool {
        a > b
    }
    #[inline]
    fn is_nan(&mut self, a: f32) -> bool {
        a.is_nan()
    }
    #[inline]
    fn select(&mut self, m: bool, a: f32, b: f32) -> f32 {
        if m { a } else { b }
    }
    #[inline]
    fn nonzero(&mut self, a: i32) -> bool {
        a != 0
    }
    #[inline]
    fn to_i32(&mut self, a: f32) -> i32 {
        // `a as i32` (saturating, NaN to 0), spelled out because LLVM
        // turns a loop of the saturating conversion into one scalar
        // conversion per lane; this form vectorizes.
        const TOP: f32 = 2_147_483_648.0;
        if a.is_nan() {
            0
        } else if a >= TOP {
            i32::MAX
        } else if a < -TOP {
            i32::MIN
        } else {
            // SAFETY: −2^31 ≤ a < 2^31 truncates to an i32.
            unsafe { a.to_int_unchecked() }
        }
    }
    #[inline]
    fn to_f32(&mut self, a: i32) -> f32 {
        a as f32
    }
    #[inline]
    fn iadd(&mut self, a: i32, b: i32) -> i32 {
        a.wrapping_add(b)
    }
    #[inline]
    fn isub(&mut self, a: i32, b: i32) -> i32 {
        a.wrapping_sub(b)
    }
    #[inline]
    fn iand(&mut self, a: i32, b: i32) -> i32 {
        a & b
    }
    #[inline]
    fn ior(&mut self, a: i32, b: i32) -> i32 {
        a | b
    }
    #[inline]
    fn ixor(&mut self, a: i32, b: i32) -> i32 {
        a ^ b
    }
    #[inline]
    fn shl(&mut self, a: i32, n: u32) -> i32 {
        a.wrapping_shl(n)
    }
    #[inline]
    fn sar(&mut self, a: i32, n: u32) -> i32 {
        a >> n
    }
    #[inline]
    fn bits(&mut self, a: f32) -> i32 {
        a.to_bits() as i32
    }
    #[inline]
    fn from_bits(&mut self, a: i32) -> f32 {
        f32::from_bits(a as u32)
    }
    #[inline]
    fn exact(&mut self, f: Function, x: f32, when: bool, fast: f32) -> f32 {
        if when { exact(f, x) } else { fast }
    }
    #[inline]
    fn unless_rare(
        &mut self,
        usual: bool,
        common: f32,
        rare: impl FnOnce(&mut Self) -> f32,
    ) -> f32 {
        if usual { common } else { rare(self) }
    }
}

/// `f(x)` by this crate's algorithm.
#[inline]
pub fn eval(f: Function, x: f32) -> f32 {
    f.build(&mut Scalar, x)
}

/// `f(a, c)` by this crate's algorithm (`atan2`: `(y, x)`).
pub fn eval2(f: Function2, a: f32, c: f32) -> f32 {
    f.build(&mut Scalar, a, c)
}

/// `f(a, c)` computed in f64 and rounded once to f32 (the tests'
/// reference).
pub fn exact2(f: Function2, a: f32, c: f32) -> f32 {
    let (a, c) = (f64::from(a), f64::from(c));
    let y = match f {
        Function2::Atan2 => a.atan2(c),
    };
    y as f32
}

/// `f(x)` computed in f64 and rounded once to f32: the path for arguments
/// a function's fast path does not cover (and the tests' reference).
pub fn exact(f: Function, x: f32) -> f32 {
    let x = f64::from(x);
    let y = match f {
        Function::Exp => x.exp(),
        Function::Log => x.ln(),
        Function::Tanh => x.tanh(),
        Function::Erf => libm::erf(x),
        Function::Sin => x.sin(),
        Function::Cos => x.cos(),
        Function::Atan => x.atan(),
        Function::Asin => x.asin(),
        Function::Acos => x.acos(),
        Function::Erfc => libm::erfc(x),
        Function::Expm1 => x.exp_m1(),
        Function::Log1p => x.ln_1p(),
    };
    y as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance in ulps between two f32s (NaNs equal each other).
    fn ulps(a: f32, b: f32) -> u32 {
        if a.is_nan() && b.is_nan() {
            return 0;
        }
        if a.is_nan() || b.is_nan() {
            return u32::MAX;
        }
        let key = |x: f32| {
            let i = x.to_bits() as i32;
            if i < 0 { i32::MIN - i } else { i }
        };
        key(a).abs_diff(key(b))
    }

    /// The correctly rounded value (to within the f64 function's error,
    /// far below an f32 ulp).
    fn reference(f: Function, x: f32) -> f32 {
        exact(f, x)
    }

    /// `to_i32` is Rust's saturating `as` (the semantics every backend
    /// implements), spelled so that it vectorizes.
    #[test]
    fn to_i32_saturates_as_rust_does() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -2.5,
            2_147_483_520.0,
            2_147_483_648.0,
            -2_147_483_648.0,
            -2_147_483_904.0,
            1e20,
            -1e20,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
        ];
        let strided = (0..1u64 << 32)
            .step_by(4099)
            .map(|b| f32::from_bits(b as u32));
        for a in edges.into_iter().chain(strided) {
            assert_eq!(Scalar.to_i32(a), a as i32, "{a:e}");
        }
    }

    #[test]
    fn accuracy() {
        // 2^24 inputs: every 256th bit pattern, over every exponent and
        // both signs; KILN_MATH_STRIDE=1 checks all 2^32.
        let stride: u64 = std::env::var("KILN_MATH_STRIDE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(256);
        for f in Function::ALL {
            let mut worst = (0u32, 0f32);
            let mut bits = 0u64;
            while bits < 1 << 32 {
                let x = f32::from_bits(bits as u32);
                let e = ulps(eval(f, x), reference(f, x));
                if e > worst.0 {
                    worst = (e, x);
                }
                bits += stride;
            }
            eprintln!("{}: at most {} ulps (at {:e})", f.name(), worst.0, worst.1);
            assert!(
                worst.0 <= f.max_ulps(),
                "{}: {} ulps at x = {:e} ({:#010x}): {} vs {}",
                f.name(),
                worst.0,
                worst.1,
                worst.1.to_bits(),
                eval(f, worst.1),
                reference(f, worst.1)
            );
        }
    }

    /// A deterministic stream of 32-bit patterns (xorshift).
    fn patterns(seed: u64) -> impl FnMut() -> u32 {
        let mut s = seed;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 16) as u32
        }
    }

    #[test]
    fn accuracy2() {
        // 2^24 pairs (2^32 / KILN_MATH_STRIDE): half of random bit
        // patterns (every exponent pair, mostly far apart), half of
        // arguments within a factor 16 of each other (the angles away
        // from the axes), both signs each.
        let stride: u64 = std::env::var("KILN_MATH_STRIDE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(256);
        let count = (1u64 << 32) / stride.max(1);
        for f in Function2::ALL {
            let mut next = patterns(0x9e37_79b9_7f4a_7c15);
            let mut worst = (0u32, 0f32, 0f32);
            for i in 0..count {
                let a_bits = next();
                let c_bits = if i % 2 == 0 {
                    next()
                } else {
                    // The exponent moved by −4..=3, a fresh mantissa and sign.
                    let r = next();
                    let exponent = (a_bits >> 23) & 0xff;
                    let e = (exponent as i32 + (r & 7) as i32 - 4).clamp(0, 254) as u32;
                    (r & 0x8000_0000) | (e << 23) | (next() & 0x007f_ffff)
                };
                let (a, c) = (f32::from_bits(a_bits), f32::from_bits(c_bits));
                let e = ulps(eval2(f, a, c), exact2(f, a, c));
                if e > worst.0 {
                    worst = (e, a, c);
                }
            }
            let (e, a, c) = worst;
            eprintln!("{}: at most {e} ulps (at {a:e}, {c:e})", f.name());
            assert!(
                e <= f.max_ulps(),
                "{}: {e} ulps at ({a:e}, {c:e}): {} vs {}",
                f.name(),
                eval2(f, a, c),
                exact2(f, a, c)
            );
        }
    }

    #[test]
    fn special_values() {
        use Function::*;
        let inf = f32::INFINITY;
        for (f, x, y) in [
            (Exp, inf, inf),
            (Exp, -inf, 0.0),
            (Exp, 0.0, 1.0),
            (Log, 0.0, -inf),
            (Log, -0.0, -inf),
            (Log, inf, inf),
            (Log, 1.0, 0.0),
            (Tanh, inf, 1.0),
            (Tanh, -inf, -1.0),
            (Tanh, 0.0, 0.0),
            (Erf, inf, 1.0),
            (Erf, -inf, -1.0),
            (Erf, 0.0, 0.0),
            (Sin, 0.0, 0.0),
            (Cos, 0.0, 1.0),
        ] {
            assert_eq!(eval(f, x), y, "{}({x})", f.name());
        }
        for f in Function::ALL {
            assert!(eval(f, f32::NAN).is_nan(), "{}", f.name());
        }
        assert!(eval(Log, -1.0).is_nan());
        // expm1 and log1p: the ends of their ranges, and zeros' signs.
        for (f, x, y) in [
            (Expm1, inf, inf),
            (Expm1, -inf, -1.0),
            (Expm1, 89.0, inf),
            (Expm1, -30.0, -1.0),
            (Expm1, 0.0, 0.0),
            (Expm1, -0.0, -0.0),
            (Log1p, -1.0, -inf),
            (Log1p, inf, inf),
            (Log1p, 0.0, 0.0),
            (Log1p, -0.0, -0.0),
        ] {
            assert_eq!(eval(f, x).to_bits(), y.to_bits(), "{}({x})", f.name());
        }
        assert!(eval(Expm1, 88.7).is_finite());
        assert!(eval(Log1p, -2.0).is_nan());
        assert!(eval(Log1p, -inf).is_nan());
        assert!(eval(Sin, inf).is_nan());
        assert!(eval(Cos, -inf).is_nan());
        // atan2 on every pair of special values, as C's atan2 (zeros'
        // signs included, so bit for bit).
        let specials = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MIN_POSITIVE,
            f32::MAX,
            -f32::MAX,
            inf,
            -inf,
            f32::NAN,
        ];
        for y in specials {
            for x in specials {
                let (got, want) = (
                    eval2(Function2::Atan2, y, x),
                    exact2(Function2::Atan2, y, x),
                );
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "atan2({y:e}, {x:e}) = {got:e}, not {want:e}"
                );
            }
        }
        for (f, x, y) in [
            (Atan, inf, std::f32::consts::FRAC_PI_2),
            (Atan, -inf, -std::f32::consts::FRAC_PI_2),
            (Atan, 1.0, std::f32::consts::FRAC_PI_4),
            (Asin, 1.0, std::f32::consts::FRAC_PI_2),
            (Asin, -1.0, -std::f32::consts::FRAC_PI_2),
            (Acos, 1.0, 0.0),
            (Acos, -1.0, std::f32::consts::PI),
            (Acos, 0.0, std::f32::consts::FRAC_PI_2),
            (Erfc, 0.0, 1.0),
            (Erfc, inf, 0.0),
            (Erfc, -inf, 2.0),
            (Erfc, 11.0, 0.0),
        ] {
            assert_eq!(eval(f, x), y, "{}({x})", f.name());
        }
        for f in [Asin, Acos] {
            for x in [1.000_000_1, -1.000_000_1, 2.0, inf, -inf] {
                assert!(eval(f, x).is_nan(), "{}({x})", f.name());
            }
        }
        // Signed zeros are kept where the function keeps them.
        for f in [Tanh, Erf, Sin, Atan, Asin] {
            assert!(eval(f, -0.0).is_sign_negative(), "{}", f.name());
        }
    }
}
