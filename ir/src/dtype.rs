//! Data types: every dtype of IR.md's table, its names and its properties.
//!
//! PyTorch rule: "Tensor Attributes — torch.dtype", plus `torch.finfo` and
//! `torch.iinfo`. One table ([`DType::info`]) holds every per-dtype fact; the
//! rest of Kiln asks it.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind, Result};

/// A tensor element type, in the order of the oracle's `dtype_order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `float32` (`torch.float`): IEEE single precision.
    F32,
    /// `float64` (`torch.double`): IEEE double precision.
    F64,
    /// `float16` (`torch.half`): IEEE half precision.
    F16,
    /// `bfloat16`: f32's 8-bit exponent with a 7-bit mantissa.
    BF16,
    /// `complex32` (`torch.chalf`): a pair of f16.
    C32,
    /// `complex64` (`torch.cfloat`): a pair of f32.
    C64,
    /// `complex128` (`torch.cdouble`): a pair of f64.
    C128,
    /// `float8_e4m3fn`: 4 exponent and 3 mantissa bits, NaN but no
    /// infinities; a shell dtype.
    F8E4M3FN,
    /// `float8_e5m2`: 5 exponent and 2 mantissa bits, with infinities; a
    /// shell dtype.
    F8E5M2,
    /// `float8_e4m3fnuz`: like `float8_e4m3fn`, with no negative zero (its
    /// bit pattern is the one NaN) and a shifted exponent; a shell dtype.
    F8E4M3FNUZ,
    /// `float8_e5m2fnuz`: 5 exponent and 2 mantissa bits, no infinities and
    /// no negative zero (its bit pattern is the one NaN); a shell dtype.
    F8E5M2FNUZ,
    /// `float8_e8m0fnu`: an 8-bit exponent and no sign or mantissa, so only
    /// powers of two (the MX formats' scales); a shell dtype.
    F8E8M0FNU,
    /// `float4_e2m1fn_x2`: one element is a byte holding two 4-bit floats
    /// (2 exponent bits and 1 mantissa bit each); a shell dtype.
    F4E2M1FNX2,
    /// `uint8`: an unsigned byte.
    U8,
    /// `int8`: a signed byte.
    I8,
    /// `int16` (`torch.short`).
    I16,
    /// `int32` (`torch.int`).
    I32,
    /// `int64` (`torch.long`): the dtype of integer scalars and indices.
    I64,
    /// `uint16`: barebones unsigned (see [`DType::is_barebones_unsigned`]).
    U16,
    /// `uint32`: barebones unsigned (see [`DType::is_barebones_unsigned`]).
    U32,
    /// `uint64`: barebones unsigned (see [`DType::is_barebones_unsigned`]); also
    /// the dtype of integer scalars beyond int64.
    U64,
    /// `bool`: `false` or `true`, stored in a byte.
    Bool,
}

/// PyTorch's dtype categories, ordered as type promotion orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// `bool` alone.
    Bool,
    /// The signed and unsigned integers.
    Integral,
    /// The real floating dtypes, float8 and packed float4 included.
    Floating,
    /// The complex dtypes.
    Complex,
}

/// Static facts about one dtype.
#[derive(Debug)]
pub struct DTypeInfo {
    /// IR.md's short name, e.g. `f32`.
    pub short: &'static str,
    /// PyTorch's canonical name, e.g. `float32`.
    pub torch: &'static str,
    /// Every name `torch.<name>` that is this dtype.
    pub aliases: &'static [&'static str],
    /// The C++ `ScalarType` name PyTorch's error messages use (`Float`).
    pub scalar_type_name: &'static str,
    /// The C++ element type PyTorch's matmul errors print (`float`, `c10::Half`).
    pub cpp_type_name: &'static str,
    /// Bytes per element (`torch.dtype.itemsize`); a packed float4 pair is
    /// one element.
    pub itemsize: usize,
    /// The category, which decides type promotion across dtypes.
    pub category: Category,
    /// `torch.dtype.is_signed`: true for the signed integers and every
    /// float and complex dtype except the unsigned `float8_e8m0fnu`.
    pub is_signed: bool,
    /// Float formats: (mantissa bits, exponent bits as an unbiased range) are
    /// summarised by the finfo figures below.
    finfo: Option<FloatFormat>,
    iinfo: Option<(i128, i128)>,
}

/// The figures `torch.finfo` reports, for one floating format.
#[derive(Clone, Copy, Debug, PartialEq)]
struct FloatFormat {
    bits: u32,
    /// log2 of machine epsilon.
    eps_exp: i32,
    max: f64,
    /// The most negative finite value (positive for unsigned formats).
    min: f64,
    /// log2 of the smallest normal value.
    tiny_exp: i32,
    /// `digits10` of the format: resolution is 10^-digits10.
    digits10: i32,
}

