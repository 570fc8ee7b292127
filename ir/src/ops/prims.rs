//! The definitions of primitive ops: the pointwise ops and reductions every
//! backend computes. Each member of [`UnaryOp`](super::UnaryOp),
//! [`BinaryOp`](super::BinaryOp), [`ReduceOp`](super::ReduceOp) and
//! [`ArgReduceOp`](super::ArgReduceOp) has one of these, written in the op
//! table; inference, fusion and the optimizer read them.

use crate::dtype::DType;
use crate::support::{AtenKernel, DTypeSet};

use super::def::{Cost, Traits};

/// When PyTorch refuses an op before its kernel is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefuseWhen {
    /// The first operand is bool.
    InputBool,
    /// The first operand is complex.
    InputComplex,
    /// Every operand is bool.
    AllBool,
    /// Some operand is bool.
    AnyBool,
    /// Some tensor operand is complex.
    AnyComplex,
}

/// A dtype PyTorch refuses, with its message.
#[derive(Clone, Copy, Debug)]
pub struct Refusal {
    /// When.
    pub when: RefuseWhen,
    /// PyTorch's message.
    pub message: &'static str,
}

/// The result dtype of a pointwise op, from its computation dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultDType {
    /// The computation dtype.
    Same,
    /// bool (comparisons, predicates).
    Bool,
    /// The real counterpart of a complex computation (`abs`).
    Real,
}

/// A primitive unary pointwise op.
#[derive(Clone, Copy, Debug)]
pub struct UnaryDef {
    /// The ATen CPU kernel and its dtypes (checked on the computation dtype).
    pub kernel: AtenKernel,
    /// Integer and bool inputs compute in the default float dtype
    /// (`exp` of an int tensor is a float tensor).
    pub int_to_float: bool,
    /// The result dtype.
    pub result: ResultDType,
    /// Fusion's and the optimizer's cost class.
    pub cost: Cost,
    /// Dtypes PyTorch refuses with a message of the op's own.
    pub refusals: &'static [Refusal],
    /// Properties ([`Traits::APPROXIMATE`], [`Traits::DISCONTINUOUS`]).
    pub traits: Traits,
}

impl UnaryDef {
    /// A cheap op of the input's dtype with this kernel.
    pub const fn new(name: &'static str, dtypes: DTypeSet) -> UnaryDef {
        UnaryDef {
            kernel: AtenKernel::new(name, dtypes),
            int_to_float: false,
            result: ResultDType::Same,
            cost: Cost::Cheap,
            refusals: &[],
            traits: Traits::NONE,
        }
    }

    /// With these properties.
    pub const fn traits(mut self, traits: Traits) -> UnaryDef {
        self.traits = self.traits.with(traits);
        self
    }

    /// A transcendental function (`<name>`'s kernel takes floats and
    /// complex; integers compute in the default float dtype).
    pub const fn transcendental(name: &'static str) -> UnaryDef {
        UnaryDef {
            int_to_float: true,
            cost: Cost::Costly,
            ..UnaryDef::new(name, DTypeSet::FLOATS_COMPLEX)
        }
    }

    /// A special function (`<name>`'s kernel takes floats; integers and
    /// bool compute in the default float dtype).
    pub const fn special(name: &'static str) -> UnaryDef {
        UnaryDef {
            int_to_float: true,
            cost: Cost::Costly,
            ..UnaryDef::new(name, DTypeSet::FLOATS)
        }
        .traits(Traits::APPROXIMATE)
    }

    /// [`UnaryDef::special`] for f32 and f64 only, as PyTorch's CPU
    /// kernels of `torch.special`'s newer functions (integers and bools
    /// are taken as the default float dtype; f16 and bf16 are errors).
    pub const fn special_f32_f64(name: &'static str) -> UnaryDef {
        UnaryDef {
            int_to_float: true,
            cost: Cost::Costly,
            ..UnaryDef::new(
                name,
                DTypeSet::of(DType::F32).union(DTypeSet::of(DType::F64)),
            )
        }
        .traits(Traits::APPROXIMATE)
    }

