//! The geometry of advanced indexing (`x[i, :, j]` with tensors: ATen's
//! `index.Tensor` and `index_put`), written once for inference, the layout
//! rule and the interpreter, as ATen's `AdvancedIndex` defines it:
//!
//! - the index tensors (`none` for a full slice) broadcast together to one
//!   *index shape*; missing trailing entries are `none`;
//! - when the tensors index adjacent dims, the result is the input's shape
//!   with those dims replaced by the index shape; when a `none` separates
//!   them, the indexed dims move to the front first (`transposeToFront`),
//!   so the index shape leads the result;
//! - every position is an int64 or int32 in `[-size, size)`, negative ones
//!   counting from the end.
//!
//! Bool and uint8 masks select by value, so the result's shape would depend
//! on the data: Kiln's shapes are static, and it refuses them.

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::layout::{IterOperand, pointwise_output_strides};
use crate::view::broadcast_shapes;

/// One entry of an index list: a tensor's shape and dtype, or `none`.
pub type IndexEntry<'a> = Option<(&'a [i64], DType)>;

/// Where each result position reads from, and the result's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdvancedIndex {
    /// The input's dims in the order the result walks them: the identity
    /// when the indexed dims are adjacent, else the indexed dims first.
    pub perm: Vec<usize>,
    /// How many (permuted) dims come before the indexed ones.
    pub before: usize,
    /// For each index tensor, in order: the input dim it indexes.
    pub dims: Vec<usize>,
    /// The shape the index tensors broadcast to.
    pub index_shape: Vec<i64>,
    /// The result's shape: the dims before, the index shape, the dims after.
    pub shape: Vec<i64>,
}

fn index_error(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Shape, message)
}

