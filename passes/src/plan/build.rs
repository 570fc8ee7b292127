//! Building the plan: fuses a laid-out module's instructions into kernels,
//! buffers and library steps (the first step of [`crate::plan::plan`]).
//!
//! Every value the program must hold in memory is *materialized* into a
//! buffer: inputs, results, the operands and results of matmul and of
//! instructions the backend does not compile, the results of cat (whose
//! operands are computed straight into their slices), and the sources of
//! views that do more than relabel dims.
//! Everything else is *inlined*: each materialized value becomes the root of
//! one kernel whose expression reaches back through pointwise ops,
//! broadcasts, casts, copies and reductions until it meets materialized
//! values, which it loads through strided accesses. Views cost nothing: they
//! are accesses with other strides and offsets. A view that only relabels
//! dims (permutes them, adds or drops size-1 dims, expands size-1 dims) is
//! not even a boundary: a pointwise chain fuses through it, the consumer
//! computing the source in its own index space.
//!
//! A reduction inlined into a kernel over its input's shape turns the kernel
//! into a reduction kernel, and the pointwise work before (the prologue) and
//! after it (the epilogue, broadcast back over the reduced dims) runs in the
//! same kernel, in phases (see [`crate::plan`]). Inlining stops — the value is
//! materialized and the plan rebuilt — where it would change the kernel's
//! reduced dims, recompute a reduction in several kernels, or recompute an
//! expensive small value at every element of a large broadcast.
//!
//! Each kernel comes out with its outer (independent) dims first and its
//! reduced dims last, in logical order; the later steps order its loops
//! for memory.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kiln_ir::graph::{Func, FuncBuilder, Inst, NewInst, Operand, ValueId};
use kiln_ir::infer::{InferCtx, Inferred};
use kiln_ir::layout::contiguous_strides;
use kiln_ir::layout::{LayoutArg, ResultLayout, result_layouts};
use kiln_ir::view::{Geometry, wrap_dim};
use kiln_ir::{BinaryOp, DType, Device, Error, ErrorKind, Module, Op, Result, Scalar};

use super::{
    Access, Buffer, BufferId, BufferRole, Expr, Kernel, KernelPlan, Node, NodeId, Step, Store,
    Target, TensorView,
};

/// How an instruction takes part in fusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A view of its first operand: no computation.
    View,
    /// A view that relabels its operand's dims ([`relabeling`]): an access
    /// when the operand is in memory, else computed by its consumer.
    Relabel,
    /// Pointwise (including copies, full and arange): inlined where used.
    Pointwise,
    /// A copy that reorders logical positions (a reshape or flatten that
    /// cannot be a view): computed over its source's shape.
    ReshapeCopy,
    Reduce,
    Matmul,
    Cat,
    /// Run by the interpreter.
    Interpret,
}

fn classify(func: &Func, inst: &Inst, target: &dyn Target) -> Result<Kind> {
    if inst.results.len() != 1 {
        return Ok(Kind::Interpret);
    }
    let result = func.ty(inst.result());
    if inst.op.is_view() && relabeling(func, inst)?.is_some() {
        return Ok(Kind::Relabel);
    }
    if inst.op.is_view() || matches!(inst.op, Op::Contiguous { .. } | Op::To { .. }) {
        let source = inst
            .value_operands()
            .next()
            .ok_or_else(|| Error::new(ErrorKind::Arity, "a view needs an operand"))?;
        let ty = func.ty(source);
        let strides = ty.strides().ok_or_else(not_laid_out)?;
        let g = Geometry::new(ty.shape.clone(), strides.to_vec(), 0);
        match result_layout(&inst.op, &[LayoutArg::Tensor(&g, ty)], result)? {
            ResultLayout::View(_) => return Ok(Kind::View),
            ResultLayout::Fresh(_)
                if matches!(inst.op, Op::Reshape { .. } | Op::Flatten { .. }) =>
            {
                return Ok(if target.compiles(func, inst) {
                    Kind::ReshapeCopy
                } else {
                    Kind::Interpret
                });
            }
            ResultLayout::Fresh(_) => {}
        }
    }
    if let Op::Matmul = inst.op {
        return Ok(if target.has_matmul(result.dtype) {
            Kind::Matmul
        } else {
            Kind::Interpret
        });
    }
    if !target.compiles(func, inst) {
        return Ok(Kind::Interpret);
    }
    Ok(match inst.op {
        Op::Reduce { .. } | Op::ArgReduce { .. } => Kind::Reduce,
        Op::Cat { .. } => Kind::Cat,
        Op::Unary { .. }
        | Op::Binary { .. }
        | Op::Where
        | Op::Cast { .. }
        | Op::Contiguous { .. }
        | Op::Clone { .. }
        | Op::To { .. }
        | Op::Full { .. }
        | Op::Arange { .. } => Kind::Pointwise,
        // Composite ops left by decomposition (dtypes it does not lower).
        _ => Kind::Interpret,
    })
}

