//! The CUDA backend without a GPU: a plan's generated CUDA C compiled as
//! host C++ against `cuda_emulator.h` (threads for a block's threads,
//! barriers for `__syncthreads` and warp shuffles) and run through the
//! runtime's run loop ([`kiln_runtime::execute`]) as a [`Launcher`].
//!
//! Everything but the GPU is the backend's: the pipeline, the plan, the
//! generated kernels, their launch shapes, the buffers and host steps. So
//! the differential suite checks CUDA codegen on every machine with a C++
//! compiler (`g++`, or `KILN_CXX`).

use std::cell::UnsafeCell;
use std::fmt::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, LazyLock};

use kiln::{BackendKind, Compiler, Error, ErrorKind, Module, Result};
use kiln_cuda::Cuda;
use kiln_cuda::codegen::{launch_shape, scratch_bytes};
use kiln_passes::plan::{Kernel, KernelPlan};
use kiln_runtime::Tensor;
use kiln_runtime::execute::{CheckedPlan, Launcher, execute, time_steps};
use kiln_runtime::pool::{Allocator, Pool, Pooled};

/// The C++ compiler: `KILN_CXX`, or `g++`.
pub fn compiler() -> PathBuf {
    std::env::var_os("KILN_CXX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("g++"))
}

/// Whether the C++ compiler runs here.
pub fn available() -> bool {
    Command::new(compiler()).arg("--version").output().is_ok()
}

/// Whether the C++ compiler the emulation needs is here; panics where CI
/// requires it (`KILN_REQUIRE_EMULATOR`), and says the test skipped where
/// it is missing.
pub fn here() -> bool {
    let ok = available();
    assert!(
        ok || std::env::var_os("KILN_REQUIRE_EMULATOR").is_none(),
        "KILN_REQUIRE_EMULATOR is set but {} does not run",
        compiler().display()
    );
    if !ok {
        eprintln!(
            "skipped: no C++ compiler ({}) to emulate the CUDA C with",
            compiler().display()
        );
    }
    ok
}

/// A program as parsed, and its CUDA plan after the backend's passes.
pub fn plan_of(text: &str) -> (Module, KernelPlan) {
    let mut module = kiln::parse_module("program", text, kiln::DefaultDType::F32)
        .unwrap_or_else(|e| panic!("{e}"));
    let source = module.clone();
    Compiler::new(BackendKind::Cuda)
        .pipeline()
        .run(&mut module)
        .unwrap_or_else(|e| panic!("{e}"));
    let plan = Cuda::default()
        .plan(&module)
        .unwrap_or_else(|e| panic!("{e}"));
    (source, plan)
}

/// Runs `module` on the interpreter and emulated, asserts that every
/// result has the same bytes and strides (`context` names the case in a
/// failure), and returns the interpreter's results.
pub fn assert_same_bits(context: &str, module: &Module, inputs: &[Tensor]) -> Vec<Tensor> {
    let expected = kiln_runtime::interp::run(module, inputs).unwrap_or_else(|e| panic!("{e}"));
    let got = run(module, inputs).unwrap_or_else(|e| panic!("{context}: {e}"));
    assert_eq!(expected.len(), got.len(), "{context}");
    for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
        assert!(
            g.to_bytes() == e.to_bytes(),
            "{context}: result {i} differs: {e} emulated as {g}"
        );
        assert_eq!(g.strides(), e.strides(), "{context}: result {i}");
    }
    expected
}

/// Runs a module as the CUDA backend would, its kernels emulated.
pub fn run(module: &Module, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    let (checked, emulator) = prepare(module)?;
    execute(&emulator, &checked, inputs)
}

/// Times `runs` emulated runs with the inputs resident, as the CUDA
/// backend's `device_times` does on a GPU; the last run's results too.
pub fn device_times(
    module: &Module,
    inputs: &[Tensor],
    runs: usize,
) -> Result<(Vec<std::time::Duration>, Vec<Tensor>)> {
    let (checked, emulator) = prepare(module)?;
    time_steps(&emulator, &checked, inputs, runs)
}

