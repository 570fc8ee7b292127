//! Kiln: a lazy tensor graph compiler with PyTorch's semantics.
//!
//! Trace a Rust closure over lazy tensors into a typed IR graph, read it,
//! transform it with passes, and run it:
//!
//! ```
//! use kiln::{trace, DType, TensorSpec};
//!
//! let traced = trace(
//!     &[TensorSpec::new([4, 8], DType::F32).name("x"), TensorSpec::new([8], DType::I32).name("y")],
//!     |xs| (&xs[0] + &xs[1]).relu(),
//! )?;
//! println!("{traced}");
//! # Ok::<(), kiln::Error>(())
//! ```
//!
//! | module | owns |
//! |---|---|
//! | [`tensor`] | the lazy [`Tensor`] and its methods and operators |
//! | [`trace`](mod@trace) | [`trace`](fn@trace), [`TensorSpec`], [`Traced`] |
//! | [`defaults`] | the scoped default dtype and device |
//! | [`compile`](mod@compile) | [`Compiler`], [`Compiled`], the backends |
//! | [`nn`] | building blocks for models: a parameter store, layers, attention |
//! | [`memory`] | [`memory_stats`], [`release_cached`] and the bounds of pools and caches |
//!
//! The semantic core and the IR are re-exported from `kiln-ir`.

#![warn(missing_docs)]

pub mod compile;
pub mod defaults;
pub mod memory;
pub mod nn;
pub mod tensor;
pub mod trace;

/// The CUDA backend: CUDA C generation, NVRTC, the driver runtime.
pub use kiln_cuda as cuda;
pub use kiln_ir::*;
/// The passes and the pass manager.
pub use kiln_passes as passes;
/// Concrete tensors, tensor files and the reference interpreter.
pub use kiln_runtime as runtime;

pub use compile::{BackendKind, Compiled, Compiler};
/// A compiled program with its weights bound ([`Compiled::bind`]).
pub use kiln_runtime::bind::Bound;
pub use memory::{
    MemoryStats, memory_stats, release_cached, set_cache_limit, set_pack_limit,
    set_program_cache_limits,
};

pub use defaults::{
    default_device, default_dtype, set_default_device, set_default_dtype, with_default_device,
    with_default_dtype,
};
pub use tensor::{
    AttentionOptions, ConvOptions, Interpolate, InterpolateMode, MultiHeadAttentionArgs,
    PoolOptions, Tensor, TripletMargin, arange, broadcast_tensors, bucketize, cat, column_stack,
    complex, dstack, einsum, empty, empty_strided, eye, full, hstack, linalg_multi_dot, linspace,
    logspace, meshgrid, normal, normal_scalars, ones, polar, rand, randint, randn, searchsorted,
    stack, tril_indices, triu_indices, vstack, where_, zeros,
};
pub use trace::{
    Input, IntoOutputs, TensorOrScalar, TensorSpec, Traced, apply, apply_named, trace,
};
