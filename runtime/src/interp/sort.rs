//! Sorting ops of the reference interpreter: `sort` and `topk`, row by row
//! along one dim with a total order in which NaN is the largest value and
//! equal values keep their order (a stable sort); and the selections
//! `kthvalue`, `median`, `nanmedian` and `mode` from such sorted rows
//! (defined in `crate::lines`, which compiled plans run natively for f32,
//! f64, i32 and i64, as sort and topk, in this order).

use std::cmp::Ordering;

use kiln_ir::layout::ResultLayout;
use kiln_ir::view::wrap_dim;
use kiln_ir::{Op, Result, TensorType};

use crate::convert::Elem;
// Up to `FEW` of a row, topk keeps its best in one pass instead of
// selecting them (as the native steps do; the result does not depend on it).
use crate::lines::FEW;
use crate::tensor::{Indices, Tensor};

/// The order `sort` and `topk` use: NaN above everything, `-0.0 == 0.0`.
fn order(a: Elem, b: Elem) -> Ordering {
    match (a, b) {
        (Elem::F(x), Elem::F(y)) => crate::lines::float_order(x, y),
        (Elem::I(x), Elem::I(y)) => x.cmp(&y),
        (Elem::B(x), Elem::B(y)) => x.cmp(&y),
        _ => Ordering::Equal,
    }
}

/// Sorts each row of `x` along `dim` and keeps its first `keep` positions:
/// the values and their positions, laid out as `layouts` say.
fn sorted_rows(
    x: &Tensor,
    dim: i64,
    descending: bool,
    keep: Option<i64>,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    let mut outs = super::fresh_results(types, layouts)?;
    let shape = x.shape().to_vec();
    if shape.is_empty() {
        // A zero-dim tensor is one row of one element.
        if keep != Some(0) {
            outs[0].set(&[], x.get(&[]))?;
            outs[1].set(&[], Elem::I(0))?;
        }
        return Ok(outs);
    }
    let d = wrap_dim(dim, shape.len())?;
    let n = shape[d];
    let keep = keep.unwrap_or(n);
    let mut row_shape = shape.clone();
    row_shape[d] = 1;
    let mut row: Vec<(Elem, i64)> = Vec::with_capacity(n as usize);
    for start in Indices::new(&row_shape) {
        row.clear();
        let mut index = start.clone();
        for i in 0..n {
            index[d] = i;
            row.push((x.get(&index), i));
        }
        // As a stable sort orders them: by value, equal values by
        // position (a total order, so an unstable sort gives the same).
        // Only the first `keep` are needed: selected, then sorted (topk's
        // few of a long row cost a pass, not a sort).
        let by = |a: &(Elem, i64), b: &(Elem, i64)| {
            let by_value = if descending {
                order(b.0, a.0)
            } else {
                order(a.0, b.0)
            };
            by_value.then(a.1.cmp(&b.1))
        };
        let keep_n = keep as usize;
        if keep_n > 0 && keep_n <= FEW && keep_n < row.len() {
            // A few of a long row: one pass keeping the best so far in
            // order; most elements cost one comparison with the last.
            let mut best: Vec<(Elem, i64)> = Vec::with_capacity(keep_n + 1);
            for item in &row {
                if best.len() == keep_n && by(item, &best[keep_n - 1]) != Ordering::Less {
                    continue;
                }
                let at = best.partition_point(|b| by(b, item) == Ordering::Less);
                best.insert(at, *item);
                best.truncate(keep_n);
            }
            row.clear();
            row.extend(best);
        } else if keep_n > 0 && keep_n < row.len() {
            row.select_nth_unstable_by(keep_n - 1, by);
            row[..keep_n].sort_unstable_by(by);
        } else {
            row.sort_unstable_by(by);
        }
        for (j, (v, i)) in row.iter().take(keep_n).enumerate() {
            index[d] = j as i64;
            outs[0].set(&index, *v)?;
            outs[1].set(&index, Elem::I(*i as i128))?;
        }
    }
    Ok(outs)
}

/// `sort`: values in order along `dim`, and their positions.
pub fn sort(
    x: &Tensor,
    dim: i64,
    descending: bool,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    sorted_rows(x, dim, descending, None, types, layouts)
}

/// `topk`: the `k` largest (or smallest) values along `dim`, in order,
/// and their positions.
pub fn topk(
    x: &Tensor,
    k: i64,
    dim: i64,
    largest: bool,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    sorted_rows(x, dim, largest, Some(k), types, layouts)
}

