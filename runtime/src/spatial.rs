//! Convolution for compiled plans on the CPU, in f32 and f64: the plan's
//! `convolution` steps run here instead of the interpreter's tap-by-tap
//! reference (which stays the oracle they are tested against).
//!
//! A convolution is a matrix product per batch item and group,
//! `out[p, o] = Σ_k col[p, k] · w[k, o]` over the output positions `p` and
//! `k = (tap, channel)`. The `col` rows (im2col) are gathered a tile of
//! positions at a time, so no full im2col buffer is ever made, and each
//! tile goes through the `gemm` crate straight into the output in its own
//! layout (contiguous or channels-last; into a contiguous one in f32 with
//! AVX-512, through [`crate::panel`]'s kernel, which reads the weights in
//! place rather than packing them per tile); tiles run on rayon's threads. A
//! 1×1 convolution with stride 1 and no padding reads the input as the
//! matrix itself; a depthwise convolution (one input and one output
//! channel per group), where a product would have one column, runs as
//! its own loop over the taps (`crate::depthwise`); 3×3 convolutions with
//! stride 1 in f32 by Winograd's algorithm where the CPU has AVX-512 or
//! AVX2 and FMA (`crate::winograd`).

use kiln_ir::spatial::{Conv, Pool, Spatial, Window, adaptive_window, conv_output_shape};
use kiln_ir::view::Geometry;
use kiln_ir::{DType, Result};
use rayon::prelude::*;

use crate::storage::Buffer;
use crate::strided::Shared;
use crate::wide::widest_vectors;

/// One operand: its buffer's start and its geometry, in elements.
#[derive(Clone, Copy)]
pub struct Operand<'a> {
    /// The buffer's first byte.
    pub ptr: *mut u8,
    /// Shape, strides and offset in elements.
    pub geometry: &'a Geometry,
}

/// The element types convolved here.
pub(crate) trait Element:
    Copy + Default + Send + Sync + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> + 'static
{
    const ONE: Self;
    const NEG_INFINITY: Self;
    /// Whether this is f32 (which has hand-written AVX-512 kernels).
    const IS_F32: bool;
}

impl Element for f32 {
    const ONE: f32 = 1.0;
    const NEG_INFINITY: f32 = f32::NEG_INFINITY;
    const IS_F32: bool = true;
}

impl Element for f64 {
    const ONE: f64 = 1.0;
    const NEG_INFINITY: f64 = f64::NEG_INFINITY;
    const IS_F32: bool = false;
}

/// A convolution's pointwise tail on host buffers
/// (`kiln_passes::plan::Tail`): `out = relu?((y · scale + shift) +
/// residual)`, `scale` and `shift` per output channel, each view over the
/// convolution's result shape.
pub struct Tail<'a> {
    /// Per output channel (stride 0 but along dim 1).
    pub scale: Option<Operand<'a>>,
    /// Per output channel, added after the scale.
    pub shift: Option<Operand<'a>>,
    /// Added after the shift, element by element.
    pub residual: Option<Operand<'a>>,
    /// Whether `x < 0 ? 0 : x` is last.
    pub relu: bool,
    /// The tail's result.
    pub out: Operand<'a>,
}

/// An operand's values along dim `dim` (at index 0 of the dims before
/// it): a bias's, or a tail's per-channel scale or shift (dim 1).
///
/// # Safety
/// The operand addresses its buffer as its geometry says, with elements
/// of `T`.
unsafe fn along<T: Copy>(o: &Operand, dim: usize) -> Vec<T> {
    let g = o.geometry;
    let base = o.ptr.cast::<T>();
    (0..g.shape[dim])
        .map(|i| {
            let mut index = vec![0; dim + 1];
            index[dim] = i;
            // SAFETY: inside the buffer, as its geometry says.
            unsafe { *base.offset(g.element_offset(&index) as isize) }
        })
        .collect()
}

/// A convolution's pointwise tail as its kernels apply it to their output
/// blocks ([`Tail`] resolved for f32): each output `y` becomes
/// `relu?((y · scale[o] + shift[o]) + residual)`, written to `out`, laid
/// out (as the residual) as the convolution's result, each op rounded as
/// the tail's kernel rounds it.
pub(crate) struct Epilogue {
    pub(crate) scale: Option<Vec<f32>>,
    pub(crate) shift: Option<Vec<f32>>,
    /// At the residual's first element.
    pub(crate) residual: Option<*const f32>,
    pub(crate) relu: bool,
    /// At the tail's first result.
    pub(crate) out: *mut f32,
}

// SAFETY: the residual is read, and the result written, only at the
// positions of each task's own outputs.
unsafe impl Sync for Epilogue {}

impl Epilogue {
    /// The tail of `f32` result `y`'s channels `o0..o0 + n` (`y` at their
    /// first element, element `at` of the layout) over `positions`
    /// positions, steps `c_stride` and `p_stride` apart: what the kernels
    /// without a tail in registers run on each output block they write,
    /// while it is in cache.
    ///
    /// # Safety
    /// The block is inside `y`, the residual and the result, which do not
    /// overlap `y`.
    unsafe fn block(
        &self,
        y: *const f32,
        at: i64,
        (o0, n): (i64, i64),
        positions: i64,
        (c_stride, p_stride): (i64, i64),
    ) {
        for o in 0..n {
            let c = (o0 + o) as usize;
            let scale = self.scale.as_ref().map(|s| s[c]);
            let shift = self.shift.as_ref().map(|s| s[c]);
            for p in 0..positions {
                let i = (o * c_stride + p * p_stride) as isize;
                // SAFETY: inside the block, as the caller vouches.
                unsafe {
                    let mut v = *y.offset(i);
                    if let Some(s) = scale {
                        v *= s;
                    }
                    if let Some(t) = shift {
                        v += t;
                    }
                    *self.out.offset(at as isize + i) = self.finish(v, at as isize + i);
                }
            }
        }
    }

    /// The residual add and ReLU of the result's element `at` (of the
    /// layout), `v` being its value after the scale and shift.
    ///
    /// # Safety
    /// The residual holds element `at`.
    pub(crate) unsafe fn finish(&self, mut v: f32, at: isize) -> f32 {
        if let Some(r) = self.residual {
            // SAFETY: as the caller vouches.
            v += unsafe { *r.offset(at) };
        }
        if self.relu && v < 0.0 {
            v = 0.0;
        }
        v
    }
}

/// What [`convolution`] ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Convolved {
    /// Nothing: no kernel here for it.
    No,
    /// The convolution into its own result.
    Plain,
    /// The convolution with its tail applied in the output tile, into the
    /// tail's result (the convolution's own is not written).
    WithTail,
}

/// Runs `convolution` when this file has a kernel for it (f32 or f64, not
/// transposed, an output whose spatial dims flatten), with `tail` applied
/// where the kernel can ([`Convolved`]).
/// `weight`, when given, is the buffer `w` points into, whose bytes
/// nothing writes while this runs nor later without renumbering them (a
/// program input the run does not write): what is derived from the
/// weight (Winograd's transform) is then kept
/// (`crate::packed::transformed`).
///
/// # Safety
/// Each pointer must address a buffer holding every element its geometry
/// describes; `out` and the tail's result must not overlap the operands
/// (the tail's own operands aside, read at the positions written);
/// `conv` must have been checked against the operand shapes
/// (`kiln_ir::spatial::conv_params`).
#[allow(clippy::too_many_arguments)]
pub unsafe fn convolution(
    conv: &Conv,
    dtype: DType,
    x: Operand,
    w: Operand,
    bias: Option<Operand>,
    out: Operand,
    weight: Option<&Buffer>,
    tail: Option<&Tail>,
) -> Result<Convolved> {
    if conv.transposed || !flattens(out.geometry, 2) {
        return Ok(Convolved::No);
    }
    // SAFETY: forwarded from the caller.
    unsafe {
        Ok(match dtype {
            DType::F32 => run::<f32>(conv, x, w, bias, out, weight, tail),
            DType::F64 => run::<f64>(conv, x, w, bias, out, weight, None),
            _ => Convolved::No,
        })
    }
}

