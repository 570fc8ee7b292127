//! Kernel → CUDA C: one `extern "C" __global__` function per kernel of the
//! plan, with the element semantics of the reference interpreter.
//!
//! A kernel without reduced dims is a grid-stride loop over its iteration
//! space (`Walk`): one element per thread and step; or, where the
//! innermost dim allows, a run of consecutive elements per thread moved
//! by 16-byte (or narrower) vector loads and stores for the accesses that
//! are contiguous and aligned; or, when an input is read across its
//! contiguous dim (a transpose), 32×32 tiles staged through shared memory
//! so that both the reads and the writes are coalesced.
//!
//! A kernel with reduced dims gives each outer index (a row) to one warp,
//! or, for rows longer than 1024 elements (`WARP_ROW_MAX`), to one block
//! of [`BLOCK`] threads; few long rows are split over several blocks each
//! ([`Split`]). Each pass over the reduced dims (a phase of
//! [`Kernel::schedule`]) is a strided loop whose threads accumulate
//! privately, then reduce through warp shuffles (and shared memory across
//! a block's warps), and every thread gets the
//! result for the next pass. Where the innermost reduced dim allows (the
//! rows' accesses contiguous and aligned, every lane of a warp given a
//! whole vector), the loop moves 16-byte vectors, as pointwise kernels do. Values in registers have a C type per dtype
//! (f16 and bf16 in `float`, rounded to their format after each op, as
//! PyTorch eager rounds each op's output); floats sum in `double`, as the
//! interpreter does; integers wrap. Integer division by zero sets the
//! kernel's status word, which the host turns into ZeroDivisionError.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write;

use kiln_ir::ops::Fold;
use kiln_ir::{ArgReduceOp, BinaryOp, DType, Op, PowForm, Scalar, UnaryOp};
use kiln_passes::plan::{Access, Expr, Kernel, NodeId, NodeSchedule};
use kiln_runtime::convert::{Elem, convert};
use kiln_runtime::interp::elementwise::{f32_algorithm, polynomial};

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Most blocks a launch asks for; grid-stride loops cover the rest.
const MAX_BLOCKS: i64 = 65_535;

/// The side of a transpose tile; a block moves one tile at a time, 32
/// threads wide and `BLOCK / 32` rows tall.
const TILE: i64 = 32;

/// The longest rows a reduction gives to one warp instead of a block (32
/// elements per lane at most): a block would mostly idle on short rows
/// and pay two block barriers per pass.
const WARP_ROW_MAX: i64 = 1024;

/// Warps per block.
const WARPS: i64 = BLOCK as i64 / 32;

/// Rows at least this long, when there are few of them, are split over
/// several blocks (see [`Split`]).
const SPLIT_ROW_MIN: i64 = 1 << 16;

/// Fewer rows than this leave most of a GPU's multiprocessors idle when
/// each takes one block.
const SPLIT_ROWS_MAX: i64 = 128;

/// Elements of a row each block of a split row reduces (64 per thread).
const SPLIT_CHUNK: i64 = 64 * BLOCK as i64;

/// Most blocks one row is split over.
const SPLIT_CHUNKS_MAX: i64 = 1024;

/// Most inputs a kernel stages through shared memory (32×33 elements
/// each, at most 8.25 KiB).
const MAX_TILED: usize = 4;

/// How a kernel is launched: blocks of [`BLOCK`] threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    pub blocks: u32,
    pub threads: u32,
}

/// The launch shape of a kernel's generated code: one thread per element
/// or per vector (grid-stride), one block per transpose tile, or one block
/// per row of a reduction.
pub fn launch_shape(k: &Kernel) -> LaunchShape {
    let per_block = |n: i64| (n + BLOCK as i64 - 1) / BLOCK as i64;
    let blocks = if k.outer_rank != k.rank() {
        match (RowGroup::of(k), Split::of(k)) {
            (_, Some(split)) => k.outer_count() * split.chunks,
            (RowGroup::Block, None) => k.outer_count(),
            (RowGroup::Warp, None) => (k.outer_count() + WARPS - 1) / WARPS,
        }
    } else {
        let total: i64 = k.space.iter().product();
        match walk(k) {
            Walk::Elements => per_block(total),
            Walk::Vectors { width, .. } => per_block(total / width),
            Walk::Tiles { p, .. } => tile_count(k, p),
        }
    };
    LaunchShape {
        blocks: blocks.clamp(1, MAX_BLOCKS) as u32,
        threads: BLOCK,
    }
}

/// A reduction of few long rows split over several blocks per row: each
/// block reduces a chunk of its row and writes the partial result to the
/// kernel's scratch memory; the block that finishes a row last (a counter
/// per row) combines the partials in chunk order, so the result does not
/// depend on which block finishes last, and makes the row's stores. It
/// resets the counter, so the scratch is ready for the next launch.
///
/// Only for kernels of one pass whose stores are all per row (sums,
/// products, amax/amin, argmax/argmin, any/all of a whole tensor or of
/// few rows): multi-pass kernels (softmax) keep one block per row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// Blocks per row.
    pub chunks: i64,
    /// Elements of a row per block, a multiple of 16 (the last chunks may
    /// be shorter, or empty).
    pub chunk: i64,
}

impl Split {
    fn of(k: &Kernel) -> Option<Split> {
        let (outer, inner) = (k.outer_count(), k.inner_count());
        if k.outer_rank == k.rank() || inner < SPLIT_ROW_MIN || outer >= SPLIT_ROWS_MAX {
            return None;
        }
        let schedule = k.schedule();
        let row_stores_only = k
            .stores
            .iter()
            .all(|s| k.store_phase(s, &schedule).is_none());
        if !(row_stores_only && k.phase_count() == 1) {
            return None;
        }
        let chunks = ((inner + SPLIT_CHUNK - 1) / SPLIT_CHUNK).min(SPLIT_CHUNKS_MAX);
        // A multiple of 16 elements, so that a chunk is whole vectors.
        let chunk = ((inner + chunks - 1) / chunks + 15) / 16 * 16;
        Some(Split { chunks, chunk })
    }
}

/// Bytes of scratch memory a kernel needs (zeroed before its first
/// launch, left zeroed by each): a split reduction's row counters and
/// partial results; 0 for the others, whose entry takes no scratch.
pub fn scratch_bytes(k: &Kernel) -> usize {
    match Split::of(k) {
        Some(split) => split_layout(k, split).1,
        None => 0,
    }
}

/// Where a split kernel's partials live in its scratch: the byte offset
/// of each reduction's (after 16-byte aligned row counters: 8 bytes per
/// row and chunk, then as many for the positions of an arg-reduction),
/// and the total.
fn split_layout(k: &Kernel, split: Split) -> (Vec<(NodeId, usize)>, usize) {
    let rows = k.outer_count() as usize;
    let mut at = (rows * 4).next_multiple_of(16);
    let mut offsets = Vec::new();
    for (i, n) in k.nodes.iter().enumerate() {
        if n.is_reduction() {
            offsets.push((NodeId(i as u32), at));
            let arrays = if matches!(n.expr, Expr::ArgReduce { .. }) {
                2
            } else {
                1
            };
            at += arrays * rows * split.chunks as usize * 8;
        }
    }
    (offsets, at)
}

/// What reduces one row of a reduction kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowGroup {
    /// The [`BLOCK`] threads of a block: warp shuffles, then shared memory.
    Block,
    /// One warp (a block holds [`WARPS`] rows): shuffles alone.
    Warp,
}

impl RowGroup {
    fn of(k: &Kernel) -> RowGroup {
        if k.inner_count() <= WARP_ROW_MAX {
            RowGroup::Warp
        } else {
            RowGroup::Block
        }
    }

    /// The loop over the rows this group takes.
    fn row_loop(self, outer: i64) -> String {
        match self {
            RowGroup::Block => format!(
                "for (long long kiln_o = blockIdx.x; kiln_o < {outer}LL; kiln_o += gridDim.x) {{"
            ),
            RowGroup::Warp => format!(
                "for (long long kiln_o = (long long)blockIdx.x * {WARPS} + threadIdx.x / 32; kiln_o < {outer}LL; kiln_o += (long long)gridDim.x * {WARPS}) {{"
            ),
        }
    }

