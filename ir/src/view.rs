//! Strided views: the (shape, strides, storage offset) that PyTorch's view and
//! movement ops produce, and broadcasting.
//!
//! PyTorch rules: `maybe_wrap_dim`, `infer_size` (one `-1`), `computeStride`
//! (when `view` is possible), `inferExpandGeometry`, and the ATen functions
//! `t`, `transpose`, `permute`, `expand`, `unsqueeze`, `squeeze`, `slice`,
//! `select`, `flatten`, `view`, `reshape`, `contiguous`. Error messages are
//! PyTorch's.

use std::fmt::Write;

use crate::error::{Error, ErrorKind, Result};
use crate::layout::{
    MemoryFormat, contiguous_strides, is_contiguous, like_strides, suggest_memory_format,
};

/// Where a tensor's elements are in its storage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// The size of each dim, outermost first.
    pub shape: Vec<i64>,
    /// The step in storage, in elements, between neighbours along each dim.
    pub strides: Vec<i64>,
    /// Where the first element is in storage, in elements
    /// (`Tensor.storage_offset()`).
    pub offset: i64,
}

/// The result of `reshape`/`flatten`: a view when the strides allow it, else a
/// fresh contiguous copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reshaped {
    /// The input itself or a view of its storage, with this geometry.
    View(Geometry),
    /// A fresh tensor holding a copy, laid out with this geometry (offset
    /// 0; contiguous for `reshape`/`flatten`).
    Copy(Geometry),
}

impl Reshaped {
    /// The result's geometry, view or copy.
    pub fn geometry(&self) -> &Geometry {
        match self {
            Reshaped::View(g) | Reshaped::Copy(g) => g,
        }
    }

    /// Whether the result shares the input's storage.
    pub fn is_view(&self) -> bool {
        matches!(self, Reshaped::View(_))
    }
}

/// Where `x[start:end:step]` along a dim of `size` starts and how many
/// positions it takes (`step` positive): PyTorch's clamping, negative
/// bounds counting from the end and `None` meaning the dim's ends.
pub fn slice_range(size: i64, start: Option<i64>, end: Option<i64>, step: i64) -> (i64, i64) {
    let mut start = match start {
        None | Some(i64::MAX) => 0,
        Some(s) => s,
    };
    let mut end = end.unwrap_or(i64::MAX);
    if start < 0 {
        start += size;
    }
    if end < 0 {
        end += size;
    }
    start = start.clamp(0, size);
    end = if end < start { start } else { end.min(size) };
    (start, (end - start + step - 1) / step)
}

/// Formats a shape the way PyTorch prints an `IntArrayRef`: `[2, -1]`.
pub fn format_shape(shape: &[i64]) -> String {
    let mut s = String::from("[");
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write!(s, "{d}").expect("writing to a String cannot fail");
    }
    s.push(']');
    s
}

/// The number of elements of a shape, or an error when it overflows.
pub fn numel(shape: &[i64]) -> Result<i64> {
    shape
        .iter()
        .try_fold(1i64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Resource,
                format!(
                    "the number of elements of shape {} overflows 64 bits",
                    format_shape(shape)
                ),
            )
        })
}

/// `maybe_wrap_dim` with scalars wrapped: a dim in `[-rank, rank-1]` (a
/// zero-dim tensor accepts `-1` and `0`), made non-negative.
pub fn wrap_dim(dim: i64, rank: usize) -> Result<usize> {
    let n = rank.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(Error::new(
            ErrorKind::Dim,
            format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -n,
                n - 1
            ),
        ));
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// `infer_size`: resolves one `-1` in `shape` for `numel` elements.
pub fn infer_size(shape: &[i64], numel: i64) -> Result<Vec<i64>> {
    let mut known = 1i64;
    let mut inferred = None;
    for (i, &d) in shape.iter().enumerate() {
        if d == -1 {
            if inferred.is_some() {
                return Err(Error::new(
                    ErrorKind::Shape,
                    "only one dimension can be inferred",
                ));
            }
            inferred = Some(i);
        } else if d >= 0 {
            known = known.saturating_mul(d);
        } else {
            return Err(Error::new(
                ErrorKind::Shape,
                format!("invalid shape dimension {d}"),
            ));
        }
    }
    let mut out = shape.to_vec();
    if numel == known || (inferred.is_some() && known > 0 && numel % known == 0) {
        if let Some(i) = inferred {
            if known == 0 {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!(
                        "cannot reshape tensor of {numel} elements into shape {} because the unspecified dimension size -1 can be any value and is ambiguous",
                        format_shape(shape)
                    ),
                ));
            }
            out[i] = numel / known;
        }
        return Ok(out);
    }
    Err(Error::new(
        ErrorKind::Shape,
        format!(
            "shape '{}' is invalid for input of size {numel}",
            format_shape(shape)
        ),
    ))
}

