//! Convolution for compiled plans on the CPU, in f32 and f64: the plan's
//! `convolution` steps run here instead of the interpreter's tap-by-tap
//! reference (which stays the oracle they are tested against).
//!
//! A convolution is a matrix product per batch item and group,
//! `out[p, o] = Σ_k col[p, k] · w[k, o]` over the output positions `p` and
//! `k = (tap, channel)`. The `col` rows (im2col) are gathered a tile of
//! positions at a time, so no full im2col buffer is ever made, and each
//! tile goes through the `gemm` crate straight into the output in its own
//! layout (contiguous or channels-last); tiles run on rayon's threads. A
//! 1×1 convolution with stride 1 and no padding reads the input as the
//! matrix itself; a depthwise convolution (one input and one output
//! channel per group), where a product would have one column, runs as
//! its own loop over the taps.

use kiln_ir::spatial::{Conv, conv_output_shape};
use kiln_ir::view::Geometry;
use kiln_ir::{DType, Result};
use rayon::prelude::*;

/// One operand: its buffer's start and its geometry, in elements.
#[derive(Clone, Copy)]
pub struct Operand<'a> {
    /// The buffer's first byte.
    pub ptr: *mut u8,
    /// Shape, strides and offset in elements.
    pub geometry: &'a Geometry,
}

/// The element types convolved here.
trait Element:
    Copy + Default + Send + Sync + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + 'static
{
    const ONE: Self;
}

impl Element for f32 {
    const ONE: f32 = 1.0;
}

impl Element for f64 {
    const ONE: f64 = 1.0;
}

/// A pointer that may cross threads: the tiles write disjoint parts of the
/// output.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);

// SAFETY: only used for disjoint writes and shared reads (see `run`).
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer (a method, so that closures capture the `Sync` wrapper).
    fn ptr(self) -> *mut T {
        self.0
    }
}

