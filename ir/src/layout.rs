//! Layouts, memory formats, and the stride rules PyTorch applies when it
//! allocates a result.
//!
//! PyTorch rules, each named where it is implemented:
//! - `torch.layout` (strided, sparse_coo) and `torch.memory_format`
//!   (contiguous, channels_last, channels_last_3d, preserve);
//! - the strides a format implies (`contiguous_strides`,
//!   `get_channels_last_strides_2d/3d`);
//! - `is_contiguous(memory_format)` (`compute_contiguous`,
//!   `compute_channels_last_contiguous_2d/3d`);
//! - `suggest_memory_format` (`is_channels_last_strides_2d/3d`);
//! - `is_non_overlapping_and_dense` and `infer_dense_strides`;
//! - preserve_format for `clone`, `empty_like` and `to`;
//! - TensorIterator's output strides for pointwise ops.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind, Result};

/// `torch.layout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Layout {
    /// `torch.strided`: dense elements addressed by shape, strides and
    /// offset; the default, and the only layout Kiln computes on.
    #[default]
    Strided,
    /// `torch.sparse_coo`: a sparse tensor as coordinates and values; no
    /// Kiln op computes on it.
    SparseCoo,
}

/// `torch.memory_format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum MemoryFormat {
    /// `torch.contiguous_format`: row-major, the last dim innermost.
    #[default]
    Contiguous,
    /// `torch.channels_last`: a 4-d NCHW tensor laid out as NHWC.
    ChannelsLast,
    /// `torch.channels_last_3d`: a 5-d NCDHW tensor laid out as NDHWC.
    ChannelsLast3d,
    /// `torch.preserve_format`: keep the input's strides where they are
    /// non-overlapping and dense, else its dim order. Only ops whose result
    /// follows an input take it (`clone`, `to`, `empty_like`); it has no
    /// strides of its own.
    Preserve,
}

impl MemoryFormat {
    /// Every memory format, in declaration order.
    pub const ALL: [MemoryFormat; 4] = [
        MemoryFormat::Contiguous,
        MemoryFormat::ChannelsLast,
        MemoryFormat::ChannelsLast3d,
        MemoryFormat::Preserve,
    ];

    /// The name `.kir` writes (`channels_last`): PyTorch's, without the
    /// `torch.` prefix and the `_format` suffix.
    pub fn name(self) -> &'static str {
        match self {
            MemoryFormat::Contiguous => "contiguous",
            MemoryFormat::ChannelsLast => "channels_last",
            MemoryFormat::ChannelsLast3d => "channels_last_3d",
            MemoryFormat::Preserve => "preserve",
        }
    }

    /// The rank a format requires, if any.
    pub fn required_rank(self) -> Option<usize> {
        match self {
            MemoryFormat::ChannelsLast => Some(4),
            MemoryFormat::ChannelsLast3d => Some(5),
            _ => None,
        }
    }

    /// The dims from outermost to innermost in memory for a channels-last
    /// format (N, spatial..., C), or `None` for the others.
    fn channels_last_order(self) -> Option<&'static [usize]> {
        match self {
            MemoryFormat::ChannelsLast => Some(&[0, 2, 3, 1]),
            MemoryFormat::ChannelsLast3d => Some(&[0, 2, 3, 4, 1]),
            _ => None,
        }
    }

    /// Fails unless this format can describe a tensor of `rank` dims.
    pub fn check_rank(self, rank: usize) -> Result<()> {
        match self.required_rank() {
            Some(r) if r != rank => Err(Error::new(
                ErrorKind::Layout,
                format!("required rank {r} tensor to use {} format", self.name()),
            )),
            _ => Ok(()),
        }
    }

    /// The strides of a fresh tensor of this shape in this format
    /// (`torch.empty(shape, memory_format=self)`).
    pub fn strides(self, shape: &[i64]) -> Result<Vec<i64>> {
        self.check_rank(shape.len())?;
        match self.channels_last_order() {
            Some(order) => Ok(strides_in_order(shape, order, false)),
            None if self == MemoryFormat::Preserve => Err(Error::new(
                ErrorKind::Layout,
                "unsupported memory format Preserve",
            )),
            None => Ok(contiguous_strides(shape)),
        }
    }

    /// `is_contiguous(memory_format=self)`; `preserve` answers like the plain
    /// contiguity check, as PyTorch does.
    pub fn is_contiguous(self, shape: &[i64], strides: &[i64]) -> bool {
        match self.channels_last_order() {
            Some(order) => shape.len() == order.len() && is_dense_in_order(shape, strides, order),
            None => is_contiguous(shape, strides),
        }
    }
}