/// For a view that only relabels its operand's dims, which result dim each
/// operand dim becomes (`None` for size-1 operand dims, which are dropped,
/// kept or expanded); `None` for other views (slices, reshapes that split
/// or merge dims). Found with the op's own layout rule: viewed from a
/// contiguous operand, every result dim of size n > 1 must have the stride
/// of an operand dim of size n, each operand dim of size > 1 claimed once,
/// or stride 0 (an expanded size-1 dim), at offset 0. Contiguous strides
/// of dims larger than 1 differ, so the element a result index names is
/// the operand's at the relabeled index.
fn relabeling(func: &Func, inst: &Inst) -> Result<Option<Vec<Option<usize>>>> {
    let Some(source) = inst.value_operands().next() else {
        return Ok(None);
    };
    // as_strided addresses its operand's storage, not its logical
    // positions: only a view of the operand in memory is right.
    if matches!(inst.op, Op::AsStrided { .. }) {
        return Ok(None);
    }
    let src = func.ty(source);
    let out = func.ty(inst.result());
    if src.shape.contains(&0) || out.shape.contains(&0) {
        return Ok(None);
    }
    let g = Geometry::new(src.shape.clone(), contiguous_strides(&src.shape), 0);
    let ResultLayout::View(v) = result_layout(&inst.op, &[LayoutArg::Tensor(&g, src)], out)? else {
        return Ok(None);
    };
    if v.offset != 0 {
        return Ok(None);
    }
    let mut map = vec![None; src.shape.len()];
    for (j, (&n, &stride)) in v.shape.iter().zip(&v.strides).enumerate() {
        if n == 1 || stride == 0 {
            continue;
        }
        let found = (0..src.shape.len())
            .find(|&s| src.shape[s] == n && g.strides[s] == stride && map[s].is_none());
        match found {
            Some(s) => map[s] = Some(j),
            None => return Ok(None),
        }
    }
    let claimed = map.iter().flatten().count();
    let needed = src.shape.iter().filter(|&&n| n != 1).count();
    Ok((claimed == needed).then_some(map))
}

/// The layout of a single-result op's result.
fn result_layout(
    op: &Op,
    args: &[LayoutArg<'_>],
    result: &kiln_ir::TensorType,
) -> Result<ResultLayout> {
    result_layouts(op, args, std::slice::from_ref(result))?
        .pop()
        .ok_or_else(|| Error::new(ErrorKind::Backend, "a layout rule gave no layout"))
}

fn not_laid_out() -> Error {
    Error::new(
        ErrorKind::Layout,
        "fuse needs a laid-out module (run the layout pass first)",
    )
}

/// Builds the kernel plan of a module's entry function.
pub fn build(module: &Module, target: &dyn Target) -> Result<KernelPlan> {
    let func = module.entry()?;
    let ctx = module.ctx();
    let kinds = func
        .insts
        .iter()
        .map(|inst| classify(func, inst, target))
        .collect::<Result<Vec<_>>>()?;
    // (An instruction whose inference fails has none here; the build
    // infers it again, where it needs it, for the error.)
    let mut inferred: Vec<Option<Inferred>> = vec![None; func.values.len()];
    for inst in &func.insts {
        if let Some(r) = inst.results.first() {
            inferred[r.index()] = func.infer_inst(inst, &ctx).ok();
        }
    }
    let mut materialized = initial_materialized(func, &kinds);
    // Each retry materializes at least one more value; there are
    // finitely many.
    loop {
        materialize_relabeled_sources(func, &kinds, &mut materialized);
        let mut b = PlanBuilder::new(
            func,
            &ctx,
            &kinds,
            &inferred,
            &materialized,
            target.device(),
        );
        let built = b.build()?;
        let retry = std::mem::take(&mut b.retry);
        match built {
            Some(plan) => return Ok(plan),
            None => {
                let &v = retry
                    .first()
                    .expect("a failed build names a value to materialize");
                if materialized[v.index()] {
                    return Err(Error::new(
                        ErrorKind::Backend,
                        format!("fuse: materializing %{} again", func.name_of(v)),
                    ));
                }
                for v in retry {
                    materialized[v.index()] = true;
                }
            }
        }
    }
}

/// Materializes the sources of the relabels needed in memory, which
/// [`PlanBuilder::build`] would ask for one build at a time (GPT-2 small:
/// 49 of its 94 builds): a relabel of a value in memory is a view of it,
/// and one of a computed value is not. Up front rather than interleaved
/// with the build's other retries, so the plans could differ in
/// principle; every kernel-plan snapshot is unchanged.
fn materialize_relabeled_sources(func: &Func, kinds: &[Kind], materialized: &mut [bool]) {
    'scan: loop {
        // Which values the build would find in memory: parameters, placed
        // values, and views and relabels of values in memory.
        let mut in_memory = vec![false; func.values.len()];
        for &p in &func.params {
            in_memory[p.index()] = true;
        }
        for (inst, kind) in func.insts.iter().zip(kinds) {
            for r in &inst.results {
                in_memory[r.index()] = materialized[r.index()];
            }
            let (Kind::View | Kind::Relabel) = kind else {
                continue;
            };
            let (Some(source), [v]) = (inst.value_operands().next(), inst.results.as_slice())
            else {
                continue;
            };
            if in_memory[source.index()] {
                in_memory[v.index()] = true;
            } else if *kind == Kind::View {
                in_memory[v.index()] = false;
            } else if materialized[v.index()] && !materialized[source.index()] {
                // (A source already materialized but not in memory is the
                // build's error to report.)
                materialized[source.index()] = true;
                continue 'scan;
            } else {
                in_memory[v.index()] = false;
            }
        }
        return;
    }
}

