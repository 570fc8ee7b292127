//! Plan steps that run as one generated CUDA kernel each instead of on
//! the host: attention ([`crate::attention`]), convolution, pooling and
//! resampling ([`crate::spatial`]), embedding, index_select and gather
//! ([`crate::gather`]), and the scans ([`crate::scan`]). A step's kernel
//! takes one buffer per view of the step, its inputs in the step's order, then its results, and last the
//! run's status word (as fused kernels do: an index out of range sets
//! [`crate::gather::INDEX_OUT_OF_RANGE`] in it); the launcher looks
//! kernels up by step, and a step without one runs on the host (natively
//! or on the interpreter) after a copy.

use kiln_ir::graph::{Func, Inst};
use kiln_passes::plan::KernelPlan;

use crate::codegen::LaunchShape;

/// One step of a plan and its generated kernel.
#[derive(Clone, Debug)]
pub struct StepKernel {
    /// The step's position in the plan.
    pub step: usize,
    /// The kernel's name in the module.
    pub name: String,
    /// Its CUDA C.
    pub source: String,
    /// Its launch shape (no blocks: nothing to compute).
    pub shape: LaunchShape,
    /// How many buffer arguments it takes: one per view of the step, the
    /// inputs in the step's order, then the results, then (where `tail`)
    /// the tail's views (the status word follows them).
    pub args: usize,
    /// Whether it applies the step's tail (`kiln_passes::plan::Tail`),
    /// writing the tail's result rather than the step's own.
    pub tail: bool,
}

/// The kernels of a plan's steps that have one, in plan order.
pub fn kernels(plan: &KernelPlan) -> Vec<StepKernel> {
    plan.steps
        .iter()
        .enumerate()
        .filter_map(|(i, step)| {
            crate::attention::kernel(i, step)
                .or_else(|| crate::spatial::kernel(i, step))
                .or_else(|| crate::gather::kernel(i, step))
                .or_else(|| crate::scan::kernel(i, step))
        })
        .collect()
}

/// The position among a step's inputs of operand `i` of its lone
/// instruction (`Step::lone_inst`: the island's parameters are the step's
/// inputs, in order); `None` for an absent operand or a constant.
pub(crate) fn input_of(func: &Func, inst: &Inst, i: usize) -> Option<usize> {
    let v = inst.operands.get(i)?.value()?;
    func.params.iter().position(|p| *p == v)
}

/// A C literal of `x` in a kernel's `float` or `double` (`wide`), exactly
/// (by its bits).
pub(crate) fn literal(x: f64, wide: bool) -> String {
    if wide {
        format!("__longlong_as_double(0x{:016x}LL)", x.to_bits())
    } else {
        format!("__int_as_float(0x{:08x})", (x as f32).to_bits())
    }
}
