//! Compiling kernels to machine code (in parallel, one context per
//! kernel), and the table of compiled kernels.
//!
//! Kernels compiled together share one Cranelift `JITModule`, whose memory
//! is freed when the last kernel using it is dropped: a compiled program
//! holds its kernels, so dropping the last handle to a program frees its
//! machine code. Live kernels are found again by their key (the kernel
//! without its name and buffers, [`Kernel::key`], compared by structure):
//! compiling two programs that share a kernel generates it once. The
//! table holds kernels weakly; keeping programs alive is the job of the
//! program cache above (bounded, least recently used evicted).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use cranelift_codegen::Context;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::isa::{OwnedTargetIsa, TargetIsa};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{
    BranchProtection, JITBuilder, JITMemoryKind, JITMemoryProvider, JITModule, SystemMemoryProvider,
};
use cranelift_module::{FuncId, Linkage, Module, ModuleReloc, ModuleResult, default_libcall_names};
use kiln_ir::{Error, ErrorKind, Result};
use kiln_passes::plan::{Kernel, KernelKey};
use kiln_runtime::host::KernelCode;
use rayon::prelude::*;

use crate::codegen::{self, generate};

type KernelFn = unsafe extern "C" fn(*const *mut u8, i64, i64) -> i32;

/// Bytes of machine code and constants held by live modules.
static CODE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Live modules.
static MODULES: AtomicUsize = AtomicUsize::new(0);

/// The system's JIT memory, counting what it maps: each kind of memory
/// (code, read-only, writable) in whole pages.
struct CountedMemory {
    inner: SystemMemoryProvider,
    /// Bytes asked for, by kind.
    asked: [usize; 3],
    counted: Arc<AtomicUsize>,
}

const PAGE: usize = 4096;

impl JITMemoryProvider for CountedMemory {
    fn allocate(
        &mut self,
        size: usize,
        align: u64,
        kind: JITMemoryKind,
    ) -> std::io::Result<*mut u8> {
        let k = match kind {
            JITMemoryKind::Executable => 0,
            JITMemoryKind::ReadOnly => 1,
            JITMemoryKind::Writable => 2,
        };
        self.asked[k] += size + align as usize;
        let pages: usize = self.asked.iter().map(|b| b.next_multiple_of(PAGE)).sum();
        self.counted.store(pages, Ordering::Relaxed);
        self.inner.allocate(size, align, kind)
    }

    unsafe fn free_memory(&mut self) {
        // SAFETY: forwarded; the caller guarantees nothing uses the memory.
        unsafe { self.inner.free_memory() }
    }

    fn finalize(&mut self, branch_protection: BranchProtection) -> ModuleResult<()> {
        self.inner.finalize(branch_protection)
    }
}

/// Machine code of one compilation, freed when no kernel uses it.
struct Code {
    module: Mutex<Option<JITModule>>,
    bytes: usize,
}

impl Drop for Code {
    fn drop(&mut self) {
        let module = match self.module.get_mut() {
            Ok(m) => m.take(),
            Err(e) => e.into_inner().take(),
        };
        if let Some(module) = module {
            // SAFETY: every kernel pointing into this module holds an
            // `Arc<Code>`; the last one is gone.
            unsafe { module.free_memory() };
        }
        CODE_BYTES.fetch_sub(self.bytes, Ordering::Relaxed);
        MODULES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A kernel compiled to machine code.
pub struct CompiledKernel {
    entry: KernelFn,
    /// Whether it runs 4-lane vector code.
    pub vectorized: bool,
    code: Arc<Code>,
}

impl CompiledKernel {
    /// Bytes of the module its code lives in (shared with the kernels
    /// compiled with it).
    pub fn module_bytes(&self) -> usize {
        self.code.bytes
    }

    /// Whether two kernels live in one module.
    pub fn same_module(&self, other: &CompiledKernel) -> bool {
        Arc::ptr_eq(&self.code, &other.code)
    }
}

/// The text of a kernel compiled for a listing.
pub struct KernelText {
    /// The Cranelift IR it was compiled from.
    pub clif: String,
    /// The machine instructions Cranelift chose (before register names are
    /// final).
    pub machine: String,
    /// Whether it runs 4-lane vector code.
    pub vectorized: bool,
}

/// What the JIT holds now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JitStats {
    /// Bytes of machine code and constants of live modules (whole pages).
    pub code_bytes: usize,
    /// Live modules (one per compilation that generated code).
    pub modules: usize,
    /// Live kernels that later compilations can share.
    pub kernels: usize,
}

/// What the JIT holds now.
pub fn stats() -> JitStats {
    let kernels = KERNELS
        .lock()
        .map(|t| t.map.values().filter(|k| k.strong_count() > 0).count())
        .unwrap_or(0);
    JitStats {
        code_bytes: CODE_BYTES.load(Ordering::Relaxed),
        modules: MODULES.load(Ordering::Relaxed),
        kernels,
    }
}

impl KernelCode for CompiledKernel {
    unsafe fn run(&self, args: &[*mut u8], begin: i64, end: i64) -> Result<()> {
        // SAFETY: the caller passes the kernel's buffers; the executor has
        // checked every access against them.
        let status = unsafe { (self.entry)(args.as_ptr(), begin, end) };
        match status {
            0 => Ok(()),
            _ => Err(Error::new(ErrorKind::Runtime, "ZeroDivisionError")),
        }
    }
}

/// The target: this machine, with Cranelift optimizing for speed.
fn isa() -> Result<OwnedTargetIsa> {
    static ISA: LazyLock<std::result::Result<OwnedTargetIsa, String>> = LazyLock::new(|| {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v).map_err(|e| format!("cranelift flag {k}: {e}"))
        };
        set(&mut flags, "opt_level", "none")?;
        set(&mut flags, "is_pic", "false")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(
            &mut flags,
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )?;
        let builder = cranelift_native::builder()
            .map_err(|e| format!("Cranelift does not support this machine: {e}"))?;
        builder
            .finish(settings::Flags::new(flags))
            .map_err(|e| format!("Cranelift: {e}"))
    });
    ISA.clone().map_err(|e| Error::new(ErrorKind::Backend, e))
}

