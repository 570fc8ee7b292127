//! The reflection and replication pads (`reflection_pad1d/2d/3d`,
//! `replication_pad1d/2d/3d`: `F.pad`'s `reflect` and `replicate` modes),
//! written once for inference and the expansion: which mode and how many
//! trailing dims an op pads, PyTorch's checks and messages, and where each
//! output position of a padded dim reads.
//!
//! Every padded dim is a gather of the input along it: output position
//! `o` reads input position `src(o − left)`, where `src(i)` reflects `i`
//! about the dim's ends without repeating them (`reflect`) or clamps it
//! into the dim (`replicate`). Negative padding crops.

use crate::error::{Error, ErrorKind, Result};
use crate::view::format_shape;

use super::Op;

/// How a pad fills the new positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// Mirrored about the first and last positions (not repeating them).
    Reflect,
    /// The first or last position repeated.
    Replicate,
}

/// A pad op's mode, how many trailing dims it pads, and its `padding`
/// (left and right of the last dim first, as `F.pad` lists them).
pub fn pad_of(op: &Op) -> Option<(PadMode, usize, &[i64])> {
    Some(match op {
        Op::ReflectionPad1d { padding } => (PadMode::Reflect, 1, padding),
        Op::ReflectionPad2d { padding } => (PadMode::Reflect, 2, padding),
        Op::ReflectionPad3d { padding } => (PadMode::Reflect, 3, padding),
        Op::ReplicationPad1d { padding } => (PadMode::Replicate, 1, padding),
        Op::ReplicationPad2d { padding } => (PadMode::Replicate, 2, padding),
        Op::ReplicationPad3d { padding } => (PadMode::Replicate, 3, padding),
        _ => return None,
    })
}

fn pad_err(message: String) -> Error {
    Error::new(ErrorKind::Shape, message)
}

/// The padded shape of `input`, after PyTorch's checks in its order: the
/// padding's length, the input's rank (`k + 1` or `k + 2` dims, only a
/// batch dim may be empty), reflection's padding below each dim's size,
/// and every padded size at least 1.
pub fn padded_shape(mode: PadMode, k: usize, padding: &[i64], input: &[i64]) -> Result<Vec<i64>> {
    if padding.len() != 2 * k {
        return Err(pad_err(format!(
            "padding size is expected to be {}, but got: {}",
            2 * k,
            padding.len()
        )));
    }
    let rank = input.len();
    let batched = rank == k + 2;
    let empty = input.iter().skip(usize::from(batched)).any(|&s| s == 0);
    if !(rank == k + 1 || batched) || empty {
        return Err(pad_err(format!(
            "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {}",
            k + 1,
            k + 2,
            format_shape(input)
        )));
    }
    if mode == PadMode::Reflect {
        for j in 0..k {
            let d = rank - 1 - j;
            let (l, r) = (padding[2 * j], padding[2 * j + 1]);
            if l >= input[d] || r >= input[d] {
                return Err(pad_err(format!(
                    "Argument #{}: Padding size should be less than the corresponding input dimension, but got: padding ({l}, {r}) at dimension {d} of input {}",
                    4 + 2 * j,
                    format_shape(input)
                )));
            }
        }
    }
    let mut out = input.to_vec();
    for j in 0..k {
        let d = rank - 1 - j;
        out[d] = input[d] + padding[2 * j] + padding[2 * j + 1];
    }
    let names = ["D", "H", "W"];
    let padded = &out[rank - k..];
    if padded.iter().any(|&s| s < 1) {
        let named = |sizes: &[i64], sep: &str| -> String {
            names[3 - k..]
                .iter()
                .zip(sizes)
                .map(|(n, s)| format!("{n}: {s}"))
                .collect::<Vec<_>>()
                .join(sep)
        };
        return Err(pad_err(if k == 1 {
            format!(
                "input (W: {}) is too small. Calculated output W: {}",
                input[rank - 1],
                out[rank - 1]
            )
        } else {
            format!(
                "Calculated output {} must be >= 1 in every dimension (input {})",
                named(padded, " "),
                named(&input[rank - k..], ", ")
            )
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages recorded from PyTorch 2.15.
    #[test]
    fn pytorchs_messages() {
        let msg = |mode, k, padding: &[i64], input: &[i64]| {
            padded_shape(mode, k, padding, input)
                .unwrap_err()
                .message()
                .to_string()
        };
        assert_eq!(
            msg(PadMode::Reflect, 2, &[1, 1, 3, 0], &[1, 1, 3, 3]),
            "Argument #6: Padding size should be less than the corresponding input dimension, but got: padding (3, 0) at dimension 2 of input [1, 1, 3, 3]"
        );
        assert_eq!(
            msg(PadMode::Replicate, 1, &[-4, 0], &[1, 3, 3]),
            "input (W: 3) is too small. Calculated output W: -1"
        );
        assert_eq!(
            msg(PadMode::Reflect, 3, &[-2, -2, 0, 0, 0, 0], &[1, 3, 3, 3, 3]),
            "Calculated output D: 3 H: 3 W: -1 must be >= 1 in every dimension (input D: 3, H: 3, W: 3)"
        );
        assert_eq!(
            msg(PadMode::Reflect, 1, &[1, 1], &[0, 3]),
            "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: [0, 3]"
        );
        assert_eq!(
            padded_shape(PadMode::Replicate, 1, &[1, 1], &[0, 3, 5]).unwrap(),
            vec![0, 3, 7]
        );
    }
}
