//! Ops that run along one dim, line by line, as native host steps of
//! compiled plans: the scans `cumsum`, `cumprod`, `logcumsumexp`,
//! `cummax` and `cummin`, `topk` and `sort`, and the selections
//! `kthvalue`, `median`, `nanmedian` and `mode`.
//! The interpreter (`crate::interp::scan`, `crate::interp::sort`) stays
//! their definition; these compute the same bits on the plan's buffers,
//! the lines spread over rayon's threads.
//!
//! - Scans of f32, f64 and i64: PyTorch's CPU accumulators (`acc_type<T,
//!   false>`: f32 sums and products in f64, integers in wrapping i64),
//!   folded from the identity (0, 1, or −inf for logcumsumexp: a first
//!   −0.0 sums to +0.0, as in PyTorch), every output rounded once to its
//!   dtype. `logcumsumexp` of f32 and f64: the interpreter's
//!   `log_add_exp` step in f64 (f32's accumulator, as PyTorch's).
//! - `cummax` and `cummin` of f32, f64, i32 and i64: the value kept as it
//!   is and its position, by [`takes_over`] (PyTorch's rule, the
//!   interpreter's too).
//! - `kthvalue`, `median` and `nanmedian` (with a dim) and `mode` of f32,
//!   f64, i32 and i64: [`pick`], the interpreter's definition, on each
//!   line (a selection; mode sorts).
//! - `topk` and `sort` of f32, f64, i32 and i64: the interpreter's total
//!   order (NaN above everything, −0.0 equal to 0.0, equal values by
//!   position), so the positions agree too. Up to [`FEW`] of a longer line,
//!   topk keeps its best in one pass (most elements cost one comparison
//!   with the worst kept); more are selected, then sorted.
//!
//! Other dtypes (and scans whose input is not already of the result's
//! dtype) stay with the interpreter.

use std::cmp::Ordering;

use kiln_ir::view::{Geometry, wrap_dim};
use kiln_ir::{DType, Op, Result};
use rayon::prelude::*;

use crate::spatial::Operand;
use crate::strided::Shared;

/// Up to this many of a line, topk keeps its best in one pass (as the
/// interpreter does; the result does not depend on it).
pub(crate) const FEW: usize = 64;

/// Lines handed to a thread at a time (at least, where there are as many).
const LINES_PER_TASK: usize = 16;

/// Whether `op` has a native step here for these dtypes: the input's, the
/// first result's and (topk, sort) the positions'.
pub fn native(op: &Op, input: DType, result: DType) -> bool {
    match op {
        Op::Cumsum { .. } | Op::Cumprod { .. } => {
            input == result && matches!(result, DType::F32 | DType::F64 | DType::I64)
        }
        Op::Logcumsumexp { .. } => input == result && matches!(result, DType::F32 | DType::F64),
        Op::Topk { .. }
        | Op::Sort { .. }
        | Op::Cummax { .. }
        | Op::Cummin { .. }
        | Op::Kthvalue { .. }
        | Op::Median { dim: Some(_), .. }
        | Op::Nanmedian { dim: Some(_), .. }
        | Op::Mode { .. } => {
            input == result && matches!(result, DType::F32 | DType::F64 | DType::I32 | DType::I64)
        }
        _ => false,
    }
}

/// Whether `x` takes over as the running maximum (`max`) or minimum of
/// `cummax` or `cummin`: PyTorch's `x >= best || isnan(x)`, so the last
/// of equal values wins, and a NaN sticks once met (nothing compares above
/// it) while each later NaN takes its place. The interpreter's rule too.
#[inline(always)]
pub(crate) fn takes_over<T: PartialOrd + Copy>(x: T, best: T, max: bool) -> bool {
    // `x != x`: NaN, for any float type (never, for integers).
    #[allow(clippy::eq_op)]
    let nan = x != x;
    nan || if max { x >= best } else { x <= best }
}

