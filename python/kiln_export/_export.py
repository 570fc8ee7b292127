"""torch.export -> `.kir` + safetensors: the driver.

`export()` runs `torch.export.export`, decomposes to core ATen (keeping
the higher-level ops Kiln has, see `KEEP`), then walks the FX graph node
by node and emits one `.kir` function `@main`. The op translations live in
`_ops.py`.

Input-independent subgraphs (nodes that depend on no parameter, buffer or
user input, e.g. the causal mask transformers builds from `arange`) are
translated like the rest where Kiln has their ops; where it does not (an
`index.Tensor` of constants), PyTorch evaluates them at export
time and the value enters the program as a `full` (when all its elements
are equal) or as an extra weight named `_const.<node>` (broadcast dims
stored once and `expand`ed). Shapes are static, so this is exact; random
ops are never folded.
"""

from __future__ import annotations

import json
import os
import operator
from dataclasses import dataclass, field

import torch
from torch.export.graph_signature import InputKind, OutputKind

from . import _kir
from ._kir import V, Func, Names, sanitize


class ExportError(Exception):
    """The module cannot be exported to Kiln."""


class UnsupportedOpError(ExportError):
    """An ATen op has no exact translation to Kiln."""

    def __init__(self, op: str, node: str, reason: str, where: str | None):
        self.op, self.node, self.reason, self.where = op, node, reason, where
        msg = f"{op} (FX node '{node}') has no exact translation to Kiln: {reason}"
        if where:
            msg += f"\n  from: {where}"
        super().__init__(msg)


class Unsupported(Exception):
    """Raised by an op translation: the reason it cannot translate."""


aten = torch.ops.aten

