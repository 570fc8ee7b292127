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
use crate::graph::{Func, FuncBuilder, Inst, Operand, ValueId};
use crate::layout::MemoryFormat;
use crate::scalar::{F64, Scalar};
use crate::types::TensorType;
use crate::view::wrap_dim;

use super::{BinaryOp, GeluApproximate, LossReduction, Op, ReduceOp, UnaryOp};

/// Appends ops to a function being built, expanding composite ops as they
/// are emitted (an expansion may use other composites).
pub struct Emitter<'b> {
    b: &'b mut FuncBuilder,
    keep: Option<KeepWhole>,
}

/// Which composite instructions a backend runs whole rather than by
/// their expansion (its fused steps: attention on the CPU and in CUDA).
pub type KeepWhole = fn(&Func, &Inst) -> bool;

impl<'b> Emitter<'b> {
    /// An emitter appending to `b`, expanding every composite.
    pub fn new(b: &'b mut FuncBuilder) -> Emitter<'b> {
        Emitter { b, keep: None }
    }

    /// An emitter that leaves whole the composites `keep` selects, where
    /// an expansion emits them (`multi_head_attention_forward`'s
    /// `scaled_dot_product_attention`), and expands the others.
    pub fn keeping(b: &'b mut FuncBuilder, keep: KeepWhole) -> Emitter<'b> {
        Emitter {
            b,
            keep: Some(keep),
        }
    }

    /// The type of a value built so far.
    pub fn ty(&self, v: ValueId) -> &TensorType {
        self.b.ty(v)
    }

    /// The default float dtype (`torch.get_default_dtype()`) of the
    /// function being built.
    pub fn default_dtype(&self) -> DType {
        self.b.ctx().default_dtype.dtype()
    }

    /// Appends `op` (expanded, if composite) and returns its results.
    pub fn push_all(&mut self, op: Op, operands: Vec<Operand>) -> Result<Vec<ValueId>> {
        if let Some(keep) = self.keep.filter(|_| op.is_composite()) {
            // Whole, if the backend keeps it; else taken back and expanded.
            let mark = self.b.checkpoint();
            if let Ok(vs) = self.b.push_multi(op.clone(), operands.clone(), None) {
                let func = self.b.func();
                if func.insts.last().is_some_and(|i| keep(func, i)) {
                    return Ok(vs);
                }
            }
            self.b.rollback(mark);
        }
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

/// `conj(x)` for complex `x` (vdot and vecdot conjugate their first
/// operand); `x` itself otherwise.
fn conjugated(e: &mut Emitter<'_>, x: ValueId) -> Result<ValueId> {
    if e.ty(x).dtype.is_complex() {
        e.push(Op::Conj, vec![Operand::Value(x)])
    } else {
        Ok(x)
    }
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
/// mask added (a row left without keys attends to nothing: zeros); with `enable_gqa`, each key/value head serves
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
    // As inference: grouped heads need a head dim (−3) on all three.
    if *enable_gqa && [q, k, v].iter().all(|x| e.ty(*x).rank() >= 3) {
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
    let mut p = e.push(
        Op::Softmax {
            dim: -1,
            dtype: None,
        },
        vec![Operand::Value(scores)],
    )?;
    if (*is_causal || value(3).is_some()) && s > 0 {
        // PyTorch's `_safe_softmax` (and its flash kernel): a row the
        // mask leaves no key is all zeros, where softmax would be 0/0.
        // (Without keys, the product below is zeros already.)
        let top = e.reduce(ReduceOp::Amax, scores, vec![-1], true, None)?;
        let empty = e.binary(BinaryOp::Eq, top, f(f64::NEG_INFINITY))?;
        p = e.push(
            Op::Where,
            vec![Operand::Value(empty), f(0.0), Operand::Value(p)],
        )?;
    }
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
            let (d, ranges) = crate::infer::split_ranges(op, &x_ty)?;
            ranges
                .into_iter()
                .map(|(start, n)| Op::Slice {
                    dim: d as i64,
                    start: Some(start),
                    end: Some(start + n),
                    step: 1,
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

/// `arange(0, n)` (int64) with a dim of one inserted at `dim`: row
/// (`dim` 1) or column (`dim` 0) positions for masks over two dims.
fn positions(e: &mut Emitter<'_>, n: i64, dim: i64) -> Result<ValueId> {
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

/// `sgn`: `sign` of real tensors; for complex ones `z/|z|` in opmath
/// (complex32 computes in complex64), 0 where `|z|` is 0. Each part is
/// divided by the real `|z|`, as PyTorch's `z / std::abs(z)` divides: a
/// complex quotient (`|z|` as `|z| + 0i`) would turn a −0.0 part into +0.0.
pub fn sgn(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    if !e.ty(x).dtype.is_complex() {
        return one(e.unary(UnaryOp::Sign, x)?);
    }
    in_opmath(e, operands, |e, z| {
        let m = e.unary(UnaryOp::Abs, z)?;
        let re = e.push(Op::Real, vec![Operand::Value(z)])?;
        let im = e.push(Op::Imag, vec![Operand::Value(z)])?;
        let re = e.binary(BinaryOp::Div, re, m)?;
        let im = e.binary(BinaryOp::Div, im, m)?;
        let q = e.push(Op::Complex, vec![Operand::Value(re), Operand::Value(im)])?;
        let zero = e.binary(BinaryOp::Eq, m, f(0.0))?;
        select(e, zero, f(0.0), Operand::Value(q))
    })
}

/// `round(x, decimals=d)`: PyTorch's scaled round in opmath,
/// `rint(x·t)/t` with `t = 10^d`, or `rint(x/t)·t` with `t = 10^-d` for
/// negative `d`; `t` is C's `pow(10, |d|)` in f64 rounded to opmath (so
/// infinite, and every result NaN, from 10^39 in f32 and 10^309 in f64).
pub fn round_decimals(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::RoundDecimals { decimals } = op else {
        return Ok(None);
    };
    let d = *decimals;
    let x = input(operands)?;
    if !computable_float(e.ty(x).dtype) {
        return Ok(None);
    }
    in_opmath(e, operands, |e, xf| {
        let ten = 10f64.powf(d.unsigned_abs() as f64);
        let ten = if e.ty(xf).dtype == DType::F32 {
            f64::from(ten as f32)
        } else {
            ten
        };
        let (scale, unscale) = if d >= 0 {
            (BinaryOp::Mul, BinaryOp::Div)
        } else {
            (BinaryOp::Div, BinaryOp::Mul)
        };
        let scaled = e.binary(scale, xf, f(ten))?;
        let r = e.unary(UnaryOp::Round, scaled)?;
        e.binary(unscale, r, f(ten))
    })
}

/// `polygamma(n, x)`: `digamma` for `n = 0`; else
/// `(-1)^(n+1)·n!·ζ(n+1, x)` as PyTorch computes it: ζ rounded to `x`'s
/// dtype (computed in opmath for f16/bf16, which zeta's kernel refuses),
/// times `n!` rounded to opmath, in opmath (so `inf·0 = NaN` where PyTorch
/// gets it). For `n = 1`
/// PyTorch's trigamma gives 0 at +inf and NaN at -inf, where ζ(2, ±inf)
/// is NaN and inf.
pub fn polygamma(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::Polygamma { n } = op else {
        return Ok(None);
    };
    let n = *n;
    let x = input(operands)?;
    let d = e.ty(x).dtype;
    if !computable_float(d) || n < 0 {
        return Ok(None);
    }
    if n == 0 {
        return one(e.unary(UnaryOp::Digamma, x)?);
    }
    let o = d.opmath();
    let xf = e.cast(x, o)?;
    let z = e.binary(BinaryOp::SpecialZeta, f((n + 1) as f64), xf)?;
    // ζ rounds to x's dtype (f16's underflows at 6e-8), then multiplies
    // in opmath by n! rounded to opmath (infinite from 35! in f32).
    let z = e.cast(z, d)?;
    let z = e.cast(z, o)?;
    let factorial = (1..=n).fold(1.0f64, |p, k| p * k as f64);
    let factorial = if o == DType::F32 {
        f64::from(factorial as f32)
    } else {
        factorial
    };
    let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
    let mut r = e.binary(BinaryOp::Mul, z, f(sign * factorial))?;
    if n == 1 {
        let pos = e.binary(BinaryOp::Eq, xf, f(f64::INFINITY))?;
        r = select(e, pos, f(0.0), Operand::Value(r))?;
        let neg = e.binary(BinaryOp::Eq, xf, f(f64::NEG_INFINITY))?;
        r = select(e, neg, f(f64::NAN), Operand::Value(r))?;
    }
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

/// `logaddexp` and `logaddexp2`, in opmath, as PyTorch's kernels:
/// `a` where `a` is infinite and equal to `b`, else
/// `max(a, b) + log1p(exp(-|a - b|))` (`logaddexp2`: with `exp2`, the
/// logarithm divided by ln 2).
pub fn logaddexp(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    if !computable_float(d) {
        return Ok(None);
    }
    let base2 = matches!(op, Op::Logaddexp2);
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
    let l = if base2 {
        let ex = e.binary(BinaryOp::Pow, f(2.0), nd)?;
        let l = e.unary(UnaryOp::Log1p, ex)?;
        e.binary(BinaryOp::Mul, l, f(std::f64::consts::LOG2_E))?
    } else {
        let ex = e.unary(UnaryOp::Exp, nd)?;
        e.unary(UnaryOp::Log1p, ex)?
    };
    let s = e.binary(BinaryOp::Add, m, l)?;
    let r = select(e, both, Operand::Value(a), Operand::Value(s))?;
    one(e.cast(r, d)?)
}

/// `hypot`: `√(a² + b²)`, infinite where either operand is (even with a
/// NaN, as C's `hypot`). f32, f16 and bf16 compute it in f64, where the
/// squares of f32 values neither overflow nor lose bits (so the result is
/// the correctly rounded one, but for a rare double rounding); f64 as
/// `max·√(1 + (min/max)²)` (0 where both are 0), which cannot overflow.
pub fn hypot(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    if !computable_float(d) {
        return Ok(None);
    }
    let a = value_of(e, &operands[0], DType::F64)?;
    let b = value_of(e, &operands[1], DType::F64)?;
    let ax = e.unary(UnaryOp::Abs, a)?;
    let bx = e.unary(UnaryOp::Abs, b)?;
    let h = if d == DType::F64 {
        let m = e.binary(BinaryOp::Maximum, ax, bx)?;
        let n = e.binary(BinaryOp::Minimum, ax, bx)?;
        let q = e.binary(BinaryOp::Div, n, m)?;
        let q2 = e.binary(BinaryOp::Mul, q, q)?;
        let s = e.binary(BinaryOp::Add, q2, f(1.0))?;
        let r = e.unary(UnaryOp::Sqrt, s)?;
        let h = e.binary(BinaryOp::Mul, m, r)?;
        // Both zero: 0/0 above.
        let zero = e.binary(BinaryOp::Eq, m, f(0.0))?;
        select(e, zero, f(0.0), Operand::Value(h))?
    } else {
        let a2 = e.binary(BinaryOp::Mul, a, a)?;
        let b2 = e.binary(BinaryOp::Mul, b, b)?;
        let s = e.binary(BinaryOp::Add, a2, b2)?;
        e.unary(UnaryOp::Sqrt, s)?
    };
    let a_inf = e.binary(BinaryOp::Eq, ax, f(f64::INFINITY))?;
    let b_inf = e.binary(BinaryOp::Eq, bx, f(f64::INFINITY))?;
    let inf = e.binary(BinaryOp::LogicalOr, a_inf, b_inf)?;
    let r = select(e, inf, f(f64::INFINITY), Operand::Value(h))?;
    one(e.cast(r, d)?)
}

/// `copysign`: `|a|`, negated where `b`'s sign bit is set (so -0.0 and
/// NaNs with the sign bit count as negative). Exact in the result dtype.
pub fn copysign(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Some(d) = operands_dtype(e, operands) else {
        return Ok(None);
    };
    if !computable_float(d) {
        return Ok(None);
    }
    let a = value_of(e, &operands[0], d)?;
    let b = value_of(e, &operands[1], d)?;
    let m = e.unary(UnaryOp::Abs, a)?;
    let negative = e.unary(UnaryOp::Signbit, b)?;
    let nm = e.unary(UnaryOp::Neg, m)?;
    one(select(e, negative, Operand::Value(nm), Operand::Value(m))?)
}

/// `ldexp`: `a · 2^b` as PyTorch's `mul(a, pow(2, b))`: `a` arrives in
/// the result dtype, `b` in its own. `2^b` is computed in `b`'s dtype
/// where that is a float or complex (rounded there, as PyTorch does), in
/// f64 for integers (exact); real products are computed in f64, where they
/// are exact, and rounded once to the result dtype, as PyTorch's wider
/// `mul` computes them.
pub fn ldexp(e: &mut Emitter<'_>, _: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let a = nth(operands, 0)?;
    let b = nth(operands, 1)?;
    let d = e.ty(a).dtype;
    let db = e.ty(b).dtype;
    if !(computable_float(d) || d.is_complex()) || db.is_shell() {
        return Ok(None);
    }
    let exponent = if computable_float(db) || db.is_complex() {
        b
    } else {
        e.cast(b, DType::F64)?
    };
    let p = e.binary(BinaryOp::Pow, f(2.0), exponent)?;
    if d.is_complex() {
        let p = e.cast(p, d)?;
        return one(e.binary(BinaryOp::Mul, a, p)?);
    }
    let a64 = e.cast(a, DType::F64)?;
    let p64 = e.cast(p, DType::F64)?;
    let r = e.binary(BinaryOp::Mul, a64, p64)?;
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
    let Some(clamp) = super::derived::as_clamp(op) else {
        return Ok(None);
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

/// The `i`th operand, a tensor (inference checked the slots).
fn nth(operands: &[Operand], i: usize) -> Result<ValueId> {
    match operands.get(i) {
        Some(Operand::Value(v)) => Ok(*v),
        _ => Err(Error::new(
            ErrorKind::Arity,
            format!("missing operand {}", i + 1),
        )),
    }
}

/// The `i`th operand if it is a tensor (absent optional tensors are not).
fn optional(operands: &[Operand], i: usize) -> Option<ValueId> {
    match operands.get(i) {
        Some(Operand::Value(v)) => Some(*v),
        _ => None,
    }
}

/// A view of `x` with shape `shape`.
fn reshape(e: &mut Emitter<'_>, x: ValueId, shape: Vec<i64>) -> Result<ValueId> {
    if e.ty(x).shape == shape {
        return Ok(x);
    }
    e.push(Op::Reshape { shape }, vec![Operand::Value(x)])
}

/// A product's coefficient as PyTorch's kernels hold it in the result
/// dtype: truncated for integers, a truth value for bool.
fn coefficient(s: Scalar, d: DType) -> Operand {
    let s = if d.is_bool() {
        Scalar::Bool(s.to_complex() != (0.0, 0.0))
    } else if d.is_integral() && matches!(s, Scalar::Float(_)) {
        Scalar::Int(s.to_f64().trunc() as i64)
    } else {
        s
    };
    Operand::Scalar(s)
}

/// `beta·input + alpha·product` in the result dtype `d`: the input is not
/// read where `beta` is 0 (PyTorch ignores its NaN), and a coefficient of
/// 1 multiplies nothing. The float8 formats, which Kiln does not compute
/// on, compute in f32 and round once (as PyTorch's float8 gemm).
fn add_scaled(
    e: &mut Emitter<'_>,
    input: ValueId,
    product: ValueId,
    beta: Scalar,
    alpha: Scalar,
    d: DType,
) -> Result<ValueId> {
    let c = if d.is_shell() { DType::F32 } else { d };
    let product = e.cast(product, c)?;
    let scaled = if is_value(alpha, 1.0) {
        product
    } else {
        e.binary(BinaryOp::Mul, product, coefficient(alpha, c))?
    };
    if is_value(beta, 0.0) {
        return e.cast(scaled, d);
    }
    let input = e.cast(input, c)?;
    let term = if is_value(beta, 1.0) {
        input
    } else {
        e.binary(BinaryOp::Mul, input, coefficient(beta, c))?
    };
    let y = e.binary(BinaryOp::Add, term, scaled)?;
    e.cast(y, d)
}

/// Whether a coefficient is exactly `v`.
fn is_value(s: Scalar, v: f64) -> bool {
    s.to_complex() == (v, 0.0)
}

/// `x · s` where `s` is held in `x`'s dtype first, as PyTorch's `addr`
/// kernel holds its coefficients (`scalar_t`, so 0.2 is rounded to f16
/// for an f16 `addr`); nothing where `s` is 1.
fn times_held(e: &mut Emitter<'_>, x: ValueId, s: Scalar) -> Result<ValueId> {
    if is_value(s, 1.0) {
        return Ok(x);
    }
    let ty = e.ty(x).clone();
    if !ty.dtype.is_floating_point() && !ty.dtype.is_complex() {
        return e.binary(BinaryOp::Mul, x, coefficient(s, ty.dtype));
    }
    let held = e.push(
        Op::Full {
            shape: vec![],
            value: s,
            dtype: Some(ty.dtype),
            device: Some(ty.device),
        },
        vec![],
    )?;
    e.binary(BinaryOp::Mul, x, held)
}

/// The matrix and vector products, by `matmul` and pointwise ops:
/// `mm`, `bmm`, `mv` and `dot` are `matmul`; `outer` is
/// `input[:, None] * vec2`; `inner` a `matmul` of the operands flattened
/// to matrices; the `add*` forms `beta·input + alpha·product`; `addbmm`
/// sums `bmm` over the batch; `trace` sums every `(n+1)`th element of the
/// flattened matrix; `linalg_vecdot` is `sum(x·y, dim)`; `kron` a product
/// of the operands with interleaved unit dims, merged.
pub fn products(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let matmul = |e: &mut Emitter<'_>, a: ValueId, b: ValueId| {
        e.push(Op::Matmul, vec![Operand::Value(a), Operand::Value(b)])
    };
    let a = nth(operands, 0)?;
    let d = e.ty(a).dtype;
    let y = match op {
        Op::Mm | Op::Bmm | Op::Mv | Op::Dot => matmul(e, a, nth(operands, 1)?)?,
        Op::Outer => {
            let column = e.push(Op::Unsqueeze { dim: 1 }, vec![Operand::Value(a)])?;
            e.binary(BinaryOp::Mul, column, nth(operands, 1)?)?
        }
        Op::Inner => {
            let b = nth(operands, 1)?;
            let (sa, sb) = (e.ty(a).shape.clone(), e.ty(b).shape.clone());
            if sa.is_empty() || sb.is_empty() {
                return one(e.binary(BinaryOp::Mul, a, b)?);
            }
            let k = sa[sa.len() - 1];
            let rows = |s: &[i64]| s[..s.len() - 1].iter().product::<i64>();
            let a2 = reshape(e, a, vec![rows(&sa), k])?;
            let b2 = reshape(e, b, vec![rows(&sb), k])?;
            let bt = e.push(Op::T, vec![Operand::Value(b2)])?;
            let p = matmul(e, a2, bt)?;
            let mut shape = sa[..sa.len() - 1].to_vec();
            shape.extend_from_slice(&sb[..sb.len() - 1]);
            reshape(e, p, shape)?
        }
        Op::Addmm { beta, alpha } | Op::Addmv { beta, alpha } | Op::Baddbmm { beta, alpha } => {
            let p = matmul(e, nth(operands, 1)?, nth(operands, 2)?)?;
            add_scaled(e, a, p, *beta, *alpha, d)?
        }
        Op::Addbmm { beta, alpha } => {
            let p = matmul(e, nth(operands, 1)?, nth(operands, 2)?)?;
            // Float8 products sum in f32 (Kiln has no float8 sum).
            let acc = if d.is_shell() { DType::F32 } else { d };
            let s = e.reduce(ReduceOp::Sum, p, vec![0], false, Some(acc))?;
            add_scaled(e, a, s, *beta, *alpha, d)?
        }
        Op::Addr { beta, alpha } => {
            let (v1, v2) = (nth(operands, 1)?, nth(operands, 2)?);
            let operands: Vec<crate::promotion::Operand> = [a, v1, v2]
                .iter()
                .map(|v| crate::promotion::Operand::tensor(e.ty(*v).dtype, e.ty(*v).rank()))
                .collect();
            let d = crate::promotion::result_type(&operands, Default::default())?;
            // PyTorch's kernel: `beta·self + alpha·vec1·vec2`, each step
            // rounded to the result dtype.
            let v1 = e.cast(v1, d)?;
            let v2 = e.cast(v2, d)?;
            let v1 = times_held(e, v1, *alpha)?;
            let p = e.push(Op::Outer, vec![Operand::Value(v1), Operand::Value(v2)])?;
            if is_value(*beta, 0.0) {
                p
            } else {
                let a = e.cast(a, d)?;
                let term = times_held(e, a, *beta)?;
                e.binary(BinaryOp::Add, term, p)?
            }
        }
        Op::Trace => {
            let shape = e.ty(a).shape.clone();
            let (m, n) = (shape[0], shape[1]);
            let k = m.min(n);
            let flat = e.push(
                Op::Flatten {
                    start_dim: 0,
                    end_dim: -1,
                },
                vec![Operand::Value(a)],
            )?;
            // The diagonal of an m×n row-major matrix: elements 0, n+1,
            // 2(n+1), ..., the last at (k-1)(n+1).
            let end = if k == 0 { 0 } else { (k - 1) * (n + 1) + 1 };
            let diagonal = e.push(
                Op::Slice {
                    dim: 0,
                    start: Some(0),
                    end: Some(end),
                    step: n + 1,
                },
                vec![Operand::Value(flat)],
            )?;
            e.reduce(ReduceOp::Sum, diagonal, vec![0], false, None)?
        }
        Op::LinalgVecdot { dim } => {
            let a = conjugated(e, a)?;
            let p = e.binary(BinaryOp::Mul, a, nth(operands, 1)?)?;
            e.reduce(ReduceOp::Sum, p, vec![*dim], false, None)?
        }
        Op::Kron => {
            let b = nth(operands, 1)?;
            let (sa, sb) = (e.ty(a).shape.clone(), e.ty(b).shape.clone());
            let r = sa.len().max(sb.len());
            let pad = |s: &[i64]| {
                let mut p = vec![1; r - s.len()];
                p.extend_from_slice(s);
                p
            };
            let (pa, pb) = (pad(&sa), pad(&sb));
            let wa: Vec<i64> = pa.iter().flat_map(|n| [*n, 1]).collect();
            let wb: Vec<i64> = pb.iter().flat_map(|n| [1, *n]).collect();
            let xa = reshape(e, a, wa)?;
            let xb = reshape(e, b, wb)?;
            let p = e.binary(BinaryOp::Mul, xa, xb)?;
            let merged = pa.iter().zip(&pb).map(|(x, y)| x * y).collect();
            reshape(e, p, merged)?
        }
        Op::Tensordot {
            dims_self,
            dims_other,
        } => tensordot(e, a, nth(operands, 1)?, dims_self, dims_other)?,
        Op::Vdot => {
            let a = conjugated(e, a)?;
            matmul(e, a, nth(operands, 1)?)?
        }
        Op::Bilinear => bilinear(e, a, nth(operands, 1)?, nth(operands, 2)?, operands.get(3))?,
        Op::LinalgMultiDot => {
            let ts = operands
                .iter()
                .map(|o| match o {
                    Operand::Value(v) => Ok(*v),
                    _ => Err(Error::new(ErrorKind::Arity, "multi_dot takes tensors")),
                })
                .collect::<Result<Vec<_>>>()?;
            multi_dot(e, &ts)?
        }
        Op::LinalgCross { dim } => cross(e, a, nth(operands, 1)?, *dim)?,
        Op::Cross { dim } => {
            // The first dim of size 3 (inference refused an input without one).
            let dim = match dim {
                Some(d) => *d,
                None => e.ty(a).shape.iter().position(|n| *n == 3).unwrap_or(0) as i64,
            };
            cross(e, a, nth(operands, 1)?, dim)?
        }
        Op::Cdist { p, .. } => cdist(e, a, nth(operands, 1)?, p.0)?,
        _ => return Ok(None),
    };
    one(y)
}

/// `tensordot` as PyTorch's `at::tensordot` computes it: a contracted dim
/// of size 1 against a larger one is summed away first (in the dtype),
/// then each operand is permuted to (kept, contracted) and (contracted,
/// kept), reshaped to matrices, multiplied with one `mm`, and reshaped.
fn tensordot(
    e: &mut Emitter<'_>,
    a: ValueId,
    b: ValueId,
    da: &[i64],
    db: &[i64],
) -> Result<ValueId> {
    let (mut t1, mut t2) = (a, b);
    let (ra, rb) = (e.ty(a).rank(), e.ty(b).rank());
    let mut csize = 1;
    for (x, y) in da.iter().zip(db) {
        let (s1, s2) = (
            e.ty(a).shape[wrap_dim(*x, ra)?],
            e.ty(b).shape[wrap_dim(*y, rb)?],
        );
        if s2 == 1 {
            t1 = sum_in_dtype(e, t1, *x)?;
        } else if s1 == 1 {
            t2 = sum_in_dtype(e, t2, *y)?;
        } else {
            csize *= s1;
        }
    }
    let wrapped = |dims: &[i64], r: usize| -> Result<Vec<usize>> {
        dims.iter().map(|d| wrap_dim(*d, r)).collect()
    };
    let (ca, cb) = (wrapped(da, ra)?, wrapped(db, rb)?);
    let (s1, s2) = (e.ty(t1).shape.clone(), e.ty(t2).shape.clone());
    let mut p1: Vec<i64> = (0..ra)
        .filter(|i| !ca.contains(i))
        .map(|i| i as i64)
        .collect();
    let mut shape: Vec<i64> = p1.iter().map(|i| s1[*i as usize]).collect();
    let size1: i64 = shape.iter().product();
    p1.extend(ca.iter().map(|d| *d as i64));
    let kept2: Vec<i64> = (0..rb)
        .filter(|i| !cb.contains(i))
        .map(|i| i as i64)
        .collect();
    let size2: i64 = kept2.iter().map(|i| s2[*i as usize]).product();
    shape.extend(kept2.iter().map(|i| s2[*i as usize]));
    let mut p2: Vec<i64> = cb.iter().map(|d| *d as i64).collect();
    p2.extend(kept2);
    let x1 = e.push(Op::Permute { dims: p1 }, vec![Operand::Value(t1)])?;
    let x1 = reshape(e, x1, vec![size1, csize])?;
    let x2 = e.push(Op::Permute { dims: p2 }, vec![Operand::Value(t2)])?;
    let x2 = reshape(e, x2, vec![csize, size2])?;
    let y = e.push(Op::Matmul, vec![Operand::Value(x1), Operand::Value(x2)])?;
    reshape(e, y, shape)
}

/// `x.sum(dim, keepdim=True, dtype=x.dtype)`; the float8 formats, which
/// Kiln does not sum in, sum in f32 and round once.
fn sum_in_dtype(e: &mut Emitter<'_>, x: ValueId, dim: i64) -> Result<ValueId> {
    let d = e.ty(x).dtype;
    let acc = if d.is_shell() { DType::F32 } else { d };
    let s = e.reduce(ReduceOp::Sum, x, vec![dim], true, Some(acc))?;
    e.cast(s, d)
}

/// `bilinear` as `_trilinear` contracts it: the rows of `x1` times the
/// weight (one matrix product, `[n, i] @ [i, o·j]`), then each row's
/// `[o, j]` block times its row of `x2` (a batched matrix-vector
/// product), plus the bias.
fn bilinear(
    e: &mut Emitter<'_>,
    x1: ValueId,
    x2: ValueId,
    w: ValueId,
    bias: Option<&Operand>,
) -> Result<ValueId> {
    let s1 = e.ty(x1).shape.clone();
    let ws = e.ty(w).shape.clone();
    let (o, i, j) = (ws[0], ws[1], ws[2]);
    let n: i64 = s1[..s1.len().saturating_sub(1)].iter().product();
    let a = reshape(e, x1, vec![n, i])?;
    let b = reshape(e, x2, vec![n, j])?;
    // weight[o, i, j] as [i, o·j].
    let wt = e.push(
        Op::Permute {
            dims: vec![1, 0, 2],
        },
        vec![Operand::Value(w)],
    )?;
    let wt = reshape(e, wt, vec![i, o * j])?;
    let t = e.push(Op::Matmul, vec![Operand::Value(a), Operand::Value(wt)])?;
    let t = reshape(e, t, vec![n, o, j])?;
    let col = reshape(e, b, vec![n, j, 1])?;
    let y = e.push(Op::Matmul, vec![Operand::Value(t), Operand::Value(col)])?;
    let mut shape = s1[..s1.len().saturating_sub(1)].to_vec();
    shape.push(o);
    let y = reshape(e, y, shape)?;
    match bias {
        Some(Operand::Value(bv)) => e.binary(BinaryOp::Add, y, *bv),
        _ => Ok(y),
    }
}

/// `linalg_multi_dot` in PyTorch's order: two operands one `mm`; three
/// the cheaper of `(AB)C` and `A(BC)` (ties `(AB)C`); more the matrix
/// chain order of its dynamic program (the first split of least cost).
fn multi_dot(e: &mut Emitter<'_>, ts: &[ValueId]) -> Result<ValueId> {
    let n = ts.len();
    let mut shape = Vec::new();
    let mut ms = ts.to_vec();
    if e.ty(ts[0]).rank() == 1 {
        ms[0] = e.push(Op::Unsqueeze { dim: 0 }, vec![Operand::Value(ts[0])])?;
    } else {
        shape.push(e.ty(ts[0]).shape[0]);
    }
    if e.ty(ts[n - 1]).rank() == 1 {
        ms[n - 1] = e.push(Op::Unsqueeze { dim: -1 }, vec![Operand::Value(ts[n - 1])])?;
    } else {
        shape.push(e.ty(ts[n - 1]).shape[1]);
    }
    let mm = |e: &mut Emitter<'_>, x: ValueId, y: ValueId| {
        e.push(Op::Matmul, vec![Operand::Value(x), Operand::Value(y)])
    };
    let y = if n == 2 {
        mm(e, ms[0], ms[1])?
    } else if n == 3 {
        let (a, b) = (e.ty(ms[0]).shape[0], e.ty(ms[1]).shape[0]);
        let (c, d) = (e.ty(ms[2]).shape[0], e.ty(ms[2]).shape[1]);
        if (a * c) * (b + d) > (b * d) * (a + c) {
            let bc = mm(e, ms[1], ms[2])?;
            mm(e, ms[0], bc)?
        } else {
            let ab = mm(e, ms[0], ms[1])?;
            mm(e, ab, ms[2])?
        }
    } else {
        // PyTorch's matrix_chain_order: p holds the chain's dims.
        let mut p: Vec<i64> = ms.iter().map(|m| e.ty(*m).shape[0]).collect();
        p.push(e.ty(ms[n - 1]).shape[1]);
        let mut cost = vec![vec![0i64; n]; n];
        let mut split = vec![vec![0usize; n]; n];
        for l in 1..n {
            for i in 0..n - l {
                let j = i + l;
                cost[i][j] = i64::MAX;
                for k in i..j {
                    let q = cost[i][k]
                        .saturating_add(cost[k + 1][j])
                        .saturating_add(p[i] * p[k + 1] * p[j + 1]);
                    if q < cost[i][j] {
                        cost[i][j] = q;
                        split[i][j] = k;
                    }
                }
            }
        }
        chain(e, &ms, &split, 0, n - 1)?
    };
    reshape(e, y, shape)
}

/// The product of `ms[i..=j]` split as the matrix chain order says.
fn chain(
    e: &mut Emitter<'_>,
    ms: &[ValueId],
    split: &[Vec<usize>],
    i: usize,
    j: usize,
) -> Result<ValueId> {
    if i == j {
        return Ok(ms[i]);
    }
    let k = split[i][j];
    let x = chain(e, ms, split, i, k)?;
    let y = chain(e, ms, split, k + 1, j)?;
    e.push(Op::Matmul, vec![Operand::Value(x), Operand::Value(y)])
}

/// `linalg_cross` as PyTorch's CPU kernel computes it, in the dtype:
/// `(a1·b2 - a2·b1, a2·b0 - a0·b2, a0·b1 - a1·b0)` along `dim`, the other
/// dims broadcast.
fn cross(e: &mut Emitter<'_>, a: ValueId, b: ValueId, dim: i64) -> Result<ValueId> {
    let d = wrap_dim(dim, e.ty(a).rank())? as i64;
    let part = |e: &mut Emitter<'_>, x: ValueId, k: i64| {
        e.push(
            Op::Narrow {
                dim: d,
                start: k,
                length: 1,
            },
            vec![Operand::Value(x)],
        )
    };
    let (a0, a1, a2) = (part(e, a, 0)?, part(e, a, 1)?, part(e, a, 2)?);
    let (b0, b1, b2) = (part(e, b, 0)?, part(e, b, 1)?, part(e, b, 2)?);
    let term = |e: &mut Emitter<'_>, x: ValueId, y: ValueId, u: ValueId, v: ValueId| {
        let l = e.binary(BinaryOp::Mul, x, y)?;
        let r = e.binary(BinaryOp::Mul, u, v)?;
        e.binary(BinaryOp::Sub, l, r)
    };
    let c0 = term(e, a1, b2, a2, b1)?;
    let c1 = term(e, a2, b0, a0, b2)?;
    let c2 = term(e, a0, b1, a1, b0)?;
    e.push(
        Op::Cat { dim: d },
        vec![Operand::Value(c0), Operand::Value(c1), Operand::Value(c2)],
    )
}

/// `cdist` computed directly, as PyTorch's CPU kernel does for every `p`
/// (its matrix-product form for `p = 2` with more than 25 rows rounds
/// differently): the `p`-norm of `x1[..., i, None, :] - x2[..., None, j, :]`
/// along the last dim (`linalg_vector_norm`: `p = 0` counts nonzeros,
/// `inf` takes the largest); zeros where there are no columns.
fn cdist(e: &mut Emitter<'_>, x1: ValueId, x2: ValueId, p: f64) -> Result<ValueId> {
    let u = e.push(Op::Unsqueeze { dim: -2 }, vec![Operand::Value(x1)])?;
    let v = e.push(Op::Unsqueeze { dim: -3 }, vec![Operand::Value(x2)])?;
    let diff = e.binary(BinaryOp::Sub, u, v)?;
    let ty = e.ty(diff).clone();
    if ty.shape.last() == Some(&0) {
        return e.push(
            Op::Full {
                shape: ty.shape[..ty.rank() - 1].to_vec(),
                value: Scalar::Float(0.0),
                dtype: Some(ty.dtype),
                device: Some(ty.device),
            },
            vec![],
        );
    }
    e.push(
        Op::LinalgVectorNorm {
            ord: Scalar::Float(p),
            dims: Some(vec![-1]),
            keepdim: false,
            dtype: None,
        },
        vec![Operand::Value(diff)],
    )
}

/// `x` normalized by per-row statistics, in opmath: `x·alpha + beta` with
/// `alpha = rsqrt(var + eps)·weight` and `beta = bias - mean·alpha`, as
/// PyTorch's batch_norm CPU kernel computes it. `mean` and `var`
/// broadcast against `x`; `weight` and `bias` are per channel (dim 1).
#[allow(clippy::too_many_arguments)]
fn affine_normalize(
    e: &mut Emitter<'_>,
    xf: ValueId,
    mean: ValueId,
    var: ValueId,
    weight: Option<ValueId>,
    bias: Option<ValueId>,
    eps: f64,
    stats_shape: Vec<i64>,
) -> Result<ValueId> {
    let acc = e.ty(xf).dtype;
    let rank = e.ty(xf).rank();
    let channels = |e: &mut Emitter<'_>, p: ValueId| -> Result<ValueId> {
        let pf = e.cast(p, acc)?;
        let mut shape = vec![e.ty(pf).numel()];
        shape.extend(std::iter::repeat_n(1, rank.saturating_sub(2)));
        reshape(e, pf, shape)
    };
    let mean = reshape(e, mean, stats_shape.clone())?;
    let var = reshape(e, var, stats_shape)?;
    let var_eps = e.binary(BinaryOp::Add, var, f(eps))?;
    let mut alpha = e.unary(UnaryOp::Rsqrt, var_eps)?;
    if let Some(w) = weight {
        let w = channels(e, w)?;
        alpha = e.binary(BinaryOp::Mul, alpha, w)?;
    }
    let shift = e.binary(BinaryOp::Mul, mean, alpha)?;
    let beta = match bias {
        Some(b) => {
            let b = channels(e, b)?;
            e.binary(BinaryOp::Sub, b, shift)?
        }
        None => e.unary(UnaryOp::Neg, shift)?,
    };
    let scaled = e.binary(BinaryOp::Mul, xf, alpha)?;
    e.binary(BinaryOp::Add, scaled, beta)
}

/// The mean over `dims` (kept) and the biased variance about it.
fn moments(e: &mut Emitter<'_>, x: ValueId, dims: Vec<i64>) -> Result<(ValueId, ValueId)> {
    let mean_of = |e: &mut Emitter<'_>, v: ValueId| {
        e.push(
            Op::Mean {
                dims: Some(dims.clone()),
                keepdim: true,
                dtype: None,
            },
            vec![Operand::Value(v)],
        )
    };
    let mean = mean_of(e, x)?;
    let centered = e.binary(BinaryOp::Sub, x, mean)?;
    let sq = e.binary(BinaryOp::Mul, centered, centered)?;
    let var = mean_of(e, sq)?;
    Ok((mean, var))
}

/// The normalizations, in opmath, rounded once to the input's dtype:
/// `rms_norm` (`x · rsqrt(mean(x²) + eps)`, then the weight);
/// `group_norm` (each group's mean and biased variance); `batch_norm`
/// and `instance_norm` (running or batch statistics per channel, or per
/// sample and channel); `normalize` (`x / max(‖x‖_p, eps)`, the norm
/// rounded to the input's dtype first, as PyTorch's `norm` returns it).
pub fn norms(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = nth(operands, 0)?;
    let x_ty = e.ty(x).clone();
    let d = x_ty.dtype;
    if !computable_float(d) {
        return Ok(None);
    }
    let acc = d.opmath();
    let xf = e.cast(x, acc)?;
    let rank = x_ty.rank() as i64;
    let y = match op {
        Op::RmsNorm {
            normalized_shape,
            eps,
        } => {
            let n = normalized_shape.len() as i64;
            let sq = e.binary(BinaryOp::Mul, xf, xf)?;
            let ms = e.push(
                Op::Mean {
                    dims: Some((-n..0).collect()),
                    keepdim: true,
                    dtype: None,
                },
                vec![Operand::Value(sq)],
            )?;
            // PyTorch holds a given eps in the input's dtype, and defaults
            // to the opmath dtype's machine epsilon.
            let eps = match eps {
                Some(F64(v)) => {
                    let held = e.push(
                        Op::Full {
                            shape: vec![],
                            value: Scalar::Float(*v),
                            dtype: Some(d),
                            device: Some(x_ty.device),
                        },
                        vec![],
                    )?;
                    Operand::Value(e.cast(held, acc)?)
                }
                None => f(acc.finfo()?.eps),
            };
            let ms_eps = e.binary(BinaryOp::Add, ms, eps)?;
            let r = e.unary(UnaryOp::Rsqrt, ms_eps)?;
            let mut y = e.binary(BinaryOp::Mul, xf, r)?;
            if let Some(w) = optional(operands, 1) {
                let wf = e.cast(w, acc)?;
                y = e.binary(BinaryOp::Mul, y, wf)?;
            }
            y
        }
        Op::GroupNorm {
            num_groups,
            eps: F64(eps),
            ..
        } => {
            let (n, c) = (x_ty.shape[0], x_ty.shape[1]);
            let spatial: i64 = x_ty.shape[2..].iter().product();
            let per_group = c / num_groups * spatial;
            let grouped = reshape(e, xf, vec![n, *num_groups, per_group])?;
            let (mean, var) = moments(e, grouped, vec![2])?;
            let var_eps = e.binary(BinaryOp::Add, var, f(*eps))?;
            let rstd = e.unary(UnaryOp::Rsqrt, var_eps)?;
            let centered = e.binary(BinaryOp::Sub, grouped, mean)?;
            let normed = e.binary(BinaryOp::Mul, centered, rstd)?;
            let mut y = reshape(e, normed, x_ty.shape.clone())?;
            let mut pshape = vec![c];
            pshape.extend(std::iter::repeat_n(1, x_ty.rank() - 2));
            for (i, combine) in [(1, BinaryOp::Mul), (2, BinaryOp::Add)] {
                if let Some(p) = optional(operands, i) {
                    let pf = e.cast(p, acc)?;
                    let pf = reshape(e, pf, pshape.clone())?;
                    y = e.binary(combine, y, pf)?;
                }
            }
            y
        }
        Op::BatchNorm {
            training,
            eps: F64(eps),
            ..
        }
        | Op::InstanceNorm {
            use_input_stats: training,
            eps: F64(eps),
            ..
        } => {
            let instance = matches!(op, Op::InstanceNorm { .. });
            let c = x_ty.shape[1];
            let (mean, var, stats_shape) = if *training {
                let dims: Vec<i64> = if instance {
                    (2..rank).collect()
                } else {
                    std::iter::once(0).chain(2..rank).collect()
                };
                let (mean, var) = moments(e, xf, dims)?;
                let shape = e.ty(mean).shape.clone();
                (mean, var, shape)
            } else {
                let rm = e.cast(nth(operands, 3)?, acc)?;
                let rv = e.cast(nth(operands, 4)?, acc)?;
                let mut shape = vec![c];
                shape.extend(std::iter::repeat_n(1, x_ty.rank() - 2));
                (rm, rv, shape)
            };
            affine_normalize(
                e,
                xf,
                mean,
                var,
                optional(operands, 1),
                optional(operands, 2),
                *eps,
                stats_shape,
            )?
        }
        Op::Normalize {
            p: F64(p),
            dim,
            eps: F64(eps),
        } => {
            let norm = p_norm(e, xf, *p, vec![*dim], true)?;
            let norm = e.cast(norm, d)?;
            let floor = e.push(
                Op::Clamp {
                    min: Some(Scalar::Float(*eps)),
                    max: None,
                },
                vec![Operand::Value(norm)],
            )?;
            return one(e.binary(BinaryOp::Div, x, floor)?);
        }
        _ => return Ok(None),
    };
    one(e.cast(y, d)?)
}

/// `‖x‖_p` over `dims` (PyTorch's `linalg.vector_norm`), in `x`'s dtype:
/// `p = 2` is `sqrt(Σ x²)`, 1 `Σ|x|`, ±inf the largest or smallest `|x|`,
/// 0 the count of nonzeros, else `(Σ|x|^p)^(1/p)`.
fn p_norm(
    e: &mut Emitter<'_>,
    x: ValueId,
    p: f64,
    dims: Vec<i64>,
    keepdim: bool,
) -> Result<ValueId> {
    let d = e.ty(x).dtype;
    let reduce =
        |e: &mut Emitter<'_>, r: ReduceOp, v: ValueId| e.reduce(r, v, dims.clone(), keepdim, None);
    let a = e.unary(UnaryOp::Abs, x)?;
    if p == 2.0 {
        let sq = e.binary(BinaryOp::Mul, x, x)?;
        let s = reduce(e, ReduceOp::Sum, sq)?;
        e.unary(UnaryOp::Sqrt, s)
    } else if p == 1.0 {
        reduce(e, ReduceOp::Sum, a)
    } else if p == f64::INFINITY {
        reduce(e, ReduceOp::Amax, a)
    } else if p == f64::NEG_INFINITY {
        reduce(e, ReduceOp::Amin, a)
    } else if p == 0.0 {
        let nz = e.binary(BinaryOp::Ne, x, f(0.0))?;
        let nz = e.cast(nz, d)?;
        reduce(e, ReduceOp::Sum, nz)
    } else {
        let powered = e.binary(BinaryOp::Pow, a, f(p))?;
        let s = reduce(e, ReduceOp::Sum, powered)?;
        e.binary(BinaryOp::Pow, s, f(1.0 / p))
    }
}

/// A loss's reduction: the losses as they are, their mean, their sum, or
/// (`kl_div`'s `batchmean`) their sum over the batch size `batch`.
fn reduce_loss(
    e: &mut Emitter<'_>,
    loss: ValueId,
    reduction: LossReduction,
    batch: i64,
) -> Result<ValueId> {
    let all: Vec<i64> = (0..e.ty(loss).rank() as i64).collect();
    match reduction {
        LossReduction::None => Ok(loss),
        LossReduction::Mean => e.push(
            Op::Mean {
                dims: None,
                keepdim: false,
                dtype: None,
            },
            vec![Operand::Value(loss)],
        ),
        LossReduction::Sum => e.reduce(ReduceOp::Sum, loss, all, false, None),
        LossReduction::Batchmean => {
            let s = e.reduce(ReduceOp::Sum, loss, all, false, None)?;
            e.binary(BinaryOp::Div, s, Operand::Scalar(Scalar::Int(batch)))
        }
    }
}

/// The dtype PyTorch promotes these tensors to.
fn promoted(e: &Emitter<'_>, values: &[ValueId]) -> Result<DType> {
    let operands: Vec<crate::promotion::Operand> = values
        .iter()
        .map(|v| crate::promotion::Operand::tensor(e.ty(*v).dtype, e.ty(*v).rank()))
        .collect();
    crate::promotion::result_type(&operands, Default::default())
}

/// `x` broadcast to `shape` (nothing when it has it).
fn broadcast_to(e: &mut Emitter<'_>, x: ValueId, shape: &[i64]) -> Result<ValueId> {
    if e.ty(x).shape == shape {
        return Ok(x);
    }
    e.push(
        Op::Expand {
            shape: shape.to_vec(),
        },
        vec![Operand::Value(x)],
    )
}

/// The classes `0..c` as int64, shaped to run along `class_dim` of a
/// tensor of rank `rank` (`[c, 1, ..., 1]`).
fn classes(e: &mut Emitter<'_>, c: i64, rank: usize, class_dim: usize) -> Result<ValueId> {
    let a = e.push(
        Op::Arange {
            start: Scalar::Int(0),
            end: Scalar::Int(c),
            step: Scalar::Int(1),
            dtype: None,
            device: None,
        },
        vec![],
    )?;
    let mut shape = vec![c];
    shape.extend(std::iter::repeat_n(1, rank - class_dim - 1));
    reshape(e, a, shape)
}

/// `Σ_class where(onehot, v, 0)`: the entry of `v` (broadcast along the
/// class dim) at each target's class; exact, as one term is picked.
fn pick(e: &mut Emitter<'_>, onehot: ValueId, v: ValueId, class_dim: usize) -> Result<ValueId> {
    let picked = select(e, onehot, Operand::Value(v), f(0.0))?;
    e.reduce(ReduceOp::Sum, picked, vec![class_dim as i64], false, None)
}

/// `nll_loss`'s parts for input `x` `[N, C, ...]` (or `[C]`) and class
/// indices `t`: each target's `-x·w` (0 where ignored), and the weight
/// each target carries (`w` at its class, 0 where ignored), in `x`'s
/// dtype.
fn nll_terms(
    e: &mut Emitter<'_>,
    x: ValueId,
    t: ValueId,
    w: Option<ValueId>,
    ignore_index: i64,
) -> Result<(ValueId, ValueId, ValueId)> {
    let rank = e.ty(x).rank();
    let class_dim = if rank == 1 { 0 } else { 1 };
    let c = e.ty(x).shape[class_dim];
    let d = e.ty(x).dtype;
    let tu = e.push(
        Op::Unsqueeze {
            dim: class_dim as i64,
        },
        vec![Operand::Value(t)],
    )?;
    let tu = e.cast(tu, DType::I64)?;
    let cls = classes(e, c, rank, class_dim)?;
    let onehot = e.binary(BinaryOp::Eq, tu, cls)?;
    let picked = pick(e, onehot, x, class_dim)?;
    let valid = e.binary(BinaryOp::Ne, t, Operand::Scalar(Scalar::Int(ignore_index)))?;
    let weight = match w {
        Some(w) => {
            let wc = reshape(e, w, {
                let mut s = vec![c];
                s.extend(std::iter::repeat_n(1, rank - class_dim - 1));
                s
            })?;
            let wt = pick(e, onehot, wc, class_dim)?;
            select(e, valid, Operand::Value(wt), f(0.0))?
        }
        None => e.cast(valid, d)?,
    };
    let neg = e.unary(UnaryOp::Neg, picked)?;
    let loss = if w.is_some() {
        e.binary(BinaryOp::Mul, neg, weight)?
    } else {
        neg
    };
    let loss = select(e, valid, Operand::Value(loss), f(0.0))?;
    Ok((loss, weight, valid))
}

/// The losses, `cosine_similarity` and `pairwise_distance`, as PyTorch's
/// ATen functions compute them (each step in the promoted dtype, so f16
/// rounds as PyTorch's kernels do), then reduced.
pub fn losses(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = nth(operands, 0)?;
    let batch = e.ty(x).shape.first().copied().unwrap_or(1);
    let tensors: Vec<ValueId> = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Value(v) => Some(*v),
            _ => None,
        })
        .collect();
    let d = promoted(e, &tensors)?;
    let input_dtype = e.ty(x).dtype;
    let bin = |e: &mut Emitter<'_>, op: BinaryOp, a: ValueId, b: Operand| e.binary(op, a, b);
    let v = Operand::Value;
    let (loss, reduction) = match op {
        Op::MseLoss { reduction } => {
            let diff = e.binary(BinaryOp::Sub, x, nth(operands, 1)?)?;
            (e.binary(BinaryOp::Mul, diff, diff)?, *reduction)
        }
        Op::L1Loss { reduction } => {
            let diff = e.binary(BinaryOp::Sub, x, nth(operands, 1)?)?;
            (e.unary(UnaryOp::Abs, diff)?, *reduction)
        }
        Op::SmoothL1Loss {
            reduction,
            beta: F64(beta),
        }
        | Op::HuberLoss {
            reduction,
            delta: F64(beta),
        } => {
            let huber = matches!(op, Op::HuberLoss { .. });
            let diff = e.binary(BinaryOp::Sub, x, nth(operands, 1)?)?;
            let z = e.unary(UnaryOp::Abs, diff)?;
            let loss = if !huber && *beta == 0.0 {
                z
            } else {
                let small = e.binary(BinaryOp::Lt, z, f(*beta))?;
                let half = e.binary(BinaryOp::Mul, z, f(0.5))?;
                let sq = e.binary(BinaryOp::Mul, half, z)?;
                let (inner, outer) = if huber {
                    let shifted = e.binary(BinaryOp::Sub, z, f(0.5 * beta))?;
                    (sq, e.binary(BinaryOp::Mul, shifted, f(*beta))?)
                } else {
                    let q = e.binary(BinaryOp::Div, sq, f(*beta))?;
                    (q, e.binary(BinaryOp::Sub, z, f(0.5 * beta))?)
                };
                select(e, small, v(inner), v(outer))?
            };
            (
                e.cast(loss, if huber { input_dtype } else { d })?,
                *reduction,
            )
        }
        Op::BinaryCrossEntropy { reduction } => {
            let t = nth(operands, 1)?;
            let clamp_log = |e: &mut Emitter<'_>, l: ValueId| {
                e.push(
                    Op::Clamp {
                        min: Some(Scalar::Float(-100.0)),
                        max: None,
                    },
                    vec![Operand::Value(l)],
                )
            };
            let negx = e.unary(UnaryOp::Neg, x)?;
            let l1p = e.unary(UnaryOp::Log1p, negx)?;
            let l1p = clamp_log(e, l1p)?;
            let lx = e.unary(UnaryOp::Log, x)?;
            let lx = clamp_log(e, lx)?;
            let tm1 = bin(e, BinaryOp::Sub, t, f(1.0))?;
            let a = e.binary(BinaryOp::Mul, tm1, l1p)?;
            let b = e.binary(BinaryOp::Mul, t, lx)?;
            let mut loss = e.binary(BinaryOp::Sub, a, b)?;
            if let Some(w) = optional(operands, 2) {
                loss = e.binary(BinaryOp::Mul, loss, w)?;
                loss = e.cast(loss, input_dtype)?;
            }
            (loss, *reduction)
        }
        Op::BinaryCrossEntropyWithLogits { reduction } => {
            let t = nth(operands, 1)?;
            let mut ls = e.push(Op::Logsigmoid, vec![v(x)])?;
            if let Some(pw) = optional(operands, 3) {
                let pm1 = bin(e, BinaryOp::Sub, pw, f(1.0))?;
                let lw = e.binary(BinaryOp::Mul, pm1, t)?;
                let lw = bin(e, BinaryOp::Add, lw, Operand::Scalar(Scalar::Int(1)))?;
                ls = e.binary(BinaryOp::Mul, ls, lw)?;
            }
            let omt = e.binary(BinaryOp::Sub, Operand::Scalar(Scalar::Int(1)), t)?;
            let a = e.binary(BinaryOp::Mul, omt, x)?;
            let mut loss = e.binary(BinaryOp::Sub, a, ls)?;
            if let Some(w) = optional(operands, 2) {
                loss = e.binary(BinaryOp::Mul, loss, w)?;
            }
            (e.cast(loss, d)?, *reduction)
        }
        Op::KlDiv {
            reduction,
            log_target,
        } => {
            let t = nth(operands, 1)?;
            let loss = if *log_target {
                let et = e.unary(UnaryOp::Exp, t)?;
                let diff = e.binary(BinaryOp::Sub, t, x)?;
                e.binary(BinaryOp::Mul, et, diff)?
            } else {
                // xlogy(t, t): 0 where t is 0 (NaN stays NaN).
                let lt = e.unary(UnaryOp::Log, t)?;
                let tl = e.binary(BinaryOp::Mul, t, lt)?;
                let zero = e.binary(BinaryOp::Eq, t, f(0.0))?;
                let xlogy = select(e, zero, f(0.0), v(tl))?;
                let tx = e.binary(BinaryOp::Mul, t, x)?;
                e.binary(BinaryOp::Sub, xlogy, tx)?
            };
            (e.cast(loss, d)?, *reduction)
        }
        Op::SoftMarginLoss { reduction } => {
            let t = nth(operands, 1)?;
            let negx = e.unary(UnaryOp::Neg, x)?;
            let p = e.binary(BinaryOp::Mul, negx, t)?;
            let ex = e.unary(UnaryOp::Exp, p)?;
            let loss = e.unary(UnaryOp::Log1p, ex)?;
            (e.cast(loss, input_dtype)?, *reduction)
        }
        Op::MarginRankingLoss {
            margin: F64(margin),
            reduction,
        } => {
            let (x2, t) = (nth(operands, 1)?, nth(operands, 2)?);
            let negt = e.unary(UnaryOp::Neg, t)?;
            let diff = e.binary(BinaryOp::Sub, x, x2)?;
            let p = e.binary(BinaryOp::Mul, negt, diff)?;
            let m = e.binary(BinaryOp::Add, p, f(*margin))?;
            let loss = e.push(
                Op::Clamp {
                    min: Some(Scalar::Int(0)),
                    max: None,
                },
                vec![v(m)],
            )?;
            (e.cast(loss, d)?, *reduction)
        }
        Op::HingeEmbeddingLoss {
            margin: F64(margin),
            reduction,
        } => {
            let t = nth(operands, 1)?;
            let t = e.cast(t, input_dtype)?;
            let mx = e.binary(BinaryOp::Sub, f(*margin), x)?;
            let mc = e.push(
                Op::Clamp {
                    min: Some(Scalar::Int(0)),
                    max: None,
                },
                vec![v(mx)],
            )?;
            let not_pos = e.binary(BinaryOp::Ne, t, f(1.0))?;
            let not_neg = e.binary(BinaryOp::Ne, t, f(-1.0))?;
            let om = select(e, not_pos, v(mc), f(0.0))?;
            let os = select(e, not_neg, v(x), f(0.0))?;
            let loss = e.binary(BinaryOp::Add, om, os)?;
            (e.cast(loss, input_dtype)?, *reduction)
        }
        Op::PoissonNllLoss {
            log_input,
            full,
            eps: F64(eps),
            reduction,
        } => {
            let t = nth(operands, 1)?;
            let mut loss = if *log_input {
                let ex = e.unary(UnaryOp::Exp, x)?;
                let tx = e.binary(BinaryOp::Mul, t, x)?;
                e.binary(BinaryOp::Sub, ex, tx)?
            } else {
                let xe = e.binary(BinaryOp::Add, x, f(*eps))?;
                let l = e.unary(UnaryOp::Log, xe)?;
                let tl = e.binary(BinaryOp::Mul, t, l)?;
                e.binary(BinaryOp::Sub, x, tl)?
            };
            if *full {
                // Stirling's approximation of log(t!), for t > 1.
                let lt = e.unary(UnaryOp::Log, t)?;
                let tlt = e.binary(BinaryOp::Mul, t, lt)?;
                let s = e.binary(BinaryOp::Sub, tlt, t)?;
                let tp = e.binary(BinaryOp::Mul, t, f(2.0 * std::f64::consts::PI))?;
                let ltp = e.unary(UnaryOp::Log, tp)?;
                let half = e.binary(BinaryOp::Mul, ltp, f(0.5))?;
                let stirling = e.binary(BinaryOp::Add, s, half)?;
                let small = e.binary(BinaryOp::Le, t, f(1.0))?;
                let stirling = select(e, small, f(0.0), v(stirling))?;
                loss = e.binary(BinaryOp::Add, loss, stirling)?;
            }
            (e.cast(loss, d)?, *reduction)
        }
        Op::CosineSimilarity { dim, eps: F64(eps) } => {
            let x2 = nth(operands, 1)?;
            let shape = crate::view::broadcast_shapes(&e.ty(x).shape, &e.ty(x2).shape)?;
            // Each operand is normalized in its own dtype (PyTorch's
            // order); their product promotes.
            let a = broadcast_to(e, x, &shape)?;
            let b = broadcast_to(e, x2, &shape)?;
            let unit = |e: &mut Emitter<'_>, t: ValueId| -> Result<ValueId> {
                let own = e.ty(t).dtype;
                let tf = e.cast(t, own.opmath())?;
                let n = p_norm(e, tf, 2.0, vec![*dim], true)?;
                let n = e.cast(n, own)?;
                let n = e.push(
                    Op::Clamp {
                        min: Some(Scalar::Float(*eps)),
                        max: None,
                    },
                    vec![v(n)],
                )?;
                e.binary(BinaryOp::Div, t, n)
            };
            let ua = unit(e, a)?;
            let ub = unit(e, b)?;
            let p = e.binary(BinaryOp::Mul, ua, ub)?;
            let s = e.reduce(ReduceOp::Sum, p, vec![*dim], false, None)?;
            return one(e.cast(s, d)?);
        }
        Op::PairwiseDistance {
            p,
            eps: F64(eps),
            keepdim,
        } => {
            let x2 = nth(operands, 1)?;
            let diff = e.binary(BinaryOp::Sub, x, x2)?;
            let shifted = e.binary(BinaryOp::Add, diff, f(*eps))?;
            let shifted = e.cast(shifted, d)?;
            let sf = e.cast(shifted, d.opmath())?;
            let n = p_norm(e, sf, p.0, vec![-1], *keepdim)?;
            return one(e.cast(n, d)?);
        }
        Op::NllLoss {
            reduction,
            ignore_index,
        } => {
            let t = nth(operands, 1)?;
            let (loss, weight, _) = nll_terms(e, x, t, optional(operands, 2), *ignore_index)?;
            return one(nll_reduce(e, loss, weight, *reduction)?);
        }
        Op::CrossEntropy {
            reduction,
            ignore_index,
            label_smoothing: F64(ls),
        } => {
            let t = nth(operands, 1)?;
            let rank = e.ty(x).rank();
            let class_dim = if rank == 1 { 0 } else { 1 };
            let c = e.ty(x).shape[class_dim];
            let lsm = e.push(
                Op::LogSoftmax {
                    dim: class_dim as i64,
                    dtype: None,
                },
                vec![v(x)],
            )?;
            let w = optional(operands, 2);
            let wb = match w {
                Some(w) => {
                    let mut s = vec![c];
                    s.extend(std::iter::repeat_n(1, rank - class_dim - 1));
                    Some(reshape(e, w, s)?)
                }
                None => None,
            };
            let all: Vec<i64> = (0..rank as i64).collect();
            if e.ty(t).shape == e.ty(x).shape && e.ty(t).dtype.is_floating_point() {
                // Class probabilities.
                let tt = if *ls > 0.0 {
                    let a = e.binary(BinaryOp::Mul, t, f(1.0 - ls))?;
                    e.binary(BinaryOp::Add, a, f(ls / c as f64))?
                } else {
                    t
                };
                let mut prod = e.binary(BinaryOp::Mul, lsm, tt)?;
                if let Some(wb) = wb {
                    prod = e.binary(BinaryOp::Mul, prod, wb)?;
                }
                let y = match reduction {
                    LossReduction::None => {
                        let s =
                            e.reduce(ReduceOp::Sum, prod, vec![class_dim as i64], false, None)?;
                        e.unary(UnaryOp::Neg, s)?
                    }
                    _ => {
                        let s = e.reduce(ReduceOp::Sum, prod, all, false, None)?;
                        let s = e.unary(UnaryOp::Neg, s)?;
                        if *reduction == LossReduction::Mean {
                            let rows = e.ty(x).numel() as f64 / c as f64;
                            let rows = if rows == 0.0 { f64::NAN } else { rows };
                            e.binary(BinaryOp::Div, s, f(rows))?
                        } else {
                            s
                        }
                    }
                };
                return one(e.cast(y, d)?);
            }
            let (loss, weight, valid) = nll_terms(e, lsm, t, w, *ignore_index)?;
            let nll = nll_reduce(e, loss, weight, *reduction)?;
            if *ls <= 0.0 {
                return one(nll);
            }
            let weighted = match wb {
                Some(wb) => e.binary(BinaryOp::Mul, lsm, wb)?,
                None => lsm,
            };
            let s = e.reduce(ReduceOp::Sum, weighted, vec![class_dim as i64], false, None)?;
            let smooth = e.unary(UnaryOp::Neg, s)?;
            let smooth = select(e, valid, v(smooth), f(0.0))?;
            let ret = match reduction {
                LossReduction::None => smooth,
                _ => {
                    let dims: Vec<i64> = (0..e.ty(smooth).rank() as i64).collect();
                    let total = e.reduce(ReduceOp::Sum, smooth, dims.clone(), false, None)?;
                    if *reduction == LossReduction::Mean {
                        let wsum = e.reduce(ReduceOp::Sum, weight, dims, false, None)?;
                        e.binary(BinaryOp::Div, total, wsum)?
                    } else {
                        total
                    }
                }
            };
            let a = e.binary(BinaryOp::Mul, nll, f(1.0 - ls))?;
            let b = e.binary(BinaryOp::Mul, ret, f(ls / c as f64))?;
            return one(e.binary(BinaryOp::Add, a, b)?);
        }
        _ => return Ok(None),
    };
    one(reduce_loss(e, loss, reduction, batch)?)
}

/// `nll_loss`'s reduction: the losses, their sum, or their sum over the
/// total weight of the targets not ignored (NaN when there is none, as
/// PyTorch's 0/0).
fn nll_reduce(
    e: &mut Emitter<'_>,
    loss: ValueId,
    weight: ValueId,
    reduction: LossReduction,
) -> Result<ValueId> {
    let dims: Vec<i64> = (0..e.ty(loss).rank() as i64).collect();
    match reduction {
        LossReduction::None => Ok(loss),
        LossReduction::Sum | LossReduction::Batchmean => {
            e.reduce(ReduceOp::Sum, loss, dims, false, None)
        }
        LossReduction::Mean => {
            let total = e.reduce(ReduceOp::Sum, loss, dims.clone(), false, None)?;
            let wsum = e.reduce(ReduceOp::Sum, weight, dims, false, None)?;
            e.binary(BinaryOp::Div, total, wsum)
        }
    }
}

/// `masked_fill`: `where(mask, value, input)` with the value converted to
/// the input's dtype first (so the result keeps it, and int64 values do
/// not pass through a float).
pub fn masked_fill(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::MaskedFill { value } = op else {
        return Ok(None);
    };
    let (x, mask) = (nth(operands, 0)?, nth(operands, 1)?);
    let d = e.ty(x).dtype;
    let value = if d.is_bool() {
        Scalar::Bool(value.to_complex() != (0.0, 0.0))
    } else if d.is_integral() && !matches!(value, Scalar::Int(_) | Scalar::UInt(_)) {
        Scalar::Int(value.to_f64().trunc() as i64)
    } else {
        *value
    };
    let y = select(e, mask, Operand::Scalar(value), Operand::Value(x))?;
    one(e.cast(y, d)?)
}

/// `one_hot`: `x[..., None] == arange(num_classes)`, as int64.
pub fn one_hot(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::OneHot { num_classes } = op else {
        return Ok(None);
    };
    let x = nth(operands, 0)?;
    let u = e.push(Op::Unsqueeze { dim: -1 }, vec![Operand::Value(x)])?;
    let cls = classes(e, *num_classes, 1, 0)?;
    let eq = e.binary(BinaryOp::Eq, u, cls)?;
    one(e.cast(eq, DType::I64)?)
}

/// `max` and `min` along a dim: `amax`/`amin` for the values and
/// `argmax`/`argmin` for the positions (both take NaN as the extreme and
/// the first position of equal values, as PyTorch's CPU kernel); bool
/// positions are found on uint8.
pub fn extreme_dim(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let (values, positions, dim, keepdim) = match op {
        Op::MaxDim { dim, keepdim } => (ReduceOp::Amax, super::ArgReduceOp::Argmax, *dim, *keepdim),
        Op::MinDim { dim, keepdim } => (ReduceOp::Amin, super::ArgReduceOp::Argmin, *dim, *keepdim),
        _ => return Ok(None),
    };
    let x = input(operands)?;
    let v = e.reduce(values, x, vec![dim], keepdim, None)?;
    let xi = if e.ty(x).dtype.is_bool() {
        e.cast(x, DType::U8)?
    } else {
        x
    };
    let i = e.push(
        Op::ArgReduce {
            op: positions,
            dim: Some(dim),
            keepdim,
        },
        vec![Operand::Value(xi)],
    )?;
    Ok(Some(vec![v, i]))
}

/// `argsort`: `sort`'s second result.
pub fn argsort(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Argsort {
        dim,
        descending,
        stable,
    } = op
    else {
        return Ok(None);
    };
    let x = input(operands)?;
    let sorted = e.push_all(
        Op::Sort {
            dim: *dim,
            descending: *descending,
            stable: *stable,
        },
        vec![Operand::Value(x)],
    )?;
    match sorted.get(1) {
        Some(i) => one(*i),
        None => Err(Error::new(ErrorKind::Arity, "sort gives two results")),
    }
}

/// `repeat_interleave`: a dim of one inserted after `dim`, expanded to
/// `repeats`, merged back (on the flattened input without `dim`).
pub fn repeat_interleave(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::RepeatInterleave { repeats, dim } = op else {
        return Ok(None);
    };
    let mut x = input(operands)?;
    let d = match dim {
        None => {
            x = e.push(Op::Reshape { shape: vec![-1] }, vec![Operand::Value(x)])?;
            0
        }
        Some(d) if e.ty(x).rank() == 0 => {
            crate::view::wrap_dim(*d, 1)?;
            x = e.push(Op::Reshape { shape: vec![1] }, vec![Operand::Value(x)])?;
            0
        }
        Some(d) => crate::view::wrap_dim(*d, e.ty(x).rank())?,
    };
    let shape = e.ty(x).shape.clone();
    let u = e.push(Op::Unsqueeze { dim: d as i64 + 1 }, vec![Operand::Value(x)])?;
    let mut wide = shape.clone();
    wide.insert(d + 1, *repeats);
    let w = e.push(Op::Expand { shape: wide }, vec![Operand::Value(u)])?;
    let mut merged = shape;
    merged[d] *= repeats;
    let y = e.push(Op::Reshape { shape: merged }, vec![Operand::Value(w)])?;
    one(copy_of(e, y)?)
}

/// `conv1d`..`conv_transpose3d`: ATen's `convolution`, with a batch dim
/// added to an unbatched input (and removed from the result), and for
/// `padding="same"` with an odd total padding the extra zero added on the
/// far side first (PyTorch's `_convolution_mode`).
pub fn conv_call(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let (
        Some(crate::spatial::Spatial::ConvCall(call)),
        Some(Operand::Value(x)),
        Some(Operand::Value(w)),
    ) = (
        crate::spatial::spatial(op),
        operands.first(),
        operands.get(1),
    )
    else {
        return Ok(None);
    };
    let (x, w) = (*x, *w);
    let lowered = crate::spatial::lower_conv_call(&call, &e.ty(x).shape, &e.ty(w).shape)?;
    let mut input = x;
    if lowered.unbatched {
        input = e.push(Op::Unsqueeze { dim: 0 }, vec![Operand::Value(input)])?;
    }
    if lowered.extra.iter().any(|p| *p != 0) {
        let pad: Vec<i64> = lowered.extra.iter().rev().flat_map(|p| [0, *p]).collect();
        input = e.push(
            Op::ConstantPadNd {
                pad,
                value: Scalar::Int(0),
            },
            vec![Operand::Value(input)],
        )?;
    }
    let conv = lowered.conv;
    let bias = operands.get(2).cloned().unwrap_or(Operand::None);
    let mut y = e.push(
        Op::Convolution {
            stride: conv.stride,
            padding: conv.padding,
            dilation: conv.dilation,
            transposed: conv.transposed,
            output_padding: conv.output_padding,
            groups: conv.groups,
        },
        vec![Operand::Value(input), Operand::Value(w), bias],
    )?;
    if lowered.unbatched {
        y = e.push(
            Op::Squeeze {
                dims: Some(vec![0]),
            },
            vec![Operand::Value(y)],
        )?;
    }
    Ok(Some(vec![y]))
}

/// `lp_pool1d/2d/3d`, as `torch.nn.functional` computes it:
/// `(sign(a)·relu(|a|)·k)^(1/p)` for `a = avg_pool(xᵖ)` and `k` the kernel's
/// size.
pub fn lp_pool(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let (Some(Operand::Value(x)), Some(crate::spatial::Spatial::Pool { pool, .. })) =
        (operands.first(), crate::spatial::spatial(op))
    else {
        return Ok(None);
    };
    let (norm_type, dims) = match op {
        Op::LpPool1d { norm_type, .. } => (norm_type.0, 1),
        Op::LpPool2d { norm_type, .. } => (norm_type.0, 2),
        Op::LpPool3d { norm_type, .. } => (norm_type.0, 3),
        _ => return Ok(None),
    };
    let kernel = crate::spatial::per_dim("kernel_size", &pool.kernel, dims)?;
    let stride = pool.stride.clone();
    if norm_type.is_infinite() {
        // ±inf: the max (or min) of |x|, as torch.nn.functional computes it.
        let magnitude = e.unary(UnaryOp::Abs, *x)?;
        let input = if norm_type > 0.0 {
            magnitude
        } else {
            e.unary(UnaryOp::Neg, magnitude)?
        };
        let (kernel_size, padding, dilation, ceil_mode) =
            (pool.kernel.clone(), vec![0], vec![1], pool.ceil_mode);
        let max = match dims {
            1 => Op::MaxPool1d {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
            2 => Op::MaxPool2d {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
            _ => Op::MaxPool3d {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
        };
        let m = e.push(max, vec![Operand::Value(input)])?;
        let y = if norm_type > 0.0 {
            m
        } else {
            e.unary(UnaryOp::Neg, m)?
        };
        return Ok(Some(vec![y]));
    }
    let powered = e.binary(BinaryOp::Pow, *x, Operand::Scalar(Scalar::Float(norm_type)))?;
    let (kernel_size, padding, ceil_mode) = (pool.kernel.clone(), vec![0], pool.ceil_mode);
    let avg = match dims {
        1 => Op::AvgPool1d {
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad: true,
        },
        2 => Op::AvgPool2d {
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad: true,
            divisor_override: None,
        },
        _ => Op::AvgPool3d {
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad: true,
            divisor_override: None,
        },
    };
    let a = e.push(avg, vec![Operand::Value(powered)])?;
    let sign = e.unary(UnaryOp::Sign, a)?;
    let magnitude = e.unary(UnaryOp::Abs, a)?;
    let magnitude = e.unary(UnaryOp::Relu, magnitude)?;
    let signed = e.binary(BinaryOp::Mul, sign, magnitude)?;
    let count: i64 = kernel.iter().product();
    let scaled = e.binary(BinaryOp::Mul, signed, Operand::Scalar(Scalar::Int(count)))?;
    let y = e.binary(
        BinaryOp::Pow,
        scaled,
        Operand::Scalar(Scalar::Float(1.0 / norm_type)),
    )?;
    Ok(Some(vec![y]))
}

/// `take_along_dim`: the input and the indices expanded to the shapes ATen
/// broadcasts them to away from `dim`, then `gather` (negative positions
/// counting from the end); without `dim`, `gather` of the flattened input
/// at the flattened indices.
pub fn take_along_dim(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::TakeAlongDim { dim } = op else {
        return Ok(None);
    };
    let (x, index) = (nth(operands, 0)?, nth(operands, 1)?);
    let (d, x, index) = match dim {
        None => {
            let flat = |e: &mut Emitter<'_>, v| {
                e.push(Op::Reshape { shape: vec![-1] }, vec![Operand::Value(v)])
            };
            (0, flat(e, x)?, flat(e, index)?)
        }
        Some(dim) => {
            let (d, index_shape, input_shape) =
                crate::infer::take_along_dim_shapes(&e.ty(x).shape, &e.ty(index).shape, *dim)?;
            let grown = |e: &mut Emitter<'_>, v, shape: Vec<i64>| {
                if e.ty(v).shape == shape {
                    Ok(v)
                } else {
                    e.push(Op::Expand { shape }, vec![Operand::Value(v)])
                }
            };
            (d, grown(e, x, input_shape)?, grown(e, index, index_shape)?)
        }
    };
    // Negative positions count from the end (PyTorch's expanded-index
    // gather wraps them); gather checks the rest.
    let size = e.ty(x).shape.get(d).copied().unwrap_or(1);
    let negative = e.binary(BinaryOp::Lt, index, Operand::Scalar(Scalar::Int(0)))?;
    let wrapped = e.binary(BinaryOp::Add, index, Operand::Scalar(Scalar::Int(size)))?;
    let index = select(e, negative, Operand::Value(wrapped), Operand::Value(index))?;
    let gather = Op::Gather {
        dim: d as i64,
        sparse_grad: false,
    };
    one(e.push(gather, vec![Operand::Value(x), Operand::Value(index)])?)
}

/// `einsum`, as `torch.einsum` computes it without opt_einsum: every
/// operand's diagonals taken (a subscript repeated in it), then permuted
/// and unsqueezed to the equation's lined-up dims
/// ([`Equation`](crate::einsum::Equation)); dims no later operand has
/// summed out of the first (or squeezed, when of size 1); then each
/// operand in turn multiplied in, its last dims contracted by one batched
/// `matmul` (`sumproduct_pair`), a `dot` when nothing else is left, or a
/// `mul` when nothing is contracted. The same `sum`s, `mul`s and products
/// as PyTorch's give its result dtypes (an integer `sum` is int64). An
/// operand with no elements gives zeros of the first operand's dtype.
pub fn einsum(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Einsum { equation, .. } = op else {
        return Ok(None);
    };
    let vals = (0..operands.len())
        .map(|i| nth(operands, i))
        .collect::<Result<Vec<_>>>()?;
    let shapes: Vec<Vec<i64>> = vals.iter().map(|v| e.ty(*v).shape.clone()).collect();
    let shape_refs: Vec<&[i64]> = shapes.iter().map(|s| &s[..]).collect();
    let eq = crate::einsum::Equation::new(equation, &shape_refs)?;
    if shapes.iter().any(|s| s.contains(&0)) {
        let first = e.ty(vals[0]).clone();
        let zeros = Op::Full {
            shape: eq.out_shape(),
            value: Scalar::Int(0),
            dtype: Some(first.dtype),
            device: Some(first.device),
        };
        return one(e.push(zeros, vec![])?);
    }
    let all = eq.dims.len();
    // Each operand lined up: its dims in the equation's order, size-1 dims
    // where it lacks one.
    let mut aligned = Vec::new();
    for ((v, pos), diagonals) in vals.iter().zip(&eq.positions).zip(&eq.diagonals) {
        let mut v = *v;
        for diagonal in diagonals {
            // x[..., arange(n), ..., arange(n), ...]: the diagonal.
            let arange = Op::Arange {
                start: Scalar::Int(0),
                end: Scalar::Int(diagonal.size),
                step: Scalar::Int(1),
                dtype: Some(DType::I64),
                device: Some(e.ty(v).device),
            };
            let positions = e.push(arange, vec![])?;
            let last = *diagonal.dims.last().expect("a diagonal has dims");
            let mut index = vec![Operand::Value(v)];
            index.extend((0..=last).map(|d| {
                if diagonal.dims.contains(&d) {
                    Operand::Value(positions)
                } else {
                    Operand::None
                }
            }));
            v = e.push(Op::Index, index)?;
        }
        let mut order: Vec<usize> = (0..pos.len()).collect();
        order.sort_by_key(|&i| pos[i]);
        if order.iter().enumerate().any(|(i, &o)| i != o) {
            let dims = order.iter().map(|&o| o as i64).collect();
            v = e.push(Op::Permute { dims }, vec![Operand::Value(v)])?;
        }
        for g in 0..all {
            if !pos.contains(&g) {
                v = e.push(Op::Unsqueeze { dim: g as i64 }, vec![Operand::Value(v)])?;
            }
        }
        aligned.push(v);
    }
    let last = eq.last_operand();
    let size = |e: &Emitter<'_>, v: ValueId, i: usize| e.ty(v).shape[i];
    let squeeze = |e: &mut Emitter<'_>, v: ValueId, i: usize| {
        e.push(
            Op::Squeeze {
                dims: Some(vec![i as i64]),
            },
            vec![Operand::Value(v)],
        )
    };
    let sum = |e: &mut Emitter<'_>, v: ValueId, i: usize, keepdim: bool| {
        e.reduce(ReduceOp::Sum, v, vec![i as i64], keepdim, None)
    };
    // The lined-up dims the result still has, in order.
    let mut present: Vec<usize> = (0..all).collect();
    let mut result = aligned[0];
    for g in eq.out_dims..all {
        if last[g] == Some(0) {
            let i = present.iter().position(|&p| p == g).expect("present");
            result = if size(e, result, i) == 1 {
                squeeze(e, result, i)?
            } else {
                sum(e, result, i, false)?
            };
            present.remove(i);
        }
    }
    for (k, &operand) in aligned.iter().enumerate().skip(1) {
        let mut operand = operand;
        let mut operand_dims: Vec<usize> = (0..all).collect();
        let mut contracted = Vec::new();
        for g in eq.out_dims..all {
            let j = operand_dims.iter().position(|&p| p == g).expect("present");
            match present.iter().position(|&p| p == g) {
                // Gone from the result already: size 1 here too.
                None => {
                    operand = squeeze(e, operand, j)?;
                    operand_dims.remove(j);
                }
                Some(i) if last[g] == Some(k) => {
                    if size(e, result, i) == 1 {
                        operand = sum(e, operand, j, false)?;
                        result = squeeze(e, result, i)?;
                    } else if size(e, operand, j) == 1 {
                        result = sum(e, result, i, false)?;
                        operand = squeeze(e, operand, j)?;
                    } else {
                        contracted.push(g);
                        continue;
                    }
                    present.remove(i);
                    operand_dims.remove(j);
                }
                Some(_) => {}
            }
        }
        result = if contracted.is_empty() {
            e.binary(BinaryOp::Mul, result, operand)?
        } else if contracted.len() == present.len() {
            let flat = |e: &mut Emitter<'_>, v: ValueId| {
                e.push(Op::Reshape { shape: vec![-1] }, vec![Operand::Value(v)])
            };
            let (l, r) = (flat(e, result)?, flat(e, operand)?);
            e.push(Op::Dot, vec![Operand::Value(l), Operand::Value(r)])?
        } else {
            let sums: Vec<usize> = contracted
                .iter()
                .map(|g| present.iter().position(|p| p == g).expect("present"))
                .collect();
            sumproduct_pair(e, result, operand, &sums)?
        };
        present.retain(|g| !contracted.contains(g));
    }
    one(result)
}

