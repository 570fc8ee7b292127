//! The CUDA driver (cudarc) as a [`Launcher`]: contexts, device buffers,
//! host↔device copies, kernel launches and cuBLAS matmuls on one stream.
//!
//! The driver library is loaded when the first program runs; its absence,
//! or a machine without a GPU, is an error, never a panic. cuBLAS is
//! loaded at the first matmul; without it matmuls run on the host.
//!
//! Device memory is pooled per GPU by the runtime's [`Pool`] (size
//! classes, bounded by twice the recent high-water mark of live bytes and
//! by [`set_cache_limit`], released by [`release_cached`]), as host memory
//! is: a freed device buffer serves the next request of its class without
//! a driver allocation.

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cublas::CudaBlas;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use kiln_ir::{DType, Error, ErrorKind, Result};
use kiln_passes::plan::{Kernel, KernelPlan, TensorView};

use crate::blas;
use crate::codegen::{LaunchShape, launch_shape};
use kiln_runtime::execute::Launcher;
use kiln_runtime::pool::{Allocator, Pool, PoolStats, Pooled};

/// Device memory of one GPU, allocated on its default stream.
pub struct DeviceMemory {
    stream: Arc<CudaStream>,
}

impl Allocator for DeviceMemory {
    type Block = CudaSlice<u8>;

    fn allocate(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream
            .alloc_zeros::<u8>(bytes)
            .map_err(|e| driver_error(format!("allocating {bytes} bytes of device memory"), e))
    }

    fn free(&self, block: CudaSlice<u8>, _bytes: usize) {
        // cudarc frees it on its stream, after the work queued there.
        drop(block);
    }
}

/// A device buffer: a pooled block of its class, of which the first
/// `len()` bytes are the buffer.
pub type DeviceBuffer = Pooled<DeviceMemory>;

/// The most device memory a GPU's pool keeps when no limit is set.
const DEFAULT_DEVICE_CACHE_LIMIT: usize = 4 << 30;

/// Each GPU's pool, made with its context.
static POOLS: Mutex<Vec<Option<Arc<Pool<DeviceMemory>>>>> = Mutex::new(Vec::new());

/// The device memory pool of GPU `ordinal`.
fn pool(ordinal: usize) -> Result<Arc<Pool<DeviceMemory>>> {
    let ctx = context(ordinal)?;
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if pools.len() <= ordinal {
        pools.resize(ordinal + 1, None);
    }
    Ok(pools[ordinal]
        .get_or_insert_with(|| {
            Arc::new(Pool::new(
                DeviceMemory {
                    stream: ctx.default_stream(),
                },
                DEFAULT_DEVICE_CACHE_LIMIT,
            ))
        })
        .clone())
}

/// Frees every pooled device buffer of every GPU; returns the bytes.
pub fn release_cached() -> usize {
    let pools: Vec<_> = POOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .flatten()
        .cloned()
        .collect();
    pools.iter().map(|p| p.release()).sum()
}

/// Sets how many bytes of freed device memory each GPU's pool keeps.
pub fn set_cache_limit(bytes: usize) {
    for p in POOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .flatten()
    {
        p.set_limit(bytes);
    }
}

/// Each GPU's pool counters, by ordinal (GPUs that ran nothing are absent).
pub fn memory_stats() -> Vec<(usize, PoolStats)> {
    POOLS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.as_ref().map(|p| (i, p.stats())))
        .collect()
}

/// Whether the CUDA driver library can be loaded.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

fn driver_error(what: impl std::fmt::Display, e: cudarc::driver::DriverError) -> Error {
    Error::new(ErrorKind::Backend, format!("CUDA: {what}: {e}"))
}

/// The context of GPU `ordinal`, created once.
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>> {
    static CONTEXTS: OnceLock<std::sync::Mutex<Vec<Option<Arc<CudaContext>>>>> = OnceLock::new();
    if !driver_present() {
        return Err(Error::new(
            ErrorKind::Backend,
            "CUDA driver not found (libcuda.so): the cuda backend generates and \
             compiles code without a GPU, but runs it only on a machine with one",
        ));
    }
    let contexts = CONTEXTS.get_or_init(Default::default);
    let mut contexts = contexts
        .lock()
        .map_err(|_| Error::new(ErrorKind::Backend, "CUDA: the context table is poisoned"))?;
    if contexts.len() <= ordinal {
        contexts.resize(ordinal + 1, None);
    }
    if let Some(ctx) = &contexts[ordinal] {
        return Ok(ctx.clone());
    }
    let ctx = CudaContext::new(ordinal).map_err(|e| driver_error(format!("cuda:{ordinal}"), e))?;
    contexts[ordinal] = Some(ctx.clone());
    Ok(ctx)
}

/// The compute capability of GPU `ordinal` as `major * 10 + minor`.
pub fn compute_capability(ordinal: usize) -> Result<u32> {
    let (major, minor) = context(ordinal)?
        .compute_capability()
        .map_err(|e| driver_error("compute capability", e))?;
    Ok((major * 10 + minor) as u32)
}

