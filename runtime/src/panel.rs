//! f32 matrix products on AVX-512, or AVX2 with FMA, for Winograd's
//! convolutions (`crate::winograd`), packed weights (`crate::packed`) and
//! the direct convolution's tiles: `C[j][i] (+)= Σ_k A[k][i] · B[j][k]`,
//! where A's rows are contiguous in `i` (the transformed input,
//! `[channel][tile]`) and B is read in place, one element broadcast at a
//! time (the transformed weights, `[out channel][channel]` at a stride).
//!
//! Blocks of 64 `i` × 6 `j` results live in 24 registers (the shape of the
//! gemm crate's microkernel, and as fast: one 512-bit multiply-add a
//! cycle); unlike the gemm crate, neither operand is packed again, since
//! the transform already wrote A as panels. `k` runs in blocks of [`KC`],
//! so that a block of A (64 KiB) stays in L2 while every `j` block reads it.
//! Without AVX-512 (AVX2 has 16 registers of 8 lanes) the blocks are 16
//! `i` × 6 `j` in 12 registers ([`avx2`]). Each result is the same chain
//! of fused multiply-adds over `k` in either (from zero, or from C's value
//! when accumulating; `k` in order), so both give the same bits.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

/// `A[k][i]` at `ptr + k·k_stride + i`.
#[derive(Clone, Copy)]
pub(crate) struct Panel {
    pub(crate) ptr: *const f32,
    pub(crate) k_stride: isize,
}

/// `B[j][k]` at `ptr + j·j_stride + k·k_stride`.
#[derive(Clone, Copy)]
pub(crate) struct Rows {
    pub(crate) ptr: *const f32,
    pub(crate) j_stride: isize,
    pub(crate) k_stride: isize,
}

/// `C[j][i]` at `ptr + j·j_stride + i`.
#[derive(Clone, Copy)]
pub(crate) struct Out {
    pub(crate) ptr: *mut f32,
    pub(crate) j_stride: isize,
}

/// The `k` block.
const KC: usize = 256;
/// Results per block: 64 `i` (four registers) by [`WIDE`] `j`.
const TALL: usize = 64;
const WIDE: usize = 6;

/// Whether the CPU has the instructions [`product`] needs: AVX-512F, or
/// AVX2 and FMA.
pub(crate) fn available() -> bool {
    crate::lanes::available()
}

/// Whether the CPU has AVX-512F (the 64 × 6 blocks).
pub(crate) fn wide() -> bool {
    crate::lanes::uses_avx512()
}

/// `C (+)= A·Bᵀ` over `m` values of `i`, `n` of `j` and `k` of `k`: added to
/// C's values when `accumulate`, else written over them.
///
/// # Safety
/// [`available`] holds; A, B and C address every element of their
/// `(k, m)`, `(n, k)` and `(n, m)` ranges at their strides; C overlaps
/// neither.
pub(crate) unsafe fn product(
    a: Panel,
    b: Rows,
    c: Out,
    mnk: (usize, usize, usize),
    accumulate: bool,
) {
    // SAFETY (both): forwarded; each on a CPU with its instructions.
    unsafe {
        if wide() {
            product_avx512(a, b, c, mnk, accumulate)
        } else {
            avx2::product(a, b, c, mnk, accumulate)
        }
    }
}

/// [`product`] on AVX-512F.
///
/// # Safety
/// As for [`product`]; the CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
unsafe fn product_avx512(
    a: Panel,
    b: Rows,
    c: Out,
    (m, n, k): (usize, usize, usize),
    accumulate: bool,
) {
    // SAFETY (C, and each block): inside the ranges the caller vouches
    // for.
    unsafe {
        drive(
            c,
            (m, n, k),
            accumulate,
            TALL,
            |i0, rows, ks, add| match rows.div_ceil(16) {
                4 => blocks::<4>(a, b, c, (i0, rows), n, ks, add),
                3 => blocks::<3>(a, b, c, (i0, rows), n, ks, add),
                2 => blocks::<2>(a, b, c, (i0, rows), n, ks, add),
                _ => blocks::<1>(a, b, c, (i0, rows), n, ks, add),
            },
        )
    };
}

