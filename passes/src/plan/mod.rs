//! The kernel plan: what the planner makes of a laid-out module and what
//! backends compile, and the small steps that make it ([`plan`]):
//!
//! | step | module | does |
//! |---|---|---|
//! | build | [`build`] | fuses instructions into kernels, buffers and library steps |
//! | tail | [`tail`] | marks a convolution's pointwise tail, for its output tile |
//! | normalize | [`normalize`] | orders, drops and merges each kernel's loops |
//! | reuse | [`reuse`] | stores values a later pass over a row would recompute |
//! | split | [`split`] | splits long reductions of few rows (the target's policy) |
//! | narrow | [`narrow`] | computes i64 work whose values fit in i32 in i32 |
//! | slots | [`slots`] | lets temps whose lives do not overlap share memory |
//!
//! [`donate`] finds the results that may be written into an input's
//! storage when the caller gives the input up (a key/value cache updated in
//! place).
//!
//! A plan is a list of [`Step`]s over [`Buffer`]s. A [`Kernel`] is one loop
//! nest over an iteration space: its leading `outer_rank` dims are
//! independent (backends split them across threads), the rest are folded by
//! the kernel's reductions. Its body is a small expression DAG of [`Node`]s
//! reading and writing strided [`Access`]es of its argument buffers, so
//! broadcasts (stride 0), views, transposes and storage offsets cost nothing.
//!
//! Reductions split a kernel into *phases*: all nodes that vary along the
//! reduced dims and need a reduction's result run in a later pass over those
//! dims (softmax: max, then sum of exp, then the quotient — three passes over
//! one row that stays in cache, one pass over memory). [`Kernel::schedule`]
//! computes each node's phase; every backend uses it.

use std::collections::HashMap;
use std::fmt::{self, Write};

use kiln_ir::graph::Func;
use kiln_ir::view::{Geometry, format_shape};
use kiln_ir::{ArgReduceOp, BinaryOp, DType, Device, Module, ReduceOp, Result, Scalar, UnaryOp};

pub mod build;
pub mod donate;
pub mod narrow;
pub mod normalize;
pub mod reuse;
pub mod slots;
pub mod split;
pub mod tail;
pub mod target;

pub use target::{SplitPolicy, Target, TargetPolicy};

/// Plans a laid-out module's entry function for a target: the steps of
/// the table above, in order.
pub fn plan(module: &Module, target: &dyn Target) -> Result<KernelPlan> {
    let mut plan = build::build(module, target)?;
    tail::run(&mut plan);
    normalize::run(&mut plan);
    reuse::run(&mut plan);
    split::run(&mut plan, target.policy().split)?;
    narrow::run(&mut plan);
    slots::run(&mut plan);
    Ok(plan)
}

/// A buffer of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u32);

impl BufferId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for BufferId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buf{}", self.0)
    }
}

/// Where a buffer's memory comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferRole {
    /// The storage of input `n` (laid out as its parameter declares).
    Input(usize),
    /// Allocated per run and handed to the caller (a result, or a buffer a
    /// result is a view of).
    Output,
    /// Allocated per run, dead when the run ends; temps share memory
    /// through `slot`.
    Temp { slot: usize },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    pub role: BufferRole,
    pub bytes: usize,
    /// The dtype of the value the buffer was made for (for printing).
    pub dtype: DType,
}

/// A strided tensor in a buffer.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorView {
    pub buffer: BufferId,
    pub dtype: DType,
    pub geometry: Geometry,
}

impl fmt::Display for TensorView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}x{} strides={}",
            self.buffer,
            format_shape(&self.geometry.shape),
            self.dtype,
            format_shape(&self.geometry.strides)
        )?;
        if self.geometry.offset != 0 {
            write!(f, " offset={}", self.geometry.offset)?;
        }
        f.write_str("]")
    }
}

/// A strided window of a kernel argument over the kernel's iteration space:
/// element `index` is at `offset + Σ index[d]·strides[d]` (in elements).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// Position in the kernel's argument list.
    pub arg: usize,
    pub dtype: DType,
    pub offset: i64,
    pub strides: Vec<i64>,
}

