//! Element values and PyTorch's conversions between dtypes.
//!
//! An element is read as an [`Elem`] (bool, integer, float or complex, wide
//! enough for every dtype), computed on, and written back by converting to
//! the destination dtype exactly as PyTorch's CPU `copy_`/`to` does on
//! x86-64: floats round to nearest even (via f32 for the 16- and 8-bit
//! formats, as c10's constructors take a float), integers wrap, float to
//! integer truncates with x86's results for out-of-range values (the
//! oracle's `cast_values`), anything to bool tests for non-zero.

use half::{bf16, f16};
use kiln_ir::{DType, Scalar};

/// An element value. Integers of every width fit i128 (u64 included).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Elem {
    /// A bool.
    B(bool),
    /// An integer of any integer dtype (and float4_e2m1fn_x2's packed byte).
    I(i128),
    /// A real float of any float dtype (every one is exact in f64).
    F(f64),
    /// A complex value: real and imaginary parts.
    C(f64, f64),
}

impl Elem {
    /// The value of a scalar literal.
    pub fn from_scalar(s: Scalar) -> Elem {
        match s {
            Scalar::Bool(b) => Elem::B(b),
            Scalar::Int(i) => Elem::I(i as i128),
            Scalar::UInt(u) => Elem::I(u as i128),
            Scalar::Float(f) => Elem::F(f),
            Scalar::Complex(re, im) => Elem::C(re, im),
        }
    }

    /// The scalar literal this value is.
    pub fn to_scalar(self) -> Scalar {
        match self {
            Elem::B(b) => Scalar::Bool(b),
            Elem::I(i) => match i64::try_from(i) {
                Ok(i) => Scalar::Int(i),
                Err(_) => Scalar::UInt(i as u64),
            },
            Elem::F(f) => Scalar::Float(f),
            Elem::C(re, im) => Scalar::Complex(re, im),
        }
    }

    /// The value as a float (complex: its real part; bool: 0 or 1).
    pub fn f64(self) -> f64 {
        match self {
            Elem::B(b) => b as u8 as f64,
            Elem::I(i) => i as f64,
            Elem::F(x) => x,
            Elem::C(re, _) => re,
        }
    }

    /// The value as `(re, im)` (a real value has imaginary part 0).
    pub fn complex(self) -> (f64, f64) {
        match self {
            Elem::C(re, im) => (re, im),
            other => (other.f64(), 0.0),
        }
    }

    /// The value as an integer (floats and complex real parts truncate
    /// with Rust's saturating `as`, NaN giving 0; bool: 0 or 1). Not
    /// PyTorch's cast: that is [`convert`].
    pub fn int(self) -> i128 {
        match self {
            Elem::B(b) => b as i128,
            Elem::I(i) => i,
            Elem::F(x) => x as i128,
            Elem::C(re, _) => re as i128,
        }
    }

    /// Truthiness: non-zero (NaN is true, as in C++).
    pub fn truthy(self) -> bool {
        match self {
            Elem::B(b) => b,
            Elem::I(i) => i != 0,
            Elem::F(x) => x != 0.0,
            Elem::C(re, im) => re != 0.0 || im != 0.0,
        }
    }
}

/// float8 formats: exponent and mantissa widths, bias, and what happens
/// past the largest finite value.
#[derive(Clone, Copy)]
struct Minifloat {
    man: i32,
    bias: i32,
    max: f64,
    overflow: Overflow,
    /// fnuz formats have one NaN (0x80) and no negative zero.
    fnuz: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Overflow {
    /// Round to the largest finite value (e4m3fn: PyTorch's `to` saturates).
    Saturate,
    Infinity,
    NaN,
}

fn minifloat(d: DType) -> Option<Minifloat> {
    Some(match d {
        DType::F8E4M3FN => Minifloat {
            man: 3,
            bias: 7,
            max: 448.0,
            overflow: Overflow::Saturate,
            fnuz: false,
        },
        DType::F8E5M2 => Minifloat {
            man: 2,
            bias: 15,
            max: 57344.0,
            overflow: Overflow::Infinity,
            fnuz: false,
        },
        DType::F8E4M3FNUZ => Minifloat {
            man: 3,
            bias: 8,
            max: 240.0,
            overflow: Overflow::NaN,
            fnuz: true,
        },
        DType::F8E5M2FNUZ => Minifloat {
            man: 2,
            bias: 16,
            max: 57344.0,
            overflow: Overflow::NaN,
            fnuz: true,
        },
        _ => return None,
    })
}

impl Minifloat {
    fn exp_bits(&self) -> u32 {
        7 - self.man as u32
    }

