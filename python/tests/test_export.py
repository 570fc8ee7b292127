"""kiln_export: export PyTorch modules, run them with the kiln binary, and
compare with PyTorch.

The kiln binary is $KILN_BIN, else target/release/kiln of the repository.
f32 results must agree to 1e-5 of the result's largest magnitude.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file, save_file

import kiln_export
from kiln_export.__main__ import write_npy

REPO = Path(__file__).resolve().parents[2]
KILN = Path(os.environ.get("KILN_BIN", REPO / "target" / "release" / "kiln"))
if not KILN.is_absolute():
    KILN = REPO / KILN

pytestmark = [
    pytest.mark.skipif(not KILN.exists(), reason=f"no kiln binary at {KILN}"),
    # the sweep exercises scatter's legacy reduce= on purpose
    pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter:UserWarning"),
]

NPY_DTYPES = {torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.bool}


def kiln_run(kir, weights, inputs: dict, tmp: Path, backend="cranelift"):
    """`kiln run KIR --inputs WEIGHTS --input NAME=NAME.npy ...`; the
    results out0, out1, ... in order. Inputs of dtypes .npy lacks go with
    the weights into one safetensors file."""
    cmd = [str(KILN), "run", str(kir), "--backend", backend, "--out", str(tmp / "out.safetensors")]
    extra = {}
    for name, t in inputs.items():
        if t.dtype in NPY_DTYPES:
            path = tmp / f"{name}.npy"
            write_npy(path, t)
            cmd += ["--input", f"{name}={path}"]
        else:
            extra[name] = t.contiguous()
    if extra:
        w = load_file(str(weights))
        w.update(extra)
        weights = tmp / "weights_and_inputs.safetensors"
        save_file(w, str(weights))
    cmd += ["--inputs", str(weights)]
    for attempt in range(3):  # the binary may be replaced by a rebuild under us
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode == 0 or KILN.exists():
            break
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stderr}"
    out = load_file(str(tmp / "out.safetensors"))
    return [out[f"out{i}"] for i in range(len(out))]


def rel_err(got: torch.Tensor, want: torch.Tensor) -> float:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if not want.dtype.is_floating_point:
        return 0.0 if torch.equal(got, want) else float("inf")
    assert torch.equal(got.isnan(), want.isnan())
    scale = max(want.abs().nan_to_num(0).max().item(), 1e-30)
    return (got.double() - want.double()).abs().nan_to_num(0).max().item() / scale


def export_and_compare(module, args, tmp: Path, kwargs=None, tol=1e-5, backend="cranelift"):
    module.eval()
    kir, weights = tmp / "model.kir", tmp / "model.safetensors"
    r = kiln_export.export(module, args, kir, weights, example_kwargs=kwargs)
    with torch.no_grad():
        ref = module(*args, **(kwargs or {}))
    refs = [t for t in torch.utils._pytree.tree_leaves(ref) if isinstance(t, torch.Tensor)]
    outs = kiln_run(kir, weights, r.example_inputs, tmp, backend)
    assert len(outs) == len(refs)
    errs = [rel_err(o, t) for o, t in zip(outs, refs)]
    print(f"{type(module).__name__} ({backend}): max relative error {max(errs):.3g}")
    assert max(errs) <= tol, errs
    return r, errs


# ---- (1) a small MLP -----------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


@pytest.mark.parametrize("backend", ["cranelift", "interp"])
def test_mlp(tmp_path, backend):
    torch.manual_seed(0)
    r, _ = export_and_compare(MLP(), (torch.randn(4, 16),), tmp_path, backend=backend)
    # Parameters by state-dict name, then the input; the weights file binds them.
    assert list(r.params) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "x"]
    with safe_open(str(tmp_path / "model.safetensors"), "pt") as f:
        assert sorted(f.keys()) == sorted(MLP().state_dict().keys())
    assert "func @main(" in r.kir and "gelu" in r.kir


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 2e-2),
                                       (torch.float64, 1e-12)])
def test_mlp_dtypes(tmp_path, dtype, tol):
    torch.manual_seed(0)
    export_and_compare(MLP().to(dtype), (torch.randn(4, 16, dtype=dtype),), tmp_path, tol=tol)


class ComplexRotary(nn.Module):
    """Rotary embeddings as Meta's Llama reference code writes them: the
    frequencies as complex numbers (polar), the pairs of x as complex
    values (view_as_complex), a complex product, back to pairs
    (view_as_real); plus angle and conj."""

    def forward(self, x):
        d = x.shape[-1]
        freqs = 1.0 / (10000.0 ** (torch.arange(0, d, 2)[: d // 2].float() / d))
        freqs = torch.outer(torch.arange(x.shape[1], dtype=torch.float32), freqs)
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        rotated = torch.view_as_real(xc * freqs_cis.view(1, x.shape[1], 1, -1)).flatten(3)
        return rotated.type_as(x), torch.angle(xc), xc.conj().imag, torch.real(xc)


def test_complex_rotary(tmp_path):
    torch.manual_seed(0)
    export_and_compare(ComplexRotary(), (torch.randn(2, 16, 4, 8),), tmp_path)


def test_command_line(tmp_path):
    (tmp_path / "mlp_factory.py").write_text(
        "import torch\n"
        f"sys_path = {str(Path(__file__).parent)!r}\n"
        "import sys; sys.path.insert(0, sys_path)\n"
        "from test_export import MLP\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return MLP()\n")
    kir, weights, ex = tmp_path / "m.kir", tmp_path / "m.safetensors", tmp_path / "ex"
    p = subprocess.run(
        [sys.executable, "-m", "kiln_export", f"{tmp_path / 'mlp_factory.py'}:make",
         "--example-input", "3x16xf32", "-o", str(kir), "--weights", str(weights),
         "--save-example", str(ex)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "run it: kiln run" in p.stdout
    q = subprocess.run([str(KILN), "run", str(kir), "--inputs", str(weights),
                        "--input", f"x={ex / 'x.npy'}", "--out", str(tmp_path / "o.safetensors")],
                       capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    got = load_file(str(tmp_path / "o.safetensors"))["out0"]
    want = load_file(str(ex / "expected.safetensors"))["out0"]
    assert rel_err(got, want) <= 1e-5


def test_names_are_sanitized(tmp_path):
    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.add_module("proj-in", nn.Linear(4, 4))
            self.register_buffer("scale:x", torch.full((4,), 2.0))

        def forward(self, x):
            return getattr(self, "proj-in")(x) * getattr(self, "scale:x")

    r, _ = export_and_compare(Odd(), (torch.randn(2, 4),), tmp_path)
    assert r.params["proj_in.weight"] == "proj-in.weight"
    assert r.params["scale_x"] == "scale:x"
    with safe_open(str(tmp_path / "model.safetensors"), "pt") as f:
        assert '"proj_in.weight": "proj-in.weight"' in f.metadata()["kiln_export.names"]


# ---- (2) GPT-2 (transformers), tiny random config ------------------------


def gpt2_config():
    transformers = pytest.importorskip("transformers")
    return transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=100,
                                   n_positions=64)


@pytest.mark.parametrize("backend", ["cranelift", "interp"])
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_gpt2_model_inputs_embeds(tmp_path, backend, attn):
    from transformers import GPT2Model

    torch.manual_seed(0)
    cfg = gpt2_config()
    cfg._attn_implementation = attn
    model = GPT2Model(cfg)
    kw = {"inputs_embeds": torch.randn(2, 8, 64), "use_cache": False}
    r, _ = export_and_compare(model, (), tmp_path, kwargs=kw, backend=backend)
    assert r.user_inputs == ["inputs_embeds"]
    # Position embeddings: Kiln's embedding of wpe at arange positions.
    assert "= embedding %wpe.weight, %" in r.kir


def test_gpt2_lm_head_input_ids(tmp_path):
    """Token ids: aten.embedding is Kiln's embedding; logits through the
    tied lm_head."""
    from transformers import GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(gpt2_config())
    ids = torch.randint(0, 100, (2, 16))
    r, _ = export_and_compare(model, (ids,), tmp_path, kwargs={"use_cache": False})
    assert r.user_inputs == ["input_ids"] and r.outputs == ["tensor<2x16x100xf32>"]
    # (wte and the tied lm_head are one tensor; torch.export names it lm_head.weight)
    assert "= embedding %lm_head.weight, %" in r.kir


@pytest.mark.parametrize("backend", ["cranelift", "interp"])
def test_gpt2_padding_mask(tmp_path, backend):
    """An attention_mask input makes transformers build the mask with
    advanced indexing (aten.index.Tensor): exported as Kiln's `index`."""
    from transformers import GPT2Model

    model = GPT2Model(gpt2_config()).eval()
    ids = torch.randint(0, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, :3] = 0
    r, _ = export_and_compare(model, (ids,), tmp_path, backend=backend,
                              kwargs={"attention_mask": mask, "use_cache": False})
    assert "= index %" in r.kir


