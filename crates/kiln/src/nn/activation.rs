//! [`Activation`]: the activations transformers' configs name
//! (`hidden_act`, `activation_function`), so a model reads its
//! activation from the config instead of hard-coding it.

use kiln_ir::{Error, ErrorKind, Result};

use super::Module;
use crate::tensor::Tensor;

/// An activation by its transformers name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `gelu`: exact (erf) gelu.
    Gelu,
    /// `gelu_new`, `gelu_pytorch_tanh`, `gelu_fast`: gelu with the tanh
    /// approximation.
    GeluTanh,
    /// `relu`.
    Relu,
    /// `silu` / `swish`.
    Silu,
    /// `sigmoid`.
    Sigmoid,
    /// `tanh`.
    Tanh,
}

impl Activation {
    /// The activation transformers calls `name` (an error for one Kiln
    /// does not have).
    pub fn from_name(name: &str) -> Result<Activation> {
        Ok(match name {
            "gelu" => Activation::Gelu,
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Activation::GeluTanh,
            "relu" => Activation::Relu,
            "silu" | "swish" => Activation::Silu,
            "sigmoid" => Activation::Sigmoid,
            "tanh" => Activation::Tanh,
            other => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("kiln::nn has no activation '{other}'"),
                ));
            }
        })
    }
}

impl Module for Activation {
    fn forward(&self, x: &Tensor) -> Tensor {
        match self {
            Activation::Gelu => x.gelu(),
            Activation::GeluTanh => x.gelu_tanh(),
            Activation::Relu => x.relu(),
            Activation::Silu => x.silu(),
            Activation::Sigmoid => x.sigmoid(),
            Activation::Tanh => x.tanh(),
        }
    }
}
