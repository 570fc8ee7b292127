//! Attributes: the `{name = value}` part of an instruction, how each typed
//! field of an [`Op`](super::Op) is read from it and written back, and
//! the string-valued enum attributes (`rounding_mode`, `approximate`).
//!
//! Every attribute type implements [`AttrType`]; the op table's fields are
//! parsed and printed through it, so an op declares its attributes once
//! (name, type, default) and gets both directions.

use std::fmt;

use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::MemoryFormat;
use crate::scalar::{F64, Scalar};

/// An attribute value as written in `.kir`.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// An integer, float, bool or complex literal.
    Scalar(Scalar),
    /// A string `"..."`.
    Str(String),
    /// A list of integers `[1, -1]`.
    List(Vec<i64>),
    /// A dtype name.
    DType(DType),
    /// A device.
    Device(Device),
    /// A memory-format keyword.
    MemoryFormat(MemoryFormat),
    /// `%name`: a tensor given by name. The older `clamp %x {min = %lo}`
    /// spelling of an optional tensor operand; the parser moves it into
    /// the operand slot of that name.
    Value(String),
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Scalar(s) => write!(f, "{s}"),
            AttrValue::Str(s) => write!(f, "\"{s}\""),
            AttrValue::List(l) => f.write_str(&crate::view::format_shape(l)),
            AttrValue::DType(d) => write!(f, "{d}"),
            AttrValue::Device(d) => write!(f, "{d}"),
            AttrValue::MemoryFormat(m) => write!(f, "{m}"),
            AttrValue::Value(v) => write!(f, "%{v}"),
        }
    }
}

/// The attributes of one instruction, consumed as its op is built so that
/// leftovers can be reported as unknown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs {
    entries: Vec<(String, AttrValue)>,
}

impl Attrs {
    /// Attributes in the order they were written.
    pub fn new(entries: Vec<(String, AttrValue)>) -> Attrs {
        Attrs { entries }
    }

    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The names not consumed yet.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// Removes and returns the attribute `name`.
    pub fn take(&mut self, name: &str) -> Option<AttrValue> {
        let i = self.entries.iter().position(|(n, _)| n == name)?;
        Some(self.entries.remove(i).1)
    }

    /// Adds an attribute (an alias's implied value); an attribute of that
    /// name written too is an error.
    pub fn imply(&mut self, op: &str, name: &str, value: AttrValue) -> Result<()> {
        if self.entries.iter().any(|(n, _)| n == name) {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("{op}: attribute '{name}' is implied by the op's name"),
            ));
        }
        self.entries.push((name.to_string(), value));
        Ok(())
    }

    /// Takes and parses attribute `name`, or `None` when it is absent.
    pub fn parse<T: AttrType>(&mut self, op: &str, name: &str) -> Result<Option<T>> {
        self.take(name)
            .map(|v| T::from_attr(v).map_err(|expected| bad_attr(op, name, expected)))
            .transpose()
    }

    /// Takes and parses attribute `name`, which must be there.
    pub fn require<T: AttrType>(&mut self, op: &str, name: &str) -> Result<T> {
        self.parse(op, name)?.ok_or_else(|| {
            Error::new(
                ErrorKind::Attribute,
                format!("{op}: missing attribute '{name}'"),
            )
        })
    }

    /// Fails on any attribute that was not consumed.
    pub fn finish(self, op: &str) -> Result<()> {
        match self.entries.first() {
            None => Ok(()),
            Some((name, _)) => Err(Error::new(
                ErrorKind::Attribute,
                format!("{op}: unknown attribute '{name}'"),
            )),
        }
    }
}