impl fmt::Display for MemoryFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MemoryFormat {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let s = s.strip_prefix("torch.").unwrap_or(s);
        let s = s.strip_suffix("_format").unwrap_or(s);
        MemoryFormat::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            Error::new(
                ErrorKind::Attribute,
                format!("unknown memory format '{s}' (expected contiguous, channels_last, channels_last_3d or preserve)"),
            )
        })
    }
}

/// Row-major strides, each dim's size counted as at least 1
/// (c10's `contiguous_strides`).
pub fn contiguous_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![0; shape.len()];
    let mut next = 1i64;
    for d in (0..shape.len()).rev() {
        strides[d] = next;
        next = next.saturating_mul(shape[d].max(1));
    }
    strides
}

/// Strides that lay `shape` out densely with `order[0]` outermost. With
/// `clamp_sizes`, a size-0 dim counts as 1; channels-last formats do not
/// clamp (c10's `get_channels_last_strides_*`).
fn strides_in_order(shape: &[i64], order: &[usize], clamp_sizes: bool) -> Vec<i64> {
    let mut strides = vec![0; shape.len()];
    let mut next = 1i64;
    for &d in order.iter().rev() {
        strides[d] = next;
        let size = if clamp_sizes {
            shape[d].max(1)
        } else {
            shape[d]
        };
        next = next.saturating_mul(size);
    }
    strides
}

/// c10's `compute_contiguous`: row-major, ignoring size-1 dims; an empty
/// tensor is contiguous.
pub fn is_contiguous(shape: &[i64], strides: &[i64]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let order: Vec<usize> = (0..shape.len()).collect();
    is_dense_in_order(shape, strides, &order)
}

/// Whether each dim not of size 1 has the stride that laying the dims out in
/// `order` (outermost first) gives (c10's `compute_channels_last_contiguous_*`).
fn is_dense_in_order(shape: &[i64], strides: &[i64], order: &[usize]) -> bool {
    let mut expected = 1i64;
    for &d in order.iter().rev() {
        if shape[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected = expected.saturating_mul(shape[d]);
        }
    }
    true
}

/// c10's `is_channels_last_strides_2d/3d`: do the strides *look like* a
/// channels-last layout (size-1 dims allowed any stride that keeps the order)?
fn is_channels_last_like(shape: &[i64], strides: &[i64], order: &[usize]) -> bool {
    if shape.len() != order.len() || strides[1] == 0 {
        return false;
    }
    let mut min = 0i64;
    for &d in order.iter().rev() {
        if shape[d] == 0 || strides[d] < min {
            return false;
        }
        // N111 tensors with equal strides fall back to contiguous.
        if d == 0 && min == strides[1] {
            return false;
        }
        min = strides[d];
        if shape[d] > 1 {
            min = min.saturating_mul(shape[d]);
        }
    }
    true
}

/// `Tensor.suggest_memory_format()`: channels_last(_3d) when the strides
/// look like it, else contiguous.
pub fn suggest_memory_format(shape: &[i64], strides: &[i64]) -> MemoryFormat {
    for format in [MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d] {
        let order = format
            .channels_last_order()
            .expect("channels-last formats have an order");
        if is_channels_last_like(shape, strides, order) {
            return format;
        }
    }
    MemoryFormat::Contiguous
}

/// c10's `is_non_overlapping_and_dense`: the elements fill a block of memory
/// exactly, in some order of the dims.
pub fn is_non_overlapping_and_dense(shape: &[i64], strides: &[i64]) -> bool {
    // c10 answers true for contiguous tensors first (empty ones included).
    if is_contiguous(shape, strides) {
        return true;
    }
    let rank = shape.len();
    if rank == 1 {
        return shape[0] < 2 || strides[0] == 1;
    }
    let mut perm: Vec<usize> = (0..rank).collect();
    // Sort by stride, size-0/1 dims last (they never matter).
    perm.sort_by(|&a, &b| {
        let key = |d: usize| (shape[d] < 2, strides[d]);
        key(a).cmp(&key(b))
    });
    let mut required = 1i64;
    for d in perm {
        if shape[d] < 2 {
            return true;
        }
        if strides[d] != required {
            return false;
        }
        required = required.saturating_mul(shape[d]);
    }
    true
}