/// The module's plan after the CUDA pipeline, checked, and its emulated
/// kernels.
pub fn prepare(module: &Module) -> Result<(CheckedPlan, Emulator)> {
    let mut module = module.clone();
    Compiler::new(BackendKind::Cuda)
        .verify_each_pass(true)
        .pipeline_for(module.default_dtype)
        .run(&mut module)?;
    let plan = Cuda::default().plan(&module)?;
    let emulator = Emulator::build(&plan)?;
    let checked = CheckedPlan::new(module.entry()?.clone(), plan, module.default_dtype)?;
    Ok((checked, emulator))
}

/// A plan's kernels compiled for the host.
pub struct Emulator {
    library: libloading::Library,
    _dir: tempfile::TempDir,
    /// Its "device memory" ([`device_pool`] unless given another).
    pool: Arc<Pool<EmulatedMemory>>,
    /// The launch shapes of the plan's steps' kernels, by step, and
    /// whether each applies its step's tail.
    steps: std::collections::HashMap<usize, (kiln_cuda::codegen::LaunchShape, bool)>,
}

/// One kernel's entry: argument buffers, status word, scratch (or null),
/// grid and block size.
type Entry = unsafe extern "C" fn(*const *mut u8, *mut u8, *mut u8, u32, u32);

/// One step's entry: argument buffers, status word, grid and block size.
type StepEntry = unsafe extern "C" fn(*const *mut u8, *mut i32, u32, u32);

fn failed(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Backend, format!("CUDA emulation: {what}"))
}

impl Emulator {
    /// Compiles the plan's CUDA C with an entry per kernel.
    pub fn build(plan: &KernelPlan) -> Result<Emulator> {
        let kernels: Vec<&Kernel> = plan.kernels().collect();
        let mut source = String::from(include_str!("cuda_emulator.h"));
        source += &Cuda::source(plan);
        for (i, k) in kernels.iter().enumerate() {
            let args: String = (0..k.args.len()).map(|a| format!("b[{a}], ")).collect();
            let scratch = if scratch_bytes(k) > 0 {
                ", scratch"
            } else {
                ""
            };
            write!(
                source,
                "\nextern \"C\" __attribute__((visibility(\"default\"))) void kiln_emu_entry_{i}(unsigned char** b, int* status, unsigned char* scratch, unsigned grid, unsigned block) {{\n  kiln_emu_launch(grid, block, [&] {{ {}({args}status{scratch}); }});\n}}\n",
                k.name,
            )
            .expect("writing to a String");
        }
        let steps = kiln_cuda::steps::kernels(plan);
        for a in &steps {
            let args: Vec<String> = (0..a.args)
                .map(|i| format!("b[{i}]"))
                .chain(["status".to_string()])
                .collect();
            write!(
                source,
                "\nextern \"C\" __attribute__((visibility(\"default\"))) void kiln_emu_step_{}(unsigned char** b, int* status, unsigned grid, unsigned block) {{\n  kiln_emu_launch(grid, block, [&] {{ {}({}); }});\n}}\n",
                a.step,
                a.name,
                args.join(", "),
            )
            .expect("writing to a String");
        }
        let dir = tempfile::tempdir().map_err(failed)?;
        let cpp = dir.path().join("kernels.cpp");
        let so = dir.path().join("kernels.so");
        std::fs::write(&cpp, &source).map_err(failed)?;
        // Each library keeps its own statics (its blocks' shared memory):
        // hidden symbols, and no GNU unique symbols, which the dynamic
        // linker would merge across the libraries of tests running at the
        // same time.
        let out = Command::new(compiler())
            .args([
                "-std=c++20",
                "-O1",
                "-shared",
                "-fPIC",
                "-pthread",
                "-fvisibility=hidden",
                "-fno-gnu-unique",
                "-w",
                "-o",
            ])
            .arg(&so)
            .arg(&cpp)
            .output()
            .map_err(failed)?;
        if !out.status.success() {
            return Err(failed(format!(
                "the generated CUDA C does not compile as C++:\n{}\n{}",
                String::from_utf8_lossy(&out.stderr),
                Cuda::source(plan)
            )));
        }
        // SAFETY: the library is the one just compiled; its initializers
        // only set up the emulator's statics.
        let library = unsafe { libloading::Library::new(&so) }.map_err(failed)?;
        Ok(Emulator {
            library,
            _dir: dir,
            pool: device_pool().clone(),
            steps: steps
                .into_iter()
                .map(|a| (a.step, (a.shape, a.tail)))
                .collect(),
        })
    }

