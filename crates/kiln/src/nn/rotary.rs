//! [`RotaryEmbedding`]: rotary position embeddings (RoPE) in transformers'
//! convention (Llama, Mistral, Qwen, ...): the two halves of each head are
//! rotated as a pair ([`rotate_half`]), `x·cos + rotate_half(x)·sin`.
//!
//! The cos and sin tables are computed in the graph, as transformers'
//! `LlamaRotaryEmbedding` computes them: `inv_freq = 1 / θ^(2i/d)` and the
//! positions in f32, `freqs = positions ⊗ inv_freq`, `emb = cat(freqs,
//! freqs)`, then `cos(emb)`, `sin(emb)` cast to the activations' dtype. They
//! depend on nothing but sizes, so the optimizer folds them into constants.

use kiln_ir::{BinaryOp, DType, Error, ErrorKind, Op, Result};

use crate::tensor::{Tensor, arange, cat};
use crate::trace::{Input, apply};

/// Rotary embeddings for heads of `head_dim` with base `theta`
/// (`rope_theta`, 10000 for Llama 2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotaryEmbedding {
    head_dim: i64,
    theta: f64,
}

impl RotaryEmbedding {
    /// Rotary embeddings; `head_dim` must be even and `theta` positive.
    pub fn new(head_dim: i64, theta: f64) -> Result<RotaryEmbedding> {
        if head_dim <= 0 || head_dim % 2 != 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("rotary embeddings need an even head_dim, got {head_dim}"),
            ));
        }
        if !(theta > 0.0 && theta.is_finite()) {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("rotary embeddings need a positive theta, got {theta}"),
            ));
        }
        Ok(RotaryEmbedding { head_dim, theta })
    }

    /// The size of the heads it rotates.
    pub fn head_dim(&self) -> i64 {
        self.head_dim
    }

    /// The base of the frequencies.
    pub fn theta(&self) -> f64 {
        self.theta
    }

    /// The tables `cos` and `sin`, `[len, head_dim]` in `dtype`, for the
    /// positions `offset .. offset + len`.
    pub fn cos_sin(&self, len: i64, offset: i64, dtype: DType) -> (Tensor, Tensor) {
        self.cos_sin_at(&arange(offset, offset + len, 1, Some(DType::I64)), dtype)
    }

    /// The tables for the positions an int64 vector holds, `[len,
    /// head_dim]`: computed when the program runs when the positions are
    /// (a static-cache decoding step's start is an input).
    pub fn cos_sin_at(&self, positions: &Tensor, dtype: DType) -> (Tensor, Tensor) {
        let d = self.head_dim;
        let exponents = arange(0, d, 2, Some(DType::I64)).to_dtype(DType::F32) / d as f64;
        let powers = apply(
            Op::Binary { op: BinaryOp::Pow },
            &[Input::from(self.theta), Input::from(&exponents)],
        )
        .remove(0);
        let inv_freq = 1.0 / powers;
        let positions = positions.to_dtype(DType::F32);
        let freqs = positions.unsqueeze(1) * inv_freq.unsqueeze(0);
        let emb = cat(&[&freqs, &freqs], -1);
        (emb.cos().to_dtype(dtype), emb.sin().to_dtype(dtype))
    }

    /// Rotates `x` (`[..., len, head_dim]`: `[batch, heads, len,
    /// head_dim]`), whose first position is `offset`.
    pub fn apply(&self, x: &Tensor, offset: i64) -> Tensor {
        let Some(shape) = x.shape() else {
            return x.clone(); // an earlier op failed; the trace reports it
        };
        let len = shape.len().checked_sub(2).map_or(1, |i| shape[i]);
        self.apply_at(x, &arange(offset, offset + len, 1, Some(DType::I64)))
    }

    /// Rotates `x` (`[..., len, head_dim]`) whose positions an int64
    /// vector of `len` holds.
    pub fn apply_at(&self, x: &Tensor, positions: &Tensor) -> Tensor {
        let Some(dtype) = x.dtype() else {
            return x.clone(); // an earlier op failed; the trace reports it
        };
        let (cos, sin) = self.cos_sin_at(positions, dtype);
        x * cos + rotate_half(x) * sin
    }
}

/// transformers' `rotate_half`: `cat(-x2, x1)` of the last dim's halves.
pub fn rotate_half(x: &Tensor) -> Tensor {
    let Some(d) = x.shape().and_then(|s| s.last().copied()) else {
        return x.clone();
    };
    let x1 = x.slice(-1, Some(0), Some(d / 2), 1);
    let x2 = x.slice(-1, Some(d / 2), None, 1);
    cat(&[&-x2, &x1], -1)
}
