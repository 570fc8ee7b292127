//! `softmax` and `log_softmax` of f32 over the last dim as one native host
//! step of compiled CPU plans, and the row passes they share with
//! [`crate::cross_entropy`]: each row's maximum, then its exponentials and
//! their sum in one pass from cache (softmax keeps the exponentials in its
//! output row), then the output. On 16 lanes of AVX-512 with kiln-math's
//! `exp` ([`crate::avx512`]), else in the widest vectors LLVM makes of
//! plain loops. Decomposed, softmax is a fused kernel of three phases
//! with the same passes (the exponentials stored in the output and
//! reloaded), whose exponentials run in 4-lane Cranelift vectors: the
//! step's gain is the width. The decomposition stays the definition (the
//! interpreter runs it), and other forms of the ops (other dims, other
//! dtypes, small tensors) still lower to it.
//!
//! The arithmetic is the decomposition's: `m = amax(row)` (NaN
//! propagates), `e = exp(x − m)` with kiln-math's f32 `exp`, `s = Σ e`
//! summed in f64 and rounded once (on AVX-512, each lane's terms summed
//! eight at a time in f32 first, off by at most a few units in the last
//! place of a term: PyTorch's own sums run in f32 all along); softmax is
//! `e / s` and log_softmax `(x − m) − log(s)` with kiln-math's `log`, in
//! f32. Results differ from the decomposition's only by the sum's order
//! and those roundings.

use kiln_ir::graph::{Func, Inst};
use kiln_ir::{DType, Op, Result};
use kiln_math::Function;
use rayon::prelude::*;

use crate::spatial::Operand;
use crate::strided::{Shared, row, row_offset};
use crate::wide::widest_vectors;

/// Elements below which softmax stays a fused kernel: a host step costs
/// a few microseconds more than a kernel (and ends fusion with the ops
/// around it), which a small tensor's exponentials do not earn back (16×64
/// between two pointwise ops: 3 µs fused, 9 µs as a step).
const MIN_ELEMENTS: i64 = 1 << 15;

/// Whether the host runs this instruction as one native step: `softmax`
/// or `log_softmax` of an f32 tensor (every dim ≥ 1, at least
/// [`MIN_ELEMENTS`] elements) over its last dim, computed in f32.
/// Decomposition keeps these for the CPU backend.
pub fn fused(func: &Func, inst: &Inst) -> bool {
    let (dim, dtype) = match &inst.op {
        Op::Softmax { dim, dtype } | Op::LogSoftmax { dim, dtype } => (*dim, *dtype),
        _ => return false,
    };
    let Some(x) = inst.operands.first().and_then(|o| o.value()) else {
        return false;
    };
    let xt = func.ty(x);
    let rank = xt.rank() as i64;
    inst.results.len() == 1
        && inst.operands.len() == 1
        && rank >= 1
        && (dim == rank - 1 || dim == -1)
        && xt.dtype == DType::F32
        && matches!(dtype, None | Some(DType::F32))
        && func.ty(inst.result()).dtype == DType::F32
        && xt.shape.iter().all(|&n| n >= 1)
        && xt.numel() >= MIN_ELEMENTS
}

