//! Depthwise convolution for compiled plans on the CPU (one input and one
//! output channel per group, MobileNet's 3×3 and 5×5 layers): a product
//! per channel would have a single column, so it runs as loops of its own,
//! vectorized along whichever dim of the input is contiguous.
//!
//! - **Rows** (NCHW, an input row contiguous): each channel's plane on a
//!   thread; per output row and kernel row, the outputs whose taps all lie
//!   inside the input row add the kernel row's taps in one pass
//!   (unrolled for kernels up to 7 wide), the few at the edges tap by tap.
//! - **Channels** (channels_last, channels contiguous in input and
//!   output): each output row on a thread; per output position, blocks of
//!   channels sum their taps in registers, with the weights packed once
//!   as `[tap][channel]`.
//! - Anything else (3-D, other strides) goes tap by tap.
//!
//! In f32 on CPUs with AVX-512, or AVX2 and FMA, both have hand-written
//! kernels (the `vectors` module, one body for both widths over
//! [`crate::lanes`]: LLVM keeps short fixed-size blocks scalar): 64 (32)
//! outputs of a row in four registers, or a register of channels of up to
//! 8 positions, with masked loads in place of the edge cases (a lane whose
//! tap falls in the padding loads nothing), and fused multiply-adds.
//!
//! On every path an output adds its bias, then its taps in the kernel's
//! row-major order (the interpreter, the reference, sums in f64).

use kiln_ir::spatial::Conv;
use kiln_ir::view::Geometry;
use rayon::prelude::*;

use crate::spatial::{Element, Shape, outputs_of, unflatten};
use crate::strided::Shared;
use crate::wide::widest_vectors;

/// A 1-D or 2-D depthwise convolution seen as 2-D (1-D with a height of
/// 1): per spatial dim, the sizes, the window and the strides.
#[derive(Clone, Copy)]
struct Window2 {
    in_size: [i64; 2],
    out_size: [i64; 2],
    kernel: [i64; 2],
    stride: [i64; 2],
    padding: [i64; 2],
    dilation: [i64; 2],
    /// Input, output and weight strides of the two spatial dims.
    xs: [i64; 2],
    os: [i64; 2],
    ws: [i64; 2],
}

impl Window2 {
    fn new(conv: &Conv, s: &Shape, xg: &Geometry, wg: &Geometry, og: &Geometry) -> Option<Self> {
        let two = |v: &[i64], pad: i64| -> [i64; 2] {
            match v.len() {
                1 => [pad, v[0]],
                _ => [v[0], v[1]],
            }
        };
        (conv.dims <= 2).then(|| Window2 {
            in_size: two(&s.in_size, 1),
            out_size: two(&s.out_size, 1),
            kernel: two(&wg.shape[2..], 1),
            stride: two(&conv.stride, 1),
            padding: two(&conv.padding, 0),
            dilation: two(&conv.dilation, 1),
            xs: two(&xg.strides[2..], 0),
            os: two(&og.strides[2..], 0),
            ws: two(&wg.strides[2..], 0),
        })
    }

    fn taps(&self) -> usize {
        (self.kernel[0] * self.kernel[1]) as usize
    }

    /// The outputs along a row whose tap `i` is inside the input row.
    fn along(&self, i: i64) -> (i64, i64) {
        let (d, s, p) = (self.dilation[1], self.stride[1], self.padding[1]);
        outputs_of(i, d, s, p, self.in_size[1], self.out_size[1])
    }

    /// The outputs along a row all of whose taps are inside the input row
    /// (`(n, n)` when none is, so that `..lo` and `hi..` cover the row).
    fn interior(&self) -> (i64, i64) {
        let n = self.out_size[1];
        let (lo, hi) = (0..self.kernel[1]).fold((0, n), |(lo, hi), i| {
            let (l, h) = self.along(i);
            (lo.max(l), hi.min(h))
        });
        if lo < hi { (lo, hi) } else { (n, n) }
    }

