//! The Cranelift backend against the reference interpreter: every program
//! of `tests/programs/`.

use kiln::{BackendKind, Compiler};
use kiln_runtime::interp;
use kiln_tests::differential::{check_random, differ, every_program_on};
use kiln_tests::programs::{DTypes, recipe_strategy, sized_recipe_strategy};
use kiln_tests::{inputs_for, load, programs, runnable};
use proptest::prelude::*;

#[test]
fn every_program_matches_the_interpreter() {
    let failures = every_program_on(BackendKind::Cranelift);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_match_the_interpreter(recipe in recipe_strategy(DTypes::Computable, 3, 10)) {
        let outcome = check_random(&recipe.build(), BackendKind::Cranelift);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, failure_persistence: None, ..ProptestConfig::default() })]

    /// Longer rows: vector bodies, scalar tails and unrolled reductions.
    #[test]
    fn random_programs_with_long_rows_match_the_interpreter(
        recipe in sized_recipe_strategy(DTypes::Computable, 3, 8, 3, 19)
    ) {
        let outcome = check_random(&recipe.build(), BackendKind::Cranelift);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}

/// A program whose layout is PyTorch's error (view_as_complex of a view
/// whose first dim has an odd stride) fails to compile with the
/// interpreter's words: no pass name in front (found by the random
/// programs).
#[test]
fn layout_errors_read_as_the_interpreter() {
    let text = "func @main(%x: tensor<2x2xf32, strides=[3, 1]>) -> tensor<2xc64> {
  %0 = view_as_complex %x
  return %0
}
";
    let module = kiln::parse_module("layout_error.kir", text, kiln::DefaultDType::F32).unwrap();
    let inputs = inputs_for(&module);
    let expected = interp::run(&module, &inputs).unwrap_err();
    assert_eq!(
        expected.message(),
        "Tensor must have a stride divisible by 2 for all but last dimension"
    );
    let got = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .err()
        .unwrap();
    assert_eq!(got.message(), expected.message());
    // Refused whether or not the refused view is used.
    let text = "func @main(%x: tensor<2xf32, strides=[2]>) -> tensor<2xbool> {
  %0 = view_as_complex %x
  %1 = gt %x, 0
  return %1
}
";
    let module = kiln::parse_module("dead_view.kir", text, kiln::DefaultDType::F32).unwrap();
    differ(&module, BackendKind::Cranelift).unwrap();
    assert!(
        Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .is_err()
    );
}

/// PyTorch's view_as_complex checks the strides of dims longer than 1
/// only (a channels-last `[1, 1, 1, 2]`, strides `[2, 1, 2, 1]`, is
/// accepted, its size-1 dim's stride halved down to 0), and refuses an odd
/// storage offset (found by the random programs: Kiln refused the first
/// and accepted the second).
#[test]
fn view_as_complex_checks_what_pytorch_checks() {
    let accepted = "func @main(%x: tensor<1x1x1x2xf32, channels_last>) -> tensor<1x1x1xc64> {
  %0 = view_as_complex %x
  return %0
}
";
    let module = kiln::parse_module("size_one.kir", accepted, kiln::DefaultDType::F32).unwrap();
    Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .expect("PyTorch accepts it");
    differ(&module, BackendKind::Cranelift).unwrap();
    let refused = "func @main(%x: tensor<4xf32>) -> tensor<c64> {
  %s = slice %x {dim = 0, start = 1, end = 3}
  %c = view_as_complex %s
  return %c
}
";
    let module = kiln::parse_module("odd_offset.kir", refused, kiln::DefaultDType::F32).unwrap();
    let got = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .err()
        .expect("an odd storage offset is refused");
    assert_eq!(
        got.message(),
        "Tensor must have a storage_offset divisible by 2"
    );
}

/// Of a real tensor, `conj_physical` is the tensor itself, strides and
/// all, as in PyTorch (found by the random programs: the result took a
/// copy's contiguous strides on one backend and the operand's on another).
#[test]
fn conj_physical_of_a_real_view_keeps_its_strides() {
    let text = "func @main(%x: tensor<2xf32, strides=[2]>) -> tensor<2xf32> {
  %0 = conj_physical %x
  return %0
}
";
    let module = kiln::parse_module("conj.kir", text, kiln::DefaultDType::F32).unwrap();
    differ(&module, BackendKind::Cranelift).unwrap();
    let inputs = inputs_for(&module);
    let got = interp::run(&module, &inputs).unwrap();
    assert_eq!(got[0].strides(), [2]);
}

/// An op whose values nothing needs (a `take` out of range under
/// `ones_like`, which reads only its shape) raises nothing: the optimizer
/// drops it, as Kiln's laziness allows (found by the random programs).
#[test]
fn errors_of_unneeded_ops_are_not_raised() {
    let text = "func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
  %i = arange {start = 3, end = 4, step = 1}
  %t = take %x, %i
  %o = ones_like %t
  return %o
}
";
    let module = kiln::parse_module("unneeded.kir", text, kiln::DefaultDType::F32).unwrap();
    let inputs = inputs_for(&module);
    assert!(interp::run(&module, &inputs).is_err());
    differ(&module, BackendKind::Cranelift).unwrap();
}

/// A composite's result that broadcasts (`view_as_real` of an expanded
/// complex tensor: stride 0 along the expanded dim, as PyTorch's view)
/// keeps those strides through its expansion (found by the random
/// programs: the result came back dense).
#[test]
fn expanded_results_of_composites_keep_their_strides() {
    let text = "func @main(%x: tensor<1x1x1xc64>) -> tensor<2x1x1x1x2xf32> {
  %e = expand %x {shape = [2, -1, -1, -1]}
  %r = view_as_real %e
  return %r
}
";
    let module = kiln::parse_module("expanded.kir", text, kiln::DefaultDType::F32).unwrap();
    differ(&module, BackendKind::Cranelift).unwrap();
    let got = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap()
        .run(&inputs_for(&module))
        .unwrap();
    assert_eq!(got[0].strides(), [0, 2, 2, 2, 1]);
}

