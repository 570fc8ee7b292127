"""kiln_export: a PyTorch `nn.Module` to Kiln's `.kir` IR and a safetensors
weights file.

    import kiln_export
    r = kiln_export.export(model, (x,), "model.kir", "model.safetensors")
    # kiln run model.kir --inputs model.safetensors --input x=x.npy

`export(module, example_args, path_kir, path_weights, example_kwargs=None)`
runs `torch.export.export(module, example_args, example_kwargs)`, lowers the
program to core ATen (keeping the higher-level ops Kiln has: `layer_norm`,
`softmax`, `log_softmax`, `gelu`, `silu`, `sigmoid`, `hardswish`,
`softplus`, `mean`, `linear`, `matmul`, `split`, ...) and translates each FX
node to `.kir`. `@main` takes, in order: the module's parameters and
buffers (named by their state-dict names; a character that is not a
letter, digit, `_` or `.` becomes `_`), constants folded at export time
(`_const.*`, rarely any), then the user inputs (the forward's argument
names). The safetensors file holds one tensor per weight parameter under
its `.kir` name, which is what `kiln run --inputs` binds by; its metadata
`kiln_export.names` maps each back to the state-dict name.

An ATen op with no exact Kiln translation raises `UnsupportedOpError`
naming the op, the FX node and the user's source line.
"""

from ._export import (
    ExportError,
    ExportResult,
    UnsupportedOpError,
    decomposition_table,
    export,
    export_program,
    save_weights,
)


def supported_ops():
    """The ATen ops (`aten.NAME.OVERLOAD`) the exporter translates."""
    from . import _ops

    return list(_ops.SUPPORTED)


__all__ = [
    "export",
    "export_program",
    "save_weights",
    "supported_ops",
    "decomposition_table",
    "ExportError",
    "ExportResult",
    "UnsupportedOpError",
]
__version__ = "0.1.0"