    /// The kernel rows `j` that output row `oh` reads inside the input,
    /// with the input row `ih` each reads.
    fn rows_inside(&self, oh: i64) -> impl Iterator<Item = (i64, i64)> + '_ {
        (0..self.kernel[0]).filter_map(move |j| {
            let ih = oh * self.stride[0] - self.padding[0] + j * self.dilation[0];
            (ih >= 0 && ih < self.in_size[0]).then_some((j, ih))
        })
    }
}

/// Runs a depthwise convolution (`in_per_group == out_per_group == 1`).
///
/// # Safety
/// The pointers are the operands' first elements, and their geometries
/// are the convolution's checked operands.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn depthwise<T: Element>(
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
    let channels = s.groups;
    let start: Vec<T> = match bias {
        Some(b) => b.to_vec(),
        None => vec![T::default(); channels as usize],
    };
    if let Some(window) = Window2::new(conv, s, xg, wg, og) {
        // Weights as `[channel][tap]` (rows) or `[tap][channel]` (channels).
        let packed = |tap_major: bool| -> Vec<T> {
            let taps = window.taps() as i64;
            let mut v = vec![T::default(); (channels * taps) as usize];
            for c in 0..channels {
                for t in 0..taps {
                    let (j, i) = (t / window.kernel[1], t % window.kernel[1]);
                    let src = c * wg.strides[0] + j * window.ws[0] + i * window.ws[1];
                    let dst = if tap_major {
                        t * channels + c
                    } else {
                        c * taps + t
                    };
                    // SAFETY: inside the weight's buffer, as its geometry says.
                    v[dst as usize] = unsafe { *w.ptr().offset(src as isize) };
                }
            }
            v
        };
        // Rows where an input row is contiguous, else channel blocks where
        // channels are contiguous in input and output.
        let rows = window.xs[1] == 1;
        if rows || (xg.strides[1] == 1 && og.strides[1] == 1) {
            let job = Job {
                window,
                x,
                out,
                x_planes: [xg.strides[0], xg.strides[1]],
                o_planes: [og.strides[0], og.strides[1]],
                weights: packed(!rows),
                start,
                channels,
            };
            // Tasks: (image, channel) planes, or (image, output row) lines.
            let inner = if rows { channels } else { window.out_size[0] };
            let tasks: Vec<(i64, i64)> = (0..s.batch)
                .flat_map(|b| (0..inner).map(move |i| (b, i)))
                .collect();
            #[cfg(target_arch = "x86_64")]
            if T::IS_F32
                && (!rows || window.stride[1] == 1 && window.os[1] == 1)
                && let Some((planes, lines)) = vectors::kernels()
            {
                // SAFETY: T is f32 (the kernels were chosen for the CPU).
                let job = unsafe { &*(&job as *const Job<T>).cast::<Job<f32>>() };
                let kernel = if rows { planes } else { lines };
                // SAFETY: each task writes its own plane or row of the output.
                tasks
                    .par_iter()
                    .for_each(|&(b, i)| unsafe { kernel(job, b, i) });
                return;
            }
            let kernel = if rows {
                plane_by_rows::<T>
            } else {
                line_by_channels::<T>
            };
            // SAFETY: as above.
            tasks
                .par_iter()
                .for_each(|&(b, i)| unsafe { kernel(&job, b, i) });
            return;
        }
    }
    // SAFETY: forwarded.
    unsafe { depthwise_any(conv, s, x, xg, w, wg, &start, out, og) };
}

/// What the vectorized loops read: the window, the operands and their
/// batch and channel strides, the packed weights and each channel's
/// starting value (its bias, or zero).
struct Job<T> {
    window: Window2,
    x: Shared<T>,
    out: Shared<T>,
    x_planes: [i64; 2],
    o_planes: [i64; 2],
    weights: Vec<T>,
    start: Vec<T>,
    channels: i64,
}

widest_vectors! {
    /// One channel's plane, an output row at a time.
    unsafe fn plane_by_rows<T: [Element]>(job: &Job<T>, b: i64, c: i64) => plane_by_rows_plain
}

