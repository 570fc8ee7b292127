//! Dense 2-D convolutions as implicit GEMM: a block computes a tile of
//! output channels × output positions, staging the weights and the input
//! patches they read (im2col, gathered on the fly, never in device memory)
//! in shared memory a few input channels at a time; each thread keeps a
//! small register tile of outputs.
//!
//! The direct kernel ([`crate::spatial`]) reads every input and weight
//! from global memory once per output element; in channels_last a warp's
//! lanes read either weights or inputs far apart, which left a 3×3
//! convolution of 64 channels at 0.10× cuDNN on an H200 (0.45× in NCHW).
//! Here both operands are loaded once per tile, in the order they lie in
//! memory (coalesced in either layout), and reused from shared memory by
//! every thread of the block. On an H200 that convolution went from 0.093
//! to 0.079 ms in NCHW and from 0.49 to 0.077 in channels_last
//! (BENCHMARKS.md, "CUDA on a GPU: third measurement", with the variants
//! that did not help: staging the operands through registers cost more in
//! occupancy than it hid). Deep layers with few positions (512 channels
//! over 7×7) stay slow: each output is one long chain of products in the
//! reference's order, over few tiles.
//!
//! The bits stay the reference interpreter's
//! (`kiln_runtime::interp::spatial`): each output element is still summed
//! in its order and arithmetic, in double: for each input channel, its
//! taps in row-major order into a fresh partial sum, which is then added
//! to the element's sum; the bias last; one rounding to the result's
//! dtype. Only where the operands come from changes. A product of two
//! f32 (or narrower) values is exact in double, so for them the kernel
//! accumulates with fused multiply-adds (the same bits as a multiply and
//! an add, in half the instructions); f64 products round, so there it is
//! a multiply and an add, as the reference's.
//!
//! Taps that fall in the padding are skipped by the reference. The tiles
//! hold zeros there, and adding `0 · w` to a sum leaves it unchanged when
//! `w` is finite (the partial sums start at +0 and never become −0). A
//! pass whose weights hold an infinity or a NaN (which times zero is NaN)
//! instead checks every tap's position, as the reference does; a block's
//! threads agree on this per pass through one shared flag.

use std::fmt::Write;

use kiln_ir::DType;
use kiln_ir::spatial::Conv;

use crate::codegen::LaunchShape;
use crate::codegen::mtype;
use crate::spatial::{ConvViews, load, pointer, rounded, signature};

/// Threads per block: a 16 × 16 grid over the tile.
const THREADS: i64 = 256;

/// Threads along each side of a tile.
const SIDE: i64 = 16;

/// At most this many blocks; they loop over the remaining tiles.
const MAX_BLOCKS: i64 = 1 << 16;

/// Shared memory for the two staged operands (of CUDA's 48 kB of static
/// shared memory a block).
const SHARED_BYTES: i64 = 40 * 1024;

/// Below this many blocks a larger tile leaves too much of a GPU idle (an
/// H100 or H200 has 132 SMs), so the next smaller tile is taken.
const ENOUGH_BLOCKS: i64 = 264;

/// Convolutions with fewer output channels, or fewer products per output
/// element, than this stay direct: a depthwise or single-channel
/// convolution has nothing to share through a tile.
const MIN_CHANNELS: i64 = 16;
const MIN_PRODUCTS: i64 = 32;

/// A block's tile: `to` output channels × `tp` output positions, `ck`
/// input channels staged a pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tile {
    pub(crate) to: i64,
    pub(crate) tp: i64,
    pub(crate) ck: i64,
}

/// What `KILN_CUDA_CONV_TILE` asks for: a tile (`64x32`: output channels
/// × positions, each 16, 32 or 64; `64x32:4`: and at most 4 blocks, which
/// then loop over the tiles), or `off` (every convolution direct). For
/// tuning on a GPU and for tests of every tile; other values are ignored.
/// Read when a kernel is generated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Forced {
    Tile {
        to: i64,
        tp: i64,
        blocks: Option<i64>,
    },
    Off,
}