/// The random programs reach attention (kept whole for this backend's
/// fused kernel) and the indexing ops often enough for the tests above to
/// cover them: counted over 400 recipes drawn as they draw them.
#[test]
fn random_programs_reach_attention_and_indexing() {
    use kiln::Op;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = recipe_strategy(DTypes::Computable, 3, 10);
    let mut runner = TestRunner::deterministic();
    let (mut attention, mut indexing, mut mha) = (0, 0, 0);
    for _ in 0..400 {
        let recipe = strategy.new_tree(&mut runner).unwrap().current();
        let module = recipe.build();
        let func = module.entry().unwrap();
        for i in &func.insts {
            match i.op {
                Op::ScaledDotProductAttention { .. } => {
                    let d = func.ty(i.result()).dtype;
                    attention += usize::from(d.is_floating_point() && !d.is_reduced_float());
                }
                Op::Gather { .. }
                | Op::Scatter { .. }
                | Op::ScatterAdd { .. }
                | Op::ScatterReduce { .. }
                | Op::IndexSelect { .. }
                | Op::Take
                | Op::Embedding { .. } => indexing += 1,
                Op::MultiHeadAttentionForward { .. } => mha += 1,
                _ => {}
            }
        }
    }
    assert!(
        attention >= 10,
        "only {attention} attention ops in 400 random programs"
    );
    assert!(
        indexing >= 20,
        "only {indexing} indexing ops in 400 random programs"
    );
    assert!(
        mha >= 3,
        "only {mha} multi_head_attention_forward ops in 400 random programs"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// cross_entropy over rows of f32 logits, which this backend runs as
    /// one native step: any row count and class count, each reduction,
    /// ignored targets and targets past the classes (|u|·spread·C, cast
    /// to int64), logits contiguous or read through a transpose.
    #[test]
    fn random_cross_entropy_matches_the_interpreter(
        n in 1i64..6,
        c in 1i64..80,
        reduction in prop::sample::select(vec!["mean", "sum", "none"]),
        ignore_index in prop::sample::select(vec![-100i64, 0, 2]),
        transposed in any::<bool>(),
        spread in 0.2f64..1.5,
    ) {
        let (x_ty, x) = if transposed {
            (format!("{c}x{n}"), "%xt")
        } else {
            (format!("{n}x{c}"), "%x")
        };
        let out = if reduction == "none" { format!("tensor<{n}xf32>") } else { "tensor<f32>".into() };
        let text = format!(
            "func @main(%x: tensor<{x_ty}xf32>, %u: tensor<{n}xf32>) -> {out} {{\n\
             \x20 %xt = transpose %x {{dim0 = 0, dim1 = 1}}\n\
             \x20 %a = abs %u\n\
             \x20 %m = mul %a, {scale:?}\n\
             \x20 %t = cast %m {{dtype = i64}}\n\
             \x20 %l = cross_entropy {x}, %t {{reduction = \"{reduction}\", ignore_index = {ignore_index}}}\n\
             \x20 return %l\n}}\n",
            scale = spread * c as f64,
        );
        let module = kiln::parse_module("cross_entropy", &text, kiln::DefaultDType::F32)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let func = module.entry().expect("an entry function");
        let loss = func.insts.last().expect("the loss");
        prop_assert!(kiln_runtime::cross_entropy::fused(func, loss), "not fused:\n{text}");
        let outcome = check_random(&module, BackendKind::Cranelift);
        prop_assert!(outcome.is_ok(), "{}\n{text}", outcome.unwrap_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Products of one f32 row by a matrix (a decode step's projections),
    /// which the host computes without gemm: the matrix's rows contiguous
    /// (GPT-2's Conv1D) or its columns (nn.Linear's transposed weight), the
    /// row as `[k]`, `[1, k]` or `[1, 1, k]`.
    #[test]
    fn random_row_products_match_the_interpreter(
        k in 16i64..400,
        n in 64i64..700,
        transposed in any::<bool>(),
        row_rank in 1usize..4,
    ) {
        let row_shape = match row_rank {
            1 => format!("{k}"),
            2 => format!("1x{k}"),
            _ => format!("1x1x{k}"),
        };
        let out_shape = match row_rank {
            1 => format!("{n}"),
            2 => format!("1x{n}"),
            _ => format!("1x1x{n}"),
        };
        let (w_shape, product) = if transposed {
            (format!("{n}x{k}"), "%wt = t %w\n  %y = matmul %x, %wt")
        } else {
            (format!("{k}x{n}"), "%y = matmul %x, %w")
        };
        let text = format!(
            "func @main(%x: tensor<{row_shape}xf32>, %w: tensor<{w_shape}xf32>) -> tensor<{out_shape}xf32> {{\n  {product}\n  return %y\n}}\n"
        );
        let module = kiln::parse_module("row_product", &text, kiln::DefaultDType::F32)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let outcome = check_random(&module, BackendKind::Cranelift);
        prop_assert!(outcome.is_ok(), "{}\n{text}", outcome.unwrap_err());
    }
}

/// Replays one program on both, printing inputs and results:
/// `KILN_REPLAY=prog.kir cargo test -p kiln-tests --test cranelift replay -- --ignored --nocapture`
#[test]
#[ignore = "a debugging aid, run by hand"]
fn replay() {
    let path = std::env::var("KILN_REPLAY").expect("KILN_REPLAY names a .kir file");
    let text = std::fs::read_to_string(&path).expect("the program file");
    // The failure message's `// default dtype f64` line, if kept.
    let default = if text.contains("// default dtype f64") {
        kiln::DefaultDType::F64
    } else {
        kiln::DefaultDType::F32
    };
    let module = kiln::parse_module(&path, &text, default).expect("the program parses");
    let inputs = inputs_for(&module);
    for (i, t) in inputs.iter().enumerate() {
        println!("input {i}: {t}");
    }
    println!(
        "interpreter: {:?}",
        interp::run(&module, &inputs).map(|r| r.iter().map(|t| t.to_string()).collect::<Vec<_>>())
    );
    let compiled = Compiler::new(BackendKind::Cranelift).compile(&module);
    println!(
        "cranelift: {:?}",
        compiled
            .and_then(|c| c.run(&inputs))
            .map(|r| r.iter().map(|t| t.to_string()).collect::<Vec<_>>())
    );
    println!(
        "{}",
        differ(&module, BackendKind::Cranelift)
            .err()
            .unwrap_or_default()
    );
}

/// What the CPU backend runs for each test program: its kernel plan, after
/// the constants it computed once when it compiled (if any).
#[test]
fn kernel_plan_snapshots() {
    for (name, path) in programs() {
        let module = load(&path);
        if !runnable(&module) {
            continue;
        }
        let compiled = Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let fuse: Vec<_> = compiled
            .listings()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .into_iter()
            .filter(|l| l.stage == "fuse")
            .collect();
        let text = match &fuse[..] {
            [plan] => plan.text.clone(),
            listings => listings
                .iter()
                .map(|l| format!("// {}\n{}", l.title, l.text))
                .collect(),
        };
        insta::with_settings!({
            snapshot_path => kiln_tests::tests_dir().join("../snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("fuse__{name}"), text);
        });
    }
}

/// An index out of range is PyTorch's IndexError on every backend: the
/// interpreted step checks every index before reading.
#[test]
fn indices_out_of_range_are_errors() {
    let text = "func @main(%w: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %i = arange {start = 3, end = 5, step = 1}
  %0 = index_select %w, %i {dim = 0}
  %1 = embedding %w, %i
  return %0, %1
}
";
    let module = kiln::parse_module("oob.kir", text, kiln::DefaultDType::F32).unwrap();
    let w = kiln_runtime::Tensor::from_vec((0..12).map(|i| i as f32).collect(), &[4, 3]).unwrap();
    let expected = interp::run(&module, std::slice::from_ref(&w)).unwrap_err();
    assert!(
        expected.message().starts_with("index out of range in self"),
        "{expected}"
    );
    let got = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap()
        .run(&[w])
        .unwrap_err();
    assert_eq!(got.message(), expected.message());
}

/// gather, the scatters, index_add, take, index and index_put with an
/// index out of range:
/// PyTorch's error naming the index, on the interpreter and on Cranelift
/// (which runs them inside its plan), never a read or write outside the
/// buffers.
#[test]
fn gather_and_scatter_indices_out_of_range_are_errors() {
    let cases = [
        (
            "gather %w, %i {dim = 1}",
            "index 13 is out of bounds for dimension 1 with size 3",
        ),
        (
            "scatter %w, %i, %s {dim = 1}",
            "index 13 is out of bounds for dimension 1 with size 3",
        ),
        (
            "scatter %w, %i, 1.5 {dim = 1}",
            "index 13 is out of bounds for dimension 1 with size 3",
        ),
        (
            "scatter_add %w, %i, %s {dim = 1}",
            "index 13 is out of bounds for dimension 1 with size 3",
        ),
        (
            "scatter_reduce %w, %i, %s {dim = 1, reduce = \"amax\"}",
            "index 13 is out of bounds for dimension 1 with size 3",
        ),
        (
            "take %w, %i",
            "out of range: tried to access index 13 on a tensor of 12 elements.",
        ),
        // Advanced indexing numbers the index tensors, not the input's dims.
        (
            "index %w, [none, %i]",
            "index 13 is out of bounds for dimension 0 with size 3",
        ),
        (
            "index_put %w, [none, %i], %s {accumulate = true}",
            "index 13 is out of bounds for dimension 0 with size 3",
        ),
        (
            "take_along_dim %w, %i {dim = 1}",
            "index 13 is out of bounds for dimension 1 with size 3",
        ),
        (
            "index_fill %w, %r, 2.0 {dim = 1}",
            "index 13 is out of bounds for dimension 1 with size 3",
        ),
    ];
    for (inst, message) in cases {
        // The index is 13 everywhere (arange(13, 14) expanded to [1, 2]):
        // out of range for dim 1 (size 3) and for the 12 elements.
        let text = format!(
            "func @main(%w: tensor<4x3xf32>, %s: tensor<1x2xf32>) -> tensor<4x3xf32> {{
  %r = arange {{start = 13, end = 14, step = 1}}
  %i = expand %r {{shape = [1, 2]}}
  %0 = {inst}
  %1 = sum %0
  %2 = add %w, %1
  return %2
}}
"
        );
        let module = kiln::parse_module("oob.kir", &text, kiln::DefaultDType::F32).unwrap();
        let w =
            kiln_runtime::Tensor::from_vec((0..12).map(|i| i as f32).collect(), &[4, 3]).unwrap();
        let s = kiln_runtime::Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
        let inputs = [w, s];
        let expected = match interp::run(&module, &inputs) {
            Ok(_) => panic!("{inst}: no error on the interpreter"),
            Err(e) => e,
        };
        assert_eq!(expected.message(), message, "{inst}");
        let got = Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .unwrap()
            .run(&inputs)
            .err()
            .unwrap_or_else(|| panic!("{inst}: no error on Cranelift"));
        assert_eq!(got.message(), message, "{inst}");
    }
}

/// Issue 16's interpreted ops given out-of-range positions or too little
/// data (a sorter position past the row, fewer source elements than the
/// mask selects, an unpooling position past the output, an embedding
/// bag's index past the weight or offsets not starting at 0): PyTorch's
/// run-time error on the interpreter and on Cranelift, checked before
/// anything is read or written.
#[test]
fn issue16_run_time_errors() {
    let cases = [
        (
            "func @main(%w: tensor<4x3xf32>, %s: tensor<1x2xf32>) -> tensor<4x3xi64> {
  %r = arange {start = 1, end = 4, step = 1}
  %0 = searchsorted %r, %w, %r
  return %0
}
",
            "torch.searchsorted(): sorter index out of range",
        ),
        (
            "func @main(%w: tensor<4x3xf32>, %s: tensor<1x2xf32>) -> tensor<4x3xf32> {
  %m = gt %w, 1.5
  %0 = masked_scatter %w, %m, %s
  return %0
}
",
            "Number of elements of source < number of ones in mask",
        ),
        (
            "func @main(%w: tensor<4x3xf32>, %s: tensor<1x2xf32>) -> tensor<4x5xf32> {
  %r = arange {start = 2, end = 14, step = 1}
  %i = reshape %r {shape = [4, 3]}
  %0 = max_unpool1d %w, %i {output_size = [5]}
  return %0
}
",
            // PyTorch's threads race to report one of the bad positions
            // (7 here on its CPU); Kiln names the first, as max_unpool2d.
            "Found an invalid max index: 5 (output volumes are of size 5x1)",
        ),
        (
            "func @main(%w: tensor<4x3xf32>, %s: tensor<1x2xf32>) -> tensor<2x3xf32> {
  %i = arange {start = 1, end = 6, step = 1}
  %o = arange {start = 0, end = 4, step = 2}
  %0, %1, %2, %3 = embedding_bag %w, %i, %o, none
  return %0
}
",
            "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 4",
        ),
        (
            "func @main(%w: tensor<4x3xf32>, %s: tensor<1x2xf32>) -> tensor<2x3xf32> {
  %i = arange {start = 0, end = 3, step = 1}
  %o = arange {start = 1, end = 3, step = 1}
  %0, %1, %2, %3 = embedding_bag %w, %i, %o, none {mode = 1}
  return %0
}
",
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got 1",
        ),
    ];
    for (text, message) in cases {
        let module = kiln::parse_module("oob.kir", text, kiln::DefaultDType::F32).unwrap();
        let w =
            kiln_runtime::Tensor::from_vec((0..12).map(|i| i as f32).collect(), &[4, 3]).unwrap();
        let s = kiln_runtime::Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2]).unwrap();
        let inputs = [w, s];
        let expected = match interp::run(&module, &inputs) {
            Ok(_) => panic!("{text}: no error on the interpreter"),
            Err(e) => e,
        };
        assert_eq!(expected.message(), message, "{text}");
        let got = Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .unwrap()
            .run(&inputs)
            .err()
            .unwrap_or_else(|| panic!("{text}: no error on Cranelift"));
        assert_eq!(got.message(), message, "{text}");
    }
}

