//! `scaled_dot_product_attention` as one generated CUDA kernel per plan
//! step, flash-attention style: the plan's attention steps (which
//! decomposition keeps for this backend, see [`fused`]) run on the GPU
//! instead of the interpreter's expansion (matmul, mask, softmax, matmul),
//! which stays the oracle they are tested against.
//!
//! A block takes a tile of `B` queries of one batch item and head, keeps
//! them in shared memory and streams the keys and values past them `B` at
//! a time: the tile's scores (`Q·Kᵀ`, then the scale, one rounding each as
//! the reference's `mul` after its matmul), the causal mask and
//! `attn_mask`, an online softmax (each query keeps its running maximum
//! `m` and denominator `l`; a larger maximum rescales what was accumulated
//! by e^(m_old − m_new)), and the tile's share of `P · V` added to an
//! accumulator, divided by `l` once at the end. The L×S score matrix is
//! never in memory; with `is_causal`, key tiles wholly above the diagonal
//! are not computed.
//!
//! Shapes, strides and offsets are the plan's, written into the kernel as
//! constants (as every generated kernel's are); `B` is the largest power
//! of two up to 32 whose tiles fit in [`SHARED_BYTES`] of static shared
//! memory (and no larger than L needs), and attention whose head dims
//! leave no tile size is expanded instead. Semantics follow the reference and the CPU's fused step
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

/// Threads per block.
const THREADS: u32 = 128;

/// The static shared memory a block may use (CUDA's limit without opting
/// in to more).
pub const SHARED_BYTES: usize = 48 * 1024;

/// The largest query (and key) tile.
const MAX_TILE: usize = 32;

/// Whether the CUDA backend runs this instruction as one fused kernel: a
/// `scaled_dot_product_attention` in f32 or f64 on query, key and value of
/// rank ≥ 2, with a bool or same-dtype mask, whose head dims are not empty
/// and fit a tile in shared memory. Decomposition keeps these for this backend; the others
/// expand to matmul and softmax kernels.
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
    let last = |x: kiln_ir::ValueId| func.ty(x).shape.last().copied().unwrap_or(1);
    tile(last(q), last(v), dtype.itemsize()).is_some()
}

/// The tile size for head dims `e` (query and key) and `ev` (value) of
/// elements of `size` bytes: the largest power of two up to [`MAX_TILE`]
/// whose shared arrays fit.
fn tile(e: i64, ev: i64, size: usize) -> Option<usize> {
    let (e, ev) = (usize::try_from(e).ok()?, usize::try_from(ev).ok()?);
    if e == 0 || ev == 0 {
        // Empty heads: C has no arrays of zero elements (the expansion
        // computes these).
        return None;
    }
    let mut b = MAX_TILE;
    while b >= 1 {
        if shared_elements(b, e, ev).checked_mul(size)? <= SHARED_BYTES {
            return Some(b);
        }
        b /= 2;
    }
    None
}

