//! f32 vectors of either width the CPU has, for loops written once by
//! hand with vector operations and compiled for each width: [`Lanes`],
//! implemented by [`Avx512`] (16 lanes, masks in `__mmask16`) and
//! [`Avx2`] (8 lanes, masks as `vmaskmovps` lane masks). Winograd's
//! transforms and the depthwise convolution's kernels are written this
//! way: rows of ResNet's small images are 4 to 28 tiles long, which a
//! compiler's vector loops leave mostly to their scalar remainders, and
//! their even/odd splits, register transposes and masked edges are not
//! what a compiler finds. [`uses_avx512`] says which width runs (and
//! `KILN_MAX_ISA=avx2` makes it AVX2 where the CPU has both).
//!
//! A width is a zero-sized token made only by an `unsafe fn new` whose
//! caller vouches for the CPU, so its methods are safe to call (as
//! [`crate::avx512::Avx512`]'s are for kiln-math's functions). Every
//! method is `#[inline(always)]`, and so are the generic functions that
//! use them: they inline, with the intrinsics, into a function compiled
//! for the width (`#[target_feature(enable = "avx512f")]` or
//! `"avx2,fma"`), which is where a caller enters them.
//!
//! One rule keeps that true: **no closure computes vectors** outside
//! tests (no `array::map`, `from_fn` or function taking a loop's body
//! with vector operations in it). A closure is a function of its own,
//! compiled without the width's features, which LLVM may or may not
//! inline into the caller; where it does not, every intrinsic in it
//! becomes a call (the first form of Winograd's AVX2 transforms ran at
//! half speed so). Loops over arrays and `for` over iterators of indices
//! keep the vector code in the inlined body.
//! `objdump -d target/release/kiln | grep 'call.*core_arch'` lists any
//! that slipped.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

pub(crate) use crate::avx512::Avx512;

/// Whether Kiln's CPU code uses AVX-512: the CPU has AVX-512F, and the
/// environment variable `KILN_MAX_ISA` (read once) is not `avx2`. Set it
/// to run as on a CPU without AVX-512 (the AVX2 forms of the panel
/// kernel, Winograd, depthwise convolution and kiln-math's functions, and
/// the compiler-vectorized loops elsewhere) on a machine that has both:
/// the tests run once so, so that both forms are tested wherever CI runs.
pub fn uses_avx512() -> bool {
    static CAPPED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let capped = *CAPPED.get_or_init(|| {
        std::env::var("KILN_MAX_ISA").is_ok_and(|v| v.eq_ignore_ascii_case("avx2"))
    });
    std::arch::is_x86_feature_detected!("avx512f") && !capped
}

/// Whether the CPU has either width: AVX-512F, or AVX2 and FMA (every
/// CPU with AVX-512 has both).
pub(crate) fn available() -> bool {
    uses_avx512() || Avx2::available()
}

/// Each value replaced by kiln-math's `f` of it, a register of `l` at a
/// time (the last few by the scalar builder: the same bits), for both
/// widths, which are kiln-math builders too (`crate::avx512`,
/// `crate::avx2`).
#[inline(always)]
pub(crate) fn evaluate_all<L>(l: L, f: kiln_math::Function, values: &mut [f32])
where
    L: Lanes + kiln_math::Builder<F = <L as Lanes>::V>,
{
    let mut b = l;
    let mut chunks = values.chunks_exact_mut(L::N);
    for chunk in &mut chunks {
        // SAFETY: N floats are read and written.
        unsafe {
            let y = f.build(&mut b, l.load(chunk.as_ptr(), l.first(L::N)));
            l.store(chunk.as_mut_ptr(), l.first(L::N), y);
        }
    }
    for v in chunks.into_remainder() {
        *v = kiln_math::eval(f, *v);
    }
}

/// A width of f32 vectors and the operations hand-vectorized loops use.
/// Masked loads read, and masked stores write, only the masked lanes (a
/// pointer may run past its buffer where no lane is read or written);
/// masked-off lanes load as zero.
pub(crate) trait Lanes: Copy {
    /// Lanes per vector.
    const N: usize;
    /// A vector of `N` f32s.
    type V: Copy;
    /// Which lanes a masked load or store touches.
    type Mask: Copy;
    /// `N` vectors: an `N`×`N` block, for [`Lanes::transpose`].
    type Square: Copy + AsRef<[Self::V]> + AsMut<[Self::V]>;