/// A plan's kernels loaded on a GPU, launched on its default stream.
pub struct Loaded {
    stream: Arc<CudaStream>,
    pool: Arc<Pool<DeviceMemory>>,
    functions: Vec<CudaFunction>,
    /// Each kernel's launch shape, derived once at load.
    shapes: Vec<LaunchShape>,
    /// The kernels of the plan's steps that have one ([`crate::steps`]),
    /// by step.
    /// Each step kernel, its launch shape, and whether it applies the
    /// step's tail.
    steps: std::collections::HashMap<usize, (CudaFunction, LaunchShape, bool)>,
    /// cuBLAS on the same stream, made at the first matmul; `None` where
    /// libcublas is missing (matmuls then run on the host).
    blas: OnceLock<std::result::Result<Option<CudaBlas>, Error>>,
    /// The last kernel launched: a kernel's fault (an illegal address)
    /// surfaces at the next synchronizing call, which names it.
    last_kernel: Mutex<Option<String>>,
}

impl Loaded {
    /// A driver error of a synchronizing call, naming the kernel that
    /// may have caused it.
    fn sync_error(&self, what: &str, e: cudarc::driver::DriverError) -> Error {
        let last = self.last_kernel.lock().ok().and_then(|k| k.clone());
        match last {
            Some(kernel) => driver_error(
                format!(
                    "{what} (after kernel {kernel}; CUDA_LAUNCH_BLOCKING=1 pins a kernel's fault to its launch)"
                ),
                e,
            ),
            None => driver_error(what, e),
        }
    }

    fn blas(&self) -> Result<Option<&CudaBlas>> {
        let blas = self.blas.get_or_init(|| {
            // SAFETY: only tries to open the library.
            if !unsafe { cudarc::cublas::sys::is_culib_present() } {
                return Ok(None);
            }
            CudaBlas::new(self.stream.clone())
                .map(Some)
                .map_err(|e| Error::new(ErrorKind::Backend, format!("cuBLAS: {e:?}")))
        });
        blas.as_ref().map(Option::as_ref).map_err(Clone::clone)
    }
}

/// Loads a plan's PTX on GPU `ordinal` and finds each kernel's function.
pub fn load(ordinal: usize, ptx: &str, plan: &KernelPlan) -> Result<Loaded> {
    let ctx = context(ordinal)?;
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .map_err(|e| driver_error("loading the PTX", e))?;
    let function = |name: &str| {
        module
            .load_function(name)
            .map_err(|e| driver_error(format!("kernel {name}"), e))
    };
    let kernels: Vec<&Kernel> = plan.kernels().collect();
    let functions = kernels
        .iter()
        .map(|k| function(&k.name))
        .collect::<Result<Vec<_>>>()?;
    let steps = crate::steps::kernels(plan)
        .into_iter()
        .map(|a| Ok((a.step, (function(&a.name)?, a.shape, a.tail))))
        .collect::<Result<_>>()?;
    Ok(Loaded {
        stream: ctx.default_stream(),
        pool: pool(ordinal)?,
        functions,
        steps,
        shapes: kernels.iter().map(|k| launch_shape(k)).collect(),
        blas: OnceLock::new(),
        last_kernel: Mutex::new(None),
    })
}

impl Launcher for Loaded {
    type Buffer = DeviceBuffer;

    fn upload(&self, bytes: &[u8]) -> Result<DeviceBuffer> {
        let (mut buffer, _) = Pooled::take(&self.pool, bytes.len())?;
        self.overwrite(&mut buffer, bytes)?;
        Ok(buffer)
    }

    fn zeroed(&self, len: usize) -> Result<DeviceBuffer> {
        let (mut buffer, reused) = Pooled::take(&self.pool, len)?;
        if reused {
            self.stream
                .memset_zeros(&mut buffer.block_mut().slice_mut(..len))
                .map_err(|e| driver_error("zeroing device memory", e))?;
        }
        Ok(buffer)
    }

    fn download(&self, buffer: &DeviceBuffer) -> Result<Vec<u8>> {
        self.stream
            .clone_dtoh(&buffer.block().slice(..buffer.len()))
            .map_err(|e| self.sync_error("copying to the host", e))
    }

    fn overwrite(&self, buffer: &mut DeviceBuffer, bytes: &[u8]) -> Result<()> {
        let len = buffer.len();
        self.stream
            .memcpy_htod(bytes, &mut buffer.block_mut().slice_mut(..len))
            .map_err(|e| self.sync_error("copying to the device", e))
    }