/// TensorIterator's dim comparison for one operand: `Some(Greater)` when dim
/// `a` should be placed after (outside of) dim `b`.
fn compare_dims(shape: &[i64], strides: &[i64], a: usize, b: usize) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering::*;
    let (sa, sb) = (strides[a], strides[b]);
    if sa == 0 || sb == 0 {
        return None;
    }
    match sa.cmp(&sb) {
        Equal if shape[a] > shape[b] => Some(Greater),
        Equal => None,
        other => Some(other),
    }
}

/// TensorIterator's insertion sort of dims from innermost to outermost, over
/// several operands: the first operand with a strict opinion decides; dims
/// nobody orders keep their row-major order. `strides[i]` are byte strides of
/// operand `i`, already broadcast to `shape` (0 for broadcast dims).
fn iteration_order(shape: &[i64], strides: &[Vec<i64>]) -> Vec<usize> {
    use std::cmp::Ordering::*;
    let rank = shape.len();
    let mut perm: Vec<usize> = (0..rank).rev().collect();
    let opinion = |a: usize, b: usize| strides.iter().find_map(|s| compare_dims(shape, s, a, b));
    for i in 1..rank {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            match opinion(perm[d0], perm[d1]) {
                Some(Greater) => {
                    perm.swap(d0, d1);
                    d1 = d0;
                }
                Some(Less) => break,
                _ => {}
            }
        }
    }
    perm
}

/// Strides that lay out `shape` densely in the iteration order `perm`
/// (innermost first); a permutation that is plain row-major gives contiguous
/// strides. Sizes multiply unclamped, as TensorIterator's `compatible_stride`.
fn strides_for_perm(shape: &[i64], perm: &[usize]) -> Vec<i64> {
    let rank = shape.len();
    let row_major = perm.iter().enumerate().all(|(j, &d)| d == rank - 1 - j);
    if row_major {
        return contiguous_strides(shape);
    }
    let order: Vec<usize> = perm.iter().rev().copied().collect();
    strides_in_order(shape, &order, false)
}

/// c10's `infer_dense_strides`: dense strides that keep the input's dim
/// order, treating zero strides as "no opinion".
pub fn infer_dense_strides(shape: &[i64], strides: &[i64]) -> Vec<i64> {
    match shape.len() {
        0 => vec![],
        1 => vec![1],
        _ => {
            let perm = iteration_order(shape, &[strides.to_vec()]);
            let order: Vec<usize> = perm.iter().rev().copied().collect();
            strides_in_order(shape, &order, true)
        }
    }
}

/// One input of a pointwise op, as TensorIterator sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IterOperand<'a> {
    /// The input's own shape, which broadcasts to the output's.
    pub shape: &'a [i64],
    /// The input's strides, in elements.
    pub strides: &'a [i64],
    /// Bytes per element: TensorIterator compares strides in bytes.
    pub itemsize: usize,
}

