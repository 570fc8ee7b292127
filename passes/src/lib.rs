//! `kiln-passes`: the passes that make a Kiln graph executable, and the
//! pass manager that runs them in order with the verifier after each.
//!
//! | module | owns |
//! |---|---|
//! | [`manager`] | the pass trait, the pipeline, per-pass timing and observation |
//! | [`promote`] | explicit casts for PyTorch's type promotion |
//! | [`layout`] | strides and memory formats for every value (and the rule per op) |
//! | [`decompose`] | composite ops lowered to primitives, in PyTorch's dtypes |
//! | [`optimize`] | equality saturation with egg: rules, cost model, extraction, explanations |
//! | [`cse`], [`dce`] | common subexpressions and dead code |
//! | [`hoist`] | constant subgraphs split out, for a backend to compute once |
//! | [`rewrite`] | the rebuild helper passes share |

pub mod cse;
pub mod dce;
pub mod decompose;
pub mod hoist;
pub mod layout;
pub mod manager;
pub mod optimize;
pub mod plan;
pub mod promote;
pub mod rewrite;

pub use manager::{Pass, PassEvent, PassManager};
