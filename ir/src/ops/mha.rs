//! `F.multi_head_attention_forward` (what `nn.MultiheadAttention`
//! computes), expanded as PyTorch's Python function computes it, step by
//! step, with its checks and their words: the input projections (packed
//! `in_proj_weight` chunked in three, or the separate `q/k/v_proj_weight`),
//! `bias_k`/`bias_v` appended as one more key, the heads split, a zero key
//! with `add_zero_attn`, `key_padding_mask` merged into `attn_mask` (bool
//! masks become additive −inf masks, True hiding a key: the opposite of
//! `scaled_dot_product_attention`'s bool masks), then either
//!
//! - with `need_weights`: `softmax(q·√(1/E) @ kᵀ + mask) @ v` written out
//!   (`baddbmm`, `softmax`, `bmm`), and the weights as a second result,
//!   averaged over the heads with `average_attn_weights`; or
//! - without: one `scaled_dot_product_attention` (with `is_causal` when
//!   the caller gave no key padding mask, as PyTorch does), which the
//!   backends fuse;
//!
//! and the output projection. Inference only: dropout in training is
//! refused. Sequence-first (`[L, N, E]`, or `[L, E]` unbatched), as the
//! function (the module transposes for `batch_first`).

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Operand, ValueId};
use crate::scalar::{F64, Scalar};

use super::expand::Emitter;
use super::{BinaryOp, Op};

/// The operand slots, in the schema's order.
const QUERY: usize = 0;
const KEY: usize = 1;
const VALUE: usize = 2;
const IN_PROJ_WEIGHT: usize = 3;
const IN_PROJ_BIAS: usize = 4;
const BIAS_K: usize = 5;
const BIAS_V: usize = 6;
const OUT_PROJ_WEIGHT: usize = 7;
const OUT_PROJ_BIAS: usize = 8;
const KEY_PADDING_MASK: usize = 9;
const ATTN_MASK: usize = 10;
const Q_PROJ_WEIGHT: usize = 11;
const K_PROJ_WEIGHT: usize = 12;
const V_PROJ_WEIGHT: usize = 13;
const STATIC_K: usize = 14;
const STATIC_V: usize = 15;

/// PyTorch's AssertionError / RuntimeError of a shape check.
fn shape_error(message: String) -> Error {
    Error::new(ErrorKind::Shape, message)
}

/// `torch.Size([3, 2])`, as Python prints a tensor's shape.
fn size(shape: &[i64]) -> String {
    format!("torch.Size({})", crate::view::format_shape(shape))
}

/// `(3, 5)` or `(3,)`, as Python prints a tuple of ints.
fn tuple(dims: &[i64]) -> String {
    match dims {
        [d] => format!("({d},)"),
        _ => {
            let dims: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
            format!("({})", dims.join(", "))
        }
    }
}

fn v(x: ValueId) -> Operand {
    Operand::Value(x)
}

/// The emitter and the ops the expansion is written in.
struct Ops<'e, 'b> {
    e: &'e mut Emitter<'b>,
}

impl Ops<'_, '_> {
    fn shape(&self, x: ValueId) -> Vec<i64> {
        self.e.ty(x).shape.clone()
    }

    fn op(&mut self, op: Op, operands: Vec<Operand>) -> Result<ValueId> {
        self.e.push(op, operands)
    }

    fn reshape(&mut self, x: ValueId, shape: Vec<i64>) -> Result<ValueId> {
        self.op(Op::Reshape { shape }, vec![v(x)])
    }

    fn transpose(&mut self, x: ValueId, dim0: i64, dim1: i64) -> Result<ValueId> {
        self.op(Op::Transpose { dim0, dim1 }, vec![v(x)])
    }

    fn unsqueeze(&mut self, x: ValueId, dim: i64) -> Result<ValueId> {
        self.op(Op::Unsqueeze { dim }, vec![v(x)])
    }

    fn squeeze(&mut self, x: ValueId, dim: i64) -> Result<ValueId> {
        self.op(
            Op::Squeeze {
                dims: Some(vec![dim]),
            },
            vec![v(x)],
        )
    }

    fn linear(&mut self, x: ValueId, w: ValueId, b: Option<ValueId>) -> Result<ValueId> {
        self.op(Op::Linear, vec![v(x), v(w), b.map_or(Operand::None, v)])
    }

    fn cat(&mut self, xs: Vec<ValueId>, dim: i64) -> Result<ValueId> {
        self.e
            .push(Op::Cat { dim }, xs.into_iter().map(v).collect())
    }