/// The strides TensorIterator gives the output of a pointwise op over
/// `inputs`, whose shapes broadcast to `shape`.
///
/// Fast paths first: all inputs of the output's shape and all contiguous →
/// contiguous; all channels_last → channels_last; all non-overlapping and
/// dense with equal strides → those strides. Otherwise the dims are sorted by
/// the inputs' byte strides (broadcast dims have no opinion) and the output is
/// laid out densely in that order.
pub fn pointwise_output_strides(shape: &[i64], inputs: &[IterOperand<'_>]) -> Vec<i64> {
    let same_shape = inputs.iter().all(|op| op.shape == shape);
    if same_shape && !inputs.is_empty() {
        if inputs.iter().all(|op| is_contiguous(op.shape, op.strides)) {
            return contiguous_strides(shape);
        }
        if inputs
            .iter()
            .all(|op| MemoryFormat::ChannelsLast.is_contiguous(op.shape, op.strides))
        {
            return strides_in_order(shape, &[0, 2, 3, 1], false);
        }
        let dense = inputs
            .iter()
            .all(|op| is_non_overlapping_and_dense(op.shape, op.strides));
        if dense && inputs.iter().all(|op| op.strides == inputs[0].strides) {
            return inputs[0].strides.to_vec();
        }
    }
    if shape.len() <= 1 {
        return contiguous_strides(shape);
    }
    let byte_strides: Vec<Vec<i64>> = inputs
        .iter()
        .map(|op| broadcast_byte_strides(shape, op))
        .collect();
    let perm = iteration_order(shape, &byte_strides);
    strides_for_perm(shape, &perm)
}

/// An operand's strides in bytes, aligned to the output's trailing dims, with
/// 0 for dims it broadcasts along (TensorIterator's `compute_strides`).
fn broadcast_byte_strides(shape: &[i64], op: &IterOperand<'_>) -> Vec<i64> {
    let offset = shape.len() - op.shape.len();
    let mut out = vec![0; shape.len()];
    for (i, (&size, &stride)) in op.shape.iter().zip(op.strides).enumerate() {
        out[offset + i] = if size == 1 && shape[offset + i] != 1 {
            0
        } else {
            stride * op.itemsize as i64
        };
    }
    out
}

/// The strides of `clone`/`empty_like`/`to` with a memory format, from an
/// input's shape and strides. `preserve` copies the strides of a
/// non-overlapping and dense input, else infers dense strides keeping the
/// input's dim order.
pub fn like_strides(shape: &[i64], strides: &[i64], format: MemoryFormat) -> Result<Vec<i64>> {
    match format {
        MemoryFormat::Preserve if is_non_overlapping_and_dense(shape, strides) => {
            Ok(strides.to_vec())
        }
        MemoryFormat::Preserve => Ok(infer_dense_strides(shape, strides)),
        other => other.strides(shape),
    }
}

/// The strides of a reduction's result (sum, mean, amax, argmax, ... with or
/// without keepdim) and of softmax, log_softmax and layer_norm: PyTorch's CPU
/// kernels allocate these contiguous whatever the input's layout.
pub fn reduction_output_strides(shape: &[i64]) -> Vec<i64> {
    contiguous_strides(shape)
}

/// The memory format of `cat`'s result (ATen's
/// `compute_output_memory_format`): the format every input suggests, or
/// contiguous when they disagree or any suggests contiguous.
pub fn cat_memory_format<'a>(
    inputs: impl IntoIterator<Item = (&'a [i64], &'a [i64])>,
) -> MemoryFormat {
    let mut format = None;
    for (shape, strides) in inputs {
        let f = suggest_memory_format(shape, strides);
        if f == MemoryFormat::Contiguous || format.is_some_and(|g| g != f) {
            return MemoryFormat::Contiguous;
        }
        format = Some(f);
    }
    format.unwrap_or(MemoryFormat::Contiguous)
}

/// How one result of an op is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultLayout {
    /// A view of the first operand's storage.
    View(crate::view::Geometry),
    /// A fresh buffer with these strides.
    Fresh(Vec<i64>),
}

impl ResultLayout {
    /// The result's strides.
    pub fn strides(&self) -> &[i64] {
        match self {
            ResultLayout::View(g) => &g.strides,
            ResultLayout::Fresh(s) => s,
        }
    }
}

/// One operand as the layout rules see it: a tensor's geometry (with its
/// storage offset) and type, a scalar literal (a zero-dim CPU tensor to
/// TensorIterator), or an absent optional tensor.
#[derive(Clone, Copy, Debug)]
pub enum LayoutArg<'a> {
    /// A tensor.
    Tensor(&'a crate::view::Geometry, &'a crate::types::TensorType),
    /// A scalar literal.
    Scalar,
    /// `none`.
    None,
}

/// The layouts of `op`'s results, of types `results`, over operands
/// `args`, by the rule the op table gives the op.
pub fn result_layouts(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    use crate::ops::def::LayoutRule;
    match op.def().rules.layout {
        LayoutRule::Pointwise => Ok(results
            .iter()
            .map(|r| ResultLayout::Fresh(pointwise_layout(args, &r.shape)))
            .collect()),
        LayoutRule::Contiguous => Ok(results
            .iter()
            .map(|r| ResultLayout::Fresh(contiguous_strides(&r.shape)))
            .collect()),
        LayoutRule::Custom(f) => f(op, args, results),
    }
}

