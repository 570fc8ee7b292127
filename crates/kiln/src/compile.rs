//! Compiling and running: the pipeline from a module to something that runs.
//!
//! [`Compiler`] owns the order of things: the module passes of
//! [`PassManager::standard`], then the backend (which forms kernels and
//! generates code). `kiln run`, `kiln dump` and the Rust API all go through
//! it, so they cannot disagree about what a program means.
//!
//! Compiled programs are cached by their text (and backend and default
//! dtype): compiling the same program again costs a print and a lookup.
//! The cache is bounded ([`PROGRAM_CACHE_ENTRIES`] programs and
//! [`PROGRAM_CACHE_BYTES`] of code and text by default, least recently used
//! evicted; [`crate::memory`] changes and reports it), and a program it
//! evicts frees its machine code once the user holds no handle to it.

use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, LazyLock};

use kiln_ir::{Device, DeviceType, Error, ErrorKind, Module, Result};
use kiln_passes::PassManager;
use kiln_passes::optimize::OptimizeConfig;
use kiln_runtime::backend::check_input_count;
use kiln_runtime::bind::Bound;
use kiln_runtime::cache::BoundedCache;
use kiln_runtime::fold::InterpreterFold;
use kiln_runtime::{Executable, Interpreter, Listing, Tensor};

/// The backends `--backend` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// Fused kernels JIT-compiled by Cranelift, on the CPU.
    Cranelift,
    /// The reference interpreter: slow and obviously right.
    Interp,
    /// Fused kernels as CUDA C, compiled by NVRTC, run on a GPU.
    Cuda,
}

impl BackendKind {
    /// Every backend (in the order an unknown name's error lists them).
    pub const ALL: [BackendKind; 3] = [
        BackendKind::Cranelift,
        BackendKind::Interp,
        BackendKind::Cuda,
    ];

    /// The name `--backend` takes (and `Display` prints).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cranelift => "cranelift",
            BackendKind::Interp => "interp",
            BackendKind::Cuda => "cuda",
        }
    }

    /// The backend that runs programs on a device.
    pub fn for_device(device: Device) -> Result<BackendKind> {
        match device.device_type() {
            DeviceType::Cpu => Ok(BackendKind::Cranelift),
            DeviceType::Cuda => Ok(BackendKind::Cuda),
            _ => Err(Error::new(
                ErrorKind::Device,
                format!("no Kiln backend compiles for {device}"),
            )),
        }
    }

    /// The stages after the module passes that `kiln dump --after` can show.
    pub fn stages(self) -> &'static [&'static str] {
        self.backend().stages()
    }

    fn backend(self) -> Box<dyn kiln_runtime::Backend> {
        self.backend_with(true)
    }

    /// The backend; with `reuse` off, it compiles everything anew.
    fn backend_with(self, reuse: bool) -> Box<dyn kiln_runtime::Backend> {
        match self {
            BackendKind::Cranelift => Box::new(kiln_cranelift::Cranelift {
                reuse_kernels: reuse,
                ..Default::default()
            }),
            BackendKind::Interp => Box::new(Interpreter),
            BackendKind::Cuda => Box::new(kiln_cuda::Cuda::default()),
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BackendKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<BackendKind> {
        BackendKind::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = BackendKind::ALL.iter().map(|b| b.name()).collect();
                Error::new(
                    ErrorKind::Backend,
                    format!(
                        "unknown backend '{s}' (expected one of: {})",
                        names.join(", ")
                    ),
                )
            })
    }
}

/// Compilation settings: which backend, and whether to verify after each
/// pass.
#[derive(Clone, Debug)]
pub struct Compiler {
    backend: BackendKind,
    verify_each_pass: bool,
    cache: bool,
    explain: bool,
}

/// The most programs the program cache keeps by default.
pub const PROGRAM_CACHE_ENTRIES: usize = 256;

/// The most bytes (generated code, and the text of the program and of its
/// compiled module) the program cache keeps by default.
pub const PROGRAM_CACHE_BYTES: usize = 64 << 20;

/// A cached program: the module after the passes and the backend's code.
type CachedProgram = (Arc<Module>, Arc<dyn Executable>);

/// Compiled programs by (backend, program text with the settings that
/// change the result).
pub(crate) static PROGRAMS: LazyLock<BoundedCache<(BackendKind, String), CachedProgram>> =
    LazyLock::new(|| BoundedCache::new(PROGRAM_CACHE_ENTRIES, PROGRAM_CACHE_BYTES));

impl Default for Compiler {
    fn default() -> Self {
        Compiler::new(BackendKind::Cranelift)
    }
}

impl Compiler {
    /// Compiles for `backend`, caching programs, without explanations,
    /// verifying after each pass in debug builds (after the last one in
    /// release builds, as Cranelift's verifier runs in debug builds only).
    pub fn new(backend: BackendKind) -> Compiler {
        Compiler {
            backend,
            verify_each_pass: cfg!(debug_assertions),
            cache: true,
            explain: false,
        }
    }

    /// Whether the optimizer records why each result changed (for
    /// `kiln dump --explain`).
    pub fn explain(mut self, explain: bool) -> Compiler {
        self.explain = explain;
        self
    }

    /// Whether to reuse programs and kernels compiled before (on by
    /// default; off measures a cold compile).
    pub fn cache(mut self, cache: bool) -> Compiler {
        self.cache = cache;
        self
    }

