//! `var` and `std` of f32 over the last dim as one native host step of
//! compiled CPU plans. Decomposed, they are a fused kernel of two phases
//! (the mean, then the squared deviations) whose f32 → f64 widenings run
//! in 4-lane Cranelift vectors; here each row's two passes run on 16 lanes
//! of AVX-512 (8 f64 lanes for the sums), else in the widest vectors LLVM
//! makes of plain loops. The decomposition stays the definition (the
//! interpreter runs it; other forms of the ops still lower to it).
//!
//! The arithmetic is the decomposition's: `mean = f32(Σ x) / n` (the sum
//! in f64, rounded once), `d = x − mean` and `d·d` in f32, `ss = f32(Σ
//! d·d)` (in f64, rounded once), `var = ss / max(n − correction, 0)` in
//! f32 (inf or NaN for a zero divisor), `std = sqrt(var)`; on AVX-512 each
//! lane sums eight terms in f32 before widening them (the widening of
//! every term was most of the row's work: 8192×1024 1.30 → 0.87 ms).
//! Results differ from the decomposition's only by summation order and
//! those roundings.

use kiln_ir::graph::{Func, Inst};
use kiln_ir::{DType, Op, Result};
use rayon::prelude::*;

use crate::spatial::Operand;
use crate::strided::{Shared, row, row_offset};
use crate::wide::widest_vectors;

/// Whether the host runs this instruction as one native step: `var` or
/// `std` of an f32 tensor (every dim ≥ 1) over its last dim only, with
/// one f32 result. Decomposition keeps these for the CPU backend.
pub fn fused(func: &Func, inst: &Inst) -> bool {
    let dims = match &inst.op {
        Op::Var { dims, .. } | Op::Std { dims, .. } => dims,
        _ => return false,
    };
    let Some(x) = inst.operands.first().and_then(|o| o.value()) else {
        return false;
    };
    let xt = func.ty(x);
    let rank = xt.rank() as i64;
    let last_only = match dims.as_deref() {
        Some([d]) => rank >= 1 && (*d == rank - 1 || *d == -1),
        None => rank == 1,
        _ => false,
    };
    last_only
        && inst.results.len() == 1
        && inst.operands.len() == 1
        && xt.dtype == DType::F32
        && func.ty(inst.result()).dtype == DType::F32
        && xt.shape.iter().all(|&n| n >= 1)
}

/// Runs `op` (a [`fused`] var or std) from `x` into `out`; `false` when
/// this file has no kernel for it.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; `out` must not overlap `x`.
pub unsafe fn moments(op: &Op, x: Operand, out: Operand) -> Result<bool> {
    let (correction, root) = match op {
        Op::Var { correction, .. } => (correction, false),
        Op::Std { correction, .. } => (correction, true),
        _ => return Ok(false),
    };
    let (xg, og) = (x.geometry, out.geometry);
    let Some(last) = xg.rank().checked_sub(1) else {
        return Ok(false);
    };
    let n = xg.shape[last] as usize;
    let step = xg.strides[last];
    let outer = &xg.shape[..last];
    // The output's strides over the outer dims (keepdim's last 1 aside).
    let out_strides = &og.strides[..last.min(og.rank())];
    let divisor = (n as f64 - correction.to_f64()).max(0.0) as f32;
    let rows: i64 = outer.iter().product();
    let (xp, op_) = (Shared(x.ptr.cast::<f32>()), Shared(out.ptr.cast::<f32>()));
    (0..rows)
        .into_par_iter()
        .for_each_init(Vec::new, |copy: &mut Vec<f32>, r| {
            let x_at = row_offset(xg.offset, &xg.strides, outer, r);
            let o_at = row_offset(og.offset, out_strides, outer, r);
            // SAFETY: the row's n elements are inside x's buffer (the
            // caller's contract), which nothing writes during the step.
            let row = unsafe { row(xp.ptr().offset(x_at as isize), n, step, copy) };
            let var = squared_deviations(row) / divisor;
            let value = if root { var.sqrt() } else { var };
            // SAFETY: the row's result is inside out's buffer.
            unsafe { *op_.ptr().offset(o_at as isize) = value };
        });
    Ok(true)
}

/// `f32(Σ (x − mean)²)` with `mean = f32(Σ x) / n` (see the module doc).
fn squared_deviations(row: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if crate::lanes::uses_avx512() {
        // SAFETY: the CPU has AVX-512F.
        return unsafe { squared_deviations_avx512(row) };
    }
    // SAFETY: plain slice arithmetic.
    let sum = unsafe { sum_wide(row) };
    let mean = sum as f32 / row.len() as f32;
    // SAFETY: as above.
    (unsafe { deviations_wide(row, mean) }) as f32
}

