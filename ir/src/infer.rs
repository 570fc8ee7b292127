//! Type inference: the result types of every op, and the dtype each operand
//! is computed in, by PyTorch's rules.
//!
//! [`infer`] checks an instruction's operands against its op's slots, then
//! runs the op's own rule (named by its row of the op table; the rules are
//! the `pub fn`s below), then the parts every op shares, in PyTorch's order
//! so that a program PyTorch rejects is rejected here with the same
//! message: argument checks, type promotion ([`crate::promotion`]), the
//! `out_dtype` casting rule, then (on devices with kernels) operand
//! conversions and the kernel's dtype set ([`crate::support`]). Layouts are
//! not inferred here; the layout pass assigns them.

use crate::device::{Device, Placement, common_device};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::ops::attrs::AttrValue;
use crate::ops::def::{KernelRule, Results, SlotKind};
use crate::ops::prims::{Refusal, RefuseWhen, ResultDType, ScalarOperands};
use crate::ops::{BinaryOp, LossReduction, Op, ReduceOp};
use crate::promotion::{DefaultDType, Operand as PromoOperand, check_can_cast, result_type};
use crate::scalar::Scalar;
use crate::support::check_copy;
use crate::types::TensorType;
use crate::view::{Geometry, broadcast_shapes, format_shape, wrap_dim};

/// One operand as inference sees it.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    /// A tensor of this type.
    Tensor(&'a TensorType),
    /// A scalar literal.
    Scalar(Scalar),
    /// An absent optional tensor (`none`).
    None,
}

impl Arg<'_> {
    fn promo(&self) -> Option<PromoOperand> {
        match self {
            Arg::Tensor(t) => Some(PromoOperand::tensor(t.dtype, t.rank())),
            Arg::Scalar(s) => Some(PromoOperand::Scalar(s.kind())),
            Arg::None => None,
        }
    }

    fn tensor(&self) -> Option<&TensorType> {
        match self {
            Arg::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The dtype this operand holds (a scalar's is its promotion dtype).
    fn dtype(&self, default: DefaultDType) -> Option<DType> {
        match self {
            Arg::Tensor(t) => Some(t.dtype),
            Arg::Scalar(s) => Some(s.promotion_dtype(default)),
            Arg::None => None,
        }
    }

    fn shape(&self) -> &[i64] {
        match self {
            Arg::Tensor(t) => &t.shape,
            _ => &[],
        }
    }

    fn is_bool(&self) -> bool {
        match self {
            Arg::Tensor(t) => t.dtype.is_bool(),
            Arg::Scalar(s) => s.is_bool(),
            Arg::None => false,
        }
    }
}

/// What inference settles for one instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Inferred {
    /// The result types, one per result (layouts unspecified).
    pub results: Vec<TensorType>,
    /// The dtype each operand must be converted to before the op computes
    /// (`None`: used as is). The promotion pass inserts these casts.
    pub operand_dtypes: Vec<Option<DType>>,
    /// The dtype the op produces before `out_dtype` (the first result's
    /// dtype when there is no `out_dtype`).
    pub natural_dtype: DType,
}

impl Inferred {
    /// The (first) result type.
    pub fn ty(&self) -> &TensorType {
        &self.results[0]
    }

    /// The dtype the op computes in: its first operand's conversion, or
    /// its result's dtype.
    pub fn compute(&self) -> DType {
        self.operand_dtypes
            .first()
            .copied()
            .flatten()
            .unwrap_or(self.results[0].dtype)
    }
}

/// Settings inference depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InferCtx {
    /// What `torch.set_default_dtype` set.
    pub default_dtype: DefaultDType,
}

pub(crate) fn err(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error::new(kind, message)
}

/// Infers the results of `op` applied to `args`, written to `out_dtype`
/// when given.
pub fn infer(
    op: &Op,
    args: &[Arg<'_>],
    out_dtype: Option<DType>,
    ctx: &InferCtx,
) -> Result<Inferred> {
    check_operands(op, args)?;
    let device = result_device(op, args)?;
    let def = op.def();
    let mut inf = (def.rules.infer)(op, args, ctx)?;
    let expected = match def.rules.results {
        Results::Fixed(n) => Some(n),
        Results::Variable => None,
    };
    if inf.results.is_empty() || expected.is_some_and(|n| n != inf.results.len()) {
        return Err(err(
            ErrorKind::Backend,
            format!(
                "{}: inference gave {} results",
                op.name(),
                inf.results.len()
            ),
        ));
    }
    inf.natural_dtype = inf.results[0].dtype;
    if let Some(out) = out_dtype {
        if inf.results.len() > 1 {
            return Err(err(
                ErrorKind::Attribute,
                format!(
                    "{}: out_dtype is not supported by an op with several results",
                    op.name()
                ),
            ));
        }
        check_can_cast(inf.results[0].dtype, out)?;
    }
    if !device.is_meta() {
        check_kernels(op, args, &inf, ctx)?;
        if let Some(out) = out_dtype {
            check_copy(inf.results[0].dtype, out)?;
        }
    }
    if let Some(out) = out_dtype {
        inf.results[0].dtype = out;
    }
    for r in &mut inf.results {
        r.device = device;
    }
    Ok(inf)
}

/// The first operand, a tensor ([`check_operands`] made sure).
fn tensor<'a>(args: &[Arg<'a>]) -> Result<&'a TensorType> {
    nth_tensor(args, 0)
}

pub(crate) fn nth_tensor<'a>(args: &[Arg<'a>], i: usize) -> Result<&'a TensorType> {
    match args.get(i) {
        Some(Arg::Tensor(t)) => Ok(t),
        _ => Err(err(
            ErrorKind::Arity,
            format!("operand {} is not a tensor", i + 1),
        )),
    }
}

/// One result of the given shape and dtype, computed from operands
/// converted as given.
pub(crate) fn single(
    shape: Vec<i64>,
    dtype: DType,
    operand_dtypes: Vec<Option<DType>>,
) -> Inferred {
    Inferred {
        results: vec![TensorType::new(shape, dtype)],
        operand_dtypes,
        natural_dtype: dtype,
    }
}

pub(crate) fn check_shape(shape: &[i64]) -> Result<()> {
    if let Some(d) = shape.iter().find(|d| **d < 0) {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "Trying to create tensor with negative dimension {d}: {}",
                format_shape(shape)
            ),
        ));
    }
    crate::view::numel(shape).map(|_| ())
}

/// Checks operands against the op's slots: their count, and which are
/// tensors, literals, `none`, or list elements.
fn check_operands(op: &Op, args: &[Arg<'_>]) -> Result<()> {
    let name = op.name();
    let slots = op.def().operands;
    let list = slots.iter().position(|s| s.kind.is_list());
    match list {
        None if args.len() != slots.len() => {
            let required = slots
                .iter()
                .take_while(|s| s.kind != SlotKind::Optional)
                .count();
            let n = if args.len() < required {
                required
            } else {
                slots.len()
            };
            return Err(err(
                ErrorKind::Arity,
                format!(
                    "{name} takes {n} operand{}, got {}",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
            ));
        }
        Some(_) if args.len() < slots.len() - 1 => {
            return Err(err(
                ErrorKind::Arity,
                format!("{name}: missing operand {}", args.len() + 1),
            ));
        }
        _ => {}
    }
    let def = op.def();
    for (i, arg) in args.iter().enumerate() {
        let Some(slot) = def.slot_of(i, args.len()) else {
            continue;
        };
        let allowed = match (slot.kind, arg) {
            (_, Arg::Tensor(_)) => true,
            (SlotKind::Any, Arg::Scalar(_)) => true,
            (SlotKind::Optional | SlotKind::OptionalList, Arg::None) => true,
            _ => false,
        };
        if !allowed {
            let what = match arg {
                Arg::Scalar(s) => format!("not the scalar {s}"),
                _ => "not none".to_string(),
            };
            return Err(err(
                ErrorKind::Arity,
                format!(
                    "{name}: {} (operand {}) must be a tensor, {what}",
                    slot.name,
                    i + 1
                ),
            ));
        }
    }
    if list.is_some() && args.len() == slots.len() - 1 {
        return Err(err(
            ErrorKind::Arity,
            format!("torch.{name}(): expected a non-empty list of Tensors"),
        ));
    }
    // Creation ops may take numbers only (`normal(0.0, 1.0, size)`).
    if !op.is_creation() && !args.is_empty() && args.iter().all(|a| matches!(a, Arg::Scalar(_))) {
        return Err(err(
            ErrorKind::Arity,
            format!("{name} needs at least one tensor operand"),
        ));
    }
    if let Op::Binary { op: b } = op {
        let scalar_at = |i: usize| matches!(args.get(i), Some(Arg::Scalar(_)));
        let (bad, what) = match b.def().scalars {
            ScalarOperands::Either => (None, ""),
            ScalarOperands::Second => (scalar_at(0).then_some(0), "input"),
            ScalarOperands::Neither => match (scalar_at(0), scalar_at(1)) {
                (true, _) => (Some(0), "input"),
                (_, true) => (Some(1), "other"),
                _ => (None, ""),
            },
        };
        if let Some(i) = bad {
            let Some(Arg::Scalar(s)) = args.get(i) else {
                return Ok(());
            };
            return Err(err(
                ErrorKind::Arity,
                format!(
                    "{name}: {what} (operand {}) must be a tensor, not the scalar {s}",
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

/// The device an op's result lives on.
fn result_device(op: &Op, args: &[Arg<'_>]) -> Result<Device> {
    let placements = placements(args);
    if let Op::To {
        device: Some(d), ..
    } = op
    {
        common_device(&placements)?;
        return Ok(d.for_tensor());
    }
    if placements.is_empty() {
        // Creation ops (and `normal` of two numbers): their `device`
        // attribute, else the CPU.
        let device = op.attrs().into_iter().find_map(|(name, v)| match v {
            AttrValue::Device(d) if name == "device" => Some(d),
            _ => None,
        });
        return Ok(device.unwrap_or(Device::CPU).for_tensor());
    }
    common_device(&placements)
}

fn placements(args: &[Arg<'_>]) -> Vec<Placement> {
    args.iter()
        .filter_map(|a| a.tensor())
        .map(|t| Placement {
            device: t.device,
            rank: t.rank(),
        })
        .collect()
}

fn broadcast_all(args: &[Arg<'_>]) -> Result<Vec<i64>> {
    args.iter()
        .try_fold(Vec::new(), |acc, a| broadcast_shapes(&acc, a.shape()))
}

/// PyTorch's result dtype for promotion, refusing dtypes outside Kiln's table.
fn common_dtype(args: &[Arg<'_>], ctx: &InferCtx) -> Result<DType> {
    let operands: Vec<PromoOperand> = args.iter().filter_map(Arg::promo).collect();
    result_type(&operands, ctx.default_dtype)
}

/// The first refusal that applies to these operands.
fn check_refusals(refusals: &[Refusal], args: &[Arg<'_>]) -> Result<()> {
    let first = args.first();
    let complex = |a: &Arg| a.tensor().is_some_and(|t| t.dtype.is_complex());
    for r in refusals {
        let applies = match r.when {
            RefuseWhen::InputBool => first.is_some_and(Arg::is_bool),
            RefuseWhen::InputComplex => first.is_some_and(complex),
            RefuseWhen::AllBool => args.iter().all(Arg::is_bool),
            RefuseWhen::AnyBool => args.iter().any(Arg::is_bool),
            RefuseWhen::AnyComplex => args.iter().any(complex),
        };
        if applies {
            return Err(err(ErrorKind::DType, r.message));
        }
    }
    Ok(())
}

/// PyTorch's rule for ops that compute in floats: integers and bool go to
/// the default float dtype, other dtypes stay.
pub(crate) fn floating(d: DType, ctx: &InferCtx) -> DType {
    if d.is_integral() || d.is_bool() {
        ctx.default_dtype.dtype()
    } else {
        d
    }
}

/// A primitive unary op: its refusals, then int→float promotion for the
/// ops that compute in floats.
pub fn unary(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Unary { op } = op else {
        return Err(wrong_rule("unary"));
    };
    let def = op.def();
    check_refusals(def.refusals, args)?;
    let x = tensor(args)?;
    let d = x.dtype;
    let compute = if def.int_to_float {
        floating(d, ctx)
    } else {
        d
    };
    let result = match def.result {
        ResultDType::Same => compute,
        ResultDType::Bool => DType::Bool,
        ResultDType::Real => compute.to_real(),
    };
    Ok(single(x.shape.clone(), result, vec![Some(compute)]))
}

/// A pointwise op of its input's dtype (gelu, silu: their kernels refuse
/// integers).
pub fn same_dtype(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    Ok(single(x.shape.clone(), x.dtype, vec![Some(x.dtype)]))
}

/// A pointwise op computing integers and bool in the default float dtype
/// (sigmoid).
pub fn int_to_float(_: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let compute = floating(x.dtype, ctx);
    Ok(single(x.shape.clone(), compute, vec![Some(compute)]))
}

/// `polygamma(n, x)`: `n` must not be negative (checked before the
/// dtype, as PyTorch does); integers and bool compute in the default float
/// dtype.
pub fn polygamma(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Polygamma { n } = op else {
        return Err(wrong_rule("polygamma"));
    };
    if *n < 0 {
        return Err(err(
            ErrorKind::Attribute,
            "polygamma(n, x) does not support negative n.",
        ));
    }
    int_to_float(op, args, ctx)
}

/// An op PyTorch defines in Python on its input as it is (softsign's
/// `x / (x.abs() + 1)` adds in the integer dtype, wrapping as it does),
/// whose result is a float: integers and bool give the default float dtype.
pub fn int_result_float(_: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let result = floating(x.dtype, ctx);
    Ok(single(x.shape.clone(), result, vec![Some(x.dtype)]))
}

/// `square`: `pow(x, 2)`, so bool squares as int64.
pub fn square(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let d = if x.dtype.is_bool() {
        DType::I64
    } else {
        x.dtype
    };
    Ok(single(x.shape.clone(), d, vec![Some(d)]))
}

/// `positive`: PyTorch's refusal of bool.
pub fn positive(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    if x.dtype == DType::F4E2M1FNX2 {
        // PyTorch returns the tensor itself; Kiln's result is a copy, and
        // float4_e2m1fn_x2 has none.
        return Err(err(
            ErrorKind::Unsupported,
            "positive of a float4_e2m1fn_x2 tensor: Kiln's result is a copy, and that dtype cannot be copied",
        ));
    }
    if x.dtype.is_bool() {
        return Err(Error::new(
            ErrorKind::DType,
            "The `+` operator, on a bool tensor is not supported.",
        ));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![Some(x.dtype)]))
}

/// `isinf`, `isfinite`, `isposinf`, `isneginf`: a bool of the input's
/// shape. Complex inputs are refused (Kiln has no real and imaginary parts
/// to test separately; PyTorch refuses them for isposinf and isneginf).
pub fn predicate(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    if x.dtype.is_complex() {
        let (kind, message) = match op {
            Op::Isposinf | Op::Isneginf => (
                ErrorKind::DType,
                format!("{} does not support complex inputs.", op.name()),
            ),
            _ => (
                ErrorKind::Unsupported,
                format!(
                    "{} of a complex tensor: Kiln cannot test its real and imaginary parts yet",
                    op.name()
                ),
            ),
        };
        return Err(Error::new(kind, message));
    }
    refuse_float4(op, x.dtype)?;
    Ok(single(x.shape.clone(), DType::Bool, vec![Some(x.dtype)]))
}

/// `nan_to_num`: the input's dtype; complex refused (PyTorch replaces in
/// each part, which Kiln cannot address yet).
pub fn nan_to_num(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    // PyTorch's CPU kernel takes no float8 or float4 format.
    if x.dtype.is_shell() {
        return Err(crate::support::not_implemented("nan_to_num", x.dtype));
    }
    if x.dtype.is_complex() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "nan_to_num of a complex tensor: Kiln cannot replace in its real and imaginary parts yet",
        ));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![Some(x.dtype)]))
}

/// A composite of several operands promoted together (PyTorch's
/// TensorIterator): broadcast shapes, the common dtype, and for the ops
/// that compute in floats (xlogy, true_divide, ...) integers and bool in
/// the default float dtype; float_power computes in float64 or complex128.
pub fn promoted(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let shape = broadcast_all(args)?;
    let common = common_dtype(args, ctx)?;
    let to_float = matches!(
        op,
        Op::Xlogy | Op::SpecialXlog1py | Op::TrueDivide | Op::Logaddexp | Op::Copysign
    );
    let compute = match op {
        Op::FloatPower if common.is_complex() => DType::C128,
        Op::FloatPower => DType::F64,
        _ if to_float => floating(common, ctx),
        _ => common,
    };
    if matches!(op, Op::Logaddexp) && compute.is_complex() {
        return Err(err(
            ErrorKind::Unsupported,
            format!("logaddexp of {compute} tensors: Kiln has no complex logaddexp yet"),
        ));
    }
    if matches!(op, Op::Addcdiv { .. }) && (compute.is_integral() || compute.is_bool()) {
        return Err(err(
            ErrorKind::DType,
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.",
        ));
    }
    Ok(Inferred {
        results: vec![TensorType::new(shape, compute)],
        operand_dtypes: vec![Some(compute); args.len()],
        natural_dtype: compute,
    })
}

/// `ldexp`: the promoted dtype (integers and bool in the default float
/// dtype); `input` is converted to it, `other` keeps its own dtype, since
/// PyTorch's `mul(input, pow(2, other))` computes `2^other` in it (an f16
/// `other` rounds `2^other` to f16; an integer one is exact).
pub fn ldexp(_: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let shape = broadcast_all(args)?;
    let compute = floating(common_dtype(args, ctx)?, ctx);
    let Some(other) = args.get(1).and_then(|a| a.tensor()) else {
        return Err(err(ErrorKind::Arity, "ldexp takes two tensors"));
    };
    Ok(Inferred {
        results: vec![TensorType::new(shape, compute)],
        operand_dtypes: vec![Some(compute), Some(other.dtype)],
        natural_dtype: compute,
    })
}

/// `heaviside`: both operands of one dtype, not complex (PyTorch's rules).
pub fn heaviside(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let shape = broadcast_all(args)?;
    let (Some(x), Some(v)) = (args.first(), args.get(1)) else {
        return Err(err(ErrorKind::Arity, "heaviside takes two tensors"));
    };
    let (Some(x), Some(v)) = (x.tensor(), v.tensor()) else {
        return Err(err(ErrorKind::Arity, "heaviside takes two tensors"));
    };
    if x.dtype.is_complex() || v.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            "heaviside is not yet implemented for complex tensors.",
        ));
    }
    if x.dtype != v.dtype {
        return Err(err(
            ErrorKind::DType,
            "heaviside is not yet implemented for tensors with different dtypes.",
        ));
    }
    Ok(single(shape, x.dtype, vec![Some(x.dtype), Some(x.dtype)]))
}

/// `clamp_min` and `clamp_max`: `clamp`'s rule with one bound.
pub fn clamp_one(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    match crate::ops::derived::as_clamp(op) {
        Some(clamp) => self::clamp(&clamp, args, ctx),
        None => Err(wrong_rule("clamp_one")),
    }
}

/// The real elementary functions Kiln composes (tan, sinh, ..., exp2):
/// integers and bool in the default float dtype, complex refused (their
/// complex forms need the real and imaginary parts).
pub fn real_math(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "{} of a {} tensor: Kiln computes it on real tensors only",
                op.name(),
                x.dtype
            ),
        ));
    }
    int_to_float(op, args, ctx)
}

/// A primitive binary op: refusals, broadcasting, promotion.
pub fn binary(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Binary { op: b } = op else {
        return Err(wrong_rule("binary"));
    };
    let def = b.def();
    check_refusals(def.refusals, args)?;
    let shape = broadcast_all(args)?;
    let mut compute = common_dtype(args, ctx)?;
    if def.int_to_float {
        compute = floating(compute, ctx);
    }
    let scalar_exponent = matches!(args.get(1), Some(Arg::Scalar(_)));
    let result = if def.is_predicate() {
        DType::Bool
    } else if *b == BinaryOp::Pow && compute.is_bool() && !scalar_exponent {
        // PyTorch's type inference computes bool ** bool tensors in int64
        // (its CPU kernel then refuses bool).
        DType::I64
    } else {
        compute
    };
    Ok(Inferred {
        results: vec![TensorType::new(shape, result)],
        operand_dtypes: vec![Some(compute); 2],
        natural_dtype: result,
    })
}

/// `where(condition, input, other)`.
pub fn where_(_: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let cond = tensor(args)?;
    if !matches!(cond.dtype, DType::Bool | DType::U8) {
        return Err(err(
            ErrorKind::DType,
            format!(
                "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                cond.dtype.scalar_type_name()
            ),
        ));
    }
    let shape = broadcast_all(args)?;
    let compute = common_dtype(&args[1..], ctx)?;
    Ok(single(
        shape,
        compute,
        vec![Some(DType::Bool), Some(compute), Some(compute)],
    ))
}

/// `clamp`: scalar bounds are attributes, tensor bounds operands; each
/// bound is one or the other.
pub fn clamp(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Clamp { min, max } = op else {
        return Err(wrong_rule("clamp"));
    };
    let x = tensor(args)?;
    let tensor_bound = |i: usize| matches!(args.get(i), Some(Arg::Tensor(_)));
    for (name, scalar, i) in [("min", min, 1), ("max", max, 2)] {
        if scalar.is_some() && tensor_bound(i) {
            return Err(err(
                ErrorKind::Attribute,
                format!("clamp: {name} is given both as a scalar and as a tensor"),
            ));
        }
    }
    if min.is_none() && max.is_none() && !tensor_bound(1) && !tensor_bound(2) {
        return Err(err(
            ErrorKind::Attribute,
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    let scalars: Vec<Scalar> = [min, max].into_iter().flatten().copied().collect();
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            "clamp is not supported for complex types",
        ));
    }
    if x.dtype.is_floating_point() && scalars.iter().any(|s| matches!(s, Scalar::Complex(..))) {
        return Err(err(
            ErrorKind::DType,
            "value cannot be converted to type double without overflow",
        ));
    }
    let tensors: Vec<Arg> = args
        .iter()
        .filter(|a| a.tensor().is_some())
        .copied()
        .collect();
    let mut operands = tensors.clone();
    operands.extend(scalars.iter().map(|s| Arg::Scalar(*s)));
    let compute = common_dtype(&operands, ctx)?;
    if compute.is_complex() && tensors.len() == 1 {
        return Err(err(
            ErrorKind::DType,
            "clamp is not supported for complex types",
        ));
    }
    for (name, bound) in [("min", min), ("max", max)] {
        if let Some(s) = bound {
            check_clamp_bound(name, *s, compute)?;
        }
    }
    let shape = broadcast_all(args)?;
    let operand_dtypes = args.iter().map(|a| a.tensor().map(|_| compute)).collect();
    Ok(single(shape, compute, operand_dtypes))
}

/// The C++ type name c10's checked conversions name in their errors.
fn checked_type_name(d: DType) -> &'static str {
    match d {
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::U8 => "uint8",
        DType::I8 => "int8",
        DType::I16 => "int16",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::U16 => "uint16",
        DType::U32 => "uint32",
        DType::U64 => "uint64",
        other => other.torch_name(),
    }
}