    /// A thread's lane in the group, and the group's size.
    fn lanes(self) -> (&'static str, &'static str) {
        match self {
            RowGroup::Block => ("threadIdx.x", "blockDim.x"),
            RowGroup::Warp => ("threadIdx.x % 32", "32"),
        }
    }

    /// Makes one pass's stores visible to the group's next pass.
    fn barrier(self) -> &'static str {
        match self {
            RowGroup::Block => "__syncthreads();",
            RowGroup::Warp => "__syncwarp();",
        }
    }

    /// The thread that stores a row's per-row values.
    fn leader(self) -> &'static str {
        match self {
            RowGroup::Block => "threadIdx.x == 0",
            RowGroup::Warp => "threadIdx.x % 32 == 0",
        }
    }

    /// The preamble's reduction and arg-reduction over the group.
    fn reduce_fn(self) -> &'static str {
        match self {
            RowGroup::Block => "kiln_block_reduce",
            RowGroup::Warp => "kiln_warp_reduce",
        }
    }

    fn arg_fn(self) -> &'static str {
        match self {
            RowGroup::Block => "kiln_block_arg",
            RowGroup::Warp => "kiln_warp_arg",
        }
    }
}

/// How a pointwise kernel covers its space.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Walk {
    /// One element per thread and step.
    Elements,
    /// `width` consecutive elements of the innermost dim per thread and
    /// step; the accesses marked in `vector` are moved as one aligned
    /// vector of `width` elements (at most 16 bytes), the others element
    /// by element.
    Vectors { width: i64, vector: Vec<bool> },
    /// 32×32 tiles of dims `p` and the innermost: the loads marked in
    /// `tiled` (contiguous along `p`, not along the innermost dim) are
    /// read along `p` into shared memory, then everything is computed and
    /// stored along the innermost dim.
    Tiles { p: usize, tiled: Vec<bool> },
}

/// The walk of a kernel. Pointwise: tiles when some input is read across
/// its contiguous dim, vectors when the innermost dim allows, else
/// elements. A reduction's passes walk its rows by vectors when the
/// innermost (reduced) dim allows and each lane of a warp gets a whole
/// vector, else by elements: one 4-byte load per thread in flight leaves
/// the memory system idle, as a copy by elements would.
fn walk(k: &Kernel) -> Walk {
    let rank = k.rank();
    if rank == 0 {
        return Walk::Elements;
    }
    if k.outer_rank != rank {
        return match vectors(k) {
            Walk::Vectors { width, .. } if k.inner_count() < 32 * width => Walk::Elements,
            w => w,
        };
    }
    let last = rank - 1;
    let loads: Vec<usize> = k.loaded_accesses().collect();
    // A transpose: an input contiguous along an outer dim p, strided
    // along the innermost (not broadcast: a warp reading one address is
    // served at once), with both dims long enough to fill tiles.
    let transposed = |a: &Access, p: usize| a.strides[p] == 1 && !matches!(a.strides[last], 0 | 1);
    let long = |d: usize| k.space[d] >= TILE / 2;
    if long(last) {
        for &access in &loads {
            let a = &k.accesses[access];
            if let Some(p) = (0..last).find(|&p| long(p) && transposed(a, p)) {
                let mut tiled = vec![false; k.accesses.len()];
                for &l in loads.iter().filter(|&&l| transposed(&k.accesses[l], p)) {
                    if tiled.iter().filter(|&&t| t).count() < MAX_TILED {
                        tiled[l] = true;
                    }
                }
                return Walk::Tiles { p, tiled };
            }
        }
    }
    vectors(k)
}

/// Vectors along the innermost dim: as many elements as 16 bytes of the
/// widest contiguous access hold, fewer when the innermost dim is not a
/// multiple; or elements when no access can be moved by vectors.
fn vectors(k: &Kernel) -> Walk {
    let last = k.rank() - 1;
    let contiguous = |a: &Access| a.strides[last] == 1;
    let widest = k
        .accesses
        .iter()
        .filter(|a| contiguous(a))
        .map(|a| a.dtype.itemsize())
        .max();
    let Some(widest) = widest else {
        return Walk::Elements;
    };
    let mut width = (16 / widest) as i64;
    while width > 1 && k.space[last] % width != 0 {
        width /= 2;
    }
    // Aligned: every vector starts at a multiple of `width` elements (the
    // buffers themselves are 256-byte aligned).
    let aligned = |a: &Access| {
        a.offset % width == 0 && (0..last).all(|d| k.space[d] == 1 || a.strides[d] % width == 0)
    };
    let vector: Vec<bool> = k
        .accesses
        .iter()
        .map(|a| contiguous(a) && aligned(a))
        .collect();
    if width < 2 || !vector.contains(&true) {
        return Walk::Elements;
    }
    Walk::Vectors { width, vector }
}

/// The number of tiles of a tiled kernel: every index of the dims other
/// than `p` and the innermost, times the tiles of those two.
fn tile_count(k: &Kernel, p: usize) -> i64 {
    let last = k.rank() - 1;
    let tiles = |n: i64| (n + TILE - 1) / TILE;
    let others: i64 = (0..last).filter(|&d| d != p).map(|d| k.space[d]).product();
    others * tiles(k.space[p]) * tiles(k.space[last])
}

/// The preamble every generated translation unit starts with.
pub fn preamble() -> String {
    let mut s = String::from(include_str!("preamble.cu"));
    // kiln-math's f32 functions, as the interpreter computes them.
    s.push('\n');
    s += &crate::math::device_functions();
    s
}

/// The C type of a value of `d` in registers.
pub(crate) fn ctype(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool",
        DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short",
        DType::U16 => "unsigned short",
        DType::I32 => "int",
        DType::U32 => "unsigned int",
        DType::I64 => "long long",
        DType::U64 => "unsigned long long",
        DType::F64 => "double",
        _ => "float",
    }
}

/// The C type of an element of `d` in memory.
pub(crate) fn mtype(d: DType) -> &'static str {
    match d {
        DType::Bool => "unsigned char",
        DType::F16 | DType::BF16 => "unsigned short",
        other => ctype(other),
    }
}

/// Whether two dtypes share a register type.
fn same_class(a: DType, b: DType) -> bool {
    ctype(a) == ctype(b)
}

/// `x`, a value of `from`, converted as PyTorch converts it to `to`.
fn convert_expr(x: &str, from: DType, to: DType) -> String {
    if from == to {
        return x.to_string();
    }
    match to {
        DType::Bool => format!("({x} != 0)"),
        DType::F32 | DType::F64 => format!("(({}){x})", ctype(to)),
        DType::F16 => format!("kiln_round_f16((float){x})"),
        DType::BF16 => format!("kiln_round_bf16((float){x})"),
        _ if from.is_floating_point() => {
            let via = match to {
                DType::I64 => "kiln_f2i64",
                DType::U64 => "kiln_f2u64",
                DType::U32 => "kiln_f2u32",
                _ => "kiln_f2i32",
            };
            format!("(({}){via}((double){x}))", ctype(to))
        }
        _ => format!("(({}){x})", ctype(to)),
    }
}

/// Rounds a result computed in `d`'s register type to `d`.
fn finish(x: String, d: DType) -> String {
    match d {
        DType::F16 => format!("kiln_round_f16({x})"),
        DType::BF16 => format!("kiln_round_bf16({x})"),
        DType::F32 | DType::F64 | DType::Bool => x,
        _ => format!("(({}){x})", ctype(d)),
    }
}

/// A C literal of value `v` in `d`'s register type.
fn literal(v: Elem, d: DType) -> String {
    match convert(v, d) {
        Elem::B(b) => b.to_string(),
        Elem::F(x) if d == DType::F64 => format!("__longlong_as_double(0x{:016x}LL)", x.to_bits()),
        Elem::F(x) => format!("__int_as_float(0x{:08x})", (x as f32).to_bits()),
        Elem::I(i) if matches!(d, DType::U64 | DType::U32) => format!("(({})({i}ULL))", ctype(d)),
        Elem::I(i) => format!("(({})({i}LL))", ctype(d)),
        Elem::C(..) => unreachable!("complex kernels are interpreted"),
    }
}

