#!/usr/bin/env python3
"""Result strides PyTorch's CPU gives the spatial ops (convolution, pooling,
resampling) over the operands' memory layouts, for Kiln's layout inference.

    python3 tests/data/generate_spatial_layouts.py   # needs torch; deterministic

Writes `spatial_layouts.json`: one case per line,
`{"op", "attrs", "operands": [{"dtype", "shape", "strides"} | {"none": true}],
"results": [{"dtype", "shape", "strides"}]}`, with Kiln's op and attribute
names as in `torch_values.json` (each case runs `generate_values.spatial_call`).
Inputs are laid out contiguous, channels_last (4-D) / channels_last_3d (5-D),
permuted (4-D/5-D: H and W swapped; 3-D: channels innermost, [N, L, C] in
memory), sliced (every other element of the last dim: not dense), or
channels_last then sliced; weights contiguous or channels_last (3-D weights:
channels innermost). On f32, f64, f16 and bf16; plus size-1 channel and
spatial dims (where two layouts give equal tensors but different strides),
depthwise and grouped convolutions, transposed convolutions, unbatched
inputs, 1x1 kernels, empty batches. Also rot90, the views diagonal and
unfold, and zeros_like/ones_like/full_like/empty_like in each memory
format over the same input layouts (rules of their own: OWN_RULES). Recorded with torch.set_num_threads(1)
on an x86-64 CPU with AVX512-BW/VL/DQ and AVX512-BF16 but no AVX512-FP16
or AMX-FP16; some 3-D convolution cases depend on that (see below).

Rules observed (check_rules() below checks every case against them and the
script stops if one fails). "CL" means channels_last for 4-D tensors and
channels_last_3d for 5-D ones. "x suggests CL" is ATen's
`x.suggest_memory_format() == CL`, which reads the strides only
(c10's is_channels_last_strides_2d_s4/_3d_s5): it is false for a tensor
with a zero-size dim, for a dim-1 stride of 0, and when a size-1 dim makes
the order ambiguous it prefers contiguous, so that a [N, 1, H, W] tensor
with contiguous strides (HW, HW, W, 1) does not suggest CL but one with
(HW, 1, W, 1) does; likewise [N, C, 1, 1] with (C, 1, 1, 1) does not, with
(C, 1, C, C) it does. Non-dense inputs can suggest CL (a channels_last
tensor sliced along W does); a permuted input (H and W swapped) does not.

Every result is dense: the contiguous strides of its shape, or the CL
strides (for 1-D ops, of the 4-D shape [N, C, 1, L] with dim 2 then
removed: strides [C*L, 1, C], "NLC"; for unbatched convolution inputs, of
the batched shape with dim 0 removed). No result keeps a permuted or
sliced operand's own strides.

- conv2d, conv_transpose2d, convolution on 4-D (every groups, depthwise
  included, dilation, transposed, 1x1 kernels, bias or not; all four
  dtypes; with oneDNN or the native kernels): CL iff the input or the
  weight suggests CL. The bias (1-D) plays no part.
- Empty batch (N = 0) convolutions: contiguous, whatever the weight.
- Unbatched inputs ([C, H, W] for conv2d, [C, D, H, W] for conv3d,
  [C, L] for conv1d): PyTorch unsqueezes dim 0 (the new dim's stride is
  size(0) * stride(0), so an input stored as [H, W, C], strides
  [1, W*C, C], becomes [C, 1, W*C, C] and does not suggest CL), applies
  the batched rule and squeezes dim 0 again: the result is [O, H', W']
  with strides [1, W'*O, O] when the weight suggests CL.
- 1-D convolutions (conv1d, conv_transpose1d, convolution on 3-D):
  PyTorch makes the input contiguous, then views input and weight as 4-D
  (unsqueeze(2)), so only the weight counts: the result is NLC
  ([N, O, L] strides [O*L, 1, O]) iff weight.unsqueeze(2) suggests CL (a
  weight stored [O, K, I], channels innermost, does), else contiguous.
- 3-D convolutions (conv3d, conv_transpose3d, convolution on 5-D): CL iff
  (input or weight suggests CL) AND the oneDNN (mkldnn) backend runs (with
  torch.backends.mkldnn disabled a channels_last_3d conv3d gave a
  contiguous result on f32, bf16 and f16). Whether oneDNN runs depends on
  dtype, CPU and thread count. Here: bf16 always; f16 never (so f16 3-D
  results are always contiguous here; PyTorch's source enables oneDNN for
  f16 only on CPUs with AVX512-FP16 or AMX-FP16, and for bf16 on CPUs with
  AVX512-BW/VL/DQ: not observed on other CPUs); f64 never (always
  contiguous); f32 iff (stride != 1 or dilation != 1 or N >= 16 or the
  kernel's last two sizes not both 1 or threads > 1) and (groups > 1 or
  both last two kernel sizes > 3 or N > 1 or N*C*D*H > 20480), each
  branch checked by running. Never for a transposed convolution with
  output_padding >= stride in some dim. So an f32 1x1x1 conv3d with N = 2
  is contiguous with 1 thread and CL with 2; an f32 conv3d with N = 1 (as
  for an unbatched input) and a 2x2x2 kernel is contiguous.
- max_pool2d/3d, max_pool2d/3d_with_indices (both results), avg_pool2d,
  adaptive_avg_pool2d, adaptive_max_pool2d (both results), every 2-D and
  3-D upsampling (nearest, nearest-exact, bilinear, bicubic, trilinear):
  CL iff the input suggests CL. All dtypes.
- avg_pool3d, adaptive_max_pool3d (both results): always contiguous.
  adaptive_avg_pool3d: contiguous, except for output_size [1, 1, 1] (a
  mean) where it is CL iff the input suggests CL.
- avg_pool1d, max_pool1d_with_indices (both results), adaptive_avg_pool1d,
  adaptive_max_pool1d (both results) on 3-D inputs: PyTorch runs the 2-D
  op on x.unsqueeze(-2): NLC iff that suggests CL (an input stored
  [N, L, C] does). max_pool1d (no indices) and the 1-D upsamplings: always
  contiguous.
- Unbatched pooling inputs ([C, H, W] for the 2-D pools, [C, L] for the
  1-D ones): always contiguous.
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate_values import COMPLEX_PARTS, SHORT, spatial_call  # noqa: E402

torch.set_num_threads(1)

DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
CL = {4: torch.channels_last, 5: torch.channels_last_3d}


def laid_out(shape, layout, dt, g):
    """A tensor of logical shape `shape` with the memory layout `layout`."""
    shape = list(shape)
    r = lambda s: torch.randn(*s, generator=g, dtype=torch.float64).to(dt)
    if layout == "contiguous":
        return r(shape)
    if layout == "channels_last":  # the exact strides, also where size-1 dims make them ambiguous
        return torch.empty(shape, dtype=dt, memory_format=CL[len(shape)]).copy_(r(shape))
    if layout == "cl_sliced":
        wide = shape[:-1] + [2 * shape[-1]]
        return torch.empty(wide, dtype=dt, memory_format=CL[len(shape)]).copy_(r(wide))[..., ::2]
    if layout == "permuted":
        if len(shape) == 3:  # channels innermost: stored [N, L, C]
            return r([shape[0], shape[2], shape[1]]).transpose(1, 2)
        if len(shape) == 2:  # stored [L, C]
            return r([shape[1], shape[0]]).t()
        return r(shape[:-2] + [shape[-1], shape[-2]]).transpose(-1, -2)
    if layout == "hwc":  # an unbatched [C, H, W] stored as [H, W, C]
        return r(shape[1:] + shape[:1]).permute(2, 0, 1)
    if layout == "sliced":
        return r(shape[:-1] + [2 * shape[-1]])[..., ::2]
    raise ValueError(layout)


def spec(t):
    return {"dtype": SHORT[t.dtype], "shape": list(t.shape), "strides": list(t.stride())}


CASES = []


def case(op, attrs, operands):
    outs = spatial_call(op, attrs, operands)
    outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
    CASES.append({
        "op": op,
        "attrs": attrs,
        "operands": [{"none": True} if o is None else spec(o) for o in operands],
        "results": [spec(o) for o in outs],
        "_inputs": operands,  # for check_rules(); not written
    })


def in_layouts(rank, dt=torch.float32):
    """Input layouts: all of them on f32, the first two on other dtypes."""
    if rank == 3:
        lays = ("contiguous", "permuted", "sliced")
    else:
        lays = ("contiguous", "channels_last", "permuted", "sliced", "cl_sliced")
    return lays if dt == torch.float32 else lays[:2]


def w_layouts(rank):
    return ("contiguous", "permuted") if rank == 3 else ("contiguous", "channels_last")


def gen_convs(g):
    for dt in DTYPES:
        # conv1d/2d/3d and conv_transpose1d/2d/3d over input x weight layouts.
        for d in (1, 2, 3):
            xs, rank = [2, 4] + [3, 4, 5][3 - d:], d + 2
            for il in in_layouts(rank, dt):
                for wl in w_layouts(rank):
                    x = laid_out(xs, il, dt, g)
                    b = laid_out([6], "contiguous", dt, g)
                    case(f"conv{d}d", {"padding": [1] * d}, [x, laid_out([6, 4] + [3] * d, wl, dt, g), b])
                    wt = laid_out([4, 3] + [2] * d, wl, dt, g)
                    case(f"conv_transpose{d}d", {"stride": [2] * d}, [x, wt, b[:3]])
        # convolution, 2-D, transposed or not.
        for il in in_layouts(4, dt):
            for wl in w_layouts(4):
                x = laid_out([2, 4, 5, 6], il, dt, g)
                conv = {"stride": [1, 2], "padding": [1, 0], "dilation": [1, 1], "transposed": False,
                        "output_padding": [0, 0], "groups": 1}
                case("convolution", conv, [x, laid_out([6, 4, 3, 3], wl, dt, g), None])
                case("convolution", dict(conv, transposed=True, output_padding=[0, 1], groups=2),
                     [x, laid_out([4, 3, 2, 2], wl, dt, g), laid_out([6], "contiguous", dt, g)])
        # Depthwise (groups = in channels, weight [C * m, 1, k, k]) and dilated grouped.
        for il in in_layouts(4, dt)[:4]:
            for wl in w_layouts(4):
                x = laid_out([2, 4, 5, 6], il, dt, g)
                case("conv2d", {"groups": 4, "padding": [1, 1]}, [x, laid_out([4, 1, 3, 3], wl, dt, g)])
                case("conv2d", {"groups": 4}, [x, laid_out([8, 1, 2, 2], wl, dt, g)])
                if dt == torch.float32:
                    case("conv2d", {"groups": 2, "dilation": [2, 2]}, [x, laid_out([6, 2, 2, 2], wl, dt, g)])
        # Unbatched inputs (f32, and bf16 for oneDNN's 3-D convolutions).
        for il in ("contiguous", "hwc", "sliced") if dt in (torch.float32, torch.bfloat16) else ():
            for wl in w_layouts(4):
                case("conv2d", {}, [laid_out([4, 5, 6], il, dt, g), laid_out([6, 4, 3, 3], wl, dt, g)])
        for il in ("contiguous", "permuted", "sliced") if dt in (torch.float32, torch.bfloat16) else ():
            for wl in w_layouts(3):
                case("conv1d", {}, [laid_out([4, 7], il, dt, g), laid_out([6, 4, 3], wl, dt, g)])
        for il in ("contiguous", "channels_last", "permuted") if dt in (torch.float32, torch.bfloat16) else ():
            x = laid_out([2, 2, 3, 4, 5], il, dt, g)[0]
            for wl in w_layouts(5):
                case("conv3d", {}, [x, laid_out([3, 2, 2, 2, 2], wl, dt, g)])
        # convolution on 3-D and 5-D.
        for il in in_layouts(3, dt):
            for wl in w_layouts(3):
                conv = {"stride": [2], "padding": [1], "dilation": [1], "transposed": False,
                        "output_padding": [0], "groups": 1}
                case("convolution", conv, [laid_out([2, 4, 6], il, dt, g), laid_out([3, 4, 3], wl, dt, g), None])
        for il in ("contiguous", "channels_last"):
            for wl in w_layouts(5):
                conv = {"stride": [2, 1, 2], "padding": [0, 0, 0], "dilation": [1, 1, 1], "transposed": True,
                        "output_padding": [1, 0, 1], "groups": 1}
                case("convolution", conv, [laid_out([2, 4, 3, 3, 4], il, dt, g), laid_out([4, 3, 2, 2, 2], wl, dt, g),
                                           None])
    for dt in (torch.float32, torch.bfloat16):
        # 1x1 kernels: the contiguous and the channels_last [O, I, 1, 1] weight.
        for il in in_layouts(4)[:4]:
            for wl in w_layouts(4):
                case("conv2d", {}, [laid_out([2, 4, 5, 6], il, dt, g), laid_out([6, 4, 1, 1], wl, dt, g)])
        # One channel, size-1 spatial dims, one batch, empty batch (f32).
        for xs, ws in () if dt != torch.float32 else (([2, 1, 5, 6], [3, 1, 3, 3]), ([2, 4, 1, 1], [6, 4, 1, 1]), ([2, 4, 1, 6], [6, 4, 1, 3]),
                       ([1, 4, 5, 6], [6, 4, 3, 3]), ([1, 1, 5, 6], [1, 1, 3, 3]), ([0, 4, 5, 6], [6, 4, 3, 3])):
            for il in ("contiguous", "channels_last"):
                for wl in ("contiguous", "channels_last"):
                    case("conv2d", {}, [laid_out(xs, il, dt, g), laid_out(ws, wl, dt, g)])
        for il in ("contiguous", "channels_last"):
            for wl in ("contiguous", "channels_last"):
                x = laid_out([2, 4, 3, 3, 4], il, dt, g)
                case("conv3d", {"groups": 4}, [x, laid_out([4, 1, 2, 2, 2], wl, dt, g)])
                case("conv_transpose2d", {"groups": 4}, [laid_out([2, 4, 5, 6], il, dt, g),
                                                         laid_out([4, 1, 3, 3], wl, dt, g)])
                case("conv_transpose2d", {}, [laid_out([2, 1, 5, 6], il, dt, g), laid_out([1, 3, 3, 3], wl, dt, g)])
                # The oneDNN heuristics for 3-D convolutions (f32): 1x1x1 kernels, one batch, strides.
                case("conv3d", {}, [x, laid_out([3, 4, 1, 1, 1], wl, dt, g)])
                case("conv3d", {"stride": [1, 1, 2]}, [x, laid_out([3, 4, 1, 1, 1], wl, dt, g)])
                case("conv3d", {}, [x[:1], laid_out([3, 4, 2, 2, 2], wl, dt, g)])
                case("conv3d", {"padding": [0, 1, 0]}, [x[:1], laid_out([3, 4, 1, 4, 4], wl, dt, g)])
                case("conv3d", {"groups": 2}, [x[:1], laid_out([2, 2, 2, 2, 2], wl, dt, g)])
                case("conv3d", {"padding": "same"}, [x, laid_out([3, 4, 2, 2, 2], wl, dt, g)])
                case("conv3d", {}, [x[:0], laid_out([3, 4, 2, 2, 2], wl, dt, g)])
                # Transposed with output_padding >= stride (allowed as < dilation): no oneDNN;
                # then output_padding < stride.
                case("conv_transpose3d", {"stride": [1, 1, 1], "output_padding": [1, 0, 0], "dilation": [2, 1, 1]},
                     [x, laid_out([4, 3, 2, 2, 2], wl, dt, g)])
                case("conv_transpose3d", {"stride": [2, 1, 1], "output_padding": [1, 0, 0]},
                     [x, laid_out([4, 3, 2, 2, 2], wl, dt, g)])


def gen_pools_upsamples(g):
    for dt in DTYPES:
        for d in (1, 2, 3):
            rank = d + 2
            shape = [2, 3] + [6, 5, 4][:d]
            ops = [
                (f"max_pool{d}d", {"kernel_size": [2] * d}),
                (f"max_pool{d}d_with_indices", {"kernel_size": [2] * d, "padding": [1] * d}),
                (f"avg_pool{d}d", {"kernel_size": [2] * d, "padding": [1] * d}),
                (f"adaptive_avg_pool{d}d", {"output_size": [3] * d}),
                (f"adaptive_max_pool{d}d", {"output_size": [3] * d}),
                (f"upsample_nearest{d}d", {"output_size": [7, 9, 5][:d]}),
                (f"_upsample_nearest_exact{d}d", {"output_size": [3, 4, 6][:d]}),
            ]
            ops += {1: [("upsample_linear1d", {"output_size": [9], "align_corners": False})],
                    2: [("upsample_bilinear2d", {"output_size": [8, 7], "align_corners": True}),
                        ("upsample_bicubic2d", {"output_size": [4, 9], "align_corners": False})],
                    3: [("upsample_trilinear3d", {"output_size": [7, 3, 5], "align_corners": False})]}[d]
            for op, attrs in ops:
                if op == "avg_pool3d" and dt in (torch.float16, torch.bfloat16):
                    continue  # not implemented for Half and BFloat16 on CPU
                for il in in_layouts(rank, dt):
                    case(op, attrs, [laid_out(shape, il, dt, g)])
    # Size-1 dims, output size 1 (adaptive_avg_pool's mean), unbatched, empty batch.
    for dt in (torch.float32,):
        for shape in ([2, 1, 5, 6], [2, 3, 1, 1], [1, 3, 5, 6], [0, 3, 5, 6], [2, 3, 1, 6]):
            for il in ("contiguous", "channels_last"):
                x = laid_out(shape, il, dt, g)
                case("max_pool2d", {"kernel_size": [1, 1]}, [x])
                case("max_pool2d_with_indices", {"kernel_size": [1, 2], "ceil_mode": True}, [x])
                case("avg_pool2d", {"kernel_size": [1, 1]}, [x])
                case("adaptive_avg_pool2d", {"output_size": [2, 2]}, [x])
                case("adaptive_max_pool2d", {"output_size": [1, 2]}, [x])
                case("upsample_nearest2d", {"output_size": [2, 3]}, [x])
                case("upsample_bilinear2d", {"output_size": [3, 2], "align_corners": False}, [x])
        for shape in ([2, 1, 3, 4, 5], [2, 3, 1, 1, 1]):
            for il in ("contiguous", "channels_last"):
                x = laid_out(shape, il, dt, g)
                case("max_pool3d", {"kernel_size": [1, 1, 1]}, [x])
                case("adaptive_avg_pool3d", {"output_size": [1, 1, 1]}, [x])
                case("upsample_trilinear3d", {"output_size": [2, 2, 2], "align_corners": True}, [x])
        for il in in_layouts(4):
            x = laid_out([2, 3, 5, 6], il, dt, g)
            case("adaptive_avg_pool2d", {"output_size": [1, 1]}, [x])
            case("adaptive_max_pool2d", {"output_size": [1, 1]}, [x])
        for il in in_layouts(5):
            case("adaptive_avg_pool3d", {"output_size": [1, 1, 1]}, [laid_out([2, 3, 3, 4, 5], il, dt, g)])
        for il in in_layouts(3):
            case("adaptive_avg_pool1d", {"output_size": [1]}, [laid_out([2, 3, 5], il, dt, g)])
        for il in ("contiguous", "hwc", "sliced"):
            x = laid_out([3, 5, 6], il, dt, g)
            case("max_pool2d", {"kernel_size": [2, 2]}, [x])
            case("max_pool2d_with_indices", {"kernel_size": [2, 2]}, [x])
            case("avg_pool2d", {"kernel_size": [2, 2]}, [x])
            case("adaptive_avg_pool2d", {"output_size": [2, 2]}, [x])
            case("adaptive_max_pool2d", {"output_size": [2, 2]}, [x])
        for il in ("contiguous", "permuted", "sliced"):
            x = laid_out([3, 6], il, dt, g)
            case("max_pool1d_with_indices", {"kernel_size": [2]}, [x])
            case("avg_pool1d", {"kernel_size": [2]}, [x])
            case("adaptive_max_pool1d", {"output_size": [4]}, [x])


def suggests_cl(t):
    """ATen's `t.suggest_memory_format() == channels_last(_3d)`: the strides
    test of c10's is_channels_last_strides_2d_s4 / _3d_s5."""
    if t is None or t.dim() not in CL:
        return False
    sizes, strides = t.shape, t.stride()
    if strides[1] == 0:
        return False
    lo = 0
    for d in ((1, 3, 2, 0) if t.dim() == 4 else (1, 4, 3, 2, 0)):
        if sizes[d] == 0 or strides[d] < lo:
            return False
        if d == 0 and lo == strides[1]:
            return False
        lo = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def onednn_3d(dt, x, w, a, transposed):
    """Whether PyTorch's CPU runs a 5-D convolution with oneDNN (on the
    machine that recorded the file, with one thread)."""
    stride, dilation = a.get("stride", [1]), a.get("dilation", [1])
    if transposed and any(op >= s for op, s in zip(a.get("output_padding", [0]) * 3, stride * 3)):
        return False
    if dt == torch.bfloat16:
        return True
    if dt != torch.float32:
        return False
    n, c, d, h = x.shape[:4]
    threads = torch.get_num_threads()
    return ((any(s != 1 for s in stride) or any(v != 1 for v in dilation) or n >= 16
             or w.shape[-1] != 1 or w.shape[-2] != 1 or threads > 1)
            and (a.get("groups", 1) > 1 or (w.shape[-1] > 3 and w.shape[-2] > 3) or n > 1 or n * c * d * h > 20480))


