//! Aligned byte storage shared by tensors and their views, and the host
//! memory pool behind it.
//!
//! Buffers are 64-byte aligned (a cache line, and enough for any SIMD load
//! Kiln's kernels issue) and shared behind an `Arc` so a view costs nothing.
//!
//! Touching a fresh page costs about a microsecond (the kernel zeroes and
//! maps it), so a new 64 MiB output costs more than computing it. Buffers
//! of [`POOLED_BYTES`] or more are therefore whole pages mapped from the
//! system (large ones advised to use transparent huge pages) and, when
//! dropped, go to the host [`Pool`]: a later buffer of a nearby size
//! ([`crate::pool::size_class`]) gets the already-mapped memory back, so
//! steady-state runs of a compiled program fault no pages. Every buffer
//! takes that path, whoever asked for it: results and temps of a run,
//! tensors made from Rust data (`Tensor::from_vec`), tensor files read
//! from disk. Smaller buffers come from the system allocator, whose own
//! free lists reuse them without faults.
//!
//! The pool keeps at most twice the recent high-water mark of live bytes,
//! and never more than its limit: `KILN_CACHE_LIMIT` (bytes, or a number
//! with a `K`, `M` or `G` suffix, binary) when set, else 2 GiB or a quarter
//! of the machine's memory, whichever is less; [`set_cache_limit`] changes
//! it and [`release_cached`] frees everything pooled. [`memory_stats`]
//! counts live and pooled bytes exactly.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use kiln_ir::{Error, ErrorKind, Result};

use crate::pool::{Allocator, Pool, PoolStats};

/// Alignment of every buffer.
pub const ALIGN: usize = 64;

/// Buffers at least this large are advised to use huge pages.
const HUGE_PAGE_THRESHOLD: usize = 2 << 20;

/// Buffers at least this large are pooled (whole pages of their class).
pub const POOLED_BYTES: usize = 64 << 10;

/// The largest buffer Kiln allocates on any machine (a clear error
/// instead of an abort).
pub const MAX_BYTES: usize = 1 << 40;

/// The machine's physical memory in bytes, if it says.
fn physical_memory() -> Option<usize> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && page > 0).then(|| (pages as usize).saturating_mul(page as usize))
}

/// The largest buffer Kiln allocates here: [`MAX_BYTES`], or the machine's
/// physical memory if that is less. Large allocations are mapped lazily, so
/// one the machine cannot hold would otherwise succeed and then be killed
/// by the kernel while it is written.
pub fn allocation_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| physical_memory().map_or(MAX_BYTES, |m| m.min(MAX_BYTES)))
}

/// The pool's limit when `KILN_CACHE_LIMIT` is not set: 2 GiB, or a
/// quarter of the machine's memory if that is less.
fn default_cache_limit() -> usize {
    physical_memory().map_or(2 << 30, |m| (m / 4).min(2 << 30))
}

/// Parses a size: bytes, or a number with a binary `K`, `M`, `G` or `T`
/// suffix (`KiB`, `MB`... are read the same way).
pub fn parse_size(text: &str) -> Option<usize> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let number: usize = number.parse().ok()?;
    let shift = match suffix.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    number.checked_mul(1usize << shift)
}

/// The limit `KILN_CACHE_LIMIT` sets, read once; an error if it is not a
/// size.
fn env_cache_limit() -> Result<usize> {
    static LIMIT: OnceLock<Result<usize>> = OnceLock::new();
    LIMIT
        .get_or_init(|| env_size("KILN_CACHE_LIMIT", default_cache_limit))
        .clone()
}

/// The size the environment variable `var` sets ([`parse_size`]), or
/// `default()` when it is not set; an error naming it when it is not a
/// size.
pub(crate) fn env_size(var: &str, default: impl FnOnce() -> usize) -> Result<usize> {
    match std::env::var(var) {
        Ok(text) => parse_size(&text).ok_or_else(|| {
            Error::new(
                ErrorKind::Resource,
                format!(
                    "{var}={text:?} is not a size (expected bytes, or a number with K, M or G)"
                ),
            )
        }),
        Err(_) => Ok(default()),
    }
}

/// Whole pages from the system, zero-filled until written.
pub struct HostPages;

/// Pages mapped by [`HostPages`].
pub struct Pages(NonNull<u8>);