/// ATen's `sumproduct_pair`: `left · right` (lined up, equal rank) summed
/// over the dims `sums`, as one batched matmul: dims in both (`lro`),
/// only left's (`lo`) and only right's (`ro`) flattened around the
/// contracted ones, then the result's dims put back in their order.
fn sumproduct_pair(
    e: &mut Emitter<'_>,
    left: ValueId,
    right: ValueId,
    sums: &[usize],
) -> Result<ValueId> {
    let (mut left, mut right) = (left, right);
    let rank = e.ty(left).shape.len();
    let (mut lro, mut lo, mut ro) = (Vec::new(), Vec::new(), Vec::new());
    let (mut lro_size, mut lo_size, mut ro_size, mut sum_size) = (1i64, 1i64, 1i64, 1i64);
    for i in 0..rank {
        let (ls, rs) = (e.ty(left).shape[i], e.ty(right).shape[i]);
        let (sl, sr) = (ls != 1, rs != 1);
        if sums.contains(&i) {
            if sl && sr {
                sum_size *= ls;
            } else if sl {
                left = e.reduce(ReduceOp::Sum, left, vec![i as i64], true, None)?;
            } else if sr {
                right = e.reduce(ReduceOp::Sum, right, vec![i as i64], true, None)?;
            }
        } else if sl && sr {
            lro.push(i);
            lro_size *= ls;
        } else if sl {
            lo.push(i);
            lo_size *= ls;
        } else {
            ro.push(i);
            ro_size *= rs;
        }
    }
    let cat = |parts: &[&[usize]]| -> Vec<usize> { parts.concat() };
    let lperm = cat(&[&lro, &lo, sums, &ro]);
    let rperm = cat(&[&lro, sums, &ro, &lo]);
    let mut out_size: Vec<i64> = lro.iter().map(|&d| e.ty(left).shape[d]).collect();
    out_size.extend(lo.iter().map(|&d| e.ty(left).shape[d]));
    out_size.extend(sums.iter().map(|_| 1));
    out_size.extend(ro.iter().map(|&d| e.ty(right).shape[d]));
    let permute = |e: &mut Emitter<'_>, v: ValueId, perm: &[usize]| {
        let dims = perm.iter().map(|&d| d as i64).collect();
        e.push(Op::Permute { dims }, vec![Operand::Value(v)])
    };
    let reshape = |e: &mut Emitter<'_>, v: ValueId, shape: Vec<i64>| {
        e.push(Op::Reshape { shape }, vec![Operand::Value(v)])
    };
    let l = permute(e, left, &lperm)?;
    let l = reshape(e, l, vec![lro_size, lo_size, sum_size])?;
    let r = permute(e, right, &rperm)?;
    let r = reshape(e, r, vec![lro_size, sum_size, ro_size])?;
    let product = e.push(Op::Matmul, vec![Operand::Value(l), Operand::Value(r)])?;
    let product = reshape(e, product, out_size)?;
    // Back to the original order of dims, then the summed ones dropped.
    let mut operm = vec![0usize; rank];
    for (k, &d) in lperm.iter().enumerate() {
        operm[d] = k;
    }
    let product = permute(e, product, &operm)?;
    if sums.is_empty() {
        return Ok(product);
    }
    let dims = sums.iter().map(|&d| d as i64).collect();
    e.push(
        Op::Squeeze { dims: Some(dims) },
        vec![Operand::Value(product)],
    )
}

