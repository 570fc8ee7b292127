//! The CUDA backend. Without a GPU: the generated CUDA C of every program
//! (snapshots); every kernel of every program and of random programs
//! compiled by NVRTC and assembled by `ptxas -arch=sm_90`; and every
//! program and random programs run against the interpreter with their CUDA
//! C emulated on the host (`kiln_tests::cuda_emulator`, through the
//! backend's own run loop). With a GPU: every program and random programs
//! on the GPU against the interpreter.
//!
//! NVRTC and ptxas come from the PyPI wheels `nvidia-cuda-nvrtc-cu12` and
//! `nvidia-cuda-nvcc-cu12` (`.ci/run` installs them). Where they are
//! missing these tests say so and pass, unless `KILN_REQUIRE_NVRTC=1`
//! (set by CI), which makes their absence a failure. The GPU tests skip
//! with a message where no GPU or driver is present.

use std::path::PathBuf;

use kiln::{BackendKind, Compiler, Module};
use kiln_cuda::{Cuda, nvrtc};
use kiln_tests::cuda_emulator::{self, plan_of};
use kiln_tests::cuda_tools::{compiles, nvrtc_here, ptxas};
use kiln_tests::differential::{
    Math, check_random, check_random_with, every_program_on, every_program_with,
};
use kiln_tests::programs::{DTypes, recipe_strategy};
use kiln_tests::{load, programs, runnable};
use proptest::prelude::*;

/// Whether a GPU can run the tests here.
fn gpu_here() -> bool {
    let ok = kiln_cuda::device::driver_present() && kiln_cuda::device::context(0).is_ok();
    if !ok {
        eprintln!("skipped: no CUDA GPU or driver on this machine");
    }
    ok
}

/// The laid-out module of a program, as the backend receives it.
fn prepared(name: &str, path: &PathBuf) -> Option<Module> {
    let mut module = load(path);
    if !runnable(&module) {
        return None;
    }
    Compiler::new(BackendKind::Cuda)
        .pipeline()
        .run(&mut module)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    Some(module)
}

#[test]
fn generated_cuda_c_snapshots() {
    insta::with_settings!({
        snapshot_path => kiln_tests::tests_dir().join("../snapshots"),
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("cuda__preamble", kiln_cuda::codegen::preamble());
        for (name, path) in programs() {
            let Some(module) = prepared(&name, &path) else { continue };
            let plan = Cuda::default().plan(&module).unwrap_or_else(|e| panic!("{name}: {e}"));
            let kernels: String = plan
                .kernels()
                .map(kiln_cuda::codegen::kernel_source)
                .chain(kiln_cuda::steps::kernels(&plan).into_iter().map(|a| a.source))
                .collect::<Vec<_>>()
                .join("\n");
            insta::assert_snapshot!(format!("cuda__{name}"), kernels);
        }
    });
}