/// Whether the dims from `from` on flatten into one with a single stride.
fn flattens(g: &Geometry, from: usize) -> bool {
    (from..g.rank().saturating_sub(1))
        .all(|d| g.shape[d] == 1 || g.strides[d] == g.strides[d + 1] * g.shape[d + 1])
}

/// The geometry of a convolution, in elements.
pub(crate) struct Shape {
    pub(crate) batch: i64,
    pub(crate) groups: i64,
    pub(crate) in_per_group: i64,
    pub(crate) out_per_group: i64,
    pub(crate) in_size: Vec<i64>,
    pub(crate) out_size: Vec<i64>,
    /// Output positions per plane.
    pub(crate) positions: i64,
    /// Kernel taps, as multi-indices into the kernel.
    pub(crate) taps: Vec<Vec<i64>>,
}

unsafe fn run<T: Element>(
    conv: &Conv,
    x: Operand,
    w: Operand,
    bias: Option<Operand>,
    out: Operand,
    weight: Option<&Buffer>,
    tail: Option<&Tail>,
) -> Convolved {
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
    // SAFETY (each `along`): the operands address their buffers.
    let bias_values: Option<Vec<T>> = bias.map(|b| unsafe { along(&b, 0) });
    // The tail, in f32 where its result and residual are laid out as the
    // convolution's result (the output blocks' offsets serve them all).
    let epilogue = tail
        .filter(|t| {
            T::IS_F32
                && t.out.geometry.strides == og.strides
                && t.residual.is_none_or(|r| r.geometry.strides == og.strides)
        })
        .map(|t| {
            // (T is f32 here.)
            let at = |o: &Operand| base(o).ptr().cast::<f32>();
            // SAFETY (both `along`s): each view addresses its buffer.
            Epilogue {
                scale: t.scale.map(|s| unsafe { along(&s, 1) }),
                shift: t.shift.map(|s| unsafe { along(&s, 1) }),
                residual: t.residual.map(|r| at(&r).cast_const()),
                relu: t.relu,
                out: at(&t.out),
            }
        });
    let ran = match epilogue {
        Some(_) => Convolved::WithTail,
        None => Convolved::Plain,
    };
    #[cfg(target_arch = "x86_64")]
    if T::IS_F32 && crate::winograd::applies(conv, &shape, wg) {
        let cast = |p: Shared<T>| p.ptr().cast::<f32>();
        // SAFETY: T is f32; forwarded.
        let done = unsafe {
            let bias = bias_values
                .as_deref()
                .map(|b| std::slice::from_raw_parts(b.as_ptr().cast::<f32>(), b.len()));
            crate::winograd::run(
                conv,
                &shape,
                cast(xp),
                xg,
                cast(base(&w)),
                wg,
                bias,
                (cast(op), og),
                weight,
                epilogue.as_ref(),
            )
        };
        if done {
            return ran;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = weight;
    if shape.in_per_group == 1 && shape.out_per_group == 1 {
        // SAFETY: forwarded.
        unsafe {
            crate::depthwise::depthwise(
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
        return Convolved::Plain;
    }
    let prefer = if xg.strides[1] == 1 && shape.in_per_group > 1 {
        Order::TapMajor
    } else {
        Order::ChannelMajor
    };
    let weights = weights(&shape, base(&w), wg, prefer);
    // SAFETY: forwarded.
    unsafe {
        products(
            conv,
            &shape,
            xp,
            xg,
            &weights,
            bias_values.as_deref(),
            (op, og),
            epilogue.as_ref(),
        )
    };
    ran
}

/// How `k` numbers a group's (tap, channel) pairs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    /// `k = tap · C/g + c`: channels innermost (channels-last inputs).
    TapMajor,
    /// `k = c · taps + tap`: taps innermost (contiguous weights).
    ChannelMajor,
}

impl Order {
    fn k(self, tap: usize, c: usize, taps: usize, cg: usize) -> usize {
        match self {
            Order::TapMajor => tap * cg + c,
            Order::ChannelMajor => c * taps + tap,
        }
    }
}

/// The weights as a `[k, o]` matrix per group: the weight tensor itself
/// when its layout numbers `k` with one stride (contiguous weights in
/// channel-major order, channels-last ones in tap-major order), else a
/// packed copy.
struct Weights<T> {
    ptr: Shared<T>,
    group_stride: i64,
    k_stride: i64,
    o_stride: i64,
    order: Order,
    _packed: Vec<T>,
}

fn weights<T: Element>(s: &Shape, w: Shared<T>, wg: &Geometry, prefer: Order) -> Weights<T> {
    let taps = s.taps.len() as i64;
    let (cg, og) = (s.in_per_group, s.out_per_group);
    let ws1 = wg.strides[1];
    let tap_stride = if taps == 1 {
        Some(0)
    } else if flattens(wg, 2) {
        Some(wg.strides[wg.rank() - 1])
    } else {
        None
    };
    // The k stride of each order where it is uniform.
    let uniform = |order: Order| -> Option<i64> {
        let t = tap_stride?;
        match order {
            _ if taps == 1 => Some(ws1),
            _ if cg == 1 => Some(t),
            Order::ChannelMajor => (ws1 == t * taps).then_some(t),
            Order::TapMajor => (t == ws1 * cg).then_some(ws1),
        }
    };
    let other = match prefer {
        Order::TapMajor => Order::ChannelMajor,
        Order::ChannelMajor => Order::TapMajor,
    };
    for order in [prefer, other] {
        // The row-major gather writes tap-major rows only.
        if order != prefer && prefer == Order::TapMajor {
            continue;
        }
        if let Some(k_stride) = uniform(order) {
            return Weights {
                ptr: w,
                group_stride: og * wg.strides[0],
                k_stride,
                o_stride: wg.strides[0],
                order,
                _packed: Vec::new(),
            };
        }
    }
    let k = taps * cg;
    let mut packed = vec![T::default(); (s.groups * k * og) as usize];
    for g in 0..s.groups {
        for (t, tap) in s.taps.iter().enumerate() {
            let tap_off: i64 = tap.iter().zip(&wg.strides[2..]).map(|(i, st)| i * st).sum();
            for c in 0..cg {
                for o in 0..og {
                    let src = (g * og + o) * wg.strides[0] + c * ws1 + tap_off;
                    let dst = (g * k + t as i64 * cg + c) * og + o;
                    // SAFETY: inside the weight's buffer, as its geometry says.
                    packed[dst as usize] = unsafe { *w.ptr().offset(src as isize) };
                }
            }
        }
    }
    Weights {
        ptr: Shared(packed.as_mut_ptr()),
        group_stride: k * og,
        k_stride: og,
        o_stride: 1,
        order: Order::TapMajor,
        _packed: packed,
    }
}

/// The flat output position `p` as a multi-index.
pub(crate) fn unflatten(mut p: i64, size: &[i64], index: &mut [i64]) {
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
    weights: &Weights<T>,
    bias: Option<&[T]>,
    (out, og): (Shared<T>, &Geometry),
    epilogue: Option<&Epilogue>,
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
    // Tiles of at most about 256k column elements (1 MiB of f32), as
    // many per plane as there are threads (or a multiple), so that the
    // threads finish together.
    let threads = rayon::current_num_threads() as i64;
    let tile = if pointwise {
        s.positions
    } else {
        let planes = s.batch * s.groups;
        let by_size = (s.positions * k + (1 << 18) - 1) >> 18;
        // Few positions (the last stages of a CNN: 7×7) make short tiles
        // that waste the gemm's blocking: one tile per plane then, and the
        // gemm splits its columns across the threads instead.
        let per_plane = if planes >= threads || s.positions < 256 * threads {
            by_size
        } else {
            by_size.max(threads / planes.max(1))
        };
        let per_plane = if per_plane > 1 {
            (per_plane + threads - 1) / threads * threads
        } else {
            1
        };
        ((s.positions + per_plane - 1) / per_plane).max(1)
    };
    let tiles = (s.positions + tile - 1) / tile.max(1);
    // With fewer tiles than threads, each tile's output channels are split
    // among the threads instead (each gathers its own copy of the tile).
    let chunks = if s.batch * s.groups * tiles < threads && n >= 16 * threads {
        threads
    } else {
        1
    };
    let chunk = (n + chunks - 1) / chunks;
    // (As many chunks as that size needs: with n = 512 channels over 28
    // threads, chunks of 19 make 27, and a 28th would start past the
    // last channel.)
    let chunks = (n + chunk - 1) / chunk.max(1);
    let items: Vec<(i64, i64, i64, i64)> = (0..s.batch)
        .flat_map(|b| {
            (0..s.groups).flat_map(move |g| {
                (0..tiles).flat_map(move |t| (0..chunks).map(move |c| (b, g, t, c)))
            })
        })
        .collect();
    let parallel_gemm = (items.len() as i64) < threads;
    // (AVX-512 only: on AVX2 the panel kernel's 16 × 6 blocks, reading
    // the weights in place, were no faster than gemm's packed ones:
    // ResNet-18 at batch 8 270–300 ms on gemm, 310–330 on the panels.)
    #[cfg(target_arch = "x86_64")]
    let panel_available = crate::panel::wide();
    let run_item = |&(b, g, t, c): &(i64, i64, i64, i64)| {
        let p0 = t * tile;
        let rows = tile.min(s.positions - p0);
        let o0 = c * chunk;
        let n = chunk.min(n - o0);
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
            if xg.strides[1] == 1 {
                gather(conv, s, x, xg, x_base, p0, rows, &mut col);
                (col.as_ptr(), 1, k)
            } else {
                gather_planar(conv, s, x, xg, x_base, p0, rows, weights.order, &mut col);
                (col.as_ptr(), rows, 1)
            }
        };
        let at = b * og.strides[0] + (g * s.out_per_group + o0) * og.strides[1] + p0 * p_stride;
        // SAFETY: inside the output's buffer.
        let dst = Shared(unsafe { out.ptr().offset(at as isize) });
        // The tail on the block just written, in cache (T is f32 where
        // there is one).
        let tail = || {
            if let Some(e) = epilogue {
                let channels = (g * s.out_per_group + o0, n);
                let strides = (og.strides[1], p_stride);
                // SAFETY: this item's block of the result, of the tail's
                // result and of its residual (laid out alike).
                unsafe { e.block(dst.ptr().cast::<f32>(), at, channels, rows, strides) };
            }
        };
        if let Some(bias) = bias {
            for p in 0..rows {
                for o in 0..n {
                    // SAFETY: inside this tile of the output.
                    unsafe {
                        *dst.ptr()
                            .offset((p * p_stride + o * og.strides[1]) as isize) =
                            bias[(g * s.out_per_group + o0 + o) as usize]
                    };
                }
            }
        }
        // SAFETY: the group's weights, inside their buffer.
        let rhs = unsafe {
            weights
                .ptr
                .ptr()
                .offset((g * weights.group_stride + o0 * weights.o_stride) as isize)
        } as *const T;
        let (w_k, w_o) = (weights.k_stride, weights.o_stride);
        let parallelism = if parallel_gemm && rows * n * k >= 1 << 18 {
            gemm::Parallelism::Rayon(threads as usize)
        } else {
            gemm::Parallelism::None
        };
        // out[p, o] = col[p, k] · w[k, o]; into an output whose positions
        // are contiguous (NCHW) as its transpose, out[o, p] = wᵀ · colᵀ,
        // which the gemm crate runs faster into that layout.
        let (m, nn, d_cs, d_rs, a, a_cs, a_rs, b_, b_cs, b_rs) = if p_stride == 1 && n > 1 {
            (
                n,
                rows,
                p_stride,
                og.strides[1],
                rhs,
                w_k,
                w_o,
                lhs,
                lhs_rs,
                lhs_cs,
            )
        } else {
            (
                rows,
                n,
                og.strides[1],
                p_stride,
                lhs,
                lhs_cs,
                lhs_rs,
                rhs,
                w_o,
                w_k,
            )
        };
        // Into an NCHW output from a `col` (or input) whose positions are
        // contiguous, in f32 with AVX-512: the tile's product on the
        // panel kernel, positions in its 64-lane blocks and each weight
        // broadcast in place, nothing packed (gemm packs the group's
        // weights for every tile: ResNet-18's 512-channel 3×3 layer at
        // batch 8 packs 9.4 MB per image).
        #[cfg(target_arch = "x86_64")]
        if T::IS_F32 && p_stride == 1 && lhs_rs == 1 && !parallel_gemm && panel_available {
            use crate::panel::{Out, Panel, Rows, product};
            // SAFETY: as for gemm below; T is f32.
            unsafe {
                product(
                    Panel {
                        ptr: lhs.cast::<f32>(),
                        k_stride: lhs_cs as isize,
                    },
                    Rows {
                        ptr: rhs.cast::<f32>(),
                        j_stride: w_o as isize,
                        k_stride: w_k as isize,
                    },
                    Out {
                        ptr: dst.ptr().cast::<f32>(),
                        j_stride: og.strides[1] as isize,
                    },
                    (rows as usize, n as usize, k as usize),
                    bias.is_some(),
                )
            };
            drop(col);
            tail();
            return;
        }
        // SAFETY: the tile's rows of the output, of `col` (or the input),
        // and the group's packed weights, with their strides.
        unsafe {
            gemm::gemm::<T>(
                m as usize,
                nn as usize,
                k as usize,
                dst.ptr(),
                d_cs as isize,
                d_rs as isize,
                bias.is_some(),
                a,
                a_cs as isize,
                a_rs as isize,
                b_,
                b_cs as isize,
                b_rs as isize,
                T::ONE,
                T::ONE,
                false,
                false,
                false,
                parallelism,
            );
        }
        drop(col);
        tail();
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

/// The runs of output positions `p0..p0 + rows` under tap `tap`, a row
/// of the output (its last dim) at a time: `(first position of the tile,
/// length, first input offset from x_base or −1 for padding, step)`. Along
/// a row, the positions whose tap is inside the input read evenly spaced
/// inputs (consecutive for stride 1), those in the padding nothing.
#[allow(clippy::too_many_arguments)]
fn tap_runs(
    conv: &Conv,
    s: &Shape,
    xg: &Geometry,
    x_base: i64,
    tap: &[i64],
    p0: i64,
    rows: i64,
    runs: &mut Vec<(usize, usize, i64, i64)>,
) {
    runs.clear();
    let last = conv.dims - 1;
    let width = s.out_size[last];
    let (stride, pad, dil) = (conv.stride[last], conv.padding[last], conv.dilation[last]);
    let x_step = xg.strides[last + 2];
    let (lo, hi) = outputs_of(tap[last], dil, stride, pad, s.in_size[last], width);
    let mut push = |r: i64, len: i64, start: i64, step: i64| match runs.last_mut() {
        // Padding runs merge across rows.
        Some((at, n, -1, _)) if start < 0 && *at + *n == r as usize => *n += len as usize,
        _ => runs.push((r as usize, len as usize, start, step)),
    };
    let mut index = vec![0i64; conv.dims];
    let (mut p, end) = (p0, p0 + rows);
    while p < end {
        unflatten(p, &s.out_size, &mut index);
        let w0 = index[last];
        let w1 = (w0 + end - p).min(width);
        let r = p - p0;
        // The input row under the tap, if inside the input.
        let base = (0..last).try_fold(x_base, |base, d| {
            let i = index[d] * conv.stride[d] - conv.padding[d] + tap[d] * conv.dilation[d];
            (i >= 0 && i < s.in_size[d]).then_some(base + i * xg.strides[d + 2])
        });
        match base {
            None => push(r, w1 - w0, -1, 1),
            Some(base) => {
                let (a, b) = (lo.clamp(w0, w1), hi.clamp(w0, w1));
                if a > w0 {
                    push(r, a - w0, -1, 1);
                }
                if b > a {
                    let first = base + (a * stride - pad + tap[last] * dil) * x_step;
                    push(r + a - w0, b - a, first, stride * x_step);
                }
                if w1 > b {
                    push(r + b - w0, w1 - b, -1, 1);
                }
            }
        }
        p += w1 - w0;
    }
}

/// The `col` matrix of output positions `p0..p0 + rows` stored by
/// columns (`col[k · rows + r]`), for inputs whose channels are not
/// innermost: each (tap, channel) column reads along the input's rows.
#[allow(clippy::too_many_arguments)]
fn gather_planar<T: Element>(
    conv: &Conv,
    s: &Shape,
    x: Shared<T>,
    xg: &Geometry,
    x_base: i64,
    p0: i64,
    rows: i64,
    order: Order,
    col: &mut [T],
) {
    let cg = s.in_per_group as usize;
    let taps = s.taps.len();
    let c_stride = xg.strides[1];
    #[cfg(target_arch = "x86_64")]
    let wide = crate::lanes::uses_avx512();
    let mut runs = Vec::new();
    for (t, tap) in s.taps.iter().enumerate() {
        tap_runs(conv, s, xg, x_base, tap, p0, rows, &mut runs);
        let rows = rows as usize;
        for c in 0..cg {
            let kk = order.k(t, c, taps, cg);
            let column = &mut col[kk * rows..(kk + 1) * rows];
            let shift = c as i64 * c_stride;
            for &(r, len, start, step) in &runs {
                let dst = &mut column[r..r + len];
                if start < 0 {
                    dst.fill(T::default());
                } else if step == 1 {
                    // SAFETY: `len` consecutive inputs from `start`, inside
                    // the input's buffer.
                    let src = unsafe {
                        std::slice::from_raw_parts(x.ptr().offset((start + shift) as isize), len)
                    };
                    dst.copy_from_slice(src);
                } else {
                    // SAFETY: `len` inputs `step` apart from `start`, inside
                    // the input's buffer.
                    let src = unsafe { x.ptr().offset((start + shift) as isize) };
                    #[cfg(target_arch = "x86_64")]
                    if T::IS_F32 && step == 2 && wide {
                        // SAFETY: as above (2·len − 1 inputs from src); T is
                        // f32; the CPU has AVX-512F.
                        unsafe {
                            crate::avx512::every_other(
                                src.cast::<f32>(),
                                std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<f32>(), len),
                            )
                        };
                        continue;
                    }
                    for (i, v) in dst.iter_mut().enumerate() {
                        *v = unsafe { *src.offset(i as isize * step as isize) };
                    }
                }
            }
        }
    }
}

/// The outputs `o` (of `n`) whose tap `i` reads `o·s − pad + i·d` inside
/// `[0, size)`: the range `[lo, hi)`.
pub(crate) fn outputs_of(i: i64, d: i64, s: i64, pad: i64, size: i64, n: i64) -> (i64, i64) {
    let shift = i * d - pad;
    let lo = if shift < 0 { (-shift + s - 1) / s } else { 0 };
    let hi = if size - 1 - shift < 0 {
        0
    } else {
        (size - 1 - shift) / s + 1
    };
    (lo.min(n), hi.clamp(lo.min(n), n))
}

/// Runs a pool, an adaptive pool or a resampling when this file has a
/// kernel for it (f32 or f64; integer pools and u8 resampling go to the
/// interpreter); `false` otherwise. `outputs` are the values and, for the
/// max pools that give them, the positions (int64).
///
/// # Safety
/// As for [`convolution`]; the op's parameters must have been checked
/// against the input's shape (`kiln_ir::spatial::pool_params`).
pub unsafe fn window(
    spatial: &Spatial,
    dtype: DType,
    x: Operand,
    outputs: &[Operand],
) -> Result<bool> {
    // SAFETY: forwarded from the caller.
    unsafe {
        match dtype {
            DType::F32 => window_typed::<f32>(spatial, x, outputs),
            DType::F64 => window_typed::<f64>(spatial, x, outputs),
            _ => Ok(false),
        }
    }
}

/// What one output element of a window op reads.
enum Reads {
    /// A pool's window: start per dim (may be negative), kernel, dilation.
    Pool(Pool),
    /// Adaptive windows.
    Adaptive(bool),
    /// Resampling taps per dim and output position: (source, weight).
    Taps(Vec<Vec<Vec<(i64, f64)>>>),
}

unsafe fn window_typed<T: Element + Into<f64> + FromF64 + PartialOrd>(
    spatial: &Spatial,
    x: Operand,
    outputs: &[Operand],
) -> Result<bool> {
    let Some(values) = outputs.first() else {
        return Ok(false);
    };
    let (dims, reads) = match spatial {
        Spatial::Pool { pool, .. } => (pool.dims, Reads::Pool(pool.clone())),
        Spatial::Adaptive(a) => (a.dims, Reads::Adaptive(a.max)),
        Spatial::Resample(r) => {
            let (xs, os) = (&x.geometry.shape, &values.geometry.shape);
            let taps = r.taps(&xs[xs.len() - r.dims..], &os[os.len() - r.dims..]);
            (r.dims, Reads::Taps(taps))
        }
        _ => return Ok(false),
    };
    let (xg, og) = (x.geometry, values.geometry);
    let rank = xg.rank();
    let lead = rank - dims;
    let in_size = &xg.shape[lead..];
    let out_size = &og.shape[lead..];
    let planes: Vec<Vec<i64>> = crate::tensor::Indices::new(&xg.shape[..lead]).collect();
    let base = |o: &Operand| -> Shared<u8> { Shared(o.ptr) };
    let (xp, vp) = (base(&x), base(values));
    let ip = outputs.get(1).map(|o| (base(o), o.geometry));
    let positions: i64 = out_size.iter().product();
    if let (Reads::Pool(pool), 2) = (&reads, dims) {
        // The 2-D pools (ResNet's and MobileNet's), as plain loops.
        planes.par_iter().for_each(|plane| {
            let at = |g: &Geometry| g.element_offset(plane);
            // SAFETY: this plane of the input and of the results.
            unsafe {
                pool2d::<T>(
                    pool,
                    (xp.ptr() as *const T).offset(at(xg) as isize),
                    &xg.strides[lead..],
                    in_size,
                    (vp.ptr() as *mut T).offset(at(og) as isize),
                    &og.strides[lead..],
                    out_size,
                    ip.map(|(p, g)| {
                        (
                            (p.ptr() as *mut i64).offset(at(g) as isize),
                            &g.strides[lead..],
                        )
                    }),
                )
            }
        });
        return Ok(true);
    }
    if let (Reads::Taps(taps), 2) = (&reads, dims) {
        // 2-D resampling an output row at a time: each source row's
        // weight times the row's horizontal interpolation, whose taps are
        // laid out by tap (struct of arrays) for vectorized loops.
        let (os, xs) = (&og.strides[lead..], &xg.strides[lead..]);
        let count = taps[1].first().map_or(0, Vec::len);
        let cols = Columns {
            src: (0..count)
                .map(|k| taps[1].iter().map(|t| t[k].0 * xs[1]).collect())
                .collect(),
            weight: (0..count)
                .map(|k| taps[1].iter().map(|t| t[k].1).collect())
                .collect(),
        };
        #[cfg(target_arch = "x86_64")]
        let windows = if T::IS_F32 {
            Windows::new(&cols, xs[1])
        } else {
            None
        };
        planes.par_iter().for_each(|plane| {
            let at = |g: &Geometry| g.element_offset(plane);
            let (x0, v0) = (at(xg), at(og));
            let mut acc = vec![-0f64; out_size[1] as usize];
            // The windows' source rows of an output row (kept across rows).
            #[cfg(target_arch = "x86_64")]
            let mut sources: Vec<(*const f32, f64)> = Vec::new();
            // SAFETY: a source row, inside the input.
            let source =
                |sh: i64| unsafe { (xp.ptr() as *const T).offset((x0 + sh * xs[0]) as isize) };
            for (oh, rows) in taps[0].iter().enumerate() {
                let row = v0 + oh as i64 * os[0];
                #[cfg(target_arch = "x86_64")]
                if let Some(windows) = &windows {
                    sources.clear();
                    sources.extend(rows.iter().map(|&(sh, wh)| (source(sh).cast::<f32>(), wh)));
                    // SAFETY: T is f32; the windows are the columns'
                    // sources, inside the rows; the output row's columns
                    // at its stride; AVX-512 (Windows::new).
                    unsafe {
                        windows.row(
                            &sources,
                            &cols,
                            (vp.ptr() as *mut f32).offset(row as isize),
                            os[1],
                        )
                    };
                    continue;
                }
                // From −0.0, as the interpreter's sums of taps: a single
                // tap (nearest) or a sum of negative zeros keeps its sign.
                acc.fill(-0.0);
                for &(sh, wh) in rows {
                    // SAFETY: the columns' sources are inside the row.
                    unsafe { resample_row(&mut acc, source(sh), &cols, wh) };
                }
                for (ow, a) in acc.iter().enumerate() {
                    // SAFETY: inside the result's plane.
                    unsafe {
                        *(vp.ptr() as *mut T).offset((row + ow as i64 * os[1]) as isize) =
                            T::from_f64(*a)
                    };
                }
            }
        });
        return Ok(true);
    }
    let plane_len: i64 = in_size.iter().product();
    if matches!(reads, Reads::Adaptive(false))
        && out_size.iter().all(|n| *n == 1)
        && plane_len > 0
        && flattens(xg, lead)
        && xg.strides[rank - 1] == 1
    {
        // A global average pool (a CNN's last: 1×512×7×7) over planes
        // whose elements are contiguous: each plane's sum in order, as the
        // window loop below computes it (which took 0.11 ms for that, its
        // index arithmetic per element), several planes to a task.
        let per_task = ((1 << 14) / plane_len).max(1) as usize;
        planes.par_iter().with_min_len(per_task).for_each(|plane| {
            let at = |g: &Geometry| g.element_offset(plane);
            // SAFETY: the plane's elements, contiguous inside the input.
            let values = unsafe {
                std::slice::from_raw_parts(
                    (xp.ptr() as *const T).offset(at(xg) as isize),
                    plane_len as usize,
                )
            };
            let sum = values.iter().fold(0.0, |s, v| s + (*v).into());
            // SAFETY: the plane's one output.
            unsafe {
                *(vp.ptr() as *mut T).offset(at(og) as isize) = T::from_f64(sum / plane_len as f64)
            };
        });
        return Ok(true);
    }
    planes.par_iter().for_each(|plane| {
        let at = |g: &Geometry| g.element_offset(plane);
        let (x0, v0) = (at(xg), at(og));
        let i0 = ip.map(|(_, g)| at(g));
        let xs = &xg.strides[lead..];
        let read = |off: i64| -> T {
            // SAFETY: inside the input's buffer (callers check bounds).
            unsafe { *(xp.ptr() as *const T).offset(off as isize) }
        };
        let mut index = vec![0i64; dims];
        let mut lo = vec![0i64; dims];
        let mut hi = vec![0i64; dims];
        let mut k = vec![0i64; dims];
        let origin = vec![0i64; dims];
        for _ in 0..positions {
            let out_off: i64 = index
                .iter()
                .zip(&og.strides[lead..])
                .map(|(i, s)| i * s)
                .sum();
            let (value, position): (f64, i64) = match &reads {
                Reads::Pool(pool) => {
                    let max = matches!(pool.window, Window::Max);
                    let mut pool_size = 1;
                    for d in 0..dims {
                        let s = index[d] * pool.stride[d] - pool.padding[d];
                        if max {
                            // Taps s + j·dilation inside the input.
                            let first = if s < 0 {
                                (-s + pool.dilation[d] - 1) / pool.dilation[d]
                            } else {
                                0
                            };
                            let last = ((in_size[d] - 1 - s).div_euclid(pool.dilation[d]) + 1)
                                .min(pool.kernel[d]);
                            lo[d] = first;
                            hi[d] = last.max(first);
                        } else {
                            let e = (s + pool.kernel[d]).min(in_size[d] + pool.padding[d]);
                            pool_size *= e - s;
                            lo[d] = s.max(0);
                            hi[d] = e.min(in_size[d]).max(lo[d]);
                        }
                    }
                    let count: i64 = (0..dims).map(|d| hi[d] - lo[d]).product();
                    if max {
                        let mut best = f64::NEG_INFINITY;
                        let mut at_pos = -1;
                        k.copy_from_slice(&lo);
                        for _ in 0..count {
                            let mut off = x0;
                            let mut flat = 0;
                            for d in 0..dims {
                                let i = index[d] * pool.stride[d] - pool.padding[d]
                                    + k[d] * pool.dilation[d];
                                off += i * xs[d];
                                flat = flat * in_size[d] + i;
                            }
                            let v: f64 = read(off).into();
                            // PyTorch's rule: the first tap's position, then
                            // any larger value or NaN (the last NaN wins).
                            if at_pos < 0 {
                                at_pos = flat;
                            }
                            if v > best || v.is_nan() {
                                best = v;
                                at_pos = flat;
                            }
                            step(&mut k, &lo, &hi);
                        }
                        (best, at_pos.max(0))
                    } else if count == 0 {
                        (0.0, 0)
                    } else {
                        let Window::Avg {
                            count_include_pad,
                            divisor_override,
                        } = pool.window
                        else {
                            unreachable!("max pools are handled above")
                        };
                        let mut sum = 0.0;
                        k.copy_from_slice(&lo);
                        for _ in 0..count {
                            let off: i64 = x0 + k.iter().zip(xs).map(|(i, s)| i * s).sum::<i64>();
                            sum += read(off).into();
                            step(&mut k, &lo, &hi);
                        }
                        let divisor = divisor_override.unwrap_or(if count_include_pad {
                            pool_size
                        } else {
                            count
                        });
                        (sum / divisor as f64, 0)
                    }
                }
                Reads::Adaptive(max) => {
                    for d in 0..dims {
                        let (s, e) = adaptive_window(index[d], in_size[d], out_size[d]);
                        lo[d] = s;
                        hi[d] = e;
                    }
                    let count: i64 = (0..dims).map(|d| hi[d] - lo[d]).product();
                    k.copy_from_slice(&lo);
                    let (mut sum, mut best, mut at_pos) = (0.0, f64::NEG_INFINITY, -1i64);
                    for _ in 0..count {
                        let off: i64 = x0 + k.iter().zip(xs).map(|(i, s)| i * s).sum::<i64>();
                        let v: f64 = read(off).into();
                        if *max {
                            let flat = k.iter().zip(in_size).fold(0, |f, (i, n)| f * n + i);
                            if at_pos < 0 {
                                at_pos = flat;
                            }
                            if v > best || v.is_nan() {
                                best = v;
                                at_pos = flat;
                            }
                        } else {
                            sum += v;
                        }
                        step(&mut k, &lo, &hi);
                    }
                    if *max {
                        (best, at_pos.max(0))
                    } else {
                        (sum / count as f64, 0)
                    }
                }
                Reads::Taps(taps) => {
                    let per: Vec<&Vec<(i64, f64)>> =
                        (0..dims).map(|d| &taps[d][index[d] as usize]).collect();
                    if per.iter().all(|t| t.len() == 1) {
                        let off: i64 =
                            x0 + per.iter().zip(xs).map(|(t, s)| t[0].0 * s).sum::<i64>();
                        (read(off).into(), 0)
                    } else {
                        for d in 0..dims {
                            lo[d] = 0;
                            hi[d] = per[d].len() as i64;
                        }
                        let count: i64 = hi.iter().product();
                        k.fill(0);
                        // From −0.0, as the interpreter's sums of taps.
                        let mut acc = -0.0;
                        for _ in 0..count {
                            let mut w = 1.0;
                            let mut off = x0;
                            for d in 0..dims {
                                let (src, wd) = per[d][k[d] as usize];
                                w *= wd;
                                off += src * xs[d];
                            }
                            acc += w * read(off).into();
                            step(&mut k, &lo, &hi);
                        }
                        (acc, 0)
                    }
                }
            };
            // SAFETY: inside the results' buffers, this plane's part.
            unsafe {
                *(vp.ptr() as *mut T).offset((v0 + out_off) as isize) = T::from_f64(value);
                if let (Some((p, g)), Some(i0)) = (ip, i0) {
                    let off: i64 = index
                        .iter()
                        .zip(&g.strides[lead..])
                        .map(|(i, s)| i * s)
                        .sum();
                    *(p.ptr() as *mut i64).offset((i0 + off) as isize) = position;
                }
            }
            step(&mut index, &origin, out_size);
        }
    });
    Ok(true)
}

widest_vectors! {
    /// A 2-D max or average pool over one plane (PyTorch's window and NaN
    /// rules, as the interpreter's reference), an output row at a time: for
    /// each tap, the outputs whose window holds it inside the input update
    /// together, branch-free (each output still sees its taps in PyTorch's
    /// order, so the first maximum's position and the last NaN win).
    ///
    /// # Safety
    /// The pointers address the plane's first element in each buffer, with
    /// these strides and sizes.
    unsafe fn pool2d<T: [Element + Into<f64> + FromF64 + PartialOrd]>(
        pool: &Pool,
        x: *const T,
        xs: &[i64],
        in_size: &[i64],
        out: *mut T,
        os: &[i64],
        out_size: &[i64],
        indices: Option<(*mut i64, &[i64])>,
    ) => pool2d_plain
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pool2d_plain<T: Element + Into<f64> + FromF64 + PartialOrd>(
    pool: &Pool,
    x: *const T,
    xs: &[i64],
    in_size: &[i64],
    out: *mut T,
    os: &[i64],
    out_size: &[i64],
    indices: Option<(*mut i64, &[i64])>,
) {
    let (kh, kw) = (pool.kernel[0], pool.kernel[1]);
    let (sh, sw) = (pool.stride[0], pool.stride[1]);
    let (ph, pw) = (pool.padding[0], pool.padding[1]);
    let (dh, dw) = (pool.dilation[0], pool.dilation[1]);
    let (ih_n, iw_n) = (in_size[0], in_size[1]);
    let ow_n = out_size[1] as usize;
    let mut best = vec![T::NEG_INFINITY; ow_n];
    let mut at = vec![-1i64; ow_n];
    let mut sum = vec![0f64; ow_n];
    let by_halves = matches!(pool.window, Window::Max)
        && indices.is_none()
        && sw == 2
        && xs[1] == 1
        && os[1] == 1;
    let mut halves = by_halves.then(|| Halves::new(pool, iw_n, ow_n));
    for oh in 0..out_size[0] {
        let hs = oh * sh - ph;
        match pool.window {
            Window::Max if let Some(halves) = &mut halves => {
                // SAFETY: forwarded; the output row oh is inside its plane.
                unsafe { halves.row(x, xs[0], (hs, ih_n), out.offset((oh * os[0]) as isize)) };
            }
            Window::Max => {
                best.fill(T::NEG_INFINITY);
                at.fill(-1);
                for j in 0..kh {
                    let ih = hs + j * dh;
                    if ih < 0 || ih >= ih_n {
                        continue;
                    }
                    // SAFETY: row ih is inside the plane.
                    let row = unsafe { x.offset((ih * xs[0]) as isize) };
                    for i in 0..kw {
                        let (lo, hi) = outputs_of(i, dw, sw, pw, iw_n, out_size[1]);
                        if indices.is_none() {
                            // Values only: a loop the compiler vectorizes.
                            let (shift, step) = ((i * dw - pw) * xs[1], sw * xs[1]);
                            for (k, b) in best[lo as usize..hi as usize].iter_mut().enumerate() {
                                // SAFETY: the tap is inside the row.
                                let v = unsafe {
                                    *row.offset((shift + (lo + k as i64) * step) as isize)
                                };
                                #[allow(clippy::eq_op)]
                                let take = v > *b || v != v;
                                *b = if take { v } else { *b };
                            }
                            continue;
                        }
                        for ow in lo as usize..hi as usize {
                            let iw = ow as i64 * sw - pw + i * dw;
                            // SAFETY: iw is inside the row.
                            let v = unsafe { *row.offset((iw * xs[1]) as isize) };
                            #[allow(clippy::eq_op)]
                            let take = v > best[ow] || v != v;
                            let first = at[ow] < 0;
                            let here = ih * iw_n + iw;
                            best[ow] = if take { v } else { best[ow] };
                            at[ow] = if take || first { here } else { at[ow] };
                        }
                    }
                }
                for ow in 0..ow_n {
                    // SAFETY: inside the results' planes.
                    unsafe {
                        *out.offset((oh * os[0] + ow as i64 * os[1]) as isize) = best[ow];
                        if let Some((p, s)) = indices {
                            *p.offset((oh * s[0] + ow as i64 * s[1]) as isize) = at[ow].max(0);
                        }
                    }
                }
            }
            Window::Avg {
                count_include_pad,
                divisor_override,
            } => {
                sum.fill(0.0);
                let (h0, h1) = (hs.max(0), (hs + kh).min(ih_n));
                for ih in h0..h1 {
                    // SAFETY: row ih is inside the plane.
                    let row = unsafe { x.offset((ih * xs[0]) as isize) };
                    for i in 0..kw {
                        let (lo, hi) = outputs_of(i, 1, sw, pw, iw_n, out_size[1]);
                        for ow in lo as usize..hi as usize {
                            let iw = ow as i64 * sw - pw + i;
                            // SAFETY: iw is inside the row.
                            sum[ow] += unsafe { *row.offset((iw * xs[1]) as isize) }.into();
                        }
                    }
                }
                let he = (hs + kh).min(ih_n + ph);
                for ow in 0..ow_n {
                    let ws = ow as i64 * sw - pw;
                    let we = (ws + kw).min(iw_n + pw);
                    let pool_size = (he - hs) * (we - ws);
                    let (w0, w1) = (ws.max(0), we.min(iw_n));
                    let count = (h1 - h0).max(0) * (w1 - w0).max(0);
                    let value = if count == 0 {
                        0.0
                    } else {
                        let divisor = divisor_override.unwrap_or(if count_include_pad {
                            pool_size
                        } else {
                            count
                        });
                        sum[ow] / divisor as f64
                    };
                    // SAFETY: inside the result's plane.
                    unsafe {
                        *out.offset((oh * os[0] + ow as i64 * os[1]) as isize) = T::from_f64(value)
                    };
                }
            }
        }
    }
}

/// Values-only 2-D max pools of stride 2 along contiguous rows (ResNet's
/// 3×3/2), an output row at a time: each of the window's input rows is
/// split into its even and odd columns, with −inf where the padding and
/// the ceil-mode overhang are (no tap of PyTorch's rule takes −inf over
/// what it holds), so that every tap of 16 outputs reads 16 contiguous
/// values, and the 16 running maxima stay in a register across the taps
/// (1×64×112×112: 0.9 → 0.3 ms). Each output sees its taps in the
/// reference's order, row by row, so the first maximum and the last NaN
/// win as there.
struct Halves<T> {
    /// Per kernel row, the even columns then the odd ones, `len` each.
    planes: Vec<T>,
    len: usize,
    /// Per tap of a row: which half (0 even, 1 odd) and its first index.
    taps: Vec<(usize, usize)>,
    /// Input columns are at `column + off` in the halves' interleaving.
    off: usize,
    kh: i64,
    dh: i64,
    iw: usize,
    ow: usize,
}

/// Outputs a [`Halves`] row computes together (one AVX-512 register of f32).
const POOL_BLOCK: usize = 16;

impl<T: Element + PartialOrd> Halves<T> {
    fn new(pool: &Pool, iw_n: i64, ow_n: usize) -> Halves<T> {
        let (kh, kw) = (pool.kernel[0], pool.kernel[1]);
        let (pw, dw) = (
            pool.padding[1].max(0) as usize,
            pool.dilation[1].max(1) as usize,
        );
        let off = pw + pw % 2;
        let taps: Vec<(usize, usize)> = (0..kw.max(0) as usize)
            .map(|i| {
                let t = i * dw + off - pw;
                (t % 2, t / 2)
            })
            .collect();
        let last_tap = taps.iter().map(|t| t.1).max().unwrap_or(0);
        let iw = iw_n.max(0) as usize;
        let len = (last_tap + ow_n.div_ceil(POOL_BLOCK) * POOL_BLOCK).max((iw + off) / 2 + 1);
        Halves {
            planes: vec![T::NEG_INFINITY; kh.max(0) as usize * 2 * len],
            len,
            taps,
            off,
            kh,
            dh: pool.dilation[0],
            iw,
            ow: ow_n,
        }
    }

    /// The output row whose window starts at input row `hs` (of `ih_n`),
    /// from the plane at `x` (rows `row_stride` apart, columns contiguous)
    /// into `out` (contiguous).
    ///
    /// # Safety
    /// The plane's rows hold `iw` elements each; `out` holds the row.
    #[inline(always)]
    unsafe fn row(&mut self, x: *const T, row_stride: i64, (hs, ih_n): (i64, i64), out: *mut T) {
        let mut rows = 0;
        for j in 0..self.kh {
            let ih = hs + j * self.dh;
            if ih < 0 || ih >= ih_n {
                continue;
            }
            // SAFETY: row ih of the plane.
            let src = unsafe {
                std::slice::from_raw_parts(x.offset((ih * row_stride) as isize), self.iw)
            };
            let plane = &mut self.planes[rows * 2 * self.len..(rows + 1) * 2 * self.len];
            // Column c is at c + off, off even: even columns to the even
            // half, odd ones to the odd half, from off / 2 on.
            let (even, odd) = plane.split_at_mut(self.len);
            let h = self.off / 2;
            let pairs = src.chunks_exact(2);
            if let [last] = pairs.remainder() {
                even[h + self.iw / 2] = *last;
            }
            for ((e, o), pair) in even[h..].iter_mut().zip(&mut odd[h..]).zip(pairs) {
                *e = pair[0];
                *o = pair[1];
            }
            rows += 1;
        }
        let mut ow0 = 0;
        while ow0 < self.ow {
            let mut acc = [T::NEG_INFINITY; POOL_BLOCK];
            for r in 0..rows {
                let plane = &self.planes[r * 2 * self.len..(r + 1) * 2 * self.len];
                for &(half, first) in &self.taps {
                    let at = half * self.len + first + ow0;
                    let taps = &plane[at..at + POOL_BLOCK];
                    for (b, &v) in acc.iter_mut().zip(taps) {
                        #[allow(clippy::eq_op)]
                        let take = v > *b || v != v;
                        *b = if take { v } else { *b };
                    }
                }
            }
            let n = POOL_BLOCK.min(self.ow - ow0);
            // SAFETY: outputs ow0..ow0 + n of the row.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), out.add(ow0), n) };
            ow0 += POOL_BLOCK;
        }
    }
}

/// The horizontal taps of a 2-D resampling, by tap: source offsets (in
/// elements) and weights per output column.
struct Columns {
    src: Vec<Vec<i64>>,
    weight: Vec<Vec<f64>>,
}

widest_vectors! {
    /// `acc[ow] += wh · Σ_k weight[k][ow] · row[src[k][ow]]`, compiled again
    /// for AVX2 and AVX-512 and chosen at run time (see `crate::wide`).
    ///
    /// # Safety
    /// Every source offset must be inside the row.
    unsafe fn resample_row<T: [Element + Into<f64>]>(acc: &mut [f64], row: *const T, cols: &Columns, wh: f64) => resample_row_plain
}

#[inline(always)]
unsafe fn resample_row_plain<T: Element + Into<f64>>(
    acc: &mut [f64],
    row: *const T,
    cols: &Columns,
    wh: f64,
) {
    for (src, weight) in cols.src.iter().zip(&cols.weight) {
        for ((a, s), w) in acc.iter_mut().zip(src).zip(weight) {
            // SAFETY: the caller's contract.
            let x: f64 = unsafe { *row.offset(*s as isize) }.into();
            *a += wh * w * x;
        }
    }
}

/// A 2-D resampling's columns as windows of the source row, where each
/// block of 16 outputs reads, per tap, at most 16 consecutive inputs
/// (upsampling, and downsampling by less than 16/15): one masked load and
/// a permutation per block instead of 16 gathered elements (bilinear ×2
/// of 1×64×128×128: 5.7 → 2.1 ms, the sums in registers).
#[cfg(target_arch = "x86_64")]
struct Windows {
    /// Per tap, per block: its first source, the mask of the inputs it
    /// reads from there, and each output's offset from the first.
    blocks: Vec<Vec<(i64, std::arch::x86_64::__mmask16, [i32; 16])>>,
}

#[cfg(target_arch = "x86_64")]
impl Windows {
    /// The windows of `cols` over a row of stride `stride`: `None` unless
    /// the row is contiguous, the CPU has AVX-512F and every block's
    /// sources fit in 16 inputs.
    fn new(cols: &Columns, stride: i64) -> Option<Windows> {
        if stride != 1 || !crate::lanes::uses_avx512() {
            return None;
        }
        let blocks = cols
            .src
            .iter()
            .map(|src| {
                src.chunks(16)
                    .map(|block| {
                        let lo = *block.iter().min()?;
                        let hi = *block.iter().max()?;
                        if hi - lo >= 16 {
                            return None;
                        }
                        let mut lanes = [0i32; 16];
                        for (l, s) in lanes.iter_mut().zip(block) {
                            *l = (s - lo) as i32;
                        }
                        let mask = crate::avx512::first_lanes((hi - lo + 1) as usize);
                        Some((lo, mask, lanes))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Windows { blocks })
    }

    /// An output row: `Σ_(row, wh) Σ_k wh · weight[k][ow] · row[src[k][ow]]`
    /// from −0.0, as [`resample_row`] and the interpreter compute it (the
    /// same operations in f64, in the same order), rounded to f32 into
    /// `out` at column stride `step`, 16 outputs at a time in registers.
    ///
    /// # Safety
    /// The CPU has AVX-512F; the columns' sources are inside each row;
    /// `out` addresses the output row's columns at `step`.
    #[target_feature(enable = "avx512f")]
    unsafe fn row(&self, rows: &[(*const f32, f64)], cols: &Columns, out: *mut f32, step: i64) {
        use std::arch::x86_64::*;
        let n = cols.weight.first().map_or(0, Vec::len);
        for b in 0..n.div_ceil(16) {
            let o = 16 * b;
            let outputs = crate::avx512::first_lanes(n - o);
            let mut acc = [_mm512_set1_pd(-0.0); 2];
            for &(row, wh) in rows {
                let wh = _mm512_set1_pd(wh);
                for (blocks, weight) in self.blocks.iter().zip(&cols.weight) {
                    let (first, reads, lanes) = &blocks[b];
                    // SAFETY: the block's sources, inside the row; its
                    // outputs' weights (masked to the row's end).
                    unsafe {
                        let window = _mm512_maskz_loadu_ps(*reads, row.offset(*first as isize));
                        let x = _mm512_permutexvar_ps(crate::avx512::indices(lanes), window);
                        let upper = _mm512_extractf64x4_pd::<1>(_mm512_castps_pd(x));
                        let halves = [
                            _mm512_cvtps_pd(_mm512_castps512_ps256(x)),
                            _mm512_cvtps_pd(_mm256_castpd_ps(upper)),
                        ];
                        for (h, (x, acc)) in halves.into_iter().zip(&mut acc).enumerate() {
                            let m = (outputs >> (8 * h)) as u8;
                            // (Past the weights where no lane is read.)
                            let w =
                                _mm512_maskz_loadu_pd(m, weight.as_ptr().wrapping_add(o + 8 * h));
                            *acc = _mm512_add_pd(*acc, _mm512_mul_pd(_mm512_mul_pd(wh, w), x));
                        }
                    }
                }
            }
            let (lo, hi) = (_mm512_cvtpd_ps(acc[0]), _mm512_cvtpd_ps(acc[1]));
            let y = _mm512_castpd_ps(_mm512_insertf64x4::<1>(
                _mm512_castps_pd(_mm512_castps256_ps512(lo)),
                _mm256_castps_pd(hi),
            ));
            // SAFETY: the block's outputs in the row (masked to its end).
            unsafe {
                let at = out.offset(o as isize * step as isize);
                if step == 1 {
                    _mm512_mask_storeu_ps(at, outputs, y);
                } else {
                    let mut v = [0f32; 16];
                    _mm512_storeu_ps(v.as_mut_ptr(), y);
                    for (l, v) in v.iter().enumerate().take((n - o).min(16)) {
                        *at.offset(l as isize * step as isize) = *v;
                    }
                }
            }
        }
    }
}

/// Advances a multi-index over the box `[lo, hi)`, last dim fastest.
fn step(index: &mut [i64], lo: &[i64], hi: &[i64]) {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < hi[d] {
            return;
        }
        index[d] = lo[d];
    }
}

/// Rounding an f64 result to the element type.
trait FromF64 {
    fn from_f64(v: f64) -> Self;
}

impl FromF64 for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl FromF64 for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With more threads than tiles, a convolution splits its output
    /// channels among the threads; with 512 channels over 28 threads the
    /// chunks of 19 are 27, and a 28th started past the last channel (a
    /// negative count: writes past the output). Against the direct sum,
    /// with 2, 3 and 28 threads, on images of 16 and 36 Winograd tiles
    /// (whose tasks split their output channels into ranges of at least
    /// 32: 70 of them into 36 and 34 over two or more threads, 512 into
    /// sixteen of 32 over 28) and of 9 (direct).
    #[test]
    fn channel_chunks_stay_inside_the_output_with_many_threads() {
        for threads in [2, 3, 28] {
            for (o, h) in [(512, 7), (70, 7), (70, 12), (64, 5)] {
                convolve_and_check(16, o, h, threads);
            }
        }
    }

    fn convolve_and_check(c: i64, o: i64, h: i64, threads: usize) {
        let x: Vec<f32> = (0..c * h * h)
            .map(|i| ((i * 7) % 13) as f32 / 6.0 - 1.0)
            .collect();
        let w: Vec<f32> = (0..o * c * 9)
            .map(|i| ((i * 5) % 11) as f32 / 5.0 - 1.0)
            .collect();
        // A guard band past the output, which must stay untouched.
        let len = (o * h * h) as usize;
        let mut out = vec![f32::NAN; len + 4096];
        let conv = Conv {
            dims: 2,
            stride: vec![1, 1],
            padding: vec![1, 1],
            dilation: vec![1, 1],
            transposed: false,
            output_padding: vec![0, 0],
            groups: 1,
        };
        let (xg, wg, og) = (
            Geometry::contiguous(&[1, c, h, h]),
            Geometry::contiguous(&[o, c, 3, 3]),
            Geometry::contiguous(&[1, o, h, h]),
        );
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let operand = |p: *mut f32, g| Operand {
                ptr: p.cast(),
                geometry: g,
            };
            // SAFETY: each buffer holds its geometry's elements.
            let done = unsafe {
                convolution(
                    &conv,
                    DType::F32,
                    operand(x.as_ptr() as *mut f32, &xg),
                    operand(w.as_ptr() as *mut f32, &wg),
                    None,
                    operand(out.as_mut_ptr(), &og),
                    None,
                    None,
                )
            };
            assert_eq!(done.unwrap(), Convolved::Plain);
        });
        assert!(
            out[len..].iter().all(|v| v.is_nan()),
            "written past the output"
        );
        for oc in 0..o {
            for y in 0..h {
                for xx in 0..h {
                    let mut want = 0f64;
                    for ic in 0..c {
                        for (i, j) in (0..3).flat_map(|i| (0..3).map(move |j| (i, j))) {
                            let (sy, sx) = (y + i - 1, xx + j - 1);
                            if (0..h).contains(&sy) && (0..h).contains(&sx) {
                                want += f64::from(x[(ic * h * h + sy * h + sx) as usize])
                                    * f64::from(w[(((oc * c + ic) * 3 + i) * 3 + j) as usize]);
                            }
                        }
                    }
                    let got = f64::from(out[(oc * h * h + y * h + xx) as usize]);
                    assert!(
                        (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{o}x{h}x{h} on {threads} threads [{oc}, {y}, {xx}]: {got} vs {want}"
                    );
                }
            }
        }
    }
}
