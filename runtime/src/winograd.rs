//! 3×3 convolutions with stride 1 in f32 by Winograd's minimal filtering
//! F(2×2, 3×3) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
//! Networks", 2016): each 2×2 block of outputs (a tile) comes from a 4×4
//! patch of the input, and in the transformed domain the 9 multiply-adds
//! per output and input channel become 4, as 16 matrix products over the
//! channels (one per point of the 4×4 transform), on [`crate::panel`]'s
//! kernel. ResNet's 3×3 layers are most of its time; ONNX Runtime and
//! OpenVINO (oneDNN) run them this way on CPUs too.
//!
//! With `d` a 4×4 input patch, `g` a 3×3 kernel and `m` the products' 4×4
//! result, the tile is `Aᵀ m A` where `m = Σ_c (G g Gᵀ) ⊙ (Bᵀ d B)` and
//!
//! ```text
//!      | 1  0 -1  0 |        | 1    0    0  |
//! Bᵀ = | 0  1  1  0 |    G = | 1/2  1/2  1/2 |    Aᵀ = | 1  1  1  0 |
//!      | 0 -1  1  0 |        | 1/2 -1/2  1/2 |         | 0  1 -1 -1 |
//!      | 0  1  0 -1 |        | 0    0    1  |
//! ```
//!
//! The transforms are exact but for the halves in `G` (exact in binary)
//! and the reassociated sums, so results differ from the direct sum by a
//! few roundings, as oneDNN's Winograd convolutions do.
//!
//! Each task takes a few rows of tiles of one image (or several whole
//! small images, their tiles side by side in the panels): it copies each
//! input channel's rows under them into a zero-padded plane split into
//! even and odd columns (so that every transform is a contiguous vector
//! operation over the tiles of a row), transforms them into 16 panels
//! `[channel][tile]`, runs the 16 products against the transformed weights
//! (`[point][out channel][channel]`: made once and kept while a weight that
//! is a program input lives, as packed weights are, else once per call),
//! and transforms the results back into the output with the bias. The
//! transforms and copies run a register of tiles at a time, 16 in
//! AVX-512's or 8 in AVX2's ([`crate::lanes`]: one body for both),
//! masked at a row's end ([`groups`]: rows of ResNet's images are 4 to
//! 28 tiles, which compiled loops left mostly to their scalar remainders;
//! 8×128×28×28 7.9 → 5.3 ms with AVX-512). Where
//! that makes fewer tasks than threads (small images at batch 1), each
//! task is split into ranges of output channels, each range's task
//! transforming the input itself ([`channel_splits`]).

#![cfg(target_arch = "x86_64")]

use kiln_ir::spatial::Conv;
use kiln_ir::view::Geometry;
use rayon::prelude::*;

use crate::lanes::{Avx2, Avx512, Lanes};
use crate::panel::{Out, Panel, Rows, product};
use crate::spatial::{Epilogue, Shape};
use crate::storage::{Buffer, Storage};
use crate::strided::Shared;

/// Tiles per image below which the direct convolution is faster (the
/// products' panels would be too narrow for their 64-row blocks). This
/// and the thresholds below were measured with AVX-512, not tuned again
/// for AVX2's 16-row blocks (with them, ResNet-18's 3×3 layers on an AVX2
/// machine ran 1.2–1.5× as fast as by the direct convolution).
const MIN_TILES: i64 = 64;

/// The transformed panels a task holds at most (bytes), to stay in L2.
const TASK_BYTES: i64 = 192 << 10;

/// Whether this file runs the convolution: f32 on a CPU with AVX-512 or
/// AVX2 and FMA (as the products need), 2-D, one group, a 3×3 kernel with stride and dilation 1, at least 16
/// channels in and out and images of enough tiles ([`worth`]).
pub(crate) fn applies(conv: &Conv, s: &Shape, wg: &Geometry) -> bool {
    conv.dims == 2
        && s.batch > 0
        && s.groups == 1
        && wg.shape[2..] == [3, 3]
        && conv.stride == [1, 1]
        && conv.dilation == [1, 1]
        && s.in_per_group >= 16
        && s.out_per_group >= 16
        && worth(tiles(s).0 * tiles(s).1, s.batch, s.out_per_group)
        && crate::panel::available()
}

/// Whether images of `tiles` tiles, `batch` of them, are worth the
/// transforms: [`MIN_TILES`] each, or a task's images (see
/// [`images_per_task`]) half as many together (ResNet's 14×14 layers at
/// batch 8: 10.3 → 7.1 ms), or a quarter as many where the threads split
/// the output channels instead ([`channel_splits`]: ResNet's 7×7 layers
/// at batch 1, 16 tiles, 1.55 → 0.95 ms; the products' panels are one
/// register tall, and as fast per lane).
fn worth(tiles: i64, batch: i64, o_n: i64) -> bool {
    let per_task = images_per_task(tiles, batch);
    let small_tasks = (batch + per_task - 1) / per_task;
    tiles >= MIN_TILES
        || tiles * per_task >= MIN_TILES / 2
        || (tiles >= MIN_TILES / 4 && channel_splits(small_tasks, o_n) > 1)
}