/// The values that must be in memory whatever else is fused.
fn initial_materialized(func: &Func, kinds: &[Kind]) -> Vec<bool> {
    let mut m = vec![false; func.values.len()];
    for &p in &func.params {
        m[p.index()] = true;
    }
    for &r in &func.returns {
        m[r.index()] = true;
    }
    for (inst, kind) in func.insts.iter().zip(kinds) {
        match kind {
            // A cat's operands are computed into their slices.
            Kind::Cat => {
                for r in &inst.results {
                    m[r.index()] = true;
                }
            }
            Kind::Matmul | Kind::Interpret => {
                for r in &inst.results {
                    m[r.index()] = true;
                }
                for v in inst.value_operands() {
                    m[v.index()] = true;
                }
            }
            Kind::View => {
                for v in inst.value_operands() {
                    m[v.index()] = true;
                }
            }
            Kind::ReshapeCopy => m[inst.result().index()] = true,
            Kind::Relabel | Kind::Pointwise | Kind::Reduce => {}
        }
    }
    m
}

/// Where a value of a kernel comes from: which kernel dim each of the
/// value's dims follows (`None`: broadcast, size 1).
type DimMap = Vec<Option<usize>>;

struct PlanBuilder<'a> {
    func: &'a Func,
    ctx: &'a InferCtx,
    kinds: &'a [Kind],
    /// Each instruction's inference, by its (first) result; the same in
    /// every build of the retry loop, so computed once.
    inferred: &'a [Option<Inferred>],
    materialized: &'a [bool],
    device: Device,
    buffers: Vec<Buffer>,
    views: Vec<Option<TensorView>>,
    steps: Vec<Step>,
    /// For each inlined value, the kernels that compute it.
    /// Ordered, so that the value picked for a retry (the first one
    /// inlined into several kernels) and so the plan are the same on every
    /// run.
    inlined_in: BTreeMap<ValueId, BTreeSet<usize>>,
    /// The values to materialize before trying again (one, or those the
    /// final check finds together), in program order.
    retry: Vec<ValueId>,
}

/// The kernel being built.
struct KernelBuilder {
    space: Vec<i64>,
    /// Which dims are reduced; fixed by the first inlined reduction.
    reduced: Option<Vec<bool>>,
    args: Vec<BufferId>,
    accesses: Vec<Access>,
    nodes: Vec<Node>,
    memo: HashMap<(ValueId, DimMap), NodeId>,
    const_memo: HashMap<(String, DType), NodeId>,
}

impl KernelBuilder {
    fn new(space: Vec<i64>) -> KernelBuilder {
        KernelBuilder {
            space,
            reduced: None,
            args: Vec::new(),
            accesses: Vec::new(),
            nodes: Vec::new(),
            memo: HashMap::new(),
            const_memo: HashMap::new(),
        }
    }

    fn node(&mut self, expr: Expr, dtype: DType, compute: DType) -> NodeId {
        self.nodes.push(Node {
            expr,
            dtype,
            compute,
        });
        NodeId(self.nodes.len() as u32 - 1)
    }

    fn constant(&mut self, value: Scalar, dtype: DType) -> NodeId {
        let key = (format!("{value:?}"), dtype);
        if let Some(&n) = self.const_memo.get(&key) {
            return n;
        }
        let n = self.node(Expr::Const(value), dtype, dtype);
        self.const_memo.insert(key, n);
        n
    }

    fn cast(&mut self, x: NodeId, dtype: DType) -> NodeId {
        let from = self.nodes[x.index()].dtype;
        if from == dtype {
            x
        } else {
            self.node(Expr::Cast { x }, dtype, from)
        }
    }

    fn arg(&mut self, buffer: BufferId) -> usize {
        match self.args.iter().position(|&b| b == buffer) {
            Some(i) => i,
            None => {
                self.args.push(buffer);
                self.args.len() - 1
            }
        }
    }

    /// An access of `view` where the view's dim `j` follows kernel dim
    /// `map[j]`.
    fn access(&mut self, view: &TensorView, map: &DimMap) -> usize {
        let mut strides = vec![0i64; self.space.len()];
        for (j, m) in map.iter().enumerate() {
            if let Some(d) = m {
                match view.geometry.shape[j] {
                    1 => {}
                    // No element is ever read along an empty dim; a nonzero
                    // stride keeps the access inside the loops over it.
                    0 => strides[*d] = 1,
                    _ => strides[*d] += view.geometry.strides[j],
                }
            }
        }
        let access = Access {
            arg: self.arg(view.buffer),
            dtype: view.dtype,
            offset: view.geometry.offset,
            strides,
        };
        match self.accesses.iter().position(|a| *a == access) {
            Some(i) => i,
            None => {
                self.accesses.push(access);
                self.accesses.len() - 1
            }
        }
    }
}

