//! Which dtypes PyTorch's CPU kernels implement, per kernel.
//!
//! PyTorch rule: an op dispatches to a kernel compiled for a fixed set of
//! dtypes (`AT_DISPATCH_*`); any other dtype raises
//! `"<kernel>" not implemented for '<ScalarType>'`. Type inference asks this
//! table for programs on devices with kernels (CPU, and CUDA, where Kiln keeps
//! the CPU's set); the meta device has no kernels and skips it. The
//! interpreter and the backends implement at least every dtype listed here.

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};

/// A set of dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DTypeSet(u32);

const fn bit(d: DType) -> u32 {
    1 << d as u32
}

impl DTypeSet {
    pub const EMPTY: DTypeSet = DTypeSet(0);
    /// f32, f64, f16, bf16.
    pub const FLOATS: DTypeSet =
        DTypeSet(bit(DType::F32) | bit(DType::F64) | bit(DType::F16) | bit(DType::BF16));
    /// c64 and c128 (ComplexHalf has few CPU kernels).
    pub const COMPLEX: DTypeSet = DTypeSet(bit(DType::C64) | bit(DType::C128));
    pub const COMPLEX_HALF: DTypeSet = DTypeSet(bit(DType::C32));
    /// u8, i8, i16, i32, i64.
    pub const INTS: DTypeSet = DTypeSet(
        bit(DType::U8) | bit(DType::I8) | bit(DType::I16) | bit(DType::I32) | bit(DType::I64),
    );
    /// u16, u32, u64.
    pub const BARE_UINTS: DTypeSet = DTypeSet(bit(DType::U16) | bit(DType::U32) | bit(DType::U64));
    pub const BOOL: DTypeSet = DTypeSet(bit(DType::Bool));
    /// The float8 formats except e8m0 (which has no sign and fewer kernels).
    pub const FLOAT8_SIGNED: DTypeSet = DTypeSet(
        bit(DType::F8E4M3FN) | bit(DType::F8E5M2) | bit(DType::F8E4M3FNUZ) | bit(DType::F8E5M2FNUZ),
    );
    pub const FLOAT8: DTypeSet = DTypeSet(Self::FLOAT8_SIGNED.0 | bit(DType::F8E8M0FNU));
    pub const FLOAT4: DTypeSet = DTypeSet(bit(DType::F4E2M1FNX2));
    pub const ALL: DTypeSet = DTypeSet((1 << 22) - 1);

    pub const fn union(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 | other.0)
    }

    pub const fn without(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 & !other.0)
    }

    pub const fn contains(self, d: DType) -> bool {
        self.0 & bit(d) != 0
    }

    pub fn iter(self) -> impl Iterator<Item = DType> {
        DType::ALL.into_iter().filter(move |d| self.contains(*d))
    }
}

/// A CPU kernel: its name in PyTorch's error messages and its dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub name: &'static str,
    pub dtypes: DTypeSet,
}

impl Kernel {
    pub const fn new(name: &'static str, dtypes: DTypeSet) -> Kernel {
        Kernel { name, dtypes }
    }

    /// Checks that the kernel exists for `dtype`.
    pub fn check(self, dtype: DType) -> Result<()> {
        if self.dtypes.contains(dtype) {
            Ok(())
        } else {
            Err(not_implemented(self.name, dtype))
        }
    }
}

/// PyTorch's message for a missing kernel.
pub fn not_implemented(kernel: &str, dtype: DType) -> Error {
    Error::new(
        ErrorKind::DType,
        format!(
            "\"{kernel}\" not implemented for '{}'",
            dtype.scalar_type_name()
        ),
    )
}

/// Converting to or from packed float4 has no kernel: every cast involving
/// it fails except the identity.
pub fn check_copy(from: DType, to: DType) -> Result<()> {
    if from != to && (from == DType::F4E2M1FNX2 || to == DType::F4E2M1FNX2) {
        Err(not_implemented("copy_", DType::F4E2M1FNX2))
    } else {
        Ok(())
    }
}

use DTypeSet as S;

const FLOATS_COMPLEX: DTypeSet = S::FLOATS.union(S::COMPLEX);
const NUMBERS: DTypeSet = S::FLOATS
    .union(S::COMPLEX)
    .union(S::COMPLEX_HALF)
    .union(S::INTS);
