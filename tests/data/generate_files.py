#!/usr/bin/env python3
"""Tensor files written by PyTorch (safetensors) and numpy (.npy), for
Kiln's readers to be tested against the ecosystem's own writers.

    python3 tests/data/generate_files.py   # needs torch, numpy, safetensors

Writes `tests/data/files/`: `torch_dtypes.safetensors` (one 2x3 tensor per
dtype safetensors has), one `.npy` per numpy dtype (plus a Fortran-order and a
big-endian file), and `manifest.json` with each tensor's dtype, shape and
values in logical order (floats as strings that round-trip through float64).
"""

import json
import os

import numpy as np
import torch
from safetensors.torch import save_file

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "files")
os.makedirs(HERE, exist_ok=True)

BASE = [-2.5, -1.0, 0.0, 0.5, 1.75, 3.0]
INTS = [-3, -1, 0, 1, 2, 100]

TORCH = {
    "bool": torch.bool, "u8": torch.uint8, "i8": torch.int8, "i16": torch.int16,
    "u16": torch.uint16, "i32": torch.int32, "u32": torch.uint32, "i64": torch.int64,
    "u64": torch.uint64, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
    "f64": torch.float64, "f8e4m3fn": torch.float8_e4m3fn, "f8e5m2": torch.float8_e5m2,
}


def text(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, complex):
        return [repr(float(v.real)), repr(float(v.imag))]
    return repr(float(v))


def values_of(t):
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2, torch.bfloat16, torch.float16):
        t = t.to(torch.float64)
    if t.dtype in (torch.uint16, torch.uint32, torch.uint64):
        t = t.to(torch.int64) if t.dtype != torch.uint64 else t
    return [text(v) for v in t.flatten().tolist()]


manifest = {"torch_version": torch.__version__, "numpy_version": np.__version__, "safetensors": {}, "npy": {}}

tensors = {}
for name, dtype in TORCH.items():
    if dtype == torch.bool:
        t = torch.tensor([True, False, True, True, False, False])
    elif dtype.is_floating_point:
        t = torch.tensor(BASE).to(dtype)
    elif dtype in (torch.uint8, torch.uint16, torch.uint32, torch.uint64):
        t = torch.tensor([abs(i) for i in INTS]).to(dtype)
    else:
        t = torch.tensor(INTS).to(dtype)
    t = t.reshape(2, 3)
    tensors[name] = t
    manifest["safetensors"][name] = {"dtype": name, "shape": [2, 3], "values": values_of(t)}
save_file(tensors, os.path.join(HERE, "torch_dtypes.safetensors"))

NUMPY = {
    "bool": np.bool_, "u8": np.uint8, "i8": np.int8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64, "f16": np.float16,
    "f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128,
}
for name, dtype in NUMPY.items():
    if dtype == np.bool_:
        a = np.array([True, False, True, True, False, False])
    elif np.issubdtype(dtype, np.complexfloating):
        a = np.array([complex(x, -x / 2) for x in BASE], dtype=dtype)
    elif np.issubdtype(dtype, np.floating):
        a = np.array(BASE, dtype=dtype)
    elif np.issubdtype(dtype, np.unsignedinteger):
        a = np.array([abs(i) for i in INTS], dtype=dtype)
    else:
        a = np.array(INTS, dtype=dtype)
    a = a.reshape(2, 3)
    np.save(os.path.join(HERE, f"{name}.npy"), a)
    vals = [text(complex(v)) if np.iscomplexobj(a) else text(v.item()) for v in a.flatten()]
    manifest["npy"][name] = {"dtype": name, "shape": [2, 3], "values": vals}

fortran = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5)
np.save(os.path.join(HERE, "fortran_f32.npy"), fortran)
manifest["npy"]["fortran_f32"] = {"dtype": "f32", "shape": [3, 4], "values": [text(v.item()) for v in fortran.flatten()]}
big = np.arange(6, dtype=">i4").reshape(2, 3) - 2
np.save(os.path.join(HERE, "big_endian_i32.npy"), big)
manifest["npy"]["big_endian_i32"] = {"dtype": "i32", "shape": [2, 3], "values": [text(int(v)) for v in big.flatten()]}

with open(os.path.join(HERE, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1, sort_keys=True)
    f.write("\n")
