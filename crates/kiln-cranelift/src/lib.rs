//! `kiln-cranelift`: Kiln's CPU backend.
//!
//! A module is planned into fused kernels by [`kiln_passes::plan`], each
//! kernel is lowered to Cranelift IR ([`codegen`]) and JIT-compiled
//! ([`jit`], with a cache by structure), and the plan runs on host memory
//! through [`kiln_runtime::execute`] (host memory, [`kiln_runtime::host`]): kernels split across threads,
//! matmuls through `gemm`, and anything the JIT does not compile (complex
//! and float8 arithmetic, integer matmul) on the reference interpreter.
//!
//! | module | owns |
//! |---|---|
//! | [`codegen`] | kernel → Cranelift function: loops, vector and scalar code, op semantics |
//! | [`jit`] | machine code, the compiled-kernel cache |

pub mod codegen;
pub mod jit;

use std::sync::Arc;

use kiln_ir::graph::{Func, Inst};
use kiln_ir::{DType, Device, Error, ErrorKind, Module, Result};
use kiln_passes::plan::{self as planner, Target};
use kiln_passes::plan::{KernelPlan, kernel_dtype};
use kiln_runtime::backend::check_all_runnable;
use kiln_runtime::bind::Packing;
use kiln_runtime::host::{HostExecutor, KernelCode};
use kiln_runtime::{Backend, Executable, Listing, ListingLanguage, Tensor};

/// The Cranelift CPU backend.
#[derive(Clone, Copy, Debug)]
pub struct Cranelift {
    /// Use 4-lane vector code in row loops (on by default).
    pub vectorize: bool,
    /// Reuse kernels compiled before (on by default; off to measure cold
    /// compiles).
    pub reuse_kernels: bool,
    /// Compute constant subgraphs once, when the program compiles (on by
    /// default; off runs them on every call, as kernels).
    pub hoist_constants: bool,
}

impl Default for Cranelift {
    fn default() -> Self {
        Cranelift {
            vectorize: true,
            reuse_kernels: true,
            hoist_constants: true,
        }
    }
}

/// What the CPU JIT compiles: every op on the dtypes above.
pub struct CpuTarget;

impl Target for CpuTarget {
    fn device(&self) -> Device {
        Device::CPU
    }

    fn compiles(&self, func: &Func, inst: &Inst) -> bool {
        inst.results.iter().all(|r| kernel_dtype(func.ty(*r).dtype))
            && inst
                .value_operands()
                .all(|v| kernel_dtype(func.ty(v).dtype))
    }

    fn has_matmul(&self, dtype: DType) -> bool {
        matches!(
            dtype,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 | DType::C64 | DType::C128
        )
    }
}

/// Checks that a program runs on the CPU.
fn check_cpu(func: &Func) -> Result<()> {
    check_all_runnable(func)?;
    for (i, value) in func.values.iter().enumerate() {
        if !value.ty.device.is_cpu() {
            return Err(Error::new(
                ErrorKind::Device,
                format!(
                    "%{} is on {}: the cranelift backend runs CPU programs (use --backend cuda)",
                    func.name_of(kiln_ir::ValueId(i as u32)),
                    value.ty.device
                ),
            ));
        }
    }
    Ok(())
}

/// A compiled CPU program.
struct Program {
    executor: HostExecutor,
    /// Its kernels (which the executor runs too), for the code they hold.
    kernels: Vec<Arc<jit::CompiledKernel>>,
    vectorize: bool,
}