/// An accumulator: its C type, starting value, and the dtype it holds
/// (what the final value converts from).
struct AccType {
    ctype: &'static str,
    identity: String,
    holds: DType,
}

fn int_acc_type(d: DType) -> &'static str {
    if d.is_signed() {
        "long long"
    } else {
        "unsigned long long"
    }
}

fn acc_type(op: Fold, compute: DType) -> AccType {
    let holds = op.accumulator(compute);
    let ctype = match op {
        Fold::Or | Fold::And => "int",
        _ if holds.is_floating_point() => self::ctype(holds),
        // Integer sums and products wrap: unsigned arithmetic, narrowed once.
        Fold::Sum | Fold::Prod => "unsigned long long",
        Fold::Max | Fold::Min => int_acc_type(compute),
    };
    let identity = match (op, op.identity(holds)) {
        // 0 and 1 convert to every accumulator type.
        (Fold::Sum | Fold::Prod | Fold::Or | Fold::And, s) => (s.to_f64() as i64).to_string(),
        (_, Scalar::Float(v)) => literal(Elem::F(v), holds),
        (_, Scalar::Int(v)) if holds.is_signed() => format!("((long long)({}ULL))", v as u64),
        (_, s) => format!("({}ULL)", s.to_i64_wrapping() as u64),
    };
    AccType {
        ctype,
        identity,
        holds: if matches!(op, Fold::Or | Fold::And) {
            DType::Bool
        } else {
            holds
        },
    }
}

fn combine(op: Fold) -> &'static str {
    match op {
        Fold::Sum => "kiln_add()",
        Fold::Prod => "kiln_mul()",
        Fold::Or => "kiln_or()",
        Fold::And => "kiln_and()",
        Fold::Max => "kiln_maxf()",
        Fold::Min => "kiln_minf()",
    }
}

/// The CUDA C function of one kernel (the preamble not included).
pub fn kernel_source(k: &Kernel) -> String {
    let mut g = Gen {
        k,
        schedule: k.schedule(),
        walk: walk(k),
        out: String::new(),
        indent: 1,
    };
    let args: Vec<String> = (0..k.args.len())
        .map(|i| format!("unsigned char* b{i}"))
        .collect();
    let scratch = if scratch_bytes(k) > 0 {
        ", unsigned char* kiln_scratch"
    } else {
        ""
    };
    writeln!(
        g.out,
        "extern \"C\" __global__ void __launch_bounds__({BLOCK}) {}({}, int* kiln_status{scratch}) {{",
        k.name,
        args.join(", ")
    )
    .expect("writing to a String");
    for (i, a) in k.accesses.iter().enumerate() {
        g.line(format!("{0}* a{i} = ({0}*)b{1};", mtype(a.dtype), a.arg));
    }
    if k.outer_rank == k.rank() {
        g.pointwise();
    } else if let Some(split) = Split::of(k) {
        g.split_reduction(split);
    } else {
        g.reduction();
    }
    g.out.push_str("}\n");
    g.out
}

/// A whole translation unit: the preamble and every kernel.
pub fn module_source(kernels: &[&Kernel]) -> String {
    let mut s = preamble();
    for k in kernels {
        s.push('\n');
        s += &kernel_source(k);
    }
    s
}

/// One pass of a thread over its share of a row: the elements from
/// `base + lane` (or `lane`) below `end`, `step` apart (each a C
/// expression; with row vectors, vectors of the walk's width instead of
/// elements). `loads` are
/// the vector accesses the pass reads, `stores` the accesses it writes.
struct RowPass {
    base: Option<String>,
    lane: &'static str,
    step: &'static str,
    end: String,
    loads: BTreeSet<usize>,
    stores: Vec<usize>,
}

struct Gen<'k> {
    k: &'k Kernel,
    schedule: Vec<NodeSchedule>,
    walk: Walk,
    out: String,
    indent: usize,
}

/// Values computed in one scope: node → the C variable holding it.
type Memo = HashMap<NodeId, String>;

