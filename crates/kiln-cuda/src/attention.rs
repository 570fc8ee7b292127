//! `scaled_dot_product_attention` as one generated CUDA kernel per plan
//! step, flash-attention style: the plan's attention steps (which
//! decomposition keeps for this backend, see [`fused`]) run on the GPU
//! instead of the interpreter's expansion (matmul, mask, softmax, matmul),
//! which stays the oracle they are tested against.
//!
//! A block takes a tile of `BQ` queries of one batch item and head, keeps
//! them in shared memory and streams the keys and values past them `BK` at
//! a time. Its threads form groups of `G` lanes of one warp; each group
//! owns `RQ` query rows and holds, in registers, their scores against the
//! key tile (each lane `BK / G` keys: `Q·Kᵀ`, then the scale, one rounding
//! each as the reference's `mul` after its matmul, then the causal mask
//! and `attn_mask`), their online softmax's running maximum `m` and
//! denominator `l` (a larger maximum rescales what was accumulated by
//! e^(m_old − m_new); the group's maximum and sum by warp shuffles), and
//! their accumulator of `P · V` (each lane a run of value columns),
//! divided by `l` once at the end. Only the weights `P` pass through
//! shared memory, within the group's warp. The L×S score matrix is never
//! in memory; with `is_causal`, key tiles wholly above the diagonal are
//! not computed.
//!
//! (The first version kept the scores and the accumulator in shared memory
//! and ran the softmax on one thread per query: on an H200, causal
//! attention over 12 heads of 4096×64 took 4.5 ms, 0.25× PyTorch eager.)
//!
//! Shapes, strides and offsets are the plan's, written into the kernel as
//! constants (as every generated kernel's are); the tiles are the largest
//! whose arrays fit in [`SHARED_BYTES`] of static shared memory and whose
//! accumulators fit in registers ([`Tiling`]; no more queries than L
//! needs), and attention whose head dims leave no tiling is expanded
//! instead. Semantics follow the reference and the CPU's fused step
//! (`kiln_runtime::attention`): a query the masks leave no key gives zeros
//! (PyTorch's `_safe_softmax`; without masks, scores all −inf give NaN as
//! softmax's 0/0), NaN scores make their query's row NaN, a value that
//! is not finite makes its column NaN for every query that gives its key
//! weight 0 (the reference's `P · V` multiplies it by 0), and
//! f32's e^x is kiln-math's algorithm (`kiln_exp_f32`). Results differ from
//! the reference by summation order and by when the division happens.

use std::fmt::Write;

use kiln_ir::graph::{Func, Inst};
use kiln_ir::view::Geometry;
use kiln_ir::{DType, F64, Op};
use kiln_passes::plan::{Step, TensorView};

use crate::codegen::LaunchShape;
use crate::steps::StepKernel;

/// The static shared memory a block may use (CUDA's limit without opting
/// in to more).
pub const SHARED_BYTES: usize = 48 * 1024;

/// The most queries a block takes.
const MAX_QUERIES: usize = 64;

/// The most keys a block takes at a time.
const MAX_KEYS: usize = 32;

/// The most lanes that share a query row.
const MAX_GROUP: usize = 16;

/// The most query rows a lane holds.
const MAX_ROWS: usize = 4;

/// The most registers a lane's accumulators take (a `double` takes two):
/// f32 heads up to 512 wide fuse, f64 up to 256; wider ones expand.
const MAX_ACCUMULATORS: usize = 64;

/// Blocks enough to keep a GPU busy (an H100's or H200's 132
/// multiprocessors): fewer queries a block where the batch items and
/// heads are few (a GPT-2 block's 12 heads of 128 tokens: 96 blocks of 16
/// queries, not 24 of 64).
const MIN_BLOCKS: i64 = 132;