/// PyTorch's checks of a scalar clamp bound against the dtype it clamps:
/// an integer min above the range or max below it is refused, and any
/// bound c10 cannot convert without overflow.
fn check_clamp_bound(name: &str, bound: Scalar, compute: DType) -> Result<()> {
    let overflow = || {
        err(
            ErrorKind::Attribute,
            format!(
                "value cannot be converted to type {} without overflow",
                checked_type_name(compute)
            ),
        )
    };
    if let Ok(info) = compute.iinfo() {
        let v = match bound {
            Scalar::Int(i) => i as i128,
            Scalar::UInt(u) => u as i128,
            Scalar::Bool(b) => b as i128,
            _ => return Ok(()),
        };
        let outside = match name {
            "min" => v > info.max,
            _ => v < info.min,
        };
        if outside {
            return Err(err(
                ErrorKind::Attribute,
                format!(
                    "Clamp {name} value {v} is outside the representable range of {}",
                    compute.scalar_type_name()
                ),
            ));
        }
        // c10 accepts negative values for unsigned types down to -max.
        let lowest = if compute.is_signed() {
            info.min
        } else {
            -info.max
        };
        if v < lowest || v > info.max {
            return Err(overflow());
        }
    } else if let Ok(info) = compute.finfo() {
        let v = bound.to_f64();
        if !compute.is_complex() && v.is_finite() && v.abs() > info.max {
            return Err(overflow());
        }
    }
    Ok(())
}

/// A scalar clamp bound as the dtype it clamps holds it: integers saturate
/// into the dtype's range (a vacuous bound stays vacuous), as PyTorch
/// compares them.
pub fn clamp_bound(bound: Scalar, compute: DType) -> Scalar {
    match (compute.iinfo(), bound) {
        (Ok(info), Scalar::Int(i)) => {
            Scalar::from_i128((i as i128).clamp(info.min, info.max)).unwrap_or(bound)
        }
        _ => bound,
    }
}

/// Wraps and checks reduction dims; `None` or empty means all dims.
pub fn reduced_dims(dims: Option<&[i64]>, rank: usize) -> Result<Vec<bool>> {
    let mut reduced = vec![false; rank];
    match dims {
        None | Some([]) => reduced.iter_mut().for_each(|r| *r = true),
        Some(dims) => {
            let mut seen = vec![false; rank.max(1)];
            for &d in dims {
                let w = wrap_dim(d, rank)?;
                if std::mem::replace(&mut seen[w], true) {
                    return Err(err(
                        ErrorKind::Dim,
                        format!("dim {w} appears multiple times in the list of dims"),
                    ));
                }
                if rank > 0 {
                    reduced[w] = true;
                }
            }
        }
    }
    Ok(reduced)
}

fn reduced_shape(shape: &[i64], reduced: &[bool], keepdim: bool) -> Vec<i64> {
    shape
        .iter()
        .zip(reduced)
        .filter_map(|(&s, &r)| match (r, keepdim) {
            (false, _) => Some(s),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// `cast %x {dtype}`.
pub fn cast(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Cast { dtype } = op else {
        return Err(wrong_rule("cast"));
    };
    let x = tensor(args)?;
    Ok(single(x.shape.clone(), *dtype, vec![None]))
}

/// A primitive value reduction.
pub fn reduce(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Reduce {
        op,
        dims,
        keepdim,
        dtype,
    } = op
    else {
        return Err(wrong_rule("reduce"));
    };
    let x = tensor(args)?;
    let dims = dims.as_deref();
    if *op == ReduceOp::Prod && dims.is_some_and(|d| d.len() > 1) {
        return Err(err(
            ErrorKind::Attribute,
            "prod(): argument 'dim' must be int, not list (prod reduces one dim or all)",
        ));
    }
    if matches!(op, ReduceOp::Amax | ReduceOp::Amin) && x.numel() == 0 {
        let name = op.name();
        match dims {
            None | Some([]) => {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
                    ),
                ));
            }
            Some(ds) => {
                for &d in ds {
                    if x.rank() > 0 && x.shape[wrap_dim(d, x.rank())?] == 0 {
                        return Err(err(
                            ErrorKind::Shape,
                            format!("{name}(): Expected reduction dim {d} to have non-zero size."),
                        ));
                    }
                }
            }
        }
    }
    let reduced = reduced_dims(dims, x.rank())?;
    let compute = match (op, dtype) {
        (ReduceOp::Amax | ReduceOp::Amin, Some(_)) => {
            return Err(err(
                ErrorKind::Attribute,
                format!("{}: no dtype attribute (as torch.{0})", op.name()),
            ));
        }
        (_, Some(d)) => *d,
        (ReduceOp::Sum | ReduceOp::Prod, None) if x.dtype.is_integral() || x.dtype.is_bool() => {
            DType::I64
        }
        (_, None) => x.dtype,
    };
    Ok(single(
        reduced_shape(&x.shape, &reduced, *keepdim),
        compute,
        vec![Some(compute)],
    ))
}

/// `any` and `all`: bool results (uint8 for uint8 input, as PyTorch keeps
/// it), over the truthiness of every element.
pub fn any_all(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (Op::Any { dims, keepdim } | Op::All { dims, keepdim }) = op else {
        return Err(wrong_rule("any_all"));
    };
    let x = tensor(args)?;
    let reduced = reduced_dims(dims.as_deref(), x.rank())?;
    let result = if x.dtype == DType::U8 {
        DType::U8
    } else {
        DType::Bool
    };
    // PyTorch converts the input to bool first: packed float4 has no copy.
    check_copy(x.dtype, DType::Bool)?;
    Ok(single(
        reduced_shape(&x.shape, &reduced, *keepdim),
        result,
        vec![None],
    ))
}

/// `mean`: floats and complex only.
pub fn mean(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Mean {
        dims,
        keepdim,
        dtype,
    } = op
    else {
        return Err(wrong_rule("mean"));
    };
    let x = tensor(args)?;
    let reduced = reduced_dims(dims.as_deref(), x.rank())?;
    let compute = match dtype {
        Some(d) if !(d.is_floating_point() || d.is_complex()) => {
            return Err(err(
                ErrorKind::DType,
                format!(
                    "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: {}",
                    d.scalar_type_name()
                ),
            ));
        }
        None if !(x.dtype.is_floating_point() || x.dtype.is_complex()) => {
            return Err(err(
                ErrorKind::DType,
                format!(
                    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                    x.dtype.scalar_type_name()
                ),
            ));
        }
        Some(d) => *d,
        None => x.dtype,
    };
    Ok(single(
        reduced_shape(&x.shape, &reduced, *keepdim),
        compute,
        vec![Some(compute)],
    ))
}

/// A primitive index reduction: the position (i64) of the first extreme.
pub fn arg_reduce(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::ArgReduce { op, dim, keepdim } = op else {
        return Err(wrong_rule("arg_reduce"));
    };
    let x = tensor(args)?;
    let name = op.name();
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            format!("{name}(): does not support complex input"),
        ));
    }
    let shape = match dim {
        None => {
            if x.numel() == 0 {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "{name}(): Expected reduction dim to be specified for input.numel() == 0."
                    ),
                ));
            }
            if *keepdim { vec![1; x.rank()] } else { vec![] }
        }
        Some(d) => {
            let w = wrap_dim(*d, x.rank())?;
            if x.rank() > 0 && x.shape[w] == 0 {
                return Err(err(
                    ErrorKind::Shape,
                    format!("{name}(): Expected reduction dim {w} to have non-zero size."),
                ));
            }
            let mut reduced = vec![false; x.rank()];
            if x.rank() > 0 {
                reduced[w] = true;
            }
            reduced_shape(&x.shape, &reduced, *keepdim)
        }
    };
    Ok(single(shape, DType::I64, vec![Some(x.dtype)]))
}

/// `softmax`, `log_softmax` and `softmin`, with the optional `dtype` they
/// compute in.
pub fn softmax(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (Op::Softmax { dim, dtype } | Op::LogSoftmax { dim, dtype } | Op::Softmin { dim, dtype }) =
        op
    else {
        return Err(wrong_rule("softmax"));
    };
    let x = tensor(args)?;
    wrap_dim(*dim, x.rank())?;
    let d = dtype.unwrap_or(x.dtype);
    Ok(single(x.shape.clone(), d, vec![Some(d)]))
}

/// PyTorch's refusal of the float8 formats, which no reduction kernel
/// computes.
fn refuse_shell(name: &str, d: DType) -> Result<()> {
    if d.is_shell() {
        return Err(err(
            ErrorKind::DType,
            format!(
                "\"{name}_cpu\" not implemented for '{}'",
                d.scalar_type_name()
            ),
        ));
    }
    Ok(())
}

/// PyTorch's refusal of the packed float4 format, which has no kernel for
/// these ops (its message names the op's CPU kernel).
fn refuse_float4(op: &Op, d: DType) -> Result<()> {
    if d != DType::F4E2M1FNX2 {
        return Ok(());
    }
    let kernel = match op {
        Op::Isposinf => "isposinf_cpu",
        Op::Isneginf => "isneginf_cpu",
        Op::CountNonzero { .. } => "nonzero_count_cpu",
        other => other.name(),
    };
    Err(crate::support::not_implemented(kernel, d))
}

/// `var`, `std`, `var_mean`, `std_mean`: floats and complex only; the
/// deviation is real (complex variance is real), the mean keeps the dtype.
pub fn var_std(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (dims, keepdim, pair) = match op {
        Op::Var { dims, keepdim, .. } | Op::Std { dims, keepdim, .. } => (dims, *keepdim, false),
        Op::VarMean { dims, keepdim, .. } | Op::StdMean { dims, keepdim, .. } => {
            (dims, *keepdim, true)
        }
        _ => return Err(wrong_rule("var_std")),
    };
    let x = tensor(args)?;
    if !(x.dtype.is_floating_point() || x.dtype.is_complex()) {
        let who = if pair { op.name() } else { "std and var" };
        return Err(err(
            ErrorKind::DType,
            format!("{who} only support floating point and complex dtypes"),
        ));
    }
    refuse_shell(op.name(), x.dtype)?;
    if x.dtype == DType::C32 || (pair && x.dtype.is_complex()) {
        // PyTorch reduces these through the real view, part by part (a NaN
        // imaginary part leaves the real mean finite); Kiln's complex
        // arithmetic runs whole, so it refuses rather than differ.
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "{} of a {} tensor: Kiln cannot reduce its real and imaginary parts separately yet",
                op.name(),
                x.dtype
            ),
        ));
    }
    let reduced = reduced_dims(dims.as_deref(), x.rank())?;
    let shape = reduced_shape(&x.shape, &reduced, keepdim);
    let mut results = vec![TensorType::new(shape.clone(), x.dtype.to_real())];
    if pair {
        results.push(TensorType::new(shape, x.dtype));
    }
    Ok(Inferred {
        results,
        operand_dtypes: vec![Some(x.dtype)],
        natural_dtype: x.dtype.to_real(),
    })
}

/// `logsumexp`: integers and bool computed in the default float dtype.
pub fn logsumexp(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Logsumexp { dims, keepdim } = op else {
        return Err(wrong_rule("logsumexp"));
    };
    let x = tensor(args)?;
    refuse_shell("logsumexp", x.dtype)?;
    if x.dtype.is_complex() {
        // PyTorch shifts complex inputs by the maximum real part, which
        // needs the real view Kiln does not have yet.
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "logsumexp of a {} tensor: Kiln has no complex logsumexp yet",
                x.dtype
            ),
        ));
    }
    let d = floating(x.dtype, ctx);
    let reduced = reduced_dims(Some(dims), x.rank())?;
    Ok(single(
        reduced_shape(&x.shape, &reduced, *keepdim),
        d,
        vec![Some(d)],
    ))
}

/// `nansum` (integers and bool sum to int64, as `sum`) and `nanmean`
/// (floats only); complex refused as PyTorch's CPU does.
pub fn nan_reduction(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (dims, keepdim, dtype, mean) = match op {
        Op::Nansum {
            dims,
            keepdim,
            dtype,
        } => (dims, *keepdim, *dtype, false),
        Op::Nanmean {
            dims,
            keepdim,
            dtype,
        } => (dims, *keepdim, *dtype, true),
        _ => return Err(wrong_rule("nan_reduction")),
    };
    let x = tensor(args)?;
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            "nansum on CPU does not support complex inputs",
        ));
    }
    refuse_shell(op.name(), x.dtype)?;
    if mean && !x.dtype.is_floating_point() {
        return Err(err(
            ErrorKind::DType,
            format!(
                "nanmean(): expected input to have floating point or complex dtype but got {}",
                x.dtype.scalar_type_name()
            ),
        ));
    }
    let d = match dtype {
        Some(d) => d,
        None if x.dtype.is_integral() || x.dtype.is_bool() => DType::I64,
        None => x.dtype,
    };
    let reduced = reduced_dims(dims.as_deref(), x.rank())?;
    Ok(single(
        reduced_shape(&x.shape, &reduced, keepdim),
        d,
        vec![Some(x.dtype)],
    ))
}

/// `count_nonzero`: an int64 count over `dims` (all when none).
pub fn count_nonzero(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::CountNonzero { dims } = op else {
        return Err(wrong_rule("count_nonzero"));
    };
    let x = tensor(args)?;
    refuse_float4(op, x.dtype)?;
    if x.dtype == DType::F8E8M0FNU {
        // PyTorch tests bit patterns, and 2^-127 is all zero bits there.
        return Err(err(
            ErrorKind::Unsupported,
            "count_nonzero of a float8_e8m0fnu tensor: PyTorch counts nonzero bit patterns (2^-127 is zero), Kiln compares values",
        ));
    }
    let reduced = reduced_dims(dims.as_deref(), x.rank())?;
    Ok(single(
        reduced_shape(&x.shape, &reduced, false),
        DType::I64,
        vec![Some(x.dtype)],
    ))
}

/// `linalg_vector_norm`: floats and complex, a real result (of `dtype`
/// when given).
pub fn vector_norm(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::LinalgVectorNorm {
        dims,
        keepdim,
        dtype,
        ..
    } = op
    else {
        return Err(wrong_rule("vector_norm"));
    };
    let x = tensor(args)?;
    if !(x.dtype.is_floating_point() || x.dtype.is_complex()) {
        return Err(err(
            ErrorKind::DType,
            format!(
                "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                x.dtype.scalar_type_name()
            ),
        ));
    }
    refuse_shell("linalg_vector_norm", x.dtype)?;
    let d = dtype.unwrap_or(x.dtype);
    let reduced = reduced_dims(dims.as_deref(), x.rank())?;
    Ok(single(
        reduced_shape(&x.shape, &reduced, *keepdim),
        d.to_real(),
        vec![Some(d)],
    ))
}

/// The scans: the input's shape; `cumsum`/`cumprod` take integers and
/// bool to int64 (or `dtype`), `cummax`/`cummin` add int64 positions.
pub fn scan(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let (dim, result) = match op {
        Op::Cumsum { dim, dtype } | Op::Cumprod { dim, dtype } => (
            *dim,
            dtype.unwrap_or(if x.dtype.is_integral() || x.dtype.is_bool() {
                DType::I64
            } else {
                x.dtype
            }),
        ),
        Op::Logcumsumexp { dim } | Op::Cummax { dim } | Op::Cummin { dim } => (*dim, x.dtype),
        _ => return Err(wrong_rule("scan")),
    };
    if matches!(op, Op::Logcumsumexp { .. }) && x.dtype.is_complex() {
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "logcumsumexp of a {} tensor: Kiln has no complex logcumsumexp yet",
                x.dtype
            ),
        ));
    }
    if x.rank() > 0 {
        wrap_dim(dim, x.rank())?;
    } else {
        wrap_dim(dim, 1)?;
    }
    let mut results = vec![TensorType::new(x.shape.clone(), result)];
    if matches!(op, Op::Cummax { .. } | Op::Cummin { .. }) {
        results.push(TensorType::new(x.shape.clone(), DType::I64));
    }
    Ok(Inferred {
        results,
        operand_dtypes: vec![Some(result)],
        natural_dtype: result,
    })
}

/// `roll`: the input's shape; shifts and dims must pair up.
pub fn roll(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Roll { shifts, dims } = op else {
        return Err(wrong_rule("roll"));
    };
    let x = tensor(args)?;
    if shifts.is_empty() {
        return Err(err(ErrorKind::Shape, "`shifts` required"));
    }
    if dims.is_empty() && shifts.len() != 1 {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "shifts and dimensions must align. shifts: {}, dims:0",
                shifts.len()
            ),
        ));
    }
    if !dims.is_empty() && shifts.len() != dims.len() {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            ),
        ));
    }
    for &d in dims {
        wrap_dim(d, x.rank())?;
    }
    Ok(single(x.shape.clone(), x.dtype, vec![Some(x.dtype)]))
}

