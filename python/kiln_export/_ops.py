"""ATen op -> `.kir` translations.

Each translation receives the node's arguments bound to their schema names
(FX nodes replaced by their `.kir` values, `V`) and emits `.kir`
instructions through `ctx.f.emit`. A translation that cannot reproduce the
op exactly raises `Unsupported` with the reason; the driver turns it into
an `UnsupportedOpError` naming the op, the node and the user's line.

`SUPPORTED` (generated from the registry) lists what is translated; the
README's table is its summary.
"""

from __future__ import annotations

import torch

from ._export import Unsupported, op_name
from ._kir import NONE, V, Keyword

REGISTRY: dict = {}


def _exists(qualname):
    _, name, overload = qualname.split(".")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None or overload not in packet.overloads():
        return False
    # Only the tensor overloads (aten::div(Scalar, Scalar) -> float is
    # shape arithmetic, not an op of the program).
    return "Tensor" in str(getattr(packet, overload)._schema).split("->")[-1]


def op(*names):
    """Registers a translation for the `aten.NAME.OVERLOAD`s this PyTorch has."""
    def deco(fn):
        for n in names:
            if _exists(n):
                REGISTRY[n] = fn
        return fn

    return deco


def bind(node) -> dict:
    """The node's arguments by schema name, defaults filled in."""
    schema = node.target._schema
    out = {}
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            out[arg.name] = node.args[i]
        elif arg.name in node.kwargs:
            out[arg.name] = node.kwargs[arg.name]
        elif arg.has_default_value():
            out[arg.name] = arg.default_value
        else:
            out[arg.name] = None
    return out


class Ctx:
    """What a translation sees: the node, its bound arguments, and `emit`,
    which annotates the result with the node's type when asked."""

    def __init__(self, tr, node):
        self.tr, self.node, self.f = tr, node, tr.f
        self.shape, self.dtype = tr.meta(node)
        self.raw = bind(node)
        self.a = {k: tr.value(v) for k, v in self.raw.items()}

    def emit(self, op, operands=(), attrs=None, *, final=True, **kw):
        """One instruction; `final=True` gives it the node's name and type."""
        if final:
            kw.setdefault("hint", self.node.name)
            kw.setdefault("shape", self.shape)
            kw.setdefault("dtype", self.dtype)
        else:
            kw.setdefault("hint", self.node.name + "_")
        return self.f.emit(op, operands, attrs, **kw)

    def tensor(self, name):
        v = self.a[name]
        if not isinstance(v, V):
            raise Unsupported(f"argument '{name}' is not a tensor ({v!r})")
        return v

    def meta_of(self, name):
        """Shape and dtype of tensor argument `name` from FX metadata."""
        return self.tr.meta(self.raw[name])


def translate(tr, node):
    name = op_name(node)
    fn = REGISTRY.get(name)
    if fn is None:
        raise Unsupported(_missing_reason(name))
    if not isinstance(node.target, torch._ops.OpOverload):
        raise Unsupported("not an ATen op")
    ctx = Ctx(tr, node)
    return fn(ctx)


MISSING = {
    "_unsafe_index": "Kiln has no _unsafe_index (export without it: it skips the bounds checks)",
    "_native_batch_norm_legit": "Kiln's batch_norm in training mode is not exported "
                                "(export in eval mode)",
    "native_batch_norm": "Kiln's batch_norm in training mode is not exported "
                         "(export in eval mode)",
    "rrelu_with_noise": "rrelu in training mode is random: export in eval mode",
    "native_dropout": "dropout is random: export in eval mode",
}


def _missing_reason(name):
    base = name.split(".")[1] if name.startswith("aten.") else name
    return MISSING.get(base, f"Kiln has no translation for {name}")


def _dims(d):
    """An ATen `int[1]? dim` as a list, or None for all dims."""
    if d is None:
        return None
    if isinstance(d, int):
        return [d]
    return list(d)