def expected_strides(c, out_shape):
    """The docstring's rules: the strides PyTorch should give a result of
    shape out_shape."""
    op, a, ins = c["op"], c["attrs"], c["_inputs"]
    x = ins[0]
    inserted = []  # dims of the internal 4-D/5-D result the op removes, last first
    cl = False
    if op.startswith("conv"):
        w = ins[1]
        transposed = op.startswith("conv_transpose") or a.get("transposed", False)
        if x.dim() == w.dim() - 1:
            x = x.unsqueeze(0)
            inserted.append(0)
        if w.dim() == 3:
            x, w = x.contiguous().unsqueeze(2), w.unsqueeze(2)
            inserted.insert(0, 2)
        if x.shape[0] == 0:
            cl = False
        elif w.dim() == 4:
            cl = suggests_cl(x) or suggests_cl(w)
        else:
            cl = (suggests_cl(x) or suggests_cl(w)) and onednn_3d(x.dtype, x, w, a, transposed)
    elif op in ("avg_pool1d", "max_pool1d_with_indices", "adaptive_avg_pool1d", "adaptive_max_pool1d"):
        if x.dim() == 3:
            cl = suggests_cl(x.unsqueeze(-2))
            inserted.append(2)
    elif op in ("avg_pool3d", "adaptive_max_pool3d"):
        cl = False
    elif op == "adaptive_avg_pool3d":
        cl = suggests_cl(x) and a["output_size"] == [1, 1, 1]
    else:
        cl = suggests_cl(x)
    shape = list(out_shape)
    for d in reversed(inserted):
        shape.insert(d, 1)
    t = torch.empty(shape, memory_format=CL[len(shape)]) if cl else torch.empty(shape)
    strides = list(t.stride())
    for d in inserted:
        del strides[d]
    return strides


