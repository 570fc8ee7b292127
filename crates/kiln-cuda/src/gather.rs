//! `embedding`, `index_select` and `gather` steps as generated CUDA
//! kernels, so that a
//! language model's token embedding and a program's gathers stay on the
//! GPU instead of going to the host and back (on an H200 that round trip
//! made an embedding of 8×128 tokens take 205 ms, PyTorch's 0.02).
//!
//! Each kernel is a grid-stride loop with one thread per output element:
//! it reads its index (i64, or i32 for `embedding` and `index_select`),
//! checks it as the
//! reference does (inside `[0, size)`), and copies the element it names as
//! bytes, so any dtype of 1, 2, 4 or 8 bytes moves bit for bit. An index
//! out of range is never read through: the thread sets
//! [`INDEX_OUT_OF_RANGE`] in the status word and writes nothing, and the
//! run fails with the reference's error for the first bad index, which the
//! run loop finds by running the program on the host
//! (`kiln_runtime::execute`). Shapes, strides and offsets are the plan's,
//! written in as constants, so any layout is read where it lies.

use std::fmt::Write;

use kiln_ir::view::{Geometry, wrap_dim};
use kiln_ir::{DType, Op};
use kiln_passes::plan::Step;

use crate::spatial::{close, grid, offset, open};
use crate::steps::StepKernel;

/// The status bit a kernel sets for an index out of range (integer
/// division by zero sets [`kiln_runtime::execute::DIVISION_BY_ZERO`]).
pub const INDEX_OUT_OF_RANGE: u32 = kiln_runtime::execute::INDEX_OUT_OF_RANGE;

/// The kernel of plan step `index` when it is an `embedding` (a 2-D
/// weight, i64 or i32 indices), an `index_select` (an input of rank ≥ 1,
/// an i64 or i32 index of rank ≤ 1) or a `gather` (an i64 index of the
/// input's rank) of elements of 1, 2, 4 or 8 bytes.
pub(crate) fn kernel(index: usize, step: &Step) -> Option<StepKernel> {
    let (func, inst, inputs, outputs) = step.lone_inst()?;
    let param = |i: usize| crate::steps::input_of(func, inst, i);
    let [out] = outputs else {
        return None;
    };
    let (xa, ia) = (param(0)?, param(1)?);
    let (x, idx) = (&inputs[xa], &inputs[ia]);
    let elem = element_type(out.dtype.itemsize())?;
    let itype = match idx.dtype {
        DType::I64 => "long long",
        DType::I32 if matches!(inst.op, Op::Embedding { .. } | Op::IndexSelect { .. }) => "int",
        _ => return None,
    };
    if x.dtype != out.dtype {
        return None;
    }
    let (xg, ig, og) = (&x.geometry, &idx.geometry, &out.geometry);
    // Where the output element's index is, and where the element `v`
    // names is in the input (from its first element).
    let mut index_at = offset(ig, 0..ig.rank(), |d| format!("i{d}"));
    // The input's offset without dim `d` (as a dim of one), at the
    // output's indices: a gather's and an index_select's other dims.
    let others = |d: usize| {
        let mut rest = Geometry {
            offset: 0,
            ..xg.clone()
        };
        rest.shape[d] = 1;
        offset(&rest, 0..rest.rank(), |k| format!("i{k}"))
    };
    let (comment, source_at, size) = match &inst.op {
        Op::Embedding { .. } => {
            if xg.rank() != 2 || og.rank() != ig.rank() + 1 {
                return None;
            }
            // The output's leading dims are the indices'; its last, the
            // weight's row.
            let last = og.rank() - 1;
            (
                format!("embedding: weight {:?}, indices {:?}", xg.shape, ig.shape),
                format!("v * {}LL + i{last} * {}LL", xg.strides[0], xg.strides[1]),
                xg.shape[0],
            )
        }
        Op::Gather { dim, .. } => {
            let rank = xg.rank();
            if rank == 0 || ig.rank() != rank || og.shape != ig.shape {
                return None;
            }
            let d = wrap_dim(*dim, rank).ok()?;
            (
                format!(
                    "gather: input {:?}, dim {d}, index {:?}",
                    xg.shape, ig.shape
                ),
                format!("{} + v * {}LL", others(d), xg.strides[d]),
                xg.shape[d],
            )
        }
        Op::IndexSelect { dim } => {
            let rank = xg.rank();
            if rank == 0 || ig.rank() > 1 || og.rank() != rank {
                return None;
            }
            let d = wrap_dim(*dim, rank).ok()?;
            // The index's element is the output's index along `d`.
            index_at = offset(ig, 0..ig.rank(), |_| format!("i{d}"));
            (
                format!(
                    "index_select: input {:?}, dim {d}, index {:?}",
                    xg.shape, ig.shape
                ),
                format!("{} + v * {}LL", others(d), xg.strides[d]),
                xg.shape[d],
            )
        }
        _ => return None,
    };
    let name = format!("kiln_gather_s{index}");
    let args = inputs.len() + 1;
    let mut c = String::new();
    open(&mut c, &name, args, &comment, og);
    let _ = writeln!(
        c,
        "    const {elem}* x = (const {elem}*)b{xa} + {}LL;",
        xg.offset
    );
    let _ = writeln!(
        c,
        "    const long long v = (long long)((const {itype}*)b{ia})[{index_at}];"
    );
    let _ = writeln!(
        c,
        "    if (v < 0 || v >= {size}LL) {{ atomicOr(kiln_status, {INDEX_OUT_OF_RANGE}); continue; }}"
    );
    let _ = writeln!(
        c,
        "    (({elem}*)b{})[{}] = x[{source_at}];",
        inputs.len(),
        offset(og, 0..og.rank(), |d| format!("i{d}"))
    );
    close(&mut c);
    Some(StepKernel {
        step: index,
        name,
        source: c,
        shape: grid(og)?,
        args,
        tail: false,
    })
}

/// The C type that moves an element of `size` bytes.
fn element_type(size: usize) -> Option<&'static str> {
    Some(match size {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        8 => "unsigned long long",
        _ => return None,
    })
}
