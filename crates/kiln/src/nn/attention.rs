//! [`Attention`]: multi-head and grouped-query self-attention with
//! separate `q_proj`, `k_proj`, `v_proj`, `o_proj` projections
//! (transformers' Llama, Mistral, Qwen2 naming), optional rotary
//! embeddings, over Kiln's `scaled_dot_product_attention` op
//! ([`Tensor::scaled_dot_product_attention`], PyTorch's math reference).
//!
//! Key/value heads that serve several query heads are not repeated here:
//! the op's `enable_gqa` does it. [`split_heads`] and [`merge_heads`] are
//! the reshapes around it, for models whose projections differ (GPT-2's
//! fused `c_attn`).
//!
//! For generation, [`Attention::forward_cached`] takes the keys and values
//! of earlier positions ([`KvCache`], inputs of the traced step) and
//! returns them extended, so each step runs only the new positions; its
//! shapes grow with the cache, so each length is a program of its own.
//! [`Attention::forward_static`] keeps them in a cache of static length
//! ([`StaticKvCache`]) instead, written in place of its positions, with
//! the step's start an input: one compiled program serves every step (the
//! way XLA serves language models).

use kiln_ir::{Error, ErrorKind, Result};

use super::{Linear, Module, RotaryEmbedding, VarBuilder};
use crate::tensor::{AttentionOptions, Tensor, arange, cat};
use kiln_ir::DType;

/// The sizes and switches of an [`Attention`] block. `new` gives
/// multi-head, causal attention without biases; the methods change one
/// setting each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionConfig {
    hidden_size: i64,
    num_heads: i64,
    num_kv_heads: i64,
    head_dim: Option<i64>,
    qkv_bias: bool,
    o_bias: bool,
    causal: bool,
    scale: Option<f64>,
}

impl AttentionConfig {
    /// `num_heads` heads over `hidden_size` features (heads of
    /// `hidden_size / num_heads`), as many key/value heads, causal.
    pub fn new(hidden_size: i64, num_heads: i64) -> AttentionConfig {
        AttentionConfig {
            hidden_size,
            num_heads,
            num_kv_heads: num_heads,
            head_dim: None,
            qkv_bias: false,
            o_bias: false,
            causal: true,
            scale: None,
        }
    }

    /// Key/value heads (grouped-query attention when fewer than the query
    /// heads; they must divide them).
    pub fn num_kv_heads(mut self, n: i64) -> AttentionConfig {
        self.num_kv_heads = n;
        self
    }

    /// The size of a head (`head_dim` in transformers' configs).
    pub fn head_dim(mut self, d: i64) -> AttentionConfig {
        self.head_dim = Some(d);
        self
    }

    /// Whether `q_proj`, `k_proj` and `v_proj` have biases (Qwen2's do).
    pub fn qkv_bias(mut self, bias: bool) -> AttentionConfig {
        self.qkv_bias = bias;
        self
    }

    /// Whether `o_proj` has a bias.
    pub fn o_bias(mut self, bias: bool) -> AttentionConfig {
        self.o_bias = bias;
        self
    }

    /// Whether each position attends only to itself and earlier ones.
    pub fn causal(mut self, causal: bool) -> AttentionConfig {
        self.causal = causal;
        self
    }

    /// The factor of `q @ kᵀ` (default `1/√head_dim`).
    pub fn scale(mut self, scale: f64) -> AttentionConfig {
        self.scale = Some(scale);
        self
    }

    /// The head size this configuration gives.
    fn resolved_head_dim(&self) -> Result<i64> {
        let bad = |message: String| Err(Error::new(ErrorKind::Attribute, message));
        if self.hidden_size <= 0 || self.num_heads <= 0 || self.num_kv_heads <= 0 {
            return bad(format!(
                "attention needs positive sizes, got hidden_size {}, {} heads, {} key/value heads",
                self.hidden_size, self.num_heads, self.num_kv_heads
            ));
        }
        if self.num_heads % self.num_kv_heads != 0 {
            return bad(format!(
                "{} query heads cannot be shared among {} key/value heads",
                self.num_heads, self.num_kv_heads
            ));
        }
        match self.head_dim {
            Some(d) if d > 0 => Ok(d),
            Some(d) => bad(format!("attention needs a positive head_dim, got {d}")),
            None if self.hidden_size % self.num_heads == 0 => Ok(self.hidden_size / self.num_heads),
            None => bad(format!(
                "hidden_size {} is not divisible by {} heads",
                self.hidden_size, self.num_heads
            )),
        }
    }
}

/// Self-attention: project, split heads, rotate (optionally), attend,
/// merge heads, project out.
#[derive(Clone, Debug, PartialEq)]
pub struct Attention {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    num_heads: i64,
    num_kv_heads: i64,
    options: AttentionOptions,
}