/// `KILN_CUDA_CONV_TILE`, parsed ([`Forced`]).
pub(crate) fn forced() -> Option<Forced> {
    let v = std::env::var("KILN_CUDA_CONV_TILE").ok()?;
    if v == "off" {
        return Some(Forced::Off);
    }
    let (tile, blocks) = match v.split_once(':') {
        Some((tile, blocks)) => (tile, Some(blocks.parse().ok().filter(|&b| b >= 1)?)),
        None => (v.as_str(), None),
    };
    let (to, tp) = tile.split_once('x')?;
    let side = |s: &str| s.parse().ok().filter(|n| [16, 32, 64].contains(n));
    Some(Forced::Tile {
        to: side(to)?,
        tp: side(tp)?,
        blocks,
    })
}

/// The input channels a pass for a tile of `to` × `tp` of `taps` taps:
/// as many as fit [`SHARED_BYTES`] in double (rows padded by one,
/// [`row`]), at most `channels`.
fn channels_a_pass(to: i64, tp: i64, taps: i64, channels: i64) -> i64 {
    (SHARED_BYTES / ((row(to) + row(tp)) * taps * 8)).min(channels)
}

/// The tile for `out_channels` × `positions` outputs of `channels` input
/// channels of `taps` taps: of those that stage at least one channel's
/// taps, the largest (64, 32 or 16 on each side) that still gives
/// [`ENOUGH_BLOCKS`] blocks, else the one with the most; `forced` (a
/// `KILN_CUDA_CONV_TILE` tile) instead where it fits. `None` where no
/// tile fits (a kernel of more than 150 taps), or a forced one does not.
pub(crate) fn tile(
    out_channels: i64,
    positions: i64,
    channels: i64,
    taps: i64,
    forced: Option<Forced>,
) -> Option<Tile> {
    let fits = |&(to, tp): &(i64, i64)| channels_a_pass(to, tp, taps, channels) >= 1;
    let (to, tp) = match forced {
        Some(Forced::Tile { to, tp, .. }) => (to, tp),
        _ => {
            let sizes: Vec<(i64, i64)> = [
                (64, 64),
                (64, 32),
                (32, 64),
                (32, 32),
                (32, 16),
                (16, 32),
                (16, 16),
            ]
            .into_iter()
            .filter(fits)
            .collect();
            let blocks =
                |(to, tp): (i64, i64)| ((out_channels + to - 1) / to) * ((positions + tp - 1) / tp);
            let most = sizes.iter().copied().max_by_key(|&s| blocks(s))?;
            sizes
                .iter()
                .copied()
                .find(|&s| blocks(s) >= ENOUGH_BLOCKS)
                .unwrap_or(most)
        }
    };
    fits(&(to, tp)).then(|| Tile {
        to,
        tp,
        ck: channels_a_pass(to, tp, taps, channels),
    })
}