/// Runs `op` (a scan, topk, sort or a selection) from `x` (of dtype
/// `dtype`) into `outs` (the values, then for ops with positions the
/// positions, with their dtypes); `false` when this file has no kernel
/// for it.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; the outputs must not overlap `x` or each other.
pub unsafe fn run(op: &Op, dtype: DType, x: Operand, outs: &[(Operand, DType)]) -> Result<bool> {
    let Some((values, result)) = outs.first() else {
        return Ok(false);
    };
    if !native(op, dtype, *result) {
        return Ok(false);
    }
    let shape = &x.geometry.shape;
    let dim = match op {
        Op::Cumsum { dim, .. } | Op::Cumprod { dim, .. } => *dim,
        Op::Logcumsumexp { dim } | Op::Cummax { dim } | Op::Cummin { dim } => *dim,
        Op::Topk { dim, .. } | Op::Sort { dim, .. } => *dim,
        Op::Kthvalue { dim, .. } | Op::Mode { dim, .. } => *dim,
        Op::Median { dim: Some(dim), .. } | Op::Nanmedian { dim: Some(dim), .. } => *dim,
        _ => return Ok(false),
    };
    if shape.is_empty() {
        // A zero-dim tensor (one line of one): the interpreter's case.
        return Ok(false);
    }
    let axis = wrap_dim(dim, shape.len())?;
    let positions = || match outs.get(1) {
        Some((p, DType::I64)) => Some((p, true)),
        Some((p, DType::I32)) => Some((p, false)),
        _ => None,
    };
    match op {
        Op::Cumsum { .. } | Op::Cumprod { .. } => {
            let product = matches!(op, Op::Cumprod { .. });
            // SAFETY: forwarded.
            unsafe {
                match dtype {
                    DType::F32 => scan::<f32>(product, axis, &x, values),
                    DType::F64 => scan::<f64>(product, axis, &x, values),
                    _ => scan::<i64>(product, axis, &x, values),
                }
            }
            Ok(true)
        }
        Op::Logcumsumexp { .. } => {
            let step = |acc, x| crate::interp::log_add_exp(x, acc);
            let from = f64::NEG_INFINITY;
            // SAFETY: forwarded.
            unsafe {
                match dtype {
                    DType::F32 => scan_with::<f32>(step, from, axis, &x, values),
                    _ => scan_with::<f64>(step, from, axis, &x, values),
                }
            }
            Ok(true)
        }
        Op::Cummax { .. } | Op::Cummin { .. } => {
            let Some(positions) = positions() else {
                return Ok(false);
            };
            let max = matches!(op, Op::Cummax { .. });
            // SAFETY: forwarded.
            unsafe {
                match dtype {
                    DType::F32 => running_extreme::<f32>(max, axis, &x, values, positions),
                    DType::F64 => running_extreme::<f64>(max, axis, &x, values, positions),
                    DType::I32 => running_extreme::<i32>(max, axis, &x, values, positions),
                    _ => running_extreme::<i64>(max, axis, &x, values, positions),
                }
            }
            Ok(true)
        }
        Op::Kthvalue { .. } | Op::Median { .. } | Op::Nanmedian { .. } | Op::Mode { .. } => {
            let Some(positions) = positions() else {
                return Ok(false);
            };
            if shape[axis] == 0 {
                return Ok(false);
            }
            // SAFETY: forwarded.
            unsafe {
                match dtype {
                    DType::F32 => picks::<f32>(op, axis, &x, values, positions),
                    DType::F64 => picks::<f64>(op, axis, &x, values, positions),
                    DType::I32 => picks::<i32>(op, axis, &x, values, positions),
                    _ => picks::<i64>(op, axis, &x, values, positions),
                }
            }
            Ok(true)
        }
        Op::Topk { .. } | Op::Sort { .. } => {
            let (keep, largest) = match op {
                Op::Topk { k, largest, .. } => (*k, *largest),
                Op::Sort { descending, .. } => (shape[axis], *descending),
                _ => return Ok(false),
            };
            let Some((positions, wide_positions)) = positions() else {
                return Ok(false);
            };
            let select = Select {
                axis,
                keep: usize::try_from(keep).unwrap_or(0),
                largest,
                wide_positions,
            };
            // SAFETY: forwarded.
            unsafe {
                match dtype {
                    DType::F32 => select.run::<f32>(&x, values, positions),
                    DType::F64 => select.run::<f64>(&x, values, positions),
                    DType::I32 => select.run::<i32>(&x, values, positions),
                    _ => select.run::<i64>(&x, values, positions),
                }
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// Lines a scan runs at once, interleaved: independent chains of
/// additions hide each other's latency.
const INTERLEAVED: usize = 4;

/// Calls `f(lines)` with each geometry's offset at the start of every
/// line along `axis` of `shape` (the shape of `geometries[0]`'s lines), up
/// to [`INTERLEAVED`] lines a call, the lines shared out among rayon's
/// threads in runs.
fn for_each_line<const N: usize>(
    shape: &[i64],
    axis: usize,
    geometries: [&Geometry; N],
    f: impl Fn(&[[i64; N]]) + Sync,
) {
    if shape.contains(&0) {
        return;
    }
    let mut lines_shape = shape.to_vec();
    lines_shape[axis] = 1;
    let lines: i64 = lines_shape.iter().product();
    let tasks = (lines as usize)
        .div_ceil(LINES_PER_TASK)
        .min(rayon::current_num_threads() * 8);
    let per_task = (lines as usize).div_ceil(tasks.max(1));
    (0..tasks).into_par_iter().for_each(|t| {
        let lo = t * per_task;
        let hi = ((t + 1) * per_task).min(lines as usize);
        if lo >= hi {
            return;
        }
        // The first line's position, then an odometer.
        let mut position = vec![0i64; shape.len()];
        let mut rest = lo as i64;
        for d in (0..shape.len()).rev() {
            position[d] = rest % lines_shape[d];
            rest /= lines_shape[d];
        }
        let mut offsets = geometries.map(|g| g.element_offset(&position));
        let mut group: Vec<[i64; N]> = Vec::with_capacity(INTERLEAVED);
        for line in lo..hi {
            group.push(offsets);
            if group.len() == INTERLEAVED || line + 1 == hi {
                f(&group);
                group.clear();
            }
            for d in (0..shape.len()).rev() {
                position[d] += 1;
                for (o, g) in offsets.iter_mut().zip(&geometries) {
                    *o += g.strides[d];
                }
                if position[d] < lines_shape[d] {
                    break;
                }
                for (o, g) in offsets.iter_mut().zip(&geometries) {
                    *o -= g.strides[d] * lines_shape[d];
                }
                position[d] = 0;
            }
        }
    });
}

/// The element types scanned here, with PyTorch's CPU accumulator: the
/// rule is `kiln_ir::ops::scan_accumulator`'s, which `DTYPE` and `ACC`
/// name and a test holds these types to.
trait Scanned: Copy + Send + Sync + 'static {
    type Acc: Copy
        + Send
        + Sync
        + std::ops::Add<Output = Self::Acc>
        + std::ops::Mul<Output = Self::Acc>;
    /// The element's dtype and its accumulator's.
    const DTYPE: DType;
    const ACC: DType;
    /// The accumulator's 0 and 1, where sums and products start.
    const ZERO: Self::Acc;
    const ONE: Self::Acc;
    fn widen(self) -> Self::Acc;
    fn narrow(acc: Self::Acc) -> Self;
    /// The accumulator's sum (floats: IEEE; integers wrap, overriding).
    #[inline]
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a + b
    }
    /// The accumulator's product (as [`Scanned::add`]).
    #[inline]
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a * b
    }
}

impl Scanned for f32 {
    type Acc = f64;
    const DTYPE: DType = DType::F32;
    const ACC: DType = DType::F64;
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    #[inline]
    fn widen(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn narrow(acc: f64) -> f32 {
        acc as f32
    }
}

impl Scanned for f64 {
    type Acc = f64;
    const DTYPE: DType = DType::F64;
    const ACC: DType = DType::F64;
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    #[inline]
    fn widen(self) -> f64 {
        self
    }
    #[inline]
    fn narrow(acc: f64) -> f64 {
        acc
    }
}

impl Scanned for i64 {
    type Acc = i64;
    const DTYPE: DType = DType::I64;
    const ACC: DType = DType::I64;
    const ZERO: i64 = 0;
    const ONE: i64 = 1;
    #[inline]
    fn widen(self) -> i64 {
        self
    }
    #[inline]
    fn narrow(acc: i64) -> i64 {
        acc
    }
    #[inline]
    fn add(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
    #[inline]
    fn mul(a: i64, b: i64) -> i64 {
        a.wrapping_mul(b)
    }
}

/// cumsum (or cumprod) of `x` along `axis` into `out`.
///
/// # Safety
/// As [`run`]; each line is written by one task.
unsafe fn scan<T: Scanned>(product: bool, axis: usize, x: &Operand, out: &Operand) {
    debug_assert_eq!(kiln_ir::ops::scan_accumulator(T::DTYPE), T::ACC);
    // Each step its own loop (a function pointer would be a call per
    // element).
    // SAFETY: forwarded.
    unsafe {
        if product {
            scan_with::<T>(|a, b| T::mul(a, b), T::ONE, axis, x, out)
        } else {
            scan_with::<T>(|a, b| T::add(a, b), T::ZERO, axis, x, out)
        }
    }
}

/// [`scan`] with its step, from `identity`.
///
/// # Safety
/// As [`run`].
unsafe fn scan_with<T: Scanned>(
    step: impl Fn(T::Acc, T::Acc) -> T::Acc + Sync,
    identity: T::Acc,
    axis: usize,
    x: &Operand,
    out: &Operand,
) {
    let n = x.geometry.shape[axis];
    let (xs, os) = (x.geometry.strides[axis], out.geometry.strides[axis]);
    let (src, dst) = (Shared(x.ptr.cast::<T>()), Shared(out.ptr.cast::<T>()));
    for_each_line(
        &x.geometry.shape,
        axis,
        [x.geometry, out.geometry],
        |lines| {
            let (src, dst) = (src.ptr(), dst.ptr());
            // SAFETY: the lines' elements are inside both buffers (the
            // caller's contract); this task alone writes these output lines.
            unsafe {
                if let &[[x0, o0], [x1, o1], [x2, o2], [x3, o3]] = lines {
                    // Four chains at once (the same operations per line).
                    let (xo, oo) = ([x0, x1, x2, x3], [o0, o1, o2, o3]);
                    let mut acc = [identity; 4];
                    for i in 0..n {
                        for l in 0..4 {
                            acc[l] = step(acc[l], (*src.offset((xo[l] + i * xs) as isize)).widen());
                            *dst.offset((oo[l] + i * os) as isize) = T::narrow(acc[l]);
                        }
                    }
                    return;
                }
                for &[xo, oo] in lines {
                    let mut acc = identity;
                    for i in 0..n {
                        acc = step(acc, (*src.offset((xo + i * xs) as isize)).widen());
                        *dst.offset((oo + i * os) as isize) = T::narrow(acc);
                    }
                }
            }
        },
    );
}

/// cummax (`max`) or cummin of `x` along `axis`: the running extreme into
/// `values` and its position into `positions` (i64 where `wide`, else the
/// plan's narrowed i32).
///
/// # Safety
/// As [`run`]; each line is written by one task.
unsafe fn running_extreme<T: PartialOrd + Copy + Send + Sync + 'static>(
    max: bool,
    axis: usize,
    x: &Operand,
    values: &Operand,
    (positions, wide): (&Operand, bool),
) {
    let n = x.geometry.shape[axis];
    let strides = [x, values, positions].map(|o| o.geometry.strides[axis]);
    let (src, dst) = (Shared(x.ptr.cast::<T>()), Shared(values.ptr.cast::<T>()));
    let at = Shared(positions.ptr);
    for_each_line(
        &x.geometry.shape,
        axis,
        [x.geometry, values.geometry, positions.geometry],
        |lines| {
            let (src, dst, at) = (src.ptr(), dst.ptr(), at.ptr());
            for &[xo, vo, po] in lines {
                // SAFETY: the lines' elements are inside the buffers (the
                // caller's contract); this task alone writes these lines.
                unsafe {
                    let put = |i: i64, best: T, position: i64| {
                        *dst.offset((vo + i * strides[1]) as isize) = best;
                        let p = (po + i * strides[2]) as isize;
                        if wide {
                            *at.cast::<i64>().offset(p) = position;
                        } else {
                            *at.cast::<i32>().offset(p) = position as i32;
                        }
                    };
                    let mut best = *src.offset(xo as isize);
                    let mut position = 0;
                    put(0, best, 0);
                    for i in 1..n {
                        let v = *src.offset((xo + i * strides[0]) as isize);
                        if takes_over(v, best, max) {
                            best = v;
                            position = i;
                        }
                        put(i, best, position);
                    }
                }
            }
        },
    );
}

/// kthvalue, median, nanmedian or mode of `x` along `axis` (`op`'s dim):
/// each line's [`pick`] into `values` and its position into `positions`
/// (i64 where `wide`, else i32), whose dim `axis` is gone unless the op
/// keeps it.
///
/// # Safety
/// As [`run`]; each line's results are written by one task.
unsafe fn picks<T: Ordered>(
    op: &Op,
    axis: usize,
    x: &Operand,
    values: &Operand,
    (positions, wide): (&Operand, bool),
) {
    let n = x.geometry.shape[axis];
    // The results' geometries over the input's dims: one element per line.
    let per_line = |g: &Geometry| {
        let mut g = g.clone();
        if g.shape.len() < x.geometry.shape.len() {
            g.shape.insert(axis, 1);
            g.strides.insert(axis, 0);
        }
        g
    };
    let (vg, pg) = (per_line(values.geometry), per_line(positions.geometry));
    let xs = x.geometry.strides[axis];
    let (src, dst) = (Shared(x.ptr.cast::<T>()), Shared(values.ptr.cast::<T>()));
    let at = Shared(positions.ptr);
    // 32-bit values on lines that [`Keyed`] positions fit are compared as
    // one integer each.
    let keyed = T::KEYED && n <= Keyed::POSITIONS;
    for_each_line(&x.geometry.shape, axis, [x.geometry, &vg, &pg], |lines| {
        let (src, dst, at) = (src.ptr(), dst.ptr(), at.ptr());
        let mut row = Vec::with_capacity(if keyed { 0 } else { n as usize });
        let mut keys: Vec<Keyed> = Vec::with_capacity(if keyed { n as usize } else { 0 });
        for &[xo, vo, po] in lines {
            // SAFETY: the lines' elements are inside the buffers (the
            // caller's contract); this task alone writes these results.
            unsafe {
                let value = |i: i64| *src.offset((xo + i * xs) as isize);
                let (v, i) = if keyed {
                    keys.clear();
                    keys.extend((0..n).map(|i| Keyed::new(value(i), i)));
                    let i = pick(op, &mut keys).position();
                    (value(i), i)
                } else {
                    row.clear();
                    row.extend((0..n).map(|i| (value(i), i)));
                    pick(op, &mut row)
                };
                *dst.offset(vo as isize) = v;
                if wide {
                    *at.cast::<i64>().offset(po as isize) = i;
                } else {
                    *at.cast::<i32>().offset(po as isize) = i as i32;
                }
            }
        }
    });
}

/// The element and position `kthvalue`, `median`, `nanmedian` or `mode`
/// picks from one line (its elements with their positions, in order along
/// the dim; `row` is reordered), as from the line sorted stably with NaN
/// last, so that among equal values the first position wins (PyTorch
/// leaves that choice unspecified), except where PyTorch specifies it:
/// median's first NaN, mode's last position of its value. Selected, not
/// sorted, but for mode: by value, then position, a total order, so the
/// selection is the stable sort's element. The interpreter's definition
/// too. `row` is not empty.
pub(crate) fn pick<I: Item>(op: &Op, row: &mut [I]) -> I {
    let nth = |row: &mut [I], k: usize| *row.select_nth_unstable_by(k, I::cmp_item).1;
    let n = row.len();
    match op {
        Op::Median { .. } => match row.iter().find(|v| v.is_nan()) {
            Some(nan) => *nan,
            None => nth(row, (n - 1) / 2),
        },
        Op::Kthvalue { k, .. } => nth(row, (*k as usize).clamp(1, n) - 1),
        Op::Nanmedian { .. } => match row.iter().filter(|v| !v.is_nan()).count() {
            0 => nth(row, (n - 1) / 2),
            m => nth(row, (m - 1) / 2),
        },
        Op::Mode { .. } => {
            row.sort_unstable_by(I::cmp_item);
            // The longest run of equal values, the first (smallest) among
            // equally long ones; its last element, the value's last
            // position (positions are in order within a run).
            let (mut best, mut best_len, mut start) = (0, 0, 0);
            for i in 0..n {
                let run_ends = i + 1 == n || !row[i].same_value(&row[i + 1]);
                if run_ends {
                    if i + 1 - start > best_len {
                        (best, best_len) = (i, i + 1 - start);
                    }
                    start = i + 1;
                }
            }
            row[best]
        }
        _ => nth(row, (n - 1) / 2),
    }
}

/// An element of a line with its position, as [`pick`] compares them.
pub(crate) trait Item: Copy {
    /// By value (NaN last, −0.0 equal to 0.0), then by position.
    fn cmp_item(&self, other: &Self) -> Ordering;
    /// Whether the value is NaN.
    fn is_nan(&self) -> bool;
    /// Whether two values are equal (NaN equal to nothing: mode's runs).
    fn same_value(&self, other: &Self) -> bool;
}

impl<T: Ordered> Item for (T, i64) {
    #[inline]
    fn cmp_item(&self, other: &Self) -> Ordering {
        self.0.order(other.0).then(self.1.cmp(&other.1))
    }

    #[inline]
    fn is_nan(&self) -> bool {
        self.0.is_nan()
    }

    #[inline]
    fn same_value(&self, other: &Self) -> bool {
        !self.0.is_nan() && self.0.order(other.0) == Ordering::Equal
    }
}

/// A 32-bit value's key ([`Ordered::key`], 33 bits) above its position
/// (31 bits): one integer comparison orders two of them as
/// [`Item::cmp_item`] does (several times faster to select and sort than
/// pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Keyed(u64);

impl Keyed {
    /// Positions below this fit.
    const POSITIONS: i64 = 1 << 31;

    /// `value` (whose key exists) at `position` (below [`Self::POSITIONS`]).
    #[inline]
    fn new<T: Ordered>(value: T, position: i64) -> Keyed {
        Keyed((value.key().unwrap_or(0) << 31) | position as u64)
    }

    /// The position it was made with.
    #[inline]
    fn position(self) -> i64 {
        (self.0 & (Self::POSITIONS as u64 - 1)) as i64
    }
}

impl Item for Keyed {
    #[inline]
    fn cmp_item(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }

    #[inline]
    fn is_nan(&self) -> bool {
        self.0 >> 63 == 1
    }

    #[inline]
    fn same_value(&self, other: &Self) -> bool {
        !self.is_nan() && self.0 >> 31 == other.0 >> 31
    }
}

/// The element types selected here, in the interpreter's total order
/// (which implements it for its own elements too, for [`pick`]).
pub(crate) trait Ordered: Copy + Send + Sync + 'static {
    /// NaN above everything, −0.0 equal to 0.0.
    fn order(self, other: Self) -> Ordering;

    /// Whether this is NaN.
    #[inline]
    fn is_nan(self) -> bool {
        false
    }

    /// Whether [`Ordered::key`] gives keys.
    const KEYED: bool = false;

    /// A 33-bit integer in the same order: equal for equal values (all
    /// NaNs, both zeros), NaN's above every other; for 32-bit types.
    #[inline]
    fn key(self) -> Option<u64> {
        None
    }

    /// `self.order(other) == Greater`, in fewer instructions.
    #[inline]
    fn above(self, other: Self) -> bool {
        self.order(other) == Ordering::Greater
    }
}

impl Ordered for f32 {
    #[inline]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }

    const KEYED: bool = true;

    #[inline]
    fn key(self) -> Option<u64> {
        if self.is_nan() {
            return Some(1 << 32);
        }
        // −0.0 as 0.0; then negative floats' bits reversed below the
        // positive ones'.
        let bits = (self + 0.0).to_bits();
        Some(u64::from(if bits >> 31 == 1 {
            !bits
        } else {
            bits | 1 << 31
        }))
    }

    #[inline]
    fn order(self, other: f32) -> Ordering {
        f64::from(self).order(f64::from(other))
    }

    #[inline]
    fn above(self, other: f32) -> bool {
        // Without short-circuits, so a run's tests vectorize.
        (self > other) | (self.is_nan() & !other.is_nan())
    }
}

/// One step of the reference's `amax`: `x` where it is larger or NaN (NaN
/// propagates), else `top`; a select, not a branch, so that loops of it
/// vectorize. (The native steps' row maxima: attention, cross_entropy,
/// softmax.)
#[inline(always)]
pub(crate) fn nan_max<T: PartialOrd + Copy>(top: T, x: T) -> T {
    // `x != x`: NaN, for any float type.
    #[allow(clippy::eq_op)]
    let nan = x != x;
    if x > top || nan { x } else { top }
}

/// The order `sort` and `topk` put floats in (PyTorch's): NaN above
/// everything (NaNs equal), `-0.0 == 0.0`. The interpreter's order too.
#[inline]
pub(crate) fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

impl Ordered for f64 {
    #[inline]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }

    #[inline]
    fn order(self, other: f64) -> Ordering {
        float_order(self, other)
    }

    #[inline]
    fn above(self, other: f64) -> bool {
        (self > other) | (self.is_nan() & !other.is_nan())
    }
}

impl Ordered for i32 {
    #[inline]
    fn order(self, other: i32) -> Ordering {
        self.cmp(&other)
    }

    const KEYED: bool = true;

    #[inline]
    fn key(self) -> Option<u64> {
        Some(u64::from(self as u32 ^ 1 << 31))
    }
}

impl Ordered for i64 {
    #[inline]
    fn order(self, other: i64) -> Ordering {
        self.cmp(&other)
    }
}

/// What topk and sort keep of each line.
struct Select {
    axis: usize,
    /// How many of each line (its first ones in the order).
    keep: usize,
    /// Largest first (topk's `largest`, sort's `descending`).
    largest: bool,
    /// Whether positions are i64 (else i32, where the plan narrowed them).
    wide_positions: bool,
}

/// The order of topk's and sort's results: by value (largest first or
/// smallest first), equal values by position, first first (a total order,
/// so an unstable sort gives the stable sort's result).
fn order_by<T: Ordered>(largest: bool) -> impl Fn(&(T, usize), &(T, usize)) -> Ordering + Copy {
    move |a, b| {
        let by_value = if largest {
            b.0.order(a.0)
        } else {
            a.0.order(b.0)
        };
        by_value.then(a.1.cmp(&b.1))
    }
}

/// Elements looked at together before the next comparison with the worst
/// kept: a run of them is skipped when none beats it (one vectorizable
/// test), as nearly all are once the best are found.
const RUN: usize = 16;

/// The first `keep` (< the line's length) of a line in [`order_by`]'s
/// order, in one pass: only a value strictly better than the worst kept
/// gets in (a later position never beats an equal value).
fn few<T: Ordered>(line: &[T], keep: usize, largest: bool) -> Vec<(T, usize)> {
    let by = order_by(largest);
    let beats = |value: T, worst: T| {
        if largest {
            value.above(worst)
        } else {
            worst.above(value)
        }
    };
    let mut best: Vec<(T, usize)> = Vec::with_capacity(keep + 1);
    for (r, run) in line.chunks(RUN).enumerate() {
        if best.len() == keep {
            let worst = best[keep - 1].0;
            if !run.iter().fold(false, |any, &v| any | beats(v, worst)) {
                continue;
            }
        }
        for (j, &value) in run.iter().enumerate() {
            if best.len() == keep && !beats(value, best[keep - 1].0) {
                continue;
            }
            let item = (value, r * RUN + j);
            let place = best.partition_point(|b| by(b, &item) == Ordering::Less);
            best.insert(place, item);
            best.truncate(keep);
        }
    }
    best
}

impl Select {
    /// # Safety
    /// As [`run`]; each output line is written by one task.
    unsafe fn run<T: Ordered>(&self, x: &Operand, values: &Operand, positions: &Operand) {
        let n = x.geometry.shape[self.axis] as usize;
        let keep = self.keep.min(n);
        if keep == 0 {
            return;
        }
        let xs = x.geometry.strides[self.axis];
        let (vs, ps) = (
            values.geometry.strides[self.axis],
            positions.geometry.strides[self.axis],
        );
        let src = Shared(x.ptr.cast::<T>());
        let (vdst, pdst) = (Shared(values.ptr.cast::<T>()), Shared(positions.ptr));
        let largest = self.largest;
        let wide = self.wide_positions;
        for_each_line(
            &x.geometry.shape,
            self.axis,
            [x.geometry, values.geometry, positions.geometry],
            |lines| {
                for &[xo, vo, po] in lines {
                    // SAFETY: the line's elements are inside the buffer (the
                    // caller's contract); a strided line is copied first.
                    let copy: Vec<T>;
                    let line: &[T] = unsafe {
                        let first = src.ptr().offset(xo as isize);
                        if xs == 1 {
                            std::slice::from_raw_parts(first, n)
                        } else {
                            copy = (0..n)
                                .map(|i| *first.offset(i as isize * xs as isize))
                                .collect();
                            &copy
                        }
                    };
                    let best = if keep <= FEW && keep < n {
                        few(line, keep, largest)
                    } else {
                        let by = order_by(largest);
                        let mut all: Vec<(T, usize)> = line.iter().copied().zip(0..).collect();
                        if keep < n {
                            all.select_nth_unstable_by(keep - 1, by);
                            all.truncate(keep);
                        }
                        all.sort_unstable_by(by);
                        all
                    };
                    for (j, (v, i)) in best.iter().enumerate() {
                        let j = j as i64;
                        // SAFETY: position j < keep of this task's output
                        // lines, inside their buffers.
                        unsafe {
                            *vdst.ptr().offset((vo + j * vs) as isize) = *v;
                            if wide {
                                *pdst.ptr().cast::<i64>().offset((po + j * ps) as isize) =
                                    *i as i64;
                            } else {
                                *pdst.ptr().cast::<i32>().offset((po + j * ps) as isize) =
                                    *i as i32;
                            }
                        }
                    }
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The native scans accumulate in `kiln_ir::ops::scan_accumulator`'s
    /// dtype, as the interpreter and the CUDA scans do.
    #[test]
    fn scans_accumulate_in_the_rules_dtype() {
        fn check<T: Scanned>() {
            assert_eq!(
                kiln_ir::ops::scan_accumulator(T::DTYPE),
                T::ACC,
                "{:?}",
                T::DTYPE
            );
            assert_eq!(std::mem::size_of::<T::Acc>(), T::ACC.itemsize());
        }
        check::<f32>();
        check::<f64>();
        check::<i64>();
    }

    /// The keyed form of [`pick`] picks what the pairs' form picks, on
    /// lines of f32 full of ties, both zeros, infinities and NaN, and of
    /// i32 with both extremes: every op, several k.
    #[test]
    fn keyed_picks_agree_with_pairs() {
        fn check<T: Ordered + std::fmt::Debug + PartialEq>(line: &[T]) {
            let n = line.len() as i64;
            let mut ops = vec![
                Op::Median {
                    dim: Some(0),
                    keepdim: false,
                },
                Op::Nanmedian {
                    dim: Some(0),
                    keepdim: false,
                },
                Op::Mode {
                    dim: 0,
                    keepdim: false,
                },
            ];
            for k in [1, 2, n / 3 + 1, n / 2 + 1, n] {
                ops.push(Op::Kthvalue {
                    k,
                    dim: 0,
                    keepdim: false,
                });
            }
            for op in &ops {
                let mut pairs: Vec<(T, i64)> = line.iter().copied().zip(0..).collect();
                let mut keys: Vec<Keyed> = pairs.iter().map(|&(v, i)| Keyed::new(v, i)).collect();
                let (_, want) = pick(op, &mut pairs);
                let got = pick(op, &mut keys).position();
                assert_eq!(got, want, "{op:?} of {line:?}");
            }
        }
        let mut r = crate::random::Stream::new(7);
        for len in [1, 2, 3, 7, 40, 101] {
            for _ in 0..50 {
                let floats: Vec<f32> = (0..len)
                    .map(|_| match r.next_u64() % 12 {
                        0 => f32::NAN,
                        1 => -0.0,
                        2 => 0.0,
                        3 => f32::INFINITY,
                        4 => f32::NEG_INFINITY,
                        5 => -f32::from_bits(1),
                        6 => f32::from_bits(1),
                        7 => -3.0e38,
                        k => k as f32 - 9.5,
                    })
                    .collect();
                check(&floats);
                let ints: Vec<i32> = (0..len)
                    .map(|_| match r.next_u64() % 7 {
                        0 => i32::MIN,
                        1 => i32::MAX,
                        k => k as i32 - 4,
                    })
                    .collect();
                check(&ints);
            }
        }
    }
}
