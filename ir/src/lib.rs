//! `kiln-ir`: Kiln's semantic core and intermediate representation.
//!
//! The semantic core is PyTorch's "Tensor Attributes" contract, each rule
//! implemented once here and asked by every pass and backend; the IR is a
//! typed SSA graph whose every op follows the PyTorch function of its name.
//!
//! | module | owns |
//! |---|---|
//! | [`dtype`] | dtypes, their names, sizes, categories, finfo/iinfo, shell dtypes |
//! | [`scalar`] | scalar literals and the kind they promote as |
//! | [`promotion`] | `promote_types`, `result_type`, `can_cast`, the default dtype |
//! | [`device`] | devices, device strings, the device-mixing rule |
//! | [`layout`] | layouts, memory formats, contiguity, TensorIterator and preserve-format strides |
//! | [`complex_parts`] | `real`, `imag`, `complex` and the ops built on them |
//! | [`advanced_index`] | the geometry of indexing with tensors (`index`, `index_put`) |
//! | [`einsum`] | `torch.einsum`'s equation: parsing, dim order, PyTorch's checks |
//! | [`view`] | view geometry: transpose, permute, expand, slice, view, reshape, broadcasting |
//! | [`types`] | tensor types (shape, dtype, device, layout) |
//! | [`ops`] | the op table: every op, its attributes, operands, rules and expansion |
//! | [`support`] | which dtypes PyTorch's CPU kernels implement |
//! | [`infer`] | type inference for every op |
//! | [`random`] | the random ops' seeds, inference rules and dropouts |
//! | [`graph`] | modules, functions, instructions, the typed builder |
//! | [`verify`] | the verifier and its invariants |
//! | [`print`], [`parse`] | the `.kir` text format |

#![warn(missing_docs)]

pub mod advanced_index;
pub mod complex_parts;
pub mod device;
pub mod dtype;
pub mod einsum;
pub mod error;
pub mod graph;
pub mod infer;
pub mod layout;
pub mod ops;
pub mod parse;
pub mod print;
pub mod promotion;
pub mod random;
pub mod scalar;
pub mod spatial;
pub mod support;
pub mod types;
pub mod verify;
pub mod view;

pub use device::{Device, DeviceType};
pub use dtype::{Category, DType};
pub use error::{Error, ErrorKind, Location, Result};
pub use graph::{Func, FuncBuilder, Inst, Module, NewInst, Operand, Stage, ValueId};
pub use layout::{Layout, MemoryFormat};
pub use ops::{
    ArgReduceOp, BinaryOp, ConvPadding, GeluApproximate, LossReduction, Op, PowForm, ReduceOp,
    RoundingMode, SearchSide, Traits, UnaryOp,
};
pub use parse::{parse_bytes, parse_module};
pub use promotion::{DefaultDType, can_cast, promote_types, result_type};
pub use scalar::{F64, Scalar, ScalarKind};
pub use types::{TensorType, TypeLayout};
pub use view::Geometry;
