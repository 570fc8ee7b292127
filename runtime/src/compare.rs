//! Comparing tensors: how backends are checked against the reference
//! interpreter.
//!
//! Integers and bools must be identical. Floats may differ by a few units in
//! the last place of their dtype (math functions and summation order differ
//! between implementations), or by an absolute amount for results near zero
//! that come from cancellation. NaN matches NaN whatever its payload; a
//! complex value with an infinite or NaN part matches any other such value.
//! A zero must have the reference's sign unless an absolute difference is
//! allowed (−0.0 and 0.0 are zero units in the last place apart, but a
//! nearest resampling that turns −0.0 into 0.0 is wrong).

use kiln_ir::{DType, Error, ErrorKind, Result};

use crate::convert::Elem;
use crate::tensor::Tensor;

/// How far a float result may be from the reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Units in the last place of the result dtype.
    pub ulps: u64,
    /// An absolute difference that is always accepted.
    pub abs: f64,
}

impl Tolerance {
    /// Bit-identical results.
    pub const EXACT: Tolerance = Tolerance { ulps: 0, abs: 0.0 };

    /// Within `ulps` units in the last place, with no absolute allowance.
    pub fn ulps(ulps: u64) -> Tolerance {
        Tolerance { ulps, abs: 0.0 }
    }

    /// The same tolerance, also accepting any difference of at most `abs`.
    pub fn with_abs(mut self, abs: f64) -> Tolerance {
        self.abs = abs;
        self
    }

    /// Kiln's bound for results computed with sums (reductions, matmul,
    /// softmax, layer_norm): summation order differs between
    /// implementations, so besides 2 ulps, an absolute error of 64 units of
    /// the accumulation precision (f32 for f16/bf16/f32, f64 for f64)
    /// relative to the largest magnitude among the results.
    pub fn for_sums(dtype: DType, largest: f64) -> Tolerance {
        let eps = if matches!(dtype, DType::F64 | DType::C128) {
            f64::EPSILON
        } else {
            f32::EPSILON as f64
        };
        Tolerance::ulps(2).with_abs(64.0 * eps * largest.max(1.0))
    }
}

/// The largest finite magnitude among a tensor's elements.
pub fn largest_magnitude(t: &Tensor) -> f64 {
    t.values()
        .into_iter()
        .flat_map(|v| {
            let (re, im) = v.complex();
            [re.abs(), im.abs()]
        })
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max)
}

/// Position of a float among the values of its dtype, so that adjacent
/// values differ by one (and +0 and -0 are both 0).
fn ordinal(x: f64, dtype: DType) -> i64 {
    let magnitude = match dtype {
        DType::F16 => (half::f16::from_f64(x).to_bits() & 0x7fff) as i64,
        DType::BF16 => (half::bf16::from_f64(x).to_bits() & 0x7fff) as i64,
        DType::F32 => ((x as f32).to_bits() & 0x7fff_ffff) as i64,
        _ => (x.to_bits() & 0x7fff_ffff_ffff_ffff) as i64,
    };
    if x.is_sign_negative() {
        -magnitude
    } else {
        magnitude
    }
}

fn ulp_distance(a: f64, b: f64, dtype: DType) -> u64 {
    (ordinal(a, dtype) as i128 - ordinal(b, dtype) as i128).unsigned_abs() as u64
}

fn float_close(got: f64, expected: f64, dtype: DType, tol: Tolerance) -> bool {
    if got.is_nan() || expected.is_nan() {
        return got.is_nan() && expected.is_nan();
    }
    if got == expected {
        // Zeros: without an absolute allowance, their signs must agree.
        return got != 0.0
            || tol.abs > 0.0
            || got.is_sign_negative() == expected.is_sign_negative();
    }
    if got.is_infinite() || expected.is_infinite() {
        return false;
    }
    (got - expected).abs() <= tol.abs || ulp_distance(got, expected, dtype) <= tol.ulps
}

fn element_close(got: Elem, expected: Elem, dtype: DType, tol: Tolerance) -> bool {
    let part = match dtype {
        DType::C32 => DType::F16,
        DType::C64 => DType::F32,
        DType::C128 => DType::F64,
        d => d,
    };
    match (got, expected) {
        (Elem::F(a), Elem::F(b)) => float_close(a, b, part, tol),
        (Elem::C(ar, ai), Elem::C(br, bi)) => {
            // Complex infinities have no portable bits: implementations
            // (C99 Annex G, BLAS) disagree on NaN against inf parts.
            let infinite = |r: f64, i: f64| !r.is_finite() || !i.is_finite();
            if infinite(ar, ai) || infinite(br, bi) {
                return infinite(ar, ai) && infinite(br, bi);
            }
            float_close(ar, br, part, tol) && float_close(ai, bi, part, tol)
        }
        (a, b) => a == b,
    }
}

/// Checks that `got` has the dtype and shape of `expected` and that every
/// element is within `tol`; the error names the first element that is not.
pub fn check_close(got: &Tensor, expected: &Tensor, tol: Tolerance) -> Result<()> {
    if got.dtype() != expected.dtype() || got.shape() != expected.shape() {
        return Err(Error::new(
            ErrorKind::Runtime,
            format!(
                "got {}, expected {}",
                got.tensor_type(),
                expected.tensor_type()
            ),
        ));
    }
    let shape = got.shape().to_vec();
    for (index, (a, b)) in
        crate::tensor::Indices::new(&shape).zip(got.values().into_iter().zip(expected.values()))
    {
        if !element_close(a, b, got.dtype(), tol) {
            return Err(Error::new(
                ErrorKind::Runtime,
                format!(
                    "element {index:?} of a {} tensor is {a:?}, expected {b:?} (tolerance {tol:?})",
                    got.dtype()
                ),
            ));
        }
    }
    Ok(())
}

/// The largest absolute difference between two tensors of one shape (0 for
/// matching NaNs and infinities).
pub fn max_abs_difference(a: &Tensor, b: &Tensor) -> Result<f64> {
    if a.shape() != b.shape() {
        return Err(Error::new(
            ErrorKind::Shape,
            format!(
                "cannot compare shapes {} and {}",
                kiln_ir::view::format_shape(a.shape()),
                kiln_ir::view::format_shape(b.shape())
            ),
        ));
    }
    let mut worst = 0f64;
    for (x, y) in a.values().into_iter().zip(b.values()) {
        let ((xr, xi), (yr, yi)) = (x.complex(), y.complex());
        for (p, q) in [(xr, yr), (xi, yi)] {
            if p != q && !(p.is_nan() && q.is_nan()) {
                worst = worst.max((p - q).abs());
            }
        }
    }
    Ok(worst)
}