    /// The first `n` lanes (all of them for `n` ≥ `N`).
    fn first(self, n: usize) -> Self::Mask;
    /// Lanes `lo..hi` (those of them in `0..N`; none where `hi ≤ lo`).
    fn range(self, lo: i64, hi: i64) -> Self::Mask;
    /// Lanes `mask` from `p`, zero elsewhere.
    ///
    /// # Safety
    /// `p + i` is readable for every lane `i` in `mask`.
    unsafe fn load(self, p: *const f32, mask: Self::Mask) -> Self::V;
    /// Lanes `mask` of `v` to `p`.
    ///
    /// # Safety
    /// `p + i` is writable for every lane `i` in `mask`.
    unsafe fn store(self, p: *mut f32, mask: Self::Mask, v: Self::V);
    /// Every lane `x`.
    fn splat(self, x: f32) -> Self::V;
    /// `a + b`, lane by lane.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a − b`, lane by lane.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b`, lane by lane.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b + c`, rounded once, lane by lane.
    fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// ReLU as the kernels compute it: `x < 0 ? 0 : x` (NaN and −0 kept).
    fn relu(self, x: Self::V) -> Self::V;
    /// A block of zeros.
    fn square(self) -> Self::Square;
    /// Transposes the block (row `i` becomes column `i`).
    fn transpose(self, block: &mut Self::Square);
    /// The even lanes of the `2N` lanes `lo` then `hi` (pairs split apart:
    /// their firsts).
    fn evens(self, lo: Self::V, hi: Self::V) -> Self::V;
    /// The odd lanes of the `2N` lanes `lo` then `hi` (their seconds).
    fn odds(self, lo: Self::V, hi: Self::V) -> Self::V;
    /// `a` and `b` interleaved, `a₀ b₀ a₁ b₁ …`: its first `N` lanes, then
    /// its last `N` (pairs put together).
    fn interleave(self, a: Self::V, b: Self::V) -> (Self::V, Self::V);
}

// SAFETY (all methods): the intrinsics need AVX-512F, which whoever made
// the token vouched for (`Avx512::new`).
impl Lanes for Avx512 {
    const N: usize = 16;
    type V = __m512;
    type Mask = __mmask16;
    type Square = [__m512; 16];