/// A node of a kernel's expression DAG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// What a node computes. Operands of unary and binary nodes hold values of
/// the node's computation dtype, except scalar constants (at the op's
/// scalar precision, [`kiln_ir::Op::scalar_dtype`]) and the operands of
/// logical ops (any dtype; only truthiness counts).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    /// An element of an access.
    Load {
        access: usize,
    },
    /// A scalar, converted to the node's dtype as PyTorch converts it.
    Const(Scalar),
    /// `offset + Σ index[d]·strides[d]` as an i64 (arange's positions).
    Iota {
        offset: i64,
        strides: Vec<i64>,
    },
    Unary {
        op: UnaryOp,
        x: NodeId,
    },
    Binary {
        op: BinaryOp,
        a: NodeId,
        b: NodeId,
    },
    Where {
        cond: NodeId,
        a: NodeId,
        b: NodeId,
    },
    /// PyTorch's conversion to the node's dtype.
    Cast {
        x: NodeId,
    },
    /// Folds `x` over the reduced dims (floats accumulate in the opmath
    /// dtype of `compute`).
    Reduce {
        op: ReduceOp,
        x: NodeId,
    },
    /// The row-major position over the reduced dims of the first extreme
    /// value (NaN counts as the extreme).
    ArgReduce {
        op: ArgReduceOp,
        x: NodeId,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub expr: Expr,
    /// The dtype of the node's value (each op's result rounded to it, as
    /// PyTorch eager rounds every op's output).
    pub dtype: DType,
    /// The dtype the op computes in (its operands' dtype).
    pub compute: DType,
}

impl Expr {
    /// The nodes the expression reads, mutably (to renumber them).
    pub fn operands_mut(&mut self) -> Vec<&mut NodeId> {
        match self {
            Expr::Load { .. } | Expr::Const(_) | Expr::Iota { .. } => vec![],
            Expr::Unary { x, .. }
            | Expr::Cast { x }
            | Expr::Reduce { x, .. }
            | Expr::ArgReduce { x, .. } => vec![x],
            Expr::Binary { a, b, .. } => vec![a, b],
            Expr::Where { cond, a, b } => vec![cond, a, b],
        }
    }

    /// Renumbers the operands `remap` names.
    pub fn remap(&mut self, remap: &HashMap<NodeId, NodeId>) {
        for id in self.operands_mut() {
            if let Some(n) = remap.get(id) {
                *id = *n;
            }
        }
    }
}

impl Node {
    /// The nodes it reads.
    pub fn operands(&self) -> Vec<NodeId> {
        match &self.expr {
            Expr::Load { .. } | Expr::Const(_) | Expr::Iota { .. } => vec![],
            Expr::Unary { x, .. }
            | Expr::Cast { x }
            | Expr::Reduce { x, .. }
            | Expr::ArgReduce { x, .. } => vec![*x],
            Expr::Binary { a, b, .. } => vec![*a, *b],
            Expr::Where { cond, a, b } => vec![*cond, *a, *b],
        }
    }

    pub fn is_reduction(&self) -> bool {
        matches!(self.expr, Expr::Reduce { .. } | Expr::ArgReduce { .. })
    }
}

/// Writes a node's value through an access (converting to its dtype).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Store {
    pub node: NodeId,
    pub access: usize,
}

/// One loop nest.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    /// Sizes of the loop dims, outermost first.
    pub space: Vec<i64>,
    /// The leading dims that are independent; the rest are reduced.
    pub outer_rank: usize,
    /// The buffers the kernel's arguments are.
    pub args: Vec<BufferId>,
    pub accesses: Vec<Access>,
    /// In dependency order.
    pub nodes: Vec<Node>,
    pub stores: Vec<Store>,
}

/// When a node is computed: per outer index (once per row of the reduced
/// dims) or per element of the space, in a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSchedule {
    /// Varies along the reduced dims.
    pub inner: bool,
    /// Inner nodes: the pass over the reduced dims that computes them (a
    /// reduction's phase is the pass that accumulates it). Outer nodes: the
    /// number of passes that must finish before they can be computed.
    pub phase: usize,
}

