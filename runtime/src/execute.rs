//! Running a kernel plan: the one run loop of every backend.
//!
//! A [`Launcher`] is where a plan's buffers live and its kernels run: host
//! memory and JIT-compiled code ([`crate::host`]), a GPU's memory and
//! launches (the CUDA backend), or the CUDA C emulated on the host (the
//! test suite). [`execute`] walks the plan's steps in order against one:
//! buffers for inputs, results and temp slots, kernels launched in plan
//! order, the status word kernels set on integer division by zero, library
//! matmuls where the launcher has them, and the steps that run on the host
//! (other matmuls through `gemm`, interpreted islands) over host copies of
//! their buffers (for host memory, the buffers themselves).
//!
//! Before anything runs, [`CheckedPlan::new`] checks that every access of
//! every kernel, and every view of a library or interpreted step, stays
//! inside its buffer for the whole iteration space: generated code does no
//! bounds checks and cannot need them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln_ir::graph::Func;
use kiln_ir::infer::InferCtx;
use kiln_ir::{DefaultDType, Device, Error, ErrorKind, Module, Op, Result};
use kiln_passes::plan::donate::{Donation, donations};
use kiln_passes::plan::{Access, BufferId, BufferRole, Kernel, KernelPlan, Step, TensorView};

use crate::backend::bind_inputs;
use crate::matmul::{MatrixArg, matmul, packed_view};
use crate::packed::{Packed, WeightView};
use crate::storage::Storage;
use crate::tensor::Tensor;

/// Where a plan's buffers live and its kernels run.
///
/// The methods with defaults describe device memory reached by copies;
/// host memory overrides them to share and reuse storage instead.
pub trait Launcher {
    /// One buffer.
    type Buffer;

    /// A buffer holding a copy of `bytes`.
    fn upload(&self, bytes: &[u8]) -> Result<Self::Buffer>;

    /// A buffer of `len` zero bytes (`len` ≥ 1).
    fn zeroed(&self, len: usize) -> Result<Self::Buffer>;

    /// A host copy of a buffer.
    fn download(&self, buffer: &Self::Buffer) -> Result<Vec<u8>>;

    /// Overwrites a buffer with `bytes` (of its length).
    fn overwrite(&self, buffer: &mut Self::Buffer, bytes: &[u8]) -> Result<()>;

    /// Waits until everything launched so far has finished.
    fn synchronize(&self) -> Result<()>;

    /// Launches kernel number `index` of the plan (in plan order) with one
    /// buffer per kernel argument, the 4-byte status word (set to nonzero
    /// on integer division by zero) and, for a kernel that needs one
    /// ([`Launcher::scratch_bytes`]), its scratch memory.
    fn launch(
        &self,
        index: usize,
        kernel: &Kernel,
        args: &[&Self::Buffer],
        status: &Self::Buffer,
        scratch: Option<&Self::Buffer>,
    ) -> Result<()>;

    /// Computes a matmul step (`out = a @ b`, each with its buffer) if the
    /// launcher can; `Ok(false)` leaves it to the host. `weight`: `b` is a
    /// program input that nothing writes during the run (so its contents
    /// are the same wherever it is used, and a launcher may keep data
    /// derived from them, as the host keeps packed weights,
    /// `crate::packed`).
    fn matmul(&self, _operands: [(&Self::Buffer, &TensorView); 3], _weight: bool) -> Result<bool> {
        Ok(false)
    }

    /// Computes a matmul step (`out = a @ b`, each with its buffer) whose
    /// right operand is a weight bound to the program in packed form
    /// (`crate::bind`): `b`'s buffer does not hold the weight's values,
    /// `packed` does. `Ok(false)` where the launcher has no packed
    /// products (binding packs nothing for such a launcher's programs).
    fn matmul_bound(
        &self,
        _operands: [(&Self::Buffer, &TensorView); 3],
        _packed: &Packed,
    ) -> Result<bool> {
        Ok(false)
    }

    /// Computes an `embedding` step whose weight is bound in packed form
    /// as the right operand of the plan's products (`crate::bind`): the
    /// weight `[V, D]` is `packed`'s `Bᵀ`. `Ok(false)` where the launcher
    /// cannot (binding packs nothing for such a launcher's programs).
    fn embedding_bound(
        &self,
        _packed: &Packed,
        _indices: (&Self::Buffer, &TensorView),
        _out: (&Self::Buffer, &TensorView),
    ) -> Result<bool> {
        Ok(false)
    }

    /// Computes an interpreted step (number `step` in the plan) with code
    /// of the launcher's own, e.g. a fused attention kernel, given one
    /// buffer per view of the step (its inputs in order, then its
    /// outputs) and the run's status word (where an index out of range
    /// sets [`INDEX_OUT_OF_RANGE`]); `Ok(false)` leaves it to the host (the
    /// runtime's native steps, else the interpreter).
    fn device_step(
        &self,
        _step: usize,
        _buffers: &[&Self::Buffer],
        _status: &Self::Buffer,
    ) -> Result<bool> {
        Ok(false)
    }

    /// Whether [`Launcher::device_step`] applies step `step`'s tail
    /// (`kiln_passes::plan::Tail`): its buffers then follow the step's
    /// views, and the next step, the tail's kernel, is not run.
    fn step_applies_tail(&self, _step: usize) -> bool {
        false
    }

    /// Whether the host copies of its buffers are the buffers themselves
    /// (host memory): only then may a host step keep data derived from a
    /// weight's bytes (a copy made for one step is gone after it). By
    /// default, no.
    fn host_memory(&self) -> bool {
        false
    }

    /// Bytes of scratch memory a kernel needs (zero: none).
    fn scratch_bytes(&self, _kernel: &Kernel) -> usize {
        0
    }

