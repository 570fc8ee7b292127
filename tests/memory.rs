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

/// Whether this CPU runs packed products (`kiln_runtime`'s panel kernel:
/// AVX-512F, or AVX2 with FMA), so that weights are packed.
fn packs_weights() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        || (std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"))
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

/// nn.Linear's product (`x @ wᵀ`, the weight kept `[out, in]`) and GPT-2's
/// Conv1D (`x @ w`, kept `[in, out]`), over 64 tokens.
fn linears() -> kiln::Traced {
    trace(
        &[
            TensorSpec::new([64, 96], DType::F32).name("x"),
            TensorSpec::new([200, 96], DType::F32).name("w"),
            TensorSpec::new([96, 200], DType::F32).name("w2"),
        ],
        |v| vec![v[0].matmul(&v[1].t()), v[0].matmul(&v[2])],
    )
    .expect("traces")
}

fn values(shape: [i64; 2], seed: usize) -> Data {
    let n = (shape[0] * shape[1]) as usize;
    let values: Vec<f32> = (0..n)
        .map(|i| ((i * 37 + seed) % 101) as f32 / 50.0 - 1.0)
        .collect();
    Data::from_vec(values, &shape).expect("a tensor")
}

fn assert_close(got: &Data, want: &Data) {
    let (got, want) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
    }
}

#[test]
fn weights_are_packed_once_give_the_same_bits_every_run_and_go_with_their_tensors() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    kiln::release_cached();
    // (Whatever limit the environment sets.)
    let limit = memory_stats().packed.limit_bytes;
    kiln::set_pack_limit(1 << 30);
    let start = memory_stats();
    let packs = packs_weights();
    {
        let traced = linears();
        let compiled = traced.compile(Device::CPU).unwrap();
        let (x, mut w, w2) = (
            values([64, 96], 1),
            values([200, 96], 2),
            values([96, 200], 3),
        );
        let inputs = |w: &Data| [x.clone(), w.clone(), w2.clone()];
        let first = compiled.run(&inputs(&w)).unwrap();
        let expected = traced.interpret(&inputs(&w)).unwrap();
        for (got, want) in first.iter().zip(&expected) {
            assert_close(got, want);
        }
        let after_first = memory_stats();
        if packs {
            // Both weights packed by the first run, and kept.
            assert_eq!(
                after_first.packed.entries,
                start.packed.entries + 2,
                "{after_first}"
            );
            assert_eq!(
                after_first.packed.bytes,
                start.packed.bytes + 2 * 4 * 96 * 256
            );
        }
        let second = compiled.run(&inputs(&w)).unwrap();
        for (a, b) in first.iter().zip(&second) {
            assert_eq!(
                a.to_vec::<f32>(),
                b.to_vec::<f32>(),
                "the same bits on every run"
            );
        }
        let after_second = memory_stats();
        if packs {
            assert_eq!(
                after_second.packed.packs, after_first.packed.packs,
                "{after_second}"
            );
            assert_eq!(after_second.packed.hits, after_first.packed.hits + 2);
        }
        // Writing a weight renumbers its bytes: its old copy goes, and the
        // next run multiplies by the new values.
        w.set(&[5, 7], kiln::runtime::convert::Elem::F(100.0))
            .unwrap();
        let third = compiled.run(&inputs(&w)).unwrap();
        let expected = traced.interpret(&inputs(&w)).unwrap();
        assert_close(&third[0], &expected[0]);
        assert_ne!(third[0].to_vec::<f32>(), first[0].to_vec::<f32>());
        if packs {
            assert_eq!(memory_stats().packed.entries, start.packed.entries + 2);
        }
    }
    // The weights are gone, and their packed copies with them.
    let end = memory_stats();
    assert_eq!(end.packed.entries, start.packed.entries, "{end}");
    assert_eq!(end.packed.bytes, start.packed.bytes, "{end}");
    kiln::release_cached();
    kiln::set_pack_limit(limit);
    let end = memory_stats();
    assert_eq!(end.host.live_bytes, start.host.live_bytes, "{start}\n{end}");
}