/// Into how many ranges of output channels each task of an image's
/// tiles is split where there are fewer tasks than threads (a small image
/// at batch 1: ResNet's 14×14 layers, one task of 49 tiles, ran on one
/// thread: 1×256×14×14 1.6 → 1.2 ms): enough ranges to give every thread
/// a task, each of at least 32 channels, each range's task transforming
/// the input itself; else 1.
fn channel_splits(tasks: i64, o_n: i64) -> i64 {
    let threads = rayon::current_num_threads() as i64;
    if tasks >= threads {
        return 1;
    }
    let wanted = (threads + tasks - 1) / tasks.max(1);
    wanted.min(o_n / 32).max(1)
}

/// Output channels per range of `splits` ranges over `o_n`: a multiple of
/// the products' 6 columns where that still makes `splits` ranges.
fn channel_chunk(o_n: i64, splits: i64) -> i64 {
    let even = (o_n + splits - 1) / splits.max(1);
    let by_six = (even + 5) / 6 * 6;
    if (o_n + by_six - 1) / by_six == splits {
        by_six
    } else {
        even
    }
}

/// How many whole images of `tiles` tiles (fewer than [`MIN_TILES`]) a
/// task takes into one set of panels: enough to fill [`MIN_TILES`], as
/// long as every thread still gets a task (ResNet's 7×7 layers at batch
/// 8: four images of 16 tiles a task, where one image's 16 would fill a
/// quarter of the products' 64-lane blocks).
fn images_per_task(tiles: i64, batch: i64) -> i64 {
    let threads = rayon::current_num_threads() as i64;
    let fill = (MIN_TILES + tiles - 1) / tiles.max(1);
    fill.min(batch / threads).max(1)
}

/// Rows and columns of 2×2 tiles over the output.
fn tiles(s: &Shape) -> (i64, i64) {
    ((s.out_size[0] + 1) / 2, (s.out_size[1] + 1) / 2)
}

/// Runs the convolution ([`applies`]) from `x` and `w` (f32, any strides)
/// into `out` with the optional bias, or with `epilogue` into its result.
///
/// # Safety
/// As for `crate::spatial::convolution`; [`applies`] holds. `false` (and
/// nothing written) where the transformed weights' memory cannot be had.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run(
    conv: &Conv,
    s: &Shape,
    x: *const f32,
    xg: &Geometry,
    w: *const f32,
    wg: &Geometry,
    bias: Option<&[f32]>,
    (out, og): (*mut f32, &Geometry),
    weight: Option<&Buffer>,
    epilogue: Option<&Epilogue>,
) -> bool {
    let (c_n, o_n) = (s.in_per_group, s.out_per_group);
    let (th_n, tw_n) = tiles(s);
    // SAFETY (both): the weights' elements, as their geometry says.
    let make = || unsafe { weights(w, wg, c_n, o_n) };
    // A weight that is a program input the run does not write is
    // transformed once and kept (`crate::packed::transformed`): the
    // transform of a 512-channel layer is 16 MiB, written on every call
    // otherwise (ResNet-18 at batch 8: 5–8% of its time).
    let len = 16 * (c_n * o_n) as usize;
    let kept = weight.and_then(|b| unsafe { crate::packed::transformed(b, wg, len, make) });
    let Some(transformed) = kept.or_else(|| make().ok()) else {
        // (No memory for the transform: the direct convolution.)
        return false;
    };
    let u = transformed.buffer().floats();
    // Tasks: (image, first tile row, tile rows, output channels), the
    // panels within TASK_BYTES, at least as many tasks as threads where
    // rows allow, else where the output channels allow.
    let per_row = 16 * c_n.max(o_n) * tw_n * 4;
    let threads = rayon::current_num_threads() as i64;
    // Images with fewer than MIN_TILES tiles (run when the batch keeps
    // the threads busy) go whole, several to a task, lest a task's panels
    // be too narrow.
    let small = th_n * tw_n < MIN_TILES;
    let rows = if small {
        th_n
    } else {
        (TASK_BYTES / per_row.max(1))
            .clamp(1, th_n)
            .min(((th_n * s.batch + threads - 1) / threads / s.batch).max(1))
    };
    let group = if small {
        images_per_task(th_n * tw_n, s.batch)
    } else {
        1
    };
    let tasks_by_tiles = (s.batch + group - 1) / group * ((th_n + rows - 1) / rows);
    let splits = channel_splits(tasks_by_tiles, o_n);
    let o_chunk = channel_chunk(o_n, splits);
    // (first image, images, first tile row, tile rows, output channels)
    let tasks: Vec<(i64, i64, i64, i64, (i64, i64))> = (0..s.batch)
        .step_by(group as usize)
        .flat_map(|b| {
            let images = group.min(s.batch - b);
            (0..th_n).step_by(rows as usize).flat_map(move |t| {
                (0..o_n).step_by(o_chunk as usize).map(move |o0| {
                    (
                        b,
                        images,
                        t,
                        rows.min(th_n - t),
                        (o0, o_chunk.min(o_n - o0)),
                    )
                })
            })
        })
        .collect();
    let out = Shared(epilogue.map_or(out, |e| e.out));
    let x = Shared(x as *mut f32);
    let job = Job {
        conv,
        s,
        xg,
        og,
        u,
        bias,
        epilogue,
    };
    let wide = crate::panel::wide();
    tasks.par_iter().for_each(|&(b, images, t0, tr, os)| {
        SCRATCH.with_borrow_mut(|scratch| {
            let ranges = [(b, images), (t0, tr), os];
            // SAFETY: forwarded; each task writes its own tiles' outputs
            // of its own output channels; the CPU has AVX-512F where
            // `wide`, else AVX2 and FMA (`applies`).
            unsafe {
                if wide {
                    job.task_avx512(scratch, (x, out), ranges)
                } else {
                    job.task_avx2(scratch, (x, out), ranges)
                }
            };
        })
    });
    true
}