/// What a compiled kernel is found by: the kernel's structure, and whether
/// vector code was asked for.
type TableKey = (KernelKey, bool);

/// Live compiled kernels by key, held weakly; entries of dropped kernels
/// are swept when the table has doubled since the last sweep.
struct Table {
    map: HashMap<TableKey, Weak<CompiledKernel>>,
    sweep_at: usize,
}

static KERNELS: LazyLock<Mutex<Table>> = LazyLock::new(|| {
    Mutex::new(Table {
        map: HashMap::new(),
        sweep_at: 256,
    })
});

fn table() -> std::sync::MutexGuard<'static, Table> {
    // Inserting and sweeping leave the table consistent at every step.
    KERNELS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Compiles kernels (those alive elsewhere cost nothing when `reuse` is
/// set).
pub fn compile(kernels: &[&Kernel], vector: bool, reuse: bool) -> Result<Vec<Arc<CompiledKernel>>> {
    let keys: Vec<TableKey> = kernels.iter().map(|k| (k.key(), vector)).collect();
    let mut out: Vec<Option<Arc<CompiledKernel>>> = {
        let t = table();
        keys.iter()
            .map(|k| {
                if reuse {
                    t.map.get(k).and_then(Weak::upgrade)
                } else {
                    None
                }
            })
            .collect()
    };
    // Kernels with the same key in one program (a Llama block's rotary
    // products of q and of k) compile once.
    let mut first_of: HashMap<&TableKey, usize> = HashMap::new();
    let mut missing: Vec<usize> = Vec::new();
    let mut same_as: Vec<(usize, usize)> = Vec::new();
    for i in (0..kernels.len()).filter(|&i| out[i].is_none()) {
        match first_of.get(&keys[i]) {
            Some(&first) => same_as.push((i, first)),
            None => {
                first_of.insert(&keys[i], i);
                missing.push(i);
            }
        }
    }
    if missing.is_empty() {
        return Ok(out.into_iter().map(|k| k.expect("found")).collect());
    }
    let to_compile: Vec<&Kernel> = missing.iter().map(|&i| kernels[i]).collect();
    let compiled = compile_module(&to_compile, vector, false)?;
    let mut t = table();
    for (&i, (kernel, _)) in missing.iter().zip(compiled) {
        t.map.insert(keys[i].clone(), Arc::downgrade(&kernel));
        out[i] = Some(kernel);
    }
    for (i, first) in same_as {
        out[i] = out[first].clone();
    }
    if t.map.len() >= t.sweep_at {
        t.map.retain(|_, k| k.strong_count() > 0);
        t.sweep_at = (2 * t.map.len()).max(256);
    }
    Ok(out.into_iter().map(|k| k.expect("compiled")).collect())
}

/// Compiles kernels afresh for a listing: their Cranelift IR and machine
/// instructions (nothing is kept; programs keep no text).
pub fn listings(kernels: &[&Kernel], vector: bool) -> Result<Vec<KernelText>> {
    Ok(compile_module(kernels, vector, true)?
        .into_iter()
        .map(|(_, text)| text.expect("asked for"))
        .collect())
}

/// One kernel compiled to machine code, not yet placed in a module.
struct MachineCode {
    bytes: Vec<u8>,
    alignment: u64,
    relocs: Vec<ModuleReloc>,
    vectorized: bool,
    text: Option<KernelText>,
}

/// Cranelift's pass timer off: it reads the clock at every pass of every
/// function, several percent of a kernel's compile time.
struct NoTiming;

impl cranelift_codegen::timing::Profiler for NoTiming {
    fn start_pass(&self, _: cranelift_codegen::timing::Pass) -> Box<dyn std::any::Any> {
        Box::new(())
    }
}

/// Compiles one kernel: vector code first, scalar code if Cranelift
/// cannot lower the vector code.
fn machine_code(
    kernel: &Kernel,
    id: FuncId,
    isa: &dyn TargetIsa,
    vector: bool,
    with_text: bool,
) -> Result<MachineCode> {
    cranelift_codegen::timing::set_thread_profiler(Box::new(NoTiming));
    let mut attempt = vector;
    loop {
        let generated = generate(kernel, isa, attempt).ok_or_else(|| {
            Error::new(
                ErrorKind::Backend,
                format!(
                    "kernel {}: an op has no machine code for its dtypes",
                    kernel.name
                ),
            )
        })?;
        let clif = with_text.then(|| generated.func.display().to_string());
        let mut ctx = Context::for_function(generated.func);
        ctx.set_disasm(with_text);
        let outcome = ctx.compile(isa, &mut ControlPlane::default()).map(|_| ());
        match outcome {
            Ok(()) => {
                let compiled = ctx.compiled_code().expect("just compiled");
                let alignment = u64::from(compiled.buffer.alignment)
                    .max(u64::from(isa.function_alignment().minimum))
                    .max(isa.symbol_alignment());
                let bytes = compiled.code_buffer().to_vec();
                let machine = with_text.then(|| compiled.vcode.clone().unwrap_or_default());
                let relocs = compiled
                    .buffer
                    .relocs()
                    .iter()
                    .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, id))
                    .collect();
                let text = clif.zip(machine).map(|(clif, machine)| KernelText {
                    clif,
                    machine,
                    vectorized: generated.vectorized,
                });
                return Ok(MachineCode {
                    bytes,
                    alignment,
                    relocs,
                    vectorized: generated.vectorized,
                    text,
                });
            }
            Err(_) if generated.vectorized => attempt = false,
            Err(e) => {
                return Err(Error::new(
                    ErrorKind::Backend,
                    format!("kernel {}: cranelift: {e:?}", kernel.name),
                ));
            }
        }
    }
}

