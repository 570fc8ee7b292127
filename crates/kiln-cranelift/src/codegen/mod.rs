//! Lowering one kernel of the plan to a Cranelift function.
//!
//! The function is `fn(args: *const *mut u8, begin: i64, end: i64) -> i32`:
//! it runs iterations `begin..end` of the kernel's first dim and returns 0,
//! or 1 after an integer division by zero. Loops nest over the outer dims;
//! the innermost dim (of the outer dims for pointwise kernels, of the
//! reduced dims for each phase of a reduction kernel) is the *row* loop,
//! which runs four elements at a time in 128-bit registers and finishes
//! with a scalar tail. Where the CPU has AVX-512F (or AVX2 and FMA), a
//! pointwise row of 32 or more elements that computes one of kiln-math's
//! one-argument functions runs eight copies of its 4-lane body, and each
//! such function takes their 32 lanes in one call to kiln-runtime's
//! AVX-512 (or AVX2) code (`sixteen`; reductions' rows and the tiles of transposing kernels keep
//! the inline code): x64 Cranelift has no wider vectors, and the
//! functions are most of such a row's work. Nodes that do not vary along the row are computed
//! once before it. A kernel with an op that has no vector form is compiled
//! with scalar code only. A pointwise kernel with an operand that walks
//! memory across its rows (a transpose) runs its last two dims in tiles,
//! four rows at a time, that operand transposed in registers
//! (`tiled_loops`, `block_loops`).

pub mod math;
pub mod ops;
pub mod values;

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Block, Function, InstBuilder, Signature, StackSlot, StackSlotData, StackSlotKind,
    UserFuncName, Value, types,
};
use cranelift_codegen::isa::{CallConv, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use kiln_ir::ops::prims::ResultDType;
use kiln_ir::ops::{Cost, Fold};
use kiln_ir::{ArgReduceOp, BinaryOp, DType, Op, PowForm, Scalar, UnaryOp};
use kiln_passes::plan::{Expr, Kernel, NodeId, NodeSchedule};
use kiln_runtime::convert::{Elem, convert};

use math::{Calls, Helper};
use ops::{Ctx, Emitted, NoVector};
use values::{Class, Consts, Emit, LANES, Stride, Val, Width};

/// Side of the square tiles of transposing kernels. Measured on `x.t() +
/// y` of 4096x4096 f32 with register transposes: 32-wide tiles 21 ms
/// (each row of a tile too short for the prefetchers), 64 to 256 9-12 ms.
const TILE: i64 = 128;

/// Both tiled dims longer than this: shorter ones gain nothing from tiles.
const TILED_FROM: i64 = 32;

/// Rows of a tile computed together, so that a transposed operand is read
/// as vectors and transposed in registers (see `block_loops`): one per
/// vector lane.
const BLOCK: usize = LANES as usize;

/// Whether an access with these strides walks memory along dim `d` (with
/// stride one) and not along the next, the row dim: in a block of rows
/// along `d`, its elements at one column are a contiguous vector.
fn transposed_along(strides: &[i64], d: usize) -> bool {
    strides[d] == 1 && !matches!(strides[d + 1], 0 | 1)
}

/// Tiles pay off when a pointwise kernel's operand walks memory along the
/// next-to-last dim (stride 1 there) but strides along the last.
fn wants_tiles(k: &Kernel) -> bool {
    let r = k.rank();
    k.outer_rank == r
        && r >= 2
        && k.space[r - 1] > TILED_FROM
        && k.space[r - 2] > TILED_FROM
        && k.accesses
            .iter()
            .any(|a| a.strides[r - 2].abs() == 1 && a.strides[r - 1].abs() > 1)
}

/// The kernel function's signature.
pub fn signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(types::I64));
    sig.params.push(AbiParam::new(types::I64));
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// A generated function and whether its row loops are vectorized.
pub struct Generated {
    pub func: Function,
    pub vectorized: bool,
}

/// Generates the function for a kernel: vectorized when asked and every op
/// the row loops compute has a vector form, scalar otherwise. `None` when
/// even scalar code has no form for one of its ops.
pub fn generate(kernel: &Kernel, isa: &dyn TargetIsa, vector: bool) -> Option<Generated> {
    let has_arg = kernel
        .nodes
        .iter()
        .any(|n| matches!(n.expr, Expr::ArgReduce { .. }));
    if vector && !has_arg {
        if let Ok(func) = build(kernel, isa, true) {
            return Some(Generated {
                func,
                vectorized: true,
            });
        }
    }
    build(kernel, isa, false).ok().map(|func| Generated {
        func,
        vectorized: false,
    })
}

/// An open counted loop.
#[derive(Clone, Copy)]
struct Loop {
    var: Variable,
    header: Block,
    exit: Block,
    step: i64,
}

/// Per-reduction accumulator variables.
struct Acc {
    node: NodeId,
    /// How it folds (an index reduction: the extreme it tracks).
    fold: Fold,
    /// For an index reduction: which.
    arg: Option<ArgReduceOp>,
    /// The register class accumulated in.
    class: Class,
    /// Vector accumulators, one set per unrolled copy of the loop body
    /// (independent chains of additions run in parallel).
    vector: Vec<Vec<Variable>>,
    scalar: Variable,
    /// ArgReduce: the best position and the running position.
    index: Option<(Variable, Variable)>,
}

/// Where nodes are evaluated.
struct Body {
    w: Width,
    memo: HashMap<NodeId, Val>,
    /// The row index (its first lane), when inside a row loop.
    row: Option<Value>,
    /// Per access, the address of element 0 of the current row (inside a
    /// row loop, so its body only adds the row index times the stride).
    bases: Vec<Value>,
    /// Which unrolled copy of a vector loop body this is.
    copy: usize,
    /// In a block of `BLOCK` rows of a tile (see `block_loops`), which row.
    block: Option<usize>,
}

impl Body {
    /// A body outside row loops.
    fn outside(w: Width) -> Body {
        Body {
            w,
            memo: HashMap::new(),
            row: None,
            bases: Vec::new(),
            copy: 0,
            block: None,
        }
    }

    /// Where access `a` is in the current row: the row index and the
    /// row's base address.
    fn at(&self, a: usize) -> Option<(Value, Value)> {
        self.row.zip(self.bases.get(a).copied())
    }
}

/// Copies of the vector body in reduction loops, each with its own
/// accumulators: a single chain of dependent additions would wait on the
/// adder's latency at every step.
const UNROLL: usize = 2;

/// What a row loop's body computes.
struct RowWork<'r> {
    /// Values known before the loop (row-invariant nodes, splat).
    memo: &'r HashMap<NodeId, Val>,
    /// The nodes the body evaluates, operands first.
    needed: &'r [NodeId],
    /// Each access's element offset at the row's start.
    offsets: &'r [Value],
    /// Each access's address at the row's start.
    bases: &'r [Value],
    /// The dim the row runs along.
    d: usize,
    /// The stores of this phase.
    stores: &'r [usize],
    /// The accumulators of this phase.
    accs: &'r [Acc],
}

