//! Pools of freed memory blocks, by size class, bounded by what is in use.
//!
//! Getting memory from the system costs more than using it: a fresh host
//! page faults (the kernel zeroes and maps it, about a microsecond per
//! 4 KiB page), a device allocation synchronizes. So freed blocks go to a
//! pool, and a later request of a nearby size takes one back. One design
//! serves host memory ([`crate::storage`]) and device memory (the CUDA
//! backend and its host emulation); an [`Allocator`] says where a pool's
//! blocks come from.
//!
//! **Size classes.** A request is rounded up to its class
//! ([`size_class`]): eight classes per power of two, so a block is at most
//! 12.5% larger than the request (and 512 bytes at least). Every request of
//! a class is served by any freed block of that class.
//!
//! **Bounds.** The pool never holds more than the smaller of
//! - its hard limit ([`Pool::set_limit`]; for host memory
//!   `KILN_CACHE_LIMIT`, see [`crate::storage`]), and
//! - twice the high-water mark of live bytes (blocks handed out and not yet
//!   returned) over the recent window: the current and the previous window
//!   of [`WINDOW`] requests. Twice, so that two programs run in turn keep
//!   each other's blocks; a process whose working set shrinks sees the
//!   pool follow it within two windows.
//!
//! What is over the bound is freed oldest first (the blocks least recently
//! returned). [`Pool::release`] frees everything, as PyTorch's
//! `empty_cache` does, and [`Pool::stats`] reports exact byte counts.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use kiln_ir::{Error, ErrorKind, Result};

/// The smallest class: requests below it are rounded up to it.
pub const MIN_CLASS: usize = 512;

/// Requests per window of the high-water mark.
pub const WINDOW: usize = 1024;

/// The size class of a request of `bytes`: `bytes` rounded up to the next
/// of eight steps per power of two (at least [`MIN_CLASS`]), so the class
/// exceeds the request by less than an eighth of it. `None` when the class
/// would overflow.
pub fn size_class(bytes: usize) -> Option<usize> {
    if bytes <= MIN_CLASS {
        return Some(MIN_CLASS);
    }
    // bytes lies in (pow/2, pow]; steps of pow/16 make eight classes there.
    let pow = bytes.checked_next_power_of_two()?;
    let step = pow / 16;
    bytes.checked_next_multiple_of(step)
}

/// Where a pool's blocks come from and go back to.
pub trait Allocator: Send + Sync {
    /// One block of memory (owning it: dropping it without
    /// [`Allocator::free`] may leak it).
    type Block: Send;

    /// A fresh block of at least `bytes` bytes, zero-filled.
    fn allocate(&self, bytes: usize) -> Result<Self::Block>;

    /// Gives a block of `bytes` (its class) back to the system.
    fn free(&self, block: Self::Block, bytes: usize);
}

/// A pool's counters, exact at the moment they are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes of blocks handed out and not yet returned (by class size).
    pub live_bytes: usize,
    /// The most live bytes at any time since the process started (or the
    /// last [`Pool::reset_peak`]).
    pub peak_live_bytes: usize,
    /// Bytes of freed blocks the pool keeps for reuse.
    pub pooled_bytes: usize,
    /// How many blocks it keeps.
    pub pooled_blocks: usize,
    /// What it may keep now: the hard limit, or twice the recent
    /// high-water mark of live bytes if that is less.
    pub bound_bytes: usize,
    /// The hard limit.
    pub limit_bytes: usize,
    /// Requests served by a pooled block.
    pub hits: u64,
    /// Requests that asked the system for a fresh block.
    pub misses: u64,
    /// Bytes given back to the system because they were over the bound.
    pub trimmed_bytes: u64,
}

struct State<B> {
    /// Freed blocks by class, each with its stamp (oldest first).
    free: BTreeMap<usize, Vec<(u64, B)>>,
    /// The class of each freed block by stamp: the oldest comes first.
    ages: BTreeMap<u64, usize>,
    next_stamp: u64,
    pooled: usize,
    live: usize,
    peak: usize,
    /// High-water marks of live bytes: this window, the previous one.
    window_peak: [usize; 2],
    window_requests: usize,
    hits: u64,
    misses: u64,
    trimmed: u64,
}

