//! `kiln-runtime`: storage, concrete tensors, tensor files, and the
//! reference interpreter.
//!
//! | module | owns |
//! |---|---|
//! | [`storage`] | aligned, shared byte buffers and the host memory pool |
//! | [`cache`] | caches bounded by bytes and entries (least recently used evicted) |
//! | [`pool`] | pools of freed memory by size class, bounded by what is in use |
//! | [`tensor`] | concrete tensors, views, conversion to and from Rust data |
//! | [`convert`] | element values and PyTorch's dtype conversions |
//! | [`print`](mod@print) | PyTorch-style tensor printing |
//! | [`random`] | deterministic inputs for tests and benchmarks |
//! | [`io`] | safetensors and `.npy` files |
//! | [`interp`] | the reference interpreter |
//! | [`compare`] | checking results against the reference, in ulps |
//! | [`execute`] | the run loop of every backend over a [`execute::Launcher`] |
//! | [`host`] | host memory and compiled kernels as a launcher |
//! | [`fold`] | constant folding for the optimizer, by the interpreter |
//! | [`matmul`] | matrix products through `gemm` |
//! | [`spatial`] | convolution, pooling and resampling on the host |
//! | [`attention`] | fused scaled dot-product attention on the host |
//! | [`cross_entropy`] | cross_entropy with class indices on the host, one step |
//! | [`gather`] | gather and scatter on the host's buffers |
//! | [`lines`] | scans, topk and sort on the host's buffers, line by line |
//! | [`backend`] | the backend interface, and the interpreter as a backend |
//! | [`bind`] | weights bound to a compiled program, packed in place of the originals |
//! | [`packed`] | f32 weights packed once for the products that use them |

#![warn(missing_docs)]

pub mod attention;
mod avx2;
mod avx512;
pub mod backend;
pub mod bind;
pub mod cache;
pub mod compare;
pub mod constants;
pub mod convert;
pub mod cross_entropy;
mod depthwise;
pub mod execute;
pub mod fold;
pub mod gather;
pub mod host;
pub mod interp;
pub mod io;
mod lanes;
pub mod lines;
pub mod matmul;
pub mod moments;
pub mod packed;
mod panel;
pub mod philox;
pub mod pool;
pub mod print;
pub mod random;
pub mod softmax;
pub mod spatial;
pub mod storage;
mod strided;
pub mod tensor;
mod wide;
mod winograd;

#[cfg(target_arch = "x86_64")]
pub use avx512::{SixteenLanes, sixteen_lanes};
pub use backend::{Backend, Executable, Interpreter, Listing, ListingLanguage};
#[cfg(target_arch = "x86_64")]
pub use lanes::uses_avx512;

/// How JIT code computes kiln-math's functions in groups of 16 lanes:
/// only on x86-64 with AVX-512F, or AVX2 and FMA.
#[cfg(not(target_arch = "x86_64"))]
pub type SixteenLanes = unsafe extern "C" fn(f: u32, values: *mut f32, n: u64);

/// None: only x86-64 has the functions in groups of 16 lanes.
#[cfg(not(target_arch = "x86_64"))]
pub fn sixteen_lanes() -> Option<SixteenLanes> {
    None
}
pub use tensor::{Element, Tensor};
