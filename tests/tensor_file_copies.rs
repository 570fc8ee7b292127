//! A 50 MB safetensors file loads with at most one copy of its data: the
//! file is mapped, and each tensor's bytes are copied once, into aligned
//! storage. A counting allocator measures the peak heap growth while loading,
//! and the host pool's exact counters the peak of pooled-size buffers
//! (which are pages mapped from the system, not heap). (Alone in its own
//! test binary, so no other test allocates meanwhile.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use kiln_runtime::{Tensor, io, storage};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(live, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(live, Ordering::SeqCst);
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_50_mb_safetensors_file_is_copied_at_most_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.safetensors");
    let n = 50 * 1024 * 1024 / 4;
    {
        let a = Tensor::from_vec(
            (0..n / 2).map(|i| i as f32).collect::<Vec<_>>(),
            &[n as i64 / 2],
        )
        .unwrap();
        let b = Tensor::from_vec(
            (0..n / 2).map(|i| -(i as f32)).collect::<Vec<_>>(),
            &[1024, n as i64 / 2048],
        )
        .unwrap();
        io::write_safetensors(&path, &[("a".into(), &a), ("b".into(), &b)]).unwrap();
    }
    let data_bytes = n * 4;
    let before = LIVE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let pool_before = storage::memory_stats().live_bytes;
    storage::reset_peak();
    let tensors = io::read_safetensors(&path).unwrap();
    let heap_growth = PEAK.load(Ordering::SeqCst) - before;
    let pool = storage::memory_stats();
    let growth = heap_growth + pool.peak_live_bytes.saturating_sub(pool_before);
    // The pool rounds each buffer up to its size class (at most an eighth).
    let data_bytes_in_classes: usize = [tensors["a"].storage().len(), tensors["b"].storage().len()]
        .iter()
        .map(|&b| kiln_runtime::pool::size_class(b).unwrap())
        .sum();
    assert_eq!(tensors["a"].to_vec::<f32>().unwrap()[12345], 12345.0);
    assert_eq!(tensors["b"].shape(), &[1024, n as i64 / 2048]);
    // One copy of the data, plus a little for the header and bookkeeping.
    assert!(
        growth <= data_bytes_in_classes + (1 << 20),
        "loading {data_bytes} bytes of tensors grew the heap by {growth} bytes"
    );
    assert!(growth >= data_bytes, "the tensors own their data");
    assert!(pool.live_bytes - pool_before >= data_bytes);
}