    /// For a result the plan may write in an input's storage
    /// ([`kiln_passes::plan::donate`]): the buffer made of `tensor`, an
    /// input its caller gave up, if it can be written in place and holds
    /// `bytes` in the parameter's layout; `None` (the default) gives the
    /// result a buffer of its own.
    fn donated(&self, _tensor: &Tensor, _bytes: usize) -> Option<Self::Buffer> {
        None
    }

    /// The buffer of an input (by default a copy of its bytes).
    fn input(&self, tensor: &Tensor) -> Result<Self::Buffer> {
        self.upload(tensor.storage().bytes())
    }

    /// A buffer for a result (by default zeroed).
    fn output(&self, bytes: usize) -> Result<Self::Buffer> {
        self.zeroed(bytes.max(1))
    }

    /// The temp slots of one run, of these sizes (by default new ones).
    fn slots(&self, sizes: &[usize]) -> Result<Vec<Self::Buffer>> {
        sizes.iter().map(|&b| self.zeroed(b.max(1))).collect()
    }

    /// A buffer's bytes as host storage (by default a copy).
    fn to_host(&self, buffer: &Self::Buffer) -> Result<Storage> {
        let bytes = self.download(buffer)?;
        let mut storage = Storage::for_overwrite(bytes.len())?;
        storage
            .bytes_mut()
            .expect("a new storage is not shared")
            .copy_from_slice(&bytes);
        Ok(storage)
    }

    /// Writes host storage (from [`Launcher::to_host`], changed by a host
    /// step) back into its buffer (by default a copy).
    fn from_host(&self, buffer: &mut Self::Buffer, storage: &Storage) -> Result<()> {
        self.overwrite(buffer, storage.bytes())
    }
}

/// A plan checked against its buffers, with what running it needs: the
/// function it was planned from (its parameters bind the inputs) and the
/// interpreted islands as modules.
pub struct CheckedPlan {
    /// The planned function.
    pub func: Func,
    /// The plan.
    pub plan: KernelPlan,
    islands: Vec<Option<Module>>,
    default_dtype: DefaultDType,
    /// The results that may be written in a given-up input's storage.
    donations: Vec<Donation>,
}

impl CheckedPlan {
    /// Checks every access and view of `plan` against its buffers.
    pub fn new(func: Func, plan: KernelPlan, default_dtype: DefaultDType) -> Result<CheckedPlan> {
        let islands = check_plan(&plan, default_dtype)?;
        let donations = donations(&plan);
        Ok(CheckedPlan {
            func,
            plan,
            islands,
            default_dtype,
            donations,
        })
    }
}

impl CheckedPlan {
    /// Per parameter, the view of it that the plan's products pack, where
    /// they are all it feeds (as the right operand of products that pack
    /// it, [`packed_view`], in one view): such an input may be bound to the
    /// program as its packed copy alone (`crate::bind`). `None` for an
    /// input that a kernel, an interpreted step, a product's other operand
    /// or one that does not pack reads, that a result is, that a result
    /// may be written into, or that nothing reads.
    pub(crate) fn packed_params(&self) -> Vec<Option<WeightView>> {
        /// How the plan reads one buffer.
        #[derive(Clone, Copy, Default)]
        struct Reads {
            /// The view its products pack it in.
            packed: Option<WeightView>,
            /// The `[V, D]` of the embeddings that read it whole.
            embedding: Option<(usize, usize)>,
            /// Read some other way (or packed in two views).
            other: bool,
        }
        let plan = &self.plan;
        let mut reads = vec![Reads::default(); plan.buffers.len()];
        let mut other = |b: BufferId| reads[b.index()].other = true;
        let mut packed = Vec::new();
        let mut embeddings = Vec::new();
        for (step, island) in plan.steps.iter().zip(&self.islands) {
            match step {
                Step::Kernel(k) => k.args.iter().for_each(|&b| other(b)),
                Step::Matmul { a, b, out } => {
                    fn arg(v: &TensorView) -> MatrixArg<'_> {
                        MatrixArg {
                            ptr: std::ptr::null_mut(),
                            dtype: v.dtype,
                            geometry: &v.geometry,
                        }
                    }
                    other(a.buffer);
                    other(out.buffer);
                    match packed_view(&arg(a), &arg(b), &arg(out)) {
                        Some(view) => packed.push((b.buffer, view)),
                        None => other(b.buffer),
                    }
                }
                Step::Interpret {
                    inputs, outputs, ..
                } => {
                    let weight = island.as_ref().and_then(|m| embedding_weight(m, inputs));
                    for (i, v) in inputs.iter().chain(outputs).enumerate() {
                        match weight {
                            Some((at, size)) if at == i => embeddings.push((v.buffer, size)),
                            _ => other(v.buffer),
                        }
                    }
                }
            }
        }
        for v in &plan.outputs {
            other(v.buffer);
        }
        for (b, view) in packed {
            let r = &mut reads[b.index()];
            r.other |= r.packed.is_some_and(|w| w != view);
            r.packed = Some(view);
        }
        for (b, size) in embeddings {
            let r = &mut reads[b.index()];
            r.other |= r.embedding.is_some_and(|s| s != size);
            r.embedding = Some(size);
        }
        let mut params = vec![None; self.func.params.len()];
        for (b, r) in plan.buffers.iter().zip(reads) {
            let BufferRole::Input(i) = b.role else {
                continue;
            };
            let Some(view) = r.packed else { continue };
            // An embedding reads the rows of the weight whose transpose
            // the products pack: row `r` is column `r` of the panels.
            let rows_of_panels = |(v, d)| {
                view == WeightView {
                    offset: 0,
                    row_stride: 1,
                    col_stride: d as i64,
                    k: d,
                    n: v,
                }
            };
            let donated = self.donations.iter().any(|d| d.param == i);
            if !r.other && !donated && r.embedding.is_none_or(rows_of_panels) && i < params.len() {
                params[i] = Some(view);
            }
        }
        params
    }
}