    /// A rounding function (floats and integers; integers are unchanged).
    pub const fn rounding(name: &'static str) -> UnaryDef {
        UnaryDef::new(name, DTypeSet::ROUNDABLE)
    }

    /// With this result dtype.
    pub const fn result(mut self, result: ResultDType) -> UnaryDef {
        self.result = result;
        self
    }

    /// With these refusals.
    pub const fn refuse(mut self, refusals: &'static [Refusal]) -> UnaryDef {
        self.refusals = refusals;
        self
    }
}

/// Which operands of a binary op may be scalar literals (ATen's
/// `Tensor`/`Scalar` overloads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarOperands {
    /// Either, but not both.
    Either,
    /// Only the second (`eq(Tensor, Scalar)`).
    Second,
    /// Neither (`maximum(Tensor, Tensor)`).
    Neither,
}

/// How a binary op's kernel is named and which dtypes it takes.
#[derive(Clone, Copy, Debug)]
pub enum BinaryKernel {
    /// One kernel.
    Fixed(AtenKernel),
    /// `mul`: everything but float4; float8 with a scalar operand goes
    /// through a reduced-float kernel that does not exist.
    Mul,
    /// `div` with this rounding mode (`None`: true division), and its
    /// reduced-float variants for float8 with a scalar operand.
    Div(Option<&'static str>),
}

impl BinaryKernel {
    /// The kernel for a computation in `dtype`, with or without a scalar
    /// operand.
    pub fn resolve(self, dtype: DType, scalar_operand: bool) -> AtenKernel {
        let reduced = scalar_operand && dtype.is_float8();
        match self {
            BinaryKernel::Fixed(k) => k,
            BinaryKernel::Mul if reduced => {
                AtenKernel::new("mul_cpu_reduced_float", DTypeSet::EMPTY)
            }
            BinaryKernel::Mul => {
                AtenKernel::new("mul_cpu", DTypeSet::ALL.without(DTypeSet::FLOAT4))
            }
            BinaryKernel::Div(mode) => {
                let dtypes = match mode {
                    None => DTypeSet::FLOATS_COMPLEX,
                    Some(_) => DTypeSet::REAL_NUMBERS,
                };
                let name = match (mode, reduced) {
                    (None, false) => "div_cpu",
                    (None, true) => "div_cpu_reduced_float",
                    (Some("trunc"), false) => "div_trunc_cpu",
                    (Some("trunc"), true) => "div_trunc_cpu_reduced_float",
                    (_, false) => "div_floor_cpu",
                    (_, true) => "div_floor_cpu_reduced_float",
                };
                AtenKernel::new(name, dtypes)
            }
        }
    }
}

/// What kind of binary op it is, for the element semantics of bool and
/// the operand rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryClass {
    /// `+ - * / % pow maximum minimum`.
    Arithmetic,
    /// `== != < <= > >=`: bool results.
    Comparison,
    /// `logical_*`: truthiness of any dtype, bool results.
    Logical,
    /// `bitwise_*`: integers and bool.
    Bitwise,
}

/// A primitive binary pointwise op.
#[derive(Clone, Copy, Debug)]
pub struct BinaryDef {
    /// Its kernel.
    pub kernel: BinaryKernel,
    /// Its kind.
    pub class: BinaryClass,
    /// Which operands may be literals.
    pub scalars: ScalarOperands,
    /// Properties (commutative).
    pub traits: Traits,
    /// Fusion's and the optimizer's cost class.
    pub cost: Cost,
    /// Integer and bool operands compute in the default float dtype.
    pub int_to_float: bool,
    /// A scalar literal operand stays at opmath precision for f16/bf16
    /// (PyTorch's mul and div kernels keep "original_scalar_value").
    pub opmath_scalar: bool,
    /// Dtypes PyTorch refuses with a message of the op's own.
    pub refusals: &'static [Refusal],
}