impl AdvancedIndex {
    /// The geometry of indexing a tensor of `input` shape with `indices`,
    /// with PyTorch's errors (`what` names the op in Kiln's own ones).
    pub fn new(what: &str, input: &[i64], indices: &[IndexEntry<'_>]) -> Result<AdvancedIndex> {
        if indices.is_empty() {
            return Err(index_error("at least one index must be provided"));
        }
        if indices.len() > input.len() {
            return Err(index_error(format!(
                "too many indices for tensor of dimension {} (got {})",
                input.len(),
                indices.len()
            )));
        }
        let mut dims = Vec::new();
        let mut index_shape: Option<Vec<i64>> = None;
        let mut shapes: Vec<&[i64]> = Vec::new();
        for (d, entry) in indices.iter().enumerate() {
            let Some((shape, dtype)) = entry else {
                continue;
            };
            match dtype {
                DType::I64 | DType::I32 => {}
                DType::Bool | DType::U8 => {
                    return Err(Error::new(
                        ErrorKind::Unsupported,
                        format!(
                            "{what}: a {} mask selects elements by value, so the result's shape \
                             would depend on the data; Kiln's shapes are static (index with \
                             positions instead, e.g. from torch.nonzero outside the program)",
                            if *dtype == DType::Bool {
                                "bool"
                            } else {
                                "uint8"
                            }
                        ),
                    ));
                }
                _ => {
                    return Err(index_error(
                        "tensors used as indices must be long, int, byte or bool tensors",
                    ));
                }
            }
            dims.push(d);
            shapes.push(shape);
            index_shape = Some(match index_shape {
                None => shape.to_vec(),
                Some(s) => broadcast_shapes(&s, shape).map_err(|_| {
                    let listed: Vec<String> = shapes
                        .iter()
                        .map(|s| crate::view::format_shape(s))
                        .collect();
                    index_error(format!(
                        "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                        listed.join(", ")
                    ))
                })?,
            });
        }
        let Some(index_shape) = index_shape else {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("{what}: every index is none (at least one must be a tensor)"),
            ));
        };
        let adjacent = dims.windows(2).all(|w| w[1] == w[0] + 1);
        let perm: Vec<usize> = if adjacent {
            (0..input.len()).collect()
        } else {
            dims.iter()
                .copied()
                .chain((0..input.len()).filter(|d| !dims.contains(d)))
                .collect()
        };
        let before = if adjacent { dims[0] } else { 0 };
        let numel: i64 = index_shape.iter().product();
        if numel > 0 && dims.iter().any(|&d| input[d] == 0) {
            return Err(index_error(
                "index is out of bounds for dimension with size 0",
            ));
        }
        let after = &perm[before + dims.len()..];
        let shape: Vec<i64> = perm[..before]
            .iter()
            .map(|&d| input[d])
            .chain(index_shape.iter().copied())
            .chain(after.iter().map(|&d| input[d]))
            .collect();
        Ok(AdvancedIndex {
            perm,
            before,
            dims,
            index_shape,
            shape,
        })
    }

    /// The input dims after the indexed ones, in the result's order.
    fn after(&self) -> &[usize] {
        &self.perm[self.before + self.dims.len()..]
    }

    /// The input position a result position reads, given the (already
    /// wrapped) positions the index tensors hold there.
    pub fn source(&self, result: &[i64], positions: &[i64], rank: usize) -> Vec<i64> {
        let mut source = vec![0; rank];
        for (k, &d) in self.perm[..self.before].iter().enumerate() {
            source[d] = result[k];
        }
        for (&d, &p) in self.dims.iter().zip(positions) {
            source[d] = p;
        }
        let first_after = self.before + self.index_shape.len();
        for (k, &d) in self.after().iter().enumerate() {
            source[d] = result[first_after + k];
        }
        source
    }

    /// The part of a result position that addresses the index tensors
    /// (broadcast to the index shape).
    pub fn index_position<'a>(&self, result: &'a [i64]) -> &'a [i64] {
        &result[self.before..self.before + self.index_shape.len()]
    }

    /// The strides PyTorch gives `index`'s result: TensorIterator's over the
    /// input restrided to the result's shape (stride 0 across the index
    /// dims) and the index tensors reshaped to line up with them
    /// (`restride_src` and `reshape_indexer` in ATen).
    pub fn result_strides(
        &self,
        input_strides: &[i64],
        itemsize: usize,
        index_strides: &[(&[i64], &[i64], usize)],
    ) -> Vec<i64> {
        let m = self.index_shape.len();
        let after = self.after();
        let src_strides: Vec<i64> = self.perm[..self.before]
            .iter()
            .map(|&d| input_strides[d])
            .chain(std::iter::repeat_n(0, m))
            .chain(after.iter().map(|&d| input_strides[d]))
            .collect();
        let aligned: Vec<(Vec<i64>, Vec<i64>, usize)> = index_strides
            .iter()
            .map(|(shape, strides, size)| {
                // Broadcast to the index shape (leading dims added), then
                // surrounded by ones.
                let lead = m - shape.len();
                let mut s = vec![1; self.before];
                let mut st = vec![0; self.before];
                for k in 0..m {
                    let (size_k, stride_k) = if k < lead {
                        (1, 0)
                    } else {
                        (shape[k - lead], strides[k - lead])
                    };
                    s.push(size_k);
                    st.push(stride_k);
                }
                s.extend(std::iter::repeat_n(1, after.len()));
                st.extend(std::iter::repeat_n(0, after.len()));
                (s, st, *size)
            })
            .collect();
        let mut operands = vec![IterOperand {
            shape: &self.shape,
            strides: &src_strides,
            itemsize,
        }];
        operands.extend(aligned.iter().map(|(s, st, size)| IterOperand {
            shape: s,
            strides: st,
            itemsize: *size,
        }));
        pointwise_output_strides(&self.shape, &operands)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(input: &[i64], indices: &[Option<&[i64]>]) -> AdvancedIndex {
        let entries: Vec<IndexEntry<'_>> =
            indices.iter().map(|e| e.map(|s| (s, DType::I64))).collect();
        AdvancedIndex::new("index", input, &entries).unwrap()
    }

    #[test]
    fn adjacent_indices_replace_their_dims() {
        let g = geometry(&[2, 3, 4, 5], &[None, Some(&[2, 1]), Some(&[3])]);
        assert_eq!(g.shape, vec![2, 2, 3, 5]);
        assert_eq!(g.before, 1);
        assert_eq!(g.source(&[1, 0, 2, 4], &[2, 3], 4), vec![1, 2, 3, 4]);
    }

    #[test]
    fn separated_indices_lead_the_result() {
        let g = geometry(&[2, 3, 4, 5], &[Some(&[2]), None, Some(&[2])]);
        assert_eq!(g.shape, vec![2, 3, 5]);
        assert_eq!(g.perm, vec![0, 2, 1, 3]);
        assert_eq!(g.source(&[1, 2, 4], &[1, 3], 4), vec![1, 2, 3, 4]);
    }

    /// Strides recorded from PyTorch 2.15 (`torch.ops.aten.index.Tensor`).
    #[test]
    fn result_strides_are_pytorchs() {
        let cl = [60, 1, 15, 3];
        let idx: &[i64] = &[2];
        let one = [(idx, &[1i64][..], 8usize)];
        let g = geometry(&[2, 3, 4, 5], &[None, Some(&[2])]);
        assert_eq!(g.result_strides(&cl, 4, &one), vec![40, 20, 5, 1]);
        let g = geometry(&[2, 3, 4, 5], &[None, None, Some(&[2])]);
        assert_eq!(g.result_strides(&cl, 4, &one), vec![30, 1, 3, 6]);
        let g = geometry(&[2, 3, 4, 5], &[Some(&[2]), None, Some(&[2])]);
        assert_eq!(g.result_strides(&cl, 4, &[one[0], one[0]]), vec![15, 1, 3]);
        let g = geometry(&[5, 4], &[None, Some(&[2])]);
        assert_eq!(g.result_strides(&[1, 5], 4, &one), vec![2, 1]);
        let g = geometry(&[5, 4], &[Some(&[2])]);
        assert_eq!(g.result_strides(&[1, 5], 4, &one), vec![4, 1]);
        let g = geometry(&[2, 3, 4, 5], &[None, Some(&[1, 2]), None, Some(&[2])]);
        assert_eq!(g.shape, vec![1, 2, 2, 4]);
        let two = [(&[1i64, 2][..], &[2i64, 1][..], 8usize), one[0]];
        assert_eq!(g.result_strides(&cl, 4, &two), vec![16, 8, 4, 1]);
    }
}