/// For an interpreted step that is one `embedding` of a dense `[V, D]`
/// weight (a native step, [`native_step`]): the position of the weight
/// among the step's views, and `(V, D)`.
fn embedding_weight(island: &Module, views: &[TensorView]) -> Option<(usize, (usize, usize))> {
    let (at, _) = embedding_operands(island)?;
    let g = &views.get(at)?.geometry;
    let dense = g.rank() == 2 && g.offset == 0 && g.strides == [g.shape[1], 1];
    dense.then(|| (at, (g.shape[0] as usize, g.shape[1] as usize)))
}

/// For an island that is one `embedding`: the positions of its weight and
/// its indices among the island's parameters (the step's input views).
fn embedding_operands(island: &Module) -> Option<(usize, usize)> {
    let func = island.entry().ok()?;
    let [inst] = &func.insts[..] else {
        return None;
    };
    if !matches!(inst.op, Op::Embedding { .. }) || func.returns != inst.results {
        return None;
    }
    let at = |i: usize| {
        let v = inst.operands.get(i)?.value()?;
        func.params.iter().position(|p| *p == v)
    };
    Some((at(0)?, at(1)?))
}

/// The extent an access covers: its smallest and largest element offsets.
pub(crate) fn extent(space: &[i64], offset: i64, strides: &[i64]) -> (i64, i64) {
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
/// space; returns each interpreted island as a module.
pub fn check_plan(plan: &KernelPlan, default_dtype: DefaultDType) -> Result<Vec<Option<Module>>> {
    let mut islands = Vec::with_capacity(plan.steps.len());
    for (index, step) in plan.steps.iter().enumerate() {
        let island = match step {
            Step::Kernel(k) => {
                for a in &k.accesses {
                    check_access(plan, k, a)?;
                }
                None
            }
            Step::Matmul { a, b, out } => {
                for v in [a, b, out] {
                    check_view(plan, v)?;
                }
                None
            }
            Step::Interpret {
                func,
                inputs,
                outputs,
                tail,
            } => {
                for v in inputs.iter().chain(outputs) {
                    check_view(plan, v)?;
                }
                // (A tail stands for the next step, a kernel, which runs
                // where the native step does not apply it.)
                if let Some(tail) = tail {
                    for v in tail.views() {
                        check_view(plan, v)?;
                    }
                    if !matches!(plan.steps.get(index + 1), Some(Step::Kernel(_))) {
                        return Err(Error::new(
                            ErrorKind::Backend,
                            format!("plan step {index}: a tail without its kernel"),
                        ));
                    }
                }
                Some(Module::single(func.clone(), default_dtype))
            }
        };
        islands.push(island);
    }
    for v in &plan.outputs {
        check_view(plan, v)?;
    }
    Ok(islands)
}

/// Runs a checked plan: inputs in parameter order, results in return
/// order, labelled with the devices the program declares.
pub fn execute<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: &[Tensor],
) -> Result<Vec<Tensor>> {
    execute_bound(launcher, checked, inputs, &[])
}

/// Runs a checked plan as [`execute`] does, the inputs with a packed copy
/// in `bound` (by parameter) being weights bound in packed form
/// (`crate::bind`).
pub(crate) fn execute_bound<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: &[Tensor],
    bound: &BoundWeights,
) -> Result<Vec<Tensor>> {
    let inputs = bind_inputs(&checked.func, inputs)?;
    run_once(launcher, checked, &inputs, Vec::new(), bound)
}

/// Packed copies of weights bound to a program, by parameter (`None`: an
/// input as given; past the end: none).
pub(crate) type BoundWeights = [Option<Arc<Packed>>];

/// Runs a checked plan as [`execute`] does, taking the inputs: a result the
/// plan may write in an input's storage (a key/value cache that
/// `index_put` updates) is written there in place when that storage is
/// the caller's alone to give (no other tensor shares it) and the launcher
/// can write it ([`Launcher::donated`]); otherwise it gets a buffer of its
/// own, as with [`execute`].
pub fn execute_donated<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: Vec<Tensor>,
) -> Result<Vec<Tensor>> {
    execute_donated_bound(launcher, checked, inputs, &[])
}

/// [`execute_donated`] with weights bound in packed form, as
/// [`execute_bound`].
pub(crate) fn execute_donated_bound<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: Vec<Tensor>,
    bound: &BoundWeights,
) -> Result<Vec<Tensor>> {
    let inputs_bound = bind_inputs(&checked.func, &inputs)?;
    // The bound inputs share the caller's storage (unless binding laid one
    // out anew): dropping the caller's handles leaves them unique.
    drop(inputs);
    let donated = checked
        .donations
        .iter()
        .filter_map(|d| {
            let bytes = checked.plan.buffers[d.output.index()].bytes;
            launcher
                .donated(&inputs_bound[d.param], bytes)
                .map(|buffer| (d.output, d.param, buffer))
        })
        .collect();
    run_once(launcher, checked, &inputs_bound, donated, bound)
}

/// One run on bound inputs, with the buffers given for some results.
fn run_once<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: &[Tensor],
    donated: Vec<(BufferId, usize, L::Buffer)>,
    bound: &BoundWeights,
) -> Result<Vec<Tensor>> {
    let mut memory = Memory::new(launcher, &checked.plan, inputs, donated, bound)?;
    let status = launcher.zeroed(4)?;
    let outcome = run_steps(launcher, checked, &mut memory, &status, None)
        .and_then(|()| launcher.synchronize());
    check_status(launcher, &status, (checked, inputs), outcome)?;
    results(launcher, checked, &memory)
}

