//! Ops: every op of IR.md with its attributes, its `.kir` name, and the
//! conversion between an op and its attribute dictionary.
//!
//! An op's semantics is the PyTorch function of the same name; inference
//! ([`crate::infer`]) decides result types, the interpreter decides values.

use std::fmt;

use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::MemoryFormat;
use crate::scalar::Scalar;

/// Pointwise ops with one tensor operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnaryOp {
    Neg,
    Abs,
    Exp,
    Log,
    Log2,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tanh,
    Sigmoid,
    Relu,
    /// Exact gelu, `0.5·x·(1 + erf(x/√2))`.
    Gelu,
    /// `gelu {approximate = "tanh"}`.
    GeluTanh,
    Silu,
    Erf,
    Floor,
    Ceil,
    Round,
    Trunc,
    Sign,
    Reciprocal,
    LogicalNot,
    BitwiseNot,
    Isnan,
}

/// Pointwise ops with two operands (tensors or scalar literals).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// True division.
    Div,
    /// `div {rounding_mode = "trunc"}`.
    DivTrunc,
    /// `div {rounding_mode = "floor"}`.
    DivFloor,
    Remainder,
    Pow,
    Maximum,
    Minimum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
}

/// Value reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Mean,
    Amax,
    Amin,
}

/// Index reductions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgReduceOp {
    Argmax,
    Argmin,
}

/// How `pow` with a scalar exponent computes ([`Op::pow_scalar_form`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowForm {
    /// `x ** 1`: `x`.
    Identity,
    /// `x ** 0`: one.
    One,
    /// `x * x`.
    Square,
    /// `(x * x) * x`.
    Cube,
    Sqrt,
    Rsqrt,
    Reciprocal,
    /// `1 / (x * x)`.
    ReciprocalSquare,
    /// `pow(x, e)`.
    General,
}

/// A clamp bound: absent, a scalar literal, or the next tensor operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    None,
    Scalar(Scalar),
    Tensor,
}

/// Every Kiln op. Operands are not part of the op; see [`crate::graph::Inst`].
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `where %cond, %a, %b`.
    Where,
    /// `clamp %x {min, max}`; tensor bounds follow `%x` as operands.
    Clamp {
        min: Bound,
        max: Bound,
    },
    /// `cast %x {dtype}`.
    Cast {
        dtype: DType,
    },
    Reduce {
        op: ReduceOp,
        /// `None` or empty: every dim.
        dims: Option<Vec<i64>>,
        keepdim: bool,
        dtype: Option<DType>,
    },
    ArgReduce {
        op: ArgReduceOp,
        dim: Option<i64>,
        keepdim: bool,
    },
    /// `softmax`/`log_softmax {dim, dtype?}`.
    Softmax {
        dim: i64,
        log: bool,
        dtype: Option<DType>,
    },
    /// `layer_norm %x[, %weight[, %bias]] {normalized_shape, eps}`.
    LayerNorm {
        normalized_shape: Vec<i64>,
        eps: f64,
        weight: bool,
        bias: bool,
    },
    Reshape {
        shape: Vec<i64>,
    },
    View {
        shape: Vec<i64>,
    },
    Permute {
        dims: Vec<i64>,
    },
    Transpose {
        dim0: i64,
        dim1: i64,
    },
    T,
    Expand {
        shape: Vec<i64>,
    },
    /// `None`: every size-1 dim.
    Squeeze {
        dims: Option<Vec<i64>>,
    },
    Unsqueeze {
        dim: i64,
    },
    Slice {
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    },
    Select {
        dim: i64,
        index: i64,
    },
    Flatten {
        start_dim: i64,
        end_dim: i64,
    },
    Contiguous {
        memory_format: MemoryFormat,
    },
    /// `clone {memory_format}`, or `clone {strides = [..]}`: a copy laid
    /// out with exactly these (non-overlapping and dense) strides, a Kiln
    /// extension the decomposition pass uses to keep a composite's layout.
    Clone {
        memory_format: MemoryFormat,
        strides: Option<Vec<i64>>,
    },
    To {
        dtype: Option<DType>,
        device: Option<Device>,
        memory_format: MemoryFormat,
        copy: bool,
    },
    Cat {
        dim: i64,
    },
    Matmul,
    Full {
        shape: Vec<i64>,
        value: Scalar,
        dtype: Option<DType>,
        device: Option<Device>,
    },
    Arange {
        start: Scalar,
        end: Scalar,
        step: Scalar,
        dtype: Option<DType>,
        device: Option<Device>,
    },
}

