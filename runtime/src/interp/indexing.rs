//! Gather and scatter ops of the reference interpreter: `gather`,
//! `scatter` (a tensor or a value), `scatter_add`, `scatter_reduce`,
//! `index_add`, `take`, and advanced indexing (`index`, `index_put`). Every
//! index is checked before anything is
//! read or written, and an index out of range is PyTorch's run-time error
//! naming it, on every backend (these ops run here inside compiled plans).

use kiln_ir::advanced_index::{AdvancedIndex, IndexEntry};
use kiln_ir::ops::attrs::ScatterReduce;
use kiln_ir::view::wrap_dim;
use kiln_ir::{Error, ErrorKind, Op, Result, Scalar, TensorType};

use crate::convert::{Elem, convert};
use crate::tensor::{Indices, Tensor};

/// The index values as i64 (the index dtype was checked by inference).
fn index_values(index: &Tensor) -> Vec<i64> {
    index.values().into_iter().map(|v| v.int() as i64).collect()
}

/// The positions `index` holds along dim `dim` of `x` (wrapped; a 0-D
/// input counts as one dim of one), each checked to be in range before
/// anything is read or written.
fn checked_positions(x: &Tensor, dim: i64, index: &Tensor) -> Result<(usize, Vec<i64>)> {
    positions_along(x, dim, index, "", false)
}

/// [`checked_positions`] with the message's prefix (`index_copy_(): `) and
/// whether negative positions count from the end (index_fill's do).
fn positions_along(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    prefix: &str,
    negative: bool,
) -> Result<(usize, Vec<i64>)> {
    let d = dim_of(dim, x.shape().len())?;
    let size = size_of(x, d);
    let lowest = if negative { -size } else { 0 };
    let idx = index_values(index);
    if let Some(&bad) = idx.iter().find(|&&i| i < lowest || i >= size) {
        let e = out_of_bounds(bad, d, size);
        return Err(Error::new(e.kind(), format!("{prefix}{}", e.message())));
    }
    Ok((
        d,
        idx.into_iter().map(|i| i.rem_euclid(size.max(1))).collect(),
    ))
}

/// A fresh result laid out as the layout pass says, holding `x`'s values
/// (the scatters and index_add work on a copy of their input).
fn copy_of(x: &Tensor, out_ty: &TensorType, strides: &[i64]) -> Result<Tensor> {
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    for p in Indices::new(x.shape()) {
        out.set(&p, x.get(&p))?;
    }
    Ok(out)
}

/// PyTorch's error for an index outside `[0, size)` along `dim`.
pub(crate) fn out_of_bounds(i: i64, dim: usize, size: i64) -> Error {
    Error::new(
        ErrorKind::Runtime,
        format!("index {i} is out of bounds for dimension {dim} with size {size}"),
    )
}

/// A 0-D tensor's shape read as one dim of one, as PyTorch's scatter and
/// gather kernels treat it.
fn at(shape_rank: usize, index: &[i64]) -> Vec<i64> {
    if shape_rank == 0 {
        Vec::new()
    } else {
        index.to_vec()
    }
}

fn dim_of(dim: i64, rank: usize) -> Result<usize> {
    if rank == 0 {
        wrap_dim(dim, 1)
    } else {
        wrap_dim(dim, rank)
    }
}

fn size_of(x: &Tensor, d: usize) -> i64 {
    x.shape().get(d).copied().unwrap_or(1)
}

/// `gather`: `out[p] = input[p with dim replaced by index[p]]`.
pub fn gather(
    dim: i64,
    x: &Tensor,
    index: &Tensor,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    let (d, idx) = checked_positions(x, dim, index)?;
    let shape = index.shape().to_vec();
    for (n, p) in Indices::new(&shape).enumerate() {
        let mut source = p.clone();
        if !source.is_empty() {
            source[d] = idx[n];
        }
        out.set(&p, x.get(&at(x.shape().len(), &source)))?;
    }
    Ok(out)
}

/// How a scatter combines a value with what is there.
#[derive(Clone, Copy)]
enum Combine {
    Replace,
    Reduce(ScatterReduce),
}

