//! `searchsorted` in the reference interpreter: PyTorch's binary search
//! (lower or upper bound) over each row of the sorted sequence, in the
//! dtype the sequence and the values promote to. The comparisons are
//! PyTorch's (`!(entry >= value)` moves right for a lower bound), so NaN
//! and unsorted sequences give the positions PyTorch's kernel gives; a
//! `sorter` position outside the row is PyTorch's run-time error, checked
//! before anything is read.

use kiln_ir::layout::ResultLayout;
use kiln_ir::{DType, Error, ErrorKind, Result, TensorType};

use crate::convert::{Elem, convert};
use crate::tensor::Tensor;

/// `entry >= value` (`right`: `entry > value`) in the common dtype; false
/// when either is NaN.
fn past(entry: Elem, value: Elem, right: bool) -> bool {
    match (entry, value) {
        (Elem::I(a), Elem::I(b)) => {
            if right {
                a > b
            } else {
                a >= b
            }
        }
        (a, b) => {
            let (a, b) = (a.f64(), b.f64());
            if right { a > b } else { a >= b }
        }
    }
}

/// The positions of `values` (a tensor's elements in order, or one number)
/// in the rows of `sorted` (1-D: one row for every value; else one row per
/// row of the values), compared in `common`.
pub fn searchsorted(
    sorted: &Tensor,
    (values, values_shape): (&[Elem], &[i64]),
    sorter: Option<&Tensor>,
    right: bool,
    common: DType,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    let bd: Vec<Elem> = sorted
        .values()
        .into_iter()
        .map(|v| convert(v, common))
        .collect();
    let n = sorted.shape().last().copied().unwrap_or(1).max(0) as usize;
    let order: Option<Vec<usize>> = match sorter {
        Some(s) => {
            let mut order = Vec::with_capacity(bd.len());
            for v in s.values() {
                let i = v.int();
                if i < 0 || i >= n as i128 {
                    return Err(Error::new(
                        ErrorKind::Runtime,
                        "torch.searchsorted(): sorter index out of range",
                    ));
                }
                order.push(i as usize);
            }
            Some(order)
        }
        None => None,
    };
    let row_len = values_shape.last().copied().unwrap_or(1).max(1) as usize;
    let one_row = sorted.shape().len() == 1;
    let mut positions = Vec::with_capacity(values.len());
    for (k, v) in values.iter().enumerate() {
        let v = convert(*v, common);
        let base = if one_row { 0 } else { (k / row_len) * n };
        let entry = |j: usize| {
            let j = order.as_ref().map_or(j, |o| o[base + j]);
            bd[base + j]
        };
        let (mut start, mut end) = (0usize, n);
        while start < end {
            let mid = start + (end - start) / 2;
            if past(entry(mid), v, right) {
                end = mid;
            } else {
                start = mid + 1;
            }
        }
        positions.push(Elem::I(start as i128));
    }
    let mut outs = super::fresh_results(types, layouts)?;
    super::write_values(&mut outs[0], positions.into_iter())?;
    Ok(outs)
}