    fn matmul(
        &self,
        [a, b, out]: [(&DeviceBuffer, &TensorView); 3],
        _weight: bool,
    ) -> Result<bool> {
        use cudarc::cublas::sys::{
            cublasComputeType_t as Compute, cublasOperation_t as Op, cudaDataType as Data,
        };
        let Some(gemm) = blas::gemm(a.1, b.1, out.1) else {
            return Ok(false);
        };
        let Some(cublas) = self.blas()? else {
            return Ok(false);
        };
        let (data, compute) = match gemm.dtype {
            DType::F64 => (Data::CUDA_R_64F, Compute::CUBLAS_COMPUTE_64F),
            DType::F32 => (Data::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F),
            DType::F16 => (Data::CUDA_R_16F, Compute::CUBLAS_COMPUTE_32F),
            _ => (Data::CUDA_R_16BF, Compute::CUBLAS_COMPUTE_32F),
        };
        // alpha = 1, beta = 0 in the compute type.
        let (one64, zero64, one32, zero32) = (1.0f64, 0.0f64, 1.0f32, 0.0f32);
        let (alpha, beta): (*const std::ffi::c_void, *const std::ffi::c_void) =
            if gemm.dtype == DType::F64 {
                ((&raw const one64).cast(), (&raw const zero64).cast())
            } else {
                ((&raw const one32).cast(), (&raw const zero32).cast())
            };
        let op = |t: bool| if t { Op::CUBLAS_OP_T } else { Op::CUBLAS_OP_N };
        let size = gemm.dtype.itemsize() as u64;
        // cuBLAS's A is Kiln's b, its B is Kiln's a.
        let base = [b.0, a.0, out.0].map(|s| s.block().device_ptr(&self.stream).0);
        let at = |o: usize, offset: i64| (base[o] + offset as u64 * size) as *mut std::ffi::c_void;
        for run in &gemm.runs {
            // SAFETY: blas::gemm derived every argument from views that
            // check_plan proved inside their buffers; alpha and beta live
            // until the call returns (host pointer mode).
            unsafe {
                cudarc::cublas::result::gemm_strided_batched_ex(
                    *cublas.handle(),
                    op(gemm.trans_a),
                    op(gemm.trans_b),
                    gemm.m,
                    gemm.n,
                    gemm.k,
                    alpha,
                    at(0, run.offsets[0]),
                    data,
                    gemm.lda,
                    run.strides[0],
                    at(1, run.offsets[1]),
                    data,
                    gemm.ldb,
                    run.strides[1],
                    beta,
                    at(2, run.offsets[2]),
                    data,
                    gemm.ldc,
                    run.strides[2],
                    run.count,
                    compute,
                    cudarc::cublas::sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
            .map_err(|e| Error::new(ErrorKind::Backend, format!("cuBLAS matmul: {e:?}")))?;
        }
        Ok(true)
    }

    fn scratch_bytes(&self, kernel: &Kernel) -> usize {
        crate::codegen::scratch_bytes(kernel)
    }

    fn step_applies_tail(&self, step: usize) -> bool {
        self.steps.get(&step).is_some_and(|(_, _, tail)| *tail)
    }

    fn device_step(
        &self,
        step: usize,
        buffers: &[&DeviceBuffer],
        status: &DeviceBuffer,
    ) -> Result<bool> {
        let Some((function, shape, _)) = self.steps.get(&step) else {
            return Ok(false);
        };
        if shape.blocks == 0 {
            return Ok(true);
        }
        let pointers: Vec<u64> = buffers
            .iter()
            .chain([&status])
            .map(|b| b.block().device_ptr(&self.stream).0)
            .collect();
        let mut builder = self.stream.launch_builder(function);
        for p in &pointers {
            builder.arg(p);
        }
        let config = LaunchConfig {
            grid_dim: (shape.blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let name = format!("the kernel of step {step}");
        if let Ok(mut last) = self.last_kernel.lock() {
            *last = Some(name.clone());
        }
        // SAFETY: the kernel takes one pointer per view of the step, in
        // the step's order, then the status word's; check_plan proved each
        // view inside its buffer and the kernel reads and writes only the
        // views' elements (and the status word).
        unsafe { builder.launch(config) }
            .map(|_| true)
            .map_err(|e| driver_error(name, e))
    }

    fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(|e| self.sync_error("synchronizing", e))
    }

    fn launch(
        &self,
        index: usize,
        kernel: &Kernel,
        args: &[&DeviceBuffer],
        status: &DeviceBuffer,
        scratch: Option<&DeviceBuffer>,
    ) -> Result<()> {
        // Device addresses as 64-bit values: a buffer may be several arguments.
        let address = |b: &DeviceBuffer| b.block().device_ptr(&self.stream).0;
        let pointers: Vec<u64> = args.iter().map(|b| address(b)).collect();
        let status_ptr: u64 = address(status);
        let scratch_ptr: Option<u64> = scratch.map(address);
        let mut builder = self.stream.launch_builder(&self.functions[index]);
        for p in &pointers {
            builder.arg(p);
        }
        builder.arg(&status_ptr);
        if let Some(p) = &scratch_ptr {
            builder.arg(p);
        }
        let shape = self.shapes[index];
        let config = LaunchConfig {
            grid_dim: (shape.blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        if let Ok(mut last) = self.last_kernel.lock() {
            *last = Some(kernel.name.clone());
        }
        // SAFETY: the kernel takes one pointer per argument buffer, the
        // status word and its scratch if it has one; check_plan proved
        // every access inside its buffer, scratch_bytes sized the scratch.
        unsafe { builder.launch(config) }
            .map(|_| ())
            .map_err(|e| driver_error(format!("kernel {}", kernel.name), e))
    }
}
