//! kiln-math's f32 functions on 16 lanes of AVX-512: a [`Builder`] whose
//! every operation is one AVX-512 instruction (or a few, where an
//! operation's edge cases need them), so that a native step's `exp` is
//! the interpreter's algorithm, bit for bit, 16 elements at a time.
//! (Written as plain loops, LLVM compiles the algorithm to 8-lane vectors
//! with spills, even for AVX-512 targets.)
//!
//! Everything here runs only inside functions compiled for AVX-512F
//! (`#[target_feature(enable = "avx512f")]`), on CPUs that have it; the
//! builder's methods are `#[inline(always)]` so that they, and the
//! intrinsics in them, inline into such a function.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

use kiln_math::{Builder, Function};

/// The [`Builder`] of 16-lane AVX-512 vectors: f32 in `__m512`, i32 in
/// `__m512i`, masks in `__mmask16`. Made only by [`Avx512::new`], whose
/// caller vouches for the CPU: its methods are safe to call only there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

/// The first `n` of a register's 16 lanes (all of them for `n` ≥ 16): the
/// mask of a partial vector at the end of a row.
#[inline(always)]
pub(crate) fn first_lanes(n: usize) -> __mmask16 {
    if n >= 16 {
        0xffff
    } else {
        ((1u32 << n) - 1) as __mmask16
    }
}

/// Transposes the 16×16 matrix whose rows are `r`: interleaves of 32-bit
/// then 64-bit elements within 128-bit lanes, then two shuffles of the
/// lanes (row `i` of the result is column `i` of the input).
#[target_feature(enable = "avx512f")]
pub(crate) fn transpose16(r: &mut [__m512; 16]) {
    let mut t = [_mm512_setzero_ps(); 16];
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    let lo = |a: __m512, b: __m512| {
        _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)))
    };
    let hi = |a: __m512, b: __m512| {
        _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)))
    };
    // r[4i + e], lane L: rows 4i..4i + 4 at column 4L + e.
    for i in 0..4 {
        r[4 * i] = lo(t[4 * i], t[4 * i + 2]);
        r[4 * i + 1] = hi(t[4 * i], t[4 * i + 2]);
        r[4 * i + 2] = lo(t[4 * i + 1], t[4 * i + 3]);
        r[4 * i + 3] = hi(t[4 * i + 1], t[4 * i + 3]);
    }
    for e in 0..4 {
        let a = _mm512_shuffle_f32x4::<0x88>(r[e], r[4 + e]);
        let a2 = _mm512_shuffle_f32x4::<0xDD>(r[e], r[4 + e]);
        let b = _mm512_shuffle_f32x4::<0x88>(r[8 + e], r[12 + e]);
        let b2 = _mm512_shuffle_f32x4::<0xDD>(r[8 + e], r[12 + e]);
        t[e] = _mm512_shuffle_f32x4::<0x88>(a, b);
        t[8 + e] = _mm512_shuffle_f32x4::<0xDD>(a, b);
        t[4 + e] = _mm512_shuffle_f32x4::<0x88>(a2, b2);
        t[12 + e] = _mm512_shuffle_f32x4::<0xDD>(a2, b2);
    }
    *r = t;
}

/// Indices of `_mm512_permutex2var_ps` that pick the even lanes of two
/// registers' 32, and the odd ones (16 pairs split apart).
pub(crate) static EVENS: [i32; 16] = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30];
pub(crate) static ODDS: [i32; 16] = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31];

/// A table of 16 lane indices in a register.
#[target_feature(enable = "avx512f")]
#[inline]
pub(crate) fn indices(table: &[i32; 16]) -> __m512i {
    // SAFETY: the table's 16 elements.
    unsafe { _mm512_loadu_si512(table.as_ptr().cast()) }
}