# Ops the default decomposition table would lower that Kiln has as one op
# (or that `_ops.py` translates exactly): they stay in the graph.
_KEEP_NAMES = [
    "layer_norm.default",
    "softmax.int",
    "log_softmax.int",
    "silu.default",
    "hardswish.default",
    "softplus.default",
    "linear.default",
    "matmul.default",
    # Products Kiln has whole (issue 16): the default table would lower
    # them to permutes, views, mm, mul and sum (bilinear to _trilinear).
    "tensordot.default",
    "vdot.default",
    "bilinear.default",
    "linalg_multi_dot.default",
    "linalg_cross.default",
    "cross.default",
    # Translated in _ops.py as PyTorch's math reference computes it (the
    # default decomposition also fails on transformers' GPT-2: its result
    # has other strides than the fused CPU kernel's, and a later view breaks).
    "scaled_dot_product_attention.default",
    # z/|z| of complex tensors (the default table lowers it to an
    # expression over the real and imaginary parts, which Kiln lacks).
    "sgn.default",
    "stack.default",
    "split.Tensor",
    "unbind.int",
    "chunk.default",
    "aminmax.default",
    "all.default",
    "all.dim",
    "all.dims",
    "t.default",
    "transpose.int",
    "squeeze.default",
    "squeeze.dim",
    "squeeze.dims",
    "flatten.using_ints",
    "zeros.default",
    "ones.default",
    "zeros_like.default",
    "ones_like.default",
    # Kiln's activations, pointwise composites, statistics and shape ops,
    # with PyTorch's values (its f16/bf16 opmath included), rather than the
    # decompositions' written-out forms. (run_decompositions lowers the
    # view composites narrow, movedim, broadcast_to, unflatten, atleast_Nd
    # to slice/permute/expand/view/unsqueeze, and softshrink and hardshrink
    # through their Autograd kernels, whatever the table says: exact too.)
    "selu.default",
    "celu.default",
    "rrelu.default",
    "relu6.default",
    "hardsigmoid.default",
    "mish.default",
    "threshold.default",
    "log_sigmoid.default",
    "glu.default",
    "square.default",
    "isfinite.default",
    "isposinf.default",
    "isneginf.default",
    "frac.default",
    "deg2rad.default",
    "rad2deg.default",
    "logit.default",
    "nan_to_num.default",
    "sinc.default",
    "xlogy.Tensor",
    "xlogy.Scalar_Self",
    "xlogy.Scalar_Other",
    "special_xlog1py.default",
    "special_xlog1py.self_scalar",
    "special_xlog1py.other_scalar",
    "heaviside.default",
    "logaddexp.default",
    "logaddexp2.default",
    "lerp.Scalar",
    "lerp.Tensor",
    "addcmul.default",
    "addcdiv.default",
    "clamp_min.default",
    "clamp_max.default",
    "float_power.Tensor_Tensor",
    "float_power.Tensor_Scalar",
    "float_power.Scalar",
    "true_divide.Tensor",
    "true_divide.Scalar",
    "floor_divide.default",
    "floor_divide.Scalar",
    "std.correction",
    "std_mean.correction",
    "logsumexp.default",
    "nansum.default",
    "nanmean.default",
    "count_nonzero.default",
    "count_nonzero.dim_IntList",
    "linalg_vector_norm.default",
    # Convolution, pooling and resampling as ATen's ops (not lowered to
    # `convolution` and `*_with_indices`: the `.kir` reads as the module).
    "conv1d.default", "conv2d.default", "conv3d.default",
    "conv1d.padding", "conv2d.padding", "conv3d.padding",
    "conv_transpose1d.input", "conv_transpose2d.input", "conv_transpose3d.input",
    "max_pool1d.default", "max_pool2d.default", "max_pool3d.default",
    "avg_pool1d.default", "adaptive_avg_pool1d.default", "adaptive_avg_pool2d.default",
    "adaptive_avg_pool3d.default",
    "upsample_nearest1d.vec", "upsample_nearest2d.vec", "upsample_nearest3d.vec",
    "_upsample_nearest_exact1d.vec", "_upsample_nearest_exact2d.vec",
    "_upsample_nearest_exact3d.vec", "upsample_linear1d.vec", "upsample_bilinear2d.vec",
    "upsample_bicubic2d.vec", "upsample_trilinear3d.vec",
    "im2col.default", "col2im.default", "grid_sampler_2d.default", "grid_sampler_3d.default",
    "affine_grid_generator.default", "max_unpool2d.default", "max_unpool3d.default",
    "roll.default",
    "tile.default",
    "tril.default",
    "triu.default",
    "fliplr.default",
    "flipud.default",
    "index.Tensor",
    "index_put.default",
    "slice_scatter.default", "select_scatter.default",
    "pixel_shuffle.default", "pixel_unshuffle.default", "channel_shuffle.default",
    "eye.default", "eye.m", "linspace.default",
    "diag.default", "diagflat.default", "diag_embed.default", "diagonal_scatter.default",
    "meshgrid.default", "meshgrid.indexing", "broadcast_tensors.default",
    "logspace.default", "tril_indices.default", "triu_indices.default",
    "full_like.default", "empty_like.default",
    "reflection_pad1d.default", "reflection_pad2d.default", "reflection_pad3d.default",
    "replication_pad1d.default", "replication_pad2d.default", "replication_pad3d.default",
    "index_copy.default",
    "index_fill.int_Scalar",
    "index_fill.int_Tensor",
    "index_add.default",
    "take.default",
    # Issue 16's remaining ops.
    "masked_scatter.default",
    "prelu.default",
    "_prelu_kernel.default",
]


def keep_ops():
    out = []
    for qual in _KEEP_NAMES:
        name, overload = qual.split(".")
        packet = getattr(aten, name, None)
        if packet is not None and hasattr(packet, overload):
            out.append(getattr(packet, overload))
    return out


def decomposition_table():
    table = torch.export.default_decompositions()
    for op in keep_ops():
        table.pop(op, None)
    return table


# Nodes with no value: dropped.
_SKIP = {
    "aten._assert_tensor_metadata.default",
    "aten._assert_scalar.default",
    "aten.sym_constrain_range.default",
    "aten.sym_constrain_range_for_size.default",
    "aten._assert_async.msg",
    "aten._assert_async.default",
}


