//! Running a plan on a GPU through the CUDA driver (cudarc): device
//! buffers, host↔device copies, kernel launches on one stream, the status
//! word, and the steps that run on the host (matmul through `gemm`,
//! interpreted islands) with their operands copied over and back.
//!
//! The driver library is loaded when the first program runs; its absence,
//! or a machine without a GPU, is an error, never a panic.

use std::sync::{Arc, OnceLock};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use kiln_ir::graph::Func;
use kiln_ir::infer::InferCtx;
use kiln_ir::{DefaultDType, Error, ErrorKind, Module, Result};
use kiln_passes::plan::{BufferRole, Kernel, KernelPlan, Step, TensorView};
use kiln_runtime::Tensor;
use kiln_runtime::backend::bind_inputs;
use kiln_runtime::executor::write_view;
use kiln_runtime::matmul::{MatrixArg, matmul};
use kiln_runtime::storage::Storage;

use crate::codegen::BLOCK;

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

/// A plan's kernels loaded on a GPU.
pub struct Loaded {
    ctx: Arc<CudaContext>,
    functions: Vec<CudaFunction>,
}

/// Loads PTX on GPU `ordinal` and finds each kernel's function.
pub fn load(ordinal: usize, ptx: &str, kernels: &[&Kernel]) -> Result<Loaded> {
    let ctx = context(ordinal)?;
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .map_err(|e| driver_error("loading the PTX", e))?;
    let functions = kernels
        .iter()
        .map(|k| {
            module
                .load_function(&k.name)
                .map_err(|e| driver_error(format!("kernel {}", k.name), e))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Loaded { ctx, functions })
}

/// The launch shape of a kernel: one thread per element (grid-stride) or
/// one block per row.
fn launch_config(k: &Kernel) -> LaunchConfig {
    const MAX_BLOCKS: i64 = 65_535;
    let blocks = if k.outer_rank == k.rank() {
        let total: i64 = k.space.iter().product();
        (total + BLOCK as i64 - 1) / BLOCK as i64
    } else {
        k.outer_count()
    };
    LaunchConfig {
        grid_dim: (blocks.clamp(1, MAX_BLOCKS) as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Runs a checked plan on a GPU: inputs in parameter order on the host,
/// results back on the host.
pub fn run<'s>(
    loaded: &Loaded,
    func: &Func,
    plan: &'s KernelPlan,
    islands: &[Option<Module>],
    default_dtype: DefaultDType,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>> {
    let inputs = bind_inputs(func, inputs)?;
    let stream = loaded.ctx.default_stream();
    let mut buffers: Vec<CudaSlice<u8>> = Vec::with_capacity(plan.buffers.len());
    for b in &plan.buffers {
        let slice = match b.role {
            BufferRole::Input(i) => stream.clone_htod(inputs[i].storage().bytes()),
            // Temps get their own memory (no slot sharing on the GPU yet).
            BufferRole::Output | BufferRole::Temp { .. } => {
                stream.alloc_zeros::<u8>(b.bytes.max(1))
            }
        }
        .map_err(|e| driver_error("allocating device memory", e))?;
        buffers.push(slice);
    }
    let mut status = stream
        .alloc_zeros::<i32>(1)
        .map_err(|e| driver_error("allocating device memory", e))?;
    let mut kernel_index = 0;
    for (step, island) in plan.steps.iter().zip(islands) {
        match step {
            Step::Kernel(k) => {
                let function = &loaded.functions[kernel_index];
                kernel_index += 1;
                if k.outer_count() == 0 {
                    continue;
                }
                launch(&stream, function, k, &buffers, &mut status)?;
            }
            Step::Matmul { a, b, out } => {
                let mut host =
                    download_buffers(&stream, &buffers, &[a.buffer, b.buffer, out.buffer])?;
                let (pa, pb, po) = (
                    host_ptr(&mut host, a),
                    host_ptr(&mut host, b),
                    host_ptr(&mut host, out),
                );
                let arg = |v: &'s TensorView, ptr: *mut u8| MatrixArg {
                    ptr,
                    dtype: v.dtype,
                    geometry: &v.geometry,
                };
                let (pa, pb, po) = (arg(a, pa), arg(b, pb), arg(out, po));
                // SAFETY: the views were checked against their buffers, of
                // which these are full copies; the output is a fresh buffer.
                unsafe { matmul(pa, pb, po)? };
                upload(&stream, &mut buffers, out.buffer.index(), &host)?;
            }
            Step::Interpret {
                inputs: views,
                outputs,
                ..
            } => {
                let module = island.as_ref().expect("islands are laid out");
                let mut ids: Vec<_> = views.iter().chain(outputs).map(|v| v.buffer).collect();
                ids.dedup();
                let mut host = download_buffers(&stream, &buffers, &ids)?;
                let tensors = views
                    .iter()
                    .map(|v| {
                        let bytes = &host
                            .iter()
                            .find(|(i, _)| *i == v.buffer.index())
                            .expect("downloaded")
                            .1;
                        let mut storage = Storage::for_overwrite(bytes.len())?;
                        storage
                            .bytes_mut()
                            .expect("a new storage is not shared")
                            .copy_from_slice(bytes);
                        Tensor::from_storage(
                            storage,
                            v.geometry.clone(),
                            v.dtype,
                            kiln_ir::Device::CPU,
                        )
                    })
                    .collect::<Result<Vec<_>>>()?;
                let ctx = InferCtx { default_dtype };
                let results = kiln_runtime::interp::run_func(module.entry()?, &ctx, &tensors)?;
                for (r, v) in results.iter().zip(outputs) {
                    // SAFETY: the view was checked against its buffer, of
                    // which this is a full copy.
                    unsafe { write_view(r, v, host_ptr(&mut host, v)) };
                }
                for v in outputs {
                    upload(&stream, &mut buffers, v.buffer.index(), &host)?;
                }
            }
        }
    }
    let flag = stream
        .clone_dtoh(&status)
        .map_err(|e| driver_error("reading the status", e))?;
    if flag.first().copied().unwrap_or(0) != 0 {
        return Err(Error::new(ErrorKind::Runtime, "ZeroDivisionError"));
    }
    plan.outputs
        .iter()
        .zip(&func.returns)
        .map(|(v, r)| {
            let bytes = stream
                .clone_dtoh(&buffers[v.buffer.index()])
                .map_err(|e| driver_error("copying a result to the host", e))?;
            let mut storage = Storage::for_overwrite(bytes.len())?;
            storage
                .bytes_mut()
                .expect("a new storage is not shared")
                .copy_from_slice(&bytes);
            Tensor::from_storage(storage, v.geometry.clone(), v.dtype, func.ty(*r).device)
        })
        .collect()
}

fn launch(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    k: &Kernel,
    buffers: &[CudaSlice<u8>],
    status: &mut CudaSlice<i32>,
) -> Result<()> {
    // Device addresses as 64-bit values: a buffer may be several arguments.
    let pointers: Vec<u64> = k
        .args
        .iter()
        .map(|b| buffers[b.index()].device_ptr(stream).0)
        .collect();
    let status_ptr: u64 = status.device_ptr(stream).0;
    let mut builder = stream.launch_builder(function);
    for p in &pointers {
        builder.arg(p);
    }
    builder.arg(&status_ptr);
    // SAFETY: the kernel takes one pointer per argument buffer and the
    // status word; check_plan proved every access inside its buffer.
    unsafe { builder.launch(launch_config(k)) }
        .map(|_| ())
        .map_err(|e| driver_error(format!("kernel {}", k.name), e))
}

/// The host copy of a view's buffer.
fn host_ptr(host: &mut [(usize, Vec<u8>)], v: &TensorView) -> *mut u8 {
    host.iter_mut()
        .find(|(i, _)| *i == v.buffer.index())
        .map(|(_, h)| h.as_mut_ptr())
        .expect("the buffer was downloaded")
}

fn download_buffers(
    stream: &Arc<CudaStream>,
    buffers: &[CudaSlice<u8>],
    ids: &[kiln_passes::plan::BufferId],
) -> Result<Vec<(usize, Vec<u8>)>> {
    let mut out: Vec<(usize, Vec<u8>)> = Vec::new();
    for id in ids {
        if out.iter().any(|(i, _)| *i == id.index()) {
            continue;
        }
        let bytes = stream
            .clone_dtoh(&buffers[id.index()])
            .map_err(|e| driver_error("copying to the host", e))?;
        out.push((id.index(), bytes));
    }
    Ok(out)
}

fn upload(
    stream: &Arc<CudaStream>,
    buffers: &mut [CudaSlice<u8>],
    index: usize,
    host: &[(usize, Vec<u8>)],
) -> Result<()> {
    let bytes = &host
        .iter()
        .find(|(i, _)| *i == index)
        .expect("downloaded")
        .1;
    stream
        .memcpy_htod(bytes.as_slice(), &mut buffers[index])
        .map_err(|e| driver_error("copying to the device", e))
}
