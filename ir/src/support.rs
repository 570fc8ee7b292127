//! Which dtypes PyTorch's CPU kernels implement.
//!
//! PyTorch rule: an op dispatches to a kernel compiled for a fixed set of
//! dtypes (`AT_DISPATCH_*`); any other dtype raises
//! `"<kernel>" not implemented for '<ScalarType>'`. Each row of the op
//! table names its kernel (or, below, the rule that picks one from the
//! operands, where PyTorch names kernels by the case they handle). Type
//! inference checks it for programs on devices with kernels (CPU, and
//! CUDA, where Kiln keeps the CPU's set); the meta device has no kernels
//! and skips it. The interpreter and the backends implement at least every
//! dtype listed here.

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::infer::{Arg, Inferred};
use crate::ops::{Op, PowForm};
use crate::scalar::Scalar;
use crate::view::wrap_dim;

/// A set of dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DTypeSet(u32);

const fn bit(d: DType) -> u32 {
    1 << d as u32
}

impl DTypeSet {
    /// No dtype.
    pub const EMPTY: DTypeSet = DTypeSet(0);
    /// f32, f64, f16, bf16.
    pub const FLOATS: DTypeSet =
        DTypeSet(bit(DType::F32) | bit(DType::F64) | bit(DType::F16) | bit(DType::BF16));
    /// c64 and c128 (ComplexHalf has few CPU kernels).
    pub const COMPLEX: DTypeSet = DTypeSet(bit(DType::C64) | bit(DType::C128));
    /// complex32.
    pub const COMPLEX_HALF: DTypeSet = DTypeSet(bit(DType::C32));
    /// u8, i8, i16, i32, i64.
    pub const INTS: DTypeSet = DTypeSet(
        bit(DType::U8) | bit(DType::I8) | bit(DType::I16) | bit(DType::I32) | bit(DType::I64),
    );
    /// u16, u32, u64.
    pub const BARE_UINTS: DTypeSet = DTypeSet(bit(DType::U16) | bit(DType::U32) | bit(DType::U64));
    /// bool.
    pub const BOOL: DTypeSet = DTypeSet(bit(DType::Bool));
    /// The float8 formats except e8m0 (which has no sign and fewer kernels).
    pub const FLOAT8_SIGNED: DTypeSet = DTypeSet(
        bit(DType::F8E4M3FN) | bit(DType::F8E5M2) | bit(DType::F8E4M3FNUZ) | bit(DType::F8E5M2FNUZ),
    );
    /// Every float8 format.
    pub const FLOAT8: DTypeSet = DTypeSet(Self::FLOAT8_SIGNED.0 | bit(DType::F8E8M0FNU));
    /// The packed float4 format.
    pub const FLOAT4: DTypeSet = DTypeSet(bit(DType::F4E2M1FNX2));
    /// Every dtype.
    pub const ALL: DTypeSet = DTypeSet((1 << 22) - 1);
    /// Floats and complex.
    pub const FLOATS_COMPLEX: DTypeSet = Self::FLOATS.union(Self::COMPLEX);
    /// Floats, complex (ComplexHalf included) and the signed-capable integers.
    pub const NUMBERS: DTypeSet = Self::FLOATS
        .union(Self::COMPLEX)
        .union(Self::COMPLEX_HALF)
        .union(Self::INTS);
    /// Floats and integers.
    pub const REAL_NUMBERS: DTypeSet = Self::FLOATS.union(Self::INTS);
    /// What rounding (and clamping) kernels take: floats and every integer.
    pub const ROUNDABLE: DTypeSet = Self::REAL_NUMBERS.union(Self::BARE_UINTS);
    /// Everything that is not a half-supported storage type.
    pub const LOGICAL: DTypeSet = Self::ALL
        .without(Self::COMPLEX_HALF)
        .without(Self::FLOAT8)
        .without(Self::FLOAT4)
        .without(Self::BARE_UINTS);
    /// Integers and bool.
    pub const BITWISE: DTypeSet = Self::INTS.union(Self::BOOL);
    /// What sums and products take.
    pub const SUMMABLE: DTypeSet = Self::FLOATS
        .union(Self::COMPLEX)
        .union(Self::INTS)
        .union(Self::BOOL);

    /// The set of one dtype.
    pub const fn of(d: DType) -> DTypeSet {
        DTypeSet(bit(d))
    }

    /// Both sets.
    pub const fn union(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 | other.0)
    }

    /// This set without the other's dtypes.
    pub const fn without(self, other: DTypeSet) -> DTypeSet {
        DTypeSet(self.0 & !other.0)
    }

    /// Whether `d` is in the set.
    pub const fn contains(self, d: DType) -> bool {
        self.0 & bit(d) != 0
    }

    /// The dtypes of the set, in [`DType::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = DType> {
        DType::ALL.into_iter().filter(move |d| self.contains(*d))
    }
}

