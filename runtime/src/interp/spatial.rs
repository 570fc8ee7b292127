//! Convolution, pooling and resampling in the reference interpreter, by
//! their definitions: every output element sums (or compares) its window
//! tap by tap, in f64 for floats (rounded once to the result dtype) and
//! exactly for integers. The geometry (windows, source positions, output
//! sizes) is `kiln_ir::spatial`'s, shared with inference; these ops run
//! here inside compiled plans too.

use kiln_ir::layout::ResultLayout;
use kiln_ir::spatial::{
    Adaptive, Conv, Pool, Resample, Sampling, Spatial, Window, adaptive_window, conv_params,
    cubic_sources, linear_sources, nearest_source, pool_params,
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
                    let first = inside
                        .first()
                        .and_then(|pos| offset_in(pos, in_size, &in_strides))
                        .unwrap_or(0);
                    let mut best = lowest(dtype, xv[base + first as usize]);
                    let mut at = first;
                    for pos in &inside {
                        let off = offset_in(pos, in_size, &in_strides).unwrap_or(0);
                        let v = xv[base + off as usize];
                        if beats(v, best) {
                            best = v;
                            at = off;
                        }
                    }
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
                let first = offsets.first().copied().unwrap_or(0);
                let mut best = lowest(dtype, xv[base + first as usize]);
                let mut at = first;
                for off in &offsets {
                    let v = xv[base + *off as usize];
                    if beats(v, best) {
                        best = v;
                        at = *off;
                    }
                }
                values.push(best);
                indices.push(Elem::I(i128::from(at)));
            } else {
                let sum: f64 = offsets
                    .iter()
                    .map(|off| xv[base + *off as usize].f64())
                    .sum();
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
    let taps: Vec<Vec<Vec<(i64, f64)>>> = (0..dims)
        .map(|d| {
            let (input, output, scale) =
                (in_size[d], out_size[d], r.scales.get(d).copied().flatten());
            (0..output)
                .map(|dst| match r.sampling {
                    Sampling::Nearest | Sampling::NearestExact => {
                        vec![(
                            nearest_source(r.sampling, dims, dst, input, output, scale),
                            1.0,
                        )]
                    }
                    Sampling::Linear => {
                        let (i0, i1, l0, l1) =
                            linear_sources(dst, input, output, r.align_corners, scale);
                        vec![(i0, l0), (i1, l1)]
                    }
                    Sampling::Cubic => {
                        let (src, w) = cubic_sources(dst, input, output, r.align_corners, scale);
                        src.into_iter().zip(w).collect()
                    }
                })
                .collect()
        })
        .collect();
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
            let mut acc = 0.0;
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
