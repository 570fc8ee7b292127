//! `convolution` (direct and transposed), pooling (`max_pool`, `avg_pool`,
//! the adaptive pools) and resampling (`upsample_*`: nearest, linear,
//! cubic) steps of f16, bf16, f32 and f64 as generated CUDA kernels, so
//! that a CNN's layers stay on the GPU instead of going to the host and
//! back.
//!
//! Each kernel is a grid-stride loop with one thread per output element,
//! the reference interpreter's loops (`kiln_runtime::interp::spatial`)
//! written out for that element, in the same order and in the same
//! arithmetic: products summed in double, one input channel's taps at a
//! time, then the bias, rounded once to the result's dtype (f16 and bf16
//! through f32, their opmath, as the reference). So the kernels give the
//! interpreter's bits: products of f32 (and narrower) values are exact in
//! double,
//! f64 products round as the interpreter's (NVRTC compiles without fused
//! multiply-adds, `crate::nvrtc`), and the sums run in its order; a
//! transposed convolution gathers, for
//! each output element, the input positions that scatter into it, in the
//! order the reference scatters them (input positions ascending, so each
//! kernel dim's taps descending). Shapes, strides and offsets are the
//! plan's, written in as constants, so any layout (contiguous,
//! channels_last, views) is read where it lies.
//!
//! A convolution with a tail (`kiln_passes::plan::Tail`: batch norm's
//! per-channel scale and shift, a residual add, ReLU) in f32 applies it to
//! each result as it stores it, into the tail's result, its views' buffers
//! after the step's ([`TailArgs`]); the plan's next kernel, which would
//! compute it, is then skipped. The same ops in the same order in f32, as
//! that kernel's (no contraction), so the same bits.
//!
//! These are direct kernels, correct and simple. On an H200 they beat
//! PyTorch eager on pooling, resampling and depthwise convolution, which
//! memory and launches bound, but a dense 3×3 convolution was 0.45× cuDNN
//! in NCHW and 0.10× in channels_last (BENCHMARKS.md, "CUDA on a GPU:
//! second measurement"), so dense 2-D convolutions with enough channels
//! are implicit-GEMM tiles instead ([`crate::implicit_gemm`]).

use std::fmt::Write;

use kiln_passes::plan::Tail;

use kiln_ir::DType;
use kiln_ir::spatial::{Conv, Pool, Resample, Sampling, Spatial, Window, conv_params, pool_params};
use kiln_ir::view::Geometry;
use kiln_passes::plan::{Step, TensorView};

use crate::codegen::{LaunchShape, mtype};
use crate::steps::{StepKernel, literal};

/// Threads per block.
const THREADS: u32 = 256;

/// At most this many blocks; the loop strides over the rest.
const MAX_BLOCKS: i64 = 1 << 16;

/// At most this many taps in a resampling kernel's tables (written into
/// its source).
const MAX_TABLE: usize = 1 << 16;

