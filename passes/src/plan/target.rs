//! What a backend tells the planner: its device, what its kernels compute,
//! which matmuls a library runs, and its policy for shaping kernels.

use kiln_ir::graph::{Func, Inst};
use kiln_ir::{DType, Device};

/// When a reduction with few rows is split into partial reductions over
/// slices of its rows (so that more threads, or blocks, share it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitPolicy {
    /// Split only kernels with fewer rows (outer iterations) than this.
    pub rows_below: i64,
    /// ... whose rows have at least this many elements ...
    pub row_at_least: i64,
    /// ... into this many slices (the row length must be a multiple).
    pub parts: i64,
}

impl SplitPolicy {
    /// The CPU's: rows of 2^18 elements or more, fewer than 16 rows, in 64
    /// slices (four chunks of work per thread on a 16-thread machine).
    pub const CPU: SplitPolicy = SplitPolicy {
        rows_below: 16,
        row_at_least: 1 << 18,
        parts: 64,
    };
}

/// How the planner shapes kernels for a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetPolicy {
    /// Which reductions the plan splits (`None`: the target splits long
    /// rows itself, as the CUDA backend does over blocks).
    pub split: Option<SplitPolicy>,
}

/// What a backend can compile, which decides what the plan asks of it.
pub trait Target {
    /// The device the plan's kernels run on.
    fn device(&self) -> Device;

    /// Whether kernels can compute this instruction (its op on its dtypes);
    /// others run on the reference interpreter.
    fn compiles(&self, func: &Func, inst: &Inst) -> bool;

    /// Whether a matmul on this dtype runs as a library call.
    fn has_matmul(&self, dtype: DType) -> bool;

    /// How kernels are shaped for it.
    fn policy(&self) -> TargetPolicy {
        TargetPolicy {
            split: Some(SplitPolicy::CPU),
        }
    }
}