# ---- (3) Llama (transformers), tiny random config ------------------------


@pytest.mark.parametrize("backend", ["cranelift", "interp"])
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_llama_model_inputs_embeds(tmp_path, backend, attn):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = llama_config()
    cfg._attn_implementation = attn
    model = transformers.LlamaModel(cfg)
    kw = {"inputs_embeds": torch.randn(2, 8, 64), "use_cache": False}
    r, _ = export_and_compare(model, (), tmp_path, kwargs=kw, backend=backend)
    assert "rotary_emb.inv_freq" in r.params


def llama_config():
    transformers = pytest.importorskip("transformers")
    return transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                    num_attention_heads=4, num_key_value_heads=2,
                                    vocab_size=100, max_position_embeddings=64)


def test_llama_causal_lm_input_ids(tmp_path):
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    ids = torch.randint(0, 100, (2, 16))
    r, _ = export_and_compare(LlamaForCausalLM(llama_config()), (ids,), tmp_path,
                              kwargs={"use_cache": False})
    assert r.outputs == ["tensor<2x16x100xf32>"]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_llama_low_precision(tmp_path, dtype):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.LlamaModel(llama_config()).to(dtype)
    kw = {"inputs_embeds": torch.randn(2, 8, 64, dtype=dtype), "use_cache": False}
    export_and_compare(model, (), tmp_path, kwargs=kw, tol=3e-2)


# ---- BERT (transformers), tiny random config -----------------------------


def bert_config(attn=None):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=128,
                                  max_position_embeddings=64)
    if attn is not None:
        cfg._attn_implementation = attn
    return cfg


def bert_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 100, (2, 12), generator=g)
    token_type_ids = torch.zeros(2, 12, dtype=torch.int64)
    token_type_ids[0, 5:] = 1
    token_type_ids[1, 7:] = 1
    return ids, token_type_ids


def test_bert_default_attention_is_sdpa():
    transformers = pytest.importorskip("transformers")
    assert transformers.BertModel(bert_config()).config._attn_implementation == "sdpa"


@pytest.mark.parametrize("backend", ["cranelift", "interp"])
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("with_token_types", [False, True])
def test_bert_model(tmp_path, backend, attn, with_token_types):
    """last_hidden_state and pooler_output of a BertModel from input_ids
    (and token_type_ids; without them, the registered all-zero buffer)."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(bert_config(attn))
    ids, token_type_ids = bert_inputs()
    kw = {"token_type_ids": token_type_ids} if with_token_types else {}
    r, _ = export_and_compare(model, (ids,), tmp_path, kwargs=kw, backend=backend)
    assert r.user_inputs == ["input_ids"] + (["token_type_ids"] if with_token_types else [])
    assert r.outputs == ["tensor<2x12x64xf32>", "tensor<2x64xf32>"]
    assert "= embedding %embeddings.token_type_embeddings.weight, %" in r.kir


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_bert_model_attention_mask(tmp_path, attn):
    """Padded positions (attention_mask 0) in the second sequence:
    transformers builds the padding mask with advanced indexing
    (`mask[arange(B)[:, None, None, None], arange(S)[None, None, None, :]]`,
    aten.index.Tensor), exported as Kiln's `index`."""
    from transformers import BertModel

    torch.manual_seed(0)
    model = BertModel(bert_config(attn))
    ids, token_type_ids = bert_inputs()
    mask = torch.ones(2, 12, dtype=torch.int64)
    mask[1, 8:] = 0
    r, _ = export_and_compare(model, (ids,), tmp_path,
                              kwargs={"attention_mask": mask, "token_type_ids": token_type_ids})
    assert "= index %" in r.kir


def test_bert_masked_lm(tmp_path):
    """BertForMaskedLM logits: the prediction head (dense, gelu, LayerNorm)
    and the decoder tied to the word embeddings."""
    from transformers import BertForMaskedLM

    torch.manual_seed(0)
    ids, token_type_ids = bert_inputs()
    r, _ = export_and_compare(BertForMaskedLM(bert_config()), (ids,), tmp_path,
                              kwargs={"token_type_ids": token_type_ids})
    assert r.outputs == ["tensor<2x12x100xf32>"]


# ---- ViT (transformers), tiny random config ------------------------------


def vit_config(attn=None):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3,
                                 num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                                 intermediate_size=128, num_labels=10)
    if attn is not None:
        cfg._attn_implementation = attn
    return cfg


