//! The expansions of composite ops: each composite is defined here by the
//! primitives it computes, in the dtypes PyTorch's CPU kernels compute in.
//!
//! f16 and bf16 inputs are computed in f32 ("opmath") and rounded once at
//! the end, as PyTorch does for softmax, layer_norm, gelu, silu, sigmoid and
//! mean. The decomposition pass applies these expansions, and the reference
//! interpreter runs composites through them, so no backend has code for a
//! composite op. Because the interpreter shares them, they are checked
//! independently: against the values PyTorch computes
//! (`tests/data/torch_values.json`) and against textbook formulas in f64
//! (`tests/interp_values.rs`).

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{FuncBuilder, Operand, ValueId};
use crate::layout::MemoryFormat;
use crate::scalar::{F64, Scalar};
use crate::types::TensorType;

use super::{BinaryOp, GeluApproximate, Op, ReduceOp, UnaryOp};

/// Appends ops to a function being built, expanding composite ops as they
/// are emitted (an expansion may use other composites).
pub struct Emitter<'b> {
    b: &'b mut FuncBuilder,
}

impl<'b> Emitter<'b> {
    /// An emitter appending to `b`.
    pub fn new(b: &'b mut FuncBuilder) -> Emitter<'b> {
        Emitter { b }
    }

    /// The type of a value built so far.
    pub fn ty(&self, v: ValueId) -> &TensorType {
        self.b.ty(v)
    }

    /// Appends `op` (expanded, if composite) and returns its results.
    pub fn push_all(&mut self, op: Op, operands: Vec<Operand>) -> Result<Vec<ValueId>> {
        match expand(self, &op, &operands)? {
            Some(vs) => Ok(vs),
            None => self.b.push_multi(op, operands, None),
        }
    }

    /// Appends a single-result `op` (expanded, if composite).
    pub fn push(&mut self, op: Op, operands: Vec<Operand>) -> Result<ValueId> {
        let name = op.name();
        let mut results = self.push_all(op, operands)?;
        match (results.pop(), results.is_empty()) {
            (Some(v), true) => Ok(v),
            _ => Err(Error::new(
                ErrorKind::Arity,
                format!("{name} does not have exactly one result"),
            )),
        }
    }

    /// A primitive unary op.
    pub fn unary(&mut self, op: UnaryOp, x: ValueId) -> Result<ValueId> {
        self.push(Op::Unary { op }, vec![Operand::Value(x)])
    }

    /// A primitive binary op.
    pub fn binary(
        &mut self,
        op: BinaryOp,
        x: impl Into<Operand>,
        y: impl Into<Operand>,
    ) -> Result<ValueId> {
        self.push(Op::Binary { op }, vec![x.into(), y.into()])
    }

    /// `x.to(dtype)`; nothing when `x` has it already.
    pub fn cast(&mut self, x: ValueId, dtype: DType) -> Result<ValueId> {
        if self.ty(x).dtype == dtype {
            Ok(x)
        } else {
            self.push(Op::Cast { dtype }, vec![Operand::Value(x)])
        }
    }

    /// A primitive reduction over `dims`.
    pub fn reduce(
        &mut self,
        op: ReduceOp,
        x: ValueId,
        dims: Vec<i64>,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<ValueId> {
        self.push(
            Op::Reduce {
                op,
                dims: Some(dims),
                keepdim,
                dtype,
            },
            vec![Operand::Value(x)],
        )
    }
}

/// Expands `op` if it is composite: the values standing for its results,
/// or `None` (primitive ops, and composites on dtypes their expansion does
/// not compute, which stay as they are).
pub fn expand(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    match op.def().rules.expand {
        Some(f) => f(e, op, operands),
        None => Ok(None),
    }
}

fn f(v: f64) -> Operand {
    Operand::Scalar(Scalar::Float(v))
}

fn one(v: ValueId) -> Result<Option<Vec<ValueId>>> {
    Ok(Some(vec![v]))
}

/// The first operand, a tensor (inference checked the slots).
fn input(operands: &[Operand]) -> Result<ValueId> {
    match operands.first() {
        Some(Operand::Value(v)) => Ok(*v),
        _ => Err(Error::new(ErrorKind::Arity, "missing input operand")),
    }
}

/// Floats Kiln computes on (not the float8/float4 storage formats).
fn computable_float(d: DType) -> bool {
    d.is_floating_point() && !d.is_shell()
}

/// `softmax` and `log_softmax`: `exp(x - max)` over its sum, in opmath.
pub fn softmax(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (dim, dtype, log) = match op {
        Op::Softmax { dim, dtype } => (*dim, *dtype, false),
        Op::LogSoftmax { dim, dtype } => (*dim, *dtype, true),
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let x_ty = e.ty(x).clone();
    let d = dtype.unwrap_or(x_ty.dtype);
    if !computable_float(d) || x_ty.numel() == 0 {
        return Ok(None);
    }
    let xd = e.cast(x, d)?;
    let xf = e.cast(xd, d.opmath())?;
    let m = e.reduce(ReduceOp::Amax, xf, vec![dim], true, None)?;
    let shifted = e.binary(BinaryOp::Sub, xf, m)?;
    let ex = e.unary(UnaryOp::Exp, shifted)?;
    let s = e.reduce(ReduceOp::Sum, ex, vec![dim], true, None)?;
    let y = if log {
        let ls = e.unary(UnaryOp::Log, s)?;
        e.binary(BinaryOp::Sub, shifted, ls)?
    } else {
        e.binary(BinaryOp::Div, ex, s)?
    };
    one(e.cast(y, d)?)
}

/// `layer_norm`: `(x - mean) * rsqrt(var + eps)`, then weight and bias,
/// over the normalized dims, in opmath.
pub fn layer_norm(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::LayerNorm {
        normalized_shape,
        eps: F64(eps),
    } = op
    else {
        return Ok(None);
    };
    let x = input(operands)?;
    let d = e.ty(x).dtype;
    if !computable_float(d) {
        return Ok(None);
    }
    let acc = d.opmath();
    let xf = e.cast(x, acc)?;
    let n = normalized_shape.len() as i64;
    let dims: Vec<i64> = (-n..0).collect();
    let mean = e.push(
        Op::Mean {
            dims: Some(dims.clone()),
            keepdim: true,
            dtype: None,
        },
        vec![Operand::Value(xf)],
    )?;
    let centered = e.binary(BinaryOp::Sub, xf, mean)?;
    let sq = e.binary(BinaryOp::Mul, centered, centered)?;
    let var = e.push(
        Op::Mean {
            dims: Some(dims),
            keepdim: true,
            dtype: None,
        },
        vec![Operand::Value(sq)],
    )?;
    let var_eps = e.binary(BinaryOp::Add, var, f(*eps))?;
    let rstd = e.unary(UnaryOp::Rsqrt, var_eps)?;
    let mut y = e.binary(BinaryOp::Mul, centered, rstd)?;
    for (operand, combine) in operands[1..].iter().zip([BinaryOp::Mul, BinaryOp::Add]) {
        if let Operand::Value(p) = operand {
            let pf = e.cast(*p, acc)?;
            y = e.binary(combine, y, pf)?;
        }
    }
    one(e.cast(y, d)?)
}

/// Applies a pointwise expansion in opmath and rounds once.
fn in_opmath(
    e: &mut Emitter<'_>,
    operands: &[Operand],
    body: impl FnOnce(&mut Emitter<'_>, ValueId) -> Result<ValueId>,
) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let d = e.ty(x).dtype;
    if !(computable_float(d) || d.is_complex()) {
        return Ok(None);
    }
    let xf = e.cast(x, d.opmath())?;
    let y = body(e, xf)?;
    one(e.cast(y, d)?)
}

/// `gelu`: `0.5·x·(1 + erf(x/√2))`, or with `approximate = "tanh"`
/// `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`, in PyTorch's order.
pub fn gelu(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Gelu { approximate } = op else {
        return Ok(None);
    };
    let approximate = *approximate;
    in_opmath(e, operands, |e, xf| match approximate {
        GeluApproximate::None => {
            let half = e.binary(BinaryOp::Mul, xf, f(0.5))?;
            let scaled = e.binary(BinaryOp::Mul, xf, f(std::f64::consts::FRAC_1_SQRT_2))?;
            let erf = e.unary(UnaryOp::Erf, scaled)?;
            let one_plus = e.binary(BinaryOp::Add, erf, f(1.0))?;
            e.binary(BinaryOp::Mul, half, one_plus)
        }
        GeluApproximate::Tanh => {
            let beta = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
            let x2 = e.binary(BinaryOp::Mul, xf, xf)?;
            let x3 = e.binary(BinaryOp::Mul, x2, xf)?;
            let kx3 = e.binary(BinaryOp::Mul, x3, f(0.044715))?;
            let inner = e.binary(BinaryOp::Add, xf, kx3)?;
            let scaled = e.binary(BinaryOp::Mul, inner, f(beta))?;
            let t = e.unary(UnaryOp::Tanh, scaled)?;
            let one_plus = e.binary(BinaryOp::Add, t, f(1.0))?;
            let half = e.binary(BinaryOp::Mul, xf, f(0.5))?;
            e.binary(BinaryOp::Mul, half, one_plus)
        }
    })
}

/// `silu`: `x / (1 + exp(-x))`.
pub fn silu(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    in_opmath(e, operands, |e, xf| {
        let neg = e.unary(UnaryOp::Neg, xf)?;
        let ex = e.unary(UnaryOp::Exp, neg)?;
        let den = e.binary(BinaryOp::Add, ex, f(1.0))?;
        e.binary(BinaryOp::Div, xf, den)
    })
}

/// `softplus`: `x·beta > threshold ? x : log1p(exp(x·beta)) / beta`, in
/// opmath (PyTorch's CPU kernel).
pub fn softplus(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::Softplus { beta, threshold } = op else {
        return Ok(None);
    };
    let (beta, threshold) = (Operand::Scalar(*beta), Operand::Scalar(*threshold));
    in_opmath(e, operands, |e, xf| {
        let scaled = e.binary(BinaryOp::Mul, xf, beta)?;
        let linear = e.binary(BinaryOp::Gt, scaled, threshold)?;
        let ex = e.unary(UnaryOp::Exp, scaled)?;
        let soft = e.unary(UnaryOp::Log1p, ex)?;
        let soft = e.binary(BinaryOp::Div, soft, beta)?;
        e.push(
            Op::Where,
            vec![
                Operand::Value(linear),
                Operand::Value(xf),
                Operand::Value(soft),
            ],
        )
    })
}

/// `linear`: `matmul(input, t(weight))`, plus the bias when there is one
/// (PyTorch computes it as addmm, or matmul and add: the same values up to
/// summation order).
pub fn linear(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (Some(Operand::Value(x)), Some(Operand::Value(w))) = (operands.first(), operands.get(1))
    else {
        return Ok(None);
    };
    let (x, w) = (*x, *w);
    let wt = if e.ty(w).rank() == 2 {
        e.push(Op::T, vec![Operand::Value(w)])?
    } else {
        w
    };
    let mut y = e.push(Op::Matmul, vec![Operand::Value(x), Operand::Value(wt)])?;
    if let Some(Operand::Value(b)) = operands.get(2) {
        y = e.binary(BinaryOp::Add, y, *b)?;
    }
    Ok(Some(vec![y]))
}

/// `scaled_dot_product_attention`: PyTorch's math reference,
/// `softmax(q @ kᵀ · scale + bias) @ v`, where the bias is −inf above the
/// diagonal for `is_causal`, −inf where a bool mask is false, or a float
/// mask added; with `enable_gqa`, each key/value head serves
/// `Hq / Hkv` query heads (repeat_interleave along dim −3).
pub fn scaled_dot_product_attention(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::ScaledDotProductAttention {
        is_causal,
        scale,
        enable_gqa,
        ..
    } = op
    else {
        return Ok(None);
    };
    let value = |i: usize| match operands.get(i) {
        Some(Operand::Value(v)) => Some(*v),
        _ => None,
    };
    let (Some(q), Some(mut k), Some(mut v)) = (value(0), value(1), value(2)) else {
        return Ok(None);
    };
    let q_ty = e.ty(q).clone();
    let (l, dim) = (q_ty.shape[q_ty.rank() - 2], q_ty.shape[q_ty.rank() - 1]);
    if *enable_gqa && q_ty.rank() >= 3 {
        let hq = q_ty.shape[q_ty.rank() - 3];
        k = repeat_heads(e, k, hq)?;
        v = repeat_heads(e, v, hq)?;
    }
    let s = e.ty(k).shape[e.ty(k).rank() - 2];
    let kt = e.push(
        Op::Transpose { dim0: -2, dim1: -1 },
        vec![Operand::Value(k)],
    )?;
    let scores = e.push(Op::Matmul, vec![Operand::Value(q), Operand::Value(kt)])?;
    let factor = scale.map_or(1.0 / (dim as f64).sqrt(), |F64(x)| x);
    let mut scores = e.binary(BinaryOp::Mul, scores, f(factor))?;
    let masked_fill = |e: &mut Emitter<'_>, keep: ValueId, x: ValueId| {
        e.push(
            Op::Where,
            vec![
                Operand::Value(keep),
                Operand::Value(x),
                f(f64::NEG_INFINITY),
            ],
        )
    };
    if *is_causal {
        let positions = |e: &mut Emitter<'_>, n: i64, dim: i64| {
            let a = e.push(
                Op::Arange {
                    start: Scalar::Int(0),
                    end: Scalar::Int(n),
                    step: Scalar::Int(1),
                    dtype: None,
                    device: None,
                },
                vec![],
            )?;
            e.push(Op::Unsqueeze { dim }, vec![Operand::Value(a)])
        };
        let rows = positions(e, l, 1)?;
        let cols = positions(e, s, 0)?;
        let allowed = e.binary(BinaryOp::Le, cols, rows)?;
        scores = masked_fill(e, allowed, scores)?;
    }
    if let Some(mask) = value(3) {
        scores = if e.ty(mask).dtype == DType::Bool {
            masked_fill(e, mask, scores)?
        } else {
            e.binary(BinaryOp::Add, scores, mask)?
        };
    }
    let p = e.push(
        Op::Softmax {
            dim: -1,
            dtype: None,
        },
        vec![Operand::Value(scores)],
    )?;
    let out = e.push(Op::Matmul, vec![Operand::Value(p), Operand::Value(v)])?;
    Ok(Some(vec![out]))
}

/// `x.repeat_interleave(heads / x.shape[-3], dim=-3)`: each head of
/// `x [..., H, S, E]` repeated in place to `heads` heads.
fn repeat_heads(e: &mut Emitter<'_>, x: ValueId, heads: i64) -> Result<ValueId> {
    let shape = e.ty(x).shape.clone();
    let r = shape.len();
    let h = shape[r - 3];
    if h == heads {
        return Ok(x);
    }
    let u = e.push(Op::Unsqueeze { dim: r as i64 - 2 }, vec![Operand::Value(x)])?;
    let mut wide = shape[..r - 2].to_vec();
    wide.push(heads / h);
    wide.extend_from_slice(&shape[r - 2..]);
    let x = e.push(Op::Expand { shape: wide }, vec![Operand::Value(u)])?;
    let mut merged = shape[..r - 3].to_vec();
    merged.push(heads);
    merged.extend_from_slice(&shape[r - 2..]);
    e.push(Op::Reshape { shape: merged }, vec![Operand::Value(x)])
}

/// `hardswish`: `x · min(max(x + 3, 0), 6) / 6`, in opmath.
pub fn hardswish(
    e: &mut Emitter<'_>,
    _: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    in_opmath(e, operands, |e, xf| {
        let shifted = e.binary(BinaryOp::Add, xf, f(3.0))?;
        let clamped = e.push(
            Op::Clamp {
                min: Some(Scalar::Float(0.0)),
                max: Some(Scalar::Float(6.0)),
            },
            vec![Operand::Value(shifted)],
        )?;
        let scaled = e.binary(BinaryOp::Mul, xf, clamped)?;
        e.binary(BinaryOp::Div, scaled, f(6.0))
    })
}

/// `sigmoid`: `1 / (1 + exp(-x))`.
pub fn sigmoid(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    in_opmath(e, operands, |e, xf| {
        let neg = e.unary(UnaryOp::Neg, xf)?;
        let ex = e.unary(UnaryOp::Exp, neg)?;
        let den = e.binary(BinaryOp::Add, ex, f(1.0))?;
        e.unary(UnaryOp::Reciprocal, den)
    })
}

/// `mean`: PyTorch's CPU mean, a sum (f16/bf16 in f32) divided by the
/// count and rounded once.
pub fn mean(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Mean {
        dims,
        keepdim,
        dtype,
    } = op
    else {
        return Ok(None);
    };
    let x = input(operands)?;
    let x_ty = e.ty(x).clone();
    let d = dtype.unwrap_or(x_ty.dtype);
    if !(computable_float(d) || d.is_complex()) {
        return Ok(None);
    }
    let acc = d.opmath();
    let xd = e.cast(x, d)?;
    let reduced = crate::infer::reduced_dims(dims.as_deref(), x_ty.rank())?;
    let count: i64 = x_ty
        .shape
        .iter()
        .zip(&reduced)
        .filter(|(_, r)| **r)
        .map(|(n, _)| *n)
        .product();
    let all: Vec<i64> = (0..x_ty.rank() as i64).collect();
    let dims = match dims {
        Some(ds) if !ds.is_empty() => ds.clone(),
        _ => all,
    };
    let s = e.reduce(ReduceOp::Sum, xd, dims, *keepdim, Some(acc))?;
    let m = e.binary(BinaryOp::Div, s, Operand::Scalar(Scalar::Int(count)))?;
    one(e.cast(m, d)?)
}

/// `any`: a sum of the input as bool, in bool (the or of its truth
/// values: false for no elements); `all`: not any of not; uint8 results
/// for uint8 inputs.
pub fn any_all(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (all, dims, keepdim) = match op {
        Op::Any { dims, keepdim } => (false, dims, *keepdim),
        Op::All { dims, keepdim } => (true, dims, *keepdim),
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let result = if e.ty(x).dtype == DType::U8 {
        DType::U8
    } else {
        DType::Bool
    };
    let mut truth = e.cast(x, DType::Bool)?;
    if all {
        truth = e.unary(UnaryOp::LogicalNot, truth)?;
    }
    let mut folded = e.push(
        Op::Reduce {
            op: ReduceOp::Sum,
            dims: dims.clone(),
            keepdim,
            dtype: Some(DType::Bool),
        },
        vec![Operand::Value(truth)],
    )?;
    if all {
        folded = e.unary(UnaryOp::LogicalNot, folded)?;
    }
    one(e.cast(folded, result)?)
}

/// `clamp`: `minimum(maximum(x, min), max)`, each bound converted to the
/// dtype it clamps (a scalar bound saturated into its range).
pub fn clamp(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Clamp { min, max } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let x_ty = e.ty(x).clone();
    let d = x_ty.dtype;
    let mut y = x;
    let tensor_bounds = [operands.get(1), operands.get(2)];
    for ((scalar, tensor), combine) in [min, max]
        .into_iter()
        .zip(tensor_bounds)
        .zip([BinaryOp::Maximum, BinaryOp::Minimum])
    {
        let other = match (scalar, tensor) {
            (_, Some(Operand::Value(v))) => e.cast(*v, d)?,
            (Some(s), _) => e.push(
                Op::Full {
                    shape: vec![],
                    value: crate::infer::clamp_bound(*s, d),
                    dtype: Some(d),
                    device: Some(x_ty.device),
                },
                vec![],
            )?,
            (None, _) => continue,
        };
        y = e.binary(combine, y, other)?;
    }
    one(y)
}

/// `stack`, as PyTorch computes it: before the last dim, `cat` along
/// `dim` viewed with that dim split in two; at the end, each operand
/// with a new last dim, then `cat`.
pub fn stack(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Stack { dim } = op else {
        return Ok(None);
    };
    let first = input(operands)?;
    let shape = e.ty(first).shape.clone();
    let d = crate::view::wrap_dim(*dim, shape.len() + 1)?;
    if d < shape.len() {
        let joined = e.push(Op::Cat { dim: d as i64 }, operands.to_vec())?;
        let mut result = shape;
        result.insert(d, operands.len() as i64);
        return one(e.push(Op::View { shape: result }, vec![Operand::Value(joined)])?);
    }
    let mut parts = Vec::with_capacity(operands.len());
    for o in operands {
        parts.push(Operand::Value(
            e.push(Op::Unsqueeze { dim: d as i64 }, vec![*o])?,
        ));
    }
    one(e.push(Op::Cat { dim: d as i64 }, parts)?)
}

/// `aminmax`: `amin` and `amax` over the same dims.
pub fn aminmax(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Aminmax { dim, keepdim } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let dims = dim.map(|d| vec![d]);
    let mut out = Vec::with_capacity(2);
    for r in [ReduceOp::Amin, ReduceOp::Amax] {
        out.push(e.push(
            Op::Reduce {
                op: r,
                dims: dims.clone(),
                keepdim: *keepdim,
                dtype: None,
            },
            vec![Operand::Value(x)],
        )?);
    }
    Ok(Some(out))
}

/// `unbind`, `split`, `split_with_sizes`, `chunk`: a `select` or `slice`
/// view per piece.
pub fn split(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let x_ty = e.ty(x).clone();
    let pieces: Vec<Op> = match op {
        Op::Unbind { dim } => {
            let d = crate::view::wrap_dim(*dim, x_ty.rank())?;
            (0..x_ty.shape[d])
                .map(|index| Op::Select { dim: *dim, index })
                .collect()
        }
        _ => {
            let (d, sizes) = crate::infer::split_sizes(op, &x_ty)?;
            let mut start = 0;
            sizes
                .into_iter()
                .map(|n| {
                    let slice = Op::Slice {
                        dim: d as i64,
                        start: Some(start),
                        end: Some(start + n),
                        step: 1,
                    };
                    start += n;
                    slice
                })
                .collect()
        }
    };
    let mut out = Vec::with_capacity(pieces.len());
    for p in pieces {
        out.push(e.push(p, vec![Operand::Value(x)])?);
    }
    Ok(Some(out))
}

/// `where(cond, a, b)`.
fn select(e: &mut Emitter<'_>, cond: ValueId, a: Operand, b: Operand) -> Result<ValueId> {
    e.push(Op::Where, vec![Operand::Value(cond), a, b])
}

/// `elu`, `selu` and `celu`: `x > 0 ? x·scale : expm1(x·input_scale)·(alpha·scale)`,
/// in opmath, with the coefficients rounded to opmath as PyTorch's kernel
/// holds them (`alpha·scale` multiplied in opmath).
pub fn elu(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    // SELU's constants (Klambauer et al.), as PyTorch writes them.
    const SELU_ALPHA: f64 = 1.673_263_242_354_377_284_817_042_991_671_7;
    const SELU_SCALE: f64 = 1.050_700_987_355_480_493_419_334_985_294_6;
    let (alpha, scale, input_scale) = match op {
        Op::Elu {
            alpha,
            scale,
            input_scale,
        } => (alpha.0, scale.0, input_scale.0),
        Op::Selu => (SELU_ALPHA, SELU_SCALE, 1.0),
        Op::Celu { alpha } => (alpha.0, 1.0, 1.0 / alpha.0),
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let opmath = e.ty(x).dtype.opmath();
    let round = |v: f64| {
        if opmath == DType::F32 {
            v as f32 as f64
        } else {
            v
        }
    };
    let negcoef = if opmath == DType::F32 {
        (alpha as f32 * scale as f32) as f64
    } else {
        alpha * scale
    };
    let (scale, input_scale) = (round(scale), round(input_scale));
    in_opmath(e, operands, |e, xf| {
        let positive = e.binary(BinaryOp::Gt, xf, f(0.0))?;
        let pos = e.binary(BinaryOp::Mul, xf, f(scale))?;
        let scaled = e.binary(BinaryOp::Mul, xf, f(input_scale))?;
        let em1 = e.unary(UnaryOp::Expm1, scaled)?;
        let neg = e.binary(BinaryOp::Mul, em1, f(negcoef))?;
        select(e, positive, Operand::Value(pos), Operand::Value(neg))
    })
}

/// `leaky_relu` (and `rrelu` in eval mode, whose slope is the middle of
/// its range): `x > 0 ? x : x·negative_slope`.
pub fn leaky_relu(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let slope = match op {
        Op::LeakyRelu { negative_slope } => negative_slope.0,
        Op::Rrelu { lower, upper, .. } => (lower.0 + upper.0) / 2.0,
        _ => return Ok(None),
    };
    in_opmath(e, operands, |e, xf| {
        let positive = e.binary(BinaryOp::Gt, xf, f(0.0))?;
        let neg = e.binary(BinaryOp::Mul, xf, f(slope))?;
        select(e, positive, Operand::Value(xf), Operand::Value(neg))
    })
}

/// `hardtanh` and `relu6`: clamp, rounded back to the input's dtype (an
/// integer input with float bounds stays integer, as PyTorch's in-place
/// clamp leaves it).
pub fn hardtanh(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let (min, max) = match op {
        Op::Hardtanh { min_val, max_val } => (*min_val, *max_val),
        Op::Relu6 => (Scalar::Int(0), Scalar::Int(6)),
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let d = e.ty(x).dtype;
    let y = e.push(
        Op::Clamp {
            min: Some(min),
            max: Some(max),
        },
        vec![Operand::Value(x)],
    )?;
    one(e.cast(y, d)?)
}

/// `hardsigmoid`: `min(max(x + 3, 0), 6) / 6`, in opmath.
pub fn hardsigmoid(
    e: &mut Emitter<'_>,
    _: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    in_opmath(e, operands, |e, xf| {
        let shifted = e.binary(BinaryOp::Add, xf, f(3.0))?;
        let clamped = e.push(
            Op::Clamp {
                min: Some(Scalar::Float(0.0)),
                max: Some(Scalar::Float(6.0)),
            },
            vec![Operand::Value(shifted)],
        )?;
        e.binary(BinaryOp::Div, clamped, f(6.0))
    })
}

/// `mish`: `x · tanh(log1p(exp(x)))`, in opmath.
pub fn mish(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    in_opmath(e, operands, |e, xf| {
        let ex = e.unary(UnaryOp::Exp, xf)?;
        let sp = e.unary(UnaryOp::Log1p, ex)?;
        let th = e.unary(UnaryOp::Tanh, sp)?;
        e.binary(BinaryOp::Mul, xf, th)
    })
}

/// `softsign`: `x / (|x| + 1)`, in the input's dtype (PyTorch's Python
/// definition: no opmath).
pub fn softsign(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let a = e.unary(UnaryOp::Abs, x)?;
    // An integral 1, as PyTorch's `x.abs() + 1`: integers add (and wrap)
    // in their dtype before the true division.
    let den = e.binary(BinaryOp::Add, a, Operand::Scalar(Scalar::Int(1)))?;
    one(e.binary(BinaryOp::Div, x, den)?)
}

/// `tanhshrink`: `x - tanh(x)`, in the input's dtype (PyTorch's Python
/// definition).
pub fn tanhshrink(
    e: &mut Emitter<'_>,
    _: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let th = e.unary(UnaryOp::Tanh, x)?;
    one(e.binary(BinaryOp::Sub, x, th)?)
}

/// `softshrink`: `x > l ? x - l : (x < -l ? x + l : x·0)`; `hardshrink`:
/// `-l <= x <= l ? 0 : x`. Both in opmath, NaN propagating as PyTorch's.
pub fn shrink(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (lambd, soft) = match op {
        Op::Softshrink { lambd } => (lambd.0, true),
        Op::Hardshrink { lambd } => (lambd.0, false),
        _ => return Ok(None),
    };
    in_opmath(e, operands, |e, xf| {
        if soft {
            let above = e.binary(BinaryOp::Gt, xf, f(lambd))?;
            let below = e.binary(BinaryOp::Lt, xf, f(-lambd))?;
            let minus = e.binary(BinaryOp::Sub, xf, f(lambd))?;
            let plus = e.binary(BinaryOp::Add, xf, f(lambd))?;
            let zero = e.binary(BinaryOp::Mul, xf, f(0.0))?;
            let inner = select(e, below, Operand::Value(plus), Operand::Value(zero))?;
            select(e, above, Operand::Value(minus), Operand::Value(inner))
        } else {
            let ge = e.binary(BinaryOp::Ge, xf, f(-lambd))?;
            let le = e.binary(BinaryOp::Le, xf, f(lambd))?;
            let inside = e.binary(BinaryOp::LogicalAnd, ge, le)?;
            select(e, inside, f(0.0), Operand::Value(xf))
        }
    })
}

/// `threshold`: `x <= threshold ? value : x`, in the input's dtype.
pub fn threshold(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::Threshold { threshold, value } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let d = e.ty(x).dtype;
    let below = e.binary(BinaryOp::Le, x, Operand::Scalar(*threshold))?;
    let y = select(e, below, Operand::Scalar(*value), Operand::Value(x))?;
    one(e.cast(y, d)?)
}

/// `logsigmoid`: `min(x, 0) - log1p(exp(-|x|))`, in opmath (PyTorch's CPU
/// kernel; stable for large |x|).
pub fn logsigmoid(
    e: &mut Emitter<'_>,
    _: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    in_opmath(e, operands, |e, xf| {
        let m = e.push(
            Op::Clamp {
                min: None,
                max: Some(Scalar::Float(0.0)),
            },
            vec![Operand::Value(xf)],
        )?;
        let a = e.unary(UnaryOp::Abs, xf)?;
        let na = e.unary(UnaryOp::Neg, a)?;
        let ex = e.unary(UnaryOp::Exp, na)?;
        let l = e.unary(UnaryOp::Log1p, ex)?;
        e.binary(BinaryOp::Sub, m, l)
    })
}

/// `softmin`: `softmax(-x)`, with its `dtype`.
pub fn softmin(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Softmin { dim, dtype } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let neg = e.unary(UnaryOp::Neg, x)?;
    one(e.push(
        Op::Softmax {
            dim: *dim,
            dtype: *dtype,
        },
        vec![Operand::Value(neg)],
    )?)
}

/// `glu`: `a · sigmoid(b)` where `a` and `b` are the first and second
/// halves of `dim`, in opmath.
pub fn glu(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Glu { dim } = op else {
        return Ok(None);
    };
    let dim = *dim;
    in_opmath(e, operands, |e, xf| {
        let n = e.ty(xf).shape[crate::view::wrap_dim(dim, e.ty(xf).rank())?];
        let half = |e: &mut Emitter<'_>, start: i64| {
            e.push(
                Op::Slice {
                    dim,
                    start: Some(start),
                    end: Some(start + n / 2),
                    step: 1,
                },
                vec![Operand::Value(xf)],
            )
        };
        let a = half(e, 0)?;
        let b = half(e, n / 2)?;
        let s = e.push(Op::Sigmoid, vec![Operand::Value(b)])?;
        e.binary(BinaryOp::Mul, a, s)
    })
}

/// `square`: `x·x` (bool was promoted to int64 by inference).
pub fn square(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    one(e.binary(BinaryOp::Mul, x, x)?)
}

/// `positive`: the input's values. PyTorch returns the input itself;
/// Kiln's result is a new value, so it is a copy laid out as the pointwise
/// result (`clone` preserving the input's format).
pub fn positive(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    one(copy_of(e, x)?)
}

/// A pointwise op's result that equals its input: a fresh value laid out
/// as the pointwise result is (`clone` preserving the input's format), not
/// the input itself, whose strides may differ.
fn copy_of(e: &mut Emitter<'_>, x: ValueId) -> Result<ValueId> {
    e.push(
        Op::Clone {
            strides: None,
            memory_format: MemoryFormat::Preserve,
        },
        vec![Operand::Value(x)],
    )
}

/// `isinf` (`|x| == inf`), `isfinite` (`|x| < inf`, false for NaN),
/// `isposinf` and `isneginf`; on integers and bool a constant, written as
/// `x != x` (false) or `x == x` (true) so that it keeps the input's shape.
pub fn predicate(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    if !e.ty(x).dtype.is_floating_point() {
        let always = matches!(op, Op::Isfinite);
        let cmp = if always { BinaryOp::Eq } else { BinaryOp::Ne };
        return one(e.binary(cmp, x, x)?);
    }
    // The float8 formats, which Kiln does not compute on, widen to f32
    // exactly (infinities and NaN included).
    let x = if e.ty(x).dtype.is_shell() {
        e.cast(x, DType::F32)?
    } else {
        x
    };
    let inf = f(f64::INFINITY);
    let y = match op {
        Op::Isinf => {
            let a = e.unary(UnaryOp::Abs, x)?;
            e.binary(BinaryOp::Eq, a, inf)?
        }
        Op::Isfinite => {
            let a = e.unary(UnaryOp::Abs, x)?;
            e.binary(BinaryOp::Lt, a, inf)?
        }
        Op::Isposinf => e.binary(BinaryOp::Eq, x, inf)?,
        Op::Isneginf => e.binary(BinaryOp::Eq, x, f(f64::NEG_INFINITY))?,
        _ => return Ok(None),
    };
    one(y)
}

/// `frac`: `x - trunc(x)`.
pub fn frac(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let t = e.unary(UnaryOp::Trunc, x)?;
    one(e.binary(BinaryOp::Sub, x, t)?)
}

/// `deg2rad` and `rad2deg`: a product with the constant PyTorch uses.
pub fn angle_units(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    use std::f64::consts::PI;
    let factor = match op {
        Op::Deg2rad => PI / 180.0,
        Op::Rad2deg => 180.0 / PI,
        _ => return Ok(None),
    };
    let x = input(operands)?;
    one(e.binary(BinaryOp::Mul, x, f(factor))?)
}

/// `logit`: `log(z / (1 - z))`, `z` clamped to `[eps, 1 - eps]` if `eps`
/// is given, in opmath.
pub fn logit(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Logit { eps } = op else {
        return Ok(None);
    };
    let eps = *eps;
    in_opmath(e, operands, |e, xf| {
        let z = match eps {
            Some(F64(eps)) => e.push(
                Op::Clamp {
                    min: Some(Scalar::Float(eps)),
                    max: Some(Scalar::Float(1.0 - eps)),
                },
                vec![Operand::Value(xf)],
            )?,
            None => xf,
        };
        let one_minus = e.binary(BinaryOp::Sub, f(1.0), z)?;
        let ratio = e.binary(BinaryOp::Div, z, one_minus)?;
        e.unary(UnaryOp::Log, ratio)
    })
}

/// `nan_to_num`: floats get NaN, +inf and -inf replaced (by default with
/// 0 and the dtype's largest and lowest finite values); integers and bool
/// are returned as they are.
pub fn nan_to_num(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::NanToNum {
        nan,
        posinf,
        neginf,
    } = op
    else {
        return Ok(None);
    };
    let x = input(operands)?;
    let d = e.ty(x).dtype;
    if !d.is_floating_point() {
        return one(copy_of(e, x)?);
    }
    let info = d.finfo()?;
    let nan = nan.map_or(0.0, |v| v.0);
    let posinf = posinf.map_or(info.max, |v| v.0);
    let neginf = neginf.map_or(info.min, |v| v.0);
    let is_nan = e.unary(UnaryOp::Isnan, x)?;
    let is_pos = e.binary(BinaryOp::Eq, x, f(f64::INFINITY))?;
    let is_neg = e.binary(BinaryOp::Eq, x, f(f64::NEG_INFINITY))?;
    // Each replacement is a literal of x's dtype (where with a float
    // scalar keeps the tensor's dtype).
    let y = select(e, is_neg, f(neginf), Operand::Value(x))?;
    let y = select(e, is_pos, f(posinf), Operand::Value(y))?;
    let y = select(e, is_nan, f(nan), Operand::Value(y))?;
    one(e.cast(y, d)?)
}

/// `sinc`: `sin(πx) / (πx)`, and 1 where `x == 0`, in opmath.
pub fn sinc(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    in_opmath(e, operands, |e, xf| {
        let zero = e.binary(BinaryOp::Eq, xf, f(0.0))?;
        let product = e.binary(BinaryOp::Mul, xf, f(std::f64::consts::PI))?;
        let s = e.unary(UnaryOp::Sin, product)?;
        let q = e.binary(BinaryOp::Div, s, product)?;
        select(e, zero, f(1.0), Operand::Value(q))
    })
}

/// The dims a reduction folds, spelled out (`None` and `[]` are all of
/// them), and how many elements each result folds.
fn folded(ty: &TensorType, dims: Option<&[i64]>) -> Result<(Vec<i64>, i64)> {
    let reduced = crate::infer::reduced_dims(dims, ty.rank())?;
    let count = ty
        .shape
        .iter()
        .zip(&reduced)
        .filter(|(_, r)| **r)
        .map(|(n, _)| *n)
        .product();
    let dims = (0..ty.rank() as i64)
        .zip(&reduced)
        .filter(|(_, r)| **r)
        .map(|(d, _)| d)
        .collect();
    Ok((dims, count))
}

/// `var`, `std`, `var_mean`, `std_mean`: two passes in opmath: the mean,
/// then the summed squared deviation (`|x - mean|²` for complex) over
/// `max(n - correction, 0)` (PyTorch's divisor: 0 gives inf or NaN).
pub fn var_std(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (dims, correction, keepdim, root, pair) = match op {
        Op::Var {
            dims,
            correction,
            keepdim,
        } => (dims, correction, *keepdim, false, false),
        Op::Std {
            dims,
            correction,
            keepdim,
        } => (dims, correction, *keepdim, true, false),
        Op::VarMean {
            dims,
            correction,
            keepdim,
        } => (dims, correction, *keepdim, false, true),
        Op::StdMean {
            dims,
            correction,
            keepdim,
        } => (dims, correction, *keepdim, true, true),
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let ty = e.ty(x).clone();
    let d = ty.dtype;
    if !(computable_float(d) || d.is_complex()) {
        return Ok(None);
    }
    let (dims, n) = folded(&ty, dims.as_deref())?;
    let acc = d.opmath();
    let xf = e.cast(x, acc)?;
    let s = e.reduce(ReduceOp::Sum, xf, dims.clone(), true, None)?;
    let mean = e.binary(BinaryOp::Div, s, Operand::Scalar(Scalar::Int(n)))?;
    let dev = e.binary(BinaryOp::Sub, xf, mean)?;
    let dev = if d.is_complex() {
        e.unary(UnaryOp::Abs, dev)?
    } else {
        dev
    };
    let sq = e.binary(BinaryOp::Mul, dev, dev)?;
    let ss = e.reduce(ReduceOp::Sum, sq, dims.clone(), keepdim, None)?;
    let divisor = (n as f64 - correction.to_f64()).max(0.0);
    let mut v = e.binary(BinaryOp::Div, ss, f(divisor))?;
    if root {
        v = e.unary(UnaryOp::Sqrt, v)?;
    }
    let mut results = vec![e.cast(v, d.to_real())?];
    if pair {
        let m = if keepdim {
            mean
        } else {
            e.push(Op::Squeeze { dims: Some(dims) }, vec![Operand::Value(mean)])?
        };
        results.push(e.cast(m, d)?);
    }
    Ok(Some(results))
}

/// `logsumexp`, as PyTorch computes it: `log(sum(exp(x - m))) + m` with
/// `m` the maximum where it is finite and 0 where it is ±inf, in the
/// input's dtype (integers cast first by inference).
pub fn logsumexp(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::Logsumexp { dims, keepdim } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let ty = e.ty(x).clone();
    if !(computable_float(ty.dtype) || ty.dtype.is_complex()) {
        return Ok(None);
    }
    let (dims, _) = folded(&ty, Some(dims))?;
    if ty.numel() == 0 {
        let ex = e.unary(UnaryOp::Exp, x)?;
        let s = e.reduce(ReduceOp::Sum, ex, dims, *keepdim, None)?;
        return one(e.unary(UnaryOp::Log, s)?);
    }
    let m = e.reduce(ReduceOp::Amax, x, dims.clone(), true, None)?;
    let a = e.unary(UnaryOp::Abs, m)?;
    let infinite = e.binary(BinaryOp::Eq, a, f(f64::INFINITY))?;
    let m = select(e, infinite, f(0.0), Operand::Value(m))?;
    let shifted = e.binary(BinaryOp::Sub, x, m)?;
    let ex = e.unary(UnaryOp::Exp, shifted)?;
    let s = e.reduce(ReduceOp::Sum, ex, dims.clone(), *keepdim, None)?;
    let l = e.unary(UnaryOp::Log, s)?;
    let m = if *keepdim {
        m
    } else {
        e.push(Op::Squeeze { dims: Some(dims) }, vec![Operand::Value(m)])?
    };
    one(e.binary(BinaryOp::Add, l, m)?)
}

/// `nansum`: `sum(where(isnan(x), 0, x))`; `nanmean`: that over the
/// number of elements that are not NaN.
pub fn nan_reduction(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
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
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let ty = e.ty(x).clone();
    let (dims, _) = folded(&ty, dims.as_deref())?;
    let clean = if ty.dtype.is_floating_point() {
        let nan = e.unary(UnaryOp::Isnan, x)?;
        select(e, nan, f(0.0), Operand::Value(x))?
    } else {
        x
    };
    let sum = |e: &mut Emitter<'_>, v: ValueId, dtype: Option<DType>| {
        e.push(
            Op::Reduce {
                op: ReduceOp::Sum,
                dims: Some(dims.clone()),
                keepdim,
                dtype,
            },
            vec![Operand::Value(v)],
        )
    };
    if !mean {
        return one(sum(e, clean, dtype)?);
    }
    // PyTorch: nansum(x, dtype) / count of non-NaN, in the result dtype.
    let total = sum(e, clean, dtype)?;
    let nan = e.unary(UnaryOp::Isnan, x)?;
    let kept = e.unary(UnaryOp::LogicalNot, nan)?;
    let count = sum(e, kept, Some(e.ty(total).dtype))?;
    one(e.binary(BinaryOp::Div, total, count)?)
}

/// `count_nonzero`: the sum of `x != 0` in int64.
pub fn count_nonzero(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::CountNonzero { dims } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let ty = e.ty(x).clone();
    let (dims, _) = folded(&ty, dims.as_deref())?;
    let x = if ty.dtype.is_shell() {
        e.cast(x, DType::F32)?
    } else {
        x
    };
    let nz = e.binary(BinaryOp::Ne, x, Operand::Scalar(Scalar::Int(0)))?;
    one(e.reduce(ReduceOp::Sum, nz, dims, false, Some(DType::I64))?)
}

/// `linalg_vector_norm` of `|x|` in opmath: `sqrt(sum(|x|²))` for ord 2,
/// `sum` for 1, `amax`/`amin` for ±inf, the nonzero count for 0, and
/// `sum(|x|^p)^(1/p)` otherwise.
pub fn vector_norm(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::LinalgVectorNorm {
        ord,
        dims,
        keepdim,
        dtype,
    } = op
    else {
        return Ok(None);
    };
    let x = input(operands)?;
    let ty = e.ty(x).clone();
    let d = dtype.unwrap_or(ty.dtype);
    if !(computable_float(d) || d.is_complex()) {
        return Ok(None);
    }
    let (dims, _) = folded(&ty, dims.as_deref())?;
    let xd = e.cast(x, d)?;
    let a = e.unary(UnaryOp::Abs, xd)?;
    let real = d.to_real();
    let a = e.cast(a, real.opmath())?;
    let keepdim = *keepdim;
    let p = ord.to_f64();
    let y = if p == 2.0 {
        let sq = e.binary(BinaryOp::Mul, a, a)?;
        let s = e.reduce(ReduceOp::Sum, sq, dims, keepdim, None)?;
        e.unary(UnaryOp::Sqrt, s)?
    } else if p == 1.0 {
        e.reduce(ReduceOp::Sum, a, dims, keepdim, None)?
    } else if p == f64::INFINITY {
        e.reduce(ReduceOp::Amax, a, dims, keepdim, None)?
    } else if p == f64::NEG_INFINITY {
        e.reduce(ReduceOp::Amin, a, dims, keepdim, None)?
    } else if p == 0.0 {
        let nz = e.binary(BinaryOp::Ne, a, f(0.0))?;
        let nz = e.cast(nz, real.opmath())?;
        e.reduce(ReduceOp::Sum, nz, dims, keepdim, None)?
    } else {
        let pw = e.binary(BinaryOp::Pow, a, f(p))?;
        let s = e.reduce(ReduceOp::Sum, pw, dims, keepdim, None)?;
        e.binary(BinaryOp::Pow, s, f(1.0 / p))?
    };
    one(e.cast(y, real)?)
}

/// The dtype the tensor operands of a promoted composite were cast to
/// (`None` when there is no tensor operand).
fn operands_dtype(e: &Emitter<'_>, operands: &[Operand]) -> Option<DType> {
    operands.iter().find_map(|o| match o {
        Operand::Value(v) => Some(e.ty(*v).dtype),
        _ => None,
    })
}

/// An operand as a value of dtype `d`: a literal becomes a 0-dim `full`
/// (which broadcasts like the literal), a tensor is cast.
fn value_of(e: &mut Emitter<'_>, o: &Operand, d: DType) -> Result<ValueId> {
    match o {
        Operand::Value(v) => e.cast(*v, d),
        Operand::Scalar(s) => e.push(
            Op::Full {
                shape: vec![],
                value: *s,
                dtype: Some(d),
                device: None,
            },
            vec![],
        ),
        Operand::None => Err(Error::new(ErrorKind::Arity, "missing operand")),
    }
}

/// `xlogy`: `isnan(y) ? NaN : (x == 0 ? 0 : x·log(y))`; `special_xlog1py`
/// the same with `log1p`. In opmath, as PyTorch's half kernels compute.
pub fn xlogy(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let log = match op {
        Op::Xlogy => UnaryOp::Log,
        Op::SpecialXlog1py => UnaryOp::Log1p,
        _ => return Ok(None),
    };
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    if !computable_float(d) {
        return Ok(None);
    }
    let acc = d.opmath();
    let x = value_of(e, &operands[0], acc)?;
    let y = value_of(e, &operands[1], acc)?;
    let nan = e.unary(UnaryOp::Isnan, y)?;
    let zero = e.binary(BinaryOp::Eq, x, f(0.0))?;
    let l = e.unary(log, y)?;
    let p = e.binary(BinaryOp::Mul, x, l)?;
    let p = select(e, zero, f(0.0), Operand::Value(p))?;
    let r = select(e, nan, f(f64::NAN), Operand::Value(p))?;
    one(e.cast(r, d)?)
}

/// `fmax` and `fmin`: `isnan(a) ? b : (isnan(b) ? a : max(a, b))`;
/// integers and bool are plain `maximum`/`minimum`.
pub fn fmax_fmin(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let extreme = match op {
        Op::Fmax => BinaryOp::Maximum,
        Op::Fmin => BinaryOp::Minimum,
        _ => return Ok(None),
    };
    let (Some(Operand::Value(a)), Some(Operand::Value(b))) = (operands.first(), operands.get(1))
    else {
        return Ok(None);
    };
    let (a, b) = (*a, *b);
    let m = e.binary(extreme, a, b)?;
    if !e.ty(a).dtype.is_floating_point() {
        return one(m);
    }
    let a_nan = e.unary(UnaryOp::Isnan, a)?;
    let b_nan = e.unary(UnaryOp::Isnan, b)?;
    let r = select(e, b_nan, Operand::Value(a), Operand::Value(m))?;
    one(select(e, a_nan, Operand::Value(b), Operand::Value(r))?)
}

/// `heaviside`: `x == 0 ? values : (x > 0)`, in x's dtype.
pub fn heaviside(
    e: &mut Emitter<'_>,
    _: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let (Some(Operand::Value(x)), Some(Operand::Value(v))) = (operands.first(), operands.get(1))
    else {
        return Ok(None);
    };
    let (x, v) = (*x, *v);
    let d = e.ty(x).dtype;
    let zero = e.binary(BinaryOp::Eq, x, Operand::Scalar(Scalar::Int(0)))?;
    let pos = e.binary(BinaryOp::Gt, x, Operand::Scalar(Scalar::Int(0)))?;
    let pos = e.cast(pos, d)?;
    let r = select(e, zero, Operand::Value(v), Operand::Value(pos))?;
    one(e.cast(r, d)?)
}

/// `logaddexp`: `a` where both are the same infinity, else
/// `max(a, b) + log1p(exp(-|a - b|))` (PyTorch's CPU kernel), in opmath.
pub fn logaddexp(
    e: &mut Emitter<'_>,
    _: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    if !computable_float(d) {
        return Ok(None);
    }
    let acc = d.opmath();
    let a = value_of(e, &operands[0], acc)?;
    let b = value_of(e, &operands[1], acc)?;
    let abs_a = e.unary(UnaryOp::Abs, a)?;
    let a_inf = e.binary(BinaryOp::Eq, abs_a, f(f64::INFINITY))?;
    let same = e.binary(BinaryOp::Eq, a, b)?;
    let both = e.binary(BinaryOp::LogicalAnd, a_inf, same)?;
    let m = e.binary(BinaryOp::Maximum, a, b)?;
    let diff = e.binary(BinaryOp::Sub, a, b)?;
    let ad = e.unary(UnaryOp::Abs, diff)?;
    let nd = e.unary(UnaryOp::Neg, ad)?;
    let ex = e.unary(UnaryOp::Exp, nd)?;
    let l = e.unary(UnaryOp::Log1p, ex)?;
    let s = e.binary(BinaryOp::Add, m, l)?;
    let r = select(e, both, Operand::Value(a), Operand::Value(s))?;
    one(e.cast(r, d)?)
}

/// `lerp`, in opmath: `|w| < 0.5 ? self + w·(end - self) : end - (end - self)·(1 - w)`.
pub fn lerp(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    if !(computable_float(d) || d.is_complex()) {
        return Ok(None);
    }
    let acc = d.opmath();
    let s = value_of(e, &operands[0], acc)?;
    let end = value_of(e, &operands[1], acc)?;
    let w = value_of(e, &operands[2], acc)?;
    let aw = e.unary(UnaryOp::Abs, w)?;
    let small = e.binary(BinaryOp::Lt, aw, f(0.5))?;
    let diff = e.binary(BinaryOp::Sub, end, s)?;
    let wd = e.binary(BinaryOp::Mul, w, diff)?;
    let low = e.binary(BinaryOp::Add, s, wd)?;
    let one_minus = e.binary(BinaryOp::Sub, f(1.0), w)?;
    let dw = e.binary(BinaryOp::Mul, diff, one_minus)?;
    let high = e.binary(BinaryOp::Sub, end, dw)?;
    let r = select(e, small, Operand::Value(low), Operand::Value(high))?;
    one(e.cast(r, d)?)
}

/// `addcmul`: `self + (value·t1)·t2`; `addcdiv`: `self + (value·t1) / t2`;
/// floats in opmath (PyTorch's reduced-float kernels), integers as they are.
pub fn addc(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (value, combine) = match op {
        Op::Addcmul { value } => (*value, BinaryOp::Mul),
        Op::Addcdiv { value } => (*value, BinaryOp::Div),
        _ => return Ok(None),
    };
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    let acc = if computable_float(d) { d.opmath() } else { d };
    let s = value_of(e, &operands[0], acc)?;
    let t1 = value_of(e, &operands[1], acc)?;
    let t2 = value_of(e, &operands[2], acc)?;
    let vt = e.binary(BinaryOp::Mul, t1, Operand::Scalar(value))?;
    let c = e.binary(combine, vt, t2)?;
    let r = e.binary(BinaryOp::Add, s, c)?;
    one(e.cast(r, d)?)
}

/// `clamp_min` and `clamp_max`: `clamp` with one bound.
pub fn clamp_one(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let clamp = match op {
        Op::ClampMin { min } => Op::Clamp {
            min: Some(*min),
            max: None,
        },
        Op::ClampMax { max } => Op::Clamp {
            min: None,
            max: Some(*max),
        },
        _ => return Ok(None),
    };
    one(e.push(clamp, vec![Operand::Value(input(operands)?)])?)
}

/// `float_power`: `pow` of both operands in float64 (complex128).
pub fn float_power(
    e: &mut Emitter<'_>,
    _: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    let a = cast_operand(e, operands[0], d)?;
    let b = cast_operand(e, operands[1], d)?;
    one(e.binary(BinaryOp::Pow, a, b)?)
}

/// A literal stays a literal (its category promotes); a tensor is cast.
fn cast_operand(e: &mut Emitter<'_>, o: Operand, d: DType) -> Result<Operand> {
    Ok(match o {
        Operand::Value(v) => Operand::Value(e.cast(v, d)?),
        other => other,
    })
}

/// `true_divide` (`div`) and `floor_divide` (`div` rounding to floor).
pub fn divide_alias(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let b = match op {
        Op::TrueDivide => BinaryOp::Div,
        Op::FloorDivide => BinaryOp::DivFloor,
        _ => return Ok(None),
    };
    let (Some(a), Some(c)) = (operands.first(), operands.get(1)) else {
        return Ok(None);
    };
    one(e.binary(b, *a, *c)?)
}

/// A derived view (`narrow`, `movedim`, ...): its one primitive view.
pub fn derived_view(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let shape = e.ty(x).shape.clone();
    let Some(view) = super::derived::primitive_view(op, &shape)? else {
        return Ok(None);
    };
    one(e.push(view, vec![Operand::Value(x)])?)
}

/// `x[start:end]` along `dim`.
fn slice(e: &mut Emitter<'_>, x: ValueId, dim: usize, start: i64, end: i64) -> Result<ValueId> {
    e.push(
        Op::Slice {
            dim: dim as i64,
            start: Some(start),
            end: Some(end),
            step: 1,
        },
        vec![Operand::Value(x)],
    )
}

/// `cat(parts, dim)`.
fn join(e: &mut Emitter<'_>, parts: Vec<ValueId>, dim: usize) -> Result<ValueId> {
    if let [only] = parts[..] {
        return Ok(only);
    }
    e.push(
        Op::Cat { dim: dim as i64 },
        parts.into_iter().map(Operand::Value).collect(),
    )
}

/// `roll`: along each dim, the last `shift mod n` elements joined in front
/// of the rest; with no dims, the same on the flattened tensor.
pub fn roll(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Roll { shifts, dims } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let shape = e.ty(x).shape.clone();
    let rolled = |e: &mut Emitter<'_>, mut y: ValueId, pairs: &[(i64, usize)]| -> Result<ValueId> {
        for &(shift, d) in pairs {
            let n = e.ty(y).shape[d];
            if n == 0 {
                continue;
            }
            let s = shift.rem_euclid(n);
            if s == 0 {
                continue;
            }
            let tail = slice(e, y, d, n - s, n)?;
            let head = slice(e, y, d, 0, n - s)?;
            y = join(e, vec![tail, head], d)?;
        }
        Ok(y)
    };
    let y = if dims.is_empty() {
        let flat = e.push(Op::Reshape { shape: vec![-1] }, vec![Operand::Value(x)])?;
        let r = rolled(e, flat, &[(shifts[0], 0)])?;
        e.push(Op::Reshape { shape }, vec![Operand::Value(r)])?
    } else {
        let pairs: Vec<(i64, usize)> = shifts
            .iter()
            .zip(dims)
            .map(|(&s, &d)| Ok((s, crate::view::wrap_dim(d, shape.len())?)))
            .collect::<Result<_>>()?;
        rolled(e, x, &pairs)?
    };
    // A roll by nothing is still a fresh result.
    let y = if y == x { copy_of(e, x)? } else { y };
    one(y)
}

/// `repeat` and `tile`: the input viewed as `[1, s0, 1, s1, ...]`,
/// expanded to `[r0, s0, r1, s1, ...]` and reshaped to `[r0·s0, ...]`.
pub fn repeat(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let shape = e.ty(x).shape.clone();
    let counts = crate::infer::repeat_counts(op, shape.len())?;
    let mut full = vec![1; counts.len() - shape.len()];
    full.extend(&shape);
    let spread: Vec<i64> = full.iter().flat_map(|&s| [1, s]).collect();
    let wide: Vec<i64> = full
        .iter()
        .zip(&counts)
        .flat_map(|(&s, &r)| [r, s])
        .collect();
    let result: Vec<i64> = full.iter().zip(&counts).map(|(s, r)| s * r).collect();
    let v = e.push(Op::Reshape { shape: spread }, vec![Operand::Value(x)])?;
    let v = e.push(Op::Expand { shape: wide }, vec![Operand::Value(v)])?;
    let v = e.push(Op::Reshape { shape: result }, vec![Operand::Value(v)])?;
    one(copy_of(e, v)?)
}

/// `tril` and `triu`: `where(col - row <= k, x, 0)` (`>= k` for triu) over
/// the last two dims, positions from `arange`.
pub fn triangle(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let (k, lower) = match op {
        Op::Tril { diagonal } => (*diagonal, true),
        Op::Triu { diagonal } => (*diagonal, false),
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let ty = e.ty(x).clone();
    let (n, m) = (ty.shape[ty.rank() - 2], ty.shape[ty.rank() - 1]);
    let positions = |e: &mut Emitter<'_>, len: i64, dim: i64| {
        let a = e.push(
            Op::Arange {
                start: Scalar::Int(0),
                end: Scalar::Int(len),
                step: Scalar::Int(1),
                dtype: None,
                device: None,
            },
            vec![],
        )?;
        e.push(Op::Unsqueeze { dim }, vec![Operand::Value(a)])
    };
    let rows = positions(e, n, 1)?;
    let cols = positions(e, m, 0)?;
    let offset = e.binary(BinaryOp::Sub, cols, rows)?;
    let cmp = if lower { BinaryOp::Le } else { BinaryOp::Ge };
    let keep = e.binary(cmp, offset, Operand::Scalar(Scalar::Int(k)))?;
    let zero = value_of(e, &Operand::Scalar(Scalar::Int(0)), ty.dtype)?;
    one(select(e, keep, Operand::Value(x), Operand::Value(zero))?)
}

/// `flip`: each dim reversed by an `index_select` of `arange(n - 1, -1, -1)`.
pub fn flip(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let dims = crate::infer::flip_dims(op, e.ty(x).rank())?;
    let mut y = x;
    for d in dims {
        let n = e.ty(y).shape[d];
        let reversed = e.push(
            Op::Arange {
                start: Scalar::Int(n - 1),
                end: Scalar::Int(-1),
                step: Scalar::Int(-1),
                dtype: None,
                device: None,
            },
            vec![],
        )?;
        y = e.push(
            Op::IndexSelect { dim: d as i64 },
            vec![Operand::Value(y), Operand::Value(reversed)],
        )?;
    }
    let y = if y == x { copy_of(e, x)? } else { y };
    one(y)
}

/// `constant_pad_nd`: per padded dim, negative amounts slice the input,
/// positive ones join `full` blocks of `value` before and after.
pub fn constant_pad_nd(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::ConstantPadNd { pad, value } = op else {
        return Ok(None);
    };
    let x = input(operands)?;
    let d_type = e.ty(x).dtype;
    let rank = e.ty(x).rank();
    crate::infer::padded_shape(pad, &e.ty(x).shape)?;
    let mut y = x;
    for (k, pair) in pad.chunks(2).enumerate() {
        let d = rank - 1 - k;
        let (before, after) = (pair[0], pair[1]);
        let n = e.ty(y).shape[d];
        let (lo, hi) = (before.min(0).abs(), n - after.min(0).abs());
        if lo > 0 || hi < n {
            y = slice(e, y, d, lo, hi.max(lo))?;
        }
        let block = |e: &mut Emitter<'_>, y: ValueId, len: i64| {
            let mut shape = e.ty(y).shape.clone();
            shape[d] = len;
            e.push(
                Op::Full {
                    shape,
                    value: *value,
                    dtype: Some(d_type),
                    device: None,
                },
                vec![],
            )
        };
        let mut parts = Vec::new();
        if before > 0 {
            parts.push(block(e, y, before)?);
        }
        parts.push(y);
        if after > 0 {
            parts.push(block(e, y, after)?);
        }
        y = join(e, parts, d)?;
    }
    let y = if y == x { copy_of(e, x)? } else { y };
    one(y)
}

/// The real elementary functions composed from Kiln's primitives, in
/// opmath, by formulas that stay accurate where the naive ones cancel or
/// overflow (see each op's row).
pub fn real_math(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    use std::f64::consts::{LN_2, LN_10};
    let op = op.clone();
    in_opmath(e, operands, |e, x| match op {
        Op::Tan => {
            let s = e.unary(UnaryOp::Sin, x)?;
            let c = e.unary(UnaryOp::Cos, x)?;
            e.binary(BinaryOp::Div, s, c)
        }
        // Where exp(|x|) would overflow but the result does not
        // (|x| a little above ln(max)), exp(|x|/2)·(exp(|x|/2)/2) keeps it
        // finite within 3 ulps.
        Op::Sinh | Op::Cosh => {
            let sinh = matches!(op, Op::Sinh);
            let a = e.unary(UnaryOp::Expm1, x)?;
            let nx = e.unary(UnaryOp::Neg, x)?;
            let b = e.unary(UnaryOp::Expm1, nx)?;
            let near = if sinh {
                // (expm1(x) - expm1(-x)) / 2: accurate near 0.
                e.binary(BinaryOp::Sub, a, b)?
            } else {
                // (exp(x) + exp(-x)) / 2 = (expm1(x) + expm1(-x) + 2) / 2.
                let s = e.binary(BinaryOp::Add, a, b)?;
                e.binary(BinaryOp::Add, s, f(2.0))?
            };
            let near = e.binary(BinaryOp::Mul, near, f(0.5))?;
            let ax = e.unary(UnaryOp::Abs, x)?;
            let half = e.binary(BinaryOp::Mul, ax, f(0.5))?;
            let h = e.unary(UnaryOp::Exp, half)?;
            let hh = e.binary(BinaryOp::Mul, h, f(0.5))?;
            let far = e.binary(BinaryOp::Mul, hh, h)?;
            let far = if sinh {
                let neg = e.binary(BinaryOp::Lt, x, f(0.0))?;
                let nf = e.unary(UnaryOp::Neg, far)?;
                select(e, neg, Operand::Value(nf), Operand::Value(far))?
            } else {
                far
            };
            let big = e.binary(BinaryOp::Gt, ax, f(80.0))?;
            select(e, big, Operand::Value(far), Operand::Value(near))
        }
        Op::Asinh => {
            let a = e.unary(UnaryOp::Abs, x)?;
            let sq = e.binary(BinaryOp::Mul, a, a)?;
            let r = e.binary(BinaryOp::Add, sq, f(1.0))?;
            let r = e.unary(UnaryOp::Sqrt, r)?;
            let den = e.binary(BinaryOp::Add, r, f(1.0))?;
            let q = e.binary(BinaryOp::Div, sq, den)?;
            let arg = e.binary(BinaryOp::Add, a, q)?;
            let small = e.unary(UnaryOp::Log1p, arg)?;
            let l = e.unary(UnaryOp::Log, a)?;
            let large = e.binary(BinaryOp::Add, l, f(LN_2))?;
            let huge = e.binary(BinaryOp::Gt, a, f(1e15))?;
            let m = select(e, huge, Operand::Value(large), Operand::Value(small))?;
            // sign(x)·m, with -0.0 kept (asinh(-0) = -0).
            let neg = e.binary(BinaryOp::Lt, x, f(0.0))?;
            let nm = e.unary(UnaryOp::Neg, m)?;
            let y = select(e, neg, Operand::Value(nm), Operand::Value(m))?;
            let zero = e.binary(BinaryOp::Eq, x, f(0.0))?;
            select(e, zero, Operand::Value(x), Operand::Value(y))
        }
        Op::Acosh => {
            let xm1 = e.binary(BinaryOp::Sub, x, f(1.0))?;
            let xp1 = e.binary(BinaryOp::Add, x, f(1.0))?;
            let p = e.binary(BinaryOp::Mul, xm1, xp1)?;
            let r = e.unary(UnaryOp::Sqrt, p)?;
            let arg = e.binary(BinaryOp::Add, xm1, r)?;
            let small = e.unary(UnaryOp::Log1p, arg)?;
            let l = e.unary(UnaryOp::Log, x)?;
            let large = e.binary(BinaryOp::Add, l, f(LN_2))?;
            let huge = e.binary(BinaryOp::Gt, x, f(1e15))?;
            select(e, huge, Operand::Value(large), Operand::Value(small))
        }
        // atanh is odd: computed on |x|, where 1 - |x| is exact near 1
        // and log1p's argument is never near -1.
        Op::Atanh => {
            let a = e.unary(UnaryOp::Abs, x)?;
            let two_a = e.binary(BinaryOp::Mul, a, f(2.0))?;
            let den = e.binary(BinaryOp::Sub, f(1.0), a)?;
            let q = e.binary(BinaryOp::Div, two_a, den)?;
            let l = e.unary(UnaryOp::Log1p, q)?;
            let m = e.binary(BinaryOp::Mul, l, f(0.5))?;
            let neg = e.binary(BinaryOp::Lt, x, f(0.0))?;
            let nm = e.unary(UnaryOp::Neg, m)?;
            let y = select(e, neg, Operand::Value(nm), Operand::Value(m))?;
            // -0.0 stays -0.0; NaN stays NaN.
            let zero = e.binary(BinaryOp::Eq, x, f(0.0))?;
            select(e, zero, Operand::Value(x), Operand::Value(y))
        }
        Op::Log10 => {
            let l = e.unary(UnaryOp::Log, x)?;
            e.binary(BinaryOp::Div, l, f(LN_10))
        }
        Op::Exp2 => e.binary(BinaryOp::Pow, f(2.0), x),
        _ => Err(Error::new(ErrorKind::Arity, "not a real math op")),
    })
}