/// The kernel of plan step `index` when it is a convolution, a pool or a
/// resampling of floats.
pub(crate) fn kernel(index: usize, step: &Step) -> Option<StepKernel> {
    let (func, inst, inputs, outputs) = step.lone_inst()?;
    let spatial = kiln_ir::spatial::spatial(&inst.op)?;
    let param = |i: usize| crate::steps::input_of(func, inst, i);
    let x = &inputs[param(0)?];
    let out = outputs.first()?;
    if !matches!(
        out.dtype,
        DType::F16 | DType::BF16 | DType::F32 | DType::F64
    ) || x.dtype != out.dtype
    {
        return None;
    }
    let shape = grid(&out.geometry)?;
    let mut args = inputs.len() + outputs.len();
    // A convolution's tail in f32: its views' buffers after the results.
    let tail = match step {
        Step::Interpret {
            tail: Some(tail), ..
        } if out.dtype == DType::F32 && matches!(spatial, Spatial::Conv(_)) => {
            let first = args;
            args += tail.views().count();
            Some(TailArgs { tail, first })
        }
        _ => None,
    };
    let has_tail = tail.is_some();
    // Result `i` as positions (i64, or i32 where the plan narrowed them).
    let positions = |i: usize| {
        let p = outputs.get(i)?;
        matches!(p.dtype, DType::I64 | DType::I32).then_some((inputs.len() + i, p))
    };
    let name = format!("kiln_spatial_s{index}");
    let source = match spatial {
        Spatial::Conv(conv) => {
            let w = &inputs[param(1)?];
            let bias = match inst.operands.get(2).and_then(|o| o.value()) {
                Some(_) => Some((param(2)?, &inputs[param(2)?])),
                None => None,
            };
            if w.dtype != out.dtype || bias.is_some_and(|(_, b)| b.dtype != out.dtype) {
                return None;
            }
            let conv = conv_params(
                &conv,
                &x.geometry.shape,
                &w.geometry.shape,
                bias.map(|(_, b)| &b.geometry.shape[..]),
            )
            .ok()?;
            let views = ConvViews {
                x: (param(0)?, x),
                w: (param(1)?, w),
                bias,
                out: (inputs.len(), out),
                tail,
            };
            match crate::implicit_gemm::convolution(&name, &conv, &views, args) {
                Some((source, tiled)) => {
                    return Some(StepKernel {
                        step: index,
                        name,
                        source,
                        shape: tiled,
                        args,
                        tail: has_tail,
                    });
                }
                None => convolution(&name, &conv, &views, args),
            }
        }
        Spatial::Pool { pool, indices } => {
            let pool = pool_params(&pool, inst.op.name(), &x.geometry.shape).ok()?;
            let positions = if indices { Some(positions(1)?) } else { None };
            pooling(
                &name,
                &Windows::Sliding(&pool),
                (param(0)?, x),
                (inputs.len(), out),
                positions,
                args,
            )
        }
        Spatial::Adaptive(a) => {
            let positions = match outputs.get(1) {
                Some(_) => Some(positions(1)?),
                None => None,
            };
            let windows = Windows::Adaptive {
                dims: a.dims,
                max: a.max,
            };
            pooling(
                &name,
                &windows,
                (param(0)?, x),
                (inputs.len(), out),
                positions,
                args,
            )
        }
        Spatial::Resample(r) => resample(&name, &r, (param(0)?, x), (inputs.len(), out), args)?,
        _ => return None,
    };
    Some(StepKernel {
        step: index,
        name,
        source,
        shape,
        args,
        tail: has_tail,
    })
}

