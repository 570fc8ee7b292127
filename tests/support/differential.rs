//! Differential testing: a program on a backend against the reference
//! interpreter, with tolerances that follow what may legitimately differ
//! (summation order), shared by every backend's tests.

use kiln::{BackendKind, Compiler, DType, Module, Op, Traits};
use kiln_passes::PassManager;
use kiln_passes::dce::DcePass;
use kiln_runtime::Tensor;
use kiln_runtime::compare::{Tolerance, check_close, largest_magnitude};
use kiln_runtime::interp;
use kiln_runtime::storage::Storage;

use crate::{inputs_for, load, programs, runnable};

/// Whether a program sums (its results may differ in summation order).
pub fn sums(module: &Module) -> bool {
    module
        .funcs
        .iter()
        .flat_map(|f| &f.insts)
        .any(|i| sums_inside(&i.op))
}

/// Whether an op sums: every reduction (sum, mean, any/all...),
/// convolution, pooling and resampling, and the composites that sum
/// inside.
fn sums_inside(op: &Op) -> bool {
    (op.is(Traits::REDUCTION) && !matches!(op, Op::ArgReduce { .. }))
        || kiln::spatial::spatial(op).is_some()
        || matches!(
            op,
            Op::Matmul
                | Op::Linear
                | Op::ScaledDotProductAttention { .. }
                | Op::MultiHeadAttentionForward { .. }
                | Op::Softmax { .. }
                | Op::LogSoftmax { .. }
                | Op::LayerNorm { .. }
                | Op::Einsum { .. }
                | Op::Tensordot { .. }
                | Op::Vdot
                | Op::Bilinear
                | Op::LinalgMultiDot
                | Op::Cdist { .. }
                | Op::LocalResponseNorm { .. }
                | Op::NativeLayerNorm { .. }
                | Op::NativeBatchNorm { .. }
                | Op::NativeGroupNorm { .. }
        )
}

/// How a program runs on the side compared with the interpreter.
pub type Runner<'r> = &'r dyn Fn(&Module, &[Tensor]) -> kiln::Result<Vec<Tensor>>;

/// A backend, through the compiler. Each program also runs with its
/// inputs given up (`run_donated`, on copies no one else shares), which
/// must give the very same results: donation changes only where results
/// are written.
fn compiled(backend: BackendKind) -> impl Fn(&Module, &[Tensor]) -> kiln::Result<Vec<Tensor>> {
    move |module, inputs| {
        let program = Compiler::new(backend)
            .verify_each_pass(true)
            .compile(module)?;
        let results = program.run(inputs)?;
        let copies = inputs
            .iter()
            .map(own_copy)
            .collect::<kiln::Result<Vec<_>>>()?;
        let donated = program.run_donated(copies)?;
        let same = |x: &Tensor, y: &Tensor| {
            x.shape() == y.shape() && x.strides() == y.strides() && x.to_bytes() == y.to_bytes()
        };
        if results.len() != donated.len() || !results.iter().zip(&donated).all(|(x, y)| same(x, y))
        {
            return Err(kiln::Error::new(
                kiln::ErrorKind::Backend,
                "run_donated's results differ from run's",
            ));
        }
        // Every input bound to the program (copies it holds alone, so
        // that weights feeding only packing products are held packed in
        // their place): the same bits.
        let copies = inputs
            .iter()
            .map(own_copy)
            .collect::<kiln::Result<Vec<_>>>()?;
        let bound = program
            .bind(copies.into_iter().map(Some).collect())?
            .run(&[])?;
        if results.len() != bound.len() || !results.iter().zip(&bound).all(|(x, y)| same(x, y)) {
            return Err(kiln::Error::new(
                kiln::ErrorKind::Backend,
                "the results with every input bound differ from run's",
            ));
        }
        Ok(results)
    }
}

/// A copy of `t` in storage of its own.
pub fn own_copy(t: &Tensor) -> kiln::Result<Tensor> {
    let mut storage = Storage::for_overwrite(t.storage().len())?;
    storage
        .bytes_mut()
        .expect("a new storage is not shared")
        .copy_from_slice(t.storage().bytes());
    Tensor::from_storage(storage, t.geometry().clone(), t.dtype(), t.device())
}

