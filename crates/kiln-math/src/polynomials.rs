//! torch.special's orthogonal polynomials of `x` and a degree `n`, in f64:
//! Chebyshev's of the first to fourth kinds (T, U, V, W) and their shifted
//! forms (on [0, 1]: T*ₙ(x) = Tₙ(2x − 1) ...), Hermite's (physicists' H,
//! probabilists' He), Laguerre's L and Legendre's P.
//!
//! The algorithms are ATen's (`aten/src/ATen/native/Math.h`), step for
//! step in f64, so an f64 result has PyTorch's bits wherever PyTorch's
//! own is finite, but for the divergences below (degrees past
//! [`MAX_RECURRENCE`], subnormal x); f32 inputs compute in f64 and round
//! once (PyTorch's f32 kernel computes in f32, whose closed forms
//! `cos(n·acos x)` lose accuracy as n grows). The CUDA preamble (`kiln_polynomial` in
//! `crates/kiln-cuda/src/preamble.cu`) writes the same code.
//!
//! - The degree is `n` truncated to an integer as C's conversion does on
//!   x86 (NaN, ±inf and values beyond i64 are i64::MIN); a negative degree
//!   gives 0.
//! - Chebyshev: the special values at x = ±1, closed forms for |x| < 1 above
//!   a small degree (`cos(n·acos x)`, ...), the three-term recurrence
//!   otherwise.
//! - Hermite: the recurrence, NaN above PyTorch's degree limit (128 for
//!   f32, 512 for f64).
//! - Laguerre and Legendre: the recurrence.
//!
//! Where Kiln differs from PyTorch (README, "Where Kiln differs"), it is
//! for the mathematically right value or to bound the work:
//! - x = ±inf gives the polynomial's infinite limit for n ≥ 1 (PyTorch's
//!   recurrence reaches inf − inf: NaN from the third degree on), and NaN
//!   gives NaN (PyTorch's Chebyshev, Laguerre and Legendre return an
//!   uninitialised value from degree 2).
//! - A value past f64's range is an infinity of its sign: the recurrence of
//!   a Chebyshev polynomial with |x| > 1 grows with the degree, so its
//!   first infinite term decides; Hermite's, Laguerre's and Legendre's
//!   recurrences rescale their two terms by 2^-512 when they pass 2^512
//!   (exact unless a scaled term falls into the subnormals, which takes a
//!   subnormal x), and a step itself can only overflow for |x| beyond
//!   2^495, past every root, where the leading term decides the sign.
//!   PyTorch's overflows to inf and then to NaN.
//! - A recurrence never takes more than [`MAX_RECURRENCE`] steps per
//!   element (PyTorch's loops n times: for a degree near 2^63 it never
//!   returns). Beyond it, a Chebyshev polynomial with |x| > 1 uses its
//!   closed form in cosh/sinh of n·acosh|x|, and Laguerre's and Legendre's
//!   are NaN.

/// The most steps a recurrence takes for one element (2^16).
pub const MAX_RECURRENCE: i64 = 1 << 16;

/// The recurrences rescale when a term passes 2^SCALE.
const SCALE: i32 = 512;

/// One of torch.special's orthogonal polynomials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Polynomial {
    /// Chebyshev's polynomial of the first kind, Tₙ(cos θ) = cos(nθ).
    ChebyshevT,
    /// Of the second kind, Uₙ(cos θ) = sin((n+1)θ)/sin θ.
    ChebyshevU,
    /// Of the third kind, Vₙ(cos θ) = cos((n+½)θ)/cos(θ/2).
    ChebyshevV,
    /// Of the fourth kind, Wₙ(cos θ) = sin((n+½)θ)/sin(θ/2).
    ChebyshevW,
    /// Tₙ(2x − 1).
    ShiftedChebyshevT,
    /// Uₙ(2x − 1).
    ShiftedChebyshevU,
    /// Vₙ(2x − 1).
    ShiftedChebyshevV,
    /// Wₙ(2x − 1).
    ShiftedChebyshevW,
    /// The physicists' Hermite polynomial, Hₙ₊₁ = 2x·Hₙ − 2n·Hₙ₋₁.
    HermiteH,
    /// The probabilists' Hermite polynomial, Heₙ₊₁ = x·Heₙ − n·Heₙ₋₁.
    HermiteHe,
    /// Laguerre's polynomial, (n+1)Lₙ₊₁ = (2n + 1 − x)Lₙ − n·Lₙ₋₁.
    LaguerreL,
    /// Legendre's polynomial, (n+1)Pₙ₊₁ = (2n+1)x·Pₙ − n·Pₙ₋₁.
    LegendreP,
}

