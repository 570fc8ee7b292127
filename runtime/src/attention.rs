//! Scaled dot-product attention for compiled plans on the CPU, in f32 and
//! f64, flash-attention style: the plan's `scaled_dot_product_attention`
//! steps run here instead of the interpreter's expansion (matmul, mask,
//! softmax, matmul), which stays the oracle they are tested against.
//!
//! A task takes a block of up to [`QUERY_ROWS`] queries of one batch item
//! and head and streams the keys and values past it [`KEY_COLS`] at a
//! time: the block's scores (`gemm`, the scale applied in the product as
//! the reference's `mul` after it: one rounding each), the causal mask
//! and `attn_mask`, an online softmax (each query keeps its running
//! maximum `m` and denominator `l`; a larger maximum rescales what was
//! accumulated by e^(m_old − m_new)), and the block's share of `P · V`
//! added to an accumulator (`gemm` again); the accumulator is divided by
//! `l` once at the end. The L×S score matrix is never in memory: a task's
//! scratch is one [`QUERY_ROWS`]×[`KEY_COLS`] score tile and its
//! [`QUERY_ROWS`]×Ev accumulator, so memory grows linearly in the sequence
//! length. With `is_causal`, key blocks wholly above the diagonal are not
//! computed (half the work when L = S). Tasks run on rayon's threads.
//!
//! Tiles are column-major, so that the softmax's per-query steps (the
//! running maximum, the exponentials, the sums, the rescaling) run down
//! contiguous columns in vector registers, compiled for the widest vectors
//! the CPU has ([`crate::wide`]); f32's e^x is kiln-math's, the
//! interpreter's own algorithm.
//!
//! Semantics follow the reference: a query that the masks leave no key
//! attends to nothing (zeros, as PyTorch's `_safe_softmax`); without masks,
//! scores all −inf give NaN (softmax's 0/0); NaN scores make their query's
//! row NaN; a value that is not finite makes its column NaN for every query
//! that gives its key weight 0, hidden or masked (the reference's `P · V`
//! multiplies it by 0). Results differ from the reference by
//! summation order and by when the division happens, which the
//! differential tests' tolerance for sums covers.

use kiln_ir::graph::{Func, Inst};
use kiln_ir::view::Geometry;
use kiln_ir::{DType, F64, Op, Result};
use rayon::prelude::*;

use crate::spatial::Operand;
use crate::strided::Shared;
use crate::wide::widest_vectors;

/// Queries per task (a score tile's rows).
const QUERY_ROWS: usize = 64;

/// Keys per step of a task (a score tile's columns).
const KEY_COLS: usize = 256;

/// Whether the host runs this instruction as one fused step: a
/// `scaled_dot_product_attention` in f32 or f64. Decomposition keeps these
/// for the CPU backend; in other dtypes attention expands to matmul and
/// softmax kernels.
pub fn fused(func: &Func, inst: &Inst) -> bool {
    matches!(inst.op, Op::ScaledDotProductAttention { .. })
        && inst.results.len() == 1
        && matches!(func.ty(inst.result()).dtype, DType::F32 | DType::F64)
}

/// The operands of one attention, as the plan's views give them.
pub struct Operands<'a> {
    /// `[..., L, E]`.
    pub query: Operand<'a>,
    /// `[..., S, E]`.
    pub key: Operand<'a>,
    /// `[..., S, Ev]`.
    pub value: Operand<'a>,
    /// `attn_mask`, broadcasting to `[..., L, S]`, with its dtype: bool
    /// (false hides a key) or the query's (added to the scores).
    pub mask: Option<(Operand<'a>, DType)>,
}