/// Runs `op` (a [`fused`] softmax or log_softmax) from `x` into `out`;
/// `false` when this file has no kernel for it.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; `out` must not overlap `x`.
pub unsafe fn softmax(op: &Op, x: Operand, out: Operand) -> Result<bool> {
    let log = match op {
        Op::Softmax { .. } => false,
        Op::LogSoftmax { .. } => true,
        _ => return Ok(false),
    };
    let (xg, og) = (x.geometry, out.geometry);
    let Some(last) = xg.rank().checked_sub(1) else {
        return Ok(false);
    };
    if og.shape != xg.shape {
        return Ok(false);
    }
    let n = xg.shape[last] as usize;
    let (x_step, o_step) = (xg.strides[last], og.strides[last]);
    let outer = &xg.shape[..last];
    let rows: i64 = outer.iter().product();
    let (xp, op_) = (Shared(x.ptr.cast::<f32>()), Shared(out.ptr.cast::<f32>()));
    (0..rows).into_par_iter().for_each_init(
        || (Vec::new(), Vec::new()),
        |(x_copy, o_copy): &mut (Vec<f32>, Vec<f32>), r| {
            let x_at = row_offset(xg.offset, &xg.strides, outer, r);
            let o_at = row_offset(og.offset, &og.strides, outer, r);
            // SAFETY: the row's n elements are inside x's buffer (the
            // caller's contract), which nothing writes during the step.
            let row = unsafe { row(xp.ptr().offset(x_at as isize), n, x_step, x_copy) };
            // SAFETY: the output row's n elements are inside out's buffer,
            // which does not overlap x's.
            let first_out = unsafe { op_.ptr().offset(o_at as isize) };
            // Plans write softmax contiguous (PyTorch's layout); a strided
            // output row (another caller) goes through a copy.
            let out_row: &mut [f32] = if o_step == 1 {
                // SAFETY: as above; rows of one output are disjoint.
                unsafe { std::slice::from_raw_parts_mut(first_out, n) }
            } else {
                o_copy.resize(n, 0.0);
                o_copy
            };
            if log {
                let (m, s) = max_and_sum(row, None);
                let ls = kiln_math::eval(Function::Log, s);
                // SAFETY: plain slice arithmetic.
                unsafe { shifted_minus(row, out_row, m, ls) };
            } else {
                let (_, s) = max_and_sum(row, Some(out_row));
                // SAFETY: plain slice arithmetic.
                unsafe { divided(out_row, s) };
            }
            if o_step != 1 {
                for (j, v) in o_copy.iter().enumerate() {
                    // SAFETY: element j of the output row is inside out's
                    // buffer.
                    unsafe { *first_out.offset(j as isize * o_step as isize) = *v };
                }
            }
        },
    );
    Ok(true)
}

widest_vectors! {
    /// `out = out / s`, element by element.
    unsafe fn divided(out: &mut [f32], s: f32) => divided_plain
}

#[inline(always)]
fn divided_plain(out: &mut [f32], s: f32) {
    for v in out {
        *v /= s;
    }
}

widest_vectors! {
    /// `out = (x − m) − ls`, element by element.
    unsafe fn shifted_minus(x: &[f32], out: &mut [f32], m: f32, ls: f32) => shifted_minus_plain
}

#[inline(always)]
fn shifted_minus_plain(x: &[f32], out: &mut [f32], m: f32, ls: f32) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = (v - m) - ls;
    }
}

/// `(amax(row), Σ exp(row − amax))` (see the module doc), the sum rounded
/// to f32, each exponential also written to `exps` (as long as the row)
/// when given: 16 lanes of AVX-512 where the CPU has it, else the widest
/// vectors LLVM makes of the plain loops.
pub(crate) fn max_and_sum(row: &[f32], exps: Option<&mut [f32]>) -> (f32, f32) {
    max_and_sum_ahead(row, exps, None)
}

/// [`max_and_sum`], fetching `ahead` (the next row a thread will read,
/// contiguous and as long as this one) into the cache while this row's
/// exponentials are computed: the maximum's pass then reads it from the
/// cache, so memory streams while the processor computes instead of
/// between (cross_entropy over 4096×50257, rows of 196 KiB: the first
/// pass of each row waited on memory while the second computed from L2).
/// The same arithmetic, the same bits.
pub(crate) fn max_and_sum_ahead(
    row: &[f32],
    exps: Option<&mut [f32]>,
    ahead: Option<&[f32]>,
) -> (f32, f32) {
    let exps = exps.map(|e| &mut e[..row.len()]);
    #[cfg(target_arch = "x86_64")]
    if crate::lanes::uses_avx512() {
        let ahead = ahead.filter(|a| a.len() >= row.len()).map(|a| a.as_ptr());
        // SAFETY: the CPU has AVX-512F; `exps` is as long as the row, and
        // so is `ahead`.
        let (m, s) = unsafe { max_and_sum_avx512(row, exps, ahead) };
        return (m, s as f32);
    }
    let mut stats = [0f64; 2];
    // SAFETY: plain slice arithmetic.
    unsafe { max_and_sum_wide(row, exps, &mut stats) };
    (stats[0] as f32, stats[1] as f32)
}