/// The reflection and replication pads: each padded dim an `index_select`
/// of the positions output position `o` reads, computed from `i = o − left`
/// (an `arange`, folded to a constant): `(n−1) − |(n−1) − |i||` reflects
/// `i` about both ends without repeating them, `clamp(i, 0, n−1)`
/// replicates them.
pub fn pad(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Some((mode, k, padding)) = super::padding::pad_of(op) else {
        return Ok(None);
    };
    let mut x = nth(operands, 0)?;
    // The checks first: an expansion may be emitted without inference.
    super::padding::padded_shape(mode, k, padding, &e.ty(x).shape)?;
    let rank = e.ty(x).shape.len();
    let device = e.ty(x).device;
    for j in 0..k {
        let d = rank - 1 - j;
        let n = e.ty(x).shape[d];
        let (left, right) = (padding[2 * j], padding[2 * j + 1]);
        if (left, right) == (0, 0) {
            continue; // every position reads itself
        }
        let positions = Op::Arange {
            start: Scalar::Int(-left),
            end: Scalar::Int(n + right),
            step: Scalar::Int(1),
            dtype: Some(DType::I64),
            device: Some(device),
        };
        let i = e.push(positions, vec![])?;
        let source = match mode {
            super::padding::PadMode::Reflect => {
                // (n−1) − |(n−1) − |i||, as −|−|i| + (n−1)| + (n−1).
                let last = Operand::Scalar(Scalar::Int(n - 1));
                let a = e.unary(UnaryOp::Abs, i)?;
                let a = e.unary(UnaryOp::Neg, a)?;
                let b = e.binary(BinaryOp::Add, a, last)?;
                let b = e.unary(UnaryOp::Abs, b)?;
                let b = e.unary(UnaryOp::Neg, b)?;
                e.binary(BinaryOp::Add, b, last)?
            }
            super::padding::PadMode::Replicate => e.push(
                Op::Clamp {
                    min: Some(Scalar::Int(0)),
                    max: Some(Scalar::Int(n - 1)),
                },
                vec![Operand::Value(i), Operand::None, Operand::None],
            )?,
        };
        x = e.push(
            Op::IndexSelect { dim: d as i64 },
            vec![Operand::Value(x), Operand::Value(source)],
        )?;
    }
    one(x)
}

