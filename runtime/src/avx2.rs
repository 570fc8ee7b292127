//! kiln-math's f32 functions on 8 lanes of AVX2 (with FMA): a
//! [`Builder`] on [`crate::lanes::Avx2`]'s token whose every operation is
//! one AVX2 instruction (or a few, where an operation's edge cases need
//! them), so that on CPUs without AVX-512 a native step's `exp`, and the
//! calls JIT code makes for its lanes ([`crate::sixteen_lanes`]), are the
//! interpreter's algorithm, bit for bit, 8 elements at a time, as
//! [`crate::avx512`]'s are 16 at a time.
//!
//! Truth values are lanes of all ones or all zeros (`__m256`), as AVX2's
//! comparisons give them. AVX2 has no `vscalefps`, so `scale_by_pow2`
//! keeps kiln-math's default (two multiplications by powers of two: the
//! same value). Everything here runs only inside functions compiled for
//! AVX2 and FMA, as the token's contract says.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

use kiln_math::{Builder, Function};

use crate::lanes::Avx2;

// SAFETY (all methods): the intrinsics need AVX2 and FMA, which whoever
// made the token vouched for (`Avx2::new`).
impl Builder for Avx2 {
    type F = __m256;
    type I = __m256i;
    type M = __m256;

    #[inline(always)]
    fn f32(&mut self, v: f32) -> __m256 {
        unsafe { _mm256_set1_ps(v) }
    }
    #[inline(always)]
    fn i32(&mut self, v: i32) -> __m256i {
        unsafe { _mm256_set1_epi32(v) }
    }
    #[inline(always)]
    fn add(&mut self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub(&mut self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(&mut self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_mul_ps(a, b) }
    }
    #[inline(always)]
    fn div(&mut self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_div_ps(a, b) }
    }
    #[inline(always)]
    fn sqrt(&mut self, a: __m256) -> __m256 {
        unsafe { _mm256_sqrt_ps(a) }
    }
    #[inline(always)]
    fn fma(&mut self, a: __m256, b: __m256, c: __m256) -> __m256 {
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn neg(&mut self, a: __m256) -> __m256 {
        // Flips the sign bit, as f32's negation (NaNs included).
        unsafe { _mm256_xor_ps(a, _mm256_set1_ps(-0.0)) }
    }
    #[inline(always)]
    fn abs(&mut self, a: __m256) -> __m256 {
        unsafe { _mm256_andnot_ps(_mm256_set1_ps(-0.0), a) }
    }
    #[inline(always)]
    fn round(&mut self, a: __m256) -> __m256 {
        // Ties to even, as `round_ties_even`.
        unsafe { _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(a) }
    }
    #[inline(always)]
    fn lt(&mut self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_cmp_ps::<_CMP_LT_OQ>(a, b) }
    }
    #[inline(always)]
    fn gt(&mut self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(a, b) }
    }
    #[inline(always)]
    fn is_nan(&mut self, a: __m256) -> __m256 {
        unsafe { _mm256_cmp_ps::<_CMP_UNORD_Q>(a, a) }
    }
    #[inline(always)]
    fn select(&mut self, m: __m256, a: __m256, b: __m256) -> __m256 {
        // The blend takes its second operand where the mask is set.
        unsafe { _mm256_blendv_ps(b, a, m) }
    }
    #[inline(always)]
    fn nonzero(&mut self, a: __m256i) -> __m256 {
        unsafe {
            let zero = _mm256_cmpeq_epi32(a, _mm256_setzero_si256());
            _mm256_castsi256_ps(_mm256_xor_si256(zero, _mm256_set1_epi32(-1)))
        }
    }
    #[inline(always)]
    fn to_i32(&mut self, a: __m256) -> __m256i {
        // `a as i32`: truncation, saturating, NaN to 0 (the instruction
        // gives i32::MIN for all three cases it cannot represent), as
        // AVX-512's builder.
        unsafe {
            let t = _mm256_castsi256_ps(_mm256_cvttps_epi32(a));
            let high = _mm256_cmp_ps::<_CMP_GE_OQ>(a, _mm256_set1_ps(2_147_483_648.0));
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(a, a);
            let t = _mm256_blendv_ps(t, _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX)), high);
            _mm256_castps_si256(_mm256_blendv_ps(t, _mm256_setzero_ps(), nan))
        }
    }
    #[inline(always)]
    fn to_f32(&mut self, a: __m256i) -> __m256 {
        unsafe { _mm256_cvtepi32_ps(a) }
    }
    #[inline(always)]
    fn iadd(&mut self, a: __m256i, b: __m256i) -> __m256i {
        unsafe { _mm256_add_epi32(a, b) }
    }
    #[inline(always)]
    fn isub(&mut self, a: __m256i, b: __m256i) -> __m256i {
        unsafe { _mm256_sub_epi32(a, b) }
    }
    #[inline(always)]
    fn iand(&mut self, a: __m256i, b: __m256i) -> __m256i {
        unsafe { _mm256_and_si256(a, b) }
    }
    #[inline(always)]
    fn ior(&mut self, a: __m256i, b: __m256i) -> __m256i {
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    fn ixor(&mut self, a: __m256i, b: __m256i) -> __m256i {
        unsafe { _mm256_xor_si256(a, b) }
    }
    #[inline(always)]
    fn shl(&mut self, a: __m256i, n: u32) -> __m256i {
        // `wrapping_shl`: the count modulo 32.
        unsafe { _mm256_sllv_epi32(a, _mm256_set1_epi32((n & 31) as i32)) }
    }
    #[inline(always)]
    fn sar(&mut self, a: __m256i, n: u32) -> __m256i {
        unsafe { _mm256_srav_epi32(a, _mm256_set1_epi32((n & 31) as i32)) }
    }
    #[inline(always)]
    fn bits(&mut self, a: __m256) -> __m256i {
        unsafe { _mm256_castps_si256(a) }
    }
    #[inline(always)]
    fn from_bits(&mut self, a: __m256i) -> __m256 {
        unsafe { _mm256_castsi256_ps(a) }
    }
    #[inline(always)]
    fn unless_rare(
        &mut self,
        usual: __m256,
        common: __m256,
        rare: impl FnOnce(&mut Self) -> __m256,
    ) -> __m256 {
        if unsafe { _mm256_movemask_ps(usual) } == 0xff {
            return common;
        }
        let r = rare(self);
        self.select(usual, common, r)
    }
    #[inline(always)]
    fn exact(&mut self, f: Function, x: __m256, when: __m256, fast: __m256) -> __m256 {
        let lanes = unsafe { _mm256_movemask_ps(when) };
        if lanes == 0 {
            return fast;
        }
        // The rare lanes the fast path does not cover, one at a time.
        let (mut xs, mut ys) = ([0f32; 8], [0f32; 8]);
        unsafe {
            _mm256_storeu_ps(xs.as_mut_ptr(), x);
            _mm256_storeu_ps(ys.as_mut_ptr(), fast);
        }
        for (lane, (y, x)) in ys.iter_mut().zip(xs).enumerate() {
            if lanes & (1 << lane) != 0 {
                *y = kiln_math::exact(f, x);
            }
        }
        unsafe { _mm256_loadu_ps(ys.as_ptr()) }
    }
}