fn combine(how: ScatterReduce, a: Elem, b: Elem) -> Elem {
    match (how, a, b) {
        (ScatterReduce::Sum | ScatterReduce::Mean, Elem::I(x), Elem::I(y)) => {
            Elem::I(x.wrapping_add(y))
        }
        (ScatterReduce::Prod, Elem::I(x), Elem::I(y)) => Elem::I(x.wrapping_mul(y)),
        (ScatterReduce::Sum | ScatterReduce::Mean, Elem::B(x), Elem::B(y)) => Elem::B(x || y),
        (ScatterReduce::Prod, Elem::B(x), Elem::B(y)) => Elem::B(x && y),
        (ScatterReduce::Sum | ScatterReduce::Mean, Elem::C(..), _)
        | (ScatterReduce::Sum | ScatterReduce::Mean, _, Elem::C(..)) => {
            let ((ar, ai), (br, bi)) = (a.complex(), b.complex());
            Elem::C(ar + br, ai + bi)
        }
        (ScatterReduce::Prod, Elem::C(..), _) | (ScatterReduce::Prod, _, Elem::C(..)) => {
            let ((ar, ai), (br, bi)) = (a.complex(), b.complex());
            Elem::C(ar * br - ai * bi, ar * bi + ai * br)
        }
        (ScatterReduce::Sum | ScatterReduce::Mean, _, _) => Elem::F(a.f64() + b.f64()),
        (ScatterReduce::Prod, _, _) => Elem::F(a.f64() * b.f64()),
        // NaN wins, as PyTorch's maximum and minimum.
        (ScatterReduce::Amax, Elem::F(x), Elem::F(y)) => {
            Elem::F(super::elementwise::float_max(x, y))
        }
        (ScatterReduce::Amin, Elem::F(x), Elem::F(y)) => {
            Elem::F(super::elementwise::float_min(x, y))
        }
        (ScatterReduce::Amax, Elem::I(x), Elem::I(y)) => Elem::I(x.max(y)),
        (ScatterReduce::Amin, Elem::I(x), Elem::I(y)) => Elem::I(x.min(y)),
        (ScatterReduce::Amax, Elem::B(x), Elem::B(y)) => Elem::B(x || y),
        (ScatterReduce::Amin, Elem::B(x), Elem::B(y)) => Elem::B(x && y),
        (_, _, b) => b,
    }
}

/// The scatters: a copy of `x` into which `src` (or `value`) goes at
/// `index` along `dim`, each write rounded to the dtype as PyTorch's
/// in-place kernels round.
#[allow(clippy::too_many_arguments)]
fn scatter_into(
    dim: i64,
    x: &Tensor,
    index: &Tensor,
    src: Option<&Tensor>,
    value: Option<Scalar>,
    how: Combine,
    include_self: bool,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let (d, idx) = checked_positions(x, dim, index)?;
    let mut out = copy_of(x, out_ty, strides)?;
    let rank = x.shape().len();
    let dtype = out_ty.dtype;
    let ishape = index.shape().to_vec();
    // scatter_reduce: targets not yet touched start from the first value
    // when the input's own value is excluded; counts for the mean, by the
    // target's row-major position in the result.
    let out_shape = out_ty.shape.clone();
    let mut counts: Vec<i64> = match how {
        Combine::Reduce(_) => vec![0; out_shape.iter().product::<i64>().max(0) as usize],
        Combine::Replace => Vec::new(),
    };
    let flat = |t: &[i64]| t.iter().zip(&out_shape).fold(0i64, |f, (&i, &n)| f * n + i) as usize;
    for (n, p) in Indices::new(&ishape).enumerate() {
        let mut target = p.clone();
        if !target.is_empty() {
            target[d] = idx[n];
        }
        let target = at(rank, &target);
        let v = match (src, value) {
            (Some(s), _) => s.get(&at(s.shape().len(), &p)),
            (None, Some(v)) => Elem::from_scalar(v),
            (None, None) => return Err(Error::new(ErrorKind::Arity, "scatter needs src or value")),
        };
        let v = convert(v, dtype);
        let next = match how {
            Combine::Replace => v,
            Combine::Reduce(r) => {
                let count = &mut counts[flat(&target)];
                *count += 1;
                if *count > 1 || include_self {
                    combine(r, out.get(&target), v)
                } else {
                    v
                }
            }
        };
        out.set(&target, convert(next, dtype))?;
    }
    if let Combine::Reduce(ScatterReduce::Mean) = how {
        let touched = Indices::new(&out_shape)
            .zip(counts)
            .filter(|(_, count)| *count > 0);
        for (target, count) in touched {
            let n = count + i64::from(include_self);
            let total = out.get(&target);
            let mean = match total {
                // Integer means round toward negative infinity (PyTorch
                // divides with rounding_mode "floor").
                Elem::I(t) => Elem::I(t.div_euclid(i128::from(n))),
                // A complex division by `n + 0i`, as PyTorch's: a NaN in
                // one part reaches both (NaN·0 is NaN).
                Elem::C(re, im) => {
                    let c = n as f64;
                    Elem::C((re * c + im * 0.0) / (c * c), (im * c - re * 0.0) / (c * c))
                }
                other => Elem::F(other.f64() / n as f64),
            };
            out.set(&target, convert(mean, dtype))?;
        }
    }
    Ok(out)
}

