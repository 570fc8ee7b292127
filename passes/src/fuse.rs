//! The fuse pass: turns a laid-out module into a [`KernelPlan`].
//!
//! Every value the program must hold in memory is *materialized* into a
//! buffer: inputs, results, the operands and results of matmul, cat and of
//! instructions the backend does not compile, and the sources of views.
//! Everything else is *inlined*: each materialized value becomes the root of
//! one kernel whose expression reaches back through pointwise ops,
//! broadcasts, casts, copies and reductions until it meets materialized
//! values, which it loads through strided accesses. Views cost nothing: they
//! are accesses with other strides and offsets.
//!
//! A reduction inlined into a kernel over its input's shape turns the kernel
//! into a reduction kernel, and the pointwise work before (the prologue) and
//! after it (the epilogue, broadcast back over the reduced dims) runs in the
//! same kernel, in phases (see [`crate::plan`]). Inlining stops — the value is
//! materialized and the plan rebuilt — where it would change the kernel's
//! reduced dims, recompute a reduction in several kernels, or recompute an
//! expensive small value at every element of a large broadcast.
//!
//! Kernels are then normalized: loops ordered so the innermost one walks
//! memory contiguously, size-1 dims dropped, and dims that are contiguous
//! in every access merged into one long loop.

use std::collections::{BTreeSet, HashMap};

use kiln_ir::graph::{Func, FuncBuilder, Inst, NewInst, Operand, ValueId};
use kiln_ir::infer::InferCtx;
use kiln_ir::layout::contiguous_strides;
use kiln_ir::view::{Geometry, wrap_dim};
use kiln_ir::{BinaryOp, DType, Device, Error, ErrorKind, Module, Op, Result, Scalar};

use crate::plan::{
    Access, Buffer, BufferId, BufferRole, Expr, Kernel, KernelPlan, Node, NodeId, Step, Store,
    TensorView,
};
use kiln_ir::layout::{LayoutArg, ResultLayout, result_layouts};

/// What a backend can compile, which decides what the plan asks of it.
pub trait Target {
    /// The device the plan's kernels run on.
    fn device(&self) -> Device;

    /// Whether kernels can compute this instruction (its op on its dtypes);
    /// others run on the reference interpreter.
    fn compiles(&self, func: &Func, inst: &Inst) -> bool;

    /// Whether a matmul on this dtype runs as a library call.
    fn has_matmul(&self, dtype: DType) -> bool;
}