const UNARY_NAMES: [(UnaryOp, &str); 24] = [
    (UnaryOp::Neg, "neg"),
    (UnaryOp::Abs, "abs"),
    (UnaryOp::Exp, "exp"),
    (UnaryOp::Log, "log"),
    (UnaryOp::Log2, "log2"),
    (UnaryOp::Sqrt, "sqrt"),
    (UnaryOp::Rsqrt, "rsqrt"),
    (UnaryOp::Sin, "sin"),
    (UnaryOp::Cos, "cos"),
    (UnaryOp::Tanh, "tanh"),
    (UnaryOp::Sigmoid, "sigmoid"),
    (UnaryOp::Relu, "relu"),
    (UnaryOp::Gelu, "gelu"),
    (UnaryOp::Silu, "silu"),
    (UnaryOp::Erf, "erf"),
    (UnaryOp::Floor, "floor"),
    (UnaryOp::Ceil, "ceil"),
    (UnaryOp::Round, "round"),
    (UnaryOp::Trunc, "trunc"),
    (UnaryOp::Sign, "sign"),
    (UnaryOp::Reciprocal, "reciprocal"),
    (UnaryOp::LogicalNot, "logical_not"),
    (UnaryOp::BitwiseNot, "bitwise_not"),
    (UnaryOp::Isnan, "isnan"),
];

const BINARY_NAMES: [(BinaryOp, &str); 20] = [
    (BinaryOp::Add, "add"),
    (BinaryOp::Sub, "sub"),
    (BinaryOp::Mul, "mul"),
    (BinaryOp::Div, "div"),
    (BinaryOp::Remainder, "remainder"),
    (BinaryOp::Pow, "pow"),
    (BinaryOp::Maximum, "maximum"),
    (BinaryOp::Minimum, "minimum"),
    (BinaryOp::Eq, "eq"),
    (BinaryOp::Ne, "ne"),
    (BinaryOp::Lt, "lt"),
    (BinaryOp::Le, "le"),
    (BinaryOp::Gt, "gt"),
    (BinaryOp::Ge, "ge"),
    (BinaryOp::LogicalAnd, "logical_and"),
    (BinaryOp::LogicalOr, "logical_or"),
    (BinaryOp::LogicalXor, "logical_xor"),
    (BinaryOp::BitwiseAnd, "bitwise_and"),
    (BinaryOp::BitwiseOr, "bitwise_or"),
    (BinaryOp::BitwiseXor, "bitwise_xor"),
];

/// Every op name `.kir` accepts.
pub const OP_NAMES: &[&str] = &[
    "neg",
    "abs",
    "exp",
    "log",
    "log2",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "silu",
    "erf",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
    "reciprocal",
    "logical_not",
    "bitwise_not",
    "isnan",
    "add",
    "sub",
    "mul",
    "div",
    "remainder",
    "pow",
    "maximum",
    "minimum",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "where",
    "clamp",
    "cast",
    "sum",
    "prod",
    "mean",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "softmax",
    "log_softmax",
    "layer_norm",
    "reshape",
    "view",
    "permute",
    "transpose",
    "t",
    "expand",
    "squeeze",
    "unsqueeze",
    "slice",
    "select",
    "flatten",
    "contiguous",
    "clone",
    "to",
    "cat",
    "matmul",
    "full",
    "zeros",
    "ones",
    "arange",
];

impl UnaryOp {
    pub fn name(self) -> &'static str {
        if self == UnaryOp::GeluTanh {
            return "gelu";
        }
        UNARY_NAMES
            .iter()
            .find(|(o, _)| *o == self)
            .map(|(_, n)| *n)
            .expect("every unary op is named")
    }

    /// Ops PyTorch computes in floating point even for integer inputs
    /// (`exp` of an int tensor is the default float dtype).
    pub fn promotes_int_to_float(self) -> bool {
        use UnaryOp::*;
        matches!(
            self,
            Exp | Log | Log2 | Sqrt | Rsqrt | Sin | Cos | Tanh | Sigmoid | Erf | Reciprocal
        )
    }

    /// Ops whose result is bool.
    pub fn is_predicate(self) -> bool {
        matches!(self, UnaryOp::LogicalNot | UnaryOp::Isnan)
    }
}