/// `repeat` and `tile`: each dim times its repeat count (`tile` pads the
/// counts with leading 1s, `repeat` needs at least one per dim).
pub fn repeat(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let repeats = repeat_counts(op, x.rank())?;
    let mut shape = vec![1; repeats.len() - x.rank()];
    shape.extend(&x.shape);
    let shape: Vec<i64> = shape.iter().zip(&repeats).map(|(s, r)| s * r).collect();
    Ok(single(shape, x.dtype, vec![Some(x.dtype)]))
}

/// The repeat count of every dim of `repeat` or `tile` on a tensor of
/// `rank` dims, leading dims added.
pub fn repeat_counts(op: &Op, rank: usize) -> Result<Vec<i64>> {
    let counts = match op {
        Op::Repeat { repeats } => {
            if repeats.len() < rank {
                return Err(err(
                    ErrorKind::Shape,
                    "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
                ));
            }
            repeats.clone()
        }
        Op::Tile { dims } => {
            let mut counts = vec![1; rank.saturating_sub(dims.len())];
            counts.extend(dims);
            counts
        }
        _ => return Err(wrong_rule("repeat")),
    };
    if let Some(r) = counts.iter().find(|r| **r < 0) {
        return Err(err(
            ErrorKind::Shape,
            format!("Trying to create tensor with negative dimension {r}: {counts:?}"),
        ));
    }
    Ok(counts)
}

/// `tril` and `triu`: at least two dims.
pub fn triangle(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    if x.rank() < 2 {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "{}: input tensor must have at least 2 dimensions",
                op.name()
            ),
        ));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![Some(x.dtype)]))
}

/// `flip`, `fliplr`, `flipud`: the input's shape; dims distinct.
pub fn flip(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let dims = flip_dims(op, x.rank())?;
    let _ = dims;
    Ok(single(x.shape.clone(), x.dtype, vec![Some(x.dtype)]))
}

/// `rot90`: the input's dtype, the plane's dims swapped for odd turns.
pub fn rot90(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let (k, d0, d1) = rot90_plane(op, x.rank())?;
    let mut shape = x.shape.clone();
    if k % 2 == 1 {
        shape.swap(d0, d1);
    }
    Ok(single(shape, x.dtype, vec![None]))
}

/// `rot90`'s quarter turns (0 to 3) and its plane's dims, wrapped, with
/// PyTorch's checks in its order.
pub fn rot90_plane(op: &Op, rank: usize) -> Result<(i64, usize, usize)> {
    let Op::Rot90 { k, dims } = op else {
        return Err(wrong_rule("rot90"));
    };
    if dims.len() != 2 {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "expected total rotation dims == 2, but got dims = {}",
                dims.len()
            ),
        ));
    }
    if rank < 2 {
        return Err(err(
            ErrorKind::Shape,
            format!("expected total dims >= 2, but got total dims = {rank}"),
        ));
    }
    let (d0, d1) = (wrap_dim(dims[0], rank)?, wrap_dim(dims[1], rank)?);
    if d0 == d1 {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "expected rotation dims to be different, but got dim0 = {} and dim1 = {}",
                dims[0], dims[1]
            ),
        ));
    }
    Ok((k.rem_euclid(4), d0, d1))
}

/// The dims `flip`, `fliplr` or `flipud` reverse, wrapped, with PyTorch's
/// errors.
pub fn flip_dims(op: &Op, rank: usize) -> Result<Vec<usize>> {
    match op {
        Op::Fliplr if rank < 2 => Err(err(ErrorKind::Shape, "Input must be >= 2-d.")),
        Op::Flipud if rank < 1 => Err(err(ErrorKind::Shape, "Input must be >= 1-d.")),
        Op::Fliplr => Ok(vec![1]),
        Op::Flipud => Ok(vec![0]),
        Op::Flip { dims } => {
            let wrapped: Vec<usize> = dims
                .iter()
                .map(|&d| wrap_dim(d, rank.max(1)))
                .collect::<Result<_>>()?;
            if let Some(d) = (1..wrapped.len())
                .find(|&i| wrapped[..i].contains(&wrapped[i]))
                .map(|i| wrapped[i])
            {
                return Err(err(
                    ErrorKind::Shape,
                    format!("dim {d} appears multiple times in the list of dims"),
                ));
            }
            Ok(if rank == 0 { Vec::new() } else { wrapped })
        }
        _ => Err(wrong_rule("flip")),
    }
}

/// `constant_pad_nd`: each padded dim grows by its (before, after) pair.
pub fn constant_pad_nd(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::ConstantPadNd { pad, .. } = op else {
        return Err(wrong_rule("constant_pad_nd"));
    };
    let x = tensor(args)?;
    let shape = padded_shape(pad, &x.shape)?;
    Ok(single(shape, x.dtype, vec![Some(x.dtype)]))
}

/// The shape `pad` gives `shape`, with PyTorch's checks.
pub fn padded_shape(pad: &[i64], shape: &[i64]) -> Result<Vec<i64>> {
    if pad.len() % 2 != 0 {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "Length of pad must be even but instead it equals {}",
                pad.len()
            ),
        ));
    }
    if pad.len() / 2 > shape.len() {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "Length of pad should be no more than twice the number of dimensions of the input. Pad length is {} while the input has {} dimensions.",
                pad.len(),
                shape.len()
            ),
        ));
    }
    let mut out = shape.to_vec();
    for (k, pair) in pad.chunks(2).enumerate() {
        let d = shape.len() - 1 - k;
        let size = shape[d] + pair[0] + pair[1];
        if size < 0 {
            return Err(err(
                ErrorKind::Shape,
                format!(
                    "The input size {}, plus negative padding {} and {} resulted in a negative output size, which is invalid. Check dimension {d} of your input.",
                    shape[d], pair[0], pair[1]
                ),
            ));
        }
        out[d] = size;
    }
    Ok(out)
}

/// `max` and `min` along a dim: values and int64 positions, PyTorch's
/// errors for complex inputs and empty dims.
pub fn extreme_dim(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (Op::MaxDim { dim, keepdim } | Op::MinDim { dim, keepdim }) = op else {
        return Err(wrong_rule("extreme_dim"));
    };
    let x = tensor(args)?;
    let name = op.name();
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            format!("{name}(): does not support complex input"),
        ));
    }
    let (d, size) = dim_size(x, *dim)?;
    if size == 0 {
        return Err(err(
            ErrorKind::Shape,
            format!("{name}(): Expected reduction dim {d} to have non-zero size."),
        ));
    }
    let reduced = reduced_dims(Some(&[*dim]), x.rank())?;
    Ok(values_and_indices(
        reduced_shape(&x.shape, &reduced, *keepdim),
        x.dtype,
    ))
}

/// `argsort`: int64 positions of the input's shape.
pub fn argsort(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Argsort { dim, .. } = op else {
        return Err(wrong_rule("argsort"));
    };
    let x = tensor(args)?;
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            "Sort does not support complex dtypes on CPU",
        ));
    }
    dim_size(x, *dim)?;
    // The kernel check is sort's, on the input's dtype.
    Ok(single(x.shape.clone(), DType::I64, vec![Some(x.dtype)]))
}

/// `repeat_interleave` with a static count: `dim` (or the flattened
/// input) `repeats` times as long.
pub fn repeat_interleave(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::RepeatInterleave { repeats, dim } = op else {
        return Err(wrong_rule("repeat_interleave"));
    };
    let x = tensor(args)?;
    if x.dtype == DType::F4E2M1FNX2 {
        // Its expansion copies, and the packed float4 format has no copy.
        return Err(crate::support::not_implemented("copy_", x.dtype));
    }
    if *repeats < 0 {
        return Err(err(ErrorKind::Shape, "repeats can not be negative"));
    }
    let shape = match dim {
        None => vec![x.numel() * repeats],
        // A 0-D input is a vector of one.
        Some(d) if x.rank() == 0 => {
            wrap_dim(*d, 1)?;
            vec![*repeats]
        }
        Some(d) => {
            let (d, _) = dim_size(x, *d)?;
            let mut shape = x.shape.clone();
            shape[d] *= repeats;
            shape
        }
    };
    Ok(single(shape, x.dtype, vec![None]))
}

/// `glu`: the input's shape with `dim` halved; PyTorch's error where its
/// size is odd.
pub fn glu(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Glu { dim } = op else {
        return Err(wrong_rule("glu"));
    };
    let x = tensor(args)?;
    if x.rank() == 0 {
        return Err(Error::new(
            ErrorKind::Shape,
            "glu does not support scalars because halving size must be even",
        ));
    }
    let d = wrap_dim(*dim, x.rank())?;
    if x.shape[d] % 2 != 0 {
        return Err(Error::new(
            ErrorKind::Shape,
            format!(
                "Halving dimension must be even, but dimension {d} is size {}",
                x.shape[d]
            ),
        ));
    }
    let mut shape = x.shape.clone();
    shape[d] /= 2;
    Ok(single(shape, x.dtype, vec![Some(x.dtype)]))
}

/// `rrelu`: eval mode only (training draws a random slope per element).
pub fn rrelu(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    if let Op::Rrelu { training: true, .. } = op {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "rrelu with training = true draws random slopes: Kiln runs inference (training = false)",
        ));
    }
    same_dtype(op, args, ctx)
}

/// `layer_norm %x, weight?, bias?`.
pub fn layer_norm(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::LayerNorm {
        normalized_shape, ..
    } = op
    else {
        return Err(wrong_rule("layer_norm"));
    };
    let x = tensor(args)?;
    let n = normalized_shape.len();
    if n == 0 || n > x.rank() || x.shape[x.rank() - n..] != **normalized_shape {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
                format_shape(normalized_shape),
                normalized_shape
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                format_shape(&x.shape)
            ),
        ));
    }
    let params: Vec<(&TensorType, &str)> = args[1..]
        .iter()
        .zip(["weight", "bias"])
        .filter_map(|(a, name)| a.tensor().map(|t| (t, name)))
        .collect();
    for (param, name) in &params {
        if param.shape != **normalized_shape {
            return Err(err(
                ErrorKind::Shape,
                format!(
                    "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {} and normalized_shape = {}",
                    format_shape(&param.shape),
                    format_shape(normalized_shape)
                ),
            ));
        }
    }
    // PyTorch's CPU check_mixed_data_type: parameters share the input's dtype,
    // or are f32 for a reduced-precision input.
    if let Some((first, _)) = params.first() {
        let p = first.dtype;
        if params.iter().any(|(t, _)| t.dtype != p) || p != x.dtype {
            if p != DType::F32 {
                return Err(err(
                    ErrorKind::DType,
                    "mixed dtype (CPU): expect parameter to have scalar type of Float",
                ));
            }
            let reduced = x.dtype.is_reduced_float() || x.dtype.is_shell();
            if !reduced {
                return Err(err(
                    ErrorKind::DType,
                    "mixed dtype (CPU): all inputs must share same datatype.",
                ));
            }
        }
    }
    let mut operand_dtypes = vec![Some(x.dtype)];
    operand_dtypes.extend(args[1..].iter().map(|_| None));
    Ok(single(x.shape.clone(), x.dtype, operand_dtypes))
}

/// `contiguous`, `clone` and `to`: a copy (or the operand itself) with
/// the same shape.
pub fn copy(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let dtype = match op {
        Op::Contiguous { memory_format } => {
            memory_format.check_rank(x.rank())?;
            x.dtype
        }
        Op::Clone {
            memory_format,
            strides,
        } => {
            memory_format.check_rank(x.rank())?;
            if let Some(st) = strides {
                check_clone_strides(&x.shape, st, *memory_format)?;
            }
            x.dtype
        }
        Op::To {
            dtype,
            memory_format,
            ..
        } => {
            memory_format.check_rank(x.rank())?;
            dtype.unwrap_or(x.dtype)
        }
        _ => return Err(wrong_rule("copy")),
    };
    Ok(single(x.shape.clone(), dtype, vec![None]))
}

/// `cat`: promotes its operands, skips legacy empty 1-D ones.
pub fn cat(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Cat { dim } = op else {
        return Err(wrong_rule("cat"));
    };
    let dim = *dim;
    let tensors: Vec<&TensorType> = args.iter().filter_map(Arg::tensor).collect();
    if let Some(i) = tensors.iter().position(|t| t.rank() == 0) {
        return Err(err(
            ErrorKind::Shape,
            format!("zero-dimensional tensor (at position {i}) cannot be concatenated"),
        ));
    }
    let dtype = tensors
        .iter()
        .skip(1)
        .try_fold(tensors[0].dtype, |acc, t| {
            crate::promotion::promote_types(acc, t.dtype)
        })?;
    // PyTorch skips legacy empty 1-D tensors when checking shapes.
    let is_legacy_empty = |t: &&TensorType| t.shape == [0];
    let shaped: Vec<(usize, &TensorType)> = tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| !is_legacy_empty(t))
        .map(|(i, t)| (i, *t))
        .collect();
    let shape = match shaped.first() {
        None => tensors[0].shape.clone(),
        Some(&(_, first)) => {
            let d = wrap_dim(dim, first.rank())?;
            let mut shape = first.shape.clone();
            for &(i, t) in &shaped[1..] {
                if t.rank() != first.rank() {
                    return Err(err(
                        ErrorKind::Shape,
                        format!(
                            "Tensors must have same number of dimensions: got {} and {}",
                            first.rank(),
                            t.rank()
                        ),
                    ));
                }
                for k in 0..first.rank() {
                    if k != d && t.shape[k] != first.shape[k] {
                        return Err(err(
                            ErrorKind::Shape,
                            format!(
                                "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                                first.shape[k], t.shape[k]
                            ),
                        ));
                    }
                }
                shape[d] += t.shape[d];
            }
            shape
        }
    };
    Ok(single(shape, dtype, vec![Some(dtype); args.len()]))
}

/// `stack`: the operands, of one shape, along a new dim (promoted as by
/// `cat`).
pub fn stack(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Stack { dim } = op else {
        return Err(wrong_rule("stack"));
    };
    let tensors: Vec<&TensorType> = args.iter().filter_map(Arg::tensor).collect();
    let first = tensors[0];
    for (i, t) in tensors.iter().enumerate().skip(1) {
        if t.shape != first.shape {
            return Err(err(
                ErrorKind::Shape,
                format!(
                    "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                    format_shape(&first.shape),
                    format_shape(&t.shape)
                ),
            ));
        }
    }
    let d = wrap_dim(*dim, first.rank() + 1)?;
    let mut shape = first.shape.clone();
    shape.insert(d, tensors.len() as i64);
    let dtype = common_dtype(args, ctx)?;
    Ok(single(shape, dtype, vec![Some(dtype); args.len()]))
}

/// The size of `dim` of `x` (a zero-dim tensor counts as size 1 along
/// dim 0 or -1, as PyTorch's dim-wise ops take it).
fn dim_size(x: &TensorType, dim: i64) -> Result<(usize, i64)> {
    if x.rank() == 0 {
        wrap_dim(dim, 0)?;
        return Ok((0, 1));
    }
    let d = wrap_dim(dim, x.rank())?;
    Ok((d, x.shape[d]))
}

/// Two results: values (the input's dtype) and positions (i64), of `shape`.
fn values_and_indices(shape: Vec<i64>, dtype: DType) -> Inferred {
    Inferred {
        results: vec![
            TensorType::new(shape.clone(), dtype),
            TensorType::new(shape, DType::I64),
        ],
        operand_dtypes: vec![None],
        natural_dtype: dtype,
    }
}

/// `topk`: `k` values along `dim`, and their positions.
pub fn topk(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Topk { k, dim, .. } = op else {
        return Err(wrong_rule("topk"));
    };
    let x = tensor(args)?;
    for (refused, kind) in [
        (x.dtype.is_bool(), "bool"),
        (x.dtype.is_complex(), "complex"),
    ] {
        if refused {
            return Err(err(
                ErrorKind::DType,
                format!("topk does not support {kind} dtypes on CPU"),
            ));
        }
    }
    let (d, size) = dim_size(x, *dim)?;
    if *k < 0 || *k > size {
        return Err(err(ErrorKind::Attribute, "selected index k out of range"));
    }
    let mut shape = x.shape.clone();
    if x.rank() > 0 {
        shape[d] = *k;
    }
    Ok(values_and_indices(shape, x.dtype))
}

/// The primitive views that make each result of `broadcast_tensors` or
/// `meshgrid` from its own operand, with PyTorch's checks in its order:
/// one list per operand, applied in turn.
pub fn view_lists(op: &Op, tensors: &[&TensorType]) -> Result<Vec<Vec<Op>>> {
    match op {
        Op::BroadcastTensors => {
            let shape = tensors
                .iter()
                .try_fold(Vec::new(), |acc, t| broadcast_shapes(&acc, &t.shape))?;
            Ok(tensors
                .iter()
                .map(|_| {
                    vec![Op::Expand {
                        shape: shape.clone(),
                    }]
                })
                .collect())
        }
        Op::Meshgrid { indexing } => {
            let xy = match indexing.as_str() {
                "ij" => false,
                "xy" => true,
                other => {
                    return Err(err(
                        ErrorKind::Attribute,
                        format!(
                            "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {other}"
                        ),
                    ));
                }
            };
            if let Some(t) = tensors.iter().find(|t| t.rank() > 1) {
                // PyTorch prints the tensor itself here.
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a {}D tensor",
                        t.rank()
                    ),
                ));
            }
            if tensors.iter().any(|t| t.dtype != tensors[0].dtype) {
                return Err(err(
                    ErrorKind::DType,
                    "meshgrid expects all tensors to have the same dtype",
                ));
            }
            if tensors.iter().any(|t| t.device != tensors[0].device) {
                return Err(err(
                    ErrorKind::Device,
                    "meshgrid expects all tensors to have the same device",
                ));
            }
            // "xy" is "ij" with the first two tensors swapped.
            let n = tensors.len();
            let mut order: Vec<usize> = (0..n).collect();
            if xy && n >= 2 {
                order.swap(0, 1);
            }
            let grid: Vec<i64> = order
                .iter()
                .map(|&i| tensors[i].shape.iter().product())
                .collect();
            let mut views = vec![Vec::new(); n];
            for (pos, &i) in order.iter().enumerate() {
                let mut along = vec![1; n];
                along[pos] = -1;
                views[i] = vec![
                    Op::View { shape: along },
                    Op::Expand {
                        shape: grid.clone(),
                    },
                ];
            }
            Ok(views)
        }
        _ => Err(wrong_rule("view_lists")),
    }
}