def check_rules():
    bad = []
    for c in CASES:
        if c["op"] in OWN_RULES + COMPLEX_PARTS:
            continue  # their own rules, checked by the Rust test
        for r in c["results"]:
            want = expected_strides(c, r["shape"])
            if want != r["strides"]:
                bad.append((c["op"], c["attrs"], [o.get("shape") for o in c["operands"]],
                            [o.get("strides") for o in c["operands"]], r["strides"], want))
    return bad


def gen_pads(g):
    """The reflection and replication pads (F.pad's reflect and replicate
    modes): the input's suggested memory format, batched and unbatched."""
    for dt in (torch.float32, torch.float64):
        for k in (1, 2, 3):
            for mode in ("reflection", "replication"):
                op, attrs = f"{mode}_pad{k}d", {"padding": [1, 2, 2, 1, 1, 1][:2 * k]}
                shape = [2, 3] + [6, 5, 4][:k]
                for il in in_layouts(k + 2, dt):
                    case(op, attrs, [laid_out(shape, il, dt, g)])
                if k == 2:
                    for il in ("contiguous", "hwc"):
                        case(op, attrs, [laid_out(shape[1:], il, dt, g)])


def gen_shuffles(g):
    """pixel_shuffle, pixel_unshuffle, channel_shuffle: the input's
    suggested memory format."""
    for op, attrs, shape in (("pixel_shuffle", {"upscale_factor": 2}, [2, 8, 3, 4]),
                             ("pixel_unshuffle", {"downscale_factor": 2}, [2, 2, 4, 6]),
                             ("channel_shuffle", {"groups": 2}, [2, 8, 3, 4])):
        for il in in_layouts(4):
            case(op, attrs, [laid_out(shape, il, torch.float32, g)])
        if op != "channel_shuffle":  # its channels are dim 1 whatever the rank
            for il in ("contiguous", "hwc"):
                case(op, attrs, [laid_out(shape[1:], il, torch.float32, g)])