/// [`max_and_sum`] on 16 lanes: the maximum in two registers (NaN
/// propagating), then kiln-math's `exp` on 16 lanes ([`crate::avx512`]),
/// each exponential stored (when asked), summed eight to a lane in f32,
/// and those sums widened to f64 and summed in
/// four registers. The row's last partial vector is loaded under a mask,
/// −inf in the lanes past its end (which add e^−inf = 0), and stored under
/// it.
///
/// While the exponentials are computed, the row `ahead` (when given) is
/// prefetched into L2, two cache lines for every 32 elements.
///
/// # Safety
/// The CPU has AVX-512F; `exps` and `ahead`, when given, are as long as
/// the row.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn max_and_sum_avx512(
    row: &[f32],
    exps: Option<&mut [f32]>,
    ahead: Option<*const f32>,
) -> (f32, f64) {
    use kiln_math::Builder;
    use std::arch::x86_64::*;
    // SAFETY: this function runs only where the CPU has AVX-512F.
    let b = &mut unsafe { crate::avx512::Avx512::new() };
    let n = row.len();
    let p = row.as_ptr();
    let out = exps.map(|e| e.as_mut_ptr());
    let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
    let load_tail = |i: usize| {
        let mask = crate::avx512::first_lanes(n - i);
        // SAFETY: only the lanes before the row's end are read.
        unsafe { _mm512_mask_loadu_ps(ninf, mask, p.add(i)) }
    };
    // NaN-propagating, as the reference's amax (a select, not a branch).
    let top_of = |b: &mut crate::avx512::Avx512, top: __m512, x: __m512| {
        let take = b.gt(x, top) | b.is_nan(x);
        b.select(take, x, top)
    };
    let (mut t0, mut t1) = (ninf, ninf);
    let mut i = 0;
    while i + 32 <= n {
        // SAFETY: 32 elements from i are inside the row.
        let (x0, x1) = unsafe { (_mm512_loadu_ps(p.add(i)), _mm512_loadu_ps(p.add(i + 16))) };
        t0 = top_of(b, t0, x0);
        t1 = top_of(b, t1, x1);
        i += 32;
    }
    while i + 16 <= n {
        // SAFETY: 16 elements from i are inside the row.
        t0 = top_of(b, t0, unsafe { _mm512_loadu_ps(p.add(i)) });
        i += 16;
    }
    if i < n {
        t1 = top_of(b, t1, load_tail(i));
    }
    let top = top_of(b, t0, t1);
    let mut lanes = [0f32; 16];
    // SAFETY: 16 lanes into 16 floats.
    unsafe { _mm512_storeu_ps(lanes.as_mut_ptr(), top) };
    let m = lanes
        .iter()
        .fold(f32::NEG_INFINITY, |m, &x| crate::lines::nan_max(m, x));
    let mv = b.f32(m);
    // The exponentials are summed in f32 in two registers, BLOCK / 2
    // vectors each, added (every lane then holds at most BLOCK terms in
    // [0, 1], so its f32 sum is off by fewer than BLOCK units in the last
    // place of the largest term), then widened to f64 and added there:
    // nearly as accurate as widening each exponential, at a fraction of
    // its instructions (cross_entropy over 4096×50257: 72.5 → 64.2 ms;
    // softmax over 4096²: 7.6 → 7.0 ms).
    const BLOCK: usize = 8;
    let mut sums = [_mm512_setzero_pd(); 2];
    let mut part = [_mm512_setzero_ps(); 2];
    let flush = |sums: &mut [__m512d; 2], part: &mut [__m512; 2]| {
        let e = _mm512_add_ps(part[0], part[1]);
        let lo = _mm512_cvtps_pd(_mm512_castps512_ps256(e));
        let hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(
            _mm512_castps_pd(e),
        )));
        sums[0] = _mm512_add_pd(sums[0], lo);
        sums[1] = _mm512_add_pd(sums[1], hi);
        *part = [_mm512_setzero_ps(); 2];
    };
    // The exponentials of the 16 elements from i (the lanes of `mask`
    // inside the row), stored where asked and summed into part[k].
    let mut add = |part: &mut [__m512; 2], k: usize, x: __m512, i: usize, mask: __mmask16| {
        let shifted = b.sub(x, mv);
        let e = kiln_math::algorithms::exp(b, shifted);
        if let Some(out) = out {
            // SAFETY: the lanes of `mask` are inside `exps`, as long as
            // the row.
            unsafe { _mm512_mask_storeu_ps(out.add(i), mask, e) };
        }
        part[k] = _mm512_add_ps(part[k], e);
    };
    let mut i = 0;
    let mut terms = 0;
    while i + 32 <= n {
        if let Some(a) = ahead {
            // SAFETY: a hint about elements i..i + 32 of a row as long as
            // this one (prefetches neither fault nor change memory).
            unsafe {
                _mm_prefetch::<_MM_HINT_T1>(a.add(i).cast());
                _mm_prefetch::<_MM_HINT_T1>(a.add(i + 16).cast());
            }
        }
        // SAFETY: 32 elements from i are inside the row.
        let (x0, x1) = unsafe { (_mm512_loadu_ps(p.add(i)), _mm512_loadu_ps(p.add(i + 16))) };
        add(&mut part, 0, x0, i, 0xffff);
        add(&mut part, 1, x1, i + 16, 0xffff);
        i += 32;
        terms += 1;
        if terms == BLOCK / 2 {
            flush(&mut sums, &mut part);
            terms = 0;
        }
    }
    while i + 16 <= n {
        // SAFETY: 16 elements from i are inside the row.
        add(
            &mut part,
            0,
            unsafe { _mm512_loadu_ps(p.add(i)) },
            i,
            0xffff,
        );
        i += 16;
    }
    if i < n {
        add(
            &mut part,
            1,
            load_tail(i),
            i,
            crate::avx512::first_lanes(n - i),
        );
    }
    flush(&mut sums, &mut part);
    let total = _mm512_add_pd(sums[0], sums[1]);
    (m, _mm512_reduce_add_pd(total))
}