@pytest.mark.parametrize("backend", ["cranelift", "interp"])
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_vit_model(tmp_path, backend, attn):
    """last_hidden_state (the [CLS] token and 16 patches) and pooler_output."""
    from transformers import ViTModel

    torch.manual_seed(0)
    model = ViTModel(vit_config(attn))
    r, _ = export_and_compare(model, (torch.randn(2, 3, 32, 32),), tmp_path, backend=backend)
    assert r.user_inputs == ["pixel_values"]
    assert r.outputs == ["tensor<2x17x64xf32>", "tensor<2x64xf32>"]
    assert "= conv2d %" in r.kir  # the patch embedding


@pytest.mark.parametrize("backend", ["cranelift", "interp"])
def test_vit_image_classification(tmp_path, backend):
    from transformers import ViTForImageClassification

    torch.manual_seed(0)
    r, _ = export_and_compare(ViTForImageClassification(vit_config()),
                              (torch.randn(2, 3, 32, 32),), tmp_path, backend=backend)
    assert r.outputs == ["tensor<2x10xf32>"]


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("model", ["bert", "vit"])
def test_bert_vit_low_precision(tmp_path, model, dtype, tol):
    """BertModel and ViTForImageClassification converted to f16/bf16, to
    the op sweep's tolerances."""
    import transformers

    torch.manual_seed(0)
    if model == "bert":
        ids, token_type_ids = bert_inputs()
        m, args, kw = (transformers.BertModel(bert_config()), (ids,),
                       {"token_type_ids": token_type_ids})
    else:
        m, args, kw = (transformers.ViTForImageClassification(vit_config()),
                       (torch.randn(2, 3, 32, 32, dtype=dtype),), {})
    export_and_compare(m.to(dtype), args, tmp_path, kwargs=kw, tol=tol)


# ---- Kiln's own scaled_dot_product_attention (the default, native_sdpa) ----


@pytest.mark.parametrize("model", ["gpt2", "llama", "bert", "vit"])
def test_native_sdpa(tmp_path, model):
    import transformers

    torch.manual_seed(0)
    args, kw = (), {"inputs_embeds": torch.randn(2, 8, 64), "use_cache": False}
    if model == "gpt2":
        m = transformers.GPT2Model(gpt2_config())
    elif model == "llama":
        m = transformers.LlamaModel(llama_config())
    elif model == "bert":
        m, (args, kw) = transformers.BertModel(bert_config()), (bert_inputs()[:1], {})
    else:
        m, (args, kw) = transformers.ViTModel(vit_config()), ((torch.randn(2, 3, 32, 32),), {})
    m.eval()
    kir, weights = tmp_path / "m.kir", tmp_path / "m.safetensors"
    r = kiln_export.export(m, args, kir, weights, example_kwargs=kw, native_sdpa=True)
    assert "= scaled_dot_product_attention %" in r.kir
    with torch.no_grad():
        want = m(*args, **kw).last_hidden_state
    got = kiln_run(kir, weights, r.example_inputs, tmp_path)[0]  # BERT, ViT: and the pooler's
    assert rel_err(got, want) <= 1e-5


class MaskedAttention(nn.Module):
    def forward(self, q, m):
        return F.scaled_dot_product_attention(q, q, q, attn_mask=m)


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("bool_mask", [True, False])
def test_fully_masked_row(tmp_path, native, bool_mask):
    # A query the mask leaves no key attends to nothing: 0, as PyTorch's
    # _safe_softmax (Kiln's op and the math reference alike).
    q = torch.randn(1, 2, 3, 4)
    m = torch.ones(3, 3, dtype=torch.bool)
    m[1] = False
    if not bool_mask:
        m = torch.zeros(3, 3).masked_fill(~m, float("-inf"))
    kir, weights = tmp_path / "m.kir", tmp_path / "m.safetensors"
    r = kiln_export.export(MaskedAttention(), (q, m), kir, weights, native_sdpa=native)
    want = MaskedAttention()(q, m)
    (got,) = kiln_run(kir, weights, r.example_inputs, tmp_path)
    assert rel_err(got, want) <= 1e-5


# ---- (4) an op Kiln lacks gives a clear error ----------------------------


class Histc(nn.Module):
    def forward(self, x, w):
        y = x * 2
        return torch.histc(y + w, bins=4)  # the line the error names


def test_unsupported_op_error(tmp_path):
    with pytest.raises(kiln_export.UnsupportedOpError) as e:
        kiln_export.export(Histc(), (torch.randn(1, 3, 8), torch.randn(3, 8)),
                           tmp_path / "m.kir", tmp_path / "m.safetensors")
    msg = str(e.value)
    assert e.value.op == "aten.histc.default"
    assert e.value.node == "histc"
    assert ("aten.histc.default (FX node 'histc') "
            "has no exact translation to Kiln") in msg
    assert "Kiln has no translation for aten.histc.default" in msg
    assert "test_export.py" in msg and "torch.histc(y + w, bins=4)" in msg
    assert not (tmp_path / "m.kir").exists()


class BesselJY(nn.Module):
    def forward(self, x):
        return (torch.special.bessel_j0(x * 3), torch.special.bessel_j1(x * 3),
                torch.special.bessel_y0(x.abs() * 3 + 0.1), torch.special.bessel_y1(x.abs() * 3 + 0.1))


def test_bessel_j_and_y(tmp_path):
    """torch.special's Bessel J and Y (f32 and f64 only in PyTorch, whose
    f64 kernel is off by up to 1e-8 below 5 and 4e-7 near it: compared in
    f32, where Kiln's f64 rounded once and PyTorch's f32 agree)."""
    g = torch.Generator().manual_seed(0)
    export_and_compare(BesselJY(), (torch.randn(3, 5, 8, generator=g),), tmp_path, tol=2e-6)


class ModifiedBessel(nn.Module):
    def forward(self, x):
        a = x.abs() * 4 + 0.05
        return (torch.special.modified_bessel_i0(x * 3), torch.special.modified_bessel_i1(x * 3),
                torch.special.modified_bessel_k0(a), torch.special.modified_bessel_k1(a),
                torch.special.scaled_modified_bessel_k0(a * 10), torch.special.scaled_modified_bessel_k1(a),
                torch.special.spherical_bessel_j0(x * 5), torch.special.airy_ai(x * 6),
                torch.special.ndtri(torch.sigmoid(x * 4)),
                torch.special.gammainc(a, x.abs() * 8), torch.special.gammaincc(a * 20, a * 20 + x),
                torch.igamma(x.abs() * 0.3, a))


def test_modified_bessel(tmp_path):
    """torch.special's modified Bessel functions I and K (K scaled too), the
    spherical j0 and the Airy function Ai, over K's series, integral and
    asymptotic ranges and Ai's series and both asymptotic forms."""
    g = torch.Generator().manual_seed(0)
    export_and_compare(ModifiedBessel(), (torch.randn(3, 5, 8, generator=g),), tmp_path, tol=2e-6)


