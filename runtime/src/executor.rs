//! Runs a kernel plan on host memory: buffers, compiled kernels split
//! across threads, library matmuls, and interpreted islands.
//!
//! Before anything runs, [`HostExecutor::new`] checks that every access of
//! every kernel stays inside its buffer for the whole iteration space, so
//! generated code, which does no bounds checks, cannot touch memory outside
//! its buffers.

use std::sync::Mutex;

use kiln_ir::infer::InferCtx;
use kiln_ir::view::Geometry;
use kiln_ir::{DefaultDType, Device, Error, ErrorKind, Module, Result};
use kiln_passes::plan::{Access, BufferRole, Kernel, KernelPlan, Step, TensorView};
use rayon::prelude::*;

use crate::backend::bind_inputs;
use crate::matmul::{MatrixArg, matmul};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// A compiled kernel.
pub trait KernelCode: Send + Sync {
    /// Runs iterations `begin..end` of the kernel's first dim (the whole
    /// kernel when it has no outer dims: `0..1`).
    ///
    /// # Safety
    /// `args[i]` must point at the plan buffer of the kernel's argument `i`,
    /// and calls running at once must cover disjoint ranges.
    unsafe fn run(&self, args: &[*mut u8], begin: i64, end: i64) -> Result<()>;
}

/// Kernels smaller than this many elements run on one thread.
const PARALLEL_ELEMENTS: i64 = 1 << 15;

/// A plan with a compiled kernel for each of its kernel steps.
pub struct HostExecutor {
    plan: KernelPlan,
    kernels: Vec<Box<dyn KernelCode>>,
    /// Interpreted islands, laid out once.
    islands: Vec<Option<Module>>,
    default_dtype: DefaultDType,
    /// Temp slots kept between runs.
    slots: Mutex<Vec<Option<Storage>>>,
}

/// The extent an access covers: its smallest and largest element offsets.
fn extent(space: &[i64], offset: i64, strides: &[i64]) -> (i64, i64) {
    let mut lo = offset;
    let mut hi = offset;
    for (&n, &s) in space.iter().zip(strides) {
        if n > 1 {
            let span = s * (n - 1);
            if span < 0 {
                lo += span;
            } else {
                hi += span;
            }
        }
    }
    (lo, hi)
}

fn check_access(plan: &KernelPlan, k: &Kernel, a: &Access) -> Result<()> {
    // Nothing runs without outer iterations; an access that moves along an
    // empty reduced dim is only used inside loops that never run.
    let never_used = k.outer_count() == 0
        || k.space[k.outer_rank..]
            .iter()
            .zip(&a.strides[k.outer_rank..])
            .any(|(&n, &s)| n == 0 && s != 0);
    if never_used {
        return Ok(());
    }
    let buffer = &plan.buffers[k.args[a.arg].index()];
    let (lo, hi) = extent(&k.space, a.offset, &a.strides);
    let end = (hi + 1).checked_mul(a.dtype.itemsize() as i64);
    if lo < 0 || end.is_none_or(|e| e as u128 > buffer.bytes as u128) {
        return Err(Error::new(
            ErrorKind::Backend,
            format!(
                "kernel {}: an access of {} reaches elements {lo}..={hi}, outside its {}-byte buffer",
                k.name, k.args[a.arg], buffer.bytes
            ),
        ));
    }
    Ok(())
}

fn check_view(plan: &KernelPlan, v: &TensorView) -> Result<()> {
    let g = &v.geometry;
    if g.shape.contains(&0) {
        return Ok(());
    }
    let (lo, hi) = extent(&g.shape, g.offset, &g.strides);
    let bytes = plan.buffers[v.buffer.index()].bytes as i64;
    if lo < 0 || (hi + 1) * v.dtype.itemsize() as i64 > bytes {
        return Err(Error::new(
            ErrorKind::Backend,
            format!("a view of {} reaches outside its buffer", v.buffer),
        ));
    }
    Ok(())
}