const REAL_NUMBERS: DTypeSet = S::FLOATS.union(S::INTS);
const ROUNDABLE: DTypeSet = REAL_NUMBERS.union(S::BARE_UINTS);
/// Everything that is not a half-supported storage type.
const LOGICAL: DTypeSet = S::ALL
    .without(S::COMPLEX_HALF)
    .without(S::FLOAT8)
    .without(S::FLOAT4)
    .without(S::BARE_UINTS);
const BITWISE: DTypeSet = S::INTS.union(S::BOOL);

/// Kernels of the unary ops (checked on the computation dtype).
pub mod unary {
    use super::*;

    pub const NEG: Kernel = Kernel::new("neg_cpu", NUMBERS);
    pub const ABS: Kernel = Kernel::new("abs_cpu", NUMBERS.union(S::FLOAT8_SIGNED));
    pub const RELU: Kernel = Kernel::new("clamp_min_scalar_cpu", ROUNDABLE);
    pub const GELU: Kernel = Kernel::new("GeluKernelImpl", S::FLOATS);
    pub const SILU: Kernel = Kernel::new("silu_cpu", FLOATS_COMPLEX);
    pub const ERF: Kernel = Kernel::new("erf_vml_cpu", S::FLOATS);
    pub const ROUND: Kernel = Kernel::new("round_vml_cpu", ROUNDABLE);
    pub const SIGN: Kernel = Kernel::new("sign_cpu", REAL_NUMBERS.union(S::BOOL));
    pub const LOGICAL_NOT: Kernel = Kernel::new("logical_not_cpu", LOGICAL);
    pub const BITWISE_NOT: Kernel = Kernel::new("bitwise_not_cpu", BITWISE);
    pub const ISNAN: Kernel = Kernel::new("isnan", S::ALL);

    /// exp, log, sin, ... (`<name>_vml_cpu`), rsqrt and reciprocal.
    pub fn transcendental(name: &'static str) -> Kernel {
        Kernel::new(name, FLOATS_COMPLEX)
    }

    /// floor, ceil, trunc (`<name>_vml_cpu`).
    pub fn rounding(name: &'static str) -> Kernel {
        Kernel::new(name, ROUNDABLE)
    }

    /// sigmoid names its reduced-float kernel separately.
    pub fn sigmoid(dtype: DType) -> Kernel {
        let name = if dtype.is_shell() {
            "sigmoid_cpu_reduced_float"
        } else {
            "sigmoid_cpu"
        };
        Kernel::new(name, FLOATS_COMPLEX)
    }
}

/// Kernels of the binary ops (checked on the computation dtype).
pub mod binary {
    use super::*;

    pub const ADD: Kernel = Kernel::new("add_stub", NUMBERS.union(S::BOOL));
    pub const REMAINDER: Kernel = Kernel::new("remainder_cpu", REAL_NUMBERS);
    pub const POW: Kernel = Kernel::new("pow", FLOATS_COMPLEX.union(S::INTS));
    pub const MAXIMUM: Kernel = Kernel::new("maximum_cpu", ROUNDABLE.union(S::BOOL));
    pub const MINIMUM: Kernel = Kernel::new("minimum_cpu", ROUNDABLE.union(S::BOOL));
    pub const EQUALITY: Kernel = Kernel::new("eq_cpu", S::ALL);

    /// logical_and/or/xor (`<name>_cpu`).
    pub fn logical(name: &'static str) -> Kernel {
        Kernel::new(name, super::LOGICAL)
    }

    /// mul: everything but float4; with a scalar operand, float8 goes
    /// through a reduced-float kernel that does not exist.
    pub fn mul(dtype: DType, scalar_operand: bool) -> Kernel {
        if scalar_operand && dtype.is_float8() {
            Kernel::new("mul_cpu_reduced_float", S::EMPTY)
        } else {
            Kernel::new("mul_cpu", S::ALL.without(S::FLOAT4))
        }
    }