impl Polynomial {
    /// Every polynomial, in the order of the CUDA preamble's kind codes
    /// (`kiln_polynomial`'s first argument is the index here).
    pub const ALL: [Polynomial; 12] = [
        Polynomial::ChebyshevT,
        Polynomial::ChebyshevU,
        Polynomial::ChebyshevV,
        Polynomial::ChebyshevW,
        Polynomial::ShiftedChebyshevT,
        Polynomial::ShiftedChebyshevU,
        Polynomial::ShiftedChebyshevV,
        Polynomial::ShiftedChebyshevW,
        Polynomial::HermiteH,
        Polynomial::HermiteHe,
        Polynomial::LaguerreL,
        Polynomial::LegendreP,
    ];

    /// Its code in generated CUDA C: its index in [`Polynomial::ALL`].
    pub fn code(self) -> usize {
        Polynomial::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }
}

/// The degree PyTorch takes from a float `n`: C's conversion to int64,
/// which truncates, and on x86 gives i64::MIN for NaN and for values
/// outside i64 (Rust's `as` would saturate instead).
pub fn degree(n: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// The polynomial `p` of degree `n` (truncated by [`degree`]) at `x`.
/// `single`: the values are f32 (Hermite's degree limit is PyTorch's for
/// the dtype: 128 for f32, 512 for f64).
pub fn polynomial(p: Polynomial, x: f64, n: f64, single: bool) -> f64 {
    use Polynomial::*;
    let n = degree(n);
    if n < 0 {
        return 0.0;
    }
    let shifted = x + x - 1.0;
    match p {
        ChebyshevT => chebyshev(Kind::T, x, n, 6),
        ChebyshevU => chebyshev(Kind::U, x, n, 8),
        ChebyshevV => chebyshev(Kind::V, x, n, 8),
        ChebyshevW => chebyshev(Kind::W, x, n, 8),
        ShiftedChebyshevT => chebyshev(Kind::T, shifted, n, 6),
        ShiftedChebyshevU => chebyshev(Kind::U, shifted, n, 6),
        ShiftedChebyshevV => chebyshev(Kind::V, shifted, n, 6),
        ShiftedChebyshevW => chebyshev(Kind::W, shifted, n, 4),
        HermiteH | HermiteHe => hermite(p == HermiteH, x, n, if single { 128 } else { 512 }),
        LaguerreL => laguerre(x, n),
        LegendreP => legendre(x, n),
    }
}

/// The four kinds of Chebyshev polynomials (all four share the recurrence
/// fₙ₊₁ = 2x·fₙ − fₙ₋₁ and differ in f₁).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    T,
    U,
    V,
    W,
}

/// An infinity of the sign of a polynomial whose leading coefficient is
/// positive, at a large |x| of the sign of `x`: negative for x < 0 and
/// odd `n`.
fn signed_infinity(x: f64, n: i64) -> f64 {
    if x < 0.0 && n % 2 != 0 {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    }
}

/// ±`v` by the parity of `n` (`v` for even `n`).
fn parity(n: i64, v: f64) -> f64 {
    if n % 2 == 0 { v } else { -v }
}