/// `torch.finfo(dtype)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FInfo {
    /// The number of bits the format occupies.
    pub bits: u32,
    /// Machine epsilon: the gap between 1.0 and the next larger value.
    pub eps: f64,
    /// The largest finite value.
    pub max: f64,
    /// The most negative finite value (for the unsigned `float8_e8m0fnu`,
    /// the smallest positive one).
    pub min: f64,
    /// The smallest positive normal value; the same as `smallest_normal`.
    pub tiny: f64,
    /// The smallest positive normal value (subnormals go below it).
    pub smallest_normal: f64,
    /// The approximate decimal resolution, `10^-digits10`.
    pub resolution: f64,
    /// The real dtype the figures describe (complex dtypes report their parts).
    pub dtype: DType,
}

/// `torch.iinfo(dtype)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IInfo {
    /// The number of bits the type occupies.
    pub bits: u32,
    /// The smallest value (0 for the unsigned types).
    pub min: i128,
    /// The largest value.
    pub max: i128,
    /// The integer dtype the figures describe.
    pub dtype: DType,
}

const fn pow2(exp: i32) -> f64 {
    // Exact for the exponents used here (normal f64 range).
    f64::from_bits(((exp + 1023) as u64) << 52)
}

const fn float(
    bits: u32,
    mantissa: i32,
    max: f64,
    min: f64,
    tiny_exp: i32,
    digits10: i32,
) -> Option<FloatFormat> {
    Some(FloatFormat {
        bits,
        eps_exp: -mantissa,
        max,
        min,
        tiny_exp,
        digits10,
    })
}

const F32_MAX: f64 = f32::MAX as f64;
const BF16_MAX: f64 = 3.3895313892515355e38;

macro_rules! info {
    ($short:literal, $torch:literal, [$($alias:literal),*], $sname:literal, $cpp:literal, $size:expr, $cat:ident, $signed:expr, $finfo:expr, $iinfo:expr) => {
        DTypeInfo {
            short: $short,
            torch: $torch,
            aliases: &[$($alias),*],
            scalar_type_name: $sname,
            cpp_type_name: $cpp,
            itemsize: $size,
            category: Category::$cat,
            is_signed: $signed,
            finfo: $finfo,
            iinfo: $iinfo,
        }
    };
}

