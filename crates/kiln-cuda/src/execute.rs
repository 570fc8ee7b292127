//! Running a checked plan through a [`Launcher`]: buffers on the device,
//! kernels launched in plan order, the status word, matmuls on the device
//! where the launcher can (cuBLAS), and the steps that run on the host
//! (other matmuls through `gemm`, interpreted islands) with their operands
//! copied over and back.
//!
//! The loop is written once against the [`Launcher`] trait: the CUDA
//! driver ([`crate::device::Loaded`]) implements it, and so does the test
//! suite's host emulation of the generated CUDA C, which is how the whole
//! backend (code generation, launch shapes, this loop) is tested on
//! machines without a GPU.

use std::time::{Duration, Instant};

use kiln_ir::graph::Func;
use kiln_ir::infer::InferCtx;
use kiln_ir::{DefaultDType, Device, Error, ErrorKind, Module, Result};
use kiln_passes::plan::{BufferId, BufferRole, Kernel, KernelPlan, Step, TensorView};
use kiln_runtime::Tensor;
use kiln_runtime::backend::bind_inputs;
use kiln_runtime::executor::write_view;
use kiln_runtime::matmul::{MatrixArg, matmul};
use kiln_runtime::storage::Storage;

use crate::codegen::scratch_bytes;

/// What runs a plan's kernels: device memory and launches.
pub trait Launcher {
    /// One buffer in device memory.
    type Buffer;

    /// A buffer holding a copy of `bytes`.
    fn upload(&self, bytes: &[u8]) -> Result<Self::Buffer>;
    /// A buffer of `len` zero bytes (`len` ≥ 1).
    fn zeroed(&self, len: usize) -> Result<Self::Buffer>;
    /// A host copy of a buffer.
    fn download(&self, buffer: &Self::Buffer) -> Result<Vec<u8>>;
    /// Overwrites a buffer with `bytes` (of its length).
    fn overwrite(&self, buffer: &mut Self::Buffer, bytes: &[u8]) -> Result<()>;
    /// Computes a matmul step (`out = a @ b`, each with its buffer) on
    /// the device if it can; `Ok(false)` leaves it to the host.
    fn matmul(&self, _operands: [(&Self::Buffer, &TensorView); 3]) -> Result<bool> {
        Ok(false)
    }

    /// Waits until everything launched so far has finished.
    fn synchronize(&self) -> Result<()>;

    /// Launches kernel number `index` of the plan (in plan order) with
    /// one buffer per kernel argument, the 4-byte status word and, for a
    /// kernel that needs one ([`crate::codegen::scratch_bytes`]), its
    /// scratch memory, in the shape [`crate::codegen::launch_shape`] gives.
    fn launch(
        &self,
        index: usize,
        kernel: &Kernel,
        args: &[&Self::Buffer],
        status: &Self::Buffer,
        scratch: Option<&Self::Buffer>,
    ) -> Result<()>;
}

/// Runs a checked plan (`islands` from `check_plan`): inputs in parameter
/// order on the host, results back on the host, labelled with the devices
/// the program declares.
pub fn execute<L: Launcher>(
    launcher: &L,
    func: &Func,
    plan: &KernelPlan,
    islands: &[Option<Module>],
    default_dtype: DefaultDType,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>> {
    // One run and no timed ones.
    time_steps(launcher, func, plan, islands, default_dtype, inputs, 0).map(|(_, results)| results)
}

/// The results of the last run, copied to the host.
fn results<L: Launcher>(
    launcher: &L,
    func: &Func,
    plan: &KernelPlan,
    memory: &Memory<L::Buffer>,
) -> Result<Vec<Tensor>> {
    plan.outputs
        .iter()
        .zip(&func.returns)
        .map(|(v, r)| {
            let bytes = launcher.download(memory.get(v.buffer))?;
            Tensor::from_storage(
                storage_of(&bytes)?,
                v.geometry.clone(),
                v.dtype,
                func.ty(*r).device,
            )
        })
        .collect()
}

/// Times `runs` runs of a checked plan with its inputs already in device
/// memory and its results left there (after one first run): what the
/// device takes, without the copies [`execute`] makes each run. The
/// results of the last run come with the times.
pub fn time_steps<L: Launcher>(
    launcher: &L,
    func: &Func,
    plan: &KernelPlan,
    islands: &[Option<Module>],
    default_dtype: DefaultDType,
    inputs: &[Tensor],
    runs: usize,
) -> Result<(Vec<Duration>, Vec<Tensor>)> {
    let inputs = bind_inputs(func, inputs)?;
    let mut memory = Memory::new(launcher, plan, &inputs)?;
    let status = launcher.zeroed(4)?;
    run_steps(launcher, plan, islands, default_dtype, &mut memory, &status)?;
    launcher.synchronize()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        run_steps(launcher, plan, islands, default_dtype, &mut memory, &status)?;
        launcher.synchronize()?;
        times.push(start.elapsed());
    }
    check_status(launcher, &status)?;
    Ok((times, results(launcher, func, plan, &memory)?))
}