impl Kernel {
    pub fn rank(&self) -> usize {
        self.space.len()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The accesses the kernel loads from (an access may be loaded by
    /// several nodes).
    pub fn loaded_accesses(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes.iter().filter_map(|n| match n.expr {
            Expr::Load { access } => Some(access),
            _ => None,
        })
    }

    /// Number of iterations of the outer dims.
    pub fn outer_count(&self) -> i64 {
        self.space[..self.outer_rank].iter().product()
    }

    /// Number of elements of the reduced dims.
    pub fn inner_count(&self) -> i64 {
        self.space[self.outer_rank..].iter().product()
    }

    /// Whether strides move along the reduced dims (a size-0 dim counts:
    /// what moves along it is only read inside loops that never run).
    fn varies_inside(&self, strides: &[i64]) -> bool {
        strides[self.outer_rank..]
            .iter()
            .zip(&self.space[self.outer_rank..])
            .any(|(&s, &n)| s != 0 && n != 1)
    }

    /// The phase of every node (see [`NodeSchedule`]).
    pub fn schedule(&self) -> Vec<NodeSchedule> {
        let mut out: Vec<NodeSchedule> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let s = match &node.expr {
                // Reading back what a pass stored (a reused value) waits for it.
                Expr::Load { access } => NodeSchedule {
                    inner: self.varies_inside(&self.accesses[*access].strides),
                    phase: self
                        .stores
                        .iter()
                        .filter(|st| st.access == *access && st.node.index() < out.len())
                        .map(|st| out[st.node.index()].phase + 1)
                        .max()
                        .unwrap_or(0),
                },
                Expr::Iota { strides, .. } => NodeSchedule {
                    inner: self.varies_inside(strides),
                    phase: 0,
                },
                Expr::Const(_) => NodeSchedule {
                    inner: false,
                    phase: 0,
                },
                Expr::Reduce { x, .. } | Expr::ArgReduce { x, .. } => {
                    // With reduced dims, a reduction accumulates in pass
                    // `x.phase` and is ready after it; without, it folds
                    // one element.
                    let xs = out[x.index()];
                    NodeSchedule {
                        inner: false,
                        phase: xs.phase + usize::from(self.outer_rank < self.rank()),
                    }
                }
                _ => {
                    let ops: Vec<NodeSchedule> =
                        node.operands().iter().map(|o| out[o.index()]).collect();
                    NodeSchedule {
                        inner: ops.iter().any(|s| s.inner),
                        phase: ops.iter().map(|s| s.phase).max().unwrap_or(0),
                    }
                }
            };
            out.push(s);
        }
        out
    }

    /// The pass over the reduced dims a store runs in, or `None` when it
    /// runs once per outer iteration, after every pass. A store of a value
    /// that does not vary along the reduced dims into an output that does
    /// (a broadcast result) runs in the first pass after the value is ready.
    pub fn store_phase(&self, store: &Store, schedule: &[NodeSchedule]) -> Option<usize> {
        let s = schedule[store.node.index()];
        if s.inner || self.varies_inside(&self.accesses[store.access].strides) {
            Some(s.phase)
        } else {
            None
        }
    }

    /// The number of passes over the reduced dims.
    pub fn phase_count(&self) -> usize {
        if self.outer_rank == self.rank() {
            return 0;
        }
        let schedule = self.schedule();
        let nodes =
            schedule
                .iter()
                .zip(&self.nodes)
                .map(|(s, n)| match (s.inner, n.is_reduction()) {
                    (true, _) => s.phase + 1,
                    (false, true) => s.phase,
                    _ => 0,
                });
        let stores = self
            .stores
            .iter()
            .filter_map(|st| self.store_phase(st, &schedule).map(|p| p + 1));
        nodes.chain(stores).max().unwrap_or(0)
    }

    /// The kernel without its name and buffers: kernels with equal keys
    /// compile to the same code.
    pub fn key(&self) -> KernelKey {
        KernelKey {
            space: self.space.clone(),
            outer_rank: self.outer_rank,
            accesses: self.accesses.clone(),
            nodes: self.nodes.clone(),
            stores: self.stores.clone(),
        }
    }

    /// Appends a node.
    pub fn push_node(&mut self, expr: Expr, dtype: DType, compute: DType) -> NodeId {
        self.nodes.push(Node {
            expr,
            dtype,
            compute,
        });
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// Drops the nodes no store needs, then the accesses and arguments
    /// nothing uses, renumbering what is left.
    pub fn prune(&mut self) {
        let mut live = vec![false; self.nodes.len()];
        let mut stack: Vec<NodeId> = self.stores.iter().map(|s| s.node).collect();
        while let Some(n) = stack.pop() {
            if !std::mem::replace(&mut live[n.index()], true) {
                stack.extend(self.node(n).operands());
            }
        }
        let mut new_id = vec![NodeId(0); self.nodes.len()];
        let mut nodes = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if live[i] {
                let mut node = node.clone();
                let remap: HashMap<NodeId, NodeId> = node
                    .operands()
                    .into_iter()
                    .map(|o| (o, new_id[o.index()]))
                    .collect();
                node.expr.remap(&remap);
                new_id[i] = NodeId(nodes.len() as u32);
                nodes.push(node);
            }
        }
        self.nodes = nodes;
        for st in &mut self.stores {
            st.node = new_id[st.node.index()];
        }
        let used: Vec<usize> = (0..self.accesses.len())
            .filter(|&a| {
                self.stores.iter().any(|s| s.access == a)
                    || self
                        .nodes
                        .iter()
                        .any(|n| matches!(n.expr, Expr::Load { access } if access == a))
            })
            .collect();
        let new_access = |a: usize| used.iter().position(|&u| u == a).expect("a used access");
        for n in &mut self.nodes {
            if let Expr::Load { access } = &mut n.expr {
                *access = new_access(*access);
            }
        }
        for st in &mut self.stores {
            st.access = new_access(st.access);
        }
        self.accesses = used.iter().map(|&a| self.accesses[a].clone()).collect();
        // Drop the arguments no access uses, renumbering the rest.
        let used: Vec<usize> = (0..self.args.len())
            .filter(|&i| self.accesses.iter().any(|a| a.arg == i))
            .collect();
        let new_index = |i: usize| used.iter().position(|&u| u == i).expect("a used argument");
        for a in &mut self.accesses {
            a.arg = new_index(a.arg);
        }
        self.args = used.iter().map(|&i| self.args[i]).collect();
    }

    fn write_body(&self, f: &mut impl Write) -> fmt::Result {
        write!(f, "space {}", format_shape(&self.space[..self.outer_rank]))?;
        if self.outer_rank < self.rank() {
            write!(
                f,
                " reducing {}",
                format_shape(&self.space[self.outer_rank..])
            )?;
        }
        writeln!(f)?;
        for (i, a) in self.accesses.iter().enumerate() {
            writeln!(
                f,
                "  a{i} = arg{} {} offset {} strides {}",
                a.arg,
                a.dtype,
                a.offset,
                format_shape(&a.strides)
            )?;
        }
        let schedule = self.schedule();
        for (i, n) in self.nodes.iter().enumerate() {
            write!(f, "  n{i} = ")?;
            match &n.expr {
                Expr::Load { access } => write!(f, "load a{access}")?,
                Expr::Const(s) => write!(f, "const {s}")?,
                Expr::Iota { offset, strides } => {
                    write!(f, "iota {offset} strides {}", format_shape(strides))?
                }
                Expr::Unary { op, x } => write!(f, "{} {x}", op.name())?,
                Expr::Binary { op, a, b } => write!(f, "{} {a}, {b}", binary_label(*op))?,
                Expr::Where { cond, a, b } => write!(f, "where {cond}, {a}, {b}")?,
                Expr::Cast { x } => write!(f, "cast {x}")?,
                Expr::Reduce { op, x } => write!(f, "{} {x}", op.name())?,
                Expr::ArgReduce { op, x } => write!(f, "{} {x}", op.name())?,
            }
            write!(f, " : {}", n.dtype)?;
            if n.compute != n.dtype {
                write!(f, " (in {})", n.compute)?;
            }
            let s = schedule[i];
            if self.outer_rank < self.rank() {
                match (s.inner, n.is_reduction()) {
                    (true, _) => write!(f, "  // phase {}", s.phase)?,
                    (false, true) => write!(f, "  // folds in phase {}", s.phase - 1)?,
                    (false, false) if s.phase > 0 => write!(f, "  // after phase {}", s.phase - 1)?,
                    _ => {}
                }
            }
            writeln!(f)?;
        }
        for s in &self.stores {
            writeln!(f, "  store {} -> a{}", s.node, s.access)?;
        }
        Ok(())
    }
}

/// What makes two kernels compile to the same code: everything but their
/// name and buffers (floats by their bits).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelKey {
    space: Vec<i64>,
    outer_rank: usize,
    accesses: Vec<Access>,
    nodes: Vec<Node>,
    stores: Vec<Store>,
}

