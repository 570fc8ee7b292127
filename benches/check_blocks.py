#!/usr/bin/env python3
"""Check the transformer-block programs of `benches/programs/` against PyTorch.

For each block (mlp, gpt2_block, llama_block) this builds the same module in
PyTorch (transformers' GPT2Block and LlamaDecoderLayer when `transformers` is
installed, else plain torch code written after them), gives it random f32
weights and inputs, saves them to a safetensors file under the program's
argument names, runs `kiln run`, and compares Kiln's result with the module's
f32 result. The f64 run of the same module is the yardstick: PyTorch's own f32
error against it is printed next to Kiln's.

    pip install safetensors transformers   # transformers optional
    python3 benches/check_blocks.py [--only mlp,gpt2_block] [--backend interp]
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
F32_MIN = torch.finfo(torch.float32).min

try:
    import transformers  # noqa: F401
    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False


def causal_mask(n, dtype):
    """transformers' eager mask: where(kv_idx <= q_idx, 0, finfo.min), [1, 1, n, n]."""
    if HAVE_TRANSFORMERS:
        from transformers.masking_utils import causal_mask_function, eager_mask
        return eager_mask(batch_size=1, q_length=n, kv_length=n, mask_function=causal_mask_function, dtype=dtype)
    idx = torch.arange(n)
    return torch.where(idx[None, :] <= idx[:, None], torch.zeros((), dtype=dtype), torch.finfo(dtype).min)[None, None]


# ---------------------------------------------------------------- the blocks
# Each block: `params(gen)` -> {argument name: f32 tensor} (the program's
# arguments, x first), and `module(params, dtype)` -> a callable of x.

def mlp_params(gen):
    return {
        "x": torch.randn(64, 1024, generator=gen),
        "w1": torch.randn(4096, 1024, generator=gen) / 32,
        "b1": torch.randn(4096, generator=gen) * 0.1,
        "w2": torch.randn(1024, 4096, generator=gen) / 64,
        "b2": torch.randn(1024, generator=gen) * 0.1,
    }


def mlp_module(p, dtype):
    m = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024))
    with torch.no_grad():
        m[0].weight.copy_(p["w1"]); m[0].bias.copy_(p["b1"])
        m[2].weight.copy_(p["w2"]); m[2].bias.copy_(p["b2"])
    return m.to(dtype).eval()


GPT2 = dict(n_embd=768, n_head=12, n_inner=3072, tokens=128)


def gpt2_params(gen):
    d, f, n = GPT2["n_embd"], GPT2["n_inner"], GPT2["tokens"]
    r = lambda *s, scale=1.0: torch.randn(*s, generator=gen) * scale
    return {
        "x": r(1, n, d),
        "ln_1_w": 1 + r(d, scale=0.1), "ln_1_b": r(d, scale=0.1),
        "c_attn_w": r(d, 3 * d, scale=d ** -0.5), "c_attn_b": r(3 * d, scale=0.1),
        "attn_proj_w": r(d, d, scale=d ** -0.5), "attn_proj_b": r(d, scale=0.1),
        "ln_2_w": 1 + r(d, scale=0.1), "ln_2_b": r(d, scale=0.1),
        "c_fc_w": r(d, f, scale=d ** -0.5), "c_fc_b": r(f, scale=0.1),
        "mlp_proj_w": r(f, d, scale=f ** -0.5), "mlp_proj_b": r(d, scale=0.1),
    }


def gpt2_module(p, dtype):
    mask = causal_mask(GPT2["tokens"], dtype)
    if HAVE_TRANSFORMERS:
        from transformers import GPT2Config
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block
        cfg = GPT2Config(n_embd=GPT2["n_embd"], n_head=GPT2["n_head"], n_inner=GPT2["n_inner"], n_layer=1,
                         resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation="eager")
        blk = GPT2Block(cfg, layer_idx=0)
        sd = {
            "ln_1.weight": p["ln_1_w"], "ln_1.bias": p["ln_1_b"],
            "attn.c_attn.weight": p["c_attn_w"], "attn.c_attn.bias": p["c_attn_b"],
            "attn.c_proj.weight": p["attn_proj_w"], "attn.c_proj.bias": p["attn_proj_b"],
            "ln_2.weight": p["ln_2_w"], "ln_2.bias": p["ln_2_b"],
            "mlp.c_fc.weight": p["c_fc_w"], "mlp.c_fc.bias": p["c_fc_b"],
            "mlp.c_proj.weight": p["mlp_proj_w"], "mlp.c_proj.bias": p["mlp_proj_b"],
        }
        missing, unexpected = blk.load_state_dict(sd, strict=False)
        params = dict(blk.named_parameters())
        assert not unexpected and not [k for k in missing if k in params], (missing, unexpected)
        blk = blk.to(dtype).eval()
        def run(x):
            out = blk(x, attention_mask=mask)
            return out[0] if isinstance(out, tuple) else out
        return run
    w = {k: v.to(dtype) for k, v in p.items() if k != "x"}
    return lambda x: gpt2_block_torch(x, mask, **w)


