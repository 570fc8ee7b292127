//! Deterministic test and benchmark inputs for any tensor type: the same
//! seed gives the same values on every machine.

use kiln_ir::{DType, Result, TensorType};

use crate::convert::Elem;
use crate::tensor::Tensor;

/// A xorshift64* stream: small, fast and reproducible (not cryptographic).
pub struct Stream(u64);

impl Stream {
    /// The stream of `seed` (any seed, 0 included: the state is made odd,
    /// so never the zero state xorshift cannot leave).
    pub fn new(seed: u64) -> Stream {
        Stream(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// A float in [-4, 4), or (one in 32, by bits `unit` leaves unused)
    /// a zero of either sign.
    fn float(&mut self) -> f64 {
        let bits = self.next_u64();
        let x = ((bits >> 11) as f64 / (1u64 << 52) as f64 - 1.0) * 4.0;
        if bits & 31 == 0 {
            0.0f64.copysign(x)
        } else {
            x
        }
    }

    /// A value of `dtype`: floats in about [-4, 4] (one in 32 a zero of
    /// either sign, so that the backends' zeros are checked too), integers
    /// in a small signed (or unsigned) range, so arithmetic rarely
    /// overflows.
    pub fn value(&mut self, dtype: DType) -> Elem {
        let x = self.float();
        match dtype {
            DType::Bool => Elem::B(self.next_u64() & 1 == 1),
            d if d.is_complex() => Elem::C(x, self.float()),
            d if d.is_floating_point() => Elem::F(x),
            d if d.is_signed() => Elem::I((self.next_u64() % 19) as i128 - 9),
            _ => Elem::I((self.next_u64() % 19) as i128),
        }
    }
}

/// A tensor of `ty` (its shape, dtype, device and strides) filled from `seed`.
pub fn tensor_for(ty: &TensorType, seed: u64) -> Result<Tensor> {
    let mut s = Stream::new(seed);
    let values = (0..ty.numel()).map(|_| s.value(ty.dtype));
    let t = Tensor::from_values(values, &ty.shape, ty.dtype)?.with_device(ty.device);
    match ty.strides() {
        Some(strides) if strides != t.strides() => t.with_strides(strides),
        _ => Ok(t),
    }
}
