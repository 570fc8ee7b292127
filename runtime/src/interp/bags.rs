//! `embedding_bag` in the reference interpreter: the rows of the weight
//! that each bag's indices list, summed (times per-sample weights),
//! averaged or maxed, rows equal to the padding index left out; and ATen's
//! bookkeeping results with the values its CPU kernel gives. Offsets and
//! indices are checked (PyTorch's run-time errors) before anything is read.

use kiln_ir::layout::ResultLayout;
use kiln_ir::{Error, ErrorKind, Result, TensorType};

use crate::convert::{Elem, convert};
use crate::tensor::Tensor;

fn fail<T>(message: String) -> Result<T> {
    Err(Error::new(ErrorKind::Runtime, message))
}

/// The options of one `embedding_bag` (the bag count, which
/// `include_last_offset` decides, is the result's).
pub struct Bags {
    /// 0 sum, 1 mean, 2 max.
    pub mode: i64,
    /// Rows left out (a negative index leaves none out).
    pub padding_idx: Option<i64>,
}

/// `embedding_bag(weight, indices, offsets, per_sample_weights)`.
pub fn embedding_bag(
    bags: &Bags,
    weight: &Tensor,
    indices: &Tensor,
    offsets: &Tensor,
    per_sample: Option<&Tensor>,
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    let idx: Vec<i64> = indices.values().iter().map(|v| v.int() as i64).collect();
    let offs: Vec<i64> = offsets.values().iter().map(|v| v.int() as i64).collect();
    let n = idx.len() as i64;
    let (rows, dim) = (weight.shape()[0], weight.shape()[1]);
    if let Some(&first) = offs.first()
        && first != 0
    {
        return fail(format!(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got {first}"
        ));
    }
    if let Some(&last) = offs.last()
        && last > n
    {
        return fail(format!(
            "offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {last}"
        ));
    }
    if offs.windows(2).any(|w| w[1] < w[0]) {
        return fail(
            "Expected i < index_size to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)".into(),
        );
    }
    // PyTorch's generic kernel's message (its fbgemm path, for f32, f16 and
    // bf16 sums and means, words it per bag and may name another index).
    if let Some(bad) = idx.iter().find(|i| **i < 0 || **i >= rows) {
        return fail(format!(
            "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be {bad}"
        ));
    }
    let count = types[0].shape[0];
    let padding = bags.padding_idx.filter(|p| *p >= 0);
    let psw: Option<Vec<f64>> = per_sample.map(|p| p.values().iter().map(|v| v.f64()).collect());
    let wd = weight.dtype();
    let mut out = vec![0.0f64; (count * dim) as usize];
    let mut offset2bag = vec![0i64; idx.len()];
    let mut bag_size = vec![0i64; count as usize];
    let mut argmax = vec![0i64; (count * dim) as usize];
    for b in 0..count {
        let start = offs[b as usize];
        let end = offs.get(b as usize + 1).copied().unwrap_or(n);
        let mut seen = 0i64;
        for p in start..end {
            offset2bag[p as usize] = b;
            let row = idx[p as usize];
            if padding == Some(row) {
                continue;
            }
            let scale = psw.as_ref().map_or(1.0, |s| s[p as usize]);
            for j in 0..dim {
                let v = weight.get(&[row, j]).f64();
                let k = (b * dim + j) as usize;
                match bags.mode {
                    2 => {
                        if seen == 0 || v > out[k] {
                            out[k] = v;
                            argmax[k] = row;
                        }
                    }
                    // Each product rounded to the weight's dtype, as
                    // PyTorch's kernel multiplies in it.
                    _ => out[k] += convert(Elem::F(v * scale), wd).f64(),
                }
            }
            seen += 1;
        }
        bag_size[b as usize] = seen;
        if bags.mode == 1 && seen > 0 {
            for j in 0..dim {
                out[(b * dim + j) as usize] /= seen as f64;
            }
        }
    }
    let mut outs = super::fresh_results(types, layouts)?;
    let ints = |v: &[i64]| v.iter().map(|i| Elem::I(*i as i128)).collect::<Vec<_>>();
    super::write_values(
        &mut outs[0],
        out.into_iter().map(|v| convert(Elem::F(v), wd)),
    )?;
    let bookkeeping = match bags.mode {
        0 => [
            if outs[1].numel() == 0 {
                Vec::new()
            } else {
                ints(&offset2bag)
            },
            vec![Elem::I(0); outs[2].numel() as usize],
            vec![Elem::I(0); outs[3].numel() as usize],
        ],
        1 => [ints(&offset2bag), ints(&bag_size), ints(&bag_size)],
        _ => [ints(&offset2bag), ints(&bag_size), ints(&argmax)],
    };
    for (t, values) in outs[1..].iter_mut().zip(bookkeeping) {
        super::write_values(t, values.into_iter())?;
    }
    Ok(outs)
}
