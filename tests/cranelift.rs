//! The Cranelift backend against the reference interpreter: every program
//! of `tests/programs/`.

use kiln::{BackendKind, Compiler, DType, Module, Op};
use kiln_passes::Pass;
use kiln_passes::dce::DcePass;
use kiln_runtime::compare::{Tolerance, check_close, largest_magnitude};
use kiln_runtime::interp;
use kiln_tests::programs::{DTypes, recipe_strategy, sized_recipe_strategy};
use kiln_tests::{inputs_for, load, programs, runnable};
use proptest::prelude::*;

/// Whether a program sums (its results may differ in summation order).
fn sums(module: &Module) -> bool {
    module.funcs.iter().flat_map(|f| &f.insts).any(|i| {
        matches!(
            i.op,
            Op::Reduce { .. } | Op::Matmul | Op::Softmax { .. } | Op::LayerNorm { .. }
        )
    })
}

#[test]
fn every_program_matches_the_interpreter() {
    let mut failures = Vec::new();
    for (name, path) in programs() {
        let module = load(&path);
        if !runnable(&module) {
            continue;
        }
        let inputs = inputs_for(&module);
        let expected = interp::run(&module, &inputs);
        let got = Compiler::new(BackendKind::Cranelift)
            .compile(&module)
            .and_then(|c| c.run(&inputs));
        match (expected, got) {
            (Ok(e), Ok(g)) => {
                for (i, (x, y)) in g.iter().zip(&e).enumerate() {
                    let tol = if sums(&module) {
                        Tolerance::for_sums(y.dtype(), largest_magnitude(y))
                    } else {
                        Tolerance::ulps(2)
                    };
                    if let Err(err) = check_close(x, y, tol) {
                        failures.push(format!("{name} result {i}: {err}"));
                    }
                }
            }
            (Err(e), Err(g)) if e.message() == g.message() => {}
            (e, g) => failures.push(format!("{name}: interpreter {e:?}, cranelift {g:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The magnitude rounding errors of sums scale with: summation order
/// changes a sum by a few units of the size of its terms, not of its
/// result (which cancellation can make small). Per op: a sum of N terms of
/// magnitude m, N·m; a matmul over K, K·m²; layer_norm divides a centered
/// row by up to 1/sqrt(eps).
fn sum_scale(module: &Module, m: f64) -> f64 {
    let func = module.entry().unwrap();
    let mut scale: f64 = 0.0;
    for inst in &func.insts {
        let operands: Vec<kiln::ValueId> = inst.value_operands().collect();
        let numel = |v: kiln::ValueId| func.ty(v).numel().max(1) as f64;
        let per_result = |v: kiln::ValueId| numel(v) / numel(inst.result).max(1.0);
        scale = scale.max(match &inst.op {
            Op::Reduce { .. } | Op::Softmax { .. } => per_result(operands[0]) * m,
            Op::Matmul => {
                let shape = &func.ty(operands[0]).shape;
                shape.last().copied().unwrap_or(1).max(1) as f64 * m * m
            }
            Op::LayerNorm { eps, .. } => m / eps.sqrt(),
            _ => 0.0,
        });
    }
    scale
}

/// Which results may legitimately differ by more than rounding: those a
/// discontinuous op (a comparison, floor, a cast to an integer, ...) takes
/// from a float sum, whose last bits depend on summation order. They are
/// compared by type only.
fn unstable_results(module: &Module) -> Vec<bool> {
    use kiln::{BinaryOp, UnaryOp};
    let func = module.entry().unwrap();
    let mut approx = vec![false; func.values.len()];
    let mut unstable = vec![false; func.values.len()];
    for inst in &func.insts {
        let float = |v: kiln::ValueId| {
            let d = func.ty(v).dtype;
            d.is_floating_point() || d.is_complex()
        };
        let operands: Vec<kiln::ValueId> = inst.value_operands().collect();
        let any_approx = operands.iter().any(|v| approx[v.index()]);
        let sums = match &inst.op {
            Op::Reduce { op, .. } => {
                !matches!(op, kiln::ReduceOp::Amax | kiln::ReduceOp::Amin) && float(operands[0])
            }
            Op::Matmul | Op::Softmax { .. } | Op::LayerNorm { .. } => float(operands[0]),
            _ => false,
        };
        let discontinuous = match &inst.op {
            Op::Binary(b) => {
                b.is_comparison()
                    || b.is_logical()
                    || matches!(
                        b,
                        BinaryOp::DivTrunc | BinaryOp::DivFloor | BinaryOp::Remainder
                    )
            }
            Op::Unary(u) => matches!(
                u,
                UnaryOp::Floor
                    | UnaryOp::Ceil
                    | UnaryOp::Round
                    | UnaryOp::Trunc
                    | UnaryOp::Sign
                    | UnaryOp::LogicalNot
            ),
            Op::Where | Op::ArgReduce { .. } => true,
            Op::Cast { dtype }
            | Op::To {
                dtype: Some(dtype), ..
            } => !(dtype.is_floating_point() || dtype.is_complex()),
            _ => false,
        };
        let r = inst.result.index();
        approx[r] = sums || any_approx;
        unstable[r] = operands.iter().any(|v| unstable[v.index()]) || (discontinuous && any_approx);
    }
    func.returns.iter().map(|v| unstable[v.index()]).collect()
}

/// Runs a module on both and compares; `Err` describes a mismatch.
///
/// The reference runs the program without its dead code: Kiln evaluates
/// lazily, so an unused op's run-time error (integer division by zero) is
/// not raised.
fn differ(module: &Module) -> Result<(), String> {
    let inputs = inputs_for(module);
    let mut live = module.clone();
    DcePass.run(&mut live).map_err(|e| e.to_string())?;
    let expected = interp::run(&live, &inputs);
    let got = Compiler::new(BackendKind::Cranelift)
        .compile(module)
        .and_then(|c| c.run(&inputs));
    match (expected, got) {
        (Ok(e), Ok(g)) => {
            let unstable = unstable_results(module);
            let scale = sum_scale(
                module,
                inputs.iter().map(largest_magnitude).fold(1.0, f64::max),
            );
            for (i, (x, y)) in g.iter().zip(&e).enumerate() {
                if unstable[i] {
                    if x.tensor_type() != y.tensor_type() {
                        return Err(format!("result {i}: {:?} vs {:?}", x, y));
                    }
                    continue;
                }
                let tol = if sums(module) {
                    // Sums are only as precise as the least precise float
                    // the program computes in.
                    let single = module.entry().unwrap().values.iter().any(|v| {
                        matches!(
                            v.ty.dtype,
                            DType::F16 | DType::BF16 | DType::F32 | DType::C32 | DType::C64
                        )
                    });
                    let precision = if single { DType::F32 } else { y.dtype() };
                    Tolerance::for_sums(precision, largest_magnitude(y).max(scale))
                } else {
                    Tolerance::ulps(2)
                };
                check_close(x, y, tol).map_err(|err| format!("result {i}: {err}"))?;
                if x.strides() != y.strides() {
                    return Err(format!(
                        "result {i}: strides {:?}, expected {:?}",
                        x.strides(),
                        y.strides()
                    ));
                }
            }
            Ok(())
        }
        (Err(e), Err(g)) if e.message() == g.message() => Ok(()),
        (e, g) => Err(format!("interpreter {e:?}, cranelift {g:?}")),
    }
}

/// One random program on both backends: a failure (a panic included)
/// describes the mismatch and prints the program, ready to replay.
fn check_random(module: &Module) -> Result<(), String> {
    remember(module);
    std::panic::catch_unwind(|| differ(module))
        .unwrap_or_else(|_| Err("panicked".to_string()))
        .map_err(|e| format!("{e}\n// default dtype {}\n{module}", module.default_dtype))
}

/// With `KILN_LAST_PROGRAM=path`, writes each program there before running
/// it: if generated code crashes the process, the file reproduces it.
fn remember(module: &Module) {
    if let Ok(path) = std::env::var("KILN_LAST_PROGRAM") {
        let text = format!("// default dtype {}\n{module}", module.default_dtype);
        std::fs::write(path, text).expect("the program file is writable");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_match_the_interpreter(recipe in recipe_strategy(DTypes::Computable, 3, 10)) {
        let outcome = check_random(&recipe.build());
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
        let outcome = check_random(&recipe.build());
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
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
    println!("{}", differ(&module).err().unwrap_or_default());
}

#[test]
fn kernel_plan_snapshots() {
    for (name, path) in programs() {
        let mut module = load(&path);
        if !runnable(&module) {
            continue;
        }
        Compiler::new(BackendKind::Cranelift)
            .pipeline()
            .run(&mut module)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let plan = kiln_cranelift::Cranelift::default()
            .plan(&module)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        insta::with_settings!({
            snapshot_path => kiln_tests::tests_dir().join("../snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("fuse__{name}"), plan.to_string());
        });
    }
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
    let plan = compiled
        .listings()
        .into_iter()
        .find(|l| l.stage == "fuse")
        .unwrap()
        .text;
    assert!(plan.contains("space [2, 64] reducing [8192]"), "{plan}");
    differ(&module).unwrap();
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
        .into_iter()
        .filter(|l| l.stage == "codegen")
        .map(|l| l.text)
        .collect();
    assert_eq!(clif.len(), 2);
    differ(&module).unwrap();
}