/// `dst[i] = src[2i]`, 16 at a time: two masked loads and a permutation
/// (a stride-2 convolution's input rows, which were read element by
/// element).
///
/// # Safety
/// `src` addresses `2·dst.len() − 1` floats (none of them in `dst`).
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn every_other(src: *const f32, dst: &mut [f32]) {
    let evens = indices(&EVENS);
    for (g, out) in dst.chunks_mut(16).enumerate() {
        let n = out.len();
        // Inputs 32g .. 32g + 2n − 1.
        let reads = 2 * n - 1;
        // SAFETY: within the 2·len − 1 inputs; the group's outputs.
        unsafe {
            let at = src.add(32 * g);
            let lo = _mm512_maskz_loadu_ps(first_lanes(reads), at);
            // (Past the inputs where no lane is read.)
            let hi =
                _mm512_maskz_loadu_ps(first_lanes(reads.saturating_sub(16)), at.wrapping_add(16));
            let v = _mm512_permutex2var_ps(lo, evens, hi);
            _mm512_mask_storeu_ps(out.as_mut_ptr(), first_lanes(n), v);
        }
    }
}

impl Avx512 {
    /// The builder.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, and the builder must be used from code
    /// compiled for it (`#[target_feature(enable = "avx512f")]`).
    #[inline(always)]
    pub(crate) unsafe fn new() -> Avx512 {
        Avx512(())
    }
}

// SAFETY (all methods): the intrinsics need AVX-512F, which whoever made
// the builder vouched for (`Avx512::new`).
impl Builder for Avx512 {
    type F = __m512;
    type I = __m512i;
    type M = __mmask16;

