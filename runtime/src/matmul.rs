//! Matrix products for compiled plans, through the `gemm` crate: f32, f64,
//! complex64 and complex128 directly; f16 and bf16 through f32, as
//! PyTorch's CPU kernels accumulate them in f32 and round once (gemm's own
//! f16 kernels may accumulate in f16 on CPUs with native f16 arithmetic).
//! Batch dims broadcast as torch.matmul's do; 1-D operands are a row or a
//! column.

use half::{bf16, f16};
use kiln_ir::view::{Geometry, broadcast_shapes};
use kiln_ir::{DType, Error, ErrorKind, Result};

use crate::packed::{Packed, WeightView};
use crate::storage::Buffer;
use crate::tensor::Indices;

/// One operand of a product: base pointer, dtype and geometry (in elements).
#[derive(Clone, Copy)]
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

/// Whether `gemm` should write a product with a transposed right operand
/// (unit row stride: `x @ wᵀ` for a row-major `w`) into a column-major
/// temp, transposed into the row-major result afterwards. The gemm crate
/// packs such an operand slowly into a row-major result: measured on this
/// project's machine, [64, 1024] @ [1024, 4096]ᵀ takes 5–7 ms directly and
/// 1.4–1.7 ms through the temp, [4, 1024] @ [1024, 4096]ᵀ 3.8 ms and 0.7
/// ms, while for many rows (≥ 1024) or small products the direct call is
/// as fast or faster.
fn nt_through_column_major(m: usize, n: usize, k: usize, mb: &Matrices, mo: &Matrices) -> bool {
    mb.row_stride == 1
        && mb.col_stride != 1
        && mo.col_stride == 1
        && (2..=256).contains(&m)
        && n * k >= 1 << 16
}

/// Whether `gemm` should get a transposed right operand (a dense
/// column-major k×n matrix: `x @ wᵀ` for a row-major `w`) as a row-major
/// copy, for products of many rows (where `nt_through_column_major` does
/// not apply) whose inner dim is longer than the result's rows: gemm packs
/// such an operand slowly. Measured on this project's machine (2 threads):
/// [1024, 3072] @ [3072, 768]ᵀ (BERT's MLP down-projection) 35.5 ms
/// directly, 24.6 with the copy (row-major operand alone: 22.4);
/// [2048, 2048] @ [2048, 1024]ᵀ 44.3 and 42.4; [1024, 1376] @ [1376, 512]ᵀ
/// and [1024, 768] @ [768, 768]ᵀ the same either way; while for a shorter
/// inner dim the copy costs more than it saves ([1024, 768] @ [768,
/// 3072]ᵀ: 22.7 ms directly, 24.0 with it).
fn nt_through_row_major_copy(m: usize, n: usize, k: usize, mb: &Matrices) -> bool {
    mb.batch_shape.is_empty() && mb.row_stride == 1 && mb.col_stride == k as i64 && m > 256 && k > n
}

/// A row-major copy of `b`, a dense column-major k×n matrix, with its
/// geometry; `None` for an element size the copy does not move.
///
/// # Safety
/// `b` must address the k·n elements its matrix view describes.
unsafe fn row_major_copy(
    b: &MatrixArg,
    mb: &Matrices,
    k: usize,
    n: usize,
) -> Result<Option<(Buffer, Geometry)>> {
    let size = b.dtype.itemsize();
    if !matches!(size, 2 | 4 | 8 | 16) {
        return Ok(None);
    }
    let copy = Buffer::for_overwrite(k * n * size)?;
    // SAFETY: the matrix starts at its offset and holds k·n elements of
    // this size; the copy holds as many.
    unsafe {
        let src = b.ptr.add(mb.offset as usize * size);
        let dst = copy.as_ptr() as *mut u8;
        match size {
            2 => transpose_into(src as *const u16, dst as *mut u16, k, n, n),
            4 => transpose_into(src as *const u32, dst as *mut u32, k, n, n),
            8 => transpose_into(src as *const u64, dst as *mut u64, k, n, n),
            // (Pairs of u64: a complex128 needs only 8-byte alignment.)
            _ => transpose_into(src as *const [u64; 2], dst as *mut [u64; 2], k, n, n),
        }
    }
    Ok(Some((copy, Geometry::contiguous(&[k as i64, n as i64]))))
}