class OrthogonalPolynomials(nn.Module):
    def forward(self, x):
        n = (x.abs() * 12).floor()
        S = torch.special
        return (S.chebyshev_polynomial_t(x, n), S.chebyshev_polynomial_u(x * 1.2, n),
                S.chebyshev_polynomial_v(x, n), S.chebyshev_polynomial_w(x, 9),
                S.shifted_chebyshev_polynomial_t(x, n), S.shifted_chebyshev_polynomial_u(0.3, n),
                S.shifted_chebyshev_polynomial_v(x, n), S.shifted_chebyshev_polynomial_w(x, n),
                S.hermite_polynomial_h(x, n), S.hermite_polynomial_he(x, n),
                S.laguerre_polynomial_l(x * 3, n), S.legendre_polynomial_p(x, n))


def test_orthogonal_polynomials(tmp_path):
    """torch.special's orthogonal polynomials, degrees 0 to about 30 from
    the input, scalar x and n: in f64, where Kiln runs ATen's algorithm
    (PyTorch's f32 kernel computes its closed forms in f32)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 8, generator=g, dtype=torch.float64)
    export_and_compare(OrthogonalPolynomials(), (x,), tmp_path, tol=1e-12)


class RandomSlopes(nn.Module):
    def forward(self, x):
        return F.rrelu(x, training=True)


def test_random_op_refused(tmp_path):
    with pytest.raises(kiln_export.UnsupportedOpError) as e:
        kiln_export.export(RandomSlopes(), (torch.randn(3, 4),))
    assert e.value.op == "aten.rrelu.default"
    assert "rrelu in training mode is random: export in eval mode" in str(e.value)


def test_unsupported_op_command_line(tmp_path):
    (tmp_path / "bessel.py").write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.histc(x, bins=4)\n"
        "model = M()\n")
    p = subprocess.run(
        [sys.executable, "-m", "kiln_export", f"{tmp_path / 'bessel.py'}:model",
         "--example-input", "1x3x8x8xf32", "-o", str(tmp_path / "c.kir"),
         "--weights", str(tmp_path / "c.safetensors")], capture_output=True, text=True)
    assert p.returncode == 1
    assert "kiln_export: error: aten.histc.default (FX node 'histc')" in p.stderr
    assert "Kiln has no translation for aten.histc.default" in p.stderr


# ---- a sweep of translated ops ---------------------------------------------


class Pointwise(nn.Module):
    def forward(self, x):
        return (
            torch.softmax(x, -1) + F.log_softmax(x, 1),
            F.gelu(x, approximate="tanh") * F.silu(x) - torch.sigmoid(x) / (F.hardswish(x) + 2),
            F.softplus(x, beta=2.0, threshold=3.0) + torch.clamp(x, -0.5, 0.5) + F.relu6(x),
            torch.where(x > 0, x.exp(), x.abs().log()) + x.pow(2).sqrt().rsqrt() + torch.erf(x),
            torch.div(x * 7, 3, rounding_mode="floor") + torch.remainder(x, 0.7) + x.floor()
            + x.ceil() + x.round() + x.trunc() + x.sign(),
            F.layer_norm(x, (8,)) + torch.maximum(x, x * 0.5) + torch.minimum(x, -x),
            x.masked_fill(x < 0, -1.0) + torch.tril(x) + torch.triu(x, 1),
            x.tanh() + x.sin() + x.cos() + x.log1p().nan_to_num(0.0) + x.expm1(),
        )


class Reductions(nn.Module):
    def forward(self, x):
        return (x.sum(), x.sum(1, keepdim=True), x.mean((0, 2)), x.amax(-1), x.amin(0),
                x.argmax(-1), x.argmin(1, keepdim=True), x.max(dim=1).values,
                x.max(dim=1).indices, x.prod(-1), x.var(-1), x.var(dim=(0, 2), correction=0),
                torch.logsumexp(x, -1), x.std(), (x > 0).any(-1), (x > -3).all(),
                x.topk(3, dim=-1).values, x.topk(3, dim=-1).indices, x.sort(dim=1).values,
                x.norm(dim=-1), x.max(), torch.aminmax(x, dim=1).min)


class Shapes(nn.Module):
    def forward(self, x):
        a, b = x.split([3, 5], dim=-1)
        return (a, torch.cat([b, a], -1), torch.stack([x, x * 2], 0), x.chunk(2, dim=-1)[1],
                x.unbind(0)[2], x.repeat(2, 1, 3), x[:, None, :, :].expand(3, 4, 5, 8),
                x.flatten(1), x[1, 2:5:2, ::3], x.transpose(0, 2).contiguous().view(8, -1),
                x.permute(2, 0, 1).reshape(8, 15),
                x[:, :1].squeeze(1)[:, None] + x.unsqueeze(0).squeeze(),
                torch.arange(5, dtype=torch.float32) * 0.5 + torch.arange(1, 10, 2).sum(),
                torch.zeros_like(x) + torch.ones(3, 5, 8) + torch.full((8,), 2.5),
                x.to(torch.float16) * 2, (x * 10).to(torch.int64) // 3)


class Mats(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 6))
        self.b = nn.Parameter(torch.randn(6))
        self.register_buffer("scale", torch.tensor([2.0]))

    def forward(self, x, y):
        b = torch.bmm(x, x.transpose(1, 2))
        return (x @ self.w + self.b, b, torch.baddbmm(b, x, x.transpose(1, 2)),
                torch.addmm(self.b, x[0], self.w) * self.scale,
                torch.einsum("bij,bkj->bik", x, y), F.linear(x, self.w.t()))


class ProductsMore(nn.Module):
    """tensordot, vdot, nn.Bilinear, multi_dot, linalg.cross, cross and
    cdist (_cdist_forward) for p = 2, 1, 0, inf."""
    def __init__(self):
        super().__init__()
        self.bl = nn.Bilinear(3, 4, 5)

    def forward(self, a, b, x1, x2, v):
        return (torch.tensordot(a, b, dims=([1, 2], [1, 0])), torch.vdot(v, v), self.bl(x1, x2),
                torch.linalg.multi_dot([v, a[0].t(), x1.t(), x1]),
                torch.linalg.cross(x1, x1.flip(0)), torch.cross(x1, x1.flip(0), dim=1),
                torch.cdist(x1, x1.flip(0)), torch.cdist(x1, x1, p=1.0),
                torch.cdist(x1, x1.flip(0), p=0.0), torch.cdist(x1, x1, p=float("inf")))


class Attention(nn.Module):
    def forward(self, q, k, v, m):
        return (F.scaled_dot_product_attention(q, k, v, is_causal=True),
                F.scaled_dot_product_attention(q, k, v, attn_mask=m),
                F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True,
                                               scale=0.3),
                F.scaled_dot_product_attention(q, k, v, attn_mask=m.float().log()))


class Integers(nn.Module):
    def forward(self, i, b):
        return (i * 3 + 1, i // 2, i % 5, (i > 2) & b, i.sum(-1), i.to(torch.float32) / 2,
                torch.where(b, i, -i), i.max(-1).values)


class Activations(nn.Module):
    def forward(self, x):
        return (
            F.elu(x), F.elu(x, alpha=0.5), torch.ops.aten.elu(x, 0.7, 1.2, 0.9), F.selu(x),
            F.celu(x, alpha=0.7), F.leaky_relu(x), F.leaky_relu(x, 0.2),
            F.rrelu(x, 0.1, 0.3, training=False), F.hardtanh(x), F.hardtanh(x, -0.3, 0.4),
            F.relu6(x * 4), F.hardsigmoid(x * 4), F.mish(x), F.softsign(x), F.tanhshrink(x),
            F.softshrink(x, 0.3), F.hardshrink(x), F.threshold(x, 0.1, -2.0), F.logsigmoid(x),
            F.softmin(x, 1), F.glu(x, -1), F.glu(x.reshape(5, 3, 8), 2),
        )


class PointwiseMore(nn.Module):
    def forward(self, x, p):
        # p: probabilities in (0, 1)
        return (
            torch.square(x), x.frac(), torch.deg2rad(x * 90), torch.rad2deg(x), torch.sinc(x),
            torch.sinc(x.round()), torch.logit(p), torch.logit(p, eps=0.2),
            torch.xlogy(x, p), torch.xlogy(2.0, p), torch.xlogy(x, 3.0),
            torch.xlogy(x.round().clamp(min=0), x.abs() * 0.5),
            torch.special.xlog1py(x, p), torch.special.xlog1py(x, 0.5),
            torch.logaddexp(x, x * 0.5), torch.lerp(x, x * 3, 0.3), torch.lerp(x, -x, p),
            torch.addcmul(x, x, p, value=0.5), torch.addcdiv(x, x, p, value=-2),
            torch.clamp_min(x, 0.1), torch.clamp_max(x, -0.2), x.clamp(min=p),
            torch.float_power(p, 2.5), torch.float_power(x, 2), torch.float_power(p, x),
            torch.true_divide(x, p), torch.floor_divide(x, 0.3), torch.floor_divide(x, p),
            torch.heaviside(x.round(), p), torch.fmax(x, p), torch.fmin(x, p),
            x.tan(), x.sinh(), x.cosh(), x.asinh(), (x.abs() + 1).acosh(), (p * 2 - 1).atanh(),
            p.log10(), x.exp2(), x.atan(), (p * 2 - 1).asin(), (p * 2 - 1).acos(),
            torch.atan2(x, p - 0.5), torch.hypot(x, p), torch.copysign(p, x),
            torch.copysign(x, -0.0), torch.signbit(x), torch.fmod(x, p), torch.fmod(x, 0.3),
            torch.logaddexp2(x, p), torch.ldexp(x, (x * 4).round().to(torch.int32)),
            torch.erfc(x * 3), torch.sgn(x), torch.round(x * 100, decimals=-1),
            torch.round(x, decimals=2), torch.erfinv(p * 1.8 - 0.9), torch.lgamma(x),
            torch.digamma(p + 0.5), torch.polygamma(1, p + 40), torch.polygamma(3, p + 0.5),
            torch.i0(x), torch.special.i0e(x), torch.special.i1(x), torch.special.i1e(x),
            # trigamma far out (PyTorch's f64 series is truncated nearer 0:
            # README, "Where Kiln differs"); zeta's kernel takes f32 and
            # f64 only.
            torch.special.zeta((x.abs() + 1.5).double(), (p + 0.5).double()),
            torch.special.zeta(2.0, (p + 0.5).double()),
            torch.nextafter(x, p),
        )


class Specials(nn.Module):
    """inf and nan in the input."""

    def forward(self, x):
        return (
            x.isinf(), x.isfinite(), x.isposinf(), x.isneginf(), x.isnan(),
            torch.nan_to_num(x), torch.nan_to_num(x, 0.5, 100.0, -100.0),
            torch.nan_to_num(x, nan=1.0), torch.nansum(x, 1), torch.nansum(x),
            torch.nanmean(x, (0, 2), keepdim=True), torch.fmax(x, x.flip(0)),
            torch.fmin(x, x.flip(0)), torch.heaviside(x, x.flip(1)),
            torch.count_nonzero(x, 1), torch.count_nonzero(x), torch.count_nonzero(x, (0, 2)),
        )


class Statistics(nn.Module):
    def forward(self, x):
        vm = torch.var_mean(x, 1)
        sm = torch.std_mean(x, (0, 2), correction=0, keepdim=True)
        return (
            x.var(), x.var(-1), x.var((0, 2), correction=0, keepdim=True), x.std(1),
            x.std(correction=2), *vm, *sm, torch.logsumexp(x, -1), torch.logsumexp(x, (0, 1)),
            torch.logsumexp(x, 1, keepdim=True), x.norm(dim=-1), x.norm(),
            torch.linalg.vector_norm(x, 3, dim=(0, 2)), torch.linalg.vector_norm(x, 1),
            torch.linalg.vector_norm(x, float("inf"), dim=1, keepdim=True),
            torch.linalg.vector_norm(x, -float("inf"), dim=1),
            torch.linalg.vector_norm(x, 0.5, dim=-1), torch.linalg.vector_norm(x, 0, dim=-1),
            torch.cumsum(x, -1), torch.cumsum(x, 0, dtype=torch.float64), x.cumprod(1),
            torch.logcumsumexp(x, 1), *torch.cummax(x, 2), *torch.cummin(x, 0),
            torch.cumsum(x > 0, 1), torch.dist(x, x.flip(0)), torch.dist(x, x[0], 3),
            F.normalize(x, dim=-1),
        )


class ShapesMore(nn.Module):
    def forward(self, x):
        return (
            x.narrow(2, 1, 5), x.movedim(0, 2), torch.movedim(x, (0, 1), (2, 0)),
            x[0].broadcast_to(2, 5, 8), x.unflatten(2, (2, 4)), torch.atleast_1d(x[0, 0, 0]),
            torch.atleast_2d(x[0, 0]), torch.atleast_3d(x[0]), x.roll(1, 0),
            x.roll((2, -3), (1, 2)), x.roll(7), x.repeat(2, 1, 3), x.repeat(2, 1, 1, 2),
            x.tile(2), x.tile((2, 1, 1, 1)), x.tril(), x.triu(1), x.tril(-2), x[0].triu(3),
            x.flip(0), x.flip((1, 2)), torch.fliplr(x), torch.flipud(x),
            F.pad(x, (1, 2)), F.pad(x, (0, 1, 2, 0), value=-1.5), F.pad(x, (-1, 2, 1, -2)),
            torch.constant_pad_nd(x, (1, 1, 0, 0, 2, 1), 3.0),
        )


class IntegersMore(nn.Module):
    def forward(self, i):
        return (
            torch.cumsum(i, 0), torch.cumprod(i.clamp(-2, 2), 1), *torch.cummax(i, 1),
            i.roll(1, 1), i.flip(0), i.tril(), i.triu(-1), F.pad(i, (1, 1), value=7),
            i.repeat(1, 2), torch.floor_divide(i, 3), torch.floor_divide(i, i.abs() + 1),
            torch.clamp_min(i, 0), torch.clamp_max(i, 2), F.hardtanh(i, -3, 3), F.relu6(i),
            torch.square(i), torch.count_nonzero(i, 0), i.isinf(), torch.true_divide(i, 4),
            torch.float_power(i, 2), torch.addcmul(i, i, i, value=2), i.tan(), i.exp2(),
            (i.abs() + 1).log10(), torch.gcd(i, i.flip(0)), torch.lcm(i, i.flip(1)),
            i << 2, i >> 1, torch.bitwise_left_shift(i, i.abs()), 3 >> i.abs(),
            torch.sgn(i), torch.lgamma(i),
        )


class Indexing(nn.Module):
    def forward(self, x, i, p):
        # i: indices into dim 1 (duplicates), p: a permutation of dim 0's
        # indices per column (scatter's targets must be unique)
        # x[:, positions] = value (index_put with a none entry).
        y = x.clone()
        y[:, i[0, :3]] = -1.0
        return (
            torch.gather(x, 1, i), torch.gather(x, -1, i[:, :2]), x.scatter(0, p, x * 10),
            x.scatter(1, i[:, :1], -1.0), x.scatter_add(1, i, x), torch.take(x, i[:2]),
            x.scatter_reduce(1, i, x, "sum"), x.scatter_reduce(1, i, x, "amax"),
            x.scatter_reduce(1, i, x, "amin", include_self=False),
            x.scatter_reduce(1, i, x.abs() + 0.5, "prod"),
            x.scatter_reduce(1, i, x, "mean", include_self=False),
            x.scatter(1, i, x, reduce="add"), x.scatter(1, i, x.abs(), reduce="multiply"),
            x.index_add(1, i[0], x, alpha=2), x.index_add(0, p[:, 0], x),
            x.index_select(1, i[1]),
            # Advanced indexing: x[i], x[:, i], x[p, i] (broadcast), and
            # index_put through the functional forms of x[...] = v / += v.
            x[i[:2, :3] % 4], x[:, i[0]], x[p[:, :2], i[:, :2]], x[p[:, 0], None],
            torch.index_put(x, (p[:, 0],), x * 2),
            y,
            torch.index_put(x, (i[:, 0] % 4,), x, accumulate=True),
            torch.index_copy(x, 0, p[:2, 0], x[:2] * 2), torch.index_fill(x, 1, i[0], -1.0),
            torch.index_fill(x, 0, p[:, 0], x[0, 0]), torch.take_along_dim(x, i[:1, :3], 1),
        )


class Spatial(nn.Module):
    """Convolution, batch norm (eval), pooling and resampling, as
    torchvision's models and U-Nets use them."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.conv = nn.Conv2d(4, 6, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(6)
        self.bn.running_mean.uniform_(-1, 1, generator=g)
        self.bn.running_var.uniform_(0.5, 2, generator=g)
        self.depthwise = nn.Conv2d(6, 6, 3, stride=2, padding=1, groups=6)
        self.up = nn.ConvTranspose2d(6, 3, 3, stride=2, padding=1, output_padding=1)
        self.seq = nn.Conv1d(4, 2, 4, padding="same", dilation=1)
        self.vol = nn.Conv3d(1, 2, 3, padding=1)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        d = F.hardswish(self.depthwise(y))
        p, i = F.max_pool2d(y, 3, 2, 1, return_indices=True)
        v = x.unsqueeze(1)
        return (
            d, p, i, F.max_pool2d(y, 2, ceil_mode=True), self.up(d),
            F.avg_pool2d(y, 3, 2, 1, count_include_pad=False), F.avg_pool2d(y, 2, divisor_override=3),
            F.adaptive_avg_pool2d(y, (3, 2)), F.adaptive_max_pool2d(y, 3),
            F.interpolate(d, scale_factor=2, mode="bilinear"),
            F.interpolate(d, size=(5, 7), mode="bicubic", align_corners=True),
            F.interpolate(d, scale_factor=3), F.interpolate(d, size=(3, 5), mode="nearest-exact"),
            F.interpolate(d, size=(7, 9), mode="area"),
            self.seq(x[0, :, 0]), F.avg_pool1d(x[:, 0], 3), F.max_pool1d(x[:, 0], 2),
            F.interpolate(x[:, 0], scale_factor=1.5, mode="linear"),
            # PyTorch's CPU avg_pool3d takes f32 and f64 only.
            self.vol(v), F.max_pool3d(v, 2),
            F.avg_pool3d(v, 2) if v.dtype in (torch.float32, torch.float64) else v,
            F.interpolate(v, scale_factor=2, mode="trilinear"),
            F.adaptive_avg_pool3d(v, 2),
            # F.pad's reflect, replicate and circular modes (circular
            # exports as slice_scatter).
            F.pad(y, (1, 1, 2, 0), mode="reflect"), F.pad(x[:, 0], (3, -1), mode="replicate"),
            F.pad(v, (1, 0, 1, 1, 0, 1), mode="reflect"), F.pad(y, (1, 2, 1, 0), mode="circular"),
            F.pixel_shuffle(x, 2), F.pixel_unshuffle(y, 2), F.channel_shuffle(y, 3),
            # Creation ops scaled by the input (so they are not folded away).
            torch.eye(4, 5, dtype=x.dtype) * x[0, 0, :4, :5].sum(),
            torch.linspace(-1, 1, 7, dtype=x.dtype) * x[0, 0, 0, 0],
        )