/// The implicit-GEMM kernel of a dense 2-D convolution (not transposed,
/// one group, enough channels and products to share), and its launch
/// shape; `None` for the others, which stay direct.
pub(crate) fn convolution(
    name: &str,
    conv: &Conv,
    v: &ConvViews,
    args: usize,
) -> Option<(String, LaunchShape)> {
    let ((xa, x), (wa, w), (oa, out)) = (v.x, v.w, v.out);
    let (xg, wg, og) = (&x.geometry, &w.geometry, &out.geometry);
    if conv.dims != 2 || conv.transposed || conv.groups != 1 || xg.rank() != 4 {
        return None;
    }
    let [n, c, h, wd] = <[i64; 4]>::try_from(&xg.shape[..]).ok()?;
    let [o, _, kh, kw] = <[i64; 4]>::try_from(&wg.shape[..]).ok()?;
    let [_, _, oh, ow] = <[i64; 4]>::try_from(&og.shape[..]).ok()?;
    let taps = kh * kw;
    let positions = n * oh * ow;
    if o < MIN_CHANNELS || c * taps < MIN_PRODUCTS || positions == 0 {
        return None;
    }
    let forced = forced();
    if forced == Some(Forced::Off) {
        return None;
    }
    let tile = tile(o, positions, c, taps, forced)?;
    let Tile { to, tp, ck } = tile;
    let (ro, rp) = (to / SIDE, tp / SIDE);
    let (o_tiles, p_tiles) = ((o + to - 1) / to, (positions + tp - 1) / tp);
    let tiles = o_tiles * p_tiles;
    let padded = conv.padding.iter().any(|&p| p != 0);
    let (sh, sw) = (conv.stride[0], conv.stride[1]);
    let (ph, pw) = (conv.padding[0], conv.padding[1]);
    let (dh, dw) = (conv.dilation[0], conv.dilation[1]);
    let (t, wide) = (mtype(out.dtype), out.dtype == DType::F64);
    let (xp, wp) = (pointer(xa, x, false), pointer(wa, w, false));
    let mut s = String::new();
    let comment = format!(
        "convolution as implicit GEMM: in {:?}, weight {:?}, out {:?}, stride {:?}, padding {:?}, dilation {:?}; tiles of {to} channels x {tp} positions, {ro}x{rp} a thread, {ck} input channels a pass",
        xg.shape, wg.shape, og.shape, conv.stride, conv.padding, conv.dilation
    );
    signature(&mut s, name, args, THREADS as u32, &comment);
    // Where tap `t` of the position `q` of an image reads the input, and
    // whether that is inside it (the reference skips the taps that are not).
    let tap = format!(
        "const long long y = q / {ow}LL * {sh}LL - {ph}LL + t / {kw} * {dh}LL, z = q % {ow}LL * {sw}LL - {pw}LL + t % {kw} * {dw}LL;"
    );
    let inside = format!("y >= 0 && y < {h}LL && z >= 0 && z < {wd}LL");
    let (wrow, xrow) = (row(to), row(tp));
    let _ = writeln!(s, "  __shared__ double ws[{}];", ck * taps * wrow);
    let _ = writeln!(s, "  __shared__ double xs[{}];", ck * taps * xrow);
    // Threads take neighbouring outputs along the output's contiguous
    // side: positions in NCHW, channels in channels_last, so stores (and
    // the shared reads of that side) are consecutive.
    let (inner, inner_size) = if ow > 1 { (3, ow) } else { (2, oh) };
    let channels_fastest = og.strides[1] < og.strides[inner] || inner_size == 1;
    let (lo, lp) = if channels_fastest {
        ("threadIdx.x % 16", "threadIdx.x / 16")
    } else {
        ("threadIdx.x / 16", "threadIdx.x % 16")
    };
    let _ = writeln!(s, "  const int lo = {lo}, lp = {lp};");
    if padded {
        // The pass whose weights are not all finite (see the module doc).
        let _ = writeln!(s, "  __shared__ int nonfinite;");
        let _ = writeln!(s, "  int pass = 0;");
        let _ = writeln!(s, "  if (threadIdx.x == 0) nonfinite = -1;");
    }
    let _ = writeln!(
        s,
        "  for (long long tile = blockIdx.x; tile < {tiles}LL; tile += gridDim.x) {{"
    );
    // Neighbouring blocks share positions (channel tiles vary fastest), so
    // the input patch they gather is read from L2.
    let _ = writeln!(
        s,
        "    const long long o0 = tile % {o_tiles}LL * {to}LL, p0 = tile / {o_tiles}LL * {tp}LL;"
    );
    let _ = writeln!(s, "    double sum[{ro}][{rp}];");
    let _ = writeln!(
        s,
        "    for (int i = 0; i < {ro}; ++i) for (int j = 0; j < {rp}; ++j) sum[i][j] = 0.0;"
    );
    let _ = writeln!(s, "    for (long long c0 = 0; c0 < {c}LL; c0 += {ck}LL) {{");
    let _ = writeln!(s, "      __syncthreads();");
    if padded {
        let _ = writeln!(s, "      ++pass;");
    }
    // The weights [ck][tap][to], gathered in the order they lie in memory.
    let w_order = order(&[
        ("ol", to, wg.strides[0]),
        ("ck", ck, wg.strides[1]),
        (
            "t",
            taps,
            if kw > 1 { wg.strides[3] } else { wg.strides[2] },
        ),
    ]);
    let _ = writeln!(
        s,
        "      for (int e = threadIdx.x; e < {}; e += {THREADS}) {{",
        ck * taps * to
    );
    split(&mut s, "e", &w_order);
    let _ = writeln!(s, "        const long long o = o0 + ol, c = c0 + ck;");
    let _ = writeln!(s, "        double v = 0.0;");
    let _ = writeln!(
        s,
        "        if (o < {o}LL && c < {c}LL) v = {};",
        load(
            w.dtype,
            &format!(
                "{wp}[{}LL + o * {}LL + c * {}LL + t / {kw} * {}LL + t % {kw} * {}LL]",
                wg.offset, wg.strides[0], wg.strides[1], wg.strides[2], wg.strides[3]
            )
        )
    );
    if padded {
        let _ = writeln!(s, "        if (!(v - v == 0.0)) nonfinite = pass;");
    }
    let _ = writeln!(s, "        ws[(ck * {taps} + t) * {wrow} + ol] = v;");
    let _ = writeln!(s, "      }}");
    // The input patches [ck][tap][tp], zero in the padding.
    let x_order = order(&[
        ("pl", tp, xg.strides[3]),
        ("ck", ck, xg.strides[1]),
        (
            "t",
            taps,
            if kw > 1 {
                xg.strides[3] * dw
            } else {
                xg.strides[2] * dh
            },
        ),
    ]);
    let _ = writeln!(
        s,
        "      for (int e = threadIdx.x; e < {}; e += {THREADS}) {{",
        ck * taps * tp
    );
    split(&mut s, "e", &x_order);
    let _ = writeln!(s, "        const long long p = p0 + pl, c = c0 + ck;");
    let _ = writeln!(s, "        double v = 0.0;");
    let _ = writeln!(s, "        if (p < {positions}LL && c < {c}LL) {{");
    let _ = writeln!(
        s,
        "          const long long b = p / {}LL, q = p % {}LL;",
        oh * ow,
        oh * ow
    );
    let _ = writeln!(s, "          {tap}");
    let _ = writeln!(
        s,
        "          if ({inside}) v = {};",
        load(
            x.dtype,
            &format!(
                "{xp}[{}LL + b * {}LL + c * {}LL + y * {}LL + z * {}LL]",
                xg.offset, xg.strides[0], xg.strides[1], xg.strides[2], xg.strides[3]
            )
        )
    );
    let _ = writeln!(s, "        }}");
    let _ = writeln!(s, "        xs[(ck * {taps} + t) * {xrow} + pl] = v;");
    let _ = writeln!(s, "      }}");
    let _ = writeln!(s, "      __syncthreads();");
    let _ = writeln!(
        s,
        "      const int chans = (int)({c}LL - c0 < {ck}LL ? {c}LL - c0 : {ck}LL);"
    );
    let product = |acc: &str, xv: &str, wv: &str| {
        if wide {
            format!("{acc} += {xv} * {wv};")
        } else {
            format!("{acc} = fma({xv}, {wv}, {acc});")
        }
    };
    // The products: one pass over the staged channels, each channel's taps
    // summed into `acc` first, as the reference.
    let body = |s: &mut String, checked: bool, ind: &str| {
        let _ = writeln!(s, "{ind}for (int ck = 0; ck < chans; ++ck) {{");
        let _ = writeln!(s, "{ind}  double acc[{ro}][{rp}];");
        let _ = writeln!(
            s,
            "{ind}  for (int i = 0; i < {ro}; ++i) for (int j = 0; j < {rp}; ++j) acc[i][j] = 0.0;"
        );
        let _ = writeln!(s, "{ind}  #pragma unroll");
        let _ = writeln!(s, "{ind}  for (int t = 0; t < {taps}; ++t) {{");
        let _ = writeln!(
            s,
            "{ind}    const double* wr = ws + (ck * {taps} + t) * {wrow} + lo;"
        );
        let _ = writeln!(
            s,
            "{ind}    const double* xr = xs + (ck * {taps} + t) * {xrow} + lp;"
        );
        let _ = writeln!(s, "{ind}    double wv[{ro}], xv[{rp}];");
        let _ = writeln!(
            s,
            "{ind}    for (int i = 0; i < {ro}; ++i) wv[i] = wr[i * {SIDE}];"
        );
        let _ = writeln!(
            s,
            "{ind}    for (int j = 0; j < {rp}; ++j) xv[j] = xr[j * {SIDE}];"
        );
        if checked {
            let _ = writeln!(s, "{ind}    for (int j = 0; j < {rp}; ++j) {{");
            let _ = writeln!(
                s,
                "{ind}      const long long p = p0 + lp + j * {SIDE}, q = p % {}LL;",
                oh * ow
            );
            let _ = writeln!(s, "{ind}      {tap}");
            let _ = writeln!(s, "{ind}      if (!({inside})) continue;");
            let _ = writeln!(
                s,
                "{ind}      for (int i = 0; i < {ro}; ++i) {}",
                product("acc[i][j]", "xv[j]", "wv[i]")
            );
            let _ = writeln!(s, "{ind}    }}");
        } else {
            let _ = writeln!(
                s,
                "{ind}    for (int i = 0; i < {ro}; ++i) for (int j = 0; j < {rp}; ++j) {}",
                product("acc[i][j]", "xv[j]", "wv[i]")
            );
        }
        let _ = writeln!(s, "{ind}  }}");
        let _ = writeln!(
            s,
            "{ind}  for (int i = 0; i < {ro}; ++i) for (int j = 0; j < {rp}; ++j) sum[i][j] += acc[i][j];"
        );
        let _ = writeln!(s, "{ind}}}");
    };
    if padded {
        let _ = writeln!(s, "      if (nonfinite == pass) {{");
        body(&mut s, true, "        ");
        let _ = writeln!(s, "      }} else {{");
        body(&mut s, false, "        ");
        let _ = writeln!(s, "      }}");
    } else {
        body(&mut s, false, "      ");
    }
    let _ = writeln!(s, "    }}");
    // The bias, one rounding, the store.
    let _ = writeln!(s, "    for (int i = 0; i < {ro}; ++i) {{");
    let _ = writeln!(s, "      const long long o = o0 + lo + i * {SIDE};");
    let _ = writeln!(s, "      if (o >= {o}LL) continue;");
    let bias = v.bias.map(|(ba, b)| {
        load(
            b.dtype,
            &format!(
                "{}[{}LL + o * {}LL]",
                pointer(ba, b, false),
                b.geometry.offset,
                b.geometry.strides[0]
            ),
        )
    });
    let _ = writeln!(s, "      for (int j = 0; j < {rp}; ++j) {{");
    let _ = writeln!(s, "        const long long p = p0 + lp + j * {SIDE};");
    let _ = writeln!(s, "        if (p >= {positions}LL) continue;");
    let _ = writeln!(
        s,
        "        const long long b = p / {}LL, q = p % {}LL;",
        oh * ow,
        oh * ow
    );
    let _ = writeln!(s, "        double r = sum[i][j];");
    if let Some(bias) = bias {
        let _ = writeln!(s, "        r += {bias};");
    }
    match &v.tail {
        Some(tail) => {
            let index = |d: usize| match d {
                0 => "b".to_string(),
                1 => "o".to_string(),
                2 => format!("(q / {ow}LL)"),
                _ => format!("(q % {ow}LL)"),
            };
            s.push_str(&tail.store("        ", &rounded(out.dtype, "r"), index));
        }
        None => {
            let _ = writeln!(
                s,
                "        (({t}*)b{oa})[{}LL + b * {}LL + o * {}LL + q / {ow}LL * {}LL + q % {ow}LL * {}LL] = {};",
                og.offset,
                og.strides[0],
                og.strides[1],
                og.strides[2],
                og.strides[3],
                rounded(out.dtype, "r")
            );
        }
    }
    let _ = writeln!(s, "      }}");
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "  }}");
    let _ = writeln!(s, "}}");
    let cap = match forced {
        Some(Forced::Tile {
            blocks: Some(cap), ..
        }) => cap,
        _ => MAX_BLOCKS,
    };
    let blocks = u32::try_from(tiles.min(cap)).ok()?;
    Some((
        s,
        LaunchShape {
            blocks,
            threads: THREADS as u32,
        },
    ))
}