    #[inline(always)]
    fn f32(&mut self, v: f32) -> __m512 {
        unsafe { _mm512_set1_ps(v) }
    }
    #[inline(always)]
    fn i32(&mut self, v: i32) -> __m512i {
        unsafe { _mm512_set1_epi32(v) }
    }
    #[inline(always)]
    fn add(&mut self, a: __m512, b: __m512) -> __m512 {
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub(&mut self, a: __m512, b: __m512) -> __m512 {
        unsafe { _mm512_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(&mut self, a: __m512, b: __m512) -> __m512 {
        unsafe { _mm512_mul_ps(a, b) }
    }
    #[inline(always)]
    fn div(&mut self, a: __m512, b: __m512) -> __m512 {
        unsafe { _mm512_div_ps(a, b) }
    }
    #[inline(always)]
    fn sqrt(&mut self, a: __m512) -> __m512 {
        unsafe { _mm512_sqrt_ps(a) }
    }
    #[inline(always)]
    fn fma(&mut self, a: __m512, b: __m512, c: __m512) -> __m512 {
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn neg(&mut self, a: __m512) -> __m512 {
        // Flips the sign bit, as f32's negation (NaNs included).
        unsafe {
            _mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(a),
                _mm512_set1_epi32(i32::MIN),
            ))
        }
    }
    #[inline(always)]
    fn abs(&mut self, a: __m512) -> __m512 {
        unsafe {
            _mm512_castsi512_ps(_mm512_and_si512(
                _mm512_castps_si512(a),
                _mm512_set1_epi32(i32::MAX),
            ))
        }
    }
    #[inline(always)]
    fn round(&mut self, a: __m512) -> __m512 {
        // Ties to even, as `round_ties_even`.
        unsafe { _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(a) }
    }
    #[inline(always)]
    fn lt(&mut self, a: __m512, b: __m512) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b) }
    }
    #[inline(always)]
    fn gt(&mut self, a: __m512, b: __m512) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b) }
    }
    #[inline(always)]
    fn is_nan(&mut self, a: __m512) -> __mmask16 {
        unsafe { _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a) }
    }
    #[inline(always)]
    fn select(&mut self, m: __mmask16, a: __m512, b: __m512) -> __m512 {
        // The blend takes its second operand where the mask is set.
        unsafe { _mm512_mask_blend_ps(m, b, a) }
    }
    #[inline(always)]
    fn nonzero(&mut self, a: __m512i) -> __mmask16 {
        unsafe { _mm512_test_epi32_mask(a, a) }
    }
    #[inline(always)]
    fn to_i32(&mut self, a: __m512) -> __m512i {
        // `a as i32`: truncation, saturating, NaN to 0 (the instruction
        // gives i32::MIN for all three cases it cannot represent).
        unsafe {
            let t = _mm512_cvttps_epi32(a);
            let high = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, _mm512_set1_ps(2_147_483_648.0));
            let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a);
            let t = _mm512_mask_mov_epi32(t, high, _mm512_set1_epi32(i32::MAX));
            _mm512_mask_mov_epi32(t, nan, _mm512_setzero_si512())
        }
    }
    #[inline(always)]
    fn to_f32(&mut self, a: __m512i) -> __m512 {
        unsafe { _mm512_cvtepi32_ps(a) }
    }
    #[inline(always)]
    fn iadd(&mut self, a: __m512i, b: __m512i) -> __m512i {
        unsafe { _mm512_add_epi32(a, b) }
    }
    #[inline(always)]
    fn isub(&mut self, a: __m512i, b: __m512i) -> __m512i {
        unsafe { _mm512_sub_epi32(a, b) }
    }
    #[inline(always)]
    fn iand(&mut self, a: __m512i, b: __m512i) -> __m512i {
        unsafe { _mm512_and_si512(a, b) }
    }
    #[inline(always)]
    fn ior(&mut self, a: __m512i, b: __m512i) -> __m512i {
        unsafe { _mm512_or_si512(a, b) }
    }
    #[inline(always)]
    fn ixor(&mut self, a: __m512i, b: __m512i) -> __m512i {
        unsafe { _mm512_xor_si512(a, b) }
    }
    #[inline(always)]
    fn shl(&mut self, a: __m512i, n: u32) -> __m512i {
        // `wrapping_shl`: the count modulo 32.
        unsafe { _mm512_sllv_epi32(a, _mm512_set1_epi32((n & 31) as i32)) }
    }
    #[inline(always)]
    fn sar(&mut self, a: __m512i, n: u32) -> __m512i {
        unsafe { _mm512_srav_epi32(a, _mm512_set1_epi32((n & 31) as i32)) }
    }
    #[inline(always)]
    fn bits(&mut self, a: __m512) -> __m512i {
        unsafe { _mm512_castps_si512(a) }
    }
    #[inline(always)]
    fn from_bits(&mut self, a: __m512i) -> __m512 {
        unsafe { _mm512_castsi512_ps(a) }
    }
    #[inline(always)]
    fn unless_rare(
        &mut self,
        usual: __mmask16,
        common: __m512,
        rare: impl FnOnce(&mut Self) -> __m512,
    ) -> __m512 {
        if usual == u16::MAX {
            return common;
        }
        let r = rare(self);
        self.select(usual, common, r)
    }
    #[inline(always)]
    fn scale_by_pow2(&mut self, p: __m512, n: __m512) -> __m512 {
        // p·2^floor(n), rounded once: the halves' value (n is integral).
        unsafe { _mm512_scalef_ps(p, n) }
    }
    #[inline(always)]
    fn exact(&mut self, f: Function, x: __m512, when: __mmask16, fast: __m512) -> __m512 {
        if when == 0 {
            return fast;
        }
        // The rare lanes the fast path does not cover, one at a time.
        let (mut xs, mut ys) = ([0f32; 16], [0f32; 16]);
        unsafe {
            _mm512_storeu_ps(xs.as_mut_ptr(), x);
            _mm512_storeu_ps(ys.as_mut_ptr(), fast);
        }
        for (lane, (y, x)) in ys.iter_mut().zip(xs).enumerate() {
            if when & (1 << lane) != 0 {
                *y = kiln_math::exact(f, x);
            }
        }
        unsafe { _mm512_loadu_ps(ys.as_ptr()) }
    }
}

/// Each value replaced by `f` of it, 16 lanes at a time (the last few
/// values by the scalar builder: the same bits).
///
/// # Safety
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn evaluate_all(f: Function, values: &mut [f32]) {
    // SAFETY: the caller vouches for the CPU; compiled for it.
    crate::lanes::evaluate_all(unsafe { Avx512::new() }, f, values)
}