/// Copies a column-major m×n matrix (`src[i + j·m]`) into rows of `dst`
/// (`dst[i·row_stride + j]`), in 32×32 blocks so both sides stay in cache,
/// bands of columns shared out among rayon's threads when it is large (a
/// tied lm_head's [128, 32000] result: 6.8 ms on one thread).
///
/// # Safety
/// `src` must hold m·n elements and `dst` m rows of n at `row_stride`.
unsafe fn transpose_into<T: Copy + Send + Sync>(
    src: *const T,
    dst: *mut T,
    m: usize,
    n: usize,
    row_stride: usize,
) {
    let threads = rayon::current_num_threads();
    if threads < 2 || m * n < 1 << 18 {
        // SAFETY: as for this function.
        unsafe { transpose_band(src, dst, m, row_stride, 0..n) };
        return;
    }
    // Bands of whole blocks; each thread writes its own columns of `dst`.
    let per = n.div_ceil(threads).next_multiple_of(TRANSPOSE_BLOCK);
    let (src, dst) = (src as usize, dst as usize);
    rayon::scope(|s| {
        for start in (0..n).step_by(per) {
            s.spawn(move |_| {
                let columns = start..(start + per).min(n);
                // SAFETY: as for this function; bands are disjoint columns.
                unsafe { transpose_band(src as *const T, dst as *mut T, m, row_stride, columns) };
            });
        }
    });
}

const TRANSPOSE_BLOCK: usize = 32;

/// [`transpose_into`] for the columns `columns` (of `0..n`).
///
/// # Safety
/// As for [`transpose_into`], with `columns` inside `0..n`.
unsafe fn transpose_band<T: Copy>(
    src: *const T,
    dst: *mut T,
    m: usize,
    row_stride: usize,
    columns: std::ops::Range<usize>,
) {
    const BLOCK: usize = TRANSPOSE_BLOCK;
    for jb in columns.clone().step_by(BLOCK) {
        for ib in (0..m).step_by(BLOCK) {
            for i in ib..(ib + BLOCK).min(m) {
                for j in jb..(jb + BLOCK).min(columns.end) {
                    // SAFETY: i < m and j < n, per the contract.
                    unsafe { *dst.add(i * row_stride + j) = *src.add(i + j * m) };
                }
            }
        }
    }
}

/// `out = a @ b`.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes, and `out` must not overlap `a` or `b`.
pub unsafe fn matmul(a: MatrixArg, b: MatrixArg, out: MatrixArg) -> Result<()> {
    // SAFETY: forwarded.
    unsafe { matmul_weight(a, b, out, None) }
}

