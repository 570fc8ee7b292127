//! Which results may be written into an input's storage when the caller
//! gives the input up (JAX's buffer donation): a decode step's key/value
//! cache comes in as an input and goes out updated by `index_put`, and
//! writing the update in place saves copying the whole cache (and holding
//! two) at every token.
//!
//! The plan stays as it is (inputs are read, results are fresh buffers);
//! a [`Donation`] only says that, if the input's storage is the caller's
//! to give, the runtime may use it as the result's buffer. That is sound
//! when the one step that computes the result is also the only reader of
//! the input, reads it completely before it writes anything the input
//! still needs, and writes the result in exactly the input's layout:
//!
//! - the step is a host step of one op that [`writes_in_place`]
//!   (`index_put`: the runtime's native step skips its copy when the two
//!   are the same memory; the interpreter computes the whole result before
//!   writing it);
//! - the input's buffer appears in the whole plan exactly once: as that
//!   op's operand 0 (no other step reads it, it is not returned as is),
//!   and the op reads it through no other operand (`x[i] = x` reads its
//!   values from the memory it writes);
//! - the result's buffer is not mentioned by any earlier step (nothing
//!   writes it before the step reads the input);
//! - the two views have the same dtype and geometry and each covers its
//!   whole buffer, of the same size.

use kiln_ir::Op;

use super::{BufferId, BufferRole, KernelPlan, TensorView};

/// A result buffer that may take an input buffer's storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Donation {
    /// The result's buffer (role [`BufferRole::Output`]).
    pub output: BufferId,
    /// The input's buffer (role [`BufferRole::Input`]).
    pub input: BufferId,
    /// The input's position among the parameters.
    pub param: usize,
}

/// Whether a host step of `op` alone may write its result into its
/// operand 0's memory: it reads operand 0 only at the positions it writes,
/// each before writing it (see the module doc).
pub fn writes_in_place(op: &Op) -> bool {
    matches!(op, Op::IndexPut { .. })
}

/// The plan's donations, at most one per input and per result.
pub fn donations(plan: &KernelPlan) -> Vec<Donation> {
    let mut found: Vec<Donation> = Vec::new();
    for (index, step) in plan.steps.iter().enumerate() {
        let Some((func, inst, inputs, outputs)) = step.lone_inst() else {
            continue;
        };
        if !writes_in_place(&inst.op) {
            continue;
        }
        let Some(first) = inst.operands.first().and_then(|o| o.value()) else {
            continue;
        };
        // The plan makes one parameter per value: the same value as another
        // operand is the same buffer, read while it is written.
        if inst.operands[1..].iter().any(|o| o.value() == Some(first)) {
            continue;
        }
        let (Some(result), Some(operand)) = (
            outputs.first(),
            func.params
                .iter()
                .position(|p| *p == first)
                .and_then(|p| inputs.get(p)),
        ) else {
            continue;
        };
        let (Some(out), Some(inp)) = (
            plan.buffers.get(result.buffer.index()),
            plan.buffers.get(operand.buffer.index()),
        ) else {
            continue;
        };
        let (BufferRole::Output, BufferRole::Input(param)) = (out.role, inp.role) else {
            continue;
        };
        let whole = |v: &TensorView, bytes: usize| {
            v.geometry.is_contiguous()
                && v.geometry.offset == 0
                && v.geometry.numel() as usize * v.dtype.itemsize() == bytes
        };
        if result.dtype != operand.dtype
            || result.geometry != operand.geometry
            || out.bytes != inp.bytes
            || !whole(result, out.bytes)
        {
            continue;
        }
        let uses = mentions(plan).filter(|&(_, b)| b == operand.buffer).count();
        let earlier = mentions(plan).any(|(s, b)| s < index && b == result.buffer);
        if uses != 1 || earlier {
            continue;
        }
        if found
            .iter()
            .any(|d| d.output == result.buffer || d.input == operand.buffer)
        {
            continue;
        }
        found.push(Donation {
            output: result.buffer,
            input: operand.buffer,
            param,
        });
    }
    found
}

/// Every buffer mention in the plan with its step's index (the plan's
/// returned views count as a step after the last).
fn mentions(plan: &KernelPlan) -> impl Iterator<Item = (usize, BufferId)> + '_ {
    let steps = plan
        .steps
        .iter()
        .enumerate()
        .flat_map(|(s, step)| step.buffers().into_iter().map(move |b| (s, b)));
    let end = plan.steps.len();
    steps.chain(plan.outputs.iter().map(move |v| (end, v.buffer)))
}