/// `slice_scatter` and `select_scatter`: `src` (converted, and unsqueezed
/// for a selection) concatenated after the input along `dim`, then one
/// `index_select` picking, for each output position `o`, the input's own
/// position or the source's: with `r = o − start`, `n + r / step` where
/// `0 ≤ r < len·step` and `step` divides `r`, else `o` (positions from an
/// `arange`, folded to constants).
pub fn slice_scatter(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let (x, src) = (nth(operands, 0)?, nth(operands, 1)?);
    let ty = e.ty(x).clone();
    let rank = ty.shape.len();
    let src = e.cast(src, ty.dtype)?;
    let (d, start, len, step, src) = match op {
        Op::SliceScatter {
            dim,
            start,
            end,
            step,
        } => {
            let d = crate::view::wrap_dim(*dim, rank)?;
            let (s, len) = crate::view::slice_range(ty.shape[d], *start, *end, *step);
            (d, s, len, *step, src)
        }
        Op::SelectScatter { dim, index } => {
            let d = crate::view::wrap_dim(*dim, rank)?;
            let i = if *index < 0 {
                index + ty.shape[d]
            } else {
                *index
            };
            let src = e.push(Op::Unsqueeze { dim: d as i64 }, vec![Operand::Value(src)])?;
            (d, i, 1, 1, src)
        }
        _ => return Ok(None),
    };
    let n = ty.shape[d];
    let both = e.push(
        Op::Cat { dim: d as i64 },
        vec![Operand::Value(x), Operand::Value(src)],
    )?;
    let int = |v: i64| Operand::Scalar(Scalar::Int(v));
    let o = e.push(
        Op::Arange {
            start: Scalar::Int(0),
            end: Scalar::Int(n),
            step: Scalar::Int(1),
            dtype: Some(DType::I64),
            device: Some(ty.device),
        },
        vec![],
    )?;
    let r = e.binary(BinaryOp::Sub, o, int(start))?;
    let from = e.binary(BinaryOp::Ge, r, int(0))?;
    let to = e.binary(BinaryOp::Lt, r, int(len * step))?;
    let rem = e.binary(BinaryOp::Remainder, r, int(step))?;
    let on_step = e.binary(BinaryOp::Eq, rem, int(0))?;
    let inside = e.binary(BinaryOp::LogicalAnd, from, to)?;
    let inside = e.binary(BinaryOp::LogicalAnd, inside, on_step)?;
    let k = e.binary(BinaryOp::DivFloor, r, int(step))?;
    let k = e.binary(BinaryOp::Add, k, int(n))?;
    let index = select(e, inside, Operand::Value(k), Operand::Value(o))?;
    one(e.push(
        Op::IndexSelect { dim: d as i64 },
        vec![Operand::Value(both), Operand::Value(index)],
    )?)
}

