//! `real`, `imag` and `complex` on the interpreter (every backend runs
//! them here): the parts of complex values, and complex values from parts.

use kiln_ir::layout::ResultLayout;
use kiln_ir::{Error, ErrorKind, Op, Result, TensorType};

use super::{broadcast_elems, fill};
use crate::convert::{Elem, convert};
use crate::tensor::Tensor;

/// Runs `real`, `imag` or `complex` (`None`: another op).
pub(super) fn run(
    op: &Op,
    operands: &[Option<&Tensor>],
    out: &TensorType,
    layout: &ResultLayout,
) -> Result<Option<Tensor>> {
    let tensor = |i: usize| {
        operands
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| Error::new(ErrorKind::Arity, format!("{} takes tensors", op.name())))
    };
    let t = match (op, layout) {
        // A real tensor's `real` is the tensor itself.
        (Op::Real, ResultLayout::View(g)) => tensor(0)?.view(g.clone())?,
        (Op::Real | Op::Imag, ResultLayout::Fresh(strides)) => {
            let values = tensor(0)?.values();
            let imag = matches!(op, Op::Imag);
            fill(out, strides, |i| {
                let (re, im) = values[i as usize].complex();
                convert(Elem::F(if imag { im } else { re }), out.dtype)
            })?
        }
        (Op::Complex, ResultLayout::Fresh(strides)) => {
            let re = broadcast_elems(tensor(0)?, &out.shape)?;
            let im = broadcast_elems(tensor(1)?, &out.shape)?;
            fill(out, strides, |i| {
                let k = i as usize;
                convert(Elem::C(re[k].f64(), im[k].f64()), out.dtype)
            })?
        }
        _ => return Ok(None),
    };
    Ok(Some(t))
}
