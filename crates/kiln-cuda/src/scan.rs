//! Scans (`cumsum`, `cumprod`, `logcumsumexp`, `cummax`, `cummin`) as
//! generated CUDA kernels, so that they stay on the GPU instead of going
//! to the host and back.
//!
//! Each kernel is a grid-stride loop with one thread per line (the
//! output's elements with the scanned dim taken out), which walks its line
//! in order with the reference interpreter's arithmetic
//! (`kiln_runtime::interp::scan`): PyTorch's CPU accumulators (f32 in
//! double, f16 and bf16 in float, integers in 64 bits, wrapping), the sums
//! and products folded from their identity (so a first −0.0 sums to
//! +0.0), every output rounded once to the result's dtype, logcumsumexp's
//! `_log_add_exp_helper` with its NaN and infinity rules, and cummax's and
//! cummin's `x >= best || isnan(x)` (the last of equal values wins; a NaN
//! sticks). A sum or product of two floats rounds once in either width,
//! and rounding a double sum of two floats to float gives float's own sum
//! (double has more than twice float's precision), so the kernels give the
//! interpreter's values (and, emulated, its bits; a GPU does not keep NaN
//! payloads); logcumsumexp calls CUDA's own `exp` and `log1p` (an ulp or
//! two from the host's on a GPU; the emulation's are the host's).
//!
//! The lines are walked one element at a time: along a contiguous dim
//! neighbouring threads read a line apart, so this is correct before it is
//! fast (staging tiles of 32 lines through shared memory would read them
//! coalesced), and a few long lines ([`FEW_LINES`], [`LONG_LINE`]) stay on
//! the host, where one GPU thread would walk each alone. Shapes, strides
//! and offsets are the plan's, written in as constants.

use std::fmt::Write;

use kiln_ir::view::{Geometry, wrap_dim};
use kiln_ir::{DType, Op};
use kiln_passes::plan::Step;

use crate::codegen::{ctype, mtype};
use crate::spatial::{close, grid, offset, open};
use crate::steps::StepKernel;

/// Fewer lines than this ...
const FEW_LINES: i64 = 128;

/// ... of at least this many elements are left to the host.
const LONG_LINE: i64 = 1 << 16;

/// What a scan computes.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Sum,
    Product,
    LogSumExp,
    Max,
    Min,
}

/// An element of a line in memory and in the accumulator: their C types,
/// how a loaded element becomes an accumulator value, and how the
/// running value is stored.
struct Types {
    memory: &'static str,
    accumulator: &'static str,
    load: Box<dyn Fn(&str) -> String>,
    store: Box<dyn Fn(&str) -> String>,
    integer: bool,
}