/// The status bit a kernel sets for integer division by zero.
pub const DIVISION_BY_ZERO: u32 = 1;

/// The status bit a kernel sets for an index out of range (a gather's, an
/// embedding's).
pub const INDEX_OUT_OF_RANGE: u32 = 2;

/// The run's error, as the interpreter's would be, from the status word
/// kernels set and the run's `outcome`: integer division by zero is
/// ZeroDivisionError; for an index out of range, the interpreter runs the
/// program on `inputs` to name the first bad index in its words (the
/// kernels only flag it, and leave the elements they would have read
/// unwritten, so a later step may fail on them: the index error comes
/// first, as it would in PyTorch).
fn check_status<L: Launcher>(
    launcher: &L,
    status: &L::Buffer,
    (checked, inputs): (&CheckedPlan, &[Tensor]),
    outcome: Result<()>,
) -> Result<()> {
    let word = match launcher.download(status) {
        Ok(bytes) => {
            u32::from_ne_bytes(bytes[..4].try_into().expect("the status word has 4 bytes"))
        }
        // (A device that faulted answers no more copies.)
        Err(e) => return outcome.and(Err(e)),
    };
    if word & INDEX_OUT_OF_RANGE != 0 {
        let ctx = InferCtx {
            default_dtype: checked.default_dtype,
        };
        crate::interp::run_func(&checked.func, &ctx, inputs)?;
        // (The interpreter found no bad index where a kernel did: a
        // program whose inputs the run overwrote.)
        return Err(Error::new(
            ErrorKind::Runtime,
            "an index out of range (found on the device)",
        ));
    }
    outcome?;
    if word & DIVISION_BY_ZERO != 0 {
        return Err(Error::new(ErrorKind::Runtime, "ZeroDivisionError"));
    }
    Ok(())
}

/// Times `runs` runs of a checked plan with its inputs already in the
/// launcher's memory and its results left there (after one first run):
/// what the launcher takes, without the copies [`execute`] makes each run.
/// The results of the last run come with the times.
pub fn time_steps<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: &[Tensor],
    runs: usize,
) -> Result<(Vec<Duration>, Vec<Tensor>)> {
    let inputs = bind_inputs(&checked.func, inputs)?;
    let mut memory = Memory::new(launcher, &checked.plan, &inputs, Vec::new(), &[])?;
    let status = launcher.zeroed(4)?;
    let mut times = Vec::with_capacity(runs);
    let outcome = (|| {
        run_steps(launcher, checked, &mut memory, &status, None)?;
        launcher.synchronize()?;
        for _ in 0..runs {
            let start = Instant::now();
            run_steps(launcher, checked, &mut memory, &status, None)?;
            launcher.synchronize()?;
            times.push(start.elapsed());
        }
        Ok(())
    })();
    check_status(launcher, &status, (checked, &inputs), outcome)?;
    Ok((times, results(launcher, checked, &memory)?))
}

/// The time of each step of a plan: the median over `runs` runs (after one
/// first run) with the inputs in the launcher's memory, each step
/// synchronized before the next starts; in plan order, with each step's
/// description ([`describe_step`]).
pub fn profile_steps<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: &[Tensor],
    runs: usize,
) -> Result<Vec<(String, Duration)>> {
    profile_steps_bound(launcher, checked, inputs, runs, &[])
}

/// [`profile_steps`] with weights bound in packed form, as
/// [`execute_bound`].
pub(crate) fn profile_steps_bound<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    inputs: &[Tensor],
    runs: usize,
    bound: &BoundWeights,
) -> Result<Vec<(String, Duration)>> {
    let inputs = bind_inputs(&checked.func, inputs)?;
    let mut memory = Memory::new(launcher, &checked.plan, &inputs, Vec::new(), bound)?;
    let status = launcher.zeroed(4)?;
    let steps = checked.plan.steps.len();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); steps];
    let outcome = (|| {
        run_steps(launcher, checked, &mut memory, &status, None)?;
        launcher.synchronize()?;
        for _ in 0..runs.max(1) {
            let mut times = Vec::with_capacity(steps);
            run_steps(launcher, checked, &mut memory, &status, Some(&mut times))?;
            for (s, t) in samples.iter_mut().zip(times) {
                s.push(t);
            }
        }
        Ok(())
    })();
    // (A program that fails is not timed: its error, as a run's.)
    check_status(launcher, &status, (checked, &inputs), outcome)?;
    Ok(checked
        .plan
        .steps
        .iter()
        .zip(samples)
        .map(|(step, mut t)| {
            t.sort();
            (describe_step(step), t[t.len() / 2])
        })
        .collect())
}

/// A step in a few words: a kernel's name, iteration space and reduced
/// dims; a matmul's shapes; an interpreted island's ops.
pub fn describe_step(step: &Step) -> String {
    match step {
        Step::Kernel(k) => {
            let outer = &k.space[..k.outer_rank];
            let reduced = &k.space[k.outer_rank..];
            if reduced.is_empty() {
                format!("kernel {} {outer:?}", k.name)
            } else {
                format!("kernel {} {outer:?} reducing {reduced:?}", k.name)
            }
        }
        Step::Matmul { a, b, .. } => format!(
            "matmul {:?} @ {:?}{}",
            a.geometry.shape,
            b.geometry.shape,
            if b.geometry.rank() >= 2 && b.geometry.strides[b.geometry.rank() - 2] == 1 {
                " (transposed)"
            } else {
                ""
            }
        ),
        Step::Interpret { func, .. } => {
            let ops: Vec<&str> = func.insts.iter().map(|i| i.op.name()).collect();
            format!("interpret {}", ops.join(", "))
        }
    }
}