/// Elements below which a pointwise kernel keeps one copy of its vector
/// body (see `pointwise_copies`).
const MANY_ELEMENTS: i64 = 1 << 16;

/// Copies of a vector body whose lanes go to one call of a kiln-math
/// function on AVX-512 or AVX2 (`sixteen`): two groups of 16 lanes (tuned
/// on AVX-512), which the
/// processor computes side by side. A chain of functions waits on each
/// call in turn, so one group per call left the processor idle (a 12-op
/// activation chain on 16M f32: 167 ms with four copies, 100 with eight,
/// 92 with sixteen, which made single functions slower: gelu 0.26–0.28 →
/// 0.31–0.32 ms on 128×3072).
const CALL_COPIES: usize = 8;

// The call takes whole groups of 16 lanes.
const _: () = assert!((LANES as usize * CALL_COPIES).is_multiple_of(16));

struct Gen<'a, 'b> {
    b: FunctionBuilder<'b>,
    /// Whether the last two dims run in tiles (see `tiled_loops`).
    tiled: bool,
    consts: Consts,
    /// In `block_loops`' vector body: the transposed loads of each access,
    /// one vector per row of the block.
    transposed: HashMap<usize, [Val; BLOCK]>,
    k: &'a Kernel,
    sched: Vec<NodeSchedule>,
    vector: bool,
    calls: Calls,
    call_conv: CallConv,
    status: Variable,
    bases: Vec<Value>,
    /// Strides of every cursor (accesses, then iotas) per dim, in elements.
    cursor_strides: Vec<Vec<i64>>,
    cursor_offsets: Vec<i64>,
    /// Cursor of each access and iota node.
    iota_cursor: HashMap<NodeId, usize>,
    /// Values computed per outer iteration (scalar), and before row loops.
    outer: HashMap<NodeId, Val>,
    /// Whether the CPU computes kiln-math's functions in groups of 16
    /// lanes (`kiln_runtime::sixteen_lanes`: AVX-512 or AVX2): then a vector loop of
    /// [`CALL_COPIES`] copies hands their lanes to one call (`sixteen`).
    sixteen: bool,
    /// The bytes through which those calls take and give their lanes.
    sixteen_slot: Option<StackSlot>,
}

fn build(kernel: &Kernel, isa: &dyn TargetIsa, vector: bool) -> Result<Function, NoVector> {
    let call_conv = isa.default_call_conv();
    let mut func = Function::with_name_signature(UserFuncName::default(), signature(call_conv));
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.seal_block(entry);
    let params = b.block_params(entry).to_vec();
    let status = b.declare_var(types::I32);
    let zero = b.ins().iconst(types::I32, 0);
    b.def_var(status, zero);
    let bases = (0..kernel.args.len())
        .map(|i| {
            b.ins()
                .load(types::I64, values::flags(), params[0], (i * 8) as i32)
        })
        .collect();
    let mut cursor_strides: Vec<Vec<i64>> =
        kernel.accesses.iter().map(|a| a.strides.clone()).collect();
    let mut cursor_offsets: Vec<i64> = kernel.accesses.iter().map(|a| a.offset).collect();
    let mut iota_cursor = HashMap::new();
    for (i, n) in kernel.nodes.iter().enumerate() {
        if let Expr::Iota { offset, strides } = &n.expr {
            iota_cursor.insert(NodeId(i as u32), cursor_strides.len());
            cursor_strides.push(strides.clone());
            cursor_offsets.push(*offset);
        }
    }
    let mut g = Gen {
        b,
        tiled: wants_tiles(kernel),
        consts: Consts::new(entry),
        transposed: HashMap::new(),
        k: kernel,
        sched: kernel.schedule(),
        vector,
        calls: Calls::default(),
        call_conv,
        status,
        bases,
        cursor_strides,
        cursor_offsets,
        iota_cursor,
        outer: HashMap::new(),
        sixteen: vector && kiln_runtime::sixteen_lanes().is_some(),
        sixteen_slot: None,
    };
    let offsets: Vec<Value> = g
        .cursor_offsets
        .clone()
        .iter()
        .map(|&o| g.b.ins().iconst(types::I64, o))
        .collect();
    let (begin, end) = (params[1], params[2]);
    let pointwise = kernel.outer_rank == kernel.rank();
    if kernel.rank() == 0 || (!pointwise && kernel.outer_rank == 0) {
        g.outer_body(&offsets, None)?;
    } else {
        g.outer_loops(0, &offsets, begin, end)?;
    }
    let status = g.b.use_var(g.status);
    g.b.ins().return_(&[status]);
    g.b.finalize(isa.frontend_config());
    Ok(func)
}