/// `U = G g Gᵀ` for every (output, input) channel pair, stored as
/// `[o][point][c]` (so that point `p`'s matrix is rows `o` at a stride of
/// 16·C): output channels on rayon's threads, each kernel's 9 taps first
/// copied into rows over the channels, so that the transform's loops run
/// along them.
///
/// # Safety
/// `w` addresses the `[O, C, 3, 3]` weights at `wg`'s strides.
unsafe fn weights(w: *const f32, wg: &Geometry, c_n: i64, o_n: i64) -> kiln_ir::Result<Storage> {
    let (oc, cc) = (o_n as usize, c_n as usize);
    // (From the pool: a transform made on every call faults no pages.)
    let mut buffer = Buffer::for_overwrite(16 * oc * cc * 4)?;
    let u = buffer.floats_mut();
    let ws = &wg.strides;
    let w = Shared(w as *mut f32);
    u.par_chunks_mut(16 * cc).enumerate().for_each_init(
        || vec![0f32; 9 * cc],
        |g, (o, u)| {
            for (t, row) in g.chunks_exact_mut(cc).enumerate() {
                let (i, j) = (t as i64 / 3, t as i64 % 3);
                let base = o as i64 * ws[0] + i * ws[2] + j * ws[3];
                for (c, v) in row.iter_mut().enumerate() {
                    // SAFETY: tap (i, j) of kernel (o, c) is inside the weights.
                    *v = unsafe { *w.ptr().offset((base + c as i64 * ws[1]) as isize) };
                }
            }
            // SAFETY: forwarded (plain slice arithmetic).
            unsafe { transform_weights(g, u, cc) };
        },
    );
    Ok(Storage::from_buffer(buffer))
}

crate::wide::widest_vectors! {
    /// One output channel's `G g Gᵀ` from its taps' rows `g[t][c]` into
    /// `u[point][c]`.
    unsafe fn transform_weights(g: &[f32], u: &mut [f32], cc: usize) => transform_weights_plain
}

#[inline(always)]
fn transform_weights_plain(g: &[f32], u: &mut [f32], cc: usize) {
    let tap = |t: usize| &g[t * cc..(t + 1) * cc];
    for c in 0..cc {
        let g: [f32; 9] = std::array::from_fn(|t| tap(t)[c]);
        let mut t = [[0f32; 3]; 4];
        for j in 0..3 {
            let (g0, g1, g2) = (g[j], g[3 + j], g[6 + j]);
            t[0][j] = g0;
            t[1][j] = 0.5 * (g0 + g1 + g2);
            t[2][j] = 0.5 * (g0 - g1 + g2);
            t[3][j] = g2;
        }
        for (i, t) in t.iter().enumerate() {
            let row = [
                t[0],
                0.5 * (t[0] + t[1] + t[2]),
                0.5 * (t[0] - t[1] + t[2]),
                t[2],
            ];
            for (j, v) in row.iter().enumerate() {
                u[(i * 4 + j) * cc + c] = *v;
            }
        }
    }
}

/// What every task reads.
struct Job<'a> {
    conv: &'a Conv,
    s: &'a Shape,
    xg: &'a Geometry,
    og: &'a Geometry,
    u: &'a [f32],
    bias: Option<&'a [f32]>,
    epilogue: Option<&'a Epilogue>,
}