def _is_one(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == 1


def _float_dtype(dtype):
    return dtype is not None and (dtype.is_floating_point or dtype.is_complex)


# ---- pointwise ---------------------------------------------------------

UNARY = ["neg", "abs", "exp", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
         "tanh", "sigmoid", "relu", "erf", "floor", "ceil", "trunc", "sign",
         "reciprocal", "logical_not", "bitwise_not", "isnan", "silu", "hardswish",
         "atan", "asin", "acos", "signbit", "erfc",
         "erfinv", "lgamma", "digamma", "i0", "special_i0e", "special_i1", "special_i1e",
         "special_erfcx", "special_bessel_j0", "special_bessel_j1", "special_bessel_y0",
         "special_bessel_y1", "special_modified_bessel_i0", "special_modified_bessel_i1",
         "special_modified_bessel_k0", "special_modified_bessel_k1",
         "special_scaled_modified_bessel_k0", "special_scaled_modified_bessel_k1",
         "special_spherical_bessel_j0", "special_airy_ai", "special_ndtri"]


def _unary(kir_op):
    def fn(c):
        # The schema's own name for the operand (`self`; torch.special's
        # newer functions say `x`).
        return c.emit(kir_op, [c.tensor(c.node.target._schema.arguments[0].name)])

    return fn


for _u in UNARY:
    op(f"aten.{_u}.default")(_unary(_u))
# NumPy's names for the inverse trigonometric functions.
for _u in ("arctan", "arcsin", "arccos", "special_erfc"):
    op(f"aten.{_u}.default")(_unary(_u.replace("arc", "a").replace("special_", "")))

# Kiln's composites of real tensors (integers promote to float as in PyTorch).
REAL_UNARY = ["tan", "sinh", "cosh", "asinh", "acosh", "atanh", "log10", "exp2"]


def _real_unary(kir_op):
    def fn(c):
        if c.meta_of("self")[1].is_complex:
            raise Unsupported(f"Kiln's {kir_op} takes real tensors only")
        return c.emit(kir_op, [c.tensor("self")])

    return fn


for _u in REAL_UNARY:
    op(f"aten.{_u}.default")(_real_unary(_u))


@op("aten.round.default")
def _round(c):
    return c.emit("round", [c.tensor("self")])


@op("aten.round.decimals")
def _round_decimals(c):
    return c.emit("round", [c.tensor("self")], {"decimals": c.a["decimals"]})


@op("aten.gelu.default")
def _gelu(c):
    approx = c.a["approximate"]
    return c.emit("gelu", [c.tensor("self")], {"approximate": approx if approx != "none" else None})


@op("aten.softplus.default")
def _softplus(c):
    return c.emit("softplus", [c.tensor("self")], {"beta": c.a["beta"], "threshold": c.a["threshold"]})


BINARY = {
    "mul": "mul", "div": "div", "remainder": "remainder", "pow": "pow",
    "maximum": "maximum", "minimum": "minimum",
    "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "fmod": "fmod", "gcd": "gcd", "lcm": "lcm", "nextafter": "nextafter",
    "bitwise_left_shift": "bitwise_left_shift", "bitwise_right_shift": "bitwise_right_shift",
    "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
    "special_zeta": "special_zeta",
    "igamma": "igamma", "igammac": "igammac",
}
# torch.special's orthogonal polynomials (x, n): Kiln's op of the same name.
POLYNOMIALS = [f"special_{k}" for k in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")]
BINARY.update({p: p for p in POLYNOMIALS})


def _binary(kir_op):
    def fn(c):
        names = [a.name for a in c.node.target._schema.arguments]
        x, y = c.a[names[0]], c.a[names[1]]
        return c.emit(kir_op, [x, y])

    return fn


for _b, _k in BINARY.items():
    for _ov in ("Tensor", "Scalar", "default", "Tensor_Tensor", "Tensor_Scalar", "Scalar_Tensor",
                "other"):
        op(f"aten.{_b}.{_ov}")(_binary(_k))
op("aten.pow.Scalar")(_binary("pow"))
for _ov in ("self_scalar", "other_scalar"):
    op(f"aten.special_zeta.{_ov}")(_binary("special_zeta"))
for _p in POLYNOMIALS:
    for _ov in ("x_scalar", "n_scalar"):
        op(f"aten.{_p}.{_ov}")(_binary(_p))


def _add_sub(kir_op):
    def fn(c):
        x, y, alpha = c.a["self"], c.a["other"], c.a.get("alpha", 1)
        if not _is_one(alpha):
            if _float_dtype(c.dtype):
                raise Unsupported(
                    f"{kir_op} with alpha={alpha} on floats rounds once in PyTorch "
                    "(x + alpha*y fused); Kiln would round twice")
            y = c.emit("mul", [y, alpha], final=False)
        return c.emit(kir_op, [x, y])

    return fn


for _ov in ("Tensor", "Scalar"):
    op(f"aten.add.{_ov}")(_add_sub("add"))
    op(f"aten.sub.{_ov}")(_add_sub("sub"))


@op("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(c):
    if not _is_one(c.a["alpha"]):
        raise Unsupported("rsub with alpha != 1")
    return c.emit("sub", [c.a["other"], c.a["self"]])


@op("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def _div_mode(c):
    mode = c.a["rounding_mode"]
    return c.emit("div", [c.a["self"], c.a["other"]], {"rounding_mode": mode})


@op("aten.where.self")
def _where(c):
    return c.emit("where", [c.tensor("condition"), c.a["self"], c.a["other"]])


@op("aten.clamp.default")
def _clamp(c):
    return c.emit("clamp", [c.tensor("self")], {"min": c.a["min"], "max": c.a["max"]})


@op("aten.clamp.Tensor")
def _clamp_t(c):
    lo, hi = c.a["min"], c.a["max"]
    return c.emit("clamp", [c.tensor("self"), lo if lo is not None else NONE,
                            hi if hi is not None else NONE])


@op("aten.clamp_min.Tensor")
def _clamp_min_t(c):
    return c.emit("clamp", [c.tensor("self"), c.tensor("min")])


@op("aten.clamp_max.Tensor")
def _clamp_max_t(c):
    return c.emit("clamp", [c.tensor("self"), NONE, c.tensor("max")])


# ---- copies and dtype ----------------------------------------------------

def _check_cpu(c):
    dev = c.a.get("device")
    if dev is not None and torch.device(dev).type != "cpu":
        raise Unsupported(f"a copy to device {dev} (the exporter writes CPU programs)")


@op("aten._to_copy.default")
def _to_copy(c):
    _check_cpu(c)
    if c.a.get("layout") not in (None, torch.strided):
        raise Unsupported(f"layout {c.a['layout']}")
    mf = c.a.get("memory_format")
    attrs = {"dtype": c.a.get("dtype"), "copy": True}
    if mf is not None:
        attrs["memory_format"] = mf
    return c.emit("to", [c.tensor("self")], attrs)


@op("aten.clone.default")
def _clone(c):
    mf = c.a.get("memory_format")
    return c.emit("clone", [c.tensor("self")], {"memory_format": mf})


@op("aten.contiguous.default")
def _contiguous(c):
    return c.emit("contiguous", [c.tensor("self")], {"memory_format": c.a.get("memory_format")})


@op("aten.alias.default", "aten.detach.default", "aten.lift_fresh.default")
def _identity(c):
    return c.tensor("self")


# PyTorch's lazy conjugate and negative bits are resolved by Kiln's values.
@op("aten.resolve_conj.default", "aten.resolve_neg.default")
def _resolve(c):
    return c.tensor("self")


# The parts of complex tensors (Meta's Llama writes rotary embeddings with
# polar, view_as_complex and view_as_real).
for _u, _k in (("real", "real"), ("imag", "imag"), ("_conj", "conj"), ("conj", "conj"),
               ("conj_physical", "conj_physical"), ("angle", "angle"), ("isreal", "isreal"),
               ("view_as_real", "view_as_real"), ("view_as_complex", "view_as_complex")):
    op(f"aten.{_u}.default")(_unary(_k))


# The lazy negation PyTorch gives the imaginary parts of a conjugate view.
op("aten._neg_view.default")(_unary("neg"))


@op("aten.complex.default")
def _complex(c):
    return c.emit("complex", [c.tensor("real"), c.tensor("imag")])


@op("aten.polar.default")
def _polar(c):
    return c.emit("polar", [c.tensor("abs"), c.tensor("angle")])


@op("aten.lift_fresh_copy.default")
def _lift_fresh_copy(c):
    return c.emit("clone", [c.tensor("self")])


@op("aten.copy.default")
def _copy(c):
    # copy(self, src): src's values, broadcast to self's shape, in self's dtype.
    src = c.tensor("src")
    sshape, sdtype = c.meta_of("src")
    if sshape != c.shape:
        src = c.emit("expand", [src], {"shape": list(c.shape)}, final=False,
                     shape=c.shape, dtype=sdtype)
    if sdtype != c.dtype:
        return c.emit("to", [src], {"dtype": c.dtype, "copy": True})
    return c.emit("clone", [src])


# ---- reductions ------------------------------------------------------------

def _reduce(kir_op, dim_key="dim", has_dtype=True):
    def fn(c):
        attrs = {}
        if dim_key is not None:
            d = _dims(c.a.get(dim_key))
            if d is not None:
                attrs["dims"] = d
            attrs["keepdim"] = c.a.get("keepdim") or None
        if has_dtype:
            attrs["dtype"] = c.a.get("dtype")
        return c.emit(kir_op, [c.tensor("self")], attrs)

    return fn


op("aten.sum.dim_IntList")(_reduce("sum"))
op("aten.sum.default")(_reduce("sum", None))
op("aten.mean.dim")(_reduce("mean"))
op("aten.mean.default")(_reduce("mean", None))
op("aten.prod.dim_int")(_reduce("prod"))
op("aten.prod.default")(_reduce("prod", None))
op("aten.amax.default")(_reduce("amax", has_dtype=False))
op("aten.amin.default")(_reduce("amin", has_dtype=False))
op("aten.any.dim", "aten.any.dims")(_reduce("any", has_dtype=False))
op("aten.any.default")(_reduce("any", None, has_dtype=False))
op("aten.all.dim", "aten.all.dims")(_reduce("all", has_dtype=False))
op("aten.all.default")(_reduce("all", None, has_dtype=False))
op("aten.max.default")(_reduce("amax", None, has_dtype=False))
op("aten.min.default")(_reduce("amin", None, has_dtype=False))


@op("aten.argmax.default", "aten.argmin.default")
def _argreduce(c):
    kir_op = c.node.target._schema.name.split("::")[-1]
    return c.emit(kir_op, [c.tensor("self")], {"dim": c.a["dim"], "keepdim": c.a["keepdim"] or None})


@op("aten.max.dim", "aten.min.dim")
def _max_dim(c):
    # values: amax/amin; indices: argmax/argmin (PyTorch: the first extreme
    # in both, NaN counting as the extreme).
    is_max = c.node.target._schema.name.endswith("max")
    x = c.tensor("self")
    attrs = {"dims": [c.a["dim"]], "keepdim": c.a["keepdim"] or None}
    val = c.node.meta.get("val")
    values = c.emit("amax" if is_max else "amin", [x], attrs, final=False,
                    shape=tuple(val[0].shape), dtype=val[0].dtype, hint=c.node.name + "_values")
    indices = c.emit("argmax" if is_max else "argmin", [x],
                     {"dim": c.a["dim"], "keepdim": c.a["keepdim"] or None}, final=False,
                     shape=tuple(val[1].shape), dtype=val[1].dtype, hint=c.node.name + "_indices")
    return (values, indices)


@op("aten.aminmax.default")
def _aminmax(c):
    return tuple(_multi(c, "aminmax", [c.tensor("self")],
                        {"dim": c.a["dim"], "keepdim": c.a["keepdim"] or None}))


def _multi(c, kir_op, operands, attrs):
    val = c.node.meta.get("val")
    n = len(val)
    rs = c.f.emit(kir_op, operands, attrs, hint=c.node.name, results=n)
    if n == 1:
        rs = [rs]
    for r, t in zip(rs, val):
        r.shape, r.dtype = tuple(t.shape), t.dtype
    return rs


@op("aten.topk.default")
def _topk(c):
    return tuple(_multi(c, "topk", [c.tensor("self")],
                        {"k": c.a["k"], "dim": c.a["dim"], "largest": c.a["largest"],
                         "sorted": c.a["sorted"]}))


@op("aten.sort.default", "aten.sort.stable")
def _sort(c):
    return tuple(_multi(c, "sort", [c.tensor("self")],
                        {"dim": c.a["dim"], "descending": c.a["descending"],
                         "stable": c.a.get("stable") or None}))


# ---- composites ----------------------------------------------------------

@op("aten.softmax.int", "aten.log_softmax.int")
def _softmax(c):
    kir_op = c.node.target._schema.name.split("::")[-1]
    return c.emit(kir_op, [c.tensor("self")], {"dim": c.a["dim"], "dtype": c.a.get("dtype")})


@op("aten._softmax.default", "aten._log_softmax.default")
def _softmax_(c):
    kir_op = c.node.target._schema.name.split("::")[-1].lstrip("_")
    dtype = torch.float32 if c.a["half_to_float"] else None
    return c.emit(kir_op, [c.tensor("self")], {"dim": c.a["dim"], "dtype": dtype})


@op("aten._safe_softmax.default")
def _safe_softmax(c):
    # softmax, and 0 for rows that are all -inf (aten/src/ATen/native/
    # transformers/attention.cpp, _safe_softmax).
    x = c.tensor("self")
    dim = c.a["dim"]
    out = c.emit("softmax", [x], {"dim": dim, "dtype": c.a.get("dtype")}, final=False,
                 shape=c.shape, dtype=c.dtype)
    masked = c.emit("eq", [x, float("-inf")], final=False)
    rows = c.emit("all", [masked], {"dims": [dim], "keepdim": True}, final=False)
    return c.emit("where", [rows, 0.0, out])


@op("aten.layer_norm.default")
def _layer_norm(c):
    w, b = c.a["weight"], c.a["bias"]
    operands = [c.tensor("input"), w if w is not None else NONE]
    if b is not None:
        operands.append(b)
    return c.emit("layer_norm", operands,
                  {"normalized_shape": list(c.a["normalized_shape"]), "eps": float(c.a["eps"])})


@op("aten.native_layer_norm.default")
def _native_layer_norm(c):
    users = {u.args[1] for u in c.node.users}
    if users - {0}:
        # The statistics are used: Kiln's native_layer_norm gives them.
        return tuple(_multi(c, "native_layer_norm",
                            [c.tensor("input"), _opt(c, "weight"), _opt(c, "bias")],
                            {"normalized_shape": list(c.a["normalized_shape"]),
                             "eps": float(c.a["eps"])}))
    w, b = c.a["weight"], c.a["bias"]
    operands = [c.tensor("input"), w if w is not None else NONE]
    if b is not None:
        operands.append(b)
    val = c.node.meta["val"][0]
    out = c.emit("layer_norm", operands,
                 {"normalized_shape": list(c.a["normalized_shape"]), "eps": float(c.a["eps"])},
                 shape=tuple(val.shape), dtype=val.dtype)
    return (out, None, None)


@op("aten.scaled_dot_product_attention.default")
def _sdpa(c):
    # aten/src/ATen/native/transformers/attention.cpp,
    # _scaled_dot_product_attention_math (and torch/_decomp's
    # scaled_dot_product_flash_attention_for_cpu, which calls it):
    #   s = sqrt(scale or 1/sqrt(E)); q*s @ (k^T*s); + mask (a bool mask as
    #   where(mask, 0, -inf); is_causal as tril(ones(L, S))); _safe_softmax;
    #   @ v. enable_gqa repeats each k/v head (repeat_interleave on dim -3).
    import math

    if c.a["dropout_p"] not in (0, 0.0):
        raise Unsupported("dropout_p > 0 (random): export in eval mode")
    if c.tr.native_sdpa:
        mask = c.a["attn_mask"]
        return c.emit("scaled_dot_product_attention",
                      [c.tensor("query"), c.tensor("key"), c.tensor("value")]
                      + ([mask] if mask is not None else []),
                      {"is_causal": c.a["is_causal"] or None, "scale": c.a["scale"],
                       "enable_gqa": c.a["enable_gqa"] or None})
    tag = c.node.name.replace("scaled_dot_product_attention", "sdpa")

    q, k, v = c.tensor("query"), c.tensor("key"), c.tensor("value")
    (qshape, qdtype), (kshape, kdtype), (vshape, _) = (c.meta_of("query"), c.meta_of("key"),
                                                       c.meta_of("value"))
    if not qdtype.is_floating_point:
        raise Unsupported(f"sdpa of {qdtype}")
    mask = c.a["attn_mask"]
    is_causal = c.a["is_causal"]
    scale = c.a["scale"]
    L, S, E = qshape[-2], kshape[-2], qshape[-1]
    negative = scale is not None and scale < 0
    base = abs(scale) if negative else (scale if scale is not None else 1.0 / math.sqrt(E))
    factor = math.sqrt(base)
    q = c.emit("mul", [q, (0.0 - factor) if negative else factor], final=False,
               hint=tag + "_q", shape=qshape, dtype=qdtype)
    if is_causal:
        if mask is not None:
            raise Unsupported("is_causal with an attn_mask (PyTorch refuses it)")
        qi = c.emit("arange", [], {"start": 0, "end": L, "dtype": torch.int64}, final=False,
                    hint=tag + "_qi")
        kj = c.emit("arange", [], {"start": 0, "end": S, "dtype": torch.int64}, final=False,
                    hint=tag + "_kj")
        qi = c.emit("unsqueeze", [qi], {"dim": 1}, final=False, hint=tag + "_qi")
        kj = c.emit("unsqueeze", [kj], {"dim": 0}, final=False, hint=tag + "_kj")
        mask = c.emit("le", [kj, qi], final=False, hint=tag + "_causal",
                      shape=(L, S), dtype=torch.bool)
        mdtype = torch.bool
    elif mask is not None:
        mdtype = c.meta_of("attn_mask")[1]
    if mask is not None and mdtype == torch.bool:
        m = c.emit("where", [mask, 0.0, float("-inf")], final=False, hint=tag + "_mask")
        if qdtype != torch.float32:
            m = c.emit("cast", [m], {"dtype": qdtype}, final=False, hint=tag + "_mask")
        mask = m
    elif mask is not None and mdtype != qdtype:
        raise Unsupported(f"a {mdtype} attn_mask with {qdtype} query (PyTorch refuses it)")
    hq, hk = (qshape[-3] if len(qshape) >= 3 else 1), (kshape[-3] if len(kshape) >= 3 else 1)
    if c.a["enable_gqa"] and hq != hk:
        if len(kshape) != 4 or hq % hk:
            raise Unsupported("enable_gqa with these shapes")
        g = hq // hk

        def repeat_heads(t, shape, suffix):
            b, h, s, e = shape
            t = c.emit("unsqueeze", [t], {"dim": 2}, final=False, hint=tag + tag)
            t = c.emit("expand", [t], {"shape": [b, h, g, s, e]}, final=False,
                       hint=tag + tag)
            return c.emit("reshape", [t], {"shape": [b, h * g, s, e]}, final=False,
                          hint=tag + tag)

        k = repeat_heads(k, kshape, "_k")
        v = repeat_heads(v, vshape, "_v")
    kt = c.emit("transpose", [k], {"dim0": -2, "dim1": -1}, final=False, hint=tag + "_kt")
    kt = c.emit("mul", [kt, factor], final=False, hint=tag + "_kt")
    attn = c.emit("matmul", [q, kt], final=False, hint=tag + "_scores")
    if mask is not None:
        attn = c.emit("add", [attn, mask], final=False, hint=tag + "_scores")
    # _safe_softmax: rows that are all -inf give 0, not NaN.
    p = c.emit("softmax", [attn], {"dim": -1}, final=False, hint=tag + "_p")
    masked = c.emit("eq", [attn, float("-inf")], final=False, hint=tag + "_inf")
    rows = c.emit("all", [masked], {"dims": [-1], "keepdim": True}, final=False,
                  hint=tag + "_dead")
    p = c.emit("where", [rows, 0.0, p], final=False, hint=tag + "_p")
    return c.emit("matmul", [p, v])


# ---- matmuls -------------------------------------------------------------

@op("aten.mm.default", "aten.bmm.default", "aten.matmul.default")
def _matmul(c):
    return c.emit("matmul", [c.tensor("self"), c.tensor("mat2" if "mat2" in c.a else "other")])


@op("aten.linear.default")
def _linear(c):
    b = c.a["bias"]
    return c.emit("linear", [c.tensor("input"), c.tensor("weight")] + ([b] if b is not None else []))


@op("aten.tensordot.default")
def _tensordot(c):
    return c.emit("tensordot", [c.tensor("self"), c.tensor("other")],
                  {"dims_self": list(c.a["dims_self"]), "dims_other": list(c.a["dims_other"])})


@op("aten.vdot.default")
def _vdot(c):
    return c.emit("vdot", [c.tensor("self"), c.tensor("other")])


@op("aten.bilinear.default")
def _bilinear(c):
    b = c.a["bias"]
    return c.emit("bilinear", [c.tensor("input1"), c.tensor("input2"), c.tensor("weight")]
                  + ([b] if b is not None else []))


@op("aten.linalg_multi_dot.default")
def _multi_dot(c):
    return c.emit("linalg_multi_dot", [list(c.a["tensors"])])


@op("aten.broadcast_tensors.default")
def _broadcast_tensors(c):
    return tuple(_multi(c, "broadcast_tensors", [list(c.a["tensors"])], {}))


@op("aten.meshgrid.default", "aten.meshgrid.indexing")
def _meshgrid(c):
    return tuple(_multi(c, "meshgrid", [list(c.a["tensors"])],
                        {"indexing": c.a.get("indexing") or "ij"}))


@op("aten.linalg_cross.default")
def _linalg_cross(c):
    return c.emit("linalg_cross", [c.tensor("self"), c.tensor("other")], {"dim": c.a["dim"]})


@op("aten.cross.default")
def _cross(c):
    dim = c.a.get("dim")
    return c.emit("cross", [c.tensor("self"), c.tensor("other")],
                  {} if dim is None else {"dim": dim})


@op("aten._cdist_forward.default")
def _cdist(c):
    # Kiln computes every p directly; PyTorch's matrix-product form for
    # p = 2 (compute_mode 1, or more than 25 rows) rounds differently.
    attrs = {"p": float(c.a["p"])}
    if c.a.get("compute_mode") is not None:
        attrs["compute_mode"] = c.a["compute_mode"]
    return c.emit("cdist", [c.tensor("x1"), c.tensor("x2")], attrs)


@op("aten.addmm.default")
def _addmm(c):
    beta, alpha = c.a["beta"], c.a["alpha"]
    if not _is_one(alpha) or not (_is_one(beta) or beta == 0):
        raise Unsupported(f"addmm with beta={beta}, alpha={alpha} (Kiln has matmul and add)")
    if beta == 0:
        return c.emit("matmul", [c.tensor("mat1"), c.tensor("mat2")])
    y = c.emit("matmul", [c.tensor("mat1"), c.tensor("mat2")], final=False)
    return c.emit("add", [y, c.tensor("self")])


# ---- views and movement ------------------------------------------------

@op("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
    "aten.view_copy.default")
def _reshape(c):
    # reshape: a view where the strides allow one (where PyTorch's `view`
    # succeeded they do), else a copy; the values are the same.
    return c.emit("reshape", [c.tensor("self")], {"shape": list(c.a["size"] if "size" in c.a
                                                               else c.a["shape"])})


@op("aten.permute.default", "aten.permute_copy.default")
def _permute(c):
    return c.emit("permute", [c.tensor("self")], {"dims": list(c.a["dims"])})


@op("aten.transpose.int")
def _transpose(c):
    return c.emit("transpose", [c.tensor("self")], {"dim0": c.a["dim0"], "dim1": c.a["dim1"]})


@op("aten.t.default")
def _t(c):
    return c.emit("t", [c.tensor("self")])


@op("aten.expand.default", "aten.expand_copy.default")
def _expand(c):
    return c.emit("expand", [c.tensor("self")], {"shape": list(c.a["size"])})


@op("aten.unsqueeze.default", "aten.unsqueeze_copy.default")
def _unsqueeze(c):
    return c.emit("unsqueeze", [c.tensor("self")], {"dim": c.a["dim"]})


@op("aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims")
def _squeeze(c):
    return c.emit("squeeze", [c.tensor("self")], {"dims": _dims(c.a.get("dim"))})


@op("aten.flatten.using_ints")
def _flatten(c):
    return c.emit("flatten", [c.tensor("self")], {"start_dim": c.a["start_dim"],
                                                  "end_dim": c.a["end_dim"]})


INT64_MAX = 2**63 - 1


@op("aten.slice.Tensor", "aten.slice_copy.Tensor")
def _slice(c):
    start, end = c.a["start"], c.a["end"]
    if end is not None and end >= INT64_MAX:
        end = None  # "to the end" (PyTorch clamps it)
    return c.emit("slice", [c.tensor("self")], {"dim": c.a["dim"], "start": start, "end": end,
                                                "step": c.a["step"]})


@op("aten.select.int", "aten.select_copy.int")
def _select(c):
    return c.emit("select", [c.tensor("self")], {"dim": c.a["dim"], "index": c.a["index"]})


@op("aten.cat.default")
def _cat(c):
    ts = c.a["tensors"]
    if not all(isinstance(t, V) for t in ts):
        raise Unsupported("cat of non-tensors")
    return c.emit("cat", [list(ts)], {"dim": c.a["dim"]})


@op("aten.stack.default")
def _stack(c):
    return c.emit("stack", [list(c.a["tensors"])], {"dim": c.a["dim"]})


@op("aten.split.Tensor")
def _split(c):
    return _multi(c, "split", [c.tensor("self")], {"split_size": c.a["split_size"],
                                                    "dim": c.a["dim"]})


@op("aten.split_with_sizes.default")
def _split_with_sizes(c):
    return _multi(c, "split_with_sizes", [c.tensor("self")],
                  {"split_sizes": list(c.a["split_sizes"]), "dim": c.a["dim"]})


@op("aten.unbind.int")
def _unbind(c):
    return _multi(c, "unbind", [c.tensor("self")], {"dim": c.a["dim"]})


@op("aten.chunk.default")
def _chunk(c):
    return _multi(c, "chunk", [c.tensor("self")], {"chunks": c.a["chunks"], "dim": c.a["dim"]})


# ---- creation ----------------------------------------------------------

def _creation_checks(c):
    _check_cpu(c)
    if c.a.get("layout") not in (None, torch.strided):
        raise Unsupported(f"layout {c.a['layout']}")


@op("aten.full.default")
def _full(c):
    _creation_checks(c)
    return c.emit("full", [], {"shape": list(c.shape), "value": c.a["fill_value"],
                               "dtype": c.dtype})


@op("aten.zeros.default", "aten.ones.default")
def _zeros_ones(c):
    _creation_checks(c)
    value = 1 if "ones" in op_name(c.node) else 0
    return c.emit("full", [], {"shape": list(c.shape), "value": value, "dtype": c.dtype})


@op("aten.zeros_like.default", "aten.ones_like.default", "aten.full_like.default",
    "aten.empty_like.default")
def _like(c):
    # Kiln's *_like ops lay the result out as empty_like does (the input's
    # strides in preserve format); empty_like is zero-filled.
    _creation_checks(c)
    name = _schema_op(c)
    attrs = {"dtype": c.dtype}
    if name == "full_like":
        attrs["fill_value"] = c.a["fill_value"]
    mf = c.a.get("memory_format")
    if mf is not None:
        attrs["memory_format"] = mf
    return c.emit(name, [c.tensor("self")], attrs)


@op("aten.empty.memory_format")
def _empty(c):
    _creation_checks(c)
    attrs = {"size": list(c.a["size"]), "dtype": c.dtype}
    if c.a.get("memory_format") is not None:
        attrs["memory_format"] = c.a["memory_format"]
    return c.emit("empty", [], attrs)


@op("aten.empty_strided.default")
def _empty_strided(c):
    _creation_checks(c)
    return c.emit("empty_strided", [], {"size": list(c.a["size"]), "stride": list(c.a["stride"]),
                                        "dtype": c.dtype})


@op("aten.logspace.default")
def _logspace(c):
    _creation_checks(c)
    return c.emit("logspace", [], {"start": c.a["start"], "end": c.a["end"], "steps": c.a["steps"],
                                   "base": float(c.a.get("base", 10.0)), "dtype": c.dtype})


@op("aten.tril_indices.default", "aten.triu_indices.default")
def _tri_indices(c):
    _creation_checks(c)
    name = _schema_op(c)
    return c.emit(name, [], {"row": c.a["row"], "col": c.a["col"], "offset": c.a.get("offset", 0),
                             "dtype": c.dtype})


@op("aten.fill.Scalar")
def _fill(c):
    return c.emit("full", [], {"shape": list(c.shape), "value": c.a["value"], "dtype": c.dtype})


@op("aten.scalar_tensor.default")
def _scalar_tensor(c):
    _creation_checks(c)
    return c.emit("full", [], {"shape": [], "value": c.a["s"], "dtype": c.dtype})


@op("aten.arange.start_step", "aten.arange.start", "aten.arange.default")
def _arange(c):
    _creation_checks(c)
    return c.emit("arange", [], {"start": c.a.get("start", 0), "end": c.a["end"],
                                 "step": c.a.get("step", 1), "dtype": c.dtype})


@op("aten.eye.default", "aten.eye.m")
def _eye(c):
    _creation_checks(c)
    return c.emit("eye", [], {"n": c.a["n"], "m": c.a.get("m"), "dtype": c.dtype})


@op("aten.linspace.default")
def _linspace(c):
    _creation_checks(c)
    return c.emit("linspace", [], {"start": c.a["start"], "end": c.a["end"],
                                   "steps": c.a["steps"], "dtype": c.dtype})


# ---- indexing ------------------------------------------------------------

@op("aten.embedding.default")
def _embedding(c):
    # padding_idx, scale_grad_by_freq and sparse change only the gradient.
    attrs = {"padding_idx": c.a["padding_idx"] if c.a["padding_idx"] != -1 else None,
             "scale_grad_by_freq": c.a["scale_grad_by_freq"] or None,
             "sparse": c.a["sparse"] or None}
    return c.emit("embedding", [c.tensor("weight"), c.tensor("indices")], attrs)


# gather and scatter: the index is an operand after `self` (the schema's
# order), `dim` an attribute.
@op("aten.gather.default")
def _gather(c):
    return c.emit("gather", [c.tensor("self"), c.tensor("index")],
                  {"dim": c.a["dim"], "sparse_grad": c.a["sparse_grad"] or None})


@op("aten.scatter.src", "aten.scatter.value")
def _scatter(c):
    src = c.a["src"] if "src" in c.a else c.a["value"]
    return c.emit("scatter", [c.tensor("self"), c.tensor("index"), src], {"dim": c.a["dim"]})


@op("aten.scatter.reduce")
def _scatter_legacy_reduce(c):
    # scatter(..., reduce="add"/"multiply"): scatter_reduce's sum/prod with
    # self included (ATen/native/TensorAdvancedIndexing.cpp).
    reduce = {"add": "sum", "multiply": "prod"}.get(c.a["reduce"])
    if reduce is None:
        raise Unsupported(f"scatter with reduce={c.a['reduce']!r}")
    return c.emit("scatter_reduce", [c.tensor("self"), c.tensor("index"), c.tensor("src")],
                  {"dim": c.a["dim"], "reduce": reduce})


@op("aten.scatter_add.default")
def _scatter_add(c):
    return c.emit("scatter_add", [c.tensor("self"), c.tensor("index"), c.tensor("src")],
                  {"dim": c.a["dim"]})


@op("aten.scatter_reduce.two")
def _scatter_reduce(c):
    return c.emit("scatter_reduce", [c.tensor("self"), c.tensor("index"), c.tensor("src")],
                  {"dim": c.a["dim"], "reduce": c.a["reduce"],
                   "include_self": c.a["include_self"]})


@op("aten.index_add.default")
def _index_add(c):
    return c.emit("index_add", [c.tensor("self"), c.tensor("index"), c.tensor("source")],
                  {"dim": c.a["dim"], "alpha": c.a["alpha"]})


@op("aten.take.default")
def _take(c):
    return c.emit("take", [c.tensor("self"), c.tensor("index")])


def _index_list(c):
    """`Tensor?[] indices`: tensors and `None`s (a bool mask is refused by
    Kiln's inference with a message of its own)."""
    entries = list(c.a["indices"])
    for e in entries:
        if e is not None and not isinstance(e, V):
            raise Unsupported(f"an index that is not a tensor ({e!r})")
    return entries


@op("aten.index.Tensor")
def _index(c):
    return c.emit("index", [c.tensor("self"), _index_list(c)])


@op("aten.index_put.default")
def _index_put(c):
    return c.emit("index_put", [c.tensor("self"), _index_list(c), c.tensor("values")],
                  {"accumulate": c.a.get("accumulate", False) or None})


@op("aten.index_copy.default")
def _index_copy(c):
    return c.emit("index_copy", [c.tensor("self"), c.tensor("index"), c.tensor("source")],
                  {"dim": c.a["dim"]})


@op("aten.index_fill.int_Scalar", "aten.index_fill.int_Tensor")
def _index_fill(c):
    value = c.a["value"]
    return c.emit("index_fill", [c.tensor("self"), c.tensor("index"), value], {"dim": c.a["dim"]})


@op("aten.index_select.default")
def _index_select(c):
    return c.emit("index_select", [c.tensor("self"), c.tensor("index")], {"dim": c.a["dim"]})


# ---- ops Kiln has whole, one to one ----------------------------------------
#
# Kiln writes the ops it added after their ATen schemas (IR.md, "Ops beyond
# this list"): tensor arguments are operands in schema order, the others
# attributes under their schema names. The exceptions are the reductions'
# `dims` (ATen `dim`) and Kiln's `logsigmoid` (ATen `log_sigmoid`).

def _whole(kir_op, operands=("self",), attrs=(), rename=None, multi=False):
    """A translation to Kiln's `kir_op`: `operands` are the schema's
    argument names (tensors, or Scalars that become literals), `attrs` the
    schema names passed on (`rename` maps a schema name to Kiln's)."""
    rename = rename or {}

    def fn(c):
        ops = [c.a[n] for n in operands]
        for n, v in zip(operands, ops):
            if v is None:
                raise Unsupported(f"argument '{n}' is None")
        at = {}
        for n in attrs:
            v = c.a.get(n)
            if isinstance(v, tuple):
                v = list(v)
            at[rename.get(n, n)] = v
        if multi:
            return tuple(_multi(c, kir_op, ops, at))
        return c.emit(kir_op, ops, at)

    return fn


def _schema_op(c):
    return c.node.target._schema.name.split("::")[-1]


# Activations (torch.nn.functional) and pointwise functions.
for _name, _attrs in [
    ("elu", ("alpha", "scale", "input_scale")), ("selu", ()), ("celu", ("alpha",)),
    ("leaky_relu", ("negative_slope",)), ("hardtanh", ("min_val", "max_val")),
    ("relu6", ()), ("hardsigmoid", ()), ("mish", ()), ("softshrink", ("lambd",)),
    ("hardshrink", ("lambd",)), ("threshold", ("threshold", "value")), ("glu", ("dim",)),
    ("square", ()), ("isinf", ()), ("isfinite", ()), ("isposinf", ()), ("isneginf", ()),
    ("frac", ()), ("deg2rad", ()), ("rad2deg", ()), ("logit", ("eps",)),
    ("nan_to_num", ("nan", "posinf", "neginf")), ("sinc", ()),
    ("clamp_min", ("min",)), ("clamp_max", ("max",)),
]:
    op(f"aten.{_name}.default")(_whole(_name, attrs=_attrs))

op("aten.log_sigmoid.default")(_whole("logsigmoid"))


@op("aten.rrelu.default")
def _rrelu(c):
    # Eval mode: leaky_relu with slope (lower + upper) / 2; training draws
    # random slopes.
    if c.a["training"]:
        raise Unsupported("rrelu in training mode is random: export in eval mode")
    return c.emit("rrelu", [c.tensor("self")], {"lower": c.a["lower"], "upper": c.a["upper"]})


# Pointwise functions of several operands (a Scalar operand is a literal).
for _q in ("xlogy.Tensor", "xlogy.Scalar_Self", "xlogy.Scalar_Other",
           "special_xlog1py.default", "special_xlog1py.self_scalar",
           "special_xlog1py.other_scalar", "fmax.default", "fmin.default",
           "logaddexp.default", "true_divide.Tensor", "true_divide.Scalar",
           "floor_divide.default", "floor_divide.Scalar"):
    op(f"aten.{_q}")(_whole(_q.split(".")[0], ("self", "other")))
for _q in ("float_power.Tensor_Tensor", "float_power.Tensor_Scalar", "float_power.Scalar"):
    op(f"aten.{_q}")(_whole("float_power", ("self", "exponent")))
op("aten.heaviside.default")(_whole("heaviside", ("self", "values")))
op("aten.atan2.default", "aten.arctan2.default")(_whole("atan2", ("self", "other")))
op("aten.sgn.default")(_whole("sgn"))
op("aten.polygamma.default")(_whole("polygamma", ("self",), ("n",)))
for _q in ("hypot.default", "logaddexp2.default", "ldexp.Tensor", "copysign.Tensor",
           "copysign.Scalar"):
    op(f"aten.{_q}")(_whole(_q.split(".")[0], ("self", "other")))
op("aten.lerp.Scalar", "aten.lerp.Tensor")(_whole("lerp", ("self", "end", "weight")))
op("aten.addcmul.default")(_whole("addcmul", ("self", "tensor1", "tensor2"), ("value",)))
op("aten.addcdiv.default")(_whole("addcdiv", ("self", "tensor1", "tensor2"), ("value",)))


# Statistics and scans.
def _stat(kir_op, attrs, multi=False):
    def fn(c):
        at = {"dims": _dims(c.a["dim"]) or None}
        for n in attrs:
            at[n] = c.a.get(n)
        if at.get("keepdim") is False:
            at["keepdim"] = None
        if multi:
            return tuple(_multi(c, kir_op, [c.tensor("self")], at))
        return c.emit(kir_op, [c.tensor("self")], at)

    return fn


op("aten.var.correction")(_stat("var", ("correction", "keepdim")))
op("aten.std.correction")(_stat("std", ("correction", "keepdim")))
op("aten.var_mean.correction")(_stat("var_mean", ("correction", "keepdim"), multi=True))
op("aten.std_mean.correction")(_stat("std_mean", ("correction", "keepdim"), multi=True))
op("aten.nansum.default")(_stat("nansum", ("keepdim", "dtype")))
op("aten.nanmean.default")(_stat("nanmean", ("keepdim", "dtype")))
op("aten.linalg_vector_norm.default")(_stat("linalg_vector_norm", ("ord", "keepdim", "dtype")))
op("aten.count_nonzero.default", "aten.count_nonzero.dim_IntList")(_stat("count_nonzero", ()))


@op("aten.dist.default")
def _dist(c):
    # at::dist(x, y, p) is at::norm(x - y, p) (ATen/native/Distance.cpp).
    d = c.emit("sub", [c.tensor("self"), c.tensor("other")], final=False)
    return c.emit("linalg_vector_norm", [d], {"ord": c.a["p"]})


@op("aten.logsumexp.default")
def _logsumexp(c):
    return c.emit("logsumexp", [c.tensor("self")],
                  {"dims": _dims(c.a["dim"]), "keepdim": c.a["keepdim"] or None})


for _name, _attrs in [("cumsum", ("dim", "dtype")), ("cumprod", ("dim", "dtype")),
                      ("logcumsumexp", ("dim",))]:
    op(f"aten.{_name}.default")(_whole(_name, attrs=_attrs))
op("aten.cummax.default")(_whole("cummax", attrs=("dim",), multi=True))
op("aten.kthvalue.default")(_whole("kthvalue", attrs=("k", "dim", "keepdim"), multi=True))
op("aten.mode.default")(_whole("mode", attrs=("dim", "keepdim"), multi=True))
op("aten.median.dim")(_whole("median", attrs=("dim", "keepdim"), multi=True))
op("aten.nanmedian.dim")(_whole("nanmedian", attrs=("dim", "keepdim"), multi=True))
op("aten.median.default")(_whole("median"))
op("aten.nanmedian.default")(_whole("nanmedian"))
op("aten.cummin.default")(_whole("cummin", attrs=("dim",), multi=True))


# Shapes.
for _q, _attrs in [
    ("narrow.default", ("dim", "start", "length")),
    ("movedim.int", ("source", "destination")),
    ("movedim.intlist", ("source", "destination")),
    ("broadcast_to.default", ("size",)), ("unflatten.int", ("dim", "sizes")),
    ("atleast_1d.default", ()), ("atleast_2d.default", ()), ("atleast_3d.default", ()),
    ("roll.default", ("shifts", "dims")), ("repeat.default", ("repeats",)),
    ("tile.default", ("dims",)), ("tril.default", ("diagonal",)),
    ("triu.default", ("diagonal",)), ("flip.default", ("dims",)), ("fliplr.default", ()),
    ("flipud.default", ()), ("constant_pad_nd.default", ("pad", "value")),
    # Functional writes into slices (F.pad's circular mode, x[a:b] = y).
    ("slice_scatter.default", ("dim", "start", "end", "step")),
    ("select_scatter.default", ("dim", "index")),
    ("pixel_shuffle.default", ("upscale_factor",)),
    ("pixel_unshuffle.default", ("downscale_factor",)),
    ("channel_shuffle.default", ("groups",)),
    # Diagonals, windows and strided views.
    ("diagonal.default", ("offset", "dim1", "dim2")), ("diag.default", ("diagonal",)),
    ("diag_embed.default", ("offset", "dim1", "dim2")), ("diagflat.default", ("offset",)),
    ("diagonal_scatter.default", ("offset", "dim1", "dim2")),
    ("unfold.default", ("dimension", "size", "step")),
    ("as_strided.default", ("size", "stride", "storage_offset")),
    # F.pad's reflect and replicate modes.
    *[(f"{m}_pad{k}d.default", ("padding",)) for m in ("reflection", "replication")
      for k in (1, 2, 3)],
]:
    _operands = ("self", "src") if "scatter" in _q else ("self",)
    op(f"aten.{_q}")(_whole(_q.split(".")[0], operands=_operands, attrs=_attrs))


# Convolution, pooling and resampling: Kiln has ATen's ops whole.
def _opt(c, name):
    v = c.a.get(name)
    return v if v is not None else NONE


def _ints(v):
    return [v] if isinstance(v, int) else list(v)


@op("aten.convolution.default")
def _convolution(c):
    return c.emit("convolution", [c.tensor("input"), c.tensor("weight"), _opt(c, "bias")],
                  {k: (_ints(c.a[k]) if k != "transposed" and k != "groups" else c.a[k])
                   for k in ("stride", "padding", "dilation", "transposed", "output_padding",
                             "groups")})


def _conv(kir_op, names):
    def fn(c):
        # Lists of ints as lists; `groups` and a padding string as they are.
        attrs = {n: c.a[n] if n == "groups" or isinstance(c.a[n], str) else _ints(c.a[n])
                 for n in names}
        return c.emit(kir_op, [c.tensor("input"), c.tensor("weight"), _opt(c, "bias")], attrs)

    return fn


for _n in (1, 2, 3):
    for _ov in ("default", "padding"):
        op(f"aten.conv{_n}d.{_ov}")(_conv(f"conv{_n}d", ("stride", "padding", "dilation", "groups")))
    op(f"aten.conv_transpose{_n}d.input")(_conv(
        f"conv_transpose{_n}d", ("stride", "padding", "output_padding", "groups", "dilation")))


@op("aten._native_batch_norm_legit_no_training.default")
def _batch_norm_eval(c):
    # Eval mode: the normalized input; the saved statistics are empty.
    y = c.emit("batch_norm", [c.tensor("input"), _opt(c, "weight"), _opt(c, "bias"),
                              c.tensor("running_mean"), c.tensor("running_var")],
               {"momentum": c.a["momentum"], "eps": c.a["eps"]}, final=False, hint=c.node.name)
    val = c.node.meta.get("val")
    y.shape, y.dtype = tuple(val[0].shape), val[0].dtype
    empty = [c.emit("zeros", [], {"shape": [0], "dtype": t.dtype}, final=False,
                    hint=c.node.name + "_saved", shape=(0,), dtype=t.dtype) for t in val[1:]]
    for e in empty:
        e.shape, e.dtype = (0,), val[1].dtype
    return (y, *empty)


@op("aten.batch_norm.default")
def _batch_norm(c):
    if c.a["training"]:
        raise Unsupported("batch_norm in training mode (export in eval mode)")
    return c.emit("batch_norm", [c.tensor("input"), _opt(c, "weight"), _opt(c, "bias"),
                                 _opt(c, "running_mean"), _opt(c, "running_var")],
                  {"momentum": c.a["momentum"], "eps": c.a["eps"]})


def _pool(kir_op, names, multi=False):
    def fn(c):
        # Sizes as lists; flags and divisor_override as they are.
        attrs = {n: c.a.get(n) if isinstance(c.a.get(n), bool) or c.a.get(n) is None
                 or n == "divisor_override" else _ints(c.a[n]) for n in names}
        if multi:
            return tuple(_multi(c, kir_op, [c.tensor("self")], attrs))
        return c.emit(kir_op, [c.tensor("self")], attrs)

    return fn


_MAX = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")
for _n in (1, 2, 3):
    op(f"aten.max_pool{_n}d.default")(_pool(f"max_pool{_n}d", _MAX))
    op(f"aten.max_pool{_n}d_with_indices.default")(
        _pool(f"max_pool{_n}d_with_indices", _MAX, multi=True))
    _avg = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad") + \
        (("divisor_override",) if _n > 1 else ())
    op(f"aten.avg_pool{_n}d.default")(_pool(f"avg_pool{_n}d", _avg))
    for _q in (f"adaptive_avg_pool{_n}d", f"_adaptive_avg_pool{_n}d"):
        op(f"aten.{_q}.default")(_pool(f"adaptive_avg_pool{_n}d", ("output_size",)))
    op(f"aten.adaptive_max_pool{_n}d.default")(
        _pool(f"adaptive_max_pool{_n}d", ("output_size",), multi=True))

_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}
_UPSAMPLE = [("upsample_nearest", 1, False), ("upsample_nearest", 2, False),
             ("upsample_nearest", 3, False), ("_upsample_nearest_exact", 1, False),
             ("_upsample_nearest_exact", 2, False), ("_upsample_nearest_exact", 3, False),
             ("upsample_linear", 1, True), ("upsample_bilinear", 2, True),
             ("upsample_bicubic", 2, True), ("upsample_trilinear", 3, True)]


def _upsample(kir_op, n, corners):
    def fn(c):
        # The .vec overloads give the output size or the scale factors;
        # the size comes from the node's shape either way.
        attrs = {"output_size": list(c.shape[-n:])}
        if corners:
            attrs["align_corners"] = c.a["align_corners"]
        if "scale_factors" in c.a:
            scales = c.a["scale_factors"] or [None] * n
        else:
            scales = [c.a.get(k) for k in _SCALES[n]]
        for k, v in zip(_SCALES[n], scales):
            attrs[k] = v
        return c.emit(kir_op, [c.tensor("self" if "self" in c.a else "input")], attrs)

    return fn


for _base, _n, _corners in _UPSAMPLE:
    for _ov in ("default", "vec"):
        op(f"aten.{_base}{_n}d.{_ov}")(_upsample(f"{_base}{_n}d", _n, _corners))



@op("aten.max_unpool2d.default")
def _max_unpool2d(c):
    return c.emit("max_unpool2d", [c.tensor("self"), c.tensor("indices")],
                  {"output_size": _ints(c.a["output_size"])})


@op("aten.max_unpool3d.default")
def _max_unpool3d(c):
    return c.emit("max_unpool3d", [c.tensor("self"), c.tensor("indices")],
                  {k: _ints(c.a[k]) for k in ("output_size", "stride", "padding")})


@op("aten.im2col.default")
def _im2col(c):
    return c.emit("im2col", [c.tensor("self")],
                  {k: _ints(c.a[k]) for k in ("kernel_size", "dilation", "padding", "stride")})


@op("aten.col2im.default")
def _col2im(c):
    return c.emit("col2im", [c.tensor("self")],
                  {k: _ints(c.a[k]) for k in ("output_size", "kernel_size", "dilation", "padding",
                                              "stride")})


@op("aten.grid_sampler_2d.default", "aten.grid_sampler_3d.default")
def _grid_sampler(c):
    name = _schema_op(c)
    return c.emit(name, [c.tensor("input"), c.tensor("grid")],
                  {k: c.a[k] for k in ("interpolation_mode", "padding_mode", "align_corners")})


@op("aten.affine_grid_generator.default")
def _affine_grid(c):
    return c.emit("affine_grid_generator", [c.tensor("theta")],
                  {"size": _ints(c.a["size"]), "align_corners": c.a["align_corners"]})


# ---- issue 16's remaining ops ----------------------------------------------

def _tensor_or_number(c, name):
    v = c.a[name]
    return v if isinstance(v, (V, bool, int, float)) else c.tensor(name)


@op("aten.searchsorted.Tensor", "aten.searchsorted.Scalar")
def _searchsorted(c):
    sorter = c.a.get("sorter")
    return c.emit("searchsorted",
                  [c.tensor("sorted_sequence"), _tensor_or_number(c, "self"),
                   sorter if sorter is not None else NONE],
                  {"out_int32": c.a["out_int32"], "right": c.a["right"], "side": c.a.get("side")})


@op("aten.bucketize.Tensor", "aten.bucketize.Scalar")
def _bucketize(c):
    return c.emit("bucketize", [_tensor_or_number(c, "self"), c.tensor("boundaries")],
                  {"out_int32": c.a["out_int32"], "right": c.a["right"]})


@op("aten.masked_scatter.default")
def _masked_scatter(c):
    return c.emit("masked_scatter", [c.tensor("self"), c.tensor("mask"), c.tensor("source")])


@op("aten.prelu.default", "aten._prelu_kernel.default")
def _prelu(c):
    return c.emit("prelu", [c.tensor("self"), c.tensor("weight")])


@op("aten.native_group_norm.default")
def _native_group_norm(c):
    return tuple(_multi(c, "native_group_norm",
                        [c.tensor("input"), _opt(c, "weight"), _opt(c, "bias")],
                        {"n": c.a["N"], "c": c.a["C"], "hxw": c.a["HxW"], "group": c.a["group"],
                         "eps": float(c.a["eps"])}))


@op("aten._native_batch_norm_legit.no_stats", "aten.native_batch_norm.default")
def _native_batch_norm(c):
    # Without running statistics (or in evaluation) nothing is updated in
    # place: Kiln's native_batch_norm computes the same three results.
    running = [c.a.get("running_mean"), c.a.get("running_var")]
    if c.a["training"] and any(r is not None for r in running):
        raise Unsupported("batch_norm's running statistics' update in training mode "
                          "(export in eval mode)")
    operands = [c.tensor("input"), _opt(c, "weight"), _opt(c, "bias")]
    operands += [r if r is not None else NONE for r in running]
    return tuple(_multi(c, "native_batch_norm", operands,
                        {"training": c.a["training"], "momentum": float(c.a["momentum"]),
                         "eps": float(c.a["eps"])}))


@op("aten._embedding_bag_forward_only.default", "aten._embedding_bag.default",
    "aten.embedding_bag.padding_idx")
def _embedding_bag(c):
    # ATen's -1 (and any negative) padding_idx means none.
    pad = c.a.get("padding_idx")
    psw = c.a.get("per_sample_weights")
    return tuple(_multi(c, "embedding_bag",
                        [c.tensor("weight"), c.tensor("indices"), c.tensor("offsets"),
                         psw if psw is not None else NONE],
                        {"mode": c.a["mode"], "include_last_offset": c.a["include_last_offset"],
                         "padding_idx": pad if pad is not None and pad >= 0 else None}))


SUPPORTED = sorted(REGISTRY)