    /// Whether the verifier runs after every pass, or only after the last
    /// (on by default in debug builds; the test suites turn it on: in a
    /// release build it would be 7% of a Llama block's compile).
    pub fn verify_each_pass(mut self, verify: bool) -> Compiler {
        self.verify_each_pass = verify;
        self
    }

    /// The backend it compiles for.
    pub fn backend(&self) -> BackendKind {
        self.backend
    }

    /// The module passes this compiler runs, in order, for modules typed
    /// under `default_dtype` (constant folding depends on it).
    pub fn pipeline_for(&self, default_dtype: kiln_ir::DefaultDType) -> PassManager {
        let optimize = OptimizeConfig {
            explain: self.explain,
            fold: Some(Arc::new(InterpreterFold { default_dtype })),
            ..OptimizeConfig::default()
        };
        PassManager::standard_for(optimize, self.backend.backend().keeps())
            .verify_each(self.verify_each_pass)
    }

    /// The module passes, for f32-default modules (their names and order do
    /// not depend on the default dtype).
    pub fn pipeline(&self) -> PassManager {
        self.pipeline_for(kiln_ir::DefaultDType::F32)
    }

    /// Runs the module passes, then hands the module to the backend.
    pub fn compile(&self, module: &Module) -> Result<Compiled> {
        let key = (
            self.backend,
            format!(
                "// default dtype {}, explain {}\n{module}",
                module.default_dtype, self.explain
            ),
        );
        if self.cache {
            if let Some((module, executable)) = PROGRAMS.get(&key) {
                return Ok(Compiled {
                    module,
                    executable,
                    backend: self.backend,
                });
            }
        }
        let mut module = module.clone();
        self.pipeline_for(module.default_dtype).run(&mut module)?;
        let compiled = self.compile_lowered(module)?;
        if self.cache {
            // What keeping it costs: its code, and about twice its text (the
            // key, and the compiled module, which prints to about as much).
            let bytes = compiled.executable.code_bytes() + 2 * key.1.len();
            PROGRAMS.insert(
                key,
                (compiled.module.clone(), compiled.executable.clone()),
                bytes,
            );
        }
        Ok(compiled)
    }

    /// Hands a module the pipeline has already run on to the backend.
    pub fn compile_lowered(&self, module: Module) -> Result<Compiled> {
        let executable: Arc<dyn Executable> =
            Arc::from(self.backend.backend_with(self.cache).compile(&module)?);
        Ok(Compiled {
            module: Arc::new(module),
            executable,
            backend: self.backend,
        })
    }
}

/// A compiled program, ready to run on concrete tensors.
#[derive(Clone)]
pub struct Compiled {
    module: Arc<Module>,
    executable: Arc<dyn Executable>,
    backend: BackendKind,
}

impl Compiled {
    /// Runs on inputs in parameter order; results come in return order.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        self.executable.run(inputs)
    }

    /// Runs as [`Compiled::run`], taking the inputs (JAX's buffer
    /// donation): where the program returns an input updated by
    /// `index_put` (a key/value cache) and no other tensor shares that
    /// input's storage, the CPU backend writes the result in place, into
    /// the input's memory, instead of copying it whole. The results are
    /// the same as `run`'s.
    pub fn run_donated(&self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        self.executable.run_donated(inputs)
    }

    /// Binds some inputs for good, a model's weights (one entry per
    /// parameter, `None` for an input given on every run): the result runs
    /// on the others. The CPU backend keeps a weight that only feeds
    /// products in the packed form they read, in place of the weight
    /// (`kiln_runtime::bind`): give the weights up (keep no other handle
    /// to their storage) and each is held once.
    pub fn bind(&self, weights: Vec<Option<Tensor>>) -> Result<Bound> {
        let func = self.module.entry()?;
        check_input_count(&func.name, func.params.len(), weights.len())?;
        Bound::new(self.executable.clone(), weights)
    }

    /// For a backend whose memory is not the host's (CUDA): the times of
    /// `runs` runs with the inputs already on the device and the results
    /// left there, without the copies [`Compiled::run`] makes. `None` for
    /// the CPU backends, whose `run` is that time.
    pub fn device_times(
        &self,
        inputs: &[Tensor],
        runs: usize,
    ) -> Option<Result<Vec<std::time::Duration>>> {
        self.executable.device_times(inputs, runs)
    }

    /// The median time of each step of the program's kernel plan over
    /// `runs` runs (each step synchronized), in plan order, with each
    /// step's description; `None` for the interpreter, which has no plan.
    pub fn step_times(
        &self,
        inputs: &[Tensor],
        runs: usize,
    ) -> Option<Result<Vec<(String, std::time::Duration)>>> {
        self.executable.step_times(inputs, runs)
    }

    /// The module after the passes.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The backend that compiled it.
    pub fn backend(&self) -> BackendKind {
        self.backend
    }

    /// The backend's generated code (made when asked: compiled programs
    /// keep no text).
    pub fn listings(&self) -> Result<Vec<Listing>> {
        self.executable.listings()
    }

    /// The kernel plan the backend runs (`kiln dump --after fuse`'s plan),
    /// made when asked; `None` for the interpreter, which has no plan.
    pub fn kernel_plan(&self) -> Result<Option<String>> {
        Ok(self
            .listings()?
            .into_iter()
            .find(|l| l.language == kiln_runtime::ListingLanguage::Plan)
            .map(|l| l.text))
    }

    /// Bytes of generated code this program keeps alive.
    pub fn code_bytes(&self) -> usize {
        self.executable.code_bytes()
    }
}

impl fmt::Debug for Compiled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compiled")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}