/// Every runnable program of `tests/programs/` on `backend` against the
/// interpreter; the failures, described.
pub fn every_program_on(backend: BackendKind) -> Vec<String> {
    every_program_with(backend.name(), math_of(backend), &compiled(backend))
}

/// Every runnable program of `tests/programs/` run by `runner` (named
/// `name` in failures, computing with `math`) against the interpreter; the
/// failures, described.
pub fn every_program_with(name: &str, math: Math, runner: Runner) -> Vec<String> {
    let backend = name;
    let mut failures = Vec::new();
    for (name, path) in programs() {
        let module = load(&path);
        if !runnable(&module) {
            continue;
        }
        let inputs = inputs_for(&module);
        let expected = interp::run(&module, &inputs);
        let got = runner(&module, &inputs);
        match (expected, got) {
            (Ok(e), Ok(g)) => {
                let library = unstable_results(&module, math).library;
                for (i, (x, y)) in g.iter().zip(&e).enumerate() {
                    let tol = if sums(&module) {
                        Tolerance::for_sums(y.dtype(), largest_magnitude(y))
                    } else {
                        Tolerance::ulps(2)
                    };
                    let tol = if library[i] {
                        with_torch_tolerance(tol, y)
                    } else {
                        tol
                    };
                    if let Err(err) = check_close(x, y, tol) {
                        failures.push(format!("{name} result {i}: {err}"));
                    }
                }
            }
            (Err(e), Err(g)) if e.message() == g.message() => {}
            (e, g) => failures.push(format!("{name}: interpreter {e:?}, {backend} {g:?}")),
        }
    }
    failures
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
        let per_result = |v: kiln::ValueId| numel(v) / numel(inst.result()).max(1.0);
        scale = scale.max(match &inst.op {
            Op::Matmul => {
                let shape = &func.ty(operands[0]).shape;
                shape.last().copied().unwrap_or(1).max(1) as f64 * m * m
            }
            Op::LayerNorm { eps, .. } => m / eps.0.sqrt(),
            op if op.is(Traits::REDUCTION) && !operands.is_empty() => per_result(operands[0]) * m,
            _ => 0.0,
        });
    }
    scale
}

/// The module after the module passes of the backend named `backend`
/// (CUDA's keep other composites than the CPU's, so their orders differ).
fn optimized_for(module: &Module, backend: &str) -> Result<Module, String> {
    let kind = if backend.starts_with("cuda") {
        BackendKind::Cuda
    } else {
        BackendKind::Cranelift
    };
    let mut lowered = module.clone();
    Compiler::new(kind)
        .verify_each_pass(true)
        .pipeline()
        .run(&mut lowered)
        .map_err(|e| e.to_string())?;
    Ok(lowered)
}

/// Whose math functions a backend computes with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math {
    /// The interpreter's own (the Cranelift backend calls them): results
    /// agree to rounding.
    Interpreter,
    /// Its own library (CUDA's libdevice, or the host's libm under
    /// emulation): log, sin, erf, pow... differ from the interpreter's
    /// libm by an ulp or two, which ill-conditioned ops downstream (log
    /// near 1, a cancelling subtraction) magnify. Results that depend on
    /// them are held to PyTorch's own CPU-versus-CUDA tolerances
    /// (torch.testing's defaults), and discontinuous ops of them are
    /// compared by type only.
    Own,
}

impl Math {
    /// Whether `op`'s values come from a math function here (the op
    /// table's approximate ops).
    fn library(self, op: &Op) -> bool {
        self == Math::Own && op.is(Traits::APPROXIMATE)
    }
}

/// `tol` widened to torch.testing's CPU-versus-CUDA tolerance for a
/// result like `expected` that depends on a math library's functions.
fn with_torch_tolerance(tol: Tolerance, expected: &Tensor) -> Tolerance {
    let (rtol, atol) = torch_tolerance(expected.dtype());
    tol.with_abs(tol.abs.max(atol + rtol * largest_magnitude(expected)))
}

