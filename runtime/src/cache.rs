//! A cache bounded by bytes and entries, least recently used evicted first:
//! what every cache of compiled programs and generated code is.
//!
//! Each entry carries its cost in bytes (what keeping it holds: machine
//! code, text, tables). Inserting past either bound evicts the least
//! recently used entries until both hold again; an entry larger than the
//! byte bound on its own is not kept at all.

use std::hash::Hash;
use std::sync::Mutex;

use lru::LruCache;

/// What a [`BoundedCache`] holds now and has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Entries kept.
    pub entries: usize,
    /// Their bytes.
    pub bytes: usize,
    /// The most entries it keeps.
    pub max_entries: usize,
    /// The most bytes it keeps.
    pub max_bytes: usize,
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Entries evicted to stay within the bounds.
    pub evictions: u64,
}

struct Inner<K: Hash + Eq, V> {
    entries: LruCache<K, (V, usize)>,
    stats: CacheStats,
}

/// A thread-safe cache of values by key, bounded by entries and bytes.
pub struct BoundedCache<K: Hash + Eq, V> {
    inner: Mutex<Inner<K, V>>,
}

impl<K: Hash + Eq, V: Clone> BoundedCache<K, V> {
    /// An empty cache keeping at most `max_entries` entries and
    /// `max_bytes` bytes.
    pub fn new(max_entries: usize, max_bytes: usize) -> BoundedCache<K, V> {
        BoundedCache {
            inner: Mutex::new(Inner {
                entries: LruCache::unbounded(),
                stats: CacheStats {
                    max_entries,
                    max_bytes,
                    ..CacheStats::default()
                },
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<K, V>> {
        // Every update leaves the cache consistent; a panic elsewhere while
        // it was held does not make it wrong.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value of `key`, now the most recently used.
    pub fn get(&self, key: &K) -> Option<V> {
        let mut inner = self.lock();
        let found = inner.entries.get(key).map(|(v, _)| v.clone());
        match found {
            Some(_) => inner.stats.hits += 1,
            None => inner.stats.misses += 1,
        }
        found
    }

    /// Keeps `value` (costing `bytes`) under `key`, evicting the least
    /// recently used entries as needed. Evicted values are dropped after
    /// the cache is unlocked.
    pub fn insert(&self, key: K, value: V, bytes: usize) {
        let evicted = {
            let mut inner = self.lock();
            if let Some((_, old)) = inner.entries.pop(&key) {
                inner.stats.bytes -= old;
            }
            let mut evicted = Vec::new();
            if bytes <= inner.stats.max_bytes && inner.stats.max_entries > 0 {
                inner.entries.push(key, (value, bytes));
                inner.stats.bytes += bytes;
            }
            evicted.extend(Self::shrink(&mut inner));
            evicted
        };
        drop(evicted);
    }

    fn shrink(inner: &mut Inner<K, V>) -> Vec<V> {
        let mut evicted = Vec::new();
        while inner.entries.len() > inner.stats.max_entries
            || inner.stats.bytes > inner.stats.max_bytes
        {
            let Some((_, (value, bytes))) = inner.entries.pop_lru() else {
                break;
            };
            inner.stats.bytes -= bytes;
            inner.stats.evictions += 1;
            evicted.push(value);
        }
        inner.stats.entries = inner.entries.len();
        evicted
    }

    /// Changes the bounds, evicting what is over them now.
    pub fn set_limits(&self, max_entries: usize, max_bytes: usize) {
        let evicted = {
            let mut inner = self.lock();
            inner.stats.max_entries = max_entries;
            inner.stats.max_bytes = max_bytes;
            Self::shrink(&mut inner)
        };
        drop(evicted);
    }

    /// Drops every entry.
    pub fn clear(&self) {
        let entries = {
            let mut inner = self.lock();
            inner.stats.bytes = 0;
            inner.stats.entries = 0;
            std::mem::replace(&mut inner.entries, LruCache::unbounded())
        };
        drop(entries);
    }

    /// What it holds now.
    pub fn stats(&self) -> CacheStats {
        let mut inner = self.lock();
        inner.stats.entries = inner.entries.len();
        inner.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_entries_go_first() {
        let cache = BoundedCache::new(10, 100);
        cache.insert("a", 1, 40);
        cache.insert("b", 2, 40);
        assert_eq!(cache.get(&"a"), Some(1));
        cache.insert("c", 3, 40);
        // "b" was used least recently.
        assert_eq!(cache.get(&"b"), None);
        assert_eq!(cache.get(&"a"), Some(1));
        let s = cache.stats();
        assert_eq!((s.entries, s.bytes, s.evictions), (2, 80, 1));
    }

    #[test]
    fn entry_bounds_and_oversized_values() {
        let cache = BoundedCache::new(2, 1000);
        for i in 0..5 {
            cache.insert(i, i, 1);
        }
        assert_eq!(cache.stats().entries, 2);
        cache.insert(9, 9, 5000);
        assert_eq!(cache.get(&9), None, "larger than the whole cache");
        cache.set_limits(1, 1000);
        assert_eq!(cache.stats().entries, 1);
        cache.clear();
        assert_eq!(cache.stats().bytes, 0);
    }
}