/// `broadcast_tensors` and `meshgrid`: each operand's dtype, the shape of
/// its views.
pub fn view_list(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let tensors: Vec<&TensorType> = args.iter().filter_map(Arg::tensor).collect();
    let first = tensors.first().ok_or_else(|| {
        err(
            ErrorKind::Arity,
            format!("{} expects a non-empty TensorList", op.name()),
        )
    })?;
    let results = view_lists(op, &tensors)?
        .iter()
        .zip(&tensors)
        .map(|(views, t)| {
            let shape = views
                .iter()
                .try_fold(t.shape.clone(), |s, v| view_shape(v, &s))?;
            Ok(TensorType::new(shape, t.dtype))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Inferred {
        results,
        operand_dtypes: vec![None; args.len()],
        natural_dtype: first.dtype,
    })
}

/// `kthvalue`, `median`, `nanmedian` and `mode`: one value (and its
/// position) per row along `dim`, the dim removed unless `keepdim`;
/// `median`/`nanmedian` without a dim: one value of every element.
/// PyTorch's checks in its order: the dim, an empty row, `k`.
pub fn select_dim(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let (name, dim, keepdim, k) = match op {
        Op::Kthvalue { k, dim, keepdim } => ("kthvalue", Some(*dim), *keepdim, Some(*k)),
        Op::Median { dim, keepdim } => ("median", *dim, *keepdim, None),
        // PyTorch's nanmedian reports as median.
        Op::Nanmedian { dim, keepdim } => ("median", *dim, *keepdim, None),
        Op::Mode { dim, keepdim } => ("mode", Some(*dim), *keepdim, None),
        _ => return Err(wrong_rule("select_dim")),
    };
    let Some(dim) = dim else {
        return Ok(single(vec![], x.dtype, vec![None]));
    };
    let (d, size) = dim_size(x, dim)?;
    if size == 0 {
        return Err(err(
            ErrorKind::Shape,
            format!("{name}(): Expected reduction dim {d} to have non-zero size."),
        ));
    }
    if let Some(k) = k {
        if k < 1 || k > size {
            return Err(err(
                ErrorKind::Attribute,
                format!("kthvalue(): selected number k out of range for dimension {d}"),
            ));
        }
    }
    let mut shape = x.shape.clone();
    if x.rank() > 0 {
        if keepdim {
            shape[d] = 1;
        } else {
            shape.remove(d);
        }
    }
    Ok(values_and_indices(shape, x.dtype))
}

/// `sort`: values along `dim` in order, and their positions.
pub fn sort(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Sort { dim, .. } = op else {
        return Err(wrong_rule("sort"));
    };
    let x = tensor(args)?;
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            "Sort does not support complex dtypes on CPU",
        ));
    }
    dim_size(x, *dim)?;
    Ok(values_and_indices(x.shape.clone(), x.dtype))
}

/// `aminmax`: the smallest and largest values, over `dim` or every dim.
pub fn aminmax(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Aminmax { dim, keepdim } = op else {
        return Err(wrong_rule("aminmax"));
    };
    let x = tensor(args)?;
    if x.dtype.is_complex() {
        return Err(err(
            ErrorKind::DType,
            format!("aminmax not implemented for {}", x.dtype.scalar_type_name()),
        ));
    }
    let dims: Option<Vec<i64>> = dim.map(|d| vec![d]);
    if x.numel() == 0 {
        match dim {
            None => {
                return Err(err(
                    ErrorKind::Shape,
                    "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
                ));
            }
            Some(d) => {
                if dim_size(x, *d)?.1 == 0 {
                    return Err(err(
                        ErrorKind::Shape,
                        "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.",
                    ));
                }
            }
        }
    }
    let reduced = reduced_dims(dims.as_deref(), x.rank())?;
    let shape = reduced_shape(&x.shape, &reduced, *keepdim);
    Ok(Inferred {
        results: vec![
            TensorType::new(shape.clone(), x.dtype),
            TensorType::new(shape, x.dtype),
        ],
        operand_dtypes: vec![None],
        natural_dtype: x.dtype,
    })
}

/// `unbind`: one result per position along `dim`, without that dim.
pub fn unbind(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Unbind { dim } = op else {
        return Err(wrong_rule("unbind"));
    };
    let x = tensor(args)?;
    if x.rank() == 0 {
        return Err(err(
            ErrorKind::Dim,
            "Dimension specified as 0 but tensor has no dimensions",
        ));
    }
    let d = wrap_dim(*dim, x.rank())?;
    let mut shape = x.shape.clone();
    let n = shape.remove(d);
    pieces(vec![shape; n as usize], x.dtype, "unbind")
}

/// The results of an op that cuts its input in pieces; an instruction
/// needs at least one.
fn pieces(shapes: Vec<Vec<i64>>, dtype: DType, name: &str) -> Result<Inferred> {
    if shapes.is_empty() {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "{name}: the input gives no pieces, and an instruction needs at least one result"
            ),
        ));
    }
    Ok(Inferred {
        results: shapes
            .into_iter()
            .map(|s| TensorType::new(s, dtype))
            .collect(),
        operand_dtypes: vec![None],
        natural_dtype: dtype,
    })
}

/// The sizes along the split dim of the pieces of `split`,
/// `split_with_sizes` and `chunk`, and that dim.
pub fn split_sizes(op: &Op, x: &TensorType) -> Result<(usize, Vec<i64>)> {
    let (dim, name) = match op {
        Op::Split { dim, .. } => (*dim, "split"),
        Op::SplitWithSizes { dim, .. } => (*dim, "split_with_sizes"),
        Op::Chunk { dim, .. } => (*dim, "chunk"),
        _ => return Err(wrong_rule("split")),
    };
    if x.rank() == 0 {
        return Err(err(
            ErrorKind::Dim,
            format!("{name} expects at least a 1-dimensional tensor"),
        ));
    }
    let d = wrap_dim(dim, x.rank())?;
    let size = x.shape[d];
    let by = |step: i64| -> Vec<i64> {
        if size == 0 {
            return vec![0];
        }
        (0..size)
            .step_by(step as usize)
            .map(|start| step.min(size - start))
            .collect()
    };
    let sizes = match op {
        Op::Split { split_size, .. } => {
            if *split_size < 0 || (*split_size == 0 && size != 0) {
                return Err(err(
                    ErrorKind::Attribute,
                    format!(
                        "split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
                    ),
                ));
            }
            by(*split_size)
        }
        Op::Chunk { chunks, .. } => {
            if *chunks <= 0 {
                return Err(err(
                    ErrorKind::Attribute,
                    "chunk expects `chunks` to be greater than 0, got: ".to_string()
                        + &chunks.to_string(),
                ));
            }
            by(((size + chunks - 1) / chunks).max(1))
        }
        Op::SplitWithSizes { split_sizes, .. } => {
            let total: i64 = split_sizes.iter().sum();
            if split_sizes.iter().any(|s| *s < 0) || total != size {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension {d}), but got split_sizes={}",
                        format_shape(split_sizes)
                    ),
                ));
            }
            split_sizes.clone()
        }
        _ => return Err(wrong_rule("split")),
    };
    Ok((d, sizes))
}

/// Where each piece of a split op starts along the split dim and how long
/// it is, and that dim: consecutive pieces for `split`,
/// `split_with_sizes` and `chunk`; `tensor_split`'s (and `hsplit`'s,
/// `vsplit`'s, `dsplit`'s) by sections or by the positions listed (clamped
/// as slices are, so pieces may be empty or overlap nothing).
pub fn split_ranges(op: &Op, x: &TensorType) -> Result<(usize, Vec<(i64, i64)>)> {
    let (dim, sections, indices, name) = match op {
        Op::TensorSplit {
            sections,
            indices,
            dim,
        } => (*dim, *sections, indices.as_deref(), "tensor_split"),
        Op::Hsplit { sections, indices } => (
            i64::from(x.rank() > 1),
            *sections,
            indices.as_deref(),
            "hsplit",
        ),
        Op::Vsplit { sections, indices } => (0, *sections, indices.as_deref(), "vsplit"),
        Op::Dsplit { sections, indices } => (2, *sections, indices.as_deref(), "dsplit"),
        _ => {
            let (d, sizes) = split_sizes(op, x)?;
            let mut start = 0;
            let ranges = sizes
                .into_iter()
                .map(|n| {
                    start += n;
                    (start - n, n)
                })
                .collect();
            return Ok((d, ranges));
        }
    };
    let least = match name {
        "vsplit" => 2,
        "dsplit" => 3,
        _ => 1,
    };
    if x.rank() < least {
        return Err(err(
            ErrorKind::Dim,
            if name == "tensor_split" {
                format!(
                    "tensor_split expected at least a 1-dimensional tensor, but got a tensor with {} dims",
                    x.rank()
                )
            } else {
                format!(
                    "torch.{name} requires a tensor with at least {least} dimension, but got a tensor with {} dimensions!",
                    x.rank()
                )
            },
        ));
    }
    let d = wrap_dim(dim, x.rank())?;
    let size = x.shape[d];
    match (sections, indices) {
        (Some(n), None) => {
            if name != "tensor_split" && (n == 0 || size % n != 0) {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "torch.{name} attempted to split along dimension {d}, but the size of the dimension {size} is not divisible by the split_size {n}!"
                    ),
                ));
            }
            if n <= 0 {
                return Err(err(
                    ErrorKind::Attribute,
                    format!("number of sections must be larger than 0, got {n}"),
                ));
            }
            let (small, extra) = (size / n, size % n);
            let mut start = 0;
            Ok((
                d,
                (0..n)
                    .map(|k| {
                        let len = small + i64::from(k < extra);
                        start += len;
                        (start - len, len)
                    })
                    .collect(),
            ))
        }
        (None, Some(positions)) => {
            let bounds = std::iter::once(None)
                .chain(positions.iter().map(|&p| Some(p)))
                .zip(
                    positions
                        .iter()
                        .map(|&p| Some(p))
                        .chain(std::iter::once(None)),
                );
            Ok((
                d,
                bounds
                    .map(|(from, to)| crate::view::slice_range(size, from, to, 1))
                    .collect(),
            ))
        }
        _ => Err(err(
            ErrorKind::Attribute,
            format!("{name} takes either sections or indices"),
        )),
    }
}

/// `split`, `split_with_sizes`, `chunk`, `tensor_split` and
/// `hsplit`/`vsplit`/`dsplit`: the pieces along a dim.
pub fn split(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let (d, ranges) = split_ranges(op, x)?;
    let shapes = ranges
        .into_iter()
        .map(|(_, n)| {
            let mut s = x.shape.clone();
            s[d] = n;
            s
        })
        .collect();
    pieces(shapes, x.dtype, op.name())
}

/// `matmul`: torch.matmul's rules for 1-D, 2-D and batched operands.
pub fn matmul(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (a, b) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if a.rank() == 0 || b.rank() == 0 {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
                a.rank(),
                b.rank()
            ),
        ));
    }
    if a.dtype != b.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                a.dtype.info().cpp_type_name,
                b.dtype.info().cpp_type_name
            ),
        ));
    }
    let shape = matmul_shape(&a.shape, &b.shape)?;
    Ok(single(shape, a.dtype, vec![None, None]))
}

/// An index tensor of `op`: int32 or int64.
fn check_index_dtype(index: &TensorType, message: &str) -> Result<()> {
    if matches!(index.dtype, DType::I32 | DType::I64) {
        Ok(())
    } else {
        Err(err(ErrorKind::DType, message.to_string()))
    }
}

/// `gather`: the index's shape; same rank as the input (a 0-D input and
/// index count as one dim), an int64 index no larger than the input away
/// from `dim`.
pub fn gather(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Gather { dim, .. } = op else {
        return Err(wrong_rule("gather"));
    };
    let (x, index) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    check_index_dtype(index, "gather(): Expected dtype int32/int64 for index")?;
    let (d, _) = dim_size(x, *dim)?;
    check_index_shape(index, x, d, None)?;
    Ok(single(index.shape.clone(), x.dtype, vec![None, None]))
}

/// The index of `gather` and the scatters: as many dims as `input` (0-D
/// counting as 1-D), no larger than `src` anywhere and than `input` away
/// from `dim` (PyTorch's messages).
fn check_index_shape(
    index: &TensorType,
    x: &TensorType,
    d: usize,
    src: Option<&TensorType>,
) -> Result<()> {
    let rank = |t: &TensorType| t.rank().max(1);
    if index.numel() == 0 {
        return Ok(());
    }
    if rank(index) != rank(x) {
        return Err(err(
            ErrorKind::Shape,
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    if let Some(src) = src
        && rank(index) != rank(src)
    {
        return Err(err(
            ErrorKind::Shape,
            "Index tensor must have the same number of dimensions as src tensor",
        ));
    }
    let size = |t: &TensorType, k: usize| t.shape.get(k).copied().unwrap_or(1);
    for k in 0..rank(index) {
        if k != d && size(index, k) > size(x, k) {
            return Err(err(
                ErrorKind::Shape,
                format!(
                    "Size does not match at dimension {k} expected index {} to be no larger than self {} apart from dimension {d}",
                    format_shape(&index.shape),
                    format_shape(&x.shape)
                ),
            ));
        }
        if let Some(src) = src
            && size(index, k) > size(src, k)
        {
            return Err(err(
                ErrorKind::Shape,
                format!(
                    "Expected index {} to be no larger than self {} apart from dimension {d} and to be no larger size than src {}",
                    format_shape(&index.shape),
                    format_shape(&x.shape),
                    format_shape(&src.shape)
                ),
            ));
        }
    }
    Ok(())
}

/// `scatter`, `scatter_add`, `scatter_reduce`: the input's shape and dtype;
/// a tensor `src` of the input's dtype (PyTorch does not promote).
pub fn scatter(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let dim = match op {
        Op::Scatter { dim } | Op::ScatterAdd { dim } | Op::ScatterReduce { dim, .. } => *dim,
        _ => return Err(wrong_rule("scatter")),
    };
    let (x, index) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    check_index_dtype(
        index,
        &format!("{}(): Expected dtype int64 for index", op.name()),
    )?;
    let (d, _) = dim_size(x, dim)?;
    let src = match args.get(2) {
        Some(Arg::Tensor(t)) => Some(*t),
        _ => None,
    };
    if let Some(src) = src
        && src.dtype != x.dtype
    {
        // PyTorch's shared check says scatter() for all three.
        return Err(err(
            ErrorKind::DType,
            "scatter(): Expected self.dtype to be equal to src.dtype",
        ));
    }
    check_index_shape(index, x, d, src)?;
    let src_dtype = src.map(|_| x.dtype);
    Ok(single(
        x.shape.clone(),
        x.dtype,
        vec![None, None, src_dtype],
    ))
}

/// `index_add`: the input's shape; `source` shaped as the input with
/// `dim` as long as the (vector) index.
pub fn index_add(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::IndexAdd { dim, .. } = op else {
        return Err(wrong_rule("index_add"));
    };
    let (x, index, source) = (
        nth_tensor(args, 0)?,
        nth_tensor(args, 1)?,
        nth_tensor(args, 2)?,
    );
    check_index_dtype(index, "index_add_(): Expected dtype int32/int64 for index")?;
    if index.rank() > 1 {
        return Err(err(
            ErrorKind::Shape,
            "index_add_(): Index is supposed to be a vector",
        ));
    }
    if source.dtype != x.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "index_add_(): self ({}) and source ({}) must have the same scalar type",
                x.dtype.scalar_type_name(),
                source.dtype.scalar_type_name()
            ),
        ));
    }
    let (d, _) = dim_size(x, *dim)?;
    let mut expected = x.shape.clone();
    if !expected.is_empty() {
        expected[d] = index.numel();
    }
    if source.shape != expected && !(x.rank() == 0 && source.numel() == 1) {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "index_add_(): source {} must be the input's shape with dimension {d} of the index's length ({})",
                format_shape(&source.shape),
                index.numel()
            ),
        ));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![None, None, None]))
}

/// `index_copy`: the input's type, with PyTorch's checks in its order
/// (`index_copy_meta`).
pub fn index_copy(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::IndexCopy { dim } = op else {
        return Err(wrong_rule("index_copy"));
    };
    let (x, index, source) = (
        nth_tensor(args, 0)?,
        nth_tensor(args, 1)?,
        nth_tensor(args, 2)?,
    );
    let (d, _) = dim_size(x, *dim)?;
    let shape_err = |m: String| err(ErrorKind::Shape, format!("index_copy_(): {m}"));
    if index.rank() > 1 {
        return Err(shape_err(format!(
            "Index should have dimension 1 or 0 (got {})",
            index.rank()
        )));
    }
    let n = index.numel();
    if source.rank() == 0 && n != 1 {
        return Err(shape_err(format!(
            "When source is scalar, index should have one element (got {n})"
        )));
    }
    if source.rank() != x.rank() && source.rank() != 0 && x.rank() != 0 {
        return Err(shape_err(format!(
            "When source and destination are not scalars, their dimensionality must match. Source dimensionality ({}), destination dimensionality ({})",
            source.rank(),
            x.rank()
        )));
    }
    if index.dtype != DType::I64 {
        return Err(err(
            ErrorKind::DType,
            format!(
                "index_copy_(): Expected a long tensor for index, but got {}",
                index.dtype.scalar_type_name()
            ),
        ));
    }
    if source.dtype != x.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
                x.dtype.scalar_type_name(),
                source.dtype.scalar_type_name()
            ),
        ));
    }
    // PyTorch prints the slice shapes space-separated.
    let sliced = |t: &TensorType| -> Vec<String> {
        let mut s: Vec<String> = t.shape.iter().map(i64::to_string).collect();
        if !s.is_empty() {
            s.remove(d.min(s.len() - 1));
        }
        s
    };
    let (xs, ss) = (sliced(x), sliced(source));
    if xs != ss {
        return Err(shape_err(format!(
            "Source/destination tensor must have same slice shapes. Destination slice shape: {} at dimension {d} and source slice shape: {} at dimension 0.",
            xs.join(" "),
            ss.join(" ")
        )));
    }
    if source.rank() > 0 && source.shape[d] != n {
        return Err(shape_err(format!(
            "Number of indices ({n}) should be equal to source.size(dim) ({})",
            source.shape[d]
        )));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![None, None, None]))
}

/// `index_fill`: the input's type; an int64 vector or scalar index and a
/// number or 0-D tensor value (PyTorch's checks).
pub fn index_fill(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::IndexFill { dim } = op else {
        return Err(wrong_rule("index_fill"));
    };
    let (x, index) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if let Some(Arg::Tensor(v)) = args.get(2)
        && v.rank() != 0
    {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                v.rank()
            ),
        ));
    }
    dim_size(x, *dim)?;
    if index.dtype != DType::I64 {
        return Err(err(
            ErrorKind::DType,
            "index_fill_(): Expected dtype int64 for index.",
        ));
    }
    if index.rank() > 1 {
        return Err(err(ErrorKind::Shape, "Index has to be a vector/scalar"));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![None, None, None]))
}

/// `take_along_dim`: `gather`'s result over the input and indices
/// broadcast against each other away from `dim` (the flattened gather
/// without one).
pub fn take_along_dim(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::TakeAlongDim { dim } = op else {
        return Err(wrong_rule("take_along_dim"));
    };
    let (x, index) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if index.dtype != DType::I64 {
        return Err(err(
            ErrorKind::DType,
            format!(
                "torch.take_along_dim(): dtype of indices should be Long but got {}",
                index.dtype.scalar_type_name()
            ),
        ));
    }
    let shape = match dim {
        None => vec![index.numel()],
        Some(dim) => take_along_dim_shapes(&x.shape, &index.shape, *dim)?.1,
    };
    Ok(single(shape, x.dtype, vec![None, None]))
}

/// The shapes `take_along_dim` broadcasts its input and indices to along
/// `dim` (wrapped and returned first), as ATen does.
pub fn take_along_dim_shapes(
    x: &[i64],
    index: &[i64],
    dim: i64,
) -> Result<(usize, Vec<i64>, Vec<i64>)> {
    if x.len() != index.len() {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} dimensions for input, and {} dimensions for indices",
                x.len(),
                index.len()
            ),
        ));
    }
    let d = wrap_dim(dim, x.len().max(1))?;
    if x.is_empty() {
        return Ok((d, index.to_vec(), x.to_vec()));
    }
    let mut sizes = x.to_vec();
    sizes[d] = index[d];
    let index_shape = broadcast_shapes(&sizes, index)?;
    let mut input_shape = index_shape.clone();
    input_shape[d] = x[d];
    Ok((d, index_shape, input_shape))
}

/// The type of a composite's expansion, for composites whose expansion is
/// their one definition (`einsum`, `hstack`, ...): the ops it emits check
/// dtypes and shapes with PyTorch's messages, as the PyTorch function's
/// own calls do.
pub fn by_expansion(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let mut b = crate::graph::FuncBuilder::new(op.name(), *ctx);
    let mut operands = Vec::new();
    for a in args {
        operands.push(match a {
            Arg::Tensor(t) => crate::graph::Operand::Value(b.param(None, (*t).clone())?),
            Arg::Scalar(s) => crate::graph::Operand::Scalar(*s),
            Arg::None => crate::graph::Operand::None,
        });
    }
    let mut e = crate::ops::expand::Emitter::new(&mut b);
    let results =
        crate::ops::expand::expand(&mut e, op, &operands)?.ok_or_else(|| wrong_rule(op.name()))?;
    let types: Vec<TensorType> = results
        .iter()
        .map(|r| TensorType::new(b.ty(*r).shape.clone(), b.ty(*r).dtype))
        .collect();
    let first = types.first().ok_or_else(|| wrong_rule(op.name()))?;
    let mut inferred = single(first.shape.clone(), first.dtype, vec![None; args.len()]);
    // Every result's type (ops of several results: multi_head_attention_forward).
    inferred.results = types;
    Ok(inferred)
}

