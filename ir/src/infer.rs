//! Type inference: the result type of every op, and the dtype each operand
//! is computed in, by PyTorch's rules.
//!
//! For each op the order of checks is PyTorch's, so that a program PyTorch
//! rejects is rejected here with the same message: argument checks, then
//! type promotion ([`crate::promotion`]), then the `out_dtype` casting rule,
//! then (on devices with kernels) operand conversions and the kernel's dtype
//! set ([`crate::support`]). Layouts are not inferred here; the layout pass
//! assigns them.

use crate::device::{Device, Placement, common_device};
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::op::{ArgReduceOp, BinaryOp, Bound, Op, ReduceOp, UnaryOp};
use crate::promotion::{DefaultDType, Operand as PromoOperand, check_can_cast, result_type};
use crate::scalar::Scalar;
use crate::support::{self, Kernel, check_copy};
use crate::types::TensorType;
use crate::view::{Geometry, broadcast_shapes, format_shape, wrap_dim};

/// One operand as inference sees it.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Tensor(&'a TensorType),
    Scalar(Scalar),
}

impl Arg<'_> {
    fn promo(&self) -> PromoOperand {
        match self {
            Arg::Tensor(t) => PromoOperand::tensor(t.dtype, t.rank()),
            Arg::Scalar(s) => PromoOperand::Scalar(s.kind()),
        }
    }

    fn tensor(&self) -> Option<&TensorType> {
        match self {
            Arg::Tensor(t) => Some(t),
            Arg::Scalar(_) => None,
        }
    }

    /// The dtype this operand holds (a scalar's is its promotion dtype).
    fn dtype(&self, default: DefaultDType) -> DType {
        match self {
            Arg::Tensor(t) => t.dtype,
            Arg::Scalar(s) => s.promotion_dtype(default),
        }
    }

    fn shape(&self) -> &[i64] {
        match self {
            Arg::Tensor(t) => &t.shape,
            Arg::Scalar(_) => &[],
        }
    }
}

/// What inference settles for one instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Inferred {
    /// The result type (layout unspecified).
    pub ty: TensorType,
    /// The dtype each operand must be converted to before the op computes
    /// (`None`: used as is). The promotion pass inserts these casts.
    pub operand_dtypes: Vec<Option<DType>>,
    /// The dtype the op produces before `out_dtype` (equal to `ty.dtype`
    /// when there is no `out_dtype`).
    pub natural_dtype: DType,
}

/// Settings inference depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InferCtx {
    pub default_dtype: DefaultDType,
}

fn err(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error::new(kind, message)
}