// SAFETY: the pages are plain memory owned by this value.
unsafe impl Send for Pages {}

impl Allocator for HostPages {
    type Block = Pages;

    fn allocate(&self, bytes: usize) -> Result<Pages> {
        let limit = allocation_limit();
        if bytes > limit {
            return Err(too_large(bytes, limit));
        }
        let ptr = map_pages(bytes).ok_or_else(|| {
            Error::new(
                ErrorKind::Resource,
                format!("out of memory allocating {bytes} bytes"),
            )
        })?;
        if bytes >= HUGE_PAGE_THRESHOLD {
            advise_huge_pages(ptr.as_ptr(), bytes);
        }
        Ok(Pages(ptr))
    }

    fn free(&self, block: Pages, bytes: usize) {
        // SAFETY: the pool gives back each block once, with its class.
        unsafe { unmap_pages(block.0, bytes) };
    }
}

#[cfg(unix)]
fn map_pages(bytes: usize) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous private mapping touches nothing of ours.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        None
    } else {
        NonNull::new(p.cast())
    }
}

/// # Safety
/// `ptr` and `bytes` must be a mapping of [`map_pages`], not used after.
#[cfg(unix)]
unsafe fn unmap_pages(ptr: NonNull<u8>, bytes: usize) {
    // SAFETY: per the contract.
    unsafe { libc::munmap(ptr.as_ptr().cast(), bytes) };
}

#[cfg(not(unix))]
fn map_pages(bytes: usize) -> Option<NonNull<u8>> {
    let layout = Layout::from_size_align(bytes, 4096).ok()?;
    // SAFETY: the layout has a non-zero size.
    NonNull::new(unsafe { alloc_zeroed(layout) })
}

#[cfg(not(unix))]
unsafe fn unmap_pages(ptr: NonNull<u8>, bytes: usize) {
    if let Ok(layout) = Layout::from_size_align(bytes, 4096) {
        // SAFETY: allocated with this layout in `map_pages`.
        unsafe { dealloc(ptr.as_ptr(), layout) };
    }
}

/// The host memory pool.
static POOL: Pool<HostPages> = Pool::new(HostPages, usize::MAX);

/// Bytes of live buffers of every size (pooled ones by their class).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The most bytes live at once since the start (or [`reset_peak`]).
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn count_live(bytes: usize) {
    let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

/// The pool, with its limit read from the environment on first use.
fn pool() -> Result<&'static Pool<HostPages>> {
    static CONFIGURED: OnceLock<()> = OnceLock::new();
    if CONFIGURED.get().is_none() {
        // A limit the program set itself wins over the environment's.
        if POOL.limit() == usize::MAX {
            POOL.set_limit(env_cache_limit()?);
        }
        let _ = CONFIGURED.set(());
    }
    Ok(&POOL)
}

/// Frees every pooled host buffer (memory the process no longer needs), as
/// PyTorch's `torch.cuda.empty_cache` does for its pool; returns the bytes
/// given back.
pub fn release_cached() -> usize {
    POOL.release()
}

/// Sets how many bytes of freed buffers the host pool may keep (overriding
/// `KILN_CACHE_LIMIT`); what is over it is freed now.
pub fn set_cache_limit(bytes: usize) {
    POOL.set_limit(bytes);
}

/// Starts the host pool's peak of live bytes over from its live bytes now.
pub fn reset_peak() {
    POOL.reset_peak();
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Host memory now: the pool's counters, with buffers too small to pool
/// counted in `live_bytes` and `peak_live_bytes`.
pub fn memory_stats() -> PoolStats {
    let mut stats = POOL.stats();
    if stats.limit_bytes == usize::MAX {
        stats.limit_bytes = env_cache_limit().unwrap_or(0);
        stats.bound_bytes = stats.bound_bytes.min(stats.limit_bytes);
    }
    stats.live_bytes = LIVE.load(Ordering::Relaxed);
    stats.peak_live_bytes = PEAK.load(Ordering::Relaxed);
    stats
}

fn too_large(len: usize, limit: usize) -> Error {
    Error::new(
        ErrorKind::Resource,
        format!(
            "refusing to allocate {len} bytes: the limit is {limit} bytes (the machine's memory, at most {MAX_BYTES})"
        ),
    )
}

/// An owned, aligned allocation: zeroed when fresh, old bytes when it
/// comes from the pool ([`Buffer::for_overwrite`]).
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
    /// The pool's size class of the block; 0 for a buffer from the system
    /// allocator (and for an empty one, which owns nothing).
    class: usize,
    /// Names what the bytes hold now: unique to this buffer, and replaced
    /// by a fresh number when they may change after data was derived from
    /// them ([`Buffer::rewritten`]), so that such data (a packed weight,
    /// `crate::packed`) can be kept under it and is never used for other
    /// bytes.
    contents: AtomicU64,
    /// Whether something was derived from the current contents (then
    /// `crate::packed` hears when they change or the buffer goes).
    derived: AtomicBool,
}