impl<'b> Gen<'_, 'b> {
    /// An emitter and what ops that call out or report errors need.
    fn emit_with_calls(&mut self, w: Width) -> (Emit<'_, 'b>, Ctx<'_>) {
        (
            Emit {
                b: &mut self.b,
                w,
                consts: &mut self.consts,
            },
            Ctx {
                calls: &mut self.calls,
                call_conv: self.call_conv,
                status: self.status,
            },
        )
    }

    fn emit(&mut self, w: Width) -> Emit<'_, 'b> {
        Emit {
            b: &mut self.b,
            w,
            consts: &mut self.consts,
        }
    }

    /// Opens `for i in start..end` (by `step`); returns the loop and `i`.
    /// A positive step runs only whole steps (a vector loop, whose tail
    /// follows); a negative one, `-n`, steps by `n` and runs a partial last
    /// step too (tiles).
    fn open_loop(&mut self, start: Value, end: Value, step: i64) -> (Loop, Value) {
        let var = self.b.declare_var(types::I64);
        self.b.def_var(var, start);
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let i = self.b.use_var(var);
        // With a step, the body needs `step` elements left.
        let last = if step > 1 {
            self.b.ins().iadd_imm_s(i, step - 1)
        } else {
            i
        };
        let step = step.abs();
        let more = self.b.ins().icmp(IntCC::SignedLessThan, last, end);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        self.b.seal_block(body);
        (
            Loop {
                var,
                header,
                exit,
                step,
            },
            i,
        )
    }

    fn close_loop(&mut self, l: Loop) {
        let i = self.b.use_var(l.var);
        let next = self.b.ins().iadd_imm_s(i, l.step);
        self.b.def_var(l.var, next);
        self.b.ins().jump(l.header, &[]);
        self.b.seal_block(l.header);
        self.b.switch_to_block(l.exit);
        self.b.seal_block(l.exit);
    }

    /// Cursor offsets advanced by `i` along dim `d`.
    fn advance(&mut self, offsets: &[Value], d: usize, i: Value) -> Vec<Value> {
        offsets
            .iter()
            .enumerate()
            .map(|(c, &o)| match self.cursor_strides[c][d] {
                0 => o,
                s => {
                    let step = self.b.ins().imul_imm_s(i, s);
                    self.b.ins().iadd(o, step)
                }
            })
            .collect()
    }

    /// The loops over the outer dims (for pointwise kernels, all but the
    /// row dim), then the outer body.
    fn outer_loops(
        &mut self,
        d: usize,
        offsets: &[Value],
        begin: Value,
        end: Value,
    ) -> Emitted<()> {
        let k = self.k;
        let pointwise = k.outer_rank == k.rank();
        let loops_end = if pointwise {
            k.rank() - 1
        } else {
            k.outer_rank
        };
        if d == loops_end {
            return if pointwise {
                let (start, stop) = if d == 0 {
                    (begin, end)
                } else {
                    let z = self.b.ins().iconst(types::I64, 0);
                    let n = self.b.ins().iconst(types::I64, k.space[d]);
                    (z, n)
                };
                self.row_loops(offsets, d, start, stop, None)
            } else {
                self.outer_body(offsets, None)
            };
        }
        let (start, stop) = if d == 0 {
            (begin, end)
        } else {
            let z = self.b.ins().iconst(types::I64, 0);
            let n = self.b.ins().iconst(types::I64, k.space[d]);
            (z, n)
        };
        if pointwise && d + 2 == k.rank() && self.tiled {
            return self.tiled_loops(d, offsets, start, stop);
        }
        let (l, i) = self.open_loop(start, stop, 1);
        let inner = self.advance(offsets, d, i);
        self.outer_loops(d + 1, &inner, begin, end)?;
        self.close_loop(l);
        Ok(())
    }

    /// The last two dims of a pointwise kernel in `TILE`×`TILE` blocks, so
    /// an operand that walks memory along dim `d` (a transpose) reuses each
    /// cache line it loads across the block instead of once per row.
    fn tiled_loops(
        &mut self,
        d: usize,
        offsets: &[Value],
        start: Value,
        stop: Value,
    ) -> Emitted<()> {
        let row = d + 1;
        let z = self.b.ins().iconst(types::I64, 0);
        let n_row = self.b.ins().iconst(types::I64, self.k.space[row]);
        let (outer_tile, t) = self.open_loop(start, stop, -TILE);
        let t_end = self.b.ins().iadd_imm_s(t, TILE);
        let t_end = self.b.ins().smin(t_end, stop);
        let (row_tile, u) = self.open_loop(z, n_row, -TILE);
        let u_end = self.b.ins().iadd_imm_s(u, TILE);
        let u_end = self.b.ins().smin(u_end, n_row);
        let mut first_row = t;
        if self.vector && self.transposes(d) {
            let (blocks, i) = self.open_loop(t, t_end, BLOCK as i64);
            let var = blocks.var;
            let inner = self.advance(offsets, d, i);
            self.block_loops(&inner, d, u, u_end)?;
            self.close_loop(blocks);
            first_row = self.b.use_var(var);
        }
        let (l, i) = self.open_loop(first_row, t_end, 1);
        let inner = self.advance(offsets, d, i);
        self.row_loops(&inner, row, u, u_end, None)?;
        self.close_loop(l);
        self.close_loop(row_tile);
        self.close_loop(outer_tile);
        Ok(())
    }

    /// Whether the tiled kernel loads an operand that walks memory along
    /// dim `d`, the tile's rows (see `transposed_along`). (A transposed
    /// output alone gains nothing from blocks: its stores are scattered
    /// either way.)
    fn transposes(&self, d: usize) -> bool {
        self.k.nodes.iter().any(|n| match n.expr {
            Expr::Load { access } => transposed_along(&self.k.accesses[access].strides, d),
            _ => false,
        })
    }

    /// `BLOCK` rows of a tile at once, from the row at `offsets` (dim `d`),
    /// over the row dim `d + 1` from `start` to `end`. Each row is a copy of
    /// the row body; an operand that walks memory along `d` is read as
    /// `BLOCK` contiguous vectors down the block and transposed in
    /// registers into the rows' vectors (`transposed_load`), instead of
    /// gathered element by element in every row. The columns that do not
    /// fill a vector run in scalar code, row by row.
    fn block_loops(
        &mut self,
        offsets: &[Value],
        d: usize,
        start: Value,
        end: Value,
    ) -> Emitted<()> {
        let k = self.k;
        let row = d + 1;
        let stores: Vec<usize> = (0..k.stores.len()).collect();
        let roots: Vec<NodeId> = k.stores.iter().map(|s| s.node).collect();
        let needed = self.row_nodes(&roots);
        let invariant = self.invariant(&needed, row);
        // Each row of the block: its offsets, row bases and the values
        // that do not vary along it.
        let mut rows = Vec::with_capacity(BLOCK);
        for c in 0..BLOCK {
            let offs = self.shift(offsets, d, c as i64);
            let bases = self.row_bases(&offs);
            let (scalar, splat) = self.before_row(&invariant, &offs, row)?;
            rows.push((offs, bases, scalar, splat));
        }
        let (l, j) = self.open_loop(start, end, LANES);
        let var = l.var;
        self.transposed.clear();
        let mut bodies: Vec<Body> = rows
            .iter()
            .enumerate()
            .map(|(c, (_, bases, _, splat))| Body {
                w: Width::Vector,
                memo: splat.clone(),
                row: Some(j),
                bases: bases.clone(),
                copy: 0,
                block: Some(c),
            })
            .collect();
        for &n in &needed {
            for (body, (offs, ..)) in bodies.iter_mut().zip(&rows) {
                self.eval(n, body, offs, Some(row))?;
            }
        }
        for (body, (offs, ..)) in bodies.iter_mut().zip(&rows) {
            self.row_body(body, offs, row, &stores, &[])?;
        }
        self.transposed.clear();
        self.close_loop(l);
        let tail = self.b.use_var(var);
        for (offs, bases, scalar, _) in rows {
            let (l, i) = self.open_loop(tail, end, 1);
            let mut body = Body {
                w: Width::Scalar,
                memo: scalar,
                row: Some(i),
                bases,
                copy: 0,
                block: None,
            };
            self.row_body(&mut body, &offs, row, &stores, &[])?;
            self.close_loop(l);
        }
        Ok(())
    }

    /// Cursor offsets moved `n` steps along dim `d`.
    fn shift(&mut self, offsets: &[Value], d: usize, n: i64) -> Vec<Value> {
        offsets
            .iter()
            .enumerate()
            .map(|(c, &o)| match self.cursor_strides[c][d] * n {
                0 => o,
                s => self.b.ins().iadd_imm_s(o, s),
            })
            .collect()
    }

    /// The vectors of a transposed access (see `block_loops`) at the
    /// current column of the block whose row `c` is `body`: `BLOCK`
    /// contiguous loads down the block's rows, one per lane, transposed
    /// into one vector per row. Loaded by the first row that asks, taken
    /// by the others.
    fn transposed_load(
        &mut self,
        access: usize,
        body: &Body,
        c: usize,
        stride: i64,
    ) -> Emitted<Val> {
        if let Some(rows) = self.transposed.get(&access) {
            return Ok(rows[c]);
        }
        let a = &self.k.accesses[access];
        let dtype = a.dtype;
        let size = dtype.itemsize() as i64;
        // Row `c` starts `c` elements after row 0 (stride 1 down the block).
        // (A block's bodies are always in a row.)
        let (j, base) = body.at(access).ok_or(NoVector)?;
        let first = self.in_row(access, j, base, stride);
        let mut addrs = [first; BLOCK];
        for (lane, addr) in addrs.iter_mut().enumerate() {
            *addr = self
                .b
                .ins()
                .iadd_imm_s(first, (lane as i64 * stride - c as i64) * size);
        }
        let rows = self.emit(Width::Vector).load_transposed(dtype, addrs);
        self.transposed.insert(access, rows);
        Ok(rows[c])
    }

    /// One outer iteration: outer nodes, the phases of the reduced dims,
    /// and the stores of outer values. (For rank-0 pointwise kernels, the
    /// whole kernel.)
    fn outer_body(&mut self, offsets: &[Value], _: Option<()>) -> Emitted<()> {
        let k = self.k;
        self.outer.clear();
        let phases = k.phase_count();
        for p in 0..=phases {
            // Outer nodes that are ready now.
            for (i, n) in k.nodes.iter().enumerate() {
                let id = NodeId(i as u32);
                let s = self.sched[i];
                if !s.inner && !n.is_reduction() && s.phase == p {
                    let mut body = Body::outside(Width::Scalar);
                    let v = self.eval(id, &mut body, offsets, None)?;
                    self.outer.insert(id, v);
                }
                if n.is_reduction() && k.outer_rank == k.rank() && s.phase == p {
                    // No reduced dims: a fold of one element.
                    let mut body = Body::outside(Width::Scalar);
                    let v = self.eval(id, &mut body, offsets, None)?;
                    self.outer.insert(id, v);
                }
            }
            if p < phases {
                self.phase(p, offsets)?;
            }
        }
        // Outer stores.
        for s in &k.stores {
            if k.store_phase(s, &self.sched).is_none() {
                let v = self.outer[&s.node];
                let a = &k.accesses[s.access];
                let addr = self.address(s.access, offsets[s.access], None, 0);
                self.emit(Width::Scalar)
                    .store(a.dtype, v, addr, Stride::One);
            }
        }
        Ok(())
    }

    /// Phase `p` of a reduction kernel: the loops over the reduced dims.
    fn phase(&mut self, p: usize, offsets: &[Value]) -> Emitted<()> {
        let k = self.k;
        let reductions: Vec<NodeId> = (0..k.nodes.len())
            .map(|i| NodeId(i as u32))
            .filter(|&id| k.node(id).is_reduction() && self.sched[id.index()].phase == p + 1)
            .collect();
        let mut accs = Vec::new();
        for &r in &reductions {
            accs.push(self.init_acc(r));
        }
        self.inner_loops(k.outer_rank, offsets, p, &accs)?;
        for acc in &accs {
            let v = self.finish_acc(acc);
            self.outer.insert(acc.node, v);
        }
        Ok(())
    }

    fn inner_loops(&mut self, d: usize, offsets: &[Value], p: usize, accs: &[Acc]) -> Emitted<()> {
        let k = self.k;
        let z = self.b.ins().iconst(types::I64, 0);
        let n = self.b.ins().iconst(types::I64, k.space[d]);
        if d == k.rank() - 1 {
            return self.row_loops(offsets, d, z, n, Some((p, accs)));
        }
        let (l, i) = self.open_loop(z, n, 1);
        let inner = self.advance(offsets, d, i);
        self.inner_loops(d + 1, &inner, p, accs)?;
        self.close_loop(l);
        Ok(())
    }

    /// The nodes a row loop computes: what its stores and reductions need,
    /// down to values computed outside it.
    fn row_nodes(&self, roots: &[NodeId]) -> Vec<NodeId> {
        let mut seen = HashSet::new();
        let mut stack: Vec<NodeId> = roots.to_vec();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) || self.outer.contains_key(&n) {
                continue;
            }
            stack.extend(self.k.node(n).operands());
        }
        let mut out: Vec<NodeId> = seen.into_iter().collect();
        out.sort();
        out
    }

    /// Whether a node's value changes along the row dim `d`.
    fn varies(&self, n: NodeId, d: usize, memo: &mut HashMap<NodeId, bool>) -> bool {
        if self.outer.contains_key(&n) {
            return false;
        }
        if let Some(&v) = memo.get(&n) {
            return v;
        }
        let node = self.k.node(n);
        let v = match &node.expr {
            Expr::Load { access } => self.k.accesses[*access].strides[d] != 0,
            Expr::Iota { strides, .. } => strides[d] != 0,
            Expr::Const(_) => false,
            // A reduction over reduced dims is a root of its loop, not a
            // value in it; without reduced dims it folds one element.
            Expr::Reduce { .. } | Expr::ArgReduce { .. } if self.k.outer_rank < self.k.rank() => {
                true
            }
            _ => node.operands().iter().any(|&o| self.varies(o, d, memo)),
        };
        memo.insert(n, v);
        v
    }

    /// The row loop over dim `d` (vector body and scalar tail), for a
    /// pointwise kernel (`phase` None) or phase `p` of a reduction kernel.
    fn row_loops(
        &mut self,
        offsets: &[Value],
        d: usize,
        start: Value,
        end: Value,
        phase: Option<(usize, &[Acc])>,
    ) -> Emitted<()> {
        let k = self.k;
        let stores: Vec<usize> = (0..k.stores.len())
            .filter(|&s| match phase {
                None => true,
                Some((p, _)) => k.store_phase(&k.stores[s], &self.sched) == Some(p),
            })
            .collect();
        let accs: &[Acc] = phase.map(|(_, a)| a).unwrap_or(&[]);
        let mut roots: Vec<NodeId> = stores.iter().map(|&s| k.stores[s].node).collect();
        for acc in accs {
            roots.extend(k.node(acc.node).operands());
        }
        let needed = self.row_nodes(&roots);
        let invariant = self.invariant(&needed, d);
        let (scalar_pre, body_memo) = self.before_row(&invariant, offsets, d)?;
        let bases = self.row_bases(offsets);
        let mut tail_start = start;
        if self.vector {
            let copies = if accs.is_empty() {
                self.pointwise_copies(&needed, &invariant, d)
            } else {
                UNROLL
            };
            let row = RowWork {
                memo: &body_memo,
                needed: &needed,
                offsets,
                bases: &bases,
                d,
                stores: &stores,
                accs,
            };
            tail_start = self.vector_loop(&row, start, end, copies)?;
            if copies > 1 && accs.is_empty() {
                // The rest, four lanes at a time, before the scalar tail.
                tail_start = self.vector_loop(&row, tail_start, end, 1)?;
            }
        }
        let (l, i) = self.open_loop(tail_start, end, 1);
        let mut body = Body {
            w: Width::Scalar,
            memo: scalar_pre,
            row: Some(i),
            bases,
            copy: 0,
            block: None,
        };
        self.row_body(&mut body, offsets, d, &stores, accs)?;
        self.close_loop(l);
        Ok(())
    }

    /// The nodes of `needed` that do not vary along the row dim `d`.
    fn invariant(&self, needed: &[NodeId], d: usize) -> Vec<NodeId> {
        let mut memo = HashMap::new();
        needed
            .iter()
            .copied()
            .filter(|&n| !self.varies(n, d, &mut memo))
            .collect()
    }

    /// Row-invariant nodes computed once, before the row loop at
    /// `offsets` along `d`: their scalar values, and (in vector code) the
    /// same splat into vectors.
    #[allow(clippy::type_complexity)]
    fn before_row(
        &mut self,
        invariant: &[NodeId],
        offsets: &[Value],
        d: usize,
    ) -> Emitted<(HashMap<NodeId, Val>, HashMap<NodeId, Val>)> {
        let mut pre = Body::outside(Width::Scalar);
        for &n in invariant {
            self.eval(n, &mut pre, offsets, Some(d))?;
        }
        let mut splat = HashMap::new();
        if self.vector {
            for (&n, &v) in &pre.memo {
                let c = Class::of(self.k.node(n).dtype);
                splat.insert(n, self.emit(Width::Vector).splat(c, v.part(0)));
            }
        }
        Ok((pre.memo, splat))
    }

    /// Copies of a pointwise kernel's vector body per iteration, by the
    /// costly ops (transcendental functions, divisions) a row computes.
    /// Cranelift emits instructions in the order they are built, and the
    /// processor overlaps only what fits its reorder window (a few hundred
    /// instructions): a body with several costly ops in a chain is longer,
    /// so one copy waits on each op's latency in turn. Interleaved copies
    /// give it independent chains side by side (the 12-op activation
    /// chain: 400 -> 175 ms with four). A short body gains nothing (the
    /// window already spans iterations), and each copy costs compile
    /// time, which a small kernel never earns back.
    ///
    /// A row with one of kiln-math's one-argument functions gets
    /// [`CALL_COPIES`] copies where the CPU computes them on AVX-512 or
    /// AVX2 (`sixteen`), whatever the kernel's size: the call replaces the
    /// function's inline code, the longest part of such a body, though the
    /// rest of the row is copied eight times.
    fn pointwise_copies(&self, needed: &[NodeId], invariant: &[NodeId], d: usize) -> usize {
        // The row loop's length (a tile's, in tiled kernels): copies its
        // rows are too short to run would be compile time for nothing.
        let row = if self.tiled {
            TILE.min(self.k.space[d])
        } else {
            self.k.space[d]
        };
        let sixteen_lanes = needed
            .iter()
            .any(|&n| !invariant.contains(&n) && self.sixteen_function(n).is_some());
        if sixteen_lanes && row >= LANES * CALL_COPIES as i64 {
            return CALL_COPIES;
        }
        if self.k.space.iter().product::<i64>() < MANY_ELEMENTS {
            return 1;
        }
        let costly = needed
            .iter()
            .filter(|n| !invariant.contains(n))
            .filter(|&&n| match &self.k.node(n).expr {
                Expr::Unary { op, .. } => op.def().cost == Cost::Costly,
                Expr::Binary { op, .. } => op.def().cost == Cost::Costly,
                _ => false,
            })
            .count();
        let mut copies: usize = match costly {
            0..=2 => 1,
            3..=5 => 2,
            _ => 4,
        };
        while copies > 1 && row < LANES * copies as i64 {
            copies /= 2;
        }
        copies
    }

    /// The vector loop from `start` while `copies` vectors of lanes are
    /// left; returns where it stopped. The copies are interleaved node by
    /// node (each node for every copy before the next node), so that their
    /// instructions sit close together.
    fn vector_loop(
        &mut self,
        row: &RowWork,
        start: Value,
        end: Value,
        copies: usize,
    ) -> Emitted<Value> {
        let RowWork {
            memo,
            needed,
            offsets,
            bases,
            d,
            stores,
            accs,
        } = *row;
        let (l, i) = self.open_loop(start, end, LANES * copies as i64);
        let mut bodies = Vec::with_capacity(copies);
        for copy in 0..copies {
            let row = match copy {
                0 => i,
                c => self.b.ins().iadd_imm_s(i, LANES * c as i64),
            };
            bodies.push(Body {
                w: Width::Vector,
                memo: memo.clone(),
                row: Some(row),
                bases: bases.to_vec(),
                copy,
                block: None,
            });
        }
        for &n in needed {
            if bodies.len() == CALL_COPIES
                && !bodies[0].memo.contains_key(&n)
                && !self.outer.contains_key(&n)
                && let Some(f) = self.sixteen_function(n)
            {
                self.eval_sixteen(n, f, &mut bodies, offsets, d)?;
                continue;
            }
            for body in &mut bodies {
                self.eval(n, body, offsets, Some(d))?;
            }
        }
        for body in &mut bodies {
            self.row_body(body, offsets, d, stores, accs)?;
        }
        self.close_loop(l);
        Ok(self.b.use_var(l.var))
    }

    fn row_body(
        &mut self,
        body: &mut Body,
        offsets: &[Value],
        d: usize,
        stores: &[usize],
        accs: &[Acc],
    ) -> Emitted<()> {
        let k = self.k;
        for &s in stores {
            let store = &k.stores[s];
            let v = self.eval(store.node, body, offsets, Some(d))?;
            let a = &k.accesses[store.access];
            let stride = a.strides[d];
            let addr = self.address(
                store.access,
                offsets[store.access],
                body.at(store.access),
                stride,
            );
            let kind = stride_kind(stride, a.dtype);
            self.emit(body.w).store(a.dtype, v, addr, kind);
        }
        for acc in accs {
            let x = k.node(acc.node).operands()[0];
            let v = self.eval(x, body, offsets, Some(d))?;
            self.accumulate(acc, v, body.w, k.node(x).dtype, body.copy);
        }
        Ok(())
    }

    /// The address of an access's element at `offset` (in elements).
    fn element_address(&mut self, access: usize, offset: Value) -> Value {
        let a = &self.k.accesses[access];
        let (arg, size) = (a.arg, a.dtype.itemsize() as i64);
        let bytes = self.b.ins().imul_imm_s(offset, size);
        self.b.ins().iadd(self.bases[arg], bytes)
    }

    /// Per access, the address of element 0 of the row at `offsets`.
    fn row_bases(&mut self, offsets: &[Value]) -> Vec<Value> {
        (0..self.k.accesses.len())
            .map(|a| self.element_address(a, offsets[a]))
            .collect()
    }

    /// The address of an access's element at row index `i` of the current
    /// row loop, whose row starts at `base` (`at`), or at the current
    /// offset outside one.
    fn address(
        &mut self,
        access: usize,
        offset: Value,
        at: Option<(Value, Value)>,
        stride: i64,
    ) -> Value {
        match at {
            None => self.element_address(access, offset),
            Some((i, base)) => self.in_row(access, i, base, stride),
        }
    }

    /// The address of an access's element at index `i` of a row that
    /// starts at `base`, moving `stride` elements per index.
    fn in_row(&mut self, access: usize, i: Value, base: Value, stride: i64) -> Value {
        if stride == 0 {
            return base;
        }
        let step = stride * self.k.accesses[access].dtype.itemsize() as i64;
        let scaled = if step.count_ones() == 1 {
            self.b.ins().ishl_imm_u(i, step.trailing_zeros() as i64)
        } else {
            self.b.ins().imul_imm_s(i, step)
        };
        self.b.ins().iadd(base, scaled)
    }

    /// The kiln-math function node `n` computes in f32 lanes, where the
    /// CPU computes it in wider vectors than Cranelift's, by a call (16 or
    /// 8 lanes at a time; as `Emit::unary` computes it inline otherwise).
    fn sixteen_function(&self, n: NodeId) -> Option<kiln_math::Function> {
        if !self.sixteen {
            return None;
        }
        let node = self.k.node(n);
        match node.expr {
            Expr::Unary { op, .. } => ops::lane_function(op, node.compute),
            _ => None,
        }
    }

    /// Node `n` (unary `f`) in all [`CALL_COPIES`] copies of a vector body
    /// by one call: the copies' operand lanes go through a stack slot to
    /// the AVX-512 or AVX2 function and come back in place. The same bits as inline
    /// code (the function is the same algorithm: kiln-runtime's tests).
    fn eval_sixteen(
        &mut self,
        n: NodeId,
        f: kiln_math::Function,
        bodies: &mut [Body],
        offsets: &[Value],
        d: usize,
    ) -> Emitted<()> {
        let node = self.k.node(n);
        let Expr::Unary { op, x } = node.expr else {
            unreachable!("sixteen_function takes unary nodes")
        };
        let slot = match self.sixteen_slot {
            Some(s) => s,
            None => {
                // Four f32 lanes of 4 bytes a copy.
                let size = (bodies.len() * 16) as u32;
                let data = StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4);
                let s = self.b.create_sized_stack_slot(data);
                self.sixteen_slot = Some(s);
                s
            }
        };
        for (copy, body) in bodies.iter_mut().enumerate() {
            let xv = self.eval(x, body, offsets, Some(d))?;
            self.b
                .ins()
                .stack_store(types::I64, xv.part(0), slot, (copy * 16) as i32);
        }
        let p = self.b.ins().stack_addr(types::I64, slot, 0);
        let lanes = self.b.ins().iconst(types::I64, LANES * bodies.len() as i64);
        self.calls
            .call_in_place(&mut self.b, self.call_conv, Helper::Sixteen(f), &[p, lanes]);
        for (copy, body) in bodies.iter_mut().enumerate() {
            let r = self
                .b
                .ins()
                .stack_load(types::I64, types::F32X4, slot, (copy * 16) as i32);
            let mut e = self.emit(Width::Vector);
            // As `Emit::unary` ends (rounding f16/bf16), then `eval`.
            let r = e.finish(Val::one(r), node.compute);
            let r = e.cast(r, result_dtype_of_unary(op, node.compute), node.dtype)?;
            body.memo.insert(n, r);
        }
        Ok(())
    }

    /// Evaluates node `n` in `body` (memoized).
    fn eval(
        &mut self,
        n: NodeId,
        body: &mut Body,
        offsets: &[Value],
        row_dim: Option<usize>,
    ) -> Emitted<Val> {
        if let Some(v) = body.memo.get(&n) {
            return Ok(*v);
        }
        if let Some(v) = self.outer.get(&n) {
            let v = *v;
            let v = match body.w {
                Width::Scalar => v,
                Width::Vector => {
                    let c = Class::of(self.k.node(n).dtype);
                    self.emit(Width::Vector).splat(c, v.part(0))
                }
            };
            body.memo.insert(n, v);
            return Ok(v);
        }
        let k = self.k;
        let node = k.node(n);
        let w = body.w;
        let v = match &node.expr {
            Expr::Load { access } => {
                let a = &k.accesses[*access];
                let stride = row_dim.map_or(0, |d| a.strides[d]);
                if let (Some(c), Some(d), Width::Vector) = (body.block, row_dim, w)
                    && transposed_along(&a.strides, d - 1)
                {
                    let v = self.transposed_load(*access, body, c, stride)?;
                    body.memo.insert(n, v);
                    return Ok(v);
                }
                let addr = self.address(*access, offsets[*access], body.at(*access), stride);
                let kind = stride_kind(stride, a.dtype);
                self.emit(w).load(a.dtype, addr, kind)
            }
            Expr::Const(s) => {
                let v = convert(Elem::from_scalar(*s), node.dtype);
                let c = Class::of(node.dtype);
                let mut e = self.emit(w);
                match v {
                    Elem::B(b) => e.iconst(c, b as i64),
                    Elem::I(i) => e.iconst(c, i as i64),
                    Elem::F(f) => e.fconst(c, f),
                    Elem::C(..) => return Err(NoVector),
                }
            }
            Expr::Iota { .. } => {
                let cursor = self.iota_cursor[&n];
                let base = offsets[cursor];
                let stride = row_dim.map_or(0, |d| self.cursor_strides[cursor][d]);
                // Positions are i64; narrowed ones (the plan's `narrow`
                // step proved they fit) are i32.
                let class = Class::of(node.dtype);
                let fit = |b: &mut FunctionBuilder, v: Value| {
                    if class == Class::I32 {
                        b.ins().ireduce(types::I32, v)
                    } else {
                        v
                    }
                };
                match (body.row, w) {
                    (Some(i), Width::Scalar) if stride != 0 => {
                        let step = self.b.ins().imul_imm_s(i, stride);
                        let v = self.b.ins().iadd(base, step);
                        Val::one(fit(&mut self.b, v))
                    }
                    (Some(i), Width::Vector) if stride != 0 => {
                        let step = self.b.ins().imul_imm_s(i, stride);
                        let v = self.b.ins().iadd(base, step);
                        let first = fit(&mut self.b, v);
                        self.emit(w).ramp(class, first, stride)
                    }
                    _ => {
                        let v = fit(&mut self.b, base);
                        self.emit(w).splat(class, v)
                    }
                }
            }
            Expr::Unary { op, x } => {
                let xv = self.eval(*x, body, offsets, row_dim)?;
                let (mut e, mut ctx) = self.emit_with_calls(w);
                let r = e.unary(&mut ctx, *op, xv, node.compute)?;
                e.cast(r, result_dtype_of_unary(*op, node.compute), node.dtype)?
            }
            Expr::Binary { op, a, b } => self.binary(n, *op, *a, *b, body, offsets, row_dim)?,
            Expr::Where { cond, a, b } => {
                let c = self.eval(*cond, body, offsets, row_dim)?;
                let av = self.eval(*a, body, offsets, row_dim)?;
                let bv = self.eval(*b, body, offsets, row_dim)?;
                self.emit(w).where_(c, av, bv, node.dtype)
            }
            Expr::Cast { x } => {
                let xv = self.eval(*x, body, offsets, row_dim)?;
                let from = k.node(*x).dtype;
                self.emit(w).cast(xv, from, node.dtype)?
            }
            Expr::Reduce { op, x } => {
                // Only reached without reduced dims: a fold of one element.
                let xv = self.eval(*x, body, offsets, row_dim)?;
                let xd = k.node(*x).dtype;
                let f = Fold::of(*op, node.compute);
                let acc = f.accumulator(node.compute);
                let class = Class::of(acc);
                let mut e = self.emit(w);
                let xv = e.cast(xv, xd, acc)?;
                let id = constant(&mut e, class, f.identity(acc));
                let folded = fold(&mut e, f, class, acc, id, xv);
                e.cast(folded, acc, node.dtype)?
            }
            Expr::ArgReduce { x, .. } => {
                // Without reduced dims the position is 0; the element is
                // still computed (it may raise ZeroDivisionError).
                self.eval(*x, body, offsets, row_dim)?;
                self.emit(w).iconst(Class::I64, 0)
            }
        };
        body.memo.insert(n, v);
        Ok(v)
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &mut self,
        n: NodeId,
        op: BinaryOp,
        a: NodeId,
        b: NodeId,
        body: &mut Body,
        offsets: &[Value],
        row_dim: Option<usize>,
    ) -> Emitted<Val> {
        let k = self.k;
        let node = k.node(n);
        let w = body.w;
        let av = self.eval(a, body, offsets, row_dim)?;
        let (ad, bd) = (k.node(a).dtype, k.node(b).dtype);
        // pow with a constant exponent: PyTorch's special forms.
        if op == BinaryOp::Pow {
            if let Expr::Const(s) = k.node(b).expr {
                let form = Op::pow_scalar_form(s, node.compute.is_floating_point());
                let (mut e, mut ctx) = self.emit_with_calls(w);
                let c = node.compute;
                // Products round to the opmath dtype, as PyTorch computes
                // `x * x * x` in opmath_t.
                let m = c.opmath();
                let mul = |e: &mut Emit, ctx: &mut Ctx, x: Val, y: Val| {
                    e.binary(ctx, BinaryOp::Mul, x, m, y, m, m)
                };
                let (r, produced) = match form {
                    PowForm::Square => (mul(&mut e, &mut ctx, av, av)?, m),
                    PowForm::Cube => {
                        let sq = mul(&mut e, &mut ctx, av, av)?;
                        (mul(&mut e, &mut ctx, sq, av)?, m)
                    }
                    _ => (av, c),
                };
                if matches!(form, PowForm::Square | PowForm::Cube) {
                    return e.cast(r, produced, node.dtype);
                }
                let r = match form {
                    PowForm::Identity | PowForm::Square | PowForm::Cube => r,
                    PowForm::One => {
                        let cl = Class::of(c);
                        if cl.is_float() {
                            e.fconst(cl, 1.0)
                        } else {
                            e.iconst(cl, 1)
                        }
                    }
                    PowForm::Sqrt => e.unary(&mut ctx, UnaryOp::Sqrt, av, c)?,
                    PowForm::Rsqrt => e.unary(&mut ctx, UnaryOp::Rsqrt, av, c)?,
                    PowForm::Reciprocal => e.unary(&mut ctx, UnaryOp::Reciprocal, av, c)?,
                    PowForm::ReciprocalSquare => {
                        let sq = mul(&mut e, &mut ctx, av, av)?;
                        e.unary(&mut ctx, UnaryOp::Reciprocal, sq, c)?
                    }
                    PowForm::General => {
                        let bv = self.eval(b, body, offsets, row_dim)?;
                        let (mut e, mut ctx) = self.emit_with_calls(w);
                        let bv = e.cast(bv, bd, c)?;
                        let r = e.binary(&mut ctx, op, av, c, bv, c, c)?;
                        return e.cast(r, c, node.dtype);
                    }
                };
                return e.cast(r, c, node.dtype);
            }
        }
        let bv = self.eval(b, body, offsets, row_dim)?;
        let (mut e, mut ctx) = self.emit_with_calls(w);
        let c = node.compute;
        // A scalar constant may be held at opmath precision (f32 for f16
        // mul/div): the same register class, so no conversion is needed.
        let (av, bv) = if op.is_logical() {
            (av, bv)
        } else {
            let av = if Class::of(ad) == Class::of(c) {
                av
            } else {
                e.cast(av, ad, c)?
            };
            let bv = if Class::of(bd) == Class::of(c) {
                bv
            } else {
                e.cast(bv, bd, c)?
            };
            (av, bv)
        };
        let r = e.binary(&mut ctx, op, av, ad, bv, bd, c)?;
        let produced = if op.is_comparison() || op.is_logical() {
            DType::Bool
        } else {
            c
        };
        e.cast(r, produced, node.dtype)
    }

    fn init_acc(&mut self, r: NodeId) -> Acc {
        let node = self.k.node(r);
        let x_dtype = self.k.node(node.operands()[0]).dtype;
        let (fold, arg, compute) = match &node.expr {
            Expr::Reduce { op, .. } => (Fold::of(*op, node.compute), None, node.compute),
            Expr::ArgReduce { op, .. } => (Fold::of_arg(*op), Some(*op), x_dtype),
            _ => unreachable!("reductions only"),
        };
        let acc = fold.accumulator(compute);
        let class = Class::of(acc);
        let scalar = self.b.declare_var(class.ty(Width::Scalar));
        let init = {
            let mut e = self.emit(Width::Scalar);
            constant(&mut e, class, fold.identity(acc))
        };
        self.b.def_var(scalar, init.part(0));
        let mut vector = Vec::new();
        if self.vector && arg.is_none() {
            let v = {
                let mut e = self.emit(Width::Vector);
                constant(&mut e, class, fold.identity(acc))
            };
            for _ in 0..UNROLL {
                let mut set = Vec::new();
                for part in v.iter() {
                    let var = self.b.declare_var(class.ty(Width::Vector));
                    self.b.def_var(var, part);
                    set.push(var);
                }
                vector.push(set);
            }
        }
        let index = if arg.is_some() {
            let best = self.b.declare_var(types::I64);
            let pos = self.b.declare_var(types::I64);
            let minus = self.b.ins().iconst(types::I64, -1);
            let zero = self.b.ins().iconst(types::I64, 0);
            self.b.def_var(best, minus);
            self.b.def_var(pos, zero);
            Some((best, pos))
        } else {
            None
        };
        Acc {
            node: r,
            fold,
            arg,
            class,
            vector,
            scalar,
            index,
        }
    }

    fn accumulate(&mut self, acc: &Acc, x: Val, w: Width, x_dtype: DType, copy: usize) {
        let acc_dtype = acc.fold.accumulator(x_dtype);
        if let Some(op) = acc.arg {
            let (best_idx, pos) = acc.index.expect("arg reductions track positions");
            let best = self.b.use_var(acc.scalar);
            let idx = self.b.use_var(best_idx);
            let p = self.b.use_var(pos);
            let v = x.part(0);
            let empty = self.b.ins().icmp_imm_s(IntCC::Equal, idx, -1);
            let better = if acc.class.is_float() {
                let cc = if op == ArgReduceOp::Argmax {
                    FloatCC::GreaterThan
                } else {
                    FloatCC::LessThan
                };
                let gt = self.b.ins().fcmp(cc, v, best);
                let x_nan = self.b.ins().fcmp(FloatCC::Unordered, v, v);
                let best_ok = self.b.ins().fcmp(FloatCC::Ordered, best, best);
                let t = self.b.ins().bor(gt, x_nan);
                self.b.ins().band(t, best_ok)
            } else {
                let signed = x_dtype.is_signed();
                let cc = match (op, signed) {
                    (ArgReduceOp::Argmax, true) => IntCC::SignedGreaterThan,
                    (ArgReduceOp::Argmax, false) => IntCC::UnsignedGreaterThan,
                    (_, true) => IntCC::SignedLessThan,
                    (_, false) => IntCC::UnsignedLessThan,
                };
                self.b.ins().icmp(cc, v, best)
            };
            let take = self.b.ins().bor(empty, better);
            let nb = self.b.ins().select(take, v, best);
            let ni = self.b.ins().select(take, p, idx);
            self.b.def_var(acc.scalar, nb);
            self.b.def_var(best_idx, ni);
            let np = self.b.ins().iadd_imm_s(p, 1);
            self.b.def_var(pos, np);
            return;
        }
        let vars: Vec<Variable> = match w {
            Width::Scalar => vec![acc.scalar],
            Width::Vector => acc.vector[copy].clone(),
        };
        let mut e = Emit {
            b: &mut self.b,
            w,
            consts: &mut self.consts,
        };
        let x = e
            .cast(x, x_dtype, acc_dtype)
            .expect("accumulator casts have vector forms");
        let cur = match vars.len() {
            1 => Val::one(e.b.use_var(vars[0])),
            _ => Val::two(e.b.use_var(vars[0]), e.b.use_var(vars[1])),
        };
        let next = fold(&mut e, acc.fold, acc.class, acc_dtype, cur, x);
        for (var, v) in vars.iter().zip(next.iter()) {
            e.b.def_var(*var, v);
        }
    }

    /// Folds the vector lanes into the scalar accumulator and converts the
    /// result to the node's dtype.
    fn finish_acc(&mut self, acc: &Acc) -> Val {
        let node = self.k.node(acc.node);
        if acc.arg.is_some() {
            let (best_idx, _) = acc.index.expect("positions");
            return Val::one(self.b.use_var(best_idx));
        }
        let acc_dtype = acc.fold.accumulator(node.compute);
        let mut total = Val::one(self.b.use_var(acc.scalar));
        for set in &acc.vector {
            let parts: Vec<Value> = set.iter().map(|v| self.b.use_var(*v)).collect();
            let vec = if parts.len() == 2 {
                Val::two(parts[0], parts[1])
            } else {
                Val::one(parts[0])
            };
            for lane in 0..LANES {
                let s = self.emit(Width::Vector).lane(acc.class, vec, lane);
                let mut e = self.emit(Width::Scalar);
                total = fold(&mut e, acc.fold, acc.class, acc_dtype, total, Val::one(s));
            }
        }
        let mut e = self.emit(Width::Scalar);
        e.cast(total, acc_dtype, node.dtype)
            .expect("scalar casts always exist")
    }
}