/// Whether the CUDA backend runs this instruction as one fused kernel: a
/// `scaled_dot_product_attention` in f32 or f64 on query, key and value of
/// rank ≥ 2, with a bool or same-dtype mask, whose head dims are not empty
/// and leave a [`Tiling`]. Decomposition keeps these for this backend; the
/// others expand to matmul and softmax kernels.
pub fn fused(func: &Func, inst: &Inst) -> bool {
    if !matches!(inst.op, Op::ScaledDotProductAttention { .. }) || inst.results.len() != 1 {
        return false;
    }
    let dtype = func.ty(inst.result()).dtype;
    if !matches!(dtype, DType::F32 | DType::F64) {
        return false;
    }
    let operand = |i: usize| inst.operands.get(i).and_then(|o| o.value());
    let (Some(q), Some(k), Some(v)) = (operand(0), operand(1), operand(2)) else {
        return false;
    };
    if [q, k, v].iter().any(|x| func.ty(*x).rank() < 2) {
        return false;
    }
    if let Some(mask) = operand(3) {
        let m = func.ty(mask).dtype;
        if m != DType::Bool && m != dtype {
            return false;
        }
    }
    let dim = |x: kiln_ir::ValueId, back: usize| {
        let shape = &func.ty(x).shape;
        shape[shape.len() - back]
    };
    Tiling::choose(
        dim(q, 1),
        dim(v, 1),
        dtype.itemsize(),
        dim(q, 2),
        dim(k, 2),
        1,
    )
    .is_some()
}

/// How a block divides its work: `bq` queries, `bk` keys at a time; lanes
/// in groups of `g` (a power of two, within one warp), each group `rq`
/// query rows, each lane `bk / g` key columns of their scores and a run of
/// [`Tiling::columns`] value columns of their accumulator. Shared memory
/// is read `w` elements (16 bytes) at a time: the queries and the weights
/// `P` are kept transposed (a lane's rows side by side), the keys and the
/// values by rows, each padded with zeros to whole vectors (a zero adds
/// nothing to a score, which starts at +0.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tiling {
    bq: usize,
    bk: usize,
    rq: usize,
    g: usize,
    /// Elements per 16-byte vector.
    w: usize,
}

impl Tiling {
    /// The tiling for head dims `e` (query and key) and `ev` (value) of
    /// elements of `size` bytes, `queries` queries and `keys` keys of
    /// `items` batch items and heads (tiles no larger than they need, and
    /// small enough for [`MIN_BLOCKS`] blocks where 16 queries a block
    /// allow): the one of most scores per key tile (then of most queries)
    /// whose shared arrays fit in [`SHARED_BYTES`] and whose accumulators
    /// in [`MAX_ACCUMULATORS`] registers a lane.
    fn choose(e: i64, ev: i64, size: usize, queries: i64, keys: i64, items: i64) -> Option<Tiling> {
        let (e, ev) = (usize::try_from(e).ok()?, usize::try_from(ev).ok()?);
        if e == 0 || ev == 0 || size == 0 || size > 16 {
            // Empty heads: C has no arrays of zero elements (the expansion
            // computes these).
            return None;
        }
        let most = |n: i64, top: usize| (n.max(1) as usize).next_power_of_two().min(top);
        let mut top_bq = most(queries, MAX_QUERIES);
        let blocks = |bq: usize| {
            items
                .max(1)
                .saturating_mul((queries.max(1) + bq as i64 - 1) / bq as i64)
        };
        while top_bq > 16 && blocks(top_bq) < MIN_BLOCKS {
            top_bq /= 2;
        }
        let powers = |top: usize| (0..=top.trailing_zeros()).rev().map(|p| 1usize << p);
        let mut best: Option<Tiling> = None;
        for bq in powers(top_bq) {
            for bk in powers(most(keys, MAX_KEYS)) {
                let t = Tiling {
                    bq,
                    bk,
                    rq: bq.min(MAX_ROWS),
                    g: bk.min(MAX_GROUP),
                    w: 16 / size,
                };
                let fits = t.shared_elements(e, ev).checked_mul(size)? <= SHARED_BYTES
                    && t.rq * t.columns(ev) * size.div_ceil(4) <= MAX_ACCUMULATORS;
                let better = best.is_none_or(|b| bq * bk > b.bq * b.bk);
                if fits && better {
                    best = Some(t);
                }
            }
        }
        best
    }