/// Infers the result of `op` applied to `args`, written to `out_dtype` when given.
pub fn infer(
    op: &Op,
    args: &[Arg<'_>],
    out_dtype: Option<DType>,
    ctx: &InferCtx,
) -> Result<Inferred> {
    check_arity(op, args)?;
    let device = result_device(op, args)?;
    let kernels = has_kernels(device);
    let mut inf = match op {
        Op::Unary(u) => unary(*u, args, ctx)?,
        Op::Binary(b) => binary(*b, args, ctx)?,
        Op::Where => where_(args, ctx)?,
        Op::Clamp { min, max } => clamp(*min, *max, args, ctx)?,
        Op::Cast { dtype } => same_shape(args[0], *dtype, vec![None]),
        Op::Reduce {
            op,
            dims,
            keepdim,
            dtype,
        } => reduce(*op, dims.as_deref(), *keepdim, *dtype, args)?,
        Op::ArgReduce { op, dim, keepdim } => arg_reduce(*op, *dim, *keepdim, args)?,
        Op::Softmax { dim, dtype, .. } => {
            let x = tensor(args[0]);
            wrap_dim(*dim, x.rank())?;
            let d = dtype.unwrap_or(x.dtype);
            same_shape(args[0], d, vec![Some(d)])
        }
        Op::LayerNorm {
            normalized_shape, ..
        } => layer_norm(normalized_shape, args)?,
        Op::Cat { dim } => cat(*dim, args)?,
        Op::Matmul => matmul(args)?,
        Op::Full {
            shape,
            value,
            dtype,
            ..
        } => {
            check_shape(shape)?;
            let d = dtype.unwrap_or_else(|| value.promotion_dtype(ctx.default_dtype));
            new_value(shape.clone(), d)
        }
        Op::Arange {
            start,
            end,
            step,
            dtype,
            ..
        } => arange(*start, *end, *step, *dtype, ctx)?,
        Op::To { dtype, .. } => {
            let x = tensor(args[0]);
            same_shape(args[0], dtype.unwrap_or(x.dtype), vec![None])
        }
        Op::Contiguous { memory_format } => {
            let x = tensor(args[0]);
            memory_format.check_rank(x.rank())?;
            same_shape(args[0], x.dtype, vec![None])
        }
        Op::Clone {
            memory_format,
            strides,
        } => {
            let x = tensor(args[0]);
            memory_format.check_rank(x.rank())?;
            if let Some(st) = strides {
                check_clone_strides(&x.shape, st, *memory_format)?;
            }
            same_shape(args[0], x.dtype, vec![None])
        }
        view_op => {
            let x = tensor(args[0]);
            let shape = view_shape(view_op, &x.shape)?;
            Inferred {
                ty: TensorType::new(shape, x.dtype),
                operand_dtypes: vec![None],
                natural_dtype: x.dtype,
            }
        }
    };
    if let Op::To { memory_format, .. } = op {
        memory_format.check_rank(inf.ty.rank())?;
    }
    inf.natural_dtype = inf.ty.dtype;
    if let Some(out) = out_dtype {
        check_can_cast(inf.ty.dtype, out)?;
    }
    if kernels {
        check_kernels(op, args, &inf, ctx)?;
        if let Some(out) = out_dtype {
            check_copy(inf.ty.dtype, out)?;
        }
    }
    if let Some(out) = out_dtype {
        inf.ty.dtype = out;
    }
    inf.ty.device = device;
    Ok(inf)
}

fn tensor<'a>(arg: Arg<'a>) -> &'a TensorType {
    match arg {
        Arg::Tensor(t) => t,
        Arg::Scalar(_) => unreachable!("check_arity guarantees a tensor here"),
    }
}

fn has_kernels(device: Device) -> bool {
    !device.is_meta()
}

fn same_shape(x: Arg<'_>, dtype: DType, operand_dtypes: Vec<Option<DType>>) -> Inferred {
    Inferred {
        ty: TensorType::new(x.shape().to_vec(), dtype),
        operand_dtypes,
        natural_dtype: dtype,
    }
}

fn new_value(shape: Vec<i64>, dtype: DType) -> Inferred {
    Inferred {
        ty: TensorType::new(shape, dtype),
        operand_dtypes: vec![],
        natural_dtype: dtype,
    }
}

