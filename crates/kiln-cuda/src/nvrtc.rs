//! CUDA C → PTX with NVRTC (loaded at run time through cudarc), and the
//! cache of compiled modules (bounded: [`CACHE_ENTRIES`] translation units
//! and [`CACHE_BYTES`] of source and PTX, least recently used evicted).
//!
//! NVRTC needs no GPU: `libnvrtc.so.12` alone compiles (the PyPI wheel
//! `nvidia-cuda-nvrtc-cu12` has it; its folder must be on
//! `LD_LIBRARY_PATH`). cudarc panics when the library is missing, so its
//! presence is checked first and its absence is an error.

use std::sync::{Arc, LazyLock};

use cudarc::nvrtc::{CompileError, CompileOptions};
use kiln_ir::{Error, ErrorKind, Result};
use kiln_runtime::cache::{BoundedCache, CacheStats};

/// The architecture PTX is generated for when none is given and no GPU
/// says otherwise: the H100's (PTX for `compute_90` runs on sm_90 and later).
pub const DEFAULT_ARCH: u32 = 90;

/// Whether NVRTC can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

fn missing() -> Error {
    Error::new(
        ErrorKind::Backend,
        "NVRTC not found (libnvrtc.so.12): install the CUDA toolkit, or \
         `pip install nvidia-cuda-nvrtc-cu12` and put its `nvidia/cuda_nvrtc/lib` \
         folder on LD_LIBRARY_PATH",
    )
}

/// The most translation units the PTX cache keeps.
pub const CACHE_ENTRIES: usize = 1024;

/// The most bytes (source and PTX) the PTX cache keeps.
pub const CACHE_BYTES: usize = 64 << 20;

/// The PTX of a translation unit, by (source, architecture).
static CACHE: LazyLock<BoundedCache<(String, u32), Arc<str>>> =
    LazyLock::new(|| BoundedCache::new(CACHE_ENTRIES, CACHE_BYTES));

/// What the PTX cache holds.
pub fn cache_stats() -> CacheStats {
    CACHE.stats()
}

/// Empties the PTX cache.
pub fn clear_cache() {
    CACHE.clear();
}

/// Compiles CUDA C to PTX for `compute_{arch}`, or returns the PTX
/// compiled before for the same source (the source is a function of the
/// kernels' structure, so equal kernels share their PTX).
pub fn compile(source: &str, arch: u32) -> Result<Arc<str>> {
    let key = (source.to_string(), arch);
    if let Some(ptx) = CACHE.get(&key) {
        return Ok(ptx);
    }
    if !nvrtc_present() {
        return Err(missing());
    }
    let arch_name: &'static str = match arch {
        70 => "compute_70",
        75 => "compute_75",
        80 => "compute_80",
        86 => "compute_86",
        89 => "compute_89",
        90 => "compute_90",
        100 => "compute_100",
        120 => "compute_120",
        other => {
            return Err(Error::new(
                ErrorKind::Backend,
                format!("no NVRTC target for compute capability {other}"),
            ));
        }
    };
    let options = CompileOptions {
        // The interpreter's arithmetic: IEEE division and square roots,
        // subnormals kept, no contraction of a*b+c into one rounding.
        ftz: Some(false),
        prec_sqrt: Some(true),
        prec_div: Some(true),
        fmad: Some(false),
        arch: Some(arch_name),
        name: Some("kiln.cu".into()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(source, options).map_err(|e| match e {
        CompileError::CompileError { log, .. } => Error::new(
            ErrorKind::Backend,
            format!(
                "NVRTC rejected the generated CUDA C: {}",
                log.to_string_lossy().trim()
            ),
        ),
        other => Error::new(ErrorKind::Backend, format!("NVRTC: {other:?}")),
    })?;
    let ptx: Arc<str> = ptx.to_src().into();
    let bytes = source.len() + ptx.len();
    CACHE.insert(key, ptx.clone(), bytes);
    Ok(ptx)
}