/// The results of the last run, in host memory.
fn results<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    memory: &Memory<L::Buffer>,
) -> Result<Vec<Tensor>> {
    let func = &checked.func;
    checked
        .plan
        .outputs
        .iter()
        .zip(&func.returns)
        .map(|(v, r)| {
            let storage = launcher.to_host(memory.get(v.buffer))?;
            Tensor::from_storage(storage, v.geometry.clone(), v.dtype, func.ty(*r).device)
        })
        .collect()
}

/// The plan's steps in order; with `times`, each step's time, synchronized.
fn run_steps<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    buffers: &mut Memory<L::Buffer>,
    status: &L::Buffer,
    mut times: Option<&mut Vec<Duration>>,
) -> Result<()> {
    let mut kernel_index = 0;
    let mut absorbed = false;
    for (index, (step, island)) in checked.plan.steps.iter().zip(&checked.islands).enumerate() {
        let start = Instant::now();
        if std::mem::take(&mut absorbed) {
            // The kernel a native step applied as its tail.
            kernel_index += 1;
        } else {
            absorbed = run_step(
                launcher,
                checked,
                buffers,
                status,
                (index, step),
                island,
                &mut kernel_index,
            )?;
        }
        if let Some(times) = times.as_deref_mut() {
            launcher.synchronize()?;
            times.push(start.elapsed());
        }
    }
    Ok(())
}

/// One step of a plan; whether it applied its tail, the next step
/// (`kiln_passes::plan::Tail`), which is then not run.
fn run_step<L: Launcher>(
    launcher: &L,
    checked: &CheckedPlan,
    buffers: &mut Memory<L::Buffer>,
    status: &L::Buffer,
    (step_index, step): (usize, &Step),
    island: &Option<Module>,
    kernel_index: &mut usize,
) -> Result<bool> {
    let mut tail_applied = false;
    match step {
        Step::Kernel(k) => {
            let index = *kernel_index;
            *kernel_index += 1;
            if k.outer_count() == 0 {
                return Ok(false);
            }
            let args: Vec<&L::Buffer> = k.args.iter().map(|&b| buffers.get(b)).collect();
            launcher
                .launch(index, k, &args, status, buffers.scratch[index].as_ref())
                .map_err(|e| match e.kind() {
                    // Errors of the program itself (ZeroDivisionError)
                    // read as the interpreter's; others name the kernel.
                    ErrorKind::Runtime => e,
                    _ => e.context(format!("kernel {}", k.name)),
                })?;
        }
        Step::Matmul { a, b, out } => {
            let on_device = [a, b, out].map(|v| (buffers.get(v.buffer), v));
            if let Some(packed) = &buffers.bound[b.buffer.index()] {
                // (The buffer holds the packed copy's bytes, not the
                // weight's: no other path may read it.)
                return match launcher.matmul_bound(on_device, packed)? {
                    true => Ok(false),
                    false => Err(crate::bind::no_packed_steps()),
                };
            }
            if launcher.matmul(on_device, buffers.is_weight(b.buffer))? {
                return Ok(false);
            }
            let host = HostCopies::download(launcher, buffers, [a, b, out])?;
            fn arg<'v>(v: &'v TensorView, host: &HostCopies) -> MatrixArg<'v> {
                MatrixArg {
                    ptr: host.ptr(v.buffer),
                    dtype: v.dtype,
                    geometry: &v.geometry,
                }
            }
            // SAFETY: the views were checked against their buffers, of
            // which these are the host storages.
            unsafe { matmul(arg(a, &host), arg(b, &host), arg(out, &host))? };
            host.upload(launcher, buffers, [out])?;
        }
        Step::Interpret {
            inputs: views,
            outputs,
            tail,
            ..
        } => {
            let is_bound = |v: &TensorView| buffers.bound[v.buffer.index()].is_some();
            if views.iter().chain(outputs).any(is_bound) {
                // (Binding packs a weight an island reads only for an
                // embedding of it; no other path may read the buffer.)
                let operands = island.as_ref().and_then(embedding_operands);
                let (Some((weight, indices)), [out]) = (operands, &outputs[..]) else {
                    return Err(crate::bind::read_unpacked());
                };
                let (weight, indices) = (&views[weight], &views[indices]);
                let packed = match (&buffers.bound[weight.buffer.index()], is_bound(indices)) {
                    (Some(packed), false) => packed,
                    _ => return Err(crate::bind::read_unpacked()),
                };
                let done = launcher.embedding_bound(
                    packed,
                    (buffers.get(indices.buffer), indices),
                    (buffers.get(out.buffer), out),
                )?;
                return match done {
                    true => Ok(false),
                    false => Err(crate::bind::no_packed_steps()),
                };
            }
            let device_tail = tail
                .as_ref()
                .filter(|_| launcher.step_applies_tail(step_index));
            let on_device: Vec<&L::Buffer> = views
                .iter()
                .chain(outputs)
                .chain(device_tail.into_iter().flat_map(|t| t.views()))
                .map(|v| buffers.get(v.buffer))
                .collect();
            if launcher.device_step(step_index, &on_device, status)? {
                return Ok(device_tail.is_some());
            }
            let module = island.as_ref().expect("check_plan keeps every island");
            // A tail, where the buffers are host memory (elsewhere the
            // next step, its kernel, runs on the device).
            let tail = tail.as_ref().filter(|_| launcher.host_memory());
            let tail_views = tail.into_iter().flat_map(|t| t.views());
            let host = HostCopies::download(
                launcher,
                buffers,
                views.iter().chain(outputs).chain(tail_views),
            )?;
            // (A buffer's weight-ness: what a native step may keep derived
            // from its bytes, as a product keeps a packed weight.)
            let is_weight = |b: BufferId| launcher.host_memory() && buffers.is_weight(b);
            let tail = tail.map(|t| crate::spatial::Tail {
                scale: t.scale.as_ref().map(|v| host.operand(v)),
                shift: t.shift.as_ref().map(|v| host.operand(v)),
                residual: t.residual.as_ref().map(|v| host.operand(v)),
                relu: t.relu,
                out: host.operand(&t.out),
            });
            // SAFETY: the views were checked against their buffers, of
            // which these are the host storages (the tail's too).
            let native = unsafe {
                native_step(
                    module.entry()?,
                    (views, &is_weight),
                    outputs,
                    &host,
                    (tail.as_ref(), &mut tail_applied),
                )?
            };
            if !native {
                let tensors = views
                    .iter()
                    .map(|v| host.tensor(v))
                    .collect::<Result<Vec<_>>>()?;
                let ctx = InferCtx {
                    default_dtype: checked.default_dtype,
                };
                let results = crate::interp::run_func(module.entry()?, &ctx, &tensors)?;
                for (r, v) in results.iter().zip(outputs) {
                    // SAFETY: the view was checked against its buffer, of
                    // which this is the host storage.
                    unsafe { write_view(r, v, host.ptr(v.buffer)) };
                }
            }
            host.upload(launcher, buffers, outputs)?;
        }
    }
    Ok(tail_applied)
}