/// The kernel plans of the benchmark's model blocks, one line per step:
/// how many kernels each block takes, pinned (a reader of the block would
/// expect GPT-2 to take one kernel per layer norm and per bias-activation
/// pair, one for the masked softmax and one for the head merge).
#[test]
fn model_block_plans() {
    let benches = kiln_tests::tests_dir().join("../benches/programs");
    for name in ["mlp", "gpt2_block", "llama_block"] {
        let mut module = load(&benches.join(format!("{name}.kir")));
        Compiler::new(BackendKind::Cranelift)
            .pipeline()
            .run(&mut module)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let plan = kiln_cranelift::Cranelift::default()
            .plan(&module)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let steps: Vec<String> = plan
            .steps
            .iter()
            .map(kiln_runtime::execute::describe_step)
            .collect();
        insta::with_settings!({
            snapshot_path => kiln_tests::tests_dir().join("../snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("block_steps__{name}"), steps.join("\n"));
        });
    }
}

/// A residual stream is kept in memory: no kernel of a six-layer stream
/// reads more than a few buffers (left inlined, the last norm would
/// re-add all six layers' outputs, 8 buffers; GPT-2 small's read 28).
#[test]
fn residual_streams_are_kept_in_memory() {
    let mut module = load(&kiln_tests::tests_dir().join("programs/residual_stream.kir"));
    Compiler::new(BackendKind::Cranelift)
        .pipeline()
        .run(&mut module)
        .unwrap();
    let plan = kiln_cranelift::Cranelift::default().plan(&module).unwrap();
    let widest = plan.kernels().map(|k| k.args.len()).max().unwrap();
    assert!(
        widest <= 5,
        "a kernel reads {} buffers:\n{plan}",
        widest - 1
    );
}

/// Big reductions with few outputs are split into a parallel partial pass
/// and a final pass; prologue and epilogue must survive the split.
#[test]
fn split_reductions_match_the_interpreter() {
    let text = "func @main(%x: tensor<2x524288xf32>, %b: tensor<2x1xf32>, %i: tensor<524288xi32>) -> (tensor<2x1xf32>, tensor<2xf32>, tensor<i64>, tensor<i32>) {
  %e = exp %x
  %m = mean %e {dims = [1], keepdim = true}
  %r = add %m, %b
  %a = amax %x {dims = [1]}
  %s = sum %i
  %n = amin %i
  return %r, %a, %s, %n
}
";
    let module = kiln::parse_module("split.kir", text, kiln::DefaultDType::F32).unwrap();
    let compiled = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap();
    let plan = compiled.kernel_plan().unwrap().unwrap();
    assert!(plan.contains("space [2, 64] reducing [8192]"), "{plan}");
    differ(&module, BackendKind::Cranelift).unwrap();
}

