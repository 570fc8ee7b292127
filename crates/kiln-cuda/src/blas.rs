//! Matmul steps as cuBLAS calls: which strided views cuBLAS takes, and the
//! column-major arguments of `cublasGemmStridedBatchedEx` that compute
//! them (the geometry is pure and tested on every machine; the call
//! itself is in [`crate::device`]).
//!
//! cuBLAS is column-major and Kiln's views are row-major, so `out = a @ b`
//! is computed as `outᵀ = bᵀ · aᵀ`: a row-major matrix with unit column
//! stride is its transpose in column-major with the row stride as leading
//! dimension, and a matrix with unit row stride is itself, transposed by
//! the call. Batch dims broadcast as torch.matmul's: each operand's
//! stride is 0 along the dims it has size 1 (or lacks); the innermost
//! batch dim (after merging dims contiguous in all three operands) is
//! cuBLAS's batch, the others are separate calls.
//!
//! Precision follows PyTorch on CUDA: f32 without TF32
//! (`allow_tf32 = False`), f64 in f64, f16 and bf16 with f32 accumulation.

use kiln_ir::{DType, Geometry};
use kiln_passes::plan::TensorView;

/// The cuBLAS arguments of one matmul step. Operand `A` of cuBLAS is
/// Kiln's `b`, operand `B` is Kiln's `a`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gemm {
    pub dtype: DType,
    /// Column-major sizes: `m` is the product's columns, `n` its rows,
    /// `k` the summed dim.
    pub m: i32,
    pub n: i32,
    pub k: i32,
    /// Whether cuBLAS transposes its `A` (Kiln's `b`) and its `B`.
    pub trans_a: bool,
    pub trans_b: bool,
    pub lda: i32,
    pub ldb: i32,
    pub ldc: i32,
    /// One strided-batched call per run.
    pub runs: Vec<Run>,
}

/// One `cublasGemmStridedBatchedEx` call: element offsets of the first
/// product's `A`, `B` and `C`, and their strides between products.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub offsets: [i64; 3],
    pub strides: [i64; 3],
    pub count: i32,
}

