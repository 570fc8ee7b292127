"""python -m kiln_export MODULE_SPEC --example-input ... -o model.kir --weights model.safetensors

MODULE_SPEC is `package.module:NAME` or `path/to/file.py:NAME`, where NAME
is an nn.Module instance, an nn.Module class (constructed with no
arguments) or a function returning a module.

--example-input (repeatable, in forward's argument order) is a tensor type
in .kir spelling, `2x8x64xf32` (random values: normal for floats, integers
in [0, --int-high), random bools), or a file `x.npy` / `x.pt` /
`x.safetensors` (its only tensor); `NAME=...` passes it as a keyword
argument (`inputs_embeds=1x8x64xf32`). --kwarg NAME=JSON passes other
keyword arguments (`--kwarg use_cache=false`).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import re
import struct
import sys

import torch

from . import ExportError, export
from ._kir import DTYPES

_SHORT = {v: k for k, v in DTYPES.items()}
_SPEC = re.compile(r"^((?:\d+x)*)([a-z][a-z0-9]*)$")


def load_module(spec: str) -> torch.nn.Module:
    if ":" not in spec:
        raise SystemExit(f"MODULE_SPEC '{spec}' must be package.module:NAME or file.py:NAME")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py") or os.path.sep in where:
        path = os.path.abspath(where)
        sys.path.insert(0, os.path.dirname(path))
        s = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0],
                                                   path)
        mod = importlib.util.module_from_spec(s)
        s.loader.exec_module(mod)
    else:
        sys.path.insert(0, os.getcwd())
        mod = importlib.import_module(where)
    obj = mod
    for part in name.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, torch.nn.Module):
        return obj
    if callable(obj):
        m = obj()
        if isinstance(m, torch.nn.Module):
            return m
        raise SystemExit(f"{spec}() returned {type(m).__name__}, not an nn.Module")
    raise SystemExit(f"{spec} is neither an nn.Module nor a function returning one")


def make_input(text: str, gen: torch.Generator, int_high: int) -> torch.Tensor:
    m = _SPEC.match(text)
    if m and m.group(2) in _SHORT:
        shape = [int(d) for d in m.group(1).split("x") if d]
        dtype = _SHORT[m.group(2)]
        if dtype.is_floating_point:
            return torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).bool()
        return torch.randint(0, int_high, shape, generator=gen).to(dtype)
    if text.endswith(".pt"):
        return torch.load(text)
    if text.endswith(".safetensors"):
        from safetensors.torch import load_file

        d = load_file(text)
        if len(d) != 1:
            raise SystemExit(f"{text} holds {len(d)} tensors; give a file with one")
        return next(iter(d.values()))
    if text.endswith(".npy"):
        import numpy as np  # only for reading .npy example inputs

        return torch.from_numpy(np.load(text))
    raise SystemExit(f"--example-input '{text}': expected a type like 2x8x64xf32 or a "
                     ".npy/.pt/.safetensors file")


_NPY = {torch.float32: "<f4", torch.float64: "<f8", torch.float16: "<f2", torch.int8: "|i1",
        torch.int16: "<i2", torch.int32: "<i4", torch.int64: "<i8", torch.uint8: "|u1",
        torch.bool: "|b1", torch.complex64: "<c8", torch.complex128: "<c16"}


def write_npy(path, t: torch.Tensor):
    """A .npy file (format 1.0), written without numpy."""
    import ctypes

    t = t.detach().contiguous().cpu()
    descr = _NPY.get(t.dtype)
    if descr is None:
        raise ValueError(f".npy has no {t.dtype}")
    if sys.byteorder != "little":
        raise ValueError("big-endian hosts are not supported")
    shape = repr(tuple(int(d) for d in t.shape))
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    data = ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()) if t.numel() else b""
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(data)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m kiln_export",
        description="Export a PyTorch nn.Module to a Kiln .kir program and a safetensors "
                    "weights file.",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("module", metavar="MODULE_SPEC", help="package.module:NAME or file.py:NAME")
    p.add_argument("--example-input", "-i", action="append", default=[], metavar="[NAME=]SPEC",
                   help="an example input: 2x8x64xf32, or a .npy/.pt/.safetensors file")
    p.add_argument("--kwarg", action="append", default=[], metavar="NAME=JSON",
                   help="a non-tensor keyword argument for forward")
    p.add_argument("-o", "--output", required=True, metavar="model.kir")
    p.add_argument("--weights", required=True, metavar="model.safetensors")
    p.add_argument("--dtype", choices=["f32", "f64", "f16", "bf16"],
                   help="convert the module's floating parameters to this dtype first")
    p.add_argument("--train", action="store_true", help="export in training mode (default: eval)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random example inputs")
    p.add_argument("--int-high", type=int, default=10,
                   help="random integer inputs are in [0, INT_HIGH)")
    p.add_argument("--save-example", metavar="DIR",
                   help="write the example inputs (DIR/NAME.npy, or DIR/inputs.safetensors "
                        "for dtypes .npy lacks) and PyTorch's outputs (DIR/expected.safetensors,"
                        " out0, out1, ...)")
    p.add_argument("--strict", action="store_true", help="torch.export strict mode")
    p.add_argument("--math-sdpa", action="store_true",
                   help="write scaled_dot_product_attention out as PyTorch's math reference "
                        "(matmul, softmax, matmul) instead of Kiln's fused op")
    p.add_argument("--native-sdpa", action="store_true",
                   help="Kiln's fused op for scaled_dot_product_attention (the default)")
    args = p.parse_args(argv)

    torch.manual_seed(args.seed)
    module = load_module(args.module)
    module.train(args.train)
    if args.dtype:
        module = module.to(_SHORT[args.dtype])
    gen = torch.Generator().manual_seed(args.seed)
    pos, kw = [], {}
    for text in args.example_input:
        name, sep, rest = text.partition("=")
        if sep and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            kw[name] = make_input(rest, gen, args.int_high)
        else:
            pos.append(make_input(text, gen, args.int_high))
    for text in args.kwarg:
        name, sep, rest = text.partition("=")
        if not sep:
            raise SystemExit(f"--kwarg '{text}' must be NAME=JSON")
        kw[name] = json.loads(rest)
    try:
        result = export(module, tuple(pos), args.output, args.weights, example_kwargs=kw,
                        strict=args.strict, native_sdpa=not args.math_sdpa)
    except ExportError as e:
        print(f"kiln_export: error: {e}", file=sys.stderr)
        return 1
    n_w = sum(1 for v in result.params.values()
              if v != "input" and not v.startswith("folded"))
    n_f = len(result.weights) - n_w
    print(f"wrote {args.output}: @main({n_w} weights and buffers"
          f"{f', {n_f} folded constants' if n_f else ''}, inputs "
          f"{', '.join('%' + n for n in result.user_inputs) or 'none'}) -> "
          f"{', '.join(result.outputs)}")
    print(f"wrote {args.weights}: {len(result.weights)} tensors")
    if result.folded:
        print(f"folded at export (input-independent): {', '.join(result.folded)}")
    run = f"kiln run {args.output} --inputs {args.weights}"
    if args.save_example:
        os.makedirs(args.save_example, exist_ok=True)
        extra = {}
        for n, t in result.example_inputs.items():
            if t.dtype in _NPY:
                path = os.path.join(args.save_example, n + ".npy")
                write_npy(path, t)
                run += f" --input {n}={path}"
            else:
                extra[n] = t.contiguous()
        from safetensors.torch import save_file

        if extra:
            print(f"note: {', '.join(extra)} written to {args.save_example}/inputs.safetensors "
                  "(.npy has no such dtype)")
            save_file(extra, os.path.join(args.save_example, "inputs.safetensors"))
        with torch.no_grad():
            out = module(*pos, **kw)
        outs = [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
        save_file({f"out{i}": t.detach().contiguous() for i, t in enumerate(outs)},
                  os.path.join(args.save_example, "expected.safetensors"))
        run += " --out out.safetensors"
    print("run it:", run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