#[test]
fn the_pack_limit_bounds_packed_weights() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    kiln::release_cached();
    let traced = linears();
    let compiled = traced.compile(Device::CPU).unwrap();
    let inputs = [
        values([64, 96], 1),
        values([200, 96], 2),
        values([96, 200], 3),
    ];
    let expected = traced.interpret(&inputs).unwrap();
    let limit = memory_stats().packed.limit_bytes;
    kiln::set_pack_limit(0);
    let before = memory_stats();
    let unpacked = compiled.run(&inputs).unwrap();
    let after = memory_stats();
    kiln::set_pack_limit(limit);
    // Past the limit nothing is packed (the products go to gemm).
    assert_eq!(after.packed.entries, before.packed.entries, "{after}");
    assert_eq!(after.packed.packs, before.packed.packs, "{after}");
    for (got, want) in unpacked.iter().zip(&expected) {
        assert_close(got, want);
    }
}

/// nn.Linear's and Conv1D's products as in [`linears`], the first weight
/// also an embedding table (tied, as GPT-2's token embedding and output
/// layer), and a scale a kernel reads.
fn tied() -> kiln::Traced {
    trace(
        &[
            TensorSpec::new([64, 96], DType::F32).name("x"),
            TensorSpec::new([8], DType::I64).name("ids"),
            TensorSpec::new([200, 96], DType::F32).name("w"),
            TensorSpec::new([96, 200], DType::F32).name("w2"),
            TensorSpec::new([96], DType::F32).name("s"),
        ],
        |v| {
            let x = &v[0] * &v[4];
            vec![x.matmul(&v[2].t()), x.matmul(&v[3]), v[1].embedding(&v[2])]
        },
    )
    .expect("traces")
}

#[test]
fn bound_weights_are_held_packed_alone_and_give_the_same_bits() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    kiln::release_cached();
    let limit = memory_stats().packed.limit_bytes;
    kiln::set_pack_limit(1 << 30);
    let packs = packs_weights();
    let traced = tied();
    let compiled = traced.compile(Device::CPU).unwrap();
    let ids = Data::from_vec((0..8i64).map(|i| i * 25 + 3).collect(), &[8]).unwrap();
    let (x, s) = (
        values([64, 96], 1),
        Data::from_vec(vec![0.5f32; 96], &[96]).unwrap(),
    );
    let weights = || (values([200, 96], 2), values([96, 200], 3));
    // The program with its weights passed on every run (packed through
    // the cache), and the reference.
    let (w, w2) = weights();
    let all = [x.clone(), ids.clone(), w, w2, s.clone()];
    let unbound = compiled.run(&all).unwrap();
    let expected = traced.interpret(&all).unwrap();
    drop(all);
    kiln::release_cached();

    let (w, w2) = weights();
    let before = memory_stats();
    let bound = compiled
        .bind(vec![None, None, Some(w), Some(w2), Some(s.clone())])
        .unwrap();
    let after = memory_stats();
    let packing = bound.packing();
    if packs {
        // Both products' weights held packed (the tied one read by the
        // embedding from its panels), the scale as given.
        assert_eq!(packing.weights(), 2, "{packing:?}");
        assert_eq!(packing.bytes(), 2 * 4 * 96 * 256);
        // ... and the originals gone.
        assert!(
            after.host.live_bytes < before.host.live_bytes + packing.bytes(),
            "{before}\n{after}"
        );
    } else {
        assert_eq!(packing.weights(), 0);
    }
    for _ in 0..2 {
        let got = bound.run(&[x.clone(), ids.clone()]).unwrap();
        for ((g, u), e) in got.iter().zip(&unbound).zip(&expected) {
            assert_eq!(g.to_vec::<f32>(), u.to_vec::<f32>(), "the same bits");
            assert_close(g, e);
        }
        // The embedding's rows are the weight's, exactly.
        assert_eq!(got[2].to_vec::<f32>(), expected[2].to_vec::<f32>());
    }
    // Out-of-range indices are the embedding's error, as unbound.
    let bad = Data::from_vec(vec![0i64, 200, 1, 2, 3, 4, 5, 6], &[8]).unwrap();
    let err = bound.run(&[x.clone(), bad]).unwrap_err();
    assert!(err.to_string().contains("index out of range"), "{err}");
    // The inputs left to give are checked.
    let err = bound.run(&[x.clone()]).unwrap_err();
    assert!(
        err.to_string()
            .contains("takes 2 inputs besides its 3 bound ones"),
        "{err}"
    );
    drop(bound);
    kiln::release_cached();

    // Weights the caller keeps: bound through the cache, so that two
    // programs bound to them share one packed copy of each.
    let (w, w2) = weights();
    let before = memory_stats();
    let bind = || {
        compiled
            .bind(vec![
                None,
                None,
                Some(w.clone()),
                Some(w2.clone()),
                Some(s.clone()),
            ])
            .unwrap()
    };
    let (one, two) = (bind(), bind());
    let after = memory_stats();
    if packs {
        assert_eq!(two.packing().weights(), 2);
        assert_eq!(after.packed.entries, before.packed.entries + 2, "{after}");
        assert_eq!(after.packed.hits, before.packed.hits + 2, "{after}");
    }
    let got = two.run(&[x.clone(), ids.clone()]).unwrap();
    for (g, u) in got.iter().zip(&unbound) {
        assert_eq!(g.to_vec::<f32>(), u.to_vec::<f32>(), "the same bits");
    }
    drop((one, two, w, w2));
    assert_eq!(memory_stats().packed.entries, before.packed.entries);
    kiln::release_cached();
    kiln::set_pack_limit(limit);
}

