//! Loops compiled for the widest vectors the CPU has, chosen at run time:
//! the build targets baseline x86-64 (SSE2), so a loop written plainly
//! vectorizes to 128 bits unless compiled again with AVX2 or AVX-512
//! enabled. `f32::mul_add` is one instruction only where FMA is enabled
//! (elsewhere a library call), so the AVX2 variant enables FMA too.

/// Defines `unsafe fn $name`, which runs `$plain` (an `#[inline(always)]`
/// function of the same arguments) compiled again for AVX-512 or AVX2 (with FMA) when
/// the CPU has them, chosen at run time: the build targets baseline x86-64,
/// and these loops vectorize to the widest registers they are compiled for.
macro_rules! widest_vectors {
    // With or without a type parameter `T` (and its bounds in brackets).
    // With or without a result type.
    ($(#[$meta:meta])* unsafe fn $name:ident $(<T: [$($bound:tt)*]>)? ($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $plain:ident) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments, unused_unsafe)]
        unsafe fn $name $(<T: $($bound)*>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,fma")]
                #[allow(clippy::too_many_arguments, unused_unsafe)]
                unsafe fn avx512 $(<T: $($bound)*>)? ($($arg: $ty),*) $(-> $ret)? {
                    // SAFETY: forwarded.
                    unsafe { $plain($($arg),*) }
                }
                #[target_feature(enable = "avx2,fma")]
                #[allow(clippy::too_many_arguments, unused_unsafe)]
                unsafe fn avx2 $(<T: $($bound)*>)? ($($arg: $ty),*) $(-> $ret)? {
                    // SAFETY: forwarded.
                    unsafe { $plain($($arg),*) }
                }
                if crate::lanes::uses_avx512() {
                    // SAFETY: the CPU has AVX-512F; the rest is forwarded.
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: the CPU has AVX2 and FMA; the rest is forwarded.
                    return unsafe { avx2($($arg),*) };
                }
            }
            // SAFETY: forwarded.
            unsafe { $plain($($arg),*) }
        }
    };
}

pub(crate) use widest_vectors;