    fn nan(&self, negative: bool) -> u8 {
        match (self.fnuz, self.overflow) {
            (true, _) => 0x80,
            (false, Overflow::Infinity) => 0x7f,
            _ => 0x7f | if negative { 0x80 } else { 0 },
        }
    }

    /// Rounds an f32 to this format (round to nearest, ties to even).
    fn encode(&self, x: f32) -> u8 {
        let negative = x.is_sign_negative();
        let sign = if negative { 0x80u8 } else { 0 };
        if x.is_nan() {
            return self.nan(negative);
        }
        let a = (x as f64).abs();
        let min_exp = 1 - self.bias;
        let overflowed = || match self.overflow {
            Overflow::Saturate => {
                sign | ((((self.max.log2() as i32 + self.bias) as u8) << self.man)
                    | ((1u8 << self.man) - 2))
            }
            Overflow::Infinity => sign | (((1u8 << self.exp_bits()) - 1) << self.man),
            Overflow::NaN => 0x80,
        };
        if a.is_infinite() {
            return overflowed();
        }
        if a == 0.0 {
            // fnuz formats have no negative zero (0x80 is their NaN).
            return if self.fnuz { 0 } else { sign };
        }
        let e = (a.log2().floor() as i32).max(min_exp);
        let quantum = (2f64).powi(e - self.man);
        let n = (a / quantum).round_ties_even();
        let value = n * quantum;
        if value > self.max {
            return overflowed();
        }
        if value == 0.0 {
            return if self.fnuz { 0 } else { sign };
        }
        let (exp_field, man_field) = if value < (2f64).powi(min_exp) {
            (0u8, (value / (2f64).powi(min_exp - self.man)) as u8)
        } else {
            let e = value.log2().floor() as i32;
            let m = value / (2f64).powi(e - self.man) - (1u32 << self.man) as f64;
            ((e + self.bias) as u8, m as u8)
        };
        sign | (exp_field << self.man) | man_field
    }