/// The next contents number (0 is never given: "none").
fn fresh_contents() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

// SAFETY: the buffer is plain bytes owned by this value; synchronisation of
// writes is the job of whoever holds `&mut` (see `Storage::bytes_mut`).
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A buffer whose every byte the caller will write before reading: a
    /// pooled one of its class when there is one (holding old bytes),
    /// otherwise a fresh zeroed one.
    pub fn for_overwrite(len: usize) -> Result<Buffer> {
        Buffer::new(len, false)
    }

    /// A buffer of `len` zero bytes; a resource error past
    /// [`allocation_limit`] or when the system has no memory.
    pub fn zeroed(len: usize) -> Result<Buffer> {
        Buffer::new(len, true)
    }

    fn new(len: usize, zero: bool) -> Result<Buffer> {
        let limit = allocation_limit();
        if len > limit {
            return Err(too_large(len, limit));
        }
        if len == 0 {
            return Ok(Buffer::owning(NonNull::<u64>::dangling().cast(), 0, 0));
        }
        if len >= POOLED_BYTES {
            let taken = pool()?.take(len)?;
            let mut buffer = Buffer::owning(taken.block.0, len, taken.class);
            if zero && taken.reused {
                buffer.bytes_mut().fill(0);
            }
            count_live(taken.class);
            return Ok(buffer);
        }
        let layout = Layout::from_size_align(len, ALIGN)
            .map_err(|e| Error::new(ErrorKind::Resource, e.to_string()))?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            Error::new(
                ErrorKind::Resource,
                format!("out of memory allocating {len} bytes"),
            )
        })?;
        count_live(len);
        Ok(Buffer::owning(ptr, len, 0))
    }

    fn owning(ptr: NonNull<u8>, len: usize, class: usize) -> Buffer {
        Buffer {
            ptr,
            len,
            class,
            contents: AtomicU64::new(fresh_contents()),
            derived: AtomicBool::new(false),
        }
    }

    /// The number naming the bytes it holds now (see [`Buffer::rewritten`]).
    pub fn contents(&self) -> u64 {
        self.contents.load(Ordering::SeqCst)
    }

    /// Records that data was derived from the current contents, so that
    /// it is forgotten when they change or the buffer is dropped.
    pub(crate) fn mark_derived(&self) {
        self.derived.store(true, Ordering::SeqCst);
    }

    /// Says that the bytes may change: if something was derived from them,
    /// they get a new contents number and what was derived is forgotten.
    /// Every write path calls it: `&mut` access ([`Buffer::bytes_mut`],
    /// [`Buffer::as_mut_ptr`]) and a run that writes a result into an
    /// input given up to it (a donation, before the run). Contents nothing
    /// was derived from keep their number, which no cache holds, so that
    /// the interpreter's writes element by element (`Tensor::set`) cost
    /// one load here.
    pub fn rewritten(&self) {
        if self.derived.load(Ordering::SeqCst) && self.derived.swap(false, Ordering::SeqCst) {
            let old = self.contents.swap(fresh_contents(), Ordering::SeqCst);
            crate::packed::forget(old);
        }
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no bytes (then it owns no allocation).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first byte (dangling, but not null, when empty).
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// The first byte, for writing.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.rewritten();
        self.ptr.as_ptr()
    }

    /// Gives the whole pages of `range` (bytes) back to the system, where
    /// the buffer is whole pages (a pooled one): they read as zeros after,
    /// and the process no longer holds them. (Kiln's live-byte count is
    /// unchanged: the buffer is live until dropped.)
    ///
    /// # Safety
    /// Nothing reads the range's bytes again expecting the old ones: the
    /// caller holds the buffer alone and is done with them.
    pub(crate) unsafe fn discard(&self, range: std::ops::Range<usize>) {
        #[cfg(unix)]
        if self.class != 0 && range.end <= self.len {
            // SAFETY: sysconf only reads system configuration.
            let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
                p if p > 0 => p as usize,
                _ => return,
            };
            let (start, end) = (range.start.next_multiple_of(page), range.end / page * page);
            if start < end {
                // SAFETY: whole pages inside the buffer's own mapping.
                unsafe {
                    libc::madvise(
                        self.ptr.as_ptr().add(start).cast(),
                        end - start,
                        libc::MADV_DONTNEED,
                    )
                };
            }
        }
        #[cfg(not(unix))]
        let _ = range;
    }

    /// Its bytes as f32 elements (a trailing partial element left out).
    pub(crate) fn floats(&self) -> &[f32] {
        // SAFETY: valid for len bytes, aligned to ALIGN (or dangling and
        // aligned with len 0); every bit pattern is an f32.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<f32>(), self.len / 4) }
    }

    /// Its bytes as f32 elements, for writing (as [`Buffer::bytes_mut`]).
    pub(crate) fn floats_mut(&mut self) -> &mut [f32] {
        let bytes = self.bytes_mut();
        // SAFETY: as for `floats`; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<f32>(), bytes.len() / 4) }
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes (or dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Its bytes, for writing.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.rewritten();
        // SAFETY: as above, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if *self.derived.get_mut() {
            crate::packed::forget(*self.contents.get_mut());
        }
        if self.len == 0 {
            return;
        }
        if self.class > 0 {
            LIVE.fetch_sub(self.class, Ordering::Relaxed);
            POOL.give(Pages(self.ptr), self.class);
            return;
        }
        LIVE.fetch_sub(self.len, Ordering::Relaxed);
        let layout = Layout::from_size_align(self.len, ALIGN).expect("checked at allocation");
        // SAFETY: allocated with this layout in `Buffer::new`.
        unsafe { dealloc(self.ptr.as_ptr(), layout) };
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    // Only whole 2 MiB pages inside the buffer can be huge.
    let page = 2usize << 20;
    let start = (ptr as usize).div_ceil(page) * page;
    let end = (ptr as usize + len) / page * page;
    if end > start {
        // SAFETY: the range lies inside our allocation; madvise only hints.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _len: usize) {}

/// Shared storage: what a tensor and all its views point into.
#[derive(Clone)]
pub struct Storage(Arc<Buffer>);

impl Storage {
    /// Storage of `len` zero bytes (see [`Buffer::zeroed`]).
    pub fn zeroed(len: usize) -> Result<Storage> {
        Ok(Storage(Arc::new(Buffer::zeroed(len)?)))
    }

    /// Storage the caller overwrites completely (see [`Buffer::for_overwrite`]).
    pub fn for_overwrite(len: usize) -> Result<Storage> {
        Ok(Storage(Arc::new(Buffer::for_overwrite(len)?)))
    }

    /// Storage owning `buffer`, not yet shared.
    pub fn from_buffer(buffer: Buffer) -> Storage {
        Storage(Arc::new(buffer))
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        self.0.bytes()
    }

    /// Whether this handle is the storage's only one (no clone, no tensor
    /// elsewhere shares it): its holder may hand it over to be written.
    pub fn is_unique(&self) -> bool {
        Arc::strong_count(&self.0) == 1 && Arc::weak_count(&self.0) == 0
    }

    /// Mutable bytes, when this storage is not shared.
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Arc::get_mut(&mut self.0).map(Buffer::bytes_mut)
    }

    /// The first byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.0.as_ptr()
    }

    /// A pointer for writing, when this storage is not shared. Compiled
    /// kernels write through it; no `&[u8]` of the storage may be alive
    /// while they do.
    pub fn as_mut_ptr(&mut self) -> Option<*mut u8> {
        Arc::get_mut(&mut self.0).map(Buffer::as_mut_ptr)
    }

    /// The buffer behind it (its contents number, see [`Buffer::rewritten`]).
    pub fn buffer(&self) -> &Buffer {
        &self.0
    }

    /// Whether two handles share one allocation (a view and its base).
    pub fn same(&self, other: &Storage) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage({} bytes)", self.len())
    }
}
