"""Writing `.kir` text: names, literals, types and instructions.

The grammar is /shared/design/IR.md section 1: values are `%name` with
letters, digits, `_` and `.`; literals are Python's shortest round-trip
spelling of the number (`1e-05`, `inf`, `nan`, `true`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import torch

# torch dtype -> .kir short dtype name (IR.md "Types").
DTYPES = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.complex32: "c32",
    torch.complex64: "c64",
    torch.complex128: "c128",
    torch.uint8: "u8",
    torch.int8: "i8",
    torch.int16: "i16",
    torch.int32: "i32",
    torch.int64: "i64",
    torch.bool: "bool",
}
for _name, _short in [
    ("uint16", "u16"),
    ("uint32", "u32"),
    ("uint64", "u64"),
    ("float8_e4m3fn", "f8e4m3fn"),
    ("float8_e5m2", "f8e5m2"),
    ("float8_e4m3fnuz", "f8e4m3fnuz"),
    ("float8_e5m2fnuz", "f8e5m2fnuz"),
    ("float8_e8m0fnu", "f8e8m0fnu"),
]:
    if hasattr(torch, _name):
        DTYPES[getattr(torch, _name)] = _short

MEMORY_FORMATS = {
    torch.contiguous_format: "contiguous",
    torch.preserve_format: "preserve",
    torch.channels_last: "channels_last",
    torch.channels_last_3d: "channels_last_3d",
}

_NAME_OK = re.compile(r"^[A-Za-z0-9_.]+$")
_NAME_BAD_CHAR = re.compile(r"[^A-Za-z0-9_.]")


def sanitize(name: str) -> str:
    """A `.kir` value name for `name`: characters other than letters,
    digits, `_` and `.` become `_`."""
    out = _NAME_BAD_CHAR.sub("_", name)
    return out or "_"


def dtype_name(dtype: torch.dtype) -> str:
    try:
        return DTYPES[dtype]
    except KeyError:
        raise ValueError(f"Kiln has no dtype for {dtype}") from None


def type_str(shape, dtype: torch.dtype) -> str:
    dims = "".join(f"{int(d)}x" for d in shape)
    return f"tensor<{dims}{dtype_name(dtype)}>"


def literal(v) -> str:
    """A scalar literal operand (its category counts for promotion, as a
    Python scalar's does in PyTorch)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        if not any(c in r for c in ".e"):
            r += ".0"
        return r
    if isinstance(v, complex):
        return f"complex({literal(v.real)}, {literal(v.imag)})"
    raise TypeError(f"not a scalar literal: {v!r}")


def attr_value(v) -> str:
    if isinstance(v, torch.dtype):
        return dtype_name(v)
    if isinstance(v, torch.memory_format):
        return MEMORY_FORMATS[v]
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(attr_value(x) for x in v) + "]"
    if isinstance(v, Keyword):
        return v.word
    return literal(v)


@dataclass(frozen=True)
class Keyword:
    """A bare keyword attribute value (`preserve`, `contiguous`, ...)."""

    word: str


@dataclass(eq=False)
class V:
    """A `.kir` value: its name, and its shape and dtype where known."""

    name: str
    shape: tuple | None = None
    dtype: torch.dtype | None = None

    @property
    def ref(self) -> str:
        return "%" + self.name


NONE = object()  # the `none` operand


@dataclass
class Instr:
    results: list  # of V
    op: str
    operands: list  # V, scalar, NONE, or list of V
    attrs: dict
    type: str | None = None
    comment: str | None = None

    def uses(self):
        for o in self.operands:
            if isinstance(o, V):
                yield o.name
            elif isinstance(o, list):
                for x in o:
                    if isinstance(x, V):
                        yield x.name

    def text(self) -> str:
        lhs = ", ".join(r.ref for r in self.results)
        ops = []
        for o in self.operands:
            if isinstance(o, V):
                ops.append(o.ref)
            elif o is NONE:
                ops.append("none")
            elif isinstance(o, list):
                # `Tensor?[]` lists (index's) hold `none`s too.
                ops.append("[" + ", ".join("none" if x is None else x.ref for x in o) + "]")
            else:
                ops.append(literal(o))
        s = f"{lhs} = {self.op}"
        if ops:
            s += " " + ", ".join(ops)
        attrs = [f"{k} = {attr_value(v)}" for k, v in self.attrs.items() if v is not None]
        if attrs:
            s += " {" + ", ".join(attrs) + "}"
        if self.type:
            s += " : " + self.type
        if self.comment:
            s += "  // " + self.comment
        return s


class Names:
    """Unique `.kir` value names."""

    def __init__(self):
        self.used: set[str] = set()

    def take(self, want: str) -> str:
        base = sanitize(want)
        name, i = base, 1
        while name in self.used:
            name = f"{base}_{i}"
            i += 1
        self.used.add(name)
        return name


@dataclass
class Func:
    """A `.kir` function under construction."""

    names: Names = field(default_factory=Names)
    params: list = field(default_factory=list)  # V with shape and dtype
    body: list = field(default_factory=list)  # Instr or comment str

    def emit(self, op, operands=(), attrs=None, *, hint="v", shape=None, dtype=None,
             results=1, annotate=True, comment=None):
        """Appends `%r = op operands {attrs} : type`; returns the result V
        (or a list of them when `results` > 1)."""
        rs = [V(self.names.take(hint if results == 1 else f"{hint}_{i}")) for i in range(results)]
        typ = None
        if results == 1:
            rs[0].shape = tuple(shape) if shape is not None else None
            rs[0].dtype = dtype
            if annotate and shape is not None and dtype is not None and dtype in DTYPES:
                typ = type_str(shape, dtype)
        self.body.append(Instr(rs, op, list(operands), dict(attrs or {}), typ, comment))
        return rs[0] if results == 1 else rs

    def text(self, name, results, header_comments=()) -> str:
        live = _live(self.body, [r.name for r in results])
        lines = [f"// {c}" if c else "//" for c in header_comments]
        params = [f"%{p.name}: {type_str(p.shape, p.dtype)}" for p in self.params]
        rtypes = [type_str(r.shape, r.dtype) for r in results]
        rt = rtypes[0] if len(rtypes) == 1 else "(" + ", ".join(rtypes) + ")"
        if len(params) <= 2:
            lines.append(f"func @{name}({', '.join(params)}) -> {rt} {{")
        else:
            lines.append(f"func @{name}(")
            for i, p in enumerate(params):
                lines.append(f"    {p}{',' if i + 1 < len(params) else ''}")
            lines.append(f") -> {rt} {{")
        for item in self.body:
            if isinstance(item, str):
                lines.append("  // " + item)
            elif any(r.name in live for r in item.results):
                lines.append("  " + item.text())
        lines.append("  return " + ", ".join(r.ref for r in results))
        lines.append("}")
        return "\n".join(lines) + "\n"


def _live(body, roots):
    """Names of the values the results depend on (dead code is dropped:
    every op here is pure)."""
    live = set(roots)
    for item in reversed(body):
        if isinstance(item, Instr) and any(r.name in live for r in item.results):
            live.update(item.uses())
            for r in item.results:
                live.add(r.name)
    return live