/// Dtypes generated kernels compute on, in every backend: bool, the
/// integers, f16, bf16, f32, f64 (complex and the shell dtypes run on the
/// reference interpreter inside the plan).
pub fn kernel_dtype(d: DType) -> bool {
    matches!(
        d,
        DType::Bool
            | DType::U8
            | DType::I8
            | DType::I16
            | DType::U16
            | DType::I32
            | DType::U32
            | DType::I64
            | DType::U64
            | DType::F16
            | DType::BF16
            | DType::F32
            | DType::F64
    )
}

/// A binary op's name in plans (`div` with a rounding mode is its own op).
fn binary_label(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::DivTrunc => "div_trunc",
        BinaryOp::DivFloor => "div_floor",
        other => other.name(),
    }
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Kernel(Kernel),
    /// `out = a @ b` (batched, broadcast as torch.matmul) by a library.
    Matmul {
        a: TensorView,
        b: TensorView,
        out: TensorView,
    },
    /// Instructions the backend does not compile, run by the reference
    /// interpreter on the given views.
    Interpret {
        func: Func,
        inputs: Vec<TensorView>,
        outputs: Vec<TensorView>,
        /// The pointwise kernel of the next step, in a form a native step
        /// may apply to its result as it writes it ([`tail`]).
        tail: Option<Tail>,
    },
}