impl BinaryDef {
    /// A cheap arithmetic op with this kernel.
    pub const fn new(kernel: BinaryKernel) -> BinaryDef {
        BinaryDef {
            kernel,
            class: BinaryClass::Arithmetic,
            scalars: ScalarOperands::Either,
            traits: Traits::NONE,
            cost: Cost::Cheap,
            int_to_float: false,
            opmath_scalar: false,
            refusals: &[],
        }
    }

    /// A cheap arithmetic op with one kernel.
    pub const fn kernel(name: &'static str, dtypes: DTypeSet) -> BinaryDef {
        BinaryDef::new(BinaryKernel::Fixed(AtenKernel::new(name, dtypes)))
    }

    /// A comparison with this kernel (bool result, tensor first).
    pub const fn comparison(name: &'static str, dtypes: DTypeSet) -> BinaryDef {
        BinaryDef {
            class: BinaryClass::Comparison,
            scalars: ScalarOperands::Second,
            traits: Traits::DISCONTINUOUS,
            ..BinaryDef::kernel(name, dtypes)
        }
    }

    /// A logical op (`<name>` kernel; bool result; two tensors).
    pub const fn logical(name: &'static str) -> BinaryDef {
        BinaryDef {
            class: BinaryClass::Logical,
            scalars: ScalarOperands::Neither,
            traits: Traits::COMMUTATIVE.with(Traits::DISCONTINUOUS),
            ..BinaryDef::kernel(name, DTypeSet::LOGICAL)
        }
    }

    /// A special function of two operands computed in f64 (`<name>`'s
    /// kernel takes f32 and f64, as `torch.special`'s newer functions;
    /// integers and bools compute in the default float dtype).
    pub const fn special_f32_f64(name: &'static str) -> BinaryDef {
        BinaryDef::kernel(
            name,
            DTypeSet::of(DType::F32).union(DTypeSet::of(DType::F64)),
        )
        .int_to_float()
        .costly()
        .traits(Traits::APPROXIMATE)
    }

    /// An orthogonal polynomial of `x` and a degree (truncated: a step
    /// function of it): [`BinaryDef::special_f32_f64`].
    pub const fn polynomial(name: &'static str) -> BinaryDef {
        BinaryDef::special_f32_f64(name).traits(Traits::DISCONTINUOUS)
    }

    /// With these properties.
    pub const fn traits(mut self, traits: Traits) -> BinaryDef {
        self.traits = self.traits.with(traits);
        self
    }

    /// A bitwise op (`<name>` kernel; integers and bool).
    pub const fn bitwise(name: &'static str) -> BinaryDef {
        BinaryDef {
            class: BinaryClass::Bitwise,
            traits: Traits::COMMUTATIVE,
            ..BinaryDef::kernel(name, DTypeSet::BITWISE.union(DTypeSet::BARE_UINTS))
        }
    }

    /// Commutative.
    pub const fn commutative(mut self) -> BinaryDef {
        self.traits = self.traits.with(Traits::COMMUTATIVE);
        self
    }

    /// Costly (worth computing once).
    pub const fn costly(mut self) -> BinaryDef {
        self.cost = Cost::Costly;
        self
    }

    /// With these operand rules.
    pub const fn scalars(mut self, scalars: ScalarOperands) -> BinaryDef {
        self.scalars = scalars;
        self
    }

    /// Integers compute in the default float dtype.
    pub const fn int_to_float(mut self) -> BinaryDef {
        self.int_to_float = true;
        self
    }

    /// Scalar literals stay at opmath precision.
    pub const fn opmath_scalar(mut self) -> BinaryDef {
        self.opmath_scalar = true;
        self
    }

    /// With these refusals.
    pub const fn refuse(mut self, refusals: &'static [Refusal]) -> BinaryDef {
        self.refusals = refusals;
        self
    }

    /// Whether the result is bool.
    pub fn is_predicate(&self) -> bool {
        matches!(self.class, BinaryClass::Comparison | BinaryClass::Logical)
    }
}

/// A primitive reduction.
#[derive(Clone, Copy, Debug)]
pub struct ReduceDef {
    /// Its kernel.
    pub kernel: AtenKernel,
}