/// `pixel_shuffle`, `pixel_unshuffle` and `channel_shuffle` as reshapes
/// around a permutation (a copy in the input's suggested format, as the
/// op's layout rule says): `[*, C, r, r, H, W] → [*, C, H, r, W, r]` to
/// shuffle, its inverse to unshuffle, `[N, g, C/g, *] → [N, C/g, g, *]`
/// for channels.
pub fn pixel_shuffle(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let x = nth(operands, 0)?;
    let shape = e.ty(x).shape.clone();
    let out = crate::infer::shuffle_shape(op, &shape)?;
    let rank = shape.len();
    let lead: Vec<i64> = shape[..rank.saturating_sub(3)].to_vec();
    let batch = lead.len() as i64;
    let (split, perm): (Vec<i64>, Vec<i64>) = match *op {
        Op::PixelShuffle { upscale_factor: r } => {
            let (c, h, w) = (out[rank - 3], shape[rank - 2], shape[rank - 1]);
            let at = |k: i64| batch + k;
            (
                [lead.clone(), vec![c, r, r, h, w]].concat(),
                (0..batch)
                    .chain([at(0), at(3), at(1), at(4), at(2)])
                    .collect(),
            )
        }
        Op::PixelUnshuffle {
            downscale_factor: r,
        } => {
            let (c, h, w) = (shape[rank - 3], out[rank - 2], out[rank - 1]);
            let at = |k: i64| batch + k;
            (
                [lead.clone(), vec![c, h, r, w, r]].concat(),
                (0..batch)
                    .chain([at(0), at(2), at(4), at(1), at(3)])
                    .collect(),
            )
        }
        Op::ChannelShuffle { groups } => {
            let rest = &shape[2..];
            let split = [vec![shape[0], groups, shape[1] / groups], rest.to_vec()].concat();
            let perm = [0, 2, 1].into_iter().chain(3..split.len() as i64).collect();
            (split, perm)
        }
        _ => return Ok(None),
    };
    let v = e.push(Op::Reshape { shape: split }, vec![Operand::Value(x)])?;
    let v = e.push(Op::Permute { dims: perm }, vec![Operand::Value(v)])?;
    one(e.push(Op::Reshape { shape: out }, vec![Operand::Value(v)])?)
}