/// Pointwise kernels over transposed operands run in tiles; partial tiles
/// at the edges, batched transposes and mixed dtypes included.
#[test]
fn tiled_transposes_match_the_interpreter() {
    let text = "func @main(%x: tensor<70x100xf32>, %y: tensor<100x70xf16>, %z: tensor<3x40x50xi32>) -> (tensor<100x70xf32>, tensor<3x50x40xi64>) {
  %t = t %x
  %s = add %t, %y
  %p = permute %z {dims = [0, 2, 1]}
  %q = mul %p, 3
  %r = cast %q {dtype = i64}
  return %s, %r
}
";
    let module = kiln::parse_module("tiles.kir", text, kiln::DefaultDType::F32).unwrap();
    let compiled = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap();
    let clif: Vec<String> = compiled
        .listings()
        .unwrap()
        .into_iter()
        .filter(|l| l.stage == "codegen")
        .map(|l| l.text)
        .collect();
    assert_eq!(clif.len(), 2);
    differ(&module, BackendKind::Cranelift).unwrap();
}

/// A key/value cache that `index_put` updates and the program returns is
/// written in place when the caller gives it up (`run_donated`: the result
/// is the input's storage, and nothing is copied), and into a new buffer
/// when the caller keeps a handle to it, which then still holds the old
/// values. A cache another op also reads is never written in place.
#[test]
fn a_given_up_cache_is_updated_in_place() {
    use kiln_runtime::Tensor;
    let program = |text: &str| {
        let module = kiln::parse_module("cache.kir", text, kiln::DefaultDType::F32).unwrap();
        Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .unwrap()
    };
    let updated = program(
        "func @main(%c: tensor<2x8x4xf32>, %p: tensor<1xi64>, %v: tensor<2x1x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x4xf32>) {
  %u = index_put %c, [none, %p], %v
  %s = sum %u {dims = [1]}
  return %u, %s
}",
    );
    let read_twice = program(
        "func @main(%c: tensor<2x8x4xf32>, %p: tensor<1xi64>, %v: tensor<2x1x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x4xf32>) {
  %u = index_put %c, [none, %p], %v
  %s = sum %c {dims = [1]}
  return %u, %s
}",
    );
    let cache = || Tensor::from_vec((0..64).map(|i| i as f32).collect(), &[2, 8, 4]).unwrap();
    let position = Tensor::from_vec(vec![-3i64], &[1]).unwrap();
    let values = Tensor::from_vec(vec![-1.0f32; 8], &[2, 1, 4]).unwrap();
    let inputs = |c: Tensor| vec![c, position.clone(), values.clone()];
    for p in [&updated, &read_twice] {
        let expected = p.run(&inputs(cache())).unwrap();
        // Given up: the result is the cache's own memory.
        let given = cache();
        let at = given.storage().as_ptr();
        let got = p.run_donated(inputs(given)).unwrap();
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g.to_vec::<f32>().unwrap(), e.to_vec::<f32>().unwrap());
        }
        assert_eq!(got[0].get(&[1, 5, 2]).f64(), -1.0);
        assert_eq!(got[0].storage().as_ptr() == at, std::ptr::eq(p, &updated));
        // Kept: the caller's cache is unchanged.
        let kept = cache();
        let got = p.run_donated(inputs(kept.clone())).unwrap();
        assert_ne!(got[0].storage().as_ptr(), kept.storage().as_ptr());
        assert_eq!(
            kept.to_vec::<f32>().unwrap(),
            cache().to_vec::<f32>().unwrap()
        );
        assert_eq!(
            got[0].to_vec::<f32>().unwrap(),
            expected[0].to_vec::<f32>().unwrap()
        );
    }
    let plan = updated.kernel_plan().unwrap().unwrap();
    assert!(plan.contains("in input 0's storage if donated"), "{plan}");
}

