//! Gather and scatter for compiled plans on the CPU: the plan's `gather`,
//! `scatter` (of a source tensor), `scatter_add`, `scatter_reduce`,
//! `index_add`, `embedding` and `index_put` (one index tensor, no
//! accumulation) steps run here on the
//! step's buffers instead of element by element in the interpreter, which
//! stays the oracle they are tested against.
//!
//! The semantics are the interpreter's, bit for bit: the first index out of
//! range, in row-major order over the index, is PyTorch's error naming it
//! (the copies check every index before writing; `scatter_add` checks each
//! as it goes, and a run that fails discards its output), and the writes go in
//! row-major order over the index, so a position written twice keeps the
//! last value (`scatter`) or the sums are added in the same order
//! (`scatter_add`: f32, f64, i32, i64; a float sum rounded after each
//! addition, as PyTorch's CPU kernel does). Copies (`gather`, `scatter`)
//! move elements as bytes, so they take any dtype.

use kiln_ir::ops::attrs::ScatterReduce;
use kiln_ir::view::{Geometry, wrap_dim};
use kiln_ir::{DType, Op, Result};

use crate::convert::{Elem, convert};

use crate::spatial::Operand;
use crate::strided::{NONE, Shared, rows, walk};

/// Runs `op` when it is a gather or scatter this file computes (`x` the
/// input, `index` an i64 index, `src` the source of a scatter, of `dtype`);
/// `false` otherwise, and the interpreter runs it.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; `out` must not overlap the operands; the shapes must be ones
/// inference accepted for `op`.
pub unsafe fn gather_scatter(
    op: &Op,
    dtype: DType,
    x: Operand,
    (index, index_dtype): (Operand, DType),
    src: Option<Operand>,
    out: Operand,
) -> Result<bool> {
    let rank = x.geometry.rank();
    if index_dtype != DType::I64 || rank == 0 || index.geometry.rank() != rank {
        return Ok(false);
    }
    let (dim, kind) = match (op, src) {
        (Op::Gather { dim, .. }, _) => (*dim, Kind::Gather),
        (Op::Scatter { dim }, Some(_)) => (*dim, Kind::Scatter),
        (Op::ScatterAdd { dim }, Some(_)) => match dtype {
            DType::F32 | DType::F64 | DType::I32 | DType::I64 => (*dim, Kind::Add),
            _ => return Ok(false),
        },
        _ => return Ok(false),
    };
    let d = wrap_dim(dim, rank)?;
    let size = x.geometry.shape[d];
    if kind != Kind::Add {
        // SAFETY: the index's elements are inside its buffer.
        unsafe { check(index, d, size)? };
    }
    let item = dtype.itemsize();
    let at = |i: i64| -> i64 {
        // SAFETY: `i` is an offset the walk gives inside the index.
        unsafe { *(index.ptr as *const i64).offset(i as isize) }
    };
    // SAFETY (of every walk below): the offsets stay inside each geometry,
    // the index values were checked to lie inside dim d.
    unsafe {
        if kind == Kind::Gather {
            // out[p] = x[p with dim d at index[p]]
            let step = x.geometry.strides[d];
            walk(
                index.geometry,
                &[
                    (index.geometry, NONE),
                    (out.geometry, NONE),
                    (x.geometry, d),
                ],
                |[i, o, s]| copy(x.ptr, s + at(i) * step, out.ptr, o, item),
            );
            return Ok(true);
        }
        copy_all(x, out, item);
        let src = src.expect("scatters have a source (matched above)");
        let step = out.geometry.strides[d];
        let targets = [
            (index.geometry, NONE),
            (out.geometry, d),
            (src.geometry, NONE),
        ];
        let ip = index.ptr as *const i64;
        let (sp, op) = (src.ptr, out.ptr);
        let ends = (step, size);
        let bad = match (kind, dtype) {
            (Kind::Scatter, _) => {
                walk(index.geometry, &targets, |[i, o, s]| {
                    copy(sp, s, op, o + at(i) * step, item)
                });
                None
            }
            (_, DType::F32) => scatter_add::<f32>(&targets, ip, ends, sp, op, |a, b| a + b),
            (_, DType::F64) => scatter_add::<f64>(&targets, ip, ends, sp, op, |a, b| a + b),
            (_, DType::I32) => scatter_add::<i32>(&targets, ip, ends, sp, op, i32::wrapping_add),
            (_, _) => scatter_add::<i64>(&targets, ip, ends, sp, op, i64::wrapping_add),
        };
        if let Some(v) = bad {
            return Err(crate::interp::indexing::out_of_bounds(v, d, size));
        }
    }
    Ok(true)
}