def gpt2_block_torch(x, mask, ln_1_w, ln_1_b, c_attn_w, c_attn_b, attn_proj_w, attn_proj_b,
                     ln_2_w, ln_2_b, c_fc_w, c_fc_b, mlp_proj_w, mlp_proj_b):
    """transformers' GPT2Block (eager attention, gelu_new) in plain torch."""
    B, T, C = x.shape
    conv1d = lambda h, w, b: torch.addmm(b, h.view(-1, h.size(-1)), w).view(*h.shape[:-1], w.shape[1])
    h = torch.nn.functional.layer_norm(x, (C,), ln_1_w, ln_1_b, 1e-5)
    q, k, v = conv1d(h, c_attn_w, c_attn_b).split(C, dim=2)
    q, k, v = (t.view(B, T, -1, 64).transpose(1, 2) for t in (q, k, v))
    s = torch.matmul(q, k.transpose(-1, -2)) * 64 ** -0.5 + mask
    a = torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2)
    a = a.reshape(B, T, -1).contiguous()
    x = conv1d(a, attn_proj_w, attn_proj_b) + x
    h = conv1d(torch.nn.functional.layer_norm(x, (C,), ln_2_w, ln_2_b, 1e-5), c_fc_w, c_fc_b)
    h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
    return x + conv1d(h, mlp_proj_w, mlp_proj_b)


LLAMA = dict(hidden=512, heads=8, head_dim=64, inter=1376, tokens=128, eps=1e-6, theta=10000.0)


def llama_params(gen):
    d, f, n = LLAMA["hidden"], LLAMA["inter"], LLAMA["tokens"]
    r = lambda *s, scale=1.0: torch.randn(*s, generator=gen) * scale
    return {
        "x": r(1, n, d),
        "in_norm_w": 1 + r(d, scale=0.1),
        "q_w": r(d, d, scale=d ** -0.5), "k_w": r(d, d, scale=d ** -0.5),
        "v_w": r(d, d, scale=d ** -0.5), "o_w": r(d, d, scale=d ** -0.5),
        "post_norm_w": 1 + r(d, scale=0.1),
        "gate_w": r(f, d, scale=d ** -0.5), "up_w": r(f, d, scale=d ** -0.5),
        "down_w": r(d, f, scale=f ** -0.5),
    }


def llama_module(p, dtype):
    n = LLAMA["tokens"]
    mask = causal_mask(n, dtype)
    position_ids = torch.arange(n).unsqueeze(0)
    if HAVE_TRANSFORMERS:
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding
        cfg = LlamaConfig(hidden_size=LLAMA["hidden"], num_attention_heads=LLAMA["heads"],
                          num_key_value_heads=LLAMA["heads"], intermediate_size=LLAMA["inter"],
                          rms_norm_eps=LLAMA["eps"], rope_theta=LLAMA["theta"], num_hidden_layers=1,
                          max_position_embeddings=n, attn_implementation="eager")
        layer = LlamaDecoderLayer(cfg, layer_idx=0)
        layer.load_state_dict({
            "input_layernorm.weight": p["in_norm_w"], "post_attention_layernorm.weight": p["post_norm_w"],
            "self_attn.q_proj.weight": p["q_w"], "self_attn.k_proj.weight": p["k_w"],
            "self_attn.v_proj.weight": p["v_w"], "self_attn.o_proj.weight": p["o_w"],
            "mlp.gate_proj.weight": p["gate_w"], "mlp.up_proj.weight": p["up_w"], "mlp.down_proj.weight": p["down_w"],
        })
        layer = layer.to(dtype).eval()
        rope = LlamaRotaryEmbedding(cfg)  # inv_freq in f32, as in the model (a buffer the model keeps f32)
        def run(x):
            cos, sin = rope(x, position_ids)
            out = layer(x, attention_mask=mask, position_ids=position_ids, position_embeddings=(cos, sin))
            return out[0] if isinstance(out, tuple) else out
        return run
    w = {k: v.to(dtype) for k, v in p.items() if k != "x"}
    return lambda x: llama_block_torch(x, mask, position_ids, **w)