    /// The emulator with its own device memory pool.
    pub fn with_pool(self, pool: Arc<Pool<EmulatedMemory>>) -> Emulator {
        Emulator { pool, ..self }
    }
}

/// A block of "device memory": 16-byte aligned, as the vector loads
/// need, between guard zones that every launch checks, so a kernel that
/// writes outside its buffers fails the test that runs it.
pub struct HostBlock {
    words: Box<[UnsafeCell<u128>]>,
    capacity: usize,
}

// SAFETY: the words are plain memory owned by the block; kernels write
// them only during a launch, which the run loop does not overlap with
// other uses of the buffer.
unsafe impl Send for HostBlock {}
unsafe impl Sync for HostBlock {}

/// 16-byte words of guard before and after each block.
const GUARD_WORDS: usize = 4;
/// What the guard zones (and the bytes that pad a buffer to its block's
/// size) hold.
const GUARD_BYTE: u8 = 0xa5;

impl HostBlock {
    fn new(capacity: usize) -> HostBlock {
        let guard = u128::from_ne_bytes([GUARD_BYTE; 16]);
        let data = capacity.div_ceil(16);
        let words = (0..GUARD_WORDS + data + GUARD_WORDS)
            .map(|w| {
                let inside = (GUARD_WORDS..GUARD_WORDS + data).contains(&w);
                UnsafeCell::new(if inside { 0 } else { guard })
            })
            .collect();
        HostBlock { words, capacity }
    }

    fn ptr(&self) -> *mut u8 {
        // SAFETY: the data words start after the leading guard.
        unsafe { UnsafeCell::raw_get(self.words.as_ptr().add(GUARD_WORDS)).cast() }
    }

    /// Whether nothing was written outside the first `len` bytes.
    fn guards_intact(&self, len: usize) -> bool {
        let all = UnsafeCell::raw_get(self.words.as_ptr()).cast::<u8>();
        // SAFETY: the whole allocation, read while no kernel runs.
        let all = unsafe { std::slice::from_raw_parts(all, self.words.len() * 16) };
        let start = GUARD_WORDS * 16;
        all[..start]
            .iter()
            .chain(&all[start + len..])
            .all(|&b| b == GUARD_BYTE)
    }
}

/// Emulated device memory: blocks with guard zones.
pub struct EmulatedMemory;

impl Allocator for EmulatedMemory {
    type Block = HostBlock;

    fn allocate(&self, bytes: usize) -> Result<HostBlock> {
        Ok(HostBlock::new(bytes))
    }

    fn free(&self, block: HostBlock, _bytes: usize) {
        drop(block);
    }
}

/// The emulated GPU's memory pool: the same pool the CUDA backend keeps
/// per GPU (size classes, bounds, release), over [`EmulatedMemory`].
pub fn device_pool() -> &'static Arc<Pool<EmulatedMemory>> {
    static POOL: LazyLock<Arc<Pool<EmulatedMemory>>> =
        LazyLock::new(|| Arc::new(Pool::new(EmulatedMemory, 1 << 30)));
    &POOL
}

/// A buffer in emulated device memory: a pooled block whose bytes past the
/// buffer's length are guard bytes too.
pub type HostBuffer = Pooled<EmulatedMemory>;

fn ptr(b: &HostBuffer) -> *mut u8 {
    b.block().ptr()
}