thread_local! {
    /// Each thread's task buffers, kept across tasks and convolutions
    /// (grown rather than zeroed per task). They grow to the largest task
    /// a thread has run: about 2·TASK_BYTES for images of many tiles, a
    /// whole image's panels (16·max(C, O)·tiles floats each for `v` and
    /// `m`) for small ones, and every channel's planes for channels_last
    /// inputs: a few MiB per thread for ResNet's 512-channel layers,
    /// bounded by the largest convolution the process runs.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// A task's buffers.
#[derive(Default)]
struct Scratch {
    /// A channel's padded input rows: even columns, then odd ones.
    plane: Vec<f32>,
    /// The input transformed: `[point][channel][tile]`.
    v: Vec<f32>,
    /// The products: `[point][out channel][tile]`.
    m: Vec<f32>,
}

/// A task's images `(first, count)`, rows of tiles `(first, count)` and
/// output channels `(first, count)`.
type Range = (i64, i64);

impl Job<'_> {
    /// [`Job::task`] in AVX-512 registers.
    ///
    /// # Safety
    /// As for [`run`]; the CPU has AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn task_avx512(&self, sc: &mut Scratch, io: (Shared<f32>, Shared<f32>), r: [Range; 3]) {
        // SAFETY: forwarded; the CPU has AVX-512F, and this function is
        // compiled for it.
        unsafe { self.task(Avx512::new(), sc, io, r) }
    }

    /// [`Job::task`] in AVX2 registers.
    ///
    /// # Safety
    /// As for [`run`]; the CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn task_avx2(&self, sc: &mut Scratch, io: (Shared<f32>, Shared<f32>), r: [Range; 3]) {
        // SAFETY: forwarded; the CPU has AVX2 and FMA, and this function
        // is compiled for them.
        unsafe { self.task(Avx2::new(), sc, io, r) }
    }

    /// Tile rows `t0..t0 + tr` of images `b0..b0 + images` (several only
    /// whole: their tiles side by side in the panels), output channels
    /// `o0..o0 + o_n` (of which `m` holds the products), from `x` into
    /// `out`, in `l`'s registers.
    ///
    /// # Safety
    /// As for [`run`]; inlined into a function compiled for `l`.
    #[inline(always)]
    unsafe fn task<L: Lanes>(
        &self,
        l: L,
        sc: &mut Scratch,
        (x, out): (Shared<f32>, Shared<f32>),
        [(b0, images), (t0, tr), (o0, o_n)]: [Range; 3],
    ) {
        let s = self.s;
        let (c_n, o0, o_n) = (s.in_per_group as usize, o0 as usize, o_n as usize);
        let tw = tiles(s).1 as usize;
        // The panels' width: the task's tiles (its rows of tiles, image by
        // image), then as many more as make whole registers, so that the
        // products load and store no partial register (AVX2's masked
        // moves are several times slower than plain ones on AMD's cores;
        // ResNet's rows of 28 tiles left 12 of every 28 rows to them).
        // The padding holds earlier tasks' values; its products are never
        // read.
        let tiles = ((images * tr) as usize * tw).next_multiple_of(L::N);
        // The padded rows under the tiles: 2·tr + 2, each of half-widths
        // tw + 1 (even and odd columns).
        let half = tw + 1;
        let prow = 2 * half;
        let plane_len = (2 * tr as usize + 2) * prow;
        let Scratch { plane, v, m } = sc;
        // Channels contiguous (channels_last): every channel's plane at
        // once, each input position's channels read together (a plane at
        // a time would read an element per cache line).
        let all_at_once = self.xg.strides[1] == 1 && c_n > 1;
        plane.resize(
            if all_at_once {
                c_n * plane_len
            } else {
                plane_len
            },
            0.0,
        );
        v.resize(16 * c_n * tiles, 0.0);
        m.resize(16 * o_n * tiles, 0.0);
        for q in 0..images as usize {
            let b = b0 + q as i64;
            if all_at_once {
                // SAFETY: forwarded.
                unsafe { self.copy_channels(l, plane, plane_len, x, b, t0, half) };
            }
            for c in 0..c_n {
                let plane = if all_at_once {
                    &plane[c * plane_len..(c + 1) * plane_len]
                } else {
                    // SAFETY: forwarded.
                    unsafe { self.copy_channel(l, plane, x, b, c, t0, half) };
                    &plane[..]
                };
                for t in 0..tr as usize {
                    let rows: [&[f32]; 4] =
                        std::array::from_fn(|r| &plane[(2 * t + r) * prow..(2 * t + r + 1) * prow]);
                    let row = q * tr as usize + t;
                    // SAFETY: point p's panel holds this row of tiles at
                    // p·C·tiles from channel c's row.
                    unsafe {
                        input_tiles(
                            l,
                            rows,
                            tw,
                            v.as_mut_ptr().add(c * tiles + row * tw),
                            c_n * tiles,
                        )
                    };
                }
            }
        }
        for point in 0..16 {
            // SAFETY: the panels and weights hold these ranges.
            unsafe {
                product(
                    Panel {
                        ptr: v[point * c_n * tiles..].as_ptr(),
                        k_stride: tiles as isize,
                    },
                    Rows {
                        ptr: self.u[(o0 * 16 + point) * c_n..].as_ptr(),
                        j_stride: 16 * c_n as isize,
                        k_stride: 1,
                    },
                    Out {
                        ptr: m[point * o_n * tiles..].as_mut_ptr(),
                        j_stride: tiles as isize,
                    },
                    (tiles, o_n, c_n),
                    false,
                )
            };
        }
        // The task's rows of tiles: row r is image r / tr's row t0 + r % tr,
        // its tiles from r·tw in the panels.
        // Per output channel: the bias, then the tail's scale and shift.
        let affine = |o: usize| Affine {
            bias: self.bias.map(|b| b[o0 + o]),
            scale: self
                .epilogue
                .and_then(|e| e.scale.as_ref())
                .map(|s| s[o0 + o]),
            shift: self
                .epilogue
                .and_then(|e| e.shift.as_ref())
                .map(|s| s[o0 + o]),
        };
        // Point p's products for output channel o and row r of tiles are
        // at p·O·tiles from `products(o, r)`.
        let products = |o: usize, r: usize| m[o * tiles + r * tw..].as_ptr();
        let stride = o_n * tiles;
        // Channels contiguous (channels_last): a register's worth of
        // channels' outputs of as many tiles at once, transposed in
        // registers, so that each position's channels are one store.
        let by_channels = self.og.strides[1] == 1 && o_n > 1;
        let channel_step = if by_channels { L::N } else { 1 };
        for o in (0..o_n).step_by(channel_step) {
            for r in 0..(images * tr) as usize {
                let (b, t) = (b0 + r as i64 / tr, t0 + r as i64 % tr);
                for (k, lanes) in groups::<L>(tw) {
                    // SAFETY (each): the products as above, inside `m`;
                    // forwarded, and the row of tiles is this task's.
                    unsafe {
                        if !by_channels {
                            let y = output_group(l, products(o, r), stride, k, lanes, affine(o));
                            self.store_tiles(l, y, out, b, o0 + o, t, k, lanes);
                            continue;
                        }
                        let on = (o_n - o).min(L::N);
                        let mut y = [[l.square(); 2]; 2];
                        for q in 0..on {
                            let g = output_group(
                                l,
                                products(o + q, r),
                                stride,
                                k,
                                lanes,
                                affine(o + q),
                            );
                            for a in 0..2 {
                                for c in 0..2 {
                                    y[a][c].as_mut()[q] = g[a][c];
                                }
                            }
                        }
                        for block in y.iter_mut().flatten() {
                            l.transpose(block);
                        }
                        self.store_channels(l, y, out, (b, t), (o0 + o, on), (k, lanes));
                    }
                }
            }
        }
    }

    /// Every channel's padded rows under tile rows `t0..` of image `b`
    /// (planes of `plane_len`, zero outside the input), from channels
    /// contiguous: N channels of 2N positions at a time (N = `L::N`),
    /// transposed in registers into runs of 2N positions, each split into
    /// its even and odd columns (element by element, the planes' writes
    /// to 64 rows at once were a third of a channels_last convolution's
    /// time).
    ///
    /// # Safety
    /// As for [`run`]; inlined into a function compiled for `l`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn copy_channels<L: Lanes>(
        &self,
        l: L,
        planes: &mut [f32],
        plane_len: usize,
        x: Shared<f32>,
        b: i64,
        t0: i64,
        half: usize,
    ) {
        let (s, xs) = (self.s, &self.xg.strides);
        let (ph, pw) = (self.conv.padding[0], self.conv.padding[1] as usize);
        let (c_n, w_n) = (s.in_per_group as usize, s.in_size[1] as usize);
        let n = L::N;
        planes.fill(0.0);
        for r in 0..plane_len / (2 * half) {
            let ih = 2 * t0 - ph + r as i64;
            if ih < 0 || ih >= s.in_size[0] {
                continue;
            }
            let row = b * xs[0] + ih * xs[2];
            for c0 in (0..c_n).step_by(n) {
                let channels = (c_n - c0).min(n);
                for iw0 in (0..w_n).step_by(2 * n) {
                    let positions = (w_n - iw0).min(2 * n);
                    // Positions iw0.. (N to a register), then channels.
                    let mut runs = [l.square(); 2];
                    for (h, run) in runs.iter_mut().enumerate() {
                        let here = positions.saturating_sub(n * h);
                        for (p, v) in run.as_mut().iter_mut().enumerate().take(here) {
                            let at = row + (iw0 + n * h + p) as i64 * xs[3] + c0 as i64;
                            // SAFETY: channels c0.. of a position inside the input.
                            *v = unsafe { l.load(x.ptr().offset(at as isize), l.first(channels)) };
                        }
                        l.transpose(run);
                    }
                    // Padded columns col.. and col + 1.., every other one.
                    let col = iw0 + pw;
                    let sides = [
                        (col, positions.div_ceil(2), true),
                        (col + 1, positions / 2, false),
                    ];
                    for c in 0..channels {
                        let plane = &mut planes[(c0 + c) * plane_len + r * 2 * half..][..2 * half];
                        let (lo, hi) = (runs[0].as_ref()[c], runs[1].as_ref()[c]);
                        for (first, count, evens) in sides {
                            let (side, k) = (first % 2, first / 2);
                            let count = count.min(half.saturating_sub(k));
                            if count == 0 {
                                continue;
                            }
                            let v = if evens {
                                l.evens(lo, hi)
                            } else {
                                l.odds(lo, hi)
                            };
                            // SAFETY: k + count <= half, in the side's half.
                            unsafe {
                                l.store(plane.as_mut_ptr().add(side * half + k), l.first(count), v)
                            };
                        }
                    }
                }
            }
        }
    }

    /// Channel `c`'s padded rows under tile rows `t0..` of image `b` into
    /// `plane` (rows of 2·`half`: even columns, then odd ones; zero outside
    /// the input).
    ///
    /// # Safety
    /// As for [`run`]; inlined into a function compiled for `l`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn copy_channel<L: Lanes>(
        &self,
        l: L,
        plane: &mut [f32],
        x: Shared<f32>,
        b: i64,
        c: usize,
        t0: i64,
        half: usize,
    ) {
        let (s, xs) = (self.s, &self.xg.strides);
        let (ph, pw) = (self.conv.padding[0], self.conv.padding[1]);
        let (h_n, w_n) = (s.in_size[0], s.in_size[1]);
        for (r, row) in plane.chunks_exact_mut(2 * half).enumerate() {
            let ih = 2 * t0 - ph + r as i64;
            if ih < 0 || ih >= h_n {
                row.fill(0.0);
                continue;
            }
            let base = b * xs[0] + c as i64 * xs[1] + ih * xs[2];
            let (even, odd) = row.split_at_mut(half);
            if xs[3] == 1 && pw == 1 && w_n == 2 * half as i64 - 2 {
                // A contiguous row of even width with one column of
                // padding (ResNet's): pairs (2k − 1, 2k) split apart.
                // SAFETY: the row's w_n elements are inside the input.
                let src = unsafe {
                    std::slice::from_raw_parts(x.ptr().offset(base as isize), w_n as usize)
                };
                even[0] = 0.0;
                odd[half - 1] = 0.0;
                // A register of pairs at a time: columns 2k to odd[k],
                // 2k + 1 to even[k + 1].
                for (k, lanes) in groups::<L>(half - 1) {
                    // SAFETY: the pairs k..k + lanes are in the row, and
                    // their halves' places in `odd` and `even`.
                    unsafe {
                        let at = src.as_ptr().add(2 * k);
                        let lo = l.load(at, l.first(2 * lanes));
                        let hi = l.load(
                            // (Past the row where no lane is read.)
                            at.wrapping_add(L::N),
                            l.first((2 * lanes).saturating_sub(L::N)),
                        );
                        let m = l.first(lanes);
                        l.store(odd.as_mut_ptr().add(k), m, l.evens(lo, hi));
                        l.store(even.as_mut_ptr().add(k + 1), m, l.odds(lo, hi));
                    }
                }
                continue;
            }
            for (q, side) in [(0, even), (1, odd)] {
                // Columns 2k + q − pw inside the input: k in lo..hi.
                let lo = ((pw - q + 1).max(0) / 2) as usize;
                let last = w_n - 1 + pw - q;
                let hi = if last < 0 { 0 } else { (last / 2 + 1) as usize }.clamp(lo, half);
                side[..lo].fill(0.0);
                side[hi..].fill(0.0);
                if lo == hi {
                    continue;
                }
                // SAFETY: column 2·lo + q − pw of row ih of channel c,
                // inside the input.
                let src = unsafe {
                    x.ptr()
                        .offset((base + (2 * lo as i64 + q - pw) * xs[3]) as isize)
                };
                let step = 2 * xs[3] as isize;
                for (k, dst) in side[lo..hi].iter_mut().enumerate() {
                    // SAFETY: columns up to 2·hi − 2 + q − pw < w_n.
                    *dst = unsafe { *src.offset(k as isize * step) };
                }
            }
        }
    }

    /// Outputs (a, b) of a register's tiles from tile `k` of tile row `t`
    /// (`y[a][b]`, from [`output_group`]; `lanes` of them in the row) into
    /// output rows 2·`t` + a, columns 2·k.. of channel `o` of image `b`,
    /// the half tiles past the output's edge left out: along contiguous
    /// rows, the two columns of each tile interleaved in registers.
    ///
    /// # Safety
    /// As for [`run`]; the rows are this task's; inlined into a function
    /// compiled for `l`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn store_tiles<L: Lanes>(
        &self,
        l: L,
        y: [[L::V; 2]; 2],
        out: Shared<f32>,
        b: i64,
        o: usize,
        t: i64,
        k: usize,
        lanes: usize,
    ) {
        let os = &self.og.strides;
        let (oh_n, ow_n) = (self.s.out_size[0], self.s.out_size[1]);
        let n = L::N;
        // Output columns 2k.. of this group inside the row.
        let columns = (ow_n as usize - 2 * k).min(2 * lanes);
        for (a, &[left, right]) in y.iter().enumerate() {
            let oh = 2 * t + a as i64;
            if oh >= oh_n {
                continue;
            }
            let row = b * os[0] + o as i64 * os[1] + oh * os[2] + 2 * k as i64 * os[3];
            // SAFETY: the output row of this task's tiles, columns 2k..2k + columns.
            unsafe {
                let dst = out.ptr().offset(row as isize);
                if os[3] == 1 {
                    let (first, second) = l.interleave(left, right);
                    let (m1, m2) = (l.first(columns), l.first(columns.saturating_sub(n)));
                    let e = self.epilogue;
                    let first = finish(l, e, first, row as isize, m1);
                    let second = finish(l, e, second, row as isize + n as isize, m2);
                    l.store(dst, m1, first);
                    // (Past the output where no lane is written.)
                    l.store(dst.wrapping_add(n), m2, second);
                } else {
                    let (mut lv, mut rv) = ([0f32; 16], [0f32; 16]);
                    l.store(lv.as_mut_ptr(), l.first(n), left);
                    l.store(rv.as_mut_ptr(), l.first(n), right);
                    let step = os[3] as isize;
                    for c in 0..columns {
                        let mut v = if c % 2 == 0 { lv[c / 2] } else { rv[c / 2] };
                        if let Some(e) = self.epilogue {
                            v = e.finish(v, row as isize + c as isize * step);
                        }
                        *dst.offset(c as isize * step) = v;
                    }
                }
            }
        }
    }

    /// Outputs (a, b) of a register's tiles from tile `k` of tile row `t`
    /// of image `b` (`lanes` of them in the row), for `on` channels from
    /// `o`, each tile's channels in a register (`y[a][b][tile]`), into
    /// output rows 2·`t` + a, columns 2·(k + tile) + b, channels
    /// contiguous; the half tiles past the output's edge left out.
    ///
    /// # Safety
    /// As for [`run`]; the rows are this task's, the output's channels
    /// contiguous; inlined into a function compiled for `l`.
    #[inline(always)]
    unsafe fn store_channels<L: Lanes>(
        &self,
        l: L,
        y: [[L::Square; 2]; 2],
        out: Shared<f32>,
        (b, t): (i64, i64),
        (o, on): (usize, usize),
        (k, lanes): (usize, usize),
    ) {
        let os = &self.og.strides;
        let (oh_n, ow_n) = (self.s.out_size[0], self.s.out_size[1]);
        let mask = l.first(on);
        for (a, columns) in y.iter().enumerate() {
            let oh = 2 * t + a as i64;
            if oh >= oh_n {
                continue;
            }
            for tile in 0..lanes {
                for (c, tiles) in columns.iter().enumerate() {
                    let ow = 2 * (k + tile) as i64 + c as i64;
                    if ow >= ow_n {
                        continue;
                    }
                    let at = b * os[0] + o as i64 + oh * os[2] + ow * os[3];
                    // SAFETY: channels o..o + on at an output position of
                    // this task's tiles.
                    unsafe {
                        let y = finish(l, self.epilogue, tiles.as_ref()[tile], at as isize, mask);
                        l.store(out.ptr().offset(at as isize), mask, y)
                    };
                }
            }
        }
    }
}