/// What the kernel step after a convolution computes, where [`tail`]
/// proved it to be `relu?((y · scale + shift) + residual)` per element,
/// each part optional, in that order and in the result's dtype: batch
/// norm's scale and shift (per output channel), a residual add and a ReLU
/// (ResNet's tail). Each view is over the convolution's result shape
/// (scale and shift with stride 0 but along dim 1). A backend that writes
/// `out` from its output tile this way, rounding as the kernel does,
/// leaves the kernel (and the convolution's own result buffer, which no
/// other step reads) alone; one that does not runs the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Tail {
    pub scale: Option<TensorView>,
    pub shift: Option<TensorView>,
    pub residual: Option<TensorView>,
    pub relu: bool,
    pub out: TensorView,
}

impl Tail {
    /// The views the tail reads and writes.
    pub fn views(&self) -> impl Iterator<Item = &TensorView> {
        [&self.scale, &self.shift, &self.residual]
            .into_iter()
            .flatten()
            .chain(std::iter::once(&self.out))
    }
}

impl fmt::Display for Tail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut y = "y".to_string();
        if let Some(s) = &self.scale {
            y = format!("{y} * {s}");
        }
        if let Some(s) = &self.shift {
            y = format!("{y} + {s}");
        }
        if let Some(r) = &self.residual {
            if y.len() > 1 {
                y = format!("({y})");
            }
            y = format!("{y} + {r}");
        }
        if self.relu {
            y = format!("relu({y})");
        }
        write!(f, "{} = {y}", self.out)
    }
}

impl Step {
    /// The buffers the step reads or writes, a tail's included (whose
    /// buffers a native step may touch while it runs).
    pub fn buffers(&self) -> Vec<BufferId> {
        match self {
            Step::Kernel(k) => k.args.clone(),
            Step::Matmul { a, b, out } => vec![a.buffer, b.buffer, out.buffer],
            Step::Interpret {
                inputs,
                outputs,
                tail,
                ..
            } => inputs
                .iter()
                .chain(outputs)
                .chain(tail.iter().flat_map(Tail::views))
                .map(|v| v.buffer)
                .collect(),
        }
    }