/// Where `index_add` and `index_copy` write a source position: the same
/// position with dim `d` at the input position the index lists there (a
/// 0-D source: the one position the index holds).
fn target_of(p: &[i64], d: usize, idx: &[i64], rank: usize) -> Vec<i64> {
    let mut target = p.to_vec();
    if !target.is_empty() {
        target[d] = idx[p[d] as usize];
    } else if rank > 0 {
        target = vec![0; rank];
        target[d] = idx[0];
    }
    at(rank, &target)
}

/// `index_add`: `alpha·source` slices added at the positions `index` lists.
fn index_add(
    dim: i64,
    alpha: Scalar,
    x: &Tensor,
    index: &Tensor,
    source: &Tensor,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let (d, idx) = checked_positions(x, dim, index)?;
    let mut out = copy_of(x, out_ty, strides)?;
    let rank = x.shape().len();
    let dtype = out_ty.dtype;
    let alpha = convert(Elem::from_scalar(alpha), dtype);
    for p in Indices::new(source.shape()) {
        let target = target_of(&p, d, &idx, rank);
        // PyTorch adds the source as it is when alpha is 1 (no product,
        // which would spread a complex NaN to both parts), except for
        // complex32, whose kernel always multiplies.
        let v = if alpha == convert(Elem::I(1), dtype) && dtype != kiln_ir::DType::C32 {
            source.get(&p)
        } else {
            combine(ScatterReduce::Prod, alpha, source.get(&p))
        };
        let sum = combine(ScatterReduce::Sum, out.get(&target), convert(v, dtype));
        out.set(&target, convert(sum, dtype))?;
    }
    Ok(out)
}

/// `take`: elements of the flattened input; negative indices count from
/// the end.
fn take(x: &Tensor, index: &Tensor, out_ty: &TensorType, strides: &[i64]) -> Result<Tensor> {
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    let flat = x.values();
    let n = flat.len() as i64;
    let idx = index_values(index);
    if let Some(&bad) = idx.iter().find(|&&i| i < -n || i >= n) {
        return Err(Error::new(
            ErrorKind::Runtime,
            format!("out of range: tried to access index {bad} on a tensor of {n} elements."),
        ));
    }
    for (k, p) in Indices::new(index.shape()).enumerate() {
        let i = idx[k].rem_euclid(n.max(1));
        out.set(&p, flat[i as usize])?;
    }
    Ok(out)
}

/// The position in a tensor of `shape` that a position of a larger
/// shape it broadcasts to reads (trailing dims lined up, size-1 dims read
/// at 0).
fn broadcast_position(p: &[i64], shape: &[i64]) -> Vec<i64> {
    let lead = p.len() - shape.len();
    shape
        .iter()
        .zip(&p[lead..])
        .map(|(&size, &i)| if size == 1 { 0 } else { i })
        .collect()
}