/// The composites a CPU backend keeps whole from decomposition, because
/// [`native_step`] runs them as one step: attention
/// ([`crate::attention::fused`]), cross_entropy
/// ([`crate::cross_entropy::fused`]), var and std over the last dim
/// ([`crate::moments::fused`]), softmax and log_softmax over the last dim
/// ([`crate::softmax::fused`]).
pub fn native_composite(func: &kiln_ir::Func, inst: &kiln_ir::Inst) -> bool {
    crate::attention::fused(func, inst)
        || crate::cross_entropy::fused(func, inst)
        || crate::moments::fused(func, inst)
        || crate::softmax::fused(func, inst)
}

/// Runs a host step that is one op with a native kernel (a convolution, a
/// pool or a resampling in f32 or f64: `crate::spatial`; attention in f32
/// or f64: `crate::attention`; cross_entropy of f32 logits:
/// `crate::cross_entropy`; var and std of f32 rows: `crate::moments`;
/// softmax and log_softmax of f32 rows: `crate::softmax`;
/// gather, scatter and `index_put`: `crate::gather`; scans,
/// topk and sort: `crate::lines`) on the step's
/// buffers directly; `false`
/// when it has none, and the interpreter runs the step.
///
/// # Safety
/// The views must have been checked against their buffers, of which
/// `host` holds the storages.
unsafe fn native_step<'v>(
    func: &kiln_ir::Func,
    (views, is_weight): (&'v [TensorView], &dyn Fn(BufferId) -> bool),
    outputs: &'v [TensorView],
    host: &HostCopies,
    (tail, tail_applied): (Option<&crate::spatial::Tail>, &mut bool),
) -> Result<bool> {
    let [inst] = &func.insts[..] else {
        return Ok(false);
    };
    if func.returns != inst.results || outputs.len() != inst.results.len() {
        return Ok(false);
    }
    // An operand's view: its dtype is the buffer's, which may be narrower
    // than the value's (an i64 index the plan computes in i32).
    let view = |i: usize| -> Option<&TensorView> {
        let v = inst.operands.get(i)?.value()?;
        Some(&views[func.params.iter().position(|p| *p == v)?])
    };
    let on_host = |view: &'v TensorView| host.operand(view);
    let operand = |i: usize| view(i).map(on_host);
    // An index operand: its elements and their dtype.
    let index = |i: usize| operand(i).zip(view(i).map(|v| v.dtype));
    // The first result (each op here has its own buffer for it).
    let out = || on_host(&outputs[0]);
    if crate::attention::fused(func, inst) {
        let (Some(query), Some(key), Some(value)) = (operand(0), operand(1), operand(2)) else {
            return Ok(false);
        };
        let operands = crate::attention::Operands {
            query,
            key,
            value,
            mask: operand(3).zip(view(3).map(|m| m.dtype)),
        };
        let out = out();
        // SAFETY: forwarded; the plan gives the result its own buffer.
        return unsafe { crate::attention::attention(&inst.op, outputs[0].dtype, &operands, out) };
    }
    if crate::cross_entropy::fused(func, inst) {
        let (Some(x), Some(t), Some(t_view)) = (operand(0), operand(1), view(1)) else {
            return Ok(false);
        };
        let out = out();
        // SAFETY: forwarded; the plan gives the result its own buffer.
        return unsafe { crate::cross_entropy::cross_entropy(&inst.op, x, (t, t_view.dtype), out) };
    }
    if crate::moments::fused(func, inst) {
        let Some(x) = operand(0) else {
            return Ok(false);
        };
        // SAFETY: forwarded; the plan gives the result its own buffer.
        return unsafe { crate::moments::moments(&inst.op, x, out()) };
    }
    if crate::softmax::fused(func, inst) {
        let Some(x) = operand(0) else {
            return Ok(false);
        };
        // SAFETY: forwarded; the plan gives the result its own buffer.
        return unsafe { crate::softmax::softmax(&inst.op, x, out()) };
    }
    if matches!(
        inst.op,
        Op::Gather { .. } | Op::Scatter { .. } | Op::ScatterAdd { .. }
    ) {
        let (Some(x), Some(index)) = (operand(0), index(1)) else {
            return Ok(false);
        };
        let out = out();
        // SAFETY: forwarded; the plan gives the result its own buffer.
        return unsafe {
            crate::gather::gather_scatter(&inst.op, outputs[0].dtype, x, index, operand(2), out)
        };
    }
    if matches!(inst.op, Op::ScatterReduce { .. } | Op::IndexAdd { .. }) {
        let (Some(x), Some(index), Some(src)) = (operand(0), index(1), operand(2)) else {
            return Ok(false);
        };
        let same = |i: usize| view(i).is_some_and(|v| v.dtype == outputs[0].dtype);
        if !same(0) || !same(2) {
            return Ok(false);
        }
        let out = out();
        // SAFETY: forwarded; the plan gives the result its own buffer.
        return unsafe {
            crate::gather::reduce_into(&inst.op, outputs[0].dtype, x, index, src, out)
        };
    }
    if let Op::IndexPut { accumulate: false } = inst.op {
        // One index tensor among the entries (operands 1 .. n − 1), the
        // values last.
        let n = inst.operands.len();
        let entries: Vec<usize> = (1..n.saturating_sub(1))
            .filter(|&i| inst.operands[i].value().is_some())
            .collect();
        let ([i], Some(x), Some(values), Some(values_view)) =
            (&entries[..], operand(0), operand(n - 1), view(n - 1))
        else {
            return Ok(false);
        };
        let (Some(index), Some(index_view)) = (operand(*i), view(*i)) else {
            return Ok(false);
        };
        let same = |v: Option<&TensorView>| v.is_some_and(|v| v.dtype == outputs[0].dtype);
        if !same(Some(values_view)) || !same(view(0)) {
            return Ok(false);
        }
        let out = out();
        // SAFETY: forwarded; the result has its own buffer, or is the input
        // itself (a donation: the same memory and geometry, which no other
        // operand reads, see `kiln_passes::plan::donate`).
        return unsafe {
            crate::gather::index_put(
                x,
                i - 1,
                (index, index_view.dtype),
                values,
                out,
                outputs[0].dtype.itemsize(),
            )
        };
    }
    if let Op::Embedding { .. } = inst.op {
        let (Some(weight), Some(indices), Some(index)) = (operand(0), operand(1), view(1)) else {
            return Ok(false);
        };
        let out = out();
        // SAFETY: forwarded; the plan gives the result its own buffer.
        return unsafe {
            crate::gather::embedding(outputs[0].dtype, weight, (indices, index.dtype), out)
        };
    }
    if matches!(
        inst.op,
        Op::Cumsum { .. }
            | Op::Cumprod { .. }
            | Op::Logcumsumexp { .. }
            | Op::Cummax { .. }
            | Op::Cummin { .. }
            | Op::Topk { .. }
            | Op::Sort { .. }
            | Op::Kthvalue { .. }
            | Op::Median { .. }
            | Op::Nanmedian { .. }
            | Op::Mode { .. }
    ) {
        let (Some(x), Some(input)) = (operand(0), view(0)) else {
            return Ok(false);
        };
        let outs: Vec<(crate::spatial::Operand, kiln_ir::DType)> =
            outputs.iter().map(|v| (on_host(v), v.dtype)).collect();
        // SAFETY: forwarded; the plan gives each result its own buffer.
        return unsafe { crate::lines::run(&inst.op, input.dtype, x, &outs) };
    }
    let Some(spatial) = kiln_ir::spatial::spatial(&inst.op) else {
        return Ok(false);
    };
    let Some(x) = operand(0) else {
        return Ok(false);
    };
    let results: Vec<crate::spatial::Operand> = outputs.iter().map(on_host).collect();
    let dtype = outputs[0].dtype;
    let conv = match spatial {
        kiln_ir::spatial::Spatial::Conv(conv) => conv,
        kiln_ir::spatial::Spatial::Pool { pool, indices } => {
            let pool = kiln_ir::spatial::pool_params(&pool, inst.op.name(), &x.geometry.shape)?;
            let spatial = kiln_ir::spatial::Spatial::Pool { pool, indices };
            // SAFETY: forwarded; the plan gives each result its own buffer.
            return unsafe { crate::spatial::window(&spatial, dtype, x, &results) };
        }
        // SAFETY: as above.
        other => return unsafe { crate::spatial::window(&other, dtype, x, &results) },
    };
    let Some(w) = operand(1) else {
        return Ok(false);
    };
    let bias = operand(2);
    let conv = kiln_ir::spatial::conv_params(
        &conv,
        &x.geometry.shape,
        &w.geometry.shape,
        bias.map(|b| &b.geometry.shape[..]),
    )?;
    // The weight's buffer, where it is a program input the run does not
    // write (its Winograd transform is then kept).
    let weight = view(1)
        .filter(|v| is_weight(v.buffer))
        .map(|v| host.storage(v.buffer).buffer());
    // SAFETY: forwarded; the plan gives the result its own buffer, and a
    // weight's buffer is not written during the run; the tail's result
    // is live during this step ([`kiln_passes::plan::slots`]), apart
    // from the operands.
    let ran =
        unsafe { crate::spatial::convolution(&conv, dtype, x, w, bias, results[0], weight, tail)? };
    *tail_applied = ran == crate::spatial::Convolved::WithTail;
    Ok(ran != crate::spatial::Convolved::No)
}