/// torch.testing.assert_close's default `(rtol, atol)` for a dtype.
fn torch_tolerance(d: DType) -> (f64, f64) {
    match d {
        DType::F64 | DType::C128 => (1e-7, 1e-7),
        DType::F16 => (1e-3, 1e-5),
        DType::BF16 => (1.6e-2, 1e-5),
        _ => (1.3e-6, 1e-5),
    }
}

/// How far each result of a program may legitimately differ from the
/// reference's.
struct Stability {
    /// Taken by a discontinuous op (a comparison, floor, a cast to an
    /// integer, ...) from a float sum, whose last bits depend on summation
    /// order: compared by type only.
    unstable: Vec<bool>,
    /// Depends on a math function of the backend's own library (see
    /// [`Math::Own`]).
    library: Vec<bool>,
    /// Divides by a float sum (`div`, `reciprocal`, `rsqrt`): a divisor that
    /// cancels to near zero turns the sum's absolute rounding into a large
    /// one (1/x amplifies it by 1/x²), so these are compared to a relative
    /// 2^-10 (`1 / mha(x)`: −132.4629 against −132.4707).
    amplified: Vec<bool>,
}

/// Relative difference (in f32 ulps, 2^13 of them: 2^-10) accepted for an
/// [`Stability::amplified`] result.
const AMPLIFIED_ULPS: u64 = 1 << 13;

/// The [`Stability`] of each result.
fn unstable_results(module: &Module, math: Math) -> Stability {
    let func = module.entry().unwrap();
    let mut approx = vec![false; func.values.len()];
    let mut unstable = vec![false; func.values.len()];
    let mut library = vec![false; func.values.len()];
    let mut amplified = vec![false; func.values.len()];
    for inst in &func.insts {
        let float = |v: kiln::ValueId| {
            let d = func.ty(v).dtype;
            d.is_floating_point() || d.is_complex()
        };
        let operands: Vec<kiln::ValueId> = inst.value_operands().collect();
        let any_approx = operands.iter().any(|v| approx[v.index()]);
        // Sums whose last bits depend on summation order: reductions
        // other than max and min, and every op `sums_inside` lists
        // (matmul, attention, the row-wise composites...).
        let sums = match &inst.op {
            Op::Reduce { op, .. } => {
                !matches!(op, kiln::ReduceOp::Amax | kiln::ReduceOp::Amin) && float(operands[0])
            }
            op => sums_inside(op) && operands.first().is_some_and(|v| float(*v)),
        };
        let discontinuous = match &inst.op {
            Op::Cast { dtype }
            | Op::To {
                dtype: Some(dtype), ..
            } => !(dtype.is_floating_point() || dtype.is_complex()),
            op => op.is(Traits::DISCONTINUOUS),
        };
        let r = inst.result().index();
        let from_library = math.library(&inst.op);
        library[r] = from_library || operands.iter().any(|v| library[v.index()]);
        approx[r] = sums || from_library || any_approx;
        unstable[r] = operands.iter().any(|v| unstable[v.index()]) || (discontinuous && any_approx);
        let divides_by_a_sum = match &inst.op {
            // (The dividend may be a scalar: `div 1.0, %x`.)
            Op::Binary {
                op: kiln::BinaryOp::Div,
            } => inst
                .operands
                .get(1)
                .and_then(|o| o.value())
                .is_some_and(|v| approx[v.index()]),
            Op::Unary {
                op: kiln::UnaryOp::Reciprocal | kiln::UnaryOp::Rsqrt,
            } => any_approx,
            _ => false,
        };
        amplified[r] = divides_by_a_sum || operands.iter().any(|v| amplified[v.index()]);
    }
    let per_result = |flags: &[bool]| func.returns.iter().map(|v| flags[v.index()]).collect();
    Stability {
        unstable: per_result(&unstable),
        library: per_result(&library),
        amplified: per_result(&amplified),
    }
}