/// A Chebyshev polynomial of degree `n ≥ 0` at `x` (already shifted for
/// the shifted forms), with the closed form for |x| < 1 above degree
/// `closed_above` (ATen's thresholds).
fn chebyshev(kind: Kind, x: f64, n: i64, closed_above: i64) -> f64 {
    let nf = n as f64;
    // n + 1 and 2n + 1 exactly, then rounded (ATen computes them in
    // int64, which overflows for n ≥ 2^62).
    let n1 = (i128::from(n) + 1) as f64;
    let n2 = (2 * i128::from(n) + 1) as f64;
    if x.abs() == 1.0 {
        let positive = x > 0.0;
        return match kind {
            Kind::T if positive => 1.0,
            Kind::T => parity(n, 1.0),
            Kind::U if positive => n1,
            Kind::U => parity(n, n1),
            Kind::V if positive => 1.0,
            Kind::V => parity(n, n2),
            Kind::W if positive => n2,
            Kind::W => parity(n, 1.0),
        };
    }
    if n > closed_above && x.abs() < 1.0 {
        let a = x.acos();
        return match kind {
            Kind::T => (nf * a).cos(),
            Kind::U if a.sin() != 0.0 => (n1 * a).sin() / a.sin(),
            Kind::U => n1 * (n1 * a).cos() / x,
            Kind::V if (a / 2.0).sin() != 1.0 => ((nf + 0.5) * a).cos() / (a / 2.0).cos(),
            Kind::V => parity(n, n2),
            Kind::W if (a / 2.0).cos() != 1.0 => ((nf + 0.5) * a).sin() / (a / 2.0).sin(),
            Kind::W if x > 0.0 => n2,
            Kind::W => parity(n, 1.0),
        };
    }
    let first = match kind {
        Kind::T => x,
        Kind::U => x + x,
        Kind::V => x + x - 1.0,
        Kind::W => x + x + 1.0,
    };
    match n {
        0 => return 1.0,
        1 => return first,
        _ if x.is_nan() => return f64::NAN,
        _ if x.is_infinite() => return signed_infinity(x, n),
        _ => {}
    }
    // Here |x| > 1 or n is small: with |x| > 1 every kind grows with the
    // degree (cosh and sinh of multiples of acosh|x|), positive for x > 1
    // and of the degree's parity below -1.
    if n > MAX_RECURRENCE {
        let t = acosh(x.abs());
        if t.is_infinite() {
            // |x| near f64::MAX: the value overflows.
            return signed_infinity(x, n);
        }
        let half = (nf + 0.5) * t;
        let (v, w) = (
            (half.cosh()) / (t / 2.0).cosh(),
            half.sinh() / (t / 2.0).sinh(),
        );
        let magnitude = match kind {
            Kind::T => (nf * t).cosh(),
            Kind::U => (n1 * t).sinh() / t.sinh(),
            // Vₙ(−y) = (−1)ⁿWₙ(y) and Wₙ(−y) = (−1)ⁿVₙ(y).
            Kind::V if x > 0.0 => v,
            Kind::V => w,
            Kind::W if x > 0.0 => w,
            Kind::W => v,
        };
        return if x > 0.0 {
            magnitude
        } else {
            parity(n, magnitude)
        };
    }
    let (mut p, mut q) = (1.0, first);
    for _ in 2..=n {
        let r = (x + x) * q - p;
        if r.is_infinite() {
            return signed_infinity(x, n);
        }
        p = q;
        q = r;
    }
    q
}

/// acosh(a) for a ≥ 1, written out (Rust's `acosh` is its own, not the C
/// library's, and the CUDA preamble writes this).
fn acosh(a: f64) -> f64 {
    (a + (a - 1.0).sqrt() * (a + 1.0).sqrt()).ln()
}