impl BinaryOp {
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::DivTrunc | BinaryOp::DivFloor => "div",
            _ => BINARY_NAMES
                .iter()
                .find(|(o, _)| *o == self)
                .map(|(_, n)| *n)
                .expect("every binary op is named"),
        }
    }

    /// Comparisons and logical ops: the result is bool.
    pub fn is_predicate(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Eq | Ne | Lt | Le | Gt | Ge | LogicalAnd | LogicalOr | LogicalXor
        )
    }

    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }

    pub fn is_logical(self) -> bool {
        matches!(
            self,
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor
        )
    }

    pub fn is_bitwise(self) -> bool {
        matches!(
            self,
            BinaryOp::BitwiseAnd | BinaryOp::BitwiseOr | BinaryOp::BitwiseXor
        )
    }

    /// Commutative in value (a op b == b op a), for rewrites and CSE.
    pub fn is_commutative(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Add | Mul
                | Maximum
                | Minimum
                | Eq
                | Ne
                | LogicalAnd
                | LogicalOr
                | LogicalXor
                | BitwiseAnd
                | BitwiseOr
                | BitwiseXor
        )
    }
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Mean => "mean",
            ReduceOp::Amax => "amax",
            ReduceOp::Amin => "amin",
        }
    }
}

impl ArgReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ArgReduceOp::Argmax => "argmax",
            ArgReduceOp::Argmin => "argmin",
        }
    }
}

/// An attribute value as written in `.kir`.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// An integer, float, bool or complex literal.
    Scalar(Scalar),
    Str(String),
    List(Vec<i64>),
    DType(DType),
    Device(Device),
    MemoryFormat(MemoryFormat),
    /// `%name`: a tensor operand given by name (clamp's tensor bounds).
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

/// The attributes of one instruction, consumed as an op is built so that
/// unknown leftovers can be reported.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs {
    entries: Vec<(String, AttrValue)>,
}