/// The length of a staged row of `n` doubles: one more, odd, so that a
/// warp storing down a column (a tap or channel a lane, as the operand
/// lies in memory) hits every bank once per pair of lanes instead of one
/// bank 32 times.
fn row(n: i64) -> i64 {
    n + 1
}

/// A staged tile's three indices (name, extent, the memory stride a step
/// of it moves), fastest in memory first: consecutive threads then load
/// neighbouring elements.
fn order<'a>(axes: &[(&'a str, i64, i64); 3]) -> Vec<(&'a str, i64)> {
    let mut axes = axes.to_vec();
    axes.sort_by_key(|&(_, extent, stride)| if extent == 1 { i64::MAX } else { stride.abs() });
    axes.into_iter()
        .map(|(name, extent, _)| (name, extent))
        .collect()
}

/// Declares each of `axes` (fastest first) as an `int` taken apart from
/// the linear index `e`.
fn split(s: &mut String, e: &str, axes: &[(&str, i64)]) {
    let mut rest = e.to_string();
    for (k, (name, extent)) in axes.iter().enumerate() {
        if k + 1 == axes.len() {
            let _ = writeln!(s, "        const int {name} = {rest};");
        } else {
            let _ = writeln!(s, "        const int {name} = {rest} % {extent};");
            rest = format!("{rest} / {extent}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×3 convolution of 64 channels over 56×56 (ResNet's first
    /// stage) has too few 64×64 tiles for 132 SMs and takes 32×16; a
    /// batch of 8 takes the largest; 512 channels over 7×7 (its last
    /// stage) the smallest. Tiles that cannot stage a channel's taps are
    /// passed over, and a forced one that cannot is refused. Each stages as many input channels
    /// as fit, and a 15×15 kernel's taps fit no tile.
    #[test]
    fn tiles_fill_the_gpu_and_the_shared_memory() {
        let small = tile(64, 56 * 56, 64, 9, None).unwrap();
        assert_eq!((small.to, small.tp), (32, 16));
        assert!((row(small.to) + row(small.tp)) * 9 * 8 * small.ck <= SHARED_BYTES);
        let batch = tile(64, 8 * 56 * 56, 64, 9, None).unwrap();
        assert_eq!((batch.to, batch.tp), (64, 64));
        assert_eq!(batch.ck, 4);
        assert_eq!(
            tile(512, 49, 512, 9, None).map(|t| (t.to, t.tp)),
            Some((16, 16))
        );
        assert_eq!(tile(64, 100, 3, 49, None).unwrap().ck, 3);
        assert_eq!(tile(64, 100, 3, 225, None), None);
        // ResNet's 7×7 stem at batch 8: 64×64 would not stage a channel.
        let stem = tile(64, 8 * 112 * 112, 3, 49, None).unwrap();
        assert_eq!((stem.to, stem.tp, stem.ck), (64, 32, 1));
        let big = Forced::Tile {
            to: 64,
            tp: 64,
            blocks: None,
        };
        assert_eq!(tile(64, 100, 3, 49, Some(big)), None);
        assert_eq!(tile(64, 100, 3, 9, Some(big)).map(|t| t.to), Some(64));
    }
}