/// Hermite's polynomials: NaN above `limit`, the recurrence
/// Hₖ₊₁ = 2x·Hₖ − 2k·Hₖ₋₁ (`physicists`) or Heₖ₊₁ = x·Heₖ − k·Heₖ₋₁.
fn hermite(physicists: bool, x: f64, n: i64, limit: i64) -> f64 {
    let first = if physicists { x + x } else { x };
    match n {
        0 => return 1.0,
        1 => return first,
        _ if n > limit => return f64::NAN,
        _ if x.is_infinite() => return signed_infinity(x, n),
        _ => {}
    }
    let overflow = signed_infinity(x, n);
    if physicists {
        // ATen counts k = 2, 4, ..., 2n − 2.
        recurrence(first, (1..n).map(|k| 2 * k), overflow, |k, p, q| {
            (x + x) * q - k * p
        })
    } else {
        recurrence(first, 1..n, overflow, |k, p, q| x * q - k * p)
    }
}

/// Laguerre's polynomial: 1 at x = 0, the recurrence otherwise.
fn laguerre(x: f64, n: i64) -> f64 {
    if x.abs() == 0.0 || n == 0 {
        return 1.0;
    }
    let first = 1.0 - x;
    // The leading coefficient is (−1)ⁿ/n!.
    let overflow = signed_infinity(-x, n);
    match n {
        1 => first,
        _ if x.is_infinite() => overflow,
        _ if x.is_nan() || n > MAX_RECURRENCE => f64::NAN,
        _ => recurrence(first, 1..n, overflow, |k, p, q| {
            ((k + k + (1.0 - x)) * q - k * p) / (k + 1.0)
        }),
    }
}

/// Legendre's polynomial: ±1 at x = ±1, the recurrence otherwise.
fn legendre(x: f64, n: i64) -> f64 {
    if x.abs() == 1.0 {
        return if x > 0.0 { 1.0 } else { parity(n, 1.0) };
    }
    let overflow = signed_infinity(x, n);
    match n {
        0 => 1.0,
        1 => x,
        _ if x.is_infinite() => overflow,
        _ if x.is_nan() || n > MAX_RECURRENCE => f64::NAN,
        _ => recurrence(x, 1..n, overflow, |k, p, q| {
            ((k + k + 1.0) * x * q - k * p) / (k + 1.0)
        }),
    }
}

/// A linear three-term recurrence from (1, `first`): for each `k` of
/// `steps` (as f64), the next term `step(k, p, q)` of the last two. When
/// a term passes 2^512 both are scaled by 2^-512 (exact but in the
/// subnormals: a step is linear in p and q, and IEEE rounding commutes
/// with powers of two), and the result is scaled back at the end, to ±inf
/// where it overflows. A step that overflows with terms below 2^512 takes
/// an |x| beyond 2^495, past the polynomial's roots: the result is then
/// `overflow`, the infinity of the leading term's sign.
fn recurrence(
    first: f64,
    steps: impl Iterator<Item = i64>,
    overflow: f64,
    step: impl Fn(f64, f64, f64) -> f64,
) -> f64 {
    let (up, down) = (2f64.powi(SCALE), 2f64.powi(-SCALE));
    let (mut p, mut q, mut scaled) = (1.0, first, 0u32);
    for k in steps {
        let r = step(k as f64, p, q);
        if r.is_infinite() {
            return overflow;
        }
        p = q;
        q = r;
        if q.abs() > up {
            p *= down;
            q *= down;
            scaled += 1;
        }
    }
    for _ in 0..scaled {
        q *= up;
    }
    q
}

#[cfg(test)]
mod tests {
    use super::Polynomial::*;
    use super::*;

    fn f64_at(p: Polynomial, x: f64, n: f64) -> f64 {
        polynomial(p, x, n, false)
    }

    /// Within `rel` of `want` (equal when `want` is not finite or 0).
    fn close(got: f64, want: f64, rel: f64) -> bool {
        if !want.is_finite() || want == 0.0 {
            return got == want || (got.is_nan() && want.is_nan());
        }
        (got - want).abs() <= rel * want.abs()
    }