/// A buffer of `len` bytes from a pool: zero-filled, with guard bytes
/// from `len` to the end of its block (a reused block held another
/// buffer's bytes there).
fn take(pool: &Arc<Pool<EmulatedMemory>>, len: usize) -> Result<HostBuffer> {
    let (b, _) = Pooled::take(pool, len)?;
    let capacity = b.block().capacity;
    // SAFETY: the block holds `capacity` bytes and no kernel runs.
    unsafe {
        std::ptr::write_bytes(ptr(&b), 0, len);
        std::ptr::write_bytes(
            ptr(&b).add(len),
            GUARD_BYTE,
            capacity.div_ceil(16) * 16 - len,
        );
    }
    Ok(b)
}

impl Launcher for Emulator {
    type Buffer = HostBuffer;

    fn upload(&self, bytes: &[u8]) -> Result<HostBuffer> {
        let mut b = take(&self.pool, bytes.len())?;
        self.overwrite(&mut b, bytes)?;
        Ok(b)
    }

    fn zeroed(&self, len: usize) -> Result<HostBuffer> {
        take(&self.pool, len)
    }

    fn download(&self, buffer: &HostBuffer) -> Result<Vec<u8>> {
        // SAFETY: `len` bytes of the block, read while no kernel runs.
        Ok(unsafe { std::slice::from_raw_parts(ptr(buffer), buffer.len()) }.to_vec())
    }

    fn overwrite(&self, buffer: &mut HostBuffer, bytes: &[u8]) -> Result<()> {
        assert_eq!(
            bytes.len(),
            buffer.len(),
            "an overwrite keeps the buffer's length"
        );
        // SAFETY: the buffer holds `len` bytes and is borrowed mutably.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr(buffer), bytes.len()) };
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        // Launches return when their threads have joined.
        Ok(())
    }

    fn scratch_bytes(&self, kernel: &Kernel) -> usize {
        scratch_bytes(kernel)
    }

    fn step_applies_tail(&self, step: usize) -> bool {
        self.steps.get(&step).is_some_and(|(_, tail)| *tail)
    }

    fn device_step(
        &self,
        step: usize,
        buffers: &[&HostBuffer],
        status: &HostBuffer,
    ) -> Result<bool> {
        let Some((shape, _)) = self.steps.get(&step) else {
            return Ok(false);
        };
        if shape.blocks == 0 {
            return Ok(true);
        }
        let pointers: Vec<*mut u8> = buffers.iter().map(|b| ptr(b)).collect();
        // SAFETY: the entry was generated for this step with one buffer
        // per view; check_plan proved the views inside them.
        unsafe {
            let entry = self
                .library
                .get::<StepEntry>(format!("kiln_emu_step_{step}").as_bytes())
                .map_err(failed)?;
            entry(
                pointers.as_ptr(),
                ptr(status) as *mut i32,
                shape.blocks,
                shape.threads,
            );
        }
        if buffers
            .iter()
            .chain([&status])
            .any(|b| !b.block().guards_intact(b.len()))
        {
            return Err(failed(format!(
                "the kernel of step {step} wrote outside its buffers"
            )));
        }
        Ok(true)
    }

    fn launch(
        &self,
        index: usize,
        kernel: &Kernel,
        args: &[&HostBuffer],
        status: &HostBuffer,
        scratch: Option<&HostBuffer>,
    ) -> Result<()> {
        let pointers: Vec<*mut u8> = args.iter().map(|b| ptr(b)).collect();
        let shape = launch_shape(kernel);
        // SAFETY: the entry was generated for this kernel with one buffer
        // per argument; check_plan proved its accesses inside them.
        unsafe {
            let entry = self
                .library
                .get::<Entry>(format!("kiln_emu_entry_{index}").as_bytes())
                .map_err(failed)?;
            let scratch = scratch.map_or(std::ptr::null_mut(), ptr);
            entry(
                pointers.as_ptr(),
                ptr(status),
                scratch,
                shape.blocks,
                shape.threads,
            );
        }
        let touched = args.iter().copied().chain([status]).chain(scratch);
        if touched
            .into_iter()
            .any(|b| !b.block().guards_intact(b.len()))
        {
            return Err(failed(format!(
                "kernel {} wrote outside its buffers",
                kernel.name
            )));
        }
        Ok(())
    }
}
