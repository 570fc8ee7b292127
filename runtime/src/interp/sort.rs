//! Sorting ops of the reference interpreter: `sort` and `topk`, row by row
//! along one dim with a total order in which NaN is the largest value and
//! equal values keep their order (a stable sort).

use std::cmp::Ordering;

use kiln_ir::layout::ResultLayout;
use kiln_ir::view::wrap_dim;
use kiln_ir::{Result, TensorType};

use crate::convert::Elem;
use crate::tensor::{Indices, Tensor};

/// The order `sort` and `topk` use: NaN above everything, `-0.0 == 0.0`.
fn order(a: Elem, b: Elem) -> Ordering {
    match (a, b) {
        (Elem::F(x), Elem::F(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        },
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
        // Stable: equal values keep their order either way.
        if descending {
            row.sort_by(|a, b| order(b.0, a.0));
        } else {
            row.sort_by(|a, b| order(a.0, b.0));
        }
        for (j, (v, i)) in row.iter().take(keep as usize).enumerate() {
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