/// Checks that every access of every kernel, and every view of a library
/// or interpreted step, stays inside its buffer for the whole iteration
/// space (generated code does no bounds checks and cannot need them), and
/// lays out each interpreted island once. Every executor runs this first.
pub fn check_plan(plan: &KernelPlan, default_dtype: DefaultDType) -> Result<Vec<Option<Module>>> {
    let mut islands = Vec::with_capacity(plan.steps.len());
    for step in &plan.steps {
        islands.push(None);
        match step {
            Step::Kernel(k) => {
                for a in &k.accesses {
                    check_access(plan, k, a)?;
                }
            }
            Step::Matmul { a, b, out } => {
                for v in [a, b, out] {
                    check_view(plan, v)?;
                }
            }
            Step::Interpret {
                func,
                inputs,
                outputs,
            } => {
                for v in inputs.iter().chain(outputs) {
                    check_view(plan, v)?;
                }
                let module = Module::single(func.clone(), default_dtype);
                *islands.last_mut().expect("pushed above") = Some(module);
            }
        }
    }
    for v in &plan.outputs {
        check_view(plan, v)?;
    }
    Ok(islands)
}

impl HostExecutor {
    /// Checks the plan ([`check_plan`]) and pairs its kernel steps with code.
    pub fn new(
        plan: KernelPlan,
        kernels: Vec<Box<dyn KernelCode>>,
        default_dtype: DefaultDType,
    ) -> Result<HostExecutor> {
        if plan.kernels().count() != kernels.len() {
            return Err(Error::new(
                ErrorKind::Backend,
                "the plan and its compiled kernels do not match",
            ));
        }
        let islands = check_plan(&plan, default_dtype)?;
        let slots = Mutex::new(vec![None; plan.slots.len()]);
        Ok(HostExecutor {
            plan,
            kernels,
            islands,
            default_dtype,
            slots,
        })
    }

    pub fn plan(&self) -> &KernelPlan {
        &self.plan
    }

    /// Runs the plan on inputs in parameter order.
    pub fn run(&self, func: &kiln_ir::graph::Func, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let inputs = bind_inputs(func, inputs)?;
        // Temps come from the slots kept from the last run (or new ones);
        // a concurrent run takes fresh slots.
        let mut slots: Vec<Option<Storage>> = match self.slots.try_lock() {
            Ok(mut kept) => std::mem::take(&mut *kept),
            Err(_) => vec![None; self.plan.slots.len()],
        };
        slots.resize(self.plan.slots.len(), None);
        for (slot, &bytes) in slots.iter_mut().zip(&self.plan.slots) {
            if slot.as_ref().is_none_or(|s| s.len() < bytes) {
                *slot = Some(Storage::for_overwrite(bytes)?);
            }
        }
        let mut storages: Vec<Option<Storage>> = Vec::with_capacity(self.plan.buffers.len());
        let mut pointers: Vec<*mut u8> = Vec::with_capacity(self.plan.buffers.len());
        for b in &self.plan.buffers {
            let (storage, ptr) = match b.role {
                BufferRole::Input(i) => {
                    let s = inputs[i].storage().clone();
                    // Kernels only read inputs.
                    let p = s.as_ptr() as *mut u8;
                    (Some(s), p)
                }
                BufferRole::Output => {
                    let mut s = Storage::for_overwrite(b.bytes)?;
                    let p = s.as_mut_ptr().expect("a new storage is not shared");
                    (Some(s), p)
                }
                BufferRole::Temp { slot } => {
                    let s = slots[slot].as_mut().expect("allocated above");
                    let p = s
                        .as_mut_ptr()
                        .ok_or_else(|| Error::new(ErrorKind::Backend, "a temp slot is shared"))?;
                    (None, p)
                }
            };
            storages.push(storage);
            pointers.push(ptr);
        }
        let mut kernel_index = 0;
        for (step, island) in self.plan.steps.iter().zip(&self.islands) {
            match step {
                Step::Kernel(k) => {
                    let code = &self.kernels[kernel_index];
                    kernel_index += 1;
                    let args: Vec<*mut u8> = k.args.iter().map(|b| pointers[b.index()]).collect();
                    // Errors of the program itself (ZeroDivisionError) read
                    // as the interpreter's; others name the kernel.
                    run_kernel(k, code.as_ref(), &args).map_err(|e| match e.kind() {
                        ErrorKind::Runtime => e,
                        _ => e.context(format!("kernel {}", k.name)),
                    })?;
                }
                Step::Matmul { a, b, out } => {
                    fn arg<'v>(v: &'v TensorView, pointers: &[*mut u8]) -> MatrixArg<'v> {
                        MatrixArg {
                            ptr: pointers[v.buffer.index()],
                            dtype: v.dtype,
                            geometry: &v.geometry,
                        }
                    }
                    // SAFETY: the views were checked against their buffers,
                    // and a product's output is a fresh buffer.
                    unsafe { matmul(arg(a, &pointers), arg(b, &pointers), arg(out, &pointers))? };
                }
                Step::Interpret {
                    inputs: views,
                    outputs,
                    ..
                } => {
                    let module = island.as_ref().expect("islands are laid out");
                    let tensors = views
                        .iter()
                        .map(|v| {
                            let storage = self.storage_of(v, &storages, &slots);
                            Tensor::from_storage(storage, v.geometry.clone(), v.dtype, Device::CPU)
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let ctx = InferCtx {
                        default_dtype: self.default_dtype,
                    };
                    let results = crate::interp::run_func(module.entry()?, &ctx, &tensors)?;
                    for (r, v) in results.iter().zip(outputs) {
                        // SAFETY: the pointer is the view's buffer.
                        unsafe { write_view(r, v, pointers[v.buffer.index()]) };
                    }
                }
            }
        }
        let outputs = self
            .plan
            .outputs
            .iter()
            .map(|v| {
                let storage = self.storage_of(v, &storages, &slots);
                Tensor::from_storage(storage, v.geometry.clone(), v.dtype, Device::CPU)
            })
            .collect::<Result<Vec<_>>>()?;
        if let Ok(mut kept) = self.slots.try_lock() {
            *kept = slots;
        }
        Ok(outputs)
    }