/// The reflection and replication pads: the input's dtype, the padded
/// shape with PyTorch's checks ([`padded_shape`](crate::ops::padding::padded_shape)).
pub fn pad(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (mode, k, padding) = crate::ops::padding::pad_of(op).ok_or_else(|| wrong_rule("pad"))?;
    let x = nth_tensor(args, 0)?;
    let shape = crate::ops::padding::padded_shape(mode, k, padding, &x.shape)?;
    Ok(single(shape, x.dtype, vec![None]))
}

/// `slice_scatter` and `select_scatter`: the input's type; `src` must
/// have the shape of the slice (or selection) it replaces, and is
/// converted to the input's dtype (PyTorch copies it in).
pub fn slice_scatter(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (x, src) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    let whole = Geometry::contiguous(&x.shape);
    let part = match op {
        Op::SliceScatter {
            dim,
            start,
            end,
            step,
        } => whole.slice(*dim, *start, *end, *step)?,
        Op::SelectScatter { dim, index } => whole.select(*dim, *index)?,
        _ => return Err(wrong_rule("slice_scatter")),
    };
    if src.shape != part.shape {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "expected src to have a size equal to the slice of self. src size = {}, slice size = {}",
                format_shape(&src.shape),
                format_shape(&part.shape)
            ),
        ));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![None, Some(x.dtype)]))
}

/// `pixel_shuffle`, `pixel_unshuffle`, `channel_shuffle`: the input's
/// dtype, the shuffled shape ([`shuffle_shape`]).
pub fn pixel_shuffle(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = nth_tensor(args, 0)?;
    Ok(single(shuffle_shape(op, &x.shape)?, x.dtype, vec![None]))
}

/// The result shape of a shuffle op, with PyTorch's checks and messages.
pub fn shuffle_shape(op: &Op, x: &[i64]) -> Result<Vec<i64>> {
    let shape_err = |m: String| Err(err(ErrorKind::Shape, m));
    let rank = x.len();
    let mut out = x.to_vec();
    match *op {
        Op::PixelShuffle { upscale_factor: r }
        | Op::PixelUnshuffle {
            downscale_factor: r,
        } => {
            let (name, what) = match op {
                Op::PixelShuffle { .. } => ("pixel_shuffle", "upscale_factor"),
                _ => ("pixel_unshuffle", "downscale_factor"),
            };
            if rank < 3 {
                return shape_err(format!(
                    "{name} expects input to have at least 3 dimensions, but got input with {rank} dimension(s)"
                ));
            }
            if r <= 0 {
                return shape_err(format!("{name} expects a positive {what}, but got {r}"));
            }
            let (c, h, w) = (x[rank - 3], x[rank - 2], x[rank - 1]);
            if matches!(op, Op::PixelShuffle { .. }) {
                if c % (r * r) != 0 {
                    return shape_err(format!(
                        "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible by {}",
                        r * r
                    ));
                }
                out[rank - 3..].copy_from_slice(&[c / (r * r), h * r, w * r]);
            } else {
                for (size, dim, side) in [(h, -2, "height"), (w, -1, "width")] {
                    if size % r != 0 {
                        return shape_err(format!(
                            "pixel_unshuffle expects {side} to be divisible by downscale_factor, but input.size({dim})={size} is not divisible by {r}"
                        ));
                    }
                }
                out[rank - 3..].copy_from_slice(&[c * r * r, h / r, w / r]);
            }
        }
        Op::ChannelShuffle { groups } => {
            if rank <= 2 {
                return shape_err(format!(
                    "channel_shuffle expects input with > 2 dims, but got input with sizes {}",
                    format_shape(x)
                ));
            }
            if groups <= 0 {
                return shape_err(format!(
                    "Number of groups to divide channels in must be positive. Value of groups:{groups}"
                ));
            }
            if x[1] % groups != 0 {
                return shape_err(format!(
                    "Number of channels must be divisible by groups. Got {} channels and {groups} groups.",
                    x[1]
                ));
            }
        }
        _ => return Err(wrong_rule("pixel_shuffle")),
    }
    Ok(out)
}

/// The geometry of `index`/`index_put` over the input and the index
/// list `entries` (tensors and `none`s).
fn advanced_index(
    what: &str,
    x: &TensorType,
    entries: &[Arg<'_>],
) -> Result<crate::advanced_index::AdvancedIndex> {
    let entries: Vec<crate::advanced_index::IndexEntry<'_>> = entries
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => Some((&t.shape[..], t.dtype)),
            _ => None,
        })
        .collect();
    crate::advanced_index::AdvancedIndex::new(what, &x.shape, &entries)
}

/// `index` (advanced indexing): the input's dtype, the shape
/// [`AdvancedIndex`](crate::advanced_index::AdvancedIndex) gives.
pub fn index(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = nth_tensor(args, 0)?;
    let geometry = advanced_index("index", x, &args[1..])?;
    Ok(single(geometry.shape, x.dtype, vec![None; args.len()]))
}

/// `index_put`: the input's type; `values` must broadcast to what `index`
/// would return and have the input's dtype (checked in that order, as
/// PyTorch does).
pub fn index_put(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = nth_tensor(args, 0)?;
    let values = nth_tensor(args, args.len() - 1)?;
    let geometry = advanced_index("index_put", x, &args[1..args.len() - 1])?;
    let shape = &geometry.shape;
    let expandable = values.rank() <= shape.len()
        && values
            .shape
            .iter()
            .rev()
            .zip(shape.iter().rev())
            .all(|(&v, &s)| v == s || v == 1);
    if !expandable {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
                format_shape(&values.shape),
                format_shape(shape)
            ),
        ));
    }
    if values.dtype != x.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
                x.dtype.scalar_type_name(),
                values.dtype.scalar_type_name()
            ),
        ));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![None; args.len()]))
}

/// `take`: the index's shape, the input's dtype.
pub fn take(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (x, index) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if index.dtype != DType::I64 {
        return Err(err(
            ErrorKind::DType,
            format!(
                "take(): Expected a long tensor for index, but got {}",
                index.dtype.scalar_type_name()
            ),
        ));
    }
    Ok(single(index.shape.clone(), x.dtype, vec![None, None]))
}

/// `index_select`: `input`'s shape with `dim` as long as the index (a
/// vector, or a 0-D or one-element tensor for a 0-D input).
pub fn index_select(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::IndexSelect { dim } = op else {
        return Err(wrong_rule("index_select"));
    };
    let (x, index) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if index.rank() > 1 {
        return Err(err(
            ErrorKind::Shape,
            "index_select(): Index is supposed to be a vector",
        ));
    }
    check_index_dtype(
        index,
        "index_select(): Expected dtype int32 or int64 for index",
    )?;
    let (d, _) = dim_size(x, *dim)?;
    let n = index.numel();
    if x.rank() == 0 {
        if n != 1 {
            return Err(err(
                ErrorKind::Shape,
                format!("index_select(): Index to scalar can have only 1 value, got {n} value(s)"),
            ));
        }
        return Ok(single(vec![], x.dtype, vec![None, None]));
    }
    let mut shape = x.shape.clone();
    shape[d] = n;
    Ok(single(shape, x.dtype, vec![None, None]))
}

/// `embedding`: `indices.shape + [weight.shape[1]]`, of the weight's dtype.
pub fn embedding(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (weight, indices) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if weight.rank() != 2 {
        return Err(err(ErrorKind::Shape, "'weight' must be 2-D"));
    }
    check_index_dtype(
        indices,
        &format!(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {} instead (while checking arguments for embedding)",
            indices.dtype.info().cpp_type_name
        ),
    )?;
    let mut shape = indices.shape.clone();
    shape.push(weight.shape[1]);
    Ok(single(shape, weight.dtype, vec![None, None]))
}

/// `scaled_dot_product_attention`: query `[..., L, E]`, key `[..., S, E]`,
/// value `[..., S, Ev]` of one float dtype give `[..., L, Ev]`; the mask
/// (bool, or the query's dtype) broadcasts to `[..., L, S]`.
pub fn scaled_dot_product_attention(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::ScaledDotProductAttention {
        dropout_p,
        enable_gqa,
        ..
    } = op
    else {
        return Err(wrong_rule("scaled_dot_product_attention"));
    };
    if dropout_p.0 != 0.0 {
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "scaled_dot_product_attention with dropout_p = {} is training: Kiln runs inference (dropout_p = 0)",
                dropout_p.0
            ),
        ));
    }
    let (q, k, v) = (
        nth_tensor(args, 0)?,
        nth_tensor(args, 1)?,
        nth_tensor(args, 2)?,
    );
    if q.dtype != k.dtype || q.dtype != v.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
                q.dtype.info().cpp_type_name,
                k.dtype.info().cpp_type_name,
                v.dtype.info().cpp_type_name
            ),
        ));
    }
    if !matches!(q.dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64) {
        return Err(crate::support::not_implemented(
            "scaled_dot_product_attention",
            q.dtype,
        ));
    }
    if q.rank() < 2 || k.rank() < 2 || v.rank() < 2 {
        return Err(err(
            ErrorKind::Shape,
            "scaled_dot_product_attention needs query, key and value of at least 2 dims",
        ));
    }
    let (l, e) = (q.shape[q.rank() - 2], q.shape[q.rank() - 1]);
    let (s, ek) = (k.shape[k.rank() - 2], k.shape[k.rank() - 1]);
    let (sv, ev) = (v.shape[v.rank() - 2], v.shape[v.rank() - 1]);
    if e != ek || s != sv {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "scaled_dot_product_attention: query [..., {l}, {e}], key [..., {s}, {ek}] and value [..., {sv}, {ev}] do not fit"
            ),
        ));
    }
    let batch = |t: &TensorType| t.shape[..t.rank() - 2].to_vec();
    let (mut kb, mut vb) = (batch(k), batch(v));
    if *enable_gqa && q.rank() >= 3 && k.rank() >= 3 && v.rank() >= 3 {
        let hq = q.shape[q.rank() - 3];
        for b in [&mut kb, &mut vb] {
            let h = b.len() - 1;
            if b[h] == 0 || hq % b[h] != 0 {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "number of heads in key/value must divide number of heads in query ({} and {hq})",
                        b[h]
                    ),
                ));
            }
            b[h] = hq;
        }
    }
    let joined = broadcast_shapes(&broadcast_shapes(&batch(q), &kb)?, &vb)?;
    if let Some(m) = args.get(3).and_then(Arg::tensor) {
        if m.dtype != DType::Bool && m.dtype != q.dtype {
            return Err(err(
                ErrorKind::DType,
                format!(
                    "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and  query.dtype: {} instead.",
                    m.dtype.info().cpp_type_name,
                    q.dtype.info().cpp_type_name
                ),
            ));
        }
        let mut scores = joined.clone();
        scores.extend([l, s]);
        if broadcast_shapes(&scores, &m.shape)? != scores {
            return Err(err(
                ErrorKind::Shape,
                format!(
                    "the attention mask of shape {} does not broadcast to the scores' {}",
                    format_shape(&m.shape),
                    format_shape(&scores)
                ),
            ));
        }
    }
    let mut shape = joined;
    shape.extend([l, ev]);
    Ok(single(shape, q.dtype, vec![None, None, None, None]))
}

/// `linear`: `input [*, in] @ weight [out, in]ᵀ (+ bias)` is `[*, out]`
/// (`[*]` for a 1-D weight); every operand of the input's dtype.
pub fn linear(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (x, w) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if x.rank() == 0 || w.rank() == 0 || w.rank() > 2 {
        return Err(err(
            ErrorKind::Shape,
            format!(
                "linear needs an input of at least 1D and a 1D or 2D weight, but they are {}D and {}D",
                x.rank(),
                w.rank()
            ),
        ));
    }
    let in_features = w.shape[w.rank() - 1];
    if x.shape[x.rank() - 1] != in_features {
        let rows: i64 = x.shape[..x.rank() - 1].iter().product();
        return Err(err(
            ErrorKind::Shape,
            format!(
                "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                rows,
                x.shape[x.rank() - 1],
                in_features,
                if w.rank() == 2 { w.shape[0] } else { 1 }
            ),
        ));
    }
    let mut shape = x.shape[..x.rank() - 1].to_vec();
    if w.rank() == 2 {
        shape.push(w.shape[0]);
    }
    for t in std::iter::once(w).chain(args.get(2).and_then(Arg::tensor)) {
        if t.dtype != x.dtype {
            return Err(err(
                ErrorKind::DType,
                format!(
                    "expected m1 and m2 to have the same dtype, but got: {} != {}",
                    x.dtype.info().cpp_type_name,
                    t.dtype.info().cpp_type_name
                ),
            ));
        }
    }
    if let Some(b) = args.get(2).and_then(Arg::tensor) {
        let joined = broadcast_shapes(&shape, &b.shape)?;
        if joined != shape {
            return Err(err(
                ErrorKind::Shape,
                format!(
                    "the bias of shape {} does not broadcast to the result's {}",
                    format_shape(&b.shape),
                    format_shape(&shape)
                ),
            ));
        }
    }
    Ok(single(shape, x.dtype, vec![None, None, None]))
}

/// torch.matmul's shape rule for 1-D, 2-D and batched operands.
pub fn matmul_shape(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    match (a.len(), b.len()) {
        (1, 1) => {
            if a[0] != b[0] {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                        a[0], b[0], a[0], b[0]
                    ),
                ));
            }
            Ok(vec![])
        }
        (2, 2) => {
            if a[1] != b[0] {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "mm: mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                        a[0], a[1], b[0], b[1]
                    ),
                ));
            }
            Ok(vec![a[0], b[1]])
        }
        (ra, rb) => {
            // Promote 1-D operands to matrices, multiply, then drop the added dims.
            let a2: Vec<i64> = if ra == 1 { vec![1, a[0]] } else { a.to_vec() };
            let b2: Vec<i64> = if rb == 1 { vec![b[0], 1] } else { b.to_vec() };
            let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
            let (k2, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
            let batch = broadcast_shapes(&a2[..a2.len() - 2], &b2[..b2.len() - 2])?;
            if k != k2 {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "Expected size for first two dimensions of batch2 tensor to be: [{}, {k}] but got: [{}, {k2}].",
                        batch.iter().product::<i64>(),
                        batch.iter().product::<i64>()
                    ),
                ));
            }
            let mut shape = batch;
            if ra > 1 {
                shape.push(m);
            }
            if rb > 1 {
                shape.push(n);
            }
            Ok(shape)
        }
    }
}

/// `full {shape, value, dtype}` (and `zeros`, `ones`).
pub fn full(op: &Op, _: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Full {
        shape,
        value,
        dtype,
        ..
    } = op
    else {
        return Err(wrong_rule("full"));
    };
    check_shape(shape)?;
    let d = dtype.unwrap_or_else(|| value.promotion_dtype(ctx.default_dtype));
    Ok(single(shape.clone(), d, vec![]))
}

/// `arange {start, end, step, dtype}`.
pub fn arange(op: &Op, _: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::Arange {
        start,
        end,
        step,
        dtype,
        ..
    } = op
    else {
        return Err(wrong_rule("arange"));
    };
    let (start, end, step) = (*start, *end, *step);
    let any_float = [start, end, step]
        .iter()
        .any(|s| matches!(s, Scalar::Float(_)));
    if [start, end, step]
        .iter()
        .any(|s| matches!(s, Scalar::Complex(..)))
    {
        return Err(err(
            ErrorKind::Attribute,
            "arange: start, end and step must be real numbers",
        ));
    }
    let d = dtype.unwrap_or(if any_float {
        ctx.default_dtype.dtype()
    } else {
        DType::I64
    });
    let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
    if st == 0.0 {
        return Err(err(ErrorKind::Attribute, "step must be nonzero"));
    }
    if !(s.is_finite() && e.is_finite()) {
        return Err(err(
            ErrorKind::Attribute,
            format!("unsupported range: {s} -> {e}"),
        ));
    }
    if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
        return Err(err(
            ErrorKind::Attribute,
            "upper bound and larger bound inconsistent with step sign",
        ));
    }
    let n = ((e - s) / st).ceil().max(0.0) as i64;
    Ok(single(vec![n], d, vec![]))
}

/// A view op: the result's shape (strides are the layout pass's business).
pub fn view(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let shape = view_shape(op, &x.shape)?;
    Ok(single(shape, x.dtype, vec![None]))
}

/// `tril_indices` and `triu_indices`: `[2, N]` positions, int64 unless
/// `dtype` says otherwise.
pub fn tri_indices(op: &Op, _: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let dtype = match op {
        Op::TrilIndices { dtype, .. } | Op::TriuIndices { dtype, .. } => {
            dtype.unwrap_or(DType::I64)
        }
        _ => return Err(wrong_rule("tri_indices")),
    };
    let (rows, _) = tri_positions(op)?;
    Ok(single(vec![2, rows.len() as i64], dtype, vec![]))
}

/// The rows and the columns `tril_indices` or `triu_indices` lists, row
/// by row, with PyTorch's checks.
pub fn tri_positions(op: &Op) -> Result<(Vec<i64>, Vec<i64>)> {
    let (row, col, offset, lower) = match op {
        Op::TrilIndices {
            row, col, offset, ..
        } => (*row, *col, *offset, true),
        Op::TriuIndices {
            row, col, offset, ..
        } => (*row, *col, *offset, false),
        _ => return Err(wrong_rule("tri_indices")),
    };
    for (name, v) in [("row", row), ("col", col)] {
        if v < 0 {
            // PyTorch's message has no space before the number.
            return Err(err(
                ErrorKind::Attribute,
                format!("{name} must be non-negative, got{v}"),
            ));
        }
    }
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for r in 0..row {
        // Column c is kept when c - r <= offset (lower) or >= offset.
        let (from, to) = if lower {
            (0, r.saturating_add(offset).saturating_add(1).clamp(0, col))
        } else {
            (r.saturating_add(offset).clamp(0, col), col)
        };
        for c in from..to {
            rows.push(r);
            cols.push(c);
        }
    }
    Ok((rows, cols))
}

/// `as_strided`: the view's checks, and its bounds against the storage
/// the operand owns (its elements up to the last: a parameter's or a
/// computed value's; an operand that is itself a view of a larger storage
/// is held to its own elements, which PyTorch's check against the whole
/// storage would not be).
pub fn as_strided(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::AsStrided {
        size,
        stride,
        storage_offset,
    } = op
    else {
        return Err(wrong_rule("as_strided"));
    };
    let x = tensor(args)?;
    let g = match x.strides() {
        Some(strides) => Geometry::new(x.shape.clone(), strides.to_vec(), 0),
        None => Geometry::contiguous(&x.shape),
    };
    let storage = (g.own_storage(), x.dtype.itemsize());
    let out = g.as_strided(size, stride, *storage_offset, Some(storage))?;
    Ok(single(out.shape, x.dtype, vec![None]))
}