    #[test]
    fn low_degrees_are_the_textbook_polynomials() {
        for x in [-3.5, -1.25, -0.7, -0.1, 0.0, 0.3, 0.5, 0.9, 1.5, 4.0] {
            let y = 2.0 * x - 1.0;
            let cases: [(Polynomial, f64, f64); 14] = [
                (ChebyshevT, 3.0, 4.0 * x * x * x - 3.0 * x),
                (ChebyshevU, 2.0, 4.0 * x * x - 1.0),
                (ChebyshevV, 2.0, 4.0 * x * x - 2.0 * x - 1.0),
                (ChebyshevW, 2.0, 4.0 * x * x + 2.0 * x - 1.0),
                (
                    ChebyshevW,
                    3.0,
                    8.0 * x * x * x + 4.0 * x * x - 4.0 * x - 1.0,
                ),
                (ShiftedChebyshevT, 2.0, 8.0 * x * x - 8.0 * x + 1.0),
                (ShiftedChebyshevU, 3.0, 8.0 * y * y * y - 4.0 * y),
                (ShiftedChebyshevV, 1.0, 2.0 * y - 1.0),
                (ShiftedChebyshevW, 2.0, 4.0 * y * y + 2.0 * y - 1.0),
                (HermiteH, 3.0, 8.0 * x * x * x - 12.0 * x),
                (HermiteHe, 4.0, x * x * x * x - 6.0 * x * x + 3.0),
                (LaguerreL, 2.0, (x * x - 4.0 * x + 2.0) / 2.0),
                (
                    LaguerreL,
                    3.0,
                    (-x * x * x + 9.0 * x * x - 18.0 * x + 6.0) / 6.0,
                ),
                (LegendreP, 3.0, (5.0 * x * x * x - 3.0 * x) / 2.0),
            ];
            for (p, n, want) in cases {
                let got = f64_at(p, x, n);
                assert!(
                    (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "{p:?} {n} at {x}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn closed_forms_agree_with_the_recurrence() {
        // Above the thresholds (6 or 8) the closed forms in acos; the
        // recurrence (degree 20, |x| < 1, written out here) is accurate.
        for x in [-0.95, -0.6, -0.2, 0.1, 0.45, 0.8, 0.99] {
            for (p, first) in [
                (ChebyshevT, x),
                (ChebyshevU, 2.0 * x),
                (ChebyshevV, 2.0 * x - 1.0),
                (ChebyshevW, 2.0 * x + 1.0),
            ] {
                let (mut a, mut b) = (1.0, first);
                for _ in 2..=20 {
                    (a, b) = (b, 2.0 * x * b - a);
                }
                assert!(
                    close(f64_at(p, x, 20.0), b, 1e-9) || (f64_at(p, x, 20.0) - b).abs() < 1e-12,
                    "{p:?} at {x}"
                );
            }
        }
        // T₁₀(½) = cos(10π/3) = −½.
        assert!(close(f64_at(ChebyshevT, 0.5, 10.0), -0.5, 1e-14));
        // The shifted forms are the plain ones at 2x − 1.
        for (s, p) in [
            (ShiftedChebyshevT, ChebyshevT),
            (ShiftedChebyshevU, ChebyshevU),
            (ShiftedChebyshevV, ChebyshevV),
            (ShiftedChebyshevW, ChebyshevW),
        ] {
            for x in [0.125, 0.375, 0.75] {
                assert!(
                    close(f64_at(s, x, 30.0), f64_at(p, 2.0 * x - 1.0, 30.0), 1e-12),
                    "{s:?} at {x}"
                );
            }
        }
    }

    #[test]
    fn special_values_at_the_ends() {
        assert_eq!(f64_at(ChebyshevT, -1.0, 7.0), -1.0);
        assert_eq!(f64_at(ChebyshevU, -1.0, 7.0), -8.0);
        assert_eq!(f64_at(ChebyshevU, 1.0, 7.0), 8.0);
        assert_eq!(f64_at(ChebyshevV, -1.0, 4.0), 9.0);
        assert_eq!(f64_at(ChebyshevV, 1.0, 4.0), 1.0);
        assert_eq!(f64_at(ChebyshevW, 1.0, 4.0), 9.0);
        assert_eq!(f64_at(ChebyshevW, -1.0, 5.0), -1.0);
        assert_eq!(f64_at(ShiftedChebyshevU, 0.0, 3.0), -4.0);
        assert_eq!(f64_at(LegendreP, -1.0, 3.0), -1.0);
        assert_eq!(f64_at(LaguerreL, 0.0, 9.0), 1.0);
        assert_eq!(f64_at(LaguerreL, -0.0, 9.0), 1.0);
    }

    #[test]
    fn the_degree_truncates_as_c_on_x86() {
        assert_eq!(degree(2.7), 2);
        assert_eq!(degree(-0.5), 0);
        assert_eq!(degree(-2.5), -2);
        for n in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e19, -1e19] {
            assert_eq!(degree(n), i64::MIN, "{n}");
            for p in Polynomial::ALL {
                assert_eq!(f64_at(p, 0.3, n), 0.0, "{p:?} {n}");
            }
        }
        assert_eq!(f64_at(ChebyshevT, 1.5, 2.9), 2.0 * 1.5 * 1.5 - 1.0);
        assert_eq!(f64_at(ChebyshevT, 1.5, -0.5), 1.0);
        assert_eq!(f64_at(LegendreP, 0.5, -1.0), 0.0);
    }

    #[test]
    fn hermite_stops_at_pytorchs_degree_limit() {
        assert!(polynomial(HermiteH, 0.5, 129.0, true).is_nan());
        assert!(polynomial(HermiteH, 0.5, 128.0, true).is_finite());
        assert!(polynomial(HermiteHe, 0.5, 513.0, false).is_nan());
        // (He₅₁₂(½) ≈ ±10^583: an infinity, not NaN.)
        assert!(f64_at(HermiteHe, 0.5, 512.0).is_infinite());
        // Degrees 0 and 1 come first, as in ATen.
        assert_eq!(polynomial(HermiteH, 0.5, 1.0, true), 1.0);
    }

    #[test]
    fn infinities_and_nan() {
        assert_eq!(f64_at(ChebyshevT, f64::INFINITY, 3.0), f64::INFINITY);
        assert_eq!(
            f64_at(ChebyshevT, f64::NEG_INFINITY, 3.0),
            f64::NEG_INFINITY
        );
        assert_eq!(f64_at(ChebyshevV, f64::NEG_INFINITY, 4.0), f64::INFINITY);
        assert_eq!(f64_at(HermiteH, f64::NEG_INFINITY, 5.0), f64::NEG_INFINITY);
        assert_eq!(f64_at(LaguerreL, f64::INFINITY, 3.0), f64::NEG_INFINITY);
        assert_eq!(f64_at(LaguerreL, f64::INFINITY, 4.0), f64::INFINITY);
        assert_eq!(f64_at(LaguerreL, f64::NEG_INFINITY, 3.0), f64::INFINITY);
        assert_eq!(f64_at(LegendreP, f64::NEG_INFINITY, 3.0), f64::NEG_INFINITY);
        for p in Polynomial::ALL {
            assert_eq!(f64_at(p, f64::NAN, 0.0), 1.0, "{p:?}");
            assert!(f64_at(p, f64::NAN, 5.0).is_nan(), "{p:?}");
            assert!(f64_at(p, f64::NAN, 50.0).is_nan(), "{p:?}");
        }
    }

    #[test]
    fn overflow_is_an_infinity_of_the_right_sign() {
        // Tₙ(−2) ≈ (−1)ⁿ·(2 + √3)ⁿ/2 overflows near n = 540.
        assert_eq!(f64_at(ChebyshevT, -2.0, 2000.0), f64::INFINITY);
        assert_eq!(f64_at(ChebyshevT, -2.0, 2001.0), f64::NEG_INFINITY);
        assert_eq!(f64_at(ChebyshevW, -2.0, 2001.0), f64::NEG_INFINITY);
        // Lₙ(−100) > 0 grows past f64 (PyTorch: inf − inf = NaN).
        assert_eq!(f64_at(LaguerreL, -100.0, 3000.0), f64::INFINITY);
        // Hₙ(x) > 0 beyond its largest root (≈ √(2n)); He₅₀₀(50) ≈ 50⁵⁰⁰.
        assert_eq!(f64_at(HermiteH, 40.0, 300.0), f64::INFINITY);
        assert_eq!(f64_at(HermiteHe, -50.0, 501.0), f64::NEG_INFINITY);
        // He₁₈₀(½) ≈ ±10^164 passes 2^512, so its terms are rescaled on
        // the way: the bits are still the plain recurrence's.
        let (mut p, mut q) = (1.0f64, 0.5f64);
        for k in 1..180 {
            (p, q) = (q, 0.5 * q - k as f64 * p);
        }
        assert!(q.is_finite() && q.abs() > 2f64.powi(512));
        assert_eq!(f64_at(HermiteHe, 0.5, 180.0), q);
    }

    #[test]
    fn huge_x_overflows_to_the_leading_terms_sign() {
        // A step overflows with terms below 2^512 (not inf − inf).
        assert_eq!(f64_at(HermiteH, 1e155, 4.0), f64::INFINITY);
        assert_eq!(f64_at(HermiteHe, -1e200, 5.0), f64::NEG_INFINITY);
        assert_eq!(f64_at(LaguerreL, 1e160, 4.0), f64::INFINITY);
        assert_eq!(f64_at(LaguerreL, 1e160, 5.0), f64::NEG_INFINITY);
        assert_eq!(f64_at(LegendreP, -1e300, 5.0), f64::NEG_INFINITY);
        // acosh overflows past the step limit.
        assert_eq!(f64_at(ChebyshevU, 1e308, 1e5), f64::INFINITY);
        assert_eq!(f64_at(ChebyshevV, -1e308, 1e5 + 1.0), f64::NEG_INFINITY);
        assert_eq!(f64_at(ShiftedChebyshevW, 8e307, 1e5), f64::INFINITY);
        // Infinite x beats the step limit.
        assert_eq!(
            f64_at(LaguerreL, f64::INFINITY, 1e5 + 1.0),
            f64::NEG_INFINITY
        );
        assert_eq!(f64_at(LegendreP, f64::NEG_INFINITY, 1e5), f64::INFINITY);
        // n + 1 and 2n + 1 without ATen's int64 overflow.
        let n = 2f64.powi(62);
        assert_eq!(f64_at(ChebyshevV, -1.0, n), 2.0 * n + 1.0);
        assert_eq!(f64_at(ChebyshevU, 1.0, n), n + 1.0);
    }

    #[test]
    fn work_per_element_is_bounded() {
        // |x| barely above 1 grows too slowly to overflow: past the limit
        // the closed form cosh(n·acosh x), here cosh(10⁹·√(2·2⁻⁵²)).
        let x = 1.0 + f64::EPSILON;
        let want = (1e9 * (2.0 * f64::EPSILON).sqrt()).cosh();
        assert!(close(f64_at(ChebyshevT, x, 1e9), want, 1e-6));
        assert!(close(f64_at(ChebyshevT, -x, 1e9 + 1.0), -(want), 1e-6));
        // Uₙ(x) = sinh((n+1)t)/sinh t; Vₙ(−x) = (−1)ⁿWₙ(x).
        let t = acosh(x);
        let w = ((1e9 + 0.5) * t).sinh() / (t / 2.0).sinh();
        assert!(close(f64_at(ChebyshevV, -x, 1e9), w, 1e-6));
        assert!(close(
            f64_at(ChebyshevU, x, 1e9),
            ((1e9 + 1.0) * t).sinh() / t.sinh(),
            1e-6
        ));
        assert!(f64_at(LegendreP, 0.5, 1e12).is_nan());
        assert!(f64_at(LaguerreL, 0.5, 1e12).is_nan());
        assert!(f64_at(LegendreP, 0.5, MAX_RECURRENCE as f64).is_finite());
        assert!(f64_at(ChebyshevT, 0.5, 1e18).is_finite());
    }
}
