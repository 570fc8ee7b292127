//! `kiln::nn`: building blocks for writing models as traced Rust closures,
//! in the style of candle-nn.
//!
//! A model is plain Rust: structs of blocks ([`Linear`], [`Embedding`],
//! [`LayerNorm`], [`RmsNorm`], [`Attention`], [`Conv2d`], [`MaxPool2d`], ...) loaded from a
//! [`VarStore`] by their Hugging Face parameter names, and a `forward`
//! method over lazy [`Tensor`]s. Tracing `forward` with
//! [`VarStore::trace`] gives a program whose `@main` takes the user's
//! inputs followed by one named input per parameter; the returned
//! [`TracedModel`] keeps the weights and binds them at run time, so the
//! program itself holds no data (and compiled programs are shared between
//! checkpoints of the same shapes).
//!
//! ```no_run
//! use kiln::nn::{Linear, Module, VarStore};
//! use kiln::{DType, Device, TensorSpec};
//!
//! let vs = VarStore::load("model.safetensors")?;
//! let vb = vs.root();
//! let proj = Linear::load(&vb.pp("proj"), 64, 32)?;       // proj.weight [32, 64], proj.bias [32]
//! let model = vs.trace(&[TensorSpec::new([1, 64], DType::F32).name("x")], |xs| {
//!     proj.forward(&xs[0]).relu()
//! })?;
//! let compiled = model.compile(Device::CPU)?;
//! let x = kiln::runtime::Tensor::from_vec(vec![0.5f32; 64], &[1, 64])?;
//! let y = compiled.run(&[x])?;
//! # Ok::<(), kiln::Error>(())
//! ```
//!
//! Errors are [`kiln::Error`](crate::Error)s: a parameter missing from the
//! file or stored with another shape or dtype is an
//! [`ErrorKind::Input`](crate::ErrorKind::Input) error at load time naming
//! the parameter, the file, and what was expected and found. Blocks record
//! ops like every [`Tensor`] method, so a shape error inside `forward` is
//! returned by [`VarStore::trace`].

mod activation;
mod attention;
mod conv;
mod dropout;
mod embedding;
mod generate;
mod layer_norm;
mod linear;
mod model;
mod pool;
mod rms_norm;
mod rotary;
mod var_store;

pub use activation::Activation;
pub use attention::{
    Attention, AttentionConfig, KvCache, StaticKvCache, attend_static, merge_heads, split_heads,
};
pub use conv::{BatchNorm2d, Conv2d};
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use generate::{CausalLm, Generator, argmax_last};
pub use layer_norm::LayerNorm;
pub use linear::Linear;
pub use model::{CompiledModel, TracedModel};
pub use pool::{AdaptiveAvgPool2d, AvgPool2d, MaxPool2d};
pub use rms_norm::RmsNorm;
pub use rotary::{RotaryEmbedding, rotate_half};
pub use var_store::{Param, VarBuilder, VarStore, config_beside};

use crate::tensor::Tensor;

/// A block with one input and one output (`nn.Module.forward` for the
/// common case). Blocks with more inputs have their own `forward`.
pub trait Module {
    /// Records the block's ops on `x` in the trace in progress.
    fn forward(&self, x: &Tensor) -> Tensor;
}

impl<F: Fn(&Tensor) -> Tensor> Module for F {
    fn forward(&self, x: &Tensor) -> Tensor {
        self(x)
    }
}

/// Keeps `error` as the running trace's first error and returns a poisoned
/// tensor (how a block reports a misuse without panicking: the trace
/// returns the error).
pub(crate) fn fail(error: crate::Error) -> Tensor {
    crate::trace::with_trace(|state| match state {
        Some(state) => {
            if state.error.is_none() {
                state.error = Some(error);
            }
            Tensor::poisoned(state.id)
        }
        None => Tensor::poisoned(0),
    })
}