def gen_rot90(g):
    """rot90's result strides: a contiguous copy for no turn, else a flip's
    (the input's format kept) transposed for odd turns."""
    for k in (0, 1, 2, 3):
        for dims in ([2, 3], [1, 2]):
            for il in in_layouts(4):
                case("rot90", {"k": k, "dims": dims}, [laid_out([2, 3, 4, 5], il, torch.float32, g)])


def gen_complex_parts(g):
    """Where PyTorch's complex-part views put their elements (twice a
    complex tensor's strides), conj's and angle's copies, isreal's
    TensorIterator layout, view_as_complex's halved strides."""
    for il in in_layouts(4):
        z = laid_out([2, 3, 4, 5], il, torch.complex64, g)
        for op in ("real", "imag", "conj", "conj_physical", "angle", "isreal", "view_as_real"):
            case(op, {}, [z])
        x = laid_out([2, 3, 4, 5], il, torch.float32, g)
        for op in ("real", "conj", "angle", "isreal"):
            case(op, {}, [x])
    for il in ("contiguous", "permuted"):
        a, b = laid_out([3, 4], il, torch.float32, g), laid_out([3, 4], "contiguous", torch.float32, g)
        case("complex", {}, [a, b])
        case("polar", {}, [a, b])
    pairs = torch.randn(4, 3, 2, generator=g)
    for t in (pairs, pairs.transpose(0, 1), pairs[::2]):
        case("view_as_complex", {}, [t])