/// Tables that depend on no input (rotary embeddings' cos and sin) are
/// computed once, when the program compiles: no kernel computes them on a
/// run, `kiln dump` shows them, the program still takes its own inputs
/// (and says so when given others), and runs give the interpreter's values.
#[test]
fn constant_tables_are_computed_once() {
    use kiln_runtime::Tensor;
    let module = load(&kiln_tests::tests_dir().join("programs/rotary_tables.kir"));
    let compiled = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap();
    let listings = compiled.listings().unwrap();
    let constants = &listings[0];
    assert!(
        constants.title.starts_with("constants of @main"),
        "{}",
        constants.title
    );
    assert!(
        constants.text.contains("cos") && constants.text.contains("sin"),
        "{}",
        constants.text
    );
    let plan = compiled.kernel_plan().unwrap().unwrap();
    assert!(!plan.contains("cos") && !plan.contains("pow"), "{plan}");
    let q = Tensor::from_vec(
        (0..96).map(|i| (i as f32 * 0.37).sin()).collect(),
        &[2, 6, 8],
    )
    .unwrap();
    let expected = interp::run(&module, std::slice::from_ref(&q)).unwrap();
    for _ in 0..2 {
        let got = compiled.run(std::slice::from_ref(&q)).unwrap();
        assert_eq!(
            got[0].to_vec::<f32>().unwrap(),
            expected[0].to_vec::<f32>().unwrap()
        );
        let given = compiled.run_donated(vec![q.clone()]).unwrap();
        assert_eq!(
            given[0].to_vec::<f32>().unwrap(),
            expected[0].to_vec::<f32>().unwrap()
        );
    }
    let err = compiled.run(&[q.clone(), q]).unwrap_err();
    assert_eq!(err.to_string(), "@main takes 1 inputs, 2 were given");

    // The entry function is @main wherever it is in the module.
    let text = "func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neg %x
  return %0
}

func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %p = arange {end = 4, dtype = f32}
  %c = cos %p
  %y = add %x, %c
  return %y
}";
    let module = kiln::parse_module("two.kir", text, kiln::DefaultDType::F32).unwrap();
    let x = Tensor::from_vec(vec![0.5f32, -1.0, 2.0, 0.0], &[4]).unwrap();
    let compiled = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap();
    assert!(
        compiled.listings().unwrap()[0]
            .title
            .starts_with("constants of @main")
    );
    assert_eq!(
        compiled.run(std::slice::from_ref(&x)).unwrap()[0]
            .to_vec::<f32>()
            .unwrap(),
        interp::run(&module, &[x]).unwrap()[0]
            .to_vec::<f32>()
            .unwrap()
    );
}

/// erf computes its |x| ≥ 1 branch only for vectors with a lane there (a
/// branch around it): over a sweep where 4-lane vectors are all below 1,
/// all above, and mixed, with NaN, ±inf and ±0, the compiled kernel gives
/// the interpreter's bits (kiln-math's algorithm) in every lane, as does
/// the exact GELU built on it.
#[test]
fn erf_with_its_rare_branch_skipped_keeps_every_bit() {
    use kiln_runtime::Tensor;
    let mut xs: Vec<f32> = (0..8192)
        .map(|i| {
            let t = i as f32 / 8192.0;
            match (i / 4) % 3 {
                0 => t * 1.9 - 0.95,         // a vector below 1
                1 => (t * 12.0 - 6.0) * 1.3, // mostly at or above 1
                _ => t * 7.0 - 3.5,          // mixed
            }
        })
        .collect();
    xs.extend([
        f32::NAN,
        0.5,
        -0.0,
        0.0,
        f32::INFINITY,
        0.25,
        -f32::INFINITY,
        1.0,
        0.999_999_94,
        -1.0,
    ]);
    // One long row (where the CPU has AVX-512F, its functions go to
    // 16-lane calls, all but the last few elements), and rows of 24 (too
    // short for the calls: the inline 4-lane code and its branch).
    while xs.len() % 24 != 0 {
        xs.push(0.5);
    }
    let n = xs.len();
    for shape in [format!("{n}"), format!("{}x24", n / 24)] {
        let text = format!(
            "func @main(%x: tensor<{shape}xf32>) -> (tensor<{shape}xf32>, tensor<{shape}xf32>) {{
  %e = erf %x
  %g = gelu %x
  return %e, %g
}}"
        );
        let module = kiln::parse_module("erf.kir", &text, kiln::DefaultDType::F32).unwrap();
        let dims: Vec<i64> = shape.split('x').map(|d| d.parse().unwrap()).collect();
        let x = Tensor::from_vec(xs.clone(), &dims).unwrap();
        let (got, expected) = compiled_and_reference(&module, x);
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(kiln_tests::f32_bits(g), kiln_tests::f32_bits(e), "{shape}");
        }
    }
}