def _user_line(node) -> str | None:
    """The user code line from the node's stack trace: the last
    `File "...", line N, in f` frame and its source line."""
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    lines = [l for l in trace.strip().splitlines() if l.strip()]
    frames = []
    for i, l in enumerate(lines):
        s = l.strip()
        if s.startswith("File "):
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if code.startswith("File "):
                code = ""
            frames.append(f"{s}: {code}" if code else s)
    if not frames:
        return lines[-1].strip() if lines else None
    # The innermost frame outside PyTorch itself (nn.Linear's forward is
    # not the line to fix).
    torch_dir = os.path.dirname(torch.__file__)
    for fr in reversed(frames):
        if torch_dir not in fr:
            return fr
    return frames[-1]


def op_name(node) -> str:
    t = node.target
    if isinstance(t, torch._ops.OpOverload):
        return f"aten.{t._schema.name.split('::')[-1]}.{t._overloadname}" if t.namespace == "aten" \
            else str(t)
    return getattr(t, "__name__", str(t))


@dataclass
class ExportResult:
    """What `export` wrote."""

    kir: str
    # .kir parameter name -> where its value comes from: the state-dict name
    # (parameters, buffers, lifted constants), "input" for user inputs, or a
    # description for constants folded at export time.
    params: dict = field(default_factory=dict)
    user_inputs: list = field(default_factory=list)  # .kir names, in order
    outputs: list = field(default_factory=list)  # .kir types of out0, out1, ...
    folded: list = field(default_factory=list)  # FX nodes evaluated at export time
    weights: dict = field(default_factory=dict)  # safetensors name -> tensor
    example_inputs: dict = field(default_factory=dict)  # user input .kir name -> example


class _Folded:
    """An input-independent node that is not (yet) in the program."""


FOLDED = _Folded()