/// TensorIterator's output strides for a pointwise result of `shape`.
pub(crate) fn pointwise_layout(args: &[LayoutArg<'_>], shape: &[i64]) -> Vec<i64> {
    let scalar = crate::view::Geometry::contiguous(&[]);
    let operands: Vec<IterOperand> = args
        .iter()
        .filter_map(|a| match a {
            LayoutArg::Tensor(g, ty) => Some(IterOperand {
                shape: &g.shape,
                strides: &g.strides,
                itemsize: ty.dtype.itemsize(),
            }),
            // Python numbers are wrapped as 8-byte zero-dim tensors.
            LayoutArg::Scalar => Some(IterOperand {
                shape: &scalar.shape,
                strides: &scalar.strides,
                itemsize: 8,
            }),
            LayoutArg::None => None,
        })
        .collect();
    pointwise_output_strides(shape, &operands)
}

pub(crate) fn first_geometry<'a>(
    args: &[LayoutArg<'a>],
) -> Result<(&'a crate::view::Geometry, &'a crate::types::TensorType)> {
    match args.first() {
        Some(LayoutArg::Tensor(g, ty)) => Ok((g, ty)),
        _ => Err(Error::new(
            ErrorKind::Layout,
            "the layout rule needs a tensor first operand",
        )),
    }
}

fn from_reshaped(r: crate::view::Reshaped) -> ResultLayout {
    match r {
        crate::view::Reshaped::View(g) => ResultLayout::View(g),
        crate::view::Reshaped::Copy(g) => ResultLayout::Fresh(g.strides),
    }
}

/// A view op's layout: PyTorch's view geometry over the operand (reshape
/// and flatten copy where no view exists).
pub fn view_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    _: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    use crate::ops::Op;
    let (g, _) = first_geometry(args)?;
    if let Some(view) = crate::ops::derived::primitive_view(op, &g.shape)? {
        return view_layout(&view, args, &[]);
    }
    let layout = match op {
        Op::Reshape { shape } => from_reshaped(g.reshape(shape)?),
        Op::Flatten { start_dim, end_dim } => from_reshaped(g.flatten(*start_dim, *end_dim)?),
        Op::View { shape } => ResultLayout::View(g.view(shape)?),
        Op::Permute { dims } => ResultLayout::View(g.permute(dims)?),
        Op::Transpose { dim0, dim1 } => ResultLayout::View(g.transpose(*dim0, *dim1)?),
        Op::T => ResultLayout::View(g.t()?),
        Op::Expand { shape } => ResultLayout::View(g.expand(shape)?),
        Op::Squeeze { dims } => ResultLayout::View(g.squeeze(dims.as_deref())?),
        Op::Unsqueeze { dim } => ResultLayout::View(g.unsqueeze(*dim)?),
        Op::Slice {
            dim,
            start,
            end,
            step,
        } => ResultLayout::View(g.slice(*dim, *start, *end, *step)?),
        Op::Select { dim, index } => ResultLayout::View(g.select(*dim, *index)?),
        Op::Diagonal { offset, dim1, dim2 } => {
            ResultLayout::View(g.diagonal(*offset, *dim1, *dim2)?)
        }
        Op::Unfold {
            dimension,
            size,
            step,
        } => ResultLayout::View(g.unfold(*dimension, *size, *step)?),
        // Inference checked the bounds against the operand's storage,
        // which a geometry does not know.
        Op::AsStrided {
            size,
            stride,
            storage_offset,
        } => ResultLayout::View(g.as_strided(size, stride, *storage_offset, None)?),
        other => {
            return Err(Error::new(
                ErrorKind::Layout,
                format!("{} is not a view op", other.name()),
            ));
        }
    };
    Ok(vec![layout])
}

/// `broadcast_tensors` and `meshgrid`: each result a view of its own
/// operand, through that operand's primitive views in turn.
pub fn view_list_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    _: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let operands: Vec<(&crate::view::Geometry, &crate::types::TensorType)> = args
        .iter()
        .filter_map(|a| match a {
            LayoutArg::Tensor(g, ty) => Some((*g, *ty)),
            _ => None,
        })
        .collect();
    let types: Vec<&crate::types::TensorType> = operands.iter().map(|(_, t)| *t).collect();
    let views = crate::infer::view_lists(op, &types)?;
    operands
        .iter()
        .zip(views)
        .map(|((g, ty), views)| {
            let mut g = (*g).clone();
            for view in &views {
                let arg = [LayoutArg::Tensor(&g, ty)];
                g = match view_layout(view, &arg, &[])?.pop() {
                    Some(ResultLayout::View(v)) => v,
                    _ => {
                        return Err(Error::new(
                            ErrorKind::Layout,
                            format!("{} of a 0-D or 1-D tensor is a view", view.name()),
                        ));
                    }
                };
            }
            Ok(ResultLayout::View(g))
        })
        .collect()
}

