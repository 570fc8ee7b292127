//! Derived views: ops PyTorch defines as one primitive view with computed
//! arguments (`narrow` is a `slice`, `movedim` a `permute`, `broadcast_to`
//! an `expand`, `unflatten` a `view`, `atleast_Nd` a `view`). Their shape,
//! their strides and their expansion all come from that one view, so they
//! are views with PyTorch's strides by construction. `clamp_min` and
//! `clamp_max` are likewise one `clamp` ([`as_clamp`]).

use crate::error::{Error, ErrorKind, Result};
use crate::view::wrap_dim;

use super::Op;

/// The primitive view `op` is on an input of `shape`; `None` for any other op.
pub fn primitive_view(op: &Op, shape: &[i64]) -> Result<Option<Op>> {
    let rank = shape.len();
    Ok(Some(match op {
        Op::Narrow { dim, start, length } => {
            let d = wrap_dim(*dim, rank)?;
            let size = shape[d];
            // A negative start counts from the end, as PyTorch's narrow.
            let begin = if *start < 0 { start + size } else { *start };
            if *length < 0 {
                return Err(Error::new(
                    ErrorKind::Shape,
                    "narrow(): length must be non-negative.",
                ));
            }
            if begin < 0 || begin + length > size {
                return Err(Error::new(
                    ErrorKind::Shape,
                    format!("start ({start}) + length ({length}) exceeds dimension size ({size})."),
                ));
            }
            Op::Slice {
                dim: d as i64,
                start: Some(begin),
                end: Some(begin + length),
                step: 1,
            }
        }
        Op::Movedim {
            source,
            destination,
        } => Op::Permute {
            dims: movedim_order(source, destination, rank)?,
        },
        Op::BroadcastTo { size } => Op::Expand {
            shape: size.clone(),
        },
        Op::Unflatten { dim, sizes } => {
            let d = wrap_dim(*dim, rank)?;
            let mut new = shape[..d].to_vec();
            new.extend(sizes);
            new.extend(&shape[d + 1..]);
            Op::View { shape: new }
        }
        Op::Atleast1d | Op::Atleast2d | Op::Atleast3d => {
            let n = match op {
                Op::Atleast1d => 1,
                Op::Atleast2d => 2,
                _ => 3,
            };
            let new = match (n, shape) {
                (_, s) if s.len() >= n => s.to_vec(),
                (_, []) => vec![1; n],
                (2, [a]) => vec![1, *a],
                (3, [a]) => vec![1, *a, 1],
                (3, [a, b]) => vec![*a, *b, 1],
                (_, s) => s.to_vec(),
            };
            Op::View { shape: new }
        }
        _ => return Ok(None),
    }))
}

/// `torch.movedim`'s permutation: the `source` dims go to `destination`,
/// the others keep their order in the remaining places.
fn movedim_order(source: &[i64], destination: &[i64], rank: usize) -> Result<Vec<i64>> {
    if source.len() != destination.len() {
        return Err(Error::new(
            ErrorKind::Shape,
            format!(
                "movedim: Invalid source or destination dims: source ({:?} dims) should contain the same number of dims as destination ({:?} dims)",
                source, destination
            ),
        ));
    }
    let src: Vec<usize> = source
        .iter()
        .map(|&d| wrap_dim(d, rank))
        .collect::<Result<_>>()?;
    let dst: Vec<usize> = destination
        .iter()
        .map(|&d| wrap_dim(d, rank))
        .collect::<Result<_>>()?;
    let repeated = |v: &[usize]| (1..v.len()).any(|i| v[..i].contains(&v[i]));
    if repeated(&src) {
        return Err(Error::new(
            ErrorKind::Shape,
            format!("movedim: repeated dim in `source` ({source:?})"),
        ));
    }
    if repeated(&dst) {
        return Err(Error::new(
            ErrorKind::Shape,
            format!("movedim: repeated dim in `destination` ({destination:?})"),
        ));
    }
    let mut order: Vec<Option<i64>> = vec![None; rank];
    for (&s, &d) in src.iter().zip(&dst) {
        order[d] = Some(s as i64);
    }
    let mut rest = (0..rank as i64).filter(|d| !src.contains(&(*d as usize)));
    Ok(order
        .into_iter()
        .map(|o| o.or_else(|| rest.next()).unwrap_or(0))
        .collect())
}

/// The `clamp` that `clamp_min` or `clamp_max` is; `None` for any other op.
pub fn as_clamp(op: &Op) -> Option<Op> {
    match op {
        Op::ClampMin { min } => Some(Op::Clamp {
            min: Some(*min),
            max: None,
        }),
        Op::ClampMax { max } => Some(Op::Clamp {
            min: None,
            max: Some(*max),
        }),
        _ => None,
    }
}