/// How an instruction takes part in fusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A view of its first operand: no computation.
    View,
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
pub fn plan(module: &Module, target: &dyn Target) -> Result<KernelPlan> {
    let func = module.entry()?;
    let ctx = module.ctx();
    let kinds = func
        .insts
        .iter()
        .map(|inst| classify(func, inst, target))
        .collect::<Result<Vec<_>>>()?;
    let mut materialized = initial_materialized(func, &kinds);
    // Each retry materializes one more value; there are finitely many.
    loop {
        let mut b = PlanBuilder::new(func, &ctx, &kinds, &materialized, target.device());
        match b.build()? {
            Some(plan) => return Ok(plan),
            None => {
                let v = b
                    .retry
                    .expect("a failed build names a value to materialize");
                if materialized[v.index()] {
                    return Err(Error::new(
                        ErrorKind::Backend,
                        format!("fuse: materializing %{} again", func.name_of(v)),
                    ));
                }
                materialized[v.index()] = true;
            }
        }
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
            Kind::Matmul | Kind::Cat | Kind::Interpret => {
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
            Kind::Pointwise | Kind::Reduce => {}
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
    materialized: &'a [bool],
    device: Device,
    buffers: Vec<Buffer>,
    views: Vec<Option<TensorView>>,
    steps: Vec<Step>,
    /// For each inlined value, the kernels that compute it.
    inlined_in: HashMap<ValueId, BTreeSet<usize>>,
    /// The value to materialize before trying again.
    retry: Option<ValueId>,
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
    has_arg_reduce: bool,
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
            has_arg_reduce: false,
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

/// Ops worth materializing rather than recomputing at every element of a
/// broadcast (their cost class, from the op table).
fn expensive(op: &Op) -> bool {
    op.cost().is_expensive()
}

/// Which dims of a rank-`rank` input a reduction folds.
fn reduced_dims(op: &Op, rank: usize) -> Result<Vec<bool>> {
    let dims: Vec<i64> = match op {
        Op::Reduce { dims, .. } => match dims {
            Some(d) if !d.is_empty() => d.clone(),
            _ => (0..rank as i64).collect(),
        },
        Op::ArgReduce { dim, .. } => match dim {
            Some(d) => vec![*d],
            None => (0..rank as i64).collect(),
        },
        _ => unreachable!("only reductions reduce"),
    };
    let mut r = vec![false; rank];
    for d in dims {
        if rank > 0 {
            r[wrap_dim(d, rank)?] = true;
        }
    }
    Ok(r)
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
        materialized: &'a [bool],
        device: Device,
    ) -> PlanBuilder<'a> {
        PlanBuilder {
            func,
            ctx,
            kinds,
            materialized,
            device,
            buffers: Vec::new(),
            views: vec![None; func.values.len()],
            steps: Vec::new(),
            inlined_in: HashMap::new(),
            retry: None,
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

    /// Builds the plan, or `None` after setting `retry` to a value that
    /// must be materialized first.
    fn build(&mut self) -> Result<Option<KernelPlan>> {
        for (i, &p) in self.func.params.iter().enumerate() {
            self.new_buffer(BufferRole::Input(i), p)?;
        }
        for (index, inst) in self.func.insts.iter().enumerate() {
            let v = inst.result();
            let kind = self.kinds[index];
            if kind == Kind::View {
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
                Kind::Cat => self.cat(inst, &out)?,
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
                Kind::Pointwise | Kind::Reduce => {
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
        // fine for cheap pointwise work, not for reductions or transcendentals.
        for (v, kernels) in &self.inlined_in {
            let inst = self.func.def_inst(*v).expect("inlined values are computed");
            if kernels.len() > 1 && expensive(&inst.op) {
                self.retry = Some(*v);
                return Ok(None);
            }
        }
        let outputs: Vec<TensorView> = self.func.returns.iter().map(|&r| self.view(r)).collect();
        for o in &outputs {
            if let BufferRole::Temp { .. } = self.buffers[o.buffer.index()].role {
                self.buffers[o.buffer.index()].role = BufferRole::Output;
            }
        }
        let slots = assign_slots(&mut self.buffers, &self.steps);
        Ok(Some(KernelPlan {
            name: self.func.name.clone(),
            device: self.device,
            buffers: std::mem::take(&mut self.buffers),
            slots,
            steps: std::mem::take(&mut self.steps),
            outputs,
        }))
    }

    fn two_operands(&self, inst: &Inst) -> (TensorView, TensorView) {
        let mut ops = inst.value_operands();
        let a = ops.next().expect("two operands");
        let b = ops.next().expect("two operands");
        (self.view(a), self.view(b))
    }

    /// cat: one copy kernel per operand into its slice of the result.
    fn cat(&mut self, inst: &Inst, out: &TensorView) -> Result<()> {
        let Op::Cat { dim } = inst.op else {
            unreachable!("cat")
        };
        let rank = out.geometry.rank();
        if rank == 0 {
            return Ok(());
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
            let mut k = KernelBuilder::new(ty.shape.clone());
            let src = self.view(v);
            let access = k.access(&src, &identity_map(ty.rank()));
            let load = k.node(Expr::Load { access }, src.dtype, src.dtype);
            let n = k.cast(load, out.dtype);
            self.finish_kernel(k, vec![(n, target, identity_map(ty.rank()))])?;
        }
        Ok(())
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
                self.retry = Some(v);
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
        let inferred = func.infer_inst(inst, self.ctx)?;
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
            Op::Full { value, .. } => k.constant(*value, natural),
            Op::Arange { start, step, .. } => {
                let mut strides = vec![0; k.space.len()];
                if let Some(Some(d)) = map.first() {
                    strides[*d] = 1;
                }
                let i = k.node(Expr::Iota { offset: 0, strides }, DType::I64, DType::I64);
                // The interpreter's arithmetic: exact integers when start
                // and step are integers, f64 otherwise.
                let int = |s: &Scalar| matches!(s, Scalar::Int(_) | Scalar::UInt(_));
                let integral = int(start) && int(step) && !natural.is_floating_point();
                let d = if integral { DType::I64 } else { DType::F64 };
                let i = k.cast(i, d);
                let st = k.constant(*step, d);
                let s = k.constant(*start, d);
                let scaled = k.node(
                    Expr::Binary {
                        op: BinaryOp::Mul,
                        a: i,
                        b: st,
                    },
                    d,
                    d,
                );
                let sum = k.node(
                    Expr::Binary {
                        op: BinaryOp::Add,
                        a: s,
                        b: scaled,
                    },
                    d,
                    d,
                );
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
                    self.retry = Some(inst.result());
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
                        k.has_arg_reduce = true;
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

    /// Normalizes a kernel and adds it to the plan with its stores.
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
        let reduced = k
            .reduced
            .clone()
            .unwrap_or_else(|| vec![false; k.space.len()]);
        let mut kernel = Kernel {
            name: format!("k{}", self.steps.len()),
            space: k.space,
            outer_rank: 0,
            args: k.args,
            accesses: k.accesses,
            nodes: k.nodes,
            stores: store_list,
        };
        normalize(&mut kernel, &reduced, k.has_arg_reduce);
        reuse_stored_values(&mut kernel);
        check_reductions(&kernel)?;
        match self.split_reduction(&kernel)? {
            Some((partial, last)) => {
                self.steps.push(Step::Kernel(partial));
                let mut last = last;
                last.name = format!("k{}", self.steps.len());
                self.steps.push(Step::Kernel(last));
            }
            None => self.steps.push(Step::Kernel(kernel)),
        }
        Ok(())
    }

    /// A reduction with few outer iterations and a long reduced dim (the
    /// sum of a whole tensor) would run on one thread. Split in two: the
    /// first kernel folds `SPLIT` slices of the reduced dim in parallel
    /// into partial results (kept at accumulation precision), the second
    /// folds the partials and computes what follows the reduction.
    fn split_reduction(&mut self, k: &Kernel) -> Result<Option<(Kernel, Kernel)>> {
        const SPLIT: i64 = 64;
        let o = k.outer_rank;
        let sched = k.schedule();
        let reductions: Vec<NodeId> = (0..k.nodes.len())
            .map(|i| NodeId(i as u32))
            .filter(|&n| k.node(n).is_reduction())
            .collect();
        let splittable = o < k.rank()
            && k.outer_count() < 16
            && k.inner_count() >= 1 << 18
            && k.space[o] % SPLIT == 0
            && k.phase_count() == 1
            && !reductions.is_empty()
            && reductions
                .iter()
                .all(|&n| matches!(k.node(n).expr, Expr::Reduce { .. }))
            && k.stores
                .iter()
                .all(|st| k.store_phase(st, &sched).is_none());
        if !splittable {
            return Ok(None);
        }
        let slice = k.space[o] / SPLIT;
        // The partial kernel: the split dim joins the outer dims.
        let mut partial = k.clone();
        partial.name = format!("k{}", self.steps.len());
        partial.space.splice(o..=o, [SPLIT, slice]);
        partial.outer_rank = o + 1;
        let split_strides = |strides: &mut Vec<i64>| {
            let s0 = strides[o];
            strides.splice(o..=o, [s0 * slice, s0]);
        };
        for a in &mut partial.accesses {
            split_strides(&mut a.strides);
        }
        for n in &mut partial.nodes {
            if let Expr::Iota { strides, .. } = &mut n.expr {
                split_strides(strides);
            }
        }
        partial.stores.clear();
        // The final kernel: the split dim is its reduced dim.
        let mut last = Kernel {
            name: String::new(),
            space: k.space[..o].iter().copied().chain([SPLIT]).collect(),
            outer_rank: o,
            args: k.args.clone(),
            accesses: Vec::new(),
            nodes: Vec::new(),
            stores: Vec::new(),
        };
        // Outer accesses keep their strides along the outer dims.
        let mut last_access: HashMap<usize, usize> = HashMap::new();
        let mut remap: HashMap<NodeId, NodeId> = HashMap::new();
        let outer_shape: Vec<i64> = k.space[..o].to_vec();
        let partial_strides = {
            let mut st = contiguous_strides(
                &outer_shape
                    .iter()
                    .copied()
                    .chain([SPLIT])
                    .collect::<Vec<_>>(),
            );
            st.truncate(o + 1);
            st
        };
        for (i, node) in k.nodes.iter().enumerate() {
            let id = NodeId(i as u32);
            let s = sched[i];
            if node.is_reduction() {
                let Expr::Reduce { op, .. } = node.expr else {
                    unreachable!("checked above")
                };
                // Float sums and products accumulate in f64.
                let acc = if node.compute.is_floating_point()
                    && matches!(op, kiln_ir::ReduceOp::Sum | kiln_ir::ReduceOp::Prod)
                {
                    DType::F64
                } else {
                    node.compute
                };
                let geometry = Geometry::new(
                    outer_shape.iter().copied().chain([SPLIT]).collect(),
                    partial_strides.clone(),
                    0,
                );
                let bytes = geometry.storage_bytes(acc.itemsize())?;
                self.buffers.push(Buffer {
                    role: BufferRole::Temp { slot: 0 },
                    bytes,
                    dtype: acc,
                });
                let buffer = BufferId(self.buffers.len() as u32 - 1);
                // Partial: the reduction at accumulation precision, stored.
                let pn = &mut partial.nodes[i];
                pn.dtype = acc;
                let mut strides = partial_strides.clone();
                strides.extend(std::iter::repeat_n(0, partial.rank() - o - 1));
                partial.args.push(buffer);
                partial.accesses.push(Access {
                    arg: partial.args.len() - 1,
                    dtype: acc,
                    offset: 0,
                    strides,
                });
                partial.stores.push(Store {
                    node: id,
                    access: partial.accesses.len() - 1,
                });
                // Last: fold the partials.
                last.args.push(buffer);
                last.accesses.push(Access {
                    arg: last.args.len() - 1,
                    dtype: acc,
                    offset: 0,
                    strides: partial_strides.clone(),
                });
                let access = last.accesses.len() - 1;
                let load = push_node(&mut last, Expr::Load { access }, acc, acc);
                let folded = push_node(&mut last, Expr::Reduce { op, x: load }, node.dtype, acc);
                remap.insert(id, folded);
                continue;
            }
            if s.inner {
                continue;
            }
            // Outer nodes: copied, with outer accesses re-created.
            let mut expr = node.expr.clone();
            match &mut expr {
                Expr::Load { access } => {
                    let a = &k.accesses[*access];
                    let new = *last_access.entry(*access).or_insert_with(|| {
                        let mut strides = a.strides[..o].to_vec();
                        strides.push(0);
                        last.accesses.push(Access {
                            strides,
                            ..a.clone()
                        });
                        last.accesses.len() - 1
                    });
                    *access = new;
                }
                Expr::Iota { strides, .. } => {
                    strides.truncate(o);
                    strides.push(0);
                }
                other => remap_operands(other, &remap),
            }
            let n = push_node(&mut last, expr, node.dtype, node.compute);
            remap.insert(id, n);
        }
        for st in &k.stores {
            let a = &k.accesses[st.access];
            let mut strides = a.strides[..o].to_vec();
            strides.push(0);
            last.accesses.push(Access {
                strides,
                ..a.clone()
            });
            last.stores.push(Store {
                node: remap[&st.node],
                access: last.accesses.len() - 1,
            });
        }
        prune(&mut partial);
        prune(&mut last);
        Ok(Some((partial, last)))
    }
}

fn push_node(k: &mut Kernel, expr: Expr, dtype: DType, compute: DType) -> NodeId {
    k.nodes.push(Node {
        expr,
        dtype,
        compute,
    });
    NodeId(k.nodes.len() as u32 - 1)
}

fn remap_operands(expr: &mut Expr, remap: &HashMap<NodeId, NodeId>) {
    let m = |id: &mut NodeId| {
        if let Some(n) = remap.get(id) {
            *id = *n;
        }
    };
    match expr {
        Expr::Load { .. } | Expr::Const(_) | Expr::Iota { .. } => {}
        Expr::Unary { x, .. }
        | Expr::Cast { x }
        | Expr::Reduce { x, .. }
        | Expr::ArgReduce { x, .. } => m(x),
        Expr::Binary { a, b, .. } => {
            m(a);
            m(b);
        }
        Expr::Where { cond, a, b } => {
            m(cond);
            m(a);
            m(b);
        }
    }
}

/// Drops the nodes no store needs, then the accesses and arguments nothing
/// uses, renumbering what is left.
fn prune(k: &mut Kernel) {
    let mut live = vec![false; k.nodes.len()];
    let mut stack: Vec<NodeId> = k.stores.iter().map(|s| s.node).collect();
    while let Some(n) = stack.pop() {
        if !std::mem::replace(&mut live[n.index()], true) {
            stack.extend(k.node(n).operands());
        }
    }
    let mut new_id = vec![NodeId(0); k.nodes.len()];
    let mut nodes = Vec::new();
    for (i, node) in k.nodes.iter().enumerate() {
        if live[i] {
            let mut node = node.clone();
            let remap: HashMap<NodeId, NodeId> = node
                .operands()
                .into_iter()
                .map(|o| (o, new_id[o.index()]))
                .collect();
            remap_operands(&mut node.expr, &remap);
            new_id[i] = NodeId(nodes.len() as u32);
            nodes.push(node);
        }
    }
    k.nodes = nodes;
    for st in &mut k.stores {
        st.node = new_id[st.node.index()];
    }
    let used: Vec<usize> = (0..k.accesses.len())
        .filter(|&a| {
            k.stores.iter().any(|s| s.access == a)
                || k.nodes
                    .iter()
                    .any(|n| matches!(n.expr, Expr::Load { access } if access == a))
        })
        .collect();
    let new_access = |a: usize| used.iter().position(|&u| u == a).expect("a used access");
    for n in &mut k.nodes {
        if let Expr::Load { access } = &mut n.expr {
            *access = new_access(*access);
        }
    }
    for st in &mut k.stores {
        st.access = new_access(st.access);
    }
    k.accesses = used.iter().map(|&a| k.accesses[a].clone()).collect();
    compact_args(k);
}

/// Drops the arguments no access uses, renumbering the rest.
fn compact_args(k: &mut Kernel) {
    let used: Vec<usize> = (0..k.args.len())
        .filter(|&i| k.accesses.iter().any(|a| a.arg == i))
        .collect();
    let new_index = |i: usize| used.iter().position(|&u| u == i).expect("a used argument");
    for a in &mut k.accesses {
        a.arg = new_index(a.arg);
    }
    k.args = used.iter().map(|&i| k.args[i]).collect();
}

/// A transcendental computed in one pass over the reduced dims and needed
/// again in a later pass (softmax's `exp`, by the sum and then the
/// quotient) is stored into the output in the first pass and loaded back in
/// the later one, instead of computed twice: the row is still in cache.
/// Only where the output holds the value exactly (same dtype) and is
/// written by that later pass at every element.
fn reuse_stored_values(k: &mut Kernel) {
    if k.outer_rank == k.rank() {
        return;
    }
    let sched = k.schedule();
    let mut used_outputs: Vec<usize> = Vec::new();
    let mut reuses: Vec<(NodeId, usize, usize)> = Vec::new();
    for store in &k.stores {
        let Some(q) = k.store_phase(store, &sched) else {
            continue;
        };
        if used_outputs.contains(&store.access) {
            continue;
        }
        let access = &k.accesses[store.access];
        let candidate = (0..k.nodes.len()).map(|i| NodeId(i as u32)).find(|&n| {
            let node = k.node(n);
            let s = sched[n.index()];
            let transcendental = matches!(
                node.expr,
                Expr::Unary {
                    op: kiln_ir::UnaryOp::Exp
                        | kiln_ir::UnaryOp::Log
                        | kiln_ir::UnaryOp::Tanh
                        | kiln_ir::UnaryOp::Erf,
                    ..
                }
            );
            transcendental
                && s.inner
                && s.phase < q
                && node.dtype == access.dtype
                && k.nodes.iter().enumerate().any(|(c, user)| {
                    user.operands().contains(&n) && sched[c].inner && sched[c].phase > s.phase
                })
        });
        if let Some(n) = candidate {
            used_outputs.push(store.access);
            reuses.push((n, store.access, sched[n.index()].phase));
        }
    }
    for (n, access, phase) in reuses {
        // The reload goes right after `n` (nodes stay in dependency order).
        let at = n.index() + 1;
        let shift = |id: NodeId| {
            if id.index() >= at {
                NodeId(id.0 + 1)
            } else {
                id
            }
        };
        let dtype = k.accesses[access].dtype;
        let sched = k.schedule();
        for (c, node) in k.nodes.iter_mut().enumerate() {
            let later = sched[c].inner && sched[c].phase > phase;
            let remap = |id: &mut NodeId| {
                *id = if *id == n && later {
                    NodeId(at as u32)
                } else {
                    shift(*id)
                }
            };
            match &mut node.expr {
                Expr::Load { .. } | Expr::Const(_) | Expr::Iota { .. } => {}
                Expr::Unary { x, .. }
                | Expr::Cast { x }
                | Expr::Reduce { x, .. }
                | Expr::ArgReduce { x, .. } => remap(x),
                Expr::Binary { a, b, .. } => {
                    remap(a);
                    remap(b);
                }
                Expr::Where { cond, a, b } => {
                    remap(cond);
                    remap(a);
                    remap(b);
                }
            }
        }
        for st in &mut k.stores {
            st.node = shift(st.node);
        }
        k.nodes.insert(
            at,
            Node {
                expr: Expr::Load { access },
                dtype,
                compute: dtype,
            },
        );
        k.stores.insert(0, Store { node: n, access });
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

/// Every stride vector of a kernel: its accesses' and its iotas'.
fn for_each_strides(k: &mut Kernel, mut f: impl FnMut(&mut Vec<i64>)) {
    for a in &mut k.accesses {
        f(&mut a.strides);
    }
    for n in &mut k.nodes {
        if let Expr::Iota { strides, .. } = &mut n.expr {
            f(strides);
        }
    }
}

fn all_strides(k: &Kernel) -> Vec<&Vec<i64>> {
    let mut out: Vec<&Vec<i64>> = k.accesses.iter().map(|a| &a.strides).collect();
    for n in &k.nodes {
        if let Expr::Iota { strides, .. } = &n.expr {
            out.push(strides);
        }
    }
    out
}

/// Orders loops (outer dims first; within each group, the dim the primary
/// access walks contiguously innermost), drops size-1 dims, and merges dims
/// that are contiguous in every access.
fn normalize(k: &mut Kernel, reduced: &[bool], keep_inner_order: bool) {
    let rank = k.space.len();
    // The primary accesses: the first store for outer dims, the first load
    // varying along reduced dims for inner ones.
    let store_strides = k
        .stores
        .first()
        .map(|s| k.accesses[s.access].strides.clone())
        .unwrap_or_else(|| vec![0; rank]);
    let inner_load = k
        .nodes
        .iter()
        .filter_map(|n| match n.expr {
            Expr::Load { access } => Some(&k.accesses[access].strides),
            _ => None,
        })
        .find(|s| (0..rank).any(|d| reduced[d] && s[d] != 0))
        .cloned()
        .unwrap_or_else(|| vec![0; rank]);
    let order = |dims: Vec<usize>, strides: &[i64], keep: bool| -> Vec<usize> {
        let mut dims = dims;
        if !keep {
            // Stable: equal strides keep logical order.
            dims.sort_by_key(|&d| std::cmp::Reverse(strides[d].abs()));
        }
        dims
    };
    let outer: Vec<usize> = order(
        (0..rank).filter(|&d| !reduced[d]).collect(),
        &store_strides,
        false,
    );
    let inner: Vec<usize> = order(
        (0..rank).filter(|&d| reduced[d]).collect(),
        &inner_load,
        keep_inner_order,
    );
    let perm: Vec<usize> = outer.iter().chain(&inner).copied().collect();
    let space = k.space.clone();
    // Drop size-1 dims (their index is always 0), unless the space is empty.
    let empty = space.contains(&0);
    let keep: Vec<usize> = perm
        .iter()
        .copied()
        .filter(|&d| space[d] != 1 || empty)
        .collect();
    let outer_kept = keep.iter().filter(|&&d| !reduced[d]).count();
    k.space = keep.iter().map(|&d| space[d]).collect();
    for_each_strides(k, |s| *s = keep.iter().map(|&d| s[d]).collect());
    k.outer_rank = outer_kept;
    // Merge dim i into dim i+1 when every stride vector allows it.
    let mut i = 0;
    while i + 1 < k.space.len() {
        let same_group = (i + 1 < k.outer_rank) || (i >= k.outer_rank);
        let mergeable = same_group
            && all_strides(k)
                .iter()
                .all(|s| s[i] == s[i + 1] * k.space[i + 1]);
        if mergeable {
            let size = k.space[i] * k.space[i + 1];
            k.space[i + 1] = size;
            k.space.remove(i);
            for_each_strides(k, |s| {
                s.remove(i);
            });
            if i < k.outer_rank {
                k.outer_rank -= 1;
            }
        } else {
            i += 1;
        }
    }
}

/// Gives temps memory slots by liveness: a temp's slot is free again after
/// the last step that reads it.
fn assign_slots(buffers: &mut [Buffer], steps: &[Step]) -> Vec<usize> {
    let mut first = vec![usize::MAX; buffers.len()];
    let mut last = vec![0usize; buffers.len()];
    let mut touch = |b: BufferId, step: usize| {
        first[b.index()] = first[b.index()].min(step);
        last[b.index()] = last[b.index()].max(step);
    };
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Kernel(k) => k.args.iter().for_each(|&b| touch(b, i)),
            Step::Matmul { a, b, out } => {
                touch(a.buffer, i);
                touch(b.buffer, i);
                touch(out.buffer, i);
            }
            Step::Interpret {
                inputs, outputs, ..
            } => inputs
                .iter()
                .chain(outputs)
                .for_each(|v| touch(v.buffer, i)),
        }
    }
    let mut slots: Vec<usize> = Vec::new();
    // Which step each slot is busy until.
    let mut busy_until: Vec<usize> = Vec::new();
    let mut order: Vec<usize> = (0..buffers.len())
        .filter(|&b| matches!(buffers[b].role, BufferRole::Temp { .. }))
        .collect();
    order.sort_by_key(|&b| first[b]);
    for b in order {
        let free = (0..slots.len())
            .filter(|&s| busy_until[s] < first[b])
            .min_by_key(|&s| slots[s].abs_diff(buffers[b].bytes));
        let slot = match free {
            Some(s) => {
                slots[s] = slots[s].max(buffers[b].bytes);
                s
            }
            None => {
                slots.push(buffers[b].bytes);
                busy_until.push(0);
                slots.len() - 1
            }
        };
        busy_until[slot] = last[b];
        buffers[b].role = BufferRole::Temp { slot };
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PassManager;

    struct Everything;

    impl Target for Everything {
        fn device(&self) -> Device {
            Device::CPU
        }
        fn compiles(&self, _: &Func, _: &Inst) -> bool {
            true
        }
        fn has_matmul(&self, _: DType) -> bool {
            true
        }
    }

    fn plan_of(text: &str) -> KernelPlan {
        let mut m = kiln_ir::parse_module("t.kir", text, kiln_ir::DefaultDType::F32).unwrap();
        PassManager::standard().run(&mut m).unwrap();
        plan(&m, &Everything).unwrap()
    }

    #[test]
    fn softmax_is_one_kernel_in_three_phases() {
        let p = plan_of(
            "func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {\n  %0 = softmax %x {dim = 1}\n  return %0\n}\n",
        );
        let kernels: Vec<_> = p.kernels().collect();
        assert_eq!(kernels.len(), 1, "{p}");
        assert_eq!(kernels[0].phase_count(), 3, "{p}");
        assert_eq!(p.slots.len(), 0, "no temps: {p}");
    }

    #[test]
    fn layer_norm_is_one_kernel_in_three_phases() {
        let p = plan_of(
            "func @main(%x: tensor<8x32xf16>, %w: tensor<32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {\n  %0 = layer_norm %x, %w, %b {normalized_shape = [32], eps = 1e-5}\n  return %0\n}\n",
        );
        let kernels: Vec<_> = p.kernels().collect();
        assert_eq!(kernels.len(), 1, "{p}");
        assert_eq!(kernels[0].phase_count(), 3, "{p}");
    }

    #[test]
    fn rounding_modes_give_different_kernel_keys() {
        let div = |mode: &str| {
            let text = format!(
                "func @main(%x: tensor<4xi64>, %y: tensor<4xi64>) -> tensor<4xi64> {{\n  %0 = div %x, %y {{rounding_mode = \"{mode}\"}}\n  return %0\n}}\n"
            );
            plan_of(&text).kernels().next().unwrap().structural_key()
        };
        assert_ne!(div("floor"), div("trunc"));
    }

    #[test]
    fn chains_fuse_and_temps_share_slots() {
        let p = plan_of(
            "func @main(%x: tensor<64xf32>, %w: tensor<64x8xf32>) -> tensor<8xf32> {\n  %a = relu %x\n  %b = mul %a, 2.0\n  %c = matmul %b, %w\n  %d = exp %c\n  return %d\n}\n",
        );
        // relu·mul before the matmul, exp after it: two kernels, one matmul.
        assert_eq!(p.kernels().count(), 2, "{p}");
        assert_eq!(p.steps.len(), 3, "{p}");
    }
}