class Sampling(nn.Module):
    """Unpooling, sliding blocks, grid sampling and lp pools."""

    def forward(self, x, g, t):
        p, i = F.max_pool2d(x, 2, return_indices=True)
        v = x.unsqueeze(1)
        q, j = F.max_pool3d(v, 2, return_indices=True)
        return (
            F.max_unpool2d(p, i, 2, output_size=x.shape[-2:]),
            F.max_unpool3d(q, j, 2, output_size=v.shape[-3:]),
            F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
            F.fold(F.unfold(x, 2), x.shape[-2:], 2),
            F.grid_sample(x, g, align_corners=False),
            F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True),
            F.grid_sample(x, g, mode="bicubic", padding_mode="reflection", align_corners=False),
            F.grid_sample(x, F.affine_grid(t, list(x.shape), align_corners=False),
                          padding_mode="reflection", align_corners=True),
            F.lp_pool2d(x, 2.0, (2, 3), ceil_mode=True), F.lp_pool1d(x[0], 3.0, 2),
            F.lp_pool2d(x, float("inf"), 2),
        )


class Mixed(nn.Module):
    """Attributes off their defaults, dtype arguments, mixed dtypes,
    input-independent subgraphs."""

    def forward(self, x, i):
        return (
            x.var(1, correction=0.5), x.std(unbiased=False),
            torch.linalg.vector_norm(x, dtype=torch.float64),
            torch.nansum(x, 1, dtype=torch.float64), torch.nanmean(x, dtype=torch.float64),
            torch.cumsum(i, 1, dtype=torch.float32), torch.logsumexp(i, 1),
            torch.cumprod(i, 0, dtype=torch.int32),
            torch.ones(4, 4).tril().cumsum(0) + x[0, :4], F.rrelu(x, 0.2, 0.4),
            torch.clamp_min(i, 0.5), torch.lerp(x, x * 2, torch.tensor(0.25)),
            torch.xlogy(i, x.abs()), *torch.var_mean(x, correction=0), torch.logit(x.sigmoid()),
            torch.nan_to_num(i), torch.roll(x, 0, 1), torch.float_power(2, i),
            torch.floor_divide(i, 2.5), torch.true_divide(i, i.abs() + 1),
        )