/// `embedding`: the rows of `weight` (`[V, D]`, any dtype) at `indices`
/// (i64 or i32, any shape) into `out` (`[..., D]`), each index checked
/// first (the interpreter's error for the first out of range); rows copied
/// on rayon's threads, whole where both sides are dense along D. `false`
/// for other index dtypes.
///
/// # Safety
/// As [`gather_scatter`].
pub unsafe fn embedding(
    dtype: DType,
    weight: Operand,
    indices: (Operand, DType),
    out: Operand,
) -> Result<bool> {
    let w = weight.geometry;
    if w.rank() != 2 {
        return Ok(false);
    }
    let (offset, w_row) = (w.offset, w.strides[0]);
    let rows = Rows {
        ptr: weight.ptr,
        shape: (w.shape[0], w.shape[1]),
        col_stride: w.strides[1],
    };
    // SAFETY: forwarded.
    unsafe { embedding_rows(dtype, rows, |row| offset + row * w_row, indices, out) }
}

/// The rows of an embedding's weight: its elements, `[V, D]`, and the
/// step between a row's elements (where row `r` starts is the caller's).
pub(crate) struct Rows {
    pub(crate) ptr: *mut u8,
    pub(crate) shape: (i64, i64),
    pub(crate) col_stride: i64,
}

/// [`embedding`] of a weight whose row `r` starts at element
/// `row_start(r)` (a weight held as a product's packed panels,
/// `crate::packed`, lays its rows out so).
///
/// # Safety
/// As [`embedding`]: every row's elements lie in the weight's buffer.
pub(crate) unsafe fn embedding_rows(
    dtype: DType,
    weight: Rows,
    row_start: impl Fn(i64) -> i64 + Sync,
    (indices, index_dtype): (Operand, DType),
    out: Operand,
) -> Result<bool> {
    use rayon::prelude::*;

    let o = out.geometry;
    if o.rank() != indices.geometry.rank() + 1 {
        return Ok(false);
    }
    let read: unsafe fn(*const u8, isize) -> i64 = match index_dtype {
        // SAFETY (of both): the walk's offsets are inside the indices.
        DType::I64 => |p, i| unsafe { *(p as *const i64).offset(i) },
        DType::I32 => |p, i| unsafe { i64::from(*(p as *const i32).offset(i)) },
        _ => return Ok(false),
    };
    let (size, width) = weight.shape;
    let last = o.rank() - 1;
    let leading = Geometry::new(
        o.shape[..last].to_vec(),
        o.strides[..last].to_vec(),
        o.offset,
    );
    let mut rows_at = Vec::with_capacity(indices.geometry.numel().max(0) as usize);
    walk(
        indices.geometry,
        &[(indices.geometry, NONE), (&leading, NONE)],
        // SAFETY: the walk's offsets are inside the indices.
        |[i, to]| rows_at.push((unsafe { read(indices.ptr, i as isize) }, to)),
    );
    if let Some(&(bad, _)) = rows_at.iter().find(|(r, _)| !(0..size).contains(r)) {
        return Err(kiln_ir::Error::new(
            kiln_ir::ErrorKind::Runtime,
            format!("index out of range in self (index {bad} into a dim of size {size})"),
        ));
    }
    let item = dtype.itemsize();
    let (from, to) = (Shared(weight.ptr), Shared(out.ptr));
    let (w_col, o_col) = (weight.col_stride, o.strides[last]);
    let dense = w_col == 1 && o_col == 1;
    rows_at.par_chunks(256).for_each(|chunk| {
        for &(row, at) in chunk {
            let start = row_start(row);
            // SAFETY: the row is inside the weight (checked above), the
            // destination inside the output; tasks write disjoint rows.
            unsafe {
                if dense {
                    std::ptr::copy_nonoverlapping(
                        from.ptr().add(start as usize * item),
                        to.ptr().add(at as usize * item),
                        width as usize * item,
                    );
                } else {
                    for c in 0..width {
                        copy(
                            from.ptr(),
                            start + c * w_col,
                            to.ptr(),
                            at + c * o_col,
                            item,
                        );
                    }
                }
            }
        }
    });
    Ok(true)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gather,
    Scatter,
    Add,
}