widest_vectors! {
    /// `Σ x` in f64.
    unsafe fn sum_wide(row: &[f32]) -> f64 => sum_plain
}

widest_vectors! {
    /// `Σ (x − mean)²`, each square in f32, summed in f64.
    unsafe fn deviations_wide(row: &[f32], mean: f32) -> f64 => deviations_plain
}

#[inline(always)]
fn sum_plain(row: &[f32]) -> f64 {
    sum_of(row, f64::from)
}

#[inline(always)]
fn deviations_plain(row: &[f32], mean: f32) -> f64 {
    sum_of(row, |x| {
        let d = x - mean;
        f64::from(d * d)
    })
}

/// `Σ term(x)` in eight partial sums (so that the loop vectorizes).
#[inline(always)]
fn sum_of(row: &[f32], term: impl Fn(f32) -> f64) -> f64 {
    let mut acc = [0f64; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += term(*x);
        }
    }
    acc.iter().sum::<f64>() + chunks.remainder().iter().map(|x| term(*x)).sum::<f64>()
}

/// [`squared_deviations`] on 16 f32 lanes: two passes of [`widened_sum`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn squared_deviations_avx512(row: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    // SAFETY (both passes): forwarded.
    let sum = unsafe { widened_sum(row, |x, _| x) };
    let m = _mm512_set1_ps(sum as f32 / row.len() as f32);
    // The squared deviations, the lanes past the row's end masked off
    // (the row is in cache).
    (unsafe {
        widened_sum(row, |x, mask| {
            let d = _mm512_sub_ps(x, m);
            _mm512_maskz_mul_ps(mask, d, d)
        })
    }) as f32
}

/// `Σ term(x)` over the row in vectors of 16 f32 lanes, the terms summed
/// eight to a lane in f32, those sums widened to two halves of 8 f64
/// lanes and summed in two registers; the
/// row's last partial vector loaded under a mask (zeros past its end),
/// which `term` is given with the vector.
///
/// # Safety
/// The CPU has AVX-512F (inlined into a function compiled for it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn widened_sum(
    row: &[f32],
    term: impl Fn(std::arch::x86_64::__m512, std::arch::x86_64::__mmask16) -> std::arch::x86_64::__m512,
) -> f64 {
    use std::arch::x86_64::*;
    let (n, p) = (row.len(), row.as_ptr());
    // SAFETY (every intrinsic): AVX-512F, the caller's.
    unsafe {
        let widen = |v: __m512| -> (__m512d, __m512d) {
            let high = _mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v));
            (
                _mm512_cvtps_pd(_mm512_castps512_ps256(v)),
                _mm512_cvtps_pd(_mm256_castpd_ps(high)),
            )
        };
        let tail = n % 16;
        let body = n - tail;
        let mut acc = [_mm512_setzero_pd(); 2];
        // Terms are summed in f32, four to a lane in each of two
        // registers, before their sum is widened (as softmax's rows,
        // `crate::softmax`): each lane's f32 sum of eight terms is off by
        // fewer than eight units in the last place of the largest.
        let mut part = [_mm512_setzero_ps(); 2];
        let flush = |acc: &mut [__m512d; 2], part: &mut [__m512; 2]| {
            let (lo, hi) = widen(_mm512_add_ps(part[0], part[1]));
            acc[0] = _mm512_add_pd(acc[0], lo);
            acc[1] = _mm512_add_pd(acc[1], hi);
            *part = [_mm512_setzero_ps(); 2];
        };
        let mut i = 0;
        while i < body {
            // 16 elements from i are inside the row.
            let k = (i / 16) % 2;
            part[k] = _mm512_add_ps(part[k], term(_mm512_loadu_ps(p.add(i)), 0xffff));
            i += 16;
            if i % 128 == 0 {
                flush(&mut acc, &mut part);
            }
        }
        if tail > 0 {
            // Only the lanes before the row's end are read.
            let mask = crate::avx512::first_lanes(tail);
            let t = term(_mm512_maskz_loadu_ps(mask, p.add(body)), mask);
            part[1] = _mm512_add_ps(part[1], t);
        }
        flush(&mut acc, &mut part);
        _mm512_reduce_add_pd(_mm512_add_pd(acc[0], acc[1]))
    }
}