class ShapesSelect(nn.Module):
    """Issue 20's views, diagonals, selections, creation and view lists."""

    def forward(self, x):
        a, b = torch.meshgrid(x[0, 0, :3], x[1, 1, :4], indexing="xy")
        p, q = torch.broadcast_tensors(x[0, :, :1], x[1, 0])
        return (
            torch.diagonal(x, 1, 1, 2), torch.diag(x[0, 0]), torch.diag(x[0], -1),
            torch.diag_embed(x[0], 1), torch.diagflat(x[0, :2]),
            torch.diagonal_scatter(x, x[:, 0, :5] * 2, 0, 1, 2), x.unfold(2, 3, 2),
            x.as_strided((4, 3), (1, 4), 2),
            *torch.kthvalue(x, 2, 1), torch.median(x), *torch.median(x, 2, keepdim=True),
            *torch.nanmedian(x, 0), *torch.mode(x.round(), 1), torch.nanmedian(x),
            torch.zeros_like(x) + x, torch.ones_like(x.transpose(1, 2)) * 2,
            torch.full_like(x, 3.5) - x, torch.empty_like(x).zero_() + x,
            torch.logspace(-1, 1, 5) * x[0, 0, 0], a * b, p + q,
            torch.tril_indices(3, 4, 1), torch.triu_indices(4, 3) * 2,
        )