impl Gen<'_> {
    fn line(&mut self, text: impl AsRef<str>) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    /// `long long c{d}` for dims `dims` from the linear index `index`
    /// (row-major over those dims), through the temporary `tmp`.
    fn coords(&mut self, index: &str, tmp: &str, dims: std::ops::Range<usize>) {
        let start = dims.start;
        if dims.is_empty() {
            return;
        }
        self.line(format!("long long {tmp} = {index};"));
        for d in dims.rev() {
            let n = self.k.space[d];
            if n == 1 {
                self.line(format!("const long long c{d} = 0;"));
            } else if d == start {
                self.line(format!("const long long c{d} = {tmp};"));
            } else {
                self.line(format!(
                    "const long long c{d} = {tmp} % {n}LL; {tmp} /= {n}LL;"
                ));
            }
        }
    }

    /// An element offset `offset + Σ c[d]·strides[d]` over the dims `dims`.
    fn offset(&self, offset: i64, strides: &[i64], dims: std::ops::Range<usize>) -> String {
        let mut s = format!("{offset}LL");
        for d in dims {
            if strides[d] != 0 && self.k.space[d] != 1 {
                write!(s, " + c{d} * {}LL", strides[d]).expect("writing to a String");
            }
        }
        s
    }

    fn access_index(&self, a: &Access) -> String {
        self.offset(a.offset, &a.strides, 0..self.k.rank())
    }

    fn pointwise(&mut self) {
        match self.walk.clone() {
            Walk::Elements => self.pointwise_elements(),
            Walk::Vectors { width, vector } => self.pointwise_vectors(width, &vector),
            Walk::Tiles { p, tiled } => self.pointwise_tiles(p, &tiled),
        }
    }

    /// Every store of one element, in the current scope.
    fn element(&mut self) {
        let mut memo = Memo::new();
        for store in &self.k.stores {
            let v = self.value(store.node, &mut memo, "");
            self.store(store.access, &v, store.node);
        }
    }

    fn grid_stride(&mut self, index: &str, count: i64) {
        self.line(format!(
            "for (long long {index} = (long long)blockIdx.x * blockDim.x + threadIdx.x; {index} < {count}LL; {index} += (long long)gridDim.x * blockDim.x) {{"
        ));
    }

    fn pointwise_elements(&mut self) {
        let total: i64 = self.k.space.iter().product();
        self.grid_stride("kiln_i", total);
        self.indent += 1;
        self.coords("kiln_i", "kiln_r", 0..self.k.rank());
        self.element();
        self.indent -= 1;
        self.line("}");
    }

    /// Runs of `width` elements along the innermost dim: the vector
    /// accesses are loaded before the run and stored after it, through
    /// `kiln_pack` unions the unrolled run indexes with constants (so they
    /// stay in registers).
    fn pointwise_vectors(&mut self, width: i64, vector: &[bool]) {
        let k = self.k;
        let last = k.rank() - 1;
        let total: i64 = k.space.iter().product();
        self.grid_stride("kiln_g", total / width);
        self.indent += 1;
        self.coords(&format!("kiln_g * {width}LL"), "kiln_r", 0..k.rank());
        self.line(format!("const long long kiln_run = c{last};"));
        let loaded: HashSet<usize> = k.loaded_accesses().collect();
        let stored: HashSet<usize> = k.stores.iter().map(|s| s.access).collect();
        for (i, a) in k.accesses.iter().enumerate() {
            if !vector[i] {
                continue;
            }
            let t = mtype(a.dtype);
            if loaded.contains(&i) {
                let at = self.access_index(a);
                self.line(format!(
                    "const kiln_pack<{t}, {width}> l{i} = kiln_vload<{t}, {width}>(a{i} + ({at}));"
                ));
            }
            if stored.contains(&i) {
                self.line(format!("kiln_pack<{t}, {width}> s{i};"));
            }
        }
        self.line("#pragma unroll");
        self.line(format!(
            "for (int kiln_v = 0; kiln_v < {width}; ++kiln_v) {{"
        ));
        self.indent += 1;
        self.line(format!("const long long c{last} = kiln_run + kiln_v;"));
        self.element();
        self.indent -= 1;
        self.line("}");
        for (i, a) in k.accesses.iter().enumerate() {
            if vector[i] && stored.contains(&i) {
                let (t, at) = (mtype(a.dtype), self.access_index(a));
                self.line(format!("kiln_vstore<{t}, {width}>(a{i} + ({at}), s{i});"));
            }
        }
        self.indent -= 1;
        self.line("}");
    }

    /// 32×32 tiles of dims `p` and the innermost, one per block and step:
    /// the tiled loads are read with threads along `p` (their contiguous
    /// dim) into shared memory, then each element is computed and stored
    /// with threads along the innermost dim.
    fn pointwise_tiles(&mut self, p: usize, tiled: &[bool]) {
        let k = self.k;
        let last = k.rank() - 1;
        let (np, nl) = (k.space[p], k.space[last]);
        let rows = BLOCK as i64 / TILE;
        for (i, a) in k.accesses.iter().enumerate() {
            if tiled[i] {
                // One column of padding: the column reads of the second
                // phase hit 32 different banks.
                self.line(format!(
                    "__shared__ {} kiln_tile{i}[{TILE}][{}];",
                    mtype(a.dtype),
                    TILE + 1
                ));
            }
        }
        self.line(format!(
            "const int kiln_tx = threadIdx.x % {TILE}, kiln_ty = threadIdx.x / {TILE};"
        ));
        self.line(format!(
            "for (long long kiln_t = blockIdx.x; kiln_t < {}LL; kiln_t += gridDim.x) {{",
            tile_count(k, p)
        ));
        self.indent += 1;
        self.line("long long kiln_r = kiln_t;");
        self.line(format!(
            "const long long kiln_tl = kiln_r % {tl}LL * {TILE}LL; kiln_r /= {tl}LL;",
            tl = (nl + TILE - 1) / TILE
        ));
        self.line(format!(
            "const long long kiln_tp = kiln_r % {tp}LL * {TILE}LL; kiln_r /= {tp}LL;",
            tp = (np + TILE - 1) / TILE
        ));
        for d in (0..last).rev().filter(|&d| d != p) {
            let n = k.space[d];
            self.line(format!(
                "const long long c{d} = kiln_r % {n}LL; kiln_r /= {n}LL;"
            ));
        }
        let tile_loop = |g: &mut Self, p_local: &str, l_local: &str| {
            g.line(format!(
                "for (int kiln_k = kiln_ty; kiln_k < {TILE}; kiln_k += {rows}) {{"
            ));
            g.indent += 1;
            g.line(format!("const long long c{p} = kiln_tp + {p_local};"));
            g.line(format!("const long long c{last} = kiln_tl + {l_local};"));
            g.line(format!("if (c{p} < {np}LL && c{last} < {nl}LL) {{"));
            g.indent += 1;
        };
        let close = |g: &mut Self| {
            g.indent -= 1;
            g.line("}");
            g.indent -= 1;
            g.line("}");
        };
        tile_loop(self, "kiln_tx", "kiln_k");
        for (i, a) in k.accesses.iter().enumerate() {
            if tiled[i] {
                let at = self.access_index(a);
                self.line(format!("kiln_tile{i}[kiln_k][kiln_tx] = a{i}[{at}];"));
            }
        }
        close(self);
        self.line("__syncthreads();");
        tile_loop(self, "kiln_k", "kiln_tx");
        self.element();
        close(self);
        // The next tile overwrites the shared tiles.
        self.line("__syncthreads();");
        self.indent -= 1;
        self.line("}");
    }

    fn store(&mut self, access: usize, value: &str, node: NodeId) {
        let a = &self.k.accesses[access];
        let converted = convert_expr(value, self.k.node(node).dtype, a.dtype);
        let encoded = match a.dtype {
            DType::F16 => format!("kiln_f2h({converted})"),
            DType::BF16 => format!("kiln_f2bf({converted})"),
            DType::Bool => format!("(unsigned char){converted}"),
            _ => converted,
        };
        if let Walk::Vectors { vector, .. } = &self.walk
            && vector[access]
        {
            self.line(format!("s{access}.e[kiln_v] = {encoded};"));
            return;
        }
        let index = self.access_index(a);
        self.line(format!("a{access}[{index}] = {encoded};"));
    }

    /// A reduction of few long rows over `split.chunks` blocks per row
    /// (see [`Split`]).
    fn split_reduction(&mut self, split: Split) {
        let k = self.k;
        let (outer, inner) = (k.outer_count(), k.inner_count());
        let Split { chunks, chunk } = split;
        let (partials, _) = split_layout(k, split);
        self.line("__shared__ bool kiln_last;");
        self.line(format!(
            "for (long long kiln_w = blockIdx.x; kiln_w < {}LL; kiln_w += gridDim.x) {{",
            outer * chunks
        ));
        self.indent += 1;
        self.line(format!(
            "const long long kiln_o = kiln_w / {chunks}LL, kiln_end = kiln_w % {chunks}LL * {chunk}LL + {chunk}LL;"
        ));
        self.coords("kiln_o", "kiln_ro", 0..k.outer_rank);
        let mut outer_memo = Memo::new();
        let mut seen = HashSet::new();
        for &(r, _) in &partials {
            self.ensure_outer(k.node(r).operands()[0], &mut outer_memo, &mut seen);
        }
        for &(r, _) in &partials {
            self.declare_acc(r);
        }
        let roots: Vec<NodeId> = partials
            .iter()
            .map(|&(r, _)| k.node(r).operands()[0])
            .collect();
        let pass = RowPass {
            base: Some(format!("kiln_end - {chunk}LL")),
            lane: "threadIdx.x",
            step: "blockDim.x",
            end: format!("(kiln_end < {inner}LL ? kiln_end : {inner}LL)"),
            loads: self.inner_loads(&roots, &outer_memo),
            stores: Vec::new(),
        };
        self.row_pass(&pass, &mut |g| {
            let mut memo = outer_memo.clone();
            for &(r, _) in &partials {
                let x = k.node(r).operands()[0];
                let v = g.value(x, &mut memo, "_p0");
                g.accumulate(r, &v);
            }
        });
        // This chunk's partial results, then whether this block is the
        // row's last.
        for &(r, _) in &partials {
            self.block_partial(r);
        }
        self.line("if (threadIdx.x == 0) {");
        self.indent += 1;
        for &(r, at) in &partials {
            self.write_partial(r, at, outer * chunks);
        }
        self.line("__threadfence();");
        self.line(format!(
            "kiln_last = atomicAdd((unsigned int*)kiln_scratch + kiln_o, 1u) == {}u;",
            chunks - 1
        ));
        self.indent -= 1;
        self.line("}");
        self.line("__syncthreads();");
        self.line("if (kiln_last) {");
        self.indent += 1;
        self.line("__threadfence();");
        // The row's partials, combined in chunk order by the whole block.
        for &(r, at) in &partials {
            self.combine_partials(r, at, split, outer * chunks);
        }
        for &(r, _) in &partials {
            let v = self.finish_acc(r, RowGroup::Block);
            outer_memo.insert(r, v);
        }
        let mut seen = HashSet::new();
        for s in &k.stores {
            self.ensure_outer(s.node, &mut outer_memo, &mut seen);
        }
        self.line("if (threadIdx.x == 0) {");
        self.indent += 1;
        for s in &k.stores {
            let v = outer_memo[&s.node].clone();
            self.store(s.access, &v, s.node);
        }
        // Ready for the next launch.
        self.line("((unsigned int*)kiln_scratch)[kiln_o] = 0u;");
        self.indent -= 1;
        self.line("}");
        self.indent -= 1;
        self.line("}");
        // kiln_last is rewritten by the next chunk.
        self.line("__syncthreads();");
        self.indent -= 1;
        self.line("}");
    }

    /// The block's partial result of reduction `r` over its chunk, in
    /// `part{r}` (and `ppos{r}` for an arg-reduction).
    fn block_partial(&mut self, r: NodeId) {
        let id = r.0;
        match &self.k.node(r).expr {
            Expr::Reduce { op, .. } => {
                let fold = Fold::of(*op, self.k.node(r).compute);
                let t = acc_type(fold, self.k.node(r).compute);
                self.line(format!(
                    "const {c} part{id} = kiln_block_reduce<{c}>(acc{id}, ({c}){}, {});",
                    t.identity,
                    combine(fold),
                    c = t.ctype,
                ));
            }
            Expr::ArgReduce { op, x } => {
                let t = arg_ctype(self.k.node(*x).dtype);
                let max = *op == ArgReduceOp::Argmax;
                self.line(format!(
                    "{t} part{id}; const long long ppos{id} = kiln_block_arg<{max}, {t}>(acc{id}, idx{id}, &part{id});"
                ));
            }
            _ => unreachable!("reductions only"),
        }
    }

    /// The C type a reduction's partials are held in.
    fn partial_ctype(&self, r: NodeId) -> &'static str {
        let node = self.k.node(r);
        match &node.expr {
            Expr::Reduce { op, .. } => acc_type(Fold::of(*op, node.compute), node.compute).ctype,
            Expr::ArgReduce { x, .. } => arg_ctype(self.k.node(*x).dtype),
            _ => unreachable!("reductions only"),
        }
    }

    /// `(values, positions)`: the scratch arrays of reduction `r`'s
    /// partials at byte `at`, `count` of each.
    fn partial_arrays(&self, r: NodeId, at: usize, count: i64) -> (String, String) {
        let t = self.partial_ctype(r);
        (
            format!("((volatile {t}*)(kiln_scratch + {at}))"),
            format!(
                "((volatile long long*)(kiln_scratch + {}))",
                at as i64 + count * 8
            ),
        )
    }

    fn write_partial(&mut self, r: NodeId, at: usize, count: i64) {
        let (values, positions) = self.partial_arrays(r, at, count);
        let id = r.0;
        self.line(format!("{values}[kiln_w] = part{id};"));
        if matches!(self.k.node(r).expr, Expr::ArgReduce { .. }) {
            self.line(format!("{positions}[kiln_w] = ppos{id};"));
        }
    }

    /// Sets each thread's accumulator of `r` to its share of the row's
    /// partials, taken in chunk order.
    fn combine_partials(&mut self, r: NodeId, at: usize, split: Split, count: i64) {
        let (values, positions) = self.partial_arrays(r, at, count);
        let (id, chunks) = (r.0, split.chunks);
        let each = format!(
            "for (long long kiln_p = threadIdx.x; kiln_p < {chunks}LL; kiln_p += blockDim.x)"
        );
        let at_p = format!("kiln_o * {chunks}LL + kiln_p");
        match &self.k.node(r).expr {
            Expr::Reduce { op, .. } => {
                let fold = Fold::of(*op, self.k.node(r).compute);
                let t = acc_type(fold, self.k.node(r).compute);
                self.line(format!("acc{id} = ({}){};", t.ctype, t.identity));
                self.line(format!(
                    "{each} acc{id} = {}(acc{id}, {values}[{at_p}]);",
                    combine(fold)
                ));
            }
            Expr::ArgReduce { op, x } => {
                let t = arg_ctype(self.k.node(*x).dtype);
                let max = *op == ArgReduceOp::Argmax;
                self.line(format!("acc{id} = 0; idx{id} = -1;"));
                self.line(format!(
                    "{each} {{ const {t} v = {values}[{at_p}]; const long long i = {positions}[{at_p}]; if (kiln_arg_better<{max}>(acc{id}, idx{id}, v, i)) {{ acc{id} = v; idx{id} = i; }} }}"
                ));
            }
            _ => unreachable!("reductions only"),
        }
    }

    /// The loop of `pass`, with `element` computing one element in its
    /// scope (`kiln_j` its position in the row, `c{d}` its coordinates).
    /// With row vectors, each step loads the pass's vector accesses
    /// before a run of the walk's width, computes the run unrolled, and
    /// stores its vector accesses after it, as pointwise vectors do.
    fn row_pass(&mut self, pass: &RowPass, element: &mut dyn FnMut(&mut Self)) {
        let k = self.k;
        let (lane, step, end) = (pass.lane, pass.step, &pass.end);
        let base = pass
            .base
            .as_ref()
            .map(|b| format!("{b} + "))
            .unwrap_or_default();
        let Walk::Vectors { width, vector } = self.walk.clone() else {
            self.line(format!(
                "for (long long kiln_j = {base}{lane}; kiln_j < {end}; kiln_j += {step}) {{"
            ));
            self.indent += 1;
            self.coords("kiln_j", "kiln_r", k.outer_rank..k.rank());
            element(self);
            self.indent -= 1;
            self.line("}");
            return;
        };
        let last = k.rank() - 1;
        self.line(format!(
            "for (long long kiln_jrun = {base}(long long)({lane}) * {width}LL; kiln_jrun < {end}; kiln_jrun += (long long)({step}) * {width}LL) {{"
        ));
        self.indent += 1;
        self.coords("kiln_jrun", "kiln_r", k.outer_rank..k.rank());
        self.line(format!("const long long kiln_run = c{last};"));
        for &i in &pass.loads {
            let (t, at) = (
                mtype(k.accesses[i].dtype),
                self.access_index(&k.accesses[i]),
            );
            self.line(format!(
                "const kiln_pack<{t}, {width}> l{i} = kiln_vload<{t}, {width}>(a{i} + ({at}));"
            ));
        }
        let stored: BTreeSet<usize> = pass.stores.iter().copied().filter(|&i| vector[i]).collect();
        for &i in &stored {
            self.line(format!(
                "kiln_pack<{}, {width}> s{i};",
                mtype(k.accesses[i].dtype)
            ));
        }
        self.line("#pragma unroll");
        self.line(format!(
            "for (int kiln_v = 0; kiln_v < {width}; ++kiln_v) {{"
        ));
        self.indent += 1;
        self.line(format!("const long long c{last} = kiln_run + kiln_v;"));
        self.line("const long long kiln_j = kiln_jrun + kiln_v;");
        element(self);
        self.indent -= 1;
        self.line("}");
        for &i in &stored {
            let (t, at) = (
                mtype(k.accesses[i].dtype),
                self.access_index(&k.accesses[i]),
            );
            self.line(format!("kiln_vstore<{t}, {width}>(a{i} + ({at}), s{i});"));
        }
        self.indent -= 1;
        self.line("}");
    }

    /// The vector accesses loaded by the per-element values of `roots`
    /// (those not computed in the row's scope, `outer`).
    fn inner_loads(&self, roots: &[NodeId], outer: &Memo) -> BTreeSet<usize> {
        let Walk::Vectors { vector, .. } = &self.walk else {
            return BTreeSet::new();
        };
        let mut loads = BTreeSet::new();
        let mut seen = HashSet::new();
        let mut todo = roots.to_vec();
        while let Some(n) = todo.pop() {
            if outer.contains_key(&n) || !self.schedule[n.index()].inner || !seen.insert(n) {
                continue;
            }
            match self.k.node(n).expr {
                Expr::Load { access } if vector[access] => {
                    loads.insert(access);
                }
                _ => todo.extend(self.k.node(n).operands()),
            }
        }
        loads
    }

    fn reduction(&mut self) {
        let k = self.k;
        let outer: i64 = k.outer_count();
        let inner: i64 = k.inner_count();
        let phases = k.phase_count();
        let rows = RowGroup::of(k);
        self.line(rows.row_loop(outer));
        self.indent += 1;
        self.coords("kiln_o", "kiln_ro", 0..k.outer_rank);
        let mut outer_memo = Memo::new();
        for phase in 0..phases {
            let reductions: Vec<NodeId> = (0..k.nodes.len())
                .map(|i| NodeId(i as u32))
                .filter(|&n| {
                    let s = self.schedule[n.index()];
                    k.node(n).is_reduction() && !s.inner && s.phase == phase + 1
                })
                .collect();
            let stores: Vec<usize> = (0..k.stores.len())
                .filter(|&i| k.store_phase(&k.stores[i], &self.schedule) == Some(phase))
                .collect();
            // Outer values this pass needs are computed before its loop.
            let mut seen = HashSet::new();
            for &r in &reductions {
                self.ensure_outer(k.node(r).operands()[0], &mut outer_memo, &mut seen);
            }
            for &s in &stores {
                self.ensure_outer(k.stores[s].node, &mut outer_memo, &mut seen);
            }
            for &r in &reductions {
                self.declare_acc(r);
            }
            let roots: Vec<NodeId> = reductions
                .iter()
                .map(|&r| k.node(r).operands()[0])
                .chain(stores.iter().map(|&s| k.stores[s].node))
                .collect();
            let (lane, step) = rows.lanes();
            let pass = RowPass {
                base: None,
                lane,
                step,
                end: format!("{inner}LL"),
                loads: self.inner_loads(&roots, &outer_memo),
                stores: stores.iter().map(|&s| k.stores[s].access).collect(),
            };
            let suffix = format!("_p{phase}");
            self.row_pass(&pass, &mut |g| {
                let mut memo = outer_memo.clone();
                for &r in &reductions {
                    let x = k.node(r).operands()[0];
                    let v = g.value(x, &mut memo, &suffix);
                    g.accumulate(r, &v);
                }
                for &s in &stores {
                    let store = k.stores[s].clone();
                    let v = g.value(store.node, &mut memo, &suffix);
                    g.store(store.access, &v, store.node);
                }
            });
            for &r in &reductions {
                let v = self.finish_acc(r, rows);
                outer_memo.insert(r, v);
            }
            // Values stored in this pass are read back by the next ones.
            self.line(rows.barrier());
        }
        // Stores of per-row values, once per row.
        let row_stores: Vec<usize> = (0..k.stores.len())
            .filter(|&i| k.store_phase(&k.stores[i], &self.schedule).is_none())
            .collect();
        if !row_stores.is_empty() {
            let mut seen = HashSet::new();
            for &s in &row_stores {
                self.ensure_outer(k.stores[s].node, &mut outer_memo, &mut seen);
            }
            self.line(format!("if ({}) {{", rows.leader()));
            self.indent += 1;
            for &s in &row_stores {
                let store = k.stores[s].clone();
                let v = outer_memo[&store.node].clone();
                self.store(store.access, &v, store.node);
            }
            self.indent -= 1;
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
    }

    /// Computes, in the row scope, every outer value `n` depends on that
    /// is not computed yet (itself included when it is outer).
    fn ensure_outer(&mut self, n: NodeId, memo: &mut Memo, seen: &mut HashSet<NodeId>) {
        if memo.contains_key(&n) || !seen.insert(n) {
            return;
        }
        if self.schedule[n.index()].inner {
            for o in self.k.node(n).operands() {
                self.ensure_outer(o, memo, seen);
            }
        } else {
            self.value(n, memo, "");
        }
    }

    fn declare_acc(&mut self, r: NodeId) {
        let node = self.k.node(r);
        match &node.expr {
            Expr::Reduce { op, .. } => {
                let t = acc_type(Fold::of(*op, node.compute), node.compute);
                self.line(format!("{} acc{} = {};", t.ctype, r.0, t.identity));
            }
            Expr::ArgReduce { x, .. } => {
                let xd = self.k.node(*x).dtype;
                let t = arg_ctype(xd);
                self.line(format!("{t} acc{} = 0; long long idx{} = -1;", r.0, r.0));
            }
            _ => unreachable!("reductions only"),
        }
    }

    fn accumulate(&mut self, r: NodeId, v: &str) {
        let node = self.k.node(r);
        let id = r.0;
        match &node.expr {
            Expr::Reduce { op, x } => {
                let op = Fold::of(*op, node.compute);
                let xd = self.k.node(*x).dtype;
                let t = acc_type(op, node.compute);
                let x = if t.holds == DType::Bool {
                    format!("(int)({v} != 0)")
                } else {
                    format!("(({}){})", t.ctype, convert_expr(v, xd, node.compute))
                };
                let line = match op {
                    Fold::Sum => format!("acc{id} = acc{id} + {x};"),
                    Fold::Prod => format!("acc{id} = acc{id} * {x};"),
                    Fold::Or => format!("acc{id} |= {x};"),
                    Fold::And => format!("acc{id} &= {x};"),
                    Fold::Max => format!("acc{id} = kiln_max(acc{id}, {x});"),
                    Fold::Min => format!("acc{id} = kiln_min(acc{id}, {x});"),
                };
                self.line(line);
            }
            Expr::ArgReduce { op, x } => {
                let xd = self.k.node(*x).dtype;
                let max = *op == ArgReduceOp::Argmax;
                self.line(format!(
                    "{{ const {t} v = ({t}){v}; if (kiln_arg_better<{max}>(acc{id}, idx{id}, v, kiln_j)) {{ acc{id} = v; idx{id} = kiln_j; }} }}",
                    t = arg_ctype(xd)
                ));
            }
            _ => unreachable!("reductions only"),
        }
    }

    /// Reduces the group's accumulators; returns the variable holding the
    /// node's value.
    fn finish_acc(&mut self, r: NodeId, rows: RowGroup) -> String {
        let node = self.k.node(r);
        let id = r.0;
        let name = format!("n{id}");
        match &node.expr {
            Expr::Reduce { op, .. } => {
                let op = Fold::of(*op, node.compute);
                let t = acc_type(op, node.compute);
                self.line(format!(
                    "const {} tot{id} = {}<{}>(acc{id}, ({}){}, {});",
                    t.ctype,
                    rows.reduce_fn(),
                    t.ctype,
                    t.ctype,
                    t.identity,
                    combine(op)
                ));
                let held = if t.holds == DType::Bool {
                    format!("(tot{id} != 0)")
                } else if t.holds == DType::F64 {
                    format!("tot{id}")
                } else {
                    format!("(({})tot{id})", ctype(t.holds))
                };
                let v = convert_expr(&held, t.holds, node.dtype);
                self.line(format!("const {} {name} = {v};", ctype(node.dtype)));
            }
            Expr::ArgReduce { op, x } => {
                let xd = self.k.node(*x).dtype;
                let max = *op == ArgReduceOp::Argmax;
                self.line(format!(
                    "const long long pos{id} = {}<{max}, {}>(acc{id}, idx{id});",
                    rows.arg_fn(),
                    arg_ctype(xd)
                ));
                let v = convert_expr(&format!("pos{id}"), DType::I64, node.dtype);
                self.line(format!("const {} {name} = {v};", ctype(node.dtype)));
            }
            _ => unreachable!("reductions only"),
        }
        name
    }

    /// The variable holding node `n` in the current scope, computing it
    /// (and what it needs) first.
    fn value(&mut self, n: NodeId, memo: &mut Memo, suffix: &str) -> String {
        if let Some(v) = memo.get(&n) {
            return v.clone();
        }
        let k = self.k;
        let node = k.node(n);
        let operands: Vec<String> = match &node.expr {
            // A pow's constant exponent picks a form, it is not computed.
            Expr::Binary {
                op: BinaryOp::Pow,
                a,
                b,
            } if matches!(k.node(*b).expr, Expr::Const(_)) => vec![self.value(*a, memo, suffix)],
            _ => node
                .operands()
                .iter()
                .map(|&o| self.value(o, memo, suffix))
                .collect(),
        };
        let d = node.dtype;
        let c = node.compute;
        let expr = match &node.expr {
            Expr::Load { access } => {
                let a = &k.accesses[*access];
                let at = match &self.walk {
                    Walk::Vectors { vector, .. } if vector[*access] => {
                        format!("l{access}.e[kiln_v]")
                    }
                    Walk::Tiles { tiled, .. } if tiled[*access] => {
                        format!("kiln_tile{access}[kiln_tx][kiln_k]")
                    }
                    _ => format!("a{access}[{}]", self.access_index(a)),
                };
                let decoded = match a.dtype {
                    DType::F16 => format!("kiln_h2f({at})"),
                    DType::BF16 => format!("kiln_bf2f({at})"),
                    DType::Bool => format!("({at} != 0)"),
                    _ => at,
                };
                convert_expr(&decoded, a.dtype, d)
            }
            Expr::Const(s) => literal(Elem::from_scalar(*s), d),
            Expr::Iota { offset, strides } => convert_expr(
                &format!("({})", self.offset(*offset, strides, 0..k.rank())),
                DType::I64,
                d,
            ),
            Expr::Unary { op, x } => {
                let xv = convert_operand(&operands[0], k.node(*x).dtype, c);
                let (r, produced) = unary(*op, &xv, c);
                convert_expr(&r, produced, d)
            }
            Expr::Binary { op, a, b } => {
                let (ad, bd) = (k.node(*a).dtype, k.node(*b).dtype);
                match (op, &k.node(*b).expr) {
                    (BinaryOp::Pow, Expr::Const(s)) => {
                        let av = convert_operand(&operands[0], ad, c);
                        pow_const(&av, *s, c, d)
                    }
                    _ => {
                        let (av, bv) = if op.is_logical() {
                            (operands[0].clone(), operands[1].clone())
                        } else {
                            (
                                convert_operand(&operands[0], ad, c),
                                convert_operand(&operands[1], bd, c),
                            )
                        };
                        let (r, produced) = binary(*op, &av, &bv, c);
                        convert_expr(&r, produced, d)
                    }
                }
            }
            Expr::Where { cond, .. } => {
                let cd = k.node(*cond).dtype;
                let cv = convert_expr(&operands[0], cd, DType::Bool);
                format!("({cv} ? {} : {})", operands[1], operands[2])
            }
            Expr::Cast { x } => convert_expr(&operands[0], k.node(*x).dtype, d),
            Expr::Reduce { op, x } => {
                // Without reduced dims: the fold of one element.
                let op = Fold::of(*op, c);
                let t = acc_type(op, c);
                let xd = k.node(*x).dtype;
                let x = if t.holds == DType::Bool {
                    format!("(int)({} != 0)", operands[0])
                } else {
                    format!("(({}){})", t.ctype, convert_expr(&operands[0], xd, c))
                };
                let folded = match op {
                    Fold::Sum => format!("(({}){} + {x})", t.ctype, t.identity),
                    Fold::Prod => format!("(({}){} * {x})", t.ctype, t.identity),
                    Fold::Or | Fold::And => format!("({x} != 0)"),
                    Fold::Max => format!("kiln_max(({}){}, {x})", t.ctype, t.identity),
                    Fold::Min => format!("kiln_min(({}){}, {x})", t.ctype, t.identity),
                };
                let held = if t.holds == DType::F64 || t.holds == DType::Bool {
                    folded
                } else {
                    format!("(({}){folded})", ctype(t.holds))
                };
                convert_expr(&held, t.holds, d)
            }
            // Without reduced dims the position is 0 (the element is still
            // computed: it may raise ZeroDivisionError).
            Expr::ArgReduce { .. } => convert_expr("0LL", DType::I64, d),
        };
        let name = format!("n{}{suffix}", n.0);
        self.line(format!("const {} {name} = {expr};", ctype(d)));
        memo.insert(n, name.clone());
        name
    }
}