fn check_shape(shape: &[i64]) -> Result<()> {
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

/// How many operands each op takes, and which must be tensors.
fn check_arity(op: &Op, args: &[Arg<'_>]) -> Result<()> {
    let name = op.name();
    let expect = |n: usize| -> Result<()> {
        if args.len() == n {
            Ok(())
        } else {
            Err(err(
                ErrorKind::Arity,
                format!(
                    "{name} takes {n} operand{}, got {}",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
            ))
        }
    };
    let tensor_at = |i: usize, what: &str| -> Result<()> {
        match args.get(i) {
            Some(Arg::Tensor(_)) => Ok(()),
            Some(Arg::Scalar(s)) => Err(err(
                ErrorKind::Arity,
                format!(
                    "{name}: {what} (operand {}) must be a tensor, not the scalar {s}",
                    i + 1
                ),
            )),
            None => Err(err(
                ErrorKind::Arity,
                format!("{name}: missing operand {}", i + 1),
            )),
        }
    };
    match op {
        Op::Full { .. } | Op::Arange { .. } => expect(0),
        Op::Binary(b) => {
            expect(2)?;
            if matches!(b, BinaryOp::Maximum | BinaryOp::Minimum) || b.is_logical() {
                tensor_at(0, "input")?;
                tensor_at(1, "other")
            } else if b.is_comparison() {
                tensor_at(0, "input")
            } else if args.iter().all(|a| matches!(a, Arg::Scalar(_))) {
                Err(err(
                    ErrorKind::Arity,
                    format!("{name} needs at least one tensor operand"),
                ))
            } else {
                Ok(())
            }
        }
        Op::Where => {
            expect(3)?;
            tensor_at(0, "condition")
        }
        Op::Clamp { min, max } => {
            let tensors = [min, max]
                .iter()
                .filter(|b| matches!(b, Bound::Tensor))
                .count();
            expect(1 + tensors)?;
            (0..args.len())
                .try_for_each(|i| tensor_at(i, if i == 0 { "input" } else { "bound" }))?;
            if matches!((min, max), (Bound::None, Bound::None)) {
                return Err(err(
                    ErrorKind::Attribute,
                    "torch.clamp: At least one of 'min' or 'max' must not be None",
                ));
            }
            Ok(())
        }
        Op::LayerNorm { weight, bias, .. } => {
            expect(1 + *weight as usize + *bias as usize)?;
            (0..args.len()).try_for_each(|i| tensor_at(i, "operand"))
        }
        Op::Cat { .. } => {
            if args.is_empty() {
                return Err(err(
                    ErrorKind::Arity,
                    "torch.cat(): expected a non-empty list of Tensors",
                ));
            }
            (0..args.len()).try_for_each(|i| tensor_at(i, "operand"))
        }
        Op::Matmul => {
            expect(2)?;
            tensor_at(0, "input")?;
            tensor_at(1, "other")
        }
        _ => {
            expect(1)?;
            tensor_at(0, "input")
        }
    }
}

/// The device an op's result lives on.
fn result_device(op: &Op, args: &[Arg<'_>]) -> Result<Device> {
    match op {
        Op::Full { device, .. } | Op::Arange { device, .. } => {
            Ok(device.unwrap_or(Device::CPU).for_tensor())
        }
        Op::To {
            device: Some(d), ..
        } => {
            common_device(&placements(args))?;
            Ok(d.for_tensor())
        }
        _ => common_device(&placements(args)),
    }
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
    let operands: Vec<PromoOperand> = args.iter().map(Arg::promo).collect();
    result_type(&operands, ctx.default_dtype)
}

fn unary(u: UnaryOp, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = tensor(args[0]);
    let d = x.dtype;
    let complex = d.is_complex();
    let semantic = match u {
        UnaryOp::Neg if d.is_bool() => Some(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
        ),
        UnaryOp::Relu if complex => Some("clamp is not supported for complex types"),
        UnaryOp::Relu if d.is_bool() => Some("Boolean inputs not supported for relu"),
        UnaryOp::Floor if complex => Some("floor is not supported for complex inputs"),
        UnaryOp::Ceil if complex => Some("ceil is not supported for complex inputs"),
        UnaryOp::Trunc if complex => Some("trunc is not supported for complex inputs"),
        UnaryOp::Sign if complex => Some(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.",
        ),
        _ => None,
    };
    if let Some(message) = semantic {
        return Err(err(ErrorKind::DType, message));
    }
    let compute = if u.promotes_int_to_float() && (d.is_integral() || d.is_bool()) {
        ctx.default_dtype.dtype()
    } else {
        d
    };
    let result = if u.is_predicate() {
        DType::Bool
    } else if u == UnaryOp::Abs {
        compute.to_real()
    } else {
        compute
    };
    Ok(same_shape(args[0], result, vec![Some(compute)]))
}

fn binary(b: BinaryOp, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let is_bool = |a: &Arg| match a {
        Arg::Tensor(t) => t.dtype.is_bool(),
        Arg::Scalar(s) => s.is_bool(),
    };
    if b == BinaryOp::Sub {
        match (is_bool(&args[0]), is_bool(&args[1])) {
            (true, true) => {
                return Err(err(
                    ErrorKind::DType,
                    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
                ));
            }
            (true, false) | (false, true) => {
                return Err(err(
                    ErrorKind::DType,
                    "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
                ));
            }
            _ => {}
        }
    }
    if matches!(b, BinaryOp::Maximum | BinaryOp::Minimum)
        && args
            .iter()
            .any(|a| a.tensor().is_some_and(|t| t.dtype.is_complex()))
    {
        return Err(err(
            ErrorKind::DType,
            format!("{} not implemented for complex tensors.", b.name()),
        ));
    }
    let shape = broadcast_all(args)?;
    let mut compute = common_dtype(args, ctx)?;
    if b == BinaryOp::Div && (compute.is_integral() || compute.is_bool()) {
        compute = ctx.default_dtype.dtype();
    }
    let scalar_exponent = matches!(args[1], Arg::Scalar(_));
    let result = if b.is_predicate() {
        DType::Bool
    } else if b == BinaryOp::Pow && compute.is_bool() && !scalar_exponent {
        // PyTorch's type inference computes bool ** bool tensors in int64
        // (its CPU kernel then refuses bool).
        DType::I64
    } else {
        compute
    };
    Ok(Inferred {
        ty: TensorType::new(shape, result),
        operand_dtypes: vec![Some(compute); 2],
        natural_dtype: result,
    })
}

fn where_(args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let cond = tensor(args[0]);
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
    Ok(Inferred {
        ty: TensorType::new(shape, compute),
        operand_dtypes: vec![Some(DType::Bool), Some(compute), Some(compute)],
        natural_dtype: compute,
    })
}

fn clamp(min: Bound, max: Bound, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let x = tensor(args[0]);
    let scalars: Vec<Scalar> = [min, max]
        .into_iter()
        .filter_map(|b| match b {
            Bound::Scalar(s) => Some(s),
            _ => None,
        })
        .collect();
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
    let mut operands: Vec<Arg> = args.to_vec();
    operands.extend(scalars.iter().map(|s| Arg::Scalar(*s)));
    let compute = common_dtype(&operands, ctx)?;
    if compute.is_complex() {
        let tensor_bounds = args.len() > 1;
        if !tensor_bounds {
            return Err(err(
                ErrorKind::DType,
                "clamp is not supported for complex types",
            ));
        }
    }
    for (name, bound) in [("min", min), ("max", max)] {
        if let Bound::Scalar(s) = bound {
            check_clamp_bound(name, s, compute)?;
        }
    }
    let shape = broadcast_all(args)?;
    Ok(Inferred {
        ty: TensorType::new(shape, compute),
        operand_dtypes: vec![Some(compute); args.len()],
        natural_dtype: compute,
    })
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
fn reduced_dims(dims: Option<&[i64]>, rank: usize) -> Result<Vec<bool>> {
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

fn reduce(
    op: ReduceOp,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
    args: &[Arg<'_>],
) -> Result<Inferred> {
    let x = tensor(args[0]);
    if op == ReduceOp::Prod && dims.is_some_and(|d| d.len() > 1) {
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
        (ReduceOp::Mean, Some(d)) if !(d.is_floating_point() || d.is_complex()) => {
            return Err(err(
                ErrorKind::DType,
                format!(
                    "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: {}",
                    d.scalar_type_name()
                ),
            ));
        }
        (ReduceOp::Mean, None) if !(x.dtype.is_floating_point() || x.dtype.is_complex()) => {
            return Err(err(
                ErrorKind::DType,
                format!(
                    "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                    x.dtype.scalar_type_name()
                ),
            ));
        }
        (ReduceOp::Amax | ReduceOp::Amin, Some(_)) => {
            return Err(err(
                ErrorKind::Attribute,
                format!("{}: no dtype attribute (as torch.{0})", op.name()),
            ));
        }
        (_, Some(d)) => d,
        (ReduceOp::Sum | ReduceOp::Prod, None) if x.dtype.is_integral() || x.dtype.is_bool() => {
            DType::I64
        }
        (_, None) => x.dtype,
    };
    Ok(Inferred {
        ty: TensorType::new(reduced_shape(&x.shape, &reduced, keepdim), compute),
        operand_dtypes: vec![Some(compute)],
        natural_dtype: compute,
    })
}

fn arg_reduce(
    op: ArgReduceOp,
    dim: Option<i64>,
    keepdim: bool,
    args: &[Arg<'_>],
) -> Result<Inferred> {
    let x = tensor(args[0]);
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
            if keepdim { vec![1; x.rank()] } else { vec![] }
        }
        Some(d) => {
            let w = wrap_dim(d, x.rank())?;
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
            reduced_shape(&x.shape, &reduced, keepdim)
        }
    };
    Ok(Inferred {
        ty: TensorType::new(shape, DType::I64),
        operand_dtypes: vec![Some(x.dtype)],
        natural_dtype: DType::I64,
    })
}

fn layer_norm(normalized_shape: &[i64], args: &[Arg<'_>]) -> Result<Inferred> {
    let x = tensor(args[0]);
    let n = normalized_shape.len();
    if n == 0 || n > x.rank() || x.shape[x.rank() - n..] != *normalized_shape {
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
    for (param, name) in args[1..].iter().map(|a| tensor(*a)).zip(["weight", "bias"]) {
        if param.shape != normalized_shape {
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
    if let Some(p) = args.get(1).map(|a| tensor(*a).dtype) {
        if args[1..].iter().any(|a| tensor(*a).dtype != p) || p != x.dtype {
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
    Ok(Inferred {
        ty: TensorType::new(x.shape.clone(), x.dtype),
        operand_dtypes,
        natural_dtype: x.dtype,
    })
}

fn cat(dim: i64, args: &[Arg<'_>]) -> Result<Inferred> {
    let tensors: Vec<&TensorType> = args.iter().map(|a| tensor(*a)).collect();
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
    Ok(Inferred {
        ty: TensorType::new(shape, dtype),
        operand_dtypes: vec![Some(dtype); args.len()],
        natural_dtype: dtype,
    })
}

fn matmul(args: &[Arg<'_>]) -> Result<Inferred> {
    let (a, b) = (tensor(args[0]), tensor(args[1]));
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
    Ok(Inferred {
        ty: TensorType::new(shape, a.dtype),
        operand_dtypes: vec![None, None],
        natural_dtype: a.dtype,
    })
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

fn arange(
    start: Scalar,
    end: Scalar,
    step: Scalar,
    dtype: Option<DType>,
    ctx: &InferCtx,
) -> Result<Inferred> {
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
    Ok(new_value(vec![n], d))
}

/// The result shape of a view op (strides are the layout pass's business).
pub fn view_shape(op: &Op, shape: &[i64]) -> Result<Vec<i64>> {
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
        Op::Flatten { start_dim, end_dim } => {
            g.flatten(*start_dim, *end_dim)?.geometry().shape.clone()
        }
        other => unreachable!("{} is not a view op", other.name()),
    };
    Ok(out)
}

/// The device-kernel checks: operand conversions, then the kernel's dtypes.
fn check_kernels(op: &Op, args: &[Arg<'_>], inf: &Inferred, ctx: &InferCtx) -> Result<()> {
    let has_scalar = args.iter().any(|a| matches!(a, Arg::Scalar(_)));
    if matches!(op, Op::Where) && has_scalar && inf.ty.dtype == DType::F4E2M1FNX2 {
        // where fills a scalar branch into a tensor first; float4 has no fill.
        return Err(support::not_implemented("fill_out", DType::F4E2M1FNX2));
    }
    // pow(Tensor, Scalar) takes the exponent as a number, not a tensor.
    let scalar_exponent =
        matches!(op, Op::Binary(BinaryOp::Pow)) && matches!(args.get(1), Some(Arg::Scalar(_)));
    for (i, (arg, target)) in args.iter().zip(&inf.operand_dtypes).enumerate() {
        if i == 1 && scalar_exponent {
            continue;
        }
        if let Some(t) = target {
            check_copy(arg.dtype(ctx.default_dtype), *t)?;
        }
    }
    let compute = inf
        .operand_dtypes
        .first()
        .copied()
        .flatten()
        .unwrap_or(inf.ty.dtype);
    let kernel: Option<Kernel> = match op {
        Op::Unary(u) => Some(unary_kernel(*u, compute)),
        // x ** 1 is a copy and x ** 0 a fill: PyTorch runs no pow kernel.
        Op::Binary(BinaryOp::Pow) if matches!(args[1], Arg::Scalar(s) if s.to_complex() == (1.0, 0.0) || s.to_complex() == (0.0, 0.0)) => {
            None
        }
        Op::Binary(b) => Some(binary_kernel(*b, compute, has_scalar)),
        Op::Where => None,
        Op::Clamp { min, max } => Some(match (min, max) {
            (Bound::Tensor, Bound::None) => support::binary::MAXIMUM,
            (Bound::None, Bound::Tensor) => support::binary::MINIMUM,
            (Bound::Tensor, Bound::Tensor) => support::clamp::TENSOR_BOTH,
            (Bound::Scalar(_), Bound::None) => support::clamp::SCALAR_MIN,
            (Bound::None, Bound::Scalar(_)) => support::clamp::SCALAR_MAX,
            (Bound::Scalar(_), Bound::Scalar(_)) => support::clamp::SCALAR_BOTH,
            // One scalar and one tensor bound: PyTorch makes both tensors.
            _ => support::clamp::TENSOR_BOTH,
        }),
        Op::Cast { dtype } => {
            check_copy(tensor(args[0]).dtype, *dtype)?;
            None
        }
        Op::To { dtype: Some(d), .. } => {
            check_copy(tensor(args[0]).dtype, *d)?;
            None
        }
        Op::Reduce { op, .. } => Some(match op {
            ReduceOp::Sum | ReduceOp::Mean => support::reduce::SUM,
            ReduceOp::Prod => support::reduce::PROD,
            ReduceOp::Amax => support::reduce::AMAX,
            ReduceOp::Amin => support::reduce::AMIN,
        }),
        Op::ArgReduce { op, .. } => {
            let x = tensor(args[0]);
            if x.dtype.is_bool() {
                return Err(err(
                    ErrorKind::DType,
                    format!("{}(): does not support bool input", op.name()),
                ));
            }
            Some(match op {
                ArgReduceOp::Argmax => support::reduce::ARGMAX,
                ArgReduceOp::Argmin => support::reduce::ARGMIN,
            })
        }
        Op::Softmax { dim, log, .. } => {
            let rank = tensor(args[0]).rank();
            let last = rank == 0 || wrap_dim(*dim, rank)? == rank - 1;
            Some(support::reduce::softmax(*log, last))
        }
        Op::LayerNorm { .. } => Some(support::reduce::LAYER_NORM),
        Op::Matmul => Some(support::reduce::MATMUL),
        Op::Full { value, .. } => {
            let is_zeros = matches!(value, Scalar::Float(v) if v.to_bits() == 0);
            (!is_zeros).then_some(support::create::FILL)
        }
        Op::Arange { .. } => Some(support::create::ARANGE),
        _ => None,
    };
    match kernel {
        Some(k) => k.check(compute_for_kernel(op, compute, inf)),
        None => Ok(()),
    }
}

/// The dtype a kernel dispatches on: the computation dtype, except where
/// PyTorch dispatches on the input (argmax) or the result (creation).
fn compute_for_kernel(op: &Op, compute: DType, inf: &Inferred) -> DType {
    match op {
        Op::Full { .. } | Op::Arange { .. } => inf.ty.dtype,
        _ => compute,
    }
}

fn unary_kernel(u: UnaryOp, dtype: DType) -> Kernel {
    use support::unary as k;
    match u {
        UnaryOp::Neg => k::NEG,
        UnaryOp::Abs => k::ABS,
        UnaryOp::Exp => k::transcendental("exp_vml_cpu"),
        UnaryOp::Log => k::transcendental("log_vml_cpu"),
        UnaryOp::Log2 => k::transcendental("log2_vml_cpu"),
        UnaryOp::Sqrt => k::transcendental("sqrt_vml_cpu"),
        UnaryOp::Rsqrt => k::transcendental("rsqrt_cpu"),
        UnaryOp::Sin => k::transcendental("sin_vml_cpu"),
        UnaryOp::Cos => k::transcendental("cos_vml_cpu"),
        UnaryOp::Tanh => k::transcendental("tanh_vml_cpu"),
        UnaryOp::Reciprocal => k::transcendental("reciprocal_cpu"),
        UnaryOp::Sigmoid => k::sigmoid(dtype),
        UnaryOp::Relu => k::RELU,
        UnaryOp::Gelu | UnaryOp::GeluTanh => k::GELU,
        UnaryOp::Silu => k::SILU,
        UnaryOp::Erf => k::ERF,
        UnaryOp::Floor => k::rounding("floor_vml_cpu"),
        UnaryOp::Ceil => k::rounding("ceil_vml_cpu"),
        UnaryOp::Trunc => k::rounding("trunc_vml_cpu"),
        UnaryOp::Round => k::ROUND,
        UnaryOp::Sign => k::SIGN,
        UnaryOp::LogicalNot => k::LOGICAL_NOT,
        UnaryOp::BitwiseNot => k::BITWISE_NOT,
        UnaryOp::Isnan => k::ISNAN,
    }
}

fn binary_kernel(b: BinaryOp, dtype: DType, has_scalar: bool) -> Kernel {
    use support::binary as k;
    match b {
        BinaryOp::Add | BinaryOp::Sub => k::ADD,
        BinaryOp::Mul => k::mul(dtype, has_scalar),
        BinaryOp::Div => k::div(None, dtype, has_scalar),
        BinaryOp::DivTrunc => k::div(Some("trunc"), dtype, has_scalar),
        BinaryOp::DivFloor => k::div(Some("floor"), dtype, has_scalar),
        BinaryOp::Remainder => k::REMAINDER,
        BinaryOp::Pow => k::POW,
        BinaryOp::Maximum => k::MAXIMUM,
        BinaryOp::Minimum => k::MINIMUM,
        BinaryOp::Eq | BinaryOp::Ne => k::EQUALITY,
        BinaryOp::Lt => k::ordering("lt_cpu"),
        BinaryOp::Le => k::ordering("le_cpu"),
        BinaryOp::Gt => k::ordering("gt_cpu"),
        BinaryOp::Ge => k::ordering("ge_cpu"),
        BinaryOp::LogicalAnd => k::logical("logical_and_cpu"),
        BinaryOp::LogicalOr => k::logical("logical_or_cpu"),
        BinaryOp::LogicalXor => k::logical("logical_xor_cpu"),
        BinaryOp::BitwiseAnd => k::bitwise("bitwise_and_cpu"),
        BinaryOp::BitwiseOr => k::bitwise("bitwise_or_cpu"),
        BinaryOp::BitwiseXor => k::bitwise("bitwise_xor_cpu"),
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