    #[inline(always)]
    fn first(self, n: usize) -> __mmask16 {
        crate::avx512::first_lanes(n)
    }
    #[inline(always)]
    fn range(self, lo: i64, hi: i64) -> __mmask16 {
        let below = |n: i64| crate::avx512::first_lanes(n.clamp(0, 16) as usize);
        below(hi) & !below(lo)
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32, mask: __mmask16) -> __m512 {
        // SAFETY: as the caller vouches.
        unsafe { _mm512_maskz_loadu_ps(mask, p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, mask: __mmask16, v: __m512) {
        // SAFETY: as the caller vouches.
        unsafe { _mm512_mask_storeu_ps(p, mask, v) }
    }
    #[inline(always)]
    fn splat(self, x: f32) -> __m512 {
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    fn add(self, a: __m512, b: __m512) -> __m512 {
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: __m512, b: __m512) -> __m512 {
        unsafe { _mm512_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m512, b: __m512) -> __m512 {
        unsafe { _mm512_mul_ps(a, b) }
    }
    #[inline(always)]
    fn fma(self, a: __m512, b: __m512, c: __m512) -> __m512 {
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn relu(self, x: __m512) -> __m512 {
        unsafe {
            let zero = _mm512_setzero_ps();
            _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, zero)
        }
    }
    #[inline(always)]
    fn square(self) -> [__m512; 16] {
        unsafe { [_mm512_setzero_ps(); 16] }
    }
    #[inline(always)]
    fn transpose(self, block: &mut [__m512; 16]) {
        unsafe { crate::avx512::transpose16(block) }
    }
    #[inline(always)]
    fn evens(self, lo: __m512, hi: __m512) -> __m512 {
        unsafe { _mm512_permutex2var_ps(lo, crate::avx512::indices(&crate::avx512::EVENS), hi) }
    }
    #[inline(always)]
    fn odds(self, lo: __m512, hi: __m512) -> __m512 {
        unsafe { _mm512_permutex2var_ps(lo, crate::avx512::indices(&crate::avx512::ODDS), hi) }
    }
    #[inline(always)]
    fn interleave(self, a: __m512, b: __m512) -> (__m512, __m512) {
        /// Indices of `_mm512_permutex2var_ps` that interleave the first
        /// 8 lanes of two registers, and the last 8.
        static FIRST_HALVES: [i32; 16] = [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23];
        static SECOND_HALVES: [i32; 16] =
            [8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31];
        use crate::avx512::indices;
        unsafe {
            (
                _mm512_permutex2var_ps(a, indices(&FIRST_HALVES), b),
                _mm512_permutex2var_ps(a, indices(&SECOND_HALVES), b),
            )
        }
    }
}

/// The 8-lane AVX2 vectors (with FMA, as every AVX2 function here is
/// compiled). Made only by [`Avx2::new`], whose caller vouches for the
/// CPU: its methods are safe to call only there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// Whether the CPU has AVX2 and FMA.
    pub(crate) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }

    /// The token.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA ([`Avx2::available`]), and the token
    /// must be used from code compiled for them
    /// (`#[target_feature(enable = "avx2,fma")]`).
    #[inline(always)]
    pub(crate) unsafe fn new() -> Avx2 {
        Avx2(())
    }
}

/// The first `n` of an 8-lane register's lanes (all 8 from 8 on), as
/// `vmaskmovps` masks: a window of a table of eight −1s then eight 0s.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn first_eight(n: usize) -> __m256i {
    static LANES: [i32; 16] = [-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0];
    // SAFETY: eight of the table's sixteen.
    unsafe { _mm256_loadu_si256(LANES.as_ptr().add(8 - n.min(8)).cast()) }
}

/// Which of an 8-lane register's lanes a load or store touches: those of
/// `mask`, `count` of them; all of them as plain moves, none as no
/// instruction, else by `vmaskmovps`'s mask (several times slower than a plain move
/// on AMD's cores, where Winograd's transforms spent half their time in
/// them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Eight {
    count: usize,
    mask: __m256i,
}

// SAFETY (all methods): the intrinsics need AVX2, which whoever made the
// token vouched for (`Avx2::new`).
impl Lanes for Avx2 {
    const N: usize = 8;
    type V = __m256;
    type Mask = Eight;
    type Square = [__m256; 8];