static INFOS: [DTypeInfo; 22] = [
    info!(
        "f32",
        "float32",
        ["float", "float32"],
        "Float",
        "float",
        4,
        Floating,
        true,
        float(32, 23, F32_MAX, -F32_MAX, -126, 6),
        None
    ),
    info!(
        "f64",
        "float64",
        ["double", "float64"],
        "Double",
        "double",
        8,
        Floating,
        true,
        float(64, 52, f64::MAX, f64::MIN, -1022, 15),
        None
    ),
    info!(
        "f16",
        "float16",
        ["float16", "half"],
        "Half",
        "c10::Half",
        2,
        Floating,
        true,
        float(16, 10, 65504.0, -65504.0, -14, 3),
        None
    ),
    info!(
        "bf16",
        "bfloat16",
        ["bfloat16"],
        "BFloat16",
        "c10::BFloat16",
        2,
        Floating,
        true,
        float(16, 7, BF16_MAX, -BF16_MAX, -126, 2),
        None
    ),
    info!(
        "c32",
        "complex32",
        ["chalf", "complex32"],
        "ComplexHalf",
        "c10::complex<c10::Half>",
        4,
        Complex,
        true,
        None,
        None
    ),
    info!(
        "c64",
        "complex64",
        ["cfloat", "complex64"],
        "ComplexFloat",
        "c10::complex<float>",
        8,
        Complex,
        true,
        None,
        None
    ),
    info!(
        "c128",
        "complex128",
        ["cdouble", "complex128"],
        "ComplexDouble",
        "c10::complex<double>",
        16,
        Complex,
        true,
        None,
        None
    ),
    info!(
        "f8e4m3fn",
        "float8_e4m3fn",
        ["float8_e4m3fn"],
        "Float8_e4m3fn",
        "c10::Float8_e4m3fn",
        1,
        Floating,
        true,
        float(8, 3, 448.0, -448.0, -6, 0),
        None
    ),
    info!(
        "f8e5m2",
        "float8_e5m2",
        ["float8_e5m2"],
        "Float8_e5m2",
        "c10::Float8_e5m2",
        1,
        Floating,
        true,
        float(8, 2, 57344.0, -57344.0, -14, 0),
        None
    ),
    info!(
        "f8e4m3fnuz",
        "float8_e4m3fnuz",
        ["float8_e4m3fnuz"],
        "Float8_e4m3fnuz",
        "c10::Float8_e4m3fnuz",
        1,
        Floating,
        true,
        float(8, 3, 240.0, -240.0, -7, 0),
        None
    ),
    info!(
        "f8e5m2fnuz",
        "float8_e5m2fnuz",
        ["float8_e5m2fnuz"],
        "Float8_e5m2fnuz",
        "c10::Float8_e5m2fnuz",
        1,
        Floating,
        true,
        float(8, 2, 57344.0, -57344.0, -15, 0),
        None
    ),
    info!(
        "f8e8m0fnu",
        "float8_e8m0fnu",
        ["float8_e8m0fnu"],
        "Float8_e8m0fnu",
        "c10::Float8_e8m0fnu",
        1,
        Floating,
        false,
        float(8, 0, pow2(127), pow2(-127), -127, 0),
        None
    ),
    info!(
        "f4e2m1fnx2",
        "float4_e2m1fn_x2",
        ["float4_e2m1fn_x2"],
        "Float4_e2m1fn_x2",
        "c10::Float4_e2m1fn_x2",
        1,
        Floating,
        true,
        None,
        None
    ),
    info!(
        "u8",
        "uint8",
        ["uint8"],
        "Byte",
        "unsigned char",
        1,
        Integral,
        false,
        None,
        Some((0, u8::MAX as i128))
    ),
    info!(
        "i8",
        "int8",
        ["int8"],
        "Char",
        "signed char",
        1,
        Integral,
        true,
        None,
        Some((i8::MIN as i128, i8::MAX as i128))
    ),
    info!(
        "i16",
        "int16",
        ["int16", "short"],
        "Short",
        "short int",
        2,
        Integral,
        true,
        None,
        Some((i16::MIN as i128, i16::MAX as i128))
    ),
    info!(
        "i32",
        "int32",
        ["int", "int32"],
        "Int",
        "int",
        4,
        Integral,
        true,
        None,
        Some((i32::MIN as i128, i32::MAX as i128))
    ),
    info!(
        "i64",
        "int64",
        ["int64", "long"],
        "Long",
        "long int",
        8,
        Integral,
        true,
        None,
        Some((i64::MIN as i128, i64::MAX as i128))
    ),
    info!(
        "u16",
        "uint16",
        ["uint16"],
        "UInt16",
        "short unsigned int",
        2,
        Integral,
        false,
        None,
        Some((0, u16::MAX as i128))
    ),
    info!(
        "u32",
        "uint32",
        ["uint32"],
        "UInt32",
        "unsigned int",
        4,
        Integral,
        false,
        None,
        Some((0, u32::MAX as i128))
    ),
    info!(
        "u64",
        "uint64",
        ["uint64"],
        "UInt64",
        "long unsigned int",
        8,
        Integral,
        false,
        None,
        Some((0, u64::MAX as i128))
    ),
    info!(
        "bool",
        "bool",
        ["bool"],
        "Bool",
        "bool",
        1,
        Bool,
        false,
        None,
        None
    ),
];

impl DType {
    /// Every dtype, in the oracle's order.
    pub const ALL: [DType; 22] = [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::C32,
        DType::C64,
        DType::C128,
        DType::F8E4M3FN,
        DType::F8E5M2,
        DType::F8E4M3FNUZ,
        DType::F8E5M2FNUZ,
        DType::F8E8M0FNU,
        DType::F4E2M1FNX2,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::Bool,
    ];