impl Attention {
    /// `q_proj`, `k_proj`, `v_proj`, `o_proj` under `vb`
    /// (`vb.pp("self_attn")`), shaped by `config`.
    pub fn load(vb: &VarBuilder, config: &AttentionConfig) -> Result<Attention> {
        let head_dim = config.resolved_head_dim()?;
        let hidden = config.hidden_size;
        let q_out = config.num_heads * head_dim;
        let kv_out = config.num_kv_heads * head_dim;
        let proj = |name: &str, i: i64, o: i64, bias: bool| {
            if bias {
                Linear::load(&vb.pp(name), i, o)
            } else {
                Linear::load_no_bias(&vb.pp(name), i, o)
            }
        };
        let mut options = AttentionOptions::default();
        options.is_causal = config.causal;
        options.scale = config.scale;
        options.enable_gqa = config.num_kv_heads != config.num_heads;
        Ok(Attention {
            q_proj: proj("q_proj", hidden, q_out, config.qkv_bias)?,
            k_proj: proj("k_proj", hidden, kv_out, config.qkv_bias)?,
            v_proj: proj("v_proj", hidden, kv_out, config.qkv_bias)?,
            o_proj: proj("o_proj", q_out, hidden, config.o_bias)?,
            num_heads: config.num_heads,
            num_kv_heads: config.num_kv_heads,
            options,
        })
    }

    /// Attention over `x` (`[batch, len, hidden]`), rotating queries and
    /// keys with `rotary` when given, with an optional `mask` (bool: where
    /// to attend; float: added to the scores) on top of the causal one.
    pub fn forward_with(
        &self,
        x: &Tensor,
        rotary: Option<&RotaryEmbedding>,
        mask: Option<&Tensor>,
    ) -> Tensor {
        let mut q = split_heads(&self.q_proj.forward(x), self.num_heads);
        let mut k = split_heads(&self.k_proj.forward(x), self.num_kv_heads);
        let v = split_heads(&self.v_proj.forward(x), self.num_kv_heads);
        if let Some(rotary) = rotary {
            q = rotary.apply(&q, 0);
            k = rotary.apply(&k, 0);
        }
        let y = q.scaled_dot_product_attention(&k, &v, mask, self.options);
        self.o_proj.forward(&merge_heads(&y))
    }
}

/// The keys and values of the positions seen so far, `[batch, kv_heads,
/// len, head_dim]` each (after rotary embeddings): what
/// [`Attention::forward_cached`] takes and returns.
#[derive(Clone, Debug, PartialEq)]
pub struct KvCache {
    /// The keys.
    pub k: Tensor,
    /// The values.
    pub v: Tensor,
}

impl KvCache {
    /// How many positions it holds (0 when an earlier op failed).
    pub fn len(&self) -> i64 {
        self.k
            .shape()
            .and_then(|s| s.len().checked_sub(2).map(|i| s[i]))
            .unwrap_or(0)
    }

    /// Whether it holds no positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Attention {
    /// Attention of new positions `x` (`[batch, len, hidden]`) over the
    /// cached ones and themselves: the new positions start at
    /// `past.len()` (rotary embeddings turn them by their true positions),
    /// each attends to every cached position and to the new ones up to
    /// itself (when causal). Returns the output and the cache extended by
    /// the new keys and values.
    pub fn forward_cached(
        &self,
        x: &Tensor,
        rotary: Option<&RotaryEmbedding>,
        past: Option<&KvCache>,
    ) -> (Tensor, KvCache) {
        let offset = past.map_or(0, KvCache::len);
        let mut q = split_heads(&self.q_proj.forward(x), self.num_heads);
        let mut k = split_heads(&self.k_proj.forward(x), self.num_kv_heads);
        let mut v = split_heads(&self.v_proj.forward(x), self.num_kv_heads);
        if let Some(rotary) = rotary {
            q = rotary.apply(&q, offset);
            k = rotary.apply(&k, offset);
        }
        if let Some(past) = past {
            k = cat(&[&past.k, &k], -2);
            v = cat(&[&past.v, &v], -2);
        }
        let len = q
            .shape()
            .and_then(|s| s.len().checked_sub(2).map(|i| s[i]))
            .unwrap_or(0);
        let mut options = self.options;
        let mut mask = None;
        if options.is_causal && offset > 0 {
            // PyTorch's is_causal aligns the triangle top-left; with a
            // cache, query i sits at position offset + i.
            options.is_causal = false;
            if len > 1 {
                let rows = arange(0, len, 1, Some(DType::I64)).unsqueeze(1) + offset;
                let cols = arange(0, offset + len, 1, Some(DType::I64)).unsqueeze(0);
                mask = Some(cols.le(&rows));
            }
        }
        let y = q.scaled_dot_product_attention(&k, &v, mask.as_ref(), options);
        (self.o_proj.forward(&merge_heads(&y)), KvCache { k, v })
    }
}