/// `zeros_like`, `ones_like`, `full_like` and `empty_like`: `empty_like`'s
/// strides in the memory format asked for (preserve: the input's strides
/// when dense, else dense strides in its dims' order).
pub fn like_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    _: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    use crate::ops::Op;
    let (g, _) = first_geometry(args)?;
    let format = match op {
        Op::ZerosLike { memory_format, .. }
        | Op::OnesLike { memory_format, .. }
        | Op::FullLike { memory_format, .. }
        | Op::EmptyLike { memory_format, .. } => *memory_format,
        other => {
            return Err(Error::new(
                ErrorKind::Layout,
                format!("{} is not a *_like op", other.name()),
            ));
        }
    };
    Ok(vec![ResultLayout::Fresh(like_strides(
        &g.shape, &g.strides, format,
    )?)])
}

/// `empty` (its memory format's strides) and `empty_strided` (its
/// strides, which inference checked are dense).
pub fn empty_layout(
    op: &crate::ops::Op,
    _: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    use crate::ops::Op;
    let shape = results.first().map(|r| &r.shape[..]).unwrap_or(&[]);
    let strides = match op {
        Op::Empty { memory_format, .. } => memory_format.strides(shape)?,
        Op::EmptyStrided { stride, .. } => stride.clone(),
        other => {
            return Err(Error::new(
                ErrorKind::Layout,
                format!("{} is not empty or empty_strided", other.name()),
            ));
        }
    };
    Ok(vec![ResultLayout::Fresh(strides)])
}

/// A fresh result in its input's suggested memory format (channels_last
/// stays channels_last, anything else is row-major): `roll` and
/// `constant_pad_nd`, which PyTorch computes by joining slices.
pub fn suggested_format_layout(
    _: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let (g, _) = first_geometry(args)?;
    let format = cat_memory_format([(&g.shape[..], &g.strides[..])]);
    results
        .iter()
        .map(|r| Ok(ResultLayout::Fresh(format.strides(&r.shape)?)))
        .collect()
}

/// Results laid out as `empty_like(input)` (a preserve_format copy):
/// `cast` is `Tensor.to(dtype)`, which keeps a dense operand's strides
/// exactly (TensorIterator would not for size-1 dims), so an inserted cast
/// never changes its consumer's layout; `sort`'s values and positions.
pub fn preserve_copy_layout(
    _: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let (g, _) = first_geometry(args)?;
    let strides = g.clone_as(MemoryFormat::Preserve)?.strides;
    Ok(results
        .iter()
        .map(|_| ResultLayout::Fresh(strides.clone()))
        .collect())
}

/// `contiguous`, `clone` and `to`: the operand itself where PyTorch
/// returns it, else a copy in the format asked for.
pub fn copy_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    _: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    use crate::ops::Op;
    let (g, ty) = first_geometry(args)?;
    let layout = match op {
        Op::Contiguous { memory_format } => from_reshaped(g.contiguous_in(*memory_format)?),
        Op::Clone {
            strides: Some(strides),
            ..
        } => ResultLayout::Fresh(strides.clone()),
        Op::Clone { memory_format, .. } => ResultLayout::Fresh(g.clone_as(*memory_format)?.strides),
        Op::To {
            dtype,
            device,
            memory_format,
            copy,
        } => {
            let changes = dtype.is_some_and(|d| d != ty.dtype)
                || device.is_some_and(|d| d.for_tensor() != ty.device);
            from_reshaped(g.to_layout(*memory_format, changes, *copy)?)
        }
        other => {
            return Err(Error::new(
                ErrorKind::Layout,
                format!("{} is not a copy", other.name()),
            ));
        }
    };
    Ok(vec![layout])
}

/// `cat`: the memory format its inputs agree on ([`cat_memory_format`]).
pub fn cat_layout(
    _: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let format = cat_memory_format(args.iter().filter_map(|a| match a {
        LayoutArg::Tensor(g, _) => Some((&g.shape[..], &g.strides[..])),
        _ => None,
    }));
    results
        .iter()
        .map(|r| Ok(ResultLayout::Fresh(format.strides(&r.shape)?)))
        .collect()
}

