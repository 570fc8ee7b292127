//! Convolution, pooling and resampling in the reference interpreter, by
//! their definitions: every output element sums (or compares) its window
//! tap by tap, in f64 for floats (rounded once to the result dtype) and
//! exactly for integers. The geometry (windows, source positions, output
//! sizes) is `kiln_ir::spatial`'s, shared with inference; these ops run
//! here inside compiled plans too.

use kiln_ir::layout::ResultLayout;
use kiln_ir::spatial::{
    Adaptive, Conv, Pool, Resample, Sampling, Spatial, Window, adaptive_window, conv_params,
    pool_params,
};
use kiln_ir::{DType, Error, ErrorKind, Op, Result, TensorType};

use super::{round_result, write_values};
use crate::convert::{Elem, convert};
use crate::tensor::{Indices, Tensor};

/// Runs a spatial op on its tensor operands (an absent bias is `None`).
pub fn run(
    op: &Op,
    spatial: &Spatial,
    args: &[Option<&Tensor>],
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Vec<Tensor>> {
    let x = args
        .first()
        .copied()
        .flatten()
        .ok_or_else(|| Error::new(ErrorKind::Arity, format!("{} needs an input", op.name())))?;
    let values: Vec<Vec<Elem>> = match spatial {
        Spatial::Conv(conv) => {
            let w = args
                .get(1)
                .copied()
                .flatten()
                .ok_or_else(|| Error::new(ErrorKind::Arity, "convolution needs a weight"))?;
            let b = args.get(2).copied().flatten();
            let conv = conv_params(conv, x.shape(), w.shape(), b.map(Tensor::shape))?;
            vec![convolution(&conv, x, w, b, &types[0].shape)]
        }
        Spatial::Pool { pool, .. } => {
            let pool = pool_params(pool, op.name(), x.shape())?;
            let (values, positions) = pooling(&pool, x, &types[0].shape);
            vec![values, positions]
        }
        Spatial::Adaptive(a) => {
            let (values, positions) = adaptive(a, x, &types[0].shape);
            vec![values, positions]
        }
        Spatial::Resample(r) => vec![resample(r, x, &types[0].shape)],
        Spatial::ConvCall(_) => {
            return Err(Error::new(
                ErrorKind::Backend,
                format!("{} runs through its expansion", op.name()),
            ));
        }
    };
    types
        .iter()
        .zip(layouts)
        .zip(values)
        .map(|((ty, layout), values)| {
            let mut out =
                Tensor::zeros_strided(&ty.shape, Some(layout.strides()), ty.dtype, ty.device)?;
            write_values(&mut out, values.into_iter().map(|v| convert(v, ty.dtype)))?;
            Ok(out)
        })
        .collect()
}

/// Row-major strides of `shape`.
fn strides_of(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Every multi-index of `shape`, in row-major order.
fn positions(shape: &[i64]) -> Vec<Vec<i64>> {
    Indices::new(shape).collect()
}

fn floats(t: &Tensor) -> Vec<f64> {
    t.values().into_iter().map(Elem::f64).collect()
}

/// The flat offset of spatial position `pos` in a plane of `size`, or
/// `None` when it falls outside.
fn offset_in(pos: &[i64], size: &[i64], strides: &[i64]) -> Option<i64> {
    let mut off = 0;
    for ((p, s), st) in pos.iter().zip(size).zip(strides) {
        if *p < 0 || p >= s {
            return None;
        }
        off += p * st;
    }
    Some(off)
}

/// `convolution`: `out[n, o, p] = bias[o] + Σ x[n, c, p·s − pad + k·d] · w[o, c, k]`
/// over the input channels `c` of `o`'s group and the taps `k`; transposed,
/// each input position scatters into `p·s − pad + k·d` instead.
fn convolution(
    conv: &Conv,
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    out_shape: &[i64],
) -> Vec<Elem> {
    let dtype = x.dtype();
    let (xs, ws) = (x.shape(), w.shape());
    let (xv, wv) = (floats(x), floats(w));
    let bias = b.map(floats);
    let dims = conv.dims;
    let (batch, out_channels) = (out_shape[0], out_shape[1]);
    let in_size = &xs[2..];
    let out_size = &out_shape[2..];
    let kernel = &ws[2..];
    let (in_plane, out_plane): (i64, i64) = (in_size.iter().product(), out_size.iter().product());
    let (in_strides, out_strides) = (strides_of(in_size), strides_of(out_size));
    let taps = positions(kernel);
    let tap_count = taps.len() as i64;
    let groups = conv.groups;
    let in_per_group = xs[1] / groups;
    let out_per_group = out_channels / groups;
    let mut out = vec![0.0f64; (batch * out_channels * out_plane) as usize];
    let out_positions = positions(out_size);
    let in_positions = positions(in_size);
    // The input position a tap reads for an output position (direct), or
    // the output position an input position and tap feed (transposed).
    let at = |p: &[i64], k: &[i64]| -> Vec<i64> {
        (0..dims)
            .map(|d| p[d] * conv.stride[d] - conv.padding[d] + k[d] * conv.dilation[d])
            .collect()
    };
    for n in 0..batch {
        for g in 0..groups {
            for oc in 0..out_per_group {
                let o = g * out_per_group + oc;
                let out_base = ((n * out_channels + o) * out_plane) as usize;
                for ic in 0..in_per_group {
                    let c = g * in_per_group + ic;
                    let in_base = ((n * xs[1] + c) * in_plane) as usize;
                    // Direct weight [O, C/g, k]; transposed [C, O/g, k].
                    let w_base = if conv.transposed {
                        (c * ws[1] + oc) * tap_count
                    } else {
                        (o * ws[1] + ic) * tap_count
                    } as usize;
                    if conv.transposed {
                        for (ip, p) in in_positions.iter().enumerate() {
                            let v = xv[in_base + ip];
                            for (t, k) in taps.iter().enumerate() {
                                // Transposed: the output position p·s − pad + k·d,
                                // read back as `at` with the input position.
                                if let Some(off) = offset_in(&at(p, k), out_size, &out_strides) {
                                    out[out_base + off as usize] += v * wv[w_base + t];
                                }
                            }
                        }
                    } else {
                        for (op, p) in out_positions.iter().enumerate() {
                            let mut acc = 0.0;
                            for (t, k) in taps.iter().enumerate() {
                                if let Some(off) = offset_in(&at(p, k), in_size, &in_strides) {
                                    acc += xv[in_base + off as usize] * wv[w_base + t];
                                }
                            }
                            out[out_base + op] += acc;
                        }
                    }
                }
                if let Some(bias) = &bias {
                    for v in &mut out[out_base..out_base + out_plane as usize] {
                        *v += bias[o as usize];
                    }
                }
            }
        }
    }
    out.into_iter()
        .map(|v| round_result(Elem::F(v), dtype))
        .collect()
}

/// Whether `v` replaces `best` as a window's maximum: larger, or NaN
/// (PyTorch's `(val > maxval) || isnan(val)`: the last NaN wins).
fn beats(v: Elem, best: Elem) -> bool {
    match (v, best) {
        (Elem::F(v), Elem::F(b)) => v > b || v.is_nan(),
        (Elem::I(v), Elem::I(b)) => v > b,
        (Elem::B(v), Elem::B(b)) => v & !b,
        _ => false,
    }
}

/// The smallest value of `dtype`, where a max window starts.
fn lowest(dtype: DType, first: Elem) -> Elem {
    match first {
        Elem::F(_) if dtype.is_floating_point() => Elem::F(f64::NEG_INFINITY),
        other => other,
    }
}

/// The largest value among a plane's elements at `offsets` (from `base`)
/// and its offset, by PyTorch's rule: from −inf (or the first value) at the
/// first offset, any larger value or NaN replaces it.
fn window_max(xv: &[Elem], base: usize, dtype: DType, offsets: &[i64]) -> (Elem, i64) {
    let first = offsets.first().copied().unwrap_or(0);
    let mut best = lowest(dtype, xv[base + first as usize]);
    let mut at = first;
    for &off in offsets {
        let v = xv[base + off as usize];
        if beats(v, best) {
            best = v;
            at = off;
        }
    }
    (best, at)
}

/// The planes (leading dims) and spatial dims of an input with `dims`
/// spatial dims.
fn split_shape(shape: &[i64], dims: usize) -> (i64, &[i64]) {
    let lead = shape.len() - dims;
    (shape[..lead].iter().product(), &shape[lead..])
}

/// `max_pool*` and `avg_pool*`: the values, and for max the flat spatial
/// positions of the maxima.
fn pooling(pool: &Pool, x: &Tensor, out_shape: &[i64]) -> (Vec<Elem>, Vec<Elem>) {
    let dtype = x.dtype();
    let dims = pool.dims;
    let (planes, in_size) = split_shape(x.shape(), dims);
    let (_, out_size) = split_shape(out_shape, dims);
    let in_strides = strides_of(in_size);
    let in_plane: i64 = in_size.iter().product();
    let xv = x.values();
    let out_positions = positions(out_size);
    let mut values = Vec::with_capacity(out_positions.len() * planes as usize);
    let mut indices = Vec::new();
    for plane in 0..planes {
        let base = (plane * in_plane) as usize;
        for p in &out_positions {
            let start: Vec<i64> = (0..dims)
                .map(|d| p[d] * pool.stride[d] - pool.padding[d])
                .collect();
            match pool.window {
                Window::Max => {
                    // The taps inside the input, first one as the initial position.
                    let inside: Vec<Vec<i64>> = positions(&pool.kernel)
                        .into_iter()
                        .map(|k| {
                            (0..dims)
                                .map(|d| start[d] + k[d] * pool.dilation[d])
                                .collect::<Vec<i64>>()
                        })
                        .filter(|pos| offset_in(pos, in_size, &in_strides).is_some())
                        .collect();
                    let offsets: Vec<i64> = inside
                        .iter()
                        .filter_map(|pos| offset_in(pos, in_size, &in_strides))
                        .collect();
                    let (best, at) = window_max(&xv, base, dtype, &offsets);
                    values.push(best);
                    indices.push(Elem::I(i128::from(at)));
                }
                Window::Avg {
                    count_include_pad,
                    divisor_override,
                } => {
                    // ATen's window: clipped to the padded input for the
                    // pool size, to the input for the sum.
                    let mut pool_size = 1;
                    let mut count = 1;
                    let mut lo = Vec::with_capacity(dims);
                    let mut hi = Vec::with_capacity(dims);
                    for d in 0..dims {
                        let s = start[d];
                        let e = (s + pool.kernel[d]).min(in_size[d] + pool.padding[d]);
                        pool_size *= e - s;
                        let (s, e) = (s.max(0), e.min(in_size[d]));
                        count *= (e - s).max(0);
                        lo.push(s);
                        hi.push(e);
                    }
                    if count == 0 {
                        values.push(convert(Elem::F(0.0), dtype));
                        continue;
                    }
                    let window: Vec<i64> = (0..dims).map(|d| hi[d] - lo[d]).collect();
                    let divisor = divisor_override.unwrap_or(if count_include_pad {
                        pool_size
                    } else {
                        count
                    });
                    let integral = !dtype.is_floating_point();
                    let (mut fsum, mut isum) = (0.0f64, 0i128);
                    for k in positions(&window) {
                        let pos: Vec<i64> = (0..dims).map(|d| lo[d] + k[d]).collect();
                        let v =
                            xv[base + offset_in(&pos, in_size, &in_strides).unwrap_or(0) as usize];
                        if integral {
                            isum += v.int();
                        } else {
                            fsum += v.f64();
                        }
                    }
                    values.push(if integral {
                        Elem::I(isum / i128::from(divisor))
                    } else {
                        round_result(Elem::F(fsum / divisor as f64), dtype)
                    });
                }
            }
        }
    }
    (values, indices)
}

/// Adaptive pooling: the mean or the maximum (and its position) over
/// ATen's windows `[⌊i·in/out⌋, ⌈(i+1)·in/out⌉)`.
fn adaptive(a: &Adaptive, x: &Tensor, out_shape: &[i64]) -> (Vec<Elem>, Vec<Elem>) {
    let dtype = x.dtype();
    let dims = a.dims;
    let (planes, in_size) = split_shape(x.shape(), dims);
    let (_, out_size) = split_shape(out_shape, dims);
    let in_strides = strides_of(in_size);
    let in_plane: i64 = in_size.iter().product();
    let xv = x.values();
    let out_positions = positions(out_size);
    let mut values = Vec::with_capacity(out_positions.len() * planes as usize);
    let mut indices = Vec::new();
    for plane in 0..planes {
        let base = (plane * in_plane) as usize;
        for p in &out_positions {
            let bounds: Vec<(i64, i64)> = (0..dims)
                .map(|d| adaptive_window(p[d], in_size[d], out_size[d]))
                .collect();
            let window: Vec<i64> = bounds.iter().map(|(s, e)| e - s).collect();
            let offsets: Vec<i64> = positions(&window)
                .into_iter()
                .map(|k| {
                    let pos: Vec<i64> = (0..dims).map(|d| bounds[d].0 + k[d]).collect();
                    offset_in(&pos, in_size, &in_strides).unwrap_or(0)
                })
                .collect();
            if a.max {
                let (best, at) = window_max(&xv, base, dtype, &offsets);
                values.push(best);
                indices.push(Elem::I(i128::from(at)));
            } else {
                // From +0, as PyTorch's pooling sums (Rust's float `sum`
                // starts from -0.0).
                let sum = offsets
                    .iter()
                    .fold(0.0, |s, off| s + xv[base + *off as usize].f64());
                values.push(round_result(Elem::F(sum / offsets.len() as f64), dtype));
            }
        }
    }
    (values, indices)
}

/// Resampling: each output position reads its sources per dim (one for
/// nearest, two for linear, four for cubic) and sums them weighted by the
/// product of the per-dim weights.
fn resample(r: &Resample, x: &Tensor, out_shape: &[i64]) -> Vec<Elem> {
    let dtype = x.dtype();
    let dims = r.dims;
    let (planes, in_size) = split_shape(x.shape(), dims);
    let (_, out_size) = split_shape(out_shape, dims);
    let in_strides = strides_of(in_size);
    let in_plane: i64 = in_size.iter().product();
    let xv = x.values();
    // Per dim, per output position: the sources and their weights.
    let taps = r.taps(in_size, out_size);
    let nearest = matches!(r.sampling, Sampling::Nearest | Sampling::NearestExact);
    let out_positions = positions(out_size);
    let mut values = Vec::with_capacity(out_positions.len() * planes as usize);
    for plane in 0..planes {
        let base = (plane * in_plane) as usize;
        for p in &out_positions {
            let per_dim: Vec<&Vec<(i64, f64)>> =
                (0..dims).map(|d| &taps[d][p[d] as usize]).collect();
            if nearest {
                let pos: Vec<i64> = per_dim.iter().map(|t| t[0].0).collect();
                values.push(xv[base + offset_in(&pos, in_size, &in_strides).unwrap_or(0) as usize]);
                continue;
            }
            let counts: Vec<i64> = per_dim.iter().map(|t| t.len() as i64).collect();
            // From −0.0, the additive identity: PyTorch's interpolations
            // are sums of products without a first zero, so a sum of
            // negative zeros stays −0.0.
            let mut acc = -0.0;
            for k in positions(&counts) {
                let mut weight = 1.0;
                let mut pos = Vec::with_capacity(dims);
                for d in 0..dims {
                    let (src, w) = per_dim[d][k[d] as usize];
                    weight *= w;
                    pos.push(src);
                }
                acc += weight
                    * xv[base + offset_in(&pos, in_size, &in_strides).unwrap_or(0) as usize].f64();
            }
            values.push(round_result(Elem::F(acc), dtype));
        }
    }
    values
}

/// Runs `max_unpool2d/3d`, `im2col`, `col2im`, `grid_sampler_2d/3d` and
/// `affine_grid_generator`; `None` for other ops.
pub fn run_other(
    op: &Op,
    args: &[Option<&Tensor>],
    types: &[TensorType],
    layouts: &[ResultLayout],
) -> Result<Option<Vec<Tensor>>> {
    let arg = |i: usize| {
        args.get(i).copied().flatten().ok_or_else(|| {
            Error::new(
                ErrorKind::Arity,
                format!("{} needs operand {}", op.name(), i + 1),
            )
        })
    };
    let out_ty = &types[0];
    let values = match op {
        Op::MaxUnpool2d { .. } | Op::MaxUnpool3d { .. } => {
            let dims = if matches!(op, Op::MaxUnpool2d { .. }) {
                2
            } else {
                3
            };
            max_unpool(dims, arg(0)?, arg(1)?, &out_ty.shape)?
        }
        Op::Im2col {
            kernel_size,
            dilation,
            padding,
            stride,
        } => im2col(
            arg(0)?,
            kernel_size,
            dilation,
            padding,
            stride,
            &out_ty.shape,
        ),
        Op::Col2im {
            kernel_size,
            dilation,
            padding,
            stride,
            ..
        } => col2im(
            arg(0)?,
            kernel_size,
            dilation,
            padding,
            stride,
            &out_ty.shape,
        ),
        Op::GridSampler2d {
            interpolation_mode,
            padding_mode,
            align_corners,
        }
        | Op::GridSampler3d {
            interpolation_mode,
            padding_mode,
            align_corners,
        } => grid_sample(
            arg(0)?,
            arg(1)?,
            *interpolation_mode,
            *padding_mode,
            *align_corners,
            &out_ty.shape,
        ),
        Op::AffineGridGenerator {
            size,
            align_corners,
        } => affine_grid(arg(0)?, size, *align_corners, &out_ty.shape),
        _ => return Ok(None),
    };
    let mut out = Tensor::zeros_strided(
        &out_ty.shape,
        Some(layouts[0].strides()),
        out_ty.dtype,
        out_ty.device,
    )?;
    write_values(
        &mut out,
        values.into_iter().map(|v| convert(v, out_ty.dtype)),
    )?;
    Ok(Some(vec![out]))
}

/// `max_unpool`: zeros with each input value at its plane's flat spatial
/// position from `indices`; a position outside the output is PyTorch's
/// run-time error (checked before anything is written).
fn max_unpool(dims: usize, x: &Tensor, indices: &Tensor, out_shape: &[i64]) -> Result<Vec<Elem>> {
    let (planes, in_size) = split_shape(x.shape(), dims);
    let (_, out_size) = split_shape(out_shape, dims);
    let in_plane: i64 = in_size.iter().product();
    let out_plane: i64 = out_size.iter().product();
    let xv = x.values();
    let iv: Vec<i64> = indices
        .values()
        .into_iter()
        .map(|v| v.int() as i64)
        .collect();
    if let Some(bad) = iv.iter().find(|i| **i < 0 || **i >= out_plane) {
        return Err(Error::new(
            ErrorKind::Runtime,
            format!(
                "Found an invalid max index: {bad} (output volumes are of size {})",
                out_size
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join("x")
            ),
        ));
    }
    let zero = convert(Elem::F(0.0), x.dtype());
    let mut out = vec![zero; (planes * out_plane) as usize];
    for plane in 0..planes {
        for p in 0..in_plane {
            let k = (plane * in_plane + p) as usize;
            out[(plane * out_plane + iv[k]) as usize] = xv[k];
        }
    }
    Ok(out)
}

/// `im2col`: column `c·kh·kw + i·kw + j` of block `(bh, bw)` holds
/// `x[c, bh·sh − ph + i·dh, bw·sw − pw + j·dw]` (zero in the padding).
fn im2col(x: &Tensor, k: &[i64], d: &[i64], p: &[i64], s: &[i64], out_shape: &[i64]) -> Vec<Elem> {
    let rank = x.shape().len();
    let (c, h, w) = (
        x.shape()[rank - 3],
        x.shape()[rank - 2],
        x.shape()[rank - 1],
    );
    let batch: i64 = x.shape()[..rank - 3].iter().product();
    let [bh, bw] = kiln_ir::spatial::blocks(&[h, w], k, d, p, s);
    let xv = x.values();
    let zero = convert(Elem::F(0.0), x.dtype());
    let mut out = Vec::with_capacity(out_shape.iter().product::<i64>() as usize);
    for n in 0..batch {
        for ch in 0..c {
            for i in 0..k[0] {
                for j in 0..k[1] {
                    for oh in 0..bh {
                        for ow in 0..bw {
                            let (ih, iw) =
                                (oh * s[0] - p[0] + i * d[0], ow * s[1] - p[1] + j * d[1]);
                            out.push(if ih < 0 || ih >= h || iw < 0 || iw >= w {
                                zero
                            } else {
                                xv[(((n * c + ch) * h + ih) * w + iw) as usize]
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// `col2im`: each column's values summed back into the image, in f64
/// (exact for integers up to 2⁵³), rounded once.
fn col2im(x: &Tensor, k: &[i64], d: &[i64], p: &[i64], s: &[i64], out_shape: &[i64]) -> Vec<Elem> {
    let rank = out_shape.len();
    let (c, h, w) = (
        out_shape[rank - 3],
        out_shape[rank - 2],
        out_shape[rank - 1],
    );
    let batch: i64 = out_shape[..rank - 3].iter().product();
    let [bh, bw] = kiln_ir::spatial::blocks(&[h, w], k, d, p, s);
    let xv = floats(x);
    let mut out = vec![0f64; (batch * c * h * w) as usize];
    let mut col = 0usize;
    for n in 0..batch {
        for ch in 0..c {
            for i in 0..k[0] {
                for j in 0..k[1] {
                    for oh in 0..bh {
                        for ow in 0..bw {
                            let (ih, iw) =
                                (oh * s[0] - p[0] + i * d[0], ow * s[1] - p[1] + j * d[1]);
                            if ih >= 0 && ih < h && iw >= 0 && iw < w {
                                out[(((n * c + ch) * h + ih) * w + iw) as usize] += xv[col];
                            }
                            col += 1;
                        }
                    }
                }
            }
        }
    }
    out.into_iter()
        .map(|v| round_result(Elem::F(v), x.dtype()))
        .collect()
}

/// `grid_sampler_2d/3d` by ATen's definition: each output position
/// unnormalizes its grid point per dim (x is the last spatial dim),
/// applies the padding mode, and interpolates (bilinear/trilinear weights
/// from the corners, nearest with ties to even, bicubic with A = −0.75 and
/// each tap padded); zeros padding reads 0 outside the input.
fn grid_sample(
    x: &Tensor,
    grid: &Tensor,
    mode: i64,
    padding: i64,
    align_corners: bool,
    out_shape: &[i64],
) -> Vec<Elem> {
    use kiln_ir::spatial::{grid_pad, grid_unnormalize};
    let dtype = x.dtype();
    let dims = x.shape().len() - 2;
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let in_size = &x.shape()[2..];
    let out_size = &out_shape[2..];
    let in_strides = strides_of(in_size);
    let in_plane: i64 = in_size.iter().product();
    let xv = floats(x);
    let gv = floats(grid);
    let out_positions = positions(out_size);
    let count = out_positions.len();
    let mut out = vec![0f64; (n * c) as usize * count];
    // Coordinates are computed in the tensor's dtype (see grid_unnormalize).
    let round = |v: f64| convert(Elem::F(v), dtype).f64();
    let fused = matches!(dtype, DType::F32 | DType::F64);
    // The value at integer position `pos` (outermost dim first), 0 outside.
    let at = |base: usize, pos: &[i64]| -> f64 {
        offset_in(pos, in_size, &in_strides).map_or(0.0, |o| xv[base + o as usize])
    };
    for b in 0..n {
        for (q, _) in out_positions.iter().enumerate() {
            // The grid point: its coordinates are (x, y[, z]) for dims
            // (W, H[, D]); ours are outermost first.
            let g = (b as usize * count + q) * dims;
            let coords: Vec<f64> = (0..dims)
                .map(|d| {
                    let size = in_size[d];
                    let raw = gv[g + dims - 1 - d];
                    grid_unnormalize(raw, size, align_corners, &round, fused)
                })
                .collect();
            for ch in 0..c {
                let base = ((b * c + ch) * in_plane) as usize;
                let value = match mode {
                    1 => {
                        let pos: Vec<i64> = (0..dims)
                            .map(|d| {
                                let v =
                                    grid_pad(coords[d], in_size[d], padding, align_corners, &round);
                                v.round_ties_even() as i64
                            })
                            .collect();
                        at(base, &pos)
                    }
                    2 => {
                        // Bicubic (2-D): 4×4 taps around floor(coord),
                        // each tap's position padded on its own.
                        let (fy, fx) = (coords[0].floor(), coords[1].floor());
                        let (ty, tx) = (coords[0] - fy, coords[1] - fx);
                        let a = -0.75;
                        let near = |t: f64| ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
                        let far = |t: f64| ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
                        let w = |t: f64| [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)];
                        let (wy, wx) = (w(ty), w(tx));
                        // ATen's get_value_bounded: the tap padded, then
                        // truncated toward zero, read only inside.
                        let tap = |v: f64, d: usize| -> Option<i64> {
                            let i = grid_pad(v, in_size[d], padding, align_corners, &round) as i64;
                            (0..in_size[d]).contains(&i).then_some(i)
                        };
                        let mut acc = 0.0;
                        for (i, wyi) in wy.iter().enumerate() {
                            for (j, wxj) in wx.iter().enumerate() {
                                let (py, px) = (fy - 1.0 + i as f64, fx - 1.0 + j as f64);
                                if let (Some(iy), Some(ix)) = (tap(py, 0), tap(px, 1)) {
                                    acc += wyi * wxj * at(base, &[iy, ix]);
                                }
                            }
                        }
                        acc
                    }
                    _ => {
                        // (Bi/tri)linear: the 2ᵈ corners of the cell.
                        let padded: Vec<f64> = (0..dims)
                            .map(|d| {
                                grid_pad(coords[d], in_size[d], padding, align_corners, &round)
                            })
                            .collect();
                        let lo: Vec<f64> = padded.iter().map(|v| v.floor()).collect();
                        let mut acc = 0.0;
                        for corner in 0..(1usize << dims) {
                            let mut weight = 1.0;
                            let mut pos = Vec::with_capacity(dims);
                            for d in 0..dims {
                                let upper = (corner >> (dims - 1 - d)) & 1 == 1;
                                let p = lo[d] + if upper { 1.0 } else { 0.0 };
                                weight *= if upper {
                                    padded[d] - lo[d]
                                } else {
                                    lo[d] + 1.0 - padded[d]
                                };
                                pos.push(p as i64);
                            }
                            acc += weight * at(base, &pos);
                        }
                        acc
                    }
                };
                out[((b * c + ch) as usize) * count + q] = value;
            }
        }
    }
    out.into_iter()
        .map(|v| round_result(Elem::F(v), dtype))
        .collect()
}

/// `affine_grid_generator`: the base grid (normalized positions of pixel
/// centres, or of corners with `align_corners`; x innermost, then y, z,
/// then 1) times each `thetaᵀ`.
fn affine_grid(theta: &Tensor, size: &[i64], align_corners: bool, out_shape: &[i64]) -> Vec<Elem> {
    let dtype = theta.dtype();
    let dims = size.len() - 2;
    let tv = floats(theta);
    let spatial = &size[2..];
    // linspace(-1, 1, n), scaled by (n - 1) / n without align_corners.
    let coord = |i: i64, n: i64| -> f64 {
        if n <= 1 {
            return 0.0;
        }
        let v = -1.0 + 2.0 * i as f64 / (n - 1) as f64;
        if align_corners {
            v
        } else {
            v * (n - 1) as f64 / n as f64
        }
    };
    let cols = dims + 1;
    let mut out = Vec::with_capacity(out_shape.iter().product::<i64>() as usize);
    for b in 0..size[0] as usize {
        for pos in positions(spatial) {
            // [x, y, (z,) 1]: x for the last dim.
            let mut base: Vec<f64> = (0..dims)
                .map(|k| coord(pos[dims - 1 - k], spatial[dims - 1 - k]))
                .collect();
            base.push(1.0);
            for r in 0..dims {
                let row = &tv[(b * dims + r) * cols..(b * dims + r + 1) * cols];
                // From +0, as PyTorch's product (Rust's float `sum`
                // starts from -0.0).
                let v = row.iter().zip(&base).fold(0.0, |s, (t, g)| s + t * g);
                out.push(round_result(Elem::F(v), dtype));
            }
        }
    }
    out
}