/// An ATen CPU kernel: its name in PyTorch's error messages and its dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtenKernel {
    /// The name PyTorch's "not implemented" message gives.
    pub name: &'static str,
    /// The dtypes it is compiled for.
    pub dtypes: DTypeSet,
}

impl AtenKernel {
    /// A kernel for these dtypes.
    pub const fn new(name: &'static str, dtypes: DTypeSet) -> AtenKernel {
        AtenKernel { name, dtypes }
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

type Chosen = Result<Option<AtenKernel>>;

fn tensor_dtype(arg: Option<&Arg<'_>>) -> Option<DType> {
    match arg {
        Some(Arg::Tensor(t)) => Some(t.dtype),
        _ => None,
    }
}

/// A unary primitive's kernel.
pub fn unary_kernel(op: &Op, _: &[Arg<'_>], _: &Inferred) -> Chosen {
    Ok(match op {
        Op::Unary { op } => Some(op.def().kernel),
        _ => None,
    })
}

/// `polygamma`'s kernel, named by `n` as PyTorch dispatches it: digamma's
/// for 0, trigamma's for 1, its own above.
pub fn polygamma_kernel(op: &Op, _: &[Arg<'_>], _: &Inferred) -> Chosen {
    let Op::Polygamma { n } = op else {
        return Ok(None);
    };
    let name = match n {
        0 => "digamma",
        1 => "trigamma",
        _ => "polygamma",
    };
    Ok(Some(AtenKernel::new(name, DTypeSet::FLOATS)))
}

/// A binary primitive's kernel (`x ** 1` is a copy and `x ** 0` a fill:
/// PyTorch runs no pow kernel for them).
pub fn binary_kernel(op: &Op, args: &[Arg<'_>], inf: &Inferred) -> Chosen {
    let Op::Binary { op } = op else {
        return Ok(None);
    };
    if let (super::ops::BinaryOp::Pow, Some(Arg::Scalar(e))) = (op, args.get(1)) {
        if matches!(
            Op::pow_scalar_form(*e, true),
            PowForm::Identity | PowForm::One
        ) {
            return Ok(None);
        }
    }
    let has_scalar = args.iter().any(|a| matches!(a, Arg::Scalar(_)));
    Ok(Some(op.def().kernel.resolve(inf.compute(), has_scalar)))
}

/// `where` fills a scalar branch into a tensor first; float4 has no fill.
pub fn where_kernel(_: &Op, args: &[Arg<'_>], inf: &Inferred) -> Chosen {
    let has_scalar = args.iter().any(|a| matches!(a, Arg::Scalar(_)));
    if has_scalar && inf.ty().dtype == DType::F4E2M1FNX2 {
        return Err(not_implemented("fill_out", DType::F4E2M1FNX2));
    }
    Ok(None)
}

/// clamp's kernel, by which bounds are given (one scalar and one tensor
/// bound: PyTorch makes both tensors).
pub fn clamp_kernel(op: &Op, args: &[Arg<'_>], _: &Inferred) -> Chosen {
    let Op::Clamp { min, max } = op else {
        return Ok(None);
    };
    let tensor = |i: usize| tensor_dtype(args.get(i)).is_some();
    let (min_t, max_t) = (tensor(1), tensor(2));
    let (name, dtypes) = match (min_t, max_t, min.is_some(), max.is_some()) {
        (true, false, _, false) => ("maximum_cpu", DTypeSet::ROUNDABLE.union(DTypeSet::BOOL)),
        (false, true, false, _) => ("minimum_cpu", DTypeSet::ROUNDABLE.union(DTypeSet::BOOL)),
        (false, false, true, false) => ("clamp_min_scalar_cpu", DTypeSet::ROUNDABLE),
        (false, false, false, true) => ("clamp_max_scalar_cpu", DTypeSet::ROUNDABLE),
        (false, false, true, true) => ("clamp_scalar_cpu", DTypeSet::ROUNDABLE),
        _ => ("clamp_cpu", DTypeSet::ROUNDABLE),
    };
    Ok(Some(AtenKernel::new(name, dtypes)))
}

/// `cast` and `to`: only the float4 conversions are missing.
pub fn copy_kernel(op: &Op, args: &[Arg<'_>], inf: &Inferred) -> Chosen {
    let target = match op {
        Op::Cast { dtype } => Some(*dtype),
        Op::To { dtype, .. } => *dtype,
        _ => None,
    };
    if let (Some(from), Some(to)) = (tensor_dtype(args.first()), target) {
        check_copy(from, to)?;
    }
    let _ = inf;
    Ok(None)
}

/// A value reduction's kernel.
pub fn reduce_kernel(op: &Op, _: &[Arg<'_>], _: &Inferred) -> Chosen {
    Ok(match op {
        Op::Reduce { op, .. } => Some(op.def().kernel),
        _ => None,
    })
}

/// argmax/argmin refuse bool before dispatching.
pub fn arg_reduce_kernel(op: &Op, args: &[Arg<'_>], _: &Inferred) -> Chosen {
    let Op::ArgReduce { op, .. } = op else {
        return Ok(None);
    };
    if tensor_dtype(args.first()) == Some(DType::Bool) {
        return Err(Error::new(
            ErrorKind::DType,
            format!("{}(): does not support bool input", op.name()),
        ));
    }
    Ok(Some(op.def().kernel))
}

/// softmax/log_softmax: PyTorch names the kernel by whether the dim is last.
pub fn softmax_kernel(op: &Op, args: &[Arg<'_>], _: &Inferred) -> Chosen {
    let (dim, log) = match op {
        Op::Softmax { dim, .. } | Op::Softmin { dim, .. } => (*dim, false),
        Op::LogSoftmax { dim, .. } => (*dim, true),
        _ => return Ok(None),
    };
    let rank = match args.first() {
        Some(Arg::Tensor(t)) => t.rank(),
        _ => return Ok(None),
    };
    let last = rank == 0 || wrap_dim(dim, rank)? == rank - 1;
    let name = match (log, last) {
        (false, true) => "softmax_lastdim_kernel_impl",
        (false, false) => "softmax_kernel_impl",
        (true, true) => "log_softmax_lastdim_kernel_impl",
        (true, false) => "log_softmax_kernel_impl",
    };
    Ok(Some(AtenKernel::new(name, DTypeSet::FLOATS)))
}

/// sigmoid names its reduced-float kernel separately.
pub fn sigmoid_kernel(_: &Op, _: &[Arg<'_>], inf: &Inferred) -> Chosen {
    let name = if inf.compute().is_shell() {
        "sigmoid_cpu_reduced_float"
    } else {
        "sigmoid_cpu"
    };
    Ok(Some(AtenKernel::new(name, DTypeSet::FLOATS_COMPLEX)))
}

/// `fill_` (full, ones); zeros is a memset and works for every dtype.
/// Dispatched on the result dtype.
pub fn full_kernel(op: &Op, _: &[Arg<'_>], _: &Inferred) -> Chosen {
    let Op::Full { value, .. } = op else {
        return Ok(None);
    };
    let is_zeros = matches!(value, Scalar::Float(v) if v.to_bits() == 0);
    Ok((!is_zeros).then_some(AtenKernel::new(
        "fill_cpu",
        DTypeSet::ALL.without(DTypeSet::FLOAT4),
    )))
}

/// `kthvalue`'s and `mode`'s kernels, which a zero-dim input never
/// reaches (PyTorch copies its element, whatever the dtype).
pub fn select_kernel(op: &Op, args: &[Arg<'_>], _: &Inferred) -> Chosen {
    if matches!(args.first(), Some(Arg::Tensor(t)) if t.rank() == 0) {
        return Ok(None);
    }
    Ok(match op {
        Op::Kthvalue { .. } => Some(AtenKernel::new("kthvalue_cpu", DTypeSet::REAL_NUMBERS)),
        Op::Mode { .. } => Some(AtenKernel::new(
            "mode_cpu",
            DTypeSet::REAL_NUMBERS.union(DTypeSet::BOOL),
        )),
        _ => None,
    })
}

/// `median` and `nanmedian`'s kernels: along a dim (`median_out`) or of
/// every element (`median_cpu`).
pub fn median_kernel(op: &Op, _: &[Arg<'_>], _: &Inferred) -> Chosen {
    let dim = match op {
        Op::Median { dim, .. } | Op::Nanmedian { dim, .. } => dim,
        _ => return Ok(None),
    };
    let name = if dim.is_some() {
        "median_out"
    } else {
        "median_cpu"
    };
    Ok(Some(AtenKernel::new(name, DTypeSet::REAL_NUMBERS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets() {
        let abs = crate::ops::UnaryOp::Abs.def().kernel;
        assert!(abs.dtypes.contains(DType::F8E4M3FN));
        assert!(!abs.dtypes.contains(DType::F8E8M0FNU));
        assert_eq!(DTypeSet::ALL.iter().count(), 22);
        let add = AtenKernel::new("add_stub", DTypeSet::NUMBERS.union(DTypeSet::BOOL));
        let err = add.check(DType::U16).unwrap_err();
        assert_eq!(err.message(), "\"add_stub\" not implemented for 'UInt16'");
    }
}