/// What is known of a product's right operand beyond its view.
#[derive(Clone, Copy)]
pub(crate) enum Weight<'a> {
    /// The buffer `b` points into, whose bytes nothing writes while this
    /// runs nor later without renumbering them ([`Buffer::rewritten`]):
    /// an f32 `b` is packed once and the copy kept for later products
    /// (`crate::packed`).
    Input(&'a Buffer),
    /// `b`'s packed copy, made when the weight was bound to the program
    /// (`crate::bind`): `b`'s own bytes are not the weight's and must not
    /// be read.
    Bound(&'a Packed),
}

/// `out = a @ b`, `b` being a weight where `weight` says so.
///
/// # Safety
/// As for [`matmul`]; with [`Weight::Input`], `b.ptr` is its buffer's
/// first byte.
pub(crate) unsafe fn matmul_weight(
    a: MatrixArg,
    b: MatrixArg,
    out: MatrixArg,
    weight: Option<Weight>,
) -> Result<()> {
    if let Some((ga, go)) = folded(&a, &b, &out) {
        let a = MatrixArg { geometry: &ga, ..a };
        let out = MatrixArg {
            geometry: &go,
            ..out
        };
        // SAFETY: the same elements, viewed as one matrix each.
        return unsafe { matmul_weight(a, b, out, weight) };
    }
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
    #[cfg(target_arch = "x86_64")]
    if let Some(weight) = weight {
        // SAFETY: as for `matmul_weight`.
        if unsafe { packed_product(&a, &b, &out, (&ma, &mb, &mo), m, weight)? } {
            return Ok(());
        }
    }
    if let Some(Weight::Bound(_)) = weight {
        return Err(crate::bind::read_unpacked());
    }
    // A transposed right operand that gemm packs slowly goes to it as a
    // row-major copy, made once (see `nt_through_row_major_copy`).
    let copy = if b.geometry.rank() == 2 && nt_through_row_major_copy(m, n, k, &mb) {
        // SAFETY: as for `matmul`.
        unsafe { row_major_copy(&b, &mb, k, n)? }
    } else {
        None
    };
    let (b, mb) = match &copy {
        Some((buffer, geometry)) => (
            MatrixArg {
                ptr: buffer.as_ptr() as *mut u8,
                dtype: b.dtype,
                geometry,
            },
            matrices(geometry, false),
        ),
        None => (b, mb),
    };
    // A 0-dim batch has one (empty) index.
    let indices: Vec<Vec<i64>> = Indices::new(&batch).collect();
    let product = Product {
        a: &a,
        b: &b,
        out: &out,
        ma: &ma,
        mb: &mb,
        mo: &mo,
        m,
        n,
        k,
    };
    if m == 1 && indices.len() == 1 && out.dtype == DType::F32 && n * k >= 1 << 14 {
        let index = &indices[0];
        let at = |x: &MatrixArg, mx: &Matrices| {
            // SAFETY: the batch offset is inside the operand's buffer.
            unsafe { x.ptr.cast::<f32>().offset(batch_offset(mx, index) as isize) }
        };
        let row = Row {
            a: (at(&a, &ma), ma.col_stride as isize),
            b: (at(&b, &mb), mb.row_stride as isize, mb.col_stride as isize),
            out: (at(&out, &mo), mo.col_stride as isize),
            k,
            n,
        };
        // SAFETY: as for `matmul`.
        if unsafe { row.run() } {
            return Ok(());
        }
    }
    // Many small products (attention's heads) run one per thread; a few
    // large ones each use every thread.
    let threads = rayon::current_num_threads();
    if indices.len() >= 2 && threads >= 2 && work < 1 << 22 {
        use rayon::prelude::*;
        indices
            .par_iter()
            // SAFETY: as for `matmul`; products of distinct batch indices
            // write disjoint parts of `out`.
            .try_for_each(|index| unsafe { product.run(index, gemm::Parallelism::None) })
    } else {
        let parallelism = if work >= 1 << 18 {
            gemm::Parallelism::Rayon(threads)
        } else {
            gemm::Parallelism::None
        };
        for index in &indices {
            // SAFETY: as for `matmul`.
            unsafe { product.run(index, parallelism)? };
        }
        Ok(())
    }
}

/// `a` and `out` folded into one matrix each where `a` is a batch of
/// matrices and `b` one matrix (a linear layer over [batch, tokens,
/// features]), as torch.matmul folds them: `b` is packed once, not once
/// per batch entry, and the product is large enough for every thread
/// (BERT-base's [8, 128, 3072] @ [3072, 768]ᵀ: 36 ms as 8 products, 23
/// folded). `None` where there is nothing to fold, or the batch's rows do
/// not make one matrix.
fn folded(a: &MatrixArg, b: &MatrixArg, out: &MatrixArg) -> Option<(Geometry, Geometry)> {
    if a.geometry.rank() < 3 || b.geometry.rank() != 2 {
        return None;
    }
    let (shape, k) = a.geometry.shape.split_at(a.geometry.rank() - 1);
    let rows: i64 = shape.iter().product();
    let n = b.geometry.shape[1];
    Some((
        a.geometry.view(&[rows, k[0]]).ok()?,
        out.geometry.view(&[rows, n]).ok()?,
    ))
}

/// The view of `b` that a product packs (`crate::packed`): where the
/// three are f32 matrices (no batch, once [`folded`]), `a` has two or more
/// rows (one row streams the weight in place, [`Row`]), `out`'s rows are
/// contiguous and the weight is worth keeping (64 KiB or more); `None`
/// where it goes to `gemm`. (Whether the CPU has the instructions is
/// `crate::packed`'s to say.)
pub(crate) fn packed_view(a: &MatrixArg, b: &MatrixArg, out: &MatrixArg) -> Option<WeightView> {
    if let Some((ga, go)) = folded(a, b, out) {
        let a = MatrixArg {
            geometry: &ga,
            ..*a
        };
        let out = MatrixArg {
            geometry: &go,
            ..*out
        };
        return packed_view(&a, b, &out);
    }
    if a.geometry.rank() != 2 || b.geometry.rank() != 2 || out.geometry.rank() != 2 {
        return None;
    }
    let (ma, mb, mo) = (
        matrices(a.geometry, true),
        matrices(b.geometry, false),
        matrices(out.geometry, true),
    );
    packed_matrices(a, b, out, (&ma, &mb, &mo))
}

/// [`packed_view`] of matrices (`m = ma.rows`, `k`, `n = mb.cols`).
fn packed_matrices(
    a: &MatrixArg,
    b: &MatrixArg,
    out: &MatrixArg,
    (ma, mb, mo): (&Matrices, &Matrices, &Matrices),
) -> Option<WeightView> {
    let (m, k, n) = (ma.rows as usize, ma.cols as usize, mb.cols as usize);
    let f32s = [a.dtype, b.dtype, out.dtype]
        .iter()
        .all(|&d| d == DType::F32);
    let packs = f32s
        && b.geometry.rank() == 2
        && ma.batch_shape.is_empty()
        && mo.batch_shape.is_empty()
        && m >= 2
        && k > 0
        && n * k >= 1 << 14
        && mo.col_stride == 1;
    packs.then_some(WeightView {
        offset: mb.offset,
        row_stride: mb.row_stride,
        col_stride: mb.col_stride,
        k,
        n,
    })
}

/// `out = a @ b` through `b`'s packed copy (`crate::packed`) where
/// [`packed_view`] says it packs: the cached copy of an input, or a bound
/// weight's; `false` when it does not (or the copy cannot be had).
///
/// # Safety
/// As for [`matmul_weight`].
#[cfg(target_arch = "x86_64")]
unsafe fn packed_product(
    a: &MatrixArg,
    b: &MatrixArg,
    out: &MatrixArg,
    (ma, mb, mo): (&Matrices, &Matrices, &Matrices),
    m: usize,
    weight: Weight,
) -> Result<bool> {
    let Some(view) = packed_matrices(a, b, out, (ma, mb, mo)) else {
        return Ok(false);
    };
    let cached;
    let packed: &Packed = match weight {
        // SAFETY: `b` is a view of `buffer`'s f32 elements, which nothing
        // writes meanwhile (the caller vouches).
        Weight::Input(buffer) => match unsafe { crate::packed::packed(buffer, view)? } {
            Some(packed) => {
                cached = packed;
                &cached
            }
            None => return Ok(false),
        },
        Weight::Bound(packed) if packed.view() == view => packed,
        Weight::Bound(_) => return Err(crate::bind::read_unpacked()),
    };
    // SAFETY: the operands' views address their elements; a packed copy
    // exists only where the CPU runs `crate::panel::product`.
    unsafe {
        let a_ptr = a.ptr.cast::<f32>().offset(ma.offset as isize);
        let out_ptr = out.ptr.cast::<f32>().offset(mo.offset as isize);
        crate::packed::product(
            packed,
            (a_ptr, ma.row_stride as isize, ma.col_stride as isize),
            (out_ptr, mo.row_stride as isize),
            m,
        );
    }
    Ok(true)
}

/// A product of one f32 row by a matrix (`m = 1`: a decode step's
/// projections), computed here rather than by `gemm`, which packs the
/// whole matrix for one row: the matrix is streamed once, in sequential
/// blocks shared out among rayon's threads, each sum in f32 (blocks of
/// rows summed in order, then added; or one dot product per column in 32
/// partial sums: gemm's and PyTorch's orders differ too, by rounding
/// only). The row
/// (`a`) and the result are element pointers with their steps; the
/// matrix's rows or columns must be contiguous (`false` otherwise).
struct Row {
    a: (*const f32, isize),
    /// First element, row stride, column stride.
    b: (*const f32, isize, isize),
    out: (*mut f32, isize),
    k: usize,
    n: usize,
}

// SAFETY: the operands are only read; the threads write disjoint columns
// of the result.
unsafe impl Sync for Row {}

/// Columns a thread takes at a time.
const ROW_COLUMNS: usize = 256;

impl Row {
    /// # Safety
    /// As for [`matmul`].
    unsafe fn run(&self) -> bool {
        use rayon::prelude::*;
        let (_, b_rows, b_cols) = self.b;
        if b_rows != 1 && b_cols != 1 {
            return false;
        }
        let (a, a_step) = self.a;
        // SAFETY: the row's k elements are inside its buffer.
        let row: Vec<f32> = (0..self.k)
            .map(|i| unsafe { *a.offset(i as isize * a_step) })
            .collect();
        let sums: Vec<f32> = if b_cols == 1 {
            // Rows of the matrix are contiguous: each task streams a block
            // of whole rows (one sequential read) into partial sums of
            // every column, added in block order.
            let blocks = (rayon::current_num_threads() * 2).min(self.k).max(1);
            let per = self.k.div_ceil(blocks);
            let partial: Vec<Vec<f32>> = (0..blocks)
                .into_par_iter()
                .map(|t| {
                    let (b, b_rows, _) = self.b;
                    let (k0, k1) = (t * per, ((t + 1) * per).min(self.k));
                    let mut sums = vec![0f32; self.n];
                    if k0 < k1 {
                        // SAFETY: rows k0..k1 of all n columns are inside b.
                        unsafe {
                            rows_scaled_wide(
                                &row[k0..k1],
                                b.offset(k0 as isize * b_rows),
                                b_rows,
                                &mut sums,
                            )
                        };
                    }
                    sums
                })
                .collect();
            let mut total = vec![0f32; self.n];
            for p in &partial {
                for (t, x) in total.iter_mut().zip(p) {
                    *t += x;
                }
            }
            total
        } else {
            // Columns are contiguous (a transposed weight): one dot
            // product per column, runs of columns on rayon's threads.
            let chunks = self.n.div_ceil(ROW_COLUMNS);
            (0..chunks)
                .into_par_iter()
                .flat_map_iter(|c| {
                    let (b, _, b_cols) = self.b;
                    let (n0, n1) = (c * ROW_COLUMNS, ((c + 1) * ROW_COLUMNS).min(self.n));
                    let mut sums = vec![0f32; n1 - n0];
                    // SAFETY: columns n0..n1, each of k elements, are
                    // inside b.
                    unsafe { dots_wide(&row, b.offset(n0 as isize * b_cols), b_cols, &mut sums) };
                    sums
                })
                .collect()
        };
        let (out, out_step) = self.out;
        for (j, s) in sums.iter().enumerate() {
            // SAFETY: column j < n of the result.
            unsafe { *out.offset(j as isize * out_step) = *s };
        }
        true
    }
}

crate::wide::widest_vectors! {
    /// `sums[j] += Σ_i row[i] · first[i·stride + j]`, in order of `i`.
    unsafe fn rows_scaled_wide(row: &[f32], first: *const f32, stride: isize, sums: &mut [f32]) => rows_scaled_plain
}

#[inline(always)]
unsafe fn rows_scaled_plain(row: &[f32], first: *const f32, stride: isize, sums: &mut [f32]) {
    for (i, &x) in row.iter().enumerate() {
        // SAFETY: row i's chunk is inside the matrix (the caller's).
        let chunk =
            unsafe { std::slice::from_raw_parts(first.offset(i as isize * stride), sums.len()) };
        for (s, &w) in sums.iter_mut().zip(chunk) {
            *s += x * w;
        }
    }
}

/// Lanes of a dot product's partial sums.
const DOT_LANES: usize = 32;

crate::wide::widest_vectors! {
    /// `sums[j] = Σ_i a[i]·first[j·stride + i]` (contiguous columns), each
    /// in [`DOT_LANES`] partial sums.
    unsafe fn dots_wide(a: &[f32], first: *const f32, stride: isize, sums: &mut [f32]) => dots_plain
}

#[inline(always)]
unsafe fn dots_plain(a: &[f32], first: *const f32, stride: isize, sums: &mut [f32]) {
    for (j, s) in sums.iter_mut().enumerate() {
        // SAFETY: column j's elements are inside the matrix (the caller's).
        let b = unsafe { std::slice::from_raw_parts(first.offset(j as isize * stride), a.len()) };
        let mut lanes = [0f32; DOT_LANES];
        let (ca, cb) = (a.chunks_exact(DOT_LANES), b.chunks_exact(DOT_LANES));
        let (ta, tb) = (ca.remainder(), cb.remainder());
        for (x, y) in ca.zip(cb) {
            for l in 0..DOT_LANES {
                lanes[l] += x[l] * y[l];
            }
        }
        let mut total: f32 = lanes.iter().sum();
        for (x, y) in ta.iter().zip(tb) {
            total += x * y;
        }
        *s = total;
    }
}

/// One batch element's product of a matmul: the operands and their matrix
/// geometries.
struct Product<'a> {
    a: &'a MatrixArg<'a>,
    b: &'a MatrixArg<'a>,
    out: &'a MatrixArg<'a>,
    ma: &'a Matrices,
    mb: &'a Matrices,
    mo: &'a Matrices,
    m: usize,
    n: usize,
    k: usize,
}