    /// Threads per block: a group of `g` lanes per `rq` query rows.
    fn threads(&self) -> usize {
        self.bq / self.rq * self.g
    }

    /// Key columns of the scores a lane holds.
    fn keys(&self) -> usize {
        self.bk / self.g
    }

    /// Value columns of the accumulator a lane holds: a run of whole
    /// vectors.
    fn columns(&self, ev: usize) -> usize {
        ev.div_ceil(self.g).next_multiple_of(self.w)
    }

    /// `e` padded to whole vectors.
    fn padded(&self, e: usize) -> usize {
        e.next_multiple_of(self.w)
    }

    /// The length of a row of the transposed queries and weights: whole
    /// vectors, a lane's last rows' vector inside, and where there are
    /// several groups a vector more, so that lanes storing one column of
    /// different rows hit different banks.
    fn row(&self) -> usize {
        if self.bq <= self.w {
            self.w
        } else {
            self.bq.next_multiple_of(self.w) + self.w
        }
    }

    /// Elements of shared memory a block uses: the queries (transposed),
    /// the keys (rows of `e` padded by a vector more, for the banks as
    /// [`Tiling::row`]), the values, the weights `P` (transposed) and each
    /// query's denominator at the end.
    fn shared_elements(&self, e: usize, ev: usize) -> usize {
        let e = self.padded(e);
        e * self.row()
            + self.bk * (e + self.w)
            + self.bk * self.g * self.columns(ev)
            + self.bk * self.row()
            + self.bq
    }
}

/// The operands of one attention step, as views.
struct Views<'a> {
    q: &'a TensorView,
    k: &'a TensorView,
    v: &'a TensorView,
    mask: Option<&'a TensorView>,
    out: &'a TensorView,
    /// Argument number of each input (the step's views in order; the
    /// result is the last argument).
    args: [usize; 4],
    /// Buffer arguments in all.
    count: usize,
}

/// The kernel of plan step `index` when it is an attention step this
/// backend fuses ([`fused`]).
pub(crate) fn kernel(index: usize, step: &Step) -> Option<StepKernel> {
    let (func, inst, inputs, outputs) = step.lone_inst()?;
    if !fused(func, inst) || outputs.len() != 1 {
        return None;
    }
    let Op::ScaledDotProductAttention {
        is_causal, scale, ..
    } = &inst.op
    else {
        return None;
    };
    let param = |i: usize| crate::steps::input_of(func, inst, i);
    let (q, k, v) = (param(0)?, param(1)?, param(2)?);
    let mask = param(3);
    let views = Views {
        q: &inputs[q],
        k: &inputs[k],
        v: &inputs[v],
        mask: mask.map(|m| &inputs[m]),
        out: &outputs[0],
        args: [q, k, v, mask.unwrap_or(0)],
        count: inputs.len() + 1,
    };
    let name = format!("kiln_attention_s{index}");
    let dtype = views.out.dtype;
    let e = *views.q.geometry.shape.last()?;
    let scale = scale.map_or(1.0 / (e as f64).sqrt(), |F64(s)| s);
    let (source, shape) = source(&name, &views, dtype, *is_causal, scale)?;
    Some(StepKernel {
        step: index,
        name,
        source,
        shape,
        args: inputs.len() + 1,
        tail: false,
    })
}

/// The matrix geometry of one operand: the element offset of its first
/// element for batch item 0, its row and column strides (dims of size 1
/// broadcast: stride 0) and its leading dims.
struct Matrix<'a> {
    g: &'a Geometry,
    rows: i64,
    cols: i64,
}

fn matrix(g: &Geometry) -> Matrix<'_> {
    let r = g.rank();
    let stride = |d: usize| if g.shape[d] == 1 { 0 } else { g.strides[d] };
    Matrix {
        g,
        rows: if r >= 2 { stride(r - 2) } else { 0 },
        cols: if r >= 1 { stride(r - 1) } else { 0 },
    }
}