/// The memory of a plan's buffers: inputs and outputs their own, temps
/// their slot's (temps whose lives do not overlap share a slot; steps run
/// in plan order), and each kernel's scratch.
struct Memory<B> {
    own: Vec<Option<B>>,
    slots: Vec<B>,
    slot_of: Vec<Option<usize>>,
    scratch: Vec<Option<B>>,
    /// Per buffer: an input the run does not write (no result is donated
    /// its storage), see [`Launcher::matmul`].
    weights: Vec<bool>,
    /// Per buffer: the packed copy of a weight bound in packed form (the
    /// buffer holds the copy's bytes), see [`Launcher::matmul_bound`].
    bound: Vec<Option<Arc<Packed>>>,
}

impl<B> Memory<B> {
    fn new<L: Launcher<Buffer = B>>(
        launcher: &L,
        plan: &KernelPlan,
        inputs: &[Tensor],
        mut donated: Vec<(BufferId, usize, B)>,
        bound: &BoundWeights,
    ) -> Result<Memory<B>> {
        let slots = launcher.slots(&plan.slots)?;
        let written: Vec<usize> = donated.iter().map(|&(_, param, _)| param).collect();
        let weights = plan
            .buffers
            .iter()
            .map(|b| matches!(b.role, BufferRole::Input(i) if !written.contains(&i)))
            .collect();
        let bound = plan
            .buffers
            .iter()
            .map(|b| match b.role {
                BufferRole::Input(i) => bound.get(i).cloned().flatten(),
                _ => None,
            })
            .collect();
        let mut own = Vec::with_capacity(plan.buffers.len());
        let mut slot_of = Vec::with_capacity(plan.buffers.len());
        for (i, b) in plan.buffers.iter().enumerate() {
            let given = donated
                .iter()
                .position(|(id, ..)| id.index() == i)
                .map(|at| donated.swap_remove(at).2);
            let (memory, slot) = match b.role {
                BufferRole::Input(i) => (Some(launcher.input(&inputs[i])?), None),
                BufferRole::Output => match given {
                    Some(buffer) => (Some(buffer), None),
                    None => (Some(launcher.output(b.bytes)?), None),
                },
                BufferRole::Temp { slot } => (None, Some(slot)),
            };
            own.push(memory);
            slot_of.push(slot);
        }
        let scratch = plan
            .kernels()
            .map(|k| match launcher.scratch_bytes(k) {
                0 => Ok(None),
                bytes => launcher.zeroed(bytes).map(Some),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Memory {
            own,
            slots,
            slot_of,
            scratch,
            weights,
            bound,
        })
    }

    /// Whether `id` is an input the run does not write.
    fn is_weight(&self, id: BufferId) -> bool {
        self.weights[id.index()]
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

/// Host storage of the buffers a host step reads or writes, by buffer.
struct HostCopies(Vec<Option<Storage>>);

impl HostCopies {
    fn download<'v, L: Launcher>(
        launcher: &L,
        buffers: &Memory<L::Buffer>,
        views: impl IntoIterator<Item = &'v TensorView>,
    ) -> Result<HostCopies> {
        let mut copies: Vec<Option<Storage>> = vec![None; buffers.len()];
        for v in views {
            let i = v.buffer.index();
            if copies[i].is_none() {
                copies[i] = Some(launcher.to_host(buffers.get(v.buffer))?);
            }
        }
        Ok(HostCopies(copies))
    }

    fn storage(&self, buffer: BufferId) -> &Storage {
        self.0[buffer.index()]
            .as_ref()
            .expect("a host step's views are downloaded")
    }

    /// Where a host step writes a buffer's bytes. Host storage is plain
    /// memory; whoever writes through the pointer holds no reference to it.
    fn ptr(&self, buffer: BufferId) -> *mut u8 {
        self.storage(buffer).as_ptr() as *mut u8
    }

    /// A view of a buffer's host storage, as the native steps take it.
    fn operand<'v>(&self, v: &'v TensorView) -> crate::spatial::Operand<'v> {
        crate::spatial::Operand {
            ptr: self.ptr(v.buffer),
            geometry: &v.geometry,
        }
    }