/// The result shape of a view op.
pub fn view_shape(op: &Op, shape: &[i64]) -> Result<Vec<i64>> {
    if let Some(view) = crate::ops::derived::primitive_view(op, shape)? {
        return view_shape(&view, shape);
    }
    let g = Geometry::contiguous(shape);
    let out = match op {
        Op::Reshape { shape: s } | Op::View { shape: s } => crate::view::infer_size(s, g.numel())?,
        Op::Permute { dims } => g.permute(dims)?.shape,
        Op::Transpose { dim0, dim1 } => g.transpose(*dim0, *dim1)?.shape,
        Op::T => g.t()?.shape,
        Op::Expand { shape: s } => g.expand(s)?.shape,
        Op::Squeeze { dims } => g.squeeze(dims.as_deref())?.shape,
        Op::Unsqueeze { dim } => g.unsqueeze(*dim)?.shape,
        Op::Slice {
            dim,
            start,
            end,
            step,
        } => g.slice(*dim, *start, *end, *step)?.shape,
        Op::Select { dim, index } => g.select(*dim, *index)?.shape,
        Op::Diagonal { offset, dim1, dim2 } => g.diagonal(*offset, *dim1, *dim2)?.shape,
        Op::Unfold {
            dimension,
            size,
            step,
        } => g.unfold(*dimension, *size, *step)?.shape,
        Op::AsStrided {
            size,
            stride,
            storage_offset,
        } => g.as_strided(size, stride, *storage_offset, None)?.shape,
        Op::Flatten { start_dim, end_dim } => {
            g.flatten(*start_dim, *end_dim)?.geometry().shape.clone()
        }
        _ => return Err(wrong_rule("view")),
    };
    Ok(out)
}

/// A rule asked of an op it is not the rule of: the table is wrong.
pub(crate) fn wrong_rule(rule: &str) -> Error {
    err(
        ErrorKind::Backend,
        format!("the op table gives an op the {rule} rule, which does not handle it"),
    )
}

/// The device-kernel checks: operand conversions, then the kernel's dtypes.
fn check_kernels(op: &Op, args: &[Arg<'_>], inf: &Inferred, ctx: &InferCtx) -> Result<()> {
    // A rule that picks the kernel may refuse first (where's fill of a
    // scalar branch, argmax of bool).
    let kernel = match op.def().rules.kernel {
        KernelRule::None => None,
        KernelRule::Fixed(k) => Some(k),
        KernelRule::Custom(f) => f(op, args, inf)?,
    };
    // pow(Tensor, Scalar) takes the exponent as a number, not a tensor.
    let scalar_exponent = matches!(op, Op::Binary { op: BinaryOp::Pow })
        && matches!(args.get(1), Some(Arg::Scalar(_)));
    for (i, (arg, target)) in args.iter().zip(&inf.operand_dtypes).enumerate() {
        if i == 1 && scalar_exponent {
            continue;
        }
        if let (Some(from), Some(to)) = (arg.dtype(ctx.default_dtype), target) {
            check_copy(from, *to)?;
        }
    }
    match kernel {
        // Creation ops dispatch on their result's dtype.
        Some(k) if op.is_creation() => k.check(inf.results[0].dtype),
        Some(k) => k.check(inf.compute()),
        None => Ok(()),
    }
}

/// `clone {strides}` lays a copy out densely: the strides must fit the
/// shape, leave no element shared, and not be mixed with a memory format.
fn check_clone_strides(shape: &[i64], strides: &[i64], format: crate::MemoryFormat) -> Result<()> {
    if format != crate::MemoryFormat::Preserve {
        return Err(Error::new(
            ErrorKind::Attribute,
            "clone takes either strides or a memory_format, not both",
        ));
    }
    if strides.len() != shape.len() {
        return Err(Error::new(
            ErrorKind::Attribute,
            format!(
                "clone: {} strides given for a tensor of rank {}",
                strides.len(),
                shape.len()
            ),
        ));
    }
    if !crate::layout::is_non_overlapping_and_dense(shape, strides) {
        return Err(Error::new(
            ErrorKind::Attribute,
            format!(
                "clone: strides {} are not non-overlapping and dense for shape {}",
                crate::view::format_shape(strides),
                crate::view::format_shape(shape)
            ),
        ));
    }
    Ok(())
}

/// A shape error with PyTorch's message.
fn shape_error<T>(message: String) -> Result<T> {
    Err(err(ErrorKind::Shape, message))
}

/// A dtype error with PyTorch's message.
fn dtype_error<T>(message: String) -> Result<T> {
    Err(err(ErrorKind::DType, message))
}

/// The scalar type name PyTorch's messages use (`Float`, `Double`).
fn type_name(t: &TensorType) -> &'static str {
    t.dtype.scalar_type_name()
}

/// `addr`'s scalar coefficient (`beta`, `alpha`) against the result
/// dtype: PyTorch refuses a float for integers and a bool for non-bool
/// results (the other products convert the coefficient to the result
/// dtype instead, truncating).
fn check_coefficient(name: &str, value: Scalar, result: DType) -> Result<()> {
    if (result.is_integral() || result.is_bool()) && matches!(value, Scalar::Float(_)) {
        return Err(err(
            ErrorKind::Attribute,
            format!(
                "For integral input tensors, argument {name} must not be a floating point number."
            ),
        ));
    }
    if !result.is_bool() && value.is_bool() {
        return Err(err(
            ErrorKind::Attribute,
            format!("Boolean {name} only supported for Boolean results."),
        ));
    }
    Ok(())
}

/// `input` broadcast to a product's result shape (PyTorch expands it).
fn expands_to(input: &TensorType, shape: &[i64]) -> Result<()> {
    Geometry::contiguous(&input.shape).expand(shape).map(|_| ())
}

/// The dtype of `a * b`, with `mul`'s own checks (its kernel's dtypes):
/// the products that expand into a `mul` refuse what it refuses.
fn mul_dtype(a: &TensorType, b: &TensorType, ctx: &InferCtx) -> Result<DType> {
    let mul = Op::Binary { op: BinaryOp::Mul };
    // Shapes of ones: the operands' ranks and dtypes decide, not sizes.
    let ones = |t: &TensorType| {
        let mut u = t.clone();
        u.shape = vec![1; t.rank()];
        u
    };
    let (a, b) = (ones(a), ones(b));
    let inf = infer(&mul, &[Arg::Tensor(&a), Arg::Tensor(&b)], None, ctx)?;
    Ok(inf.results[0].dtype)
}

/// The matrix and vector products (`mm`, `bmm`, `mv`, `dot`, `outer`,
/// `inner`, `addmm`, `addmv`, `addr`, `baddbmm`, `addbmm`, `trace`,
/// `linalg_vecdot`, `kron`): PyTorch's rank, size and dtype checks, with
/// its messages, in its order.
pub fn products(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    // A tensor list, which may be empty: checked before any operand is read.
    if let Op::LinalgMultiDot = op {
        let (shape, dtype) = multi_dot(args)?;
        return Ok(single(shape, dtype, vec![None; args.len()]));
    }
    let a = tensor(args)?;
    let same = |x: &TensorType, y: &TensorType| {
        if x.dtype == y.dtype {
            Ok(())
        } else {
            Err(err(
                ErrorKind::DType,
                format!(
                    "expected m1 and m2 to have the same dtype, but got: {} != {}",
                    x.dtype.info().cpp_type_name,
                    y.dtype.info().cpp_type_name
                ),
            ))
        }
    };
    let mm_shape = |prefix: &str, x: &TensorType, y: &TensorType| -> Result<Vec<i64>> {
        for (t, name) in [(x, "self"), (y, "mat2")] {
            if t.rank() != 2 {
                return shape_error(format!(
                    "{prefix}{name} must be a matrix, got {}-D tensor",
                    t.rank()
                ));
            }
        }
        same(x, y)?;
        if x.shape[1] != y.shape[0] {
            return shape_error(format!(
                "{prefix}mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                x.shape[0], x.shape[1], y.shape[0], y.shape[1]
            ));
        }
        Ok(vec![x.shape[0], y.shape[1]])
    };
    let bmm_shape = |x: &TensorType, y: &TensorType| -> Result<Vec<i64>> {
        for (t, name) in [(x, "batch1"), (y, "batch2")] {
            if t.rank() != 3 {
                return shape_error(format!("{name} must be a 3D tensor"));
            }
        }
        if y.shape[0] != x.shape[0] || y.shape[1] != x.shape[2] {
            return shape_error(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                x.shape[0], x.shape[2], y.shape[0], y.shape[1]
            ));
        }
        Ok(vec![x.shape[0], x.shape[1], y.shape[2]])
    };
    let mv_shape = |input_rank: usize, x: &TensorType, v: &TensorType| -> Result<Vec<i64>> {
        if x.rank() != 2 || v.rank() != 1 || input_rank > 1 {
            return shape_error(format!(
                "vector + matrix @ vector expected, got {input_rank}, {}, {}",
                x.rank(),
                v.rank()
            ));
        }
        if x.shape[1] != v.shape[0] {
            return shape_error(format!(
                "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                x.shape[0], x.shape[0], x.shape[1], v.shape[0]
            ));
        }
        Ok(vec![x.shape[0]])
    };
    let vector = |t: &TensorType, what: &str, name: &str| -> Result<()> {
        if t.rank() == 1 {
            Ok(())
        } else {
            shape_error(format!(
                "{what}: Expected 1-D argument {name}, but got {}-D",
                t.rank()
            ))
        }
    };
    let promoted = |ts: &[&TensorType]| -> Result<DType> {
        let operands: Vec<PromoOperand> = ts
            .iter()
            .map(|t| PromoOperand::tensor(t.dtype, t.rank()))
            .collect();
        result_type(&operands, ctx.default_dtype)
    };
    let n = args.len();
    let (shape, dtype) = match op {
        Op::Mm => (mm_shape("mm: ", a, nth_tensor(args, 1)?)?, a.dtype),
        Op::Bmm => {
            let b = nth_tensor(args, 1)?;
            let shape = bmm_shape(a, b)?;
            if a.dtype != b.dtype {
                return dtype_error(format!(
                    "expected scalar type {} but found {}",
                    type_name(a),
                    type_name(b)
                ));
            }
            (shape, a.dtype)
        }
        Op::Mv => {
            let v = nth_tensor(args, 1)?;
            let shape = mv_shape(1, a, v)?;
            if a.dtype != v.dtype {
                return dtype_error(format!(
                    "addmv input tensors must have the same dtype, but got {}, {}, and {}",
                    type_name(v),
                    type_name(a),
                    type_name(v)
                ));
            }
            (shape, a.dtype)
        }
        Op::Dot | Op::Vdot => {
            let b = nth_tensor(args, 1)?;
            if a.rank() != 1 || b.rank() != 1 {
                return shape_error(format!(
                    "1D tensors expected, but got {}D and {}D tensors",
                    a.rank(),
                    b.rank()
                ));
            }
            if a.dtype != b.dtype {
                return dtype_error(format!(
                    "dot : expected both vectors to have same dtype, but found {} and {}",
                    type_name(a),
                    type_name(b)
                ));
            }
            matmul_shape(&a.shape, &b.shape)?;
            (vec![], a.dtype)
        }
        Op::Outer => {
            let b = nth_tensor(args, 1)?;
            vector(a, "outer", "self")?;
            vector(b, "outer", "vec2")?;
            (vec![a.shape[0], b.shape[0]], mul_dtype(a, b, ctx)?)
        }
        Op::Inner => {
            let b = nth_tensor(args, 1)?;
            if a.rank() == 0 || b.rank() == 0 {
                (broadcast_shapes(&a.shape, &b.shape)?, mul_dtype(a, b, ctx)?)
            } else {
                if a.shape[a.rank() - 1] != b.shape[b.rank() - 1] {
                    return shape_error(format!(
                        "inner() the last dimension must match on both input tensors but got shapes {} and {}",
                        format_shape(&a.shape),
                        format_shape(&b.shape)
                    ));
                }
                if a.dtype != b.dtype {
                    return dtype_error("both inputs should have same dtype".into());
                }
                // A matrix product here (a 0-D operand is a `mul`, which
                // takes every dtype).
                crate::support::AtenKernel::new(
                    "addmm_impl_cpu_",
                    crate::support::DTypeSet::FLOATS_COMPLEX
                        .union(crate::support::DTypeSet::FLOAT8_SIGNED)
                        .union(crate::support::DTypeSet::INTS),
                )
                .check(a.dtype)?;
                let mut shape = a.shape[..a.rank() - 1].to_vec();
                shape.extend_from_slice(&b.shape[..b.rank() - 1]);
                (shape, a.dtype)
            }
        }
        Op::Addmm { .. } => {
            let (m1, m2) = (nth_tensor(args, 1)?, nth_tensor(args, 2)?);
            for (t, name) in [(m1, "self"), (m2, "mat2")] {
                if t.rank() != 2 {
                    return shape_error(format!(
                        "addmm: {name} must be a matrix, got {}-D tensor",
                        t.rank()
                    ));
                }
            }
            if a.dtype != m2.dtype {
                return dtype_error(format!(
                    "self and mat2 must have the same dtype, but got {} and {}",
                    type_name(a),
                    type_name(m2)
                ));
            }
            let shape = mm_shape("addmm: ", m1, m2)?;
            expands_to(a, &shape)?;
            (shape, a.dtype)
        }
        Op::Addmv { .. } => {
            let (m, v) = (nth_tensor(args, 1)?, nth_tensor(args, 2)?);
            let shape = mv_shape(a.rank(), m, v)?;
            if a.rank() == 1 && a.shape[0] != shape[0] && a.shape[0] != 1 {
                return shape_error(format!(
                    "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                    a.shape[0], m.shape[0], m.shape[1], v.shape[0]
                ));
            }
            if a.dtype != m.dtype || m.dtype != v.dtype {
                return dtype_error(format!(
                    "addmv input tensors must have the same dtype, but got {}, {}, and {}",
                    type_name(a),
                    type_name(m),
                    type_name(v)
                ));
            }
            (shape, a.dtype)
        }
        Op::Addr { beta, alpha } => {
            let (v1, v2) = (nth_tensor(args, 1)?, nth_tensor(args, 2)?);
            vector(v1, "addr", "vec1")?;
            vector(v2, "addr", "vec2")?;
            let shape = vec![v1.shape[0], v2.shape[0]];
            expands_to(a, &shape)?;
            let d = promoted(&[a, v1, v2])?;
            check_coefficient("beta", *beta, d)?;
            check_coefficient("alpha", *alpha, d)?;
            (shape, d)
        }
        Op::Baddbmm { .. } => {
            let (b1, b2) = (nth_tensor(args, 1)?, nth_tensor(args, 2)?);
            let shape = bmm_shape(b1, b2)?;
            if a.dtype != b1.dtype || a.dtype != b2.dtype {
                if a.dtype == b1.dtype {
                    return dtype_error(format!(
                        "expected scalar type {} but found {}",
                        type_name(b1),
                        type_name(b2)
                    ));
                }
                return dtype_error(format!(
                    "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
                    a.dtype.info().cpp_type_name,
                    b1.dtype.info().cpp_type_name,
                    b2.dtype.info().cpp_type_name
                ));
            }
            expands_to(a, &shape)?;
            (shape, a.dtype)
        }
        Op::Addbmm { .. } => {
            let (b1, b2) = (nth_tensor(args, 1)?, nth_tensor(args, 2)?);
            for (t, name) in [(b1, "batch1"), (b2, "batch2")] {
                if t.rank() != 3 {
                    return shape_error(format!("{name} must be a 3D tensor"));
                }
            }
            if b1.shape[0] != b2.shape[0] {
                return shape_error(format!(
                    "batch1 and batch2 must have same number of batches, got {} and {}",
                    b1.shape[0], b2.shape[0]
                ));
            }
            if b1.shape[2] != b2.shape[1] {
                return shape_error(format!(
                    "Incompatible matrix sizes for bmm ({}x{} and {}x{})",
                    b1.shape[1], b1.shape[2], b2.shape[1], b2.shape[2]
                ));
            }
            let shape = vec![b1.shape[1], b2.shape[2]];
            expands_to(a, &shape)?;
            if a.dtype != b2.dtype {
                return dtype_error(format!(
                    "self and mat2 must have the same dtype, but got {} and {}",
                    type_name(a),
                    type_name(b2)
                ));
            }
            same(b1, b2)?;
            (shape, a.dtype)
        }
        Op::Trace => {
            if a.rank() != 2 {
                return shape_error(format!(
                    "trace: expected a matrix, but got tensor with dim {}",
                    a.rank()
                ));
            }
            let d = if a.dtype.is_integral() || a.dtype.is_bool() {
                DType::I64
            } else {
                a.dtype
            };
            return Ok(single(vec![], d, vec![Some(a.dtype)]));
        }
        Op::LinalgVecdot { dim } => {
            let b = nth_tensor(args, 1)?;
            if a.dtype != b.dtype {
                return dtype_error(format!(
                    "linalg.vecdot: Expected x and y to have the same dtype, but found x of type {} and y of type {} instead",
                    type_name(a),
                    type_name(b)
                ));
            }
            if !a.dtype.is_floating_point() && !a.dtype.is_complex() {
                return dtype_error(format!(
                    "linalg.vecdot: Expected a floating point or complex tensor as input. Got {}",
                    type_name(a)
                ));
            }
            mul_dtype(a, b, ctx)?;
            let mut shape = broadcast_shapes(&a.shape, &b.shape)?;
            let d = wrap_dim(*dim, shape.len())?;
            shape.remove(d);
            (shape, a.dtype)
        }
        Op::Kron => {
            let b = nth_tensor(args, 1)?;
            let r = a.rank().max(b.rank());
            let pad = |t: &TensorType| {
                let mut s = vec![1; r - t.rank()];
                s.extend_from_slice(&t.shape);
                s
            };
            let (sa, sb) = (pad(a), pad(b));
            let shape = sa.iter().zip(&sb).map(|(x, y)| x * y).collect();
            (shape, mul_dtype(a, b, ctx)?)
        }
        Op::Tensordot {
            dims_self,
            dims_other,
        } => {
            let b = nth_tensor(args, 1)?;
            (tensordot(a, b, dims_self, dims_other)?, a.dtype)
        }
        Op::Bilinear => {
            let (b, w) = (nth_tensor(args, 1)?, nth_tensor(args, 2)?);
            (
                bilinear(a, b, w, args.get(3).and_then(Arg::tensor))?,
                a.dtype,
            )
        }
        Op::LinalgCross { dim } => (cross(a, nth_tensor(args, 1)?, *dim)?, a.dtype),
        Op::Cross { dim } => {
            let dim = match dim {
                Some(d) => *d,
                None => default_cross_dim(&a.shape)?,
            };
            (cross(a, nth_tensor(args, 1)?, dim)?, a.dtype)
        }
        Op::Cdist { p, compute_mode } => {
            (cdist(a, nth_tensor(args, 1)?, p.0, *compute_mode)?, a.dtype)
        }
        _ => return Err(wrong_rule("products")),
    };
    check_shape(&shape)?;
    Ok(single(shape, dtype, vec![None; n]))
}

/// `t.size(dim)` as PyTorch reads it: out-of-range dims and 0-D tensors
/// refused with its messages.
fn size_at(t: &TensorType, dim: i64) -> Result<i64> {
    if t.rank() == 0 {
        return Err(err(
            ErrorKind::Dim,
            format!("dimension specified as {dim} but tensor has no dimensions"),
        ));
    }
    Ok(t.shape[wrap_dim(dim, t.rank())?])
}