class Issue16More(nn.Module):
    """Issue 16's remaining ops: searching, masked_scatter, prelu,
    max_unpool1d, the losses, the native normalizations, LRN and
    embedding_bag."""

    def __init__(self):
        super().__init__()
        self.act = nn.PReLU(5)

    def forward(self, x, edges, rows):
        pooled, where = F.max_pool1d(x, 2, return_indices=True)
        return (
            x.masked_scatter(x[0] > 0, rows.reshape(-1).repeat(6)), self.act(x), F.prelu(x, rows[0, :1]),
            F.max_unpool1d(pooled, where, 2), F.max_unpool1d(pooled, where, 2, output_size=[9]),
            # The losses export as torch.export decomposes them (ATen's
            # composites and the functional's Python): pointwise ops,
            # sums and norms.
            F.gaussian_nll_loss(x, x.flip(0), 0.5, full=True),
            F.multilabel_soft_margin_loss(x, x.sigmoid(), rows[0, :1].abs()),
            F.cosine_embedding_loss(x[0], x[1], x[2, :, 0].sign(), margin=0.2, reduction="none"),
            F.triplet_margin_loss(x[0], x[1], x[2], swap=True),
            F.triplet_margin_loss(x[0], x[1], x[2], p=1, margin=0.5, reduction="sum"),
            # Normalizations: group norm and batch norm without running
            # statistics export as ATen's native ops (three results each),
            # layer norm's statistics when they are used, LRN decomposed.
            F.group_norm(x, 5, rows[0, :5], rows[1, :5]), F.batch_norm(x, None, None, training=True),
            torch.native_layer_norm(x, [8], None, None, 1e-5)[1],
            F.local_response_norm(x, 3), F.local_response_norm(x.unsqueeze(-1).expand(3, 5, 8, 2), 2),
            F.embedding_bag(torch.tensor([0, 2, 1, 2, 0]), rows, torch.tensor([0, 2]), mode="sum",
                            per_sample_weights=x[0, 0, :5]),
            F.embedding_bag(torch.tensor([[0, 2], [1, 2]]), rows, mode="max"),
            F.embedding_bag(torch.tensor([0, 2, 1, 2]), rows, torch.tensor([0, 1, 4]), mode="mean",
                            include_last_offset=True, padding_idx=1),
            torch.searchsorted(edges, x), torch.searchsorted(edges, x, right=True, out_int32=True),
            torch.searchsorted(rows, x[:, :, 0], side="right"),
            torch.searchsorted(rows.flip(-1), x[:, :, 0], sorter=torch.argsort(rows.flip(-1))),
            torch.searchsorted(edges, 0.25), torch.bucketize(x, edges),
            torch.bucketize(x, edges, right=True),
        )