#[inline(always)]
unsafe fn plane_by_rows_plain<T: Element>(job: &Job<T>, b: i64, c: i64) {
    let g = &job.window;
    let kw = g.kernel[1] as usize;
    let ow_n = g.out_size[1] as usize;
    let (sw, dw, pw) = (g.stride[1], g.dilation[1], g.padding[1]);
    let x0 = b * job.x_planes[0] + c * job.x_planes[1];
    let o0 = b * job.o_planes[0] + c * job.o_planes[1];
    let weights = &job.weights[c as usize * g.taps()..(c as usize + 1) * g.taps()];
    let start = job.start[c as usize];
    // Per tap of a kernel row, the outputs it reads inside the input row;
    // the interior is where every tap does.
    let ranges: Vec<(usize, usize)> = (0..kw as i64)
        .map(|i| {
            let (lo, hi) = g.along(i);
            (lo as usize, hi as usize)
        })
        .collect();
    let (lo_all, hi_all) = g.interior();
    let (lo_all, hi_all) = (lo_all as usize, hi_all as usize);
    let mut acc = vec![start; ow_n];
    let x = job.x.ptr() as *const T;
    for oh in 0..g.out_size[0] {
        acc.fill(start);
        for (j, ih) in g.rows_inside(oh) {
            let row = x0 + ih * g.xs[0];
            let taps = &weights[j as usize * kw..(j as usize + 1) * kw];
            // The edges, tap by tap.
            for (i, (&(lo, hi), &wv)) in ranges.iter().zip(taps).enumerate() {
                for (a, e) in [(lo, hi.min(lo_all)), (lo.max(hi_all), hi)] {
                    for (k, acc) in acc.iter_mut().enumerate().take(e).skip(a) {
                        let iw = k as i64 * sw - pw + i as i64 * dw;
                        // SAFETY: tap i of output k is inside the input row.
                        *acc = *acc + unsafe { *x.offset((row + iw) as isize) } * wv;
                    }
                }
            }
            if lo_all < hi_all {
                // SAFETY: every tap of outputs lo_all..hi_all is inside
                // the input row, which starts at `first` for output lo_all.
                let first = unsafe { x.offset((row + lo_all as i64 * sw - pw) as isize) };
                let interior = &mut acc[lo_all..hi_all];
                let (step, dil) = (sw as usize, dw as usize);
                // SAFETY: as above.
                unsafe {
                    match kw {
                        1 => row_taps::<T, 1>(interior, first, taps, step, dil),
                        2 => row_taps::<T, 2>(interior, first, taps, step, dil),
                        3 => row_taps::<T, 3>(interior, first, taps, step, dil),
                        4 => row_taps::<T, 4>(interior, first, taps, step, dil),
                        5 => row_taps::<T, 5>(interior, first, taps, step, dil),
                        7 => row_taps::<T, 7>(interior, first, taps, step, dil),
                        _ => {
                            for (i, &wv) in taps.iter().enumerate() {
                                for (k, a) in interior.iter_mut().enumerate() {
                                    *a = *a + *first.add(k * step + i * dil) * wv;
                                }
                            }
                        }
                    }
                }
            }
        }
        let row = o0 + oh * g.os[0];
        for (ow, v) in acc.iter().enumerate() {
            // SAFETY: inside this task's plane of the output.
            unsafe { *job.out.ptr().offset((row + ow as i64 * g.os[1]) as isize) = *v };
        }
    }
}

/// `acc[k] += Σ_i w[i] · src[k·step + i·dil]`, the taps of one kernel row
/// added in order in one pass (a loop the compiler vectorizes for a unit
/// step).
///
/// # Safety
/// `src` holds every element the sums read.
#[inline(always)]
unsafe fn row_taps<T: Element, const KW: usize>(
    acc: &mut [T],
    src: *const T,
    taps: &[T],
    step: usize,
    dil: usize,
) {
    let w: [T; KW] = std::array::from_fn(|i| taps[i]);
    if step == 1 {
        for (k, a) in acc.iter_mut().enumerate() {
            let mut v = *a;
            for (i, wv) in w.iter().enumerate() {
                // SAFETY: the caller's.
                v = v + unsafe { *src.add(k + i * dil) } * *wv;
            }
            *a = v;
        }
    } else {
        for (k, a) in acc.iter_mut().enumerate() {
            let mut v = *a;
            for (i, wv) in w.iter().enumerate() {
                // SAFETY: the caller's.
                v = v + unsafe { *src.add(k * step + i * dil) } * *wv;
            }
            *a = v;
        }
    }
}

