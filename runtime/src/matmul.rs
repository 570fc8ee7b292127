//! Matrix products for compiled plans, through the `gemm` crate: f32, f64,
//! complex64 and complex128 directly; f16 and bf16 through f32, as
//! PyTorch's CPU kernels accumulate them in f32 and round once (gemm's own
//! f16 kernels may accumulate in f16 on CPUs with native f16 arithmetic).
//! Batch dims broadcast as torch.matmul's do; 1-D operands are a row or a
//! column.

use half::{bf16, f16};
use kiln_ir::view::{Geometry, broadcast_shapes};
use kiln_ir::{DType, Error, ErrorKind, Result};

use crate::tensor::Indices;

/// One operand of a product: base pointer, dtype and geometry (in elements).
pub struct MatrixArg<'a> {
    /// The start of the operand's buffer; the geometry counts from here.
    pub ptr: *mut u8,
    /// The element dtype (the three operands of a product share it).
    pub dtype: DType,
    /// Shape, strides and offset in elements: a vector, a matrix, or a
    /// batch of matrices.
    pub geometry: &'a Geometry,
}

/// A matrix dim pair (rows, cols) with strides, plus batch dims.
struct Matrices {
    batch_shape: Vec<i64>,
    batch_strides: Vec<i64>,
    rows: i64,
    cols: i64,
    row_stride: i64,
    col_stride: i64,
    offset: i64,
}

/// Views a 1-D operand as a row (`as_row`) or a column.
fn matrices(g: &Geometry, as_row: bool) -> Matrices {
    let (shape, strides) = if g.rank() == 1 {
        if as_row {
            (vec![1, g.shape[0]], vec![0, g.strides[0]])
        } else {
            (vec![g.shape[0], 1], vec![g.strides[0], 0])
        }
    } else {
        (g.shape.clone(), g.strides.clone())
    };
    let r = shape.len();
    Matrices {
        batch_shape: shape[..r - 2].to_vec(),
        batch_strides: strides[..r - 2].to_vec(),
        rows: shape[r - 2],
        cols: shape[r - 1],
        row_stride: strides[r - 2],
        col_stride: strides[r - 1],
        offset: g.offset,
    }
}

/// The element offset of batch `index` (right-aligned, broadcasting size-1 dims).
fn batch_offset(m: &Matrices, index: &[i64]) -> i64 {
    let skip = index.len() - m.batch_shape.len();
    m.offset
        + m.batch_shape
            .iter()
            .zip(&m.batch_strides)
            .zip(&index[skip..])
            .map(|((&s, &st), &i)| if s == 1 { 0 } else { i * st })
            .sum::<i64>()
}

/// `out = a @ b`.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes, and `out` must not overlap `a` or `b`.
pub unsafe fn matmul(a: MatrixArg, b: MatrixArg, out: MatrixArg) -> Result<()> {
    let ma = matrices(a.geometry, true);
    let mb = matrices(b.geometry, false);
    // The output of 1-D operands lacks their dims; view it as [.., m, n].
    let out_g = {
        let mut shape = out.geometry.shape.clone();
        let mut strides = out.geometry.strides.clone();
        if a.geometry.rank() == 1 {
            let at = shape.len() - usize::from(b.geometry.rank() != 1);
            shape.insert(at, 1);
            strides.insert(at, 0);
        }
        if b.geometry.rank() == 1 {
            shape.push(1);
            strides.push(0);
        }
        Geometry::new(shape, strides, out.geometry.offset)
    };
    let mo = matrices(&out_g, true);
    let batch = broadcast_shapes(&ma.batch_shape, &mb.batch_shape)?;
    let (m, k, n) = (ma.rows as usize, ma.cols as usize, mb.cols as usize);
    let work = m * n * k;
    let parallelism = if work >= 1 << 18 {
        gemm::Parallelism::Rayon(rayon::current_num_threads())
    } else {
        gemm::Parallelism::None
    };
    // A 0-dim batch has one (empty) index.
    let indices: Vec<Vec<i64>> = Indices::new(&batch).collect();
    let dtype = out.dtype;
    let through_f32 = matches!(dtype, DType::F16 | DType::BF16);
    for index in indices {
        let (oa, ob, oo) = (
            batch_offset(&ma, &index),
            batch_offset(&mb, &index),
            batch_offset(&mo, &index),
        );
        macro_rules! call {
            ($t:ty) => {{
                let size = std::mem::size_of::<$t>() as i64;
                // SAFETY: the caller guarantees the buffers; offsets and
                // strides come from the operands' geometries.
                unsafe {
                    gemm::gemm::<$t>(
                        m,
                        n,
                        k,
                        out.ptr.offset((oo * size) as isize) as *mut $t,
                        mo.col_stride as isize,
                        mo.row_stride as isize,
                        false,
                        a.ptr.offset((oa * size) as isize) as *const $t,
                        ma.col_stride as isize,
                        ma.row_stride as isize,
                        b.ptr.offset((ob * size) as isize) as *const $t,
                        mb.col_stride as isize,
                        mb.row_stride as isize,
                        <$t>::default(),
                        one::<$t>(),
                        false,
                        false,
                        false,
                        parallelism,
                    )
                }
            }};
        }
        match dtype {
            DType::F32 => call!(f32),
            DType::F64 => call!(f64),
            DType::C64 => call!(gemm::c32),
            DType::C128 => call!(gemm::c64),
            _ if through_f32 => {
                // SAFETY: as for `matmul`.
                unsafe { half_product(&a, &b, &out, (&ma, &mb, &mo), (oa, ob, oo), parallelism) }
            }
            other => {
                return Err(Error::new(
                    ErrorKind::Backend,
                    format!("no library matmul for {other}"),
                ));
            }
        }
    }
    Ok(())
}