    #[inline(always)]
    fn first(self, n: usize) -> Eight {
        Eight {
            count: n.min(8),
            mask: unsafe { first_eight(n) },
        }
    }
    #[inline(always)]
    fn range(self, lo: i64, hi: i64) -> Eight {
        let (lo, hi) = (lo.clamp(0, 8) as usize, hi.clamp(0, 8) as usize);
        Eight {
            count: hi.saturating_sub(lo),
            mask: unsafe { _mm256_andnot_si256(first_eight(lo), first_eight(hi)) },
        }
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32, lanes: Eight) -> __m256 {
        // SAFETY: as the caller vouches (vmaskmovps reads no lane outside
        // the mask and raises no fault for them).
        unsafe {
            match lanes.count {
                8 => _mm256_loadu_ps(p),
                0 => _mm256_setzero_ps(),
                _ => _mm256_maskload_ps(p, lanes.mask),
            }
        }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, lanes: Eight, v: __m256) {
        // SAFETY: as the caller vouches.
        unsafe {
            match lanes.count {
                8 => _mm256_storeu_ps(p, v),
                0 => {}
                _ => _mm256_maskstore_ps(p, lanes.mask, v),
            }
        }
    }
    #[inline(always)]
    fn splat(self, x: f32) -> __m256 {
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    fn add(self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_mul_ps(a, b) }
    }
    #[inline(always)]
    fn fma(self, a: __m256, b: __m256, c: __m256) -> __m256 {
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn relu(self, x: __m256) -> __m256 {
        unsafe {
            let zero = _mm256_setzero_ps();
            _mm256_blendv_ps(x, zero, _mm256_cmp_ps::<_CMP_LT_OQ>(x, zero))
        }
    }
    #[inline(always)]
    fn square(self) -> [__m256; 8] {
        unsafe { [_mm256_setzero_ps(); 8] }
    }
    /// Interleaves of 32-bit elements, then shuffles of 64-bit pairs,
    /// within 128-bit lanes; then the lanes exchanged.
    #[inline(always)]
    fn transpose(self, r: &mut [__m256; 8]) {
        unsafe {
            // t[2i], t[2i + 1]: rows 2i and 2i + 1 interleaved (elements
            // 0, 1, 4, 5 and 2, 3, 6, 7). (Loops, not `from_fn`: see the
            // module's doc.)
            let mut t = [_mm256_setzero_ps(); 8];
            for i in 0..4 {
                t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
                t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
            }
            // s[e] (rows 0–3) and s[4 + e] (rows 4–7): columns e and e + 4
            // of four rows.
            let mut s = [_mm256_setzero_ps(); 8];
            for half in 0..2 {
                let (lo, hi) = (4 * half, 4 * half + 2);
                s[lo] = _mm256_shuffle_ps::<0x44>(t[lo], t[hi]);
                s[lo + 1] = _mm256_shuffle_ps::<0xEE>(t[lo], t[hi]);
                s[lo + 2] = _mm256_shuffle_ps::<0x44>(t[lo + 1], t[hi + 1]);
                s[lo + 3] = _mm256_shuffle_ps::<0xEE>(t[lo + 1], t[hi + 1]);
            }
            for e in 0..4 {
                r[e] = _mm256_permute2f128_ps::<0x20>(s[e], s[4 + e]);
                r[4 + e] = _mm256_permute2f128_ps::<0x31>(s[e], s[4 + e]);
            }
        }
    }
    #[inline(always)]
    fn evens(self, lo: __m256, hi: __m256) -> __m256 {
        unsafe {
            // lo₀ lo₂ hi₀ hi₂ | lo₄ lo₆ hi₄ hi₆, then the pairs reordered.
            let v = _mm256_shuffle_ps::<0b10_00_10_00>(lo, hi);
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)))
        }
    }
    #[inline(always)]
    fn odds(self, lo: __m256, hi: __m256) -> __m256 {
        unsafe {
            let v = _mm256_shuffle_ps::<0b11_01_11_01>(lo, hi);
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)))
        }
    }
    #[inline(always)]
    fn interleave(self, a: __m256, b: __m256) -> (__m256, __m256) {
        unsafe {
            // a₀ b₀ a₁ b₁ | a₄ b₄ a₅ b₅ and a₂ b₂ a₃ b₃ | a₆ b₆ a₇ b₇.
            let (lo, hi) = (_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
            (
                _mm256_permute2f128_ps::<0x20>(lo, hi),
                _mm256_permute2f128_ps::<0x31>(lo, hi),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation of width `l` against its definition on arrays,
    /// with `N`-lane vectors stored to and loaded from memory.
    ///
    /// # Safety
    /// `l` was made for this CPU; called from code compiled for it.
    #[inline(always)]
    unsafe fn check<L: Lanes>(l: L) {
        let n = L::N;
        let values: Vec<f32> = (0..4 * n).map(|i| i as f32 - 1.5 * n as f32).collect();
        let load = |at: usize| unsafe { l.load(values[at..].as_ptr(), l.first(n)) };
        let spill = |v: L::V| {
            let mut out = vec![f32::NAN; 16];
            unsafe { l.store(out.as_mut_ptr(), l.first(n), v) };
            out.truncate(n);
            out
        };
        let (a, b) = (load(0), load(n));
        for k in 0..=n + 1 {
            // Masked loads and stores touch only the first k lanes.
            let mut out = vec![-7f32; n];
            unsafe { l.store(out.as_mut_ptr(), l.first(k), load(0)) };
            let want: Vec<f32> = (0..n)
                .map(|i| if i < k { values[i] } else { -7.0 })
                .collect();
            assert_eq!(out, want, "store of {k} lanes");
            let got = spill(unsafe { l.load(values.as_ptr(), l.first(k)) });
            let want: Vec<f32> = (0..n)
                .map(|i| if i < k { values[i] } else { 0.0 })
                .collect();
            assert_eq!(got, want, "load of {k} lanes");
        }
        let lanes = |f: &dyn Fn(usize) -> f32| (0..n).map(f).collect::<Vec<f32>>();
        assert_eq!(spill(l.add(a, b)), lanes(&|i| values[i] + values[n + i]));
        assert_eq!(spill(l.sub(a, b)), lanes(&|i| values[i] - values[n + i]));
        assert_eq!(spill(l.mul(a, b)), lanes(&|i| values[i] * values[n + i]));
        assert_eq!(
            spill(l.fma(a, b, a)),
            lanes(&|i| values[i].mul_add(values[n + i], values[i]))
        );
        // Rounded once: (1 + 2⁻¹²)² − 1 is 2⁻¹¹ + 2⁻²⁴ fused, 2⁻¹¹ if the
        // product were rounded first.
        let near_one = l.splat(1.0 + 2f32.powi(-12));
        let fused = spill(l.fma(near_one, near_one, l.splat(-1.0)));
        assert_eq!(fused, lanes(&|_| 2f32.powi(-11) + 2f32.powi(-24)));
        for (lo, hi) in [
            (-3, 2),
            (1, 4),
            (2, 2),
            (5, 3),
            (-1, 40),
            (3, 40),
            (-9, -1),
            (n as i64 + 1, n as i64 + 4),
        ] {
            let mut out = vec![-7f32; n];
            unsafe { l.store(out.as_mut_ptr(), l.range(lo, hi), load(0)) };
            let inside = |i: usize| lo <= i as i64 && (i as i64) < hi;
            let want: Vec<f32> = (0..n)
                .map(|i| if inside(i) { values[i] } else { -7.0 })
                .collect();
            assert_eq!(out, want, "store of lanes {lo}..{hi}");
            let got = spill(unsafe { l.load(values.as_ptr(), l.range(lo, hi)) });
            let want: Vec<f32> = (0..n)
                .map(|i| if inside(i) { values[i] } else { 0.0 })
                .collect();
            assert_eq!(got, want, "load of lanes {lo}..{hi}");
        }
        assert_eq!(spill(l.splat(2.5)), lanes(&|_| 2.5));
        let relu = spill(l.relu(a));
        assert_eq!(relu, lanes(&|i| values[i].max(0.0)));
        let special = [f32::NAN, -0.0, -1.0, 3.0];
        let mut row = [0f32; 16];
        row[..4].copy_from_slice(&special);
        let r = spill(l.relu(unsafe { l.load(row.as_ptr(), l.first(4)) }));
        assert!(r[0].is_nan() && r[1].to_bits() == (-0f32).to_bits() && r[2] == 0.0 && r[3] == 3.0);
        assert_eq!(spill(l.evens(a, b)), lanes(&|i| values[2 * i]));
        assert_eq!(spill(l.odds(a, b)), lanes(&|i| values[2 * i + 1]));
        let (first, second) = l.interleave(a, b);
        let paired = |i: usize| {
            if i.is_multiple_of(2) {
                values[i / 2]
            } else {
                values[n + i / 2]
            }
        };
        assert_eq!(spill(first), lanes(&|i| paired(i)));
        assert_eq!(spill(second), lanes(&|i| paired(n + i)));
        let mut block = l.square();
        for (i, v) in block.as_mut().iter_mut().enumerate() {
            let row: Vec<f32> = (0..n).map(|j| (i * n + j) as f32).collect();
            *v = unsafe { l.load(row.as_ptr(), l.first(n)) };
        }
        l.transpose(&mut block);
        for (i, v) in block.as_ref().iter().enumerate() {
            assert_eq!(spill(*v), lanes(&|j| (j * n + i) as f32), "row {i}");
        }
    }

    #[test]
    fn every_width_computes_its_definitions() {
        if std::arch::is_x86_feature_detected!("avx512f") {
            #[target_feature(enable = "avx512f")]
            unsafe fn wide() {
                unsafe { check(Avx512::new()) }
            }
            unsafe { wide() };
        }
        if Avx2::available() {
            #[target_feature(enable = "avx2,fma")]
            unsafe fn narrow() {
                unsafe { check(Avx2::new()) }
            }
            unsafe { narrow() };
        }
    }
}