/// A pool of freed blocks over an [`Allocator`].
pub struct Pool<A: Allocator> {
    allocator: A,
    limit: AtomicUsize,
    state: Mutex<State<A::Block>>,
}

/// A block taken from a pool: the memory, its class (what must be given
/// back with it), and whether it was used before (then it holds old bytes).
pub struct Taken<B> {
    /// The memory.
    pub block: B,
    /// Its size class in bytes.
    pub class: usize,
    /// Whether it comes from the pool (old bytes) rather than the system
    /// (zero-filled).
    pub reused: bool,
}

impl<A: Allocator> Pool<A> {
    /// An empty pool whose hard limit is `limit` bytes.
    pub const fn new(allocator: A, limit: usize) -> Pool<A> {
        Pool {
            allocator,
            limit: AtomicUsize::new(limit),
            state: Mutex::new(State {
                free: BTreeMap::new(),
                ages: BTreeMap::new(),
                next_stamp: 0,
                pooled: 0,
                live: 0,
                peak: 0,
                window_peak: [0, 0],
                window_requests: 0,
                hits: 0,
                misses: 0,
                trimmed: 0,
            }),
        }
    }

    /// Its allocator.
    pub fn allocator(&self) -> &A {
        &self.allocator
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State<A::Block>> {
        // The state is consistent after every statement that can panic
        // (none does while it is held), so a poisoned lock is still good.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A block for a request of `bytes`: a pooled one of its class (the
    /// most recently returned, whose memory is warmest) or a fresh one.
    pub fn take(&self, bytes: usize) -> Result<Taken<A::Block>> {
        let class = size_class(bytes).ok_or_else(|| {
            Error::new(
                ErrorKind::Resource,
                format!("refusing to allocate {bytes} bytes"),
            )
        })?;
        let (reused, over) = {
            let mut s = self.lock();
            let reused = s.free.get_mut(&class).and_then(|blocks| blocks.pop());
            if let Some((stamp, _)) = &reused {
                s.ages.remove(stamp);
                if s.free.get(&class).is_some_and(Vec::is_empty) {
                    s.free.remove(&class);
                }
                s.pooled -= class;
                s.hits += 1;
            } else {
                s.misses += 1;
            }
            s.live += class;
            s.peak = s.peak.max(s.live);
            s.window_peak[0] = s.window_peak[0].max(s.live);
            s.window_requests += 1;
            if s.window_requests >= WINDOW {
                s.window_requests = 0;
                s.window_peak = [s.live, s.window_peak[0]];
            }
            // A fresh block raises what is held: trim to the bound first.
            let over = if reused.is_none() {
                self.trim(&mut s)
            } else {
                Vec::new()
            };
            (reused.map(|(_, b)| b), over)
        };
        self.free_all(over);
        match reused {
            Some(block) => Ok(Taken {
                block,
                class,
                reused: true,
            }),
            None => match self.allocator.allocate(class) {
                Ok(block) => Ok(Taken {
                    block,
                    class,
                    reused: false,
                }),
                Err(e) => {
                    self.lock().live -= class;
                    Err(e)
                }
            },
        }
    }

    /// Returns a block of class `class` (as [`Pool::take`] gave it): kept
    /// for reuse within the bound, else given back to the system.
    pub fn give(&self, block: A::Block, class: usize) {
        let over = {
            let mut s = self.lock();
            s.live = s.live.saturating_sub(class);
            let stamp = s.next_stamp;
            s.next_stamp += 1;
            s.free.entry(class).or_default().push((stamp, block));
            s.ages.insert(stamp, class);
            s.pooled += class;
            self.trim(&mut s)
        };
        self.free_all(over);
    }

    /// What the pool may hold now.
    fn bound(&self, s: &State<A::Block>) -> usize {
        let recent = s.window_peak[0].max(s.window_peak[1]);
        self.limit
            .load(Ordering::Relaxed)
            .min(recent.saturating_mul(2))
    }

    /// Takes the oldest blocks out until the pool is within its bound.
    fn trim(&self, s: &mut State<A::Block>) -> Vec<(A::Block, usize)> {
        let bound = self.bound(s);
        let mut out = Vec::new();
        while s.pooled > bound {
            let Some((stamp, class)) = s.ages.pop_first() else {
                break;
            };
            let Some(blocks) = s.free.get_mut(&class) else {
                continue;
            };
            // Blocks of a class are in stamp order: the oldest is first.
            let position = blocks.iter().position(|(t, _)| *t == stamp);
            if let Some(i) = position {
                let (_, block) = blocks.remove(i);
                if blocks.is_empty() {
                    s.free.remove(&class);
                }
                s.pooled -= class;
                s.trimmed += class as u64;
                out.push((block, class));
            }
        }
        out
    }

    fn free_all(&self, blocks: Vec<(A::Block, usize)>) {
        for (block, class) in blocks {
            self.allocator.free(block, class);
        }
    }

    /// Frees every pooled block; returns how many bytes that gave back.
    pub fn release(&self) -> usize {
        let (blocks, bytes) = {
            let mut s = self.lock();
            s.ages.clear();
            let bytes = std::mem::take(&mut s.pooled);
            let blocks: Vec<(A::Block, usize)> = std::mem::take(&mut s.free)
                .into_iter()
                .flat_map(|(class, blocks)| blocks.into_iter().map(move |(_, b)| (b, class)))
                .collect();
            (blocks, bytes)
        };
        self.free_all(blocks);
        bytes
    }

    /// Sets the hard limit (bytes the pool may keep), trimming to it now.
    pub fn set_limit(&self, bytes: usize) {
        self.limit.store(bytes, Ordering::Relaxed);
        let over = self.trim(&mut self.lock());
        self.free_all(over);
    }

    /// The hard limit.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// Starts the peak of live bytes over from the live bytes now.
    pub fn reset_peak(&self) {
        let mut s = self.lock();
        s.peak = s.live;
    }

    /// Its counters now.
    pub fn stats(&self) -> PoolStats {
        let s = self.lock();
        PoolStats {
            live_bytes: s.live,
            peak_live_bytes: s.peak,
            pooled_bytes: s.pooled,
            pooled_blocks: s.ages.len(),
            bound_bytes: self.bound(&s),
            limit_bytes: self.limit.load(Ordering::Relaxed),
            hits: s.hits,
            misses: s.misses,
            trimmed_bytes: s.trimmed,
        }
    }
}

impl<A: Allocator> Drop for Pool<A> {
    fn drop(&mut self) {
        self.release();
    }
}

/// A block that goes back to its pool when dropped: the buffer type of a
/// launcher whose memory is pooled (device memory, and its emulation).
pub struct Pooled<A: Allocator> {
    block: Option<A::Block>,
    len: usize,
    class: usize,
    pool: std::sync::Arc<Pool<A>>,
}

impl<A: Allocator> Pooled<A> {
    /// A block of `len` bytes from `pool`, and whether it holds old bytes
    /// (a fresh one is zero-filled).
    pub fn take(pool: &std::sync::Arc<Pool<A>>, len: usize) -> Result<(Pooled<A>, bool)> {
        let taken = pool.take(len)?;
        Ok((
            Pooled {
                block: Some(taken.block),
                len,
                class: taken.class,
                pool: pool.clone(),
            },
            taken.reused,
        ))
    }

    /// The memory (of at least [`Pooled::len`] bytes).
    pub fn block(&self) -> &A::Block {
        self.block
            .as_ref()
            .expect("a pooled block is present until dropped")
    }

    /// The memory, for writing.
    pub fn block_mut(&mut self) -> &mut A::Block {
        self.block
            .as_mut()
            .expect("a pooled block is present until dropped")
    }

    /// The bytes asked for (the block may be larger: its class).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no bytes were asked for.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<A: Allocator> Drop for Pooled<A> {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            self.pool.give(block, self.class);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    /// Blocks are their sizes; the allocator counts what is outstanding.
    #[derive(Default)]
    struct Counting {
        outstanding: AtomicUsize,
    }

    impl Allocator for Counting {
        type Block = usize;
        fn allocate(&self, bytes: usize) -> Result<usize> {
            self.outstanding.fetch_add(bytes, Ordering::Relaxed);
            Ok(bytes)
        }
        fn free(&self, block: usize, bytes: usize) {
            assert_eq!(block, bytes);
            self.outstanding.fetch_sub(bytes, Ordering::Relaxed);
        }
    }

    #[test]
    fn classes_waste_at_most_an_eighth() {
        assert_eq!(size_class(0), Some(512));
        assert_eq!(size_class(512), Some(512));
        assert_eq!(size_class(513), Some(576));
        assert_eq!(size_class(1024), Some(1024));
        assert_eq!(size_class(1025), Some(1152));
        assert_eq!(size_class(65536), Some(65536));
        assert_eq!(size_class(65537), Some(73728));
        assert_eq!(size_class(usize::MAX), None);
        for bytes in (513..1 << 20).step_by(97) {
            let c = size_class(bytes).unwrap();
            assert!(c >= bytes && (c - bytes) * 8 < bytes, "{bytes} -> {c}");
            // Classes are fixed points: a class serves itself.
            assert_eq!(size_class(c), Some(c));
        }
    }

    #[test]
    fn a_freed_block_serves_a_nearby_size() {
        let pool = Pool::new(Counting::default(), 1 << 30);
        let a = pool.take(100_000).unwrap();
        assert!(!a.reused);
        pool.give(a.block, a.class);
        let b = pool.take(99_000).unwrap();
        assert!(b.reused, "99,000 and 100,000 bytes share a class");
        assert_eq!(b.class, a.class);
        pool.give(b.block, b.class);
        let s = pool.stats();
        assert_eq!((s.hits, s.misses, s.live_bytes), (1, 1, 0));
        assert_eq!(s.pooled_bytes, a.class);
    }

    #[test]
    fn the_pool_stays_within_twice_the_live_high_water_mark() {
        let pool = Pool::new(Counting::default(), 1 << 40);
        // Distinct sizes, one live at a time: nothing is ever reused.
        for i in 0..5000usize {
            let t = pool.take(1 << 16 | i << 9).unwrap();
            pool.give(t.block, t.class);
            let s = pool.stats();
            assert!(s.pooled_bytes <= s.bound_bytes, "{s:?}");
            assert!(
                s.pooled_bytes <= 2 * (1 << 16 | i << 9) + (1 << 20),
                "{s:?}"
            );
        }
        let s = pool.stats();
        assert_eq!(s.live_bytes, 0);
        assert_eq!(
            pool.allocator().outstanding.load(Ordering::Relaxed),
            s.pooled_bytes
        );
        assert_eq!(pool.release(), s.pooled_bytes);
        assert_eq!(pool.allocator().outstanding.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_steady_loop_is_served_from_the_pool() {
        let pool = Pool::new(Counting::default(), 1 << 40);
        for _ in 0..10_000 {
            // An input, a temp, an output, freed in another order.
            let x = pool.take(256_000).unwrap();
            let t = pool.take(512_000).unwrap();
            let y = pool.take(256_000).unwrap();
            pool.give(t.block, t.class);
            pool.give(x.block, x.class);
            pool.give(y.block, y.class);
        }
        let s = pool.stats();
        assert_eq!(s.misses, 3, "{s:?}");
        assert_eq!(s.trimmed_bytes, 0);
    }

    #[test]
    fn the_hard_limit_caps_the_pool() {
        let pool = Pool::new(Counting::default(), 300_000);
        let blocks: Vec<_> = (0..4).map(|_| pool.take(100_000).unwrap()).collect();
        for t in blocks {
            pool.give(t.block, t.class);
        }
        let s = pool.stats();
        assert!(s.pooled_bytes <= 300_000, "{s:?}");
        assert_eq!(s.pooled_blocks, 2);
        pool.set_limit(0);
        assert_eq!(pool.stats().pooled_bytes, 0);
        assert_eq!(pool.allocator().outstanding.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn pooled_buffers_return_when_dropped() {
        let pool = Arc::new(Pool::new(Counting::default(), 1 << 30));
        let (a, reused) = Pooled::take(&pool, 70_000).unwrap();
        assert!(!reused);
        assert_eq!(a.len(), 70_000);
        drop(a);
        let (_b, reused) = Pooled::take(&pool, 70_000).unwrap();
        assert!(reused);
        assert_eq!(pool.stats().pooled_bytes, 0);
    }
}