/// Each value replaced by `f` of it, 8 lanes at a time (the last few
/// values by the scalar builder: the same bits).
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe fn evaluate_all(f: Function, values: &mut [f32]) {
    // SAFETY: the caller vouches for the CPU; compiled for it.
    crate::lanes::evaluate_all(unsafe { Avx2::new() }, f, values)
}

/// [`crate::SixteenLanes`] on AVX2: `f` of `n` floats in place, 8 at a
/// time, the scalar algorithm's bits. An index past [`Function::ALL`]
/// leaves them as they are.
///
/// # Safety
/// The CPU has AVX2 and FMA, and `values` points to `n` floats (a
/// multiple of 16), 16-byte aligned, that nothing else reads or writes
/// during the call.
#[target_feature(enable = "avx2,fma")]
pub(crate) unsafe extern "C" fn sixteen(f: u32, values: *mut f32, n: u64) {
    debug_assert!(n.is_multiple_of(16), "whole groups of 16 lanes");
    let Some(&f) = Function::ALL.get(f as usize) else {
        return;
    };
    // Independent groups, so that the processor overlaps them (as
    // AVX-512's `sixteen`).
    for group in 0..(n / 8) as usize {
        // SAFETY: the caller vouches for the CPU and the floats.
        unsafe {
            // The lanes come and go as two 128-bit halves, as the
            // caller's 4-lane code stores and loads them (a 256-bit load
            // of two separate stores would wait for them to reach the
            // cache instead of being forwarded; volatile, so that the
            // compiler does not merge the halves back).
            let at = values.add(8 * group);
            let lo = std::ptr::read_volatile(at.cast::<__m128>());
            let hi = std::ptr::read_volatile(at.add(4).cast::<__m128>());
            let y = f.build(&mut Avx2::new(), _mm256_set_m128(hi, lo));
            _mm_storeu_ps(at, _mm256_castps256_ps128(y));
            _mm_storeu_ps(at.add(4), _mm256_extractf128_ps::<1>(y));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_math::Function2;

    #[target_feature(enable = "avx2,fma")]
    unsafe fn apply(f: Function, xs: &[f32; 16]) -> [f32; 16] {
        let mut out = [0f32; 16];
        for half in 0..2 {
            unsafe {
                let y = f.build(&mut Avx2::new(), _mm256_loadu_ps(xs[8 * half..].as_ptr()));
                _mm256_storeu_ps(out[8 * half..].as_mut_ptr(), y);
            }
        }
        out
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn apply2(f: Function2, a: &[f32; 16], c: &[f32; 16]) -> [f32; 16] {
        let mut out = [0f32; 16];
        for half in 0..2 {
            unsafe {
                let y = f.build(
                    &mut Avx2::new(),
                    _mm256_loadu_ps(a[8 * half..].as_ptr()),
                    _mm256_loadu_ps(c[8 * half..].as_ptr()),
                );
                _mm256_storeu_ps(out[8 * half..].as_mut_ptr(), y);
            }
        }
        out
    }

    /// The call JIT code makes, on AVX2 (`sixteen_lanes` gives it only
    /// where the CPU lacks AVX-512, so it is called here directly).
    #[test]
    fn sixteen_lanes_in_place() {
        if Avx2::available() {
            // SAFETY: the CPU has AVX2 and FMA.
            unsafe { crate::avx512::tests::call_in_place(sixteen) };
        }
    }

    /// Every function of kiln-math gives the scalar builder's bits on
    /// CPUs with AVX2 and FMA (the inputs of AVX-512's test).
    #[test]
    fn lanes_agree_with_the_scalar_algorithm() {
        if !Avx2::available() {
            return;
        }
        // SAFETY (both): the CPU has AVX2 and FMA.
        crate::avx512::tests::agree_with_the_scalar_algorithm(
            |f, xs| unsafe { apply(f, xs) },
            |f, a, c| unsafe { apply2(f, a, c) },
            "8 lanes",
        );
    }
}