/// The loops both forms share: `C` zeroed where `k` is 0 (unless
/// accumulating), else, for each block of [`KC`] `k`s and each range of
/// `tall` rows from `i0`, `rows(i0, rows, (k0, kc), add)`, `add` where the
/// block adds to C (after the first `k` block, or when accumulating).
///
/// # Safety
/// C addresses every element of its `(n, m)` range.
unsafe fn drive(
    c: Out,
    (m, n, k): (usize, usize, usize),
    accumulate: bool,
    tall: usize,
    mut rows: impl FnMut(usize, usize, (usize, usize), bool),
) {
    if k == 0 {
        if !accumulate {
            for j in 0..n {
                // SAFETY: row j of C, which the caller vouches for.
                unsafe { std::ptr::write_bytes(c.ptr.offset(j as isize * c.j_stride), 0, m) };
            }
        }
        return;
    }
    let mut k0 = 0;
    while k0 < k {
        let kc = KC.min(k - k0);
        let add = accumulate || k0 > 0;
        let mut i0 = 0;
        while i0 < m {
            rows(i0, (m - i0).min(tall), (k0, kc), add);
            i0 += tall;
        }
        k0 += kc;
    }
}

/// Every `j` block of rows `i0..i0 + rows` (in `R` registers).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn blocks<const R: usize>(
    a: Panel,
    b: Rows,
    c: Out,
    (i0, rows): (usize, usize),
    n: usize,
    ks: (usize, usize),
    add: bool,
) {
    // The lanes of each register inside the rows.
    let masks: [__mmask16; R] =
        std::array::from_fn(|r| crate::avx512::first_lanes(rows.saturating_sub(16 * r)));
    let mut j = 0;
    // SAFETY (each block): forwarded.
    unsafe {
        while j + WIDE <= n {
            block::<R, WIDE>(a, b, c, i0, j, ks, &masks, add);
            j += WIDE;
        }
        match n - j {
            1 => block::<R, 1>(a, b, c, i0, j, ks, &masks, add),
            2 => block::<R, 2>(a, b, c, i0, j, ks, &masks, add),
            3 => block::<R, 3>(a, b, c, i0, j, ks, &masks, add),
            4 => block::<R, 4>(a, b, c, i0, j, ks, &masks, add),
            5 => block::<R, 5>(a, b, c, i0, j, ks, &masks, add),
            _ => {}
        }
    }
}

/// The `16R × U` results at `(i0, j0)` over `k0..k0 + kc`.
#[target_feature(enable = "avx512f")]
#[inline]
#[allow(clippy::too_many_arguments)]
unsafe fn block<const R: usize, const U: usize>(
    a: Panel,
    b: Rows,
    c: Out,
    i0: usize,
    j0: usize,
    (k0, kc): (usize, usize),
    masks: &[__mmask16; R],
    add: bool,
) {
    // SAFETY: the masked lanes are inside the ranges `product` is given.
    unsafe {
        let at = |u: usize, r: usize| {
            c.ptr
                .offset((j0 + u) as isize * c.j_stride + (i0 + 16 * r) as isize)
        };
        let mut acc = [[_mm512_setzero_ps(); R]; U];
        if add {
            for (u, acc) in acc.iter_mut().enumerate() {
                for (r, acc) in acc.iter_mut().enumerate() {
                    *acc = _mm512_maskz_loadu_ps(masks[r], at(u, r));
                }
            }
        }
        let mut ap = a.ptr.offset(k0 as isize * a.k_stride + i0 as isize);
        let mut bp = b
            .ptr
            .offset(j0 as isize * b.j_stride + k0 as isize * b.k_stride);
        for _ in 0..kc {
            let av: [__m512; R] =
                std::array::from_fn(|r| _mm512_maskz_loadu_ps(masks[r], ap.add(16 * r)));
            for (u, acc) in acc.iter_mut().enumerate() {
                let bv = _mm512_set1_ps(*bp.offset(u as isize * b.j_stride));
                for (r, acc) in acc.iter_mut().enumerate() {
                    *acc = _mm512_fmadd_ps(av[r], bv, *acc);
                }
            }
            // Past the last k these point past the operands: wrapping,
            // never read.
            ap = ap.wrapping_offset(a.k_stride);
            bp = bp.wrapping_offset(b.k_stride);
        }
        for (u, acc) in acc.iter().enumerate() {
            for (r, acc) in acc.iter().enumerate() {
                _mm512_mask_storeu_ps(at(u, r), masks[r], *acc);
            }
        }
    }
}

