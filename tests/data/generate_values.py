#!/usr/bin/env python3
"""Expected values for Kiln's reference interpreter, computed by PyTorch.

For every op of IR.md and every dtype PyTorch's CPU runs it on, this script
runs the op on small deterministic inputs and records inputs and outputs in
`torch_values.json`. Kiln's test `tests/interp_values.rs` runs the same
programs on the interpreter and compares: integers and bools exactly, floats
within the tolerance stated in that test.

    python3 tests/data/generate_values.py   # needs torch; deterministic output

Values are written as strings that round-trip exactly through float64
(`"nan"`, `"-0.0"`, `"inf"`), complex values as [re, im], integers as
strings; an absent optional tensor operand is `{"none": true}`. A case
PyTorch refuses (issue 20's ops on the dtypes their CPU kernels do not
take) has "error", PyTorch's message, in place of "results".

Issue 16's cases draw on PyTorch's OpInfo sample inputs
(`torch.testing._internal`, which needs the `expecttest` package).
"""

import json
import math
import os
import sys

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

SHORT = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.complex32: "c32", torch.complex64: "c64", torch.complex128: "c128",
    torch.float8_e4m3fn: "f8e4m3fn", torch.float8_e5m2: "f8e5m2", torch.float8_e4m3fnuz: "f8e4m3fnuz",
    torch.float8_e5m2fnuz: "f8e5m2fnuz", torch.float8_e8m0fnu: "f8e8m0fnu",
    torch.uint8: "u8", torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
    torch.uint16: "u16", torch.uint32: "u32", torch.uint64: "u64", torch.bool: "bool",
}
BY_SHORT = {v: k for k, v in SHORT.items()}
DTYPES = list(SHORT)

FLOAT_VALUES = [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.25, -7.75, 100.0, 0.001]
SPECIAL_FLOATS = [float("inf"), float("-inf"), float("nan")]
INT_VALUES = [-7, -2, -1, 0, 1, 2, 3, 5, 9, 100, 127, -128]
UINT_VALUES = [0, 1, 2, 3, 5, 7, 9, 100, 200, 255, 17, 64]


def values_for(dt, n=12, special=True, positive=False, nonzero=False):
    """Deterministic input values for a dtype (12 of them by default)."""
    if dt == torch.bool:
        vals = [bool(i % 3 != 1) for i in range(n)]
    elif dt.is_complex:
        base = FLOAT_VALUES + ([float("nan")] if special else [])
        vals = [complex(base[i % len(base)], base[(i + 3) % len(base)]) for i in range(n)]
    elif dt.is_floating_point:
        base = FLOAT_VALUES + (SPECIAL_FLOATS if special else [])
        vals = [base[i % len(base)] for i in range(n)]
    elif dt in (torch.uint8, torch.uint16, torch.uint32, torch.uint64):
        vals = [UINT_VALUES[i % len(UINT_VALUES)] for i in range(n)]
    else:
        vals = [INT_VALUES[i % len(INT_VALUES)] for i in range(n)]
    if positive and not dt.is_complex and dt != torch.bool:
        vals = [abs(v) + (1 if not dt.is_floating_point else 0.5) for v in vals]
    if nonzero and not dt.is_complex and dt != torch.bool:
        vals = [v if v != 0 else 3 for v in vals]
    return vals


def make(dt, shape, reverse=False, **kw):
    n = math.prod(shape)
    vals = values_for(dt, n, **kw)
    if reverse:
        vals = vals[::-1]
    if dt.is_floating_point and dt.itemsize == 1:
        return torch.tensor(vals, dtype=torch.float32).to(dt).reshape(shape)
    return torch.tensor(vals, dtype=dt).reshape(shape)


# Whether enc() writes NaNs with the sign bit as "-nan" (issue 20's cases:
# signbit and copysign read it); elsewhere a NaN is "nan".
SIGNED_NAN = False


def enc_float(x):
    """A float exactly, "-nan" for a NaN with the sign bit where SIGNED_NAN."""
    if SIGNED_NAN and math.isnan(x) and math.copysign(1.0, x) < 0:
        return "-nan"
    return repr(float(x))


def enc(t):
    """Encodes a tensor's values (logical order) exactly."""
    flat = t.detach().reshape(-1)
    if t.dtype == torch.bool:
        return [bool(x) for x in flat.tolist()]
    if t.dtype.is_complex:
        c = flat.to(torch.complex128)
        return [[repr(float(z.real)), repr(float(z.imag))] for z in c.tolist()]
    if t.dtype.is_floating_point:
        return [enc_float(x) for x in flat.to(torch.float64).tolist()]
    if t.dtype == torch.uint64:
        return [str(x if x >= 0 else x + 2**64) for x in flat.to(torch.int64).tolist()]
    return [str(x) for x in flat.tolist()]


def tensor_spec(t):
    return {"dtype": SHORT[t.dtype], "shape": list(t.shape), "values": enc(t)}


def scalar_spec(v):
    if isinstance(v, bool):
        return {"scalar": "bool", "value": "true" if v else "false"}
    if isinstance(v, int):
        return {"scalar": "int", "value": str(v)}
    if isinstance(v, complex):
        return {"scalar": "complex", "value": f"complex({v.real!r}, {v.imag!r})"}
    return {"scalar": "float", "value": repr(v)}


CASES = []


def record_refusal(op, attrs, operands, fn):
    """Runs fn() and records PyTorch's error message if it refuses (a case
    with "error" in place of "results"); nothing if it computes."""
    try:
        fn()
    except (RuntimeError, NotImplementedError, TypeError, ValueError, IndexError) as e:
        CASES.append({
            "op": op,
            "attrs": attrs,
            "operands": [tensor_spec(o) if isinstance(o, torch.Tensor) else {"none": True} if o is None
                         else scalar_spec(o) for o in operands],
            "error": str(e).split("\n")[0],
        })


def record(op, attrs, operands, fn):
    """Runs fn() and records the case if PyTorch computes it."""
    try:
        out = fn()
    except Exception:
        return
    case = {
        "op": op,
        "attrs": attrs,
        "operands": [tensor_spec(o) if isinstance(o, torch.Tensor) else {"none": True} if o is None
                     else scalar_spec(o) for o in operands],
    }
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    case["results"] = [tensor_spec(o) for o in outs]
    CASES.append(case)


UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "log": torch.log, "log2": torch.log2,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "relu": torch.relu, "gelu": F.gelu, "silu": F.silu, "erf": torch.erf,
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc,
    "sign": torch.sign, "reciprocal": torch.reciprocal, "logical_not": torch.logical_not,
    "bitwise_not": torch.bitwise_not, "isnan": torch.isnan,
    "log1p": torch.log1p, "expm1": torch.expm1, "hardswish": F.hardswish, "softplus": F.softplus,
    "elu": F.elu, "selu": F.selu, "celu": F.celu, "leaky_relu": F.leaky_relu, "hardtanh": F.hardtanh,
    "relu6": F.relu6, "hardsigmoid": F.hardsigmoid, "mish": F.mish, "softsign": F.softsign,
    "tanhshrink": F.tanhshrink, "softshrink": F.softshrink, "hardshrink": F.hardshrink,
    "logsigmoid": F.logsigmoid, "rrelu": lambda x: F.rrelu(x, training=False),
    "square": torch.square, "positive": torch.positive, "isinf": torch.isinf,
    "isfinite": torch.isfinite, "isposinf": torch.isposinf, "isneginf": torch.isneginf,
    "frac": torch.frac, "deg2rad": torch.deg2rad, "rad2deg": torch.rad2deg, "logit": torch.logit,
    "nan_to_num": torch.nan_to_num, "sinc": torch.sinc,
    "tan": torch.tan, "sinh": torch.sinh, "cosh": torch.cosh, "asinh": torch.asinh,
    "acosh": torch.acosh, "atanh": torch.atanh, "log10": torch.log10, "exp2": torch.exp2,
}

BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "remainder": torch.remainder, "pow": torch.pow, "maximum": torch.maximum, "minimum": torch.minimum,
    "eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
    "logical_and": torch.logical_and, "logical_or": torch.logical_or, "logical_xor": torch.logical_xor,
    "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
}


# Ops Kiln refuses on complex tensors (with ErrorKind::Unsupported: it
# cannot yet address real and imaginary parts), tested in interp_values.rs.
REFUSED_COMPLEX = {"isinf", "isfinite", "nan_to_num", "tan", "sinh", "cosh", "asinh", "acosh",
                   "atanh", "log10", "exp2"}


def gen_unary():
    for name, fn in UNARY.items():
        for dt in DTYPES:
            if name in REFUSED_COMPLEX and dt.is_complex:
                continue
            x = make(dt, [3, 4])
            record(name, {}, [x], lambda: fn(x))
        x = make(torch.float32, [3, 4])
        record("gelu", {"approximate": "tanh"}, [x], lambda: F.gelu(x, approximate="tanh"))
        xh = make(torch.float16, [3, 4])
        record("gelu", {"approximate": "tanh"}, [xh], lambda: F.gelu(xh, approximate="tanh"))
    for dt in (torch.float32, torch.float64, torch.bfloat16):
        x = make(dt, [3, 4])
        attrs = {"beta": scalar_spec(2), "threshold": scalar_spec(1.5)}
        record("softplus", attrs, [x], lambda: F.softplus(x, beta=2, threshold=1.5))


def gen_activations():
    """The activations' attributes away from their defaults."""
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x = make(dt, [3, 4])
        record("elu", {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}, [x],
               lambda: torch.ops.aten.elu(x, 0.5, 2.0, 1.5))
        record("celu", {"alpha": 2.0}, [x], lambda: F.celu(x, alpha=2.0))
        record("leaky_relu", {"negative_slope": 0.2}, [x], lambda: F.leaky_relu(x, 0.2))
        record("rrelu", {"lower": 0.1, "upper": 0.3}, [x],
               lambda: F.rrelu(x, 0.1, 0.3, training=False))
        record("softshrink", {"lambd": 1.0}, [x], lambda: F.softshrink(x, 1.0))
        record("hardshrink", {"lambd": 1.0}, [x], lambda: F.hardshrink(x, 1.0))
        record("softmin", {"dim": 1}, [x], lambda: F.softmin(x, dim=1))
        record("softmin", {"dim": 0}, [x], lambda: F.softmin(x, dim=0))
        record("glu", {}, [x], lambda: F.glu(x))
        x43 = make(dt, [4, 3])
        record("glu", {"dim": 0}, [x43], lambda: F.glu(x43, dim=0))
        record("logit", {"eps": 0.25}, [x], lambda: torch.logit(x, eps=0.25))
        record("nan_to_num", {"nan": 1.5, "posinf": 100.0, "neginf": -100.0}, [x],
               lambda: torch.nan_to_num(x, nan=1.5, posinf=100.0, neginf=-100.0))
        xp = make(dt, [3, 4], positive=True)
        record("logit", {}, [xp / (xp.abs().max() * 2)], lambda: torch.logit(xp / (xp.abs().max() * 2)))
    for dt in DTYPES:
        x = make(dt, [3, 4])
        record("hardtanh", {"min_val": scalar_spec(-2), "max_val": scalar_spec(0.5)}, [x],
               lambda: F.hardtanh(x, -2, 0.5))
        record("hardtanh", {"min_val": scalar_spec(1.5), "max_val": scalar_spec(2.5)}, [x],
               lambda: F.hardtanh(x, 1.5, 2.5))
        record("threshold", {"threshold": scalar_spec(1.0), "value": scalar_spec(20.0)}, [x],
               lambda: F.threshold(x, 1.0, 20.0))
        record("threshold", {"threshold": scalar_spec(2), "value": scalar_spec(-5)}, [x],
               lambda: F.threshold(x, 2, -5))


def gen_statistics():
    """var/std (and their _mean pairs), logsumexp, nansum/nanmean,
    count_nonzero and vector norms, over dims, keepdim and corrections."""
    # Refused by Kiln (ErrorKind::Unsupported): the var family on complex32
    # and var_mean/std_mean on complex, which PyTorch reduces part by part;
    # count_nonzero on float8_e8m0fnu,
    # which PyTorch decides on bit patterns.
    for dt in DTYPES:
        x = make(dt, [3, 4])
        if dt == torch.complex32 or dt == torch.float8_e8m0fnu:
            continue
        for dims, keep in ((None, False), ([1], False), ([0], True), ([0, 1], False)):
            attrs = {"keepdim": keep}
            kw = {"keepdim": keep}
            if dims is not None:
                attrs["dims"] = dims
                kw["dim"] = dims
            for c in (1, 0, 2.5):
                a = dict(attrs, correction=scalar_spec(c))
                record("var", a, [x], lambda: torch.var(x, correction=c, **kw))
                record("std", a, [x], lambda: torch.std(x, correction=c, **kw))
                if not dt.is_complex:  # refused by Kiln, as complex32 above
                    record("var_mean", a, [x], lambda: torch.var_mean(x, correction=c, **kw))
                    record("std_mean", a, [x], lambda: torch.std_mean(x, correction=c, **kw))
            record("nansum", attrs, [x], lambda: torch.nansum(x, **kw))
            record("nanmean", attrs, [x], lambda: torch.nanmean(x, **kw))
            if dims is not None and not dt.is_complex:  # complex: refused by Kiln
                record("logsumexp", {"dims": dims, "keepdim": keep}, [x],
                       lambda: torch.logsumexp(x, dims, keepdim=keep))
                record("count_nonzero", {"dims": dims}, [x], lambda: torch.count_nonzero(x, dims))
            for o in (2, 1, 0, float("inf"), float("-inf"), 3.0, 0.5):
                record("linalg_vector_norm", dict(attrs, ord=scalar_spec(o)), [x],
                       lambda: torch.linalg.vector_norm(x, o, **kw))
        record("count_nonzero", {}, [x], lambda: torch.count_nonzero(x))
    x = torch.tensor([[float("-inf")] * 3, [float("inf"), 1.0, 2.0]])
    record("logsumexp", {"dims": [1]}, [x], lambda: torch.logsumexp(x, 1))
    x = torch.randn(3, 5, dtype=torch.float64) * 30
    record("logsumexp", {"dims": [0, 1], "keepdim": True}, [x], lambda: torch.logsumexp(x, (0, 1), keepdim=True))


def gen_scans():
    """cumsum, cumprod (with dtype), logcumsumexp, cummax and cummin on
    every dtype, both dims, a 0-dim tensor, and long rows whose rounding
    shows the accumulator dtype."""
    for dt in DTYPES:
        x = make(dt, [3, 4])
        for dim in (0, 1, -1):
            record("cumsum", {"dim": dim}, [x], lambda: torch.cumsum(x, dim))
            record("cumprod", {"dim": dim}, [x], lambda: torch.cumprod(x, dim))
            if not dt.is_complex:  # refused by Kiln
                record("logcumsumexp", {"dim": dim}, [x], lambda: torch.logcumsumexp(x, dim))
            record("cummax", {"dim": dim}, [x], lambda: torch.cummax(x, dim))
            record("cummin", {"dim": dim}, [x], lambda: torch.cummin(x, dim))
        record("cumsum", {"dim": 1, "dtype": "f64"}, [x], lambda: torch.cumsum(x, 1, dtype=torch.float64))
        record("cumprod", {"dim": 0, "dtype": "i32"}, [x], lambda: torch.cumprod(x, 0, dtype=torch.int32))
        s = make(dt, [])
        # (PyTorch copies 0-dim float8 and complex tensors without the
        # dtype checks of its kernels, which Kiln keeps.)
        if not (dt.is_floating_point and dt.itemsize == 1) and dt not in (torch.uint16, torch.uint32, torch.uint64):
            record("cumsum", {"dim": 0}, [s], lambda: torch.cumsum(s, 0))
        if dt in (torch.float32, torch.int64, torch.bool):
            record("cummax", {"dim": -1}, [s], lambda: torch.cummax(s, -1))
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        x = (torch.rand(2, 300, dtype=torch.float64) * 3).to(dt)
        record("cumsum", {"dim": 1}, [x], lambda: torch.cumsum(x, 1))
        record("logcumsumexp", {"dim": 1}, [x], lambda: torch.logcumsumexp(x, 1))
    x = torch.tensor([1.0, float("nan"), 3.0, 0.5, float("inf"), float("-inf")])
    for name, fn in (("cummax", torch.cummax), ("cummin", torch.cummin)):
        record(name, {"dim": 0}, [x], lambda: fn(x, 0))
    x = torch.tensor([[float("-inf"), float("-inf"), 1.0], [float("inf"), float("inf"), 0.0]])
    record("logcumsumexp", {"dim": 1}, [x], lambda: torch.logcumsumexp(x, 1))


def gen_binary_composites():
    """xlogy, xlog1py, fmax, fmin, heaviside, logaddexp, lerp, addcmul,
    addcdiv, clamp_min/max, float_power, true_divide and floor_divide over
    the binary suite's dtype pairs, with scalars and broadcasting."""
    pairs = [(dt, dt) for dt in DTYPES] + [
        (torch.int32, torch.float32), (torch.float16, torch.bfloat16), (torch.int64, torch.float16),
        (torch.bool, torch.int32), (torch.float32, torch.float64),
    ]
    fns = {
        "xlogy": torch.xlogy, "special_xlog1py": torch.special.xlog1py, "fmax": torch.fmax,
        "fmin": torch.fmin, "heaviside": torch.heaviside, "logaddexp": torch.logaddexp,
        "float_power": torch.float_power, "true_divide": torch.true_divide,
        "floor_divide": torch.floor_divide,
    }
    for name, fn in fns.items():
        for da, db in pairs:
            if name == "logaddexp" and da.is_complex:  # refused by Kiln
                continue
            a = make(da, [3, 4])
            b = make(db, [4], reverse=True, nonzero=name == "floor_divide")
            record(name, {}, [a, b], lambda: fn(a, b))
        if name in ("xlogy", "special_xlog1py", "float_power", "true_divide", "floor_divide"):
            for dt in (torch.float32, torch.int64, torch.float16):
                a = make(dt, [3, 4])
                record(name, {}, [a, 2.5], lambda: fn(a, 2.5))
                record(name, {}, [3, a], lambda: fn(3, a))
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64):
        a = make(dt, [3, 4])
        b = make(dt, [4], reverse=True)
        for w in (0.25, 0.75, -0.5, 2.0):
            record("lerp", {}, [a, b, w], lambda: torch.lerp(a, b, w))
        wt = make(dt, [3, 1], special=False)
        record("lerp", {}, [a, b, wt], lambda: torch.lerp(a, b, wt))
    for dt in DTYPES:
        a = make(dt, [3, 4])
        b = make(dt, [4], reverse=True)
        c = make(dt, [3, 1], nonzero=True)
        record("addcmul", {}, [a, b, c], lambda: torch.addcmul(a, b, c))
        record("addcdiv", {}, [a, b, c], lambda: torch.addcdiv(a, b, c))
        if dt.is_floating_point or dt.is_complex:
            record("addcmul", {"value": scalar_spec(0.5)}, [a, b, c], lambda: torch.addcmul(a, b, c, value=0.5))
            record("addcdiv", {"value": scalar_spec(-2.0)}, [a, b, c], lambda: torch.addcdiv(a, b, c, value=-2.0))
        elif not dt == torch.bool:
            record("addcmul", {"value": scalar_spec(3)}, [a, b, c], lambda: torch.addcmul(a, b, c, value=3))
        record("clamp_min", {"min": scalar_spec(1)}, [a], lambda: torch.clamp_min(a, 1))
        record("clamp_max", {"max": scalar_spec(0.5)}, [a], lambda: torch.clamp_max(a, 0.5))


def gen_shape_ops():
    """Derived views (narrow, movedim, broadcast_to, unflatten, atleast_Nd)
    and the copying shape ops (roll, repeat, tile, tril, triu, flip,
    fliplr, flipud, constant_pad_nd) on every dtype."""
    for dt in DTYPES:
        x = make(dt, [3, 4])
        record("narrow", {"dim": 1, "start": 1, "length": 2}, [x], lambda: torch.narrow(x, 1, 1, 2))
        record("narrow", {"dim": 0, "start": -2, "length": 2}, [x], lambda: torch.narrow(x, 0, -2, 2))
        record("movedim", {"source": [0], "destination": [1]}, [x], lambda: torch.movedim(x, 0, 1))
        record("broadcast_to", {"size": [2, 3, 4]}, [x], lambda: torch.broadcast_to(x, (2, 3, 4)))
        record("unflatten", {"dim": 1, "sizes": [2, -1]}, [x], lambda: torch.unflatten(x, 1, (2, -1)))
        v = make(dt, [4])
        for name, fn in (("atleast_1d", torch.atleast_1d), ("atleast_2d", torch.atleast_2d),
                         ("atleast_3d", torch.atleast_3d)):
            record(name, {}, [v], lambda: fn(v))
        record("roll", {"shifts": [1]}, [x], lambda: torch.roll(x, 1))
        record("roll", {"shifts": [-1, 5], "dims": [0, 1]}, [x], lambda: torch.roll(x, (-1, 5), (0, 1)))
        record("repeat", {"repeats": [2, 1, 3]}, [x], lambda: x.repeat(2, 1, 3))
        record("tile", {"dims": [2]}, [x], lambda: torch.tile(x, (2,)))
        for k in (0, 1, -1):
            record("tril", {"diagonal": k}, [x], lambda: torch.tril(x, k))
            record("triu", {"diagonal": k}, [x], lambda: torch.triu(x, k))
        record("flip", {"dims": [0, 1]}, [x], lambda: torch.flip(x, (0, 1)))
        record("fliplr", {}, [x], lambda: torch.fliplr(x))
        record("flipud", {}, [x], lambda: torch.flipud(x))
        record("constant_pad_nd", {"pad": [1, 2]}, [x], lambda: torch.constant_pad_nd(x, (1, 2)))
        record("constant_pad_nd", {"pad": [-1, 1, 2, 0], "value": scalar_spec(3)}, [x],
               lambda: torch.constant_pad_nd(x, (-1, 1, 2, 0), 3))
    x = make(torch.float32, [2, 3, 4])
    record("movedim", {"source": [0, 2], "destination": [2, 0]}, [x], lambda: torch.movedim(x, (0, 2), (2, 0)))
    record("tril", {"diagonal": 1}, [x], lambda: torch.tril(x, 1))
    record("constant_pad_nd", {"pad": [1, 1], "value": scalar_spec(-0.5)}, [x],
           lambda: torch.constant_pad_nd(x, (1, 1), -0.5))


def gen_gather_scatter():
    """gather, scatter (tensor and value), scatter_add, scatter_reduce (every
    reduce, with and without the input's value), index_add and take, with
    repeated indices, on every dtype."""
    idx = torch.tensor([[0, 2, 1, 0], [2, 2, 0, 1]])
    for dt in DTYPES:
        x = make(dt, [3, 4])
        src = make(dt, [2, 4], reverse=True)
        record("gather", {"dim": 0}, [x, idx], lambda: torch.gather(x, 0, idx))
        record("gather", {"dim": 1}, [x, idx[:, :3]], lambda: torch.gather(x, 1, idx[:, :3]))
        record("scatter", {"dim": 0}, [x, idx, src], lambda: torch.scatter(x, 0, idx, src))
        record("scatter", {"dim": 1}, [x, idx[:, :2], 2], lambda: torch.scatter(x, 1, idx[:, :2], 2))
        record("scatter_add", {"dim": 0}, [x, idx, src], lambda: torch.scatter_add(x, 0, idx, src))
        for r in ("sum", "prod", "mean", "amax", "amin"):
            for inc in (True, False):
                record("scatter_reduce", {"dim": 0, "reduce": r, "include_self": inc}, [x, idx, src],
                       lambda: torch.scatter_reduce(x, 0, idx, src, r, include_self=inc))
        rows = torch.tensor([2, 0, 2])
        record("index_add", {"dim": 0}, [x, rows, make(dt, [3, 4], reverse=True)],
               lambda: torch.index_add(x, 0, rows, make(dt, [3, 4], reverse=True)))
        if not (dt.is_floating_point and dt.itemsize == 1) and dt != torch.bool:
            record("index_add", {"dim": 1, "alpha": scalar_spec(2)}, [x, rows, make(dt, [3, 3])],
                   lambda: torch.index_add(x, 1, rows, make(dt, [3, 3]), alpha=2))
        flat = torch.tensor([[0, -1], [11, 5]])
        record("take", {}, [x, flat], lambda: torch.take(x, flat))


def gen_advanced_indexing():
    """index (ATen's index.Tensor) and index_put on every dtype: adjacent
    and separated index tensors, broadcasting among them, negative and
    int32 positions, `none` entries, values broadcast into place, repeated
    positions accumulated; PyTorch's OpInfo samples for index_put."""
    index = torch.ops.aten.index.Tensor
    index_put = torch.ops.aten.index_put.default
    i64 = lambda v: torch.tensor(v, dtype=torch.int64)
    cases3x4 = [
        [i64([2, 0, -1])],
        [None, i64([[1, 3], [0, -4]])],
        [i64([0, 2]), i64([1, 3])],
        [i64([[0], [2]]), i64([1, 3, 0])],
        [torch.tensor([1, -3], dtype=torch.int32)],
        [i64(1), None],
    ]
    cases2x3x4 = [
        [i64([1, 0]), None, i64([3, 1])],
        [None, i64([2]), i64([0, 3])],
        [i64([[1], [0]]), None, i64([2, 0, 1])],
        [None, None, i64([-1, 0])],
    ]
    for dt in DTYPES:
        x = make(dt, [3, 4])
        x3 = make(dt, [2, 3, 4])
        for idx in cases3x4:
            record("index", {}, [x] + idx, lambda: index(x, idx))
        for idx in cases2x3x4:
            record("index", {}, [x3] + idx, lambda: index(x3, idx))
        # index_put: values of the indexed shape, broadcast, 0-D, and
        # repeated positions accumulated.
        rows = i64([2, 0])
        record("index_put", {}, [x, rows, make(dt, [2, 4], reverse=True)],
               lambda: index_put(x, [rows], make(dt, [2, 4], reverse=True)))
        record("index_put", {}, [x, None, i64([3, 1]), make(dt, [2], reverse=True)],
               lambda: index_put(x, [None, i64([3, 1])], make(dt, [2], reverse=True)))
        record("index_put", {}, [x, i64([0, 2]), i64([-1, 1]), make(dt, [], reverse=True)],
               lambda: index_put(x, [i64([0, 2]), i64([-1, 1])], make(dt, [], reverse=True)))
        dup = i64([0, 0, 2])
        for acc in (False, True):
            vals = make(dt, [3], reverse=True)
            idx = [dup, i64([1, 3, 3])] if not acc else [dup]
            v = vals if not acc else make(dt, [3, 4], reverse=True)
            if not acc:
                idx = [i64([0, 1, 2]), i64([1, 3, 3])]
            record("index_put", {"accumulate": acc}, [x] + idx + [v],
                   lambda: index_put(x, idx, v, acc))
        sep = [i64([1, 0]), None, i64([3, 1])]
        record("index_put", {"accumulate": True}, [x3] + sep + [make(dt, [2, 3], reverse=True)],
               lambda: index_put(x3, sep, make(dt, [2, 3], reverse=True), True))
    # PyTorch's OpInfo samples for index_put (accumulate on and off).
    for _, dt, s in op_db_samples({"index_put"}, [torch.float32, torch.int64, torch.bool, torch.float16]):
        indices = list(s.args[0])
        values = s.args[1]
        acc = s.kwargs.get("accumulate", False)
        if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
            continue
        # Repeated positions without accumulate: PyTorch leaves which write
        # wins unspecified.
        if not acc:
            flat = [tuple(int(v) for v in i.reshape(-1).tolist()) for i in indices if i is not None]
            if any(len(set(f)) != len(f) for f in flat):
                continue
        x = s.input.contiguous()
        record("index_put", {"accumulate": acc}, [x] + indices + [values.contiguous()],
               lambda: index_put(x, indices, values, acc))


def gen_index_writes():
    """index_copy, index_fill (number and 0-D tensor values, negative
    positions) and take_along_dim (broadcasting, no dim) on every dtype,
    with PyTorch's OpInfo samples."""
    i64 = lambda v: torch.tensor(v, dtype=torch.int64)
    for dt in DTYPES:
        x = make(dt, [3, 4])
        src = make(dt, [2, 4], reverse=True)
        record("index_copy", {"dim": 0}, [x, i64([2, 0]), src], lambda: torch.index_copy(x, 0, i64([2, 0]), src))
        srcc = make(dt, [3, 2], reverse=True)
        record("index_copy", {"dim": 1}, [x, i64([3, 1]), srcc], lambda: torch.index_copy(x, 1, i64([3, 1]), srcc))
        record("index_copy", {"dim": -1}, [x, i64(1), make(dt, [3, 1])],
               lambda: torch.index_copy(x, -1, i64(1), make(dt, [3, 1])))
        for v in (2, -1.5, True):
            record("index_fill", {"dim": 1}, [x, i64([0, -1]), v], lambda: torch.index_fill(x, 1, i64([0, -1]), v))
        zero_d = make(dt, [])
        record("index_fill", {"dim": 0}, [x, i64(2), zero_d], lambda: torch.index_fill(x, 0, i64(2), zero_d))
        for dim, idx in ((1, i64([[0], [3], [1]])), (0, i64([[2, 0, 1, 1]])), (-1, i64([[0, 1, 2]]))):
            record("take_along_dim", {"dim": dim}, [x, idx], lambda: torch.take_along_dim(x, idx, dim))
        record("take_along_dim", {}, [x, i64([[11, 0], [5, 3]])], lambda: torch.take_along_dim(x, i64([[11, 0], [5, 3]])))
        x3 = make(dt, [2, 1, 3])
        idx3 = i64([[[2], [0]]])
        record("take_along_dim", {"dim": 2}, [x3, idx3], lambda: torch.take_along_dim(x3, idx3, 2))
    floats = [torch.float32, torch.float64, torch.int64, torch.bool]
    for name, dt, s in op_db_samples({"index_copy"}, floats):
        dim, index, source = s.args
        x = s.input.contiguous()
        # Repeated positions: PyTorch leaves which write wins unspecified.
        if len(set(index.reshape(-1).tolist())) != index.numel():
            continue
        record("index_copy", {"dim": dim}, [x, index, source.contiguous()],
               lambda: torch.index_copy(x, dim, index, source))
    for name, dt, s in op_db_samples({"index_fill"}, floats):
        dim, index, value = s.args
        x = s.input.contiguous()
        if isinstance(value, torch.Tensor):
            value = value.contiguous()
        record("index_fill", {"dim": dim}, [x, index, value], lambda: torch.index_fill(x, dim, index, value))
    for name, dt, s in op_db_samples({"take_along_dim"}, floats):
        index = s.args[0]
        dim = s.args[1] if len(s.args) > 1 else s.kwargs.get("dim")
        x = s.input.contiguous()
        attrs = {} if dim is None else {"dim": dim}
        record("take_along_dim", attrs, [x, index.contiguous()], lambda: torch.take_along_dim(x, index, dim))


EINSUMS = [
    ("ij,jk->ik", [[2, 3], [3, 4]]), ("ij,jk", [[2, 3], [3, 4]]), ("ij->ji", [[2, 3]]),
    ("ij->", [[2, 3]]), ("ij->j", [[2, 3]]), ("i,i->", [[4], [4]]), ("i,j->ij", [[3], [4]]),
    ("i,i->i", [[4], [4]]), ("ij,ij->i", [[2, 3], [2, 3]]), ("ij,k->i", [[2, 3], [4]]),
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]), ("bhqd,bhkd->bhqk", [[2, 2, 3, 4], [2, 2, 5, 4]]),
    ("bqhd,bkhd->bhqk", [[1, 3, 2, 4], [1, 5, 2, 4]]), ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
    ("bn,anm,bm->ba", [[2, 3], [4, 3, 5], [2, 5]]), ("Ab,bA->", [[2, 3], [3, 2]]),
    ("bA,bc", [[2, 3], [2, 4]]), ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 2]]),
    ("...,...->...", [[2, 3], [3]]), ("i...->...", [[2, 3, 4]]), ("...i->i...", [[2, 3, 4]]),
    ("ij,jk->ik", [[2, 1], [4, 5]]), ("ij,jk->ik", [[0, 3], [3, 4]]), ("ij,jk->ik", [[2, 0], [0, 4]]),
    ("i j , j k -> i k", [[2, 3], [3, 4]]), ("ab,cd->", [[2, 3], [4, 5]]),
]