/// `hstack`, `vstack`, `dstack` and `column_stack`: each tensor made at
/// least 1-, 2- or 3-D (or a column), then one `cat` (which promotes the
/// dtypes and checks the sizes, with PyTorch's messages).
pub fn stacks(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let vals = (0..operands.len())
        .map(|i| nth(operands, i))
        .collect::<Result<Vec<_>>>()?;
    let mut parts = Vec::with_capacity(vals.len());
    for v in vals {
        let part = match op {
            Op::Hstack => e.push(Op::Atleast1d, vec![Operand::Value(v)])?,
            Op::Vstack => e.push(Op::Atleast2d, vec![Operand::Value(v)])?,
            Op::Dstack => e.push(Op::Atleast3d, vec![Operand::Value(v)])?,
            Op::ColumnStack if e.ty(v).shape.len() <= 1 => {
                let n = e.ty(v).numel();
                e.push(Op::Reshape { shape: vec![n, 1] }, vec![Operand::Value(v)])?
            }
            Op::ColumnStack => v,
            _ => return Ok(None),
        };
        parts.push(Operand::Value(part));
    }
    let dim = match op {
        Op::Hstack => {
            let first = parts.first().and_then(Operand::value);
            i64::from(first.is_some_and(|v| e.ty(v).shape.len() > 1))
        }
        Op::Vstack => 0,
        Op::Dstack => 2,
        _ => 1,
    };
    one(e.push(Op::Cat { dim }, parts)?)
}

/// `eye`: `arange(n)[:, None] == arange(m)[None, :]`, in the dtype.
pub fn eye(e: &mut Emitter<'_>, op: &Op, _: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Eye {
        n,
        m,
        dtype,
        device,
    } = op
    else {
        return Ok(None);
    };
    let m = m.unwrap_or(*n);
    for (name, v) in [("n", *n), ("m", m)] {
        if v < 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("{name} must be greater or equal to 0, got {v}"),
            ));
        }
    }
    let positions = |e: &mut Emitter<'_>, len: i64| {
        e.push(
            Op::Arange {
                start: Scalar::Int(0),
                end: Scalar::Int(len),
                step: Scalar::Int(1),
                dtype: Some(DType::I64),
                device: *device,
            },
            vec![],
        )
    };
    let rows = positions(e, *n)?;
    let rows = e.push(Op::Unsqueeze { dim: 1 }, vec![Operand::Value(rows)])?;
    let cols = positions(e, m)?;
    let diagonal = e.binary(BinaryOp::Eq, rows, cols)?;
    let dtype = dtype.unwrap_or(e.default_dtype());
    one(e.cast(diagonal, dtype)?)
}

/// `linspace` as PyTorch's CPU kernel computes it: `step = (end − start) /
/// (steps − 1)`, then `start + step·i` for the first `steps / 2` positions
/// and `end − step·(steps − 1 − i)` for the rest (one step: `start`).
pub fn linspace(e: &mut Emitter<'_>, op: &Op, _: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Linspace {
        start,
        end,
        steps,
        dtype,
        device,
    } = op
    else {
        return Ok(None);
    };
    if *steps < 0 {
        return Err(Error::new(
            ErrorKind::Attribute,
            "number of steps must be non-negative",
        ));
    }
    let dtype = dtype.unwrap_or(e.default_dtype());
    if *steps <= 1 {
        // PyTorch fills without its kernel: any dtype.
        let fill = Op::Full {
            shape: vec![*steps],
            value: *start,
            dtype: Some(dtype),
            device: *device,
        };
        return one(e.push(fill, vec![])?);
    }
    let kernel = crate::support::DTypeSet::REAL_NUMBERS.union(crate::support::DTypeSet::COMPLEX);
    if !kernel.contains(dtype) {
        return Err(crate::support::not_implemented("linspace_cpu", dtype));
    }
    if dtype.is_complex() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            "linspace: complex results are not supported yet",
        ));
    }
    // The bounds in the dtype first (an integer dtype truncates and wraps
    // them, as `Scalar::to` does); the step in the dtype's arithmetic
    // (f64 for integers); then f32's fused multiply-adds emulated in f64,
    // other floats in their own arithmetic, one rounding per operation.
    let step_dtype = if dtype.is_floating_point() {
        dtype
    } else {
        DType::F64
    };
    let compute = if dtype == DType::F32 {
        DType::F64
    } else {
        step_dtype
    };
    let full = |e: &mut Emitter<'_>, v: Scalar, d: DType| {
        e.push(
            Op::Full {
                shape: vec![],
                value: v,
                dtype: Some(d),
                device: *device,
            },
            vec![],
        )
    };
    let first = full(e, *start, dtype)?;
    let first = e.cast(first, step_dtype)?;
    let last = full(e, *end, dtype)?;
    let last = e.cast(last, step_dtype)?;
    let span = e.binary(BinaryOp::Sub, last, first)?;
    let gaps = full(e, Scalar::Int(steps - 1), step_dtype)?;
    let step = e.binary(BinaryOp::Div, span, gaps)?;
    let (step, first, last) = (
        e.cast(step, compute)?,
        e.cast(first, compute)?,
        e.cast(last, compute)?,
    );
    let i = e.push(
        Op::Arange {
            start: Scalar::Int(0),
            end: Scalar::Int(*steps),
            step: Scalar::Int(1),
            dtype: Some(compute),
            device: *device,
        },
        vec![],
    )?;
    let values = {
        let up = e.binary(BinaryOp::Mul, step, i)?;
        let up = e.binary(BinaryOp::Add, first, up)?;
        let back = e.unary(UnaryOp::Neg, i)?;
        let back = e.binary(BinaryOp::Add, back, Operand::Scalar(Scalar::Int(steps - 1)))?;
        let back = e.binary(BinaryOp::Mul, step, back)?;
        let down = e.binary(BinaryOp::Sub, last, back)?;
        let half = e.binary(BinaryOp::Lt, i, Operand::Scalar(Scalar::Int(steps / 2)))?;
        select(e, half, Operand::Value(up), Operand::Value(down))?
    };
    one(e.cast(values, dtype)?)
}

/// `rot90` as PyTorch computes it: one turn is `flip` of the second dim
/// then `transpose`, two are `flip` of both, three `flip` of the first
/// then `transpose`; no turn a copy.
pub fn rot90(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let (k, d0, d1) = crate::infer::rot90_plane(op, e.ty(x).rank())?;
    let flip = |e: &mut Emitter<'_>, dims: Vec<usize>| {
        let dims = dims.into_iter().map(|d| d as i64).collect();
        e.push(Op::Flip { dims }, vec![Operand::Value(x)])
    };
    let turned = match k {
        0 => copy_of(e, x)?,
        2 => flip(e, vec![d0, d1])?,
        _ => {
            let flipped = flip(e, vec![if k == 1 { d1 } else { d0 }])?;
            let transpose = Op::Transpose {
                dim0: d0 as i64,
                dim1: d1 as i64,
            };
            e.push(transpose, vec![Operand::Value(flipped)])?
        }
    };
    one(turned)
}

/// `diag`, `diag_embed`, `diagflat` and `diagonal_scatter`: a `where` over
/// the diagonal's positions (column − row = offset in the plane of the two
/// dims) between the vector, laid along one of the two dims, and zeros or
/// the input; `diag` of a matrix is a copy of its `diagonal` view. A
/// `where` and a `cat` take every dtype, as these ops do.
pub fn diag(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let x = input(operands)?;
    let ty = e.ty(x).clone();
    match op {
        Op::Diag { diagonal } => match ty.rank() {
            1 => one(diag_embed(e, x, *diagonal, 0, 1)?),
            2 => {
                let view = Op::Diagonal {
                    offset: *diagonal,
                    dim1: 0,
                    dim2: 1,
                };
                let d = e.push(view, vec![Operand::Value(x)])?;
                one(copy_of(e, d)?)
            }
            r => Err(Error::new(
                ErrorKind::Shape,
                format!("diag(): Supports 1D or 2D tensors. Got {r}D"),
            )),
        },
        Op::DiagEmbed { offset, dim1, dim2 } => one(diag_embed(e, x, *offset, *dim1, *dim2)?),
        Op::Diagflat { offset } => {
            let flat = reshape(e, x, vec![-1])?;
            one(diag_embed(e, flat, *offset, 0, 1)?)
        }
        Op::DiagonalScatter { offset, dim1, dim2 } => {
            let src = nth(operands, 1)?;
            let part =
                crate::view::Geometry::contiguous(&ty.shape).diagonal(*offset, *dim1, *dim2)?;
            let src_shape = e.ty(src).shape.clone();
            if src_shape != part.shape {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!(
                        "expected src to have a size equal to the slice of self. src size = {}, slice size = {}",
                        crate::view::format_shape(&src_shape),
                        crate::view::format_shape(&part.shape)
                    ),
                ));
            }
            let src = e.cast(src, ty.dtype)?;
            let rank = ty.rank();
            let (d1, d2) = (wrap_dim(*dim1, rank)?, wrap_dim(*dim2, rank)?);
            let (along, other) = if *offset >= 0 { (d1, d2) } else { (d2, d1) };
            let padded = pad_last(e, src, ty.shape[along])?;
            let placed = lay_along(e, padded, rank, along, other)?;
            let mask = diagonal_mask(e, rank, (d1, ty.shape[d1]), (d2, ty.shape[d2]), *offset)?;
            one(select(e, mask, Operand::Value(placed), Operand::Value(x))?)
        }
        _ => Ok(None),
    }
}