/// `(i, lanes)` over `0..n` in groups of a register's `L::N` (`lanes` of
/// them, `L::N` but in the last group): the rows of tiles' loops, in
/// registers with masks (rows of ResNet's small images are 4 to 28 tiles
/// long, where a compiler's vector loop leaves most of them to its scalar
/// remainder). (An iterator for `for` loops, not a function taking the
/// loop's body as a closure: see [`crate::lanes`].)
#[inline(always)]
fn groups<L: Lanes>(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(L::N).map(move |i| (i, (n - i).min(L::N)))
}

/// `Bᵀ d B` for the `tw` tiles along four padded rows (each its `tw + 1`
/// even columns, then its odd ones): point `p`'s row of tiles into
/// `v + p·stride`. A register of tiles at a time: tile k's columns
/// 2k .. 2k + 3 are even k, odd k, even k + 1 and odd k + 1 of each row.
///
/// # Safety
/// Inlined into a function compiled for `l`; `v + p·stride` addresses
/// `tw` floats for every point `p` < 16, none of them in `rows`.
#[inline(always)]
unsafe fn input_tiles<L: Lanes>(l: L, rows: [&[f32]; 4], tw: usize, v: *mut f32, stride: usize) {
    let half = tw + 1;
    for (k, lanes) in groups::<L>(tw) {
        let m = l.first(lanes);
        // SAFETY: columns up to 2·(k + lanes) + 1 < 2·half of each row;
        // the points' rows as the caller vouches.
        unsafe {
            // d[i][j]: row i, column 2k + j of the tiles.
            let mut d = [[l.splat(0.0); 4]; 4];
            for i in 0..4 {
                let at = [k, half + k, k + 1, half + k + 1];
                for j in 0..4 {
                    d[i][j] = l.load(rows[i].as_ptr().add(at[j]), m);
                }
            }
            // Bᵀ d, column by column.
            let mut t = [[l.splat(0.0); 4]; 4];
            for j in 0..4 {
                let (a, b, c, e) = (d[0][j], d[1][j], d[2][j], d[3][j]);
                t[0][j] = l.sub(a, c);
                t[1][j] = l.add(b, c);
                t[2][j] = l.sub(c, b);
                t[3][j] = l.sub(b, e);
            }
            // · B, row by row.
            for i in 0..4 {
                let [a, b, c, e] = t[i];
                let row = [l.sub(a, c), l.add(b, c), l.sub(c, b), l.sub(b, e)];
                for j in 0..4 {
                    l.store(v.add((4 * i + j) * stride + k), m, row[j]);
                }
            }
        }
    }
}