/// What a wrongly typed attribute reports.
#[derive(Clone, Debug)]
pub enum AttrMismatch {
    /// The value is of another kind: "must be {expected}, got {value}".
    Expected(&'static str, AttrValue),
    /// The value is of the right kind but not allowed: the whole message.
    Message(String),
}

fn bad_attr(op: &str, name: &str, mismatch: AttrMismatch) -> Error {
    let message = match mismatch {
        AttrMismatch::Expected(expected, got) => {
            format!("{op}: attribute '{name}' must be {expected}, got {got}")
        }
        AttrMismatch::Message(m) => m,
    };
    Error::new(ErrorKind::Attribute, message)
}

/// A type an op attribute can have: read from an [`AttrValue`] and written
/// back to one.
pub trait AttrType: Sized {
    /// Reads the attribute from its written value.
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch>;

    /// The value to write; `None` writes nothing (an absent optional).
    fn to_attr(&self) -> Option<AttrValue>;
}

impl AttrType for i64 {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::Scalar(Scalar::Int(v)) => Ok(v),
            other => Err(AttrMismatch::Expected("an integer", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::Scalar(Scalar::Int(*self)))
    }
}

impl AttrType for bool {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::Scalar(Scalar::Bool(v)) => Ok(v),
            other => Err(AttrMismatch::Expected("true or false", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::Scalar(Scalar::Bool(*self)))
    }
}

/// A `float`: an integer literal is taken as its value.
impl AttrType for F64 {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::Scalar(Scalar::Float(v)) => Ok(F64(v)),
            AttrValue::Scalar(Scalar::Int(v)) => Ok(F64(v as f64)),
            other => Err(AttrMismatch::Expected("a number", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::Scalar(Scalar::Float(self.0)))
    }
}

/// A `Scalar` argument: a literal whose category counts for promotion.
impl AttrType for Scalar {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::Scalar(s) => Ok(s),
            other => Err(AttrMismatch::Expected("a number or boolean", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::Scalar(*self))
    }
}

impl AttrType for String {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::Str(s) => Ok(s),
            other => Err(AttrMismatch::Expected("a string", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::Str(self.clone()))
    }
}

/// An `int[]`; a single integer is taken as a one-element list.
impl AttrType for Vec<i64> {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::List(l) => Ok(l),
            AttrValue::Scalar(Scalar::Int(v)) => Ok(vec![v]),
            other => Err(AttrMismatch::Expected("a list of integers", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::List(self.clone()))
    }
}

impl AttrType for DType {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::DType(d) => Ok(d),
            other => Err(AttrMismatch::Expected("a dtype", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::DType(*self))
    }
}

impl AttrType for Device {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::Device(d) => Ok(d),
            other => Err(AttrMismatch::Expected("a device", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::Device(*self))
    }
}

impl AttrType for MemoryFormat {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::MemoryFormat(m) => Ok(m),
            other => Err(AttrMismatch::Expected("a memory format", other)),
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(AttrValue::MemoryFormat(*self))
    }
}

/// An optional argument (`int?`, `ScalarType?`, ...): absent is `None`.
impl<T: AttrType> AttrType for Option<T> {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        T::from_attr(value).map(Some)
    }

    fn to_attr(&self) -> Option<AttrValue> {
        self.as_ref().and_then(T::to_attr)
    }
}