impl Attrs {
    pub fn new(entries: Vec<(String, AttrValue)>) -> Attrs {
        Attrs { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    fn take(&mut self, name: &str) -> Option<AttrValue> {
        let i = self.entries.iter().position(|(n, _)| n == name)?;
        Some(self.entries.remove(i).1)
    }

    fn bad(op: &str, name: &str, expected: &str, got: &AttrValue) -> Error {
        Error::new(
            ErrorKind::Attribute,
            format!("{op}: attribute '{name}' must be {expected}, got {got}"),
        )
    }

    fn missing(op: &str, name: &str) -> Error {
        Error::new(
            ErrorKind::Attribute,
            format!("{op}: missing attribute '{name}'"),
        )
    }

    pub fn int(&mut self, op: &str, name: &str) -> Result<Option<i64>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::Scalar(Scalar::Int(v))) => Ok(Some(v)),
            Some(other) => Err(Self::bad(op, name, "an integer", &other)),
        }
    }

    pub fn req_int(&mut self, op: &str, name: &str) -> Result<i64> {
        self.int(op, name)?.ok_or_else(|| Self::missing(op, name))
    }

    pub fn float(&mut self, op: &str, name: &str) -> Result<Option<f64>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::Scalar(Scalar::Float(v))) => Ok(Some(v)),
            Some(AttrValue::Scalar(Scalar::Int(v))) => Ok(Some(v as f64)),
            Some(other) => Err(Self::bad(op, name, "a number", &other)),
        }
    }

    pub fn bool(&mut self, op: &str, name: &str) -> Result<Option<bool>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::Scalar(Scalar::Bool(v))) => Ok(Some(v)),
            Some(other) => Err(Self::bad(op, name, "true or false", &other)),
        }
    }

    pub fn scalar(&mut self, op: &str, name: &str) -> Result<Option<Scalar>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::Scalar(s)) => Ok(Some(s)),
            Some(other) => Err(Self::bad(op, name, "a number or boolean", &other)),
        }
    }

    pub fn string(&mut self, op: &str, name: &str) -> Result<Option<String>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::Str(s)) => Ok(Some(s)),
            Some(other) => Err(Self::bad(op, name, "a string", &other)),
        }
    }

    /// A list of integers; a single integer is accepted as a one-element list.
    pub fn list(&mut self, op: &str, name: &str) -> Result<Option<Vec<i64>>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::List(l)) => Ok(Some(l)),
            Some(AttrValue::Scalar(Scalar::Int(v))) => Ok(Some(vec![v])),
            Some(other) => Err(Self::bad(op, name, "a list of integers", &other)),
        }
    }

    pub fn req_list(&mut self, op: &str, name: &str) -> Result<Vec<i64>> {
        self.list(op, name)?.ok_or_else(|| Self::missing(op, name))
    }

    pub fn dtype(&mut self, op: &str, name: &str) -> Result<Option<DType>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::DType(d)) => Ok(Some(d)),
            Some(other) => Err(Self::bad(op, name, "a dtype", &other)),
        }
    }

    pub fn device(&mut self, op: &str, name: &str) -> Result<Option<Device>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::Device(d)) => Ok(Some(d)),
            Some(other) => Err(Self::bad(op, name, "a device", &other)),
        }
    }

    pub fn memory_format(&mut self, op: &str, name: &str) -> Result<Option<MemoryFormat>> {
        match self.take(name) {
            None => Ok(None),
            Some(AttrValue::MemoryFormat(m)) => Ok(Some(m)),
            Some(other) => Err(Self::bad(op, name, "a memory format", &other)),
        }
    }

    /// A clamp bound: a scalar, a `%value` (returned by name), or absent.
    pub fn bound(&mut self, op: &str, name: &str) -> Result<(Bound, Option<String>)> {
        match self.take(name) {
            None => Ok((Bound::None, None)),
            Some(AttrValue::Scalar(s)) => Ok((Bound::Scalar(s), None)),
            Some(AttrValue::Value(v)) => Ok((Bound::Tensor, Some(v))),
            Some(other) => Err(Self::bad(op, name, "a number or a %value", &other)),
        }
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

/// `zeros`/`ones` for a full whose value is exactly +0.0 or 1.0.
fn full_alias(value: Scalar) -> Option<&'static str> {
    match value {
        Scalar::Float(v) if v.to_bits() == 0f64.to_bits() => Some("zeros"),
        Scalar::Float(v) if v == 1.0 => Some("ones"),
        _ => None,
    }
}