/// NumPy/PyTorch broadcasting of two shapes (`infer_size`).
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    // PyTorch's infer_size walks from the last dim: with several
    // mismatches, the error names the innermost.
    for i in (0..rank).rev() {
        let da = (i + a.len()).checked_sub(rank).map_or(1, |j| a[j]);
        let db = (i + b.len()).checked_sub(rank).map_or(1, |j| b[j]);
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::new(
                ErrorKind::Shape,
                format!(
                    "The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
                ),
            ));
        };
    }
    Ok(out)
}

/// `computeStride`: the strides that let `new_shape` view the same elements
/// as (shape, strides), or `None` when the view would need a copy.
pub fn view_strides(shape: &[i64], strides: &[i64], new_shape: &[i64]) -> Option<Vec<i64>> {
    if shape.is_empty() {
        return Some(vec![1; new_shape.len()]);
    }
    let numel: i64 = shape.iter().product();
    if numel == 0 {
        if shape == new_shape {
            return Some(strides.to_vec());
        }
        return Some(contiguous_strides(new_shape));
    }
    let mut new_strides = vec![0i64; new_shape.len()];
    let mut view_d = new_shape.len() as i64 - 1;
    let mut chunk_base_stride = *strides.last().expect("rank > 0");
    let mut tensor_numel = 1i64;
    let mut view_numel = 1i64;
    for tensor_d in (0..shape.len()).rev() {
        tensor_numel *= shape[tensor_d];
        let chunk_ends = tensor_d == 0
            || (shape[tensor_d - 1] != 1
                && strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
        if chunk_ends {
            while view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel * chunk_base_stride;
                view_numel *= new_shape[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    (view_d == -1).then_some(new_strides)
}

impl Geometry {
    /// A fresh contiguous tensor of this shape.
    pub fn contiguous(shape: &[i64]) -> Geometry {
        Geometry {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    /// A geometry from its parts, taken as given (nothing is checked).
    pub fn new(shape: Vec<i64>, strides: Vec<i64>, offset: i64) -> Geometry {
        Geometry {
            shape,
            strides,
            offset,
        }
    }

    /// The number of dims.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Bytes of storage the view reaches into (up to its last element),
    /// for elements of `itemsize` bytes; an error when that overflows.
    pub fn storage_bytes(&self, itemsize: usize) -> Result<usize> {
        if self.shape.contains(&0) {
            return Ok(0);
        }
        let overflow = || Error::new(ErrorKind::Resource, "tensor extent overflows 64 bits");
        let mut last = self.offset;
        for (&size, &stride) in self.shape.iter().zip(&self.strides) {
            last = stride
                .checked_mul(size - 1)
                .and_then(|x| last.checked_add(x))
                .ok_or_else(overflow)?;
        }
        let elements = usize::try_from(last + 1)
            .map_err(|_| Error::new(ErrorKind::Layout, "negative storage extent"))?;
        elements.checked_mul(itemsize).ok_or_else(overflow)
    }

    /// The number of elements: the product of the shape, unchecked (see
    /// [`numel`] for the checked one).
    pub fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    /// The element offset of the multi-index `index` over the leading
    /// dims (as many as it has; the rest at 0): the offset plus each index
    /// times its dim's stride.
    pub fn element_offset(&self, index: &[i64]) -> i64 {
        self.offset
            + index
                .iter()
                .zip(&self.strides)
                .map(|(i, s)| i * s)
                .sum::<i64>()
    }

    /// Whether the strides are row-major for the shape, size-1 dims
    /// ignored (c10's `compute_contiguous`); the offset does not matter.
    pub fn is_contiguous(&self) -> bool {
        is_contiguous(&self.shape, &self.strides)
    }

    fn with(&self, shape: Vec<i64>, strides: Vec<i64>, offset: i64) -> Geometry {
        Geometry {
            shape,
            strides,
            offset,
        }
    }

    /// `Tensor.t()`.
    pub fn t(&self) -> Result<Geometry> {
        if self.rank() > 2 {
            return Err(Error::new(
                ErrorKind::Shape,
                format!(
                    "t() expects a tensor with <= 2 dimensions, but self is {}D",
                    self.rank()
                ),
            ));
        }
        self.transpose(0, if self.rank() < 2 { 0 } else { 1 })
    }

    /// `Tensor.transpose(dim0, dim1)`.
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Result<Geometry> {
        let (a, b) = (wrap_dim(dim0, self.rank())?, wrap_dim(dim1, self.rank())?);
        let (mut shape, mut strides) = (self.shape.clone(), self.strides.clone());
        if self.rank() > 0 {
            shape.swap(a, b);
            strides.swap(a, b);
        }
        Ok(self.with(shape, strides, self.offset))
    }

    /// `Tensor.permute(dims)`.
    pub fn permute(&self, dims: &[i64]) -> Result<Geometry> {
        if dims.len() != self.rank() {
            return Err(Error::new(
                ErrorKind::Shape,
                format!(
                    "permute(): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
                    self.rank(),
                    dims.len()
                ),
            ));
        }
        let mut seen = vec![false; self.rank()];
        let (mut shape, mut strides) = (Vec::new(), Vec::new());
        for &d in dims {
            let d = wrap_dim(d, self.rank())?;
            if std::mem::replace(&mut seen[d], true) {
                return Err(Error::new(
                    ErrorKind::Dim,
                    "permute(): duplicate dims are not allowed.",
                ));
            }
            shape.push(self.shape[d]);
            strides.push(self.strides[d]);
        }
        Ok(self.with(shape, strides, self.offset))
    }

    /// `Tensor.expand(sizes)` (`inferExpandGeometry`); `-1` keeps a size.
    pub fn expand(&self, sizes: &[i64]) -> Result<Geometry> {
        let ndim = sizes.len();
        let tensor_dim = self.rank();
        if ndim < tensor_dim {
            return Err(Error::new(
                ErrorKind::Shape,
                format!(
                    "expand: the number of sizes provided ({ndim}) must be greater or equal to the number of dimensions in the tensor ({tensor_dim})"
                ),
            ));
        }
        let mut shape = vec![0i64; ndim];
        let mut strides = vec![0i64; ndim];
        if tensor_dim == 0 {
            // A zero-dim tensor expands with all-zero strides.
            if let Some(i) = sizes.iter().position(|&s| s < 0) {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!(
                        "The expanded size of the tensor ({}) isn't allowed in a leading, non-existing dimension {i}",
                        sizes[i]
                    ),
                ));
            }
            return Ok(self.with(sizes.to_vec(), strides, self.offset));
        }
        for i in (0..ndim).rev() {
            let offset = ndim - 1 - i;
            let dim = tensor_dim as i64 - 1 - offset as i64;
            let (mut size, mut stride) = if dim >= 0 {
                (self.shape[dim as usize], self.strides[dim as usize])
            } else {
                let below = if i + 1 < ndim {
                    shape[i + 1] * strides[i + 1]
                } else {
                    1
                };
                (1, below)
            };
            let mut target = sizes[i];
            if target == -1 {
                if dim < 0 {
                    return Err(Error::new(
                        ErrorKind::Shape,
                        format!(
                            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                        ),
                    ));
                }
                target = size;
            } else if target < 0 {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!("invalid shape dimension {target}"),
                ));
            }
            if size != target {
                if size != 1 {
                    return Err(Error::new(
                        ErrorKind::Shape,
                        format!(
                            "The expanded size of the tensor ({target}) must match the existing size ({size}) at non-singleton dimension {i}.  Target sizes: {}.  Tensor sizes: {}",
                            format_shape(sizes),
                            format_shape(&self.shape)
                        ),
                    ));
                }
                size = target;
                stride = 0;
            }
            shape[i] = size;
            strides[i] = stride;
        }
        Ok(self.with(shape, strides, self.offset))
    }

    /// `Tensor.unsqueeze(dim)`.
    pub fn unsqueeze(&self, dim: i64) -> Result<Geometry> {
        let d = wrap_dim(dim, self.rank() + 1)?;
        let stride = if d >= self.rank() {
            1
        } else {
            self.shape[d] * self.strides[d]
        };
        let (mut shape, mut strides) = (self.shape.clone(), self.strides.clone());
        shape.insert(d, 1);
        strides.insert(d, stride);
        Ok(self.with(shape, strides, self.offset))
    }

    /// `Tensor.squeeze()` (`dims = None`: every size-1 dim) or
    /// `Tensor.squeeze(dims)` (the listed dims that have size 1).
    pub fn squeeze(&self, dims: Option<&[i64]>) -> Result<Geometry> {
        let mut drop = vec![false; self.rank()];
        match dims {
            None => {
                for (d, flag) in drop.iter_mut().enumerate() {
                    *flag = self.shape[d] == 1;
                }
            }
            Some(dims) => {
                for &d in dims {
                    let d = wrap_dim(d, self.rank())?;
                    if self.rank() > 0 && self.shape[d] == 1 {
                        drop[d] = true;
                    }
                }
            }
        }
        let keep = |d: &usize| !drop[*d];
        let shape = (0..self.rank())
            .filter(keep)
            .map(|d| self.shape[d])
            .collect();
        let strides = (0..self.rank())
            .filter(keep)
            .map(|d| self.strides[d])
            .collect();
        Ok(self.with(shape, strides, self.offset))
    }

    /// `aten.slice(dim, start, end, step)`: start and end clamp to the dim.
    pub fn slice(
        &self,
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    ) -> Result<Geometry> {
        if self.rank() == 0 {
            return Err(Error::new(
                ErrorKind::Dim,
                "slice() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.rank())?;
        if step <= 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                "slice step must be positive",
            ));
        }
        let (start, len) = slice_range(self.shape[d], start, end, step);
        let (mut shape, mut strides) = (self.shape.clone(), self.strides.clone());
        let offset = self.offset + start * strides[d];
        shape[d] = len;
        strides[d] *= step;
        Ok(self.with(shape, strides, offset))
    }

    /// `Tensor.select(dim, index)`.
    pub fn select(&self, dim: i64, index: i64) -> Result<Geometry> {
        if self.rank() == 0 {
            return Err(Error::new(
                ErrorKind::Dim,
                "select() cannot be applied to a 0-dim tensor.",
            ));
        }
        let d = wrap_dim(dim, self.rank())?;
        let size = self.shape[d];
        if index < -size || index >= size {
            return Err(Error::new(
                ErrorKind::Dim,
                format!(
                    "select(): index {index} out of range for tensor of size {} at dimension {d}",
                    format_shape(&self.shape)
                ),
            ));
        }
        let index = if index < 0 { index + size } else { index };
        let (mut shape, mut strides) = (self.shape.clone(), self.strides.clone());
        let offset = self.offset + index * strides[d];
        shape.remove(d);
        strides.remove(d);
        Ok(self.with(shape, strides, offset))
    }

    /// `Tensor.diagonal(offset, dim1, dim2)`: the dims `dim1` and `dim2`
    /// removed and one dim appended that steps along both at once, from
    /// the `offset`-th diagonal (above the main one when positive). An
    /// empty diagonal keeps the input's storage offset, as PyTorch's does.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Result<Geometry> {
        let (d1, d2) = (wrap_dim(dim1, self.rank())?, wrap_dim(dim2, self.rank())?);
        if d1 == d2 {
            return Err(Error::new(
                ErrorKind::Dim,
                format!("diagonal dimensions cannot be identical {dim1}, {dim2}"),
            ));
        }
        let (n1, n2) = (self.shape[d1], self.shape[d2]);
        let len = if offset >= 0 {
            n1.min(n2.saturating_sub(offset))
        } else {
            n1.saturating_add(offset).min(n2)
        }
        .max(0);
        let offset = match (len, offset >= 0) {
            (0, _) => self.offset,
            (_, true) => self.offset + offset * self.strides[d2],
            (_, false) => self.offset - offset * self.strides[d1],
        };
        let keep = |d: &usize| *d != d1 && *d != d2;
        let mut shape: Vec<i64> = (0..self.rank())
            .filter(keep)
            .map(|d| self.shape[d])
            .collect();
        let mut strides: Vec<i64> = (0..self.rank())
            .filter(keep)
            .map(|d| self.strides[d])
            .collect();
        shape.push(len);
        strides.push(self.strides[d1] + self.strides[d2]);
        Ok(self.with(shape, strides, offset))
    }

    /// `Tensor.unfold(dimension, size, step)`: the windows of `size`
    /// elements every `step` along `dimension`, the window's elements in a
    /// new last dim (a zero-dim tensor is one window of its element, or
    /// none).
    pub fn unfold(&self, dimension: i64, size: i64, step: i64) -> Result<Geometry> {
        let d = wrap_dim(dimension, self.rank())?;
        let (dim_size, dim_stride) = if self.rank() == 0 {
            (1, 1)
        } else {
            (self.shape[d], self.strides[d])
        };
        if size > dim_size {
            return Err(Error::new(
                ErrorKind::Shape,
                format!(
                    "maximum size for tensor at dimension {d} is {dim_size} but size is {size}"
                ),
            ));
        }
        if size < 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("size is {size} but must be >= 0"),
            ));
        }
        if step <= 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("step is {step} but must be > 0"),
            ));
        }
        let (mut shape, mut strides) = (self.shape.clone(), self.strides.clone());
        if self.rank() > 0 {
            shape[d] = (dim_size - size) / step + 1;
            strides[d] *= step;
        }
        shape.push(size);
        strides.push(dim_stride);
        Ok(self.with(shape, strides, self.offset))
    }

    /// `Tensor.as_strided(size, stride, storage_offset)`: any geometry over
    /// the same storage (`storage_offset` defaults to this view's), which
    /// must lie within its `storage` elements (`None` for no check, where
    /// the caller cannot know the storage and checked it already), with
    /// PyTorch's checks and messages (`setStorage`'s bounds check).
    pub fn as_strided(
        &self,
        size: &[i64],
        stride: &[i64],
        storage_offset: Option<i64>,
        storage: Option<(i64, usize)>,
    ) -> Result<Geometry> {
        let offset = storage_offset.unwrap_or(self.offset);
        if size.len() != stride.len() {
            return Err(Error::new(
                ErrorKind::Shape,
                "mismatch in length of strides and shape",
            ));
        }
        if stride.iter().any(|&s| s < 0) {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!(
                    "as_strided: Negative strides are not supported at the moment, got strides: {}",
                    format_shape(stride)
                ),
            ));
        }
        // PyTorch's computeStorageNbytes: 0 for an empty view, else the
        // byte just past its last element.
        let overflowed = || {
            Error::new(
                ErrorKind::Shape,
                format!(
                    "Storage size calculation overflowed with sizes={} and strides={}",
                    format_shape(size),
                    format_shape(stride)
                ),
            )
        };
        let mut extent = 1i64;
        for (&n, &s) in size.iter().zip(stride) {
            if n == 0 {
                extent = 0;
                break;
            }
            let reach = n
                .checked_sub(1)
                .filter(|r| *r >= 0)
                .and_then(|r| r.checked_mul(s))
                .ok_or_else(overflowed)?;
            extent = extent.checked_add(reach).ok_or_else(overflowed)?;
        }
        if let (Some((elements, itemsize)), true) = (storage, extent > 0) {
            let item = itemsize as i64;
            let needed = offset
                .checked_add(extent)
                .and_then(|x| x.checked_mul(item))
                .ok_or_else(overflowed)?;
            if needed > elements.saturating_mul(item) {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!(
                        "setStorage: sizes {}, strides {}, storage offset {offset}, and itemsize {item} requiring a storage size of {needed} are out of bounds for storage of size {}",
                        format_shape(size),
                        format_shape(stride),
                        elements * item
                    ),
                ));
            }
        }
        // Checked after the bounds, as PyTorch's setStrided does.
        if offset < 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("Tensor: invalid storage offset {offset}"),
            ));
        }
        Ok(self.with(size.to_vec(), stride.to_vec(), offset))
    }

    /// The elements of storage a tensor of this geometry that owns its
    /// storage holds: up to its last element (PyTorch allocates a fresh
    /// tensor's storage that size; 0 when it has no elements).
    pub fn own_storage(&self) -> i64 {
        if self.shape.contains(&0) {
            return 0;
        }
        self.offset
            + self
                .shape
                .iter()
                .zip(&self.strides)
                .map(|(&n, &s)| (n - 1) * s)
                .sum::<i64>()
            + 1
    }

    /// `Tensor.flatten(start_dim, end_dim)`.
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Result<Reshaped> {
        let start = wrap_dim(start_dim, self.rank())?;
        let end = wrap_dim(end_dim, self.rank())?;
        if start > end {
            return Err(Error::new(
                ErrorKind::Dim,
                "flatten() has invalid args: start_dim cannot come after end_dim",
            ));
        }
        if self.rank() == 0 {
            return self.reshape(&[1]);
        }
        if start == end {
            return Ok(Reshaped::View(self.clone()));
        }
        let mut shape: Vec<i64> = self.shape[..start].to_vec();
        shape.push(self.shape[start..=end].iter().product());
        shape.extend_from_slice(&self.shape[end + 1..]);
        self.reshape(&shape)
    }

    /// `Tensor.view(shape)`: an error when the strides do not allow it.
    pub fn view(&self, shape: &[i64]) -> Result<Geometry> {
        let shape = infer_size(shape, self.numel())?;
        match view_strides(&self.shape, &self.strides, &shape) {
            Some(strides) => Ok(self.with(shape, strides, self.offset)),
            None => Err(Error::new(
                ErrorKind::Layout,
                "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
            )),
        }
    }

    /// `Tensor.reshape(shape)`: a view when possible, else a contiguous copy.
    pub fn reshape(&self, shape: &[i64]) -> Result<Reshaped> {
        let shape = infer_size(shape, self.numel())?;
        Ok(match view_strides(&self.shape, &self.strides, &shape) {
            Some(strides) => Reshaped::View(self.with(shape, strides, self.offset)),
            None => Reshaped::Copy(Geometry::contiguous(&shape)),
        })
    }

    /// `Tensor.contiguous(memory_format)`: itself when already contiguous in
    /// that format, else a copy laid out in it.
    pub fn contiguous_in(&self, format: MemoryFormat) -> Result<Reshaped> {
        if format.is_contiguous(&self.shape, &self.strides) {
            return Ok(Reshaped::View(self.clone()));
        }
        // Checked after the no-op case, as PyTorch does.
        if format == MemoryFormat::Preserve {
            return Err(Error::new(
                ErrorKind::Layout,
                "preserve memory format is unsupported by the contiguous operator",
            ));
        }
        Ok(Reshaped::Copy(self.with(
            self.shape.clone(),
            format.strides(&self.shape)?,
            0,
        )))
    }

    /// `Tensor.clone(memory_format)` and `empty_like`: always a copy.
    pub fn clone_as(&self, format: MemoryFormat) -> Result<Geometry> {
        Ok(self.with(
            self.shape.clone(),
            like_strides(&self.shape, &self.strides, format)?,
            0,
        ))
    }

    /// `Tensor.to(dtype?, device?, memory_format, copy)`: returns the tensor
    /// itself when nothing changes (`changes_type` says whether dtype or
    /// device differ) and the format is preserve or already the suggested
    /// one; otherwise a copy laid out per the format.
    pub fn to_layout(
        &self,
        format: MemoryFormat,
        changes_type: bool,
        copy: bool,
    ) -> Result<Reshaped> {
        let format_kept = format == MemoryFormat::Preserve
            || suggest_memory_format(&self.shape, &self.strides) == format;
        if !changes_type && !copy && format_kept {
            return Ok(Reshaped::View(self.clone()));
        }
        Ok(Reshaped::Copy(self.clone_as(format)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposed_view_fails_reshape_copies() {
        let g = Geometry::contiguous(&[2, 3]).t().unwrap();
        assert_eq!(g.strides, vec![1, 3]);
        assert!(g.view(&[6]).is_err());
        assert!(!g.reshape(&[6]).unwrap().is_view());
    }

    #[test]
    fn slices_clamp_like_pytorch() {
        let g = Geometry::contiguous(&[5])
            .slice(0, Some(1), None, 2)
            .unwrap();
        assert_eq!((g.shape, g.strides, g.offset), (vec![2], vec![2], 1));
        let g = Geometry::contiguous(&[5])
            .slice(0, Some(-2), Some(100), 1)
            .unwrap();
        assert_eq!((g.shape[0], g.offset), (2, 3));
    }

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shapes(&[4, 1], &[3]).unwrap(), vec![4, 3]);
        assert!(broadcast_shapes(&[2], &[3]).is_err());
        assert_eq!(infer_size(&[2, -1], 6).unwrap(), vec![2, 3]);
    }
}