/// Runs `op`, a `scaled_dot_product_attention` in `dtype`, into `out`
/// (`[..., L, Ev]`); `false` when this file has no kernel for it (a dtype
/// other than f32 and f64), and the interpreter runs it.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; `out` must not overlap the operands; the shapes must be ones
/// inference accepted for `op`.
pub unsafe fn attention(op: &Op, dtype: DType, x: &Operands, out: Operand) -> Result<bool> {
    let Op::ScaledDotProductAttention {
        is_causal, scale, ..
    } = op
    else {
        return Ok(false);
    };
    let e = x.query.geometry.shape.last().copied().unwrap_or(1);
    // Queries per batch item and head (the output's rows).
    let l = out.geometry.shape.iter().rev().nth(1).copied().unwrap_or(1) as usize;
    let scale = scale.map_or(1.0 / (e as f64).sqrt(), |F64(s)| s);
    // SAFETY: forwarded.
    unsafe {
        match dtype {
            DType::F32 => run::<f32>(scale, *is_causal, x, out, Products::for_queries::<f32>(l)),
            DType::F64 => run::<f64>(scale, *is_causal, x, out, Products::for_queries::<f64>(l)),
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// The element types attended here.
trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    const NEG_INFINITY: Self;
    const NAN: Self;
    /// Whether this is f32 (which has register-blocked kernels).
    const IS_F32: bool;
    fn from_f64(x: f64) -> Self;
    fn exp(self) -> Self;
    fn is_finite(self) -> bool;
    /// `self·a + b`, rounded once (one instruction where FMA is enabled,
    /// as in [`widest_vectors!`]'s variants).
    fn mul_add(self, a: Self, b: Self) -> Self;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const NEG_INFINITY: f32 = f32::NEG_INFINITY;
    const NAN: f32 = f32::NAN;
    const IS_F32: bool = true;
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn exp(self) -> f32 {
        kiln_math::algorithms::exp(&mut kiln_math::scalar::Scalar, self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline(always)]
    fn mul_add(self, a: f32, b: f32) -> f32 {
        f32::mul_add(self, a, b)
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const NEG_INFINITY: f64 = f64::NEG_INFINITY;
    const NAN: f64 = f64::NAN;
    const IS_F32: bool = false;
    fn from_f64(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64) -> f64 {
        f64::mul_add(self, a, b)
    }
}

/// One operand as a matrix per batch item: the element offset of each
/// item (in the output's batch order) and the row and column strides.
/// Dims of size 1 broadcast (stride 0); with grouped-query heads, a
/// key/value head serves consecutive query heads.
struct Matrices {
    offsets: Vec<isize>,
    rows: isize,
    cols: isize,
}

fn matrices(g: &Geometry, batch: &[i64]) -> Matrices {
    let r = g.rank();
    let stride = |d: usize| {
        if g.shape[d] == 1 {
            0
        } else {
            g.strides[d] as isize
        }
    };
    let rows = if r >= 2 { stride(r - 2) } else { 0 };
    let cols = if r >= 1 { stride(r - 1) } else { 0 };
    let own = r.saturating_sub(2);
    let lead = batch.len() - own;
    let count: i64 = batch.iter().product();
    let mut offsets = Vec::with_capacity(count.max(0) as usize);
    let mut index = vec![0i64; batch.len()];
    for _ in 0..count {
        let mut off = g.offset as isize;
        for d in 0..own {
            let (size, want) = (g.shape[d], batch[lead + d]);
            let i = index[lead + d];
            // Inference allows a smaller dim than the output's only for
            // broadcasting (size 1) and grouped-query heads.
            let i = if size == want {
                i
            } else {
                i / (want / size.max(1))
            };
            off += i as isize * stride(d);
        }
        offsets.push(off);
        for d in (0..batch.len()).rev() {
            index[d] += 1;
            if index[d] < batch[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Matrices {
        offsets,
        rows,
        cols,
    }
}

/// A matrix in place: its first element and its row and column strides.
#[derive(Clone, Copy)]
struct Block<T> {
    ptr: *const T,
    rows: isize,
    cols: isize,
}

/// How a tile's two products (the scores `Q·Kᵀ` and the update `P·V`) are
/// computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Products {
    /// Through `gemm`, which packs both operands of every product.
    Gemm,
    /// f32 on CPUs with AVX-512: kernels that hold a 64 × 6 block of
    /// results in 24 registers and need no packing, since the block's
    /// queries are transposed once per task and the tile is already
    /// column-major; keys and values are read in place, a broadcast each.
    Avx512,
    /// Fewer than [`FEW_QUERIES`] queries on a CPU with FMA (a decode
    /// step): dot products over contiguous query and key rows, and each
    /// key's value row added into the query's accumulator row
    /// ([`few_scores`], [`few_values`]); `gemm` packs the whole key or
    /// value tile to compute a row or two. Strided operands still go to
    /// `gemm`.
    Rows,
}

/// Below this many queries (a decode step's one), the products are
/// [`Products::Rows`] (or `gemm` without FMA), and a tile's online softmax
/// runs query by query: the register-blocked kernels and the vector
/// softmax compute all [`QUERY_ROWS`] (64 exponentials per key for one
/// query).
const FEW_QUERIES: usize = 8;

/// Whether `mul_add` is one instruction in [`widest_vectors!`]'s variants;
/// without FMA it is a library call per element, and `gemm` is faster.
fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        true
    }
}

impl Products {
    /// The products for `l` queries per batch item and head.
    fn for_queries<T: Real>(l: usize) -> Products {
        if l < FEW_QUERIES {
            if has_fma() {
                Products::Rows
            } else {
                Products::Gemm
            }
        } else {
            Products::for_element::<T>()
        }
    }

    fn for_element<T: Real>() -> Products {
        #[cfg(target_arch = "x86_64")]
        if T::IS_F32 && crate::lanes::uses_avx512() {
            return Products::Avx512;
        }
        Products::Gemm
    }

    /// `tile[i, j] = scale · Σ_d q[i, d]·k[j, d]` for `rows` queries,
    /// `cols` keys and `e` dims (with `Avx512`, for all [`QUERY_ROWS`]
    /// rows of the tile, from `qt`: rows past `rows` are zeros).
    ///
    /// # Safety
    /// `q` and `k` must address `rows` × `e` and `cols` × `e` elements;
    /// `qt` must be the transposed block ([`transpose_block`]) with
    /// `Avx512`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn scores<T: Real>(
        self,
        q: Block<T>,
        qt: &[T],
        k: Block<T>,
        (rows, cols, e): (usize, usize, usize),
        scale: T,
        tile: &mut [T],
    ) {
        if e == 0 {
            // Empty dot products, scaled as the reference's `mul` scales
            // them (1/√0 is inf: NaN).
            tile.fill(T::ZERO * scale);
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self == Products::Avx512 {
            // SAFETY: T is f32 (`for_element`); forwarded.
            unsafe {
                avx512::scores(
                    qt.as_ptr().cast(),
                    e,
                    k.ptr.cast(),
                    (k.rows, k.cols),
                    cols,
                    *(&scale as *const T).cast::<f32>(),
                    tile.as_mut_ptr().cast(),
                )
            };
            return;
        }
        let _ = qt;
        if self == Products::Rows && q.cols == 1 && k.cols == 1 {
            // SAFETY: forwarded (rows of q and k contiguous).
            unsafe { few_scores(q, k, (rows, cols, e), scale, tile) };
            return;
        }
        // SAFETY: forwarded; the tile holds rows × cols at column stride
        // QUERY_ROWS.
        unsafe {
            gemm::gemm::<T>(
                rows,
                cols,
                e,
                tile.as_mut_ptr(),
                QUERY_ROWS as isize,
                1,
                false,
                q.ptr,
                q.cols,
                q.rows,
                k.ptr,
                k.rows,
                k.cols,
                T::ZERO,
                scale,
                false,
                false,
                false,
                gemm::Parallelism::None,
            )
        }
    }

    /// `acc[i, c] += Σ_j tile[i, j]·v[j, c]` for `rows` queries, `cols`
    /// keys and `ev` value dims.
    ///
    /// # Safety
    /// `v` must address `cols` × `ev` elements.
    unsafe fn values<T: Real>(
        self,
        tile: &[T],
        v: Block<T>,
        (rows, cols, ev): (usize, usize, usize),
        acc: &mut [T],
    ) {
        if ev == 0 || cols == 0 {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self == Products::Avx512 {
            // SAFETY: T is f32 (`for_element`); forwarded.
            unsafe {
                avx512::values(
                    tile.as_ptr().cast(),
                    cols,
                    v.ptr.cast(),
                    (v.rows, v.cols),
                    ev,
                    acc.as_mut_ptr().cast(),
                )
            };
            return;
        }
        if self == Products::Rows && v.cols == 1 && ev <= FEW_VALUE_DIMS {
            // SAFETY: forwarded (rows of v contiguous).
            unsafe { few_values(tile, v, (rows, cols, ev), acc) };
            return;
        }
        // SAFETY: forwarded; the tiles as above.
        unsafe {
            gemm::gemm::<T>(
                rows,
                ev,
                cols,
                acc.as_mut_ptr(),
                QUERY_ROWS as isize,
                1,
                true,
                tile.as_ptr(),
                QUERY_ROWS as isize,
                1,
                v.ptr,
                v.cols,
                v.rows,
                T::ONE,
                T::ONE,
                false,
                false,
                false,
                gemm::Parallelism::None,
            )
        }
    }
}

/// Value dims up to which [`few_values`] keeps a query's accumulator row
/// on the stack.
const FEW_VALUE_DIMS: usize = 256;

/// Lanes of the partial sums of [`few_scores`]' dot products.
const DOT_LANES: usize = 16;

/// The scores of fewer than [`FEW_QUERIES`] queries: one dot product per
/// query and key over their contiguous rows, in [`DOT_LANES`] partial sums
/// of fused multiply-adds, as gemm's (which packs the whole key tile to
/// compute one row of results).
///
/// # Safety
/// `q` and `k` must address `rows` × `e` and `cols` × `e` elements, their
/// rows contiguous.
unsafe fn few_scores<T: Real>(
    q: Block<T>,
    k: Block<T>,
    (rows, cols, e): (usize, usize, usize),
    scale: T,
    tile: &mut [T],
) {
    for i in 0..rows {
        // SAFETY: query i's e elements are contiguous in q.
        let qi = unsafe { std::slice::from_raw_parts(q.ptr.offset(i as isize * q.rows), e) };
        for j in 0..cols {
            // SAFETY: key j's e elements are contiguous in k.
            let kj = unsafe { std::slice::from_raw_parts(k.ptr.offset(j as isize * k.rows), e) };
            // SAFETY: plain slice arithmetic.
            tile[j * QUERY_ROWS + i] = unsafe { dot_wide(qi, kj) } * scale;
        }
    }
}

widest_vectors! {
    /// `Σ a[d]·b[d]`.
    unsafe fn dot_wide<T: [Real]>(a: &[T], b: &[T]) -> T => dot_plain
}

#[inline(always)]
fn dot_plain<T: Real>(a: &[T], b: &[T]) -> T {
    let mut partial = [T::ZERO; DOT_LANES];
    let (ac, bc) = (a.chunks_exact(DOT_LANES), b.chunks_exact(DOT_LANES));
    let (at, bt) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for l in 0..DOT_LANES {
            partial[l] = x[l].mul_add(y[l], partial[l]);
        }
    }
    let mut total = T::ZERO;
    for p in partial {
        total = total + p;
    }
    for (x, y) in at.iter().zip(bt) {
        total = x.mul_add(*y, total);
    }
    total
}

/// `acc[i, c] += Σ_j tile[i, j]·v[j, c]` for fewer than [`FEW_QUERIES`]
/// queries: each query's accumulator row gathered from the tile's columns,
/// each key's value row added in with its weight, the row put back.
///
/// # Safety
/// `v` must address `cols` × `ev` elements, its rows contiguous; `ev` ≤
/// [`FEW_VALUE_DIMS`].
unsafe fn few_values<T: Real>(
    tile: &[T],
    v: Block<T>,
    (rows, cols, ev): (usize, usize, usize),
    acc: &mut [T],
) {
    let mut row = [T::ZERO; FEW_VALUE_DIMS];
    let row = &mut row[..ev];
    for i in 0..rows {
        for (c, x) in row.iter_mut().enumerate() {
            *x = acc[c * QUERY_ROWS + i];
        }
        for j in 0..cols {
            let p = tile[j * QUERY_ROWS + i];
            // SAFETY: key j's ev values are contiguous in v.
            let vj = unsafe { std::slice::from_raw_parts(v.ptr.offset(j as isize * v.rows), ev) };
            // SAFETY: plain slice arithmetic.
            unsafe { add_scaled_wide(row, p, vj) };
        }
        for (c, x) in row.iter().enumerate() {
            acc[c * QUERY_ROWS + i] = *x;
        }
    }
}

widest_vectors! {
    /// `row += p·v`.
    unsafe fn add_scaled_wide<T: [Real]>(row: &mut [T], p: T, v: &[T]) => add_scaled_plain
}

#[inline(always)]
fn add_scaled_plain<T: Real>(row: &mut [T], p: T, v: &[T]) {
    for (x, y) in row.iter_mut().zip(v) {
        *x = p.mul_add(*y, *x);
    }
}

/// `qt[d, i] = q[i, d]` for the block's `rows` queries, zeros past them.
///
/// # Safety
/// `q` must address `rows` × `e` elements at these strides.
unsafe fn transpose_block<T: Real>(
    q: *const T,
    row_stride: isize,
    col_stride: isize,
    rows: usize,
    e: usize,
    qt: &mut [T],
) {
    for d in 0..e {
        let column = &mut qt[d * QUERY_ROWS..(d + 1) * QUERY_ROWS];
        for (i, x) in column.iter_mut().enumerate() {
            *x = if i < rows {
                // SAFETY: (i, d) is inside the block.
                unsafe { *q.offset(i as isize * row_stride + d as isize * col_stride) }
            } else {
                T::ZERO
            };
        }
    }
}

/// The f32 products in AVX-512 registers: a tile column is 64 queries, four
/// 16-lane registers; six columns' results (24 registers) accumulate
/// while the shared operand streams past, each of its elements broadcast
/// once. Sums are fused multiply-adds in order of the summed index.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::QUERY_ROWS;

    const _: () = assert!(QUERY_ROWS == 64, "a tile column is four 16-lane registers");

    /// Results per register block.
    const WIDE: usize = 6;

    /// See `Products::scores`: `tile[j][i] = scale · Σ_d qt[d][i]·k[j][d]`.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `qt` holds `e` columns of 64, `k` addresses
    /// `cols` × `e` elements at `(row, col)` strides, `tile` `cols`
    /// columns of 64.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn scores(
        qt: *const f32,
        e: usize,
        k: *const f32,
        (k_rows, k_cols): (isize, isize),
        cols: usize,
        scale: f32,
        tile: *mut f32,
    ) {
        let mut j = 0;
        while j + WIDE <= cols {
            // SAFETY: forwarded.
            unsafe { scores_block::<WIDE>(qt, e, k, (k_rows, k_cols), j, scale, tile) };
            j += WIDE;
        }
        // The last few columns in one block of their own width.
        let ks = (k_rows, k_cols);
        // SAFETY: forwarded.
        unsafe {
            match cols - j {
                1 => scores_block::<1>(qt, e, k, ks, j, scale, tile),
                2 => scores_block::<2>(qt, e, k, ks, j, scale, tile),
                3 => scores_block::<3>(qt, e, k, ks, j, scale, tile),
                4 => scores_block::<4>(qt, e, k, ks, j, scale, tile),
                5 => scores_block::<5>(qt, e, k, ks, j, scale, tile),
                _ => {}
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn scores_block<const U: usize>(
        qt: *const f32,
        e: usize,
        k: *const f32,
        (k_rows, k_cols): (isize, isize),
        j: usize,
        scale: f32,
        tile: *mut f32,
    ) {
        let mut acc = [[_mm512_setzero_ps(); 4]; U];
        // SAFETY: the reads and writes stay inside the ranges `scores`
        // is given.
        unsafe {
            for d in 0..e {
                let q = qt.add(d * QUERY_ROWS);
                let q = [0, 1, 2, 3].map(|r| _mm512_loadu_ps(q.add(16 * r)));
                for (u, acc) in acc.iter_mut().enumerate() {
                    let at = (j + u) as isize * k_rows + d as isize * k_cols;
                    let kv = _mm512_set1_ps(*k.offset(at));
                    for r in 0..4 {
                        acc[r] = _mm512_fmadd_ps(kv, q[r], acc[r]);
                    }
                }
            }
            let s = _mm512_set1_ps(scale);
            for (u, acc) in acc.iter().enumerate() {
                let column = tile.add((j + u) * QUERY_ROWS);
                for r in 0..4 {
                    _mm512_storeu_ps(column.add(16 * r), _mm512_mul_ps(acc[r], s));
                }
            }
        }
    }

    /// See `Products::values`: `acc[c][i] += Σ_j tile[j][i]·v[j][c]`.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `tile` holds `cols` columns of 64, `v`
    /// addresses `cols` × `ev` elements at `(row, col)` strides, `acc`
    /// `ev` columns of 64.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn values(
        tile: *const f32,
        cols: usize,
        v: *const f32,
        (v_rows, v_cols): (isize, isize),
        ev: usize,
        acc: *mut f32,
    ) {
        let mut c = 0;
        while c + WIDE <= ev {
            // SAFETY: forwarded.
            unsafe { values_block::<WIDE>(tile, cols, v, (v_rows, v_cols), c, acc) };
            c += WIDE;
        }
        // The last few columns in one block of their own width.
        let vs = (v_rows, v_cols);
        // SAFETY: forwarded.
        unsafe {
            match ev - c {
                1 => values_block::<1>(tile, cols, v, vs, c, acc),
                2 => values_block::<2>(tile, cols, v, vs, c, acc),
                3 => values_block::<3>(tile, cols, v, vs, c, acc),
                4 => values_block::<4>(tile, cols, v, vs, c, acc),
                5 => values_block::<5>(tile, cols, v, vs, c, acc),
                _ => {}
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn values_block<const U: usize>(
        tile: *const f32,
        cols: usize,
        v: *const f32,
        (v_rows, v_cols): (isize, isize),
        c: usize,
        acc: *mut f32,
    ) {
        // SAFETY: the reads and writes stay inside the ranges `values`
        // is given.
        unsafe {
            let mut sums = [[_mm512_setzero_ps(); 4]; U];
            for (u, sums) in sums.iter_mut().enumerate() {
                let column = acc.add((c + u) * QUERY_ROWS);
                for r in 0..4 {
                    sums[r] = _mm512_loadu_ps(column.add(16 * r));
                }
            }
            for j in 0..cols {
                let p = tile.add(j * QUERY_ROWS);
                let p = [0, 1, 2, 3].map(|r| _mm512_loadu_ps(p.add(16 * r)));
                for (u, sums) in sums.iter_mut().enumerate() {
                    let at = j as isize * v_rows + (c + u) as isize * v_cols;
                    let vv = _mm512_set1_ps(*v.offset(at));
                    for r in 0..4 {
                        sums[r] = _mm512_fmadd_ps(vv, p[r], sums[r]);
                    }
                }
            }
            for (u, sums) in sums.iter().enumerate() {
                let column = acc.add((c + u) * QUERY_ROWS);
                for r in 0..4 {
                    _mm512_storeu_ps(column.add(16 * r), sums[r]);
                }
            }
        }
    }
}

/// A task's scratch: the score tile, the accumulator, and each query's
/// running maximum and denominator.
struct Scratch<T> {
    /// The block's queries transposed (`Products::Avx512` only).
    qt: Vec<T>,
    scores: Vec<T>,
    acc: Vec<T>,
    max: Vec<T>,
    sum: Vec<T>,
}

/// # Safety
/// As [`attention`].
unsafe fn run<T: Real>(scale: f64, causal: bool, x: &Operands, out: Operand, products: Products) {
    let og = out.geometry;
    let r = og.rank();
    let batch = &og.shape[..r - 2];
    let (l, ev) = (og.shape[r - 2] as usize, og.shape[r - 1] as usize);
    let kg = x.key.geometry;
    let (s, e) = (
        kg.shape[kg.rank() - 2] as usize,
        kg.shape[kg.rank() - 1] as usize,
    );
    let (q, k, v, o) = (
        matrices(x.query.geometry, batch),
        matrices(kg, batch),
        matrices(x.value.geometry, batch),
        matrices(og, batch),
    );
    let mask = x.mask.as_ref().map(|(m, dtype)| {
        (
            Shared(m.ptr),
            matrices(m.geometry, batch),
            *dtype == DType::Bool,
        )
    });
    let (qp, kp, vp, op) = (
        Shared(x.query.ptr as *mut T),
        Shared(x.key.ptr as *mut T),
        Shared(x.value.ptr as *mut T),
        Shared(out.ptr as *mut T),
    );
    let scale = T::from_f64(scale);
    // Where the reference's `_safe_softmax` applies (see the expansion).
    let nothing_is_zero = causal || x.mask.is_some() || s == 0;
    // Keys a query's weights leave out are still in the reference's
    // `P · V`, with weight 0: a value there that is not finite makes the
    // query's result NaN in that column (0 · ±inf, 0 · NaN). The loop
    // below skips such keys (key blocks above the causal diagonal, every
    // key of a query the masks leave none), so it needs to know where the
    // values that are not finite are.
    let bad_from = if causal || x.mask.is_some() {
        // SAFETY: the value's views are inside its buffer.
        unsafe { nonfinite_values(vp, &v, s, ev) }
    } else {
        Vec::new()
    };
    let blocks = l.div_ceil(QUERY_ROWS);
    let tasks = o.offsets.len() * blocks;
    (0..tasks).into_par_iter().for_each_init(
        || Scratch {
            qt: vec![
                T::ZERO;
                if products == Products::Avx512 {
                    QUERY_ROWS * e
                } else {
                    0
                }
            ],
            scores: vec![T::ZERO; QUERY_ROWS * KEY_COLS],
            acc: vec![T::ZERO; QUERY_ROWS * ev],
            max: vec![T::ZERO; QUERY_ROWS],
            sum: vec![T::ZERO; QUERY_ROWS],
        },
        |scratch, task| {
            let (b, block) = (task / blocks, task % blocks);
            let i0 = block * QUERY_ROWS;
            let rows = QUERY_ROWS.min(l - i0);
            // Keys a causal block sees: j ≤ i for its last query i.
            let keys = if causal { s.min(i0 + rows) } else { s };
            let Scratch {
                qt,
                scores,
                acc,
                max,
                sum,
            } = scratch;
            max.fill(T::NEG_INFINITY);
            sum.fill(T::ZERO);
            acc.fill(T::ZERO);
            let qb = q.offsets[b] + i0 as isize * q.rows;
            if products == Products::Avx512 {
                // SAFETY: rows × e of the query inside its view.
                unsafe { transpose_block(qp.ptr().offset(qb), q.rows, q.cols, rows, e, qt) };
            }
            for j0 in (0..keys).step_by(KEY_COLS) {
                let cols = KEY_COLS.min(keys - j0);
                let kb = k.offsets[b] + j0 as isize * k.rows;
                // SAFETY: rows × e of the query (or its transposed copy)
                // and cols × e of the key inside their views; the tile
                // holds QUERY_ROWS × cols.
                unsafe {
                    products.scores(
                        Block {
                            ptr: qp.ptr().offset(qb),
                            rows: q.rows,
                            cols: q.cols,
                        },
                        qt,
                        Block {
                            ptr: kp.ptr().offset(kb),
                            rows: k.rows,
                            cols: k.cols,
                        },
                        (rows, cols, e),
                        scale,
                        scores,
                    )
                };
                if causal && j0 + cols > i0 + 1 {
                    for jj in 0..cols {
                        // Queries i < j do not see key j.
                        let hidden = (j0 + jj).saturating_sub(i0).min(rows);
                        scores[jj * QUERY_ROWS..jj * QUERY_ROWS + hidden].fill(T::NEG_INFINITY);
                    }
                }
                if let Some((mp, m, boolean)) = &mask {
                    let base = m.offsets[b] + i0 as isize * m.rows + j0 as isize * m.cols;
                    // SAFETY: the tile's rows × cols are inside the mask's
                    // broadcast view.
                    unsafe {
                        apply_mask(
                            scores,
                            Block {
                                ptr: mp.ptr(),
                                rows: m.rows,
                                cols: m.cols,
                            },
                            base,
                            *boolean,
                            (rows, cols),
                        )
                    };
                }
                // SAFETY: the slices are the scratch's.
                unsafe { online_softmax(scores, rows, cols, max, sum, acc) };
                // SAFETY: cols × ev of the value inside its view; the
                // tiles as above.
                unsafe {
                    products.values(
                        scores,
                        Block {
                            ptr: vp.ptr().offset(v.offsets[b] + j0 as isize * v.rows),
                            rows: v.rows,
                            cols: v.cols,
                        },
                        (rows, cols, ev),
                        acc,
                    )
                };
            }
            let ob = o.offsets[b] + i0 as isize * o.rows;
            for c in 0..ev {
                // One past the last key whose value is not finite.
                let bad = bad_from.get(b * ev + c).copied().unwrap_or(0);
                for ii in 0..rows {
                    let total = sum[ii];
                    // A query the masks leave no key (l = 0) attends to
                    // nothing, as does any query without keys; unmasked
                    // scores all −inf are softmax's 0/0 (NaN), as the
                    // reference's. Values not finite at keys the loop
                    // skipped make NaN (see `bad_from`).
                    let y = if total == T::ZERO && nothing_is_zero {
                        if bad > 0 { T::NAN } else { T::ZERO }
                    } else if bad > keys {
                        T::NAN
                    } else {
                        acc[c * QUERY_ROWS + ii] / total
                    };
                    // SAFETY: (i0 + ii, c) is inside the output's view;
                    // each task writes its own rows.
                    unsafe {
                        *op.ptr()
                            .offset(ob + ii as isize * o.rows + c as isize * o.cols) = y
                    };
                }
            }
        },
    );
}

/// For each batch item `b` and value column `c`, at `b * ev + c`: one
/// past the last of the `s` keys whose value in column `c` is not finite,
/// 0 when all are finite.
///
/// # Safety
/// `v`'s matrices, `s` × `ev`, must be inside the buffer at `vp`.
unsafe fn nonfinite_values<T: Real>(
    vp: Shared<T>,
    v: &Matrices,
    s: usize,
    ev: usize,
) -> Vec<usize> {
    v.offsets
        .par_iter()
        .flat_map_iter(|&at| {
            let mut bad = vec![0; ev];
            for j in 0..s {
                let row = at + j as isize * v.rows;
                // A row of contiguous values, all finite (almost always),
                // is passed over in one vectorized read: a decode step
                // scans the whole cache of every layer here.
                if v.cols == 1 {
                    // SAFETY: the row's ev values are inside the value's
                    // view.
                    let values = unsafe { std::slice::from_raw_parts(vp.ptr().offset(row), ev) };
                    // SAFETY: plain slice arithmetic.
                    if unsafe { all_finite(values) } {
                        continue;
                    }
                }
                for (c, bad) in bad.iter_mut().enumerate() {
                    // SAFETY: (j, c) is inside the value's view.
                    let x = unsafe {
                        *vp.ptr()
                            .offset(at + j as isize * v.rows + c as isize * v.cols)
                    };
                    if !x.is_finite() {
                        *bad = j + 1;
                    }
                }
            }
            bad
        })
        .collect()
}

widest_vectors! {
    /// Whether every value is finite.
    unsafe fn all_finite<T: [Real]>(values: &[T]) -> bool => all_finite_plain
}

/// [`all_finite`] without an early exit, so that it vectorizes.
#[inline(always)]
fn all_finite_plain<T: Real>(values: &[T]) -> bool {
    values.iter().fold(true, |all, x| all & x.is_finite())
}

/// Applies `attn_mask` to a tile of scores of `rows` queries × `cols` keys
/// (column-major, column stride [`QUERY_ROWS`]): a bool mask hides (−inf)
/// the scores where it is false; a float mask (of the scores' dtype) is
/// added. A bool mask with its keys contiguous (a padding mask) is read
/// query by query, in order, and a query it hides nothing of (most) is
/// skipped by memchr.
///
/// # Safety
/// From `base` (in elements: bytes for a bool mask, `T` otherwise), `mask`
/// must address rows × cols elements at its strides.
unsafe fn apply_mask<T: Real>(
    scores: &mut [T],
    mask: Block<u8>,
    base: isize,
    boolean: bool,
    (rows, cols): (usize, usize),
) {
    if boolean && mask.cols == 1 {
        for ii in 0..rows {
            // SAFETY: query ii's cols keys, one byte each, per the contract.
            let keys = unsafe {
                std::slice::from_raw_parts(mask.ptr.offset(base + ii as isize * mask.rows), cols)
            };
            if !keys.contains(&0) {
                continue;
            }
            for (jj, &key) in keys.iter().enumerate() {
                if key == 0 {
                    scores[jj * QUERY_ROWS + ii] = T::NEG_INFINITY;
                }
            }
        }
        return;
    }
    for jj in 0..cols {
        let col = &mut scores[jj * QUERY_ROWS..jj * QUERY_ROWS + rows];
        let at = base + jj as isize * mask.cols;
        for (ii, score) in col.iter_mut().enumerate() {
            let at = at + ii as isize * mask.rows;
            // SAFETY: (ii, jj) is inside the mask, per the contract.
            unsafe {
                if boolean {
                    if *mask.ptr.offset(at) == 0 {
                        *score = T::NEG_INFINITY;
                    }
                } else {
                    *score = *score + *(mask.ptr as *const T).offset(at);
                }
            }
        }
    }
}

/// One step of the online softmax over a tile of `rows` queries × `cols`
/// keys (column-major, column stride [`QUERY_ROWS`]): each query's new
/// maximum, the tile's scores replaced by e^(score − maximum), the
/// denominators and the accumulator rescaled to the new maximum and the
/// tile's sums added.
unsafe fn online_softmax<T: Real>(
    tile: &mut [T],
    rows: usize,
    cols: usize,
    max: &mut [T],
    sum: &mut [T],
    acc: &mut [T],
) {
    if rows < FEW_QUERIES {
        // SAFETY: only slices.
        unsafe { few_queries_softmax_wide(tile, rows, cols, max, sum, acc) };
        return;
    }
    // SAFETY: only slices.
    unsafe { online_softmax_wide(tile, rows, cols, max, sum, acc) }
}

widest_vectors! {
    /// [`few_queries_softmax`], compiled with FMA (kiln-math's `exp` uses
    /// fused multiply-adds, a library call per element without it).
    unsafe fn few_queries_softmax_wide<T: [Real]>(
        tile: &mut [T],
        rows: usize,
        cols: usize,
        max: &mut [T],
        sum: &mut [T],
        acc: &mut [T],
    ) => few_queries_softmax
}

/// A query's new base of exponentials, its tile's maximum `top`, and the
/// factor `e^(old − base)` that rescales what was summed against the old
/// maximum. Where every score so far is −inf the base is 0: the
/// exponentials are then 0, not e^(−inf + inf).
#[inline(always)]
fn rebased<T: Real>(old: T, top: T) -> (T, T) {
    let base = if top == T::NEG_INFINITY { T::ZERO } else { top };
    (base, (old - base).exp())
}

/// [`online_softmax`] for the first `rows` queries only, one at a time,
/// in the same order of operations per query (so the same bits).
#[inline(always)]
fn few_queries_softmax<T: Real>(
    tile: &mut [T],
    rows: usize,
    cols: usize,
    max: &mut [T],
    sum: &mut [T],
    acc: &mut [T],
) {
    for i in 0..rows {
        let mut top = max[i];
        for col in tile.chunks_exact(QUERY_ROWS).take(cols) {
            top = crate::lines::nan_max(top, col[i]);
        }
        let (base, scale) = rebased(max[i], top);
        max[i] = top;
        let mut total = sum[i] * scale;
        for col in tile.chunks_exact_mut(QUERY_ROWS).take(cols) {
            let p = (col[i] - base).exp();
            col[i] = p;
            total = total + p;
        }
        sum[i] = total;
        for col in acc.chunks_exact_mut(QUERY_ROWS) {
            col[i] = col[i] * scale;
        }
    }
}

widest_vectors! {
    unsafe fn online_softmax_wide<T: [Real]>(
        tile: &mut [T],
        rows: usize,
        cols: usize,
        max: &mut [T],
        sum: &mut [T],
        acc: &mut [T],
    ) => online_softmax_plain
}

#[inline(always)]
unsafe fn online_softmax_plain<T: Real>(
    tile: &mut [T],
    rows: usize,
    cols: usize,
    max: &mut [T],
    sum: &mut [T],
    acc: &mut [T],
) {
    // All QUERY_ROWS lanes, whatever `rows` is: constant trip counts keep
    // the running maxima in registers. Lanes past `rows` hold leftovers
    // that nothing reads.
    let _ = rows;
    let mut top = [T::NEG_INFINITY; QUERY_ROWS];
    top.copy_from_slice(&max[..QUERY_ROWS]);
    for col in tile.chunks_exact(QUERY_ROWS).take(cols) {
        for i in 0..QUERY_ROWS {
            let x = col[i];
            // A select, not a conditional store, so that the maxima stay
            // in registers.
            top[i] = crate::lines::nan_max(top[i], x);
        }
    }
    let mut base = [T::ZERO; QUERY_ROWS];
    let mut scale = [T::ONE; QUERY_ROWS];
    for i in 0..QUERY_ROWS {
        (base[i], scale[i]) = rebased(max[i], top[i]);
        max[i] = top[i];
        sum[i] = sum[i] * scale[i];
    }
    let sum = &mut sum[..QUERY_ROWS];
    for col in tile.chunks_exact_mut(QUERY_ROWS).take(cols) {
        for i in 0..QUERY_ROWS {
            let p = (col[i] - base[i]).exp();
            col[i] = p;
            sum[i] = sum[i] + p;
        }
    }
    for col in acc.chunks_exact_mut(QUERY_ROWS) {
        for i in 0..QUERY_ROWS {
            col[i] = col[i] * scale[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The query-by-query online softmax against the vector form: the same
    /// bits for every query it computes, with −inf, +inf and NaN scores,
    /// a first tile (maxima −inf) and a later one.
    #[test]
    fn few_queries_softmax_matches_the_vector_form() {
        let mut stream = crate::random::Stream::new(11);
        let mut next = || (stream.unit() * 8.0) as f32;
        let cols = 37;
        let ev = 5;
        for rows in 1..FEW_QUERIES {
            for later in [false, true] {
                let mut tile: Vec<f32> = (0..QUERY_ROWS * cols).map(|_| next()).collect();
                tile[3] = f32::NEG_INFINITY;
                tile[QUERY_ROWS + 1] = f32::INFINITY;
                tile[2 * QUERY_ROWS + 2] = f32::NAN;
                for col in tile.chunks_exact_mut(QUERY_ROWS) {
                    col[4] = f32::NEG_INFINITY;
                }
                let (max, sum): (Vec<f32>, Vec<f32>) = if later {
                    (0..QUERY_ROWS).map(|_| (next(), next().abs())).unzip()
                } else {
                    (vec![f32::NEG_INFINITY; QUERY_ROWS], vec![0.0; QUERY_ROWS])
                };
                let acc: Vec<f32> = (0..QUERY_ROWS * ev).map(|_| next()).collect();
                let (mut t1, mut m1, mut s1, mut a1) =
                    (tile.clone(), max.clone(), sum.clone(), acc.clone());
                let (mut t2, mut m2, mut s2, mut a2) = (tile, max, sum, acc);
                few_queries_softmax(&mut t1, rows, cols, &mut m1, &mut s1, &mut a1);
                // SAFETY: only slices.
                unsafe { online_softmax_plain(&mut t2, rows, cols, &mut m2, &mut s2, &mut a2) };
                let same =
                    |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                for i in 0..rows {
                    assert!(
                        same(m1[i], m2[i]) && same(s1[i], s2[i]),
                        "rows {rows} query {i}"
                    );
                    for c in 0..cols {
                        let at = c * QUERY_ROWS + i;
                        assert!(same(t1[at], t2[at]), "rows {rows} query {i} key {c}");
                    }
                    for c in 0..ev {
                        let at = c * QUERY_ROWS + i;
                        assert!(same(a1[at], a2[at]), "rows {rows} query {i} column {c}");
                    }
                }
            }
        }
    }

    /// The reference, by definition, in f64.
    fn naive(
        q: &[f64],
        k: &[f64],
        v: &[f64],
        (l, s, e, ev): (usize, usize, usize, usize),
        causal: bool,
        hidden: &dyn Fn(usize, usize) -> bool,
    ) -> Vec<f64> {
        let scale = 1.0 / (e as f64).sqrt();
        let mut out = vec![0.0; l * ev];
        for i in 0..l {
            let scores: Vec<f64> = (0..s)
                .map(|j| {
                    if (causal && j > i) || hidden(i, j) {
                        f64::NEG_INFINITY
                    } else {
                        (0..e).map(|d| q[i * e + d] * k[j * e + d]).sum::<f64>() * scale
                    }
                })
                .collect();
            let top = scores.iter().copied().fold(f64::NEG_INFINITY, |m, x| {
                if x > m || x.is_nan() { x } else { m }
            });
            // A query with no key weighs every value by 0 (`_safe_softmax`).
            let (p, total): (Vec<f64>, f64) = if top == f64::NEG_INFINITY {
                (vec![0.0; s], 1.0)
            } else {
                let p: Vec<f64> = scores.iter().map(|x| (x - top).exp()).collect();
                let total = p.iter().sum();
                (p, total)
            };
            for c in 0..ev {
                out[i * ev + c] = (0..s).map(|j| p[j] * v[j * ev + c]).sum::<f64>() / total;
            }
        }
        out
    }

    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    /// `run` in `T` on `q`, `k`, `v` (rounded to `T`) and a bool mask, with
    /// the geometries of q, k, v, mask and output; the output in f64.
    fn attend<T: Real + Into<f64>>(
        (q, k, v, mask, [gq, gk, gv, gm, go]): (&[f64], &[f64], &[f64], &mut [u8], [&Geometry; 5]),
        scale: f64,
        causal: bool,
        products: Products,
    ) -> Vec<f64> {
        let cast = |x: &[f64]| x.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
        let (mut q, mut k, mut v) = (cast(q), cast(k), cast(v));
        let mut out = cast(&vec![f64::NAN; go.numel() as usize]);
        let operand = |ptr: *mut T, geometry| Operand {
            ptr: ptr.cast(),
            geometry,
        };
        let x = Operands {
            query: operand(q.as_mut_ptr(), gq),
            key: operand(k.as_mut_ptr(), gk),
            value: operand(v.as_mut_ptr(), gv),
            mask: Some((
                Operand {
                    ptr: mask.as_mut_ptr(),
                    geometry: gm,
                },
                DType::Bool,
            )),
        };
        // SAFETY: each vector holds its geometry's elements.
        unsafe { run::<T>(scale, causal, &x, operand(out.as_mut_ptr(), go), products) };
        out.into_iter().map(Into::into).collect()
    }

    /// Blocks of queries and keys with ragged ends, causal and not, a bool
    /// mask hiding whole rows, finite values and values with ±inf and NaN,
    /// against the definition: f64, and f32 through
    /// both ways of computing the products.
    #[test]
    fn tiles_agree_with_the_definition() {
        let mut ways = vec![(DType::F64, Products::Gemm), (DType::F32, Products::Gemm)];
        if Products::for_element::<f32>() != Products::Gemm {
            ways.push((DType::F32, Products::for_element::<f32>()));
        }
        if has_fma() {
            ways.extend([(DType::F64, Products::Rows), (DType::F32, Products::Rows)]);
        }
        for &(l, s, e, ev, causal, poisoned) in &[
            (1, 1, 1, 1, false),
            (70, 300, 16, 5, false),
            (130, 130, 8, 8, true),
            (200, 77, 4, 3, true),
            (64, 600, 64, 64, true),
            (5, 0, 4, 3, false),
            (3, 4, 0, 2, false),
            // Decode-like: few queries over many keys (query by query;
            // more than 256 value dims: gemm).
            (1, 300, 64, 64, true),
            (4, 257, 20, 33, false),
            (2, 40, 8, 300, false),
        ]
        .iter()
        .flat_map(|&case| [(case, false), (case, true)])
        .map(|((l, s, e, ev, causal), poisoned)| (l, s, e, ev, causal, poisoned))
        .collect::<Vec<_>>()
        {
            let (q, k, mut v) = (values(l * e, 1), values(s * e, 2), values(s * ev, 3));
            if poisoned && s > 1 && ev > 1 {
                // Values not finite at a late key (above the causal
                // diagonal for most queries) and at a middle one.
                v[(s - 1) * ev] = f64::INFINITY;
                v[(s / 2) * ev + ev - 1] = f64::NAN;
            }
            let hidden = |i: usize, j: usize| i % 7 == 3 || (i + j) % 5 == 0;
            let want = naive(&q, &k, &v, (l, s, e, ev), causal, &hidden);
            let mut mask: Vec<u8> = (0..l * s)
                .map(|x| u8::from(!hidden(x / s.max(1), x % s.max(1))))
                .collect();
            let g = |rows: usize, cols: usize| {
                Geometry::new(vec![rows as i64, cols as i64], vec![cols as i64, 1], 0)
            };
            let (gq, gk, gv, gm, go) = (g(l, e), g(s, e), g(s, ev), g(l, s), g(l, ev));
            let geometries = [&gq, &gk, &gv, &gm, &go];
            let scale = 1.0 / (e as f64).sqrt();
            for &(dtype, products) in &ways {
                let args = (&q[..], &k[..], &v[..], &mut mask[..], geometries);
                let got = if dtype == DType::F64 {
                    attend::<f64>(args, scale, causal, products)
                } else {
                    attend::<f32>(args, scale, causal, products)
                };
                let tol = if dtype == DType::F64 { 1e-12 } else { 2e-6 };
                for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        a == b || (a - b).abs() <= tol || (a.is_nan() && b.is_nan()),
                        "{l}x{s}x{e} causal {causal} poisoned {poisoned} {dtype:?} {products:?}: [{i}] {a} vs {b}"
                    );
                }
            }
        }
    }
}