/// The kernel on AVX2 with FMA: blocks of 16 `i` (two registers) × 6 `j`,
/// rows past `m` masked with `vmaskmovps` (only in the last register of
/// the last block of a row range; whole registers load and store
/// plainly).
mod avx2 {
    use super::{Out, Panel, Rows, WIDE, drive};
    use std::arch::x86_64::*;

    /// Results per block along `i`: two 8-lane registers.
    const TALL: usize = 16;

    /// [`super::product`] on AVX2.
    ///
    /// # Safety
    /// As for [`super::product`]; the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn product(
        a: Panel,
        b: Rows,
        c: Out,
        (m, n, k): (usize, usize, usize),
        accumulate: bool,
    ) {
        // SAFETY (C, and each block): inside the ranges the caller
        // vouches for.
        unsafe {
            drive(
                c,
                (m, n, k),
                accumulate,
                TALL,
                |i0, rows, ks, add| match rows {
                    TALL => blocks::<2, true>(a, b, c, (i0, rows), n, ks, add),
                    9.. => blocks::<2, false>(a, b, c, (i0, rows), n, ks, add),
                    8 => blocks::<1, true>(a, b, c, (i0, rows), n, ks, add),
                    _ => blocks::<1, false>(a, b, c, (i0, rows), n, ks, add),
                },
            )
        };
    }

    /// Every `j` block of rows `i0..i0 + rows` (in `R` registers; `FULL`:
    /// all 8·R rows there).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn blocks<const R: usize, const FULL: bool>(
        a: Panel,
        b: Rows,
        c: Out,
        (i0, rows): (usize, usize),
        n: usize,
        ks: (usize, usize),
        add: bool,
    ) {
        // (A loop: `from_fn` runs its closure inside core's wrapper,
        // which has no target features and need not inline here; the
        // intrinsics in it would then be calls.)
        let mut masks = [_mm256_setzero_si256(); R];
        for (r, mask) in masks.iter_mut().enumerate() {
            *mask = crate::lanes::first_eight(rows.saturating_sub(8 * r));
        }
        let mut j = 0;
        // SAFETY (each block): forwarded.
        unsafe {
            while j + WIDE <= n {
                block::<R, WIDE, FULL>(a, b, c, i0, j, ks, &masks, add);
                j += WIDE;
            }
            match n - j {
                1 => block::<R, 1, FULL>(a, b, c, i0, j, ks, &masks, add),
                2 => block::<R, 2, FULL>(a, b, c, i0, j, ks, &masks, add),
                3 => block::<R, 3, FULL>(a, b, c, i0, j, ks, &masks, add),
                4 => block::<R, 4, FULL>(a, b, c, i0, j, ks, &masks, add),
                5 => block::<R, 5, FULL>(a, b, c, i0, j, ks, &masks, add),
                _ => {}
            }
        }
    }

    /// The `8R × U` results at `(i0, j0)` over `k0..k0 + kc`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    unsafe fn block<const R: usize, const U: usize, const FULL: bool>(
        a: Panel,
        b: Rows,
        c: Out,
        i0: usize,
        j0: usize,
        (k0, kc): (usize, usize),
        masks: &[__m256i; R],
        add: bool,
    ) {
        // SAFETY: the masked lanes (all, when FULL) are inside the ranges
        // `product` is given.
        unsafe {
            // (Only the last register of a partial block is partial: the
            // blocks of 9 to 15 rows have a first one of 8.)
            let whole = |r: usize| FULL || r + 1 < R;
            let load = |p: *const f32, r: usize| {
                if whole(r) {
                    _mm256_loadu_ps(p)
                } else {
                    _mm256_maskload_ps(p, masks[r])
                }
            };
            let at = |u: usize, r: usize| {
                c.ptr
                    .offset((j0 + u) as isize * c.j_stride + (i0 + 8 * r) as isize)
            };
            let mut acc = [[_mm256_setzero_ps(); R]; U];
            if add {
                for (u, acc) in acc.iter_mut().enumerate() {
                    for (r, acc) in acc.iter_mut().enumerate() {
                        *acc = load(at(u, r), r);
                    }
                }
            }
            let mut ap = a.ptr.offset(k0 as isize * a.k_stride + i0 as isize);
            let mut bp = b
                .ptr
                .offset(j0 as isize * b.j_stride + k0 as isize * b.k_stride);
            for _ in 0..kc {
                let mut av = [_mm256_setzero_ps(); R];
                for (r, av) in av.iter_mut().enumerate() {
                    *av = load(ap.add(8 * r), r);
                }
                for (u, acc) in acc.iter_mut().enumerate() {
                    let bv = _mm256_set1_ps(*bp.offset(u as isize * b.j_stride));
                    for (r, acc) in acc.iter_mut().enumerate() {
                        *acc = _mm256_fmadd_ps(av[r], bv, *acc);
                    }
                }
                // Past the last k these point past the operands: wrapping,
                // never read.
                ap = ap.wrapping_offset(a.k_stride);
                bp = bp.wrapping_offset(b.k_stride);
            }
            for (u, acc) in acc.iter().enumerate() {
                for (r, acc) in acc.iter().enumerate() {
                    if whole(r) {
                        _mm256_storeu_ps(at(u, r), *acc);
                    } else {
                        _mm256_maskstore_ps(at(u, r), masks[r], *acc);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both forms give every result as one chain of fused multiply-adds
    /// over `k` in order, from zero or from C: each form the CPU has
    /// against that chain, bit for bit (partial row ranges of either
    /// form's registers, `j` past multiples of 6, two `k` blocks, written
    /// over and accumulated).
    #[test]
    fn both_forms_are_the_chain_of_multiply_adds() {
        let value =
            |seed: usize| ((seed.wrapping_mul(2_654_435_761) % 2001) as f32 - 1000.0) / 337.0;
        for (m, n, k) in [
            (1, 1, 1),
            (7, 5, 3),
            (16, 6, 40),
            (17, 13, 300),
            (64, 7, 257),
            (70, 12, 9),
            // AVX2's whole 8-row blocks, and a partial second register.
            (8, 3, 4),
            (24, 6, 5),
            (11, 4, 2),
        ] {
            let a: Vec<f32> = (0..k * m).map(|i| value(i + 1)).collect();
            let b: Vec<f32> = (0..n * k).map(|i| value(i + 7919)).collect();
            let start: Vec<f32> = (0..n * m).map(|i| value(i + 104_729)).collect();
            for accumulate in [false, true] {
                let expected: Vec<u32> = (0..n * m)
                    .map(|at| {
                        let (j, i) = (at / m, at % m);
                        let mut acc = if accumulate { start[at] } else { 0.0 };
                        for kk in 0..k {
                            acc = a[kk * m + i].mul_add(b[j * k + kk], acc);
                        }
                        acc.to_bits()
                    })
                    .collect();
                let run = |form: unsafe fn(Panel, Rows, Out, (usize, usize, usize), bool)| {
                    let mut c = start.clone();
                    // SAFETY: the matrices hold their ranges; the CPU has
                    // the form's instructions (checked by the caller).
                    unsafe {
                        form(
                            Panel {
                                ptr: a.as_ptr(),
                                k_stride: m as isize,
                            },
                            Rows {
                                ptr: b.as_ptr(),
                                j_stride: k as isize,
                                k_stride: 1,
                            },
                            Out {
                                ptr: c.as_mut_ptr(),
                                j_stride: m as isize,
                            },
                            (m, n, k),
                            accumulate,
                        )
                    };
                    c.iter().map(|v| v.to_bits()).collect::<Vec<u32>>()
                };
                if wide() {
                    assert_eq!(run(product_avx512), expected, "AVX-512, {m}x{n}x{k}");
                }
                if crate::lanes::Avx2::available() {
                    assert_eq!(run(avx2::product), expected, "AVX2, {m}x{n}x{k}");
                }
            }
        }
    }
}
