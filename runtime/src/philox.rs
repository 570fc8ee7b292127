//! Philox4x32-10, the counter-based generator of Kiln's random ops, and
//! the transforms from its words to each distribution.
//!
//! Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC 2011):
//! ten rounds of two 32×32→64-bit multiplies over a 128-bit counter under
//! a 64-bit key; the key is bumped by Weyl constants between rounds. It is
//! the generator PyTorch's CUDA backend and JAX use. Kiln's random ops
//! compute element `i` of their result (logical, row-major position) from
//! the four words of `philox(counter = [i low, i high, 0, 0], key = seed)`,
//! so a value depends on the seed and its position only: any backend, any
//! thread split and any memory layout give the same numbers.
//!
//! This file is the definition; the interpreter runs it, and the
//! known-answer vectors of the Random123 distribution check it.

/// The four 32-bit words of Philox4x32-10 at `counter` under `key`.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    const M0: u64 = 0xD251_1F53;
    const M1: u64 = 0xCD9E_8D57;
    const W0: u32 = 0x9E37_79B9;
    const W1: u32 = 0xBB67_AE85;
    let [mut c0, mut c1, mut c2, mut c3] = counter;
    let [mut k0, mut k1] = key;
    for round in 0..10 {
        if round > 0 {
            k0 = k0.wrapping_add(W0);
            k1 = k1.wrapping_add(W1);
        }
        let p0 = M0 * u64::from(c0);
        let p1 = M1 * u64::from(c2);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0);
    }
    [c0, c1, c2, c3]
}

/// The words of element `index` of a random op with `seed`.
pub fn words(seed: i64, index: u64) -> [u32; 4] {
    let seed = seed as u64;
    philox4x32_10(
        [index as u32, (index >> 32) as u32, 0, 0],
        [seed as u32, (seed >> 32) as u32],
    )
}

/// 53 random bits from two words.
fn bits53(hi: u32, lo: u32) -> u64 {
    ((u64::from(hi) << 32) | u64::from(lo)) >> 11
}

/// Uniform in [0, 1) with `digits` random bits (at most 53): a value the
/// dtype with that many significand digits holds exactly, so `rand` in
/// f32 (24 digits) or f16 (11) never rounds up to 1.
pub fn unit(w: [u32; 4], digits: u32) -> f64 {
    let digits = digits.min(53);
    (bits53(w[0], w[1]) >> (53 - digits)) as f64 / (1u64 << digits) as f64
}

/// Uniform in (0, 1): both ends excluded, for the transforms that take a
/// logarithm or a tangent.
pub fn open_unit(w: [u32; 4]) -> f64 {
    (bits53(w[0], w[1]) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal value (Box–Muller over two 53-bit uniforms: the
/// radius from words 0–1, in (0, 1]; the angle from words 2–3).
pub fn standard_normal(w: [u32; 4]) -> f64 {
    let u1 = (bits53(w[0], w[1]) + 1) as f64 / (1u64 << 53) as f64;
    let u2 = bits53(w[2], w[3]) as f64 / (1u64 << 53) as f64;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A 64-bit random integer (words 0 and 1).
pub fn u64_of(w: [u32; 4]) -> u64 {
    (u64::from(w[0]) << 32) | u64::from(w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors for philox4x32-10 (kat_vectors).
    #[test]
    fn known_answers() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn units_stay_in_range() {
        for i in 0..10_000 {
            let w = words(7, i);
            let (u, o) = (unit(w, 24), open_unit(w));
            assert!((0.0..1.0).contains(&u) && o > 0.0 && o < 1.0);
            assert!(standard_normal(w).is_finite());
        }
        assert_eq!(unit([u32::MAX; 4], 11), 2047.0 / 2048.0);
    }
}
