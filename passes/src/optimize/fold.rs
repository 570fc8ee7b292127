//! Constant folding's arithmetic comes from outside the optimizer: it must
//! be exactly the reference interpreter's, which lives in `kiln-runtime`
//! (above this crate). The runtime implements [`ConstantFolder`]; the pipelines that
//! run the optimizer hand it in.

use kiln_ir::{DType, Op, Scalar, TensorType};

/// A constant operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FoldArg {
    /// A scalar literal.
    Literal(Scalar),
    /// A tensor whose elements all hold this value, of this dtype and rank
    /// (the rank decides how it takes part in type promotion).
    Splat(Scalar, DType, usize),
}

/// Computes a pointwise op of constants.
pub trait ConstantFolder: Send + Sync {
    /// The value of every element of `op(args)` (whose type is `result`),
    /// as a scalar that converts exactly to `result`'s dtype; `None` when
    /// it cannot be computed here (the op then stays).
    fn fold(&self, op: &Op, args: &[FoldArg], result: &TensorType) -> Option<Scalar>;
}
