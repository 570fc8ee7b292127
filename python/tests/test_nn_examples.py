"""The `kiln::nn` examples against the models they port, run as binaries.

`crates/kiln/examples/resnet.rs` and `mobilenet_v3.rs` are torchvision's
ResNet and MobileNetV3 written with `kiln::nn`; their checkpoint is a
safetensors file of the module's `state_dict`. Here torchvision builds the models with random weights
(and random batch-norm statistics, so that eval-mode normalisation is not
the identity), the example binary runs them on random images, and the
logits must agree with PyTorch's to 1e-5 of their largest magnitude.

The binaries sit beside $KILN_BIN (`target/debug/examples/` for
`target/debug/kiln`); `cargo test --workspace` builds them.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

REPO = Path(__file__).resolve().parents[2]
KILN = Path(os.environ.get("KILN_BIN", REPO / "target" / "release" / "kiln"))
if not KILN.is_absolute():
    KILN = REPO / KILN
EXAMPLES = KILN.parent / "examples"


def example(name: str) -> Path:
    path = EXAMPLES / name
    if not path.exists():
        pytest.skip(f"no example binary at {path}")
    return path


def randomize_batch_norms(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2, generator=g)
                m.running_var.uniform_(0.5, 1.5, generator=g)
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.uniform_(-0.2, 0.2, generator=g)
    return model.eval()


def test_resnet18_matches_torchvision(tmp_path):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = randomize_batch_norms(torchvision.models.resnet18(num_classes=10), 1)
    run_classifier("resnet", model, torch.randn(2, 3, 64, 64), tmp_path)


def test_grouped_bottleneck_resnet_matches_torchvision(tmp_path):
    """Bottleneck blocks with groups (ResNeXt's), one per stage, on a
    non-square image: the architecture comes from the checkpoint's names
    and shapes."""
    torchvision = pytest.importorskip("torchvision")
    from torchvision.models.resnet import Bottleneck, ResNet
    torch.manual_seed(1)
    model = randomize_batch_norms(
        ResNet(Bottleneck, [1, 2, 1, 1], num_classes=7, groups=4, width_per_group=8), 2)
    run_classifier("resnet", model, torch.randn(1, 3, 48, 40), tmp_path)


def run_classifier(binary: str, model: torch.nn.Module, images: torch.Tensor, tmp: Path) -> None:
    weights, inputs, out = tmp / "w.safetensors", tmp / "x.safetensors", tmp / "y.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()
               if not k.endswith("num_batches_tracked")}, str(weights))
    save_file({"input": images.contiguous()}, str(inputs))
    cmd = [str(example(binary)), str(weights), "--input", str(inputs), "--output", str(out),
           "--runs", "0"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stdout}\n{p.stderr}"
    got = load_file(str(out))["logits"]
    with torch.no_grad():
        want = model(images)
    assert got.shape == want.shape and got.dtype == want.dtype
    err = (got.double() - want.double()).abs().max().item() / want.abs().max().item()
    assert err <= 1e-5, (err, p.stdout)


@pytest.mark.parametrize("name", ["mobilenet_v3_small", "mobilenet_v3_large"])
def test_mobilenet_v3_matches_torchvision(tmp_path, name):
    """`crates/kiln/examples/mobilenet_v3.rs`: squeeze-and-excitation,
    depthwise convolutions, hardswish and hardsigmoid, residuals."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(2)
    model = randomize_batch_norms(getattr(torchvision.models, name)(num_classes=12), 3)
    run_classifier("mobilenet_v3", model, torch.randn(2, 3, 64, 64), tmp_path)