impl crate::lines::Ordered for Elem {
    fn order(self, other: Elem) -> Ordering {
        order(self, other)
    }

    fn is_nan(self) -> bool {
        matches!(self, Elem::F(x) if x.is_nan())
    }
}

/// The element and position `kthvalue`, `median`, `nanmedian` or `mode`
/// picks from one row ([`crate::lines::pick`], the definition).
fn pick(op: &Op, mut row: Vec<(Elem, i64)>) -> (Elem, i64) {
    crate::lines::pick(op, &mut row)
}

/// `kthvalue`, `median`, `nanmedian` and `mode`: per row along the dim
/// (the dim removed unless `keepdim`), the value and its position; for
/// `median`/`nanmedian` without a dim, the one value of every element
/// (NaN, converted to the dtype, when there is none).
pub fn select(
    op: &Op,
    x: &Tensor,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    let mut outs = super::fresh_results(types, layouts)?;
    let (dim, keepdim) = match op {
        Op::Kthvalue { dim, keepdim, .. } | Op::Mode { dim, keepdim } => (Some(*dim), *keepdim),
        Op::Median { dim, keepdim } | Op::Nanmedian { dim, keepdim } => (*dim, *keepdim),
        _ => (None, false),
    };
    let shape = x.shape().to_vec();
    let Some(dim) = dim else {
        let row: Vec<(Elem, i64)> = Indices::new(&shape)
            .enumerate()
            .map(|(i, index)| (x.get(&index), i as i64))
            .collect();
        let v = if row.is_empty() {
            crate::convert::convert(Elem::F(f64::NAN), x.dtype())
        } else {
            pick(op, row).0
        };
        outs[0].set(&[], v)?;
        return Ok(outs);
    };
    if shape.is_empty() {
        // A zero-dim tensor is one row of one element.
        let (v, i) = pick(op, vec![(x.get(&[]), 0)]);
        outs[0].set(&[], v)?;
        outs[1].set(&[], Elem::I(i128::from(i)))?;
        return Ok(outs);
    }
    let d = wrap_dim(dim, shape.len())?;
    let n = shape[d];
    let mut row_shape = shape.clone();
    row_shape[d] = 1;
    for start in Indices::new(&row_shape) {
        let mut index = start.clone();
        let row = (0..n)
            .map(|i| {
                index[d] = i;
                (x.get(&index), i)
            })
            .collect();
        let (v, i) = pick(op, row);
        let mut at = start;
        if !keepdim {
            at.remove(d);
        }
        outs[0].set(&at, v)?;
        outs[1].set(&at, Elem::I(i128::from(i)))?;
    }
    Ok(outs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_ir::DType;
    use kiln_ir::layout::contiguous_strides;

    /// topk's one pass over a row keeps what the full sort puts first:
    /// ties broken by position, NaN largest, both directions.
    #[test]
    fn topk_keeps_the_sorts_first() {
        let values: Vec<f32> = (0..200)
            .map(|i| match i % 7 {
                0 => f32::NAN,
                1 => -0.0,
                2 => 0.0,
                _ => ((i * 37) % 11) as f32 - 5.0,
            })
            .collect();
        let x = Tensor::from_vec(values, &[2, 100]).unwrap();
        for largest in [true, false] {
            for k in [1, 5, 64, 65, 99] {
                let ty = |d| TensorType::new(vec![2, k], d);
                let types = [ty(DType::F32), ty(DType::I64)];
                let layouts = [
                    ResultLayout::Fresh(contiguous_strides(&[2, k])),
                    ResultLayout::Fresh(contiguous_strides(&[2, k])),
                ];
                let top = topk(&x, k, 1, largest, &types, &layouts).unwrap();
                let full = |d| TensorType::new(vec![2, 100], d);
                let sorted = sort(
                    &x,
                    1,
                    largest,
                    &[full(DType::F32), full(DType::I64)],
                    &[
                        ResultLayout::Fresh(contiguous_strides(&[2, 100])),
                        ResultLayout::Fresh(contiguous_strides(&[2, 100])),
                    ],
                )
                .unwrap();
                for r in 0..2 {
                    for j in 0..k {
                        let (a, b) = (top[1].get(&[r, j]), sorted[1].get(&[r, j]));
                        assert_eq!(
                            format!("{a:?}"),
                            format!("{b:?}"),
                            "k {k}, largest {largest}"
                        );
                    }
                }
            }
        }
    }
}