/// A C literal of `x` in the kernel's type, exactly (by its bits).
fn literal(x: f64, dtype: DType) -> String {
    crate::steps::literal(x, dtype == DType::F64)
}

fn source(
    name: &str,
    x: &Views,
    dtype: DType,
    causal: bool,
    scale: f64,
) -> Option<(String, LaunchShape)> {
    let out = &x.out.geometry;
    let r = out.rank();
    if r < 2 {
        return None;
    }
    let batch = &out.shape[..r - 2];
    let (l, ev) = (out.shape[r - 2], out.shape[r - 1]);
    let kg = &x.k.geometry;
    let s = kg.shape[kg.rank() - 2];
    let e = *x.q.geometry.shape.last()?;
    // (Empty heads never get here: `Tiling::choose` refuses them.)
    let items: i64 = batch.iter().product();
    let tiling = Tiling::choose(e, ev, dtype.itemsize(), l, s, items)?;
    let Tiling { bq, bk, rq, g, w } = tiling;
    let (threads, rk, nc) = (tiling.threads(), tiling.keys(), tiling.columns(ev as usize));
    // Padded head dims, the transposed arrays' rows, and the vectors a
    // lane's rows take.
    let (ep, row, rv) = (tiling.padded(e as usize), tiling.row(), rq.div_ceil(w));
    let (bq, bk) = (bq as i64, bk as i64);
    let tiles = (l + bq - 1) / bq;
    let blocks = items.checked_mul(tiles)?;
    if blocks > i64::from(i32::MAX) {
        // Past CUDA's grid limit: the host runs the step (as any step
        // without a kernel here).
        return None;
    }
    let shape = LaunchShape {
        blocks: u32::try_from(blocks).ok()?,
        threads: u32::try_from(threads).ok()?,
    };
    let t = if dtype == DType::F64 {
        "double"
    } else {
        "float"
    };
    let exp = if dtype == DType::F64 {
        "exp"
    } else {
        "kiln_exp_f32"
    };
    // The products are fused multiply-adds, one instruction each (NVRTC
    // runs without contraction, `crate::nvrtc`, so a product and a sum
    // would be two: on an H200 they were 60% of the kernel's instructions).
    // The results differ from the reference's by rounding and summation
    // order either way.
    let fma = if dtype == DType::F64 { "fma" } else { "fmaf" };
    let (q, k, v, o) = (
        matrix(&x.q.geometry),
        matrix(kg),
        matrix(&x.v.geometry),
        matrix(out),
    );
    let m = x.mask.map(|m| matrix(&m.geometry));
    let mask_type = x.mask.map(|m| {
        if m.dtype == DType::Bool {
            "unsigned char"
        } else {
            t
        }
    });

    let mut c = String::new();
    let mut line = |text: String| {
        c.push_str(&text);
        c.push('\n');
    };
    let [qa, ka, va, ma] = x.args;
    let params: Vec<String> = (0..x.count)
        .map(|i| format!("unsigned char* b{i}"))
        .collect();
    let ninf = literal(f64::NEG_INFINITY, dtype);
    line(format!(
        "// scaled_dot_product_attention: {tiles} tile(s) of {bq} queries x {items} batch items, \
         {bk} keys at a time, {threads} threads in groups of {g}, \
         L={l} S={s} E={e} Ev={ev}{}{}",
        if causal { ", causal" } else { "" },
        if x.mask.is_some() { ", attn_mask" } else { "" },
    ));
    line(format!(
        "extern \"C\" __global__ void __launch_bounds__({threads}) {name}({}, int* kiln_status) {{",
        params.join(", ")
    ));
    line(format!("  const {t}* q = (const {t}*)b{qa};"));
    line(format!("  const {t}* k = (const {t}*)b{ka};"));
    line(format!("  const {t}* v = (const {t}*)b{va};"));
    if let Some(mt) = mask_type {
        line(format!("  const {mt}* mask = (const {mt}*)b{ma};"));
    }
    line(format!("  {t}* out = ({t}*)b{};", params.len() - 1));
    line(format!("  __shared__ __align__(16) {t} qt[{ep}][{row}];"));
    line(format!(
        "  __shared__ __align__(16) {t} ks[{bk}][{}];",
        ep + w
    ));
    line(format!(
        "  __shared__ __align__(16) {t} vs[{bk}][{}];",
        g * nc
    ));
    line(format!("  __shared__ __align__(16) {t} pt[{bk}][{row}];"));
    line(format!("  __shared__ {t} sums[{bq}];"));
    // Keys a query's weights leave out are still in the reference's
    // `P · V`, with weight 0: a value there that is not finite makes the
    // query's result NaN in that column (0 · ±inf, 0 · NaN). The loop
    // skips such keys (tiles above the causal diagonal, every key of a
    // query the masks leave none), so it needs to know, per value column,
    // whether any value is not finite (`bad_any`: read only for a query
    // without keys) and whether one is at a key past the tile's last
    // (`bad_tail`).
    let hides = causal || x.mask.is_some();
    if hides {
        line(format!(
            "  __shared__ unsigned char bad_any[{ev}], bad_tail[{ev}];"
        ));
    }
    line("  const int tid = threadIdx.x, lane = tid % 32;".into());
    // This lane's group (query rows `row0 + a`, a < rq) and its place in
    // it (key columns `part + g·b`, value columns `part·nc + n`).
    line(format!(
        "  const int row0 = tid / {g} * {rq}, part = tid % {g};"
    ));
    // The lanes a shuffle names: the block's, where it is less than a warp.
    let lanes = if threads >= 32 {
        "0xffffffffu".to_string()
    } else {
        format!("0x{:x}u", (1u64 << threads) - 1)
    };
    // The last query tiles first: with `is_causal` they see the most keys,
    // and blocks that start late should be short ones.
    line(format!(
        "  const long long q0 = (long long)({} - blockIdx.x % {tiles}) * {bq};",
        tiles - 1
    ));
    line(format!("  long long rest = blockIdx.x / {tiles};"));
    // Each operand's first element for this batch item: the output's batch
    // index, right-aligned against each operand's leading dims; a dim of
    // size 1 broadcasts, a smaller one is a grouped-query head dim (one
    // key/value head per `want / size` query heads), as inference allows.
    let operands: Vec<(&str, &Geometry)> =
        [("q_at", q.g), ("k_at", k.g), ("v_at", v.g), ("o_at", o.g)]
            .into_iter()
            .chain(m.as_ref().map(|m| ("m_at", m.g)))
            .collect();
    for (var, g) in &operands {
        line(format!("  long long {var} = {};", g.offset));
    }
    for d in (0..batch.len()).rev() {
        let want = batch[d];
        if want == 1 {
            continue;
        }
        let mut terms = String::new();
        for (var, g) in &operands {
            let own = g.rank().saturating_sub(2);
            let Some(gd) = (d + own).checked_sub(batch.len()) else {
                continue;
            };
            let (size, stride) = (g.shape[gd], g.strides[gd]);
            if size == 1 || stride == 0 {
                continue;
            }
            if size == want {
                write!(terms, " {var} += i * {stride}LL;").ok()?;
            } else {
                write!(
                    terms,
                    " {var} += (i / {}) * {stride}LL;",
                    want / size.max(1)
                )
                .ok()?;
            }
        }
        line(format!(
            "  {{ const long long i = rest % {want}; rest /= {want};{terms} }}"
        ));
    }
    line(format!(
        "  const int rows = (int)({l} - q0 < {bq} ? {l} - q0 : {bq});"
    ));
    // A tile of `count` rows × `width` of an operand into shared memory
    // (by rows, or transposed), zeros past them up to `tile_rows` ×
    // `padded`: the queries once, each key and value tile in the loop.
    let load = |line: &mut dyn FnMut(String),
                indent: &str,
                (tile, transposed): (&str, bool),
                (tile_rows, padded): (i64, usize),
                src: (&str, &str),
                width: i64,
                (first, count): (&str, &str),
                m: &Matrix| {
        let (array, at) = src;
        line(format!(
            "{indent}for (int x = tid; x < {}; x += {threads}) {{",
            tile_rows * padded as i64
        ));
        line(format!(
            "{indent}  const int j = x / {padded}, d = x % {padded};"
        ));
        let place = if transposed { "[d][j]" } else { "[j][d]" };
        line(format!(
            "{indent}  {tile}{place} = j < {count} && d < {width} ? {array}[{at} + ({first} + j) * {}LL + d * {}LL] : ({t})0;",
            m.rows, m.cols
        ));
        line(format!("{indent}}}"));
    };
    load(
        &mut line,
        "  ",
        ("qt", true),
        (bq, ep),
        ("q", "q_at"),
        e,
        ("q0", "rows"),
        &q,
    );
    line(format!("  {t} acc[{rq}][{nc}], top[{rq}], total[{rq}];"));
    line(format!("  for (int a = 0; a < {rq}; a++) {{"));
    line(format!("    top[a] = {ninf}; total[a] = ({t})0;"));
    line(format!(
        "    for (int n = 0; n < {nc}; n++) acc[a][n] = ({t})0;"
    ));
    line("  }".into());
    // With is_causal, query i sees keys j <= i: the tile's last query
    // bounds the keys.
    let end = if causal {
        format!("(q0 + rows < {s} ? q0 + rows : {s})")
    } else {
        format!("{s}LL")
    };
    line(format!("  const long long keys = {end};"));
    line(format!(
        "  for (long long k0 = 0; k0 < keys; k0 += {bk}) {{"
    ));
    line(format!(
        "    const int cols = (int)(keys - k0 < {bk} ? keys - k0 : {bk});"
    ));
    line("    __syncthreads();".into());
    load(
        &mut line,
        "    ",
        ("ks", false),
        (bk, ep),
        ("k", "k_at"),
        e,
        ("k0", "cols"),
        &k,
    );
    load(
        &mut line,
        "    ",
        ("vs", false),
        (bk, g * nc),
        ("v", "v_at"),
        ev,
        ("k0", "cols"),
        &v,
    );
    line("    __syncthreads();".into());
    // The group's scores, each lane its keys' (the products summed in d's
    // order, as the reference's matmul, then scaled), `w` dims at a time:
    // a vector of the lane's rows per dim, a vector of dims per key.
    line(format!("    {t} sc[{rq}][{rk}];"));
    line(format!(
        "    for (int a = 0; a < {rq}; a++) for (int b = 0; b < {rk}; b++) sc[a][b] = ({t})0;"
    ));
    line(format!("    for (int d = 0; d < {ep}; d += {w}) {{"));
    line(format!("      {t} qd[{w}][{}], kd[{rk}][{w}];", rv * w));
    line(format!(
        "      for (int u = 0; u < {w}; u++) for (int r = 0; r < {rv}; r++) kiln_load16(&qt[d + u][row0 + r * {w}], &qd[u][r * {w}]);"
    ));
    line(format!(
        "      for (int b = 0; b < {rk}; b++) kiln_load16(&ks[part + {g} * b][d], kd[b]);"
    ));
    line(format!(
        "      for (int u = 0; u < {w}; u++) for (int b = 0; b < {rk}; b++) for (int a = 0; a < {rq}; a++) sc[a][b] = {fma}(qd[u][a], kd[b][u], sc[a][b]);"
    ));
    line("    }".into());
    line(format!("    for (int a = 0; a < {rq}; a++) {{"));
    line("      const int i = row0 + a;".into());
    line(format!("      for (int b = 0; b < {rk}; b++) {{"));
    line(format!("        const int j = part + {g} * b;"));
    line(format!(
        "        {t} score = sc[a][b] * {};",
        literal(scale, dtype)
    ));
    line(format!("        if (j >= cols) score = {ninf};"));
    if causal {
        line(format!("        else if (k0 + j > q0 + i) score = {ninf};"));
    }
    if let (Some(m), Some(mv)) = (&m, x.mask) {
        line("        else if (i < rows) {".into());
        line(format!(
            "          const {} mk = mask[m_at + (q0 + i) * {}LL + (k0 + j) * {}LL];",
            mask_type.unwrap_or(t),
            m.rows,
            m.cols
        ));
        if mv.dtype == DType::Bool {
            line(format!("          if (!mk) score = {ninf};"));
        } else {
            line("          score = score + mk;".into());
        }
        line("        }".into());
    }
    line("        sc[a][b] = score;".into());
    line("      }".into());
    // The online softmax's update, every lane of the group alike: the
    // group's maximum and sum by shuffles across it (an xor butterfly, so
    // every lane gets the same bits).
    line(format!("      {t} high = top[a];"));
    line(format!(
        "      for (int b = 0; b < {rk}; b++) high = kiln_max(high, sc[a][b]);"
    ));
    line(format!(
        "      for (int off = {}; off > 0; off /= 2) high = kiln_max(high, __shfl_sync({lanes}, high, lane ^ off));",
        g / 2
    ));
    line(format!("      const bool none = high == {ninf};"));
    line(format!(
        "      const {t} alpha = none ? ({t})1 : {exp}(top[a] - high);"
    ));
    line(format!("      {t} sum = ({t})0;"));
    line(format!("      for (int b = 0; b < {rk}; b++) {{"));
    line(format!(
        "        const {t} p = none ? ({t})0 : {exp}(sc[a][b] - high);"
    ));
    line(format!("        pt[part + {g} * b][i] = p;"));
    line("        sum += p;".into());
    line("      }".into());
    line(format!(
        "      for (int off = {}; off > 0; off /= 2) sum += __shfl_sync({lanes}, sum, lane ^ off);",
        g / 2
    ));
    line("      total[a] = total[a] * alpha + sum;".into());
    line("      top[a] = high;".into());
    line(format!(
        "      for (int n = 0; n < {nc}; n++) acc[a][n] *= alpha;"
    ));
    line("    }".into());
    // The group's weights were written by its own lanes, in its warp.
    line(format!("    __syncwarp({lanes});"));
    line("    for (int j = 0; j < cols; j++) {".into());
    line(format!("      {t} pj[{}], vc[{nc}];", rv * w));
    line(format!(
        "      for (int r = 0; r < {rv}; r++) kiln_load16(&pt[j][row0 + r * {w}], &pj[r * {w}]);"
    ));
    line(format!(
        "      for (int n = 0; n < {nc}; n += {w}) kiln_load16(&vs[j][part * {nc} + n], &vc[n]);"
    ));
    line(format!(
        "      for (int n = 0; n < {nc}; n++) for (int a = 0; a < {rq}; a++) acc[a][n] = {fma}(pj[a], vc[n], acc[a][n]);"
    ));
    line("    }".into());
    line("  }".into());
    line(format!(
        "  if (part == 0) for (int a = 0; a < {rq}; a++) sums[row0 + a] = total[a];"
    ));
    line("  __syncthreads();".into());
    if hides {
        // Only the keys some query of the tile skipped: all of them if a
        // query has none (its row of weights is all 0), else those past
        // the tile's last (causal).
        line("  bool empty = false;".into());
        line("  for (int i = 0; i < rows; i++) empty |= sums[i] == 0;".into());
        line("  const long long skipped = empty ? 0 : keys;".into());
        line(format!(
            "  for (int c = tid; c < {ev}; c += {threads}) {{ bad_any[c] = 0; bad_tail[c] = 0; }}"
        ));
        line("  __syncthreads();".into());
        // Every lane of the block, along rows (as the values lie, where
        // they are contiguous); a flag's writers all write 1.
        line(format!(
            "  for (long long x = tid; x < ({s} - skipped) * {ev}; x += {threads}) {{"
        ));
        line(format!(
            "    const long long j = skipped + x / {ev}; const int c = (int)(x % {ev});"
        ));
        line(format!(
            "    if (!isfinite(v[v_at + j * {}LL + c * {}LL])) {{ bad_any[c] = 1; if (j >= keys) bad_tail[c] = 1; }}",
            v.rows, v.cols
        ));
        line("  }".into());
        line("  __syncthreads();".into());
    }
    line(format!("  for (int a = 0; a < {rq}; a++) {{"));
    line("    const int i = row0 + a;".into());
    line("    if (i >= rows) break;".into());
    line(format!("    for (int n = 0; n < {nc}; n++) {{"));
    line(format!("      const int c = part * {nc} + n;"));
    if g * nc != ev as usize {
        line(format!("      if (c >= {ev}) break;"));
    }
    // A query the masks leave no key (or any, without keys) attends to
    // nothing (PyTorch's `_safe_softmax`), NaN where a value is not finite
    // (see `bad_any`); unmasked scores all −inf are softmax's 0/0 (NaN), as
    // the reference's.
    let nan = literal(f64::NAN, dtype);
    let at = format!("out[o_at + (q0 + i) * {}LL + c * {}LL]", o.rows, o.cols);
    if hides {
        line(format!(
            "      {at} = total[a] == ({t})0 ? (bad_any[c] ? {nan} : ({t})0) \
             : bad_tail[c] ? {nan} : acc[a][n] / total[a];"
        ));
    } else if s == 0 {
        line(format!(
            "      {at} = total[a] == ({t})0 ? ({t})0 : acc[a][n] / total[a];"
        ));
    } else {
        line(format!("      {at} = acc[a][n] / total[a];"));
    }
    line("    }".into());
    line("  }".into());
    line("}".into());
    Some((c, shape))
}

