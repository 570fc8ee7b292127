//! Memory in a long-running process, through the `kiln` crate's public API
//! only: one program run on fresh inputs, and programs of distinct shapes
//! compiled, run and dropped, must leave pooled bytes and compiled code
//! within their bounds, and live bytes where they started once everything
//! is dropped. Counted with `kiln::memory_stats()`, which is exact (RSS is
//! noisy); `crates/kiln/examples/memory_soak.rs` measures RSS for
//! BENCHMARKS.md.
//!
//! The counters are per process, so the tests of this binary take turns.

use std::sync::Mutex;

use kiln::runtime::Tensor as Data;
use kiln::{DType, Device, MemoryStats, TensorSpec, memory_stats, trace};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A pointwise chain and a row reduction over `[n, 64]`.
fn program(n: i64) -> kiln::Traced {
    trace(&[TensorSpec::new([n, 64], DType::F32).name("x")], |v| {
        let y = (&v[0] * 2.0 + 1.0).tanh();
        let s = y.sum(&[1], true);
        vec![&y - &s, s.exp()]
    })
    .expect("traces")
}

fn input(n: i64, seed: usize) -> Data {
    let values: Vec<f32> = (0..n as usize * 64)
        .map(|i| ((i * 7 + seed) % 101) as f32 / 50.0 - 1.0)
        .collect();
    Data::from_vec(values, &[n, 64]).expect("a tensor")
}

fn check_bounds(s: &MemoryStats, code_limit: usize) {
    assert!(s.host.pooled_bytes <= s.host.bound_bytes, "{s}");
    assert!(s.host.pooled_bytes <= s.host.limit_bytes, "{s}");
    assert!(s.programs.entries <= s.programs.max_entries, "{s}");
    assert!(s.programs.bytes <= s.programs.max_bytes, "{s}");
    assert!(s.code_bytes <= code_limit, "{s}");
}

#[test]
fn one_program_on_fresh_inputs_reuses_its_memory() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    kiln::release_cached();
    let start = memory_stats();
    {
        let traced = program(1000);
        let compiled = traced.compile(Device::CPU).unwrap();
        let expected = traced.interpret(&[input(1000, 0)]).unwrap();
        let mut after_warmup = None;
        for run in 0..500 {
            // A fresh input each run, dropped after it, as a server does.
            let x = input(1000, run % 3);
            let out = compiled.run(&[x]).unwrap();
            if run % 3 == 0 {
                assert_eq!(out[1].to_vec::<f32>(), expected[1].to_vec::<f32>());
            }
            if run == 50 {
                after_warmup = Some(memory_stats());
            }
            check_bounds(&memory_stats(), 16 << 20);
        }
        let warm = after_warmup.unwrap();
        let end = memory_stats();
        // Every buffer after the warm-up came from the pool: no new pages.
        assert_eq!(end.host.misses, warm.host.misses, "{warm}\n{end}");
        assert!(
            end.host.pooled_bytes <= warm.host.pooled_bytes + (1 << 20),
            "{end}"
        );
    }
    kiln::release_cached();
    let end = memory_stats();
    assert_eq!(end.host.live_bytes, start.host.live_bytes, "{start}\n{end}");
    assert_eq!(end.host.pooled_bytes, 0, "{end}");
    assert_eq!(end.code_bytes, start.code_bytes, "{end}");
}

#[test]
fn distinct_shapes_stay_within_the_caches_bounds() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    kiln::release_cached();
    let start = memory_stats();
    // A small program cache, so that 500 compiles go well past it.
    kiln::set_program_cache_limits(64, 4 << 20);
    let mut peak_code = 0;
    for n in 1..=500 {
        let traced = program(n * 3);
        let compiled = traced.compile(Device::CPU).unwrap();
        let out = compiled.run(&[input(n * 3, n as usize)]).unwrap();
        assert_eq!(out[0].shape(), &[n * 3, 64]);
        let s = memory_stats();
        check_bounds(&s, 32 << 20);
        assert!(s.programs.entries <= 64, "{s}");
        peak_code = peak_code.max(s.code_bytes);
    }
    let s = memory_stats();
    assert!(s.programs.evictions > 0, "{s}");
    // The program cache holds 64 programs' code, not 500.
    assert!(s.code_modules <= 64 + 1, "{s}");
    kiln::release_cached();
    kiln::set_program_cache_limits(
        kiln::compile::PROGRAM_CACHE_ENTRIES,
        kiln::compile::PROGRAM_CACHE_BYTES,
    );
    let end = memory_stats();
    assert_eq!(end.host.live_bytes, start.host.live_bytes, "{start}\n{end}");
    assert_eq!(end.code_bytes, start.code_bytes, "{end}");
    assert_eq!(end.code_modules, start.code_modules, "{end}");
    assert!(peak_code > 0);
}

#[test]
fn the_cache_limit_bounds_the_pool() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    kiln::release_cached();
    kiln::set_cache_limit(1 << 20);
    {
        let held: Vec<Data> = (0..8).map(|i| input(4096, i)).collect();
        drop(held);
        let s = memory_stats();
        assert!(s.host.pooled_bytes <= 1 << 20, "{s}");
        assert!(s.host.pooled_bytes > 0, "{s}");
    }
    kiln::set_cache_limit(0);
    assert_eq!(memory_stats().host.pooled_bytes, 0);
    kiln::set_cache_limit(2 << 30);
}
