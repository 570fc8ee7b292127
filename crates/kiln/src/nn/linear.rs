//! [`Linear`]: `nn.Linear`, `y = x @ weightᵀ + bias` with the weight stored
//! `[out_features, in_features]`, recorded as Kiln's `linear` op
//! ([`Tensor::linear`]) so the passes see one op they can fuse and lower.

use kiln_ir::Result;

use super::{Module, Param, VarBuilder};
use crate::tensor::Tensor;

/// `nn.Linear`: `weight` `[out, in]` and an optional `bias` `[out]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    weight: Param,
    bias: Option<Param>,
}

impl Linear {
    /// `weight` and `bias` under `vb` (`vb.pp("q_proj")`), with a bias.
    pub fn load(vb: &VarBuilder, in_features: i64, out_features: i64) -> Result<Linear> {
        Ok(Linear {
            weight: vb.get("weight", &[out_features, in_features])?,
            bias: Some(vb.get("bias", &[out_features])?),
        })
    }

    /// `weight` under `vb`, without a bias (`bias=False`).
    pub fn load_no_bias(vb: &VarBuilder, in_features: i64, out_features: i64) -> Result<Linear> {
        Ok(Linear {
            weight: vb.get("weight", &[out_features, in_features])?,
            bias: None,
        })
    }

    /// From parameters loaded elsewhere (a head tied to an embedding:
    /// `Linear::new(embedding.weight().clone(), None)`).
    pub fn new(weight: Param, bias: Option<Param>) -> Linear {
        Linear { weight, bias }
    }

    /// The weight, `[out, in]`.
    pub fn weight(&self) -> &Param {
        &self.weight
    }

    /// The bias, `[out]`, if any.
    pub fn bias(&self) -> Option<&Param> {
        self.bias.as_ref()
    }
}

impl Module for Linear {
    fn forward(&self, x: &Tensor) -> Tensor {
        let bias = self.bias.as_ref().map(Param::tensor);
        x.linear(&self.weight.tensor(), bias.as_ref())
    }
}