    /// `F.pad(x, (0, 1))`: one more zero at the end of the last dim.
    fn pad_one(&mut self, x: ValueId) -> Result<ValueId> {
        self.op(
            Op::ConstantPadNd {
                pad: vec![0, 1],
                value: Scalar::Int(0),
            },
            vec![v(x)],
        )
    }

    /// `x.chunk(3)` along dim 0.
    fn thirds(&mut self, x: ValueId) -> Result<Vec<ValueId>> {
        self.e.push_all(Op::Chunk { chunks: 3, dim: 0 }, vec![v(x)])
    }

    /// `_canonical_mask`: a bool mask as an additive one in `dtype` (−inf
    /// where True), a float mask as it is.
    fn canonical_mask(&mut self, mask: ValueId, name: &str, dtype: DType) -> Result<ValueId> {
        let d = self.e.ty(mask).dtype;
        if d == DType::Bool {
            let m = self.op(
                Op::Where,
                vec![
                    v(mask),
                    Operand::Scalar(Scalar::Float(f64::NEG_INFINITY)),
                    Operand::Scalar(Scalar::Float(0.0)),
                ],
            )?;
            self.e.cast(m, dtype)
        } else if d.is_floating_point() {
            Ok(mask)
        } else {
            Err(Error::new(
                ErrorKind::DType,
                format!("only bool and floating types of {name} are supported"),
            ))
        }
    }
}