/// kiln-math's functions in fused kernels whose rows run eight vector
/// copies, whose lanes go to one AVX-512 call where the CPU has AVX-512F
/// (`vector_loop`): the interpreter's bits for every function, in f32 and
/// through f16 and bf16, alone and chained (a function of a function, a
/// value used before and after the call), rows of 70 (two 32-lane
/// iterations, a 4-lane one, a scalar tail).
#[test]
fn functions_in_sixteen_lane_calls_keep_every_bit() {
    use kiln_runtime::Tensor;
    let (rows, cols) = (3usize, 70usize);
    let mut xs: Vec<f32> = (0..rows * cols)
        .map(|i| {
            let t = i as f32 / (rows * cols) as f32;
            match i % 4 {
                0 => t * 1.9 - 0.95,
                1 => (t - 0.5) * 40.0,
                2 => f32::from_bits((i as u32).wrapping_mul(2_654_435_761)),
                _ => (t - 0.5) * 200.0,
            }
        })
        .collect();
    for (i, v) in [
        f32::NAN,
        -0.0,
        f32::INFINITY,
        -f32::INFINITY,
        1e-40,
        88.8,
        -104.5,
    ]
    .into_iter()
    .enumerate()
    {
        xs[17 * i + 3] = v;
    }
    let functions = [
        "exp", "log", "tanh", "erf", "erfc", "sin", "cos", "atan", "asin", "acos", "expm1", "log1p",
    ];
    // The same values in rows of 21, too short for the calls: the inline
    // 4-lane code, which the calls must match bit for bit, NaNs included.
    let shapes = [(rows, cols), (rows * cols / 21, 21)];
    for dtype in ["f32", "f16", "bf16"] {
        let mut by_shape = Vec::new();
        for (r, c) in shapes {
            let (module, results) = function_program(&functions, dtype, r, c);
            let x = Tensor::from_vec(xs.clone(), &[r as i64, c as i64]).unwrap();
            let (got, expected) = compiled_and_reference(&module, x);
            for ((g, e), name) in got.iter().zip(&expected).zip(&results) {
                // Every bit, but a NaN's sign (unspecified for sin(±inf)
                // by IEEE and PyTorch; the interpreter's f16/bf16
                // roundings keep it apart from the compiled code's).
                let bits = |t: &Tensor| -> Vec<u32> {
                    kiln_tests::f32_bits(t)
                        .into_iter()
                        .map(|b| {
                            if f32::from_bits(b).is_nan() {
                                0x7fc0_0000
                            } else {
                                b
                            }
                        })
                        .collect()
                };
                assert_eq!(bits(g), bits(e), "{name} in {dtype}, rows of {c}");
            }
            by_shape.push((got, results));
        }
        let ((called, names), (inline, _)) = (&by_shape[0], &by_shape[1]);
        for ((a, b), name) in called.iter().zip(inline).zip(names) {
            assert_eq!(
                kiln_tests::f32_bits(a),
                kiln_tests::f32_bits(b),
                "{name} in {dtype}: called and inline"
            );
        }
    }
}

/// Max pools of stride 2 without positions read rows split into even and
/// odd columns with −inf for the padding (`runtime/src/spatial.rs`,
/// `Halves`): the interpreter's bits where windows hold ±0 ties (the
/// first wins), NaNs of both signs (the last wins), −inf and padding, over
/// odd and even widths and a dilated ceil-mode window.
#[test]
fn max_pools_by_halves_keep_pytorchs_order() {
    use kiln_runtime::Tensor;
    let special = [
        0.0,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::NEG_INFINITY,
        1.5,
        -2.0,
        -0.0,
    ];
    let xs: Vec<f32> = (0..126)
        .map(|i| special[(i * 5 + i / 7) % special.len()])
        .collect();
    for (input, attrs, output) in [
        (
            "1x2x7x9",
            "kernel_size = 3, stride = 2, padding = 1",
            "1x2x4x5",
        ),
        (
            "1x2x7x9",
            "kernel_size = [2, 3], stride = 2, dilation = [1, 2], ceil_mode = true",
            "1x2x4x3",
        ),
        (
            "1x1x9x14",
            "kernel_size = 3, stride = 2, padding = 1",
            "1x1x5x7",
        ),
    ] {
        let text = format!(
            "func @main(%x: tensor<{input}xf32>) -> tensor<{output}xf32> {{\n  %y = max_pool2d %x {{{attrs}}}\n  return %y\n}}"
        );
        let module = kiln::parse_module("pool.kir", &text, kiln::DefaultDType::F32).unwrap();
        let dims: Vec<i64> = input.split('x').map(|d| d.parse().unwrap()).collect();
        let x = Tensor::from_vec(xs.clone(), &dims).unwrap();
        let (got, expected) = compiled_and_reference(&module, x);
        assert_eq!(
            kiln_tests::f32_bits(&got[0]),
            kiln_tests::f32_bits(&expected[0]),
            "{input} {attrs}"
        );
    }
}

/// A one-input module's results on the Cranelift backend and on the
/// reference interpreter.
fn compiled_and_reference(
    module: &kiln::Module,
    x: kiln_runtime::Tensor,
) -> (Vec<kiln_runtime::Tensor>, Vec<kiln_runtime::Tensor>) {
    let got = Compiler::new(BackendKind::Cranelift)
        .compile(module)
        .unwrap()
        .run(std::slice::from_ref(&x))
        .unwrap();
    let expected = interp::run(module, &[x]).unwrap();
    (got, expected)
}

