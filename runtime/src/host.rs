//! Host memory as a [`Launcher`]: buffers are storage in this process,
//! kernels are compiled code split across threads, and matmuls go to
//! `gemm`. Inputs are used in place, results are handed out without a
//! copy, and temp slots come from the memory pool each run.

use kiln_ir::{DefaultDType, Error, ErrorKind, Result};
use kiln_passes::plan::{Kernel, KernelPlan, TensorView};
use rayon::prelude::*;

use std::time::Duration;

use crate::bind::Packing;
use crate::execute::{
    CheckedPlan, Launcher, execute, execute_bound, execute_donated, execute_donated_bound,
    profile_steps, profile_steps_bound,
};
use crate::matmul::{MatrixArg, Weight, matmul_weight};
use crate::packed::Packed;
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

/// Host memory and compiled kernels, one per kernel step of a plan.
pub(crate) struct HostLauncher {
    kernels: Vec<Box<dyn KernelCode>>,
}

/// Where a kernel reads and writes a host buffer. The plan check proved
/// every access inside it, and only results and temps (fresh storage no
/// one else holds a reference into) are written.
fn ptr(buffer: &Storage) -> *mut u8 {
    buffer.as_ptr() as *mut u8
}

/// A product's operand: a host buffer and its view.
fn matrix_arg<'v>((s, v): (&Storage, &'v TensorView)) -> MatrixArg<'v> {
    MatrixArg {
        ptr: ptr(s),
        dtype: v.dtype,
        geometry: &v.geometry,
    }
}

impl Launcher for HostLauncher {
    type Buffer = Storage;

    fn upload(&self, bytes: &[u8]) -> Result<Storage> {
        let mut storage = Storage::for_overwrite(bytes.len())?;
        storage
            .bytes_mut()
            .expect("a new storage is not shared")
            .copy_from_slice(bytes);
        Ok(storage)
    }

    fn zeroed(&self, len: usize) -> Result<Storage> {
        Storage::zeroed(len)
    }

    fn download(&self, buffer: &Storage) -> Result<Vec<u8>> {
        Ok(buffer.bytes().to_vec())
    }

    fn overwrite(&self, buffer: &mut Storage, bytes: &[u8]) -> Result<()> {
        // SAFETY: `buffer` holds `bytes.len()` bytes, and no reference into
        // it is alive while a step writes it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr(buffer), bytes.len()) };
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        // Kernels return when their threads have joined.
        Ok(())
    }

    fn launch(
        &self,
        index: usize,
        kernel: &Kernel,
        args: &[&Storage],
        _status: &Storage,
        _scratch: Option<&Storage>,
    ) -> Result<()> {
        let code = self.kernels.get(index).ok_or_else(|| {
            Error::new(
                ErrorKind::Backend,
                "the plan and its compiled kernels do not match",
            )
        })?;
        let args: Vec<*mut u8> = args.iter().map(|s| ptr(s)).collect();
        run_kernel(kernel, code.as_ref(), &args)
    }

    fn matmul(&self, [a, b, out]: [(&Storage, &TensorView); 3], weight: bool) -> Result<bool> {
        // SAFETY: the views were checked against their buffers, and a
        // product's output is a fresh buffer.
        let weight = weight.then(|| Weight::Input(b.0.buffer()));
        unsafe { matmul_weight(matrix_arg(a), matrix_arg(b), matrix_arg(out), weight)? };
        Ok(true)
    }

    fn matmul_bound(
        &self,
        [a, b, out]: [(&Storage, &TensorView); 3],
        packed: &Packed,
    ) -> Result<bool> {
        // SAFETY: as above; `b`'s bytes are not read (the packed copy's
        // are).
        unsafe {
            matmul_weight(
                matrix_arg(a),
                matrix_arg(b),
                matrix_arg(out),
                Some(Weight::Bound(packed)),
            )?
        };
        Ok(true)
    }

    fn embedding_bound(
        &self,
        packed: &Packed,
        (indices, index): (&Storage, &TensorView),
        (out, out_view): (&Storage, &TensorView),
    ) -> Result<bool> {
        let view = packed.view();
        fn operand<'v>(s: &Storage, v: &'v TensorView) -> crate::spatial::Operand<'v> {
            crate::spatial::Operand {
                ptr: ptr(s),
                geometry: &v.geometry,
            }
        }
        // The weight `[V, D]` is the panels' `Bᵀ`: row `r` is column `r`,
        // in panel `r / 64` at lane `r % 64`, its elements 64 apart.
        let rows = crate::gather::Rows {
            ptr: packed.storage().as_ptr() as *mut u8,
            shape: (view.n as i64, view.k as i64),
            col_stride: crate::packed::PANEL as i64,
        };
        let (panel, k) = (crate::packed::PANEL as i64, view.k as i64);
        // SAFETY: every row of the weight is inside the panels; the plan
        // checked the other views against their buffers.
        unsafe {
            crate::gather::embedding_rows(
                out_view.dtype,
                rows,
                |r| r / panel * panel * k + r % panel,
                (operand(indices, index), index.dtype),
                operand(out, out_view),
            )
        }
    }

    fn host_memory(&self) -> bool {
        true
    }

    fn donated(&self, tensor: &Tensor, bytes: usize) -> Option<Storage> {
        // The caller gave the tensor up and nothing else shares its
        // storage, which holds exactly the parameter's dense layout: the
        // result's step may write it.
        let (storage, g) = (tensor.storage(), tensor.geometry());
        let donated =
            storage.is_unique() && storage.len() == bytes && g.offset == 0 && g.is_contiguous();
        // (What was derived from its bytes, a packed copy, is forgotten:
        // the run writes them.)
        donated.then(|| {
            storage.buffer().rewritten();
            storage.clone()
        })
    }

    fn input(&self, tensor: &Tensor) -> Result<Storage> {
        // Kernels only read inputs (a donated input is written only by the
        // step that reads it, see `kiln_passes::plan::donate`).
        Ok(tensor.storage().clone())
    }

    fn output(&self, bytes: usize) -> Result<Storage> {
        Storage::for_overwrite(bytes)
    }

    fn slots(&self, sizes: &[usize]) -> Result<Vec<Storage>> {
        // Temps are written before they are read. Between runs they are in
        // the memory pool, not kept by the program: a run takes them back
        // without faulting a page, and an idle program holds nothing.
        sizes.iter().map(|&b| Storage::for_overwrite(b)).collect()
    }

    fn to_host(&self, buffer: &Storage) -> Result<Storage> {
        Ok(buffer.clone())
    }

    fn from_host(&self, buffer: &mut Storage, storage: &Storage) -> Result<()> {
        if buffer.same(storage) {
            Ok(())
        } else {
            self.overwrite(buffer, storage.bytes())
        }
    }
}