/// Runs a module on the interpreter and on `backend` and compares; `Err`
/// describes a mismatch.
///
/// The reference runs the program without its dead code: Kiln evaluates
/// lazily, so an unused op's run-time error (integer division by zero) is
/// not raised (nor is one of an op whose values nothing needs, which the
/// optimizer drops: then the reference runs the optimized program); a
/// program error found when compiling (a view the layout rules refuse) is
/// the interpreter's on the whole program.
pub fn differ(module: &Module, backend: BackendKind) -> Result<(), String> {
    differ_with(module, backend.name(), math_of(backend), &compiled(backend))
}

/// Whose math functions a backend computes with.
fn math_of(backend: BackendKind) -> Math {
    match backend {
        BackendKind::Cuda => Math::Own,
        _ => Math::Interpreter,
    }
}

/// [`differ`] with the program run by `runner` (named `backend` in
/// failures), which computes with `math`.
pub fn differ_with(
    module: &Module,
    backend: &str,
    math: Math,
    runner: Runner,
) -> Result<(), String> {
    let inputs = inputs_for(module);
    let mut live = module.clone();
    PassManager::new()
        .with(DcePass)
        .run(&mut live)
        .map_err(|e| e.to_string())?;
    let expected = interp::run(&live, &inputs);
    let got = runner(module, &inputs);
    match (expected, got) {
        (Ok(e), Ok(g)) => {
            let Stability {
                unstable,
                library,
                amplified,
            } = unstable_results(module, math);
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
                let tol = if library[i] {
                    with_torch_tolerance(tol, y)
                } else {
                    tol
                };
                let tol = if amplified[i] {
                    Tolerance::ulps(tol.ulps.max(AMPLIFIED_ULPS)).with_abs(tol.abs)
                } else {
                    tol
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
        // Two ops that both fail at run time, independent of each other:
        // the optimizer may order them either way (a lazy program has no
        // order between them), and the error is the first one's in the
        // optimized program's order. The reference is then the
        // interpreter on the optimized program, as below.
        (Err(e), Err(g))
            if e.kind() == kiln::ErrorKind::Runtime && g.kind() == kiln::ErrorKind::Runtime =>
        {
            let lowered = optimized_for(module, backend)?;
            match interp::run(&lowered, &inputs) {
                Err(r) if r.message() == g.message() => Ok(()),
                other => Err(format!(
                    "interpreter {e:?}, {backend} {g:?}, interpreter on the optimized program {:?}",
                    other.map(|_| "results")
                )),
            }
        }
        // A run-time error of an op whose values nothing needs (`take` out
        // of range under `ones_like`, which reads its operand's shape
        // only): the optimizer drops the op, and with it the error, as
        // Kiln's laziness allows. The reference is then the interpreter on
        // the optimized program.
        (Err(e), Ok(_)) if e.kind() == kiln::ErrorKind::Runtime => {
            let lowered = optimized_for(module, backend)?;
            match interp::run(&lowered, &inputs) {
                Ok(_) => differ_with(&lowered, backend, math, runner),
                Err(_) => Err(format!("interpreter {e:?}, {backend} ran without it")),
            }
        }
        // A program the layout rules refuse is refused whether or not the
        // refused op is used (as PyTorch raises it eagerly): the
        // interpreter agrees on the whole program.
        (Ok(_), Err(g))
            if interp::run(module, &inputs).is_err_and(|e| e.message() == g.message()) =>
        {
            Ok(())
        }
        (e, g) => Err(format!("interpreter {e:?}, {backend} {g:?}")),
    }
}

/// One random program on the interpreter and `backend`: a failure (a panic included)
/// describes the mismatch and prints the program, ready to replay.
pub fn check_random(module: &Module, backend: BackendKind) -> Result<(), String> {
    check_random_with(module, backend.name(), math_of(backend), &compiled(backend))
}

/// [`check_random`] with the program run by `runner`, which computes with
/// `math`.
pub fn check_random_with(
    module: &Module,
    backend: &str,
    math: Math,
    runner: Runner,
) -> Result<(), String> {
    remember(module);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        differ_with(module, backend, math, runner)
    }))
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