/// Channels summed in registers at a time by [`line_by_channels`].
const BLOCK: usize = 32;

widest_vectors! {
    /// One output row of a channels-last convolution.
    unsafe fn line_by_channels<T: [Element]>(job: &Job<T>, b: i64, oh: i64) => line_by_channels_plain
}

#[inline(always)]
unsafe fn line_by_channels_plain<T: Element>(job: &Job<T>, b: i64, oh: i64) {
    let g = &job.window;
    let channels = job.channels as usize;
    let x = job.x.ptr() as *const T;
    let mut taps: Vec<(i64, usize)> = Vec::with_capacity(g.taps());
    for ow in 0..g.out_size[1] {
        // The taps inside the input: their input offset and weight row.
        taps.clear();
        for (j, ih) in g.rows_inside(oh) {
            for i in 0..g.kernel[1] {
                let iw = ow * g.stride[1] - g.padding[1] + i * g.dilation[1];
                if iw >= 0 && iw < g.in_size[1] {
                    let offset = b * job.x_planes[0] + ih * g.xs[0] + iw * g.xs[1];
                    taps.push((offset, (j * g.kernel[1] + i) as usize * channels));
                }
            }
        }
        let dst = b * job.o_planes[0] + oh * g.os[0] + ow * g.os[1];
        let mut c0 = 0;
        while c0 < channels {
            let n = BLOCK.min(channels - c0);
            let mut acc = [T::default(); BLOCK];
            acc[..n].copy_from_slice(&job.start[c0..c0 + n]);
            for &(offset, w) in &taps {
                // SAFETY: n channels of an input position inside the
                // input; the weight row holds every channel.
                let src =
                    unsafe { std::slice::from_raw_parts(x.offset(offset as isize).add(c0), n) };
                block_taps(&mut acc[..n], src, &job.weights[w + c0..w + c0 + n]);
            }
            // SAFETY: this task's output row, channels contiguous.
            let out = unsafe { job.out.ptr().offset(dst as isize).add(c0) };
            for (l, v) in acc[..n].iter().enumerate() {
                // SAFETY: as above.
                unsafe { *out.add(l) = *v };
            }
            c0 += n;
        }
    }
}

/// The f32 kernels in vector registers, one body for AVX-512's 16 lanes
/// and AVX2's 8 ([`crate::lanes`]): four registers of outputs, 64 or 32.
#[cfg(target_arch = "x86_64")]
mod vectors {
    use crate::lanes::{Avx2, Avx512, Lanes};

    use super::Job;

    /// Registers per block.
    const VECTORS: usize = 4;

    /// A kernel: a task's plane or output row.
    pub(super) type Kernel = unsafe fn(&Job<f32>, i64, i64);

    /// The widest form of [`plane_by_rows`] and [`line_by_channels`] the
    /// CPU runs; none without AVX-512 or AVX2 and FMA.
    pub(super) fn kernels() -> Option<(Kernel, Kernel)> {
        if crate::lanes::uses_avx512() {
            Some((plane_by_rows_avx512, line_by_channels_avx512))
        } else if Avx2::available() {
            Some((plane_by_rows_avx2, line_by_channels_avx2))
        } else {
            None
        }
    }