/// Runs a kernel, splitting its first dim across threads when it is big.
fn run_kernel(k: &Kernel, code: &dyn KernelCode, args: &[*mut u8]) -> Result<()> {
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

/// A checked plan with compiled code for each of its kernel steps, run in
/// host memory.
pub struct HostExecutor {
    checked: CheckedPlan,
    launcher: HostLauncher,
}

impl HostExecutor {
    /// Checks the plan ([`crate::execute::check_plan`]) and pairs its
    /// kernel steps with code.
    pub fn new(
        func: kiln_ir::graph::Func,
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
        Ok(HostExecutor {
            checked: CheckedPlan::new(func, plan, default_dtype)?,
            launcher: HostLauncher { kernels },
        })
    }

    /// The plan it runs.
    pub fn plan(&self) -> &KernelPlan {
        &self.checked.plan
    }

    /// Runs the plan on inputs in parameter order.
    pub fn run(&self, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        execute(&self.launcher, &self.checked, inputs)
    }

    /// Runs the plan, taking the inputs: results the plan may write in an
    /// input's storage are written there when no one else shares it
    /// ([`execute_donated`]).
    pub fn run_donated(&self, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        execute_donated(&self.launcher, &self.checked, inputs)
    }

    /// Each step's median time over `runs` runs ([`profile_steps`]).
    pub fn step_times(&self, inputs: &[Tensor], runs: usize) -> Result<Vec<(String, Duration)>> {
        profile_steps(&self.launcher, &self.checked, inputs, runs)
    }

    /// Packs the weights being bound that only the plan's packing products
    /// read ([`Executable::pack_bound`](crate::Executable::pack_bound)),
    /// one at a time, each weight's handle dropped before the next is
    /// packed.
    pub fn pack_bound(&self, weights: &mut [Option<Tensor>]) -> Result<Packing> {
        let func = &self.checked.func;
        crate::backend::check_input_count(&func.name, func.params.len(), weights.len())?;
        let views = self.checked.packed_params();
        let mut packing = vec![None; weights.len()];
        for (i, view) in views.into_iter().enumerate() {
            let Some(view) = view else { continue };
            let Some(given) = weights[i].take() else {
                continue;
            };
            // (Laid out as the parameter declares, as a run would.)
            let weight = crate::backend::bind_input(func, i, &given)?;
            drop(given);
            // The panels stand in for the weight only where they are as
            // large (a product of a slice of a weight packs less of it).
            let panels = view.n.div_ceil(crate::packed::PANEL) * crate::packed::PANEL * view.k * 4;
            if weight.geometry().storage_bytes(4)? > panels {
                weights[i] = Some(weight);
                continue;
            }
            let packed = crate::packed::pack_bound(&weight, view)?;
            // (The panels hold at least the weight's elements, so they can
            // stand in for it.)
            let stand_in = packed.as_ref().and_then(|p| {
                let (geometry, dtype) = (weight.geometry().clone(), weight.dtype());
                Tensor::from_storage(p.storage().clone(), geometry, dtype, weight.device()).ok()
            });
            match stand_in {
                Some(stand_in) => {
                    weights[i] = Some(stand_in);
                    packing[i] = packed;
                }
                None => weights[i] = Some(weight),
            }
        }
        Ok(Packing::new(packing))
    }

    /// Runs with the stand-ins of `packing` ([`HostExecutor::pack_bound`]);
    /// with `donate`, as [`HostExecutor::run_donated`].
    pub fn run_bound(
        &self,
        inputs: Vec<Tensor>,
        donate: bool,
        packing: &Packing,
    ) -> Result<Vec<Tensor>> {
        match donate {
            true => {
                execute_donated_bound(&self.launcher, &self.checked, inputs, packing.by_param())
            }
            false => execute_bound(&self.launcher, &self.checked, &inputs, packing.by_param()),
        }
    }

    /// [`HostExecutor::step_times`] with the stand-ins of `packing`.
    pub fn step_times_bound(
        &self,
        inputs: &[Tensor],
        runs: usize,
        packing: &Packing,
    ) -> Result<Vec<(String, Duration)>> {
        profile_steps_bound(
            &self.launcher,
            &self.checked,
            inputs,
            runs,
            packing.by_param(),
        )
    }
}