# Ops with rules of their own: rot90 (a flip's strides, transposed), the
# views (PyTorch's view geometry over the operand's strides) and the *_like
# ops (empty_like's: a dense operand's strides, else dense in its order).
OWN_RULES = ("rot90", "prelu", "diagonal", "unfold", "zeros_like", "ones_like", "full_like", "empty_like")


def gen_views_likes(g):
    """diagonal and unfold (views: the operand's strides combined) and the
    *_like ops in each memory format over every input layout."""
    for il in in_layouts(4):
        x = laid_out([2, 3, 4, 5], il, torch.float32, g)
        for off, d1, d2 in ((0, 2, 3), (1, 1, 3), (-1, 3, 0)):
            case("diagonal", {"offset": off, "dim1": d1, "dim2": d2}, [x])
        case("unfold", {"dimension": 3, "size": 2, "step": 2}, [x])
        case("unfold", {"dimension": 1, "size": 3, "step": 1}, [x])
        for op in ("zeros_like", "ones_like", "full_like", "empty_like"):
            for fmt in ("preserve", "contiguous", "channels_last"):
                attrs = {"memory_format": fmt}
                if op == "full_like":
                    attrs["fill_value"] = 2.0
                case(op, attrs, [x])


def gen_prelu(g):
    """prelu's result strides (TensorIterator over the input and the weight
    viewed as [1, C, 1, ...]) for one weight and one per channel."""
    for rank, shape in ((4, [2, 3, 4, 5]), (3, [2, 3, 4]), (4, [2, 3, 1, 1]), (4, [2, 1, 4, 5])):
        for il in in_layouts(rank):
            for n in (1, shape[1]):
                x = laid_out(shape, il, torch.float32, g)
                case("prelu", {}, [x, torch.randn(n, generator=g)])