/// Keys and values in a cache of static length, `[batch, kv_heads,
/// max_len, head_dim]` each: what [`Attention::forward_static`] takes and
/// returns. Positions not written yet are masked, whatever they hold
/// (zeros, as made by the caller, keep them finite).
#[derive(Clone, Debug, PartialEq)]
pub struct StaticKvCache {
    /// The keys.
    pub k: Tensor,
    /// The values.
    pub v: Tensor,
}

impl Attention {
    /// Attention of new positions `x` (`[batch, len, hidden]`) at positions
    /// `start .. start + len` (`start`: a 0-D int64 tensor, an input of the
    /// step) against a cache of static length: the new keys and values
    /// are written at their positions (`index_put`), and each new position
    /// attends to the cache's positions up to itself when causal (to every
    /// written one otherwise). No shape depends on `start`, so one compiled
    /// program serves every step of one length. Returns the output and the
    /// cache with the new positions written.
    pub fn forward_static(
        &self,
        x: &Tensor,
        rotary: Option<&RotaryEmbedding>,
        cache: &StaticKvCache,
        start: &Tensor,
    ) -> (Tensor, StaticKvCache) {
        let len = x.shape().and_then(|s| s.get(1).copied()).unwrap_or(0);
        let positions = arange(0, len, 1, Some(DType::I64)) + start;
        let mut q = split_heads(&self.q_proj.forward(x), self.num_heads);
        let mut k = split_heads(&self.k_proj.forward(x), self.num_kv_heads);
        let v = split_heads(&self.v_proj.forward(x), self.num_kv_heads);
        if let Some(rotary) = rotary {
            q = rotary.apply_at(&q, &positions);
            k = rotary.apply_at(&k, &positions);
        }
        let (y, cache) = attend_static(&q, &k, &v, cache, &positions, self.options);
        (self.o_proj.forward(&merge_heads(&y)), cache)
    }
}

/// The core of a step over a cache of static length, for any model's
/// attention: `k` and `v` (`[batch, kv_heads, len, head_dim]`) written at
/// `positions` (an int64 vector of `len`) of the cache with `index_put`,
/// and `q` attending over the whole cache, masked by position: when
/// `options.is_causal`, each query to the cache's positions up to its own;
/// otherwise to every position written so far (up to the last of
/// `positions`). Returns the attention (`[batch, heads, len, head_dim]`)
/// and the written cache.
pub fn attend_static(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    cache: &StaticKvCache,
    positions: &Tensor,
    options: AttentionOptions,
) -> (Tensor, StaticKvCache) {
    let at = [None, None, Some(positions)];
    let k = cache.k.index_put(&at, k, false);
    let v = cache.v.index_put(&at, v, false);
    let max_len = k
        .shape()
        .and_then(|s| s.len().checked_sub(2).map(|i| s[i]))
        .unwrap_or(0);
    let cols = arange(0, max_len, 1, Some(DType::I64)).unsqueeze(0);
    let mask = if options.is_causal {
        cols.le(&positions.unsqueeze(1))
    } else {
        cols.le(&positions.amax(&[0], false))
    };
    let mut options = options;
    options.is_causal = false;
    let y = q.scaled_dot_product_attention(&k, &v, Some(&mask), options);
    (y, StaticKvCache { k, v })
}

impl Module for Attention {
    /// Attention without rotary embeddings or a further mask.
    fn forward(&self, x: &Tensor) -> Tensor {
        self.forward_with(x, None, None)
    }
}

/// `[..., len, heads·d]` to `[..., heads, len, d]` (a view).
pub fn split_heads(x: &Tensor, heads: i64) -> Tensor {
    let Some(mut shape) = x.shape() else {
        return x.clone(); // an earlier op failed; the trace reports it
    };
    let Some(last) = shape.pop() else {
        return x.transpose(-3, -2); // a 0-d tensor: transpose's error
    };
    shape.extend([heads, if heads > 0 { last / heads } else { -1 }]);
    x.view(&shape).transpose(-3, -2)
}

/// `[..., heads, len, d]` to `[..., len, heads·d]` (a copy: the heads are
/// interleaved back).
pub fn merge_heads(x: &Tensor) -> Tensor {
    let Some(shape) = x.shape() else {
        return x.clone();
    };
    if shape.len() < 3 {
        return x.transpose(-3, -2); // transpose's error names the rank
    }
    let r = shape.len();
    let mut merged = shape[..r - 3].to_vec();
    merged.extend([shape[r - 2], shape[r - 3] * shape[r - 1]]);
    x.transpose(-3, -2).reshape(&merged)
}