class Translator:
    def __init__(self, ep: torch.export.ExportedProgram, *, native_sdpa=True):
        self.ep = ep
        self.native_sdpa = native_sdpa
        self.gm = ep.graph_module
        self.f = Func()
        self.env: dict = {}  # fx.Node -> V | tuple | python value | FOLDED
        self.const: dict = {}  # fx.Node -> bool: depends on no placeholder
        self.const_vals: dict = {}  # fx.Node -> concrete value
        self.weights: dict = {}  # kir name -> tensor
        self.origin: dict = {}  # kir name -> description
        self.folded_params: list = []
        self.folded_nodes: list = []
        self.materialized: dict = {}
        self.node = None

    # ---- values -------------------------------------------------------
    def meta(self, node):
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            return tuple(int(d) for d in val.shape), val.dtype
        return None, None

    def value(self, arg):
        """An FX argument as a .kir operand: V, python scalar, list, None."""
        if isinstance(arg, torch.fx.Node):
            v = self.env.get(arg, None)
            if v is FOLDED:
                return self.materialize(arg)
            if arg not in self.env:
                raise Unsupported(f"its operand '{arg.name}' was not translated")
            return v
        if isinstance(arg, (list, tuple)):
            return [self.value(a) for a in arg]
        if isinstance(arg, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise Unsupported("dynamic shapes are not supported (export with static shapes)")
        return arg

    def const_value(self, node):
        """The concrete value of an input-independent node, computed by
        PyTorch (memoized)."""
        if node in self.const_vals:
            return self.const_vals[node]
        order = []
        stack, seen = [node], set()
        while stack:
            n = stack.pop()
            if n in seen or n in self.const_vals:
                continue
            seen.add(n)
            order.append(n)
            stack.extend(n.all_input_nodes)
        index = {n: i for i, n in enumerate(self.gm.graph.nodes)}
        for n in sorted(order, key=index.__getitem__):
            if n.op == "placeholder":
                self.const_vals[n] = self.placeholder_const[n]
                continue
            args = torch.fx.node.map_arg(n.args, lambda a: self.const_vals[a])
            kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: self.const_vals[a])
            self.const_vals[n] = n.target(*args, **kwargs)
        return self.const_vals[node]

    def materialize(self, node) -> V:
        """An input-independent value as a `full` or an extra weight."""
        if node in self.materialized:
            return self.materialized[node]
        try:
            t = self.const_value(node)
        except Exception as e:  # noqa: BLE001 - reported as the consumer's error
            raise Unsupported(f"its input-independent operand '{node.name}' "
                              f"({op_name(node)}) could not be evaluated: {e}") from None
        if not isinstance(t, torch.Tensor):
            raise Unsupported(f"operand '{node.name}' is not a tensor")
        t = t.detach()
        shape, dtype = tuple(t.shape), t.dtype
        what = f"{op_name(node)} at FX node '{node.name}'"
        flat = t.reshape(-1)
        if (t.numel() > 0 and not t.is_complex()
                and torch.equal(flat, flat[:1].expand_as(flat))):
            v = self.f.emit("full", [], {"shape": list(shape), "value": flat[0].item(),
                                         "dtype": dtype},
                            hint=node.name, shape=shape, dtype=dtype,
                            comment=f"folded at export: {what}")
        else:
            reduced = t
            for d in range(t.dim()):
                if reduced.shape[d] > 1:
                    first = reduced.narrow(d, 0, 1)
                    if torch.equal(reduced, first.expand_as(reduced)):
                        reduced = first
            name = self.f.names.take("_const." + node.name)
            p = V(name, tuple(reduced.shape), dtype)
            self.folded_params.append(p)
            self.weights[name] = reduced.contiguous().clone()
            self.origin[name] = f"folded at export: {what}"
            v = p
            if tuple(reduced.shape) != shape:
                v = self.f.emit("expand", [p], {"shape": list(shape)}, hint=node.name,
                                shape=shape, dtype=dtype)
        self.folded_nodes.append(node.name)
        self.materialized[node] = v
        return v

    # ---- the walk -----------------------------------------------------
    def run(self) -> ExportResult:
        from . import _ops

        sig = self.ep.graph_signature
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(sig.input_specs):
            raise ExportError("the graph's placeholders do not match its signature")
        state = dict(self.ep.state_dict)
        state.update(self.ep.constants)
        self.placeholder_const = {}
        weight_params, user_params = [], []
        self.user_index = {}  # kir name -> position among the user inputs
        n_user = 0
        names = self.f.names
        # Reserve the state-dict names first so that they are kept as they are.
        for node, spec in zip(placeholders, sig.input_specs):
            if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                target = spec.target
                value = state.get(target)
                if not isinstance(value, torch.Tensor):
                    raise ExportError(f"no tensor for {spec.kind.name.lower()} '{target}'")
                value = value.detach()
                name = names.take(target)
                p = V(name, tuple(value.shape), value.dtype)
                self.env[node] = p
                self.const[node] = False
                weight_params.append(p)
                self.weights[name] = value
                self.origin[name] = target
            elif spec.kind == InputKind.USER_INPUT:
                n_user += 1
                val = node.meta.get("val")
                if isinstance(val, torch.Tensor):
                    shape, dtype = self.meta(node)
                    if any(not isinstance(d, int) for d in val.shape):
                        raise ExportError("dynamic shapes are not supported")
                    p = V(names.take(node.name), shape, dtype)
                    self.env[node] = p
                    self.const[node] = False
                    user_params.append(p)
                    self.origin[p.name] = "input"
                    self.user_index[p.name] = n_user - 1
                else:
                    # A non-tensor input (use_cache=False): specialized.
                    self.env[node] = val
                    self.const[node] = True
                    self.placeholder_const[node] = val
            else:
                raise ExportError(f"unsupported graph input kind {spec.kind.name} ({node.name})")
        for spec in sig.output_specs:
            if spec.kind != OutputKind.USER_OUTPUT:
                raise ExportError(
                    f"the module mutates state ({spec.kind.name} of '{spec.target}'): "
                    "Kiln programs are pure; export in eval mode without in-place buffer updates")
        for p in weight_params + user_params:
            _kir.dtype_name(p.dtype)

        results = None
        for node in self.gm.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                continue
            if node.op == "output":
                results = self.outputs(node)
                continue
            if node.op != "call_function":
                raise self.error(node, f"FX {node.op} nodes are not supported")
            if op_name(node) in _SKIP:
                continue
            inputs = node.all_input_nodes
            is_const = all(self.const.get(n, False) for n in inputs)
            if is_const and _nondeterministic(node):
                is_const = False
            self.const[node] = is_const
            if is_const and any(self.env.get(n) is FOLDED for n in inputs):
                self.env[node] = FOLDED
                continue
            if node.target is operator.getitem:
                src, idx = node.args
                self.env[node] = self.value(src)[idx]
                continue
            try:
                out = _ops.translate(self, node)
            except Unsupported as e:
                if is_const:
                    self.env[node] = FOLDED
                    continue
                raise self.error(node, str(e)) from None
            self.env[node] = out

        params = weight_params + self.folded_params + user_params
        self.f.params = params
        header = ["Exported by kiln_export from torch.export (PyTorch " + torch.__version__ + ").",
                  f"Parameters: {len(weight_params)} weights and buffers (safetensors names),"
                  f" {len(self.folded_params)} folded constants, then the inputs"
                  f" {', '.join('%' + p.name for p in user_params) or '(none)'}."]
        renamed = [(p.name, self.origin[p.name]) for p in weight_params
                   if p.name != self.origin[p.name]]
        for kir_name, target in renamed:
            header.append(f"%{kir_name} is state-dict '{target}'")
        text = self.f.text("main", results, header)
        return ExportResult(
            kir=text,
            params={p.name: self.origin[p.name] for p in params},
            user_inputs=[p.name for p in user_params],
            outputs=[_kir.type_str(r.shape, r.dtype) for r in results],
            folded=list(self.folded_nodes),
            weights={p.name: self.weights[p.name] for p in weight_params + self.folded_params},
        )

    def outputs(self, node):
        flat = node.args[0]
        if not isinstance(flat, (list, tuple)):
            flat = [flat]
        results = []
        for i, a in enumerate(flat):
            if not isinstance(a, torch.fx.Node):
                raise ExportError(f"output {i} is not a tensor ({a!r}); Kiln returns tensors only")
            try:
                v = self.value(a)
            except Unsupported as e:
                raise self.error(a, str(e)) from None
            if not isinstance(v, V):
                raise ExportError(f"output {i} ('{a.name}') is not a tensor")
            if v.shape is None:
                v.shape, v.dtype = self.meta(a)
            results.append(v)
        if not results:
            raise ExportError("the module returns no tensor")
        return results

    def error(self, node, reason) -> UnsupportedOpError:
        return UnsupportedOpError(op_name(node), node.name, reason, _user_line(node))