/// `out[p with dim d at index[p]] = add(that, src[p])` over the index in
/// row-major order, `targets` the index's, the output's (less dim d) and
/// the source's geometries, `step` the output's stride along dim d and
/// `size` its size there. The first index value out of range, if any,
/// stops it (the output is then discarded with the error).
///
/// # Safety
/// As [`gather_scatter`].
unsafe fn scatter_add<T: Copy>(
    targets: &[(&Geometry, usize); 3],
    ip: *const i64,
    (step, size): (i64, i64),
    sp: *const u8,
    op: *mut u8,
    add: impl Fn(T, T) -> T + Copy,
) -> Option<i64> {
    let (sp, op) = (sp as *const T, op as *mut T);
    let mut bad = None;
    // SAFETY: forwarded; a position is written only once its index value
    // is known to be in range.
    unsafe {
        rows(targets[0].0, targets, |[i, o, s], len, [si, so, ss]| {
            if bad.is_some() {
                return;
            }
            if (si, ss, so, step) == (1, 1, 0, 1) {
                // A dense run of indices and values into one dense line
                // (a 1-D scatter_add: bins): the same updates in the same
                // order, in fewer instructions each.
                let idx = std::slice::from_raw_parts(ip.offset(i as isize), len as usize);
                let src = std::slice::from_raw_parts(sp.offset(s as isize), len as usize);
                let line = op.offset(o as isize);
                for (&v, &x) in idx.iter().zip(src) {
                    if v as u64 >= size as u64 {
                        bad = Some(v);
                        return;
                    }
                    let t = line.offset(v as isize);
                    *t = add(*t, x);
                }
                return;
            }
            for j in 0..len {
                let v = *ip.offset((i + j * si) as isize);
                if !(0..size).contains(&v) {
                    bad = Some(v);
                    return;
                }
                let t = op.offset((o + j * so + v * step) as isize);
                *t = add(*t, *sp.offset((s + j * ss) as isize));
            }
        })
    };
    bad
}

/// Checks every index value, in row-major order, to lie in `[0, size)`
/// (the interpreter's error for the first that does not), before anything
/// is written.
///
/// # Safety
/// The index's elements must be inside its buffer.
unsafe fn check(index: Operand, d: usize, size: i64) -> Result<()> {
    let mut bad = None;
    let ip = index.ptr as *const i64;
    // SAFETY: forwarded.
    unsafe {
        rows(
            index.geometry,
            &[(index.geometry, NONE)],
            |[i], len, [step]| {
                if bad.is_some() {
                    return;
                }
                bad = (0..len)
                    .map(|j| *ip.offset((i + j * step) as isize))
                    .find(|v| !(0..size).contains(v));
            },
        )
    };
    match bad {
        Some(v) => Err(crate::interp::indexing::out_of_bounds(v, d, size)),
        None => Ok(()),
    }
}

/// One element of `item` bytes from `src` at element offset `s` to `dst`
/// at `d`.
///
/// # Safety
/// Both elements must be inside their buffers.
unsafe fn copy(src: *const u8, s: i64, dst: *mut u8, d: i64, item: usize) {
    // SAFETY: forwarded.
    unsafe {
        std::ptr::copy_nonoverlapping(src.add(s as usize * item), dst.add(d as usize * item), item)
    };
}

/// Every element of `x` into `out` (same shape), as the scatters and
/// `index_put` start from a copy of their input.
///
/// # Safety
/// Both geometries must be inside their buffers.
unsafe fn copy_all(x: Operand, out: Operand, item: usize) {
    // SAFETY: forwarded.
    unsafe { copy_runs(x.geometry, x.ptr, out.geometry, out.ptr, item) };
}

/// Every element of `from` (at `src`) into `to` (at `dst`, the same
/// shape), a run along the last dim at a time: one copy where both are
/// dense along it.
///
/// # Safety
/// Both geometries must be inside their buffers, which must not overlap.
unsafe fn copy_runs(from: &Geometry, src: *const u8, to: &Geometry, dst: *mut u8, item: usize) {
    // SAFETY: forwarded.
    unsafe {
        rows(
            from,
            &[(from, NONE), (to, NONE)],
            |[s, d], len, [ss, ds]| {
                if ss == 1 && ds == 1 {
                    std::ptr::copy_nonoverlapping(
                        src.add(s as usize * item),
                        dst.add(d as usize * item),
                        len as usize * item,
                    );
                } else {
                    for j in 0..len {
                        copy(src, s + j * ss, dst, d + j * ds, item);
                    }
                }
            },
        )
    };
}