/// The register type an argmax/argmin compares values of `d` in.
fn arg_ctype(d: DType) -> &'static str {
    if d.is_floating_point() {
        ctype(d)
    } else if d.is_bool() {
        "int"
    } else {
        int_acc_type(d)
    }
}

/// An operand converted to the compute dtype's register type when it is
/// held in another (a scalar constant at opmath precision is not).
fn convert_operand(x: &str, from: DType, compute: DType) -> String {
    if same_class(from, compute) {
        x.to_string()
    } else {
        convert_expr(x, from, compute)
    }
}

/// `op` on `x` computing in `c`; the expression and the dtype it
/// produces: one arm per primitive unary op.
fn unary(op: UnaryOp, x: &str, c: DType) -> (String, DType) {
    use UnaryOp::*;
    let float = c.is_floating_point();
    let boolean = c.is_bool();
    let signed = c.is_signed() && !boolean;
    let single = c != DType::F64;
    // Functions without a correctly rounded f32 form compute in f64, as
    // the interpreter does.
    let wide = |f: &str| {
        if single {
            format!("(float){f}((double){x})")
        } else {
            format!("{f}({x})")
        }
    };
    let r = match op {
        Neg if float => format!("(-{x})"),
        Neg => format!("kiln_ineg({x})"),
        Abs if float => format!("fabs({x})"),
        Abs if signed => format!("({x} < 0 ? kiln_ineg({x}) : {x})"),
        Abs => x.to_string(),
        // kiln-math's f32 functions, as the interpreter computes them.
        _ if single && let Some(f) = f32_algorithm(op) => format!("kiln_{}_f32({x})", f.name()),
        Erfc => format!("erfc({x})"),
        // Special functions in f64, rounded once (the interpreter's
        // algorithms, kiln_math::special, in the preamble; lgamma is
        // CUDA's).
        Erfinv => wide("kiln_erfinv"),
        Lgamma => wide("lgamma"),
        Digamma => wide("kiln_digamma"),
        I0 => wide("kiln_i0"),
        SpecialI0e => wide("kiln_i0e"),
        SpecialErfcx => wide("kiln_erfcx"),
        SpecialI1 => wide("kiln_i1"),
        SpecialI1e => wide("kiln_i1e"),
        // CUDA's own (as lgamma), libm's (fdlibm's) on the host.
        SpecialBesselJ0 => wide("j0"),
        SpecialBesselJ1 => wide("j1"),
        SpecialBesselY0 => wide("y0"),
        SpecialBesselY1 => wide("y1"),
        SpecialModifiedBesselI0 => wide("kiln_i0"),
        SpecialModifiedBesselI1 => wide("kiln_i1"),
        SpecialModifiedBesselK0 => wide("kiln_k0"),
        SpecialModifiedBesselK1 => wide("kiln_k1"),
        SpecialScaledModifiedBesselK0 => wide("kiln_k0e"),
        SpecialScaledModifiedBesselK1 => wide("kiln_k1e"),
        SpecialSphericalBesselJ0 => wide("kiln_spherical_j0"),
        SpecialAiryAi => wide("kiln_airy_ai"),
        SpecialNdtri => wide("kiln_ndtri"),
        Atan => format!("atan({x})"),
        Asin => format!("asin({x})"),
        Acos => format!("acos({x})"),
        Exp => format!("exp({x})"),
        Log => wide("log"),
        Log2 => wide("log2"),
        Log1p => wide("log1p"),
        Expm1 => wide("expm1"),
        Sin => wide("sin"),
        Cos => wide("cos"),
        Tanh => wide("tanh"),
        Erf => wide("erf"),
        Sqrt => format!("sqrt({x})"),
        Rsqrt if single => format!("(1.0f / sqrtf({x}))"),
        Rsqrt => format!("(1.0 / sqrt({x}))"),
        Reciprocal if single => format!("(1.0f / {x})"),
        Reciprocal => format!("(1.0 / {x})"),
        Relu if float => format!("(({x} != {x} || {x} >= 0) ? {x} : 0)"),
        Relu if signed => format!("({x} < 0 ? 0 : {x})"),
        Relu => x.to_string(),
        Floor if float => format!("floor({x})"),
        Ceil if float => format!("ceil({x})"),
        Round if float => format!("rint({x})"),
        Trunc if float => format!("trunc({x})"),
        // Integers (and bool) are their own rounding.
        Floor | Ceil | Round | Trunc => x.to_string(),
        Sign if float => format!("({})((0 < {x}) - ({x} < 0))", ctype(c)),
        Sign if signed => format!("(({x} > 0) - ({x} < 0))"),
        Sign if boolean => x.to_string(),
        Sign => format!("({x} > 0)"),
        LogicalNot if boolean => return (format!("(!{x})"), DType::Bool),
        LogicalNot => return (format!("({x} == 0)"), DType::Bool),
        BitwiseNot if boolean => return (format!("(!{x})"), DType::Bool),
        BitwiseNot => format!("(~{x})"),
        Isnan if float => return (format!("({x} != {x})"), DType::Bool),
        Isnan => return ("false".into(), DType::Bool),
        Signbit if float => return (format!("((bool)signbit({x}))"), DType::Bool),
        Signbit if signed => return (format!("({x} < 0)"), DType::Bool),
        Signbit => return ("false".into(), DType::Bool),
    };
    if boolean {
        (r, DType::Bool)
    } else {
        (finish(r, c), c)
    }
}