/// The dtypes cuBLAS multiplies here.
pub fn blas_dtype(d: DType) -> bool {
    matches!(d, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
}

/// A matrix operand: batch dims, then rows and cols with their strides.
struct Matrix {
    batch: Vec<(i64, i64)>,
    rows: i64,
    cols: i64,
    row_stride: i64,
    col_stride: i64,
    offset: i64,
}

impl Matrix {
    /// `g` as matrices; a 1-D operand is a row (`as_row`) or a column,
    /// as torch.matmul treats it.
    fn of(g: &Geometry, as_row: bool) -> Matrix {
        let r = g.rank();
        if r == 1 {
            let (n, s) = (g.shape[0], g.strides[0]);
            let (rows, cols, row_stride, col_stride) =
                if as_row { (1, n, 0, s) } else { (n, 1, s, 0) };
            return Matrix {
                batch: vec![],
                rows,
                cols,
                row_stride,
                col_stride,
                offset: g.offset,
            };
        }
        Matrix {
            batch: g.shape[..r - 2]
                .iter()
                .copied()
                .zip(g.strides[..r - 2].iter().copied())
                .collect(),
            rows: g.shape[r - 2],
            cols: g.shape[r - 1],
            row_stride: g.strides[r - 2],
            col_stride: g.strides[r - 1],
            offset: g.offset,
        }
    }

    /// The column-major view cuBLAS reads: `(transposed, leading dim)`
    /// where `transposed` means the matrix is stored as its transpose
    /// (unit column stride); `None` when neither stride is a unit one.
    fn column_major(&self) -> Option<(bool, i64)> {
        let row_major_ld = if self.rows == 1 {
            self.cols
        } else {
            self.row_stride
        };
        let col_major_ld = if self.cols == 1 {
            self.rows
        } else {
            self.col_stride
        };
        if (self.col_stride == 1 || self.cols == 1) && row_major_ld >= self.cols.max(1) {
            Some((true, row_major_ld.max(1)))
        } else if (self.row_stride == 1 || self.rows == 1) && col_major_ld >= self.rows.max(1) {
            Some((false, col_major_ld.max(1)))
        } else {
            None
        }
    }

    /// This operand's stride along each dim of the broadcast batch
    /// `batch` (0 where it broadcasts).
    fn batch_strides(&self, batch: &[i64]) -> Vec<i64> {
        let skip = batch.len() - self.batch.len();
        (0..batch.len())
            .map(|d| match d.checked_sub(skip).map(|i| self.batch[i]) {
                Some((size, stride)) if size != 1 => stride,
                _ => 0,
            })
            .collect()
    }
}

/// The cuBLAS calls of `out = a @ b`, or `None` when cuBLAS cannot read
/// these views (no unit stride in a matrix, sizes past 32 bits, a dtype
/// it does not multiply here), which the host then computes.
pub fn gemm(a: &TensorView, b: &TensorView, out: &TensorView) -> Option<Gemm> {
    let dtype = out.dtype;
    if !blas_dtype(dtype) || a.dtype != dtype || b.dtype != dtype {
        return None;
    }
    let ma = Matrix::of(&a.geometry, true);
    let mb = Matrix::of(&b.geometry, false);
    // The output without the dims of 1-D operands: [.., m, n].
    let mut out_g = out.geometry.clone();
    if a.geometry.rank() == 1 {
        let at = out_g.shape.len() - usize::from(b.geometry.rank() != 1);
        out_g.shape.insert(at, 1);
        out_g.strides.insert(at, 0);
    }
    if b.geometry.rank() == 1 {
        out_g.shape.push(1);
        out_g.strides.push(0);
    }
    let mo = Matrix::of(&out_g, true);
    let (rows, cols, inner) = (ma.rows, mb.cols, ma.cols);
    // An empty sum is left to the host (which writes the zeros).
    if inner == 0 {
        return None;
    }
    // C' = outᵀ must be stored untransposed in column-major: unit column
    // stride in Kiln's terms.
    let (out_transposed, ldc) = mo.column_major()?;
    if !out_transposed {
        return None;
    }
    let (b_transposed, lda) = mb.column_major()?;
    let (a_transposed, ldb) = ma.column_major()?;
    let fits = |x: i64| i32::try_from(x).ok();
    let batch: Vec<i64> = mo.batch.iter().map(|&(s, _)| s).collect();
    let strides = [
        mb.batch_strides(&batch),
        ma.batch_strides(&batch),
        mo.batch_strides(&batch),
    ];
    // Merge batch dims that are one run of equal steps in all operands.
    let mut dims: Vec<(i64, [i64; 3])> = Vec::new();
    for (d, &size) in batch.iter().enumerate() {
        let step = [strides[0][d], strides[1][d], strides[2][d]];
        match dims.last_mut() {
            Some((outer, outer_step)) if (0..3).all(|o| outer_step[o] == step[o] * size) => {
                *outer *= size;
                *outer_step = step;
            }
            _ => dims.push((size, step)),
        }
    }
    let (count, run_strides) = dims.pop().unwrap_or((1, [0; 3]));
    let mut runs = Vec::new();
    // An empty product needs no call.
    let outer: i64 = if rows == 0 || cols == 0 || count == 0 {
        0
    } else {
        dims.iter().map(|(s, _)| s).product()
    };
    for index in 0..outer {
        let mut offsets = [mb.offset, ma.offset, mo.offset];
        let mut rest = index;
        for (size, step) in dims.iter().rev() {
            let i = rest % size;
            rest /= size;
            for o in 0..3 {
                offsets[o] += i * step[o];
            }
        }
        runs.push(Run {
            offsets,
            strides: run_strides,
            count: fits(count)?,
        });
    }
    Some(Gemm {
        dtype,
        m: fits(cols)?,
        n: fits(rows)?,
        k: fits(inner)?,
        // cuBLAS's A is bᵀ: stored as bᵀ (unit column stride) it is used
        // as is, stored as b it is transposed by the call.
        trans_a: !b_transposed,
        trans_b: !a_transposed,
        lda: fits(lda)?,
        ldb: fits(ldb)?,
        ldc: fits(ldc)?,
        runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_passes::plan::BufferId;

    fn view(shape: &[i64], strides: &[i64], offset: i64) -> TensorView {
        TensorView {
            buffer: BufferId(0),
            dtype: DType::F64,
            geometry: Geometry::new(shape.to_vec(), strides.to_vec(), offset),
        }
    }

    /// What cuBLAS computes for `g` (column-major, alpha 1, beta 0).
    fn run_like_cublas(g: &Gemm, a: &[f64], b: &[f64], c: &mut [f64]) {
        let at = |m: &[f64], trans: bool, ld: i32, base: i64, i: i32, j: i32| {
            let (r, s) = if trans { (j, i) } else { (i, j) };
            m[(base + r as i64 + s as i64 * ld as i64) as usize]
        };
        for run in &g.runs {
            for p in 0..run.count as i64 {
                let base = |o: usize| run.offsets[o] + p * run.strides[o];
                for i in 0..g.m {
                    for j in 0..g.n {
                        let mut sum = 0.0;
                        for l in 0..g.k {
                            sum += at(a, g.trans_a, g.lda, base(0), i, l)
                                * at(b, g.trans_b, g.ldb, base(1), l, j);
                        }
                        c[(base(2) + i as i64 + j as i64 * g.ldc as i64) as usize] = sum;
                    }
                }
            }
        }
    }

    /// `a @ b` by definition, over the views' geometries (1-D operands
    /// as torch.matmul takes them).
    fn expected(
        a: &TensorView,
        b: &TensorView,
        out: &TensorView,
        xa: &[f64],
        xb: &[f64],
    ) -> Vec<f64> {
        let (ga, gb, go) = (&a.geometry, &b.geometry, &out.geometry);
        let end = go.offset
            + go.shape
                .iter()
                .zip(&go.strides)
                .map(|(n, s)| (n - 1) * s)
                .sum::<i64>()
            + 1;
        let mut c = vec![f64::NAN; end as usize];
        let k = ga.shape[ga.rank() - 1];
        for idx in kiln_runtime::tensor::Indices::new(&go.shape) {
            // The output index as [batch.., i, j], with the dims 1-D
            // operands drop put back.
            let mut full = idx.clone();
            if ga.rank() == 1 {
                full.insert(full.len() - usize::from(gb.rank() != 1), 0);
            }
            if gb.rank() == 1 {
                full.push(0);
            }
            let r = full.len();
            let (i, j, batch) = (full[r - 2], full[r - 1], &full[..r - 2]);
            let elem = |g: &Geometry, row: i64, col: i64, is_a: bool| {
                let gr = g.rank();
                if gr == 1 {
                    return (g.offset + if is_a { col } else { row } * g.strides[0]) as usize;
                }
                let skip = batch.len() + 2 - gr;
                let mut off = g.offset + row * g.strides[gr - 2] + col * g.strides[gr - 1];
                for d in 0..gr - 2 {
                    if g.shape[d] != 1 {
                        off += batch[skip + d] * g.strides[d];
                    }
                }
                off as usize
            };
            let sum: f64 = (0..k)
                .map(|l| xa[elem(ga, i, l, true)] * xb[elem(gb, l, j, false)])
                .sum();
            let at = go.element_offset(&idx);
            c[at as usize] = sum;
        }
        c
    }

    fn check(a: TensorView, b: TensorView, out: TensorView) {
        let g = gemm(&a, &b, &out).expect("cuBLAS takes these views");
        let data = |n: usize, seed: f64| {
            (0..n)
                .map(|i| ((i as f64 + seed) * 0.37).sin())
                .collect::<Vec<_>>()
        };
        let (xa, xb) = (data(4096, 1.0), data(4096, 2.0));
        let want = expected(&a, &b, &out, &xa, &xb);
        let mut got = vec![f64::NAN; want.len()];
        run_like_cublas(&g, &xb, &xa, &mut got);
        for (i, (x, y)) in got.iter().zip(&want).enumerate() {
            assert!(
                (x.is_nan() && y.is_nan()) || (x - y).abs() < 1e-12,
                "element {i}: {x} vs {y}\n{g:?}"
            );
        }
    }

    #[test]
    fn row_major_operands() {
        check(
            view(&[3, 4], &[4, 1], 0),
            view(&[4, 5], &[5, 1], 0),
            view(&[3, 5], &[5, 1], 0),
        );
    }

    #[test]
    fn transposed_operands_and_offsets() {
        check(
            view(&[3, 4], &[1, 3], 2),
            view(&[4, 5], &[1, 4], 1),
            view(&[3, 5], &[5, 1], 0),
        );
        // A padded leading dim.
        check(
            view(&[3, 4], &[7, 1], 0),
            view(&[4, 5], &[1, 6], 0),
            view(&[3, 5], &[8, 1], 3),
        );
    }

    #[test]
    fn batches_broadcast_and_merge() {
        // [2, 3] batch over a contiguous a, b broadcast along the first dim.
        check(
            view(&[2, 3, 2, 4], &[24, 8, 4, 1], 0),
            view(&[1, 3, 4, 5], &[60, 20, 5, 1], 0),
            view(&[2, 3, 2, 5], &[30, 10, 5, 1], 0),
        );
        let g = gemm(
            &view(&[2, 3, 2, 4], &[24, 8, 4, 1], 0),
            &view(&[2, 3, 4, 5], &[60, 20, 5, 1], 0),
            &view(&[2, 3, 2, 5], &[30, 10, 5, 1], 0),
        )
        .unwrap();
        assert_eq!(g.runs.len(), 1, "contiguous batch dims are one call: {g:?}");
        assert_eq!(g.runs[0].count, 6);
    }

    #[test]
    fn vectors_are_rows_and_columns() {
        check(
            view(&[4], &[1], 0),
            view(&[4, 5], &[5, 1], 0),
            view(&[5], &[1], 0),
        );
        check(
            view(&[3, 4], &[4, 1], 0),
            view(&[4], &[2], 1),
            view(&[3], &[1], 0),
        );
        check(
            view(&[2, 3, 4], &[12, 4, 1], 0),
            view(&[4], &[1], 0),
            view(&[2, 3], &[3, 1], 0),
        );
    }

    #[test]
    fn views_without_a_unit_stride_stay_on_the_host() {
        assert!(
            gemm(
                &view(&[3, 4], &[8, 2], 0),
                &view(&[4, 5], &[5, 1], 0),
                &view(&[3, 5], &[5, 1], 0)
            )
            .is_none()
        );
        // An output with unit row stride.
        assert!(
            gemm(
                &view(&[3, 4], &[4, 1], 0),
                &view(&[4, 5], &[5, 1], 0),
                &view(&[3, 5], &[1, 3], 0)
            )
            .is_none()
        );
    }
}