    fn tensor(&self, v: &TensorView) -> Result<Tensor> {
        Tensor::from_storage(
            self.storage(v.buffer).clone(),
            v.geometry.clone(),
            v.dtype,
            Device::CPU,
        )
    }

    fn upload<'v, L: Launcher>(
        &self,
        launcher: &L,
        buffers: &mut Memory<L::Buffer>,
        views: impl IntoIterator<Item = &'v TensorView>,
    ) -> Result<()> {
        for v in views {
            launcher.from_host(buffers.get_mut(v.buffer), self.storage(v.buffer))?;
        }
        Ok(())
    }
}

/// Copies a tensor's values into a view of a buffer (same dtype and shape).
///
/// # Safety
/// `base` must point at the view's buffer, which [`check_plan`] checked
/// the view against.
pub(crate) unsafe fn write_view(t: &Tensor, v: &TensorView, base: *mut u8) {
    use crate::strided::{NONE, rows};
    let size = v.dtype.itemsize();
    let bytes = t.storage().bytes();
    // Runs along the innermost dim, one copy each where both sides are
    // contiguous along it (an interpreted step's result is usually laid
    // out as its view: a lookup's rows), else element by element.
    let sides = [(t.geometry(), NONE), (&v.geometry, NONE)];
    rows(
        &v.geometry,
        &sides,
        |[from, to], len, [from_step, to_step]| {
            if from_step == 1 && to_step == 1 {
                let (from, to, n) = (
                    from as usize * size,
                    to as usize * size,
                    len as usize * size,
                );
                // SAFETY: the view was checked against its buffer; the source
                // is a tensor of the same shape and dtype (its bytes are
                // bounds-checked by the slice).
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes[from..from + n].as_ptr(), base.add(to), n)
                };
            } else {
                for j in 0..len {
                    let (from, to) = (
                        (from + j * from_step) as usize * size,
                        (to + j * to_step) as usize * size,
                    );
                    // SAFETY: as above, one element.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            bytes[from..from + size].as_ptr(),
                            base.add(to),
                            size,
                        )
                    };
                }
            }
        },
    );
}