/// The geometry of advanced indexing `x` with `entries`, and for each index
/// tensor its positions over the index shape, wrapped and checked (PyTorch's
/// IndexError numbers the index tensors, not the input's dims).
fn advanced_positions(
    x: &Tensor,
    entries: &[Option<&Tensor>],
) -> Result<(AdvancedIndex, Vec<Vec<i64>>)> {
    let typed: Vec<IndexEntry<'_>> = entries
        .iter()
        .map(|e| e.map(|t| (t.shape(), t.dtype())))
        .collect();
    let geometry = AdvancedIndex::new("index", x.shape(), &typed)?;
    let positions = entries
        .iter()
        .flatten()
        .zip(&geometry.dims)
        .enumerate()
        .map(|(j, (index, &d))| {
            let size = x.shape()[d];
            Indices::new(&geometry.index_shape)
                .map(|k| {
                    let i = index.get(&broadcast_position(&k, index.shape())).int() as i64;
                    if i < -size || i >= size {
                        return Err(Error::new(
                            ErrorKind::Runtime,
                            format!(
                                "index {i} is out of bounds for dimension {j} with size {size}"
                            ),
                        ));
                    }
                    Ok(i.rem_euclid(size.max(1)))
                })
                .collect::<Result<Vec<i64>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((geometry, positions))
}

/// Where each result position of advanced indexing reads in the input.
fn advanced_sources(
    x: &Tensor,
    geometry: &AdvancedIndex,
    positions: &[Vec<i64>],
) -> impl Iterator<Item = (Vec<i64>, Vec<i64>)> {
    let index_strides = kiln_ir::layout::contiguous_strides(&geometry.index_shape);
    let rank = x.shape().len();
    Indices::new(&geometry.shape).map(move |p| {
        let k: i64 = geometry
            .index_position(&p)
            .iter()
            .zip(&index_strides)
            .map(|(i, s)| i * s)
            .sum();
        let at: Vec<i64> = positions.iter().map(|pos| pos[k as usize]).collect();
        let source = geometry.source(&p, &at, rank);
        (p, source)
    })
}

/// `index`: `out[p] = input[the positions the index tensors hold at p]`.
pub fn index(
    x: &Tensor,
    entries: &[Option<&Tensor>],
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let (geometry, positions) = advanced_positions(x, entries)?;
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    for (p, source) in advanced_sources(x, &geometry, &positions) {
        out.set(&p, x.get(&source))?;
    }
    Ok(out)
}

/// `index_put`: a copy of `input` with `values` (broadcast to the indexed
/// shape) written at the positions, in order (the last write wins), or
/// added to what is there.
pub fn index_put(
    x: &Tensor,
    entries: &[Option<&Tensor>],
    values: &Tensor,
    accumulate: bool,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let (geometry, positions) = advanced_positions(x, entries)?;
    let mut out = copy_of(x, out_ty, strides)?;
    for (p, source) in advanced_sources(x, &geometry, &positions) {
        let v = values.get(&broadcast_position(&p, values.shape()));
        let v = if accumulate {
            combine(ScatterReduce::Sum, out.get(&source), v)
        } else {
            v
        };
        out.set(&source, v)?;
    }
    Ok(out)
}

/// `index_copy`: a copy of `input` with `source`'s slices written at the
/// positions along `dim` (the last write wins).
fn index_copy(
    dim: i64,
    x: &Tensor,
    index: &Tensor,
    source: &Tensor,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let (d, idx) = positions_along(x, dim, index, "index_copy_(): ", false)?;
    let mut out = copy_of(x, out_ty, strides)?;
    let rank = x.shape().len();
    for p in Indices::new(source.shape()) {
        let target = target_of(&p, d, &idx, rank);
        out.set(&target, convert(source.get(&p), out_ty.dtype))?;
    }
    Ok(out)
}

/// `index_fill`: a copy of `input` with the slices at the positions along
/// `dim` set to `value` (converted to the input's dtype).
fn index_fill(
    dim: i64,
    x: &Tensor,
    index: &Tensor,
    value: Elem,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let (d, idx) = positions_along(x, dim, index, "", true)?;
    let mut out = copy_of(x, out_ty, strides)?;
    let value = convert(value, out_ty.dtype);
    for p in Indices::new(x.shape()) {
        if p.is_empty() || idx.contains(&p[d]) {
            out.set(&p, value)?;
        }
    }
    Ok(out)
}

/// Runs one of this module's ops; `None` for any other op.
pub fn run(
    op: &Op,
    args: &[&Tensor],
    value: Option<Scalar>,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Option<Tensor>> {
    let arg = |i: usize| {
        args.get(i).copied().ok_or_else(|| {
            Error::new(
                ErrorKind::Arity,
                format!("{} needs operand {}", op.name(), i + 1),
            )
        })
    };
    Ok(Some(match op {
        Op::Gather { dim, .. } => gather(*dim, arg(0)?, arg(1)?, out_ty, strides)?,
        Op::Scatter { dim } => scatter_into(
            *dim,
            arg(0)?,
            arg(1)?,
            args.get(2).copied(),
            value,
            Combine::Replace,
            true,
            out_ty,
            strides,
        )?,
        Op::ScatterAdd { dim } => scatter_into(
            *dim,
            arg(0)?,
            arg(1)?,
            Some(arg(2)?),
            None,
            Combine::Reduce(ScatterReduce::Sum),
            true,
            out_ty,
            strides,
        )?,
        Op::ScatterReduce {
            dim,
            reduce,
            include_self,
        } => scatter_into(
            *dim,
            arg(0)?,
            arg(1)?,
            Some(arg(2)?),
            None,
            Combine::Reduce(*reduce),
            *include_self,
            out_ty,
            strides,
        )?,
        Op::IndexAdd { dim, alpha } => {
            index_add(*dim, *alpha, arg(0)?, arg(1)?, arg(2)?, out_ty, strides)?
        }
        Op::Take => take(arg(0)?, arg(1)?, out_ty, strides)?,
        Op::IndexCopy { dim } => index_copy(*dim, arg(0)?, arg(1)?, arg(2)?, out_ty, strides)?,
        Op::IndexFill { dim } => {
            // The value: a number, or a 0-D tensor (the third tensor).
            let v = match value {
                Some(s) => Elem::from_scalar(s),
                None => arg(2)?.get(&[]),
            };
            index_fill(*dim, arg(0)?, arg(1)?, v, out_ty, strides)?
        }
        _ => return Ok(None),
    }))
}
