//! Aligned byte storage shared by tensors and their views, and the caching
//! allocator behind it.
//!
//! Buffers are 64-byte aligned (a cache line, and enough for any SIMD load
//! Kiln's kernels issue) and shared behind an `Arc` so a view costs nothing.
//! Large buffers ask the kernel for transparent huge pages, which makes
//! first touches of big outputs several times cheaper.
//!
//! Touching a fresh page costs about a microsecond (the kernel zeroes and
//! maps it), so a new 64 MiB output costs more than computing it. Dropped
//! large buffers therefore go to a cache, by exact size, and a later request
//! for that size ([`Buffer::for_overwrite`]) gets the already-mapped memory
//! back: steady-state runs of a compiled program fault no pages.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;
use std::sync::Arc;

use kiln_ir::{Error, ErrorKind, Result};

/// Alignment of every buffer.
pub const ALIGN: usize = 64;

/// Buffers at least this large are advised to use huge pages.
const HUGE_PAGE_THRESHOLD: usize = 2 << 20;

/// The largest buffer Kiln allocates on any machine (a clear error
/// instead of an abort).
pub const MAX_BYTES: usize = 1 << 40;

/// The largest buffer Kiln allocates here: [`MAX_BYTES`], or the machine's
/// physical memory if that is less. Large allocations are mapped lazily, so
/// one the machine cannot hold would otherwise succeed and then be killed
/// by the kernel while it is written.
pub fn allocation_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        // SAFETY: sysconf only reads system configuration.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            (pages as usize)
                .saturating_mul(page as usize)
                .min(MAX_BYTES)
        } else {
            MAX_BYTES
        }
    })
}

/// Buffers at least this large are cached when dropped.
const CACHE_THRESHOLD: usize = 64 << 10;

/// The most bytes the cache keeps (beyond this, dropped buffers are freed).
const CACHE_LIMIT: usize = 2 << 30;

/// Freed large buffers by size, for reuse.
struct Cache {
    free: std::collections::BTreeMap<usize, Vec<NonNull<u8>>>,
    bytes: usize,
}

// SAFETY: the cache owns the allocations it holds; access is behind a mutex.
unsafe impl Send for Cache {}

static CACHE: std::sync::Mutex<Cache> = std::sync::Mutex::new(Cache {
    free: std::collections::BTreeMap::new(),
    bytes: 0,
});

fn take_cached(len: usize) -> Option<NonNull<u8>> {
    let mut cache = CACHE.lock().ok()?;
    let ptr = cache.free.get_mut(&len)?.pop()?;
    cache.bytes -= len;
    Some(ptr)
}

/// Keeps a buffer for reuse; gives it back when the cache is full.
fn give_to_cache(ptr: NonNull<u8>, len: usize) -> Option<NonNull<u8>> {
    let Ok(mut cache) = CACHE.lock() else {
        return Some(ptr);
    };
    if len < CACHE_THRESHOLD || cache.bytes + len > CACHE_LIMIT {
        return Some(ptr);
    }
    cache.bytes += len;
    cache.free.entry(len).or_default().push(ptr);
    None
}

/// Frees every cached buffer (memory the process no longer needs).
pub fn release_cached() {
    let drained: Vec<(usize, Vec<NonNull<u8>>)> = match CACHE.lock() {
        Ok(mut cache) => {
            cache.bytes = 0;
            std::mem::take(&mut cache.free).into_iter().collect()
        }
        Err(_) => return,
    };
    for (len, ptrs) in drained {
        let layout = Layout::from_size_align(len, ALIGN).expect("checked at allocation");
        for p in ptrs {
            // SAFETY: cached pointers were allocated with this layout.
            unsafe { dealloc(p.as_ptr(), layout) };
        }
    }
}

/// Bytes the cache holds now.
pub fn cached_bytes() -> usize {
    CACHE.lock().map(|c| c.bytes).unwrap_or(0)
}

/// An owned, aligned allocation: zeroed when fresh, old bytes when it
/// comes from the cache ([`Buffer::for_overwrite`]).
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is plain bytes owned by this value; synchronisation of
// writes is the job of whoever holds `&mut` (see `Storage::bytes_mut`).
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// A buffer whose every byte the caller will write before reading: a
    /// cached one of this size when there is one (holding old bytes),
    /// otherwise a fresh zeroed one.
    pub fn for_overwrite(len: usize) -> Result<Buffer> {
        match take_cached(len) {
            Some(ptr) => Ok(Buffer { ptr, len }),
            None => Buffer::zeroed(len),
        }
    }

    /// A fresh buffer of `len` zero bytes; a resource error past
    /// [`allocation_limit`] or when the allocator fails.
    pub fn zeroed(len: usize) -> Result<Buffer> {
        let limit = allocation_limit();
        if len > limit {
            return Err(Error::new(
                ErrorKind::Resource,
                format!(
                    "refusing to allocate {len} bytes: the limit is {limit} bytes (the machine's memory, at most {MAX_BYTES})"
                ),
            ));
        }
        if len == 0 {
            return Ok(Buffer {
                ptr: NonNull::<u64>::dangling().cast(),
                len: 0,
            });
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
        if len >= HUGE_PAGE_THRESHOLD {
            advise_huge_pages(ptr.as_ptr(), len);
        }
        Ok(Buffer { ptr, len })
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
        self.ptr.as_ptr()
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes (or dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Its bytes, for writing.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if self.len > 0 {
            let Some(ptr) = give_to_cache(self.ptr, self.len) else {
                return;
            };
            let layout = Layout::from_size_align(self.len, ALIGN).expect("checked at allocation");
            // SAFETY: allocated with this layout in `zeroed`.
            unsafe { dealloc(ptr.as_ptr(), layout) };
        }
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