/// Compiles kernels into one new module.
fn compile_module(
    kernels: &[&Kernel],
    vector: bool,
    with_text: bool,
) -> Result<Vec<(Arc<CompiledKernel>, Option<KernelText>)>> {
    let isa = isa()?;
    let counted = Arc::new(AtomicUsize::new(0));
    let mut builder = JITBuilder::with_isa(isa.clone(), default_libcall_names());
    builder.memory_provider(Box::new(CountedMemory {
        inner: SystemMemoryProvider::new(),
        asked: [0; 3],
        counted: counted.clone(),
    }));
    let mut module = JITModule::new(builder);
    // Declared first, so that kernels compile to machine code in parallel
    // (each in its own context), then are placed in the module in order.
    let signature = codegen::signature(isa.default_call_conv());
    let ids = kernels
        .iter()
        .enumerate()
        .map(|(i, kernel)| {
            module
                .declare_function(
                    &format!("kiln_{}_{i}", kernel.name),
                    Linkage::Local,
                    &signature,
                )
                .map_err(|e| Error::new(ErrorKind::Backend, format!("cranelift: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let machine_code = kernels
        .par_iter()
        .zip(&ids)
        .map(|(kernel, &id)| machine_code(kernel, id, isa.as_ref(), vector, with_text))
        .collect::<Result<Vec<_>>>()?;
    let mut defined = Vec::with_capacity(kernels.len());
    for (m, &id) in machine_code.into_iter().zip(&ids) {
        module
            .define_function_bytes(id, m.alignment, &m.bytes, &m.relocs)
            .map_err(|e| Error::new(ErrorKind::Backend, format!("cranelift: {e}")))?;
        defined.push((id, m.vectorized, m.text));
    }
    module
        .finalize_definitions()
        .map_err(|e| Error::new(ErrorKind::Backend, format!("cranelift: {e}")))?;
    let pointers: Vec<_> = defined
        .iter()
        .map(|(id, _, _)| module.get_finalized_function(*id))
        .collect();
    let bytes = counted.load(Ordering::Relaxed);
    CODE_BYTES.fetch_add(bytes, Ordering::Relaxed);
    MODULES.fetch_add(1, Ordering::Relaxed);
    let code = Arc::new(Code {
        module: Mutex::new(Some(module)),
        bytes,
    });
    Ok(defined
        .into_iter()
        .zip(pointers)
        .map(|((_, vectorized, text), ptr)| {
            // SAFETY: the function was compiled with the kernel signature.
            let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) };
            let kernel = Arc::new(CompiledKernel {
                entry,
                vectorized,
                code: code.clone(),
            });
            (kernel, text)
        })
        .collect())
}