/// ZeroDivisionError if a kernel set the status word.
fn check_status<L: Launcher>(launcher: &L, status: &L::Buffer) -> Result<()> {
    if launcher.download(status)?.iter().any(|&b| b != 0) {
        return Err(Error::new(ErrorKind::Runtime, "ZeroDivisionError"));
    }
    Ok(())
}

/// The plan's steps in order, on buffers in device memory.
fn run_steps<L: Launcher>(
    launcher: &L,
    plan: &KernelPlan,
    islands: &[Option<Module>],
    default_dtype: DefaultDType,
    buffers: &mut Memory<L::Buffer>,
    status: &L::Buffer,
) -> Result<()> {
    let mut kernel_index = 0;
    for (step, island) in plan.steps.iter().zip(islands) {
        match step {
            Step::Kernel(k) => {
                let index = kernel_index;
                kernel_index += 1;
                if k.outer_count() == 0 {
                    continue;
                }
                let args: Vec<&L::Buffer> = k.args.iter().map(|&b| buffers.get(b)).collect();
                launcher.launch(index, k, &args, status, buffers.scratch[index].as_ref())?;
            }
            Step::Matmul { a, b, out } => {
                let on_device = [a, b, out].map(|v| (buffers.get(v.buffer), v));
                if launcher.matmul(on_device)? {
                    continue;
                }
                let mut host = HostCopies::download(launcher, buffers, [a, b, out])?;
                fn arg<'v>(v: &'v TensorView, host: &mut HostCopies) -> MatrixArg<'v> {
                    MatrixArg {
                        ptr: host.ptr(v.buffer),
                        dtype: v.dtype,
                        geometry: &v.geometry,
                    }
                }
                let (pa, pb, po) = (arg(a, &mut host), arg(b, &mut host), arg(out, &mut host));
                // SAFETY: the views were checked against their buffers, of
                // which these are full copies.
                unsafe { matmul(pa, pb, po)? };
                host.upload(launcher, buffers, [out])?;
            }
            Step::Interpret {
                inputs: views,
                outputs,
                ..
            } => {
                let module = island.as_ref().expect("check_plan lays out every island");
                let mut host =
                    HostCopies::download(launcher, buffers, views.iter().chain(outputs))?;
                let tensors = views
                    .iter()
                    .map(|v| host.tensor(v))
                    .collect::<Result<Vec<_>>>()?;
                let ctx = InferCtx { default_dtype };
                let results = kiln_runtime::interp::run_func(module.entry()?, &ctx, &tensors)?;
                for (r, v) in results.iter().zip(outputs) {
                    // SAFETY: the view was checked against its buffer, of
                    // which this is a full copy.
                    unsafe { write_view(r, v, host.ptr(v.buffer)) };
                }
                host.upload(launcher, buffers, outputs)?;
            }
        }
    }
    Ok(())
}

