//! What Kiln holds in memory, and how to bound and release it, in the
//! spirit of PyTorch's `torch.cuda.memory_stats` and `empty_cache`.
//!
//! | what | bound | released by |
//! |---|---|---|
//! | host buffers freed by tensors, pooled by size class | twice the recent high-water mark of live bytes, at most `KILN_CACHE_LIMIT` / [`set_cache_limit`] (default 2 GiB or a quarter of the machine's memory) | [`release_cached`] |
//! | device buffers, pooled per GPU in the same way | the same rule; at most 4 GiB or [`set_cache_limit`] | [`release_cached`] |
//! | compiled programs (the program cache) | [`compile::PROGRAM_CACHE_ENTRIES`] programs, [`compile::PROGRAM_CACHE_BYTES`] of code and text; [`set_program_cache_limits`] | [`release_cached`] |
//! | packed copies of f32 weights (program inputs a product multiplies by, [`kiln_runtime::packed`]) | `KILN_PACK_LIMIT` / [`set_pack_limit`] (default 1 GiB or an eighth of the machine's memory); each goes when its weight is written or dropped | [`release_cached`] |
//! | machine code of compiled kernels | freed with the last program that uses it | dropping programs |
//! | PTX of generated CUDA C | [`cuda::nvrtc::CACHE_ENTRIES`], [`cuda::nvrtc::CACHE_BYTES`] | [`release_cached`] |
//!
//! [`compile::PROGRAM_CACHE_ENTRIES`]: crate::compile::PROGRAM_CACHE_ENTRIES
//! [`compile::PROGRAM_CACHE_BYTES`]: crate::compile::PROGRAM_CACHE_BYTES
//! [`cuda::nvrtc::CACHE_ENTRIES`]: kiln_cuda::nvrtc::CACHE_ENTRIES
//! [`cuda::nvrtc::CACHE_BYTES`]: kiln_cuda::nvrtc::CACHE_BYTES

use std::fmt;

use kiln_runtime::cache::CacheStats;
use kiln_runtime::packed::PackStats;
use kiln_runtime::pool::PoolStats;

use crate::compile::PROGRAMS;

/// Kiln's memory now: exact counts, read from the allocators and caches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Host buffers: live bytes (every buffer a tensor or a running
    /// program holds), pooled bytes, bounds and counters.
    pub host: PoolStats,
    /// Device memory of each GPU that ran a program, by ordinal.
    pub devices: Vec<(usize, PoolStats)>,
    /// The program cache.
    pub programs: CacheStats,
    /// Bytes of machine code (and constants) of live CPU kernels, in whole
    /// pages: what programs alive, in the cache or in the user's hands,
    /// keep.
    pub code_bytes: usize,
    /// Live JIT modules (one per compilation that generated code).
    pub code_modules: usize,
    /// Live CPU kernels a later compilation can share.
    pub kernels: usize,
    /// The cache of PTX compiled by NVRTC.
    pub ptx: CacheStats,
    /// Packed copies of weights (their bytes are also in `host`'s live
    /// bytes).
    pub packed: PackStats,
}

/// Kiln's memory now.
pub fn memory_stats() -> MemoryStats {
    let jit = kiln_cranelift::jit::stats();
    MemoryStats {
        host: kiln_runtime::storage::memory_stats(),
        devices: kiln_cuda::device::memory_stats(),
        programs: PROGRAMS.stats(),
        code_bytes: jit.code_bytes,
        code_modules: jit.modules,
        kernels: jit.kernels,
        ptx: kiln_cuda::nvrtc::cache_stats(),
        packed: kiln_runtime::packed::pack_stats(),
    }
}

/// Frees everything Kiln keeps for reuse: pooled host and device buffers,
/// cached programs (whose code is freed once the user holds no handle to
/// them), cached PTX and packed weights. Live tensors and programs stay
/// valid. Returns the bytes of pooled buffers given back to the system.
pub fn release_cached() -> usize {
    PROGRAMS.clear();
    kiln_cuda::nvrtc::clear_cache();
    kiln_runtime::packed::release();
    kiln_runtime::storage::release_cached() + kiln_cuda::device::release_cached()
}

/// Sets how many bytes of freed buffers the host pool, and each GPU's
/// pool, may keep (overriding `KILN_CACHE_LIMIT`); 0 pools nothing.
pub fn set_cache_limit(bytes: usize) {
    kiln_runtime::storage::set_cache_limit(bytes);
    kiln_cuda::device::set_cache_limit(bytes);
}

/// Sets how many bytes packed copies of weights may take (overriding
/// `KILN_PACK_LIMIT`); 0 packs nothing more (products go to gemm). Copies
/// already kept stay until their weights change or go.
pub fn set_pack_limit(bytes: usize) {
    kiln_runtime::packed::set_pack_limit(bytes);
}

/// Sets the bounds of the program cache: at most `entries` programs and
/// `bytes` of their code and text (0 entries caches nothing).
pub fn set_program_cache_limits(entries: usize, bytes: usize) {
    PROGRAMS.set_limits(entries, bytes);
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

impl fmt::Display for MemoryStats {
    /// A short report, one line per kind of memory.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pool = |f: &mut fmt::Formatter<'_>, name: &str, s: &PoolStats| {
            writeln!(
                f,
                "{name}: {:.1} MiB live (peak {:.1}), {:.1} MiB pooled in {} blocks (bound {:.1}, limit {:.1}), {} hits, {} misses",
                mib(s.live_bytes),
                mib(s.peak_live_bytes),
                mib(s.pooled_bytes),
                s.pooled_blocks,
                mib(s.bound_bytes),
                mib(s.limit_bytes),
                s.hits,
                s.misses
            )
        };
        pool(f, "host", &self.host)?;
        for (i, d) in &self.devices {
            pool(f, &format!("cuda:{i}"), d)?;
        }
        writeln!(
            f,
            "programs: {} cached ({:.1} MiB of {:.1}), {} evicted",
            self.programs.entries,
            mib(self.programs.bytes),
            mib(self.programs.max_bytes),
            self.programs.evictions
        )?;
        writeln!(
            f,
            "packed weights: {} ({:.1} MiB of {:.1}), {} packs, {} hits",
            self.packed.entries,
            mib(self.packed.bytes),
            mib(self.packed.limit_bytes),
            self.packed.packs,
            self.packed.hits
        )?;
        write!(
            f,
            "code: {:.1} MiB in {} modules, {} live kernels; ptx: {} cached ({:.1} MiB)",
            mib(self.code_bytes),
            self.code_modules,
            self.kernels,
            self.ptx.entries,
            mib(self.ptx.bytes)
        )
    }
}