/// The map of an operand of shape `shape` broadcast into a consumer whose
/// dims follow `map` (right-aligned, as PyTorch broadcasts).
fn broadcast_map(shape: &[i64], consumer_shape: &[i64], map: &DimMap) -> DimMap {
    let offset = consumer_shape.len() - shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(j, &s)| {
            if s == 1 && consumer_shape[offset + j] != 1 {
                None
            } else {
                map[offset + j]
            }
        })
        .collect()
}

/// Whether two maps read the same kernel elements (a size-1 kernel dim
/// reads like a broadcast).
fn same_dims(a: &DimMap, b: &DimMap, space: &[i64]) -> bool {
    let unit = |m: Option<usize>| m.is_none_or(|d| space[d] == 1);
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(&x, &y)| x == y || (unit(x) && unit(y)))
}

fn identity_map(rank: usize) -> DimMap {
    (0..rank).map(Some).collect()
}

/// Whether a cheap value that reads `loads` buffers, inlined into
/// `kernels` kernels, moves more bytes recomputed in each (`kernels` ×
/// `loads` reads) than computed once into memory and read back (`loads`
/// reads, 1 write, `kernels` reads), counting every tensor as the same
/// size (they share the kernels' shape or broadcast to it).
fn rereads(loads: usize, kernels: usize) -> bool {
    kernels * loads > loads + 1 + kernels
}

/// Ops worth materializing rather than recomputing at every element of a
/// broadcast (their cost class, from the op table).
fn expensive(op: &Op) -> bool {
    op.cost().is_expensive()
}

/// Which dims of a rank-`rank` input a reduction folds (the rule of
/// inference, [`kiln_ir::infer::reduced_dims`]).
fn reduced_dims(op: &Op, rank: usize) -> Result<Vec<bool>> {
    let dims: Option<Vec<i64>> = match op {
        Op::Reduce { dims, .. } => dims.clone(),
        Op::ArgReduce { dim, .. } => dim.map(|d| vec![d]),
        other => {
            return Err(Error::new(
                ErrorKind::Backend,
                format!("fuse: {} is not a reduction", other.name()),
            ));
        }
    };
    kiln_ir::infer::reduced_dims(dims.as_deref(), rank)
}

fn keepdim(op: &Op) -> bool {
    match op {
        Op::Reduce { keepdim, .. } | Op::ArgReduce { keepdim, .. } => *keepdim,
        _ => false,
    }
}

/// How the output dims of a reduction follow its input's dims.
fn reduction_output_map(reduced: &[bool], keep: bool) -> DimMap {
    reduced
        .iter()
        .enumerate()
        .filter_map(|(d, &r)| match (r, keep) {
            (false, _) => Some(Some(d)),
            (true, true) => Some(None),
            (true, false) => None,
        })
        .collect()
}