def main():
    g = torch.Generator().manual_seed(7)
    gen_convs(g)
    gen_pools_upsamples(g)
    gen_pads(g)
    gen_shuffles(g)
    gen_rot90(g)
    gen_prelu(g)
    gen_complex_parts(g)
    gen_views_likes(g)
    bad = check_rules()
    for b in bad:
        print("rule broken (op, attrs, shapes, strides, result strides, expected):", b, file=sys.stderr)
    meta = {
        "torch_version": torch.__version__,
        "generator": "generate_spatial_layouts.py",
        "threads": torch.get_num_threads(),
        "notes": "result strides of the spatial ops on PyTorch's CPU over operand layouts (contiguous, channels_last, "
                 "channels_last_3d, permuted, sliced, channels_last sliced); the rules are in the generator's docstring "
                 "and hold for every case; 3-D convolutions depend on the CPU (bf16 oneDNN: AVX512-BW/VL/DQ; "
                 "f16 oneDNN: AVX512-FP16 or AMX-FP16, absent here) and on the thread count for f32",
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spatial_layouts.json")
    with open(path, "w") as f:
        f.write("{\n")
        f.write(f'"meta": {json.dumps(meta)},\n"cases": [\n')
        f.write(",\n".join(json.dumps({k: v for k, v in c.items() if not k.startswith("_")}) for c in CASES))
        f.write("\n]}\n")
    print(f"{len(CASES)} cases -> {path}", file=sys.stderr)
    if bad:
        sys.exit(f"{len(bad)} results break the docstring's rules")


if __name__ == "__main__":
    main()
