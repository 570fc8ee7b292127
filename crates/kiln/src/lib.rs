//! Kiln: a lazy tensor graph compiler with PyTorch's semantics.
pub use kiln_ir::*;