def _nondeterministic(node) -> bool:
    t = node.target
    tags = getattr(t, "tags", ())
    return torch.Tag.nondeterministic_seeded in tags


def export_program(module, args, kwargs=None, *, strict=False):
    """torch.export, then core ATen with Kiln's higher-level ops kept."""
    ep = torch.export.export(module, tuple(args), kwargs=kwargs or {}, strict=strict)
    return ep.run_decompositions(decomposition_table())


def export(module, example_args, path_kir=None, path_weights=None, *, example_kwargs=None,
           strict=False, native_sdpa=True) -> ExportResult:
    """Exports `module` called on `example_args` (and `example_kwargs`) to
    a `.kir` program (`path_kir`) and its weights (`path_weights`,
    safetensors). See the package docstring.

    `scaled_dot_product_attention` is written as Kiln's op (which the CPU
    backend runs as one fused kernel whose memory grows linearly in the
    sequence length); `native_sdpa=False` writes it out as PyTorch's math
    reference computes it instead (matmul, softmax, `_safe_softmax`'s
    zeroing of fully masked rows, matmul: the T×T scores in memory)."""
    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    ep = export_program(module, example_args, example_kwargs, strict=strict)
    tr = Translator(ep, native_sdpa=native_sdpa)
    result = tr.run()
    leaves = torch.utils._pytree.tree_leaves((tuple(example_args), dict(example_kwargs or {})))
    if len(leaves) == len(ep.graph_signature.user_inputs):
        result.example_inputs = {n: leaves[i] for n, i in tr.user_index.items()}
    if path_kir is not None:
        with open(path_kir, "w") as f:
            f.write(result.kir)
    if path_weights is not None:
        save_weights(result, path_weights)
    return result


def save_weights(result: ExportResult, path):
    from safetensors.torch import save_file

    tensors = {name: t.detach().contiguous().clone() for name, t in result.weights.items()}
    meta = {"format": "pt",
            "kiln_export.names": json.dumps({n: result.params[n] for n in tensors})}
    save_file(tensors, str(path), metadata=meta)