/// `index` (advanced indexing): TensorIterator's strides over the input
/// restrided to the result's shape and the index tensors lined up with it
/// ([`AdvancedIndex::result_strides`](crate::advanced_index::AdvancedIndex::result_strides)).
pub fn index_layout(
    _: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    _: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let (g, ty) = first_geometry(args)?;
    let entries: Vec<crate::advanced_index::IndexEntry<'_>> = args[1..]
        .iter()
        .map(|a| match a {
            LayoutArg::Tensor(g, t) => Some((&g.shape[..], t.dtype)),
            _ => None,
        })
        .collect();
    let index = crate::advanced_index::AdvancedIndex::new("index", &g.shape, &entries)?;
    let index_strides: Vec<(&[i64], &[i64], usize)> = args[1..]
        .iter()
        .filter_map(|a| match a {
            LayoutArg::Tensor(g, t) => Some((&g.shape[..], &g.strides[..], t.dtype.itemsize())),
            _ => None,
        })
        .collect();
    Ok(vec![ResultLayout::Fresh(index.result_strides(
        &g.strides,
        ty.dtype.itemsize(),
        &index_strides,
    ))])
}

/// `rot90`: a contiguous copy for no turn; else the strides of a flip (a
/// preserve-format copy), transposed in the plane for odd turns, as
/// PyTorch's `flip(...).transpose(...)` gives.
pub fn rot90_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    _: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let (g, _) = first_geometry(args)?;
    let (k, d0, d1) = crate::infer::rot90_plane(op, g.rank())?;
    let mut strides = if k == 0 {
        contiguous_strides(&g.shape)
    } else {
        g.clone_as(MemoryFormat::Preserve)?.strides
    };
    if k % 2 == 1 {
        strides.swap(d0, d1);
    }
    Ok(vec![ResultLayout::Fresh(strides)])
}

/// The layouts of an instruction's results from its operands' geometries
/// and the dtypes inference converts them to
/// ([`Inferred::operand_dtypes`](crate::infer::Inferred)).
///
/// On the CPU, TensorIterator converts an operand whose dtype differs from
/// the computation dtype with `.to(dtype)` (a preserve_format copy) before
/// it lays out a pointwise result, so the result's layout is computed from
/// the converted operand: what the promotion pass makes explicit. This
/// gives the same layout whether or not promotion has run.
pub fn instruction_layouts(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    operand_dtypes: &[Option<crate::dtype::DType>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    use crate::ops::def::LayoutRule;
    if !matches!(op.def().rules.layout, LayoutRule::Pointwise) {
        return result_layouts(op, args, results);
    }
    let mut converted: Vec<Option<(crate::view::Geometry, crate::types::TensorType)>> =
        Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        let target = operand_dtypes.get(i).copied().flatten();
        converted.push(match (a, target) {
            (LayoutArg::Tensor(g, ty), Some(d)) if d != ty.dtype && ty.device.is_cpu() => {
                let strides = g.clone_as(MemoryFormat::Preserve)?.strides;
                Some((
                    crate::view::Geometry::new(g.shape.clone(), strides, 0),
                    (*ty).clone().with_dtype(d),
                ))
            }
            _ => None,
        });
    }
    let args: Vec<LayoutArg<'_>> = args
        .iter()
        .zip(&converted)
        .map(|(a, c)| match c {
            Some((g, ty)) => LayoutArg::Tensor(g, ty),
            None => *a,
        })
        .collect();
    result_layouts(op, &args, results)
}

/// `stack`, as PyTorch computes it: before the last dim, `cat`'s result
/// along `dim` viewed with that dim split in two; at the end, `cat` of the
/// inputs with a new last dim.
pub fn stack_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let crate::ops::Op::Stack { dim } = op else {
        return Err(Error::new(ErrorKind::Layout, "not a stack"));
    };
    let (first, _) = first_geometry(args)?;
    let rank = first.rank();
    let d = crate::view::wrap_dim(*dim, rank + 1)?;
    let inputs: Vec<crate::view::Geometry> = args
        .iter()
        .filter_map(|a| match a {
            LayoutArg::Tensor(g, _) if d < rank => Some(Ok((*g).clone())),
            LayoutArg::Tensor(g, _) => Some(g.unsqueeze(d as i64)),
            _ => None,
        })
        .collect::<Result<_>>()?;
    let format = cat_memory_format(inputs.iter().map(|g| (&g.shape[..], &g.strides[..])));
    results
        .iter()
        .map(|r| {
            if d == rank {
                return Ok(ResultLayout::Fresh(format.strides(&r.shape)?));
            }
            let mut joined = first.shape.clone();
            joined[d] *= inputs.len() as i64;
            let cat = crate::view::Geometry::new(joined.clone(), format.strides(&joined)?, 0);
            Ok(ResultLayout::Fresh(cat.view(&r.shape)?.strides))
        })
        .collect()
}

