//! `kiln-ir`: Kiln's semantic core and intermediate representation.
//!
//! The semantic core is PyTorch's "Tensor Attributes" contract, each rule
//! implemented once here and asked by every pass and backend:
//!
//! | module | owns |
//! |---|---|
//! | [`dtype`] | dtypes, their names, sizes, categories, finfo/iinfo, shell dtypes |
//! | [`scalar`] | scalar literals and the kind they promote as |
//! | [`promotion`] | `promote_types`, `result_type`, `can_cast`, the default dtype |
//! | [`device`] | devices, device strings, the device-mixing rule |
//! | [`layout`] | layouts, memory formats, contiguity, TensorIterator and preserve-format strides |
//! | [`view`] | view geometry: transpose, permute, expand, slice, view, reshape, broadcasting |

pub mod device;
pub mod dtype;
pub mod error;
pub mod layout;
pub mod promotion;
pub mod scalar;
pub mod view;

pub use device::{Device, DeviceType};
pub use dtype::{Category, DType};
pub use error::{Error, ErrorKind, Location, Result};
pub use layout::{Layout, MemoryFormat};
pub use promotion::{DefaultDType, Operand, can_cast, promote_types, result_type};
pub use scalar::{Scalar, ScalarKind};
pub use view::Geometry;