    /// div with its rounding-mode kernels (`div_cpu`, `div_trunc_cpu`,
    /// `div_floor_cpu`), and their reduced-float variants for float8 with a
    /// scalar operand.
    pub fn div(mode: Option<&'static str>, dtype: DType, scalar_operand: bool) -> Kernel {
        let (base, dtypes) = match mode {
            None => ("div", FLOATS_COMPLEX),
            Some(mode) => (mode, REAL_NUMBERS),
        };
        let name = match (base, scalar_operand && dtype.is_float8()) {
            ("div", false) => "div_cpu",
            ("div", true) => "div_cpu_reduced_float",
            ("trunc", false) => "div_trunc_cpu",
            ("trunc", true) => "div_trunc_cpu_reduced_float",
            ("floor", false) => "div_floor_cpu",
            _ => "div_floor_cpu_reduced_float",
        };
        Kernel::new(name, dtypes)
    }

    /// lt, le, gt, ge (`<name>_cpu`).
    pub fn ordering(name: &'static str) -> Kernel {
        Kernel::new(name, REAL_NUMBERS.union(S::BOOL))
    }

    /// bitwise_and/or/xor (`<name>_cpu`).
    pub fn bitwise(name: &'static str) -> Kernel {
        Kernel::new(name, BITWISE.union(S::BARE_UINTS))
    }
}

/// Kernels of clamp, by which bounds are given.
pub mod clamp {
    use super::*;

    pub const SCALAR_MIN: Kernel = Kernel::new("clamp_min_scalar_cpu", ROUNDABLE);
    pub const SCALAR_MAX: Kernel = Kernel::new("clamp_max_scalar_cpu", ROUNDABLE);
    pub const SCALAR_BOTH: Kernel = Kernel::new("clamp_scalar_cpu", ROUNDABLE);
    pub const TENSOR_BOTH: Kernel = Kernel::new("clamp_cpu", ROUNDABLE);
}

/// Kernels of reductions and of the ops built on them.
pub mod reduce {
    use super::*;

    const SUMMABLE: DTypeSet = S::FLOATS.union(S::COMPLEX).union(S::INTS).union(S::BOOL);

    pub const SUM: Kernel = Kernel::new("sum_cpu", SUMMABLE);
    pub const PROD: Kernel = Kernel::new("prod_out_cpu", SUMMABLE);
    pub const AMAX: Kernel = Kernel::new("max_values_cpu", REAL_NUMBERS.union(S::BOOL));
    pub const AMIN: Kernel = Kernel::new("min_values_cpu", REAL_NUMBERS.union(S::BOOL));
    pub const ARGMAX: Kernel = Kernel::new("argmax_cpu", REAL_NUMBERS);
    pub const ARGMIN: Kernel = Kernel::new("argmin_cpu", REAL_NUMBERS);
    pub const LAYER_NORM: Kernel = Kernel::new("LayerNormKernelImpl", S::FLOATS);
    pub const MATMUL: Kernel = Kernel::new(
        "addmm_impl_cpu_",
        FLOATS_COMPLEX.union(S::FLOAT8_SIGNED).union(S::INTS),
    );

    /// softmax/log_softmax; PyTorch names the kernel by whether the dim is last.
    pub fn softmax(log: bool, last_dim: bool) -> Kernel {
        let name = match (log, last_dim) {
            (false, true) => "softmax_lastdim_kernel_impl",
            (false, false) => "softmax_kernel_impl",
            (true, true) => "log_softmax_lastdim_kernel_impl",
            (true, false) => "log_softmax_kernel_impl",
        };
        Kernel::new(name, S::FLOATS)
    }
}

/// Kernels of the creation ops.
pub mod create {
    use super::*;

    /// `fill_` (full, ones); zeros is a memset and works for every dtype.
    pub const FILL: Kernel = Kernel::new("fill_cpu", S::ALL.without(S::FLOAT4));
    pub const ARANGE: Kernel = Kernel::new("arange_cpu", REAL_NUMBERS);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets() {
        assert!(unary::ABS.dtypes.contains(DType::F8E4M3FN));
        assert!(!unary::ABS.dtypes.contains(DType::F8E8M0FNU));
        assert_eq!(S::ALL.iter().count(), 22);
        let err = binary::ADD.check(DType::U16).unwrap_err();
        assert_eq!(err.message(), "\"add_stub\" not implemented for 'UInt16'");
    }
}