/// Declares a string-valued attribute as a Rust enum (`str` arguments of
/// ATen schemas that take a fixed set of values), with the message PyTorch
/// gives for any other string.
macro_rules! attr_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $message:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The string `.kir` and PyTorch spell it with.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text ),+
                }
            }
        }

        impl AttrType for $name {
            fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
                match value {
                    AttrValue::Str(s) => $name::ALL
                        .iter()
                        .copied()
                        .find(|v| v.as_str() == s)
                        .ok_or_else(|| AttrMismatch::Message(format!($message, s))),
                    other => Err(AttrMismatch::Expected("a string", other)),
                }
            }

            fn to_attr(&self) -> Option<AttrValue> {
                Some(AttrValue::Str(self.as_str().to_string()))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

attr_enum! {
    /// `gelu`'s `approximate`.
    GeluApproximate, "approximate argument must be either none or tanh, got '{}'" {
        /// The exact gelu, `0.5·x·(1 + erf(x/√2))`.
        None = "none",
        /// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
        Tanh = "tanh",
    }
}

attr_enum! {
    /// `div`'s `rounding_mode`.
    RoundingMode, "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'" {
        /// Rounds the quotient toward zero (C-style integer division).
        Trunc = "trunc",
        /// Rounds the quotient down (Python's `//`).
        Floor = "floor",
    }
}

attr_enum! {
    /// `scatter_reduce`'s `reduce`: how values landing on one place combine.
    ScatterReduce, "reduce argument must be either sum, prod, mean, amax or amin, got {}" {
        /// Their sum.
        Sum = "sum",
        /// Their product.
        Prod = "prod",
        /// Their mean (integers divided with rounding toward negative infinity).
        Mean = "mean",
        /// Their maximum.
        Amax = "amax",
        /// Their minimum.
        Amin = "amin",
    }
}

attr_enum! {
    /// A loss's `reduction` (ATen's `Reduction` enum, as
    /// `torch.nn.functional` spells it).
    LossReduction, "{} is not a valid value for reduction" {
        /// The loss per element.
        None = "none",
        /// The mean of the losses (for the class-index losses, weighted).
        Mean = "mean",
        /// The sum of the losses.
        Sum = "sum",
        /// `kl_div` only: the sum divided by the batch size.
        Batchmean = "batchmean",
    }
}

attr_enum! {
    /// `searchsorted`'s `side`: which of equal entries a value goes before
    /// or after.
    SearchSide, "torch.searchsorted(): side can only be 'left' or 'right' but got {}" {
        /// Before equal entries (the first suitable position).
        Left = "left",
        /// After equal entries (the last suitable position).
        Right = "right",
    }
}

/// A convolution's `padding`: zeros added on both sides of each spatial
/// dim (one number for all, or one per dim), or PyTorch's strings:
/// `"valid"` (none) and `"same"` (the output as large as the input, the
/// odd extra zero on the far side).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConvPadding {
    /// Zeros per side, per dim (or one for every dim).
    Sizes(Vec<i64>),
    /// `"same"`.
    Same,
    /// `"valid"`.
    Valid,
}

impl AttrType for ConvPadding {
    fn from_attr(value: AttrValue) -> std::result::Result<Self, AttrMismatch> {
        match value {
            AttrValue::Str(s) if s == "same" => Ok(ConvPadding::Same),
            AttrValue::Str(s) if s == "valid" => Ok(ConvPadding::Valid),
            AttrValue::Str(s) => Err(AttrMismatch::Message(format!(
                "Invalid padding string: '{s}'"
            ))),
            other => match Vec::<i64>::from_attr(other) {
                Ok(sizes) => Ok(ConvPadding::Sizes(sizes)),
                Err(AttrMismatch::Expected(_, v)) => Err(AttrMismatch::Expected(
                    "a list of integers, \"same\" or \"valid\"",
                    v,
                )),
                Err(e) => Err(e),
            },
        }
    }

    fn to_attr(&self) -> Option<AttrValue> {
        Some(match self {
            ConvPadding::Sizes(l) => AttrValue::List(l.clone()),
            ConvPadding::Same => AttrValue::Str("same".into()),
            ConvPadding::Valid => AttrValue::Str("valid".into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_reads_report_the_attribute() {
        let mut a = Attrs::new(vec![
            ("dim".into(), AttrValue::Scalar(Scalar::Float(1.5))),
            ("dims".into(), AttrValue::Scalar(Scalar::Int(2))),
        ]);
        let err = a.parse::<i64>("softmax", "dim").unwrap_err();
        assert_eq!(
            err.message(),
            "softmax: attribute 'dim' must be an integer, got 1.5"
        );
        assert_eq!(a.parse::<Vec<i64>>("sum", "dims").unwrap(), Some(vec![2]));
        assert_eq!(
            a.require::<i64>("softmax", "dim").unwrap_err().message(),
            "softmax: missing attribute 'dim'"
        );
        let err = RoundingMode::from_attr(AttrValue::Str("up".into())).unwrap_err();
        assert!(matches!(err, AttrMismatch::Message(m) if m.contains("found 'up'")));
    }
}