/// `tensordot`'s result shape, with PyTorch's checks in its order: the
/// lists' lengths, the dtypes, each contracted pair's sizes (a size-1 dim
/// against any size is summed away), then repeated dims.
fn tensordot(a: &TensorType, b: &TensorType, da: &[i64], db: &[i64]) -> Result<Vec<i64>> {
    if da.len() != db.len() {
        return shape_error("both dimension lists should have same length".into());
    }
    if a.dtype != b.dtype {
        return dtype_error("both inputs should have same dtype".into());
    }
    for (x, y) in da.iter().zip(db) {
        let (s1, s2) = (size_at(a, *x)?, size_at(b, *y)?);
        // A size-1 contracted dim is summed first: the sum's kernel
        // refuses its dtypes before the product's does.
        if s1 == 1 || s2 == 1 {
            crate::support::AtenKernel::new("sum_cpu", crate::support::DTypeSet::SUMMABLE)
                .check(a.dtype)?;
        }
        if s1 != 1 && s2 != 1 && s1 != s2 {
            return shape_error(format!(
                "contracted dimensions need to match, but first has size {s1} in dim {x} and second has size {s2} in dim {y}"
            ));
        }
    }
    // Which dims are contracted (PyTorch's dim_list_to_bitset).
    let contracted = |t: &TensorType, dims: &[i64]| -> Result<Vec<bool>> {
        let mut seen = vec![false; t.rank()];
        for d in dims {
            let w = wrap_dim(*d, t.rank())?;
            if seen[w] {
                return shape_error(format!(
                    "dim {w} appears multiple times in the list of dims"
                ));
            }
            seen[w] = true;
        }
        Ok(seen)
    };
    let (ca, cb) = (contracted(a, da)?, contracted(b, db)?);
    let kept = |t: &TensorType, c: &[bool]| -> Vec<i64> {
        t.shape
            .iter()
            .zip(c)
            .filter(|(_, c)| !**c)
            .map(|(n, _)| *n)
            .collect()
    };
    let mut shape = kept(a, &ca);
    shape.extend(kept(b, &cb));
    Ok(shape)
}

/// `linalg_multi_dot`'s result shape and dtype, with PyTorch's checks in
/// its order.
fn multi_dot(args: &[Arg<'_>]) -> Result<(Vec<i64>, DType)> {
    let n = args.len();
    if n < 2 {
        return shape_error(format!(
            "multi_dot(): expected at least 2 tensors but got {n}"
        ));
    }
    let ts: Vec<&TensorType> = (0..n).map(|i| nth_tensor(args, i)).collect::<Result<_>>()?;
    let mut shape = Vec::new();
    let (first, last) = (ts[0], ts[n - 1]);
    match first.rank() {
        1 => {}
        2 => shape.push(first.shape[0]),
        r => {
            return shape_error(format!(
                "multi_dot(): the first tensor must be 1D or 2D but got {r}D"
            ));
        }
    }
    match last.rank() {
        1 => {}
        2 => shape.push(last.shape[1]),
        r => {
            return shape_error(format!(
                "multi_dot(): the last tensor must be 1D or 2D but got {r}D"
            ));
        }
    }
    for (i, t) in ts.iter().enumerate().take(n - 1).skip(1) {
        if t.rank() != 2 {
            return shape_error(format!(
                "multi_dot(): tensor {i} must be 2D but got {}D",
                t.rank()
            ));
        }
    }
    // Rows and columns with a 1-D first operand a row, a 1-D last a column.
    let rows = |i: usize| {
        if ts[i].rank() == 1 && i == 0 {
            1
        } else {
            ts[i].shape[0]
        }
    };
    let cols = |i: usize| {
        let t = ts[i];
        if t.rank() == 1 {
            if i == 0 { t.shape[0] } else { 1 }
        } else {
            t.shape[1]
        }
    };
    for i in 1..n {
        if ts[i].dtype != first.dtype {
            return dtype_error(format!(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is {} and tensor {i} {}",
                first.dtype.info().cpp_type_name,
                ts[i].dtype.info().cpp_type_name
            ));
        }
        if cols(i - 1) != rows(i) {
            return shape_error(format!(
                "multi_dot(): tensors {} and {i} with shapes {} and {} cannot be multiplied",
                i - 1,
                format_shape(&ts[i - 1].shape),
                format_shape(&ts[i].shape)
            ));
        }
    }
    Ok((shape, first.dtype))
}

/// `bilinear`'s result shape (`input1`'s batch dims and the weight's
/// outputs), with PyTorch's checks in its order.
fn bilinear(
    x1: &TensorType,
    x2: &TensorType,
    w: &TensorType,
    bias: Option<&TensorType>,
) -> Result<Vec<i64>> {
    let name = |t: &TensorType| t.dtype.info().cpp_type_name;
    let same = x1.dtype == x2.dtype && x1.dtype == w.dtype;
    match bias {
        Some(b) if !same || b.dtype != x1.dtype => {
            return dtype_error(format!(
                "All tensors must have the same dtype, got input1: {}, input2: {}, weight: {}, bias: {}",
                name(x1),
                name(x2),
                name(w),
                name(b)
            ));
        }
        None if !same => {
            return dtype_error(format!(
                "All tensors must have the same dtype, got input1: {}, input2: {}, weight: {}",
                name(x1),
                name(x2),
                name(w)
            ));
        }
        _ => {}
    }
    if x1.rank() != x2.rank() {
        return shape_error(format!(
            "bilinear(): input dimensions do not match: got {} and {}",
            x1.rank(),
            x2.rank()
        ));
    }
    let r = x1.rank();
    for i in 0..r.saturating_sub(1) {
        if x1.shape[i] != x2.shape[i] {
            return shape_error(format!(
                "bilinear(): input batch dimensions do not match at dim {i}: got {} and {}",
                x1.shape[i], x2.shape[i]
            ));
        }
    }
    // The sizes PyTorch reads, each refused as its own size() call is.
    let size = size_at;
    let (n1, k1) = (size(x1, -1)?, size(w, 1)?);
    if n1 != k1 {
        return shape_error(format!(
            "bilinear(): input1 size does not match weight size: got {n1} but expected {k1}"
        ));
    }
    let (n2, k2) = (size(x2, -1)?, size(w, 2)?);
    if n2 != k2 {
        return shape_error(format!(
            "bilinear(): input2 size does not match weight size: got {n2} but expected {k2}"
        ));
    }
    let outputs = size(w, 0)?;
    if let Some(b) = bias {
        let nb = size(b, 0)?;
        if nb != outputs {
            return shape_error(format!(
                "bilinear(): bias size does not match weight size: got {nb} but expected {outputs}"
            ));
        }
    }
    if w.rank() != 3 {
        return Err(err(
            ErrorKind::Unsupported,
            format!("bilinear takes a 3-D weight here, got {}-D", w.rank()),
        ));
    }
    let mut shape = x1.shape[..r - 1].to_vec();
    shape.push(outputs);
    // The bias is added after the products: it broadcasts against them.
    if let Some(b) = bias {
        return broadcast_shapes(&shape, &b.shape);
    }
    Ok(shape)
}

/// `torch.cross`'s default dim: the first of `input`'s dims of size 3.
fn default_cross_dim(shape: &[i64]) -> Result<i64> {
    match shape.iter().position(|n| *n == 3) {
        Some(d) => Ok(d as i64),
        None => shape_error("no dimension of size 3 in input".into()),
    }
}

/// `linalg_cross`'s result shape, with PyTorch's checks in its order.
fn cross(a: &TensorType, b: &TensorType, dim: i64) -> Result<Vec<i64>> {
    if a.rank() != b.rank() {
        return shape_error("linalg.cross: inputs must have the same number of dimensions.".into());
    }
    let (na, nb) = (size_at(a, dim)?, size_at(b, dim)?);
    if na != 3 || nb != 3 {
        return shape_error(format!(
            "linalg.cross: inputs dimension {dim} must have length 3. Got {na} and {nb}"
        ));
    }
    let shape = broadcast_shapes(&a.shape, &b.shape)?;
    if a.dtype != b.dtype {
        return dtype_error(format!(
            "expected scalar type {} but found {}",
            type_name(a),
            type_name(b)
        ));
    }
    Ok(shape)
}

/// `cdist`'s result shape (`[batch..., r1, r2]`), with PyTorch's checks in
/// its order.
fn cdist(a: &TensorType, b: &TensorType, p: f64, mode: Option<i64>) -> Result<Vec<i64>> {
    for (t, name) in [(a, "X1"), (b, "X2")] {
        if !t.dtype.is_floating_point() {
            return dtype_error(format!(
                "cdist only supports floating-point dtypes, {name} got: {}",
                type_name(t)
            ));
        }
    }
    // `!(p >= 0)`: NaN is refused too.
    if p.is_nan() || p < 0.0 {
        return Err(err(
            ErrorKind::Attribute,
            "cdist only supports non-negative p values",
        ));
    }
    for (t, name) in [(a, "X1"), (b, "X2")] {
        if t.rank() < 2 {
            return shape_error(format!(
                "cdist only supports at least 2D tensors, {name} got: {}D",
                t.rank()
            ));
        }
    }
    let (ra, rb) = (a.rank(), b.rank());
    if a.shape[ra - 1] != b.shape[rb - 1] {
        return shape_error(format!(
            "X1 and X2 must have the same number of columns. X1: {} X2: {}",
            a.shape[ra - 1],
            b.shape[rb - 1]
        ));
    }
    if let Some(m) = mode {
        if !(0..=2).contains(&m) {
            return Err(err(
                ErrorKind::Attribute,
                format!("possible modes: 0, 1, 2, but was: {m}"),
            ));
        }
    }
    let mut shape = broadcast_shapes(&a.shape[..ra - 2], &b.shape[..rb - 2])?;
    if a.dtype != b.dtype {
        return dtype_error(format!(
            "expected scalar type {} but found {}",
            type_name(a),
            type_name(b)
        ));
    }
    shape.extend([a.shape[ra - 2], b.shape[rb - 2]]);
    Ok(shape)
}

/// The normalizations (`rms_norm`, `group_norm`, `batch_norm`,
/// `instance_norm`, `normalize`): the input's shape and dtype, with
/// PyTorch's checks of the parameters' shapes and dtypes.
pub fn norms(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let param = |i: usize| args.get(i).and_then(Arg::tensor);
    // PyTorch's CPU check_mixed_data_type: parameters of the input's
    // dtype, or f32 for a reduced-precision input.
    let mixed = |params: &[&TensorType]| -> Result<()> {
        let Some(first) = params.first() else {
            return Ok(());
        };
        let p = first.dtype;
        if params.iter().any(|t| t.dtype != p) || p != x.dtype {
            if p != DType::F32 {
                return Err(err(
                    ErrorKind::DType,
                    "mixed dtype (CPU): expect parameter to have scalar type of Float",
                ));
            }
            if !x.dtype.is_reduced_float() {
                return Err(err(
                    ErrorKind::DType,
                    "mixed dtype (CPU): all inputs must share same datatype.",
                ));
            }
        }
        Ok(())
    };
    match op {
        Op::RmsNorm {
            normalized_shape, ..
        } => {
            let n = normalized_shape.len();
            if n == 0 || n > x.rank() || x.shape[x.rank() - n..] != **normalized_shape {
                return shape_error(format!(
                    "Given normalized_shape={}, expected input with shape [*{}], but got input of size{}",
                    format_shape(normalized_shape),
                    normalized_shape
                        .iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    format_shape(&x.shape)
                ));
            }
            if let Some(w) = param(1)
                && w.shape != **normalized_shape
            {
                return shape_error(format!(
                    "Expected weight to be of same shape as normalized_shape, but got weight of shape {} and normalized_shape = {}",
                    format_shape(&w.shape),
                    format_shape(normalized_shape)
                ));
            }
            if x.dtype.is_complex() {
                return Err(err(
                    ErrorKind::Unsupported,
                    "rms_norm of complex tensors: Kiln computes it on floats only",
                ));
            }
        }
        Op::GroupNorm { num_groups, .. } => {
            if x.rank() < 2 {
                return shape_error(format!(
                    "Expected at least 2 dimensions for input tensor but received {}",
                    x.rank()
                ));
            }
            let c = x.shape[1];
            if *num_groups <= 0 || c % num_groups != 0 {
                return shape_error(format!(
                    "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={num_groups}",
                    format_shape(&x.shape)
                ));
            }
            for (i, name) in [(1, "weight"), (2, "bias")] {
                if let Some(p) = param(i)
                    && (p.rank() != 1 || p.shape[0] != c)
                {
                    return shape_error(format!(
                        "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {} and input of shape {}",
                        format_shape(&p.shape),
                        format_shape(&x.shape)
                    ));
                }
            }
            let params: Vec<&TensorType> = [1, 2].into_iter().filter_map(param).collect();
            mixed(&params)?;
        }
        Op::BatchNorm { training, .. }
        | Op::InstanceNorm {
            use_input_stats: training,
            ..
        } => {
            let instance = matches!(op, Op::InstanceNorm { .. });
            if x.rank() < 2 {
                return shape_error(format!(
                    "Expected at least 2 dimensions for input tensor but received {}",
                    x.rank()
                ));
            }
            let (rm, rv) = (param(3), param(4));
            if instance {
                if !training && (rm.is_none() || rv.is_none()) {
                    return shape_error(
                        "Expected running_mean and running_var to be defined when use_input_stats is false".into(),
                    );
                }
            } else if !training && (rm.is_none() || rv.is_none()) {
                let name = if rm.is_none() {
                    "running_mean"
                } else {
                    "running_var"
                };
                return Err(err(
                    ErrorKind::Shape,
                    format!("{name} must be defined in evaluation mode"),
                ));
            }
            // instance_norm is batch_norm of the input viewed as
            // [1, N·C, ...], with its parameters repeated N times.
            let (repeat, c) = match (instance, x.rank()) {
                (_, 0 | 1) => (1, 0),
                (true, _) => (x.shape[0], x.shape[0] * x.shape[1]),
                (false, _) => (1, x.shape[1]),
            };
            for (i, name) in [
                (3, "running_mean"),
                (4, "running_var"),
                (1, "weight"),
                (2, "bias"),
            ] {
                if let Some(p) = param(i)
                    && p.numel() * repeat != c
                {
                    return shape_error(format!(
                        "{name} should contain {c} elements not {}",
                        p.numel() * repeat
                    ));
                }
            }
            if *training {
                let per_channel: i64 = if instance {
                    x.shape.iter().skip(2).product()
                } else {
                    x.shape
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != 1)
                        .map(|(_, n)| *n)
                        .product()
                };
                if per_channel <= 1 {
                    let what = if instance {
                        "spatial element"
                    } else {
                        "value per channel"
                    };
                    return Err(err(
                        ErrorKind::Shape,
                        format!(
                            "Expected more than 1 {what} when training, got input size torch.Size({})",
                            format_shape(&x.shape)
                        ),
                    ));
                }
            }
            let params: Vec<&TensorType> = [1, 2, 3, 4].into_iter().filter_map(param).collect();
            mixed(&params)?;
        }
        Op::Normalize { dim, .. } => {
            if !x.dtype.is_floating_point() && !x.dtype.is_complex() {
                return Err(err(
                    ErrorKind::DType,
                    format!(
                        "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
                        type_name(x)
                    ),
                ));
            }
            if x.dtype.is_complex() || x.dtype.is_shell() {
                return Err(err(
                    ErrorKind::Unsupported,
                    format!(
                        "normalize of {} tensors: Kiln computes it on f16, bf16, f32 and f64",
                        x.dtype.torch_name()
                    ),
                ));
            }
            wrap_dim(*dim, x.rank())?;
        }
        _ => return Err(wrong_rule("norms")),
    }
    let mut operand_dtypes = vec![Some(x.dtype)];
    operand_dtypes.extend(args[1..].iter().map(|_| None));
    Ok(single(x.shape.clone(), x.dtype, operand_dtypes))
}

/// The floating-point dtypes Kiln's losses compute on.
fn loss_float(name: &str, d: DType) -> Result<()> {
    if matches!(d, DType::F16 | DType::BF16 | DType::F32 | DType::F64) {
        Ok(())
    } else {
        Err(err(
            ErrorKind::Unsupported,
            format!(
                "{name} of {} tensors: Kiln computes it on f16, bf16, f32 and f64",
                d.torch_name()
            ),
        ))
    }
}

/// A class-index loss's checks (`nll_loss`, `cross_entropy`): the
/// input `[C]`, `[N, C]` or `[N, C, d...]`, the target `[]`, `[N]` or
/// `[N, d...]` of int64 (or uint8), the weight `[C]` of the input's dtype.
fn check_class_targets(x: &TensorType, t: &TensorType, w: Option<&TensorType>) -> Result<()> {
    if x.rank() == 0 {
        return shape_error("Expected 1 or more dimensions (got 0)".into());
    }
    if !matches!(t.dtype, DType::I64 | DType::U8) {
        return dtype_error(format!(
            "expected target dtype to be Long or Byte, but got {}",
            type_name(t)
        ));
    }
    if x.rank() >= 2 && t.rank() >= 1 && x.shape[0] != t.shape[0] {
        return shape_error(format!(
            "Expected input batch_size ({}) to match target batch_size ({}).",
            x.shape[0], t.shape[0]
        ));
    }
    if x.rank() <= 2 {
        if t.rank() > 1 {
            return shape_error(
                "0D or 1D target tensor expected, multi-target not supported".into(),
            );
        }
        let no_batch = x.rank() == 1 && t.rank() == 0;
        if !no_batch && (t.rank() == 0 || x.shape[0] != t.shape[0]) {
            return shape_error(format!(
                "size mismatch (got input: {}, target: {})",
                format_shape(&x.shape),
                format_shape(&t.shape)
            ));
        }
    } else {
        let mut expected = vec![x.shape[0]];
        expected.extend_from_slice(&x.shape[2..]);
        if t.shape != expected {
            return shape_error(format!(
                "size mismatch (got input: {} , target: {}",
                format_shape(&x.shape),
                format_shape(&t.shape)
            ));
        }
    }
    let c = x.shape[if x.rank() == 1 { 0 } else { 1 }];
    if let Some(w) = w {
        if w.numel() != c {
            return shape_error(format!(
                "weight tensor should be defined either for all {c} classes or no classes but got weight tensor of shape: {}",
                format_shape(&w.shape)
            ));
        }
        if w.dtype != x.dtype {
            return dtype_error(format!(
                "expected scalar type {} but found {}",
                type_name(x),
                type_name(w)
            ));
        }
    }
    Ok(())
}