/// A function JIT code calls for lanes of one of kiln-math's functions:
/// `f` (by its index in [`Function::ALL`]) of the `n` floats at `values`
/// (16-byte aligned; `n` a multiple of 16), in place: 16 at a time with
/// AVX-512, 8 at a time with AVX2 ([`crate::avx2`]). (Cranelift's x64
/// vectors are 4 lanes; a kernel with several copies of its body hands
/// the function all their lanes in one call: see kiln-cranelift's
/// `vector_loop`.)
pub type SixteenLanes = unsafe extern "C" fn(f: u32, values: *mut f32, n: u64);

/// [`SixteenLanes`] where the CPU has AVX-512F, or AVX2 and FMA.
pub fn sixteen_lanes() -> Option<SixteenLanes> {
    if crate::lanes::uses_avx512() {
        return Some(sixteen as SixteenLanes);
    }
    crate::lanes::Avx2::available().then_some(crate::avx2::sixteen as SixteenLanes)
}

/// `f` of `n` floats in place, 16 at a time, the scalar algorithm's bits
/// (the tests below). An index past [`Function::ALL`] leaves them as they
/// are.
///
/// # Safety
/// The CPU has AVX-512F, and `values` points to `n` floats (a multiple of
/// 16), 16-byte aligned, that nothing else reads or writes during the call.
#[target_feature(enable = "avx512f")]
unsafe extern "C" fn sixteen(f: u32, values: *mut f32, n: u64) {
    debug_assert!(n.is_multiple_of(16), "whole groups of 16 lanes");
    let Some(&f) = Function::ALL.get(f as usize) else {
        return;
    };
    // Each group of 16 is independent of the others, so the processor
    // overlaps their computations: several groups per call give a chain
    // of functions (each call waiting on the one before) the parallelism
    // one group's dependent operations lack.
    for group in 0..(n / 16) as usize {
        // SAFETY: the caller vouches for the CPU and the floats.
        unsafe { sixteen_in_place(f, values.add(16 * group)) };
    }
}