/// `a op b` computing in `c` (logical ops: operands of any dtype); the
/// expression and the dtype it produces: one arm per primitive binary op.
fn binary(op: BinaryOp, a: &str, b: &str, c: DType) -> (String, DType) {
    use BinaryOp::*;
    let float = c.is_floating_point();
    let boolean = c.is_bool();
    let t = ctype(c);
    let wrap =
        |sym: &str| format!("(({t})((unsigned long long)({a}) {sym} (unsigned long long)({b})))");
    let compare = |sym: &str| (format!("({a} {sym} {b})"), DType::Bool);
    let truth = |v: &str| format!("({v} != 0)");
    // Functions computed in f64 for every float dtype, as the
    // interpreter computes them: `call` of the two operands, widened and
    // its result narrowed below f64.
    let wide = |call: &dyn Fn(&str, &str) -> String| {
        if c == DType::F64 {
            call(a, b)
        } else {
            format!(
                "(float){}",
                call(&format!("(double){a}"), &format!("(double){b}"))
            )
        }
    };
    let r = match op {
        LogicalAnd => return (format!("({} && {})", truth(a), truth(b)), DType::Bool),
        LogicalOr => return (format!("({} || {})", truth(a), truth(b)), DType::Bool),
        LogicalXor => return (format!("({} != {})", truth(a), truth(b)), DType::Bool),
        Eq => return compare("=="),
        Ne => return compare("!="),
        Lt => return compare("<"),
        Le => return compare("<="),
        Gt => return compare(">"),
        Ge => return compare(">="),
        Add | Maximum | BitwiseOr if boolean => format!("({a} || {b})"),
        Mul | Minimum | BitwiseAnd if boolean => format!("({a} && {b})"),
        BitwiseXor if boolean => format!("({a} != {b})"),
        // x ** 1 == x and x ** 0 == 1.
        Pow if boolean => format!("({a} || !{b})"),
        Add if float => format!("({a} + {b})"),
        Add => wrap("+"),
        Sub if float => format!("({a} - {b})"),
        Sub => wrap("-"),
        Mul if float => format!("({a} * {b})"),
        Mul => wrap("*"),
        Div if float => format!("({a} / {b})"),
        Div => return (format!("((double){a} / (double){b})"), DType::F64),
        DivTrunc if float => format!("trunc({a} / {b})"),
        DivTrunc => format!("kiln_idiv_trunc<{t}>({a}, {b}, kiln_status)"),
        DivFloor if float => format!("kiln_fdiv_floor({a}, {b})"),
        DivFloor => format!("kiln_idiv_floor<{t}>({a}, {b}, kiln_status)"),
        Remainder if float => format!("kiln_fremainder({a}, {b})"),
        Remainder => format!("kiln_iremainder<{t}>({a}, {b}, kiln_status)"),
        Fmod if float => format!("fmod({a}, {b})"),
        Fmod => format!("kiln_ifmod<{t}>({a}, {b}, kiln_status)"),
        Pow if float => wide(&|x, y| format!("pow({x}, {y})")),
        Pow => format!("kiln_ipow<{t}>({a}, {b})"),
        Maximum if float => format!("kiln_max({a}, {b})"),
        Maximum => format!("kiln_max<{t}>({a}, {b})"),
        Minimum if float => format!("kiln_min({a}, {b})"),
        Minimum => format!("kiln_min<{t}>({a}, {b})"),
        BitwiseAnd => format!("({a} & {b})"),
        BitwiseOr => format!("({a} | {b})"),
        BitwiseXor => format!("({a} ^ {b})"),
        Gcd => format!("kiln_gcd<{t}>({a}, {b})"),
        Lcm => format!("kiln_lcm<{t}>({a}, {b})"),
        BitwiseLeftShift => format!("kiln_shl<{t}>({a}, {b})"),
        BitwiseRightShift => format!("kiln_shr<{t}>({a}, {b})"),
        Nextafter if c == DType::F64 => format!("nextafter({a}, {b})"),
        Nextafter if c == DType::F16 => format!("kiln_nextafter_f16({a}, {b})"),
        Nextafter if c == DType::BF16 => format!("kiln_nextafter_bf16({a}, {b})"),
        Nextafter => format!("nextafterf({a}, {b})"),
        SpecialZeta => wide(&|x, y| format!("kiln_zeta({x}, {y})")),
        Igamma | Igammac => {
            let lower = u8::from(op == Igamma);
            wide(&|x, y| format!("kiln_gamma_inc({x}, {y}, {lower})"))
        }
        // The orthogonal polynomials: one preamble function, the
        // polynomial by its kind code; the last argument is whether the
        // values are f32 (Hermite's degree limit).
        kiln_ir::polynomial_ops!() => {
            let kind = polynomial(op).map_or(0, |p| p.code());
            let single = u8::from(c != DType::F64);
            wide(&|x, n| format!("kiln_polynomial({kind}, {x}, {n}, {single})"))
        }
        // Integers compute as floats (inference converts them).
        Atan2 if c == DType::F64 => format!("atan2({a}, {b})"),
        Atan2 => format!("kiln_atan2_f32({a}, {b})"),
    };
    if boolean {
        (r, DType::Bool)
    } else {
        (finish(r, c), c)
    }
}