/// `index_put` without accumulation, with one index tensor: a copy of `x`
/// with `values` (broadcast to `x`'s shape with dim `d` the index's
/// length) written at the positions `index` (1-D, i64 or i32) holds along
/// dim `d`, the dims before and after taken whole (`x[:, :, index] =
/// values`: a key/value cache's update). Every position is checked first
/// (the interpreter's error for the first out of range; negative ones
/// count from the end); the slices are written in the index's order, so a
/// position given twice keeps the last. Moves bytes: any dtype.
///
/// # Safety
/// As [`gather_scatter`], except that `out` may be `x` itself (the same
/// memory and geometry: a donated input); `values` of `out`'s dtype.
pub unsafe fn index_put(
    x: Operand,
    d: usize,
    (index, index_dtype): (Operand, DType),
    values: Operand,
    out: Operand,
    item: usize,
) -> Result<bool> {
    let rank = x.geometry.rank();
    if d >= rank || index.geometry.rank() != 1 || values.geometry.rank() > rank {
        return Ok(false);
    }
    if !matches!(index_dtype, DType::I64 | DType::I32) {
        return Ok(false);
    }
    let n = index.geometry.shape[0];
    let size = x.geometry.shape[d];
    let mut positions = Vec::with_capacity(n as usize);
    for j in 0..n {
        let at = (index.geometry.offset + j * index.geometry.strides[0]) as isize;
        // SAFETY: element j of the index is inside its buffer.
        let i = unsafe {
            match index_dtype {
                DType::I64 => *index.ptr.cast::<i64>().offset(at),
                DType::I32 => i64::from(*index.ptr.cast::<i32>().offset(at)),
                _ => return Ok(false),
            }
        };
        if i < -size || i >= size {
            return Err(crate::interp::indexing::out_of_bounds(i, 0, size));
        }
        positions.push(i.rem_euclid(size.max(1)));
    }
    // `values` broadcast to the written shape (x's, dim d the index's).
    let lead = rank - values.geometry.rank();
    let spread: Vec<i64> = (0..rank)
        .map(|k| match k.checked_sub(lead) {
            Some(v) if values.geometry.shape[v] != 1 => values.geometry.strides[v],
            _ => 0,
        })
        .collect();
    let mut slice = x.geometry.shape.clone();
    slice[d] = 1;
    // SAFETY: the copy's geometries are the step's; each slice below is
    // inside `out` (its position was checked) and inside `values` (j < n
    // along dim d, broadcast elsewhere).
    unsafe {
        // A donated input is the result's own memory (same geometry, see
        // `kiln_passes::plan::donate`): only the written slices change.
        if x.ptr != out.ptr {
            copy_all(x, out, item);
        } else if x.geometry != out.geometry {
            // Not a donation's (the rule gives the same geometry): the
            // interpreter computes the result apart, then writes it.
            return Ok(false);
        }
        for (j, p) in positions.into_iter().enumerate() {
            let to = Geometry::new(
                slice.clone(),
                out.geometry.strides.clone(),
                out.geometry.offset + p * out.geometry.strides[d],
            );
            let from = Geometry::new(
                slice.clone(),
                spread.clone(),
                values.geometry.offset + j as i64 * spread[d],
            );
            copy_runs(&from, values.ptr, &to, out.ptr, item);
        }
    }
    Ok(true)
}

/// The element types `scatter_reduce` and `index_add` combine here, with
/// the interpreter's arithmetic (`crate::interp::indexing`'s `combine`):
/// f32 sums, products and means equal to its f64 ones rounded once (both
/// correctly rounded), NaN-first maxima and minima, wrapping integers and
/// integer means rounded toward −∞.
trait Combined: Copy + PartialEq {
    /// The dtype of these elements.
    const DTYPE: DType;
    fn combine(how: ScatterReduce, a: Self, b: Self) -> Self;
    /// `total / n` (a mean).
    fn mean(total: Self, n: i64) -> Self;
    /// A value already converted to [`Combined::DTYPE`] (index_add's
    /// alpha, and 1).
    fn of(value: Elem) -> Self;
}

impl Combined for f64 {
    const DTYPE: DType = DType::F64;
    #[inline]
    fn combine(how: ScatterReduce, a: f64, b: f64) -> f64 {
        use crate::interp::elementwise::{float_max, float_min};
        match how {
            ScatterReduce::Sum | ScatterReduce::Mean => a + b,
            ScatterReduce::Prod => a * b,
            ScatterReduce::Amax => float_max(a, b),
            ScatterReduce::Amin => float_min(a, b),
        }
    }
    #[inline]
    fn mean(total: f64, n: i64) -> f64 {
        total / n as f64
    }
    fn of(value: Elem) -> f64 {
        value.f64()
    }
}