#[test]
fn a_convolution_weight_is_transformed_once_and_goes_with_its_tensor() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    kiln::release_cached();
    let limit = memory_stats().packed.limit_bytes;
    kiln::set_pack_limit(1 << 30);
    let winograd = std::arch::is_x86_feature_detected!("avx512f")
        || (std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"));
    // A 3×3 convolution with stride 1 over a 16×16 image of 16 channels:
    // Winograd's (see `runtime/src/winograd.rs`).
    let traced = trace(
        &[
            TensorSpec::new([1, 16, 16, 16], DType::F32).name("x"),
            TensorSpec::new([20, 16, 3, 3], DType::F32).name("w"),
        ],
        |v| v[0].conv(&v[1], None, kiln::ConvOptions::default().padding(&[1])),
    )
    .expect("traces");
    let compiled = traced.compile(Device::CPU).unwrap();
    let x = Data::from_vec(
        (0..16 * 256)
            .map(|i| ((i * 7) % 23) as f32 / 11.0 - 1.0)
            .collect(),
        &[1, 16, 16, 16],
    )
    .unwrap();
    let mut w = Data::from_vec(
        (0..20 * 16 * 9)
            .map(|i| ((i * 5) % 17) as f32 / 8.0 - 1.0)
            .collect(),
        &[20, 16, 3, 3],
    )
    .unwrap();
    let start = memory_stats();
    let first = compiled.run(&[x.clone(), w.clone()]).unwrap();
    let after_first = memory_stats();
    let second = compiled.run(&[x.clone(), w.clone()]).unwrap();
    let after_second = memory_stats();
    assert_eq!(
        first[0].to_vec::<f32>(),
        second[0].to_vec::<f32>(),
        "the same bits"
    );
    assert_close(
        &first[0],
        &traced.interpret(&[x.clone(), w.clone()]).unwrap()[0],
    );
    if winograd {
        // Transformed by the first run (16 floats per pair of channels)
        // and kept; the second found it.
        assert_eq!(
            after_first.packed.entries,
            start.packed.entries + 1,
            "{after_first}"
        );
        assert_eq!(
            after_first.packed.bytes,
            start.packed.bytes + 16 * 20 * 16 * 4
        );
        assert_eq!(
            after_second.packed.hits,
            after_first.packed.hits + 1,
            "{after_second}"
        );
        assert_eq!(after_second.packed.packs, after_first.packed.packs);
    }
    // A written weight is transformed anew.
    w.set(&[3, 2, 1, 1], kiln::runtime::convert::Elem::F(5.0))
        .unwrap();
    let third = compiled.run(&[x.clone(), w.clone()]).unwrap();
    assert_close(
        &third[0],
        &traced.interpret(&[x.clone(), w.clone()]).unwrap()[0],
    );
    assert_ne!(third[0].to_vec::<f32>(), first[0].to_vec::<f32>());
    drop(w);
    let end = memory_stats();
    assert_eq!(end.packed.entries, start.packed.entries, "{end}");
    assert_eq!(end.packed.bytes, start.packed.bytes, "{end}");
    kiln::set_pack_limit(limit);
}