fn stride_kind(stride: i64, dtype: DType) -> Stride {
    match stride {
        0 => Stride::Zero,
        1 => Stride::One,
        s => Stride::Bytes(s * dtype.itemsize() as i64),
    }
}

/// The dtype a unary op produces before the node's own dtype.
fn result_dtype_of_unary(op: UnaryOp, compute: DType) -> DType {
    match op.def().result {
        ResultDType::Bool => DType::Bool,
        ResultDType::Same | ResultDType::Real => compute,
    }
}

/// A constant of a register class (32-bit integer constants are written
/// sign-extended, as Cranelift encodes them).
fn constant(e: &mut Emit, c: Class, s: Scalar) -> Val {
    if c.is_float() {
        e.fconst(c, s.to_f64())
    } else {
        let v = s.to_i64_wrapping();
        e.iconst(c, if c.is_wide() { v } else { v as i32 as i64 })
    }
}

/// One accumulation step: the arithmetic of every fold, one arm each.
fn fold(e: &mut Emit, f: Fold, c: Class, d: DType, acc: Val, x: Val) -> Val {
    match f {
        Fold::Sum if c.is_float() => e.zip(acc, x, |b, a, v| b.ins().fadd(a, v)),
        Fold::Sum => {
            let s = e.zip(acc, x, |b, a, v| b.ins().iadd(a, v));
            e.wrap(s, d)
        }
        Fold::Prod if c.is_float() => e.zip(acc, x, |b, a, v| b.ins().fmul(a, v)),
        Fold::Prod => {
            let s = e.zip(acc, x, |b, a, v| b.ins().imul(a, v));
            e.wrap(s, d)
        }
        Fold::Or => e.zip(acc, x, |b, a, v| b.ins().bor(a, v)),
        Fold::And => e.zip(acc, x, |b, a, v| b.ins().band(a, v)),
        Fold::Max | Fold::Min if c.is_float() => e.float_extreme(acc, x, c, f == Fold::Max),
        Fold::Max | Fold::Min => {
            let signed = d.is_signed();
            let max = f == Fold::Max;
            e.zip(acc, x, |b, a, v| match (max, signed) {
                (true, true) => b.ins().smax(a, v),
                (true, false) => b.ins().umax(a, v),
                (false, true) => b.ins().smin(a, v),
                (false, false) => b.ins().umin(a, v),
            })
        }
    }
}