/// Lanes of the row passes' accumulators (two AVX-512 registers of f32).
const LANES: usize = 32;

widest_vectors! {
    /// `stats = [amax(row), Σ exp(row − amax)]`, each exponential also
    /// written to `exps` when given (see the module doc).
    unsafe fn max_and_sum_wide(row: &[f32], exps: Option<&mut [f32]>, stats: &mut [f64; 2]) => max_and_sum_plain
}

#[inline(always)]
fn max_and_sum_plain(row: &[f32], exps: Option<&mut [f32]>, stats: &mut [f64; 2]) {
    let top_of = crate::lines::nan_max::<f32>;
    let mut tops = [f32::NEG_INFINITY; LANES];
    let chunks = row.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (t, &x) in tops.iter_mut().zip(chunk) {
            *t = top_of(*t, x);
        }
    }
    let mut m = f32::NEG_INFINITY;
    for x in tops.iter().chain(tail).copied() {
        m = top_of(m, x);
    }
    let exp = |x: f32| kiln_math::algorithms::exp(&mut kiln_math::scalar::Scalar, x - m);
    let mut sums = [0f64; LANES];
    let mut s = 0f64;
    match exps {
        Some(out) => {
            let chunks = row.chunks_exact(LANES).zip(out.chunks_exact_mut(LANES));
            for (chunk, outs) in chunks {
                for ((acc, o), &x) in sums.iter_mut().zip(outs).zip(chunk) {
                    *o = exp(x);
                    *acc += f64::from(*o);
                }
            }
            let done = row.len() - row.len() % LANES;
            for (o, &x) in out[done..].iter_mut().zip(&row[done..]) {
                *o = exp(x);
                s += f64::from(*o);
            }
        }
        None => {
            let chunks = row.chunks_exact(LANES);
            let tail = chunks.remainder();
            for chunk in chunks {
                for (acc, &x) in sums.iter_mut().zip(chunk) {
                    *acc += f64::from(exp(x));
                }
            }
            for &x in tail {
                s += f64::from(exp(x));
            }
        }
    }
    *stats = [f64::from(m), sums.iter().sum::<f64>() + s];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX-512 row passes (where the CPU has them) against the plain
    /// loops: the same maximum and exponentials, the same sum up to its
    /// order, on rows of every length up to 100 (full vectors and masked
    /// tails) with infinities and NaN.
    #[test]
    fn row_passes_agree() {
        let mut stream = crate::random::Stream::new(7);
        let mut next = || (stream.unit() * 10.0) as f32;
        let same = |a: f32, b: f32, tol: f32| {
            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * b.abs()
        };
        for len in 1..100 {
            for special in [
                None,
                Some(f32::INFINITY),
                Some(f32::NEG_INFINITY),
                Some(f32::NAN),
            ] {
                let mut row: Vec<f32> = (0..len).map(|_| next()).collect();
                if let Some(x) = special {
                    row[len / 2] = x;
                }
                let mut stats = [0f64; 2];
                // One element more than the row: nothing may be written
                // past its end.
                let mut want_exps = vec![7.0f32; len + 1];
                // SAFETY: plain slice arithmetic.
                unsafe { max_and_sum_wide(&row, Some(&mut want_exps[..len]), &mut stats) };
                let mut exps = vec![7.0f32; len + 1];
                let (m, s) = max_and_sum(&row, Some(&mut exps[..len]));
                let want = (stats[0] as f32, stats[1] as f32);
                assert!(
                    same(m, want.0, 0.0),
                    "len {len} {special:?}: max {m} vs {}",
                    want.0
                );
                assert!(
                    same(s, want.1, 1e-6),
                    "len {len} {special:?}: sum {s} vs {}",
                    want.1
                );
                assert_eq!(exps[len], 7.0, "len {len}: written past the row");
                for (j, (a, b)) in exps.iter().zip(&want_exps).enumerate() {
                    assert!(
                        same(*a, *b, 0.0),
                        "len {len} {special:?}: exp {j}: {a} vs {b}"
                    );
                }
                let (m2, s2) = max_and_sum(&row, None);
                assert!(
                    same(m2, m, 0.0) && same(s2, s, 0.0),
                    "len {len}: with and without exps"
                );
            }
        }
    }

    /// Rows read and written through strides (an input and an output in
    /// column-major order) against contiguous ones: the same values.
    #[test]
    fn strided_rows_and_outputs() {
        use kiln_ir::view::Geometry;
        let (rows, n) = (5usize, 23usize);
        let x: Vec<f32> = (0..rows * n)
            .map(|i| ((i * 37) % 19) as f32 - 9.0)
            .collect();
        // The same matrix stored column-major.
        let mut xt = vec![0f32; rows * n];
        for r in 0..rows {
            for j in 0..n {
                xt[j * rows + r] = x[r * n + j];
            }
        }
        let row_major = Geometry {
            shape: vec![rows as i64, n as i64],
            strides: vec![n as i64, 1],
            offset: 0,
        };
        let col_major = Geometry {
            shape: vec![rows as i64, n as i64],
            strides: vec![1, rows as i64],
            offset: 0,
        };
        for op in [
            Op::Softmax {
                dim: -1,
                dtype: None,
            },
            Op::LogSoftmax {
                dim: -1,
                dtype: None,
            },
        ] {
            let mut want = vec![0f32; rows * n];
            let mut got = vec![0f32; rows * n];
            let operand = |p: *mut f32, geometry| Operand {
                ptr: p.cast(),
                geometry,
            };
            // SAFETY: each buffer holds every element of its geometry.
            unsafe {
                let xp = x.as_ptr() as *mut f32;
                let xtp = xt.as_ptr() as *mut f32;
                assert!(
                    softmax(
                        &op,
                        operand(xp, &row_major),
                        operand(want.as_mut_ptr(), &row_major)
                    )
                    .unwrap()
                );
                assert!(
                    softmax(
                        &op,
                        operand(xtp, &col_major),
                        operand(got.as_mut_ptr(), &col_major)
                    )
                    .unwrap()
                );
            }
            for r in 0..rows {
                for j in 0..n {
                    assert_eq!(got[j * rows + r], want[r * n + j], "{op:?} row {r} col {j}");
                }
            }
        }
    }
}