#[cfg(test)]
mod tests {
    use super::{SHARED_BYTES, Tiling};

    #[test]
    fn tilings_are_the_largest_that_fit() {
        // GPT-2's heads (64 wide, f32), 12 of 4096 tokens: 64 queries and
        // 32 keys, 256 threads, each lane 4 rows × 2 keys of scores and
        // 4 × 4 accumulators, 42 kB of shared memory.
        let t = Tiling::choose(64, 64, 4, 4096, 4096, 12).unwrap();
        assert_eq!((t.bq, t.bk, t.rq, t.g, t.w), (64, 32, 4, 16, 4));
        assert_eq!((t.threads(), t.keys(), t.columns(64)), (256, 2, 4));
        assert!(t.shared_elements(64, 64) * 4 <= SHARED_BYTES);
        // Of 128 tokens: 16 queries a block, so that 12 heads make 96
        // blocks (64 would make 24).
        let t = Tiling::choose(64, 64, 4, 128, 128, 12).unwrap();
        assert_eq!((t.bq, t.bk, t.threads()), (16, 32, 64));
        // Llama's (128 wide): 64 queries and 8 keys (64 × 32 would need
        // 75 kB); as many scores per tile as 32 × 16, but each key and
        // value tile serves more queries.
        let t = Tiling::choose(128, 128, 4, 4096, 4096, 12).unwrap();
        assert_eq!((t.bq, t.bk, t.g, t.threads()), (64, 8, 8, 128));
        // One query (a decode step) and few keys: tiles no larger.
        let t = Tiling::choose(64, 64, 4, 1, 6, 1).unwrap();
        assert_eq!((t.bq, t.bk, t.rq, t.g, t.threads()), (1, 8, 1, 8, 8));
        // f32 heads of 512: one query and 8 keys a block, each lane 64
        // value columns; of 513, none (their accumulators would take more
        // than 64 registers a lane, or their tiles more than 48 kB).
        let t = Tiling::choose(512, 512, 4, 64, 64, 1).unwrap();
        assert_eq!((t.bq, t.bk, t.g, t.columns(512)), (1, 8, 8, 64));
        assert_eq!(Tiling::choose(513, 513, 4, 64, 64, 1), None);
        // f64: up to 256; and empty heads have none.
        assert!(Tiling::choose(256, 256, 8, 64, 64, 1).is_some());
        assert_eq!(Tiling::choose(257, 257, 8, 64, 64, 1), None);
        assert_eq!(Tiling::choose(0, 64, 4, 8, 8, 1), None);
    }
}
