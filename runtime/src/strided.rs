//! What the host's native steps (`crate::spatial`, `crate::attention`,
//! `crate::gather`, `crate::lines`, `crate::cross_entropy`,
//! `crate::moments`, `crate::softmax`) and the run
//! loop's writes share: a pointer that may
//! cross rayon's threads, and walks over strided geometries that keep one
//! element offset per operand with an odometer (an element costs an
//! addition, a run along the last dim none). The walks are `#[inline]`:
//! inlined into their callers, the callers' loops keep what they capture
//! in registers (scatter_add took twice as long through a call).

use kiln_ir::view::Geometry;

/// A pointer that may cross threads. Its users read shared operands and
/// write disjoint parts of their outputs (each says which).
#[derive(Clone, Copy)]
pub(crate) struct Shared<T>(pub(crate) *mut T);

// SAFETY: only used for shared reads and disjoint writes (see the users).
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer (a method, so that closures capture the `Sync` wrapper).
    pub(crate) fn ptr(self) -> *mut T {
        self.0
    }
}

/// No dim left out of a walk's offsets.
pub(crate) const NONE: usize = usize::MAX;

/// Calls `f(offsets)` for each position of `shape`'s geometry in
/// row-major order, with each geometry's element offset there, less the
/// dim paired with it (where the index decides; [`NONE`] for none).
#[inline]
pub(crate) fn walk<const N: usize>(
    shape: &Geometry,
    geometries: &[(&Geometry, usize); N],
    mut f: impl FnMut([i64; N]),
) {
    rows(shape, geometries, |start, len, steps| {
        for j in 0..len {
            let mut at = start;
            for (a, s) in at.iter_mut().zip(steps) {
                *a += j * s;
            }
            f(at);
        }
    })
}

/// Calls `f(offsets, len, steps)` for each run of positions along the
/// last dim of `shape` (all of it for a 0-D shape: one position), in
/// row-major order: each geometry's offset at the run's start and its
/// step along the run, less the dim paired with it, as [`walk`]. The
/// other dims advance by an odometer, so an element costs an addition.
#[inline]
pub(crate) fn rows<const N: usize>(
    shape: &Geometry,
    geometries: &[(&Geometry, usize); N],
    mut f: impl FnMut([i64; N], i64, [i64; N]),
) {
    let shape = &shape.shape;
    if shape.contains(&0) {
        return;
    }
    let stride =
        |(g, skip): &(&Geometry, usize), k: usize| if k == *skip { 0 } else { g.strides[k] };
    let Some(last) = shape.len().checked_sub(1) else {
        f(geometries.map(|(g, _)| g.offset), 1, [0; N]);
        return;
    };
    let steps = geometries.map(|g| stride(&g, last));
    let mut position = vec![0i64; last];
    let mut offsets = geometries.map(|(g, _)| g.offset);
    loop {
        f(offsets, shape[last], steps);
        let mut k = last;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            position[k] += 1;
            for (o, g) in offsets.iter_mut().zip(geometries) {
                *o += stride(g, k);
            }
            if position[k] < shape[k] {
                break;
            }
            for (o, g) in offsets.iter_mut().zip(geometries) {
                *o -= stride(g, k) * shape[k];
            }
            position[k] = 0;
        }
    }
}

/// The element offset of row `r` of a geometry whose rows run along its
/// last dim: `r` as a row-major index over the `outer` dims' sizes, times
/// their `strides` (a dim past the end of `strides` steps 0: the dropped
/// dim of a reduction's result), from `offset`. The native row steps'
/// rows go to rayon's threads one by one, so each finds its own start.
pub(crate) fn row_offset(offset: i64, strides: &[i64], outer: &[i64], mut r: i64) -> i64 {
    let mut at = offset;
    for d in (0..outer.len()).rev() {
        at += r % outer[d] * strides.get(d).copied().unwrap_or(0);
        r /= outer[d];
    }
    at
}

/// The `n` elements from `first`, `step` apart: in place where they are
/// contiguous, else copied into `copy`.
///
/// # Safety
/// The `n` elements must be inside one buffer, and not written while the
/// slice lives.
pub(crate) unsafe fn row<T: Copy>(first: *const T, n: usize, step: i64, copy: &mut Vec<T>) -> &[T] {
    if step == 1 {
        // SAFETY: the caller's.
        return unsafe { std::slice::from_raw_parts(first, n) };
    }
    copy.clear();
    // SAFETY: the caller's.
    copy.extend((0..n).map(|j| unsafe { *first.offset(j as isize * step as isize) }));
    copy
}