/// The expansion (see the module doc): the output, then with
/// `need_weights` the attention weights.
pub fn multi_head_attention_forward(
    e: &mut Emitter<'_>,
    op: &Op,
    operands: &[Operand],
) -> Result<Option<Vec<ValueId>>> {
    let Op::MultiHeadAttentionForward {
        embed_dim_to_check,
        num_heads,
        add_zero_attn,
        dropout_p,
        training,
        need_weights,
        use_separate_proj_weight,
        average_attn_weights,
        is_causal,
    } = op
    else {
        return Ok(None);
    };
    let value = |i: usize| match operands.get(i) {
        Some(Operand::Value(x)) => Some(*x),
        _ => None,
    };
    let (Some(query), Some(key), Some(val), Some(out_proj_weight)) = (
        value(QUERY),
        value(KEY),
        value(VALUE),
        value(OUT_PROJ_WEIGHT),
    ) else {
        return Ok(None);
    };
    let heads = *num_heads;
    let mut x = Ops { e };
    let rank = |x: &Ops, t: ValueId| x.e.ty(t).rank();
    let (mut kpm, mut attn_mask) = (value(KEY_PADDING_MASK), value(ATTN_MASK));

    // _mha_shape_check: the same checks for a batched (3-D) and an
    // unbatched (2-D) query, in PyTorch's words for each.
    let (batched, label) = match rank(&x, query) {
        3 => (true, "batched (3-D)"),
        2 => (false, "unbatched (2-D)"),
        r => {
            return Err(shape_error(format!(
                "query should be unbatched 2D or batched 3D tensor but received {r}-D query tensor"
            )));
        }
    };
    let want = rank(&x, query);
    let (rk, rv) = (rank(&x, key), rank(&x, val));
    if rk != want || rv != want {
        return Err(shape_error(format!(
            "For {label} `query`, expected `key` and `value` to be {want}-D but found {rk}-D and {rv}-D tensors respectively"
        )));
    }
    if let Some(m) = kpm.filter(|m| rank(&x, *m) != want - 1) {
        return Err(shape_error(format!(
            "For {label} `query`, expected `key_padding_mask` to be `None` or {}-D but found {}-D tensor instead",
            want - 1,
            rank(&x, m)
        )));
    }
    if let Some(m) = attn_mask {
        let r = rank(&x, m);
        if !matches!(r, 2 | 3) {
            return Err(shape_error(format!(
                "For {label} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found {r}-D tensor instead"
            )));
        }
        let per_head = [heads, x.shape(query)[0], x.shape(key)[0]];
        if !batched && r == 3 && x.shape(m) != per_head {
            return Err(shape_error(format!(
                "Expected `attn_mask` shape to be {} but got {}",
                tuple(&per_head),
                size(&x.shape(m))
            )));
        }
    }
    let (mut query, mut key, mut val) = (query, key, val);
    if !batched {
        query = x.unsqueeze(query, 1)?;
        key = x.unsqueeze(key, 1)?;
        val = x.unsqueeze(val, 1)?;
        if let Some(m) = kpm {
            kpm = Some(x.unsqueeze(m, 0)?);
        }
    }
    let q_shape = x.shape(query);
    let (tgt_len, bsz, embed_dim) = (q_shape[0], q_shape[1], q_shape[2]);
    let dtype = x.e.ty(query).dtype;
    if !dtype.is_floating_point() {
        return Err(Error::new(
            ErrorKind::DType,
            format!(
                "multi_head_attention_forward computes in floating point, but query is {dtype}"
            ),
        ));
    }
    if let Some(m) = kpm {
        kpm = Some(x.canonical_mask(m, "key_padding_mask", dtype)?);
    }
    let mut causal = *is_causal;
    if causal && attn_mask.is_none() {
        return Err(Error::new(
            ErrorKind::Attribute,
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method `generate_square_subsequent_mask` to create this mask.",
        ));
    }
    if causal && kpm.is_none() && !need_weights {
        // scaled_dot_product_attention's is_causal stands for the mask.
        attn_mask = None;
    } else {
        if let Some(m) = attn_mask {
            attn_mask = Some(x.canonical_mask(m, "attn_mask", dtype)?);
        }
        if kpm.is_some() {
            // The merged mask is no longer causal.
            causal = false;
        }
    }
    if embed_dim != *embed_dim_to_check {
        return Err(shape_error(format!(
            "was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )));
    }
    if heads <= 0 {
        return Err(Error::new(
            ErrorKind::Attribute,
            format!("num_heads must be positive, got {heads}"),
        ));
    }
    let head_dim = embed_dim / heads;
    if head_dim * heads != embed_dim {
        return Err(shape_error(format!(
            "embed_dim {embed_dim} not divisible by num_heads {heads}"
        )));
    }
    let (k_shape, v_shape) = (x.shape(key), x.shape(val));
    if *use_separate_proj_weight {
        if k_shape[..2] != v_shape[..2] {
            return Err(shape_error(format!(
                "key's sequence and batch dims {} do not match value's {}",
                size(&k_shape[..2]),
                size(&v_shape[..2])
            )));
        }
    } else if k_shape != v_shape {
        return Err(shape_error(format!(
            "key shape {} does not match value shape {}",
            size(&k_shape),
            size(&v_shape)
        )));
    }

    // The input projections (the weights' presence checked first, as
    // PyTorch does).
    let missing = |message: String| Error::new(ErrorKind::Arity, message);
    let packed = match value(IN_PROJ_WEIGHT) {
        None if !*use_separate_proj_weight => {
            return Err(missing(
                "use_separate_proj_weight is False but in_proj_weight is None".into(),
            ));
        }
        w => w,
    };
    if *use_separate_proj_weight {
        for (i, name) in [
            (Q_PROJ_WEIGHT, "q_proj_weight"),
            (K_PROJ_WEIGHT, "k_proj_weight"),
            (V_PROJ_WEIGHT, "v_proj_weight"),
        ] {
            if value(i).is_none() {
                return Err(missing(format!(
                    "use_separate_proj_weight is True but {name} is None"
                )));
            }
        }
    }
    let in_bias = match value(IN_PROJ_BIAS) {
        Some(b) => {
            let [bq, bk, bv] = x.thirds(b)?[..] else {
                return Err(shape_error(format!(
                    "in_proj_bias of shape {} does not chunk into three",
                    size(&x.shape(b))
                )));
            };
            [Some(bq), Some(bk), Some(bv)]
        }
        None => [None; 3],
    };
    let (q, mut k, mut vv) = if let (false, Some(w)) = (*use_separate_proj_weight, packed) {
        let [wq, wk, wv] = x.thirds(w)?[..] else {
            return Err(shape_error(format!(
                "in_proj_weight of shape {} does not chunk into three",
                size(&x.shape(w))
            )));
        };
        (
            x.linear(query, wq, in_bias[0])?,
            x.linear(key, wk, in_bias[1])?,
            x.linear(val, wv, in_bias[2])?,
        )
    } else {
        let (Some(wq), Some(wk), Some(wv)) = (
            value(Q_PROJ_WEIGHT),
            value(K_PROJ_WEIGHT),
            value(V_PROJ_WEIGHT),
        ) else {
            return Ok(None);
        };
        // _in_projection's checks.
        let (eq, ek, ev) = (embed_dim, k_shape[2], v_shape[2]);
        for (w, want, name) in [
            (wq, [eq, eq], "query"),
            (wk, [eq, ek], "key"),
            (wv, [eq, ev], "value"),
        ] {
            if x.shape(w) != want {
                return Err(shape_error(format!(
                    "expecting {name} weights shape of {}, but got {}",
                    tuple(&want),
                    size(&x.shape(w))
                )));
            }
        }
        for (b, name) in in_bias.iter().zip(["query", "key", "value"]) {
            if let Some(b) = b.filter(|b| x.shape(*b) != [eq]) {
                return Err(shape_error(format!(
                    "expecting {name} bias shape of {}, but got {}",
                    tuple(&[eq]),
                    size(&x.shape(b))
                )));
            }
        }
        (
            x.linear(query, wq, in_bias[0])?,
            x.linear(key, wk, in_bias[1])?,
            x.linear(val, wv, in_bias[2])?,
        )
    };

    let src_len = k_shape[0];
    if let Some(m) = attn_mask {
        let shape = x.shape(m);
        attn_mask = Some(match shape.len() {
            2 => {
                let want = [tgt_len, src_len];
                if shape != want {
                    return Err(shape_error(format!(
                        "The shape of the 2D attn_mask is {}, but should be {}.",
                        size(&shape),
                        tuple(&want)
                    )));
                }
                x.unsqueeze(m, 0)?
            }
            3 => {
                let want = [bsz * heads, tgt_len, src_len];
                if shape != want {
                    return Err(shape_error(format!(
                        "The shape of the 3D attn_mask is {}, but should be {}.",
                        size(&shape),
                        tuple(&want)
                    )));
                }
                m
            }
            r => {
                return Err(shape_error(format!(
                    "attn_mask's dimension {r} is not supported"
                )));
            }
        });
    }
    let (static_k, static_v) = (value(STATIC_K), value(STATIC_V));
    match (value(BIAS_K), value(BIAS_V)) {
        (Some(bk), Some(bv)) => {
            if static_k.is_some() {
                return Err(shape_error("bias cannot be added to static key.".into()));
            }
            if static_v.is_some() {
                return Err(shape_error("bias cannot be added to static value.".into()));
            }
            let repeats = vec![1, bsz, 1];
            let bk = x.op(
                Op::Repeat {
                    repeats: repeats.clone(),
                },
                vec![v(bk)],
            )?;
            let bv = x.op(Op::Repeat { repeats }, vec![v(bv)])?;
            k = x.cat(vec![k, bk], 0)?;
            vv = x.cat(vec![vv, bv], 0)?;
            if let Some(m) = attn_mask {
                attn_mask = Some(x.pad_one(m)?);
            }
            if let Some(m) = kpm {
                kpm = Some(x.pad_one(m)?);
            }
        }
        (Some(_), None) => {
            return Err(shape_error("bias_k is set but bias_v is None".into()));
        }
        (None, Some(_)) => {
            return Err(shape_error("bias_v is set but bias_k is None".into()));
        }
        (None, None) => {}
    }

    // The heads: [bsz · heads, len, head_dim].
    let bh = bsz * heads;
    let q = x.reshape(q, vec![tgt_len, bh, head_dim])?;
    let q = x.transpose(q, 0, 1)?;
    let split_heads =
        |x: &mut Ops, t: ValueId, given: Option<ValueId>, name: &str| -> Result<ValueId> {
            match given {
                None => {
                    let len = x.shape(t)[0];
                    let t = x.reshape(t, vec![len, bh, head_dim])?;
                    x.transpose(t, 0, 1)
                }
                Some(s) => {
                    let shape = x.shape(s);
                    if shape.first() != Some(&bh) {
                        return Err(shape_error(format!(
                            "expecting {name}.size(0) of {bh}, but got {}",
                            shape.first().copied().unwrap_or(0)
                        )));
                    }
                    if shape.get(2) != Some(&head_dim) {
                        return Err(shape_error(format!(
                            "expecting {name}.size(2) of {head_dim}, but got {}",
                            shape.get(2).copied().unwrap_or(0)
                        )));
                    }
                    Ok(s)
                }
            }
        };
    k = split_heads(&mut x, k, static_k, "static_k")?;
    vv = split_heads(&mut x, vv, static_v, "static_v")?;
    if *add_zero_attn {
        let zeros = |x: &mut Ops, t: ValueId| -> Result<ValueId> {
            let dtype = x.e.ty(t).dtype;
            x.op(
                Op::Full {
                    shape: vec![bh, 1, head_dim],
                    value: Scalar::Int(0),
                    dtype: Some(dtype),
                    device: None,
                },
                vec![],
            )
        };
        let (zk, zv) = (zeros(&mut x, k)?, zeros(&mut x, vv)?);
        k = x.cat(vec![k, zk], 1)?;
        vv = x.cat(vec![vv, zv], 1)?;
        if let Some(m) = attn_mask {
            attn_mask = Some(x.pad_one(m)?);
        }
        if let Some(m) = kpm {
            kpm = Some(x.pad_one(m)?);
        }
    }
    let src_len = x.shape(k)[1];
    if let Some(m) = kpm {
        let shape = x.shape(m);
        for (d, want) in [bsz, src_len].into_iter().enumerate() {
            if shape[d] != want {
                return Err(shape_error(format!(
                    "Expected key_padded_mask.shape[{d}] to be {want}, but got {}",
                    shape[d]
                )));
            }
        }
        let m = x.reshape(m, vec![bsz, 1, 1, src_len])?;
        let m = x.op(
            Op::Expand {
                shape: vec![bsz, heads, 1, src_len],
            },
            vec![v(m)],
        )?;
        let m = x.reshape(m, vec![bh, 1, src_len])?;
        attn_mask = Some(match attn_mask {
            None => m,
            Some(a) => x.e.binary(BinaryOp::Add, a, m)?,
        });
    }
    if *training && dropout_p.0 > 0.0 {
        return Err(Error::new(
            ErrorKind::Attribute,
            format!(
                "multi_head_attention_forward with dropout_p = {} in training: Kiln runs inference (training = false, or dropout_p = 0)",
                dropout_p.0
            ),
        ));
    }

    let project_out = |x: &mut Ops, o: ValueId| -> Result<ValueId> {
        let o = x.linear(o, out_proj_weight, value(OUT_PROJ_BIAS))?;
        let width = x.shape(o)[1];
        let o = x.reshape(o, vec![tgt_len, bsz, width])?;
        if batched { Ok(o) } else { x.squeeze(o, 1) }
    };
    if *need_weights {
        let scale = (1.0 / head_dim as f64).sqrt();
        let q_scaled =
            x.e.binary(BinaryOp::Mul, q, Operand::Scalar(Scalar::Float(scale)))?;
        let kt = x.transpose(k, -2, -1)?;
        let scores = match attn_mask {
            Some(m) => x.op(
                Op::Baddbmm {
                    beta: Scalar::Int(1),
                    alpha: Scalar::Int(1),
                },
                vec![v(m), v(q_scaled), v(kt)],
            )?,
            None => x.op(Op::Bmm, vec![v(q_scaled), v(kt)])?,
        };
        let weights = x.op(
            Op::Softmax {
                dim: -1,
                dtype: None,
            },
            vec![v(scores)],
        )?;
        let o = x.op(Op::Bmm, vec![v(weights), v(vv)])?;
        let o = x.transpose(o, 0, 1)?;
        let o = x.reshape(o, vec![tgt_len * bsz, embed_dim])?;
        let o = project_out(&mut x, o)?;
        let mut w = x.reshape(weights, vec![bsz, heads, tgt_len, src_len])?;
        if *average_attn_weights {
            w = x.op(
                Op::Mean {
                    dims: Some(vec![1]),
                    keepdim: false,
                    dtype: None,
                },
                vec![v(w)],
            )?;
        }
        if !batched {
            w = x.squeeze(w, 0)?;
        }
        return Ok(Some(vec![o, w]));
    }
    let mask = match attn_mask {
        Some(m) if x.shape(m)[0] == 1 && x.e.ty(m).rank() == 3 => Some(x.unsqueeze(m, 0)?),
        Some(m) => Some(x.reshape(m, vec![bsz, heads, -1, src_len])?),
        None => None,
    };
    let q = x.reshape(q, vec![bsz, heads, tgt_len, head_dim])?;
    let k = x.reshape(k, vec![bsz, heads, src_len, head_dim])?;
    let vv = x.reshape(vv, vec![bsz, heads, src_len, head_dim])?;
    let o = x.op(
        Op::ScaledDotProductAttention {
            dropout_p: F64(0.0),
            is_causal: causal,
            scale: None,
            enable_gqa: false,
        },
        vec![v(q), v(k), v(vv), mask.map_or(Operand::None, v)],
    )?;
    let o = x.op(
        Op::Permute {
            dims: vec![2, 0, 1, 3],
        },
        vec![v(o)],
    )?;
    let o = x.reshape(o, vec![bsz * tgt_len, embed_dim])?;
    Ok(Some(vec![project_out(&mut x, o)?]))
}
