//! Scalar literals: the `2.5`, `-3`, `true`, `complex(1.0, -2.0)` operands of
//! `.kir` and the Rust numbers passed to tensor methods.
//!
//! PyTorch rule: a Python scalar is a "wrapped number"; for type promotion
//! only its category counts (bool, integral, floating, complex), never its
//! value or size — except that an integer beyond int64 is a uint64 scalar.

use std::fmt;

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::promotion::DefaultDType;

/// A scalar value with the Python type it stands for.
///
/// Two scalars are equal when they are the same literal: same kind and the
/// same bits (so `-0.0` and `0.0` differ, and a NaN equals itself). That is
/// the identity the IR needs (common subexpressions, the optimizer's
/// e-graph, kernel cache keys); numeric comparison is `to_f64`'s business.
#[derive(Clone, Copy, Debug)]
pub enum Scalar {
    /// A Python `bool`.
    Bool(bool),
    /// An integer that fits int64.
    Int(i64),
    /// An integer in (i64::MAX, u64::MAX]: PyTorch wraps it as uint64.
    UInt(u64),
    /// A Python `float`: a double, whatever the default dtype.
    Float(f64),
    /// A Python `complex`: real and imaginary parts, as doubles.
    Complex(f64, f64),
}

impl Scalar {
    /// The literal as a kind tag and bits: what identity compares.
    fn identity(self) -> (u8, u64, u64) {
        match self {
            Scalar::Bool(b) => (0, b as u64, 0),
            Scalar::Int(v) => (1, v as u64, 0),
            Scalar::UInt(v) => (2, v, 0),
            Scalar::Float(v) => (3, v.to_bits(), 0),
            Scalar::Complex(re, im) => (4, re.to_bits(), im.to_bits()),
        }
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for Scalar {}

impl std::hash::Hash for Scalar {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.identity().hash(state)
    }
}

impl PartialOrd for Scalar {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// An arbitrary but total order (by kind, then bits), for ordered containers.
impl Ord for Scalar {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.identity().cmp(&other.identity())
    }
}

/// A float attribute (`eps`, `negative_slope`, ...), compared and hashed by
/// its bits like a [`Scalar`], so that ops holding one are `Eq` and `Hash`.
#[derive(Clone, Copy, Debug, Default)]
pub struct F64(pub f64);

impl PartialEq for F64 {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for F64 {}

impl std::hash::Hash for F64 {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state)
    }
}

impl PartialOrd for F64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for F64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl From<f64> for F64 {
    fn from(v: f64) -> Self {
        F64(v)
    }
}

impl fmt::Display for F64 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_float(f, self.0)
    }
}

/// The promotion-relevant kind of a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    /// A `bool` scalar: promotes as `bool`.
    Bool,
    /// An integer that fits int64: promotes as `int64`.
    Int,
    /// An integer beyond int64: promotes as `uint64`.
    UInt64,
    /// A `float` scalar: promotes as the default dtype.
    Float,
    /// A `complex` scalar: promotes as the default dtype's complex
    /// counterpart.
    Complex,
}

impl Scalar {
    /// An integer literal of any size, as Python would pass it to PyTorch.
    pub fn from_i128(value: i128) -> Result<Scalar> {
        if let Ok(v) = i64::try_from(value) {
            Ok(Scalar::Int(v))
        } else if let Ok(v) = u64::try_from(value) {
            Ok(Scalar::UInt(v))
        } else {
            Err(Error::new(ErrorKind::Attribute, "int too big to convert"))
        }
    }

    /// The scalar's kind, all that type promotion looks at.
    pub fn kind(self) -> ScalarKind {
        match self {
            Scalar::Bool(_) => ScalarKind::Bool,
            Scalar::Int(_) => ScalarKind::Int,
            Scalar::UInt(_) => ScalarKind::UInt64,
            Scalar::Float(_) => ScalarKind::Float,
            Scalar::Complex(..) => ScalarKind::Complex,
        }
    }

    /// The dtype this scalar promotes as.
    pub fn promotion_dtype(self, default: DefaultDType) -> DType {
        self.kind().promotion_dtype(default)
    }