def gen_einsum():
    """einsum over matrix products, attention's layouts, outer and inner
    products, reductions, ellipses (broadcast), implicit outputs (A-Z before
    a-z), size-1 broadcasting and empty operands, on the dtypes PyTorch's
    einsum takes; PyTorch's OpInfo samples."""
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64,
               torch.int32, torch.int64, torch.bool, torch.uint8):
        for eq, shapes in EINSUMS:
            ops = [make(dt, s, special=False, reverse=(k % 2 == 1)) for k, s in enumerate(shapes)]
            record("einsum", {"equation": eq}, ops, lambda: torch.einsum(eq, *ops))
    for _, dt, s in op_db_samples({"einsum"}, [torch.float32, torch.float64, torch.int64]):
        eq = s.input if isinstance(s.input, str) else s.args[0]
        tensors = s.args[0] if isinstance(s.input, str) else s.input
        if isinstance(tensors, torch.Tensor):
            tensors = [tensors]
        tensors = [t.contiguous() for t in tensors]
        record("einsum", {"equation": eq}, tensors, lambda: torch.einsum(eq, *tensors))


def gen_pads():
    """reflection_pad1d/2d/3d and replication_pad1d/2d/3d (F.pad's reflect
    and replicate modes) on every dtype, batched and not, with negative
    (cropping) padding; PyTorch's OpInfo samples for F.pad."""
    A = torch.ops.aten
    for dt in DTYPES:
        for mode in ("reflection", "replication"):
            cases = [(1, [2, 3, 4], [2, 1]), (1, [3, 4], [3, -1]), (2, [1, 2, 3, 4], [1, 2, 2, 0]),
                     (2, [2, 3, 3], [-1, 2, 1, 1]), (3, [1, 2, 3, 3, 3], [1, 1, 2, 0, 0, 2])]
            if mode == "replication":
                cases.append((1, [1, 2, 3], [5, 4]))
            for k, shape, padding in cases:
                name = f"{mode}_pad{k}d"
                x = make(dt, shape)
                record(name, {"padding": padding}, [x], lambda: getattr(A, name)(x, padding))
    modes = {"reflect": "reflection", "replicate": "replication"}
    from torch.testing._internal.common_methods_invocations import op_db
    samples = [(dt, s) for op in op_db
               if op.name == "nn.functional.pad" and op.variant_test_name in modes
               for dt in (torch.float32, torch.float64, torch.int64)
               for s in op.sample_inputs("cpu", dt)]
    for dt, s in samples:
        mode = s.args[1] if len(s.args) > 1 else s.kwargs.get("mode", "constant")
        if mode not in modes:
            continue
        padding = list(s.args[0])
        k = len(padding) // 2
        x = s.input.contiguous()
        name = f"{modes[mode]}_pad{k}d"
        record(name, {"padding": padding}, [x], lambda: getattr(torch.ops.aten, name)(x, padding))


def gen_slice_scatters():
    """slice_scatter (steps, negative and open bounds, empty slices, a src
    of another dtype) and select_scatter on every dtype; PyTorch's OpInfo
    samples for both."""
    for dt in DTYPES:
        x = make(dt, [3, 5])
        for attrs, src_shape in (({"dim": 1, "start": 1, "end": 4}, [3, 3]),
                                 ({"dim": 1, "start": 0, "end": 5, "step": 2}, [3, 3]),
                                 ({"dim": 0, "start": -2}, [2, 5]), ({"dim": -1}, [3, 5]),
                                 ({"dim": 0, "start": 7, "end": 9}, [0, 5])):
            src = make(dt, src_shape, reverse=True)
            a = {"dim": 0, "start": None, "end": None, "step": 1, **attrs}
            record("slice_scatter", attrs, [x, src],
                   lambda: torch.slice_scatter(x, src, a["dim"], a["start"], a["end"], a["step"]))
        for attrs, src_shape in (({"dim": 0, "index": 1}, [5]), ({"dim": 1, "index": -1}, [3])):
            src = make(dt, src_shape, reverse=True)
            record("select_scatter", attrs, [x, src],
                   lambda: torch.select_scatter(x, src, attrs["dim"], attrs["index"]))
    x = make(torch.float32, [3, 4])
    src = make(torch.int64, [3, 2])
    record("slice_scatter", {"dim": 1, "start": 1, "end": 3}, [x, src],
           lambda: torch.slice_scatter(x, src, 1, 1, 3))
    for name, dt, s in op_db_samples({"slice_scatter", "select_scatter"},
                                      [torch.float32, torch.int64, torch.bool]):
        x, src = s.input.contiguous(), s.args[0].contiguous()
        if name == "select_scatter":
            dim, index = s.args[1], s.args[2]
            record(name, {"dim": dim, "index": index}, [x, src],
                   lambda: torch.select_scatter(x, src, dim, index))
        else:
            a = dict(zip(("dim", "start", "end", "step"), s.args[1:]))
            a.update(s.kwargs)
            attrs = {k: v for k, v in a.items() if v is not None}
            full = {"dim": 0, "start": None, "end": None, "step": 1, **a}
            record(name, attrs, [x, src],
                   lambda: torch.slice_scatter(x, src, full["dim"], full["start"], full["end"],
                                               full["step"]))


def gen_shuffles():
    """pixel_shuffle, pixel_unshuffle and channel_shuffle on every dtype,
    batched, unbatched and with extra leading dims; PyTorch's OpInfo
    samples for the pixel shuffles."""
    for dt in DTYPES:
        x = make(dt, [1, 8, 2, 3])
        record("pixel_shuffle", {"upscale_factor": 2}, [x], lambda: F.pixel_shuffle(x, 2))
        record("channel_shuffle", {"groups": 2}, [x], lambda: F.channel_shuffle(x, 2))
        record("channel_shuffle", {"groups": 4}, [x[0]], lambda: F.channel_shuffle(x[0], 4))
        y = make(dt, [2, 1, 2, 4, 6])
        record("pixel_unshuffle", {"downscale_factor": 2}, [y], lambda: F.pixel_unshuffle(y, 2))
        z = make(dt, [9, 2, 2])
        record("pixel_shuffle", {"upscale_factor": 3}, [z], lambda: F.pixel_shuffle(z, 3))
    for name, dt, s in op_db_samples({"nn.functional.pixel_shuffle", "nn.functional.pixel_unshuffle"},
                                      [torch.float32, torch.int64, torch.bool]):
        kiln = name.split(".")[-1]
        attr = "upscale_factor" if kiln == "pixel_shuffle" else "downscale_factor"
        r = s.args[0] if s.args else s.kwargs[attr]
        x = s.input.contiguous()
        record(kiln, {attr: r}, [x], lambda: getattr(F, kiln)(x, r))


def gen_stacks():
    """hstack, vstack, dstack and column_stack on every dtype: vectors,
    matrices, 0-D tensors, mixed dtypes (cat's promotion); PyTorch's OpInfo
    samples."""
    for dt in DTYPES:
        v, w = make(dt, [3]), make(dt, [3], reverse=True)
        m = make(dt, [3, 2])
        for name, args in (("hstack", [v, w]), ("hstack", [m, m]), ("vstack", [v, w]),
                           ("vstack", [m, make(dt, [1, 2])]), ("dstack", [v, w]),
                           ("dstack", [m, m]), ("column_stack", [v, m]),
                           ("column_stack", [make(dt, []), make(dt, [1, 2])])):
            record(name, {}, args, lambda: getattr(torch, name)(args))
    mixed = [make(torch.int32, [2, 2]), make(torch.float16, [2, 2])]
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        record(name, {}, mixed, lambda: getattr(torch, name)(mixed))
    for name, dt, s in op_db_samples({"hstack", "vstack", "dstack", "column_stack"},
                                      [torch.float32, torch.int64, torch.bool]):
        tensors = [t.contiguous() for t in s.input]
        record(name, {}, tensors, lambda: getattr(torch, name)(tensors))


def gen_eye_linspace():
    """eye (square, rectangular, empty) on every dtype, and linspace on the
    real dtypes: halves computed from each end, integers truncated, one
    and zero steps, fractional bounds."""
    for dt in DTYPES:
        for n, m in ((3, None), (2, 4), (0, 2)):
            attrs = {"n": n, "dtype": SHORT[dt]} if m is None else {"n": n, "m": m, "dtype": SHORT[dt]}
            record("eye", attrs, [], lambda: torch.eye(n, m if m is not None else n, dtype=dt))
    cases = [(0.0, 1.0, 5), (-1.0, 1.0, 7), (3, 7, 1), (3, 7, 0), (0, 10, 4), (10, -3, 4),
             (0.5, 10, 4), (-2.5, 100.25, 9), (1, 2, 2)]
    for dt in [d for d in DTYPES if not d.is_complex and d != torch.bool]:
        for a, b, n in cases:
            attrs = {"start": scalar_spec(a), "end": scalar_spec(b), "steps": n, "dtype": SHORT[dt]}
            record("linspace", attrs, [], lambda: torch.linspace(a, b, n, dtype=dt))
    for a, b, n in cases[:3]:
        attrs = {"start": scalar_spec(float(a)), "end": scalar_spec(float(b)), "steps": n}
        record("linspace", attrs, [], lambda: torch.linspace(a, b, n))


def gen_tensor_splits():
    """tensor_split by sections (uneven, more than the size) and by
    positions (decreasing, negative, past the end), and hsplit, vsplit,
    dsplit by sections and positions, on every dtype."""
    for dt in DTYPES:
        x = make(dt, [4, 7])
        for sections, dim in ((3, 1), (10, 1), (2, 0)):
            record("tensor_split", {"sections": sections, "dim": dim}, [x],
                   lambda: torch.tensor_split(x, sections, dim))
        for indices in ([2, 5], [5, 2, -1, 9]):
            record("tensor_split", {"indices": indices, "dim": 1}, [x],
                   lambda: torch.tensor_split(x, indices, 1))
        record("hsplit", {"sections": 7}, [x], lambda: torch.hsplit(x, 7))
        record("hsplit", {"indices": [1, 3]}, [x], lambda: torch.hsplit(x, [1, 3]))
        record("vsplit", {"sections": 2}, [x], lambda: torch.vsplit(x, 2))
        v = make(dt, [6])
        record("hsplit", {"sections": 3}, [v], lambda: torch.hsplit(v, 3))
        c = make(dt, [2, 3, 4])
        record("dsplit", {"indices": [3]}, [c], lambda: torch.dsplit(c, [3]))


def gen_rot90():
    """rot90 of every turn (negative and past four too), in other planes,
    on every dtype; PyTorch's OpInfo samples."""
    for dt in DTYPES:
        x = make(dt, [2, 3, 2])
        for k, dims in ((1, [0, 1]), (2, [0, 1]), (3, [1, 2]), (-1, [2, 0]), (0, [0, 2]), (5, [0, 1])):
            record("rot90", {"k": k, "dims": dims}, [x], lambda: torch.rot90(x, k, dims))
    for _, dt, s in op_db_samples({"rot90"}, [torch.float32, torch.int64, torch.bool]):
        k = s.args[0] if s.args else s.kwargs.get("k", 1)
        dims = list(s.args[1]) if len(s.args) > 1 else list(s.kwargs.get("dims", [0, 1]))
        x = s.input.contiguous()
        record("rot90", {"k": k, "dims": dims}, [x], lambda: torch.rot90(x, k, dims))


def gen_selection():
    """max/min along a dim (values and positions), argsort and
    repeat_interleave on every dtype, with ties and NaN."""
    for dt in DTYPES:
        x = make(dt, [3, 4])
        for dim, keep in ((0, False), (1, True), (-1, False)):
            record("max", {"dim": dim, "keepdim": keep}, [x], lambda: torch.max(x, dim, keepdim=keep))
            record("min", {"dim": dim, "keepdim": keep}, [x], lambda: torch.min(x, dim, keepdim=keep))
        for desc in (False, True):
            record("argsort", {"dim": 1, "descending": desc, "stable": True}, [x],
                   lambda: torch.argsort(x, dim=1, descending=desc, stable=True))
        record("repeat_interleave", {"repeats": 2, "dim": 0}, [x], lambda: torch.repeat_interleave(x, 2, dim=0))
        record("repeat_interleave", {"repeats": 3}, [x], lambda: torch.repeat_interleave(x, 3))
    x = torch.tensor([[2.0, 1.0, 1.0, 2.0], [float("nan"), 3.0, float("nan"), -1.0]])
    for name, fn in (("max", torch.max), ("min", torch.min)):
        record(name, {"dim": 1}, [x], lambda: fn(x, 1))


def gen_binary():
    pairs = [(dt, dt) for dt in DTYPES] + [
        (torch.int32, torch.float32), (torch.uint8, torch.int8), (torch.float16, torch.bfloat16),
        (torch.int64, torch.float16), (torch.bool, torch.int32), (torch.float32, torch.complex64),
        (torch.float16, torch.float64), (torch.uint8, torch.bool),
    ]
    for name, fn in BINARY.items():
        for da, db in pairs:
            a = make(da, [3, 4])
            b = make(db, [4], reverse=True, nonzero=name in ("div", "remainder"))
            record(name, {}, [a, b], lambda: fn(a, b))
        for dt in DTYPES:
            a = make(dt, [3, 4])
            for s in (2, 2.5, True, -3):
                record(name, {}, [a, s], lambda: fn(a, s))
        for s in (3, 0.5):
            for dt in (torch.float32, torch.int64, torch.float16):
                b = make(dt, [4], nonzero=True)
                record(name, {}, [s, b], lambda: fn(s, b))
    for mode in ("trunc", "floor"):
        for dt in DTYPES:
            a = make(dt, [3, 4])
            b = make(dt, [3, 4], reverse=True, nonzero=True)
            record("div", {"rounding_mode": mode}, [a, b], lambda: torch.div(a, b, rounding_mode=mode))
            record("div", {"rounding_mode": mode}, [a, 3], lambda: torch.div(a, 3, rounding_mode=mode))
    # Powers of integers with small exponents (no overflow noise).
    for dt in (torch.int32, torch.int64, torch.uint8, torch.int8):
        a = make(dt, [12])
        e = torch.tensor([0, 1, 2, 3, 1, 2, 0, 3, 2, 1, 2, 1], dtype=dt)
        record("pow", {}, [a, e], lambda: torch.pow(a, e))


def gen_where_clamp_cast():
    for dt in DTYPES:
        c = make(torch.bool, [3, 4])
        a = make(dt, [3, 4])
        b = make(dt, [4], reverse=True)
        record("where", {}, [c, a, b], lambda: torch.where(c, a, b))
        record("where", {}, [c, a, 2.5], lambda: torch.where(c, a, 2.5))
        for lo, hi in ((-1, 2), (0.5, None), (None, 1.5), (2, -1)):
            kw = {k: v for k, v in (("min", lo), ("max", hi)) if v is not None}
            attrs = {k: scalar_spec(v) for k, v in kw.items()}
            record("clamp", attrs, [a], lambda: torch.clamp(a, **kw))
        lo_t = make(dt, [3, 4], reverse=True)
        record("clamp", {"min": "tensor"}, [a, lo_t], lambda: torch.clamp(a, min=lo_t))
        for to in DTYPES:
            x = make(dt, [12])
            record("cast", {"dtype": SHORT[to]}, [x], lambda: x.to(to))


def gen_reductions():
    for dt in DTYPES:
        x = make(dt, [3, 4], special=False)
        for op, fn in (("sum", torch.sum), ("prod", torch.prod), ("mean", torch.mean), ("amax", torch.amax), ("amin", torch.amin)):
            record(op, {}, [x], lambda: fn(x))
            if op == "prod":
                record(op, {"dims": [1], "keepdim": True}, [x], lambda: fn(x, 1, keepdim=True))
            else:
                record(op, {"dims": [1]}, [x], lambda: fn(x, dim=[1]))
                record(op, {"dims": [0], "keepdim": True}, [x], lambda: fn(x, dim=[0], keepdim=True))
        for op, fn in (("sum", torch.sum), ("mean", torch.mean)):
            for d in (torch.float64, torch.float32):
                record(op, {"dims": [1], "dtype": SHORT[d]}, [x], lambda: fn(x, dim=[1], dtype=d))
        for op, fn in (("argmax", torch.argmax), ("argmin", torch.argmin)):
            xs = make(dt, [3, 4])
            record(op, {}, [xs], lambda: fn(xs))
            record(op, {"dim": 1}, [xs], lambda: fn(xs, dim=1))
            record(op, {"dim": 0, "keepdim": True}, [xs], lambda: fn(xs, dim=0, keepdim=True))
    for dt in DTYPES:
        x = make(dt, [3, 4])
        for op, fn in (("any", torch.any), ("all", torch.all)):
            record(op, {}, [x], lambda: fn(x))
            record(op, {"dims": [1]}, [x], lambda: fn(x, dim=1))
            record(op, {"dims": [0], "keepdim": True}, [x], lambda: fn(x, dim=0, keepdim=True))
        # Zeros make all() false on some rows and not others.
        z = x * make(dt, [4], reverse=True).ne(0).to(dt) if dt != torch.bool else x
        record("all", {"dims": [1]}, [z], lambda: torch.all(z, dim=1))
    # Specials propagate through amax/sum.
    for dt in (torch.float32, torch.float16):
        x = make(dt, [3, 4])
        record("amax", {"dims": [1]}, [x], lambda: torch.amax(x, dim=[1]))
        record("sum", {"dims": [0]}, [x], lambda: torch.sum(x, dim=[0]))


def gen_composites():
    for dt in DTYPES:
        x = make(dt, [3, 4], special=False)
        record("softmax", {"dim": 1}, [x], lambda: F.softmax(x, dim=1))
        record("softmax", {"dim": 0}, [x], lambda: F.softmax(x, dim=0))
        record("log_softmax", {"dim": 1}, [x], lambda: F.log_softmax(x, dim=1))
        record("softmax", {"dim": 1, "dtype": "f64"}, [x], lambda: F.softmax(x, dim=1, dtype=torch.float64))
        record("layer_norm", {"normalized_shape": [4], "eps": 1e-5}, [x], lambda: F.layer_norm(x, (4,)))
        w = make(dt, [4], special=False)
        b = make(dt, [4], reverse=True, special=False)
        record("layer_norm", {"normalized_shape": [4], "eps": 1e-5}, [x, w, b], lambda: F.layer_norm(x, (4,), w, b))
    for dt in (torch.float16, torch.bfloat16):
        x = make(dt, [3, 4], special=False)
        w = make(torch.float32, [4], special=False)
        record("layer_norm", {"normalized_shape": [4], "eps": 1e-5}, [x, w], lambda: F.layer_norm(x, (4,), w))


def gen_several_results():
    """Ops with several results; sort with stable=True where ties exist, as
    the order of equal elements is otherwise PyTorch's choice."""
    for dt in DTYPES:
        x = make(dt, [3, 4])
        record("sort", {"stable": True}, [x], lambda: torch.sort(x, stable=True))
        record("sort", {"dim": 0, "descending": True, "stable": True}, [x],
               lambda: torch.sort(x, dim=0, descending=True, stable=True))
        xs = make(dt, [3, 4], special=False)
        record("topk", {"k": 2}, [xs], lambda: torch.topk(xs, 2))
        record("topk", {"k": 1, "dim": 0, "largest": False}, [xs], lambda: torch.topk(xs, 1, dim=0, largest=False))
        record("aminmax", {}, [xs], lambda: torch.aminmax(xs))
        record("aminmax", {"dim": 1, "keepdim": True}, [xs], lambda: torch.aminmax(xs, dim=1, keepdim=True))
        record("unbind", {"dim": 1}, [x], lambda: torch.unbind(x, 1))
        record("split", {"split_size": 3, "dim": 1}, [x], lambda: torch.split(x, 3, dim=1))
        record("split_with_sizes", {"split_sizes": [1, 2]}, [x], lambda: torch.split(x, [1, 2]))
        record("chunk", {"chunks": 3, "dim": 1}, [x], lambda: torch.chunk(x, 3, dim=1))


def gen_indexing():
    """index_select, embedding and linear, on every dtype they accept."""
    for dt in DTYPES:
        x = make(dt, [3, 4])
        for idt in (torch.int64, torch.int32):
            i = torch.tensor([2, 0, 2], dtype=idt)
            record("index_select", {"dim": 0}, [x, i], lambda: torch.index_select(x, 0, i))
            j = torch.tensor([3, 1], dtype=idt)
            record("index_select", {"dim": 1}, [x, j], lambda: torch.index_select(x, 1, j))
            record("index_select", {"dim": -1}, [x, j[:1]], lambda: torch.index_select(x, -1, j[:1]))
            ids = torch.tensor([[1, 2], [2, 0]], dtype=idt)
            record("embedding", {}, [x, ids], lambda: F.embedding(ids, x))
        bad = torch.tensor([3], dtype=torch.int64)
        record("index_select", {"dim": 0}, [x, bad], lambda: torch.index_select(x, 0, bad))
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x = make(dt, [2, 3, 4], special=False)
        w = make(dt, [5, 4], reverse=True, special=False)
        b = make(dt, [5], special=False)
        record("linear", {}, [x, w, b], lambda: F.linear(x, w, b))
        record("linear", {}, [x, w], lambda: F.linear(x, w))
        v = make(dt, [4], special=False)
        record("linear", {}, [x, v], lambda: F.linear(x, v))


def gen_attention():
    """scaled_dot_product_attention: plain, causal, masks, scale, GQA."""
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        g = torch.Generator().manual_seed(7)
        rnd = lambda *s: (torch.rand(*s, generator=g, dtype=torch.float64) * 2 - 1).to(dt)
        q, k, v = rnd(1, 2, 4, 8), rnd(1, 2, 5, 8), rnd(1, 2, 5, 3)
        sdpa = F.scaled_dot_product_attention
        record("scaled_dot_product_attention", {}, [q, k, v], lambda: sdpa(q, k, v))
        qs = rnd(1, 2, 5, 8)
        record("scaled_dot_product_attention", {"is_causal": True}, [qs, k, v], lambda: sdpa(qs, k, v, is_causal=True))
        record("scaled_dot_product_attention", {"scale": 0.5}, [q, k, v], lambda: sdpa(q, k, v, scale=0.5))
        bm = torch.rand(4, 5, generator=g) > 0.3
        bm[:, 0] = True
        record("scaled_dot_product_attention", {}, [q, k, v, bm], lambda: sdpa(q, k, v, attn_mask=bm))
        # A query the mask leaves no key attends to nothing: zeros (bool
        # and additive masks, and causal with more queries than keys).
        dead = bm.clone()
        dead[2] = False
        record("scaled_dot_product_attention", {}, [q, k, v, dead], lambda: sdpa(q, k, v, attn_mask=dead))
        fdead = torch.where(dead, 0.0, -math.inf).to(dt)
        record("scaled_dot_product_attention", {}, [q, k, v, fdead], lambda: sdpa(q, k, v, attn_mask=fdead))
        fm = rnd(1, 1, 4, 5)
        record("scaled_dot_product_attention", {}, [q, k, v, fm], lambda: sdpa(q, k, v, attn_mask=fm))
        q4, k2, v2 = rnd(1, 4, 3, 8), rnd(1, 2, 3, 8), rnd(1, 2, 3, 8)
        record("scaled_dot_product_attention", {"enable_gqa": True}, [q4, k2, v2], lambda: sdpa(q4, k2, v2, enable_gqa=True))


MHA_SLOTS = ["query", "key", "value", "in_proj_weight", "in_proj_bias", "bias_k", "bias_v",
             "out_proj_weight", "out_proj_bias", "key_padding_mask", "attn_mask", "q_proj_weight",
             "k_proj_weight", "v_proj_weight", "static_k", "static_v"]
MHA_ATTRS = ["embed_dim_to_check", "num_heads", "add_zero_attn", "dropout_p", "training",
             "need_weights", "use_separate_proj_weight", "average_attn_weights", "is_causal"]


def record_mha(call, expect_error=False):
    """F.multi_head_attention_forward with the arguments `call` (by name):
    operands in the schema's slots, attributes by name; results without
    the None of need_weights=False. PyTorch's refusals (AssertionError
    included) are recorded with their message when `expect_error`."""
    operands = [call.get(n) for n in MHA_SLOTS]
    attrs = {n: call[n] for n in MHA_ATTRS if n in call}
    try:
        out = F.multi_head_attention_forward(**call)
    except (AssertionError, RuntimeError) as e:
        if expect_error:
            CASES.append({
                "op": "multi_head_attention_forward",
                "attrs": attrs,
                "operands": [tensor_spec(o) if o is not None else {"none": True} for o in operands],
                "error": str(e).split("\n")[0],
            })
        return
    if expect_error:
        raise SystemExit(f"multi_head_attention_forward accepted {attrs}")
    record("multi_head_attention_forward", attrs, operands,
           lambda: tuple(t for t in out if t is not None))