#[test]
fn every_program_compiles_with_nvrtc_and_ptxas() {
    if !nvrtc_here() {
        return;
    }
    let ptxas = ptxas();
    let mut failures = Vec::new();
    for (name, path) in programs() {
        let Some(module) = prepared(&name, &path) else {
            continue;
        };
        if let Err(e) = compiles(&module, ptxas.as_ref()) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn random_programs_compile_with_nvrtc_and_ptxas() {
    if !nvrtc_here() {
        return;
    }
    let ptxas = ptxas();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 120,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&recipe_strategy(DTypes::Computable, 3, 10), |recipe| {
        let mut module = recipe.build();
        Compiler::new(BackendKind::Cuda)
            .pipeline()
            .run(&mut module)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        compiles(&module, ptxas.as_ref()).map_err(|e| TestCaseError::fail(format!("{e}\n{module}")))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn without_nvrtc_or_a_gpu_the_errors_say_what_is_missing() {
    let module = load(&kiln_tests::tests_dir().join("programs/binary_float.kir"));
    match Compiler::new(BackendKind::Cuda).compile(&module) {
        Err(e) => assert!(e.message().contains("NVRTC not found"), "{e}"),
        Ok(compiled) => {
            if !gpu_here() {
                let inputs = kiln_tests::inputs_for(&module);
                let err = compiled.run(&inputs).unwrap_err();
                assert!(err.message().contains("CUDA"), "{err}");
            }
        }
    }
}

#[test]
fn every_program_emulated_matches_the_interpreter() {
    if !cuda_emulator::here() {
        return;
    }
    let failures = every_program_with("cuda (emulated)", Math::Own, &cuda_emulator::run);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A convolution's tail runs in its generated kernel, the direct one (8
/// channels) and implicit GEMM's (32), with the bits of the kernel it
/// replaces: ResNet's basic block, emulated, against the same block
/// returning one convolution's result or the other (which then has no
/// tail).
#[test]
fn convolution_tails_run_in_the_convolutions_kernels_emulated() {
    if !cuda_emulator::here() {
        return;
    }
    let bits = |t: &kiln_runtime::Tensor| -> Vec<u32> {
        t.to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|f| f.to_bits())
            .collect()
    };
    for channels in [8, 32] {
        let (module, inputs) = kiln_tests::basic_block(channels, "%x");
        let (_, plan) = plan_of(&module.to_string());
        let with_tails = kiln_cuda::steps::kernels(&plan)
            .iter()
            .filter(|k| k.tail)
            .count();
        assert_eq!(with_tails, 2, "{plan}");
        let fused = cuda_emulator::run(&module, &inputs).unwrap();
        for returned in ["%c1", "%c2"] {
            let (module, inputs) = kiln_tests::basic_block(channels, returned);
            let plain = cuda_emulator::run(&module, &inputs).unwrap();
            assert_eq!(
                bits(&fused[0]),
                bits(&plain[0]),
                "{channels} channels, {returned}"
            );
        }
    }
}

/// Attention is one generated kernel per call (no matmul or softmax
/// steps), which the emulation runs; heads too wide for a tile in shared
/// memory, or empty, expand to matmuls and softmax instead, and agree too.
#[test]
fn attention_is_one_fused_kernel_unless_its_heads_are_too_wide() {
    use kiln_passes::plan::Step;
    let program = |e: i64, dtype: &str| {
        format!(
            "func @main(%q: tensor<2x3x{e}x{dtype}>, %k: tensor<2x5x{e}x{dtype}>, %v: tensor<2x5x{e}x{dtype}>) -> tensor<2x3x{e}x{dtype}> {{\n  %a = scaled_dot_product_attention %q, %k, %v, none {{is_causal = true}}\n  return %a\n}}\n"
        )
    };
    let matmuls = |plan: &kiln_passes::plan::KernelPlan| {
        plan.steps
            .iter()
            .filter(|s| matches!(s, Step::Matmul { .. }))
            .count()
    };
    // attention.kir: two calls, two kernels, nothing else but its cats.
    let (_, plan) = plan_of(
        &std::fs::read_to_string(kiln_tests::tests_dir().join("programs/attention.kir"))
            .expect("attention.kir"),
    );
    assert_eq!(kiln_cuda::steps::kernels(&plan).len(), 2);
    assert_eq!(matmuls(&plan), 0);
    // f64 heads of 128, 3 queries and 5 keys: tiles of 2 queries and 8
    // keys (no larger than they need), each lane 2 rows of 16 value
    // columns (64 registers). Heads of 512 leave no tiling (f64 heads
    // fuse up to 256 wide).
    let (fits, plan) = plan_of(&program(128, "f64"));
    let kernels = kiln_cuda::steps::kernels(&plan);
    assert_eq!(kernels.len(), 1);
    assert!(
        kernels[0].source.contains(
            "2 tile(s) of 2 queries x 2 batch items, 8 keys at a time, 8 threads in groups of 8"
        ),
        "{}",
        kernels[0].source
    );
    let (wide, plan) = plan_of(&program(512, "f64"));
    assert!(kiln_cuda::steps::kernels(&plan).is_empty());
    assert_eq!(matmuls(&plan), 2);
    // Empty heads (found by the random programs: C has no empty arrays)
    // expand too.
    let (empty, plan) = plan_of(&program(0, "f32"));
    assert!(kiln_cuda::steps::kernels(&plan).is_empty());
    if !cuda_emulator::here() {
        return;
    }
    for module in [fits, wide, empty] {
        kiln_tests::differential::differ_with(
            &module,
            "cuda (emulated)",
            Math::Own,
            &cuda_emulator::run,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// `embedding`, `index_select` (i32 and i64 indices) and `gather` are one
/// generated kernel each, copying elements as bytes; an index out of range (past the end,
/// or negative) is never read through: the kernel flags it and the run
/// fails with the interpreter's error for the first bad index.
#[test]
fn embedding_and_gather_steps_are_kernels_that_check_their_indices() {
    use kiln_runtime::Tensor;
    let program = |index: &str| {
        format!(
            "func @main(%w: tensor<5x3xf32>, %x: tensor<4x6xi64>, %i: tensor<2x3x{index}>, %g: tensor<4x2xi64>) -> (tensor<2x3x3xf32>, tensor<4x2xi64>) {{\n  %e = embedding %w, %i\n  %t = gather %x, %g {{dim = 1}}\n  return %e, %t\n}}\n"
        )
    };
    let (_, plan) = plan_of(&program("i32"));
    let kernels = kiln_cuda::steps::kernels(&plan);
    assert_eq!(kernels.len(), 2, "{kernels:?}");
    assert!(
        kernels
            .iter()
            .all(|k| k.source.contains("atomicOr(kiln_status, 2)"))
    );
    if !cuda_emulator::here() {
        return;
    }
    let w = Tensor::from_vec(
        (0..15).map(|v| v as f32 * 0.5 - 3.0).collect::<Vec<f32>>(),
        &[5, 3],
    )
    .unwrap();
    let x = Tensor::from_vec((0..24).map(|v| v * 7 - 40).collect::<Vec<i64>>(), &[4, 6]).unwrap();
    let gathered = |g: [i64; 8]| Tensor::from_vec(g.to_vec(), &[4, 2]).unwrap();
    let ids_i32 = |i: [i32; 6]| Tensor::from_vec(i.to_vec(), &[2, 3]).unwrap();
    let ids_i64 = |i: [i32; 6]| {
        Tensor::from_vec(
            i.iter().map(|&v| i64::from(v)).collect::<Vec<i64>>(),
            &[2, 3],
        )
        .unwrap()
    };
    // The emulated run gives the interpreter's bytes and strides, or its
    // error.
    let agree = |module: &kiln::Module, inputs: &[Tensor]| match (
        kiln_runtime::interp::run(module, inputs),
        cuda_emulator::run(module, inputs),
    ) {
        (Ok(e), Ok(g)) => {
            for (a, b) in e.iter().zip(&g) {
                assert_eq!(a.to_bytes(), b.to_bytes());
                assert_eq!(a.strides(), b.strides());
            }
        }
        (Err(e), Err(g)) => assert_eq!(e.message(), g.message()),
        (e, g) => panic!("interpreter {e:?}, emulated {g:?}"),
    };
    let good_g = gathered([5, 0, 3, 3, 1, 4, 2, 0]);
    let cases = [
        // In range: the very bytes.
        ([4, 0, 2, 2, 1, 3], good_g.clone()),
        // An embedding index past the end, then a negative one.
        ([4, 5, 2, 2, -1, 3], good_g.clone()),
        ([4, 0, 2, 2, -1, 3], good_g.clone()),
        // A gather index past the end, and negative.
        ([4, 0, 2, 2, 1, 3], gathered([5, 0, 3, 6, 1, 4, 2, 0])),
        ([4, 0, 2, 2, 1, 3], gathered([5, 0, 3, 3, 1, -2, 2, 0])),
    ];
    for dtype in ["i32", "i64"] {
        let module =
            kiln::parse_module("gather.kir", &program(dtype), kiln::DefaultDType::F32).unwrap();
        for (ids, g) in &cases {
            let ids = if dtype == "i32" {
                ids_i32(*ids)
            } else {
                ids_i64(*ids)
            };
            agree(&module, &[w.clone(), x.clone(), ids, g.clone()]);
        }
    }
    // index_select (i32 and i64 indices) along the second dim.
    for dtype in ["i32", "i64"] {
        let text = format!(
            "func @main(%x: tensor<4x6xi64>, %k: tensor<3x{dtype}>) -> tensor<4x3xi64> {{\n  %s = index_select %x, %k {{dim = 1}}\n  return %s\n}}\n"
        );
        let module =
            kiln::parse_module("index_select.kir", &text, kiln::DefaultDType::F32).unwrap();
        let (_, plan) = plan_of(&text);
        assert_eq!(kiln_cuda::steps::kernels(&plan).len(), 1);
        for k in [[5, 0, 2], [1, 6, 0], [-1, 0, 0]] {
            let k = if dtype == "i32" {
                Tensor::from_vec(k.to_vec(), &[3]).unwrap()
            } else {
                Tensor::from_vec(k.iter().map(|&v| i64::from(v)).collect::<Vec<i64>>(), &[3])
                    .unwrap()
            };
            agree(&module, &[x.clone(), k]);
        }
    }
    // A bad index, then a division by zero (of what the gather left
    // unwritten): the index error comes first, as the interpreter raises
    // it (the division's bit joins the index's in the status word).
    let text = "func @main(%x: tensor<4x6xi64>, %g: tensor<4x2xi64>) -> tensor<4x2xi64> {\n  %t = gather %x, %g {dim = 1}\n  %q = div %t, 0 {rounding_mode = \"floor\"}\n  return %q\n}\n";
    let module = kiln::parse_module("gather_div.kir", text, kiln::DefaultDType::F32).unwrap();
    let inputs = [x.clone(), gathered([5, 0, 3, 6, 1, 4, 2, 0])];
    let expected = kiln_runtime::interp::run(&module, &inputs).unwrap_err();
    assert!(expected.message().contains("out of bounds"), "{expected}");
    let got = cuda_emulator::run(&module, &inputs).unwrap_err();
    assert_eq!(got.message(), expected.message());
    // So do timed runs and per-step profiles of it (they are not timed).
    let timed = cuda_emulator::device_times(&module, &inputs, 2).unwrap_err();
    assert_eq!(timed.message(), expected.message());
    let (checked, emulator) = cuda_emulator::prepare(&module).unwrap();
    let profiled =
        kiln_runtime::execute::profile_steps(&emulator, &checked, &inputs, 2).unwrap_err();
    assert_eq!(profiled.message(), expected.message());
}

/// Convolutions (grouped, strided, dilated, transposed), max, average and
/// adaptive pools and resampling (nearest, nearest-exact, bilinear,
/// bicubic) of f16, bf16, f32 and f64 are one generated kernel each,
/// written as the reference's loops in its arithmetic and order:
/// emulated, they give the interpreter's bits (positions included).
#[test]
fn convolution_and_pooling_steps_are_kernels_with_the_references_bits() {
    let text = "func @main(%x: tensor<2x4x9x11xf32, channels_last>, %w: tensor<6x2x3x2xf32>, %b: tensor<6xf32>, %y: tensor<2x4x5x6xf64>, %t: tensor<4x3x2x3xf64>, %h: tensor<1x4x5x5xf16>, %hw: tensor<2x4x3x3xf16>) -> (tensor<2x6x5x9xf32>, tensor<2x3x9x12xf64>, tensor<2x4x5x6xf32>, tensor<2x4x5x6xi64>, tensor<2x4x3x3xf64>, tensor<1x2x3x3xf16>, tensor<2x4x2x2xf32>, tensor<2x4x3x4xf64>, tensor<2x4x3x4xi64>, tensor<2x4x18x20xf32>, tensor<2x4x7x13xf64>, tensor<2x4x5x9xf32>, tensor<2x4x4x9xf64>, tensor<1x4x2x2xbf16>, tensor<1x4x4x4xf16>, tensor<1x4x4x4xi64>) {
  %c = conv2d %x, %w, %b {stride = [2, 1], padding = [1, 0], dilation = [1, 2], groups = 2}
  %ct = conv_transpose2d %y, %t {stride = 2, padding = 1, output_padding = 1}
  %m, %mi = max_pool2d_with_indices %x {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true}
  %a = avg_pool2d %y {kernel_size = 3, stride = 2, padding = 1, count_include_pad = false}
  %hc = conv2d %h, %hw
  %ad = adaptive_avg_pool2d %x {output_size = [2, 2]}
  %am, %ai = adaptive_max_pool2d %y {output_size = [3, 4]}
  %un = upsample_nearest2d %x {output_size = [18, 20], scales_h = 2.0, scales_w = 2.0}
  %ub = upsample_bilinear2d %y {output_size = [7, 13], align_corners = false}
  %uc = upsample_bicubic2d %x {output_size = [5, 9], align_corners = true}
  %ue = _upsample_nearest_exact2d %y {output_size = [4, 9]}
  %hb = cast %h {dtype = bf16}
  %hp = avg_pool2d %hb {kernel_size = 2}
  %hm, %hi = max_pool2d_with_indices %h {kernel_size = 2, stride = 1}
  return %c, %ct, %m, %mi, %a, %hc, %ad, %am, %ai, %un, %ub, %uc, %ue, %hp, %hm, %hi
}
";
    let (module, plan) = plan_of(text);
    let kernels = kiln_cuda::steps::kernels(&plan);
    assert_eq!(kernels.len(), 13, "{plan}");
    assert!(
        kernels
            .iter()
            .any(|k| k.source.contains("convolution (transposed)"))
    );
    if !cuda_emulator::here() {
        return;
    }
    let inputs = kiln_tests::inputs_for(&module);
    cuda_emulator::assert_same_bits("spatial", &module, &inputs);
}

/// cumsum, cumprod, logcumsumexp, cummax and cummin are one generated
/// kernel each (a thread per line, in the reference's order and
/// accumulators): emulated, they give the interpreter's bits, along a
/// contiguous dim and across one, through a transposed view, in f16 and
/// bf16 (float accumulators), in i8 and u8 (wrapping in 64 bits, then to
/// the dtype), and with positions; a bool cumsum, cast to i64 first, too.
/// A scan of a zero-dim tensor, and one long line, stay on the host.
#[test]
fn scan_steps_are_kernels_with_the_references_bits() {
    let text = "func @main(%x: tensor<3x7xf32>, %h: tensor<4x5xf16>, %b: tensor<4x5xbf16>, %i: tensor<5x6xi8>, %u: tensor<5x6xu8>, %d: tensor<6x3xf64>, %k: tensor<4x9xi64>, %q: tensor<4x5xbool>, %s: tensor<f32>, %long: tensor<65536xf32>) -> (tensor<3x7xf32>, tensor<7x3xf32>, tensor<4x5xf16>, tensor<4x5xbf16>, tensor<5x6xi8>, tensor<5x6xu8>, tensor<6x3xf64>, tensor<6x3xf64>, tensor<6x3xi64>, tensor<4x9xi64>, tensor<4x9xi32>, tensor<4x5xi64>, tensor<f32>, tensor<65536xf32>) {
  %a = cumsum %x {dim = 1}
  %t = transpose %x {dim0 = 0, dim1 = 1}
  %at = cumprod %t {dim = 0}
  %hc = cumsum %h {dim = 0}
  %bc = cumprod %b {dim = 1}
  %ic = cumsum %i {dim = 1, dtype = i8}
  %uc = cumprod %u {dim = 0, dtype = u8}
  %l = logcumsumexp %d {dim = 0}
  %mv, %mi = cummax %d {dim = 0}
  %nv, %ni = cummin %k {dim = 1}
  %n32 = cast %ni {dtype = i32}
  %qc = cumsum %q {dim = 1}
  %sc = cumsum %s {dim = 0}
  %lc = cumsum %long {dim = 0}
  return %a, %at, %hc, %bc, %ic, %uc, %l, %mv, %mi, %nv, %n32, %qc, %sc, %lc
}
";
    let (module, plan) = plan_of(text);
    let scans = kiln_cuda::steps::kernels(&plan)
        .iter()
        .filter(|k| k.name.starts_with("kiln_scan"))
        .count();
    assert_eq!(scans, 10, "{plan}");
    if !cuda_emulator::here() {
        return;
    }
    let inputs = kiln_tests::inputs_for(&module);
    cuda_emulator::assert_same_bits("scans", &module, &inputs);
}

#[test]
fn device_times_run_the_steps_with_resident_inputs() {
    if !cuda_emulator::here() {
        return;
    }
    // Repeated runs on the same device memory: slots reused, split
    // reductions' counters left ready for the next launch.
    for program in ["softmax_layernorm", "split_rows"] {
        let module = load(&kiln_tests::tests_dir().join(format!("programs/{program}.kir")));
        let runner = |m: &Module, inputs: &[kiln_runtime::Tensor]| {
            let (times, results) = cuda_emulator::device_times(m, inputs, 3)?;
            assert_eq!(times.len(), 3);
            Ok(results)
        };
        let outcome = kiln_tests::differential::differ_with(
            &module,
            "cuda (emulated, resident)",
            Math::Own,
            &runner,
        );
        assert!(outcome.is_ok(), "{program}: {}", outcome.unwrap_err());
    }
    let inputs = kiln_tests::inputs_for(&load(
        &kiln_tests::tests_dir().join("programs/split_rows.kir"),
    ));
    // A run that divides by zero reports it after the timed runs.
    let text = "func @main(%x: tensor<4xi32>) -> tensor<4xi32> {\n  %0 = div %x, 0 {rounding_mode = \"floor\"}\n  return %0\n}\n";
    let module = kiln::parse_module("div.kir", text, kiln::DefaultDType::F32).unwrap();
    let err =
        cuda_emulator::device_times(&module, &kiln_tests::inputs_for(&module), 2).unwrap_err();
    assert_eq!(err.message(), "ZeroDivisionError");
    // The CPU backends have no device time: their run is it.
    let compiled = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap();
    assert!(compiled.device_times(&inputs, 1).is_none());
}

/// Found by the emulated random programs: erf from the host's libm (and
/// on a GPU from libdevice) differs from the interpreter's by an ulp,
/// which log near 1 magnifies to several; PyTorch's CPU and CUDA differ
/// the same way, so such results are held to torch.testing's tolerances.
#[test]
fn library_math_is_held_to_torch_tolerances() {
    if !cuda_emulator::here() {
        return;
    }
    let text = "func @main(%x: tensor<64xf64>) -> tensor<64xf64> {\n  %0 = gelu %x\n  %1 = log %0\n  return %1\n}\n";
    let module = kiln::parse_module("gelu_log.kir", text, kiln::DefaultDType::F32).unwrap();
    let outcome = check_random_with(&module, "cuda (emulated)", Math::Own, &cuda_emulator::run);
    assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
}

/// Device memory is pooled as the CUDA backend pools it: the second and
/// later runs of a program take every buffer from the pool, nothing stays
/// live after a run, and `release` empties it.
#[test]
fn emulated_device_memory_is_pooled() {
    use kiln_runtime::pool::Pool;
    if !cuda_emulator::here() {
        return;
    }
    let module = load(&kiln_tests::tests_dir().join("programs/softmax_layernorm.kir"));
    let inputs = kiln_tests::inputs_for(&module);
    let (checked, emulator) = cuda_emulator::prepare(&module).unwrap();
    let pool = std::sync::Arc::new(Pool::new(cuda_emulator::EmulatedMemory, 1 << 30));
    let emulator = emulator.with_pool(pool.clone());
    let first = kiln_runtime::execute::execute(&emulator, &checked, &inputs).unwrap();
    let after_first = pool.stats();
    for _ in 0..3 {
        let again = kiln_runtime::execute::execute(&emulator, &checked, &inputs).unwrap();
        for (a, b) in first.iter().zip(&again) {
            assert_eq!(a.to_bytes(), b.to_bytes());
        }
    }
    let s = pool.stats();
    assert!(after_first.misses > 0);
    assert_eq!(s.misses, after_first.misses, "{s:?}");
    let per_run = after_first.misses + after_first.hits;
    assert_eq!(s.hits, after_first.hits + 3 * per_run, "{s:?}");
    assert_eq!(s.live_bytes, 0);
    assert!(s.pooled_bytes <= s.bound_bytes);
    assert_eq!(pool.release(), s.pooled_bytes);
    assert_eq!(pool.stats().pooled_bytes, 0);
}

#[test]
fn split_reductions_leave_their_scratch_zeroed() {
    use kiln_runtime::execute::Launcher;
    if !cuda_emulator::here() {
        return;
    }
    let module = load(&kiln_tests::tests_dir().join("programs/split_rows.kir"));
    let (checked, emulator) = cuda_emulator::prepare(&module).unwrap();
    let plan = &checked.plan;
    let mut split = 0;
    for (index, k) in plan.kernels().enumerate() {
        let bytes = kiln_cuda::codegen::scratch_bytes(k);
        if bytes == 0 {
            continue;
        }
        split += 1;
        let args: Vec<_> = k
            .args
            .iter()
            .map(|b| {
                emulator
                    .zeroed(plan.buffers[b.index()].bytes.max(1))
                    .unwrap()
            })
            .collect();
        let args: Vec<_> = args.iter().collect();
        let status = emulator.zeroed(4).unwrap();
        let scratch = emulator.zeroed(bytes).unwrap();
        for _ in 0..2 {
            emulator
                .launch(index, k, &args, &status, Some(&scratch))
                .unwrap();
            let counters = &emulator.download(&scratch).unwrap()[..k.outer_count() as usize * 4];
            assert!(
                counters.iter().all(|&b| b == 0),
                "{}: row counters {counters:?}",
                k.name
            );
        }
    }
    assert!(split >= 3, "split_rows.kir has split reductions");
}

/// Random programs checked by `check`: `var` cases from the environment
/// (a longer bug hunt), else `default`.
fn random_programs(var: &str, default: u32, check: &dyn Fn(&Module) -> Result<(), String>) {
    let cases = std::env::var(var)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&recipe_strategy(DTypes::Computable, 3, 10), |recipe| {
        let outcome = check(&recipe.build());
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn random_programs_emulated_match_the_interpreter() {
    if !cuda_emulator::here() {
        return;
    }
    // KILN_EMULATED_CASES makes a longer bug hunt than CI's 80.
    random_programs("KILN_EMULATED_CASES", 80, &|m| {
        check_random_with(m, "cuda (emulated)", Math::Own, &cuda_emulator::run)
    });
}

/// A permute made contiguous and cast, of sizes that leave ragged tiles and
/// vectors, in dtypes of every width: the tiled and vector walks.
fn transpose_program(
    dims: &[i64],
    perm_seed: usize,
    dtype: &str,
    to: &str,
) -> Result<Module, TestCaseError> {
    let rank = dims.len();
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.rotate_left(perm_seed % rank);
    if perm_seed >= 3 {
        perm.swap(0, rank - 1);
    }
    let shape = |d: &[i64]| d.iter().map(i64::to_string).collect::<Vec<_>>().join("x");
    let permuted: Vec<i64> = perm.iter().map(|&p| dims[p]).collect();
    let list = perm
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let text = format!(
        "func @main(%x: tensor<{}x{dtype}>) -> (tensor<{p}x{dtype}>, tensor<{p}x{to}>) {{\n  \
         %p = permute %x {{dims = [{list}]}}\n  %c = contiguous %p\n  \
         %t = to %p {{dtype = {to}, memory_format = contiguous_format}}\n  return %c, %t\n}}\n",
        shape(dims),
        p = shape(&permuted),
    );
    kiln::parse_module("transpose.kir", &text, kiln::DefaultDType::F32)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))
}

/// The transposes' sizes, permutations and dtypes.
fn transpose_cases() -> impl Strategy<Value = (Vec<i64>, usize, &'static str, &'static str)> {
    (
        proptest::collection::vec(1i64..70, 2..=3),
        0usize..6,
        proptest::sample::select(vec!["bool", "u8", "f16", "bf16", "i32", "f32", "f64"]),
        proptest::sample::select(vec!["f32", "f16", "i64", "u8"]),
    )
}

/// A row reduction around the code generator's thresholds: the warp and
/// block row groups (1024 elements), and split rows (few rows of at least
/// 65,536 elements, or just too many rows to split).
fn reduction_program(rows: i64, len: i64, op: &str, dtype: &str) -> Result<Module, TestCaseError> {
    let (attrs, out) = match op {
        "argmax" | "argmin" => ("{dim = 1}".to_string(), "i64".to_string()),
        "sum" | "prod" if !dtype.starts_with('f') => {
            ("{dims = [1]}".to_string(), "i64".to_string())
        }
        _ => ("{dims = [1]}".to_string(), dtype.to_string()),
    };
    let text = format!(
        "func @main(%x: tensor<{rows}x{len}x{dtype}>) -> tensor<{rows}x{out}> {{\n  %r = {op} %x {attrs}\n  return %r\n}}\n"
    );
    kiln::parse_module("reduce.kir", &text, kiln::DefaultDType::F32)
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))
}

/// The reductions' sizes, ops and dtypes.
fn reduction_cases() -> impl Strategy<Value = ((i64, i64), &'static str, &'static str)> {
    (
        prop_oneof![
            (1i64..4, 1000i64..1100),
            (126i64..130, 1i64..40),
            (1i64..3, 65_530i64..66_000),
        ],
        proptest::sample::select(vec!["sum", "amax", "amin", "prod", "argmax", "argmin"]),
        proptest::sample::select(vec!["f32", "f16", "i32", "u8", "f64"]),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_transposes_emulated_match_the_interpreter((dims, perm_seed, dtype, to) in transpose_cases()) {
        if !cuda_emulator::here() {
            return Ok(());
        }
        let module = transpose_program(&dims, perm_seed, dtype, to)?;
        let outcome = check_random_with(&module, "cuda (emulated)", Math::Own, &cuda_emulator::run);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_reductions_emulated_match_the_interpreter(((rows, len), op, dtype) in reduction_cases()) {
        if !cuda_emulator::here() {
            return Ok(());
        }
        let module = reduction_program(rows, len, op, dtype)?;
        let outcome = check_random_with(&module, "cuda (emulated)", Math::Own, &cuda_emulator::run);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

#[test]
fn every_program_on_the_gpu_matches_the_interpreter() {
    if !nvrtc_here() || !gpu_here() {
        return;
    }
    let failures = every_program_on(BackendKind::Cuda);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn random_programs_on_the_gpu_match_the_interpreter() {
    if !nvrtc_here() || !gpu_here() {
        return;
    }
    // KILN_GPU_CASES sets the number of programs (300 by default).
    random_programs("KILN_GPU_CASES", 300, &|m| {
        check_random(m, BackendKind::Cuda)
    });
}

/// Whether a GPU can run the tests here, quietly (for property tests).
fn gpu_quietly() -> bool {
    nvrtc::nvrtc_present()
        && kiln_cuda::device::driver_present()
        && kiln_cuda::device::context(0).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_transposes_on_the_gpu_match_the_interpreter((dims, perm_seed, dtype, to) in transpose_cases()) {
        if !gpu_quietly() {
            return Ok(());
        }
        let outcome = check_random(&transpose_program(&dims, perm_seed, dtype, to)?, BackendKind::Cuda);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    fn random_reductions_on_the_gpu_match_the_interpreter(((rows, len), op, dtype) in reduction_cases()) {
        if !gpu_quietly() {
            return Ok(());
        }
        let outcome = check_random(&reduction_program(rows, len, op, dtype)?, BackendKind::Cuda);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

/// On the GPU, device times run the steps again on resident inputs (split
/// reductions' row counters must be left ready for the next launch), and
/// a run that divides by zero reports it after the timed runs.
#[test]
fn device_times_on_the_gpu_repeat_with_resident_inputs() {
    if !nvrtc_here() || !gpu_here() {
        return;
    }
    for program in ["softmax_layernorm", "split_rows"] {
        let module = load(&kiln_tests::tests_dir().join(format!("programs/{program}.kir")));
        let compiled = Compiler::new(BackendKind::Cuda).compile(&module).unwrap();
        let runner = |_: &Module, inputs: &[kiln_runtime::Tensor]| {
            let times = compiled
                .device_times(inputs, 3)
                .expect("the CUDA backend has device times")?;
            assert_eq!(times.len(), 3);
            compiled.run(inputs)
        };
        let outcome = kiln_tests::differential::differ_with(
            &module,
            "cuda (after device times)",
            Math::Own,
            &runner,
        );
        assert!(outcome.is_ok(), "{program}: {}", outcome.unwrap_err());
    }
    let text = "func @main(%x: tensor<4xi32>) -> tensor<4xi32> {\n  %0 = div %x, 0 {rounding_mode = \"floor\"}\n  return %0\n}\n";
    let module = kiln::parse_module("div.kir", text, kiln::DefaultDType::F32).unwrap();
    let compiled = Compiler::new(BackendKind::Cuda).compile(&module).unwrap();
    let err = compiled
        .device_times(&kiln_tests::inputs_for(&module), 2)
        .unwrap()
        .unwrap_err();
    assert_eq!(err.message(), "ZeroDivisionError");
}