impl Combined for f32 {
    const DTYPE: DType = DType::F32;
    #[inline]
    fn combine(how: ScatterReduce, a: f32, b: f32) -> f32 {
        match how {
            // The f64 sum or product rounded once to f32 is the f32 one
            // (53 ≥ 2·24 + 2 bits), which vectorizes.
            ScatterReduce::Sum | ScatterReduce::Mean => a + b,
            ScatterReduce::Prod => a * b,
            _ => f64::combine(how, f64::from(a), f64::from(b)) as f32,
        }
    }
    #[inline]
    fn mean(total: f32, n: i64) -> f32 {
        f64::mean(f64::from(total), n) as f32
    }
    fn of(value: Elem) -> f32 {
        value.f64() as f32
    }
}

impl Combined for i64 {
    const DTYPE: DType = DType::I64;
    #[inline]
    fn combine(how: ScatterReduce, a: i64, b: i64) -> i64 {
        match how {
            ScatterReduce::Sum | ScatterReduce::Mean => a.wrapping_add(b),
            ScatterReduce::Prod => a.wrapping_mul(b),
            ScatterReduce::Amax => a.max(b),
            ScatterReduce::Amin => a.min(b),
        }
    }
    #[inline]
    fn mean(total: i64, n: i64) -> i64 {
        total.div_euclid(n)
    }
    fn of(value: Elem) -> i64 {
        value.int() as i64
    }
}

impl Combined for i32 {
    const DTYPE: DType = DType::I32;
    #[inline]
    fn combine(how: ScatterReduce, a: i32, b: i32) -> i32 {
        i64::combine(how, i64::from(a), i64::from(b)) as i32
    }
    #[inline]
    fn mean(total: i32, n: i64) -> i32 {
        i64::mean(i64::from(total), n) as i32
    }
    fn of(value: Elem) -> i32 {
        value.int() as i32
    }
}

/// Runs `scatter_reduce` (of a source tensor) or `index_add` of f32, f64,
/// i32 or i64 with an i64 index, as the interpreter does: every index
/// value checked first (its error for the first out of range), then the
/// updates in row-major order over the index (scatter_reduce) or the
/// source (index_add), each rounded to the dtype; `false` for what this
/// file has no kernel for.
///
/// # Safety
/// As [`gather_scatter`]; `src` is the step's third operand.
pub unsafe fn reduce_into(
    op: &Op,
    dtype: DType,
    x: Operand,
    (index, index_dtype): (Operand, DType),
    src: Operand,
    out: Operand,
) -> Result<bool> {
    let rank = x.geometry.rank();
    if index_dtype != DType::I64 || rank == 0 || src.geometry.rank() != rank {
        return Ok(false);
    }
    // SAFETY: forwarded.
    unsafe {
        match dtype {
            DType::F32 => reduce_typed::<f32>(op, x, index, src, out),
            DType::F64 => reduce_typed::<f64>(op, x, index, src, out),
            DType::I32 => reduce_typed::<i32>(op, x, index, src, out),
            DType::I64 => reduce_typed::<i64>(op, x, index, src, out),
            _ => Ok(false),
        }
    }
}