impl Executable for Program {
    fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        self.executor.run(inputs)
    }

    fn run_donated(&self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        self.executor.run_donated(inputs)
    }

    fn pack_bound(&self, weights: &mut [Option<Tensor>]) -> Result<Packing> {
        self.executor.pack_bound(weights)
    }

    fn run_bound(
        &self,
        inputs: Vec<Tensor>,
        donate: bool,
        packing: &Packing,
    ) -> Result<Vec<Tensor>> {
        self.executor.run_bound(inputs, donate, packing)
    }

    fn step_times_bound(
        &self,
        inputs: &[Tensor],
        runs: usize,
        packing: &Packing,
    ) -> Option<Result<Vec<(String, std::time::Duration)>>> {
        Some(self.executor.step_times_bound(inputs, runs, packing))
    }

    fn listings(&self) -> Result<Vec<Listing>> {
        let plan = self.executor.plan();
        let kernels: Vec<_> = plan.kernels().collect();
        let texts = jit::listings(&kernels, self.vectorize)?;
        let mut listings = vec![Listing::plan(plan)];
        for (k, text) in kernels.iter().zip(texts) {
            let lanes = if text.vectorized {
                "4-lane vectors"
            } else {
                "scalar"
            };
            listings.push(Listing {
                stage: "codegen",
                title: format!("kernel {} ({lanes})", k.name),
                language: ListingLanguage::Clif,
                text: text.clif,
            });
            listings.push(Listing {
                stage: "machine",
                title: format!("kernel {} machine code", k.name),
                language: ListingLanguage::Machine,
                text: text.machine,
            });
        }
        Ok(listings)
    }

    fn step_times(
        &self,
        inputs: &[Tensor],
        runs: usize,
    ) -> Option<Result<Vec<(String, std::time::Duration)>>> {
        Some(self.executor.step_times(inputs, runs))
    }

    fn code_bytes(&self) -> usize {
        // Each module once, however many of its kernels this program runs.
        let mut seen: Vec<&jit::CompiledKernel> = Vec::new();
        for k in &self.kernels {
            if !seen.iter().any(|s| s.same_module(k)) {
                seen.push(k);
            }
        }
        seen.iter().map(|k| k.module_bytes()).sum()
    }
}

impl Cranelift {
    /// The kernel plan for a laid-out module.
    pub fn plan(&self, module: &Module) -> Result<KernelPlan> {
        check_cpu(module.entry()?)?;
        planner::plan(module, &CpuTarget)
    }
}

impl Backend for Cranelift {
    fn name(&self) -> &'static str {
        "cranelift"
    }

    fn stages(&self) -> &'static [&'static str] {
        &["fuse", "codegen", "machine"]
    }

    /// Attention in f32 and f64, cross_entropy of f32 logits, var/std and
    /// (large) softmax/log_softmax of f32 rows run as one native host step
    /// each (`kiln_runtime::execute::native_composite` lists them) rather
    /// than as their expansions.
    fn keeps(&self) -> Option<kiln_passes::decompose::Keep> {
        Some(kiln_runtime::execute::native_composite)
    }

    /// Constant subgraphs are computed once, when the program compiles
    /// ([`kiln_runtime::constants`]).
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>> {
        if self.hoist_constants {
            kiln_runtime::constants::compile_hoisting(module, |m| self.compile_plan(m))
        } else {
            self.compile_plan(module)
        }
    }
}

impl Cranelift {
    /// Plans, JIT-compiles and wraps a module as it is.
    fn compile_plan(&self, module: &Module) -> Result<Box<dyn Executable>> {
        let plan = self.plan(module)?;
        let kernels: Vec<_> = plan.kernels().collect();
        let compiled = jit::compile(&kernels, self.vectorize, self.reuse_kernels)?;
        let code: Vec<Box<dyn KernelCode>> = compiled
            .iter()
            .map(|c| Box::new(Shared(c.clone())) as Box<dyn KernelCode>)
            .collect();
        let executor =
            HostExecutor::new(module.entry()?.clone(), plan, code, module.default_dtype)?;
        Ok(Box::new(Program {
            executor,
            kernels: compiled,
            vectorize: self.vectorize,
        }))
    }
}

/// A cached kernel shared by every program that uses it.
struct Shared(Arc<jit::CompiledKernel>);

impl KernelCode for Shared {
    unsafe fn run(&self, args: &[*mut u8], begin: i64, end: i64) -> Result<()> {
        // SAFETY: forwarded from the executor's own contract.
        unsafe { self.0.run(args, begin, end) }
    }
}