    fn decode(&self, bits: u8) -> f32 {
        let negative = bits & 0x80 != 0;
        let exp_field = ((bits & 0x7f) >> self.man) as i32;
        let man_field = (bits & ((1 << self.man) - 1)) as i32;
        if self.fnuz && bits == 0x80 {
            return f32::NAN;
        }
        if !self.fnuz {
            let all_exp = (1 << self.exp_bits()) - 1;
            match self.overflow {
                Overflow::Infinity if exp_field == all_exp => {
                    let v = if man_field == 0 {
                        f32::INFINITY
                    } else {
                        f32::NAN
                    };
                    return if negative { -v } else { v };
                }
                Overflow::Saturate if exp_field == all_exp && man_field == (1 << self.man) - 1 => {
                    return f32::NAN;
                }
                _ => {}
            }
        }
        let value = if exp_field == 0 {
            man_field as f64 * (2f64).powi(1 - self.bias - self.man)
        } else {
            (1.0 + man_field as f64 / (1 << self.man) as f64) * (2f64).powi(exp_field - self.bias)
        };
        (if negative { -value } else { value }) as f32
    }
}

/// e8m0: an unsigned power of two, rounded by c10's guard/round/sticky rule.
fn e8m0_encode(x: f32) -> u8 {
    let bits = x.to_bits();
    let exponent = (bits >> 23) & 0xff;
    if exponent == 0xff {
        return 0xff;
    }
    let g = bits & 0x40_0000 != 0;
    let r = bits & 0x20_0000 != 0;
    let s = bits & 0x1f_ffff != 0;
    let lsb = exponent > 0;
    let round_up = g && (r || s || lsb);
    (exponent + round_up as u32) as u8
}

fn e8m0_decode(bits: u8) -> f32 {
    if bits == 0xff {
        f32::NAN
    } else {
        (2f64).powi(bits as i32 - 127) as f32
    }
}

/// x86-64's truncating conversion of a float to a signed integer of `bits`
/// (32 or 64): out-of-range and NaN give the "integer indefinite" value.
fn x86_truncate(x: f64, bits: u32) -> i128 {
    let limit = (2f64).powi(bits as i32 - 1);
    if x.is_nan() || x >= limit || x < -limit {
        -(1i128 << (bits - 1))
    } else {
        x.trunc() as i128
    }
}

/// Float to integer as PyTorch's x86-64 build converts: narrow types go
/// through a 32-bit conversion, u32/u64 use the bias-by-2^(n-1) sequence.
fn float_to_int(x: f64, d: DType) -> i128 {
    match d {
        DType::I64 => x86_truncate(x, 64),
        DType::U64 => {
            let big = (2f64).powi(63);
            let raw = if x >= big {
                x86_truncate(x - big, 64) ^ (1i128 << 63)
            } else {
                x86_truncate(x, 64)
            };
            raw & 0xffff_ffff_ffff_ffff
        }
        DType::U32 => {
            let big = (2f64).powi(31);
            let raw = if x >= big {
                x86_truncate(x - big, 32) ^ (1i128 << 31)
            } else {
                x86_truncate(x, 32)
            };
            raw & 0xffff_ffff
        }
        _ => wrap_int(x86_truncate(x, 32), d),
    }
}

/// An integer wrapped into a dtype's range (two's complement).
pub fn wrap_int(i: i128, d: DType) -> i128 {
    let bits = d.bits();
    let mask = (1i128 << bits) - 1;
    let u = i & mask;
    if d.is_signed() && u >= (1i128 << (bits - 1)) {
        u - (1i128 << bits)
    } else {
        u
    }
}

/// A float rounded through f32 to a 16- or 8-bit format and back.
fn round_small_float(x: f64, d: DType) -> f64 {
    let f = x as f32;
    match d {
        DType::F16 => f16::from_f32(f).to_f64(),
        DType::BF16 => bf16::from_f32(f).to_f64(),
        DType::F8E8M0FNU => e8m0_decode(e8m0_encode(f)) as f64,
        _ => match minifloat(d) {
            Some(m) => m.decode(m.encode(f)) as f64,
            None => f as f64,
        },
    }
}

/// Converts a value to what a `d` element holds after PyTorch's cast.
pub fn convert(v: Elem, d: DType) -> Elem {
    use DType::*;
    match d {
        Bool => Elem::B(v.truthy()),
        F64 => Elem::F(v.f64()),
        // One rounding, as C++'s static_cast<float> of an integer.
        F32 => Elem::F(match v {
            Elem::I(i) => i as f32 as f64,
            other => other.f64() as f32 as f64,
        }),
        F16 | BF16 | F8E4M3FN | F8E5M2 | F8E4M3FNUZ | F8E5M2FNUZ | F8E8M0FNU => {
            let x = match v {
                // Integers reach the small formats through f32.
                Elem::I(i) => i as f32 as f64,
                other => other.f64(),
            };
            Elem::F(round_small_float(x, d))
        }
        C128 => {
            let (re, im) = v.complex();
            Elem::C(re, im)
        }
        C64 => {
            let (re, im) = v.complex();
            Elem::C(re as f32 as f64, im as f32 as f64)
        }
        C32 => {
            let (re, im) = v.complex();
            Elem::C(round_small_float(re, F16), round_small_float(im, F16))
        }
        U8 | I8 | I16 | I32 | I64 | U16 | U32 | U64 => match v {
            Elem::B(b) => Elem::I(b as i128),
            Elem::I(i) => Elem::I(wrap_int(i, d)),
            Elem::F(x) => Elem::I(float_to_int(x, d)),
            // PyTorch converts complex values elementwise (not vectorised):
            // uint32 then comes from a 64-bit truncation.
            Elem::C(re, _) if d == U32 => Elem::I(wrap_int(x86_truncate(re, 64), d)),
            Elem::C(re, _) => Elem::I(float_to_int(re, d)),
        },
        F4E2M1FNX2 => Elem::I(v.int() & 0xff),
    }
}

/// Reads one element of dtype `d` from its little-endian bytes.
pub fn load(d: DType, b: &[u8]) -> Elem {
    use DType::*;
    let u16le = || u16::from_le_bytes([b[0], b[1]]);
    let f32le = |o: usize| f32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as f64;
    let f64le = |o: usize| f64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
    match d {
        F32 => Elem::F(f32le(0)),
        F64 => Elem::F(f64le(0)),
        F16 => Elem::F(f16::from_bits(u16le()).to_f64()),
        BF16 => Elem::F(bf16::from_bits(u16le()).to_f64()),
        C32 => Elem::C(
            f16::from_bits(u16le()).to_f64(),
            f16::from_bits(u16::from_le_bytes([b[2], b[3]])).to_f64(),
        ),
        C64 => Elem::C(f32le(0), f32le(4)),
        C128 => Elem::C(f64le(0), f64le(8)),
        F8E8M0FNU => Elem::F(e8m0_decode(b[0]) as f64),
        F8E4M3FN | F8E5M2 | F8E4M3FNUZ | F8E5M2FNUZ => {
            Elem::F(minifloat(d).expect("a float8 format").decode(b[0]) as f64)
        }
        F4E2M1FNX2 | U8 => Elem::I(b[0] as i128),
        I8 => Elem::I(b[0] as i8 as i128),
        I16 => Elem::I(i16::from_le_bytes([b[0], b[1]]) as i128),
        U16 => Elem::I(u16le() as i128),
        I32 => Elem::I(i32::from_le_bytes(b[..4].try_into().expect("4 bytes")) as i128),
        U32 => Elem::I(u32::from_le_bytes(b[..4].try_into().expect("4 bytes")) as i128),
        I64 => Elem::I(i64::from_le_bytes(b[..8].try_into().expect("8 bytes")) as i128),
        U64 => Elem::I(u64::from_le_bytes(b[..8].try_into().expect("8 bytes")) as i128),
        Bool => Elem::B(b[0] != 0),
    }
}

/// Writes a value (converted to `d` first) as `d`'s little-endian bytes.
pub fn store(d: DType, v: Elem, out: &mut [u8]) {
    use DType::*;
    let v = convert(v, d);
    match (d, v) {
        (F32, Elem::F(x)) => out[..4].copy_from_slice(&(x as f32).to_le_bytes()),
        (F64, Elem::F(x)) => out[..8].copy_from_slice(&x.to_le_bytes()),
        (F16, Elem::F(x)) => out[..2].copy_from_slice(&f16::from_f64(x).to_bits().to_le_bytes()),
        (BF16, Elem::F(x)) => out[..2].copy_from_slice(&bf16::from_f64(x).to_bits().to_le_bytes()),
        (C32, Elem::C(re, im)) => {
            out[..2].copy_from_slice(&f16::from_f64(re).to_bits().to_le_bytes());
            out[2..4].copy_from_slice(&f16::from_f64(im).to_bits().to_le_bytes());
        }
        (C64, Elem::C(re, im)) => {
            out[..4].copy_from_slice(&(re as f32).to_le_bytes());
            out[4..8].copy_from_slice(&(im as f32).to_le_bytes());
        }
        (C128, Elem::C(re, im)) => {
            out[..8].copy_from_slice(&re.to_le_bytes());
            out[8..16].copy_from_slice(&im.to_le_bytes());
        }
        (F8E8M0FNU, Elem::F(x)) => out[0] = e8m0_encode(x as f32),
        (F8E4M3FN | F8E5M2 | F8E4M3FNUZ | F8E5M2FNUZ, Elem::F(x)) => {
            out[0] = minifloat(d).expect("a float8 format").encode(x as f32)
        }
        (Bool, Elem::B(b)) => out[0] = b as u8,
        (_, Elem::I(i)) => {
            let bytes = i.to_le_bytes();
            out[..d.itemsize()].copy_from_slice(&bytes[..d.itemsize()]);
        }
        (d, v) => unreachable!("convert gives {d} a {v:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(d: DType, x: f64) -> f64 {
        let mut b = [0u8; 16];
        store(d, Elem::F(x), &mut b);
        load(d, &b).f64()
    }

    #[test]
    fn float8_rounding_hand_checked() {
        assert_eq!(round_trip(DType::F8E4M3FN, 464.0), 448.0);
        assert_eq!(round_trip(DType::F8E4M3FN, 1e10), 448.0);
        assert!(round_trip(DType::F8E4M3FNUZ, 248.0).is_nan());
        assert_eq!(round_trip(DType::F8E5M2, 300.0), 320.0);
        assert!(round_trip(DType::F8E5M2, 61440.0).is_infinite());
        assert_eq!(round_trip(DType::F8E8M0FNU, 0.1), 0.125);
    }

    #[test]
    fn float_to_int_matches_x86() {
        assert_eq!(convert(Elem::F(300.0), DType::U8), Elem::I(44));
        assert_eq!(
            convert(Elem::F(1e10), DType::I32),
            Elem::I(i32::MIN as i128)
        );
        assert_eq!(convert(Elem::F(-1e10), DType::U32), Elem::I(2147483648));
        assert_eq!(convert(Elem::F(f64::NAN), DType::U64), Elem::I(1 << 63));
    }
}