impl ReduceDef {
    /// A reduction with this kernel.
    pub const fn new(name: &'static str, dtypes: DTypeSet) -> ReduceDef {
        ReduceDef {
            kernel: AtenKernel::new(name, dtypes),
        }
    }
}

/// How a reduction folds its elements, by the dtype it computes in: the
/// one description of a reduction every backend compiles (each with its
/// own arithmetic for each fold, in an exhaustive match).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fold {
    /// `acc + x` (wrapping for integers).
    Sum,
    /// `acc * x` (wrapping for integers).
    Prod,
    /// The larger; NaN propagates.
    Max,
    /// The smaller; NaN propagates.
    Min,
    /// A bool "sum" or "max".
    Or,
    /// A bool "prod" or "min".
    And,
}

impl Fold {
    /// The fold of `op` computing in `compute`.
    pub fn of(op: super::ReduceOp, compute: DType) -> Fold {
        use super::ReduceOp;
        match (op, compute.is_bool()) {
            (ReduceOp::Sum | ReduceOp::Amax, true) => Fold::Or,
            (ReduceOp::Prod | ReduceOp::Amin, true) => Fold::And,
            (ReduceOp::Sum, false) => Fold::Sum,
            (ReduceOp::Prod, false) => Fold::Prod,
            (ReduceOp::Amax, false) => Fold::Max,
            (ReduceOp::Amin, false) => Fold::Min,
        }
    }

    /// The fold that finds an index reduction's extreme.
    pub fn of_arg(op: super::ArgReduceOp) -> Fold {
        match op {
            super::ArgReduceOp::Argmax => Fold::Max,
            super::ArgReduceOp::Argmin => Fold::Min,
        }
    }

    /// The dtype the fold accumulates in: float sums and products in
    /// f64 (at least as accurate as PyTorch's f32 cascade sums, and what
    /// every backend does so that they agree), everything else in the
    /// computation dtype.
    pub fn accumulator(self, compute: DType) -> DType {
        match self {
            Fold::Sum | Fold::Prod if compute.is_floating_point() => DType::F64,
            _ => compute,
        }
    }

    /// The value a fold starts from, in its accumulator dtype: 0 and 1
    /// for sums and products, false and true for or and and, the lowest
    /// value for max (−inf for floats) and the highest for min.
    pub fn identity(self, acc: DType) -> crate::scalar::Scalar {
        use crate::scalar::Scalar;
        let bound = |highest: bool| match acc.iinfo() {
            Ok(info) => {
                let v = if highest { info.max } else { info.min };
                Scalar::from_i128(v).unwrap_or(Scalar::Int(0))
            }
            Err(_) => Scalar::Float(if highest {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            }),
        };
        match self {
            Fold::Or => Scalar::Bool(false),
            Fold::And => Scalar::Bool(true),
            Fold::Sum if acc.is_bool() => Scalar::Bool(false),
            Fold::Prod if acc.is_bool() => Scalar::Bool(true),
            Fold::Sum if acc.is_integral() => Scalar::Int(0),
            Fold::Prod if acc.is_integral() => Scalar::Int(1),
            Fold::Sum => Scalar::Float(0.0),
            Fold::Prod => Scalar::Float(1.0),
            Fold::Max if acc.is_bool() => Scalar::Bool(false),
            Fold::Min if acc.is_bool() => Scalar::Bool(true),
            Fold::Max => bound(false),
            Fold::Min => bound(true),
        }
    }
}

/// The dtype a scan (`cumsum`, `cumprod`, `logcumsumexp`) of result dtype
/// `d` accumulates in: PyTorch's CPU `acc_type<T, false>` (f32 in f64, f16
/// and bf16 in f32, complex64 in complex128, integers and bool in int64),
/// which every backend follows so that they agree. (Reductions widen
/// every float to f64 instead, [`Fold::accumulator`].)
pub fn scan_accumulator(d: DType) -> DType {
    match d {
        DType::F32 => DType::F64,
        DType::F16 | DType::BF16 => DType::F32,
        DType::C64 | DType::C32 => DType::C128,
        d if d.is_integral() || d.is_bool() => DType::I64,
        d => d,
    }
}