    fn storage_of(
        &self,
        v: &TensorView,
        storages: &[Option<Storage>],
        slots: &[Option<Storage>],
    ) -> Storage {
        match self.plan.buffers[v.buffer.index()].role {
            BufferRole::Temp { slot } => slots[slot].clone().expect("allocated"),
            _ => storages[v.buffer.index()].clone().expect("allocated"),
        }
    }
}

/// Copies a tensor's values into a view of a buffer (same dtype and shape).
///
/// # Safety
/// `base` must point at the view's buffer, which [`check_plan`] checked
/// the view against.
pub unsafe fn write_view(t: &Tensor, v: &TensorView, base: *mut u8) {
    let size = v.dtype.itemsize();
    let bytes = t.storage().bytes();
    let src = t.geometry();
    let dst: &Geometry = &v.geometry;
    for index in crate::tensor::Indices::new(&dst.shape) {
        let at = |g: &Geometry| {
            g.offset
                + index
                    .iter()
                    .zip(&g.strides)
                    .map(|(i, s)| i * s)
                    .sum::<i64>()
        };
        let (from, to) = (at(src) as usize * size, at(dst) as usize * size);
        // SAFETY: the view was checked against its buffer; the source is a
        // tensor of the same shape and dtype.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes[from..from + size].as_ptr(), base.add(to), size);
        }
    }
}

/// Runs a kernel, splitting its first dim across threads when it is big.
fn run_kernel(k: &Kernel, code: &dyn KernelCode, args: &[*mut u8]) -> Result<()> {
    // Reductions over empty dims still write their identity.
    if k.outer_count() == 0 {
        return Ok(());
    }
    let extent = if k.outer_rank > 0 { k.space[0] } else { 1 };
    let elements: i64 = k.space.iter().product();
    let threads = rayon::current_num_threads() as i64;
    if elements < PARALLEL_ELEMENTS || extent < 2 || threads < 2 {
        // SAFETY: one call covers the whole range.
        return unsafe { code.run(args, 0, extent) };
    }
    // Several chunks per thread balance uneven progress.
    let chunks = (threads * 4).min(extent);
    let step = (extent + chunks - 1) / chunks;
    let args = SendPointers(args);
    (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (begin, end) = (c * step, ((c + 1) * step).min(extent));
            if begin >= end {
                return Ok(());
            }
            let args = &args;
            // SAFETY: the chunks are disjoint ranges of the first dim, which
            // is an outer (independent) dim.
            unsafe { code.run(args.0, begin, end) }
        })
        .collect::<Result<Vec<()>>>()
        .map(|_| ())
}

/// Buffer pointers shared by the threads of one kernel (each writes its
/// own disjoint range).
struct SendPointers<'a>(&'a [*mut u8]);

// SAFETY: the pointed-to buffers outlive the parallel loop, and threads
// write disjoint elements.
unsafe impl Sync for SendPointers<'_> {}
unsafe impl Send for SendPointers<'_> {}