/// The kernel of plan step `index` when it is a scan of rank ≥ 1 whose
/// input already has the result's dtype: cumsum and cumprod of f16, bf16,
/// f32, f64 and the signed integers and u8; logcumsumexp of f32 and f64;
/// cummax and cummin of f32, f64, i32 and i64 (positions i64); not a few
/// long lines.
pub(crate) fn kernel(index: usize, step: &Step) -> Option<StepKernel> {
    let (func, inst, inputs, outputs) = step.lone_inst()?;
    let (kind, dim) = match inst.op {
        Op::Cumsum { dim, .. } => (Kind::Sum, dim),
        Op::Cumprod { dim, .. } => (Kind::Product, dim),
        Op::Logcumsumexp { dim } => (Kind::LogSumExp, dim),
        Op::Cummax { dim } => (Kind::Max, dim),
        Op::Cummin { dim } => (Kind::Min, dim),
        _ => return None,
    };
    let xa = crate::steps::input_of(func, inst, 0)?;
    let (x, out) = (&inputs[xa], outputs.first()?);
    let (xg, og) = (&x.geometry, &out.geometry);
    if x.dtype != out.dtype || xg.rank() == 0 || xg.shape != og.shape {
        return None;
    }
    let types = types(kind, out.dtype)?;
    let positions = match kind {
        Kind::Max | Kind::Min => {
            let p = outputs.get(1)?;
            if p.dtype != DType::I64 {
                return None;
            }
            Some((inputs.len() + 1, p))
        }
        _ => None,
    };
    let axis = wrap_dim(dim, xg.rank()).ok()?;
    let n = xg.shape[axis];
    let line_count = xg.shape.iter().product::<i64>() / n.max(1);
    if line_count < FEW_LINES && n >= LONG_LINE {
        return None;
    }
    // The lines: the output with the scanned dim as one element.
    let mut lines: Geometry = og.clone();
    lines.shape[axis] = 1;
    let name = format!("kiln_scan_s{index}");
    let args = inputs.len() + outputs.len();
    let at = |g: &Geometry| {
        offset(g, 0..g.rank(), |d| {
            if d == axis {
                "j".into()
            } else {
                format!("i{d}")
            }
        })
    };
    let mut c = String::new();
    let comment = format!("{}: {:?} along dim {axis}", inst.op.name(), xg.shape);
    open(&mut c, &name, args, &comment, &lines);
    let (mem, acc) = (types.memory, types.accumulator);
    let _ = writeln!(c, "    const {mem}* x = (const {mem}*)b{xa};");
    let _ = writeln!(c, "    {mem}* y = ({mem}*)b{};", inputs.len());
    if let Some((pa, _)) = positions {
        let _ = writeln!(c, "    long long* at = (long long*)b{pa};");
    }
    // The sums and products fold from their identity; cummax and cummin
    // take the first element (`j == 0` below).
    let identity = match kind {
        Kind::Sum | Kind::Max | Kind::Min => "0",
        Kind::Product => "1",
        Kind::LogSumExp => "-__longlong_as_double(0x7ff0000000000000LL)",
    };
    let _ = writeln!(c, "    {acc} run = ({acc}){identity};");
    if positions.is_some() {
        let _ = writeln!(c, "    long long best = 0;");
    }
    let _ = writeln!(c, "    for (long long j = 0; j < {n}LL; ++j) {{");
    let _ = writeln!(
        c,
        "      const {acc} v = {};",
        (types.load)(&format!("x[{}]", at(xg)))
    );
    let step = match kind {
        Kind::Sum if types.integer => {
            "run = (long long)((unsigned long long)run + (unsigned long long)v);".to_string()
        }
        Kind::Product if types.integer => {
            "run = (long long)((unsigned long long)run * (unsigned long long)v);".to_string()
        }
        Kind::Sum => "run = run + v;".to_string(),
        Kind::Product => "run = run * v;".to_string(),
        // PyTorch's `_log_add_exp_helper(v, run)`
        // (`kiln_runtime::interp::scan::log_add_exp`).
        Kind::LogSumExp => "{ double lo, hi; if (run != run) { lo = run; hi = run; } else { lo = run < v ? run : v; hi = v < run ? run : v; } run = (lo != hi || lo - lo == 0.0) ? hi + log1p(exp(lo - hi)) : v; }".to_string(),
        Kind::Max | Kind::Min => {
            let cmp = if kind == Kind::Max { ">=" } else { "<=" };
            format!("if (j == 0 || v != v || v {cmp} run) {{ run = v; best = j; }}")
        }
    };
    let _ = writeln!(c, "      {step}");
    let _ = writeln!(c, "      y[{}] = {};", at(og), (types.store)("run"));
    if let Some((_, p)) = positions {
        let _ = writeln!(c, "      at[{}] = best;", at(&p.geometry));
    }
    let _ = writeln!(c, "    }}");
    close(&mut c);
    Some(StepKernel {
        step: index,
        name,
        source: c,
        shape: grid(&lines)?,
        args,
        tail: false,
    })
}

/// The element and accumulator types of a scan of `d` (`None`: no kernel):
/// the sums and products accumulate in the scans' accumulator
/// (`kiln_ir::ops::scan_accumulator`), cummax and cummin in `d` itself.
fn types(kind: Kind, d: DType) -> Option<Types> {
    use DType::*;
    let supported = match kind {
        Kind::Sum | Kind::Product => {
            matches!(d, F16 | BF16 | F32 | F64 | I64 | I32 | I16 | I8 | U8)
        }
        Kind::LogSumExp => matches!(d, F32 | F64),
        Kind::Max | Kind::Min => matches!(d, F32 | F64 | I32 | I64),
    };
    if !supported {
        return None;
    }
    let acc = match kind {
        Kind::Max | Kind::Min => d,
        _ => kiln_ir::ops::scan_accumulator(d),
    };
    let accumulator = ctype(acc);
    let (load, store): (Box<dyn Fn(&str) -> String>, Box<dyn Fn(&str) -> String>) = match d {
        _ if acc == d => (Box::new(|e| e.to_string()), Box::new(|r| r.to_string())),
        F16 => (
            Box::new(|e| format!("kiln_h2f({e})")),
            Box::new(|r| format!("kiln_f2h({r})")),
        ),
        BF16 => (
            Box::new(|e| format!("kiln_bf2f({e})")),
            Box::new(|r| format!("kiln_f2bf({r})")),
        ),
        // (f32 in double; the integers in 64 bits, wrapping to `d`.)
        _ => (
            Box::new(move |e| format!("({accumulator}){e}")),
            Box::new(move |r| match d {
                F32 => format!("(float)({r})"),
                _ => format!("({}){r}", ctype(d)),
            }),
        ),
    };
    Some(Types {
        memory: mtype(d),
        accumulator,
        load,
        store,
        integer: d.is_integral(),
    })
}