/// `f` of the 16 floats at `values` (16-byte aligned), in place.
///
/// # Safety
/// As [`sixteen`]'s, for 16 floats.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn sixteen_in_place(f: Function, values: *mut f32) {
    // The lanes come and go as four 128-bit quarters, as the caller's
    // 4-lane code stores and loads them: a 512-bit load of four separate
    // stores (or quarters of a 512-bit store) would wait for them to
    // reach the cache instead of being forwarded. (Volatile, so that the
    // compiler does not merge them back into one 512-bit load.)
    // SAFETY: the caller vouches for the CPU and the 16 floats.
    unsafe {
        let q = |i: usize| std::ptr::read_volatile(values.add(4 * i).cast::<__m128>());
        let x = _mm512_castps128_ps512(q(0));
        let x = _mm512_insertf32x4::<1>(x, q(1));
        let x = _mm512_insertf32x4::<2>(x, q(2));
        let x = _mm512_insertf32x4::<3>(x, q(3));
        let y = f.build(&mut Avx512::new(), x);
        _mm_storeu_ps(values, _mm512_castps512_ps128(y));
        _mm_storeu_ps(values.add(4), _mm512_extractf32x4_ps::<1>(y));
        _mm_storeu_ps(values.add(8), _mm512_extractf32x4_ps::<2>(y));
        _mm_storeu_ps(values.add(12), _mm512_extractf32x4_ps::<3>(y));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use kiln_math::Function2;

    #[target_feature(enable = "avx512f")]
    unsafe fn apply(f: Function, xs: &[f32; 16]) -> [f32; 16] {
        let mut out = [0f32; 16];
        unsafe {
            let y = f.build(&mut Avx512::new(), _mm512_loadu_ps(xs.as_ptr()));
            _mm512_storeu_ps(out.as_mut_ptr(), y);
        }
        out
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn apply2(f: Function2, a: &[f32; 16], c: &[f32; 16]) -> [f32; 16] {
        let mut out = [0f32; 16];
        unsafe {
            let y = f.build(
                &mut Avx512::new(),
                _mm512_loadu_ps(a.as_ptr()),
                _mm512_loadu_ps(c.as_ptr()),
            );
            _mm512_storeu_ps(out.as_mut_ptr(), y);
        }
        out
    }

    /// The call JIT code makes gives the scalar algorithm's bits, and
    /// leaves the values alone for an index past the functions.
    #[test]
    fn sixteen_lanes_in_place() {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            unsafe { call_in_place(sixteen) };
        }
    }

    /// [`SixteenLanes`] `call` against the scalar algorithm, on 32 lanes
    /// (two groups of 16, as JIT code calls it).
    ///
    /// # Safety
    /// The CPU has what `call` needs.
    pub(crate) unsafe fn call_in_place(call: SixteenLanes) {
        #[repr(align(16))]
        #[derive(Clone, Copy)]
        struct Lanes([f32; 32]);
        let xs = Lanes(std::array::from_fn(|i| i as f32 * 0.19 - 2.9));
        for (index, f) in Function::ALL.into_iter().enumerate() {
            let mut ys = xs;
            // SAFETY: as the caller vouches; 32 aligned floats.
            unsafe { call(index as u32, ys.0.as_mut_ptr(), 32) };
            for (x, y) in xs.0.iter().zip(ys.0) {
                let want = kiln_math::eval(f, *x);
                assert!(y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()));
            }
        }
        let mut ys = xs;
        // SAFETY: as above.
        unsafe { call(Function::ALL.len() as u32, ys.0.as_mut_ptr(), 32) };
        assert_eq!(ys.0, xs.0);
    }

    /// Every function of kiln-math gives the scalar builder's bits (on
    /// CPUs with AVX-512F; elsewhere there is nothing to run).
    #[test]
    fn lanes_agree_with_the_scalar_algorithm() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return;
        }
        // SAFETY (both): the CPU has AVX-512F.
        agree_with_the_scalar_algorithm(
            |f, xs| unsafe { apply(f, xs) },
            |f, a, c| unsafe { apply2(f, a, c) },
            "16 lanes",
        );
    }

    /// Every function of kiln-math by `apply` (and the two-argument ones
    /// by `apply2`), 16 values at a time, against the scalar builder, bit
    /// for bit: inputs over every exponent, both signs, zeros,
    /// infinities, NaN.
    pub(crate) fn agree_with_the_scalar_algorithm(
        apply: impl Fn(Function, &[f32; 16]) -> [f32; 16],
        apply2: impl Fn(Function2, &[f32; 16], &[f32; 16]) -> [f32; 16],
        lanes: &str,
    ) {
        let mut inputs: Vec<f32> = vec![
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-40,
            -1e-40,
        ];
        // Whole groups of small values, so that every lane takes the
        // usual branch where a function has one (erf's |x| < 1: the
        // builders may skip the rare branch then).
        inputs.extend((0..64).map(|i| (i as f32 - 31.5) / 32.0));
        while inputs.len() % 16 != 0 {
            inputs.push(0.5);
        }
        let mut state = 0x1234_5678u32;
        while inputs.len() < 16 * 4096 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            inputs.push(f32::from_bits(state));
            // And values where the functions live (|x| < 100).
            inputs.push((state as f32 / u32::MAX as f32 - 0.5) * 200.0);
        }
        for f in Function2::ALL {
            for (a, c) in inputs.chunks_exact(16).zip(inputs.chunks_exact(16).rev()) {
                let (a, c): ([f32; 16], [f32; 16]) = (a.try_into().unwrap(), c.try_into().unwrap());
                let got = apply2(f, &a, &c);
                for ((x, y), z) in a.iter().zip(&c).zip(got) {
                    let want = kiln_math::eval2(f, *x, *y);
                    assert!(
                        z.to_bits() == want.to_bits() || (z.is_nan() && want.is_nan()),
                        "{f:?}({x:e}, {y:e}) = {z:e} on {lanes}, {want:e} by the scalar builder"
                    );
                }
            }
        }
        for f in Function::ALL {
            for chunk in inputs.chunks_exact(16) {
                let xs: [f32; 16] = chunk.try_into().unwrap();
                let got = apply(f, &xs);
                for (x, y) in xs.iter().zip(got) {
                    let want = kiln_math::eval(f, *x);
                    assert!(
                        y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()),
                        "{f:?}({x:e}) = {y:e} on {lanes}, {want:e} by the scalar builder"
                    );
                }
            }
        }
    }
}