/// `x ** s` for a constant exponent: PyTorch's special forms, products
/// rounded to the opmath dtype.
fn pow_const(x: &str, s: kiln_ir::Scalar, c: DType, d: DType) -> String {
    let m = c.opmath();
    let mul = |p: &str, q: &str| binary(BinaryOp::Mul, p, q, m).0;
    match Op::pow_scalar_form(s, c.is_floating_point()) {
        PowForm::Identity => convert_expr(x, c, d),
        PowForm::One => convert_expr(&literal(Elem::I(1), c), c, d),
        PowForm::Square => convert_expr(&mul(x, x), m, d),
        PowForm::Cube => convert_expr(&mul(&mul(x, x), x), m, d),
        PowForm::Sqrt => convert_expr(&unary(UnaryOp::Sqrt, x, c).0, c, d),
        PowForm::Rsqrt => convert_expr(&unary(UnaryOp::Rsqrt, x, c).0, c, d),
        PowForm::Reciprocal => convert_expr(&unary(UnaryOp::Reciprocal, x, c).0, c, d),
        // The square stays at opmath precision, as PyTorch's kernel keeps it.
        PowForm::ReciprocalSquare => {
            convert_expr(&unary(UnaryOp::Reciprocal, &mul(x, x), c).0, c, d)
        }
        PowForm::General => {
            let e = literal(Elem::from_scalar(s), c);
            let (r, produced) = binary(BinaryOp::Pow, x, &e, c);
            convert_expr(&r, produced, d)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_bounds_come_from_iinfo() {
        let bound = |d: DType, greatest: bool| {
            let fold = if greatest { Fold::Min } else { Fold::Max };
            acc_type(fold, d).identity
        };
        assert_eq!(
            bound(DType::I8, false),
            "((long long)(18446744073709551488ULL))"
        );
        assert_eq!(
            bound(DType::I64, false),
            "((long long)(9223372036854775808ULL))"
        );
        assert_eq!(bound(DType::I32, true), "((long long)(2147483647ULL))");
        assert_eq!(bound(DType::U32, true), "(4294967295ULL)");
        assert_eq!(bound(DType::U64, true), "(18446744073709551615ULL)");
        assert_eq!(bound(DType::U8, false), "(0ULL)");
    }
}