/// Every function of `functions` on an `[r, c]` f32 input cast to
/// `dtype`, a gelu_new-shaped chain and a function of a function, each
/// result cast back to f32; and the results' names.
fn function_program(
    functions: &[&str],
    dtype: &str,
    r: usize,
    c: usize,
) -> (kiln::Module, Vec<String>) {
    let ty = format!("tensor<{r}x{c}xf32>");
    let mut body = format!("  %x = cast %x0 {{dtype = {dtype}}}\n");
    let mut results = Vec::new();
    for f in functions {
        body.push_str(&format!("  %{f} = {f} %x\n"));
        results.push(f.to_string());
    }
    // gelu_new's shape: tanh of a chain, its input used again after.
    body.push_str(
        "  %c = mul %x, 0.7978845608028654\n  %t = tanh %c\n  %u = add %t, 1.0\n  %h = mul %x, 0.5\n  %g = mul %h, %u\n",
    );
    results.push("g".into());
    // A function of a function.
    body.push_str("  %s = sin %x\n  %e = exp %s\n");
    results.push("e".into());
    let mut returned = Vec::new();
    for name in &results {
        body.push_str(&format!("  %{name}32 = cast %{name} {{dtype = f32}}\n"));
        returned.push(format!("%{name}32"));
    }
    let types = vec![ty.clone(); results.len()].join(", ");
    let text = format!(
        "func @main(%x0: {ty}) -> ({types}) {{\n{body}  return {}\n}}",
        returned.join(", ")
    );
    let module = kiln::parse_module("sixteen.kir", &text, kiln::DefaultDType::F32).unwrap();
    (module, results)
}

/// Scans as PyTorch's CPU kernels fold them, hand-checked against PyTorch
/// 2.15 on both the interpreter and the CPU backend's native steps:
/// cumsum and logcumsumexp start from their identity (0, −inf), so a
/// first −0.0 gives +0.0 (cumprod, from 1, keeps it); a NaN along a
/// logcumsumexp line makes the rest NaN (C++'s min/max keep it).
#[test]
fn scans_fold_from_their_identity_as_pytorch() {
    use kiln_runtime::Tensor;
    let text = "func @main(%z: tensor<3xf32>, %m: tensor<3xf32>, %m64: tensor<3xf64>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf64>) {
  %a = cumsum %z {dim = 0}
  %b = logcumsumexp %z {dim = 0}
  %p = cumprod %z {dim = 0}
  %c = logcumsumexp %m {dim = 0}
  %d = logcumsumexp %m64 {dim = 0}
  return %a, %b, %p, %c, %d
}";
    let module = kiln::parse_module("scans.kir", text, kiln::DefaultDType::F32).unwrap();
    let inputs = vec![
        Tensor::from_vec(vec![-0.0f32, -0.0, 0.0], &[3]).unwrap(),
        Tensor::from_vec(vec![1.0f32, f32::NAN, 2.0], &[3]).unwrap(),
        Tensor::from_vec(vec![1.0f64, f64::NAN, 2.0], &[3]).unwrap(),
    ];
    let bits32 = kiln_tests::f32_bits;
    let f32s = |v: &[f32]| -> Vec<u32> { v.iter().map(|v| v.to_bits()).collect() };
    let ln2 = std::f32::consts::LN_2;
    let ln3 = 3.0f64.ln() as f32;
    let interp = kiln_runtime::interp::run(&module, &inputs).unwrap();
    let compiled = Compiler::new(BackendKind::Cranelift)
        .compile(&module)
        .unwrap()
        .run(&inputs)
        .unwrap();
    for got in [&interp, &compiled] {
        assert_eq!(bits32(&got[0]), f32s(&[0.0, 0.0, 0.0]));
        assert_eq!(bits32(&got[1]), f32s(&[0.0, ln2, ln3]));
        assert_eq!(bits32(&got[2]), f32s(&[-0.0, 0.0, 0.0]));
        let c = got[3].to_vec::<f32>().unwrap();
        assert!(c[0] == 1.0 && c[1].is_nan() && c[2].is_nan(), "{c:?}");
        let d = got[4].to_vec::<f64>().unwrap();
        assert!(d[0] == 1.0 && d[1].is_nan() && d[2].is_nan(), "{d:?}");
    }
}

/// Kernels with the same structure in one program compile once (a Llama
/// block's rotary products of q and of k): two `tanh` kernels on either
/// side of a product take the machine code of one, and still compute
/// their own operands.
#[test]
fn identical_kernels_of_a_program_compile_once() {
    let twice = "func @main(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = tanh %x
  %m = matmul %a, %y
  %b = tanh %m
  return %b
}";
    let once = "func @main(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = tanh %x
  %m = matmul %a, %y
  return %m
}";
    let compile = |text: &str| {
        let module = kiln::parse_module("k.kir", text, kiln::DefaultDType::F32).unwrap();
        let compiled = Compiler::new(BackendKind::Cranelift)
            .cache(false)
            .compile(&module)
            .unwrap();
        (module, compiled)
    };
    let (module, compiled) = compile(twice);
    let (_, one) = compile(once);
    assert_eq!(compiled.code_bytes(), one.code_bytes());
    let x: Vec<f32> = (0..64).map(|i| (i as f32 - 32.0) * 0.1).collect();
    let y: Vec<f32> = (0..64).map(|i| (i % 7) as f32 * 0.3 - 1.0).collect();
    let inputs = vec![
        kiln_runtime::Tensor::from_vec(x, &[8, 8]).unwrap(),
        kiln_runtime::Tensor::from_vec(y, &[8, 8]).unwrap(),
    ];
    let got = compiled.run(&inputs).unwrap();
    let want = interp::run(&module, &inputs).unwrap();
    // (The product sums in another order than the interpreter's.)
    let (got, want) = (
        got[0].to_vec::<f32>().unwrap(),
        want[0].to_vec::<f32>().unwrap(),
    );
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-6, "{g} against {w}");
    }
}