    /// Every static fact about this dtype, from the one table.
    pub fn info(self) -> &'static DTypeInfo {
        &INFOS[self as usize]
    }

    /// IR.md's short name (`f32`), which `.kir` text and `Display` use.
    pub fn short_name(self) -> &'static str {
        self.info().short
    }

    /// PyTorch's canonical name (`float32`), without the `torch.` prefix.
    pub fn torch_name(self) -> &'static str {
        self.info().torch
    }

    /// The C++ `ScalarType` name that appears in PyTorch's messages.
    pub fn scalar_type_name(self) -> &'static str {
        self.info().scalar_type_name
    }

    /// Bytes per element (`torch.dtype.itemsize`).
    pub fn itemsize(self) -> usize {
        self.info().itemsize
    }

    /// Bits per element, `8 * itemsize` (8 for a packed float4 pair).
    pub fn bits(self) -> u32 {
        self.itemsize() as u32 * 8
    }

    /// The dtype's category: bool, integral, floating or complex.
    pub fn category(self) -> Category {
        self.info().category
    }

    /// Real floating, float8 and packed float4 included, complex excluded
    /// (`torch.is_floating_point`).
    pub fn is_floating_point(self) -> bool {
        self.category() == Category::Floating
    }

    /// One of the complex dtypes (`torch.is_complex`).
    pub fn is_complex(self) -> bool {
        self.category() == Category::Complex
    }

    /// Integral, bool excluded (PyTorch's `isIntegralType(t, includeBool=false)`).
    pub fn is_integral(self) -> bool {
        self.category() == Category::Integral
    }

    /// `bool`, the only dtype of its category.
    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }

    /// Whether the dtype holds negative values (`torch.dtype.is_signed`):
    /// complex dtypes are signed; bool and `float8_e8m0fnu` are not.
    pub fn is_signed(self) -> bool {
        self.info().is_signed
    }

    /// The eight-bit float formats.
    pub fn is_float8(self) -> bool {
        matches!(
            self,
            DType::F8E4M3FN
                | DType::F8E5M2
                | DType::F8E4M3FNUZ
                | DType::F8E5M2FNUZ
                | DType::F8E8M0FNU
        )
    }

    /// uint16/32/64, which PyTorch only half supports ("barebones unsigned").
    pub fn is_barebones_unsigned(self) -> bool {
        matches!(self, DType::U16 | DType::U32 | DType::U64)
    }

    /// Shell dtypes can be created, viewed, reshaped and concatenated; most
    /// arithmetic refuses them (the float8 formats and packed float4).
    pub fn is_shell(self) -> bool {
        self.is_float8() || self == DType::F4E2M1FNX2
    }

    /// Whether `to` holds every value of `self` exactly, so that a cast to
    /// `to` loses nothing (NaN payloads aside): what lets an optimizer
    /// shorten `cast(cast(x, a), b)` to `cast(x, b)`.
    pub fn casts_losslessly_to(self, to: DType) -> bool {
        use DType::*;
        if self == to {
            return true;
        }
        if self.is_shell() || to.is_shell() {
            return false;
        }
        // Significand bits of a float (or of a complex dtype's parts).
        let significand = |d: DType| match d {
            F16 | C32 => 11,
            BF16 => 8,
            F32 | C64 => 24,
            F64 | C128 => 53,
            _ => 0,
        };
        // Bits an integer dtype needs for its magnitude, and its signedness.
        let magnitude = |d: DType| match d {
            Bool => 1,
            U8 => 8,
            I8 => 7,
            U16 => 16,
            I16 => 15,
            U32 => 32,
            I32 => 31,
            U64 => 64,
            _ => 63,
        };
        match (self.category(), to.category()) {
            (Category::Bool, _) => true,
            (Category::Integral, Category::Integral) => {
                if self.is_signed() && !to.is_signed() {
                    false
                } else {
                    magnitude(self) <= magnitude(to)
                }
            }
            (Category::Integral, Category::Floating | Category::Complex) => {
                // A float holds every integer up to 2^significand.
                magnitude(self) <= significand(to)
            }
            (Category::Floating, Category::Floating) | (Category::Floating, Category::Complex) => {
                let widens = significand(self) <= significand(to);
                // f16 and bf16 trade range for precision: neither holds the other.
                widens && !matches!((self, to), (F16, BF16) | (BF16, F16) | (BF16, C32))
            }
            (Category::Complex, Category::Complex) => significand(self) <= significand(to),
            _ => false,
        }
    }

    /// Whether `cast(cast(x, via), to)` equals `cast(x, to)` for every `x`
    /// of this dtype, so that an optimizer may drop the cast to `via`.
    /// `via` must hold every value exactly, and, since PyTorch converts
    /// out-of-range values to integers differently from each category
    /// (integers wrap, floats truncate as x86 does, complex values go
    /// through 64 bits for uint32), a cast to an integer dtype must start
    /// from the same category.
    pub fn cast_through_is_exact(self, via: DType, to: DType) -> bool {
        self.casts_losslessly_to(via)
            && (self.category() == via.category()
                || self.category() == Category::Bool
                || to.category() != Category::Integral)
    }

    /// f16 and bf16: stored in 16 bits, computed in f32 by PyTorch's CPU kernels.
    pub fn is_reduced_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16)
    }

    /// The dtype PyTorch's CPU kernels compute this dtype's values in
    /// ("opmath"): f32 for the 16- and 8-bit floats (complex32 in
    /// complex64), the dtype itself otherwise.
    pub fn opmath(self) -> DType {
        if self.is_reduced_float() || self.is_float8() {
            DType::F32
        } else if self == DType::C32 {
            DType::C64
        } else {
            self
        }
    }

    /// The real counterpart of a complex dtype (`c64` → `f32`); others map to themselves.
    pub fn to_real(self) -> DType {
        match self {
            DType::C32 => DType::F16,
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            other => other,
        }
    }

    /// The complex counterpart of a floating dtype (`f32` → `c64`), as
    /// PyTorch's `toComplexType`.
    pub fn to_complex(self) -> Result<DType> {
        match self {
            DType::F16 | DType::C32 => Ok(DType::C32),
            DType::F32 | DType::C64 => Ok(DType::C64),
            DType::F64 | DType::C128 => Ok(DType::C128),
            DType::BF16 => Err(Error::new(
                ErrorKind::Unsupported,
                "the complex counterpart of bfloat16 is bcomplex32, which is not a Kiln dtype",
            )),
            other => Err(Error::new(
                ErrorKind::Promotion,
                format!(
                    "Unknown Complex ScalarType for {}",
                    other.scalar_type_name()
                ),
            )),
        }
    }

    /// `torch.finfo(dtype)`.
    pub fn finfo(self) -> Result<FInfo> {
        let real = self.to_real();
        if !real.is_floating_point() {
            return Err(Error::new(
                ErrorKind::DType,
                format!("finfo needs a floating point or complex dtype, not {self} (use iinfo)"),
            ));
        }
        let Some(format) = real.info().finfo else {
            return Err(Error::new(
                ErrorKind::DType,
                format!("finfo is not defined for {self}: PyTorch implements none of its figures"),
            ));
        };
        let resolution: f64 = format!("1e-{}", format.digits10)
            .parse()
            .expect("a literal float always parses");
        Ok(FInfo {
            bits: format.bits,
            eps: pow2(format.eps_exp),
            max: format.max,
            min: format.min,
            tiny: pow2(format.tiny_exp),
            smallest_normal: pow2(format.tiny_exp),
            resolution,
            dtype: real,
        })
    }

    /// `torch.iinfo(dtype)`.
    pub fn iinfo(self) -> Result<IInfo> {
        match self.info().iinfo {
            Some((min, max)) => Ok(IInfo {
                bits: self.bits(),
                min,
                max,
                dtype: self,
            }),
            None if self == DType::Bool => Err(Error::new(
                ErrorKind::DType,
                "iinfo does not support bool (as torch.iinfo)",
            )),
            None => Err(Error::new(
                ErrorKind::DType,
                format!("iinfo needs an integer dtype, not {self} (use finfo)"),
            )),
        }
    }

    /// Parses a dtype name: IR.md's short names, PyTorch's names and aliases,
    /// optionally prefixed with `torch.`.
    pub fn from_name(name: &str) -> Option<DType> {
        let name = name.strip_prefix("torch.").unwrap_or(name);
        DType::ALL.into_iter().find(|d| {
            d.short_name() == name || d.torch_name() == name || d.info().aliases.contains(&name)
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

impl FromStr for DType {
    type Err = Error;

    fn from_str(s: &str) -> Result<DType> {
        DType::from_name(s).ok_or_else(|| {
            Error::new(
                ErrorKind::Attribute,
                format!("unknown dtype '{s}' (expected a name such as f32, float32, half, i64, long, bool)"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.short_name()), Some(d));
            assert_eq!(DType::from_name(d.torch_name()), Some(d));
            assert_eq!(d.to_string().parse::<DType>().unwrap(), d);
        }
        assert_eq!(DType::from_name("torch.half"), Some(DType::F16));
        assert_eq!(DType::from_name("cfloat"), Some(DType::C64));
        assert!("float31".parse::<DType>().is_err());
    }

    #[test]
    fn table_order_matches_enum() {
        for (i, d) in DType::ALL.into_iter().enumerate() {
            assert_eq!(d as usize, i);
        }
    }

    #[test]
    fn finfo_hand_checked() {
        let f = DType::F16.finfo().unwrap();
        assert_eq!(f.eps, 0.0009765625);
        assert_eq!(f.max, 65504.0);
        assert_eq!(f.resolution, 0.001);
        assert_eq!(DType::C64.finfo().unwrap().dtype, DType::F32);
        assert!(DType::I32.finfo().is_err());
        assert_eq!(DType::U64.iinfo().unwrap().max, u64::MAX as i128);
    }
}