/// What an output channel's values get in the output tile: the bias, then
/// a tail's scale and shift ([`Epilogue`]), each rounded as a separate op.
#[derive(Clone, Copy)]
struct Affine {
    bias: Option<f32>,
    scale: Option<f32>,
    shift: Option<f32>,
}

/// `Aᵀ m A` plus the bias, times the scale, plus the shift ([`Affine`])
/// for tiles `k..k + lanes` of a row from the 16 points' products (point
/// `p`'s at `m + p·stride`): output (a, b) of the tiles as `y[a][b]`.
///
/// # Safety
/// Inlined into a function compiled for `l`; `m + p·stride` addresses the
/// tiles' floats for every point `p` < 16.
#[inline(always)]
unsafe fn output_group<L: Lanes>(
    l: L,
    m: *const f32,
    stride: usize,
    k: usize,
    lanes: usize,
    affine: Affine,
) -> [[L::V; 2]; 2] {
    let mask = l.first(lanes);
    let mut p = [l.splat(0.0); 16];
    for point in 0..16 {
        // SAFETY: as the caller vouches.
        p[point] = unsafe { l.load(m.add(point * stride + k), mask) };
    }
    // Aᵀ m: its two rows, column by column.
    let mut s = [[l.splat(0.0); 4]; 2];
    for j in 0..4 {
        s[0][j] = l.add(l.add(p[j], p[4 + j]), p[8 + j]);
        s[1][j] = l.sub(l.sub(p[4 + j], p[8 + j]), p[12 + j]);
    }
    // · A, the bias, the scale and the shift.
    let mut y = [[l.splat(0.0); 2]; 2];
    for a in 0..2 {
        let [p, q, u, v] = s[a];
        y[a] = [l.add(l.add(p, q), u), l.sub(l.sub(q, u), v)];
        for x in &mut y[a] {
            if let Some(b) = affine.bias {
                *x = l.add(*x, l.splat(b));
            }
            if let Some(s) = affine.scale {
                *x = l.mul(*x, l.splat(s));
            }
            if let Some(t) = affine.shift {
                *x = l.add(*x, l.splat(t));
            }
        }
    }
    y
}

/// The tail's residual add and ReLU ([`Epilogue`]) on `y`, output
/// `at`'s values in `mask`'s lanes (elements `at`, `at + 1`, ... of the
/// result's layout); `y` itself without a tail.
///
/// # Safety
/// Inlined into a function compiled for `l`; the residual holds elements
/// `at..` in `mask`'s lanes.
#[inline(always)]
unsafe fn finish<L: Lanes>(
    l: L,
    epilogue: Option<&Epilogue>,
    y: L::V,
    at: isize,
    mask: L::Mask,
) -> L::V {
    let Some(e) = epilogue else {
        return y;
    };
    let mut y = y;
    if let Some(r) = e.residual {
        // SAFETY: as the caller vouches (no lane outside `mask` is read).
        let r = unsafe { l.load(r.wrapping_offset(at), mask) };
        y = l.add(y, r);
    }
    if e.relu {
        y = l.relu(y);
    }
    y
}