/// The losses (`mse_loss`, `l1_loss`, ..., `nll_loss`, `cross_entropy`),
/// `cosine_similarity` and `pairwise_distance`: PyTorch's shape and dtype
/// checks and result types (the loss per element for `reduction =
/// "none"`, else a 0-D result). Kiln computes them on floats.
pub fn losses(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let name = op.name();
    let tensors: Vec<&TensorType> = args.iter().filter_map(Arg::tensor).collect();
    let promoted = || -> Result<DType> {
        let operands: Vec<PromoOperand> = tensors
            .iter()
            .map(|t| PromoOperand::tensor(t.dtype, t.rank()))
            .collect();
        result_type(&operands, ctx.default_dtype)
    };
    let reduction = match op {
        Op::MseLoss { reduction }
        | Op::L1Loss { reduction }
        | Op::SmoothL1Loss { reduction, .. }
        | Op::HuberLoss { reduction, .. }
        | Op::BinaryCrossEntropy { reduction }
        | Op::BinaryCrossEntropyWithLogits { reduction }
        | Op::KlDiv { reduction, .. }
        | Op::SoftMarginLoss { reduction }
        | Op::MarginRankingLoss { reduction, .. }
        | Op::HingeEmbeddingLoss { reduction, .. }
        | Op::PoissonNllLoss { reduction, .. }
        | Op::NllLoss { reduction, .. }
        | Op::CrossEntropy { reduction, .. } => Some(*reduction),
        _ => None,
    };
    if reduction == Some(LossReduction::Batchmean) && !matches!(op, Op::KlDiv { .. }) {
        return Err(err(
            ErrorKind::Attribute,
            "batchmean is not a valid value for reduction",
        ));
    }
    let (shape, dtype) = match op {
        Op::MseLoss { .. }
        | Op::L1Loss { .. }
        | Op::SmoothL1Loss { .. }
        | Op::HuberLoss { .. }
        | Op::KlDiv { .. }
        | Op::SoftMarginLoss { .. }
        | Op::MarginRankingLoss { .. }
        | Op::HingeEmbeddingLoss { .. }
        | Op::PoissonNllLoss { .. } => {
            let d = promoted()?;
            if matches!(op, Op::MseLoss { .. }) && !d.is_floating_point() {
                return Err(crate::support::not_implemented("mse_cpu", d));
            }
            match op {
                Op::SmoothL1Loss { beta, .. } if beta.0 < 0.0 => {
                    return Err(err(
                        ErrorKind::Attribute,
                        "smooth_l1_loss does not support negative values for beta.",
                    ));
                }
                Op::HuberLoss { delta, .. } if delta.0 <= 0.0 => {
                    return Err(err(
                        ErrorKind::Attribute,
                        "huber_loss does not support non-positive values for delta.",
                    ));
                }
                _ => {}
            }
            loss_float(name, d)?;
            // huber, soft margin and hinge losses are written into a
            // tensor like the input: its dtype.
            let d = match op {
                Op::HuberLoss { .. }
                | Op::SoftMarginLoss { .. }
                | Op::HingeEmbeddingLoss { .. } => {
                    loss_float(name, x.dtype)?;
                    x.dtype
                }
                _ => d,
            };
            (broadcast_all(args)?, d)
        }
        Op::BinaryCrossEntropy { .. } => {
            let t = nth_tensor(args, 1)?;
            if t.shape != x.shape {
                return Err(err(
                    ErrorKind::Shape,
                    format!(
                        "Using a target size (torch.Size({})) that is different to the input size (torch.Size({})) is deprecated. Please ensure they have the same size.",
                        format_shape(&t.shape),
                        format_shape(&x.shape)
                    ),
                ));
            }
            if t.dtype != x.dtype {
                return dtype_error(format!(
                    "Found dtype {} but expected {}",
                    type_name(t),
                    type_name(x)
                ));
            }
            loss_float(name, x.dtype)?;
            if let Some(w) = args.get(2).and_then(Arg::tensor)
                && broadcast_shapes(&x.shape, &w.shape)? != x.shape
            {
                return shape_error(format!(
                    "the weight of shape {} does not broadcast to the input's {}",
                    format_shape(&w.shape),
                    format_shape(&x.shape)
                ));
            }
            (x.shape.clone(), promoted()?)
        }
        Op::BinaryCrossEntropyWithLogits { .. } => {
            let t = nth_tensor(args, 1)?;
            if t.shape != x.shape {
                return shape_error(format!(
                    "Target size (torch.Size({})) must be the same as input size (torch.Size({}))",
                    format_shape(&t.shape),
                    format_shape(&x.shape)
                ));
            }
            let d = promoted()?;
            loss_float(name, d)?;
            let shape = broadcast_all(args)?;
            if shape != x.shape {
                return shape_error(format!(
                    "the weights of binary_cross_entropy_with_logits do not broadcast to the input's {}",
                    format_shape(&x.shape)
                ));
            }
            (shape, d)
        }
        Op::CosineSimilarity { dim, .. } => {
            let d = promoted()?;
            if !d.is_floating_point() {
                return dtype_error(format!(
                    "expected common dtype to be floating point, yet common dtype is {}",
                    d.scalar_type_name()
                ));
            }
            loss_float(name, d)?;
            let mut shape = broadcast_all(args)?;
            let i = wrap_dim(*dim, shape.len())?;
            if !shape.is_empty() {
                shape.remove(i);
            }
            (shape, d)
        }
        Op::PairwiseDistance { keepdim, .. } => {
            // `x1 - x2 + eps` comes first: its refusals (two bools) too.
            infer(&Op::Binary { op: BinaryOp::Sub }, &args[..2], None, ctx)?;
            let d = promoted()?;
            loss_float(name, d)?;
            let mut shape = broadcast_all(args)?;
            if let Some(last) = shape.len().checked_sub(1) {
                if *keepdim {
                    shape[last] = 1;
                } else {
                    shape.remove(last);
                }
            }
            (shape, d)
        }
        Op::NllLoss { .. } => {
            let t = nth_tensor(args, 1)?;
            loss_float(name, x.dtype)?;
            check_class_targets(x, t, args.get(2).and_then(Arg::tensor))?;
            (t.shape.clone(), x.dtype)
        }
        Op::CrossEntropy {
            label_smoothing, ..
        } => {
            let t = nth_tensor(args, 1)?;
            if !(0.0..=1.0).contains(&label_smoothing.0) {
                return Err(err(
                    ErrorKind::Attribute,
                    format!(
                        "label_smoothing must be between 0.0 and 1.0. Got: {}",
                        label_smoothing.0
                    ),
                ));
            }
            let w = args.get(2).and_then(Arg::tensor);
            if t.shape == x.shape && t.dtype.is_floating_point() {
                // Class probabilities.
                let d = promoted()?;
                loss_float(name, d)?;
                if x.rank() == 0 {
                    return shape_error("Expected 1 or more dimensions (got 0)".into());
                }
                let c = x.shape[if x.rank() == 1 { 0 } else { 1 }];
                if let Some(w) = w
                    && w.numel() != c
                {
                    return shape_error(format!(
                        "weight tensor should be defined either for all {c} classes or no classes but got weight tensor of shape: {}",
                        format_shape(&w.shape)
                    ));
                }
                let mut shape = x.shape.clone();
                shape.remove(if x.rank() == 1 { 0 } else { 1 });
                (shape, d)
            } else {
                loss_float(name, x.dtype)?;
                check_class_targets(x, t, w)?;
                (t.shape.clone(), x.dtype)
            }
        }
        _ => return Err(wrong_rule("losses")),
    };
    let shape = match reduction {
        Some(LossReduction::None) | None => shape,
        Some(_) => vec![],
    };
    Ok(single(shape, dtype, vec![None; args.len()]))
}

/// `masked_fill`: the input and a bool mask broadcast together; the
/// input's dtype (the value converted to it).
pub fn masked_fill(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Op::MaskedFill { value } = op else {
        return Err(wrong_rule("masked_fill"));
    };
    let (x, mask) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    if mask.dtype != DType::Bool {
        return dtype_error(format!(
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype.info().cpp_type_name
        ));
    }
    if matches!(value, Scalar::Complex(..)) && !x.dtype.is_complex() {
        return Err(err(
            ErrorKind::Attribute,
            format!(
                "value cannot be converted to type {} without overflow",
                x.dtype.info().cpp_type_name
            ),
        ));
    }
    let shape = broadcast_shapes(&x.shape, &mask.shape)?;
    // The expansion is a `where`: its checks (its kernel's dtypes) apply.
    infer(
        &Op::Where,
        &[Arg::Tensor(mask), Arg::Scalar(*value), Arg::Tensor(x)],
        None,
        ctx,
    )?;
    Ok(single(shape, x.dtype, vec![None, None]))
}

/// `one_hot`: an int64 input gives int64 `[..., num_classes]`.
pub fn one_hot(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::OneHot { num_classes } = op else {
        return Err(wrong_rule("one_hot"));
    };
    let x = tensor(args)?;
    if x.dtype != DType::I64 {
        return dtype_error(
            "one_hot is only applicable to index tensor of type LongTensor.".into(),
        );
    }
    if *num_classes < 0 {
        return Err(err(
            ErrorKind::Unsupported,
            "one_hot with num_classes = -1 counts the classes from the values: Kiln needs num_classes",
        ));
    }
    let mut shape = x.shape.clone();
    shape.push(*num_classes);
    Ok(single(shape, DType::I64, vec![None]))
}

/// `searchsorted` (and `bucketize`, its operands the other way round, whose
/// boundaries must be 1-D): positions of `input`'s shape (a number gives
/// one position), int64 or int32, with PyTorch's checks in its order; the
/// sequence and the values are compared in their promoted dtype (a number
/// takes part as a wrapped scalar, as in PyTorch's Scalar overloads).
pub fn searchsorted(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let (out_int32, right, side, bd, input, sorter) = match op {
        Op::Searchsorted {
            out_int32,
            right,
            side,
        } => (
            *out_int32,
            *right,
            *side,
            nth_tensor(args, 0)?,
            args[1],
            args.get(2).and_then(Arg::tensor),
        ),
        Op::Bucketize { out_int32, right } => {
            let bd = nth_tensor(args, 1)?;
            if bd.rank() != 1 {
                return shape_error(format!(
                    "boundaries tensor must be 1 dimension, but got dim({})",
                    bd.rank()
                ));
            }
            (*out_int32, *right, None, bd, args[0], None)
        }
        _ => return Err(wrong_rule("searchsorted")),
    };
    let shout = |m: String| shape_error::<()>(format!("torch.searchsorted(): {m}"));
    if side == Some(crate::ops::SearchSide::Left) && right {
        return Err(err(
            ErrorKind::Attribute,
            "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True",
        ));
    }
    if let Some(s) = sorter {
        if s.shape != bd.shape {
            shout(format!(
                "boundary and sorter must have the same size, but got boundary tensor {}and got sorter tensor {}",
                format_shape(&bd.shape),
                format_shape(&s.shape)
            ))?;
        }
        if s.dtype != DType::I64 {
            return dtype_error(format!(
                "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {}",
                s.dtype.scalar_type_name()
            ));
        }
    }
    let values = input.shape();
    if values.is_empty() && bd.rank() != 1 {
        shout(format!(
            "input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim({}) and input value's dim(0) numel(1)",
            bd.rank()
        ))?;
    }
    if bd.rank() == 0 {
        shout("boundaries tensor should have positive dimension, but got 0 dimension".into())?;
    }
    let leading = |s: &[i64]| s[..s.len().saturating_sub(1)].to_vec();
    if bd.rank() != 1 && (bd.rank() != values.len() || leading(&bd.shape) != leading(values)) {
        shout(format!(
            "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor {} and input value tensor {}",
            format_shape(&bd.shape),
            format_shape(values)
        ))?;
    }
    let common = common_dtype(&[Arg::Tensor(bd), input], ctx)?;
    let dtype = if out_int32 { DType::I32 } else { DType::I64 };
    let mut operand_dtypes = vec![Some(common), Some(common)];
    if matches!(op, Op::Searchsorted { .. }) {
        operand_dtypes.push(None);
    }
    Ok(single(values.to_vec(), dtype, operand_dtypes))
}

/// `masked_scatter`: the input broadcast with the mask (PyTorch's
/// out-of-place form expands it first), of the input's dtype, which the
/// source must share; the mask must be bool. PyTorch's checks in its order.
pub fn masked_scatter(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (x, mask, source) = (
        nth_tensor(args, 0)?,
        nth_tensor(args, 1)?,
        nth_tensor(args, 2)?,
    );
    let shape = broadcast_shapes(&mask.shape, &x.shape)?;
    if x.dtype != source.dtype {
        return dtype_error(format!(
            "masked_scatter: expected self and source to have same dtypes but got{} and {}",
            x.dtype.scalar_type_name(),
            source.dtype.scalar_type_name()
        ));
    }
    if mask.dtype != DType::Bool {
        return dtype_error(format!(
            "masked_scatter_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype.scalar_type_name()
        ));
    }
    Ok(single(shape, x.dtype, vec![None, None, None]))
}

/// The shape ATen's `prelu` views the weight with: `[1, C, 1, ...]` for
/// one weight per channel of a 2-D or larger input, else 0-D (one weight,
/// or a 1-D input's); PyTorch's checks of the weight's size.
pub fn prelu_weight_shape(x: &[i64], weight: &TensorType) -> Result<Vec<i64>> {
    if weight.rank() > 1 {
        return shape_error(format!(
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {}",
            weight.rank()
        ));
    }
    let n = weight.numel();
    if n == 1 {
        return Ok(Vec::new());
    }
    if x.is_empty() {
        return shape_error("Not allow zero-dim input tensor.".into());
    }
    let channels = if x.len() > 1 { x[1] } else { 1 };
    if channels != n {
        return shape_error(format!(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} and channel size = {channels}."
        ));
    }
    let mut shape = vec![1; x.len()];
    shape[1] = n;
    Ok(shape)
}

/// `prelu`: the input's type; the weight (one, or one per channel) of the
/// input's dtype (PyTorch does not promote).
pub fn prelu(_: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (x, weight) = (nth_tensor(args, 0)?, nth_tensor(args, 1)?);
    prelu_weight_shape(&x.shape, weight)?;
    if x.dtype != weight.dtype {
        return dtype_error(format!(
            "prelu: Type promoting not supported. Got {} and {}",
            x.dtype.scalar_type_name(),
            weight.dtype.scalar_type_name()
        ));
    }
    Ok(single(x.shape.clone(), x.dtype, vec![None, None]))
}

/// The single-result op a native normalization computes its first result
/// with (`native_layer_norm` is `layer_norm`, ...), and the dims its
/// statistics are kept over (`None`: per channel, `batch_norm`'s).
pub fn native_norm_parts(op: &Op, x: &TensorType) -> Result<Op> {
    Ok(match op {
        Op::NativeLayerNorm {
            normalized_shape,
            eps,
        } => Op::LayerNorm {
            normalized_shape: normalized_shape.clone(),
            eps: *eps,
        },
        Op::NativeBatchNorm {
            training,
            momentum,
            eps,
        } => Op::BatchNorm {
            training: *training,
            momentum: *momentum,
            eps: *eps,
            cudnn_enabled: true,
        },
        Op::NativeGroupNorm {
            n,
            c,
            hxw,
            group,
            eps,
        } => {
            // ATen's native_group_norm checks, in its order.
            if x.numel() != n * c * hxw {
                return shape_error(
                    "Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)".into(),
                );
            }
            if *group <= 0 {
                return shape_error(format!(
                    "Expected num groups to be greater than 0, got {group}"
                ));
            }
            if c % group != 0 {
                return shape_error(format!(
                    "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={group}",
                    format_shape(&x.shape)
                ));
            }
            // PyTorch reads the input as [N, C, HxW] whatever its shape.
            if x.rank() < 2 || x.shape[0] != *n || x.shape[1] != *c {
                return Err(err(
                    ErrorKind::Unsupported,
                    format!(
                        "native_group_norm: N = {n} and C = {c} read an input of shape {} as another shape: Kiln needs its own",
                        format_shape(&x.shape)
                    ),
                ));
            }
            Op::GroupNorm {
                num_groups: *group,
                eps: *eps,
                cudnn_enabled: true,
            }
        }
        _ => return Err(wrong_rule("native_norms")),
    })
}

/// `native_layer_norm`, `native_batch_norm`, `native_group_norm`: the
/// normalization's checks and result, and its statistics' shapes
/// (`[*, 1, ...]`; `[C]`, or `[0]` in evaluation; `[N, group]`), of the
/// input's dtype or the parameters' f32 (PyTorch's mixed-dtype CPU path).
pub fn native_norms(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = tensor(args)?;
    let base = native_norm_parts(op, x)?;
    let out = infer(&base, args, None, ctx)?;
    let param = args[1..].iter().find_map(Arg::tensor);
    let stats_dtype = match param {
        Some(p) if p.dtype != x.dtype => p.dtype,
        _ => x.dtype,
    };
    let stats_shape = match op {
        Op::NativeLayerNorm {
            normalized_shape, ..
        } => {
            let axis = x.rank() - normalized_shape.len();
            let mut shape = x.shape[..axis].to_vec();
            shape.extend(std::iter::repeat_n(1, normalized_shape.len()));
            shape
        }
        Op::NativeBatchNorm { training: true, .. } => vec![x.shape[1]],
        Op::NativeBatchNorm { .. } => vec![0],
        Op::NativeGroupNorm { n, group, .. } => vec![*n, *group],
        _ => return Err(wrong_rule("native_norms")),
    };
    let stats = TensorType::new(stats_shape, stats_dtype);
    Ok(Inferred {
        results: vec![out.results[0].clone(), stats.clone(), stats],
        operand_dtypes: out.operand_dtypes,
        natural_dtype: x.dtype,
    })
}

/// PyTorch's legacy tensor type name (`torch.FloatTensor`), which
/// `checkScalarTypes` messages use.
fn legacy_type_name(d: DType) -> String {
    format!("torch.{}Tensor", d.scalar_type_name())
}

/// Whether `embedding_bag` in sum mode takes PyTorch's fast CPU path
/// (f32, f16 or bf16 weights, no padding index), whose `offset2bag` is
/// empty.
pub fn embedding_bag_fast_sum(weight: DType, mode: i64, padding_idx: Option<i64>) -> bool {
    mode == 0
        && matches!(weight, DType::F32 | DType::F16 | DType::BF16)
        && padding_idx.is_none_or(|p| p < 0)
}

/// `embedding_bag`: `[bags, dim]` of the weight's dtype, and ATen's
/// bookkeeping results (`offset2bag`, `bag_size`, `max_indices`) of the
/// indices' dtype (int32 when the indices and offsets both are), with the
/// shapes PyTorch's CPU kernel gives them; its checks in its order.
pub fn embedding_bag(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::EmbeddingBag {
        mode,
        include_last_offset,
        padding_idx,
        ..
    } = op
    else {
        return Err(wrong_rule("embedding_bag"));
    };
    let (weight, indices, offsets) = (
        nth_tensor(args, 0)?,
        nth_tensor(args, 1)?,
        nth_tensor(args, 2)?,
    );
    let psw = args.get(3).and_then(Arg::tensor);
    let checked = |what: &str, t: &TensorType, allowed: &str| -> Result<()> {
        dtype_error(format!(
            "Expected tensor for argument #1 '{what}' to have one of the following scalar types: {allowed}; but got {} instead (while checking arguments for embedding_bag)",
            legacy_type_name(t.dtype)
        ))
    };
    for t in [indices, offsets] {
        if !matches!(t.dtype, DType::I32 | DType::I64) {
            checked("indices", t, "Long, Int")?;
        }
    }
    if !matches!(
        weight.dtype,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64
    ) {
        checked("weight", weight, "Half, BFloat16, Float, Double")?;
    }
    if !(0..=2).contains(mode) {
        return Err(err(
            ErrorKind::Attribute,
            "`mode` must be sum, mean, or max.",
        ));
    }
    if let Some(p) = psw {
        if *mode != 0 {
            return Err(err(
                ErrorKind::Attribute,
                "embedding_bag: per_sample_weights only supported with mode='sum'",
            ));
        }
        if p.numel() != indices.numel() {
            return shape_error(
                "Expected per_sample_weights.value().numel() == indices.numel() to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)".into(),
            );
        }
        if p.dtype != weight.dtype {
            return dtype_error(format!(
                "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 'per_sample_weights'; but type {} does not equal {} (while checking arguments for embedding_bag)",
                legacy_type_name(weight.dtype),
                legacy_type_name(p.dtype)
            ));
        }
    }
    if weight.rank() != 2 {
        return shape_error(format!(
            "weight has to be a 2D Tensor, but got Tensor of dimension {}",
            weight.rank()
        ));
    }
    if offsets.rank() != 1 {
        return shape_error(format!(
            "offsets has to be a 1D Tensor, but got Tensor of dimension {}",
            offsets.rank()
        ));
    }
    if indices.rank() != 1 {
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "embedding_bag of {}-D indices: Kiln takes them flattened, with offsets (as F.embedding_bag passes 2-D input)",
                indices.rank()
            ),
        ));
    }
    let n_offsets = offsets.shape[0];
    if *include_last_offset && n_offsets < 1 {
        return shape_error("include_last_offset: number of offset should be at least 1".into());
    }
    let bags = n_offsets - i64::from(*include_last_offset);
    let index_dtype = if indices.dtype == DType::I32 && offsets.dtype == DType::I32 {
        DType::I32
    } else {
        DType::I64
    };
    let dim = weight.shape[1];
    let (offset2bag, bag_size, max_indices) = match mode {
        0 => {
            let o2b = if embedding_bag_fast_sum(weight.dtype, *mode, *padding_idx) {
                0
            } else {
                indices.numel()
            };
            (vec![o2b], vec![n_offsets], vec![n_offsets])
        }
        1 => (vec![indices.numel()], vec![bags], vec![bags]),
        _ => (vec![indices.numel()], vec![bags], vec![bags, dim]),
    };
    Ok(Inferred {
        results: vec![
            TensorType::new(vec![bags, dim], weight.dtype),
            TensorType::new(offset2bag, index_dtype),
            TensorType::new(bag_size, index_dtype),
            TensorType::new(max_indices, index_dtype),
        ],
        operand_dtypes: vec![None; args.len()],
        natural_dtype: weight.dtype,
    })
}
