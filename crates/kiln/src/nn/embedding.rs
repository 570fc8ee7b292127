//! [`Embedding`]: `nn.Embedding`, the rows of a `[num_embeddings, dim]`
//! table at integer indices, recorded as Kiln's `embedding` op
//! ([`Tensor::embedding`]; an index out of range is PyTorch's IndexError
//! at run time on every backend).

use kiln_ir::Result;

use super::{Module, Param, VarBuilder};
use crate::tensor::Tensor;

/// `nn.Embedding`: `weight` `[num_embeddings, dim]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Embedding {
    weight: Param,
}

impl Embedding {
    /// `weight` under `vb` (`vb.pp("wte")`).
    pub fn load(vb: &VarBuilder, num_embeddings: i64, dim: i64) -> Result<Embedding> {
        Ok(Embedding {
            weight: vb.get("weight", &[num_embeddings, dim])?,
        })
    }

    /// From a parameter loaded elsewhere.
    pub fn new(weight: Param) -> Embedding {
        Embedding { weight }
    }

    /// The table, `[num_embeddings, dim]` (for a tied output head).
    pub fn weight(&self) -> &Param {
        &self.weight
    }
}

impl Module for Embedding {
    /// The rows at `ids` (int32 or int64), in `ids`' shape plus `dim`.
    fn forward(&self, ids: &Tensor) -> Tensor {
        ids.embedding(&self.weight.tensor())
    }
}