/// A convolution's views and their argument numbers.
pub(crate) struct ConvViews<'a> {
    pub(crate) x: (usize, &'a TensorView),
    pub(crate) w: (usize, &'a TensorView),
    pub(crate) bias: Option<(usize, &'a TensorView)>,
    pub(crate) out: (usize, &'a TensorView),
    /// Where the result goes through a tail instead.
    pub(crate) tail: Option<TailArgs<'a>>,
}

/// A convolution's f32 tail in a step kernel: its views are arguments
/// `first..`, in [`Tail::views`]' order.
pub(crate) struct TailArgs<'a> {
    pub(crate) tail: &'a Tail,
    pub(crate) first: usize,
}

impl TailArgs<'_> {
    /// The statement that takes `value` (the result rounded to f32)
    /// through the tail and stores it in the tail's result, at the element
    /// whose dim `d` index is `index(d)`: `relu?((y · scale + shift) +
    /// residual)`, each op rounded to f32 (no contraction: NVRTC's
    /// `--fmad=false`), ReLU as `x < 0 ? 0 : x`, as the tail's kernel.
    pub(crate) fn store(
        &self,
        indent: &str,
        value: &str,
        index: impl Fn(usize) -> String,
    ) -> String {
        let mut arg = self.first;
        let mut element = |v: &TensorView, mutable: bool| {
            let at = format!(
                "{}[{}]",
                pointer(arg, v, mutable),
                offset(&v.geometry, 0..v.geometry.rank(), &index)
            );
            arg += 1;
            at
        };
        let t = self.tail;
        let mut c = format!("{indent}{{\n{indent}  float v = {value};\n");
        if let Some(s) = &t.scale {
            let _ = writeln!(c, "{indent}  v = v * {};", element(s, false));
        }
        if let Some(s) = &t.shift {
            let _ = writeln!(c, "{indent}  v = v + {};", element(s, false));
        }
        if let Some(r) = &t.residual {
            let _ = writeln!(c, "{indent}  v = v + {};", element(r, false));
        }
        if t.relu {
            let _ = writeln!(c, "{indent}  v = v < 0.0f ? 0.0f : v;");
        }
        let _ = writeln!(c, "{indent}  {} = v;", element(&t.out, true));
        let _ = writeln!(c, "{indent}}}");
        c
    }
}

/// An element `e` of dtype `d` read as a double (exact).
pub(crate) fn load(d: DType, e: &str) -> String {
    match d {
        DType::F16 => format!("(double)kiln_h2f({e})"),
        DType::BF16 => format!("(double)kiln_bf2f({e})"),
        _ => format!("(double){e}"),
    }
}

/// A double `v` rounded to `d` as the reference rounds a result: once to
/// f32 or f64; f16 and bf16 through f32, their opmath (as PyTorch's).
pub(crate) fn rounded(d: DType, v: &str) -> String {
    match d {
        DType::F64 => format!("(double)({v})"),
        DType::F16 => format!("kiln_f2h((float)({v}))"),
        DType::BF16 => format!("kiln_f2bf((float)({v}))"),
        _ => format!("(float)({v})"),
    }
}

/// The launch shape of a grid-stride loop over `out`'s elements.
pub(crate) fn grid(out: &Geometry) -> Option<LaunchShape> {
    let total: i64 = out.shape.iter().product();
    Some(LaunchShape {
        blocks: u32::try_from(
            ((total + i64::from(THREADS) - 1) / i64::from(THREADS)).min(MAX_BLOCKS),
        )
        .ok()?,
        threads: THREADS,
    })
}

/// The start of a step's kernel: its signature (`args` buffers, then the
/// status word, [`crate::steps`]), and the grid-stride loop over the
/// output's elements with each dim's index (`i0`, `i1`, ...) taken apart
/// from the element number `e`.
pub(crate) fn open(c: &mut String, name: &str, args: usize, comment: &str, out: &Geometry) {
    let total: i64 = out.shape.iter().product();
    signature(c, name, args, THREADS, comment);
    let _ = writeln!(
        c,
        "  for (long long e = (long long)blockIdx.x * {THREADS} + threadIdx.x; e < {total}LL; e += (long long)gridDim.x * {THREADS}) {{"
    );
    let _ = writeln!(c, "    long long r = e;");
    let order = memory_order(out);
    for (k, &d) in order.iter().enumerate() {
        if k + 1 == order.len() {
            let _ = writeln!(c, "    const long long i{d} = r;");
        } else {
            // (An empty output never runs the loop: 1 keeps its C free of
            // divisions by zero.)
            let n = out.shape[d].max(1);
            let _ = writeln!(c, "    const long long i{d} = r % {n}LL; r /= {n}LL;");
        }
    }
}

/// Closes the grid-stride loop and the kernel that [`open`] began.
pub(crate) fn close(c: &mut String) {
    let _ = writeln!(c, "  }}");
    let _ = writeln!(c, "}}");
}

/// A step kernel's comment line and signature, up to its opening brace:
/// `args` buffers, then the status word ([`crate::steps`]), launched with
/// at most `threads` threads a block.
pub(crate) fn signature(c: &mut String, name: &str, args: usize, threads: u32, comment: &str) {
    let params: Vec<String> = (0..args).map(|i| format!("unsigned char* b{i}")).collect();
    let _ = writeln!(c, "// {comment}");
    let _ = writeln!(
        c,
        "extern \"C\" __global__ void __launch_bounds__({threads}) {name}({}, int* kiln_status) {{",
        params.join(", ")
    );
}

/// The output's dims from the one that varies fastest in memory (the
/// smallest stride; the last of equals): the order consecutive threads
/// take its elements in, so that they write neighbours, and in
/// channels_last read neighbouring channels of one pixel (on an H200 a
/// depthwise 3×3 convolution in channels_last went from 0.047 to 0.016
/// ms; a dense one stayed at 0.48, its lanes now reading weights rather
/// than inputs a row apart).
fn memory_order(out: &Geometry) -> Vec<usize> {
    let mut dims: Vec<usize> = (0..out.rank()).rev().collect();
    dims.sort_by_key(|&d| {
        if out.shape[d] == 1 {
            i64::MAX
        } else {
            out.strides[d]
        }
    });
    dims
}

/// `Σ index·stride` over dims `dims` of `g`, with the index of dim `d`
/// spelled by `index(d)`, plus its offset.
pub(crate) fn offset(
    g: &Geometry,
    dims: std::ops::Range<usize>,
    index: impl Fn(usize) -> String,
) -> String {
    let mut s = format!("{}LL", g.offset);
    for d in dims {
        if g.shape[d] != 1 && g.strides[d] != 0 {
            let _ = write!(s, " + {} * {}LL", index(d), g.strides[d]);
        }
    }
    s
}

/// Declares `xp`, the input plane of the output element's leading
/// indices (`i0` .. `i{lead - 1}`: batch, channels), and returns the
/// geometry of the input's other dims from `xp`.
fn input_plane(c: &mut String, (xa, x): (usize, &TensorView), lead: usize) -> Geometry {
    let xg = &x.geometry;
    let _ = writeln!(
        c,
        "    const {}* xp = {} + {};",
        mtype(x.dtype),
        pointer(xa, x, false),
        offset(xg, 0..lead, |d| format!("i{d}"))
    );
    Geometry {
        shape: xg.shape[lead..].to_vec(),
        strides: xg.strides[lead..].to_vec(),
        offset: 0,
    }
}

/// The element pointer of argument `arg` of `view`'s dtype.
pub(crate) fn pointer(arg: usize, view: &TensorView, mutable: bool) -> String {
    let t = mtype(view.dtype);
    if mutable {
        format!("(({t}*)b{arg})")
    } else {
        format!("((const {t}*)b{arg})")
    }
}

/// `convolution`: for output element `(n, o, q...)`, `Σ_c Σ_k x[n, c,
/// q·s − p + k·d] · w[o, c, k]` over the input channels of `o`'s group
/// (each channel's taps summed first, as the reference does), then the
/// bias. Transposed (weight `[C, O/g, k...]`), the input positions `i`
/// with `i·s − p + k·d = q` for some tap `k`, each channel's in ascending
/// order and added one by one, as the reference scatters them.
fn convolution(name: &str, conv: &Conv, v: &ConvViews, args: usize) -> String {
    let ((xa, x), (wa, w), (oa, out)) = (v.x, v.w, v.out);
    let (xg, wg, og) = (&x.geometry, &w.geometry, &out.geometry);
    let dims = conv.dims;
    let t = mtype(out.dtype);
    let groups = conv.groups;
    let in_per_group = xg.shape[1] / groups;
    // (At least 1, as `open`'s sizes.)
    let out_per_group = (og.shape[1] / groups).max(1);
    let kernel = &wg.shape[2..];
    let mut c = String::new();
    let comment = format!(
        "convolution{}: in {:?}, weight {:?}, out {:?}, stride {:?}, padding {:?}, dilation {:?}, groups {groups}",
        if conv.transposed { " (transposed)" } else { "" },
        xg.shape,
        wg.shape,
        og.shape,
        conv.stride,
        conv.padding,
        conv.dilation,
    );
    open(&mut c, name, args, &comment, og);
    let _ = writeln!(
        c,
        "    const long long g = i1 / {out_per_group}LL, oc = i1 % {out_per_group}LL;"
    );
    let _ = writeln!(c, "    double sum = 0.0;");
    let _ = writeln!(
        c,
        "    for (long long ic = 0; ic < {in_per_group}LL; ++ic) {{"
    );
    let _ = writeln!(c, "      const long long ch = g * {in_per_group}LL + ic;");
    // The weight's first two indices: [o, ic] direct, [ch, oc] transposed.
    let (w0, w1) = if conv.transposed {
        ("ch", "oc")
    } else {
        ("i1", "ic")
    };
    let (xp, wp) = (pointer(xa, x, false), pointer(wa, w, false));
    let _ = writeln!(
        c,
        "      const {t}* xc = {xp} + {};",
        offset(xg, 0..2, |d| ["i0", "ch"][d].to_string())
    );
    let _ = writeln!(
        c,
        "      const {t}* wc = {wp} + {};",
        offset(wg, 0..2, |d| [w0, w1][d].to_string())
    );
    if !conv.transposed {
        let _ = writeln!(c, "      double acc = 0.0;");
    }
    // One loop per kernel dim, each tap's input position checked.
    let indent = |depth: usize| "  ".repeat(depth + 3);
    for d in 0..dims {
        let (k, s, p, dil) = (kernel[d], conv.stride[d], conv.padding[d], conv.dilation[d]);
        let size = xg.shape[2 + d];
        let q = format!("i{}", 2 + d);
        let ind = indent(d);
        if conv.transposed {
            let _ = writeln!(
                c,
                "{ind}for (long long k{d} = {}LL; k{d} >= 0; --k{d}) {{",
                k - 1
            );
            let _ = writeln!(
                c,
                "{ind}  const long long t{d} = {q} + {p}LL - k{d} * {dil}LL;"
            );
            let _ = writeln!(
                c,
                "{ind}  if (t{d} < 0 || t{d} % {s}LL != 0 || t{d} / {s}LL >= {size}LL) continue;"
            );
            let _ = writeln!(c, "{ind}  const long long x{d} = t{d} / {s}LL;");
        } else {
            let _ = writeln!(c, "{ind}for (long long k{d} = 0; k{d} < {k}LL; ++k{d}) {{");
            let _ = writeln!(
                c,
                "{ind}  const long long x{d} = {q} * {s}LL - {p}LL + k{d} * {dil}LL;"
            );
            let _ = writeln!(c, "{ind}  if (x{d} < 0 || x{d} >= {size}LL) continue;");
        }
    }
    let ind = indent(dims);
    let xoff = offset(&strip(xg), 0..dims, |d| format!("x{d}"));
    let woff = offset(&strip(wg), 0..dims, |d| format!("k{d}"));
    let target = if conv.transposed { "sum" } else { "acc" };
    let _ = writeln!(
        c,
        "{ind}{target} += {} * {};",
        load(x.dtype, &format!("xc[{xoff}]")),
        load(w.dtype, &format!("wc[{woff}]"))
    );
    for d in (0..dims).rev() {
        let _ = writeln!(c, "{}}}", indent(d));
    }
    if !conv.transposed {
        let _ = writeln!(c, "      sum += acc;");
    }
    let _ = writeln!(c, "    }}");
    if let Some((ba, b)) = v.bias {
        let bg = &b.geometry;
        let bias = format!(
            "{}[{}]",
            pointer(ba, b, false),
            offset(bg, 0..1, |_| "i1".to_string())
        );
        let _ = writeln!(c, "    sum += {};", load(b.dtype, &bias));
    }
    match &v.tail {
        Some(tail) => {
            c.push_str(&tail.store("    ", &rounded(DType::F32, "sum"), |d| format!("i{d}")));
            close(&mut c);
        }
        None => store(&mut c, (oa, out), "sum"),
    }
    c
}

/// A geometry's spatial dims (all but the first two), offset 0.
fn strip(g: &Geometry) -> Geometry {
    Geometry {
        shape: g.shape[2..].to_vec(),
        strides: g.strides[2..].to_vec(),
        offset: 0,
    }
}

/// Stores `value` (a double) rounded to the output's dtype at the current
/// element, and closes the loop and the kernel.
fn store(c: &mut String, (oa, out): (usize, &TensorView), value: &str) {
    let og = &out.geometry;
    let _ = writeln!(
        c,
        "    {}[{}] = {};",
        pointer(oa, out, true),
        offset(og, 0..og.rank(), |d| format!("i{d}")),
        rounded(out.dtype, value)
    );
    close(c);
}

/// A pooling step's windows: sliding (`max_pool`, `avg_pool`), or
/// adaptive (ATen's `[⌊i·in/out⌋, ⌈(i+1)·in/out⌉)` per dim).
enum Windows<'a> {
    Sliding(&'a Pool),
    Adaptive { dims: usize, max: bool },
}

/// `max_pool`, `avg_pool` and the adaptive pools over the last dims, as
/// the reference: the maximum (and its position, flat in the input's
/// plane) from −inf at the first tap inside the input, any larger value
/// or NaN replacing it (the last NaN wins); the mean of the window
/// clipped to the input, summed in double, over ATen's divisor (an
/// adaptive window's size).
fn pooling(
    name: &str,
    windows: &Windows,
    (xa, x): (usize, &TensorView),
    (oa, out): (usize, &TensorView),
    positions: Option<(usize, &TensorView)>,
    args: usize,
) -> String {
    let (xg, og) = (&x.geometry, &out.geometry);
    let (dims, max) = match windows {
        Windows::Sliding(pool) => (pool.dims, pool.window == Window::Max),
        Windows::Adaptive { dims, max } => (*dims, *max),
    };
    let lead = og.rank() - dims;
    let in_size = &xg.shape[lead..];
    let out_size = &og.shape[lead..];
    let mut c = String::new();
    let comment = match windows {
        Windows::Sliding(pool) => format!(
            "{} pool: in {:?}, out {:?}, kernel {:?}, stride {:?}, padding {:?}, dilation {:?}",
            if max { "max" } else { "avg" },
            xg.shape,
            og.shape,
            pool.kernel,
            pool.stride,
            pool.padding,
            pool.dilation,
        ),
        Windows::Adaptive { .. } => format!(
            "adaptive {} pool: in {:?}, out {:?}",
            if max { "max" } else { "avg" },
            xg.shape,
            og.shape,
        ),
    };
    open(&mut c, name, args, &comment, og);
    let spatial = input_plane(&mut c, (xa, x), lead);
    let read = offset(&spatial, 0..dims, |d| format!("x{d}"));
    let indent = |depth: usize| "  ".repeat(depth + 2);
    // Each dim's window: `lo{d}..hi{d}` of the input (adaptive windows,
    // and an average's window clipped to the input), and for an average
    // its size in the padded input (`pool_size`) and inside (`count`).
    let _ = writeln!(c, "    long long pool_size = 1, count = 1;");
    for d in 0..dims {
        let q = format!("i{}", lead + d);
        let n = in_size[d];
        match windows {
            Windows::Adaptive { .. } => {
                let o = out_size[d].max(1);
                let _ = writeln!(
                    c,
                    "    const long long lo{d} = {q} * {n}LL / {o}LL, hi{d} = (({q} + 1) * {n}LL + {o}LL - 1) / {o}LL;"
                );
            }
            Windows::Sliding(pool) => {
                let (k, s, p) = (pool.kernel[d], pool.stride[d], pool.padding[d]);
                let _ = writeln!(c, "    const long long s{d} = {q} * {s}LL - {p}LL;");
                let _ = writeln!(
                    c,
                    "    const long long e{d} = s{d} + {k}LL < {end}LL ? s{d} + {k}LL : {end}LL;",
                    end = n + p
                );
                let _ = writeln!(c, "    pool_size *= e{d} - s{d};");
                let _ = writeln!(
                    c,
                    "    const long long lo{d} = s{d} > 0 ? s{d} : 0LL, hi{d} = e{d} < {n}LL ? e{d} : {n}LL;"
                );
            }
        }
        let _ = writeln!(c, "    count *= hi{d} > lo{d} ? hi{d} - lo{d} : 0LL;");
    }
    if max {
        let ninf = literal(f64::NEG_INFINITY, true);
        let _ = writeln!(c, "    double best = {ninf};");
        let _ = writeln!(c, "    long long at = -1;");
        for d in 0..dims {
            let ind = indent(d);
            match windows {
                Windows::Sliding(pool) => {
                    let q = format!("i{}", lead + d);
                    let (k, s, p, dil) = (
                        pool.kernel[d],
                        pool.stride[d],
                        pool.padding[d],
                        pool.dilation[d],
                    );
                    let _ = writeln!(c, "{ind}for (long long k{d} = 0; k{d} < {k}LL; ++k{d}) {{");
                    let _ = writeln!(
                        c,
                        "{ind}  const long long x{d} = {q} * {s}LL - {p}LL + k{d} * {dil}LL;"
                    );
                    let _ = writeln!(
                        c,
                        "{ind}  if (x{d} < 0 || x{d} >= {}LL) continue;",
                        in_size[d]
                    );
                }
                Windows::Adaptive { .. } => {
                    let _ = writeln!(
                        c,
                        "{ind}for (long long x{d} = lo{d}; x{d} < hi{d}; ++x{d}) {{"
                    );
                }
            }
        }
        let ind = indent(dims);
        let flat = (0..dims).fold(String::from("0LL"), |acc, d| {
            format!("({acc}) * {}LL + x{d}", in_size[d])
        });
        let _ = writeln!(c, "{ind}const long long flat = {flat};");
        let v = load(x.dtype, &format!("xp[{read}]"));
        let _ = writeln!(c, "{ind}const double v = {v};");
        let _ = writeln!(c, "{ind}if (at < 0) at = flat;");
        let _ = writeln!(c, "{ind}if (v > best || v != v) {{ best = v; at = flat; }}");
        for d in (0..dims).rev() {
            let _ = writeln!(c, "{}}}", indent(d));
        }
        // No tap inside the input: the reference's first position, 0.
        let _ = writeln!(c, "    if (at < 0) at = 0;");
        if let Some((pa, p)) = positions {
            let pt = if p.dtype == DType::I64 {
                "long long"
            } else {
                "int"
            };
            let _ = writeln!(
                c,
                "    (({pt}*)b{pa})[{}] = ({pt})at;",
                offset(&p.geometry, 0..p.geometry.rank(), |d| format!("i{d}"))
            );
        }
        store(&mut c, (oa, out), "best");
        return c;
    }
    let _ = writeln!(c, "    double sum = 0.0;");
    for d in 0..dims {
        let _ = writeln!(
            c,
            "{}for (long long x{d} = lo{d}; x{d} < hi{d}; ++x{d}) {{",
            indent(d)
        );
    }
    let v = load(x.dtype, &format!("xp[{read}]"));
    let _ = writeln!(c, "{}sum += {v};", indent(dims));
    for d in (0..dims).rev() {
        let _ = writeln!(c, "{}}}", indent(d));
    }
    let value = match windows {
        // An empty adaptive window is 0/0, NaN, as the reference's.
        Windows::Adaptive { .. } => "sum / (double)count".to_string(),
        Windows::Sliding(pool) => {
            let (count_include_pad, divisor_override) = match pool.window {
                Window::Avg {
                    count_include_pad,
                    divisor_override,
                } => (count_include_pad, divisor_override),
                // (Max pools returned above.)
                Window::Max => (false, None),
            };
            let divisor = match divisor_override {
                Some(n) => format!("{n}LL"),
                None if count_include_pad => "pool_size".into(),
                None => "count".into(),
            };
            format!("(count == 0 ? 0.0 : sum / (double){divisor})")
        }
    };
    store(&mut c, (oa, out), &value);
    c
}

/// `upsample_*`: each output element reads the sources the reference's
/// taps give it (`kiln_ir::spatial::Resample::taps`, the one definition of
/// PyTorch's source positions and weights), here as constant tables per
/// dim: nearest copies its one source; the others sum `weight · x` in
/// double in the reference's order, each weight the product of the dims'
/// weights from 1. `None` where a dim's outputs have different numbers of
/// taps (no sampling mode has).
fn resample(
    name: &str,
    r: &Resample,
    (xa, x): (usize, &TensorView),
    (oa, out): (usize, &TensorView),
    args: usize,
) -> Option<String> {
    let (xg, og) = (&x.geometry, &out.geometry);
    let dims = r.dims;
    let lead = og.rank().checked_sub(dims)?;
    let in_size = &xg.shape[lead..];
    let out_size = &og.shape[lead..];
    let taps = r.taps(in_size, out_size);
    // The tables are the kernel's source text: past this many entries the
    // host computes the step instead; and C has no literal for a weight
    // that is not finite (a cubic scale below about 1e-308).
    let entries: usize = taps
        .iter()
        .map(|d| d.iter().map(Vec::len).sum::<usize>())
        .sum();
    let finite = taps.iter().flatten().flatten().all(|(_, w)| w.is_finite());
    if entries > MAX_TABLE || !finite {
        return None;
    }
    let mut c = String::new();
    // Per dim, the sources and weights of every output position, `per[d]`
    // taps each.
    let mut per = Vec::with_capacity(dims);
    for (d, dim_taps) in taps.iter().enumerate() {
        let n = dim_taps.first().map_or(1, Vec::len);
        if dim_taps.iter().any(|tap| tap.len() != n) {
            return None;
        }
        per.push(n);
        let sources = dim_taps.iter().flatten().map(|(i, _)| format!("{i}LL"));
        table(&mut c, "long long", &format!("{name}_src{d}"), sources);
        let weights = dim_taps.iter().flatten().map(|(_, w)| format!("{w:e}"));
        table(&mut c, "double", &format!("{name}_w{d}"), weights);
    }
    let comment = format!(
        "resample ({:?}): in {:?}, out {:?}",
        r.sampling, xg.shape, og.shape
    );
    open(&mut c, name, args, &comment, og);
    let spatial = input_plane(&mut c, (xa, x), lead);
    let tap = |d: usize| format!("i{} * {}LL + k{d}", lead + d, per[d]);
    let read = offset(&spatial, 0..dims, |d| format!("{name}_src{d}[{}]", tap(d)));
    if matches!(r.sampling, Sampling::Nearest | Sampling::NearestExact) {
        let _ = writeln!(
            c,
            "    const long long {} = 0;",
            (0..dims)
                .map(|d| format!("k{d}"))
                .collect::<Vec<_>>()
                .join(" = 0, ")
        );
        store(&mut c, (oa, out), &load(x.dtype, &format!("xp[{read}]")));
        return Some(c);
    }
    // From −0.0, as the interpreter's sums of taps.
    let _ = writeln!(c, "    double acc = -0.0;");
    let indent = |depth: usize| "  ".repeat(depth + 2);
    for d in 0..dims {
        let _ = writeln!(
            c,
            "{}for (long long k{d} = 0; k{d} < {}LL; ++k{d}) {{",
            indent(d),
            per[d]
        );
    }
    let ind = indent(dims);
    let _ = writeln!(c, "{ind}double weight = 1.0;");
    for d in 0..dims {
        let _ = writeln!(c, "{ind}weight *= {name}_w{d}[{}];", tap(d));
    }
    let v = load(x.dtype, &format!("xp[{read}]"));
    let _ = writeln!(c, "{ind}acc += weight * {v};");
    for d in (0..dims).rev() {
        let _ = writeln!(c, "{}}}", indent(d));
    }
    store(&mut c, (oa, out), "acc");
    Some(c)
}

/// A constant array of C type `ty` named `name` holding `items` (one 0
/// where there are none: C has no empty arrays).
fn table(c: &mut String, ty: &str, name: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    let body = if items.is_empty() {
        "0".to_string()
    } else {
        items.join(", ")
    };
    let _ = writeln!(c, "__device__ const {ty} {name}[] = {{{body}}};");
}