/// A convolution's pointwise tail (inference batch norm, a residual add,
/// ReLU) is applied to its output blocks as they are written
/// (`kiln_passes::plan::tail`), with the bits of the kernel it replaces:
/// each program against the same one that also returns the convolution's
/// result (which then has no tail, and runs the kernel), on the direct
/// convolution (grouped, strided, channels_last) and on Winograd's sizes.
/// Tails that are not one keep their kernel: the residual added before the
/// shift, f64; a residual laid out otherwise is a tail the runtime leaves
/// to its kernel.
#[test]
fn convolution_tails_have_their_kernels_bits() {
    let norm = "%s = mul %y, %a\n  %t = add %s, %b";
    let cases: [(&str, &str, &str, bool); 8] = [
        ("2x16x9x9", "8x16x3x3", "stride = [2, 2], padding = 1", true),
        ("1x8x10x10", "8x4x3x3", "padding = 1, groups = 2", true),
        ("2x64x16x16", "32x64x3x3", "padding = 1", true),
        ("1x24x12x12", "40x24x1x1", "", true),
        (
            "1x3x20x20",
            "16x3x7x7",
            "stride = [2, 2], padding = 3",
            true,
        ),
        ("1x32x16x16", "32x32x3x3", "padding = 1", true),
        ("1x32x16x16", "32x32x3x3", "padding = 1", false),
        ("2x16x9x9", "8x16x3x3", "stride = [2, 2], padding = 1", true),
    ];
    for (i, (x, w, attrs, tail_expected)) in cases.into_iter().enumerate() {
        let out_channels = w.split('x').next().unwrap();
        let layout = if i == 5 { ", channels_last" } else { "" };
        // The last two: the residual before the shift (no tail), and a
        // residual in the other layout (a tail the kernels leave).
        let (body, residual_layout) = match i {
            6 => (
                "%s = mul %y, %a\n  %r1 = add %s, %r\n  %t = add %r1, %b".to_string(),
                "",
            ),
            7 => (format!("{norm}\n  %r1 = add %t, %r"), ", channels_last"),
            _ => (format!("{norm}\n  %r1 = add %t, %r"), layout),
        };
        let body = if i == 6 {
            format!("{body}\n  %o = relu %t")
        } else {
            format!("{body}\n  %o = relu %r1")
        };
        let (n, h) = {
            let d: Vec<i64> = x.split('x').map(|v| v.parse().unwrap()).collect();
            let k: Vec<i64> = w.split('x').map(|v| v.parse().unwrap()).collect();
            let (stride, pad) = if attrs.contains("stride") {
                (2, if k[2] == 7 { 3 } else { 1 })
            } else {
                (1, if attrs.contains("padding = 1") { 1 } else { 0 })
            };
            (d[0], (d[2] + 2 * pad - k[2]) / stride + 1)
        };
        let y = format!("{n}x{out_channels}x{h}x{h}");
        let program = |also_y: bool| {
            let (results, returned) = if also_y {
                (
                    format!("tensor<{y}xf32{layout}>, tensor<{y}xf32{layout}>"),
                    "%o, %y",
                )
            } else {
                (format!("tensor<{y}xf32{layout}>"), "%o")
            };
            let attrs = if attrs.is_empty() {
                String::new()
            } else {
                format!(" {{{attrs}}}")
            };
            format!(
                "func @main(%x: tensor<{x}xf32{layout}>, %w: tensor<{w}xf32>, %a: tensor<{out_channels}x1x1xf32>, %b: tensor<{out_channels}x1x1xf32>, %r: tensor<{y}xf32{residual_layout}>) -> ({results}) {{\n  %y = conv2d %x, %w{attrs}\n  {body}\n  return {returned}\n}}\n"
            )
        };
        let run = |text: &str| {
            let module = kiln::parse_module("tail.kir", text, kiln::DefaultDType::F32).unwrap();
            let compiled = Compiler::new(BackendKind::Cranelift)
                .compile(&module)
                .unwrap_or_else(|e| panic!("case {i}: {e}\n{text}"));
            let plan = compiled.kernel_plan().unwrap().unwrap();
            let results = compiled.run(&inputs_for(&module)).unwrap();
            (plan, results[0].to_vec::<f32>().unwrap())
        };
        let (plan, with_tail) = run(&program(false));
        let (plain_plan, without) = run(&program(true));
        assert_eq!(
            plan.contains("tail (the next kernel)"),
            tail_expected,
            "case {i}:\n{plan}"
        );
        assert!(
            !plain_plan.contains("tail (the next kernel)"),
            "case {i}:\n{plain_plan}"
        );
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&with_tail), bits(&without), "case {i}:\n{plan}");
        assert!(
            with_tail.iter().any(|v| *v > 0.0) && with_tail.contains(&0.0),
            "case {i}"
        );
    }
    // Batch norm as the module computes it (its scale and shift made per
    // channel in a kernel of their own, moved before the convolution with
    // the kernel that computes rsqrt(var + eps)), twice, the second with
    // the block's input as its residual: ResNet's basic block, against
    // the same block returning one convolution's result or the other.
    let run_block = |returned: &str| {
        let (module, inputs) = kiln_tests::basic_block(16, returned);
        let compiled = Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .unwrap();
        let plan = compiled.kernel_plan().unwrap().unwrap();
        let results = compiled.run(&inputs).unwrap();
        (plan, results[0].to_vec::<f32>().unwrap())
    };
    let (plan, fused) = run_block("%x");
    assert_eq!(plan.matches("tail (the next kernel)").count(), 2, "{plan}");
    let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    for returned in ["%c1", "%c2"] {
        let (plain_plan, plain) = run_block(returned);
        let tails = plain_plan.matches("tail (the next kernel)").count();
        assert_eq!(tails, 1, "{plain_plan}");
        assert_eq!(bits(&fused), bits(&plain), "{plan}");
    }
    // No tail: a result of one position per channel, `y · y` (its loads
    // of y are not per-channel values); f64 (the kernels apply tails in
    // f32 only).
    for text in [
        "func @main(%x: tensor<1x8x3x3xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x1x1xf32> {\n  %y = conv2d %x, %w\n  %o = mul %y, %y\n  return %o\n}\n",
        "func @main(%x: tensor<1x8x6x6xf64>, %w: tensor<8x8x3x3xf64>) -> tensor<1x8x4x4xf64> {\n  %y = conv2d %x, %w\n  %o = relu %y\n  return %o\n}\n",
    ] {
        let module = kiln::parse_module("tail.kir", text, kiln::DefaultDType::F32).unwrap();
        let compiled = Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .unwrap();
        let plan = compiled.kernel_plan().unwrap().unwrap();
        assert!(!plan.contains("tail (the next kernel)"), "{plan}");
    }
}