/// The device memory of a plan's buffers: inputs and outputs their own,
/// temps their slot's (temps whose lives do not overlap share a slot, as
/// on the CPU; kernels and copies run in plan order on one stream).
struct Memory<B> {
    own: Vec<Option<B>>,
    slots: Vec<B>,
    slot_of: Vec<Option<usize>>,
    /// Each kernel's scratch memory, if it needs some.
    scratch: Vec<Option<B>>,
}

impl<B> Memory<B> {
    fn new<L: Launcher<Buffer = B>>(
        launcher: &L,
        plan: &KernelPlan,
        inputs: &[Tensor],
    ) -> Result<Memory<B>> {
        let slots = plan
            .slots
            .iter()
            .map(|&bytes| launcher.zeroed(bytes.max(1)))
            .collect::<Result<Vec<_>>>()?;
        let mut own = Vec::with_capacity(plan.buffers.len());
        let mut slot_of = Vec::with_capacity(plan.buffers.len());
        for b in &plan.buffers {
            let (memory, slot) = match b.role {
                BufferRole::Input(i) => (Some(launcher.upload(inputs[i].storage().bytes())?), None),
                BufferRole::Output => (Some(launcher.zeroed(b.bytes.max(1))?), None),
                BufferRole::Temp { slot } => (None, Some(slot)),
            };
            own.push(memory);
            slot_of.push(slot);
        }
        let scratch = plan
            .kernels()
            .map(|k| match scratch_bytes(k) {
                0 => Ok(None),
                bytes => launcher.zeroed(bytes).map(Some),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Memory {
            own,
            slots,
            slot_of,
            scratch,
        })
    }

    fn len(&self) -> usize {
        self.own.len()
    }

    fn get(&self, id: BufferId) -> &B {
        match self.slot_of[id.index()] {
            Some(slot) => &self.slots[slot],
            None => self.own[id.index()]
                .as_ref()
                .expect("inputs and outputs have memory"),
        }
    }

    fn get_mut(&mut self, id: BufferId) -> &mut B {
        match self.slot_of[id.index()] {
            Some(slot) => &mut self.slots[slot],
            None => self.own[id.index()]
                .as_mut()
                .expect("inputs and outputs have memory"),
        }
    }
}

fn storage_of(bytes: &[u8]) -> Result<Storage> {
    let mut storage = Storage::for_overwrite(bytes.len())?;
    storage
        .bytes_mut()
        .expect("a new storage is not shared")
        .copy_from_slice(bytes);
    Ok(storage)
}

/// Host copies of the buffers a host step reads or writes, by buffer.
struct HostCopies(Vec<Option<Vec<u8>>>);

impl HostCopies {
    fn download<'v, L: Launcher>(
        launcher: &L,
        buffers: &Memory<L::Buffer>,
        views: impl IntoIterator<Item = &'v TensorView>,
    ) -> Result<HostCopies> {
        let mut copies: Vec<Option<Vec<u8>>> = vec![None; buffers.len()];
        for v in views {
            let i = v.buffer.index();
            if copies[i].is_none() {
                copies[i] = Some(launcher.download(buffers.get(v.buffer))?);
            }
        }
        Ok(HostCopies(copies))
    }

    fn bytes(&mut self, buffer: BufferId) -> &mut Vec<u8> {
        self.0[buffer.index()]
            .as_mut()
            .expect("a host step's views are downloaded")
    }

    fn ptr(&mut self, buffer: BufferId) -> *mut u8 {
        self.bytes(buffer).as_mut_ptr()
    }

    fn tensor(&mut self, v: &TensorView) -> Result<Tensor> {
        let storage = storage_of(self.bytes(v.buffer))?;
        Tensor::from_storage(storage, v.geometry.clone(), v.dtype, Device::CPU)
    }

    fn upload<'v, L: Launcher>(
        &mut self,
        launcher: &L,
        buffers: &mut Memory<L::Buffer>,
        views: impl IntoIterator<Item = &'v TensorView>,
    ) -> Result<()> {
        for v in views {
            let bytes = self.bytes(v.buffer);
            launcher.overwrite(buffers.get_mut(v.buffer), bytes)?;
        }
        Ok(())
    }
}