/// Runs `convolution` when this file has a kernel for it (f32 or f64, not
/// transposed, an output whose spatial dims flatten); `false` otherwise.
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; `out` must not overlap the operands; `conv` must have been
/// checked against the operand shapes (`kiln_ir::spatial::conv_params`).
pub unsafe fn convolution(
    conv: &Conv,
    dtype: DType,
    x: Operand,
    w: Operand,
    bias: Option<Operand>,
    out: Operand,
) -> Result<bool> {
    if conv.transposed || !flattens(out.geometry, 2) {
        return Ok(false);
    }
    // SAFETY: forwarded from the caller.
    unsafe {
        match dtype {
            DType::F32 => run::<f32>(conv, x, w, bias, out),
            DType::F64 => run::<f64>(conv, x, w, bias, out),
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// Whether the dims from `from` on flatten into one with a single stride.
fn flattens(g: &Geometry, from: usize) -> bool {
    (from..g.rank().saturating_sub(1))
        .all(|d| g.shape[d] == 1 || g.strides[d] == g.strides[d + 1] * g.shape[d + 1])
}

/// The geometry of a convolution, in elements.
struct Shape {
    batch: i64,
    groups: i64,
    in_per_group: i64,
    out_per_group: i64,
    in_size: Vec<i64>,
    out_size: Vec<i64>,
    /// Output positions per plane.
    positions: i64,
    /// Kernel taps, as multi-indices into the kernel.
    taps: Vec<Vec<i64>>,
}

unsafe fn run<T: Element>(
    conv: &Conv,
    x: Operand,
    w: Operand,
    bias: Option<Operand>,
    out: Operand,
) {
    let (xg, wg, og) = (x.geometry, w.geometry, out.geometry);
    let out_shape = conv_output_shape(conv, &xg.shape, &wg.shape);
    let kernel = wg.shape[2..].to_vec();
    let shape = Shape {
        batch: xg.shape[0],
        groups: conv.groups,
        in_per_group: xg.shape[1] / conv.groups,
        out_per_group: out_shape[1] / conv.groups,
        in_size: xg.shape[2..].to_vec(),
        out_size: out_shape[2..].to_vec(),
        positions: out_shape[2..].iter().product(),
        taps: crate::tensor::Indices::new(&kernel).collect(),
    };
    let base = |o: &Operand| -> Shared<T> {
        // SAFETY: the geometry's offset is inside the buffer.
        Shared(unsafe { (o.ptr as *mut T).offset(o.geometry.offset as isize) })
    };
    let (xp, op) = (base(&x), base(&out));
    let bias_values: Option<Vec<T>> = bias.map(|b| {
        let bp = base(&b);
        (0..b.geometry.shape[0])
            // SAFETY: inside the bias's buffer, as its geometry says.
            .map(|i| unsafe { *bp.ptr().offset((i * b.geometry.strides[0]) as isize) })
            .collect()
    });
    if shape.in_per_group == 1 && shape.out_per_group == 1 {
        // SAFETY: forwarded.
        unsafe {
            depthwise(
                conv,
                &shape,
                xp,
                xg,
                base(&w),
                wg,
                bias_values.as_deref(),
                op,
                og,
            )
        };
        return;
    }
    let weights = pack_weights(&shape, base(&w), wg);
    // SAFETY: forwarded.
    unsafe {
        products(
            conv,
            &shape,
            xp,
            xg,
            &weights,
            bias_values.as_deref(),
            op,
            og,
        )
    };
}

/// The weights as one `[k, o]` matrix per group, `k = tap · C/g + c`.
fn pack_weights<T: Element>(s: &Shape, w: Shared<T>, wg: &Geometry) -> Vec<T> {
    let k = s.taps.len() as i64 * s.in_per_group;
    let og = s.out_per_group;
    let mut packed = vec![T::default(); (s.groups * k * og) as usize];
    for g in 0..s.groups {
        for (t, tap) in s.taps.iter().enumerate() {
            let tap_off: i64 = tap.iter().zip(&wg.strides[2..]).map(|(i, st)| i * st).sum();
            for c in 0..s.in_per_group {
                for o in 0..og {
                    let src = (g * og + o) * wg.strides[0] + c * wg.strides[1] + tap_off;
                    let dst = (g * k + t as i64 * s.in_per_group + c) * og + o;
                    // SAFETY: inside the weight's buffer, as its geometry says.
                    packed[dst as usize] = unsafe { *w.ptr().offset(src as isize) };
                }
            }
        }
    }
    packed
}

/// The flat output position `p` as a multi-index.
fn unflatten(mut p: i64, size: &[i64], index: &mut [i64]) {
    for d in (0..size.len()).rev() {
        index[d] = p % size[d];
        p /= size[d];
    }
}

/// The convolution as gemm products over tiles of output positions.
#[allow(clippy::too_many_arguments)]
unsafe fn products<T: Element>(
    conv: &Conv,
    s: &Shape,
    x: Shared<T>,
    xg: &Geometry,
    weights: &[T],
    bias: Option<&[T]>,
    out: Shared<T>,
    og: &Geometry,
) {
    let cg = s.in_per_group;
    let k = s.taps.len() as i64 * cg;
    let n = s.out_per_group;
    let p_stride = og.strides[og.rank() - 1];
    // A 1×1 convolution with stride 1 and no padding over an input whose
    // spatial dims flatten reads the input as its matrix.
    let pointwise = s.taps.len() == 1
        && conv.stride.iter().all(|v| *v == 1)
        && conv.padding.iter().all(|v| *v == 0)
        && flattens(xg, 2);
    // Tiles of about 256k column elements (1 MiB of f32).
    let tile = if pointwise {
        s.positions
    } else {
        ((1 << 18) / k.max(1)).clamp(16, s.positions.max(16))
    };
    let tiles = (s.positions + tile - 1) / tile.max(1);
    let items: Vec<(i64, i64, i64)> = (0..s.batch)
        .flat_map(|b| (0..s.groups).flat_map(move |g| (0..tiles).map(move |t| (b, g, t))))
        .collect();
    let threads = rayon::current_num_threads();
    let parallel_gemm = items.len() < threads;
    let run_item = |&(b, g, t): &(i64, i64, i64)| {
        let p0 = t * tile;
        let rows = tile.min(s.positions - p0);
        let x_base = b * xg.strides[0] + g * cg * xg.strides[1];
        let mut col = Vec::new();
        let (lhs, lhs_cs, lhs_rs) = if pointwise {
            let x_p = xg.strides[xg.rank() - 1];
            // SAFETY: inside the input's buffer.
            (
                unsafe { x.ptr().offset((x_base + p0 * x_p) as isize) } as *const T,
                xg.strides[1],
                x_p,
            )
        } else {
            col = vec![T::default(); (rows * k) as usize];
            gather(conv, s, x, xg, x_base, p0, rows, &mut col);
            (col.as_ptr(), 1, k)
        };
        let dst = Shared(
            // SAFETY: inside the output's buffer.
            unsafe {
                out.ptr()
                    .offset((b * og.strides[0] + g * n * og.strides[1] + p0 * p_stride) as isize)
            },
        );
        if let Some(bias) = bias {
            for p in 0..rows {
                for o in 0..n {
                    // SAFETY: inside this tile of the output.
                    unsafe {
                        *dst.ptr()
                            .offset((p * p_stride + o * og.strides[1]) as isize) =
                            bias[(g * n + o) as usize]
                    };
                }
            }
        }
        let rhs = weights[(g * k * n) as usize..].as_ptr();
        let parallelism = if parallel_gemm && rows * n * k >= 1 << 18 {
            gemm::Parallelism::Rayon(threads)
        } else {
            gemm::Parallelism::None
        };
        // SAFETY: the tile's rows of the output, of `col` (or the input),
        // and the group's packed weights, with their strides.
        unsafe {
            gemm::gemm::<T>(
                rows as usize,
                n as usize,
                k as usize,
                dst.ptr(),
                og.strides[1] as isize,
                p_stride as isize,
                bias.is_some(),
                lhs,
                lhs_cs as isize,
                lhs_rs as isize,
                rhs,
                1,
                n as isize,
                T::ONE,
                T::ONE,
                false,
                false,
                false,
                parallelism,
            );
        }
        drop(col);
    };
    if parallel_gemm {
        items.iter().for_each(run_item);
    } else {
        items.par_iter().for_each(run_item);
    }
}

/// Gathers the `col` rows of output positions `p0..p0 + rows`: for each,
/// the input values under every tap (zero in the padding), channels of the
/// group innermost.
#[allow(clippy::too_many_arguments)]
fn gather<T: Element>(
    conv: &Conv,
    s: &Shape,
    x: Shared<T>,
    xg: &Geometry,
    x_base: i64,
    p0: i64,
    rows: i64,
    col: &mut [T],
) {
    let dims = conv.dims;
    let cg = s.in_per_group as usize;
    let c_stride = xg.strides[1];
    let k = s.taps.len() * cg;
    let mut index = vec![0i64; dims];
    for r in 0..rows {
        unflatten(p0 + r, &s.out_size, &mut index);
        let row = &mut col[r as usize * k..(r as usize + 1) * k];
        for (t, tap) in s.taps.iter().enumerate() {
            let mut off = x_base;
            let mut inside = true;
            for d in 0..dims {
                let i = index[d] * conv.stride[d] - conv.padding[d] + tap[d] * conv.dilation[d];
                if i < 0 || i >= s.in_size[d] {
                    inside = false;
                    break;
                }
                off += i * xg.strides[d + 2];
            }
            let dst = &mut row[t * cg..(t + 1) * cg];
            if !inside {
                dst.fill(T::default());
            } else if c_stride == 1 {
                // SAFETY: `cg` channels from `off`, inside the input.
                let src = unsafe { std::slice::from_raw_parts(x.ptr().offset(off as isize), cg) };
                dst.copy_from_slice(src);
            } else {
                for (c, v) in dst.iter_mut().enumerate() {
                    // SAFETY: inside the input's buffer.
                    *v = unsafe { *x.ptr().offset((off + c as i64 * c_stride) as isize) };
                }
            }
        }
    }
}

/// A depthwise convolution: each output channel sums its own input
/// channel's taps; channels run on rayon's threads.
#[allow(clippy::too_many_arguments)]
unsafe fn depthwise<T: Element>(
    conv: &Conv,
    s: &Shape,
    x: Shared<T>,
    xg: &Geometry,
    w: Shared<T>,
    wg: &Geometry,
    bias: Option<&[T]>,
    out: Shared<T>,
    og: &Geometry,
) {
    let dims = conv.dims;
    // Per tap: its weight offset and its input displacement per dim.
    let taps: Vec<(i64, Vec<i64>)> = s
        .taps
        .iter()
        .map(|tap| {
            let w_off: i64 = tap.iter().zip(&wg.strides[2..]).map(|(i, st)| i * st).sum();
            (
                w_off,
                (0..dims).map(|d| tap[d] * conv.dilation[d]).collect(),
            )
        })
        .collect();
    let planes: Vec<(i64, i64)> = (0..s.batch)
        .flat_map(|b| (0..s.groups).map(move |c| (b, c)))
        .collect();
    planes.par_iter().for_each(|&(b, c)| {
        let weights: Vec<T> = taps
            .iter()
            // SAFETY: inside the weight's buffer.
            .map(|(off, _)| unsafe { *w.ptr().offset((c * wg.strides[0] + off) as isize) })
            .collect();
        let x_base = b * xg.strides[0] + c * xg.strides[1];
        let o_base = b * og.strides[0] + c * og.strides[1];
        let start = bias.map_or(T::default(), |bias| bias[c as usize]);
        let mut index = vec![0i64; dims];
        for p in 0..s.positions {
            unflatten(p, &s.out_size, &mut index);
            let mut acc = start;
            for ((_, shift), wv) in taps.iter().zip(&weights) {
                let mut off = x_base;
                let mut inside = true;
                for d in 0..dims {
                    let i = index[d] * conv.stride[d] - conv.padding[d] + shift[d];
                    if i < 0 || i >= s.in_size[d] {
                        inside = false;
                        break;
                    }
                    off += i * xg.strides[d + 2];
                }
                if inside {
                    // SAFETY: inside the input's buffer.
                    acc = acc + unsafe { *x.ptr().offset(off as isize) } * *wv;
                }
            }
            let o_off: i64 = o_base
                + index
                    .iter()
                    .zip(&og.strides[2..])
                    .map(|(i, st)| i * st)
                    .sum::<i64>();
            // SAFETY: inside the output's buffer; each plane is one task's.
            unsafe { *out.ptr().offset(o_off as isize) = acc };
        }
    });
}