/// [`reduce_into`] for one element type.
///
/// # Safety
/// As [`reduce_into`].
unsafe fn reduce_typed<T: Combined>(
    op: &Op,
    x: Operand,
    index: Operand,
    src: Operand,
    out: Operand,
) -> Result<bool> {
    let rank = x.geometry.rank();
    let (dim, how, include_self, alpha) = match op {
        Op::ScatterReduce {
            dim,
            reduce,
            include_self,
        } if index.geometry.rank() == rank => (*dim, *reduce, *include_self, None),
        Op::IndexAdd { dim, alpha } if index.geometry.rank() == 1 => (
            *dim,
            ScatterReduce::Sum,
            true,
            Some(T::of(convert(Elem::from_scalar(*alpha), T::DTYPE))),
        ),
        _ => return Ok(false),
    };
    let d = wrap_dim(dim, rank)?;
    let size = x.geometry.shape[d];
    if out.geometry.strides.iter().any(|&s| s < 0) {
        // (A fresh result never has them; the counts below assume none.)
        return Ok(false);
    }
    let (ip, sp, op) = (
        index.ptr as *const i64,
        src.ptr as *const T,
        out.ptr as *mut T,
    );
    let step = out.geometry.strides[d];
    // SAFETY: the geometries are inside their buffers (the caller's); the
    // index values are checked before anything is written.
    unsafe {
        check(index, d, size)?;
        copy_all(x, out, std::mem::size_of::<T>());
        let Some(alpha) = alpha else {
            // scatter_reduce: targets not yet touched start from the first
            // value when the input's own is excluded; counts for the mean,
            // by the target's offset in the result (no negative strides:
            // every offset is below the span).
            let og = out.geometry;
            let counted = !include_self || how == ScatterReduce::Mean;
            let span = og.offset
                + og.shape
                    .iter()
                    .zip(&og.strides)
                    .map(|(n, s)| (n - 1).max(0) * s)
                    .sum::<i64>()
                + 1;
            let mut counts = vec![0u32; if counted { span.max(0) as usize } else { 0 }];
            let targets = [(index.geometry, NONE), (og, d), (src.geometry, NONE)];
            walk(index.geometry, &targets, |[i, o, s]| {
                let t = o + *ip.offset(i as isize) * step;
                let first = counted && {
                    let count = &mut counts[t as usize];
                    *count = count.saturating_add(1);
                    *count == 1
                };
                let v = *sp.offset(s as isize);
                let target = op.offset(t as isize);
                *target = if !first || include_self {
                    T::combine(how, *target, v)
                } else {
                    v
                };
            });
            if how == ScatterReduce::Mean {
                for (t, &count) in counts.iter().enumerate() {
                    if count > 0 {
                        let target = op.add(t);
                        *target = T::mean(*target, i64::from(count) + i64::from(include_self));
                    }
                }
            }
            return Ok(true);
        };
        // index_add: along dim d the index lists where each source slice
        // goes; read it as a geometry over the source's shape.
        let mut along = Geometry {
            shape: src.geometry.shape.clone(),
            strides: vec![0; rank],
            offset: index.geometry.offset,
        };
        along.strides[d] = index.geometry.strides[0];
        let one = T::of(convert(Elem::I(1), T::DTYPE));
        let targets = [(src.geometry, NONE), (out.geometry, d), (&along, NONE)];
        // A run along the last dim at a time: one target slice (the index
        // moves only along dim d), the same updates in the same order.
        rows(src.geometry, &targets, |[s, o, i], len, [ss, so, si]| {
            // PyTorch adds the source as it is when alpha is 1.
            let scaled = |v: T| {
                if alpha == one {
                    v
                } else {
                    T::combine(ScatterReduce::Prod, alpha, v)
                }
            };
            if (ss, so, si) == (1, 1, 0) {
                let target = op.offset((o + *ip.offset(i as isize) * step) as isize);
                let line = std::slice::from_raw_parts_mut(target, len as usize);
                let from = std::slice::from_raw_parts(sp.offset(s as isize), len as usize);
                for (t, &v) in line.iter_mut().zip(from) {
                    *t = T::combine(ScatterReduce::Sum, *t, scaled(v));
                }
                return;
            }
            let run = Run {
                start: [s, o, i],
                steps: [ss, so, si],
                len,
            };
            if alpha == one {
                add_run(run, (ip, sp, op), step, |v| v);
            } else {
                add_run(run, (ip, sp, op), step, scaled);
            }
        });
    }
    Ok(true)
}

/// A run of `index_add` along the last dim: the source's, output's and
/// index's offsets at its start and their steps.
#[derive(Clone, Copy)]
struct Run {
    start: [i64; 3],
    steps: [i64; 3],
    len: i64,
}

/// Adds `scaled(source)` into the output along a run whose target moves
/// with the index (`step`: the output's stride along the indexed dim).
///
/// # Safety
/// As [`reduce_into`]: every offset of the run is inside its buffer and
/// the index values were checked.
#[inline]
unsafe fn add_run<T: Combined>(
    run: Run,
    (ip, sp, op): (*const i64, *const T, *mut T),
    step: i64,
    scaled: impl Fn(T) -> T,
) {
    let ([s, o, i], [ss, so, si]) = (run.start, run.steps);
    for j in 0..run.len {
        // SAFETY: forwarded.
        unsafe {
            let at = *ip.offset((i + j * si) as isize);
            let t = op.offset((o + j * so + at * step) as isize);
            let v = *sp.offset((s + j * ss) as isize);
            *t = T::combine(ScatterReduce::Sum, *t, scaled(v));
        }
    }
}
