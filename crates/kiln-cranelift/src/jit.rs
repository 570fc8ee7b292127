//! Compiling kernels to machine code, and the cache of compiled kernels.
//!
//! Compiled kernels are kept by their key (the kernel without its name and
//! buffers, [`Kernel::key`], compared by structure): compiling a graph
//! twice, or two graphs that share a kernel, generates each kernel once.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use kiln_ir::{Error, ErrorKind, Result};
use kiln_passes::plan::{Kernel, KernelKey};
use kiln_runtime::host::KernelCode;

use crate::codegen::{self, generate};

type KernelFn = unsafe extern "C" fn(*const *mut u8, i64, i64) -> i32;

/// Machine code of one compilation, freed when no kernel uses it.
struct Code(Mutex<Option<JITModule>>);

impl Drop for Code {
    fn drop(&mut self) {
        if let Ok(mut m) = self.0.lock() {
            if let Some(module) = m.take() {
                // SAFETY: every kernel pointing into this module holds an
                // `Arc<Code>`; the last one is gone.
                unsafe { module.free_memory() };
            }
        }
    }
}

/// A kernel compiled to machine code.
pub struct CompiledKernel {
    entry: KernelFn,
    /// The Cranelift IR it was compiled from.
    pub clif: String,
    /// The machine instructions Cranelift chose (before register names are
    /// final), for `kiln dump`.
    pub machine: String,
    pub vectorized: bool,
    _code: Arc<Code>,
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

/// What a compiled kernel is kept by: the kernel's structure, and whether
/// vector code was asked for.
type CacheKey = (KernelKey, bool);

/// Compiled kernels by key.
static CACHE: LazyLock<Mutex<HashMap<CacheKey, Arc<CompiledKernel>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Cached kernels beyond this count are dropped (the cache starts over).
const CACHE_CAPACITY: usize = 4096;

/// How many kernels the cache holds.
pub fn cached_kernels() -> usize {
    CACHE.lock().map(|c| c.len()).unwrap_or(0)
}

/// Compiles kernels (those in the cache cost nothing when `reuse` is set).
pub fn compile(kernels: &[&Kernel], vector: bool, reuse: bool) -> Result<Vec<Arc<CompiledKernel>>> {
    let keys: Vec<CacheKey> = kernels.iter().map(|k| (k.key(), vector)).collect();
    let mut out: Vec<Option<Arc<CompiledKernel>>> = {
        let cache = CACHE
            .lock()
            .map_err(|_| Error::new(ErrorKind::Backend, "the kernel cache is poisoned"))?;
        keys.iter()
            .map(|k| if reuse { cache.get(k).cloned() } else { None })
            .collect()
    };
    let missing: Vec<usize> = (0..kernels.len()).filter(|&i| out[i].is_none()).collect();
    if missing.is_empty() {
        return Ok(out.into_iter().map(|k| k.expect("cached")).collect());
    }
    let isa = isa()?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let mut ctx = module.make_context();
    let mut defined = Vec::new();
    for &i in &missing {
        let kernel = kernels[i];
        // Vector code first; if Cranelift cannot lower it, scalar code.
        let mut attempt = vector;
        loop {
            let generated = generate(kernel, isa.as_ref(), attempt).ok_or_else(|| {
                Error::new(
                    ErrorKind::Backend,
                    format!(
                        "kernel {}: an op has no machine code for its dtypes",
                        kernel.name
                    ),
                )
            })?;
            let clif = generated.func.display().to_string();
            let name = format!("kiln_{}_{}_{}", kernel.name, i, defined.len());
            let id = module
                .declare_function(
                    &name,
                    Linkage::Local,
                    &codegen::signature(isa.default_call_conv()),
                )
                .map_err(|e| Error::new(ErrorKind::Backend, format!("cranelift: {e}")))?;
            ctx.func = generated.func;
            ctx.set_disasm(true);
            let result = module.define_function(id, &mut ctx);
            let machine = ctx
                .compiled_code()
                .and_then(|c| c.vcode.clone())
                .unwrap_or_default();
            module.clear_context(&mut ctx);
            match result {
                Ok(()) => {
                    defined.push((i, id, clif, machine, generated.vectorized));
                    break;
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
    module
        .finalize_definitions()
        .map_err(|e| Error::new(ErrorKind::Backend, format!("cranelift: {e}")))?;
    let pointers: Vec<_> = defined
        .iter()
        .map(|(_, id, _, _, _)| module.get_finalized_function(*id))
        .collect();
    let code = Arc::new(Code(Mutex::new(Some(module))));
    let mut cache = CACHE
        .lock()
        .map_err(|_| Error::new(ErrorKind::Backend, "the kernel cache is poisoned"))?;
    if cache.len() + defined.len() > CACHE_CAPACITY {
        cache.clear();
    }
    for ((i, _, clif, machine, vectorized), ptr) in defined.into_iter().zip(pointers) {
        // SAFETY: the function was compiled with the kernel signature.
        let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) };
        let compiled = Arc::new(CompiledKernel {
            entry,
            clif,
            machine,
            vectorized,
            _code: code.clone(),
        });
        cache.insert(keys[i].clone(), compiled.clone());
        out[i] = Some(compiled);
    }
    Ok(out.into_iter().map(|k| k.expect("compiled")).collect())
}