fn push(attrs: &mut Vec<(&'static str, AttrValue)>, name: &'static str, value: AttrValue) {
    attrs.push((name, value));
}

impl Op {
    /// The `.kir` name.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Unary(u) => u.name(),
            Op::Binary(b) => b.name(),
            Op::Where => "where",
            Op::Clamp { .. } => "clamp",
            Op::Cast { .. } => "cast",
            Op::Reduce { op, .. } => op.name(),
            Op::ArgReduce { op, .. } => op.name(),
            Op::Softmax { log: false, .. } => "softmax",
            Op::Softmax { log: true, .. } => "log_softmax",
            Op::LayerNorm { .. } => "layer_norm",
            Op::Reshape { .. } => "reshape",
            Op::View { .. } => "view",
            Op::Permute { .. } => "permute",
            Op::Transpose { .. } => "transpose",
            Op::T => "t",
            Op::Expand { .. } => "expand",
            Op::Squeeze { .. } => "squeeze",
            Op::Unsqueeze { .. } => "unsqueeze",
            Op::Slice { .. } => "slice",
            Op::Select { .. } => "select",
            Op::Flatten { .. } => "flatten",
            Op::Contiguous { .. } => "contiguous",
            Op::Clone { .. } => "clone",
            Op::To { .. } => "to",
            Op::Cat { .. } => "cat",
            Op::Matmul => "matmul",
            Op::Full { value, .. } => match full_alias(*value) {
                Some(alias) => alias,
                None => "full",
            },
            Op::Arange { .. } => "arange",
        }
    }

    /// The dtype a scalar literal operand takes when this op computes in
    /// `compute`: PyTorch's mul and div kernels keep the scalar at opmath
    /// precision for f16/bf16 ("original_scalar_value"); every other kernel
    /// converts it to the computation dtype.
    pub fn scalar_dtype(&self, compute: DType) -> DType {
        let opmath_scalar = matches!(
            self,
            Op::Binary(BinaryOp::Mul | BinaryOp::Div | BinaryOp::DivTrunc | BinaryOp::DivFloor)
        );
        if opmath_scalar && compute.is_reduced_float() {
            compute.opmath()
        } else {
            compute
        }
    }

    /// How `pow(tensor, exponent)` computes for a scalar exponent: PyTorch
    /// special-cases common exponents before falling back to `pow`, and
    /// every implementation must do the same to give the same bits.
    pub fn pow_scalar_form(exponent: Scalar, base_is_float: bool) -> PowForm {
        let e = match exponent {
            Scalar::Complex(re, im) if im == 0.0 => re,
            Scalar::Complex(..) => return PowForm::General,
            Scalar::Float(f) => f,
            Scalar::Int(i) => i as f64,
            Scalar::UInt(u) => u as f64,
            Scalar::Bool(b) => b as u8 as f64,
        };
        match (e, base_is_float) {
            (1.0, _) => PowForm::Identity,
            (0.0, _) => PowForm::One,
            (2.0, true) => PowForm::Square,
            (3.0, true) => PowForm::Cube,
            (0.5, true) => PowForm::Sqrt,
            (-0.5, true) => PowForm::Rsqrt,
            (-1.0, true) => PowForm::Reciprocal,
            (-2.0, true) => PowForm::ReciprocalSquare,
            _ => PowForm::General,
        }
    }

    /// Ops that return a view of their first operand.
    pub fn is_view(&self) -> bool {
        matches!(
            self,
            Op::Reshape { .. }
                | Op::View { .. }
                | Op::Permute { .. }
                | Op::Transpose { .. }
                | Op::T
                | Op::Expand { .. }
                | Op::Squeeze { .. }
                | Op::Unsqueeze { .. }
                | Op::Slice { .. }
                | Op::Select { .. }
                | Op::Flatten { .. }
        )
    }

    /// Elementwise ops (one output element from the same-index input elements).
    pub fn is_pointwise(&self) -> bool {
        matches!(
            self,
            Op::Unary(_) | Op::Binary(_) | Op::Where | Op::Clamp { .. } | Op::Cast { .. }
        )
    }

    /// Ops the decompose pass lowers to primitives.
    pub fn is_composite(&self) -> bool {
        matches!(
            self,
            Op::Softmax { .. }
                | Op::LayerNorm { .. }
                | Op::Unary(UnaryOp::Gelu | UnaryOp::GeluTanh | UnaryOp::Silu | UnaryOp::Sigmoid)
                | Op::Reduce {
                    op: ReduceOp::Mean,
                    ..
                }
                | Op::Clamp { .. }
        )
    }

    /// Ops that make a tensor from nothing.
    pub fn is_creation(&self) -> bool {
        matches!(self, Op::Full { .. } | Op::Arange { .. })
    }

    /// The attributes to print, in a stable order; defaults are left out.
    pub fn attrs(&self) -> Vec<(&'static str, AttrValue)> {
        let mut a = Vec::new();
        let list = |v: &[i64]| AttrValue::List(v.to_vec());
        let int = |v: i64| AttrValue::Scalar(Scalar::Int(v));
        let boolean = |v: bool| AttrValue::Scalar(Scalar::Bool(v));
        match self {
            Op::Unary(UnaryOp::GeluTanh) => {
                push(&mut a, "approximate", AttrValue::Str("tanh".into()))
            }
            Op::Binary(BinaryOp::DivTrunc) => {
                push(&mut a, "rounding_mode", AttrValue::Str("trunc".into()))
            }
            Op::Binary(BinaryOp::DivFloor) => {
                push(&mut a, "rounding_mode", AttrValue::Str("floor".into()))
            }
            Op::Unary(_) | Op::Binary(_) | Op::Where | Op::T | Op::Matmul => {}
            Op::Clamp { min, max } => {
                // Tensor bounds are named by the printer, which knows operand names.
                if let Bound::Scalar(s) = min {
                    push(&mut a, "min", AttrValue::Scalar(*s));
                }
                if let Bound::Scalar(s) = max {
                    push(&mut a, "max", AttrValue::Scalar(*s));
                }
            }
            Op::Cast { dtype } => push(&mut a, "dtype", AttrValue::DType(*dtype)),
            Op::Reduce {
                dims,
                keepdim,
                dtype,
                ..
            } => {
                if let Some(d) = dims {
                    push(&mut a, "dims", list(d));
                }
                if *keepdim {
                    push(&mut a, "keepdim", boolean(true));
                }
                if let Some(d) = dtype {
                    push(&mut a, "dtype", AttrValue::DType(*d));
                }
            }
            Op::ArgReduce { dim, keepdim, .. } => {
                if let Some(d) = dim {
                    push(&mut a, "dim", int(*d));
                }
                if *keepdim {
                    push(&mut a, "keepdim", boolean(true));
                }
            }
            Op::Softmax { dim, dtype, .. } => {
                push(&mut a, "dim", int(*dim));
                if let Some(d) = dtype {
                    push(&mut a, "dtype", AttrValue::DType(*d));
                }
            }
            Op::LayerNorm {
                normalized_shape,
                eps,
                ..
            } => {
                push(&mut a, "normalized_shape", list(normalized_shape));
                push(&mut a, "eps", AttrValue::Scalar(Scalar::Float(*eps)));
            }
            Op::Reshape { shape } | Op::View { shape } | Op::Expand { shape } => {
                push(&mut a, "shape", list(shape))
            }
            Op::Permute { dims } => push(&mut a, "dims", list(dims)),
            Op::Transpose { dim0, dim1 } => {
                push(&mut a, "dim0", int(*dim0));
                push(&mut a, "dim1", int(*dim1));
            }
            Op::Squeeze { dims } => {
                if let Some(d) = dims {
                    push(&mut a, "dims", list(d));
                }
            }
            Op::Unsqueeze { dim } => push(&mut a, "dim", int(*dim)),
            Op::Slice {
                dim,
                start,
                end,
                step,
            } => {
                push(&mut a, "dim", int(*dim));
                if let Some(s) = start {
                    push(&mut a, "start", int(*s));
                }
                if let Some(e) = end {
                    push(&mut a, "end", int(*e));
                }
                push(&mut a, "step", int(*step));
            }
            Op::Select { dim, index } => {
                push(&mut a, "dim", int(*dim));
                push(&mut a, "index", int(*index));
            }
            Op::Flatten { start_dim, end_dim } => {
                push(&mut a, "start_dim", int(*start_dim));
                push(&mut a, "end_dim", int(*end_dim));
            }
            Op::Contiguous { memory_format } => {
                if *memory_format != MemoryFormat::Contiguous {
                    push(
                        &mut a,
                        "memory_format",
                        AttrValue::MemoryFormat(*memory_format),
                    );
                }
            }
            Op::Clone {
                memory_format,
                strides,
            } => {
                if let Some(st) = strides {
                    push(&mut a, "strides", AttrValue::List(st.clone()));
                }
                if *memory_format != MemoryFormat::Preserve {
                    push(
                        &mut a,
                        "memory_format",
                        AttrValue::MemoryFormat(*memory_format),
                    );
                }
            }
            Op::To {
                dtype,
                device,
                memory_format,
                copy,
            } => {
                if let Some(d) = dtype {
                    push(&mut a, "dtype", AttrValue::DType(*d));
                }
                if let Some(d) = device {
                    push(&mut a, "device", AttrValue::Device(*d));
                }
                if *memory_format != MemoryFormat::Preserve {
                    push(
                        &mut a,
                        "memory_format",
                        AttrValue::MemoryFormat(*memory_format),
                    );
                }
                if *copy {
                    push(&mut a, "copy", boolean(true));
                }
            }
            Op::Cat { dim } => push(&mut a, "dim", int(*dim)),
            Op::Full {
                shape,
                value,
                dtype,
                device,
            } => {
                push(&mut a, "shape", list(shape));
                if full_alias(*value).is_none() {
                    push(&mut a, "value", AttrValue::Scalar(*value));
                }
                if let Some(d) = dtype {
                    push(&mut a, "dtype", AttrValue::DType(*d));
                }
                if let Some(d) = device {
                    push(&mut a, "device", AttrValue::Device(*d));
                }
            }
            Op::Arange {
                start,
                end,
                step,
                dtype,
                device,
            } => {
                push(&mut a, "start", AttrValue::Scalar(*start));
                push(&mut a, "end", AttrValue::Scalar(*end));
                push(&mut a, "step", AttrValue::Scalar(*step));
                if let Some(d) = dtype {
                    push(&mut a, "dtype", AttrValue::DType(*d));
                }
                if let Some(d) = device {
                    push(&mut a, "device", AttrValue::Device(*d));
                }
            }
        }
        a
    }

    /// Builds an op from its `.kir` name and attributes. Returns the op and
    /// the names of extra tensor operands given as attributes (clamp bounds).
    pub fn from_attrs(name: &str, mut attrs: Attrs) -> Result<(Op, Vec<String>)> {
        let mut extra = Vec::new();
        let op = if let Some((u, _)) = UNARY_NAMES.iter().find(|(_, n)| *n == name) {
            if *u == UnaryOp::Gelu {
                match attrs.string(name, "approximate")?.as_deref() {
                    None | Some("none") => Op::Unary(UnaryOp::Gelu),
                    Some("tanh") => Op::Unary(UnaryOp::GeluTanh),
                    Some(other) => {
                        return Err(Error::new(
                            ErrorKind::Attribute,
                            format!(
                                "gelu: approximate must be \"none\" or \"tanh\", got \"{other}\""
                            ),
                        ));
                    }
                }
            } else {
                Op::Unary(*u)
            }
        } else if let Some((b, _)) = BINARY_NAMES.iter().find(|(_, n)| *n == name) {
            if *b == BinaryOp::Div {
                match attrs.string(name, "rounding_mode")?.as_deref() {
                    None => Op::Binary(BinaryOp::Div),
                    Some("trunc") => Op::Binary(BinaryOp::DivTrunc),
                    Some("floor") => Op::Binary(BinaryOp::DivFloor),
                    Some(other) => {
                        return Err(Error::new(
                            ErrorKind::Attribute,
                            format!(
                                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
                            ),
                        ));
                    }
                }
            } else {
                Op::Binary(*b)
            }
        } else {
            match name {
                "where" => Op::Where,
                "clamp" => {
                    let (min, min_v) = attrs.bound(name, "min")?;
                    let (max, max_v) = attrs.bound(name, "max")?;
                    extra.extend(min_v);
                    extra.extend(max_v);
                    Op::Clamp { min, max }
                }
                "cast" => Op::Cast {
                    dtype: attrs
                        .dtype(name, "dtype")?
                        .ok_or_else(|| Attrs::missing(name, "dtype"))?,
                },
                "sum" | "prod" | "mean" | "amax" | "amin" => {
                    let op = match name {
                        "sum" => ReduceOp::Sum,
                        "prod" => ReduceOp::Prod,
                        "mean" => ReduceOp::Mean,
                        "amax" => ReduceOp::Amax,
                        _ => ReduceOp::Amin,
                    };
                    Op::Reduce {
                        op,
                        dims: attrs.list(name, "dims")?,
                        keepdim: attrs.bool(name, "keepdim")?.unwrap_or(false),
                        dtype: attrs.dtype(name, "dtype")?,
                    }
                }
                "argmax" | "argmin" => Op::ArgReduce {
                    op: if name == "argmax" {
                        ArgReduceOp::Argmax
                    } else {
                        ArgReduceOp::Argmin
                    },
                    dim: attrs.int(name, "dim")?,
                    keepdim: attrs.bool(name, "keepdim")?.unwrap_or(false),
                },
                "softmax" | "log_softmax" => Op::Softmax {
                    dim: attrs.req_int(name, "dim")?,
                    log: name == "log_softmax",
                    dtype: attrs.dtype(name, "dtype")?,
                },
                "layer_norm" => Op::LayerNorm {
                    normalized_shape: attrs.req_list(name, "normalized_shape")?,
                    eps: attrs.float(name, "eps")?.unwrap_or(1e-5),
                    // Set from the operand count by the caller.
                    weight: false,
                    bias: false,
                },
                "reshape" => Op::Reshape {
                    shape: attrs.req_list(name, "shape")?,
                },
                "view" => Op::View {
                    shape: attrs.req_list(name, "shape")?,
                },
                "expand" => Op::Expand {
                    shape: attrs.req_list(name, "shape")?,
                },
                "permute" => Op::Permute {
                    dims: attrs.req_list(name, "dims")?,
                },
                "transpose" => Op::Transpose {
                    dim0: attrs.req_int(name, "dim0")?,
                    dim1: attrs.req_int(name, "dim1")?,
                },
                "t" => Op::T,
                "squeeze" => Op::Squeeze {
                    dims: attrs.list(name, "dims")?,
                },
                "unsqueeze" => Op::Unsqueeze {
                    dim: attrs.req_int(name, "dim")?,
                },
                "slice" => Op::Slice {
                    dim: attrs.int(name, "dim")?.unwrap_or(0),
                    start: attrs.int(name, "start")?,
                    end: attrs.int(name, "end")?,
                    step: attrs.int(name, "step")?.unwrap_or(1),
                },
                "select" => Op::Select {
                    dim: attrs.req_int(name, "dim")?,
                    index: attrs.req_int(name, "index")?,
                },
                "flatten" => Op::Flatten {
                    start_dim: attrs.int(name, "start_dim")?.unwrap_or(0),
                    end_dim: attrs.int(name, "end_dim")?.unwrap_or(-1),
                },
                "contiguous" => Op::Contiguous {
                    memory_format: attrs
                        .memory_format(name, "memory_format")?
                        .unwrap_or_default(),
                },
                "clone" => Op::Clone {
                    memory_format: attrs
                        .memory_format(name, "memory_format")?
                        .unwrap_or(MemoryFormat::Preserve),
                    strides: attrs.list(name, "strides")?,
                },
                "to" => Op::To {
                    dtype: attrs.dtype(name, "dtype")?,
                    device: attrs.device(name, "device")?,
                    memory_format: attrs
                        .memory_format(name, "memory_format")?
                        .unwrap_or(MemoryFormat::Preserve),
                    copy: attrs.bool(name, "copy")?.unwrap_or(false),
                },
                "cat" => Op::Cat {
                    dim: attrs.int(name, "dim")?.unwrap_or(0),
                },
                "matmul" => Op::Matmul,
                "full" | "zeros" | "ones" => {
                    let shape = attrs.req_list(name, "shape")?;
                    // zeros/ones are full with a float value: like PyTorch,
                    // they default to the default dtype.
                    let value = match name {
                        "full" => attrs
                            .scalar(name, "value")?
                            .ok_or_else(|| Attrs::missing(name, "value"))?,
                        "zeros" => Scalar::Float(0.0),
                        _ => Scalar::Float(1.0),
                    };
                    Op::Full {
                        shape,
                        value,
                        dtype: attrs.dtype(name, "dtype")?,
                        device: attrs.device(name, "device")?,
                    }
                }
                "arange" => {
                    let start = attrs.scalar(name, "start")?.unwrap_or(Scalar::Int(0));
                    let end = attrs
                        .scalar(name, "end")?
                        .ok_or_else(|| Attrs::missing(name, "end"))?;
                    let step = attrs.scalar(name, "step")?.unwrap_or(Scalar::Int(1));
                    Op::Arange {
                        start,
                        end,
                        step,
                        dtype: attrs.dtype(name, "dtype")?,
                        device: attrs.device(name, "device")?,
                    }
                }
                other => {
                    return Err(Error::new(
                        ErrorKind::UnknownOp,
                        format!("unknown op '{other}'"),
                    ));
                }
            }
        };
        attrs.finish(name)?;
        Ok((op, extra))
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        let attrs = self.attrs();
        if !attrs.is_empty() {
            f.write_str(" {")?;
            for (i, (n, v)) in attrs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{n} = {v}")?;
            }
            f.write_str("}")?;
        }
        Ok(())
    }
}