def rotary_cos_sin(x, position_ids):
    """LlamaRotaryEmbedding (default rope): cos and sin [1, T, head_dim] in x's dtype."""
    dim = LLAMA["head_dim"]
    inv_freq = 1.0 / (LLAMA["theta"] ** (torch.arange(0, dim, 2, dtype=torch.float, device=x.device) / dim))
    freqs = position_ids[..., None].float() * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def llama_block_torch(x, mask, position_ids, in_norm_w, q_w, k_w, v_w, o_w, post_norm_w, gate_w, up_w, down_w):
    """transformers' LlamaDecoderLayer (eager attention, no GQA) in plain torch."""
    F = torch.nn.functional
    eps = LLAMA["eps"]
    rms = lambda h, w: w * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps))
    rotate_half = lambda t: torch.cat((-t[..., t.shape[-1] // 2:], t[..., : t.shape[-1] // 2]), dim=-1)
    B, T, _ = x.shape
    h = rms(x, in_norm_w)
    q, k, v = (F.linear(h, w).view(B, T, -1, 64).transpose(1, 2) for w in (q_w, k_w, v_w))
    cos, sin = rotary_cos_sin(x, position_ids)
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    s = torch.matmul(q, k.transpose(2, 3)) * 64 ** -0.5 + mask
    a = torch.matmul(F.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype), v).transpose(1, 2).contiguous()
    x = x + F.linear(a.reshape(B, T, -1).contiguous(), o_w)
    h = rms(x, post_norm_w)
    return x + F.linear(F.silu(F.linear(h, gate_w)) * F.linear(h, up_w), down_w)


BLOCKS = {
    "mlp": (mlp_params, mlp_module),
    "gpt2_block": (gpt2_params, gpt2_module),
    "llama_block": (llama_params, llama_module),
}


def errors(got, ref):
    """max |got - ref|, that over max |ref|, and the largest |got - ref| / (|ref| + 1e-3 max |ref|)."""
    got, ref = got.double(), ref.double()
    diff = (got - ref).abs()
    scale = ref.abs().max().item()
    return diff.max().item(), diff.max().item() / scale, (diff / (ref.abs() + 1e-3 * scale)).max().item()


def main():
    from safetensors.torch import load_file, save_file

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.path.join(ROOT, "target", "release", "kiln"))
    parser.add_argument("--backend", default="cranelift")
    parser.add_argument("--only", default="", help="comma-separated block names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plain", action="store_true", help="plain-torch references even when transformers is installed")
    parser.add_argument("--tol", type=float, default=1e-4, help="max relative error (of max |ref|) to pass")
    args = parser.parse_args()
    global HAVE_TRANSFORMERS
    HAVE_TRANSFORMERS = HAVE_TRANSFORMERS and not args.plain
    names = [n for n in BLOCKS if not args.only or n in args.only.split(",")]
    torch.set_num_threads(2)
    print(f"reference: {'transformers ' + transformers.__version__ if HAVE_TRANSFORMERS else 'plain torch'}, "
          f"torch {torch.__version__}, kiln backend {args.backend}")
    failed = False
    with tempfile.TemporaryDirectory(prefix="kiln-blocks-") as tmp:
        for name in names:
            make_params, make_module = BLOCKS[name]
            gen = torch.Generator().manual_seed(args.seed)
            params = {k: v.float().contiguous() for k, v in make_params(gen).items()}
            inp, out = os.path.join(tmp, f"{name}_in.safetensors"), os.path.join(tmp, f"{name}_out.safetensors")
            save_file(params, inp)
            program = os.path.join(HERE, "programs", f"{name}.kir")
            subprocess.run([args.kiln, "run", program, "--inputs", inp, "--out", out, "--backend", args.backend], check=True)
            got = load_file(out)["out0"]
            with torch.no_grad():
                ref32 = make_module(params, torch.float32)(params["x"])
                ref64 = make_module(params, torch.float64)(params["x"].double())
            assert got.shape == ref32.shape and got.dtype == ref32.dtype, (got.shape, got.dtype, ref32.shape, ref32.dtype)
            k32 = errors(got, ref32)
            k64 = errors(got, ref64)
            t64 = errors(ref32, ref64)
            ok = k32[1] <= args.tol and k64[1] <= max(args.tol, 4 * t64[1])
            failed |= not ok
            print(f"{name:12s} {'ok  ' if ok else 'FAIL'} max|ref| {ref32.abs().max().item():.3g}  "
                  f"kiln-torch32: abs {k32[0]:.2e} rel {k32[1]:.2e} elem {k32[2]:.2e}  |  "
                  f"kiln-torch64: rel {k64[1]:.2e}  torch32-torch64: rel {t64[1]:.2e}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