/// `unbind`, `split`, `split_with_sizes`, `chunk`: views of the input's
/// pieces.
pub fn split_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    _: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let (g, ty) = first_geometry(args)?;
    if let crate::ops::Op::Unbind { dim } = op {
        let n = g.shape[crate::view::wrap_dim(*dim, g.rank())?];
        return (0..n)
            .map(|i| Ok(ResultLayout::View(g.select(*dim, i)?)))
            .collect();
    }
    let (d, ranges) = crate::infer::split_ranges(op, ty)?;
    ranges
        .into_iter()
        .map(|(start, n)| {
            let piece = g.slice(d as i64, Some(start), Some(start + n), 1)?;
            Ok(ResultLayout::View(piece))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_strides() {
        assert_eq!(contiguous_strides(&[2, 3, 4, 5]), vec![60, 20, 5, 1]);
        assert_eq!(
            MemoryFormat::ChannelsLast.strides(&[2, 3, 4, 5]).unwrap(),
            vec![60, 1, 15, 3]
        );
        assert_eq!(
            MemoryFormat::ChannelsLast.strides(&[2, 0, 4, 5]).unwrap(),
            vec![0, 1, 0, 0]
        );
        assert_eq!(
            MemoryFormat::ChannelsLast
                .strides(&[2, 3])
                .unwrap_err()
                .message(),
            "required rank 4 tensor to use channels_last format"
        );
    }

    #[test]
    fn channels_last_input_gives_channels_last_output() {
        let cl = [60, 1, 15, 3];
        let ct = [60, 20, 5, 1];
        let shape = [2, 3, 4, 5];
        let op = |s: &'static [i64]| IterOperand {
            shape: &[2, 3, 4, 5],
            strides: s,
            itemsize: 4,
        };
        let cl: &'static [i64] = Box::leak(Box::new(cl));
        let ct: &'static [i64] = Box::leak(Box::new(ct));
        assert_eq!(
            pointwise_output_strides(&shape, &[op(cl), op(ct)]),
            cl.to_vec()
        );
        assert_eq!(
            pointwise_output_strides(&shape, &[op(ct), op(cl)]),
            ct.to_vec()
        );
    }

    #[test]
    fn dense_and_contiguity() {
        assert!(is_non_overlapping_and_dense(&[3, 2], &[1, 3]));
        assert!(!is_non_overlapping_and_dense(&[3, 2], &[2, 2]));
        assert!(is_contiguous(&[2, 0], &[7, 7]));
        assert_eq!(
            suggest_memory_format(&[2, 3, 4, 5], &[60, 1, 15, 3]),
            MemoryFormat::ChannelsLast
        );
    }
}

/// `prelu`: TensorIterator's layout over the input and the weight as ATen
/// views it (`[1, C, 1, ...]`, or 0-D for one weight).
pub fn prelu_layout(
    _: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let (x, _) = first_geometry(args)?;
    let Some(LayoutArg::Tensor(w, wty)) = args.get(1) else {
        return Err(Error::new(ErrorKind::Layout, "prelu needs a weight"));
    };
    let shape = crate::infer::prelu_weight_shape(&x.shape, wty)?;
    let strides = crate::view::view_strides(&w.shape, &w.strides, &shape)
        .unwrap_or_else(|| contiguous_strides(&shape));
    let viewed = crate::view::Geometry::new(shape, strides, w.offset);
    let args = [args[0], LayoutArg::Tensor(&viewed, wty)];
    Ok(results
        .iter()
        .map(|r| ResultLayout::Fresh(pointwise_layout(&args, &r.shape)))
        .collect())
}

/// `native_batch_norm`, `native_group_norm`: the normalized result in the
/// input's suggested memory format (PyTorch's CPU kernels keep
/// channels_last), the statistics contiguous.
pub fn native_norm_layout(
    op: &crate::ops::Op,
    args: &[LayoutArg<'_>],
    results: &[crate::types::TensorType],
) -> Result<Vec<ResultLayout>> {
    let mut layouts = suggested_format_layout(op, args, &results[..1])?;
    layouts.extend(
        results[1..]
            .iter()
            .map(|r| ResultLayout::Fresh(contiguous_strides(&r.shape))),
    );
    Ok(layouts)
}