/// `diag_embed(x, offset, dim1, dim2)`: `x`'s last dim along the
/// `offset`-th diagonal of two new dims of size n + |offset|, zeros
/// elsewhere (dims wrapped in the result's rank, PyTorch's checks).
fn diag_embed(
    e: &mut Emitter<'_>,
    x: ValueId,
    offset: i64,
    dim1: i64,
    dim2: i64,
) -> Result<ValueId> {
    let ty = e.ty(x).clone();
    let rank = ty.rank() + 1;
    let (d1, d2) = (wrap_dim(dim1, rank)?, wrap_dim(dim2, rank)?);
    if d1 == d2 {
        return Err(Error::new(
            ErrorKind::Dim,
            format!("diagonal dimensions cannot be identical {dim1}, {dim2}"),
        ));
    }
    let n = ty.shape[ty.rank() - 1];
    let m = n + offset.abs();
    let (along, other) = if offset >= 0 { (d1, d2) } else { (d2, d1) };
    let padded = pad_last(e, x, m)?;
    let placed = lay_along(e, padded, rank, along, other)?;
    let mask = diagonal_mask(e, rank, (d1, m), (d2, m), offset)?;
    let zero = e.push(
        Op::Full {
            shape: vec![],
            value: Scalar::Float(0.0),
            dtype: Some(ty.dtype),
            device: Some(ty.device),
        },
        vec![],
    )?;
    select(e, mask, Operand::Value(placed), Operand::Value(zero))
}

/// `x` with zeros joined after its last dim up to length `to`.
fn pad_last(e: &mut Emitter<'_>, x: ValueId, to: i64) -> Result<ValueId> {
    let ty = e.ty(x).clone();
    let last = ty.rank() - 1;
    if ty.shape[last] >= to {
        return Ok(x);
    }
    let mut shape = ty.shape.clone();
    shape[last] = to - ty.shape[last];
    let zeros = e.push(
        Op::Full {
            shape,
            value: Scalar::Float(0.0),
            dtype: Some(ty.dtype),
            device: Some(ty.device),
        },
        vec![],
    )?;
    join(e, vec![x, zeros], last)
}

/// `x` (`[*others, n]`) as a tensor of `rank` dims: its last dim at
/// `along`, a size-1 dim at `other`, its other dims in order elsewhere.
fn lay_along(
    e: &mut Emitter<'_>,
    x: ValueId,
    rank: usize,
    along: usize,
    other: usize,
) -> Result<ValueId> {
    let x = e.push(Op::Unsqueeze { dim: -1 }, vec![Operand::Value(x)])?;
    let r = rank as i64;
    e.push(
        Op::Movedim {
            source: vec![r - 2, r - 1],
            destination: vec![along as i64, other as i64],
        },
        vec![Operand::Value(x)],
    )
}

/// Whether position (i along `d1`, j along `d2`) of a tensor of `rank`
/// dims is on the `offset`-th diagonal: j − i = offset (bool, size 1 along
/// the other dims).
fn diagonal_mask(
    e: &mut Emitter<'_>,
    rank: usize,
    (d1, n1): (usize, i64),
    (d2, n2): (usize, i64),
    offset: i64,
) -> Result<ValueId> {
    let along = |e: &mut Emitter<'_>, d: usize, n: i64| {
        let a = e.push(
            Op::Arange {
                start: Scalar::Int(0),
                end: Scalar::Int(n),
                step: Scalar::Int(1),
                dtype: Some(DType::I64),
                device: None,
            },
            vec![],
        )?;
        let mut shape = vec![1; rank];
        shape[d] = n;
        reshape(e, a, shape)
    };
    let rows = along(e, d1, n1)?;
    let cols = along(e, d2, n2)?;
    let diff = e.binary(BinaryOp::Sub, cols, rows)?;
    e.binary(BinaryOp::Eq, diff, Operand::Scalar(Scalar::Int(offset)))
}

/// `zeros_like`, `ones_like`, `full_like`, `empty_like`, `empty` and
/// `empty_strided`: one `full` of the value (zeros for the empty ones),
/// after PyTorch's checks of the memory format and strides; the op's
/// layout rule gives the strides (the decomposition keeps them).
pub fn like(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let zero = Scalar::Float(0.0);
    let like = |e: &Emitter<'_>, dtype: &Option<DType>, format: MemoryFormat| {
        let x = input(operands)?;
        let ty = e.ty(x);
        // The format's rank is checked before anything is laid out.
        crate::layout::like_strides(
            &ty.shape,
            &crate::layout::contiguous_strides(&ty.shape),
            format,
        )?;
        Ok::<_, Error>((ty.shape.clone(), dtype.unwrap_or(ty.dtype), Some(ty.device)))
    };
    let (shape, value, dtype, device) = match op {
        Op::ZerosLike {
            dtype,
            memory_format,
        }
        | Op::EmptyLike {
            dtype,
            memory_format,
        } => {
            let (s, d, dev) = like(e, dtype, *memory_format)?;
            (s, zero, d, dev)
        }
        Op::OnesLike {
            dtype,
            memory_format,
        } => {
            let (s, d, dev) = like(e, dtype, *memory_format)?;
            (s, Scalar::Float(1.0), d, dev)
        }
        Op::FullLike {
            fill_value,
            dtype,
            memory_format,
        } => {
            let (s, d, dev) = like(e, dtype, *memory_format)?;
            check_fill_value(*fill_value, d)?;
            (s, *fill_value, d, dev)
        }
        Op::Empty {
            size,
            dtype,
            device,
            memory_format,
        } => {
            memory_format.strides(size)?;
            let d = dtype.unwrap_or(e.default_dtype());
            (size.clone(), zero, d, *device)
        }
        Op::EmptyStrided {
            size,
            stride,
            dtype,
            device,
        } => {
            if size.len() != stride.len() {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!(
                        "dimensionality of sizes ({}) must match dimensionality of strides ({})",
                        size.len(),
                        stride.len()
                    ),
                ));
            }
            // Negative sizes are `full`'s error (PyTorch checks them
            // first); then PyTorch's storage size, which a negative stride
            // overflows unless the tensor is empty.
            let sized = size.iter().all(|&n| n >= 0);
            if sized && !size.contains(&0) && stride.iter().any(|&st| st < 0) {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!(
                        "Storage size calculation overflowed with sizes={} and strides={}",
                        crate::view::format_shape(size),
                        crate::view::format_shape(stride)
                    ),
                ));
            }
            if sized && !crate::layout::is_non_overlapping_and_dense(size, stride) {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "empty_strided: Kiln lays tensors out densely, and strides {} of sizes {} are not dense",
                        crate::view::format_shape(stride),
                        crate::view::format_shape(size)
                    ),
                ));
            }
            let d = dtype.unwrap_or(e.default_dtype());
            (size.clone(), zero, d, *device)
        }
        _ => return Ok(None),
    };
    let fill = Op::Full {
        shape,
        value,
        dtype: Some(dtype),
        device,
    };
    one(e.push(fill, vec![])?)
}

/// `logspace` as PyTorch's CPU kernel computes it: the bounds converted to
/// the dtype, `step = (end − start) / (steps − 1)` in f64, the exponent
/// `start + step·i` for the first `steps / 2` positions and
/// `end − step·(steps − 1 − i)` for the rest, `pow(base, exponent)` in f64
/// (a float32 base for integer dtypes), converted to the dtype; one step
/// (or none) fills `pow(base, start)` in any dtype.
pub fn logspace(e: &mut Emitter<'_>, op: &Op, _: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Logspace {
        start,
        end,
        steps,
        base,
        dtype,
        device,
    } = op
    else {
        return Ok(None);
    };
    let (steps, base) = (*steps, base.0);
    if steps < 0 {
        return Err(Error::new(
            ErrorKind::Attribute,
            "number of steps must be non-negative",
        ));
    }
    let dtype = dtype.unwrap_or(e.default_dtype());
    let complex = |d: DType| {
        Error::new(
            ErrorKind::Unsupported,
            format!("logspace: complex results ({d}) are not supported yet"),
        )
    };
    if steps <= 1 {
        if dtype.is_complex() || matches!(start, Scalar::Complex(..)) {
            return Err(complex(dtype));
        }
        let fill = Op::Full {
            shape: vec![steps],
            value: Scalar::Float(base.powf(start.to_f64())),
            dtype: Some(dtype),
            device: *device,
        };
        return one(e.push(fill, vec![])?);
    }
    let kernel = crate::support::DTypeSet::FLOATS
        .union(crate::support::DTypeSet::COMPLEX)
        .union(crate::support::DTypeSet::INTS);
    if !kernel.contains(dtype) {
        return Err(crate::support::not_implemented("logspace_cpu", dtype));
    }
    if dtype.is_complex() {
        return Err(complex(dtype));
    }
    let integral = !dtype.is_floating_point();
    let full = |e: &mut Emitter<'_>, v: Scalar, d: DType| {
        e.push(
            Op::Full {
                shape: vec![],
                value: v,
                dtype: Some(d),
                device: *device,
            },
            vec![],
        )
    };
    // The bounds as the dtype holds them; their difference in the
    // dtype's arithmetic (C++ widens small integers, so int64 here).
    let wide = if integral { DType::I64 } else { DType::F64 };
    let first = full(e, *start, dtype)?;
    let first = e.cast(first, wide)?;
    let last = full(e, *end, dtype)?;
    let last = e.cast(last, wide)?;
    let span = e.binary(BinaryOp::Sub, last, first)?;
    let span = e.cast(span, DType::F64)?;
    let (first, last) = (e.cast(first, DType::F64)?, e.cast(last, DType::F64)?);
    let gaps = full(e, Scalar::Int(steps - 1), DType::F64)?;
    let step = e.binary(BinaryOp::Div, span, gaps)?;
    let i = e.push(
        Op::Arange {
            start: Scalar::Int(0),
            end: Scalar::Int(steps),
            step: Scalar::Int(1),
            dtype: Some(DType::F64),
            device: *device,
        },
        vec![],
    )?;
    let up = e.binary(BinaryOp::Mul, step, i)?;
    let up = e.binary(BinaryOp::Add, first, up)?;
    let back = e.unary(UnaryOp::Neg, i)?;
    let back = e.binary(BinaryOp::Add, back, Operand::Scalar(Scalar::Int(steps - 1)))?;
    let back = e.binary(BinaryOp::Mul, step, back)?;
    let down = e.binary(BinaryOp::Sub, last, back)?;
    let half = e.binary(BinaryOp::Lt, i, Operand::Scalar(Scalar::Int(steps / 2)))?;
    let exponent = select(e, half, Operand::Value(up), Operand::Value(down))?;
    let base = if integral {
        f64::from(base as f32)
    } else {
        base
    };
    let base = full(e, Scalar::Float(base), DType::F64)?;
    let values = e.binary(BinaryOp::Pow, base, exponent)?;
    one(e.cast(values, dtype)?)
}

/// `fill_`'s conversion of its value to an integer dtype (c10's checked
/// conversion: integers down to −max for unsigned types, floats within the
/// range).
fn check_fill_value(value: Scalar, dtype: DType) -> Result<()> {
    let Ok(info) = dtype.iinfo() else {
        return Ok(());
    };
    let lowest = if dtype.is_signed() {
        info.min
    } else {
        -info.max
    };
    let outside = match value {
        Scalar::Int(i) => i128::from(i) < lowest || i128::from(i) > info.max,
        Scalar::Float(f) => f < info.min as f64 || f > info.max as f64,
        _ => false,
    };
    if outside {
        // The C++ type c10's conversion names (its spelling of int32 is
        // `int`).
        let name = match dtype {
            DType::I8 => "int8_t",
            DType::I16 => "int16_t",
            DType::I32 => "int",
            DType::I64 => "int64_t",
            DType::U8 => "uint8_t",
            DType::U16 => "uint16_t",
            DType::U32 => "uint32_t",
            DType::U64 => "uint64_t",
            other => other.info().cpp_type_name,
        };
        return Err(Error::new(
            ErrorKind::Attribute,
            format!("value cannot be converted to type {name} without overflow"),
        ));
    }
    Ok(())
}

/// `broadcast_tensors` and `meshgrid`: each operand through its own
/// primitive views (views of the operands, as PyTorch's results are).
pub fn view_list(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let values: Vec<ValueId> = operands
        .iter()
        .filter_map(|o| match o {
            Operand::Value(v) => Some(*v),
            _ => None,
        })
        .collect();
    let types: Vec<TensorType> = values.iter().map(|v| e.ty(*v).clone()).collect();
    let refs: Vec<&TensorType> = types.iter().collect();
    let views = crate::infer::view_lists(op, &refs)?;
    let mut results = Vec::with_capacity(values.len());
    for (v, views) in values.into_iter().zip(views) {
        let mut r = v;
        for view in views {
            r = e.push(view, vec![Operand::Value(r)])?;
        }
        results.push(r);
    }
    Ok(Some(results))
}

/// `bucketize`: `searchsorted` of the input (a tensor or a number) in the
/// boundaries.
pub fn bucketize(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::Bucketize { out_int32, right } = op else {
        return Ok(None);
    };
    let search = Op::Searchsorted {
        out_int32: *out_int32,
        right: *right,
        side: None,
    };
    let input = operands
        .first()
        .cloned()
        .ok_or_else(|| Error::new(ErrorKind::Arity, "missing operand 1"))?;
    let boundaries = nth(operands, 1)?;
    one(e.push(
        search,
        vec![Operand::Value(boundaries), input, Operand::None],
    )?)
}

/// `prelu`: `x > 0 ? x : x · weight`, the weight viewed as ATen views it
/// (`[1, C, 1, ...]`, or 0-D for one weight; one multiply, rounded once).
pub fn prelu(e: &mut Emitter<'_>, op: &Op, operands: &[Operand]) -> Result<Option<Vec<ValueId>>> {
    let Op::Prelu = op else {
        return Ok(None);
    };
    let (x, weight) = (nth(operands, 0)?, nth(operands, 1)?);
    let shape = crate::infer::prelu_weight_shape(&e.ty(x).shape.clone(), &e.ty(weight).clone())?;
    let weight = e.push(Op::Reshape { shape }, vec![Operand::Value(weight)])?;
    let positive = e.binary(BinaryOp::Gt, x, Operand::Scalar(Scalar::Int(0)))?;
    let scaled = e.binary(BinaryOp::Mul, x, weight)?;
    one(select(
        e,
        positive,
        Operand::Value(x),
        Operand::Value(scaled),
    )?)
}

/// `max_unpool1d`, as `torch.nn.functional.max_unpool1d` computes it:
/// `max_unpool2d` of the input and indices with a trailing dim of one (so
/// its checks and messages), that dim squeezed away.
pub fn max_unpool1d(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::MaxUnpool1d { output_size } = op else {
        return Ok(None);
    };
    let (x, indices) = (nth(operands, 0)?, nth(operands, 1)?);
    let column =
        |e: &mut Emitter<'_>, v| e.push(Op::Unsqueeze { dim: -1 }, vec![Operand::Value(v)]);
    let (x, indices) = (column(e, x)?, column(e, indices)?);
    let mut size = output_size.clone();
    size.push(1);
    let unpooled = e.push(
        Op::MaxUnpool2d { output_size: size },
        vec![Operand::Value(x), Operand::Value(indices)],
    )?;
    one(e.push(
        Op::Squeeze {
            dims: Some(vec![-1]),
        },
        vec![Operand::Value(unpooled)],
    )?)
}

