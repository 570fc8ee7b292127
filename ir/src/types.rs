//! Tensor types: shape, dtype, device and layout of an IR value, and their
//! `.kir` spelling `tensor<4x8xf32, cuda:0, channels_last>`.

use std::fmt;

use crate::device::Device;
use crate::dtype::DType;
use crate::layout::{MemoryFormat, contiguous_strides};

/// What a type says about its value's memory layout.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum TypeLayout {
    /// Not yet known: a result type written without a layout, or any value
    /// before the layout pass. Claims nothing.
    #[default]
    Unspecified,
    /// Strided with these strides (in elements).
    Strided(Vec<i64>),
    /// `torch.sparse_coo`: parsed and printed; no op computes on it.
    SparseCoo,
}

/// The type of an IR value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    /// The size of each dim, outermost first; empty for a zero-dim tensor.
    pub shape: Vec<i64>,
    /// The element type.
    pub dtype: DType,
    /// Where the value lives.
    pub device: Device,
    /// What the type claims about the value's strides.
    pub layout: TypeLayout,
}

impl TensorType {
    /// A CPU tensor type with no layout claim.
    pub fn new(shape: impl Into<Vec<i64>>, dtype: DType) -> TensorType {
        TensorType {
            shape: shape.into(),
            dtype,
            device: Device::CPU,
            layout: TypeLayout::Unspecified,
        }
    }

    /// The same type on `device`.
    pub fn on(mut self, device: Device) -> TensorType {
        self.device = device;
        self
    }

    /// The same type with this layout claim.
    pub fn with_layout(mut self, layout: TypeLayout) -> TensorType {
        self.layout = layout;
        self
    }

    /// The same type with dtype `dtype`; the layout is kept, since strides
    /// count elements, not bytes.
    pub fn with_dtype(mut self, dtype: DType) -> TensorType {
        self.dtype = dtype;
        self
    }

    /// The same type with this shape. The layout claim is kept unchanged,
    /// so strides claimed for the old shape may not fit the new one.
    pub fn with_shape(mut self, shape: Vec<i64>) -> TensorType {
        self.shape = shape;
        self
    }

    /// The same type with contiguous strides.
    pub fn contiguous(self) -> TensorType {
        let strides = contiguous_strides(&self.shape);
        self.with_layout(TypeLayout::Strided(strides))
    }

    /// The number of dims (0 for a zero-dim tensor).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements: the product of the shape (1 for a
    /// zero-dim tensor). Unchecked: see [`crate::view::numel`] for a
    /// product that reports overflow.
    pub fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    /// The strides, when the layout is known and strided.
    pub fn strides(&self) -> Option<&[i64]> {
        match &self.layout {
            TypeLayout::Strided(s) => Some(s),
            _ => None,
        }
    }

    /// Equality ignoring layout (what type inference decides).
    pub fn same_value_type(&self, other: &TensorType) -> bool {
        self.shape == other.shape && self.dtype == other.dtype && self.device == other.device
    }

    /// Size in bytes of the elements (not counting gaps in a strided layout).
    pub fn nbytes(&self) -> i64 {
        self.numel() * self.dtype.itemsize() as i64
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("tensor<")?;
        for d in &self.shape {
            write!(f, "{d}x")?;
        }
        write!(f, "{}", self.dtype)?;
        if !self.device.is_cpu() || self.device.index().is_some() {
            write!(f, ", {}", self.device)?;
        }
        match &self.layout {
            TypeLayout::Unspecified => {}
            TypeLayout::SparseCoo => f.write_str(", sparse_coo")?,
            TypeLayout::Strided(strides) => {
                if *strides != contiguous_strides(&self.shape) {
                    let keyword = [MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d]
                        .into_iter()
                        .find(|mf| mf.strides(&self.shape).is_ok_and(|s| s == *strides));
                    match keyword {
                        Some(mf) => write!(f, ", {mf}")?,
                        None => write!(f, ", strides={}", crate::view::format_shape(strides))?,
                    }
                }
            }
        }
        f.write_str(">")
    }
}