/// Elements of shared memory a block with tile `b` uses: the queries, the
/// keys (rows padded by one, so that a warp reading one column of
/// different keys hits different banks), the values, the scores, the
/// accumulator, and each query's `m`, `l` and rescale factor.
fn shared_elements(b: usize, e: usize, ev: usize) -> usize {
    b * e + b * (e + 1) + b * ev + b * (b + 1) + b * ev + 3 * b
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
    let param = |i: usize| -> Option<usize> {
        let v = inst.operands.get(i)?.value()?;
        func.params.iter().position(|p| *p == v)
    };
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
    // No larger than the queries need (short sequences, decode steps).
    let b = tile(e, ev, dtype.itemsize())?.min((l.max(1) as usize).next_power_of_two()) as i64;
    let items: i64 = batch.iter().product();
    let tiles = (l + b - 1) / b;
    // (Empty heads never get here: `tile` refuses them.)
    let blocks = items.checked_mul(tiles)?;
    if blocks > i64::from(i32::MAX) {
        // Past CUDA's grid limit: the host runs the step (as any step
        // without a kernel here).
        return None;
    }
    let shape = LaunchShape {
        blocks: u32::try_from(blocks).ok()?,
        threads: THREADS,
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
        "// scaled_dot_product_attention: {tiles} tile(s) of {b} queries x {items} batch items, \
         L={l} S={s} E={e} Ev={ev}{}{}",
        if causal { ", causal" } else { "" },
        if x.mask.is_some() { ", attn_mask" } else { "" },
    ));
    line(format!(
        "extern \"C\" __global__ void __launch_bounds__({THREADS}) {name}({}) {{",
        params.join(", ")
    ));
    line(format!("  const {t}* q = (const {t}*)b{qa};"));
    line(format!("  const {t}* k = (const {t}*)b{ka};"));
    line(format!("  const {t}* v = (const {t}*)b{va};"));
    if let Some(mt) = mask_type {
        line(format!("  const {mt}* mask = (const {mt}*)b{ma};"));
    }
    line(format!("  {t}* out = ({t}*)b{};", params.len() - 1));
    line(format!("  __shared__ {t} qs[{b}][{e}];"));
    line(format!("  __shared__ {t} ks[{b}][{}];", e + 1));
    line(format!("  __shared__ {t} vs[{b}][{ev}];"));
    line(format!("  __shared__ {t} ss[{b}][{}];", b + 1));
    line(format!("  __shared__ {t} os[{b}][{ev}];"));
    line(format!(
        "  __shared__ {t} row_max[{b}], row_sum[{b}], rescale[{b}];"
    ));
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
    line("  const int tid = threadIdx.x;".into());
    line(format!(
        "  const long long q0 = (long long)(blockIdx.x % {tiles}) * {b};"
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
        "  const int rows = (int)({l} - q0 < {b} ? {l} - q0 : {b});"
    ));
    // A tile of `b` rows × `width` of an operand into shared memory, zeros
    // past its `count` valid rows: the queries once, each key and value
    // tile in the loop.
    let load = |line: &mut dyn FnMut(String),
                indent: &str,
                tile: &str,
                src: (&str, &str),
                width: i64,
                (first, count): (&str, &str),
                m: &Matrix| {
        let (array, at) = src;
        line(format!(
            "{indent}for (int x = tid; x < {}; x += {THREADS}) {{",
            b * width
        ));
        line(format!(
            "{indent}  const int j = x / {width}, d = x % {width};"
        ));
        line(format!(
            "{indent}  {tile}[j][d] = j < {count} ? {array}[{at} + ({first} + j) * {}LL + d * {}LL] : ({t})0;",
            m.rows, m.cols
        ));
        line(format!("{indent}}}"));
    };
    load(&mut line, "  ", "qs", ("q", "q_at"), e, ("q0", "rows"), &q);
    line(format!(
        "  for (int x = tid; x < {}; x += {THREADS}) os[x / {ev}][x % {ev}] = ({t})0;",
        b * ev
    ));
    line(format!(
        "  if (tid < {b}) {{ row_max[tid] = {ninf}; row_sum[tid] = ({t})0; }}"
    ));
    // With is_causal, query i sees keys j <= i: the tile's last query
    // bounds the keys.
    let end = if causal {
        format!("(q0 + rows < {s} ? q0 + rows : {s})")
    } else {
        format!("{s}LL")
    };
    line(format!("  const long long keys = {end};"));
    line(format!("  for (long long k0 = 0; k0 < keys; k0 += {b}) {{"));
    line(format!(
        "    const int cols = (int)(keys - k0 < {b} ? keys - k0 : {b});"
    ));
    line("    __syncthreads();".into());
    load(
        &mut line,
        "    ",
        "ks",
        ("k", "k_at"),
        e,
        ("k0", "cols"),
        &k,
    );
    load(
        &mut line,
        "    ",
        "vs",
        ("v", "v_at"),
        ev,
        ("k0", "cols"),
        &v,
    );
    line("    __syncthreads();".into());
    line(format!(
        "    for (int x = tid; x < {}; x += {THREADS}) {{",
        b * b
    ));
    line(format!("      const int i = x / {b}, j = x % {b};"));
    line(format!("      {t} dot = ({t})0;"));
    line(format!(
        "      for (int d = 0; d < {e}; d++) dot += qs[i][d] * ks[j][d];"
    ));
    line(format!(
        "      {t} score = dot * {};",
        literal(scale, dtype)
    ));
    line(format!("      if (j >= cols) score = {ninf};"));
    if causal {
        line(format!("      else if (k0 + j > q0 + i) score = {ninf};"));
    }
    if let (Some(m), Some(mv)) = (&m, x.mask) {
        line("      else if (i < rows) {".into());
        line(format!(
            "        const {} mk = mask[m_at + (q0 + i) * {}LL + (k0 + j) * {}LL];",
            mask_type.unwrap_or(t),
            m.rows,
            m.cols
        ));
        if mv.dtype == DType::Bool {
            line(format!("        if (!mk) score = {ninf};"));
        } else {
            line("        score = score + mk;".into());
        }
        line("      }".into());
    }
    line("      ss[i][j] = score;".into());
    line("    }".into());
    line("    __syncthreads();".into());
    // One thread per query: the online softmax's update.
    line(format!("    if (tid < {b}) {{"));
    line(format!("      const {t} old = row_max[tid];"));
    line(format!("      {t} top = old;"));
    line("      for (int j = 0; j < cols; j++) top = kiln_max(top, ss[tid][j]);".into());
    line(format!("      const bool none = top == {ninf};"));
    line(format!(
        "      const {t} alpha = none ? ({t})1 : {exp}(old - top);"
    ));
    line(format!("      {t} sum = ({t})0;"));
    line("      for (int j = 0; j < cols; j++) {".into());
    line(format!(
        "        const {t} p = none ? ({t})0 : {exp}(ss[tid][j] - top);"
    ));
    line("        ss[tid][j] = p;".into());
    line("        sum += p;".into());
    line("      }".into());
    line("      row_sum[tid] = row_sum[tid] * alpha + sum;".into());
    line("      row_max[tid] = top;".into());
    line("      rescale[tid] = alpha;".into());
    line("    }".into());
    line("    __syncthreads();".into());
    line(format!(
        "    for (int x = tid; x < {}; x += {THREADS}) {{",
        b * ev
    ));
    line(format!("      const int i = x / {ev}, c = x % {ev};"));
    line(format!("      {t} acc = os[i][c] * rescale[i];"));
    line("      for (int j = 0; j < cols; j++) acc += ss[i][j] * vs[j][c];".into());
    line("      os[i][c] = acc;".into());
    line("    }".into());
    line("  }".into());
    if hides {
        // Only the keys some query of the tile skipped: all of them if a
        // query has none (its row of weights is all 0), else those past
        // the tile's last (causal). `row_sum` is final here (written
        // before the last barrier of the loop).
        line("  bool empty = false;".into());
        line("  for (int i = 0; i < rows; i++) empty |= row_sum[i] == 0;".into());
        line("  const long long skipped = empty ? 0 : keys;".into());
        line(format!("  for (int c = tid; c < {ev}; c += {THREADS}) {{"));
        line("    unsigned char any = 0, tail = 0;".into());
        line(format!("    for (long long j = skipped; j < {s}; j++) {{"));
        line(format!(
            "      if (!isfinite(v[v_at + j * {}LL + c * {}LL])) {{ any = 1; if (j >= keys) tail = 1; }}",
            v.rows, v.cols
        ));
        line("    }".into());
        line("    bad_any[c] = any; bad_tail[c] = tail;".into());
        line("  }".into());
    }
    line("  __syncthreads();".into());
    line(format!(
        "  for (int x = tid; x < rows * {ev}; x += {THREADS}) {{"
    ));
    line(format!("    const int i = x / {ev}, c = x % {ev};"));
    // A query the masks leave no key (or any, without keys) attends to
    // nothing (PyTorch's `_safe_softmax`), NaN where a value is not finite
    // (see `bad_any`); unmasked scores all −inf are softmax's 0/0 (NaN), as
    // the reference's.
    let nan = literal(f64::NAN, dtype);
    if hides {
        line(format!(
            "    out[o_at + (q0 + i) * {}LL + c * {}LL] = row_sum[i] == ({t})0 ? (bad_any[c] ? {nan} : ({t})0) \
             : bad_tail[c] ? {nan} : os[i][c] / row_sum[i];",
            o.rows, o.cols
        ));
    } else if s == 0 {
        line(format!(
            "    out[o_at + (q0 + i) * {}LL + c * {}LL] = row_sum[i] == ({t})0 ? ({t})0 : os[i][c] / row_sum[i];",
            o.rows, o.cols
        ));
    } else {
        line(format!(
            "    out[o_at + (q0 + i) * {}LL + c * {}LL] = os[i][c] / row_sum[i];",
            o.rows, o.cols
        ));
    }
    line("  }".into());
    line("}".into());
    Some((c, shape))
}