    /// The buffers the step writes (a tail's result aside: its kernel,
    /// the next step, writes it).
    pub fn written(&self) -> Vec<BufferId> {
        match self {
            Step::Kernel(k) => k
                .stores
                .iter()
                .map(|s| k.args[k.accesses[s.access].arg])
                .collect(),
            Step::Matmul { out, .. } => vec![out.buffer],
            Step::Interpret { outputs, .. } => outputs.iter().map(|v| v.buffer).collect(),
        }
    }

    /// A host step of one instruction that returns its results (what a
    /// backend may run as one native step): the function, the instruction,
    /// and the step's input and output views.
    pub fn lone_inst(
        &self,
    ) -> Option<(&Func, &kiln_ir::graph::Inst, &[TensorView], &[TensorView])> {
        let Step::Interpret {
            func,
            inputs,
            outputs,
            ..
        } = self
        else {
            return None;
        };
        let [inst] = &func.insts[..] else {
            return None;
        };
        (func.returns == inst.results).then_some((func, inst, &inputs[..], &outputs[..]))
    }
}

/// A compiled program's plan: buffers, steps, and where the results are.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPlan {
    pub name: String,
    pub device: Device,
    pub buffers: Vec<Buffer>,
    /// Bytes of each temp slot.
    pub slots: Vec<usize>,
    pub steps: Vec<Step>,
    pub outputs: Vec<TensorView>,
}

impl KernelPlan {
    pub fn kernels(&self) -> impl Iterator<Item = &Kernel> {
        self.steps.iter().filter_map(|s| match s {
            Step::Kernel(k) => Some(k),
            _ => None,
        })
    }
}

impl fmt::Display for KernelPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let temps: usize = self.slots.iter().sum();
        writeln!(
            f,
            "plan @{} on {}: {} steps, {} buffers, {} bytes of temps in {} slots",
            self.name,
            self.device,
            self.steps.len(),
            self.buffers.len(),
            temps,
            self.slots.len()
        )?;
        let donations = donate::donations(self);
        for (i, b) in self.buffers.iter().enumerate() {
            let role = match b.role {
                BufferRole::Input(n) => format!("input {n}"),
                BufferRole::Output => match donations.iter().find(|d| d.output.index() == i) {
                    Some(d) => format!("output (in input {}'s storage if donated)", d.param),
                    None => "output".to_string(),
                },
                BufferRole::Temp { slot } => format!("temp in slot {slot}"),
            };
            writeln!(f, "  buf{i}: {role}, {} bytes ({})", b.bytes, b.dtype)?;
        }
        for step in &self.steps {
            match step {
                Step::Kernel(k) => {
                    let args: Vec<String> = k.args.iter().map(|b| b.to_string()).collect();
                    write!(f, "kernel {}({}) ", k.name, args.join(", "))?;
                    let mut body = String::new();
                    k.write_body(&mut body)?;
                    f.write_str(&body)?;
                }
                Step::Matmul { a, b, out } => writeln!(f, "matmul {a}, {b} -> {out}")?,
                Step::Interpret {
                    func,
                    inputs,
                    outputs,
                    tail,
                } => {
                    let ins: Vec<String> = inputs.iter().map(|v| v.to_string()).collect();
                    let outs: Vec<String> = outputs.iter().map(|v| v.to_string()).collect();
                    writeln!(f, "interpret ({}) -> ({})", ins.join(", "), outs.join(", "))?;
                    for inst in &func.insts {
                        f.write_str("  ")?;
                        kiln_ir::print::write_inst(f, func, inst)?;
                        writeln!(f)?;
                    }
                    if let Some(tail) = tail {
                        writeln!(f, "  tail (the next kernel) {tail}")?;
                    }
                }
            }
        }
        let outs: Vec<String> = self.outputs.iter().map(|v| v.to_string()).collect();
        writeln!(f, "return {}", outs.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PassManager;
    use kiln_ir::graph::Inst;

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
            plan_of(&text).kernels().next().unwrap().key()
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