/// `gaussian_nll_loss`, `cosine_embedding_loss`,
/// `multilabel_soft_margin_loss` and `triplet_margin_loss`, each as the
/// PyTorch function (or ATen composite) computes it: the same ops in the
/// same order, so the same dtypes, broadcasting errors and roundings, and
/// its own checks and messages first.
pub fn more_losses(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let fail = |kind: ErrorKind, m: String| Err(Error::new(kind, m));
    let v = Operand::Value;
    let int = |i: i64| Operand::Scalar(Scalar::Int(i));
    let (loss, reduction) = match op {
        Op::GaussianNllLoss {
            full,
            eps,
            reduction,
        } => {
            let (x, target) = (nth(operands, 0)?, nth(operands, 1)?);
            let var = match operands.get(2) {
                Some(Operand::Value(var)) => *var,
                Some(Operand::Scalar(s @ Scalar::Float(value))) => {
                    if *value < 0.0 {
                        return fail(
                            ErrorKind::Attribute,
                            "var has negative entry/entries".into(),
                        );
                    }
                    // `var * torch.ones_like(input)`.
                    let x_ty = e.ty(x).clone();
                    let ones = e.push(
                        Op::Full {
                            shape: x_ty.shape.clone(),
                            value: Scalar::Int(1),
                            dtype: Some(x_ty.dtype),
                            device: Some(x_ty.device),
                        },
                        vec![],
                    )?;
                    e.binary(BinaryOp::Mul, ones, Operand::Scalar(*s))?
                }
                // PyTorch tests `torch.any(var < 0)` of a Python bool.
                _ => {
                    return fail(
                        ErrorKind::DType,
                        "any() received an invalid combination of arguments - got (bool), but expected one of:".into(),
                    );
                }
            };
            let (in_shape, var_shape) = (e.ty(x).shape.clone(), e.ty(var).shape.clone());
            let var = if var_shape == in_shape {
                var
            } else if in_shape.len() == var_shape.len() + 1
                && in_shape[..var_shape.len()] == var_shape[..]
            {
                e.push(Op::Unsqueeze { dim: -1 }, vec![v(var)])?
            } else if in_shape.len() == var_shape.len()
                && in_shape
                    .iter()
                    .zip(&var_shape)
                    .filter(|(a, b)| a != b)
                    .map(|(_, b)| *b)
                    .sum::<i64>()
                    == 1
            {
                var
            } else {
                return fail(ErrorKind::Shape, "var is of incorrect size".into());
            };
            if *reduction == LossReduction::Batchmean {
                return fail(ErrorKind::Attribute, "batchmean is not valid".into());
            }
            // `var.clone().clamp_(min=eps)`: in place, so in var's dtype.
            let clamped = push_checked(
                e,
                Op::Clamp {
                    min: Some(Scalar::Float(eps.0)),
                    max: None,
                },
                vec![v(var), Operand::None, Operand::None],
            )?;
            let var_dtype = e.ty(var).dtype;
            if e.ty(clamped).dtype != var_dtype {
                return fail(
                    ErrorKind::Cast,
                    format!(
                        "result type {} can't be cast to the desired output type {}",
                        e.ty(clamped).dtype.scalar_type_name(),
                        var_dtype.info().cpp_type_name
                    ),
                );
            }
            let log = e.unary(UnaryOp::Log, clamped)?;
            let diff = e.binary(BinaryOp::Sub, x, target)?;
            let square = e.binary(BinaryOp::Pow, diff, int(2))?;
            let ratio = e.binary(BinaryOp::Div, square, clamped)?;
            let sum = e.binary(BinaryOp::Add, log, ratio)?;
            let mut loss = e.binary(BinaryOp::Mul, sum, f(0.5))?;
            if *full {
                let constant = 0.5 * (2.0 * std::f64::consts::PI).ln();
                loss = e.binary(BinaryOp::Add, loss, f(constant))?;
            }
            (loss, *reduction)
        }
        Op::CosineEmbeddingLoss { margin, reduction } => {
            if *reduction == LossReduction::Batchmean {
                return fail(
                    ErrorKind::Attribute,
                    "batchmean is not a valid value for reduction".into(),
                );
            }
            let (x1, x2, target) = (nth(operands, 0)?, nth(operands, 1)?, nth(operands, 2)?);
            let (s1, s2) = (e.ty(x1).shape.clone(), e.ty(x2).shape.clone());
            let dim = e.ty(target).rank();
            let sizes = format!(
                "found inputs with sizes {} and {}.",
                crate::view::format_shape(&s1),
                crate::view::format_shape(&s2)
            );
            match dim {
                1 if s1.len() != 2 || s2.len() != 2 => {
                    return fail(
                        ErrorKind::Shape,
                        format!("1D target tensor expects 2D input tensors, but {sizes}"),
                    );
                }
                0 if s1.len() != 1 || s2.len() != 1 => {
                    return fail(
                        ErrorKind::Shape,
                        format!("0D target tensor expects 1D input tensors, but {sizes}"),
                    );
                }
                0 | 1 => {}
                _ => {
                    return fail(
                        ErrorKind::Shape,
                        "0D or 1D target tensor expected, multi-target not supported".into(),
                    );
                }
            }
            let dim = dim as i64;
            let sum_of = |e: &mut Emitter<'_>, a: ValueId, b: ValueId| {
                let product = e.binary(BinaryOp::Mul, a, b)?;
                e.reduce(ReduceOp::Sum, product, vec![dim], false, None)
            };
            let prod_sum = sum_of(e, x1, x2)?;
            let sq1 = sum_of(e, x1, x1)?;
            let sq2 = sum_of(e, x2, x2)?;
            let mag1 = e.binary(BinaryOp::Add, sq1, f(1e-12))?;
            let mag2 = e.binary(BinaryOp::Add, sq2, f(1e-12))?;
            let mags = e.binary(BinaryOp::Mul, mag1, mag2)?;
            let denom = e.unary(UnaryOp::Sqrt, mags)?;
            let cos = e.binary(BinaryOp::Div, prod_sum, denom)?;
            let cos_ty = e.ty(cos).clone();
            let zeros = e.push(
                Op::Full {
                    shape: cos_ty.shape.clone(),
                    value: Scalar::Int(0),
                    dtype: Some(cos_ty.dtype),
                    device: Some(cos_ty.device),
                },
                vec![],
            )?;
            let pos = e.binary(BinaryOp::Sub, int(1), cos)?;
            let shifted = e.binary(BinaryOp::Sub, cos, f(margin.0))?;
            // `clamp_min_(0)` in place: the difference's dtype.
            let neg = push_checked(
                e,
                Op::ClampMin {
                    min: Scalar::Int(0),
                },
                vec![v(shifted)],
            )?;
            let is_pos = e.binary(BinaryOp::Eq, target, int(1))?;
            let is_neg = e.binary(BinaryOp::Eq, target, int(-1))?;
            let out_pos = select(e, is_pos, v(pos), v(zeros))?;
            let out_neg = select(e, is_neg, v(neg), v(zeros))?;
            (e.binary(BinaryOp::Add, out_pos, out_neg)?, *reduction)
        }
        Op::MultilabelSoftMarginLoss { reduction } => {
            let (x, target) = (nth(operands, 0)?, nth(operands, 1)?);
            let log_p = push_checked(e, Op::Logsigmoid, vec![v(x)])?;
            let pos = e.binary(BinaryOp::Mul, target, log_p)?;
            let rest = e.binary(BinaryOp::Sub, int(1), target)?;
            let minus_x = e.unary(UnaryOp::Neg, x)?;
            let log_q = push_checked(e, Op::Logsigmoid, vec![v(minus_x)])?;
            let neg = e.binary(BinaryOp::Mul, rest, log_q)?;
            let both = e.binary(BinaryOp::Add, pos, neg)?;
            let mut loss = e.unary(UnaryOp::Neg, both)?;
            if let Some(Operand::Value(w)) = operands.get(2) {
                loss = e.binary(BinaryOp::Mul, loss, *w)?;
            }
            let x_shape = e.ty(x).shape.clone();
            let Some(&classes) = x_shape.last() else {
                return fail(
                    ErrorKind::Shape,
                    "Dimension specified as -1 but tensor has no dimensions".into(),
                );
            };
            let class_dim = x_shape.len() as i64 - 1;
            let summed = e.reduce(ReduceOp::Sum, loss, vec![class_dim], false, None)?;
            let loss = e.binary(BinaryOp::Div, summed, int(classes))?;
            if *reduction == LossReduction::Batchmean {
                return fail(ErrorKind::Attribute, "batchmean is not valid".into());
            }
            (loss, *reduction)
        }
        Op::TripletMarginLoss {
            margin,
            p,
            eps,
            swap,
            reduction,
        } => {
            if *reduction == LossReduction::Batchmean {
                return fail(
                    ErrorKind::Attribute,
                    "batchmean is not a valid value for reduction".into(),
                );
            }
            if margin.0 <= 0.0 {
                return fail(
                    ErrorKind::Attribute,
                    format!(
                        "margin must be greater than 0, got {}",
                        crate::scalar::Scalar::Float(margin.0)
                    ),
                );
            }
            let (a, pos, neg) = (nth(operands, 0)?, nth(operands, 1)?, nth(operands, 2)?);
            let ranks = [e.ty(a).rank(), e.ty(pos).rank(), e.ty(neg).rank()];
            if ranks[0] != ranks[1] || ranks[1] != ranks[2] {
                return fail(
                    ErrorKind::Shape,
                    format!(
                        "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor {}D, positive {}D, and negative {}D inputs",
                        ranks[0], ranks[1], ranks[2]
                    ),
                );
            }
            let distance = |e: &mut Emitter<'_>, x: ValueId, y: ValueId| {
                push_checked(
                    e,
                    Op::PairwiseDistance {
                        p: *p,
                        eps: *eps,
                        keepdim: false,
                    },
                    vec![Operand::Value(x), Operand::Value(y)],
                )
            };
            let d_pos = distance(e, a, pos)?;
            let mut d_neg = distance(e, a, neg)?;
            if *swap {
                let d_swap = distance(e, pos, neg)?;
                d_neg = e.binary(BinaryOp::Minimum, d_neg, d_swap)?;
            }
            let shifted = e.binary(BinaryOp::Add, d_pos, f(margin.0))?;
            let gap = e.binary(BinaryOp::Sub, shifted, d_neg)?;
            let loss = push_checked(
                e,
                Op::ClampMin {
                    min: Scalar::Int(0),
                },
                vec![v(gap)],
            )?;
            (loss, *reduction)
        }
        _ => return Ok(None),
    };
    one(reduce_loss(e, loss, reduction, 1)?)
}

/// Pushes a composite as a program would see it: its inference first (its
/// checks and messages), then its operands converted as that inference
/// says (what the promotion pass does before decomposition), then its
/// expansion.
fn push_checked(e: &mut Emitter<'_>, op: Op, operands: Vec<Operand>) -> Result<ValueId> {
    let types: Vec<Option<TensorType>> = operands
        .iter()
        .map(|o| o.value().map(|v| e.ty(v).clone()))
        .collect();
    let args: Vec<crate::infer::Arg<'_>> = operands
        .iter()
        .zip(&types)
        .map(|(o, t)| match (o, t) {
            (_, Some(t)) => crate::infer::Arg::Tensor(t),
            (Operand::Scalar(s), _) => crate::infer::Arg::Scalar(*s),
            _ => crate::infer::Arg::None,
        })
        .collect();
    let ctx = *e.b.ctx();
    let targets = crate::infer::infer(&op, &args, None, &ctx)?.operand_dtypes;
    let mut converted = Vec::with_capacity(operands.len());
    for (i, o) in operands.into_iter().enumerate() {
        converted.push(match (o, targets.get(i).copied().flatten()) {
            (Operand::Value(v), Some(d)) => Operand::Value(e.cast(v, d)?),
            (o, _) => o,
        });
    }
    e.push(op, converted)
}

/// `native_layer_norm`, `native_batch_norm`, `native_group_norm`: the
/// normalization's own expansion for the result (in training, batch_norm's
/// from its statistics rounded to their dtype, as PyTorch's CPU kernel),
/// and the statistics, in opmath (the mean and biased variance of
/// `moments`, `rsqrt(var + eps)`), converted to their dtype; empty
/// statistics for `batch_norm` in evaluation.
pub fn native_norms(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let x = nth(operands, 0)?;
    let x_ty = e.ty(x).clone();
    if !computable_float(x_ty.dtype) {
        return Ok(None);
    }
    let base = crate::infer::native_norm_parts(op, &x_ty)?;
    // batch_norm in training normalizes with its rounded statistics (below).
    let out = match op {
        Op::NativeBatchNorm { training: true, .. } => None,
        _ => Some(e.push(base, operands.to_vec())?),
    };
    let stats_dtype = operands[1..]
        .iter()
        .find_map(Operand::value)
        .map(|p| e.ty(p).dtype)
        .filter(|d| *d != x_ty.dtype)
        .unwrap_or(x_ty.dtype);
    let acc = x_ty.dtype.opmath();
    let xf = e.cast(x, acc)?;
    let (mean, var, eps, shape) = match op {
        Op::NativeLayerNorm {
            normalized_shape,
            eps,
        } => {
            let n = normalized_shape.len() as i64;
            let (mean, var) = moments(e, xf, (-n..0).collect())?;
            let shape = e.ty(mean).shape.clone();
            (mean, var, eps.0, shape)
        }
        Op::NativeBatchNorm {
            training: false, ..
        } => {
            let empty = Op::Full {
                shape: vec![0],
                value: Scalar::Int(0),
                dtype: Some(stats_dtype),
                device: Some(x_ty.device),
            };
            let (a, b) = (e.push(empty.clone(), vec![])?, e.push(empty, vec![])?);
            return Ok(out.map(|out| vec![out, a, b]));
        }
        Op::NativeBatchNorm { eps, .. } => {
            let dims: Vec<i64> = std::iter::once(0).chain(2..x_ty.rank() as i64).collect();
            let (mean, var) = moments(e, xf, dims)?;
            (mean, var, eps.0, vec![x_ty.shape[1]])
        }
        Op::NativeGroupNorm {
            n,
            c,
            hxw,
            group,
            eps,
        } => {
            let grouped = reshape(e, xf, vec![*n, *group, c / group * hxw])?;
            let (mean, var) = moments(e, grouped, vec![2])?;
            (mean, var, eps.0, vec![*n, *group])
        }
        _ => return Ok(None),
    };
    let var_eps = e.binary(BinaryOp::Add, var, f(eps))?;
    let rstd = e.unary(UnaryOp::Rsqrt, var_eps)?;
    let mut stats = Vec::new();
    for v in [mean, rstd] {
        let v = reshape(e, v, shape.clone())?;
        stats.push(e.cast(v, stats_dtype)?);
    }
    let out = if let Some(out) = out {
        out
    } else {
        // PyTorch's CPU kernel normalizes with the statistics it returns
        // (rounded to their dtype): `alpha = invstd·weight`, `beta = bias
        // - mean·alpha`, `x·alpha + beta`.
        let mut per_channel = vec![x_ty.shape[1]];
        per_channel.extend(std::iter::repeat_n(1, x_ty.rank() - 2));
        let channels = |e: &mut Emitter<'_>, v: ValueId| -> Result<ValueId> {
            let v = e.cast(v, acc)?;
            reshape(e, v, per_channel.clone())
        };
        let mean = channels(e, stats[0])?;
        let mut alpha = channels(e, stats[1])?;
        if let Some(w) = optional(operands, 1) {
            let w = channels(e, w)?;
            alpha = e.binary(BinaryOp::Mul, alpha, w)?;
        }
        let shift = e.binary(BinaryOp::Mul, mean, alpha)?;
        let beta = match optional(operands, 2) {
            Some(b) => {
                let b = channels(e, b)?;
                e.binary(BinaryOp::Sub, b, shift)?
            }
            None => e.unary(UnaryOp::Neg, shift)?,
        };
        let scaled = e.binary(BinaryOp::Mul, xf, alpha)?;
        let y = e.binary(BinaryOp::Add, scaled, beta)?;
        e.cast(y, x_ty.dtype)?
    };
    Ok(Some(vec![out, stats[0], stats[1]]))
}

/// `local_response_norm`, as `torch.nn.functional` computes it: the
/// squares' mean over `size` channels (zero-padded: `constant_pad_nd`,
/// then `avg_pool2d` of a `[N, 1, C, L]` view or `avg_pool3d` of
/// `[N, 1, C, H, rest]`), then `x / (mean·alpha + k)^beta`.
pub fn local_response_norm(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::LocalResponseNorm {
        size,
        alpha,
        beta,
        k,
    } = op
    else {
        return Ok(None);
    };
    let x = nth(operands, 0)?;
    let x_ty = e.ty(x).clone();
    let dim = x_ty.rank();
    if dim < 3 {
        return Err(Error::new(
            ErrorKind::Shape,
            format!(
                "Expected 3D or higher dimensionality                          input (got {dim} dimensions)"
            ),
        ));
    }
    if x_ty.numel() == 0 {
        return one(x);
    }
    let v = Operand::Value;
    let sq = e.binary(BinaryOp::Mul, x, x)?;
    let (before, after) = (size.div_euclid(2), (size - 1).div_euclid(2));
    let pooled = if dim == 3 {
        let div = e.push(Op::Unsqueeze { dim: 1 }, vec![v(sq)])?;
        let div = push_checked(
            e,
            Op::ConstantPadNd {
                pad: vec![0, 0, before, after],
                value: Scalar::Int(0),
            },
            vec![v(div)],
        )?;
        let pool = Op::AvgPool2d {
            kernel_size: vec![*size, 1],
            stride: vec![1],
            padding: vec![0],
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
        };
        let div = push_checked(e, pool, vec![v(div)])?;
        e.push(
            Op::Squeeze {
                dims: Some(vec![1]),
            },
            vec![v(div)],
        )?
    } else {
        let s = &x_ty.shape;
        let div = e.push(
            Op::View {
                shape: vec![s[0], 1, s[1], s[2], -1],
            },
            vec![v(sq)],
        )?;
        let div = push_checked(
            e,
            Op::ConstantPadNd {
                pad: vec![0, 0, 0, 0, before, after],
                value: Scalar::Int(0),
            },
            vec![v(div)],
        )?;
        let pool = Op::AvgPool3d {
            kernel_size: vec![*size, 1, 1],
            stride: vec![1],
            padding: vec![0],
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
        };
        let div = push_checked(e, pool, vec![v(div)])?;
        let div = e.push(
            Op::Squeeze {
                dims: Some(vec![1]),
            },
            vec![v(div)],
        )?;
        e.push(Op::View { shape: s.clone() }, vec![v(div)])?
    };
    let scaled = e.binary(BinaryOp::Mul, pooled, f(alpha.0))?;
    let shifted = e.binary(BinaryOp::Add, scaled, f(k.0))?;
    let powered = e.binary(BinaryOp::Pow, shifted, f(beta.0))?;
    one(e.binary(BinaryOp::Div, x, powered)?)
}