impl<'a> PlanBuilder<'a> {
    fn new(
        func: &'a Func,
        ctx: &'a InferCtx,
        kinds: &'a [Kind],
        inferred: &'a [Option<Inferred>],
        materialized: &'a [bool],
        device: Device,
    ) -> PlanBuilder<'a> {
        PlanBuilder {
            func,
            ctx,
            kinds,
            inferred,
            materialized,
            device,
            buffers: Vec::new(),
            views: vec![None; func.values.len()],
            steps: Vec::new(),
            inlined_in: BTreeMap::new(),
            retry: Vec::new(),
        }
    }

    fn kind_of(&self, v: ValueId) -> Option<Kind> {
        match self.func.value(v).def {
            kiln_ir::graph::ValueDef::Inst { inst, .. } => Some(self.kinds[inst]),
            kiln_ir::graph::ValueDef::Param(_) => None,
        }
    }

    fn new_buffer(&mut self, role: BufferRole, v: ValueId) -> Result<TensorView> {
        let ty = self.func.ty(v);
        let strides = ty.strides().ok_or_else(not_laid_out)?.to_vec();
        let geometry = Geometry::new(ty.shape.clone(), strides, 0);
        let bytes = geometry.storage_bytes(ty.dtype.itemsize())?;
        self.buffers.push(Buffer {
            role,
            bytes,
            dtype: ty.dtype,
        });
        let view = TensorView {
            buffer: BufferId(self.buffers.len() as u32 - 1),
            dtype: ty.dtype,
            geometry,
        };
        self.views[v.index()] = Some(view.clone());
        Ok(view)
    }

    fn view(&self, v: ValueId) -> TensorView {
        self.views[v.index()]
            .clone()
            .expect("materialized values are placed before their uses")
    }

    /// Builds the plan, or `None` after setting `retry` to values that
    /// must be materialized first.
    fn build(&mut self) -> Result<Option<KernelPlan>> {
        for (i, &p) in self.func.params.iter().enumerate() {
            self.new_buffer(BufferRole::Input(i), p)?;
        }
        for (index, inst) in self.func.insts.iter().enumerate() {
            let v = inst.result();
            let kind = self.kinds[index];
            let relabel_of_memory = kind == Kind::Relabel && {
                let source = inst.value_operands().next().expect("views have a source");
                self.views[source.index()].is_some()
            };
            if kind == Kind::View || relabel_of_memory {
                let source = inst.value_operands().next().expect("views have a source");
                if self.views[source.index()].is_none() {
                    // The source is inlined: the view will be computed when used.
                    continue;
                }
                let src = self.view(source);
                let ty = self.func.ty(source);
                let g = match result_layout(
                    &inst.op,
                    &[LayoutArg::Tensor(&src.geometry, ty)],
                    self.func.ty(v),
                )? {
                    ResultLayout::View(g) => g,
                    ResultLayout::Fresh(_) => unreachable!("classified as a view"),
                };
                self.views[v.index()] = Some(TensorView {
                    buffer: src.buffer,
                    dtype: src.dtype,
                    geometry: g,
                });
                continue;
            }
            if !self.materialized[v.index()] {
                continue;
            }
            if kind == Kind::Relabel {
                // A relabeled value needed in memory is a view of its
                // source in memory: computing the source in the view's
                // index space could split the source's reductions.
                let source = inst.value_operands().next().expect("views have a source");
                self.retry = vec![source];
                return Ok(None);
            }
            if kind == Kind::Interpret {
                let outs = inst
                    .results
                    .iter()
                    .map(|r| self.new_buffer(BufferRole::Temp { slot: 0 }, *r))
                    .collect::<Result<Vec<_>>>()?;
                self.interpret(inst, outs)?;
                continue;
            }
            let out = self.new_buffer(BufferRole::Temp { slot: 0 }, v)?;
            match kind {
                Kind::Matmul => {
                    let (a, b) = self.two_operands(inst);
                    self.steps.push(Step::Matmul { a, b, out });
                }
                Kind::Cat => {
                    if !self.cat(inst, &out)? {
                        return Ok(None);
                    }
                }
                Kind::Interpret => unreachable!("handled above"),
                Kind::ReshapeCopy => {
                    let source = inst.value_operands().next().expect("a source");
                    let shape = self.func.ty(source).shape.clone();
                    let target = TensorView {
                        geometry: Geometry::new(shape.clone(), contiguous_strides(&shape), 0),
                        ..out
                    };
                    let mut k = KernelBuilder::new(shape.clone());
                    let Some(n) = self.value(&mut k, source, identity_map(shape.len()))? else {
                        return Ok(None);
                    };
                    self.finish_kernel(k, vec![(n, target, identity_map(shape.len()))])?;
                }
                Kind::Relabel | Kind::Pointwise | Kind::Reduce => {
                    let ty_shape = self.func.ty(v).shape.clone();
                    let (mut k, map) = if kind == Kind::Reduce {
                        let x = inst.value_operands().next().expect("an operand");
                        let shape = self.func.ty(x).shape.clone();
                        let reduced = reduced_dims(&inst.op, shape.len())?;
                        let map = reduction_output_map(&reduced, keepdim(&inst.op));
                        let mut k = KernelBuilder::new(shape);
                        k.reduced = Some(reduced);
                        (k, map)
                    } else {
                        (
                            KernelBuilder::new(ty_shape.clone()),
                            identity_map(ty_shape.len()),
                        )
                    };
                    let Some(n) = self.computed(&mut k, inst, map.clone())? else {
                        return Ok(None);
                    };
                    self.finish_kernel(k, vec![(n, out, map)])?;
                }
                Kind::View => unreachable!("handled above"),
            }
        }
        // A value inlined into several kernels is computed several times:
        // fine for cheap pointwise work, not for reductions or
        // transcendentals, nor for work that reads many buffers: each
        // kernel would read them all again (a residual stream left inlined
        // makes layer n's norm re-add the outputs of all n layers before
        // it, quadratic in depth).
        //
        // Such values are found in program order, each decided as if the
        // ones found before it were already in memory (which changes what
        // it reads, not the kernels it is inlined into; approximately: a
        // relabel of such a value would count as a load of its own, and
        // a relabeled one would bring its source into memory), and all of them
        // are materialized before the next build: 2 builds for GPT-2
        // small where one value a build took 45. (Materializing one can
        // make a value before it recomputed, which the next build finds;
        // so the plan could in principle differ from one value a build's.
        // It is the same, byte for byte, on every test and bench program
        // and on exported GPT-2 small, BERT-base, a Llama decoder and
        // ResNet-18.)
        let mut found: Vec<ValueId> = Vec::new();
        for (v, kernels) in &self.inlined_in {
            let inst = self.func.def_inst(*v).expect("inlined values are computed");
            if kernels.len() < 2 {
                continue;
            }
            if expensive(&inst.op) {
                // (A conservative stop, not one the order requires: with
                // it, every program checked keeps the plan one value a
                // build gives, which materializing past an expensive
                // value changed for one, `losses.kir`, to another of as
                // many kernels.)
                if found.is_empty() {
                    found.push(*v);
                }
                break;
            }
            if rereads(self.loads_with(*v, &found), kernels.len()) {
                found.push(*v);
            }
        }
        if !found.is_empty() {
            self.retry = found;
            return Ok(None);
        }
        let outputs: Vec<TensorView> = self.func.returns.iter().map(|&r| self.view(r)).collect();
        for o in &outputs {
            if let BufferRole::Temp { .. } = self.buffers[o.buffer.index()].role {
                self.buffers[o.buffer.index()].role = BufferRole::Output;
            }
        }
        Ok(Some(KernelPlan {
            name: self.func.name.clone(),
            device: self.device,
            buffers: std::mem::take(&mut self.buffers),
            slots: Vec::new(),
            steps: std::mem::take(&mut self.steps),
            outputs,
        }))
    }

    /// The values in memory that computing `v` where it is inlined reads
    /// (those its inlined operands reach, counted once each), with the
    /// values of `placed` (in program order) in memory too.
    fn loads_with(&self, v: ValueId, placed: &[ValueId]) -> usize {
        let mut loads = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut todo = vec![v];
        while let Some(v) = todo.pop() {
            let Some(inst) = self.func.def_inst(v) else {
                continue;
            };
            for o in inst.value_operands() {
                if self.views[o.index()].is_some() || placed.binary_search(&o).is_ok() {
                    loads.insert(o);
                } else if seen.insert(o) {
                    todo.push(o);
                }
            }
        }
        loads.len()
    }

    fn two_operands(&self, inst: &Inst) -> (TensorView, TensorView) {
        let mut ops = inst.value_operands();
        let a = ops.next().expect("two operands");
        let b = ops.next().expect("two operands");
        (self.view(a), self.view(b))
    }

    /// cat: one copy kernel per operand into its slice of the result.
    /// The kernels of a cat, one per operand; `false` when an operand must
    /// be materialized first (`retry` is set).
    fn cat(&mut self, inst: &Inst, out: &TensorView) -> Result<bool> {
        let Op::Cat { dim } = inst.op else {
            unreachable!("cat")
        };
        let rank = out.geometry.rank();
        if rank == 0 {
            return Ok(true);
        }
        let d = wrap_dim(dim, rank)?;
        let mut start = 0;
        for v in inst.value_operands() {
            let ty = self.func.ty(v);
            // PyTorch skips legacy empty [0] operands.
            if ty.shape == [0] && rank != 1 {
                continue;
            }
            let len = ty.shape[d];
            let slice = out
                .geometry
                .slice(d as i64, Some(start), Some(start + len), 1)?;
            start += len;
            let target = TensorView {
                geometry: slice,
                ..out.clone()
            };
            // Each operand is computed (or loaded) straight into its
            // slice of the result: its producers fuse with the copy.
            let mut k = KernelBuilder::new(ty.shape.clone());
            let Some(n) = self.value(&mut k, v, identity_map(ty.rank()))? else {
                return Ok(false);
            };
            let n = k.cast(n, out.dtype);
            self.finish_kernel(k, vec![(n, target, identity_map(ty.rank()))])?;
        }
        Ok(true)
    }

    /// An instruction the backend does not compile, as a one-instruction
    /// function for the interpreter.
    fn interpret(&mut self, inst: &Inst, outs: Vec<TensorView>) -> Result<()> {
        let mut b = FuncBuilder::new("island", *self.ctx);
        let mut inputs = Vec::new();
        let mut operands = Vec::new();
        let mut params: HashMap<ValueId, ValueId> = HashMap::new();
        for o in &inst.operands {
            match o {
                Operand::Value(v) => {
                    let p =
                        match params.get(v) {
                            Some(p) => *p,
                            None => {
                                let view = self.view(*v);
                                let ty = self.func.ty(*v).clone().with_layout(
                                    kiln_ir::TypeLayout::Strided(view.geometry.strides.clone()),
                                );
                                let p = b.param(Some(self.func.name_of(*v)), ty)?;
                                inputs.push(view);
                                params.insert(*v, p);
                                p
                            }
                        };
                    operands.push(Operand::Value(p));
                }
                s => operands.push(*s),
            }
        }
        let names = inst
            .results
            .iter()
            .map(|r| self.func.name_of(*r).to_string())
            .collect();
        let rs = b.push_full(
            NewInst::new(inst.op.clone(), operands)
                .out_dtype(inst.out_dtype)
                .names(names)
                .location(inst.location.clone())
                .written(self.func.result_types_of(inst)),
        )?;
        let func = b.finish(rs, None)?;
        self.steps.push(Step::Interpret {
            func,
            inputs,
            outputs: outs,
            tail: None,
        });
        Ok(())
    }

    /// The node computing value `v` in kernel `k`, with `v`'s dims following
    /// `map`; `None` when `v` must be materialized first (`retry` is set).
    fn value(&mut self, k: &mut KernelBuilder, v: ValueId, map: DimMap) -> Result<Option<NodeId>> {
        if let Some(&n) = k.memo.get(&(v, map.clone())) {
            return Ok(Some(n));
        }
        if let Some(view) = &self.views[v.index()] {
            let view = view.clone();
            let access = k.access(&view, &map);
            let n = k.node(Expr::Load { access }, view.dtype, view.dtype);
            k.memo.insert((v, map), n);
            return Ok(Some(n));
        }
        let inst = self.func.def_inst(v).expect("parameters are materialized");
        let numel = self.func.ty(v).numel();
        let space: i64 = k.space.iter().product();
        if self.materialized[v.index()] || self.kind_of(v) == Some(Kind::View) {
            // Materialized values and views are placed before their uses.
            return Err(Error::new(
                ErrorKind::Backend,
                format!(
                    "fuse: %{} is used before it is placed",
                    self.func.name_of(v)
                ),
            ));
        }
        let Some(n) = self.computed(k, inst, map.clone())? else {
            return Ok(None);
        };
        // An expensive pointwise value broadcast over a much larger space is
        // computed at every element: cheaper to materialize it once. (In a
        // reduction kernel, a value that does not vary along the reduced
        // dims is computed once per outer index, not per element.)
        if expensive(&inst.op) && !matches!(inst.op, Op::Reduce { .. } | Op::ArgReduce { .. }) {
            let evaluations: i64 = match &k.reduced {
                Some(r) if map.iter().flatten().all(|&d| !r[d]) => k
                    .space
                    .iter()
                    .zip(r)
                    .filter(|(_, red)| !**red)
                    .map(|(n, _)| *n)
                    .product(),
                _ => space,
            };
            if numel * 4 < evaluations {
                self.retry = vec![v];
                return Ok(None);
            }
        }
        k.memo.insert((v, map), n);
        Ok(Some(n))
    }

    /// The node computing `inst`'s result in `k` (its operands inlined).
    fn computed(
        &mut self,
        k: &mut KernelBuilder,
        inst: &Inst,
        map: DimMap,
    ) -> Result<Option<NodeId>> {
        let kernel_index = self.steps.len();
        self.inlined_in
            .entry(inst.result())
            .or_default()
            .insert(kernel_index);
        let func = self.func;
        let out_ty = func.ty(inst.result());
        let table = self.inferred;
        let inferred_here;
        let inferred = match &table[inst.result().index()] {
            Some(i) => i,
            None => {
                inferred_here = func.infer_inst(inst, self.ctx)?;
                &inferred_here
            }
        };
        let natural = inferred.natural_dtype;
        let operand_dtype = |i: usize| inferred.operand_dtypes.get(i).copied().flatten();
        macro_rules! operand {
            ($i:expr, $map:expr) => {{
                let Some(n) = self.operand(k, inst, $i, $map, &inferred.operand_dtypes)? else {
                    return Ok(None);
                };
                n
            }};
        }
        let n = match &inst.op {
            Op::Unary { op } => {
                let x = operand!(0, &map);
                let compute = operand_dtype(0).unwrap_or(k.nodes[x.index()].dtype);
                k.node(Expr::Unary { op: *op, x }, natural, compute)
            }
            Op::Binary { op } => {
                let a = operand!(0, &map);
                let b = operand!(1, &map);
                let compute = operand_dtype(0)
                    .or(operand_dtype(1))
                    .unwrap_or(k.nodes[a.index()].dtype);
                k.node(Expr::Binary { op: *op, a, b }, natural, compute)
            }
            Op::Where => {
                let cond = operand!(0, &map);
                let a = operand!(1, &map);
                let b = operand!(2, &map);
                k.node(Expr::Where { cond, a, b }, natural, natural)
            }
            Op::Cast { .. } | Op::Contiguous { .. } | Op::Clone { .. } | Op::To { .. } => {
                let x = operand!(0, &map);
                k.cast(x, natural)
            }
            _ if self.kind_of(inst.result()) == Some(Kind::Relabel) => {
                let source = inst.value_operands().next().expect("views have a source");
                let relabel = relabeling(func, inst)?.expect("classified as a relabeling");
                let src_map: DimMap = relabel.iter().map(|r| r.and_then(|j| map[j])).collect();
                let Some(n) = self.value(k, source, src_map)? else {
                    return Ok(None);
                };
                n
            }
            Op::Full { value, .. } => k.constant(*value, natural),
            Op::Arange { start, step, .. } => {
                let mut strides = vec![0; k.space.len()];
                if let Some(Some(d)) = map.first() {
                    strides[*d] = 1;
                }
                let i = k.node(Expr::Iota { offset: 0, strides }, DType::I64, DType::I64);
                // The interpreter's arithmetic: an integer result in int64
                // from start and step truncated to integers (PyTorch's),
                // a float result in f64.
                let integral = !natural.is_floating_point() && !natural.is_complex();
                let truncated = |s: &Scalar| match s {
                    Scalar::Float(f) if integral => Scalar::Int(f.trunc() as i64),
                    Scalar::Bool(b) if integral => Scalar::Int(i64::from(*b)),
                    other => *other,
                };
                let (start, step) = (&truncated(start), &truncated(step));
                let d = if integral { DType::I64 } else { DType::F64 };
                let i = k.cast(i, d);
                // start + i·step, without the integer identities (i·1,
                // 0 + x) that need no work.
                let is = |s: &Scalar, v: i64| integral && *s == Scalar::Int(v);
                let scaled = if is(step, 1) {
                    i
                } else {
                    let st = k.constant(*step, d);
                    k.node(
                        Expr::Binary {
                            op: BinaryOp::Mul,
                            a: i,
                            b: st,
                        },
                        d,
                        d,
                    )
                };
                let sum = if is(start, 0) {
                    scaled
                } else {
                    let s = k.constant(*start, d);
                    k.node(
                        Expr::Binary {
                            op: BinaryOp::Add,
                            a: s,
                            b: scaled,
                        },
                        d,
                        d,
                    )
                };
                k.cast(sum, natural)
            }
            Op::Reduce { .. } | Op::ArgReduce { .. } => {
                let x = inst.value_operands().next().expect("an operand");
                let x_shape = &func.ty(x).shape;
                let reduced = reduced_dims(&inst.op, x_shape.len())?;
                let expected = reduction_output_map(&reduced, keepdim(&inst.op));
                let compatible = *x_shape == k.space
                    && k.reduced.as_ref().is_none_or(|r| *r == reduced)
                    && same_dims(&map, &expected, &k.space);
                if !compatible {
                    self.retry = vec![inst.result()];
                    return Ok(None);
                }
                k.reduced = Some(reduced);
                let xn = operand!(0, &identity_map(x_shape.len()));
                match &inst.op {
                    Op::Reduce { op, .. } => {
                        let compute = operand_dtype(0).unwrap_or(k.nodes[xn.index()].dtype);
                        let xn = k.cast(xn, compute);
                        k.node(Expr::Reduce { op: *op, x: xn }, natural, compute)
                    }
                    Op::ArgReduce { op, .. } => {
                        let compute = k.nodes[xn.index()].dtype;
                        k.node(Expr::ArgReduce { op: *op, x: xn }, DType::I64, compute)
                    }
                    _ => unreachable!("a reduction"),
                }
            }
            other => {
                return Err(Error::new(
                    ErrorKind::Backend,
                    format!("fuse: {} cannot be inlined", other.name()),
                ));
            }
        };
        Ok(Some(k.cast(n, out_ty.dtype)))
    }

    /// Operand `i` of a pointwise instruction whose result follows `map`.
    fn operand(
        &mut self,
        k: &mut KernelBuilder,
        inst: &Inst,
        i: usize,
        map: &DimMap,
        operand_dtypes: &[Option<DType>],
    ) -> Result<Option<NodeId>> {
        let want = operand_dtypes.get(i).copied().flatten();
        match inst.operands[i] {
            Operand::Scalar(s) => {
                let dtype = match want {
                    Some(d) => inst.op.scalar_dtype(d),
                    None => match s {
                        Scalar::Bool(_) => DType::Bool,
                        Scalar::Int(_) | Scalar::UInt(_) => DType::I64,
                        Scalar::Float(_) => DType::F64,
                        Scalar::Complex(..) => DType::C128,
                    },
                };
                Ok(Some(k.constant(s, dtype)))
            }
            Operand::None => Err(Error::new(
                ErrorKind::Backend,
                format!(
                    "fuse: {} has an absent operand a kernel would read",
                    inst.op.name()
                ),
            )),
            Operand::Value(v) => {
                let shape = &self.func.ty(v).shape;
                let consumer = match &inst.op {
                    Op::Reduce { .. } | Op::ArgReduce { .. } => shape,
                    _ => &self.func.ty(inst.result()).shape,
                };
                let vmap = broadcast_map(shape, consumer, map);
                let Some(n) = self.value(k, v, vmap)? else {
                    return Ok(None);
                };
                Ok(Some(match want {
                    Some(d) => k.cast(n, d),
                    None => n,
                }))
            }
        }
    }

    /// Adds a kernel to the plan with its stores, its outer dims first and
    /// its reduced dims last (each in logical order).
    fn finish_kernel(
        &mut self,
        k: KernelBuilder,
        stores: Vec<(NodeId, TensorView, DimMap)>,
    ) -> Result<()> {
        let mut k = k;
        let mut store_list = Vec::new();
        for (node, view, map) in stores {
            let node = k.cast(node, view.dtype);
            let access = k.access(&view, &map);
            store_list.push(Store { node, access });
        }
        let rank = k.space.len();
        let reduced = k.reduced.clone().unwrap_or_else(|| vec![false; rank]);
        let order: Vec<usize> = (0..rank)
            .filter(|&d| !reduced[d])
            .chain((0..rank).filter(|&d| reduced[d]))
            .collect();
        let permute = |v: &[i64]| -> Vec<i64> { order.iter().map(|&d| v[d]).collect() };
        let mut kernel = Kernel {
            name: format!("k{}", self.steps.len()),
            space: permute(&k.space),
            outer_rank: reduced.iter().filter(|r| !**r).count(),
            args: k.args,
            accesses: k.accesses,
            nodes: k.nodes,
            stores: store_list,
        };
        for a in &mut kernel.accesses {
            a.strides = permute(&a.strides);
        }
        for n in &mut kernel.nodes {
            if let Expr::Iota { strides, .. } = &mut n.expr {
                *strides = permute(strides);
            }
        }
        check_reductions(&kernel)?;
        self.steps.push(Step::Kernel(kernel));
        Ok(())
    }
}

/// Reducing zero elements has no answer for max, min and their indices.
fn check_reductions(k: &Kernel) -> Result<()> {
    if k.inner_count() != 0 || k.outer_count() == 0 {
        return Ok(());
    }
    for n in &k.nodes {
        let message = match &n.expr {
            Expr::Reduce { op, .. }
                if matches!(op, kiln_ir::ReduceOp::Amax | kiln_ir::ReduceOp::Amin) =>
            {
                format!("{}: reducing an empty dim", op.name())
            }
            Expr::ArgReduce { op, .. } => format!("{}: empty input", op.name()),
            _ => continue,
        };
        return Err(Error::new(ErrorKind::Shape, message));
    }
    Ok(())
}