// SAFETY: the operands are only read, and each batch index writes its own
// part of `out`; the threads of one matmul never share an element.
unsafe impl Sync for Product<'_> {}

impl Product<'_> {
    /// The product of batch element `index`.
    ///
    /// # Safety
    /// As for [`matmul`].
    unsafe fn run(&self, index: &[i64], parallelism: gemm::Parallelism) -> Result<()> {
        let Product {
            a,
            b,
            out,
            ma,
            mb,
            mo,
            m,
            n,
            k,
        } = *self;
        let dtype = out.dtype;
        let through_f32 = matches!(dtype, DType::F16 | DType::BF16);
        let (oa, ob, oo) = (
            batch_offset(ma, index),
            batch_offset(mb, index),
            batch_offset(mo, index),
        );
        macro_rules! call {
            ($t:ty) => {{
                let size = std::mem::size_of::<$t>() as i64;
                // SAFETY: the offsets are inside the operands' buffers, as
                // their geometries say.
                let (pa, pb, po) = unsafe {
                    (
                        a.ptr.offset((oa * size) as isize) as *const $t,
                        b.ptr.offset((ob * size) as isize) as *const $t,
                        out.ptr.offset((oo * size) as isize) as *mut $t,
                    )
                };
                // A transposed right operand (nn.Linear's `x @ wᵀ`) is
                // several times faster into a column-major result, which
                // is then transposed (see `nt_through_column_major`).
                let mut temp = None;
                let (dst, dst_cs, dst_rs) = if nt_through_column_major(m, n, k, mb, mo) {
                    let t = Buffer::for_overwrite(m * n * size as usize)?;
                    let ptr = t.as_ptr() as *mut $t;
                    temp = Some(t);
                    (ptr, m as isize, 1)
                } else {
                    (po, mo.col_stride as isize, mo.row_stride as isize)
                };
                // SAFETY: the caller guarantees the buffers; offsets and
                // strides come from the operands' geometries; the temp
                // holds m·n elements.
                unsafe {
                    gemm::gemm::<$t>(
                        m,
                        n,
                        k,
                        dst,
                        dst_cs,
                        dst_rs,
                        false,
                        pa,
                        ma.col_stride as isize,
                        ma.row_stride as isize,
                        pb,
                        mb.col_stride as isize,
                        mb.row_stride as isize,
                        <$t>::default(),
                        one::<$t>(),
                        false,
                        false,
                        false,
                        parallelism,
                    );
                    if temp.is_some() {
                        transpose_into(dst, po, m, n, mo.row_stride as usize);
                    }
                }
                drop(temp);
            }};
        }
        match dtype {
            DType::F32 => call!(f32),
            DType::F64 => call!(f64),
            DType::C64 => call!(gemm::c32),
            DType::C128 => call!(gemm::c64),
            _ if through_f32 => {
                // SAFETY: as for `matmul`.
                unsafe { half_product(a, b, out, (ma, mb, mo), (oa, ob, oo), parallelism) }
            }
            other => {
                return Err(Error::new(
                    ErrorKind::Backend,
                    format!("no library matmul for {other}"),
                ));
            }
        }
        Ok(())
    }
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