def _sweep_cases():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 8, generator=g)
    m = torch.rand(6, 6, generator=g) > 0.3
    m[:, 0] = True
    qkv = [torch.randn(2, 4, 6, 8, generator=g) for _ in range(3)]
    special = torch.randn(3, 5, 8, generator=g)
    special[0, 1, :3] = float("inf")
    special[1, 2, 2:4] = float("-inf")
    special[2, :, 5] = float("nan")
    special[0, 0, ::2] = 0.0
    return {
        "pointwise": (Pointwise(), (x,)),
        "reductions": (Reductions(), (x,)),
        "shapes": (Shapes(), (x,)),
        "mats": (Mats(), (x, torch.randn(3, 7, 8, generator=g))),
        "attention": (Attention(), (*qkv, m)),
        "integers": (Integers(), (torch.randint(-10, 10, (4, 6), generator=g),
                                  torch.rand(4, 6, generator=g) > 0.5)),
        "products_more": (ProductsMore(), (torch.randn(2, 3, 4, generator=g),
                                           torch.randn(4, 3, 2, generator=g),
                                           torch.randn(6, 3, generator=g),
                                           torch.randn(6, 4, generator=g),
                                           torch.randn(4, generator=g))),
        "activations": (Activations(), (x,)),
        "pointwise_more": (PointwiseMore(), (x, torch.rand(3, 5, 8, generator=g) * 0.98 + 0.01)),
        "specials": (Specials(), (special,)),
        "statistics": (Statistics(), (x,)),
        "shapes_more": (ShapesMore(), (x,)),
        "shapes_select": (ShapesSelect(), (x,)),
        "integers_more": (IntegersMore(), (torch.randint(-10, 10, (4, 6), generator=g),)),
        "mixed": (Mixed(), (torch.randn(4, 6, generator=g),
                            torch.randint(-3, 4, (4, 6), generator=g))),
        "spatial": (Spatial(), (torch.randn(2, 4, 6, 8, generator=g),)),
        "sampling": (Sampling(), (torch.randn(2, 3, 6, 8, generator=g),
                                  torch.rand(2, 5, 7, 2, generator=g) * 2.4 - 1.2,
                                  torch.randn(2, 2, 3, generator=g))),
        "issue16_more": (Issue16More(), (x, torch.linspace(-2, 2, 9),
                                         torch.sort(torch.randn(3, 7, generator=g)).values)),
        "indexing": (Indexing(), (torch.randn(4, 6, generator=g),
                                  torch.randint(0, 6, (4, 6), generator=g),
                                  torch.stack([torch.randperm(4, generator=g)
                                               for _ in range(6)], 1))),
    }


@pytest.mark.parametrize("case", list(_sweep_cases()))
def test_op_sweep(tmp_path, case):
    torch.manual_seed(0)
    module, args = _sweep_cases()[case]
    export_and_compare(module, args, tmp_path)


NEW_CASES = ["products_more", "activations", "pointwise_more", "specials", "statistics",
             "shapes_more", "integers_more", "mixed", "indexing", "spatial", "sampling",
             "shapes_select",
             "issue16_more"]
DTYPE_CASES = ["pointwise", "reductions", "activations", "pointwise_more", "specials",
               "statistics", "shapes_more", "indexing", "spatial"]


@pytest.mark.parametrize("case", NEW_CASES)
def test_op_sweep_interp(tmp_path, case):
    module, args = _sweep_cases()[case]
    export_and_compare(module, args, tmp_path, backend="interp")


@pytest.mark.parametrize("dtype,tol", [(torch.float16, 1e-2), (torch.bfloat16, 2e-2),
                                       (torch.float64, 1e-12)])
@pytest.mark.parametrize("case", DTYPE_CASES)
def test_op_sweep_dtypes(tmp_path, case, dtype, tol):
    torch.manual_seed(0)
    module, args = _sweep_cases()[case]
    module = module.to(dtype)
    args = tuple(a.to(dtype) if a.is_floating_point() else a for a in args)
    export_and_compare(module, args, tmp_path, tol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_specials_elementwise(tmp_path, dtype):
    """inf and nan where PyTorch has them, and the finite values close
    element by element (the sweep's error relative to the largest magnitude
    says little when that is inf)."""
    module, (x,) = _sweep_cases()["specials"]
    x = x.to(dtype)
    r = kiln_export.export(module, (x,), tmp_path / "m.kir", tmp_path / "m.safetensors")
    outs = kiln_run(tmp_path / "m.kir", tmp_path / "m.safetensors", r.example_inputs, tmp_path)
    refs = module(x)
    assert len(outs) == len(refs)
    for got, want in zip(outs, refs):
        torch.testing.assert_close(got, want, equal_nan=True)


def test_whole_ops_stay_whole(tmp_path):
    """Ops Kiln has whole are written as Kiln's op, not decomposed."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 8, generator=g)
    want = {
        "activations": ["elu", "selu", "celu", "leaky_relu", "rrelu", "hardtanh", "relu6",
                        "hardsigmoid", "mish", "threshold", "logsigmoid", "glu"],
        "pointwise_more": ["square", "frac", "deg2rad", "rad2deg", "sinc", "logit", "xlogy",
                           "special_xlog1py", "logaddexp", "lerp", "addcmul", "addcdiv",
                           "clamp_min", "clamp_max", "float_power", "true_divide",
                           "floor_divide", "heaviside", "fmax", "fmin", "tan", "sinh", "cosh",
                           "asinh", "acosh", "atanh", "log10", "exp2", "atan", "asin", "acos",
                           "atan2", "hypot", "copysign", "signbit", "fmod", "logaddexp2",
                           "ldexp", "erfc", "sgn", "erfinv", "lgamma", "digamma", "polygamma",
                           "i0", "special_i0e", "special_i1", "special_i1e", "special_zeta",
                           "nextafter"],
        "specials": ["isinf", "isfinite", "isposinf", "isneginf", "nan_to_num", "nansum",
                     "nanmean", "count_nonzero"],
        "statistics": ["var", "std", "var_mean", "std_mean", "logsumexp",
                       "linalg_vector_norm", "cumsum", "cumprod", "logcumsumexp", "cummax",
                       "cummin", "clamp_min"],
        "shapes_more": ["roll", "repeat", "tile", "tril", "triu", "flip", "fliplr", "flipud",
                        "constant_pad_nd"],
        "products_more": ["tensordot", "vdot", "bilinear", "linalg_multi_dot", "linalg_cross",
                          "cross", "cdist"],
        "issue16_more": ["searchsorted", "bucketize", "masked_scatter", "prelu", "max_unpool2d",
                         "native_group_norm", "native_batch_norm", "native_layer_norm",
                         "embedding_bag"],
        "indexing": ["gather", "scatter", "scatter_add", "scatter_reduce", "index_add", "take",
                     "index_select"],
        "shapes_select": ["diagonal", "diag", "diag_embed", "diagflat", "diagonal_scatter",
                          "unfold", "as_strided", "kthvalue", "median", "nanmedian", "mode",
                          "zeros_like", "ones_like", "full_like", "empty_like", "logspace",
                          "meshgrid", "broadcast_tensors", "tril_indices", "triu_indices"],
    }
    for case, ops in want.items():
        module, args = _sweep_cases()[case]
        r = kiln_export.export(module.eval(), args)
        used = {line.split("=", 1)[1].split()[0] for line in r.kir.splitlines()
                if " = " in line and not line.lstrip().startswith("//")}
        assert set(ops) <= used, (case, sorted(set(ops) - used))


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small"])
def test_torchvision_models(tmp_path, name):
    """torchvision's ResNet-18 and MobileNetV3-small (random weights, eval
    mode) on a 64×64 image."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)()
    export_and_compare(model, (torch.randn(1, 3, 64, 64),), tmp_path)


def test_supported_ops_listed():
    ops = kiln_export.supported_ops()
    for name in ["aten.linear.default", "aten.scaled_dot_product_attention.default",
                 "aten.layer_norm.default", "aten.view.default", "aten.embedding.default"]:
        assert name in ops