    /// The value as a complex number (real, imaginary); integers convert as
    /// C++ would (`u64`/`i64` → double).
    pub fn to_complex(self) -> (f64, f64) {
        match self {
            Scalar::Bool(b) => (b as u8 as f64, 0.0),
            Scalar::Int(v) => (v as f64, 0.0),
            Scalar::UInt(v) => (v as f64, 0.0),
            Scalar::Float(v) => (v, 0.0),
            Scalar::Complex(re, im) => (re, im),
        }
    }

    /// The real part as a double (integers convert as C++ would; a complex
    /// value's imaginary part is dropped).
    pub fn to_f64(self) -> f64 {
        self.to_complex().0
    }

    /// The value as a 64-bit integer: integers wrap (the bits PyTorch's
    /// int scalar holds); floats convert as Rust's `as` does (saturating,
    /// NaN to 0).
    pub fn to_i64_wrapping(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(v) => v,
            Scalar::UInt(v) => v as i64,
            Scalar::Float(v) => v as i64,
            Scalar::Complex(re, _) => re as i64,
        }
    }

    /// Whether the scalar is a `bool` literal.
    pub fn is_bool(self) -> bool {
        matches!(self, Scalar::Bool(_))
    }
}

impl ScalarKind {
    /// The dtype a scalar of this kind promotes as: `bool`, `int64`,
    /// `uint64`, or the default dtype (complex: its complex counterpart).
    pub fn promotion_dtype(self, default: DefaultDType) -> DType {
        match self {
            ScalarKind::Bool => DType::Bool,
            ScalarKind::Int => DType::I64,
            ScalarKind::UInt64 => DType::U64,
            ScalarKind::Float => default.dtype(),
            ScalarKind::Complex => default.complex(),
        }
    }
}

/// Writes a float so that `.kir`'s lexer reads it back as the same float literal.
pub fn write_float(f: &mut fmt::Formatter<'_>, v: f64) -> fmt::Result {
    if v.is_nan() {
        f.write_str("nan")
    } else if v.is_infinite() {
        f.write_str(if v > 0.0 { "inf" } else { "-inf" })
    } else {
        // `{:?}` is the shortest round-tripping form and always has a `.` or `e`.
        write!(f, "{v:?}")
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::UInt(v) => write!(f, "{v}"),
            Scalar::Float(v) => write_float(f, v),
            Scalar::Complex(re, im) => {
                f.write_str("complex(")?;
                write_float(f, re)?;
                f.write_str(", ")?;
                write_float(f, im)?;
                f.write_str(")")
            }
        }
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}

macro_rules! int_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Self {
                Scalar::Int(v as i64)
            }
        }
    )*};
}
int_scalar!(i8, i16, i32, i64, u8, u16, u32);

impl From<u64> for Scalar {
    fn from(v: u64) -> Self {
        match i64::try_from(v) {
            Ok(v) => Scalar::Int(v),
            Err(_) => Scalar::UInt(v),
        }
    }
}

impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Scalar::Float(v as f64)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_ints_become_uint64_then_overflow() {
        assert_eq!(
            Scalar::from_i128(i64::MAX as i128).unwrap(),
            Scalar::Int(i64::MAX)
        );
        assert_eq!(Scalar::from_i128(1 << 63).unwrap(), Scalar::UInt(1 << 63));
        let err = Scalar::from_i128(1 << 64).unwrap_err();
        assert_eq!(err.message(), "int too big to convert");
    }

    #[test]
    fn floats_print_as_float_literals() {
        assert_eq!(Scalar::Float(3.0).to_string(), "3.0");
        assert_eq!(Scalar::Float(1e-5).to_string(), "1e-5");
        assert_eq!(Scalar::Float(-0.0).to_string(), "-0.0");
        assert_eq!(Scalar::Float(f64::NEG_INFINITY).to_string(), "-inf");
        assert_eq!(Scalar::Complex(1.0, -2.0).to_string(), "complex(1.0, -2.0)");
    }
}