def gen_mha():
    """F.multi_head_attention_forward in inference: PyTorch's OpInfo
    samples (separate projections, bias_k/bias_v, 2-D and 3-D float masks),
    then packed projections, bool and float masks, key padding, causal,
    need_weights both ways, unbatched, add_zero_attn, static keys, and the
    function's refusals."""
    names = ["query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight",
             "in_proj_bias", "bias_k", "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight",
             "out_proj_bias"]
    for _, dt, s in op_db_samples({"nn.functional.multi_head_attention_forward"},
                                  [torch.float32, torch.float64]):
        call = dict(zip(names, [s.input, *s.args]))
        call.update(s.kwargs)
        if call.get("training", True) and call["dropout_p"] > 0:
            continue
        for need in (True, False):
            record_mha({**call, "need_weights": need})
    for dt in (torch.float32, torch.float64):
        g = torch.Generator().manual_seed(11)
        rnd = lambda *s: (torch.rand(*s, generator=g, dtype=torch.float64) * 2 - 1).to(dt)
        L, S, N, E, H = 3, 5, 2, 8, 2
        base = {
            "query": rnd(L, N, E), "key": rnd(S, N, E), "value": rnd(S, N, E),
            "embed_dim_to_check": E, "num_heads": H, "in_proj_weight": rnd(3 * E, E),
            "in_proj_bias": rnd(3 * E), "bias_k": None, "bias_v": None, "add_zero_attn": False,
            "dropout_p": 0.0, "out_proj_weight": rnd(E, E), "out_proj_bias": rnd(E),
            "training": False,
        }
        bool_mask = torch.rand(L, S, generator=g) > 0.7
        bool_mask[:, 0] = False
        kpm = torch.zeros(N, S, dtype=torch.bool)
        kpm[1, 3:] = True
        causal = torch.triu(torch.full((L, S), -math.inf, dtype=dt), diagonal=1)
        variants = [
            {},
            {"attn_mask": bool_mask},
            {"attn_mask": rnd(N * H, L, S)},
            {"key_padding_mask": kpm},
            {"key_padding_mask": kpm.to(dt) * -1e4, "attn_mask": rnd(L, S)},
            {"attn_mask": bool_mask, "key_padding_mask": kpm, "average_attn_weights": False},
            {"attn_mask": causal, "is_causal": True},
            {"attn_mask": causal, "is_causal": True, "key_padding_mask": kpm},
            {"add_zero_attn": True, "key_padding_mask": kpm},
            {"bias_k": rnd(1, 1, E), "bias_v": rnd(1, 1, E), "attn_mask": bool_mask,
             "key_padding_mask": kpm, "add_zero_attn": True},
            {"static_k": rnd(N * H, 4, E // H), "static_v": rnd(N * H, 4, E // H)},
            {"in_proj_bias": None, "out_proj_bias": None},
            {"dropout_p": 0.5},
        ]
        for extra in variants:
            for need in (True, False):
                record_mha({**base, **extra, "need_weights": need})
        # Self-attention (the packed projection's one product) and unbatched.
        x = rnd(L, N, E)
        for need in (True, False):
            record_mha({**base, "query": x, "key": x, "value": x, "need_weights": need})
            u = rnd(L, E)
            record_mha({**base, "query": u, "key": rnd(S, E), "value": rnd(S, E),
                        "key_padding_mask": kpm[1], "attn_mask": rnd(H, L, S), "need_weights": need})
        # The function's refusals.
        for extra in [
            {"embed_dim_to_check": E + 1},
            {"num_heads": 3},
            {"value": rnd(S + 1, N, E)},
            {"in_proj_weight": None},
            {"attn_mask": rnd(L, S + 1)},
            {"attn_mask": rnd(N * H + 1, L, S)},
            {"attn_mask": rnd(1, 1, L, S)},
            {"key_padding_mask": torch.zeros(N, S + 1, dtype=torch.bool)},
            {"key_padding_mask": torch.zeros(N, S, dtype=torch.int64)},
            {"is_causal": True},
            {"bias_k": rnd(1, 1, E)},
            {"bias_k": rnd(1, 1, E), "bias_v": rnd(1, 1, E), "static_k": rnd(N * H, 4, E // H)},
            {"static_k": rnd(N * H + 1, 4, E // H)},
            {"key": rnd(S, E), "value": rnd(S, E)},
            {"use_separate_proj_weight": True, "q_proj_weight": rnd(E, E), "k_proj_weight": rnd(E, E),
             "v_proj_weight": rnd(E, E + 1)},
            {"use_separate_proj_weight": True, "q_proj_weight": rnd(E, E)},
        ]:
            record_mha({**base, **extra}, expect_error=True)


def gen_movement():
    for dt in (torch.float32, torch.int64, torch.bool, torch.float16, torch.complex64, torch.float8_e4m3fn):
        x = make(dt, [2, 3, 4], special=False)
        record("reshape", {"shape": [4, -1]}, [x], lambda: x.reshape(4, -1))
        record("view", {"shape": [6, 4]}, [x], lambda: x.view(6, 4))
        record("permute", {"dims": [2, 0, 1]}, [x], lambda: x.permute(2, 0, 1))
        record("transpose", {"dim0": 0, "dim1": 2}, [x], lambda: x.transpose(0, 2))
        record("expand", {"shape": [2, 2, 3, 4]}, [x], lambda: x.expand(2, 2, 3, 4))
        record("unsqueeze", {"dim": 1}, [x], lambda: x.unsqueeze(1))
        record("squeeze", {"dims": [0]}, [x], lambda: x.squeeze(0))
        record("slice", {"dim": 2, "start": 1, "end": 4, "step": 2}, [x], lambda: x[:, :, 1:4:2])
        record("select", {"dim": 1, "index": -1}, [x], lambda: x.select(1, -1))
        record("flatten", {"start_dim": 0, "end_dim": 1}, [x], lambda: x.flatten(0, 1))
        record("contiguous", {}, [x], lambda: x.contiguous())
        record("clone", {}, [x], lambda: x.clone())
        y = make(dt, [3, 4], special=False)
        record("t", {}, [y], lambda: y.t())
        record("cat", {"dim": 1}, [y, y], lambda: torch.cat([y, y], dim=1))
    for dt in DTYPES:
        x = make(dt, [3, 4], special=False)
        for to in (torch.float32, torch.int32, torch.float16):
            record("to", {"dtype": SHORT[to]}, [x], lambda: x.to(to))


def gen_matmul():
    for dt in DTYPES:
        a = make(dt, [3, 4], special=False)
        b = make(dt, [4, 2], special=False)
        v = make(dt, [4], special=False)
        batch = make(dt, [2, 3, 4], special=False)
        record("matmul", {}, [a, b], lambda: torch.matmul(a, b))
        record("matmul", {}, [a, v], lambda: torch.matmul(a, v))
        record("matmul", {}, [v, v], lambda: torch.matmul(v, v))
        record("matmul", {}, [batch, b], lambda: torch.matmul(batch, b))


def gen_creation():
    for dt in DTYPES + [None]:
        attrs = {"shape": [2, 3]}
        kw = {}
        if dt is not None:
            attrs["dtype"] = SHORT[dt]
            kw["dtype"] = dt
        record("full", dict(attrs, value=scalar_spec(7)), [], lambda: torch.full((2, 3), 7, **kw))
        record("full", dict(attrs, value=scalar_spec(-2.5)), [], lambda: torch.full((2, 3), -2.5, **kw))
        record("zeros", attrs, [], lambda: torch.zeros((2, 3), **kw))
        record("ones", attrs, [], lambda: torch.ones((2, 3), **kw))
        a_attrs = {"start": scalar_spec(1), "end": scalar_spec(11), "step": scalar_spec(3)}
        if dt is not None:
            a_attrs["dtype"] = SHORT[dt]
        record("arange", a_attrs, [], lambda: torch.arange(1, 11, 3, **kw))
    record("arange", {"start": scalar_spec(0.0), "end": scalar_spec(1.0), "step": scalar_spec(0.125)}, [], lambda: torch.arange(0.0, 1.0, 0.125))
    # Integer results from fractional start or step: the length from the
    # values as given, the elements from start and step truncated.
    for dt in (torch.int32, torch.int64, torch.uint8, torch.int16):
        for a, b, c in ((5, 0, -0.5), (1, 4, 1.5), (0.5, 4, 1), (-2.5, 3, 1.25)):
            attrs = {"start": scalar_spec(a), "end": scalar_spec(b), "step": scalar_spec(c), "dtype": SHORT[dt]}
            record("arange", attrs, [], lambda: torch.arange(a, b, c, dtype=dt))

ISSUE16_PRODUCTS = {
    # op_db name: Kiln's name, and the keyword arguments that are attributes.
    "mm": "mm", "bmm": "bmm", "mv": "mv", "dot": "dot", "outer": "outer", "inner": "inner",
    "addmm": "addmm", "addmv": "addmv", "addr": "addr", "baddbmm": "baddbmm", "addbmm": "addbmm",
    "trace": "trace", "linalg.vecdot": "linalg_vecdot", "kron": "kron",
}


def op_db_samples(names, dtypes):
    """PyTorch's own OpInfo sample inputs (broadcast, empty and 0-D cases)
    for the ops `names`, per dtype: (op_db name, dtype, sample)."""
    from torch.testing._internal.common_methods_invocations import op_db
    for op in op_db:
        if op.name not in names or op.variant_test_name:
            continue
        for dt in dtypes:
            try:
                samples = list(op.sample_inputs("cpu", dt))
            except Exception:
                continue
            for sample in samples:
                yield op.name, dt, sample


def attr_spec(v):
    """An attribute as the JSON tables write it: numbers that are Scalars
    (beta, alpha) as scalar specs."""
    return scalar_spec(v) if isinstance(v, (bool, int, float, complex)) else v


def gen_issue16():
    """Issue 16's composites: products, normalizations, losses,
    masked_fill and one_hot, on every dtype PyTorch's CPU runs them on,
    with PyTorch's OpInfo samples (broadcast, empty, 0-D operands)."""
    torch.manual_seed(16)
    # Products: OpInfo samples on every dtype (random values, so f16 and
    # bf16 sums differ by summation order only).
    for name, dt, s in op_db_samples(set(ISSUE16_PRODUCTS), DTYPES):
        if name in ("kron", "outer") and dt not in (torch.float32, torch.int64, torch.bool, torch.float16):
            continue
        # PyTorch skips the kernel (and its dtype check) for some empty
        # products; Kiln checks the dtype first. Empty operands are
        # sampled on dtypes every product takes.
        tensors = [s.input] + list(s.args)
        empty = any(isinstance(t, torch.Tensor) and t.numel() == 0 for t in tensors)
        if empty and dt not in (torch.float32, torch.float64, torch.int64):
            continue
        # Kiln refuses linalg_vecdot of complex tensors (it has no conj).
        if name == "linalg.vecdot" and dt.is_complex:
            continue
        tensors = [s.input] + list(s.args)
        if not all(isinstance(t, torch.Tensor) for t in tensors):
            continue
        tensors = [t.contiguous() for t in tensors]
        attrs = {k: (attr_spec(v) if k in ("beta", "alpha") else v) for k, v in s.kwargs.items()}
        fn = {"linalg.vecdot": torch.linalg.vecdot}.get(name) or getattr(torch, name)
        record(ISSUE16_PRODUCTS[name], attrs, tensors, lambda: fn(*tensors, **s.kwargs))
    # Products on the deterministic values, with integer coefficients.
    for dt in DTYPES:
        a, b = make(dt, [3, 4], special=False), make(dt, [4, 2], special=False, reverse=True)
        c = make(dt, [2], special=False)
        v, w = make(dt, [4], special=False), make(dt, [3], special=False, reverse=True)
        b1, b2 = make(dt, [2, 3, 4], special=False), make(dt, [2, 4, 2], special=False, reverse=True)
        record("mm", {}, [a, b], lambda: torch.mm(a, b))
        record("mv", {}, [a, v], lambda: torch.mv(a, v))
        record("dot", {}, [v, v], lambda: torch.dot(v, v))
        record("outer", {}, [w, v], lambda: torch.outer(w, v))
        record("inner", {}, [a, a], lambda: torch.inner(a, a))
        record("bmm", {}, [b1, b2], lambda: torch.bmm(b1, b2))
        two, three = scalar_spec(2), scalar_spec(3)
        record("addmm", {"beta": two, "alpha": three}, [c, a, b], lambda: torch.addmm(c, a, b, beta=2, alpha=3))
        record("addmv", {"beta": two}, [w, a, v], lambda: torch.addmv(w, a, v, beta=2))
        record("addr", {"alpha": two}, [a, w, v], lambda: torch.addr(a, w, v, alpha=2))
        record("addr", {}, [a, w, v], lambda: torch.addr(a, w, v))
        record("baddbmm", {"alpha": two}, [c, b1, b2], lambda: torch.baddbmm(c, b1, b2, alpha=2))
        record("addbmm", {"beta": three}, [c, b1, b2], lambda: torch.addbmm(c, b1, b2, beta=3))
        record("trace", {}, [a], lambda: torch.trace(a))
        if not dt.is_complex:
            record("linalg_vecdot", {"dim": 0}, [a, w.reshape(3, 1)],
                   lambda: torch.linalg.vecdot(a, w.reshape(3, 1), dim=0))
        record("kron", {}, [a, w], lambda: torch.kron(a, w))
    # beta = 0 ignores the input's NaN.
    nan = torch.full((3, 2), float("nan"))
    a, b = make(torch.float32, [3, 4], special=False), make(torch.float32, [4, 2], special=False)
    record("addmm", {"beta": scalar_spec(0)}, [nan, a, b], lambda: torch.addmm(nan, a, b, beta=0))
    record("addr", {}, [make(torch.int32, [3, 4]), make(torch.float64, [3]), make(torch.int64, [4])],
           lambda: torch.addr(make(torch.int32, [3, 4]), make(torch.float64, [3]), make(torch.int64, [4])))
    gen_issue16_norms()
    gen_issue16_losses()
    gen_issue16_opinfo()


def gen_issue16_norms():
    """rms_norm, group_norm, batch_norm, instance_norm, normalize."""
    g = torch.Generator().manual_seed(16)
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        rnd = lambda *s: (torch.rand(*s, generator=g, dtype=torch.float64) * 4 - 2).to(dt)
        pos = lambda *s: (torch.rand(*s, generator=g, dtype=torch.float64) + 0.5).to(dt)
        x = rnd(2, 6, 5)
        w, b = rnd(5), rnd(5)
        record("rms_norm", {"normalized_shape": [5]}, [x], lambda: F.rms_norm(x, (5,)))
        record("rms_norm", {"normalized_shape": [5], "eps": 1e-3}, [x, w], lambda: F.rms_norm(x, (5,), w, eps=1e-3))
        w2 = rnd(6, 5)
        record("rms_norm", {"normalized_shape": [6, 5], "eps": 0.5}, [x, w2], lambda: F.rms_norm(x, (6, 5), w2, eps=0.5))
        record("rms_norm", {"normalized_shape": [5]}, [x[:0]], lambda: F.rms_norm(x[:0], (5,)))
        wc, bc = rnd(6), rnd(6)
        for groups in (1, 2, 3, 6):
            record("group_norm", {"num_groups": groups}, [x], lambda: F.group_norm(x, groups))
        record("group_norm", {"num_groups": 3, "eps": 0.5}, [x, wc, bc], lambda: F.group_norm(x, 3, wc, bc, eps=0.5))
        record("group_norm", {"num_groups": 2}, [x, None, bc], lambda: F.group_norm(x, 2, None, bc))
        x4 = rnd(2, 4, 3, 2)
        wg = rnd(4)
        record("group_norm", {"num_groups": 2}, [x4, wg], lambda: F.group_norm(x4, 2, wg))
        rm, rv = rnd(6), pos(6)
        for xx in (x, x[:, :, 0], x4.reshape(2, 6, 2, 2)[:, :, :, :1].contiguous()):
            record("batch_norm", {}, [xx, wc, bc, rm, rv],
                   lambda: F.batch_norm(xx, rm, rv, wc, bc))
            record("batch_norm", {"eps": 0.25}, [xx, None, None, rm, rv],
                   lambda: F.batch_norm(xx, rm, rv, eps=0.25))
            record("batch_norm", {"training": True}, [xx, wc, bc, rm.clone(), rv.clone()],
                   lambda: F.batch_norm(xx, rm.clone(), rv.clone(), wc, bc, training=True))
            record("batch_norm", {"training": True}, [xx],
                   lambda: F.batch_norm(xx, None, None, training=True))
            record("instance_norm", {}, [xx, wc, bc], lambda: F.instance_norm(xx, weight=wc, bias=bc))
            record("instance_norm", {"eps": 0.5}, [xx], lambda: F.instance_norm(xx, eps=0.5))
            record("instance_norm", {"use_input_stats": False}, [xx, wc, bc, rm, rv],
                   lambda: F.instance_norm(xx, rm, rv, wc, bc, use_input_stats=False))
        if dt in (torch.float16, torch.bfloat16):
            w32, b32 = rnd(6).float(), rnd(6).float()
            record("group_norm", {"num_groups": 3}, [x, w32, b32], lambda: F.group_norm(x, 3, w32, b32))
            record("batch_norm", {}, [x, w32, b32, rm.float(), rv.float()],
                   lambda: F.batch_norm(x, rm.float(), rv.float(), w32, b32))
        for p, dim in ((2.0, 1), (1.0, -1), (float("inf"), 0), (3.0, 2), (0.0, 1), (0.5, 1), (float("-inf"), 1)):
            record("normalize", {"p": scalar_spec(p), "dim": dim}, [x], lambda: F.normalize(x, p, dim))
        z = torch.zeros(2, 3, dtype=dt)
        record("normalize", {}, [z], lambda: F.normalize(z))
        record("normalize", {"dim": 0}, [x[0, 0]], lambda: F.normalize(x[0, 0], dim=0))


def gen_issue16_losses():
    """The losses with each reduction, cosine_similarity,
    pairwise_distance, masked_fill and one_hot."""
    g = torch.Generator().manual_seed(1616)
    reductions = ("mean", "sum", "none")
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        rnd = lambda *s: (torch.rand(*s, generator=g, dtype=torch.float64) * 4 - 2).to(dt)
        prob = lambda *s: (torch.rand(*s, generator=g, dtype=torch.float64) * 0.98 + 0.01).to(dt)
        x, y = rnd(3, 4), rnd(3, 4)
        sign = (torch.rand(3, 4, generator=g) > 0.5).to(dt) * 2 - 1
        p, q = prob(3, 4), prob(3, 4)
        for r in reductions:
            red = {"reduction": r}
            record("mse_loss", red, [x, y], lambda: F.mse_loss(x, y, reduction=r))
            record("mse_loss", red, [x, y[0]], lambda: F.mse_loss(x, y[0].expand(3, 4), reduction=r))
            record("l1_loss", red, [x, y], lambda: F.l1_loss(x, y, reduction=r))
            record("smooth_l1_loss", red, [x, y], lambda: F.smooth_l1_loss(x, y, reduction=r))
            record("smooth_l1_loss", dict(red, beta=0.5), [x, y], lambda: F.smooth_l1_loss(x, y, reduction=r, beta=0.5))
            record("smooth_l1_loss", dict(red, beta=0.0), [x, y], lambda: F.smooth_l1_loss(x, y, reduction=r, beta=0.0))
            record("huber_loss", red, [x, y], lambda: F.huber_loss(x, y, reduction=r))
            record("huber_loss", dict(red, delta=0.75), [x, y], lambda: F.huber_loss(x, y, reduction=r, delta=0.75))
            record("binary_cross_entropy", red, [p, q], lambda: F.binary_cross_entropy(p, q, reduction=r))
            w4 = prob(4)
            record("binary_cross_entropy", red, [p, q, w4], lambda: F.binary_cross_entropy(p, q, w4, reduction=r))
            record("binary_cross_entropy_with_logits", red, [x, q],
                   lambda: F.binary_cross_entropy_with_logits(x, q, reduction=r))
            pw = prob(4) * 3
            record("binary_cross_entropy_with_logits", red, [x, q, w4, pw],
                   lambda: F.binary_cross_entropy_with_logits(x, q, w4, reduction=r, pos_weight=pw))
            record("binary_cross_entropy_with_logits", red, [x, q, None, pw],
                   lambda: F.binary_cross_entropy_with_logits(x, q, reduction=r, pos_weight=pw))
            lp = torch.log_softmax(x.float(), 1).to(dt)
            record("kl_div", red, [lp, p], lambda: F.kl_div(lp, p, reduction=r))
            record("kl_div", dict(red, log_target=True), [lp, y], lambda: F.kl_div(lp, y, reduction=r, log_target=True))
            record("soft_margin_loss", red, [x, sign], lambda: F.soft_margin_loss(x, sign, reduction=r))
            x1, x2, s1 = x[0], y[0], sign[0]
            record("margin_ranking_loss", red, [x1, x2, s1], lambda: F.margin_ranking_loss(x1, x2, s1, reduction=r))
            record("margin_ranking_loss", dict(red, margin=0.5), [x, y, sign],
                   lambda: F.margin_ranking_loss(x, y, sign, margin=0.5, reduction=r))
            record("hinge_embedding_loss", red, [x, sign], lambda: F.hinge_embedding_loss(x, sign, reduction=r))
            record("hinge_embedding_loss", dict(red, margin=0.5), [x, sign],
                   lambda: F.hinge_embedding_loss(x, sign, margin=0.5, reduction=r))
            cnt = (p * 5).round()
            record("poisson_nll_loss", red, [x, cnt], lambda: F.poisson_nll_loss(x, cnt, reduction=r))
            record("poisson_nll_loss", dict(red, log_input=False, full=True), [p, cnt],
                   lambda: F.poisson_nll_loss(p, cnt, log_input=False, full=True, reduction=r))
            xs = rnd(2, 5, 3)
            t1 = torch.tensor([4, 0, 2, 2, 1, 3], dtype=torch.int64)[:2]
            t3 = torch.tensor([[4, 0, 2], [1, 3, -100]], dtype=torch.int64)
            w5 = prob(5)
            x2d = xs[:, :, 0]
            for ii in (-100, 2):
                attrs = dict(red, ignore_index=ii)
                record("nll_loss", attrs, [x2d, t1], lambda: F.nll_loss(x2d, t1, ignore_index=ii, reduction=r))
                record("nll_loss", attrs, [x2d, t1, w5], lambda: F.nll_loss(x2d, t1, w5, ignore_index=ii, reduction=r))
                record("nll_loss", attrs, [xs, t3, w5], lambda: F.nll_loss(xs, t3, w5, ignore_index=ii, reduction=r))
                record("cross_entropy", attrs, [x2d, t1], lambda: F.cross_entropy(x2d, t1, ignore_index=ii, reduction=r))
                record("cross_entropy", attrs, [xs, t3, w5],
                       lambda: F.cross_entropy(xs, t3, w5, ignore_index=ii, reduction=r))
                record("cross_entropy", dict(attrs, label_smoothing=0.2), [x2d, t1, w5],
                       lambda: F.cross_entropy(x2d, t1, w5, ignore_index=ii, reduction=r, label_smoothing=0.2))
                record("cross_entropy", dict(attrs, label_smoothing=0.1), [xs, t3],
                       lambda: F.cross_entropy(xs, t3, ignore_index=ii, reduction=r, label_smoothing=0.1))
            t0 = torch.tensor(3)
            record("nll_loss", red, [x2d[0], t0], lambda: F.nll_loss(x2d[0], t0, reduction=r))
            record("cross_entropy", red, [x2d[0], t0], lambda: F.cross_entropy(x2d[0], t0, reduction=r))
            pt = torch.softmax(rnd(2, 5, 3).float(), 1).to(dt)
            record("cross_entropy", red, [xs, pt], lambda: F.cross_entropy(xs, pt, reduction=r))
            record("cross_entropy", dict(red, label_smoothing=0.3), [xs, pt, w5],
                   lambda: F.cross_entropy(xs, pt, w5, reduction=r, label_smoothing=0.3))
        record("kl_div", {"reduction": "batchmean"}, [lp, p], lambda: F.kl_div(lp, p, reduction="batchmean"))
        record("mse_loss", {}, [x[:0], y[:0]], lambda: F.mse_loss(x[:0], y[:0]))
        record("cosine_similarity", {}, [x, y], lambda: F.cosine_similarity(x, y))
        record("cosine_similarity", {"dim": 0, "eps": 0.5}, [x, y[:1]], lambda: F.cosine_similarity(x, y[:1], dim=0, eps=0.5))
        record("cosine_similarity", {"dim": -1}, [x[:, :1], y], lambda: F.cosine_similarity(x[:, :1], y, dim=-1))
        zero = torch.zeros(3, 4, dtype=dt)
        record("cosine_similarity", {}, [zero, y], lambda: F.cosine_similarity(zero, y))
        for pp in (2.0, 1.0, 3.0, float("inf")):
            record("pairwise_distance", {"p": scalar_spec(pp)}, [x, y], lambda: F.pairwise_distance(x, y, p=pp))
        record("pairwise_distance", {"keepdim": True, "eps": 0.5}, [x, y[0]], lambda: F.pairwise_distance(x, y[0], eps=0.5, keepdim=True))
        record("pairwise_distance", {}, [x[0], y[0]], lambda: F.pairwise_distance(x[0], y[0]))
    for dt in (torch.float32, torch.float64):
        x, y = make(dt, [3, 4], special=False), make(torch.float32, [3, 4], reverse=True, special=False)
        record("mse_loss", {}, [x, y], lambda: F.mse_loss(x, y))
        record("huber_loss", {"reduction": "none"}, [y, x], lambda: F.huber_loss(y, x, reduction="none"))
        record("cosine_similarity", {}, [x, y], lambda: F.cosine_similarity(x, y))
    for dt in DTYPES:
        x = make(dt, [3, 4])
        m = torch.tensor([True, False, True, False])
        m2 = make(torch.bool, [3, 4])
        for v in (2.5, -3, True, 0):
            record("masked_fill", {"value": scalar_spec(v)}, [x, m], lambda: x.masked_fill(m, v))
        record("masked_fill", {"value": scalar_spec(7)}, [x[0], m2], lambda: x[0].masked_fill(m2, 7))
    big = torch.tensor([2**62 + 1, -5, 3], dtype=torch.int64)
    mb = torch.tensor([False, True, False])
    record("masked_fill", {"value": scalar_spec(4)}, [big, mb], lambda: big.masked_fill(mb, 4))
    idx = torch.tensor([[0, 3, 1], [2, 2, 0]], dtype=torch.int64)
    record("one_hot", {"num_classes": 4}, [idx], lambda: F.one_hot(idx, 4))
    record("one_hot", {"num_classes": 6}, [idx[0]], lambda: F.one_hot(idx[0], 6))
    record("one_hot", {"num_classes": 5}, [torch.tensor(3)], lambda: F.one_hot(torch.tensor(3), 5))
    record("one_hot", {"num_classes": 3}, [idx[:0]], lambda: F.one_hot(idx[:0], 3))


def gen_issue16_opinfo():
    """PyTorch's OpInfo samples for the normalizations, the class-index
    losses, masked_fill and one_hot, on the float dtypes (int64 for
    one_hot): weights, ignored classes, label smoothing, probability
    targets, empty and 0-D inputs."""
    names = {
        "nn.functional.nll_loss": "nll_loss", "nn.functional.cross_entropy": "cross_entropy",
        "nn.functional.mse_loss": "mse_loss", "nn.functional.group_norm": "group_norm",
        "nn.functional.rms_norm": "rms_norm", "nn.functional.normalize": "normalize",
        "masked_fill": "masked_fill", "nn.functional.one_hot": "one_hot",
    }
    floats = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
    for name, dt, s in op_db_samples(set(names), floats + (torch.int64,)):
        kiln = names[name]
        if (kiln == "one_hot") != (dt == torch.int64):
            continue
        x, args, kw = s.input, list(s.args), dict(s.kwargs)
        if not isinstance(x, torch.Tensor):
            continue
        attrs = {}
        if kiln in ("nll_loss", "cross_entropy", "mse_loss"):
            target = args[0]
            weight = kw.get("weight")
            operands = [x, target] + ([weight] if weight is not None and kiln != "mse_loss" else [])
            for k in ("reduction", "ignore_index", "label_smoothing"):
                if k in kw:
                    attrs[k] = kw[k]
            if x.dim() == 0 or (target.dtype == torch.int64 and target.numel() and target.max() >= x.shape[min(1, x.dim() - 1)]):
                continue
            fn = getattr(F, kiln)
            call = lambda: fn(x, target, **kw)
        elif kiln == "group_norm":
            attrs = {"num_groups": args[0]}
            if "eps" in kw:
                attrs["eps"] = kw["eps"]
            operands = [x, kw.get("weight"), kw.get("bias")]
            call = lambda: F.group_norm(x, args[0], **kw)
        elif kiln == "rms_norm":
            shape = list(args[0])
            weight = args[1] if len(args) > 1 else kw.get("weight")
            attrs = {"normalized_shape": shape}
            if kw.get("eps") is not None:
                attrs["eps"] = kw["eps"]
            operands = [x, weight]
            call = lambda: F.rms_norm(x, shape, weight, eps=kw.get("eps"))
        elif kiln == "normalize":
            attrs = {k: (scalar_spec(v) if k == "p" else v) for k, v in kw.items()}
            operands = [x]
            call = lambda: F.normalize(x, **kw)
        elif kiln == "masked_fill":
            mask, value = args
            if isinstance(value, torch.Tensor):
                continue
            attrs = {"value": scalar_spec(value)}
            operands = [x, mask]
            call = lambda: x.masked_fill(mask, value)
        else:
            n = kw.get("num_classes", -1)
            if n < 0:
                continue
            attrs = {"num_classes": n}
            operands = [x]
            call = lambda: F.one_hot(x, n)
        while operands and operands[-1] is None:
            operands.pop()
        operands = [o.contiguous() if isinstance(o, torch.Tensor) else o for o in operands]
        record(kiln, attrs, operands, call)


# Spatial ops: convolution, pooling and resampling, under ATen's names and
# attribute names. Every case is computed by spatial_call() from the same
# attrs it records, so the attributes and the values cannot disagree.

SPATIAL_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
# Integer dtypes PyTorch's CPU pools (see gen_pool): max_pool2d/3d and every
# max_poolNd_with_indices take all five; avg_pool1d/2d/3d take int64 only;
# max_pool1d (no indices), the adaptive pools and the upsamplings none.
POOL_INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)

_A = torch.ops.aten
_UPSAMPLE_SCALES = {1: ["scales"], 2: ["scales_h", "scales_w"], 3: ["scales_d", "scales_h", "scales_w"]}


def spatial_call(op, a, operands):
    """Runs the Kiln op `op` with attributes `a` on `operands` through
    PyTorch (the ATen op of that name, or F.convNd/F.conv_transposeNd)."""
    x = operands[0]
    w = operands[1] if len(operands) > 1 else None
    b = operands[2] if len(operands) > 2 else None
    if op == "convolution":
        return _A.convolution(x, w, b, a["stride"], a["padding"], a["dilation"], a["transposed"],
                              a["output_padding"], a["groups"])
    if op in ("conv1d", "conv2d", "conv3d"):
        return getattr(F, op)(x, w, b, a.get("stride", [1]), a.get("padding", [0]), a.get("dilation", [1]),
                              a.get("groups", 1))
    if op.startswith("conv_transpose"):
        return getattr(F, op)(x, w, b, a.get("stride", [1]), a.get("padding", [0]), a.get("output_padding", [0]),
                              a.get("groups", 1), a.get("dilation", [1]))
    if op == "im2col":
        return _A.im2col(x, a["kernel_size"], a["dilation"], a["padding"], a["stride"])
    if op == "col2im":
        return _A.col2im(x, a["output_size"], a["kernel_size"], a["dilation"], a["padding"], a["stride"])
    if op == "max_unpool2d":
        return _A.max_unpool2d(x, w, a["output_size"])
    if op == "max_unpool3d":
        return _A.max_unpool3d(x, w, a["output_size"], a["stride"], a["padding"])
    if op in ("grid_sampler_2d", "grid_sampler_3d"):
        return getattr(_A, op)(x, w, a["interpolation_mode"], a["padding_mode"], a["align_corners"])
    if op == "affine_grid_generator":
        return _A.affine_grid_generator(x, a["size"], a["align_corners"])
    if op.startswith("lp_pool"):
        # F.lp_pool1d takes its kernel as an int (it multiplies by it).
        k = a["kernel_size"][0] if op == "lp_pool1d" else a["kernel_size"]
        return getattr(F, op)(x, _lp_norm(a["norm_type"]), k, a.get("stride"), a["ceil_mode"])
    if op.startswith("max_pool"):
        return getattr(_A, op)(x, a["kernel_size"], a.get("stride", []), a.get("padding", [0]),
                               a.get("dilation", [1]), a.get("ceil_mode", False))
    if op == "avg_pool1d":
        return _A.avg_pool1d(x, a["kernel_size"], a.get("stride", []), a.get("padding", [0]),
                             a.get("ceil_mode", False), a.get("count_include_pad", True))
    if op in ("avg_pool2d", "avg_pool3d"):
        return getattr(_A, op)(x, a["kernel_size"], a.get("stride", []), a.get("padding", [0]),
                               a.get("ceil_mode", False), a.get("count_include_pad", True),
                               a.get("divisor_override"))
    if op.startswith("adaptive_"):
        return getattr(_A, op)(x, a["output_size"])
    if op.startswith(("reflection_pad", "replication_pad")):
        return getattr(_A, op)(x, a["padding"])
    if op in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle"):
        return getattr(F, op)(x, *a.values())
    if op == "rot90":
        return torch.rot90(x, a["k"], a["dims"])
    if op == "prelu":
        return F.prelu(x, w)
    if op in COMPLEX_PARTS:
        return getattr(torch, op)(*operands)
    if op in LIKE_OPS:
        return like_call(op, a, x)
    if op == "diagonal":
        return torch.diagonal(x, a.get("offset", 0), a.get("dim1", 0), a.get("dim2", 1))
    if op == "unfold":
        return x.unfold(a["dimension"], a["size"], a["step"])
    d = int(op[-2])
    scales = [a.get(k) for k in _UPSAMPLE_SCALES[d]]
    fn = getattr(_A, op).default
    if "nearest" in op:
        return fn(x, a["output_size"], *scales)
    return fn(x, a["output_size"], a["align_corners"], *scales)


def _lp_norm(v):
    """lp_pool's norm_type attribute: a float, or a scalar spec (infinities)."""
    return float(v["value"]) if isinstance(v, dict) else float(v)


def spatial_record(op, attrs, operands):
    record(op, attrs, list(operands), lambda: spatial_call(op, attrs, list(operands)))


def spatial_randn(g, dt, *shape):
    """Small random values rounded to dt (integers in a small range)."""
    if dt.is_floating_point:
        return torch.randn(*shape, generator=g, dtype=torch.float64).to(dt)
    if dt == torch.uint8:
        return torch.randint(0, 60, shape, generator=g).to(dt)
    return torch.randint(-30, 30, shape, generator=g).to(dt)


def spatial_subset(dt, cases):
    """Every case on f32; on each other dtype, every third case (f64, f16 and
    bf16 in turn) or every other one (the integer dtypes in turn), so each
    case also runs on one other dtype."""
    if dt == torch.float32:
        return cases
    if dt.is_floating_point:
        k = SPATIAL_FLOATS.index(dt) - 1
        return cases[k::3]
    return cases[POOL_INTS.index(dt) % 2::2]


def gen_conv():
    """conv1d/2d/3d, conv_transpose1d/2d/3d and convolution: strides,
    padding (ints, 'same' with odd and even kernels, 'valid'), dilation,
    groups and depthwise, bias or none, unbatched inputs, empty batch,
    transposed with output_padding, groups and dilation."""
    g = torch.Generator().manual_seed(2024)

    def conv(stride, padding, dilation, transposed, output_padding, groups):
        return {"stride": stride, "padding": padding, "dilation": dilation, "transposed": transposed,
                "output_padding": output_padding, "groups": groups}

    for dt in SPATIAL_FLOATS:
        r = lambda *s: spatial_randn(g, dt, *s)
        x, w, b = r(2, 4, 9), r(6, 4, 3), r(6)
        w2, w4, wd, wd2 = r(6, 2, 3), r(6, 4, 4), r(4, 1, 3), r(8, 1, 2)
        cases = [("conv1d", a, o) for a, o in (
            ({}, [x, w, b]),
            ({}, [x, w]),
            ({"stride": [2]}, [x, w, b]),
            ({"padding": [1]}, [x, w]),
            ({"padding": [4]}, [x, w, b]),
            ({"dilation": [2]}, [x, w, b]),
            ({"stride": [2], "padding": [2], "dilation": [3]}, [x, w, b]),
            ({"groups": 2}, [x, w2, b]),
            ({"groups": 4}, [x, wd]),
            ({"groups": 4, "stride": [2], "padding": [1]}, [x, wd2, r(8)]),
            ({"padding": "same"}, [x, w, b]),
            ({"padding": "same"}, [x, w4]),
            ({"padding": "same", "dilation": [2]}, [x, w4, b]),
            ({"padding": "same", "groups": 4}, [x, wd2]),
            ({"padding": "valid"}, [x, w4, b]),
            ({"padding": "valid", "stride": [3]}, [x, w]),
            ({}, [x[0], w, b]),
            ({"padding": "same", "groups": 2}, [x[1], w2]),
            ({}, [x[:0], w, b]),
            ({"stride": [9]}, [x, r(6, 4, 9), b]),
        )]
        x, w, b = r(2, 4, 4, 5), r(3, 4, 3, 3), r(3)
        w2, wd, w1 = r(4, 2, 3, 2), r(4, 1, 3, 3), r(3, 4, 1, 1)
        we, wd2 = r(3, 4, 2, 4), r(8, 1, 2, 2)
        cases += [("conv2d", a, o) for a, o in (
            ({}, [x, w, b]),
            ({}, [x, w]),
            ({"stride": [2, 1]}, [x, w, b]),
            ({"stride": [2]}, [x, w]),
            ({"padding": [1, 2]}, [x, w, b]),
            ({"padding": [1]}, [x, w]),
            ({"dilation": [2, 1], "padding": [1, 0]}, [x, w, b]),
            ({"stride": [2, 3], "padding": [2, 1], "dilation": [1, 2]}, [x, w, b]),
            ({"groups": 2}, [x, w2, r(4)]),
            ({"groups": 2, "stride": [1, 2], "padding": [1, 1]}, [x, w2]),
            ({"groups": 4}, [x, wd, r(4)]),
            ({"groups": 4, "padding": [1, 1], "dilation": [2, 2]}, [x, wd]),
            ({"groups": 4, "stride": [2, 2]}, [x, wd2, r(8)]),
            ({}, [x, w1, b]),
            ({"stride": [2, 2]}, [x, w1]),
            ({"padding": "same"}, [x, w, b]),
            ({"padding": "same"}, [x, we]),
            ({"padding": "same", "dilation": [2, 3]}, [x, we, r(3)]),
            ({"padding": "valid"}, [x, we]),
            ({}, [x[1], w, b]),
            ({"padding": "same", "groups": 4}, [x[0], wd]),
            ({}, [x[:0], w, b]),
        )]
        x, w, b = r(1, 4, 3, 4, 4), r(2, 4, 2, 2, 2), r(2)
        cases += [("conv3d", a, o) for a, o in (
            ({}, [x, w, b]),
            ({"stride": [1, 2, 2], "padding": [1, 0, 1]}, [x, w]),
            ({"dilation": [1, 2, 2]}, [x, w, b]),
            ({"groups": 2}, [x, r(4, 2, 2, 1, 3), r(4)]),
            ({"groups": 4, "padding": [0, 1, 1]}, [x, r(4, 1, 1, 3, 3)]),
            ({"padding": "same"}, [x, w, b]),
            ({"padding": "valid", "stride": [2]}, [x, w]),
            ({}, [x[0], w, b]),
            ({}, [x[:0], w, b]),
        )]
        # conv_transpose: weight [in, out / groups, k...]
        x, w, b = r(2, 4, 5), r(4, 3, 3), r(3)
        cases += [("conv_transpose1d", a, o) for a, o in (
            ({}, [x, w, b]),
            ({"stride": [2]}, [x, w]),
            ({"stride": [2], "output_padding": [1]}, [x, w, b]),
            ({"stride": [3], "padding": [1], "output_padding": [2]}, [x, w, b]),
            ({"dilation": [2], "output_padding": [1], "stride": [1]}, [x, w]),
            ({"padding": [2]}, [x, w, b]),
            ({"groups": 2, "stride": [2]}, [x, r(4, 2, 3), r(4)]),
            ({"groups": 4, "stride": [2], "padding": [1], "dilation": [2]}, [x, r(4, 1, 2)]),
            ({}, [x[0], w, b]),
            ({}, [x[:0], w, b]),
        )]
        x, w, b = r(2, 4, 3, 4), r(4, 2, 3, 2), r(2)
        cases += [("conv_transpose2d", a, o) for a, o in (
            ({}, [x, w, b]),
            ({"stride": [2, 1]}, [x, w]),
            ({"stride": [2, 3], "padding": [1, 1], "output_padding": [1, 2]}, [x, w, b]),
            ({"dilation": [2, 1], "padding": [1, 0], "output_padding": [1, 0]}, [x, w, b]),
            ({"groups": 2, "stride": [2, 2]}, [x, r(4, 3, 2, 2), r(6)]),
            ({"groups": 4}, [x, r(4, 1, 3, 3)]),
            ({}, [x[1], w, b]),
            ({}, [x[:0], w]),
        )]
        x, w, b = r(1, 2, 2, 3, 3), r(2, 2, 2, 2, 2), r(2)
        cases += [("conv_transpose3d", a, o) for a, o in (
            ({}, [x, w, b]),
            ({"stride": [2, 1, 2], "padding": [0, 1, 1], "output_padding": [1, 0, 1]}, [x, w]),
            ({"groups": 2, "dilation": [1, 2, 1]}, [x, r(2, 1, 2, 2, 2), r(2)]),
            ({}, [x[0], w]),
        )]
        # convolution: every attribute given, transposed or not; bias or none.
        x1, x2, x3 = r(2, 4, 7), r(1, 4, 5, 4), r(1, 2, 3, 3, 4)
        cases += [("convolution", a, o) for a, o in (
            (conv([1], [0], [1], False, [0], 1), [x1, r(3, 4, 3), r(3)]),
            (conv([2], [1], [2], False, [0], 2), [x1, r(4, 2, 2), None]),
            (conv([2], [1], [1], True, [1], 1), [x1, r(4, 3, 3), r(3)]),
            (conv([1, 2], [1, 0], [1, 1], False, [0, 0], 1), [x2, r(3, 4, 3, 3), r(3)]),
            (conv([1, 1], [0, 0], [2, 1], False, [0, 0], 4), [x2, r(4, 1, 2, 2), r(4)]),
            (conv([2, 2], [1, 0], [1, 1], True, [1, 1], 2), [x2, r(4, 2, 3, 2), r(4)]),
            (conv([2, 1], [0, 1], [2, 2], True, [1, 0], 1), [x2, r(4, 1, 2, 2), None]),
            (conv([1], [1], [1], False, [0], 1), [x2, r(2, 4, 3, 3), None]),
            (conv([1, 1, 1], [0, 1, 0], [1, 1, 1], False, [0, 0, 0], 1), [x3, r(3, 2, 2, 2, 2), r(3)]),
            (conv([2, 1, 2], [0, 0, 1], [1, 1, 1], True, [1, 0, 0], 2), [x3, r(2, 2, 1, 2, 2), r(4)]),
            (conv([1], [0], [1], False, [0], 1), [x1[:0], r(3, 4, 3), r(3)]),
        )]
        for op, attrs, operands in spatial_subset(dt, cases):
            spatial_record(op, attrs, operands)


def gen_pool():
    """max_poolNd (values; with indices), avg_poolNd and the adaptive
    pools: strides, padding, dilation, ceil_mode edge cases (a last window
    that would start in the padding), count_include_pad, divisor_override,
    adaptive sizes that don't divide the input, NaN and infinities, empty
    batch, unbatched inputs; the integer dtypes where PyTorch's CPU pools them."""
    g = torch.Generator().manual_seed(2025)
    for dt in SPATIAL_FLOATS + POOL_INTS:
        r = lambda *s: spatial_randn(g, dt, *s)
        cases = []
        x1, x2, x3 = r(2, 3, 7), r(2, 2, 5, 6), r(1, 2, 4, 3, 5)
        for d, x in ((1, x1), (2, x2), (3, x3)):
            plain = [
                {"kernel_size": [2] * d},
                {"kernel_size": [3, 2, 2][:d], "stride": [1, 2, 1][:d]},
                {"kernel_size": [3] * d, "stride": [2] * d, "padding": [1] * d},
                # ceil_mode: the last window would start in the padding, and is dropped.
                {"kernel_size": [2] * d, "stride": [2] * d, "padding": [1] * d, "ceil_mode": True},
                {"kernel_size": [2] * d, "dilation": [2] * d, "stride": [1] * d, "padding": [1] * d},
                # ceil_mode: an extra, partial window.
                {"kernel_size": [3] * d, "stride": [2] * d, "ceil_mode": True},
                {"kernel_size": [2] * d, "padding": [1] * d},
                # ceil_mode: the last window runs past the input.
                {"kernel_size": [2] * d, "ceil_mode": True},
            ]
            if d == 3:
                plain = [plain[i] for i in (0, 2, 3, 7)]
            if d == 2:
                plain += [
                    {"kernel_size": [2], "stride": [], "padding": [0], "dilation": [1], "ceil_mode": False},
                    {"kernel_size": [3, 2], "stride": [2, 3], "padding": [1, 1], "dilation": [1, 2], "ceil_mode": True},
                    {"kernel_size": [5, 6]},
                ]
            for op in (f"max_pool{d}d", f"max_pool{d}d_with_indices"):
                cases += [(op, a, [x]) for a in plain]
                cases += [(op, {"kernel_size": [2] * d}, [x[:0]]),
                          (op, {"kernel_size": [2] * d, "padding": [1] * d, "stride": [1] * d}, [x[0]])]
                if dt.is_floating_point:  # NaN, infinities, -0.0 and ties from make()
                    xs = make(dt, list(x.shape[:1]) + [2] + list(x.shape[2:]))
                    cases += [(op, a, [xs]) for a in plain[:2] + plain[-2:]]
        cases += [("avg_pool1d", a, [x1]) for a in (
            {"kernel_size": [2]},
            {"kernel_size": [3], "stride": [2], "padding": [1]},
            {"kernel_size": [3], "stride": [2], "padding": [1], "count_include_pad": False},
            {"kernel_size": [2], "stride": [2], "padding": [1], "ceil_mode": True},
            {"kernel_size": [2], "ceil_mode": True},
            {"kernel_size": [4], "stride": [3], "padding": [2], "ceil_mode": True, "count_include_pad": False},
            {"kernel_size": [4], "stride": [3], "padding": [2], "ceil_mode": True, "count_include_pad": True},
        )]
        cases += [("avg_pool1d", {"kernel_size": [3]}, [x1[0]])]
        cases += [("avg_pool2d", a, [x2]) for a in (
            {"kernel_size": [2, 2]},
            {"kernel_size": [3, 2], "stride": [2, 1], "padding": [1, 1]},
            {"kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1], "count_include_pad": False},
            {"kernel_size": [2, 3], "stride": [2, 2], "padding": [1, 1], "ceil_mode": True},
            {"kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1], "ceil_mode": True, "count_include_pad": False},
            {"kernel_size": [2, 2], "divisor_override": 3},
            {"kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1], "divisor_override": 2, "count_include_pad": False},
            {"kernel_size": [2], "stride": [], "padding": [0], "ceil_mode": False, "count_include_pad": True},
        )]
        cases += [("avg_pool2d", {"kernel_size": [2, 2], "ceil_mode": True}, [x2[0]]),
                  ("avg_pool2d", {"kernel_size": [2, 2]}, [x2[:0]])]
        cases += [("avg_pool3d", a, [x3]) for a in (
            {"kernel_size": [2, 2, 2]},
            {"kernel_size": [2, 3, 2], "stride": [1, 2, 2], "padding": [1, 1, 0], "count_include_pad": False},
            {"kernel_size": [2, 2, 3], "stride": [2, 2, 2], "padding": [0, 1, 1], "ceil_mode": True},
            {"kernel_size": [2, 2, 2], "divisor_override": 5},
        )]
        cases += [("avg_pool3d", {"kernel_size": [2, 2, 2]}, [x3[0]])]
        if dt.is_floating_point:  # the adaptive pools take floats only
            xa1, xa2, xa3 = r(2, 3, 7), r(1, 2, 5, 7), r(1, 2, 4, 5, 3)
            sizes = {1: [[3], [7], [10], [1], [4]], 2: [[3, 2], [5, 7], [1, 1], [4, 9], [2, 5]],
                     3: [[2, 3, 2], [1, 1, 1], [3, 2, 5], [4, 5, 3]]}
            for d, x in ((1, xa1), (2, xa2), (3, xa3)):
                for kind in ("avg", "max"):
                    op = f"adaptive_{kind}_pool{d}d"
                    cases += [(op, {"output_size": s}, [x]) for s in sizes[d]]
                    cases += [(op, {"output_size": sizes[d][0]}, [x[0]]),
                              (op, {"output_size": sizes[d][0]}, [x[:0]]),
                              (op, {"output_size": sizes[d][0]}, [make(dt, list(x.shape))])]
        for op, attrs, operands in spatial_subset(dt, cases):
            spatial_record(op, attrs, operands)


def gen_upsample():
    """The upsamplings: nearest, nearest-exact, (bi/tri)linear and bicubic,
    up and down, by output size and by scales (output size floor(in*s)),
    align_corners both ways, on 1-, 2- and 3-D spatial inputs."""
    g = torch.Generator().manual_seed(2026)
    plans = {
        1: [([11], None), ([3], None), ([5], None), (None, [2.0]), (None, [1.7]), (None, [0.6]), (None, [2.5])],
        2: [([7, 9], None), ([3, 2], None), ([4, 9], None), (None, [2.0, 1.5]), (None, [1.5, 0.7]),
            (None, [0.5, 0.5]), (None, [1.3, 1.1])],
        3: [([5, 4, 6], None), ([2, 2, 3], None), (None, [2.0, 1.5, 0.75]), (None, [0.7, 1.0, 2.2])],
    }
    for dt in SPATIAL_FLOATS:
        r = lambda *s: spatial_randn(g, dt, *s)
        xs = {1: r(2, 3, 5), 2: r(1, 2, 4, 5), 3: r(1, 2, 3, 3, 4)}
        cases = []
        for d, x in xs.items():
            nearest = [f"upsample_nearest{d}d", f"_upsample_nearest_exact{d}d"]
            interp = {1: ["upsample_linear1d"], 2: ["upsample_bilinear2d", "upsample_bicubic2d"],
                      3: ["upsample_trilinear3d"]}[d]
            for size, scales in plans[d]:
                if size is None:
                    size = [math.floor(n * s) for n, s in zip(x.shape[2:], scales)]
                attrs = {"output_size": size}
                if scales is not None:
                    attrs.update(zip(_UPSAMPLE_SCALES[d], scales))
                cases += [(op, attrs, [x]) for op in nearest]
                cases += [(op, dict(attrs, align_corners=ac), [x]) for op in interp for ac in (False, True)]
            for op in nearest + interp:
                extra = {} if "nearest" in op else {"align_corners": False}
                size = [2 * n for n in x.shape[2:]]
                cases += [(op, dict(extra, output_size=size), [x[:0]]),
                          (op, dict(extra, output_size=size), [make(dt, list(x.shape))])]
        # Only some scales given: the others come from the sizes.
        cases += [
            ("upsample_nearest2d", {"output_size": [6, 8], "scales_w": 1.5}, [xs[2]]),
            ("upsample_bilinear2d", {"output_size": [6, 8], "align_corners": False, "scales_h": 1.5}, [xs[2]]),
            ("upsample_trilinear3d", {"output_size": [4, 3, 4], "align_corners": False, "scales_d": 1.25}, [xs[3]]),
        ]
        for op, attrs, operands in spatial_subset(dt, cases):
            spatial_record(op, attrs, operands)


_OPINFO_CONV = {f"nn.functional.conv{d}d": d for d in (1, 2, 3)}
_OPINFO_CONVT = {f"nn.functional.conv_transpose{d}d": d for d in (1, 2, 3)}
_OPINFO_MAXPOOL = {f"nn.functional.max_pool{d}d": d for d in (1, 2, 3)}
_OPINFO_AVGPOOL = {f"nn.functional.avg_pool{d}d": d for d in (1, 2, 3)}
_OPINFO_ADAPTIVE = {f"nn.functional.adaptive_{k}_pool{d}d": (k, d) for k in ("avg", "max") for d in (1, 2, 3)}
# Keeps one max_pool sample in this many (PyTorch has 576 to 1440 of them).
_OPINFO_MAXPOOL_EVERY = {1: 29, 2: 47, 3: 41}


def _spatial_list(v, d):
    """An F argument (int or tuple) as an ATen int list."""
    return [v] * d if isinstance(v, int) else list(v)


def _spatial_from_opinfo(name, x, args, kw):
    """(Kiln op, attrs, operands, F call) for an OpInfo sample, or None when
    the sample cannot be written with the Kiln op's attributes."""
    if name in _OPINFO_CONV or name in _OPINFO_CONVT:
        t = name in _OPINFO_CONVT
        d = (_OPINFO_CONVT if t else _OPINFO_CONV)[name]
        order = ["weight", "bias", "stride", "padding"] + (["output_padding", "groups", "dilation"] if t
                                                          else ["dilation", "groups"])
        kw = dict(kw, **dict(zip(order, args)))
        attrs = {}
        for k in ("stride", "padding", "output_padding", "dilation"):
            if k in kw:
                attrs[k] = kw[k] if isinstance(kw[k], str) else _spatial_list(kw[k], d)
        if "groups" in kw:
            attrs["groups"] = kw["groups"]
        op = name.split(".")[-1]
        return op, attrs, [x, kw["weight"], kw.get("bias")], lambda: getattr(F, op)(x, **kw)
    if name in _OPINFO_MAXPOOL:
        d = _OPINFO_MAXPOOL[name]
        kw = dict(kw, **dict(zip(["kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"], args)))
        attrs = {"kernel_size": _spatial_list(kw["kernel_size"], d)}
        for k in ("stride", "padding", "dilation"):
            if kw.get(k) is not None:
                attrs[k] = _spatial_list(kw[k], d)
        if "ceil_mode" in kw:
            attrs["ceil_mode"] = kw["ceil_mode"]
        op = f"max_pool{d}d" + ("_with_indices" if kw.get("return_indices") else "")
        return op, attrs, [x], lambda: getattr(F, f"max_pool{d}d")(x, **kw)
    if name in _OPINFO_AVGPOOL:
        d = _OPINFO_AVGPOOL[name]
        order = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
        kw = dict(kw, **dict(zip(order, args)))
        attrs = {"kernel_size": _spatial_list(kw["kernel_size"], d)}
        for k in ("stride", "padding"):
            if kw.get(k) is not None:
                attrs[k] = _spatial_list(kw[k], d)
        for k in ("ceil_mode", "count_include_pad", "divisor_override"):
            if kw.get(k) is not None:
                attrs[k] = kw[k]
        if d == 1 and "divisor_override" in attrs:
            return None
        return f"avg_pool{d}d", attrs, [x], lambda: getattr(F, f"avg_pool{d}d")(x, **kw)
    if name in _OPINFO_ADAPTIVE:
        kind, d = _OPINFO_ADAPTIVE[name]
        size = args[0] if args else kw["output_size"]
        size = [size] * d if isinstance(size, int) or size is None else list(size)
        size = [x.shape[x.dim() - d + i] if s is None else s for i, s in enumerate(size)]
        fn = getattr(F, name.split(".")[-1])
        call = (lambda: fn(x, *args, **kw)) if kind == "avg" else (lambda: fn(x, args[0], True))
        return f"adaptive_{kind}_pool{d}d", {"output_size": size}, [x], call
    return None


_INTERP_OPS = {"nearest": "upsample_nearest{d}d", "nearest-exact": "_upsample_nearest_exact{d}d",
               "linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d",
               "bicubic": "upsample_bicubic2d", "trilinear": "upsample_trilinear3d",
               "area": "adaptive_avg_pool{d}d"}


def _interpolate_from_opinfo(x, args, kw):
    """F.interpolate's arguments as (Kiln op, attrs), or None."""
    kw = dict(kw, **dict(zip(["size", "scale_factor", "mode", "align_corners", "recompute_scale_factor",
                               "antialias"], args)))
    if kw.get("antialias"):
        return None
    d = x.dim() - 2
    mode = kw.get("mode", "nearest")
    op = _INTERP_OPS[mode].format(d=d)
    size, sf = kw.get("size"), kw.get("scale_factor")
    attrs = {}
    if size is not None:
        attrs["output_size"] = _spatial_list(size, d)
    else:
        sf = [float(sf)] * d if isinstance(sf, (int, float)) else [float(s) for s in sf]
        attrs["output_size"] = [math.floor(n * s) for n, s in zip(x.shape[2:], sf)]
        if not kw.get("recompute_scale_factor") and mode != "area":
            attrs.update(zip(_UPSAMPLE_SCALES[d], sf))
    if mode in ("linear", "bilinear", "bicubic", "trilinear"):
        attrs["align_corners"] = bool(kw.get("align_corners"))
    return op, attrs


def gen_spatial_opinfo():
    """PyTorch's OpInfo samples for the convolutions, the pools and
    F.interpolate (each of its modes; 'area' is adaptive_avg_poolNd),
    written with the ATen ops' attributes. Each sample runs on one of f32,
    f64, f16 and bf16 in turn; max_pool keeps one sample in 29 to 47; a
    sample that only repeats an earlier one's op, attributes, shapes and
    dtype (align_corners None and False) is left out. The ATen op is checked
    to give F's result bit for bit."""
    from torch.testing._internal.common_methods_invocations import op_db
    torch.manual_seed(2027)
    names = set(_OPINFO_CONV) | set(_OPINFO_CONVT) | set(_OPINFO_MAXPOOL) | set(_OPINFO_AVGPOOL) | set(_OPINFO_ADAPTIVE)
    mismatches, seen = [], set()
    for op_info in op_db:
        interp = op_info.name in ("nn.functional.interpolate", "nn.functional.upsample_nearest",
                                  "nn.functional.upsample_bilinear")
        if not interp and (op_info.name not in names or op_info.variant_test_name):
            continue
        for dt in SPATIAL_FLOATS:
            try:
                samples = list(op_info.sample_inputs("cpu", dt))
            except Exception:
                continue
            for i, s in enumerate(samples):
                if SPATIAL_FLOATS[i % 4] != dt:
                    continue
                every = _OPINFO_MAXPOOL_EVERY.get(_OPINFO_MAXPOOL.get(op_info.name))
                if every and i % every != 0:
                    continue
                x = s.input.contiguous()
                args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in s.args]
                kw = {k: (v.contiguous() if isinstance(v, torch.Tensor) else v) for k, v in s.kwargs.items()}
                if any(isinstance(v, torch.Tensor) and v.numel() > 400 for v in [x] + args + list(kw.values())):
                    continue
                if interp:
                    if op_info.name == "nn.functional.upsample_nearest":
                        kw = dict(kw, mode="nearest")
                    elif op_info.name == "nn.functional.upsample_bilinear":
                        kw = dict(kw, mode="bilinear", align_corners=True)
                    t = _interpolate_from_opinfo(x, args, kw)
                    if t is None:
                        continue
                    op, attrs = t
                    operands = [x]
                    call = lambda: F.interpolate(x, *args, **kw)
                else:
                    t = _spatial_from_opinfo(op_info.name, x, args, kw)
                    if t is None:
                        continue
                    op, attrs, operands, call = t
                try:
                    want = call()
                except Exception:
                    continue
                try:
                    got = spatial_call(op, attrs, operands)
                except Exception as e:
                    mismatches.append((op, attrs, repr(e)))
                    continue
                want = tuple(want) if isinstance(want, tuple) else (want,)
                if sum(o.numel() for o in want) > 500:
                    continue
                got = tuple(got) if isinstance(got, tuple) else (got,)
                if len(want) != len(got) or not all(a.shape == b.shape and torch.equal(
                        torch.nan_to_num(a.double(), 7.0), torch.nan_to_num(b.double(), 7.0)) for a, b in zip(want, got)):
                    mismatches.append((op, attrs, "values differ"))
                    continue
                key = json.dumps([op, attrs, [None if o is None else [SHORT[o.dtype], list(o.shape)]
                                              for o in operands]])
                if key not in seen:
                    seen.add(key)
                    spatial_record(op, attrs, operands)
    for m in mismatches:
        print("spatial OpInfo sample not written as an ATen op:", m, file=sys.stderr)


# im2col/col2im, max_unpool, the grid samplers, affine_grid_generator and
# lp_pool (issue: more spatial ops). PyTorch's CPU runs im2col and col2im on
# the floats, bool and complex; max_unpool and the grid samplers on the floats
# only; affine_grid_generator on the floats, the integers and complex (f16 and
# bf16 refuse a size of 1: "tensor_cpu" not implemented); lp_pool on every
# real dtype (pow makes integers and bool f32), lp_pool3d not on f16/bf16,
# and the infinite norm (max_pool of |x|) keeps integers, except lp_pool1d.
# grid_sampler_3d also takes interpolation_mode 2 (tricubic) in this PyTorch;
# Kiln takes 0 and 1 only, so only those are recorded.
_GRID3D_MODES = (0, 1)
_LP_NORMS = (1.0, 2.0, 3.5, math.inf)


def _lp_norm_attr(p):
    """norm_type as an attribute: a JSON number, or a scalar spec for an infinity."""
    return scalar_spec(p) if math.isinf(p) else p


def _spatial_uniform(g, dt, lo, hi, *shape):
    """Uniform values in [lo, hi), rounded to dt."""
    return (torch.rand(*shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dt)


def _blocks(size, k, d, p, s):
    """The number of sliding blocks along one dimension (im2col's L factor)."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _unfold_attrs(k, d, p, s):
    return {"kernel_size": k, "dilation": d, "padding": p, "stride": s}


def _grid_attrs(mode, pad, ac):
    return {"interpolation_mode": mode, "padding_mode": pad, "align_corners": ac}


def _spatial_more_cases(g, dt):
    """The hand-written cases of gen_spatial_more() on the float dtype dt."""
    r = lambda *s: spatial_randn(g, dt, *s)
    cases = []
    # im2col: strides, padding, dilation, a kernel as large as the input
    # (one block), 1x1 kernels, padding wider than the kernel, strides wider
    # than the kernel (skipped pixels), unbatched, empty batch, NaN/inf.
    x, xs = r(2, 3, 5, 6), make(dt, [1, 2, 3, 4])
    cases += [("im2col", _unfold_attrs(*a), [x]) for a in (
        ([2, 2], [1, 1], [0, 0], [1, 1]),
        ([3, 3], [1, 1], [1, 1], [1, 1]),
        ([2, 3], [1, 1], [0, 1], [2, 1]),
        ([2, 2], [2, 2], [1, 0], [1, 2]),
        ([3, 2], [1, 2], [2, 1], [2, 3]),
        ([5, 6], [1, 1], [0, 0], [1, 1]),
        ([1, 1], [1, 1], [0, 0], [1, 1]),
        ([2, 2], [1, 1], [3, 3], [2, 2]),
        ([2, 2], [1, 1], [0, 0], [3, 4]),
    )]
    cases += [("im2col", _unfold_attrs([2, 3], [1, 1], [1, 0], [1, 2]), [x[1]]),
              ("im2col", _unfold_attrs([2, 2], [1, 1], [0, 0], [1, 1]), [x[:0]]),
              ("im2col", _unfold_attrs([2, 2], [1, 1], [1, 1], [1, 1]), [xs])]
    # col2im: overlapping blocks summed, blocks that skip pixels (those are 0),
    # rows no block covers, one block, unbatched, empty batch, NaN/inf.
    for out, k, d, p, s, c, n in (
            ([4, 5], [2, 2], [1, 1], [0, 0], [1, 1], 2, 2),
            ([5, 6], [3, 3], [1, 1], [1, 1], [1, 1], 1, 1),
            ([5, 6], [2, 3], [1, 1], [0, 1], [2, 1], 2, 2),
            ([5, 6], [2, 2], [2, 2], [1, 0], [1, 2], 2, 1),
            ([5, 6], [2, 2], [1, 1], [0, 0], [3, 3], 3, 2),
            ([6, 6], [2, 2], [1, 1], [0, 0], [3, 3], 2, 1),
            ([4, 5], [4, 5], [1, 1], [0, 0], [1, 1], 3, 2),
            ([3, 7], [1, 3], [1, 2], [0, 1], [1, 1], 2, 1),
            ([4, 4], [2, 2], [1, 1], [1, 1], [2, 2], 2, None),
            ([4, 5], [2, 2], [1, 1], [0, 0], [1, 1], 2, 0)):
        blocks = _blocks(out[0], k[0], d[0], p[0], s[0]) * _blocks(out[1], k[1], d[1], p[1], s[1])
        shape = [c * k[0] * k[1], blocks] if n is None else [n, c * k[0] * k[1], blocks]
        cases.append(("col2im", dict(output_size=out, **_unfold_attrs(k, d, p, s)), [r(*shape)]))
    cases.append(("col2im", dict(output_size=[3, 3], **_unfold_attrs([2, 2], [1, 1], [0, 0], [1, 1])),
                  [make(dt, [1, 4, 4])]))
    # max_unpool2d: indices from max_pool2d (overlapping windows repeat an
    # index with the same value), an output larger than the pooled input
    # (the flat indices then land elsewhere), unbatched, empty batch, NaN/inf
    # values, hand-made indices that repeat a position with equal values.
    x = r(2, 2, 4, 6)
    for kw, out in ((dict(kernel_size=2), [4, 6]),
                    (dict(kernel_size=3, stride=2, padding=1), [4, 6]),
                    (dict(kernel_size=2, stride=1), [4, 6]),
                    (dict(kernel_size=[2, 3], stride=[2, 3], ceil_mode=True), [4, 6]),
                    (dict(kernel_size=2), [5, 6]),
                    (dict(kernel_size=2), [4, 7])):
        v, i = F.max_pool2d(x, return_indices=True, **kw)
        cases.append(("max_unpool2d", {"output_size": out}, [v, i]))
    v, i = F.max_pool2d(x, 2, return_indices=True)
    cases += [("max_unpool2d", {"output_size": [4, 6]}, [v[0], i[0]]),
              ("max_unpool2d", {"output_size": [4, 6]}, [v[:0], i[:0]]),
              ("max_unpool2d", {"output_size": [4, 6]}, [make(dt, list(v.shape)), i])]
    v = r(1, 2, 2, 3)
    v[0, :, 0, 1] = v[0, :, 0, 0]
    v[0, :, 1, 0] = v[0, :, 0, 2]
    v[0, :, 1, 2] = v[0, :, 1, 1]
    i = torch.tensor([[[[0, 0, 5], [5, 11, 11]], [[3, 3, 2], [2, 7, 7]]]])
    cases.append(("max_unpool2d", {"output_size": [3, 4]}, [v, i]))
    # max_unpool3d: stride and padding are only checked (stride > 0), so one
    # case gives ones unrelated to the pool.
    x = r(1, 2, 4, 4, 4)
    for kw, out, s, p in ((dict(kernel_size=2), [4, 4, 4], [2, 2, 2], [0, 0, 0]),
                          (dict(kernel_size=3, stride=2, padding=1), [4, 4, 4], [2, 2, 2], [1, 1, 1]),
                          (dict(kernel_size=2, stride=1), [4, 4, 4], [1, 1, 1], [0, 0, 0]),
                          (dict(kernel_size=2), [4, 4, 4], [1, 3, 1], [0, 2, 1]),
                          (dict(kernel_size=[1, 2, 2], stride=[1, 2, 2]), [5, 4, 4], [1, 2, 2], [0, 0, 0])):
        v, i = F.max_pool3d(x, return_indices=True, **kw)
        cases.append(("max_unpool3d", {"output_size": out, "stride": s, "padding": p}, [v, i]))
    v, i = F.max_pool3d(x, 2, return_indices=True)
    a3 = {"output_size": [4, 4, 4], "stride": [2, 2, 2], "padding": [0, 0, 0]}
    cases += [("max_unpool3d", a3, [v[0], i[0]]),
              ("max_unpool3d", a3, [v[:0], i[:0]]),
              ("max_unpool3d", a3, [make(dt, list(v.shape)), i])]
    # grid_sampler_2d: each mode, padding and align_corners on a random grid
    # inside and outside [-1, 1] and on one of exact values (the corners,
    # the borders, half-pixel ties for nearest, points several spans out for
    # reflection); inputs with one row or one column; NaN/inf inputs; empty.
    x = r(2, 3, 3, 4)
    grid_a = _spatial_uniform(g, dt, -1.6, 1.6, 2, 3, 5, 2)
    exact = torch.tensor([-1.0, 1.0, 0.0, -0.5, 0.5, 0.25, -0.75, 1.25, -1.25, 2.6, -3.7, 5.3, -0.999, 0.999,
                          1.0 / 3, -2.0 / 3, 0.75, -0.25, 4.0, -1.5], dtype=torch.float64)
    grid_b = torch.stack([exact, exact.flip(0).roll(3)], -1).reshape(1, 4, 5, 2).to(dt)
    xb = r(1, 2, 3, 4)
    modes = [(m, p, ac) for m in (0, 1, 2) for p in (0, 1, 2) for ac in (False, True)]
    cases += [("grid_sampler_2d", _grid_attrs(*mpa), [x, grid_a]) for mpa in modes]
    cases += [("grid_sampler_2d", _grid_attrs(*mpa), [xb, grid_b]) for mpa in modes]
    x_row, x_col, grid_c = r(1, 2, 1, 5), r(1, 2, 4, 1), _spatial_uniform(g, dt, -2.5, 2.5, 1, 2, 3, 2)
    cases += [("grid_sampler_2d", _grid_attrs(m, p, (m + p) % 2 == 0), [x_row, grid_c])
              for m in (0, 1, 2) for p in (0, 1, 2)]
    cases += [("grid_sampler_2d", _grid_attrs(m, p, (m + p) % 2 == 1), [x_col, grid_c])
              for m in (0, 1, 2) for p in (0, 1, 2)]
    xs = make(dt, [1, 2, 3, 4])
    cases += [("grid_sampler_2d", _grid_attrs(m, p, False), [xs, grid_b]) for m, p in ((0, 0), (1, 2), (2, 1))]
    cases += [("grid_sampler_2d", _grid_attrs(0, 0, False), [x[:0], grid_a[:0]]),
              ("grid_sampler_2d", _grid_attrs(2, 1, True), [x, grid_a[:, :0]])]
    # grid_sampler_3d: the same on 5-D inputs (modes 0 and 1).
    x = r(1, 2, 2, 3, 4)
    grid_a = _spatial_uniform(g, dt, -1.6, 1.6, 1, 2, 3, 2, 3)
    grid_b = torch.stack([exact[:12], exact.roll(5)[:12], exact.flip(0)[:12]], -1).reshape(1, 2, 2, 3, 3).to(dt)
    modes = [(m, p, ac) for m in _GRID3D_MODES for p in (0, 1, 2) for ac in (False, True)]
    cases += [("grid_sampler_3d", _grid_attrs(*mpa), [x, grid_a]) for mpa in modes]
    cases += [("grid_sampler_3d", _grid_attrs(*mpa), [x, grid_b]) for mpa in modes]
    x1 = r(1, 2, 1, 3, 1)
    cases += [("grid_sampler_3d", _grid_attrs(m, p, p == 1), [x1, grid_b]) for m in _GRID3D_MODES for p in (0, 1, 2)]
    xs = make(dt, [1, 2, 2, 3, 4])
    cases += [("grid_sampler_3d", _grid_attrs(m, 0, True), [xs, grid_b]) for m in _GRID3D_MODES]
    cases += [("grid_sampler_3d", _grid_attrs(0, 2, False), [x[:0], grid_a[:0]])]
    # affine_grid_generator: 2-D and 3-D, align_corners both ways, sizes of
    # 1 (that coordinate is 0), exact rotations, empty batch.
    t2, t3 = r(2, 2, 3), r(2, 3, 4)
    rot = torch.tensor([[[0.0, -1.0, 0.5], [1.0, 0.0, -0.25]]], dtype=torch.float64).to(dt)
    for theta, size in ((t2, [2, 3, 4, 5]), (t2, [2, 1, 1, 5]), (t2, [2, 1, 4, 1]), (rot, [1, 2, 3, 3]),
                        (t3, [2, 1, 2, 3, 4]), (t3[:1], [1, 2, 1, 3, 2]), (t2[:0], [0, 2, 3, 4])):
        cases += [("affine_grid_generator", {"size": size, "align_corners": ac}, [theta]) for ac in (False, True)]
    # lp_pool: norms 1, 2, 3.5 and inf; ceil_mode windows that run past the
    # input (PyTorch divides by the clipped window and multiplies by the
    # whole kernel); negative inputs (pow of a negative number to 3.5 is NaN).
    x1, x2, x3 = r(2, 3, 8), r(2, 2, 5, 6), r(1, 2, 4, 3, 5)
    plans = {
        1: (x1, [{"kernel_size": [3]}, {"kernel_size": [2], "stride": [1]},
                 {"kernel_size": [3], "stride": [2], "ceil_mode": True},
                 {"kernel_size": [4], "stride": [3], "ceil_mode": True}]),
        2: (x2, [{"kernel_size": [2, 2]}, {"kernel_size": [3, 2], "stride": [1, 2]},
                 {"kernel_size": [2, 2], "stride": [2, 2], "ceil_mode": True},
                 {"kernel_size": [3, 3], "stride": [2, 2], "ceil_mode": True}]),
        3: (x3, [{"kernel_size": [2, 2, 2]}, {"kernel_size": [2, 2, 3], "stride": [1, 1, 2]},
                 {"kernel_size": [2, 2, 2], "stride": [2, 2, 2], "ceil_mode": True}]),
    }
    for d, (x, plan) in plans.items():
        op = f"lp_pool{d}d"
        for p in _LP_NORMS:
            for a in plan:
                cases.append((op, dict({"ceil_mode": False}, norm_type=_lp_norm_attr(p), **a), [x]))
            cases.append((op, {"norm_type": _lp_norm_attr(p), "kernel_size": plan[0]["kernel_size"],
                               "ceil_mode": False}, [x[0]]))
    a2 = {"kernel_size": [2, 2], "ceil_mode": False}
    cases += [("lp_pool2d", dict(a2, norm_type=_lp_norm_attr(p)), [x2]) for p in (-1.0, -math.inf)]
    cases += [("lp_pool2d", dict(a2, norm_type=_lp_norm_attr(p)), [make(dt, [1, 2, 3, 4])]) for p in (2.0, math.inf)]
    return cases


def _spatial_more_int_cases(g, dt):
    """Integer cases: affine_grid_generator and lp_pool (the others refuse integers)."""
    r = lambda *s: spatial_randn(g, dt, *s)
    t2, t3 = r(2, 2, 3), r(1, 3, 4)
    # Kiln refuses integer affine grids (PyTorch's integer linspace
    # truncates the base grid), so affine_grid_generator has none here.
    del t2, t3
    cases = []
    x1, x2, x3 = r(2, 3, 8), r(2, 2, 5, 6), r(1, 2, 4, 3, 5)
    for op, x, p, a in (("lp_pool1d", x1, 2.0, {"kernel_size": [3]}),
                        ("lp_pool1d", x1, 3.5, {"kernel_size": [3], "stride": [2], "ceil_mode": True}),
                        ("lp_pool2d", x2, 1.0, {"kernel_size": [2, 2]}),
                        ("lp_pool2d", x2, 2.0, {"kernel_size": [3, 2], "stride": [1, 2]}),
                        ("lp_pool2d", x2, math.inf, {"kernel_size": [2, 2], "stride": [2, 2], "ceil_mode": True}),
                        ("lp_pool3d", x3, 2.0, {"kernel_size": [2, 2, 2]}),
                        ("lp_pool3d", x3, math.inf, {"kernel_size": [2, 2, 2]})):
        cases.append((op, dict({"ceil_mode": False}, norm_type=_lp_norm_attr(p), **a), [x]))
    return cases


def _spatial_more_other_cases(g):
    """bool and complex, where PyTorch's CPU takes them: im2col and col2im
    (bool sums are ORs), affine_grid_generator (complex), lp_pool (bool)."""
    xb = make(torch.bool, [1, 2, 3, 4])
    cb = make(torch.bool, [1, 8, 6])
    xc = torch.complex(torch.randn(1, 2, 3, 4, generator=g), torch.randn(1, 2, 3, 4, generator=g))
    cc = torch.complex(torch.randn(1, 8, 6, generator=g), torch.randn(1, 8, 6, generator=g))
    tc = torch.complex(torch.randn(2, 2, 3, generator=g), torch.randn(2, 2, 3, generator=g))
    u = _unfold_attrs([2, 2], [1, 1], [0, 0], [1, 1])
    cases = [("im2col", u, [xb]), ("im2col", _unfold_attrs([2, 3], [1, 2], [1, 1], [2, 1]), [xb]),
             ("im2col", u, [xc]), ("im2col", u, [xc.to(torch.complex128)]),
             ("col2im", dict(output_size=[3, 4], **u), [cb])]
    # Kiln refuses complex col2im and affine_grid_generator (it sums real
    # values only).
    del cc, tc
    a2 = {"kernel_size": [2, 2], "ceil_mode": False}
    cases += [("lp_pool2d", dict(a2, norm_type=p), [make(torch.bool, [1, 2, 3, 4])]) for p in (1.0, 2.0)]
    cases += [("lp_pool1d", {"norm_type": 3.5, "kernel_size": [3], "stride": [2], "ceil_mode": True},
               [make(torch.bool, [2, 7])])]
    return cases


_OPINFO_UNPOOL = {"nn.functional.max_unpool2d": 2, "nn.functional.max_unpool3d": 3}
# Keeps one sample in this many (coprime with 4, so each dtype gets some).
_OPINFO_MORE_EVERY = {"nn.functional.unfold": 5, "nn.functional.max_unpool2d": 11, "nn.functional.max_unpool3d": 7}
_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _spatial_more_from_opinfo(name, x, args, kw):
    """(Kiln op, attrs, operands, F call) for an OpInfo sample of
    gen_spatial_more's ops, or None."""
    if name == "nn.functional.unfold":
        kw = dict(dict(zip(["kernel_size", "dilation", "padding", "stride"], args)), **kw)
        attrs = _unfold_attrs(*[_spatial_list(kw.get(k, dflt), 2) for k, dflt in
                                (("kernel_size", None), ("dilation", 1), ("padding", 0), ("stride", 1))])
        return "im2col", attrs, [x], lambda: F.unfold(x, **kw)
    if name in _OPINFO_UNPOOL:
        d = _OPINFO_UNPOOL[name]
        indices = args[0]
        kw = dict(dict(zip(["kernel_size", "stride", "padding", "output_size"], args[1:])), **kw)
        k = _spatial_list(kw["kernel_size"], d)
        s = k if kw.get("stride") is None else _spatial_list(kw["stride"], d)
        p = _spatial_list(kw.get("padding", 0), d)
        out = F._unpool_output_size(x, k, s, p, None if kw.get("output_size") is None else list(kw["output_size"]))
        attrs = {"output_size": list(out)}
        if d == 3:
            attrs.update(stride=s, padding=p)
        fn = getattr(F, name.split(".")[-1])
        return f"max_unpool{d}d", attrs, [x, indices], lambda: fn(x, indices, **kw)
    if name == "nn.functional.grid_sample":
        grid = args[0]
        mode = _GRID_MODES[kw.get("mode", "bilinear")]
        attrs = _grid_attrs(mode, _GRID_PADDINGS[kw.get("padding_mode", "zeros")], bool(kw.get("align_corners")))
        op = "grid_sampler_2d" if x.dim() == 4 else "grid_sampler_3d"
        if op == "grid_sampler_3d" and mode not in _GRID3D_MODES:
            return None
        return op, attrs, [x, grid], lambda: F.grid_sample(x, grid, **kw)
    if name in ("grid_sampler_2d", "grid_sampler_3d"):
        grid, mode, pad, ac = args
        if name == "grid_sampler_3d" and mode not in _GRID3D_MODES:
            return None
        return name, _grid_attrs(mode, pad, ac), [x, grid], lambda: getattr(_A, name)(x, *args)
    return None


def gen_spatial_more():
    """im2col, col2im, max_unpool2d/3d, grid_sampler_2d/3d,
    affine_grid_generator and lp_pool1d/2d/3d (kernel_size and stride as in
    ATen; lp_pool's norm_type a float): hand-written cases on f32 and each in
    turn on f64, f16 or bf16 (see spatial_subset), integer cases for the ops
    PyTorch's CPU runs on integers, bool and complex cases; then PyTorch's
    OpInfo samples for F.unfold, F.max_unpool2d/3d, F.grid_sample and
    grid_sampler_2d/3d (no OpInfo exists for F.fold, F.affine_grid or
    F.lp_pool; lp_pool takes nn.LPPool1d/2d's ModuleInfo samples instead),
    each checked to give F's result bit for bit through the ATen op."""
    g = torch.Generator().manual_seed(2028)
    for dt in SPATIAL_FLOATS:
        for op, attrs, operands in spatial_subset(dt, _spatial_more_cases(g, dt)):
            spatial_record(op, attrs, operands)
    for dt in POOL_INTS:
        for op, attrs, operands in spatial_subset(dt, _spatial_more_int_cases(g, dt)):
            spatial_record(op, attrs, operands)
    for op, attrs, operands in _spatial_more_other_cases(g):
        spatial_record(op, attrs, operands)

    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db
    torch.manual_seed(2029)
    names = {"nn.functional.unfold", "nn.functional.grid_sample", "grid_sampler_2d", "grid_sampler_3d"} | set(_OPINFO_UNPOOL)
    mismatches, seen = [], set()

    def check(op, attrs, operands, call):
        if any(isinstance(o, torch.Tensor) and o.numel() > 400 for o in operands):
            return
        try:
            want = call()
        except Exception:
            return
        if want.numel() > 500:
            return
        try:
            got = spatial_call(op, attrs, operands)
        except Exception as e:
            mismatches.append((op, attrs, repr(e)))
            return
        if want.shape != got.shape or not torch.equal(torch.nan_to_num(want.double(), 7.0),
                                                      torch.nan_to_num(got.double(), 7.0)):
            mismatches.append((op, attrs, "values differ"))
            return
        key = json.dumps([op, attrs, [[SHORT[o.dtype], list(o.shape)] for o in operands]])
        if key not in seen:
            seen.add(key)
            spatial_record(op, attrs, operands)

    for op_info in op_db:
        if op_info.name not in names or op_info.variant_test_name:
            continue
        for dt in SPATIAL_FLOATS:
            try:
                samples = list(op_info.sample_inputs("cpu", dt))
            except Exception:
                continue
            every = _OPINFO_MORE_EVERY.get(op_info.name, 1)
            for i, s in enumerate(samples):
                if SPATIAL_FLOATS[i % 4] != dt or i % every != 0:
                    continue
                x = s.input.contiguous()
                args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in s.args]
                kw = {k: (v.contiguous() if isinstance(v, torch.Tensor) else v) for k, v in s.kwargs.items()}
                t = _spatial_more_from_opinfo(op_info.name, x, args, kw)
                if t is not None:
                    check(*t)
    for m in module_db:
        name = m.module_cls.__name__
        if not name.startswith("LPPool"):
            continue
        d = int(name[-2])
        for dt in SPATIAL_FLOATS:
            inputs = m.module_inputs_func(m, device="cpu", dtype=dt, requires_grad=False, training=False)
            for i, mi in enumerate(inputs):
                if SPATIAL_FLOATS[(i + d) % 4] != dt:
                    continue
                cargs = dict(zip(["norm_type", "kernel_size", "stride", "ceil_mode"], mi.constructor_input.args),
                             **mi.constructor_input.kwargs)
                x = mi.forward_input.args[0].contiguous()
                p = float(cargs["norm_type"])
                attrs = {"norm_type": _lp_norm_attr(p), "kernel_size": _spatial_list(cargs["kernel_size"], d),
                         "ceil_mode": bool(cargs.get("ceil_mode", False))}
                if cargs.get("stride") is not None:
                    attrs["stride"] = _spatial_list(cargs["stride"], d)
                module = m.module_cls(*mi.constructor_input.args, **mi.constructor_input.kwargs)
                check(f"lp_pool{d}d", attrs, [x], lambda: module(x))
    for m in mismatches:
        print("spatial OpInfo sample not written as an ATen op:", m, file=sys.stderr)


# Issue 20's pointwise math: the inverse trigonometric functions (Kiln's
# own f32 algorithms) and the float-manipulation ops, on every dtype
# PyTorch's CPU takes, on special values (infinities, NaN, signed zeros,
# subnormals, the ends of each algorithm's ranges), on random values over
# many exponents, and on OpInfo's samples.
ISSUE20_UNARY = {"atan": torch.atan, "asin": torch.asin, "acos": torch.acos,
                 "signbit": torch.signbit, "erfc": torch.erfc}
ISSUE20_BINARY = {"atan2": torch.atan2, "hypot": torch.hypot, "copysign": torch.copysign,
                  "logaddexp2": torch.logaddexp2, "ldexp": torch.ldexp, "fmod": torch.fmod}
ISSUE20_FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def issue20_specials(dt):
    """Special and boundary values of a float dtype."""
    fi = torch.finfo(dt)
    tiny = fi.tiny
    vals = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), -float("nan"), 1.0, -1.0, 0.5,
            -0.5, 2.0, -2.0,
            fi.max, -fi.max, tiny, -tiny, tiny / 4, -tiny / 4, fi.eps, 1 + fi.eps, 1 - fi.eps / 2,
            -(1 - fi.eps / 2), 0.5 + fi.eps / 2, 0.5 - fi.eps / 4, 2.4142135, 0.41421357, 4.0, 1e-20,
            -1e-20, 1e20, -1e20, 3.0, -10.0, 10.5, 27.0, -0.75, 0.999, 1e-5]
    if dt == torch.float64:
        vals += [5e-324, -5e-324, 1e300, -1e300]
    return torch.tensor(vals, dtype=torch.float64).to(dt)


def issue20_random(dt, n, lo, hi, g):
    """n random values, half uniform in [lo, hi], half of magnitude 2^-20 .. 2^20
    with random signs (clamped to the dtype's range)."""
    u = torch.rand(n // 2, generator=g, dtype=torch.float64) * (hi - lo) + lo
    e = torch.rand(n - n // 2, generator=g, dtype=torch.float64) * 40 - 20
    s = torch.randint(0, 2, (n - n // 2,), generator=g).to(torch.float64) * 2 - 1
    return torch.cat([u, s * torch.exp2(e)]).to(dt)


def issue20_keep(name, a, b):
    """Which (a, b) pairs a binary case of issue 20 records: all but where
    PyTorch's CPU kernel is wrong (README, "Where Kiln differs"): fmod's
    vectorized kernel gives NaN where a/b overflows (Kiln gives C's exact
    remainder, tested in Rust), and logaddexp2 of nearly opposite values
    cancels to a residue of PyTorch's rounding (Kiln's is smaller)."""
    fa, fb = torch.broadcast_tensors(a, b)
    r = ISSUE20_BINARY[name](fa, fb)
    keep = torch.ones(r.shape, dtype=torch.bool)
    if name == "fmod" and r.dtype.is_floating_point:
        exact = torch.tensor([math.fmod(x, y) if math.isfinite(x) and y != 0 and not math.isnan(y)
                              else float("nan")
                              for x, y in zip(fa.double().reshape(-1).tolist(),
                                              fb.double().reshape(-1).tolist())],
                             dtype=torch.float64).reshape(r.shape)
        keep = r.isnan() == exact.isnan()
    if name == "logaddexp2":
        scale = torch.maximum(fa.double().abs(), fb.double().abs())
        keep = ~(r.double().abs() < 1e-6 * scale)
    return fa, fb, keep


def record_pairs(name, a, b):
    """Records a binary case of issue 20: broadcast as given where every
    pair is kept, else the kept pairs as 1-D tensors."""
    try:
        fa, fb, keep = issue20_keep(name, a, b)
    except Exception:
        return
    fn = ISSUE20_BINARY[name]
    if bool(keep.all()):
        record(name, {}, [a, b], lambda: fn(a, b))
        return
    ka, kb = fa[keep].contiguous(), fb[keep].contiguous()
    record(name, {}, [ka, kb], lambda: fn(ka, kb))


CDIST_MODES = {None: None, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
               "donot_use_mm_for_euclid_dist": 2}


def gen_products_more():
    """tensordot, vdot, bilinear, linalg_multi_dot, linalg_cross, cross
    and cdist (ATen's _cdist_forward) on every dtype, PyTorch's refusals
    of the dtypes its CPU kernels do not take, and its OpInfo samples."""
    torch.manual_seed(1616)
    both = lambda op, attrs, operands, fn: (record(op, attrs, operands, fn),
                                            record_refusal(op, attrs, operands, fn))
    for dt in DTYPES:
        a, b = make(dt, [2, 3, 4], special=False), make(dt, [4, 3, 2], special=False, reverse=True)
        v, w = make(dt, [4], special=False), make(dt, [4], special=False, reverse=True)
        both("tensordot", {"dims_self": [1, 2], "dims_other": [1, 0]}, [a, b],
             lambda: torch.tensordot(a, b, dims=([1, 2], [1, 0])))
        c = make(dt, [1, 2], special=False)
        both("tensordot", {"dims_self": [-2], "dims_other": [0]}, [a, c],
             lambda: torch.tensordot(a, c, dims=([-2], [0])))
        if not dt.is_complex:
            both("vdot", {}, [v, w], lambda: torch.vdot(v, w))
        x1, x2 = make(dt, [2, 3], special=False), make(dt, [2, 4], special=False, reverse=True)
        wt, bias = make(dt, [2, 3, 4], special=False), make(dt, [2], special=False)
        both("bilinear", {}, [x1, x2, wt, bias], lambda: F.bilinear(x1, x2, wt, bias))
        both("bilinear", {}, [x1, x2, wt], lambda: F.bilinear(x1, x2, wt))
        m1, m2, m3 = (make(dt, [3, 4], special=False), make(dt, [4, 2], special=False, reverse=True),
                      make(dt, [2, 3], special=False))
        both("linalg_multi_dot", {}, [m1, m2], lambda: torch.linalg.multi_dot([m1, m2]))
        both("linalg_multi_dot", {}, [m1, m2, m3, m1], lambda: torch.linalg.multi_dot([m1, m2, m3, m1]))
        u = make(dt, [3], special=False)
        both("linalg_multi_dot", {}, [u, m1, v], lambda: torch.linalg.multi_dot([u, m1, v]))
        p, q = make(dt, [4, 3], special=False), make(dt, [1, 3], special=False, reverse=True)
        both("linalg_cross", {}, [p, q], lambda: torch.linalg.cross(p, q))
        pt, pf = make(dt, [3, 4], special=False), make(dt, [3, 4], special=False, reverse=True)
        both("linalg_cross", {"dim": 0}, [pt, pf], lambda: torch.linalg.cross(pt, pf, dim=0))
        both("cross", {}, [pt, pf], lambda: torch.cross(pt, pf))
        for pp in (2.0, 1.0, 0.0, float("inf"), 3.0, 0.5):
            both("cdist", {"p": scalar_spec(pp)}, [p, q], lambda: torch.ops.aten._cdist_forward(p, q, pp, None))
    # Mixed and wrong dtypes, and PyTorch's shape checks.
    f, d, i = torch.randn(2, 3), torch.randn(3, 2, dtype=torch.float64), torch.ones(3, 2, dtype=torch.int32)
    record_refusal("tensordot", {"dims_self": [1], "dims_other": [0]}, [f, d],
                   lambda: torch.tensordot(f, d, dims=([1], [0])))
    record_refusal("tensordot", {"dims_self": [1, 0], "dims_other": [0]}, [f, f],
                   lambda: torch.tensordot(f, f, dims=([1, 0], [0])))
    record_refusal("tensordot", {"dims_self": [1], "dims_other": [1]}, [f, torch.randn(3, 2)],
                   lambda: torch.tensordot(f, torch.randn(3, 2), dims=([1], [1])))
    record_refusal("tensordot", {"dims_self": [1, 1], "dims_other": [0, 0]}, [f, torch.randn(3, 3)],
                   lambda: torch.tensordot(f, torch.randn(3, 3), dims=([1, 1], [0, 0])))
    record_refusal("vdot", {}, [f[0], d[:, 0]], lambda: torch.vdot(f[0], d[:, 0]))
    record_refusal("vdot", {}, [f, f[0]], lambda: torch.vdot(f, f[0]))
    record_refusal("linalg_multi_dot", {}, [f], lambda: torch.linalg.multi_dot([f]))
    record_refusal("linalg_multi_dot", {}, [f, f], lambda: torch.linalg.multi_dot([f, f]))
    record_refusal("linalg_multi_dot", {}, [f, d], lambda: torch.linalg.multi_dot([f, d]))
    record_refusal("linalg_multi_dot", {}, [f, f.t(), f, torch.randn(2, 3, 1)],
                   lambda: torch.linalg.multi_dot([f, f.t(), f, torch.randn(2, 3, 1)]))
    record_refusal("linalg_multi_dot", {}, [torch.randn(1, 2, 3), f.t()],
                   lambda: torch.linalg.multi_dot([torch.randn(1, 2, 3), f.t()]))
    record_refusal("linalg_multi_dot", {}, [f, f.t(), torch.randn(2, 2, 2), f],
                   lambda: torch.linalg.multi_dot([f, f.t(), torch.randn(2, 2, 2), f]))
    record_refusal("linalg_cross", {}, [f, torch.randn(2, 4)], lambda: torch.linalg.cross(f, torch.randn(2, 4)))
    record_refusal("linalg_cross", {}, [f, f[0]], lambda: torch.linalg.cross(f, f[0]))
    record_refusal("linalg_cross", {}, [f, d.t()], lambda: torch.linalg.cross(f, d.t()))
    record_refusal("linalg_cross", {}, [f, torch.randn(4, 3)], lambda: torch.linalg.cross(f, torch.randn(4, 3)))
    record_refusal("cross", {}, [torch.randn(2, 4), torch.randn(2, 4)],
                   lambda: torch.cross(torch.randn(2, 4), torch.randn(2, 4)))
    x4, w4 = torch.randn(2, 4), torch.randn(5, 3, 4)
    record_refusal("bilinear", {}, [f, x4, w4.double()], lambda: F.bilinear(f, x4, w4.double()))
    record_refusal("bilinear", {}, [f, x4, w4, d[:, 0]], lambda: F.bilinear(f, x4, w4, d[:, 0]))
    record_refusal("bilinear", {}, [f, x4[0], w4], lambda: F.bilinear(f, x4[0], w4))
    record_refusal("bilinear", {}, [f, torch.randn(3, 4), w4], lambda: F.bilinear(f, torch.randn(3, 4), w4))
    record_refusal("bilinear", {}, [x4, x4, w4], lambda: F.bilinear(x4, x4, w4))
    record_refusal("bilinear", {}, [f, f, w4], lambda: F.bilinear(f, f, w4))
    record_refusal("bilinear", {}, [f, x4, w4, torch.randn(6)], lambda: F.bilinear(f, x4, w4, torch.randn(6)))
    for x, y, pp, mode in ((f, d.t(), 2.0, None), (i.t(), f, 2.0, None), (f, i.t(), 2.0, None),
                           (f, f, -1.0, None), (f, f, float("nan"), None), (f[0], f, 2.0, None),
                           (f, f[0], 2.0, None), (f, x4, 2.0, None), (f, f, 2.0, 3),
                           (torch.randn(5, 2, 3), torch.randn(4, 4, 3), 2.0, None)):
        attrs = {"p": scalar_spec(pp)} if mode is None else {"p": scalar_spec(pp), "compute_mode": mode}
        record_refusal("cdist", attrs, [x, y],
                       lambda: torch.ops.aten._cdist_forward(x, y, pp, mode))
    # More than 25 rows: PyTorch's default takes its matrix-product path
    # for p = 2, Kiln computes directly (as compute_mode 2 does).
    big1, big2 = torch.randn(30, 4), torch.randn(27, 4)
    record("cdist", {"p": 2.0, "compute_mode": 2}, [big1, big2],
           lambda: torch.ops.aten._cdist_forward(big1, big2, 2.0, 2))
    # PyTorch's OpInfo samples.
    names = {"tensordot", "vdot", "nn.functional.bilinear", "linalg.multi_dot", "linalg.cross", "cross", "cdist"}
    for name, dt, s in op_db_samples(names, DTYPES):
        if dt not in (torch.float32, torch.float64, torch.int64, torch.float16, torch.complex64):
            continue
        # PyTorch skips cdist's kernel (and its dtype check) for empty
        # operands; Kiln checks the dtype first.
        tensors = [s.input] + list(s.args) if name != "linalg.multi_dot" else list(s.input)
        if name == "cdist" and dt == torch.float16 and any(t.numel() == 0 for t in tensors[:2]):
            continue
        if name == "linalg.multi_dot":
            ts = [t.contiguous() for t in s.input]
            record("linalg_multi_dot", {}, ts, lambda: torch.linalg.multi_dot(ts))
            continue
        ts = [t.contiguous() if isinstance(t, torch.Tensor) else t for t in [s.input] + list(s.args)]
        if name == "tensordot":
            dims = s.kwargs.get("dims", 2)
            if isinstance(dims, int):
                dims = (list(range(ts[0].dim() - dims, ts[0].dim())), list(range(dims)))
            attrs = {"dims_self": list(dims[0]), "dims_other": list(dims[1])}
            record("tensordot", attrs, ts, lambda: torch.tensordot(ts[0], ts[1], dims=s.kwargs.get("dims", 2)))
        elif name == "vdot" and not dt.is_complex:
            record("vdot", {}, ts, lambda: torch.vdot(*ts))
        elif name == "nn.functional.bilinear":
            record("bilinear", {}, ts, lambda: F.bilinear(*ts))
        elif name in ("linalg.cross", "cross"):
            kiln = "linalg_cross" if name == "linalg.cross" else "cross"
            fn = torch.linalg.cross if name == "linalg.cross" else torch.cross
            record(kiln, dict(s.kwargs), ts, lambda: fn(*ts, **s.kwargs))
        elif name == "cdist":
            x, y, pp, mode = ts[0], ts[1], ts[2], CDIST_MODES[ts[3]]
            # Kiln computes p = 2 directly: compared with PyTorch's direct path.
            if pp == 2.0 and mode in (0, 1, None):
                mode = 2
            record("cdist", {"p": scalar_spec(pp), "compute_mode": mode}, [x, y],
                   lambda: torch.ops.aten._cdist_forward(x, y, pp, mode))


def gen_issue20():
    global SIGNED_NAN
    SIGNED_NAN = True
    try:
        gen_issue20_cases()
    finally:
        SIGNED_NAN = False


def gen_issue20_cases():
    g = torch.Generator().manual_seed(20)
    for name, fn in ISSUE20_UNARY.items():
        for dt in DTYPES:
            x = make(dt, [3, 4])
            record(name, {}, [x], lambda: fn(x))
            record_refusal(name, {}, [x], lambda: fn(x))
        for dt in ISSUE20_FLOATS:
            x = issue20_specials(dt)
            record(name, {}, [x], lambda: fn(x))
            lo, hi = {"asin": (-1.0, 1.0), "acos": (-1.0, 1.0), "erfc": (-2.0, 10.0)}.get(name, (-8.0, 8.0))
            x = issue20_random(dt, 512, lo, hi, g)
            record(name, {}, [x], lambda: fn(x))
        for dt in (torch.complex64, torch.complex128):
            if name in ("signbit", "erfc"):
                continue
            re = issue20_random(torch.float64, 24, -3.0, 3.0, g)
            im = issue20_random(torch.float64, 24, -3.0, 3.0, g)
            x = torch.complex(re, im).to(dt)
            record(name, {}, [x], lambda: fn(x))
    pairs = [(dt, dt) for dt in DTYPES] + [
        (torch.int32, torch.float32), (torch.float16, torch.bfloat16), (torch.int64, torch.float16),
        (torch.bool, torch.int32), (torch.float32, torch.float64), (torch.uint8, torch.int8),
    ]
    for name, fn in ISSUE20_BINARY.items():
        for da, db in pairs:
            a = make(da, [3, 4])
            b = make(db, [4], reverse=True, nonzero=name == "fmod")
            if name == "ldexp" and not (db.is_floating_point or db.is_complex):
                b = b.clamp(-20, 20) if db != torch.bool else b
            record_pairs(name, a, b)
            record_refusal(name, {}, [a, b], lambda: fn(a, b))
        if name in ("copysign", "fmod"):
            for dt in DTYPES:
                a = make(dt, [3, 4])
                for sc in (2, -2.5, -0.0):
                    if name == "fmod" and sc == -0.0 and not dt.is_floating_point:
                        continue
                    record(name, {}, [a, sc], lambda: fn(a, sc))
        if name == "fmod":
            for dt in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
                info = torch.iinfo(dt)
                a = torch.tensor([info.min, info.max, -7, 7, 0, -1, 5, info.min], dtype=dt)
                b = torch.tensor([-1 if info.min < 0 else 3, 3, 2, -2 if info.min < 0 else 2, 5, 7,
                                  info.max, info.max], dtype=dt)
                record_pairs(name, a, b)
        if name == "ldexp":
            for dt in ISSUE20_FLOATS:
                a = issue20_random(dt, 64, -4.0, 4.0, g)
                e = torch.randint(-30, 30, (64,), generator=g)
                record(name, {}, [a, e], lambda: fn(a, e))
                e32 = e.to(torch.int32)
                record(name, {}, [a, e32], lambda: fn(a, e32))
        for dt in ISSUE20_FLOATS:
            sp = issue20_specials(dt)
            a = sp.reshape(-1, 1).expand(-1, sp.numel()).contiguous()
            b = sp.reshape(1, -1).expand(sp.numel(), -1).contiguous()
            record_pairs(name, a, b)
            a = issue20_random(dt, 512, -4.0, 4.0, g)
            b = issue20_random(dt, 512, -4.0, 4.0, g)
            record_pairs(name, a, b)
    names = set(ISSUE20_UNARY) | set(ISSUE20_BINARY)
    dtypes = ISSUE20_FLOATS + (torch.int64, torch.int32, torch.uint8, torch.bool, torch.complex64)
    for name, dt, s in op_db_samples(names, dtypes):
        x, args, kw = s.input, list(s.args), dict(s.kwargs)
        if not isinstance(x, torch.Tensor) or kw:
            continue
        fn = ISSUE20_UNARY.get(name) or ISSUE20_BINARY[name]
        if name in ("copysign", "fmod") and len(args) == 1 and isinstance(args[0], (int, float)):
            record(name, {}, [x.contiguous(), args[0]], lambda: fn(x, args[0]))
            continue
        operands = [x.contiguous()] + [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        if len(operands) != (1 if name in ISSUE20_UNARY else 2):
            continue
        if any(not isinstance(o, torch.Tensor) for o in operands):
            continue
        if name in ISSUE20_BINARY:
            record_pairs(name, *operands)
        else:
            record(name, {}, operands, lambda: fn(*operands))


def gen_random():
    """The random ops' refusals (their values are random: tests/random.rs
    checks their distributions): dtypes each distribution refuses, bad
    parameters, shapes, with PyTorch's messages. Kiln's `seed` attribute
    stands for PyTorch's generator."""
    A = torch.ops.aten
    real = [d for d in DTYPES if not d.is_complex and d.is_floating_point is False] + [
        torch.float16, torch.bfloat16, torch.float32, torch.float64]
    like = [
        ("uniform", {}, lambda x: A.uniform(x)),
        ("uniform", {"from": 2.0, "to": 1.0}, lambda x: A.uniform(x, 2.0, 1.0)),
        ("exponential", {}, lambda x: A.exponential(x)),
        ("exponential", {"lambd": -1.0}, lambda x: A.exponential(x, -1.0)),
        ("exponential", {"lambd": 0.0}, lambda x: A.exponential(x, 0.0)),
        ("cauchy", {}, lambda x: A.cauchy(x)),
        ("cauchy", {"sigma": 0.0}, lambda x: A.cauchy(x, 0.0, 0.0)),
        ("log_normal", {}, lambda x: A.log_normal(x)),
        ("log_normal", {"std": 0.0}, lambda x: A.log_normal(x, 1.0, 0.0)),
        ("geometric", {"p": 0.5}, lambda x: A.geometric(x, 0.5)),
        ("geometric", {"p": 0.0}, lambda x: A.geometric(x, 0.0)),
        ("geometric", {"p": 1.0}, lambda x: A.geometric(x, 1.0)),
        ("geometric", {"p": 1.5}, lambda x: A.geometric(x, 1.5)),
        ("bernoulli", {}, lambda x: A.bernoulli(x)),
        ("bernoulli", {"p": 0.5}, lambda x: A.bernoulli.p(x, 0.5)),
        ("bernoulli", {"p": 1.5}, lambda x: A.bernoulli.p(x, 1.5)),
        ("bernoulli", {"p": -0.25}, lambda x: A.bernoulli.p(x, -0.25)),
        ("multinomial", {"num_samples": 2}, lambda x: torch.multinomial(x, 2)),
        ("multinomial", {"num_samples": 0}, lambda x: torch.multinomial(x, 0)),
        ("multinomial", {"num_samples": 4}, lambda x: torch.multinomial(x, 4)),
        ("dropout", {"p": 0.5, "train": True}, lambda x: A.dropout(x, 0.5, True)),
        ("dropout", {"p": 1.5, "train": True}, lambda x: A.dropout(x, 1.5, True)),
        ("dropout", {"p": -0.5, "train": False}, lambda x: A.dropout(x, -0.5, False)),
        ("feature_dropout", {"p": 0.5, "train": True}, lambda x: A.feature_dropout(x, 0.5, True)),
        ("native_dropout", {"p": 0.5, "train": True}, lambda x: A.native_dropout(x, 0.5, True)),
        ("native_dropout", {"p": 2.0, "train": True}, lambda x: A.native_dropout(x, 2.0, True)),
    ]
    for dt in real:
        for shape in ((3,), (2, 3), (2, 2, 3)):
            x = torch.ones(shape, dtype=dt)
            for op, attrs, fn in like:
                a = dict(attrs, seed=0)
                record_refusal(op, a, [x], lambda: fn(x))
    for dt in real:
        attrs = {"size": [2, 3], "seed": 0, "dtype": SHORT[dt]}
        record_refusal("rand", attrs, [], lambda: torch.rand(2, 3, dtype=dt))
        record_refusal("randn", attrs, [], lambda: torch.randn(2, 3, dtype=dt))
        for low, high in ((0, 2), (3, 3), (0, 300), (-200, 0), (0, 2**40), (-2**40, 0)):
            a = dict(attrs, low=low, high=high)
            record_refusal("randint", a, [],
                           lambda: torch.randint(low, high, (2, 3), dtype=dt))
    record_refusal("rand", {"size": [2, -3], "seed": 0}, [], lambda: torch.rand(2, -3))
    record_refusal("randint", {"low": 0, "high": 3, "size": [2], "seed": 0, "dtype": "c64"}, [],
                   lambda: torch.randint(0, 3, (2,), dtype=torch.complex64))
    m, sd = torch.zeros(2, 3), torch.ones(3)
    for dt in real:
        x = torch.zeros(3, dtype=dt)
        record_refusal("normal", {"seed": 0}, [x, 1.0], lambda: torch.normal(x, 1.0))
        record_refusal("normal", {"seed": 0}, [0.0, x], lambda: torch.normal(0.0, x))
    record_refusal("normal", {"seed": 0}, [m, -1.0], lambda: torch.normal(m, -1.0))
    record_refusal("normal", {"seed": 0}, [m, torch.ones(4)], lambda: torch.normal(m, torch.ones(4)))
    record_refusal("normal", {"seed": 0, "size": [2], "dtype": "i64"}, [0.0, 1.0],
                   lambda: torch.normal(0.0, 1.0, (2,), dtype=torch.int64))
    x3 = torch.ones(2, 2, 3)
    record_refusal("multinomial", {"num_samples": 1, "seed": 0}, [x3],
                   lambda: torch.multinomial(x3, 1))
    for dt in (torch.float8_e4m3fn, torch.float8_e8m0fnu):
        x8 = torch.ones(2, 2, dtype=dt)
        for op in ("dropout", "feature_dropout", "native_dropout"):
            record_refusal(op, {"p": 0.5, "train": True, "seed": 0}, [x8],
                           lambda: getattr(A, op)(x8, 0.5, True))
    x1 = torch.ones(3)
    record_refusal("feature_dropout", {"p": 0.5, "train": True, "seed": 0}, [x1],
                   lambda: A.feature_dropout(x1, 0.5, True))


COMPLEX_PARTS = ("real", "imag", "conj", "conj_physical", "angle", "isreal", "view_as_real",
                 "view_as_complex", "complex", "polar")


def gen_complex_parts():
    """The parts of complex tensors: real, imag, conj, conj_physical,
    angle, isreal, view_as_real on complex tensors (special values
    included) and, where PyTorch takes them, real tensors; view_as_complex,
    complex and polar on f16/f32/f64 parts; OpInfo's samples; refusals."""
    special = [complex(a, b) for a in (0.0, -0.0, 1.5, -2.0, float("inf"), float("nan"))
               for b in (0.0, -0.0, 0.5, -3.0, float("-inf"))]
    for dt in (torch.complex64, torch.complex128, torch.complex32):
        z = torch.tensor(special, dtype=dt)
        for op in ("real", "imag", "conj", "conj_physical", "angle", "isreal", "view_as_real"):
            fn = getattr(torch, op)
            record(op, {}, [z], lambda: fn(z).resolve_conj())
            record_refusal(op, {}, [z], lambda: fn(z))
        zt = torch.tensor(special[:12], dtype=dt).reshape(3, 4).t()
        for op in ("real", "imag", "view_as_real", "angle"):
            fn = getattr(torch, op)
            record(op, {}, [zt], lambda: fn(zt))
    for dt in DTYPES:
        if dt.is_complex:
            continue
        x = make(dt, [6])
        for op in ("real", "imag", "conj", "conj_physical", "angle", "isreal", "view_as_real",
                   "view_as_complex"):
            fn = getattr(torch, op)
            record(op, {}, [x], lambda: fn(x))
            record_refusal(op, {}, [x], lambda: fn(x))
        y = make(dt, [3, 2])
        record("view_as_complex", {}, [y], lambda: torch.view_as_complex(y))
        record_refusal("view_as_complex", {}, [y], lambda: torch.view_as_complex(y))
        a, b = make(dt, [4], positive=True), make(dt, [4], reverse=True)
        for op in ("complex", "polar"):
            fn = getattr(torch, op)
            record(op, {}, [a, b], lambda: fn(a, b))
            record_refusal(op, {}, [a, b], lambda: fn(a, b))
    f, d = torch.ones(3), torch.ones(3, dtype=torch.float64)
    for op in ("complex", "polar"):
        fn = getattr(torch, op)
        record_refusal(op, {}, [f, d], lambda: fn(f, d))
        record_refusal(op, {}, [d, f], lambda: fn(d, f))
        r, t = torch.linspace(0.5, 2, 3).reshape(3, 1), torch.linspace(-3, 3, 4)
        record(op, {}, [r, t], lambda: fn(r, t))
    for dt in (torch.complex64, torch.complex128):
        u = torch.tensor(special[:6], dtype=dt).nan_to_num(0.0, 2.0, -2.0)
        v = torch.tensor(special[6:12], dtype=dt).nan_to_num(0.0, 2.0, -2.0)
        record("vdot", {}, [u, v], lambda: torch.vdot(u, v))
        um, vm = u.reshape(2, 3), v.reshape(2, 3)
        record("linalg_vecdot", {}, [um, vm], lambda: torch.linalg.vecdot(um, vm))
    record_refusal("view_as_complex", {}, [torch.ones(3, 4)],
                   lambda: torch.view_as_complex(torch.ones(3, 4)))
    from torch.testing._internal.common_methods_invocations import op_db
    wanted = {"real": "real", "imag": "imag", "conj": "conj", "conj_physical": "conj_physical",
              "angle": "angle", "isreal": "isreal", "view_as_real": "view_as_real",
              "view_as_complex": "view_as_complex", "complex": "complex", "polar": "polar"}
    for info in op_db:
        if info.name not in wanted or info.variant_test_name:
            continue
        op = wanted[info.name]
        for dt in (torch.float32, torch.complex64, torch.float64):
            try:
                samples = list(info.sample_inputs("cpu", dt))
            except Exception:
                continue
            for s in samples[:6]:
                if s.kwargs or not isinstance(s.input, torch.Tensor):
                    continue
                args = [s.input.contiguous()] + [a.contiguous() for a in s.args
                                                 if isinstance(a, torch.Tensor)]
                if len(args) != 1 + len(s.args):
                    continue
                fn = getattr(torch, op)
                record(op, {}, args, lambda: fn(*args).resolve_conj())
def record_strided(op, attrs, operands, fn):
    """record(), with each result's strides and storage offset (views and
    layout-preserving copies, checked by interp_values against the
    interpreter's), and PyTorch's refusal if it refuses. Attributes that
    are None are left out (their defaults)."""
    attrs = {k: v for k, v in attrs.items() if v is not None}
    before = len(CASES)
    record(op, attrs, operands, fn)
    if len(CASES) > before:
        outs = fn()
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        for spec, o in zip(CASES[-1]["results"], outs):
            spec["strides"] = list(o.stride())
            spec["storage_offset"] = o.storage_offset()
    else:
        record_refusal(op, attrs, operands, fn)


def gen_diagonals():
    """diagonal (views: strides and storage offsets), diag, diag_embed,
    diagflat and diagonal_scatter on every dtype, with offsets past the
    ends, other planes and mixed dtypes; PyTorch's OpInfo samples."""
    for dt in DTYPES:
        x = make(dt, [2, 3, 4])
        for off, d1, d2 in ((0, 0, 1), (1, 1, 2), (-1, 2, 0), (5, 1, 2), (-2, -1, -2), (2, 2, 1)):
            record_strided("diagonal", {"offset": off, "dim1": d1, "dim2": d2}, [x],
                           lambda: torch.diagonal(x, off, d1, d2))
        v, m = make(dt, [3]), make(dt, [3, 4])
        for k in (0, 2, -1):
            record_strided("diag", {"diagonal": k}, [v], lambda: torch.diag(v, k))
            record_strided("diag", {"diagonal": k}, [m], lambda: torch.diag(m, k))
        record_strided("diag", {"diagonal": 7}, [m], lambda: torch.diag(m, 7))
        e = make(dt, [2, 3])
        for off, d1, d2 in ((0, -2, -1), (1, 0, 2), (-2, 2, 0), (0, 1, 0)):
            record_strided("diag_embed", {"offset": off, "dim1": d1, "dim2": d2}, [e],
                           lambda: torch.diag_embed(e, off, d1, d2))
        for off in (0, -1, 2):
            record_strided("diagflat", {"offset": off}, [e], lambda: torch.diagflat(e, off))
        s0 = make(dt, [], reverse=True)
        record_strided("diagflat", {}, [s0], lambda: torch.diagflat(s0))
        for off, d1, d2, shape in ((0, 0, 1, [4, 2]), (1, 1, 2, [2, 3]), (-1, 2, 0, [3, 2]), (2, 0, 1, [4, 1])):
            src = make(dt, shape, reverse=True)
            record_strided("diagonal_scatter", {"offset": off, "dim1": d1, "dim2": d2}, [x, src],
                           lambda: torch.diagonal_scatter(x, src, off, d1, d2))
    x, src = make(torch.int32, [3, 4]), make(torch.float32, [3], reverse=True)
    record_strided("diagonal_scatter", {}, [x, src], lambda: torch.diagonal_scatter(x, src))
    record_strided("diagonal_scatter", {}, [src.new_ones(3, 4), x[0, :3].contiguous()],
                   lambda: torch.diagonal_scatter(src.new_ones(3, 4), x[0, :3].contiguous()))
    bad = make(torch.float32, [2])
    record_refusal("diagonal_scatter", {}, [x, bad], lambda: torch.diagonal_scatter(x, bad))
    for name in ("diagonal", "diag_embed"):
        y = make(torch.float32, [2, 3])
        fn = getattr(torch, name)
        record_refusal(name, {"offset": 0, "dim1": 1, "dim2": -1 if name == "diagonal" else 1}, [y],
                       lambda: fn(y, 0, 1, -1 if name == "diagonal" else 1))
    y = make(torch.float32, [2, 2, 2])
    record_refusal("diag", {}, [y], lambda: torch.diag(y))
    names = {"diagonal", "diag", "diag_embed", "diagflat", "diagonal_scatter"}
    for name, dt, s in op_db_samples(names, [torch.float32, torch.int64, torch.bool, torch.complex64]):
        x = s.input.contiguous()
        if name == "diagonal_scatter":
            src = s.args[0].contiguous()
            rest = list(s.args[1:])
            keys = ["offset", "dim1", "dim2"]
            attrs = {k: v for k, v in zip(keys, rest)}
            attrs.update(s.kwargs)
            record_strided(name, attrs, [x, src], lambda: torch.diagonal_scatter(x, src, **attrs))
            continue
        keys = {"diag": ["diagonal"], "diagflat": ["offset"]}.get(name, ["offset", "dim1", "dim2"])
        attrs = {k: v for k, v in zip(keys, s.args)}
        attrs.update(s.kwargs)
        fn = getattr(torch, name)
        record_strided(name, attrs, [x], lambda: fn(x, **attrs))


def gen_unfold_as_strided():
    """Tensor.unfold and as_strided (views: strides and storage offsets)
    on every dtype, zero-dim and empty inputs, windows that overlap or skip,
    views reaching the end of the storage; PyTorch's refusals and OpInfo
    samples."""
    for dt in DTYPES:
        x = make(dt, [2, 3, 4])
        for d, size, step in ((1, 2, 1), (2, 3, 2), (-1, 4, 1), (0, 1, 3), (2, 0, 2)):
            record_strided("unfold", {"dimension": d, "size": size, "step": step}, [x],
                           lambda: x.unfold(d, size, step))
        for size, stride, off in (([2, 2], [1, 2], None), ([3, 4], [1, 3], 5), ([2, 2], [1, 2], 20),
                                  ([4, 3], [0, 7], 2), ([], [], 23), ([0, 2], [100, 200], 25)):
            record_strided("as_strided", {"size": size, "stride": stride, "storage_offset": off}, [x],
                           lambda: x.as_strided(size, stride, off))
    z = make(torch.float32, [])
    for size in (1, 0, 2):
        record_strided("unfold", {"dimension": 0, "size": size, "step": 1}, [z], lambda: z.unfold(0, size, 1))
    e = make(torch.float32, [0, 3])
    record_strided("unfold", {"dimension": 0, "size": 0, "step": 1}, [e], lambda: e.unfold(0, 0, 1))
    x = make(torch.float32, [2, 3, 4])
    for d, size, step in ((2, 5, 1), (2, -1, 1), (2, 2, 0)):
        record_refusal("unfold", {"dimension": d, "size": size, "step": step}, [x],
                       lambda: x.unfold(d, size, step))
    for size, stride, off in (([2, 2], [1, 2], 22), ([2, 2], [1, -2], 3), ([2, -2], [1, 2], 3),
                              ([2, 2], [1, 2, 3], 3), ([2, 2], [1, 2], -1), ([5, 5], [5, 1], None)):
        attrs = {"size": size, "stride": stride}
        if off is not None:
            attrs["storage_offset"] = off
        record_refusal("as_strided", attrs, [x], lambda: x.as_strided(size, stride, off))
    for name, dt, s in op_db_samples({"unfold", "as_strided"}, [torch.float32, torch.int64, torch.bool]):
        x = s.input.contiguous()
        if name == "unfold":
            d, size, step = s.args
            record_strided(name, {"dimension": d, "size": size, "step": step}, [x],
                           lambda: x.unfold(d, size, step))
        else:
            size, stride = list(s.args[0]), list(s.args[1])
            off = s.kwargs.get("storage_offset")
            record_strided(name, {"size": size, "stride": stride, "storage_offset": off}, [x],
                           lambda: x.as_strided(size, stride, off))


LIKE_OPS = ("zeros_like", "ones_like", "full_like", "empty_like")
MEMORY_FORMATS = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last,
                  "channels_last_3d": torch.channels_last_3d, "preserve": torch.preserve_format}


def like_call(op, a, x):
    """zeros_like, ones_like, full_like or empty_like (zeroed, as Kiln fills
    it) with Kiln's attributes."""
    kw = {}
    if "memory_format" in a:
        kw["memory_format"] = MEMORY_FORMATS[a["memory_format"]]
    if "dtype" in a:
        kw["dtype"] = BY_SHORT[a["dtype"]]
    if op == "full_like":
        return torch.full_like(x, a["fill_value"], **kw)
    out = getattr(torch, op)(x, **kw)
    return out.zero_() if op == "empty_like" else out


def gen_creation_more():
    """logspace (PyTorch's kernel: every dtype, bases, one step or none),
    tril_indices and triu_indices (offsets past either end, empty),
    zeros_like, ones_like, full_like, empty_like (zeroed), empty and
    empty_strided (zeroed) with their strides; refusals and OpInfo samples."""
    for dt in DTYPES:
        short = SHORT[dt]
        for s0, e0, n, base in ((-3.0, 0.0, 7, 10.0), (0, 3, 11, 2.0), (1.5, -2.25, 9, 3.0),
                                (0, 10, 13, 1.7), (-1, 1, 5, 0.5), (2, 2, 3, 10.0), (0.3, 0.9, 1, 10.0),
                                (-2, 5, 8, 2.0), (0, 1, 0, 10.0), (2, 0, 6, 10.0)):
            if not (dt.is_floating_point or dt.is_complex) and (isinstance(s0, float) or isinstance(e0, float)
                                                                 or s0 < 0 or e0 < 0):
                continue  # PyTorch converts beyond the integer's range (undefined)
            attrs = {"start": s0, "end": e0, "steps": n, "base": base, "dtype": short}
            fn = lambda: torch.logspace(s0, e0, n, base, dtype=dt)
            if dt.is_complex:
                continue  # Kiln refuses complex logspace (Unsupported)
            record_strided("logspace", attrs, [], fn)
        x = make(dt, [2, 3])
        for op in LIKE_OPS:
            a = {"fill_value": 2.5} if op == "full_like" else {}
            record_strided(op, a, [x], lambda: like_call(op, a, x))
            a = dict(a, dtype="i32" if dt != torch.int32 else "f64")
            record_strided(op, a, [x], lambda: like_call(op, a, x))
        record_strided("empty", {"size": [2, 3], "dtype": short}, [],
                       lambda: torch.empty(2, 3, dtype=dt).zero_())
        record_strided("empty_strided", {"size": [2, 3], "stride": [1, 2], "dtype": short}, [],
                       lambda: torch.empty_strided((2, 3), (1, 2), dtype=dt).zero_())
    record_strided("logspace", {"start": 0, "end": 2, "steps": 5}, [], lambda: torch.logspace(0, 2, 5))
    record_strided("logspace", {"start": 1, "end": 3, "steps": 5, "base": 2.0}, [],
                   lambda: torch.logspace(1, 3, 5, 2.0))
    record_refusal("logspace", {"start": 0, "end": 1, "steps": -1}, [], lambda: torch.logspace(0, 1, -1))
    for dt in ("i64", "i32", "i16", "f32"):
        for row, col, off in ((3, 4, 0), (3, 4, 1), (4, 3, -1), (3, 4, 10), (3, 4, -10), (0, 4, 0), (5, 2, -2)):
            for name in ("tril_indices", "triu_indices"):
                fn = getattr(torch, name)
                record_strided(name, {"row": row, "col": col, "offset": off, "dtype": dt}, [],
                               lambda: fn(row, col, off, dtype=BY_SHORT[dt]))
    record_refusal("tril_indices", {"row": -1, "col": 4}, [], lambda: torch.tril_indices(-1, 4))
    record_refusal("triu_indices", {"row": 3, "col": -4}, [], lambda: torch.triu_indices(3, -4))
    x = make(torch.float32, [2, 3, 4, 5])
    for op in LIKE_OPS:
        for fmt in ("contiguous", "channels_last", "preserve"):
            a = {"memory_format": fmt}
            if op == "full_like":
                a["fill_value"] = -1
            record_strided(op, a, [x], lambda: like_call(op, a, x))
    v = make(torch.float32, [2, 3])
    record_refusal("zeros_like", {"memory_format": "channels_last"}, [v],
                   lambda: like_call("zeros_like", {"memory_format": "channels_last"}, v))
    i8 = make(torch.int8, [3])
    record_refusal("full_like", {"fill_value": 300}, [i8], lambda: torch.full_like(i8, 300))
    record_strided("empty", {"size": [2, 3, 4, 5], "memory_format": "channels_last"}, [],
                   lambda: torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).zero_())
    record_strided("empty", {"size": [0, 3]}, [], lambda: torch.empty(0, 3).zero_())
    record_strided("empty_strided", {"size": [2, 3, 4], "stride": [1, 8, 2]}, [],
                   lambda: torch.empty_strided((2, 3, 4), (1, 8, 2)).zero_())
    for size, stride in (([2, 3], [1, -2]), ([2, -3], [1, 2]), ([2, 3], [1])):
        record_refusal("empty_strided", {"size": size, "stride": stride}, [],
                       lambda: torch.empty_strided(size, stride))
    record_refusal("empty", {"size": [2, 3, 4], "memory_format": "channels_last"}, [],
                   lambda: torch.empty(2, 3, 4, memory_format=torch.channels_last))
    record_refusal("empty", {"size": [2, -3]}, [], lambda: torch.empty(2, -3))
    for name, dt, s in op_db_samples({"zeros_like", "ones_like", "full_like", "empty_like"},
                                     [torch.float32, torch.int64, torch.bool]):
        x = s.input.contiguous()
        a = {"fill_value": s.args[0]} if name == "full_like" else {}
        if s.kwargs.get("dtype") is not None:
            a["dtype"] = SHORT[s.kwargs["dtype"]]
        record_strided(name, a, [x], lambda: like_call(name, a, x))


def _selection_ties(op, attrs, x, outs):
    """Whether a kthvalue/median/nanmedian result picked a value that occurs
    more than once in its row (NaNs equal to each other), where PyTorch's
    position is unspecified (median's NaN is its first NaN: specified); for
    mode, the same in rows longer than 16 (PyTorch's sort of a row is
    stable up to 16 elements, and mode's position the value's last)."""
    if len(outs) < 2 or x.dim() == 0:
        return False
    d = attrs.get("dim", -1)
    if op == "mode" and x.shape[d] <= 16:
        return False
    v = outs[0] if attrs.get("keepdim") else outs[0].unsqueeze(d)
    xs, vs = x.to(torch.float64), v.to(torch.float64)
    eq = (xs == vs) | (xs.isnan() & vs.isnan())
    tie = eq.sum(d) > 1
    if op == "median":
        tie &= ~xs.isnan().any(d)
    return bool(tie.any())


def record_selection(op, attrs, x):
    """A kthvalue/median/nanmedian/mode case, or PyTorch's refusal; the
    positions marked unspecified where PyTorch's choice among ties is."""
    fns = {"kthvalue": lambda: torch.kthvalue(x, attrs["k"], attrs.get("dim", -1), attrs.get("keepdim", False)),
           "mode": lambda: torch.mode(x, attrs.get("dim", -1), attrs.get("keepdim", False))}
    for name in ("median", "nanmedian"):
        f = getattr(torch, name)
        fns[name] = (lambda f=f: f(x, attrs["dim"], attrs.get("keepdim", False))) if "dim" in attrs \
            else (lambda f=f: f(x))
    fn = fns[op]
    before = len(CASES)
    record(op, attrs, [x], fn)
    if len(CASES) == before:
        record_refusal(op, attrs, [x], fn)
        return
    outs = fn()
    outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
    if _selection_ties(op, attrs, x, outs):
        CASES[-1]["results"][1]["unspecified"] = True


def gen_selection_more():
    """kthvalue, median (along a dim and of every element), nanmedian and
    mode on every dtype, with ties, NaNs (median propagates, nanmedian
    skips), -0.0, keepdim, zero-dim inputs; refusals and OpInfo samples."""
    ties = torch.tensor([[2, 0, 2, 1, 0, 2], [1, 1, 0, 0, 2, 2], [0, 1, 2, 0, 1, 2], [2, 2, 2, 1, 1, 0]])
    for dt in DTYPES:
        x, y = make(dt, [3, 4]), ties.to(dt)
        for t in (x, y):
            for k, dim in ((1, 1), (2, 1), (4, 1), (3, 0), (2, -2)):
                if k <= t.shape[dim]:
                    record_selection("kthvalue", {"k": k, "dim": dim}, t)
            record_selection("kthvalue", {"k": 2, "dim": 0, "keepdim": True}, t)
            for op in ("median", "nanmedian", "mode"):
                if op != "mode":
                    record_selection(op, {}, t)
                for dim in (0, 1, -1):
                    record_selection(op, {"dim": dim}, t)
                record_selection(op, {"dim": 1, "keepdim": True}, t)
        s0 = make(dt, [])
        for op, a in (("kthvalue", {"k": 1, "dim": 0}), ("median", {"dim": 0}), ("median", {}),
                      ("nanmedian", {"dim": -1}), ("mode", {"dim": 0})):
            record_selection(op, a, s0)
    nan = float("nan")
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        z = torch.tensor([[1.0, nan, 3.0, nan, 2.0], [nan] * 5, [4.0, 1.0, 1.0, 4.0, 2.0],
                          [0.0, -0.0, 0.0, -0.0, 1.0]], dtype=dt)
        for op in ("median", "nanmedian", "mode"):
            record_selection(op, {"dim": 1}, z)
            if op != "mode":
                record_selection(op, {}, z)
        for k in (1, 3, 5):
            record_selection("kthvalue", {"k": k, "dim": 1}, z)
        e = torch.ones(0, dtype=dt)
        record_selection("median", {}, e)
        record_selection("nanmedian", {}, e)
        e3 = torch.ones(0, 3, dtype=dt)
        for op, a in (("kthvalue", {"k": 1, "dim": 1}), ("median", {"dim": 1}), ("mode", {"dim": 1})):
            record_selection(op, a, e3)
    x = make(torch.float32, [2, 3])
    record_selection("kthvalue", {"k": 4, "dim": 1}, x)
    record_selection("kthvalue", {"k": 0, "dim": 1}, x)
    for name, dt, s in op_db_samples({"kthvalue", "median", "nanmedian", "mode"},
                                     [torch.float32, torch.int64, torch.float16]):
        x = s.input.contiguous()
        args = list(s.args)
        a = {}
        if name == "kthvalue":
            a["k"] = args.pop(0)
        for key, v in zip(("dim", "keepdim"), args):
            a[key] = v
        a.update(s.kwargs)
        record_selection(name, a, x)


def gen_view_lists():
    """meshgrid (ij and xy, zero-dim and empty tensors) and
    broadcast_tensors (mixed shapes and dtypes): views of each operand,
    with their strides; refusals; broadcast_tensors' OpInfo samples."""
    for dt in DTYPES:
        a, b, c = make(dt, [3]), make(dt, [4], reverse=True), make(dt, [2])
        for ix in ("ij", "xy"):
            record_strided("meshgrid", {"indexing": ix}, [a, b, c],
                           lambda: torch.meshgrid(a, b, c, indexing=ix))
            record_strided("meshgrid", {"indexing": ix}, [a, b], lambda: torch.meshgrid(a, b, indexing=ix))
        x, y, z = make(dt, [3, 1]), make(dt, [4], reverse=True), make(dt, [1, 1])
        record_strided("broadcast_tensors", {}, [x, y, z], lambda: torch.broadcast_tensors(x, y, z))
    a, s0, e = make(torch.float32, [3]), make(torch.float32, []), make(torch.float32, [0])
    for ix in ("ij", "xy"):
        record_strided("meshgrid", {"indexing": ix}, [a], lambda: torch.meshgrid(a, indexing=ix))
        record_strided("meshgrid", {"indexing": ix}, [s0, a], lambda: torch.meshgrid(s0, a, indexing=ix))
        record_strided("meshgrid", {"indexing": ix}, [a, e, s0], lambda: torch.meshgrid(a, e, s0, indexing=ix))
    i = make(torch.int32, [4])
    record_refusal("meshgrid", {"indexing": "ij"}, [a, i], lambda: torch.meshgrid(a, i, indexing="ij"))
    record_refusal("meshgrid", {"indexing": "yx"}, [a, a], lambda: torch.meshgrid(a, a, indexing="yx"))
    m, v, w = make(torch.float32, [3, 4]), make(torch.int64, [4]), make(torch.float16, [2, 1, 1])
    record_strided("broadcast_tensors", {}, [m, v, w], lambda: torch.broadcast_tensors(m, v, w))
    record_strided("broadcast_tensors", {}, [m], lambda: torch.broadcast_tensors(m))
    e2 = make(torch.float32, [3, 0])
    record_strided("broadcast_tensors", {}, [e2, s0], lambda: torch.broadcast_tensors(e2, s0))
    bad = make(torch.float32, [3, 2])
    record_refusal("broadcast_tensors", {}, [bad, v], lambda: torch.broadcast_tensors(bad, v))
    from torch.testing._internal.common_methods_invocations import op_db
    for op in op_db:
        if op.name != "broadcast_tensors":
            continue
        for dt in (torch.float32, torch.int64, torch.bool):
            for sm in op.sample_inputs("cpu", dt):
                ts = [sm.input.contiguous()] + [t.contiguous() for t in sm.args[0]]
                record_strided("broadcast_tensors", {}, ts, lambda: torch.broadcast_tensors(*ts))
# Issue 20's remaining pointwise math: sgn, gcd, lcm, the shifts, nextafter,
# round with decimals, and the special functions (erfinv, lgamma, digamma,
# i0, i0e, i1, i1e, erfcx, zeta, polygamma), on every dtype PyTorch's CPU takes
# (and its refusals), special values, integer extremes, random values over
# many exponents and OpInfo samples. Kiln computes the special functions
# in f64 and rounds once; the cases keep the values where PyTorch's own is
# accurate (within a quarter of the value tests' tolerance of mpmath's,
# rounded to the dtype), every special value (infinities, NaN, the
# functions' poles and domain edges), and leave out where PyTorch's kernel
# is not (its f32 digamma near the roots, its f64 trigamma's truncated
# series, f32 i0 overflowing early, finite values at the poles of
# trigamma): README, "Where Kiln differs".
MATH_SPECIAL = {"erfinv": torch.erfinv, "lgamma": torch.lgamma, "digamma": torch.digamma,
                "i0": torch.i0, "special_i0e": torch.special.i0e, "special_i1": torch.special.i1,
                "special_i1e": torch.special.i1e, "special_erfcx": torch.special.erfcx}
MATH_INT = {"gcd": torch.gcd, "lcm": torch.lcm, "bitwise_left_shift": torch.bitwise_left_shift,
            "bitwise_right_shift": torch.bitwise_right_shift}
MATH_RTOL = {torch.float64: 1e-12, torch.float32: 4e-6, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def math_truth(name, x, q=None, n=None):
    """The exact value of a special function (mpmath, 40 digits), or None
    at a pole or outside mpmath's domain."""
    import mpmath
    mpmath.mp.dps = 40
    v = mpmath.mpf(x)
    if name in ("i0", "special_i0e", "special_i1", "special_i1e") and abs(x) > 1000:
        # mpmath's Bessel functions are slow this far out: the asymptotic
        # expansion (40 terms) is exact to far below an ulp here.
        nu = 0 if name in ("i0", "special_i0e") else 1
        a, term, total = abs(v), mpmath.mpf(1), mpmath.mpf(1)
        for k in range(1, 40):
            term *= ((2 * k - 1) ** 2 - 4 * nu * nu) / (8 * k * a)
            total += term
        scaled = total / mpmath.sqrt(2 * mpmath.pi * a) * (-1 if nu == 1 and x < 0 else 1)
        return scaled if name.startswith("special_i") and name.endswith("e") else scaled * mpmath.exp(a)
    if name in ("lgamma", "digamma", "polygamma") and abs(x) > 1e15:
        # Far out, mpmath's reflection and recurrences are slow: the values
        # PyTorch's and Kiln's agree on (checked by the tests) are kept.
        return None
    try:
        if name == "erfinv":
            return mpmath.erfinv(v)
        if name == "lgamma":
            return mpmath.log(abs(mpmath.gamma(v)))
        if name == "digamma":
            return mpmath.digamma(v)
        if name == "i0":
            return mpmath.besseli(0, v)
        if name == "special_i0e":
            return mpmath.besseli(0, v) * mpmath.exp(-abs(v))
        if name == "special_i1":
            return mpmath.besseli(1, v)
        if name == "special_i1e":
            return mpmath.besseli(1, v) * mpmath.exp(-abs(v))
        if name in MODIFIED_BESSEL:
            return modified_bessel_truth(name, x, v)
        if name == "special_airy_ai":
            return mpmath.airyai(v)
        if name == "special_ndtri":
            # √2·erfinv(2y − 1), with the digits 2y − 1 needs near 0.
            with mpmath.workdps(400):
                return mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(x) - 1)
        if name in BESSEL_JY:
            order = int(name[-1])
            if name.startswith("special_bessel_y"):
                # Y is NaN below 0 (PyTorch's and Kiln's), −inf at 0.
                return None if x < 0 else (mpmath.bessely(order, v) if x != 0 else -mpmath.inf)
            return mpmath.besselj(order, v)
        if name == "special_erfcx":
            if x < -30:
                return mpmath.inf
            if x > 1e4:
                # mpmath's erfc fails this far out: the asymptotic series
                # (20 terms) is exact to far below an ulp here.
                term, total = mpmath.mpf(1), mpmath.mpf(1)
                for k in range(1, 20):
                    term *= -(2 * k - 1) / (2 * v * v)
                    total += term
                return total / (v * mpmath.sqrt(mpmath.pi))
            return mpmath.exp(v * v) * mpmath.erfc(v)
        if name == "special_zeta":
            return mpmath.zeta(v, mpmath.mpf(q))
        if name in ("igamma", "igammac"):
            # SciPy's (PyTorch's) rules on the domain's edges.
            lower = name == "igamma"
            if x < 0 or q < 0:
                return mpmath.nan
            if x == 0:
                return (mpmath.mpf(1 if lower else 0)) if q > 0 else mpmath.nan
            if q == 0:
                return mpmath.mpf(0 if lower else 1)
            if lower:
                return mpmath.gammainc(v, 0, mpmath.mpf(q), regularized=True)
            return mpmath.gammainc(v, mpmath.mpf(q), mpmath.inf, regularized=True)
        if name == "polygamma":
            return mpmath.psi(n, v)
    except (ValueError, ZeroDivisionError):
        return None
    raise ValueError(name)


def near_truth(got, t, dt, tol):
    """Whether PyTorch's value `got` is within `tol` (relative) of the exact
    value `t` rounded to dt (equal where either is not finite or it is 0)."""
    tv = torch.tensor(float(t), dtype=torch.float64).to(dt).double().item()
    if not math.isfinite(tv) or not math.isfinite(got):
        return tv == got or (math.isnan(tv) and math.isnan(got))
    if tv == 0:
        return got == 0
    return abs(got - tv) <= tol * abs(tv)


def math_keep(name, xs, r, qs=None, n=None):
    """Which results of a special function the tables keep (see above)."""
    dt = r.dtype
    tol = MATH_RTOL[dt] / 4
    keep = []
    flat_r = r.double().reshape(-1).tolist()
    flat_x = xs.double().reshape(-1).tolist()
    flat_q = qs.double().reshape(-1).tolist() if qs is not None else [None] * len(flat_x)
    for x, q, got in zip(flat_x, flat_q, flat_r):
        if not math.isfinite(x) or (q is not None and not math.isfinite(q)):
            # (PyTorch's Bessel J and Y are NaN at ±inf, where they tend to
            # 0 (Y at −inf: NaN); Kiln's are the limits: README, "Where
            # Kiln differs".)
            # (Likewise the Airy function Ai at ±inf.)
            keep.append(not ((name in BESSEL_JY or name == "special_airy_ai") and math.isinf(x)))
            continue
        if name == "special_zeta" and (x <= 1 or q <= 0):
            keep.append(True)
            continue
        t = math_truth(name, x, q, n)
        if t is None:
            # At trigamma's poles PyTorch's value is finite or NaN (its
            # reflection formula); Kiln's is +inf.
            trigamma_pole = name == "polygamma" and n == 1 and got != math.inf
            keep.append((not math.isfinite(got) or name == "lgamma" or abs(x) > 1e15)
                        and not trigamma_pole)
            continue
        keep.append(near_truth(got, t, dt, tol))
    return torch.tensor(keep, dtype=torch.bool).reshape(r.shape)


def record_math_unary(name, fn, x, attrs=None, n=None):
    try:
        r = fn(x)
    except Exception:
        return
    keep = math_keep(name, x, r, n=n)
    if not bool(keep.all()):
        x = x[keep].contiguous()
    record(name, attrs or {}, [x], lambda: fn(x))


def math_int_extremes(dt):
    info = torch.iinfo(dt)
    vals = [info.min, info.max, 0, 1, -1, 2, -2, 6, -4, 12, 18, -18, 7, 100, info.min + 1, info.max - 1,
            3, 5, 64, 31, 32, 63, 8, 15, 16, 17]
    return torch.tensor([v for v in vals if info.min <= v <= info.max], dtype=dt)


def gen_math():
    g = torch.Generator().manual_seed(2020)
    # sgn: every dtype (refusals too); complex values where PyTorch's
    # vectorized kernel gives z/|z| (not where |z| under- or overflows in
    # its f32 arithmetic: README).
    for dt in DTYPES:
        x = make(dt, [3, 4])
        record("sgn", {}, [x], lambda: torch.sgn(x))
        record_refusal("sgn", {}, [x], lambda: torch.sgn(x))
    for dt in (torch.complex64, torch.complex128):
        re = issue20_random(torch.float64, 64, -3.0, 3.0, g)
        im = issue20_random(torch.float64, 64, -3.0, 3.0, g)
        im[::5] = 0.0
        re[::7] = 0.0
        z = torch.complex(re, im).to(dt)
        record("sgn", {}, [z], lambda: torch.sgn(z))
    for dt in ISSUE20_FLOATS:
        x = issue20_specials(dt)
        record("sgn", {}, [x], lambda: torch.sgn(x))
    # gcd, lcm, the shifts: integer extremes against each other, OpInfo-like
    # random values, scalar operands for the shifts, every dtype's refusal.
    for name, fn in MATH_INT.items():
        for dt in DTYPES:
            a = make(dt, [3, 4])
            b = make(dt, [4], reverse=True)
            record(name, {}, [a, b], lambda: fn(a, b))
            record_refusal(name, {}, [a, b], lambda: fn(a, b))
        for dt in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8):
            v = math_int_extremes(dt)
            a = v.reshape(-1, 1).expand(-1, v.numel()).contiguous()
            b = v.reshape(1, -1).expand(v.numel(), -1).contiguous()
            if name in ("gcd", "lcm") and dt in (torch.int32, torch.int64):
                # C's MIN / -1 traps (SIGFPE) in PyTorch's lcm: leave out the
                # pairs whose gcd is -1 (MIN with 2^31 - 1 or 2^63 - 1).
                gg = torch.gcd(a, b)
                keep = gg != -1
                a, b = a[keep].contiguous(), b[keep].contiguous()
            record(name, {}, [a, b], lambda: fn(a, b))
            lo, hi = (0, 256) if dt == torch.uint8 else (-1000, 1000)
            a = torch.randint(lo, hi, (64,), generator=g).to(dt)
            b = torch.randint(lo, hi, (64,), generator=g).to(dt)
            if name.startswith("bitwise"):
                b = torch.randint(-3 if dt != torch.uint8 else 0, 70, (64,), generator=g).to(dt)
            record(name, {}, [a, b], lambda: fn(a, b))
        if name.startswith("bitwise"):
            for dt in (torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool):
                a = make(dt, [3, 4])
                for sc in (0, 3, 9, -1, 70):
                    record(name, {}, [a, sc], lambda: fn(a, sc))
                    record(name, {}, [sc, a], lambda: fn(sc, a))
        for da, db in ((torch.int8, torch.int32), (torch.uint8, torch.int8), (torch.int16, torch.int64),
                       (torch.int32, torch.float32), (torch.bool, torch.int8)):
            a = make(da, [3, 4])
            b = make(db, [4], reverse=True)
            record(name, {}, [a, b], lambda: fn(a, b))
            record_refusal(name, {}, [a, b], lambda: fn(a, b))
    # nextafter: every dtype (refusals), all pairs of special values, random
    # pairs, mixed dtypes.
    for dt in DTYPES:
        a = make(dt, [3, 4])
        b = make(dt, [4], reverse=True)
        record("nextafter", {}, [a, b], lambda: torch.nextafter(a, b))
        record_refusal("nextafter", {}, [a, b], lambda: torch.nextafter(a, b))
    for dt in ISSUE20_FLOATS:
        sp = issue20_specials(dt)
        a = sp.reshape(-1, 1).expand(-1, sp.numel()).contiguous()
        b = sp.reshape(1, -1).expand(sp.numel(), -1).contiguous()
        record("nextafter", {}, [a, b], lambda: torch.nextafter(a, b))
        a = issue20_random(dt, 128, -4.0, 4.0, g)
        b = issue20_random(dt, 128, -4.0, 4.0, g)
        record("nextafter", {}, [a, b], lambda: torch.nextafter(a, b))
    for da, db in ((torch.float32, torch.float64), (torch.float16, torch.bfloat16), (torch.int32, torch.float32)):
        a = make(da, [3, 4])
        b = make(db, [4], reverse=True)
        record("nextafter", {}, [a, b], lambda: torch.nextafter(a, b))
    # round with decimals: PyTorch's scaled round, large and negative
    # decimals (10^|d| infinite in f32 from 39, in f64 from 309).
    for dt in DTYPES:
        x = make(dt, [3, 4])
        record_refusal("round", {"decimals": 2}, [x], lambda: torch.round(x, decimals=2))
    for dt in ISSUE20_FLOATS:
        xs = [issue20_specials(dt), issue20_random(dt, 128, -1000.0, 1000.0, g)]
        for d in (0, 1, 2, 3, 5, 8, 10, 20, 38, 39, 300, 308, 309, -1, -2, -3, -5, -10, -38, -39, -308,
                  -309, 400, -400):
            for x in xs:
                record("round", {"decimals": d}, [x], lambda: torch.round(x, decimals=d))
    # The special functions: every dtype (refusals), special values, random
    # values over many exponents and each function's ranges, OpInfo samples.
    ranges = {"erfinv": (-1.0, 1.0), "lgamma": (-10.0, 30.0), "digamma": (-10.0, 30.0),
              "i0": (-30.0, 30.0), "special_i0e": (-60.0, 60.0), "special_i1": (-30.0, 30.0),
              "special_i1e": (-60.0, 60.0), "special_erfcx": (-27.0, 60.0)}
    for name, fn in MATH_SPECIAL.items():
        for dt in DTYPES:
            x = make(dt, [3, 4])
            if dt.is_floating_point and dt.itemsize >= 2:
                record_math_unary(name, fn, x)
            else:
                record(name, {}, [x], lambda: fn(x))
            record_refusal(name, {}, [x], lambda: fn(x))
        for dt in ISSUE20_FLOATS:
            record_math_unary(name, fn, issue20_specials(dt))
            lo, hi = ranges[name]
            record_math_unary(name, fn, issue20_random(dt, 256, lo, hi, g))
            if name == "erfinv":
                tail = 1 - torch.exp2(-torch.rand(64, generator=g, dtype=torch.float64) * 50)
                record_math_unary(name, fn, tail.to(dt))
            if name in ("lgamma", "digamma"):
                poles = torch.tensor([-1.0, -2.0, -3.0, -10.0, -0.5, -1.5, -2.5, 1e-30, -1e-30, 171.0, 172.0,
                                      2.5e305, 1e17, 1e16, 9.99, 10.0, 10.01], dtype=torch.float64).to(dt)
                record_math_unary(name, fn, poles)
            if name == "special_erfcx":
                edges = torch.tensor([-26.7, -26.6, -27.0, 25.99, 26.0, 26.01, 1e3, 1e8, 1.1e8, 1e300, -1e-300,
                                      1e-300, 0.5, -0.5], dtype=torch.float64).to(dt)
                record_math_unary(name, fn, edges)
            if name.startswith("special_i") or name == "i0":
                big = torch.tensor([88.0, 89.0, 90.0, 700.0, 713.0, 714.0, 1e4, -713.0, 29.99, 30.0, 30.01,
                                    1e-300, -1e-300], dtype=torch.float64).to(dt)
                record_math_unary(name, fn, big)
    # zeta: the domain rules, random pairs, scalar operands.
    for dt in DTYPES:
        a = make(dt, [3, 4])
        b = make(dt, [4], reverse=True)
        record_refusal("special_zeta", {}, [a, b], lambda: torch.special.zeta(a, b))
    zx = torch.tensor([1.0, 2.0, 0.5, -1.0, 3.0, 4.5, float("inf"), float("-inf"), float("nan"), 0.0, 1.5, 7.0,
                       20.0], dtype=torch.float64)
    zq = torch.tensor([1.0, 0.0, -0.0, -1.0, -1.5, 2.0, float("inf"), float("-inf"), float("nan"), 1e-30, 0.5,
                       1e10, -3.25, 9.0, 10.0, 100.0], dtype=torch.float64)
    for dt in (torch.float32, torch.float64):
        a = zx.to(dt).reshape(-1, 1).expand(-1, zq.numel()).contiguous()
        b = zq.to(dt).reshape(1, -1).expand(zx.numel(), -1).contiguous()
        r = torch.special.zeta(a, b)
        keep = math_keep("special_zeta", a, r, qs=b)
        ka, kb = a[keep].contiguous(), b[keep].contiguous()
        record("special_zeta", {}, [ka, kb], lambda: torch.special.zeta(ka, kb))
        xs = torch.tensor([2.0, 3.0, 4.0, 5.0, 1.5, 2.5, 8.0] * 16, dtype=torch.float64).to(dt)
        qs = issue20_random(torch.float64, xs.numel(), 0.01, 40.0, g).abs().to(dt)
        r = torch.special.zeta(xs, qs)
        keep = math_keep("special_zeta", xs, r, qs=qs)
        ka, kb = xs[keep].contiguous(), qs[keep].contiguous()
        record("special_zeta", {}, [ka, kb], lambda: torch.special.zeta(ka, kb))
        q1 = qs[:16].contiguous()
        record("special_zeta", {}, [2.0, q1], lambda: torch.special.zeta(2.0, q1))
        x1 = xs[:16].contiguous()
        record("special_zeta", {}, [x1, 3.0], lambda: torch.special.zeta(x1, 3.0))
    for da, db in ((torch.int32, torch.int64), (torch.int64, torch.float32), (torch.bool, torch.float64)):
        a = make(da, [3, 4]).abs() + 2 if da != torch.bool else make(da, [3, 4])
        b = make(db, [4], reverse=True).abs() + 1
        record("special_zeta", {}, [a, b], lambda: torch.special.zeta(a, b))
    # polygamma: n = 0 (digamma), 1 (trigamma), higher orders; negative n
    # refused before the dtype.
    for n in (0, 1, 2, 3, 4, 6, 40, -1):
        for dt in DTYPES:
            x = make(dt, [3, 4])
            record_refusal("polygamma", {"n": n}, [x], lambda: torch.polygamma(n, x))
            if n >= 0 and not dt.is_floating_point:
                f = (lambda n: lambda x: torch.polygamma(n, x))(n)
                record_math_unary("polygamma", f, x, attrs={"n": n}, n=n)
        if n < 0:
            continue
        for dt in ISSUE20_FLOATS:
            f = (lambda n: lambda x: torch.polygamma(n, x))(n)
            for x in (issue20_specials(dt), issue20_random(dt, 128, -6.0, 30.0, g),
                      torch.tensor([-1.0, -2.0, -1.5, -0.25, 1e-30, 1e30, 0.5, 7.0], dtype=torch.float64).to(dt)):
                record_math_unary("polygamma", f, x, attrs={"n": n}, n=n)
    # OpInfo samples.
    names = {"sgn", "gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "nextafter", "erfinv",
             "lgamma", "digamma", "i0", "special.i0e", "special.i1", "special.i1e", "special.zeta",
             "special.erfcx"}
    dtypes = ISSUE20_FLOATS + (torch.int64, torch.int32, torch.int16, torch.uint8, torch.bool, torch.complex64)
    for name, dt, s in op_db_samples(names, dtypes):
        x, args, kw = s.input, list(s.args), dict(s.kwargs)
        if not isinstance(x, torch.Tensor) or kw:
            continue
        kname = name.replace("special.", "special_")
        operands = [x.contiguous()] + [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        if kname in MATH_SPECIAL:
            if len(operands) == 1:
                fn = MATH_SPECIAL[kname]
                if x.dtype.is_floating_point and x.numel() > 0:
                    record_math_unary(kname, fn, operands[0])
                else:
                    record(kname, {}, operands, lambda: fn(*operands))
            continue
        fn = {"sgn": torch.sgn, "nextafter": torch.nextafter, "special_zeta": torch.special.zeta}.get(kname) \
            or MATH_INT[kname]
        if kname == "sgn" and len(operands) == 1:
            if x.dtype.is_complex:
                continue
            record(kname, {}, operands, lambda: fn(*operands))
        elif kname != "sgn" and len(operands) == 2:
            if kname == "special_zeta":
                if not all(isinstance(o, torch.Tensor) for o in operands):
                    continue
                try:
                    r = fn(*operands)
                    fa, fb = torch.broadcast_tensors(*operands)
                    keep = math_keep(kname, fa, r, qs=fb)
                except Exception:
                    continue
                if not bool(keep.all()):
                    ka, kb = fa[keep].contiguous(), fb[keep].contiguous()
                    record(kname, {}, [ka, kb], lambda: fn(ka, kb))
                    continue
            if any(not isinstance(o, torch.Tensor) for o in operands) and kname != "bitwise_left_shift" \
                    and kname != "bitwise_right_shift":
                continue
            record(kname, {}, operands, lambda: fn(*operands))


def gen_searchsorted():
    """searchsorted and bucketize: 1-D and per-row sequences, left and
    right, int32 positions, sorters, numbers searched for, mixed dtypes
    (compared in the promoted dtype), NaN and unsorted sequences (PyTorch's
    binary search decides), on every dtype its kernel takes; refusals;
    PyTorch's OpInfo samples."""
    for dt in DTYPES:
        try:
            seq = torch.sort(make(dt, [6])).values
        except (RuntimeError, NotImplementedError, TypeError):
            seq = make(dt, [6])
        x = make(dt, [2, 5], reverse=True)
        for out_int32, right in ((False, False), (True, True)):
            attrs = {"out_int32": out_int32, "right": right}
            record("searchsorted", attrs, [seq, x, None],
                   lambda: torch.searchsorted(seq, x, out_int32=out_int32, right=right))
            record("bucketize", attrs, [x, seq],
                   lambda: torch.bucketize(x, seq, out_int32=out_int32, right=right))
        record_refusal("searchsorted", {}, [seq, x, None], lambda: torch.searchsorted(seq, x))
        record_refusal("bucketize", {}, [x, seq], lambda: torch.bucketize(x, seq))
    g = torch.Generator().manual_seed(16)
    rows = torch.sort(torch.randint(-5, 6, (3, 7), generator=g).float(), dim=1).values
    vals = torch.randint(-6, 7, (3, 4), generator=g).float() + 0.5 * torch.randint(0, 2, (3, 4), generator=g)
    for side in ("left", "right"):
        record("searchsorted", {"side": side}, [rows, vals, None],
               lambda: torch.searchsorted(rows, vals, side=side))
    perm = torch.stack([torch.randperm(7, generator=g) for _ in range(3)])
    shuffled = torch.gather(rows, 1, torch.argsort(perm, dim=1))
    sorter = torch.argsort(shuffled, dim=1, stable=True)
    for right in (False, True):
        record("searchsorted", {"right": right}, [shuffled, vals, sorter],
               lambda: torch.searchsorted(shuffled, vals, right=right, sorter=sorter))
        record("searchsorted", {"right": right}, [shuffled, vals, perm],
               lambda: torch.searchsorted(shuffled, vals, right=right, sorter=perm))
    nan = float("nan")
    odd = torch.tensor([1.0, nan, -3.0, 2.0, 2.0, 5.0])
    probes = torch.tensor([nan, 2.0, -4.0, 1.5, 6.0, float("inf"), float("-inf"), -0.0])
    for right in (False, True):
        record("searchsorted", {"right": right}, [odd, probes, None],
               lambda: torch.searchsorted(odd, probes, right=right))
    edges = torch.tensor([-1.5, 0.0, 0.0, 2.25, 7.0])
    for v in (0, 0.0, 2.25, -9, True, 1e9):
        for right in (False, True):
            record("searchsorted", {"right": right}, [edges, v, None],
                   lambda: torch.searchsorted(edges, v, right=right))
            record("bucketize", {"right": right}, [v, edges],
                   lambda: torch.bucketize(v, edges, right=right))
    ints = torch.tensor([-3, 0, 2, 2, 9], dtype=torch.int32)
    for v in (2, 2.5, -0.5, True):
        record("searchsorted", {}, [ints, v, None], lambda: torch.searchsorted(ints, v))
    mixed = [(torch.tensor([1, 3, 5]), torch.tensor([2.5, 3.0, 7.9])),
             (torch.tensor([1.0, 3.0, 5.0], dtype=torch.float16), torch.tensor([3, 4], dtype=torch.int64)),
             (torch.tensor([0.1, 0.2, 0.30000001], dtype=torch.float64), torch.tensor([0.2, 0.3], dtype=torch.float32)),
             (torch.tensor([0, 1, 2], dtype=torch.uint8), torch.tensor([True, False])),
             (torch.tensor([16777216.0, 16777218.0]), torch.tensor([16777217], dtype=torch.int64)),
             (torch.tensor([-1.0, 0.0, 1.0]), torch.tensor(0.0, dtype=torch.float64)),
             (torch.tensor([1.0, 2.0]), torch.empty(0, 3)),
             (torch.empty(0), torch.tensor([1.0, 2.0]))]
    for seq, x in mixed:
        record("searchsorted", {}, [seq, x, None], lambda: torch.searchsorted(seq, x))
        if seq.dim() == 1:
            record("bucketize", {"right": True}, [x, seq], lambda: torch.bucketize(x, seq, right=True))
    bad = [([torch.ones(2, 3), torch.ones(3, 1), None], {}),
           ([torch.tensor(1.0), torch.ones(3), None], {}),
           ([torch.ones(2, 3), 1.0, None], {}),
           ([torch.tensor(1.0), torch.tensor(1.0), None], {}),
           ([torch.ones(3), torch.ones(2), torch.tensor([0, 1])], {}),
           ([torch.ones(3), torch.ones(2), torch.tensor([0, 1, 2], dtype=torch.int32)], {}),
           ([torch.ones(3), torch.ones(2), None], {"side": "left", "right": True}),
           ([torch.ones(3, 2), torch.ones(3, 2, 1), None], {}),
           ([torch.ones(3).bool(), torch.ones(2).bool(), None], {}),
           ([torch.ones(3, dtype=torch.uint16), torch.ones(2, dtype=torch.uint16), None], {}),
           ([torch.ones(3), torch.ones(2, dtype=torch.complex64), None], {})]
    for operands, attrs in bad:
        record_refusal("searchsorted", attrs, operands,
                       lambda: torch.searchsorted(*operands[:2], sorter=operands[2], **attrs))
    record_refusal("bucketize", {}, [torch.ones(2), torch.ones(2, 2)],
                   lambda: torch.bucketize(torch.ones(2), torch.ones(2, 2)))
    record_refusal("bucketize", {}, [1.5, torch.tensor(2.0)],
                   lambda: torch.bucketize(1.5, torch.tensor(2.0)))
    for name, dt, s in op_db_samples({"searchsorted", "bucketize"}, [torch.float32, torch.int64, torch.float16, torch.uint8]):
        kw = dict(s.kwargs)
        attrs = {k: kw[k] for k in ("out_int32", "right", "side") if k in kw}
        sorter = kw.get("sorter")
        if name == "searchsorted":
            seq = s.input.contiguous()
            x = s.args[0].contiguous() if isinstance(s.args[0], torch.Tensor) else s.args[0]
            sorter = sorter.contiguous() if sorter is not None else None
            record(name, attrs, [seq, x, sorter], lambda: torch.searchsorted(seq, x, sorter=sorter, **attrs))
        else:
            x = s.input.contiguous() if isinstance(s.input, torch.Tensor) else s.input
            bd = s.args[0].contiguous()
            record(name, attrs, [x, bd], lambda: torch.bucketize(x, bd, **attrs))


def gen_masked_scatter_prelu_unpool():
    """masked_scatter (mask broadcast with the input, source of any shape,
    surplus source elements unused), prelu (one weight, one per channel,
    0-D and 1-D inputs, channels_last-free values, signed zeros and NaN)
    and max_unpool1d (as F.max_unpool1d: max_unpool2d with a trailing dim)
    on every dtype; refusals; PyTorch's OpInfo samples."""
    g = torch.Generator().manual_seed(1616)
    mask = torch.rand(3, 4, generator=g) > 0.5
    row_mask = torch.tensor([True, False, False, True])
    for dt in DTYPES:
        x = make(dt, [3, 4])
        src = make(dt, [2, 7], reverse=True)
        record("masked_scatter", {}, [x, mask, src], lambda: x.masked_scatter(mask, src))
        record("masked_scatter", {}, [x[0].contiguous(), mask, src], lambda: x[0].masked_scatter(mask, src))
        record("masked_scatter", {}, [x, row_mask, src[0].contiguous()],
               lambda: x.masked_scatter(row_mask, src[0]))
        record_refusal("masked_scatter", {}, [x, mask, src], lambda: x.masked_scatter(mask, src))
        w = make(dt, [3], reverse=True)
        xc = make(dt, [2, 3, 2])
        record("prelu", {}, [xc, w], lambda: F.prelu(xc, w))
        record_refusal("prelu", {}, [xc, w], lambda: F.prelu(xc, w))
    nan = float("nan")
    xs = torch.tensor([[-2.0, -0.0, 0.0, nan, 3.5, -1e-3], [float("-inf"), float("inf"), -7.25, 1.0, -0.5, 2.0]])
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        x = xs.to(dt)
        for w in (torch.tensor([0.25]), torch.tensor(-1.5), torch.tensor([0.1, -3.0]), torch.tensor([nan, 0.0])):
            w = w.to(dt)
            record("prelu", {}, [x, w], lambda: F.prelu(x, w))
        x3 = torch.randn(2, 3, 4, 5, generator=g).to(dt)
        w3 = torch.randn(3, generator=g).to(dt)
        record("prelu", {}, [x3, w3], lambda: F.prelu(x3, w3))
        record("prelu", {}, [x[0].contiguous(), w[:1].contiguous()], lambda: F.prelu(x[0], w[:1]))
        record("prelu", {}, [x[0, 0], torch.tensor(0.5, dtype=dt)], lambda: F.prelu(x[0, 0], torch.tensor(0.5, dtype=dt)))
    bad_prelu = [(torch.ones(2, 3, 4), torch.ones(4)), (torch.ones(2, 3), torch.ones(1, 3)),
                 (torch.tensor(2.0), torch.ones(2)), (torch.ones(5), torch.ones(5)),
                 (torch.ones(2, 3), torch.ones(3, dtype=torch.float64)),
                 (torch.ones(2, 3, dtype=torch.int64), torch.ones(3, dtype=torch.int64)),
                 (torch.ones(2, 3, dtype=torch.int64), torch.ones(2, dtype=torch.int64)),
                 (torch.ones(2, 0, 3), torch.ones(0)), (torch.ones(2, 3), torch.ones(0))]
    for x, w in bad_prelu:
        record_refusal("prelu", {}, [x, w], lambda: F.prelu(x, w))
        record("prelu", {}, [x, w], lambda: F.prelu(x, w))
    bad_scatter = [(torch.zeros(2, 3), torch.ones(3).int(), torch.ones(6)),
                   (torch.zeros(2, 3), torch.ones(3).bool(), torch.ones(6).double()),
                   (torch.zeros(2, 4), torch.ones(3).int(), torch.ones(6)),
                   (torch.zeros(2, 4, dtype=torch.int64), torch.ones(3).bool(), torch.ones(6)),
                   (torch.zeros(2, 3, dtype=torch.uint16), torch.ones(3).to(torch.uint8), torch.ones(6, dtype=torch.uint16))]
    for x, m, src in bad_scatter:
        record_refusal("masked_scatter", {}, [x, m, src], lambda: x.masked_scatter(m, src))
    for _, dt, s in op_db_samples({"masked_scatter"}, [torch.float32, torch.int64, torch.bool, torch.complex64]):
        x, m, src = s.input.contiguous(), s.args[0].contiguous(), s.args[1].contiguous()
        record("masked_scatter", {}, [x, m, src], lambda: x.masked_scatter(m, src))
    for _, dt, s in op_db_samples({"nn.functional.prelu"}, [torch.float32, torch.float64, torch.bfloat16]):
        x = s.input.contiguous()
        w = (s.args[0] if s.args else s.kwargs["weight"]).contiguous()
        record("prelu", {}, [x, w], lambda: F.prelu(x, w))
    for _, dt, s in op_db_samples({"nn.functional.max_unpool1d"}, [torch.float32, torch.float64, torch.float16]):
        x, idx, kw = s.input.contiguous(), s.args[0].contiguous(), dict(s.kwargs)
        k = kw["kernel_size"] if isinstance(kw["kernel_size"], int) else kw["kernel_size"][0]
        st = kw.get("stride") or k
        st = st if isinstance(st, int) else st[0]
        pad = kw.get("padding", 0)
        pad = pad if isinstance(pad, int) else pad[0]
        size = list(kw["output_size"])[-1:] if kw.get("output_size") is not None else [(x.shape[-1] - 1) * st + k - 2 * pad]
        record("max_unpool1d", {"output_size": size}, [x, idx],
               lambda: F.max_unpool1d(x, idx, k, st, pad, output_size=size))
    x = torch.tensor([[[3.0, -1.0, 2.0]], [[0.5, 4.0, -2.0]]])
    idx = torch.tensor([[[1, 2, 5]], [[0, 3, 4]]])
    for dt in DTYPES:
        record("max_unpool1d", {"output_size": [6]}, [x.to(dt), idx], lambda: F.max_unpool1d(x.to(dt), idx, 2, output_size=[6]))
        record_refusal("max_unpool1d", {"output_size": [6]}, [x.to(dt), idx], lambda: F.max_unpool1d(x.to(dt), idx, 2, output_size=[6]))
    record("max_unpool1d", {"output_size": [6]}, [x[0], idx[0]], lambda: F.max_unpool1d(x[0], idx[0], 2, output_size=[6]))
    record_refusal("max_unpool1d", {"output_size": [6]}, [x[0, 0], idx[0, 0]],
                   lambda: F.max_unpool1d(x[0, 0], idx[0, 0], 2, output_size=[6]))
    record_refusal("max_unpool1d", {"output_size": [6]}, [x, idx.int()],
                   lambda: F.max_unpool1d(x, idx.int(), 2, output_size=[6]))


def gen_more_losses():
    """gaussian_nll_loss (var of the input's shape, one dim short, one dim
    of one, a number; full, eps), cosine_embedding_loss (1-D and 0-D
    targets, margin, targets other than ±1), multilabel_soft_margin_loss
    (weight) and triplet_margin_loss (margin, p, eps, swap) with every
    reduction on floats, integer and mixed inputs; refusals with PyTorch's
    messages; PyTorch's OpInfo samples."""
    g = torch.Generator().manual_seed(1617)
    reductions = ("none", "mean", "sum")
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        r = lambda *s: torch.randn(*s, generator=g).to(dt)
        x, t = r(3, 4), r(3, 4)
        v = torch.rand(3, 4, generator=g).to(dt)
        v[0, 0] = 0.0
        for red in reductions:
            for var in (v, v[:, 0].contiguous(), v[:, :1].contiguous(), v[:1].contiguous(), 0.75):
                for full, eps in ((False, 1e-6), (True, 0.05)):
                    a = {"full": full, "eps": eps, "reduction": red}
                    record("gaussian_nll_loss", a, [x, t, var],
                           lambda: F.gaussian_nll_loss(x, t, var, full=full, eps=eps, reduction=red))
            y = torch.tensor([1, -1, 1])
            y3 = torch.tensor([1.0, 0.0, -1.0]).to(dt)
            for margin in (0.0, 0.3, -0.5):
                a = {"margin": margin, "reduction": red}
                record("cosine_embedding_loss", a, [x, t, y],
                       lambda: F.cosine_embedding_loss(x, t, y, margin=margin, reduction=red))
                record("cosine_embedding_loss", a, [x, t, y3],
                       lambda: F.cosine_embedding_loss(x, t, y3, margin=margin, reduction=red))
                record("cosine_embedding_loss", a, [x[1].contiguous(), t[1].contiguous(), y[1]],
                       lambda: F.cosine_embedding_loss(x[1], t[1], y[1], margin=margin, reduction=red))
            labels = (torch.rand(3, 4, generator=g) > 0.5).to(dt)
            w = torch.rand(4, generator=g).to(dt)
            for weight in (None, w):
                a = {"reduction": red}
                record("multilabel_soft_margin_loss", a, [x, labels, weight],
                       lambda: F.multilabel_soft_margin_loss(x, labels, weight, reduction=red))
                record("multilabel_soft_margin_loss", a, [x[0].contiguous(), labels[0].contiguous(), weight],
                       lambda: F.multilabel_soft_margin_loss(x[0], labels[0], weight, reduction=red))
            n = r(3, 4)
            for margin, p, eps, swap in ((1.0, 2.0, 1e-6, False), (0.5, 1.0, 0.0, True),
                                         (2.0, 3.0, 1e-3, True), (1.0, float("inf"), 1e-6, False)):
                a = {"margin": margin, "p": scalar_spec(p) if math.isinf(p) else p, "eps": eps, "swap": swap,
                     "reduction": red}
                record("triplet_margin_loss", a, [x, t, n],
                       lambda: F.triplet_margin_loss(x, t, n, margin=margin, p=p, eps=eps, swap=swap, reduction=red))
            a = {"margin": 1.0, "p": 2.0, "eps": 1e-6, "swap": True, "reduction": red}
            record("triplet_margin_loss", a, [x[0].contiguous(), t[0].contiguous(), n[0].contiguous()],
                   lambda: F.triplet_margin_loss(x[0], t[0], n[0], swap=True, reduction=red))
    xi, ti = torch.randint(-3, 4, (3, 4), generator=g), torch.randint(-3, 4, (3, 4), generator=g)
    record("cosine_embedding_loss", {}, [xi, ti, torch.tensor([1, -1, 1])],
           lambda: F.cosine_embedding_loss(xi, ti, torch.tensor([1, -1, 1])))
    record("cosine_embedding_loss", {}, [xi.bool(), ti.bool(), torch.tensor([1, -1, 1])],
           lambda: F.cosine_embedding_loss(xi.bool(), ti.bool(), torch.tensor([1, -1, 1])))
    xf = torch.randn(3, 4, generator=g)
    record("multilabel_soft_margin_loss", {}, [xf, ti, None], lambda: F.multilabel_soft_margin_loss(xf, ti))
    vf = torch.rand(3, 4, generator=g)
    record("gaussian_nll_loss", {}, [xf.half(), xf, vf], lambda: F.gaussian_nll_loss(xf.half(), xf, vf))
    bad = [
        ("gaussian_nll_loss", {}, [xf, xf, torch.rand(2, 4)]),
        ("gaussian_nll_loss", {}, [xf, xf, -0.5]),
        ("gaussian_nll_loss", {}, [xf, xf, 1]),
        ("gaussian_nll_loss", {}, [xf, xf[0], torch.rand(3, 4)]),
        ("gaussian_nll_loss", {}, [xi, ti, torch.ones(3, 4, dtype=torch.int64)]),
        ("gaussian_nll_loss", {}, [xf.view(3, 2, 2), xf.view(3, 2, 2), torch.rand(3, 1, 1)]),
        ("gaussian_nll_loss", {"reduction": "batchmean"}, [xf, xf, torch.rand(3, 4)]),
        ("cosine_embedding_loss", {}, [xf, xf, torch.tensor(1)]),
        ("cosine_embedding_loss", {}, [xf[0], xf, torch.tensor(1)]),
        ("cosine_embedding_loss", {}, [xf, xf, torch.ones(3, 1)]),
        ("cosine_embedding_loss", {}, [xf, xf[:2], torch.ones(3)]),
        ("cosine_embedding_loss", {}, [xf, xf, torch.ones(2)]),
        ("cosine_embedding_loss", {}, [xf.to(torch.complex64), xf.to(torch.complex64), torch.ones(3)]),
        ("cosine_embedding_loss", {"reduction": "batchmean"}, [xf, xf, torch.ones(3)]),
        ("multilabel_soft_margin_loss", {}, [xf, xf[:, :2], None]),
        ("multilabel_soft_margin_loss", {}, [xi, ti, None]),
        ("multilabel_soft_margin_loss", {}, [torch.tensor(1.0), torch.tensor(1.0), None]),
        ("multilabel_soft_margin_loss", {"reduction": "batchmean"}, [xf, xf, None]),
        ("triplet_margin_loss", {}, [xf, xf[0], xf]),
        ("triplet_margin_loss", {"margin": 0.0}, [xf, xf, xf]),
        ("triplet_margin_loss", {"margin": -1.5}, [xf, xf, xf]),
        ("triplet_margin_loss", {}, [xf.bool(), xf.bool(), xf.bool()]),
        ("triplet_margin_loss", {"reduction": "batchmean"}, [xf, xf, xf]),
    ]
    for op, a, operands in bad:
        fn = getattr(F, op)
        kw = dict(a)
        if op in ("gaussian_nll_loss",):
            call = lambda: fn(*operands, **kw)
        elif op == "multilabel_soft_margin_loss":
            call = lambda: fn(operands[0], operands[1], operands[2], **kw)
        else:
            call = lambda: fn(*operands, **kw)
        record_refusal(op, a, operands, call)
    for name, dt, s in op_db_samples({"nn.functional.gaussian_nll_loss", "nn.functional.cosine_embedding_loss",
                                      "nn.functional.multilabel_soft_margin_loss",
                                      "nn.functional.triplet_margin_loss"}, [torch.float32, torch.float64]):
        op = name.split(".")[-1]
        kw = dict(s.kwargs)
        if op == "multilabel_soft_margin_loss":
            operands = [s.input.contiguous(), s.args[0].contiguous(),
                        kw.pop("weight").contiguous() if kw.get("weight") is not None else None]
            call = lambda: F.multilabel_soft_margin_loss(*operands, **kw)
        else:
            operands = [s.input.contiguous()] + [a.contiguous() if isinstance(a, torch.Tensor) else a for a in s.args]
            call = lambda: getattr(F, op)(*operands, **kw)
        if op == "gaussian_nll_loss" and isinstance(operands[2], torch.Tensor) and bool((operands[2] < 0).any()):
            continue
        record(op, kw, operands, call)


def _clone(v):
    return v.clone() if isinstance(v, torch.Tensor) else v


def gen_native_norms():
    """native_layer_norm, native_batch_norm (training and evaluation: the
    running statistics passed as copies, PyTorch updates them in place),
    native_group_norm (all three results) and local_response_norm (3-D,
    4-D, 5-D inputs, even and odd sizes) on floats, with and without
    parameters, mixed f32 parameters of reduced-precision inputs; refusals;
    PyTorch's OpInfo samples."""
    g = torch.Generator().manual_seed(1618)
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        r = lambda *s: torch.randn(*s, generator=g).to(dt)
        x = r(2, 3, 4, 5)
        w, b = r(4, 5), r(4, 5)
        for params in ((None, None), (w, b), (w, None)):
            record("native_layer_norm", {"normalized_shape": [4, 5], "eps": 1e-5}, [x, *params],
                   lambda: torch.native_layer_norm(x, [4, 5], *params, 1e-5))
        record("native_layer_norm", {"normalized_shape": [5], "eps": 0.1}, [x, None, None],
               lambda: torch.native_layer_norm(x, [5], None, None, 0.1))
        cw, cb, rm, rv = r(3), r(3), r(3), torch.rand(3, generator=g).to(dt) + 0.5
        for training in (True, False):
            for params in ((cw, cb, rm, rv), (None, None, rm, rv), (cw, None, None, None)):
                if not training and params[2] is None:
                    continue
                a = {"training": training, "momentum": 0.1, "eps": 1e-5}
                record("native_batch_norm", a, [x, *params],
                       lambda: torch.native_batch_norm(x, *map(_clone, params), training, 0.1, 1e-5))
        record("native_batch_norm", {"training": True, "momentum": 0.1, "eps": 1e-3}, [x[:, :, 0].contiguous(), None, None, None, None],
               lambda: torch.native_batch_norm(x[:, :, 0], None, None, None, None, True, 0.1, 1e-3))
        for group, params in ((3, (cw, cb)), (1, (None, None)), (3, (None, cb))):
            a = {"n": 2, "c": 3, "hxw": 20, "group": group, "eps": 1e-5}
            record("native_group_norm", a, [x, *params],
                   lambda: torch.native_group_norm(x, *params, 2, 3, 20, group, 1e-5))
        x6 = r(2, 6, 5)
        a = {"n": 2, "c": 6, "hxw": 5, "group": 2, "eps": 1e-5}
        record("native_group_norm", a, [x6, None, None], lambda: torch.native_group_norm(x6, None, None, 2, 6, 5, 2, 1e-5))
        for shape in ([2, 6, 5], [2, 6, 3, 4], [1, 5, 2, 3, 2]):
            xl = r(*shape) * 3
            for size, alpha, beta, k in ((2, 1e-4, 0.75, 1.0), (3, 0.5, 0.5, 2.0), (5, 1.0, 1.5, 0.25)):
                a = {"size": size, "alpha": alpha, "beta": beta, "k": k}
                record("local_response_norm", a, [xl], lambda: F.local_response_norm(xl, size, alpha, beta, k))
    x = torch.randn(2, 3, 4, 5, generator=g).half()
    w32, b32 = torch.randn(3, generator=g), torch.randn(3, generator=g)
    rm32, rv32 = torch.randn(3, generator=g), torch.rand(3, generator=g) + 0.5
    for training in (True, False):
        a = {"training": training, "momentum": 0.1, "eps": 1e-5}
        record("native_batch_norm", a, [x, w32, b32, rm32, rv32],
               lambda: torch.native_batch_norm(x, w32, b32, rm32.clone(), rv32.clone(), training, 0.1, 1e-5))
    record("native_group_norm", {"n": 2, "c": 3, "hxw": 20, "group": 3, "eps": 1e-5}, [x, w32, b32],
           lambda: torch.native_group_norm(x, w32, b32, 2, 3, 20, 3, 1e-5))
    lw, lb = torch.randn(5, generator=g), torch.randn(5, generator=g)
    record("native_layer_norm", {"normalized_shape": [5], "eps": 1e-5}, [x, lw, lb],
           lambda: torch.native_layer_norm(x, [5], lw, lb, 1e-5))
    xf = torch.randn(2, 3, 4, 5, generator=g)
    bad = [
        ("native_layer_norm", {"normalized_shape": [4], "eps": 1e-5}, [xf, None, None],
         lambda: torch.native_layer_norm(xf, [4], None, None, 1e-5)),
        ("native_layer_norm", {"normalized_shape": [5], "eps": 1e-5}, [xf.long(), None, None],
         lambda: torch.native_layer_norm(xf.long(), [5], None, None, 1e-5)),
        ("native_batch_norm", {"training": False, "momentum": 0.1, "eps": 1e-5}, [xf, None, None, None, None],
         lambda: torch.native_batch_norm(xf, None, None, None, None, False, 0.1, 1e-5)),
        ("native_batch_norm", {"training": True, "momentum": 0.1, "eps": 1e-5}, [xf, torch.ones(4), None, None, None],
         lambda: torch.native_batch_norm(xf, torch.ones(4), None, None, None, True, 0.1, 1e-5)),
        ("native_group_norm", {"n": 2, "c": 3, "hxw": 21, "group": 3, "eps": 1e-5}, [xf, None, None],
         lambda: torch.native_group_norm(xf, None, None, 2, 3, 21, 3, 1e-5)),
        ("native_group_norm", {"n": 2, "c": 3, "hxw": 20, "group": 2, "eps": 1e-5}, [xf, None, None],
         lambda: torch.native_group_norm(xf, None, None, 2, 3, 20, 2, 1e-5)),
        ("native_group_norm", {"n": 2, "c": 3, "hxw": 20, "group": 0, "eps": 1e-5}, [xf, None, None],
         lambda: torch.native_group_norm(xf, None, None, 2, 3, 20, 0, 1e-5)),
        ("local_response_norm", {"size": 2}, [xf[0, 0]], lambda: F.local_response_norm(xf[0, 0], 2)),
        ("local_response_norm", {"size": 2}, [xf.long()], lambda: F.local_response_norm(xf.long(), 2)),
    ]
    for op, a, operands, call in bad:
        record_refusal(op, a, operands, call)
    for name, dt, s in op_db_samples({"native_layer_norm", "native_batch_norm", "native_group_norm",
                                      "nn.functional.local_response_norm"}, [torch.float32, torch.float64]):
        x, args = s.input.contiguous(), list(s.args)
        args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        if name == "native_layer_norm":
            shape, w, b, eps = args
            a = {"normalized_shape": list(shape), "eps": eps}
            record(name, a, [x, w, b], lambda: torch.native_layer_norm(x, shape, w, b, eps))
        elif name == "native_batch_norm":
            w, b, rm, rv, training, momentum, eps = args
            a = {"training": training, "momentum": momentum, "eps": eps}
            record(name, a, [x, w, b, rm, rv],
                   lambda: torch.native_batch_norm(x, w, b, _clone(rm), _clone(rv), training, momentum, eps))
        elif name == "native_group_norm":
            w, b, n, c, hxw, group, eps = args
            a = {"n": n, "c": c, "hxw": hxw, "group": group, "eps": eps}
            record(name, a, [x, w, b], lambda: torch.native_group_norm(x, w, b, n, c, hxw, group, eps))
        else:
            kw = dict(s.kwargs)
            size = args[0]
            a = {"size": size, **kw}
            record("local_response_norm", a, [x], lambda: F.local_response_norm(x, size, **kw))


def gen_embedding_bag():
    """embedding_bag (ATen's _embedding_bag_forward_only, as torch.export
    emits it): sum, mean, max, per-sample weights, include_last_offset,
    padding_idx, empty bags, int32 and mixed index dtypes, on the float
    dtypes; its four results; refusals; PyTorch's OpInfo samples."""
    g = torch.Generator().manual_seed(1619)
    ebf = torch.ops.aten._embedding_bag_forward_only
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 0, 5])
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        w = torch.randn(6, 3, generator=g).to(dt)
        psw = torch.rand(8, generator=g).to(dt)
        for offs, last in ((torch.tensor([0, 2, 2, 5]), False), (torch.tensor([0, 3, 3, 8]), True),
                           (torch.tensor([0]), False)):
            for mode in (0, 1, 2):
                for pad in (None, 4):
                    for weights in ((None, psw) if mode == 0 else (None,)):
                        a = {"mode": mode, "include_last_offset": last}
                        if pad is not None:
                            a["padding_idx"] = pad
                        record("embedding_bag", a, [w, idx, offs, weights],
                               lambda: ebf(w, idx, offs, False, mode, False, weights, last, -1 if pad is None else pad))
    w = torch.randn(6, 3, generator=g)
    for ii, oo in ((idx.int(), torch.tensor([0, 4], dtype=torch.int32)), (idx.int(), torch.tensor([0, 4])),
                   (torch.tensor([], dtype=torch.int64), torch.tensor([0, 0]))):
        for mode in (0, 1, 2):
            record("embedding_bag", {"mode": mode}, [w, ii, oo, None], lambda: ebf(w, ii, oo, False, mode, False, None, False, -1))
    bad = [([w, idx.float(), torch.tensor([0]), None], {}), ([w, idx, torch.tensor([0.0]), None], {}),
           ([w.long(), idx, torch.tensor([0]), None], {}), ([w, idx, torch.tensor([0]), None], {"mode": 3}),
           ([w, idx, torch.tensor([0]), torch.ones(8)], {"mode": 1}),
           ([w, idx, torch.tensor([0]), torch.ones(7)], {}), ([w, idx, torch.tensor([0]), torch.ones(8).double()], {}),
           ([w[0], idx, torch.tensor([0]), None], {}), ([w, idx, torch.tensor([[0]]), None], {}),
           ([w, idx, torch.tensor([], dtype=torch.int64), None], {"include_last_offset": True})]
    for operands, a in bad:
        kw = {"mode": 0, "include_last_offset": False, **a}
        record_refusal("embedding_bag", a, operands,
                       lambda: ebf(operands[0], operands[1], operands[2], False, kw["mode"], False, operands[3],
                                   kw["include_last_offset"], -1))
    for _, dt, s in op_db_samples({"nn.functional.embedding_bag"}, [torch.float32, torch.float64]):
        kw = dict(s.kwargs)
        ii, w = s.input, s.args[0]
        offs = kw.get("offsets")
        mode = {"sum": 0, "mean": 1, "max": 2}[kw.get("mode", "mean")]
        last = kw.get("include_last_offset", False)
        pad = kw.get("padding_idx")
        psw = kw.get("per_sample_weights")
        if kw.get("max_norm") is not None:
            continue
        if ii.dim() == 2:
            offs = torch.arange(0, ii.numel(), ii.shape[1])
            ii = ii.reshape(-1)
        if pad is not None and pad < 0:
            pad = w.shape[0] + pad
        a = {"mode": mode, "include_last_offset": last}
        if pad is not None:
            a["padding_idx"] = pad
        ii, w, offs = ii.contiguous(), w.contiguous(), offs.contiguous()
        psw = psw.contiguous() if psw is not None else None
        record("embedding_bag", a, [w, ii, offs, psw],
               lambda: ebf(w, ii, offs, False, mode, False, psw, last, -1 if pad is None else pad))


# torch.special's Bessel functions of the first and second kinds, orders 0
# and 1 (f32 and f64; integers and bools as f32; f16 and bf16 refused):
# every dtype, special values, random values over (−30, 100) and far out,
# the first roots; kept where PyTorch's own is accurate, as the special
# functions above (its f32 Cephes is not, next to the roots).
BESSEL_JY = {"special_bessel_j0": torch.special.bessel_j0, "special_bessel_j1": torch.special.bessel_j1,
             "special_bessel_y0": torch.special.bessel_y0, "special_bessel_y1": torch.special.bessel_y1}


def gen_special_unary(table, seed, lo, hi, far):
    """Every dtype (and its refusal), special values, 256 random values
    over (lo, hi) and the points `far`, for each function of `table`."""
    g = torch.Generator().manual_seed(seed)
    for name, fn in table.items():
        for dt in DTYPES:
            x = make(dt, [3, 4])
            # (Integers too: PyTorch's f32 kernel is off by up to 1e-5 of
            # the value far out.)
            record_math_unary(name, fn, x)
            record_refusal(name, {}, [x], lambda: fn(x))
        for dt in (torch.float32, torch.float64):
            record_math_unary(name, fn, issue20_specials(dt))
            record_math_unary(name, fn, issue20_random(dt, 256, lo, hi, g))
            record_math_unary(name, fn, torch.tensor(far, dtype=torch.float64).to(dt))


def gen_bessel():
    gen_special_unary(BESSEL_JY, 2027, -30.0, 100.0,
                      [1e3, 1e4, 1e5, 1e8, 1e15, 1e300, 2.0 ** -30, 1e-300, -1e-300, 5.0, 8.0,
                       2.404825557695773, 3.8317059702075125, 0.8935769662791675, 2.197141326031017])


# torch.special's modified Bessel functions I and K of orders 0 and 1, K
# scaled by e^x, and the spherical Bessel function j0 (f32 and f64;
# integers and bools as f32; f16 and bf16 refused): every dtype, special
# values, random values over (−5, 60) and far out, around Kiln's ranges for
# K (its series up to 1, integral up to 25, asymptotic expansion beyond);
# kept where PyTorch's own is accurate.
MODIFIED_BESSEL = {
    "special_modified_bessel_i0": torch.special.modified_bessel_i0,
    "special_modified_bessel_i1": torch.special.modified_bessel_i1,
    "special_modified_bessel_k0": torch.special.modified_bessel_k0,
    "special_modified_bessel_k1": torch.special.modified_bessel_k1,
    "special_scaled_modified_bessel_k0": torch.special.scaled_modified_bessel_k0,
    "special_scaled_modified_bessel_k1": torch.special.scaled_modified_bessel_k1,
    "special_spherical_bessel_j0": torch.special.spherical_bessel_j0,
}


def modified_bessel_truth(name, x, v):
    import mpmath
    if name == "special_spherical_bessel_j0":
        return mpmath.mpf(1) if x == 0 else mpmath.sin(v) / v
    nu = int(name[-1])
    if "_i" in name:
        if abs(x) > 1000:
            # Past f64's range (and slow in mpmath this far out).
            return mpmath.inf if nu == 0 or x > 0 else -mpmath.inf
        return mpmath.besseli(nu, v)
    if x < 0:
        return None
    if x == 0:
        return mpmath.inf
    scaled = "scaled" in name
    if x > 1000:
        # The asymptotic expansion (40 terms) is exact to far below an ulp
        # here; unscaled, K underflows.
        if not scaled:
            return mpmath.mpf(0)
        term, total = mpmath.mpf(1), mpmath.mpf(1)
        for k in range(1, 40):
            term *= (4 * nu * nu - (2 * k - 1) ** 2) / (8 * k * v)
            total += term
        return total * mpmath.sqrt(mpmath.pi / (2 * v))
    k = mpmath.besselk(nu, v)
    return k * mpmath.exp(v) if scaled else k


def gen_modified_bessel():
    gen_special_unary(MODIFIED_BESSEL, 2028, -5.0, 60.0,
                      [1e-300, 2.0 ** -30, 1e-3, 0.999, 1.0, 1.001, 2.0, 7.5, 24.9, 25.0, 25.1,
                       100.0, 700.0, 720.0, 750.0, 1e3, 1e5, 1e300])


# torch.special's orthogonal polynomials of x and a degree n (f32 and f64;
# integers and bools as f32; f16 and bf16 refused): a grid of x (the ends
# ±1, the shifted forms' 0 and 1, beyond, infinities, NaN) against degrees
# (negative, fractional, around ATen's closed-form thresholds and Hermite's
# limits, NaN), random x in (−1.2, 1.2) with random degrees, scalar
# operands, integer dtypes. Kept where PyTorch's value is within a quarter
# of the tests' tolerance of the exact one (mpmath, 50 digits): this drops
# PyTorch's f32 closed forms at high degree, its NaN where a recurrence
# overflows or x is infinite, and its uninitialised result at NaN (Kiln's
# values there are tested in kiln_math: README, "Where Kiln differs").
POLYNOMIALS = {
    "special_chebyshev_polynomial_t": torch.special.chebyshev_polynomial_t,
    "special_chebyshev_polynomial_u": torch.special.chebyshev_polynomial_u,
    "special_chebyshev_polynomial_v": torch.special.chebyshev_polynomial_v,
    "special_chebyshev_polynomial_w": torch.special.chebyshev_polynomial_w,
    "special_shifted_chebyshev_polynomial_t": torch.special.shifted_chebyshev_polynomial_t,
    "special_shifted_chebyshev_polynomial_u": torch.special.shifted_chebyshev_polynomial_u,
    "special_shifted_chebyshev_polynomial_v": torch.special.shifted_chebyshev_polynomial_v,
    "special_shifted_chebyshev_polynomial_w": torch.special.shifted_chebyshev_polynomial_w,
    "special_hermite_polynomial_h": torch.special.hermite_polynomial_h,
    "special_hermite_polynomial_he": torch.special.hermite_polynomial_he,
    "special_laguerre_polynomial_l": torch.special.laguerre_polynomial_l,
    "special_legendre_polynomial_p": torch.special.legendre_polynomial_p,
}


def polynomial_truth(name, x, n, dt):
    """The exact value (mpmath) of a polynomial at x with the degree PyTorch
    takes from n (C's truncation; NaN and out-of-range: i64::MIN), None
    where Kiln's rules (infinities, NaN) decide instead."""
    import mpmath
    mpmath.mp.dps = 50
    d = int(n) if math.isfinite(n) and abs(n) < 2.0 ** 63 else -(2 ** 63)
    if d < 0:
        return mpmath.mpf(0)
    if "hermite" in name and d > (128 if dt == torch.float32 else 512):
        return mpmath.nan
    if not math.isfinite(x):
        return None
    v = mpmath.mpf(x)
    if "shifted" in name:
        v = 2 * v - 1
    kind = name.split("_")[-1]
    if "chebyshev" in name:
        first = {"t": v, "u": 2 * v, "v": 2 * v - 1, "w": 2 * v + 1}[kind]
        step = lambda k, p, q: 2 * v * q - p
    elif kind == "h":
        first, step = 2 * v, lambda k, p, q: 2 * v * q - 2 * k * p
    elif kind == "he":
        first, step = v, lambda k, p, q: v * q - k * p
    elif kind == "l":
        first, step = 1 - v, lambda k, p, q: ((2 * k + 1 - v) * q - k * p) / (k + 1)
    else:
        first, step = v, lambda k, p, q: ((2 * k + 1) * v * q - k * p) / (k + 1)
    if d == 0:
        return mpmath.mpf(1)
    p, q = mpmath.mpf(1), first
    for k in range(1, d):
        p, q = q, step(k, p, q)
    return q


def polynomial_keep(name, xs, ns, r):
    dt = r.dtype
    tol = MATH_RTOL[dt] / 4
    keep = []
    for x, n, got in zip(xs.double().reshape(-1).tolist(), ns.double().reshape(-1).tolist(),
                         r.double().reshape(-1).tolist()):
        t = polynomial_truth(name, x, n, dt)
        if t is None:
            keep.append(False)
            continue
        keep.append(near_truth(got, t, dt, tol))
    return torch.tensor(keep, dtype=torch.bool).reshape(r.shape)


def record_polynomial(name, fn, x, n):
    """Records fn(x, n) at the kept points (a Python number stays a scalar
    operand)."""
    tx = x if isinstance(x, torch.Tensor) else torch.tensor(float(x))
    tn = n if isinstance(n, torch.Tensor) else torch.tensor(float(n))
    bx, bn = torch.broadcast_tensors(tx, tn)
    keep = polynomial_keep(name, bx, bn, fn(x, n).expand(bx.shape))
    kx = x if not isinstance(x, torch.Tensor) else bx[keep].contiguous()
    kn = n if not isinstance(n, torch.Tensor) else bn[keep].contiguous()
    record(name, {}, [kx, kn], lambda: fn(kx, kn))


def gen_polynomials():
    g = torch.Generator().manual_seed(2029)
    xs = [float("-inf"), -2.0, -1.0, -0.75, -0.3, -0.0, 0.25, 0.5, 0.999, 1.0, 1.25, 3.0, 1e10, float("nan")]
    ns = [-1.0, 0.0, 1.0, 2.0, 3.7, 5.0, 7.0, 9.0, 12.0, 25.0, 128.0, 129.0, 600.0, float("nan")]
    for name, fn in POLYNOMIALS.items():
        for dt in DTYPES:
            a, b = make(dt, [3, 4]), make(dt, [4], reverse=True)
            record_refusal(name, {}, [a, b], lambda: fn(a, b))
        for dt in (torch.float32, torch.float64):
            x = torch.tensor(xs, dtype=torch.float64).to(dt).reshape(-1, 1)
            n = torch.tensor(ns, dtype=torch.float64).to(dt).reshape(1, -1)
            record_polynomial(name, fn, x, n)
            rx = (torch.rand(64, generator=g, dtype=torch.float64) * 2.4 - 1.2).to(dt)
            rn = torch.randint(0, 40, (64,), generator=g).to(dt)
            record_polynomial(name, fn, rx, rn)
            record_polynomial(name, fn, rx[:8].contiguous(), 5)
            record_polynomial(name, fn, 0.375, rn[:8].contiguous())
        for dx, dn in ((torch.int32, torch.int64), (torch.int64, torch.float64), (torch.bool, torch.int32),
                       (torch.float32, torch.uint8)):
            x = torch.tensor([-3, -1, 0, 1, 2, 4], dtype=torch.int64).to(dx).reshape(-1, 1)
            n = torch.tensor([0, 1, 2, 3, 6, 9, 10], dtype=torch.int64).to(dn).reshape(1, -1)
            record_polynomial(name, fn, x, n)


# torch.special's Airy function Ai (f32 and f64; integers and bools as f32;
# f16 and bf16 refused): every dtype, special values, random values over
# (−30, 30), points around PyTorch's (Cephes') ranges (its series inside
# ±2.09, its asymptotic forms beyond, 0 above 103.892) and Kiln's (its
# series inside ±9); kept where PyTorch's own is accurate.
def gen_airy():
    gen_special_unary({"special_airy_ai": torch.special.airy_ai}, 2030, -30.0, 30.0,
                      [-2.09, -2.0899999, 2.09, 2.0899999, 8.32, 8.3203353, 8.33, 25.0, 100.0, 103.89,
                       103.9, 200.0, -10.0, -100.0, -1e3, -1e4, 1e-300, -1e-300, 1e-5, 9.0, -9.0,
                       8.999999999999998, -8.999999999999998])


# torch.special.ndtri, the normal quantile (f32 and f64; integers and
# bools as f32; f16 and bf16 refused): every dtype, special values, random values
# over (0, 1), points around PyTorch's (Cephes') ranges (the centre up to
# e^-2 from the ends, its tails' two approximations on either side of
# √(−2 ln y) = 8) and Kiln's (the centre [¼, ¾], the switch of Newton's
# start near y = 2.8e-8), the subnormals; kept where PyTorch's own is
# accurate.
def gen_ndtri():
    gen_special_unary({"special_ndtri": torch.special.ndtri}, 2031, 0.0, 1.0,
                      [1e-300, 5e-324, 1e-20, 1e-14, 1.2664165549e-14, 0.1353352832366127,
                       0.13533528, 0.8646647167633873, 0.86466472, 0.999999, 1 - 2 ** -53, 0.5, 0.25,
                       0.75, 0.24999999999999997, 0.7500000000000001, 2.8e-8, 2.9e-8, 5.79e-17, 5.81e-17])


# PyTorch's OpInfo samples (0-D, broadcast, empty operands; those of up
# to 64 elements) of the orthogonal polynomials, airy_ai and ndtri,
# recorded as they are where PyTorch's values are all accurate, else at
# their accurate points.
def gen_special_opinfo():
    polys = {f"special.{n[len('special_'):]}": n for n in POLYNOMIALS}
    unary = {"special.airy_ai": ("special_airy_ai", torch.special.airy_ai),
             "special.ndtri": ("special_ndtri", torch.special.ndtri)}
    for name, dt, s in op_db_samples(set(polys) | set(unary), [torch.float32, torch.float64]):
        shapes = [s.input.shape] + [a.shape for a in s.args if isinstance(a, torch.Tensor)]
        if math.prod(torch.broadcast_shapes(*shapes)) > 64:
            continue
        if name in unary:
            kir, fn = unary[name]
            record_math_unary(kir, fn, s.input)
            continue
        kir, fn = polys[name], POLYNOMIALS[polys[name]]
        x, n = s.input, s.args[0]
        bx, bn = torch.broadcast_tensors(x, n)
        if bool(polynomial_keep(kir, bx, bn, fn(x, n)).all()):
            record(kir, {}, [x, n], lambda: fn(x, n))
        else:
            record_polynomial(kir, fn, x, n)


# torch.igamma and torch.igammac (torch.special.gammainc, gammaincc): every
# dtype (floats only; integers and bools refused), a grid over each of
# Kiln's regimes (P's series, DLMF 8.7.3 for Q with a < 1, the continued
# fraction, the prefactor below and above a = 10, x near a) and the
# domain's edges, random pairs with x near a; kept where PyTorch's own is
# accurate.
def gen_igamma():
    g = torch.Generator().manual_seed(2032)
    fns = {"igamma": torch.igamma, "igammac": torch.igammac}
    grid_a = [0.0, 1e-3, 0.1, 0.5, 1.0, 2.5, 9.99, 10.0, 10.01, 30.0, 100.0, 1000.0,
              float("inf"), float("nan"), -1.0]
    grid_x = [0.0, 1e-300, 0.1, 0.5, 1.0, 2.0, 5.0, 9.0, 10.0, 11.0, 30.0, 90.0, 100.0, 110.0,
              1000.0, float("inf"), float("nan"), -1.0]
    for name, fn in fns.items():
        for dt in DTYPES:
            a, b = make(dt, [3, 4]), make(dt, [4], reverse=True)
            record_refusal(name, {}, [a, b], lambda: fn(a, b))
        for dt in ISSUE20_FLOATS:
            a = torch.tensor(grid_a, dtype=torch.float64).to(dt).reshape(-1, 1).expand(-1, len(grid_x))
            x = torch.tensor(grid_x, dtype=torch.float64).to(dt).reshape(1, -1).expand(len(grid_a), -1)
            a, x = a.contiguous(), x.contiguous()
            keep = math_keep(name, a, fn(a, x), qs=x)
            ka, kx = a[keep].contiguous(), x[keep].contiguous()
            record(name, {}, [ka, kx], lambda: fn(ka, kx))
            ra = torch.exp(torch.rand(64, generator=g, dtype=torch.float64) * 9 - 4.6)
            rx = (ra + torch.randn(64, generator=g, dtype=torch.float64) * ra.sqrt()).abs()
            ra, rx = ra.to(dt), rx.to(dt)
            keep = math_keep(name, ra, fn(ra, rx), qs=rx)
            ka, kx = ra[keep].contiguous(), rx[keep].contiguous()
            record(name, {}, [ka, kx], lambda: fn(ka, kx))
        # Broadcasting.
        a = torch.tensor([[0.5], [2.0], [7.0]])
        x = torch.tensor([0.25, 1.0, 3.0, 8.0])
        record(name, {}, [a, x], lambda: fn(a, x))


def main():
    gen_unary()
    gen_activations()
    gen_statistics()
    gen_scans()
    gen_binary_composites()
    gen_shape_ops()
    gen_gather_scatter()
    gen_advanced_indexing()
    gen_index_writes()
    gen_einsum()
    gen_pads()
    gen_slice_scatters()
    gen_shuffles()
    gen_stacks()
    gen_eye_linspace()
    gen_tensor_splits()
    gen_rot90()
    gen_selection()
    gen_binary()
    gen_where_clamp_cast()
    gen_reductions()
    gen_composites()
    gen_several_results()
    gen_indexing()
    gen_attention()
    gen_mha()
    gen_movement()
    gen_matmul()
    gen_creation()
    gen_issue16()
    gen_conv()
    gen_pool()
    gen_upsample()
    gen_spatial_opinfo()
    gen_spatial_more()
    gen_issue20()
    gen_products_more()
    gen_searchsorted()
    gen_masked_scatter_prelu_unpool()
    gen_more_losses()
    gen_native_norms()
    gen_embedding_bag()
    gen_random()
    gen_complex_parts()
    gen_diagonals()
    gen_unfold_as_strided()
    gen_creation_more()
    gen_selection_more()
    gen_view_lists()
    gen_math()
    gen_bessel()
    gen_modified_bessel()
    gen_polynomials()
    gen_airy()
    gen_ndtri()
    gen_special_opinfo()
    gen_igamma()
    out = {
        "meta": {
            "torch_version": torch.__version__,
            "generator": "generate_values.py",
            "notes": "inputs and outputs of single ops on PyTorch's CPU; values in logical order",
        },
        "cases": CASES,
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_values.json")
    with open(path, "w") as f:
        f.write("{\n")
        f.write(f'"meta": {json.dumps(out["meta"])},\n"cases": [\n')
        f.write(",\n".join(json.dumps(c) for c in CASES))
        f.write("\n]}\n")
    print(f"{len(CASES)} cases -> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