trait One {
    fn one() -> Self;
}

impl One for f32 {
    fn one() -> Self {
        1.0
    }
}

impl One for f64 {
    fn one() -> Self {
        1.0
    }
}

impl One for gemm::c32 {
    fn one() -> Self {
        gemm::c32::new(1.0, 0.0)
    }
}

impl One for gemm::c64 {
    fn one() -> Self {
        gemm::c64::new(1.0, 0.0)
    }
}

fn one<T: One>() -> T {
    T::one()
}

/// One f16 or bf16 product: operands widened to f32, multiplied, rounded
/// once.
///
/// # Safety
/// As for [`matmul`].
unsafe fn half_product(
    a: &MatrixArg,
    b: &MatrixArg,
    out: &MatrixArg,
    (ma, mb, mo): (&Matrices, &Matrices, &Matrices),
    (oa, ob, oo): (i64, i64, i64),
    parallelism: gemm::Parallelism,
) {
    let half = out.dtype;
    let widen = |ptr: *mut u8, mat: &Matrices, offset: i64| -> Vec<f32> {
        let mut v = Vec::with_capacity((mat.rows * mat.cols) as usize);
        for i in 0..mat.rows {
            for j in 0..mat.cols {
                let at = offset + i * mat.row_stride + j * mat.col_stride;
                // SAFETY: inside the operand's geometry.
                let bits = unsafe { (ptr as *const u16).offset(at as isize).read_unaligned() };
                v.push(match half {
                    DType::F16 => f16::from_bits(bits).to_f32(),
                    _ => bf16::from_bits(bits).to_f32(),
                });
            }
        }
        v
    };
    let (m, k, n) = (ma.rows as usize, ma.cols as usize, mb.cols as usize);
    let x = widen(a.ptr, ma, oa);
    let y = widen(b.ptr, mb, ob);
    let mut z = vec![0f32; m * n];
    // SAFETY: the scratch matrices are contiguous and sized m×k, k×n, m×n.
    unsafe {
        gemm::gemm::<f32>(
            m,
            n,
            k,
            z.as_mut_ptr(),
            1,
            n as isize,
            false,
            x.as_ptr(),
            1,
            k as isize,
            y.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
    for i in 0..m {
        for j in 0..n {
            let at = oo + i as i64 * mo.row_stride + j as i64 * mo.col_stride;
            let bits = match half {
                DType::F16 => f16::from_f32(z[i * n + j]).to_bits(),
                _ => bf16::from_f32(z[i * n + j]).to_bits(),
            };
            // SAFETY: inside the output's geometry.
            unsafe {
                (out.ptr as *mut u16)
                    .offset(at as isize)
                    .write_unaligned(bits)
            };
        }
    }
}
