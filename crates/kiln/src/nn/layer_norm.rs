//! [`LayerNorm`]: `nn.LayerNorm` over the last dim, recorded as Kiln's
//! `layer_norm` op ([`Tensor::layer_norm`], which computes in opmath: f32
//! for f16 and bf16 inputs, as PyTorch does).

use kiln_ir::Result;

use super::{Module, Param, VarBuilder};
use crate::tensor::Tensor;

/// `nn.LayerNorm(dim, eps)` with an affine `weight` and, optionally, a
/// `bias` (both `[dim]`).
#[derive(Clone, Debug, PartialEq)]
pub struct LayerNorm {
    weight: Param,
    bias: Option<Param>,
    eps: f64,
}

impl LayerNorm {
    /// `weight` and `bias` under `vb` (`vb.pp("ln_1")`).
    pub fn load(vb: &VarBuilder, dim: i64, eps: f64) -> Result<LayerNorm> {
        Ok(LayerNorm {
            weight: vb.get("weight", &[dim])?,
            bias: Some(vb.get("bias", &[dim])?),
            eps,
        })
    }

    /// `weight` under `vb`, without a bias (`bias=False`).
    pub fn load_no_bias(vb: &VarBuilder, dim: i64, eps: f64) -> Result<LayerNorm> {
        Ok(LayerNorm {
            weight: vb.get("weight", &[dim])?,
            bias: None,
            eps,
        })
    }

    /// The epsilon added to the variance.
    pub fn eps(&self) -> f64 {
        self.eps
    }
}

impl Module for LayerNorm {
    fn forward(&self, x: &Tensor) -> Tensor {
        let dim = self.weight.shape()[0];
        let bias = self.bias.as_ref().map(Param::tensor);
        x.layer_norm(&[dim], Some(&self.weight.tensor()), bias.as_ref(), self.eps)
    }
}
