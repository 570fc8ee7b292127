//! [`RmsNorm`]: root-mean-square norm as transformers' `LlamaRMSNorm`
//! computes it, written out in ops (Kiln has no rms_norm op):
//! `weight * (x.f32 * rsqrt(mean(x.f32², -1, keepdim) + eps)).to(x.dtype)`.
//! The statistics are taken in f32 for f16 and bf16 inputs, then the
//! result is cast back before the weight multiplies it, so a bf16 model
//! rounds where transformers rounds.

use kiln_ir::{DType, Result};

use super::{Module, Param, VarBuilder};
use crate::tensor::Tensor;

/// RMS norm over the last dim with a `weight` `[dim]`.
#[derive(Clone, Debug, PartialEq)]
pub struct RmsNorm {
    weight: Param,
    eps: f64,
}

impl RmsNorm {
    /// `weight` under `vb` (`vb.pp("input_layernorm")`).
    pub fn load(vb: &VarBuilder, dim: i64, eps: f64) -> Result<RmsNorm> {
        Ok(RmsNorm {
            weight: vb.get("weight", &[dim])?,
            eps,
        })
    }

    /// The epsilon added to the mean square.
    pub fn eps(&self) -> f64 {
        self.eps
    }
}

impl Module for RmsNorm {
    fn forward(&self, x: &Tensor) -> Tensor {
        let Some(dtype) = x.dtype() else {
            return x.clone(); // an earlier op failed; the trace reports it
        };
        let xf = if dtype.is_reduced_float() {
            x.to_dtype(DType::F32)
        } else {
            x.clone()
        };
        let variance = (&xf * &xf).mean(&[-1], true);
        let normed = &xf * (variance + self.eps).rsqrt();
        self.weight.tensor() * normed.to_dtype(dtype)
    }
}
