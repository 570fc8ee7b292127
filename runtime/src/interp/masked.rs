//! `masked_scatter` in the reference interpreter: the input broadcast with
//! the mask, the source's elements (in their logical order) written where
//! the mask is true, in the mask's row-major order. Too few source
//! elements is PyTorch's run-time error, raised before anything is written.

use kiln_ir::layout::ResultLayout;
use kiln_ir::{Error, ErrorKind, Result, TensorType};

use crate::tensor::{Indices, Tensor};

/// `masked_scatter(input, mask, source)`.
pub fn masked_scatter(
    x: &Tensor,
    mask: &Tensor,
    source: &Tensor,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    let shape = types[0].shape.clone();
    let x = x.view(x.geometry().expand(&shape)?)?;
    let mask = mask.view(mask.geometry().expand(&shape)?)?;
    let chosen = mask.values().iter().filter(|m| m.truthy()).count();
    if chosen as i64 > source.numel() {
        return Err(Error::new(
            ErrorKind::Runtime,
            "Number of elements of source < number of ones in mask",
        ));
    }
    let mut taken = source.values().into_iter();
    let mut outs = super::fresh_results(types, layouts)?;
    for p in Indices::new(&shape) {
        let v = if mask.get(&p).truthy() {
            taken.next().unwrap_or_else(|| x.get(&p))
        } else {
            x.get(&p)
        };
        outs[0].set(&p, v)?;
    }
    Ok(outs)
}