    /// # Safety
    /// As for [`plane_by_rows`]; the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn plane_by_rows_avx512(job: &Job<f32>, b: i64, c: i64) {
        // SAFETY: forwarded; compiled for the CPU's AVX-512F.
        unsafe { plane_by_rows(Avx512::new(), job, b, c) }
    }

    /// # Safety
    /// As for [`plane_by_rows`]; the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn plane_by_rows_avx2(job: &Job<f32>, b: i64, c: i64) {
        // SAFETY: forwarded; compiled for the CPU's AVX2 and FMA.
        unsafe { plane_by_rows(Avx2::new(), job, b, c) }
    }

    /// # Safety
    /// As for [`line_by_channels`]; the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn line_by_channels_avx512(job: &Job<f32>, b: i64, oh: i64) {
        // SAFETY: forwarded; compiled for the CPU's AVX-512F.
        unsafe { line_by_channels(Avx512::new(), job, b, oh) }
    }

    /// # Safety
    /// As for [`line_by_channels`]; the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn line_by_channels_avx2(job: &Job<f32>, b: i64, oh: i64) {
        // SAFETY: forwarded; compiled for the CPU's AVX2 and FMA.
        unsafe { line_by_channels(Avx2::new(), job, b, oh) }
    }

    /// The lanes of a register whose index `first + lane` lies in
    /// `[lo, hi)`.
    #[inline(always)]
    fn lanes_in<L: Lanes>(l: L, first: i64, lo: i64, hi: i64) -> L::Mask {
        l.range(lo - first, hi - first)
    }

    /// One channel's plane, in blocks of 4N outputs of a row (N =
    /// `L::N`; a unit horizontal stride; the output's rows contiguous).
    /// Lane `l` of register `v` of the block at `ow0` reads, under tap
    /// `i`, input column `ow0 + Nv + l − pad + i·dil`: a masked load of the
    /// register's N columns, the lanes outside the row masked off.
    ///
    /// # Safety
    /// Inlined into a function compiled for `l`; the job's operands as
    /// its geometry says.
    #[inline(always)]
    unsafe fn plane_by_rows<L: Lanes>(l: L, job: &Job<f32>, b: i64, c: i64) {
        let g = &job.window;
        let n = L::N as i64;
        let kw = g.kernel[1];
        let (ow_n, iw_n) = (g.out_size[1], g.in_size[1]);
        let taps = g.taps();
        let weights = &job.weights[c as usize * taps..(c as usize + 1) * taps];
        let x = job.x.ptr() as *const f32;
        let x0 = b * job.x_planes[0] + c * job.x_planes[1];
        let o0 = b * job.o_planes[0] + c * job.o_planes[1];
        let start = l.splat(job.start[c as usize]);
        let mut masks = vec![[l.first(0); VECTORS]; kw as usize];
        let mut ow0 = 0;
        while ow0 < ow_n {
            for (i, m) in masks.iter_mut().enumerate() {
                let shift = i as i64 * g.dilation[1] - g.padding[1];
                for (v, m) in m.iter_mut().enumerate() {
                    let first = ow0 + v as i64 * n;
                    // Outputs of this row whose input column is inside:
                    // lanes of both ranges, itself a range.
                    let lo = (-first - shift).max(-first);
                    let hi = (iw_n - first - shift).min(ow_n - first);
                    *m = l.range(lo, hi);
                }
            }
            for oh in 0..g.out_size[0] {
                let mut acc = [start; VECTORS];
                for (j, ih) in g.rows_inside(oh) {
                    let row = x0 + ih * g.xs[0] + ow0 - g.padding[1];
                    for (i, m) in masks.iter().enumerate() {
                        let w = l.splat(weights[(j * kw) as usize + i]);
                        let at = row + i as i64 * g.dilation[1];
                        for v in 0..VECTORS {
                            // Masked-off lanes are not read (the address
                            // may lie outside the row: wrapping_offset).
                            let p = x.wrapping_offset((at + v as i64 * n) as isize);
                            // SAFETY: the lanes of m[v] are inside the row.
                            let xv = unsafe { l.load(p, m[v]) };
                            acc[v] = l.fma(xv, w, acc[v]);
                        }
                    }
                }
                let dst = o0 + oh * g.os[0] + ow0;
                for (v, a) in acc.iter().enumerate() {
                    let first = ow0 + v as i64 * n;
                    let p = job.out.ptr().wrapping_offset((dst + v as i64 * n) as isize);
                    // SAFETY: the lanes inside this task's output row.
                    unsafe { l.store(p, lanes_in(l, first, 0, ow_n), *a) };
                }
            }
            ow0 += n * VECTORS as i64;
        }
    }

    /// One output row of a channels-last convolution, a register of
    /// channels (the last masked) at a time: over the positions whose taps
    /// all lie inside the input row, 8 positions together (then 4, 2, 1),
    /// so that each tap's weights are loaded once for 8 multiply-adds; the
    /// positions at the edges one by one, skipping the taps in the padding.
    ///
    /// # Safety
    /// As for [`plane_by_rows`]; channels contiguous in input and output.
    #[inline(always)]
    unsafe fn line_by_channels<L: Lanes>(l: L, job: &Job<f32>, b: i64, oh: i64) {
        let g = &job.window;
        let (kw, ow_n) = (g.kernel[1], g.out_size[1]);
        // The kernel rows inside the input, with their input row's offset.
        let rows: Vec<(i64, i64)> = g
            .rows_inside(oh)
            .map(|(j, ih)| (j, b * job.x_planes[0] + ih * g.xs[0]))
            .collect();
        // The positions whose every tap is inside the row.
        let (lo, hi) = g.interior();
        let line = Line {
            l,
            job,
            rows: &rows,
            dst: b * job.o_planes[0] + oh * g.os[0],
        };
        // Neighbouring positions share input columns (3×3, stride 1).
        let unit = g.stride[1] == 1 && g.dilation[1] == 1;
        // Blocks of positions: (first, count), count 0 for an edge.
        let mut blocks = Vec::new();
        let mut ow = lo;
        for p in [8, 4, 2, 1] {
            while hi - ow >= p {
                blocks.push((ow, p));
                ow += p;
            }
        }
        blocks.extend((0..lo).chain(hi..ow_n).map(|ow| (ow, 0)));
        // Channels innermost, so that consecutive blocks read consecutive
        // memory.
        for &(ow, p) in &blocks {
            let mut c0 = 0;
            while c0 < job.channels {
                let m = lanes_in(l, c0, 0, job.channels);
                // SAFETY: the lanes of `m` are channels below `channels`;
                // the blocks' positions and taps as their callers vouch.
                unsafe {
                    let start = l.load(job.start.as_ptr().add(c0 as usize), m);
                    match p {
                        8 if unit && kw == 3 => line.inside_unit::<8, 3>(c0, m, start, ow),
                        8 => line.inside::<8>(c0, m, start, ow),
                        4 => line.inside::<4>(c0, m, start, ow),
                        2 => line.inside::<2>(c0, m, start, ow),
                        1 => line.inside::<1>(c0, m, start, ow),
                        _ => line.edge(c0, m, start, ow),
                    }
                }
                c0 += L::N as i64;
            }
        }
    }

    /// An output row of [`line_by_channels`]: the width, the job, the
    /// kernel rows inside the input (with their row's offset), the output
    /// row's offset.
    struct Line<'a, L> {
        l: L,
        job: &'a Job<f32>,
        rows: &'a [(i64, i64)],
        dst: i64,
    }

    impl<L: Lanes> Line<'_, L> {
        #[inline(always)]
        fn column(&self, ow: i64, i: i64) -> i64 {
            let g = &self.job.window;
            ow * g.stride[1] - g.padding[1] + i * g.dilation[1]
        }

        #[inline(always)]
        unsafe fn load(&self, m: L::Mask, at: i64) -> L::V {
            // SAFETY: the caller's.
            unsafe {
                self.l
                    .load((self.job.x.ptr() as *const f32).offset(at as isize), m)
            }
        }

        #[inline(always)]
        unsafe fn weight(&self, m: L::Mask, tap: i64, c0: i64) -> L::V {
            let at = tap * self.job.channels + c0;
            // SAFETY: the weights hold every tap's channels.
            unsafe {
                self.l
                    .load(self.job.weights.as_ptr().offset(at as isize), m)
            }
        }

        #[inline(always)]
        unsafe fn store(&self, m: L::Mask, ow: i64, c0: i64, v: L::V) {
            let at = self.dst + ow * self.job.window.os[1] + c0;
            // SAFETY: the caller's.
            unsafe { self.l.store(self.job.out.ptr().offset(at as isize), m, v) }
        }

        /// Positions `ow0..ow0 + P`, each of whose taps is inside the row.
        ///
        /// # Safety
        /// Inlined into a function compiled for the width; the positions
        /// inside the output row, their taps inside the input row.
        #[inline(always)]
        unsafe fn inside<const P: usize>(&self, c0: i64, m: L::Mask, start: L::V, ow0: i64) {
            let g = &self.job.window;
            let step = g.stride[1] * g.xs[1];
            let mut acc = [start; P];
            for &(j, row) in self.rows {
                for i in 0..g.kernel[1] {
                    // SAFETY: the caller's.
                    unsafe {
                        let wv = self.weight(m, j * g.kernel[1] + i, c0);
                        let at = row + self.column(ow0, i) * g.xs[1] + c0;
                        for (p, a) in acc.iter_mut().enumerate() {
                            *a = self.l.fma(self.load(m, at + p as i64 * step), wv, *a);
                        }
                    }
                }
            }
            for (p, a) in acc.iter().enumerate() {
                // SAFETY: the caller's.
                unsafe { self.store(m, ow0 + p as i64, c0, *a) };
            }
        }

        /// As [`Line::inside`], for a unit stride and dilation and `KW`
        /// taps a row: each input column is loaded once for the (up to)
        /// `KW` positions that read it, and a row's weights once.
        ///
        /// # Safety
        /// As for [`Line::inside`].
        #[inline(always)]
        unsafe fn inside_unit<const P: usize, const KW: usize>(
            &self,
            c0: i64,
            m: L::Mask,
            start: L::V,
            ow0: i64,
        ) {
            let g = &self.job.window;
            let mut acc = [start; P];
            for &(j, row) in self.rows {
                // SAFETY: the caller's.
                unsafe {
                    // (A loop, not `from_fn`: see `crate::lanes`.)
                    let mut w = [start; KW];
                    for (i, w) in w.iter_mut().enumerate() {
                        *w = self.weight(m, j * KW as i64 + i as i64, c0);
                    }
                    let at = row + self.column(ow0, 0) * g.xs[1] + c0;
                    for q in 0..P + KW - 1 {
                        let x = self.load(m, at + q as i64 * g.xs[1]);
                        // Column q is tap i of position q − i, taps in
                        // order for each position.
                        for (i, w) in w.iter().enumerate() {
                            if q >= i && q - i < P {
                                acc[q - i] = self.l.fma(x, *w, acc[q - i]);
                            }
                        }
                    }
                }
            }
            for (p, a) in acc.iter().enumerate() {
                // SAFETY: the caller's.
                unsafe { self.store(m, ow0 + p as i64, c0, *a) };
            }
        }

        /// Position `ow`, its taps in the padding skipped.
        ///
        /// # Safety
        /// Inlined into a function compiled for the width; the position
        /// inside the output row.
        #[inline(always)]
        unsafe fn edge(&self, c0: i64, m: L::Mask, start: L::V, ow: i64) {
            let g = &self.job.window;
            let mut acc = start;
            for &(j, row) in self.rows {
                for i in 0..g.kernel[1] {
                    let iw = self.column(ow, i);
                    if iw >= 0 && iw < g.in_size[1] {
                        // SAFETY: the tap is inside the input row.
                        unsafe {
                            let x = self.load(m, row + iw * g.xs[1] + c0);
                            let w = self.weight(m, j * g.kernel[1] + i, c0);
                            acc = self.l.fma(x, w, acc);
                        }
                    }
                }
            }
            // SAFETY: the caller's.
            unsafe { self.store(m, ow, c0, acc) };
        }
    }
}

/// `acc += src · w`, lane by lane (a loop the compiler vectorizes).
#[inline(always)]
fn block_taps<T: Element>(acc: &mut [T], src: &[T], w: &[T]) {
    for (a, (x, w)) in acc.iter_mut().zip(src.iter().zip(w)) {
        *a = *a + *x * *w;
    }
}

/// A depthwise convolution of any rank and layout, tap by tap.
#[allow(clippy::too_many_arguments)]
unsafe fn depthwise_any<T: Element>(
    conv: &Conv,
    s: &Shape,
    x: Shared<T>,
    xg: &Geometry,
    w: Shared<T>,
    wg: &Geometry,
    start: &[T],
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
        let mut index = vec![0i64; dims];
        for p in 0..s.positions {
            unflatten(p, &s.out_size, &mut index);
            let mut acc = start[c as usize];
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
