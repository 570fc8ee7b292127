#!/usr/bin/env python3
"""Kiln against PyTorch eager, torch.compile, ONNX Runtime and OpenVINO.

Runs `kiln bench --json` on each program of `benches/programs/` and the same
computation in PyTorch (when torch is installed), with the method of the
project's performance anchors: 2 threads, median of 15 timed calls after 3
warm-up calls, every call allocating its output. With `--rounds N` every
workload is measured N times, the engines interleaved, their order
alternating from round to round, and each figure is the median over the
rounds. The load average is read before and after each workload. Prints a
table of times and ratios (a ratio above 1 means Kiln is faster).

The transformer blocks (`mlp`, `gpt2_block`, `llama_block`; weights are
inputs, f32, batch 1) are also exported with `torch.onnx.export` and run
with ONNX Runtime (CPUExecutionProvider, intra_op_num_threads=2) and
OpenVINO (CPU, INFERENCE_PRECISION_HINT f32, 2 threads) when those are
installed (`pip install onnx onnxscript onnxruntime openvino`); otherwise
their columns read n/a. Kiln runs on the same input values as the others
for the blocks (`kiln bench --inputs`, needs `safetensors`).

    cargo build --release -p kiln-cli
    python3 benches/compare_torch.py            # add --no-compile to skip Inductor
    python3 benches/compare_torch.py --markdown # the table for BENCHMARKS.md
    python3 benches/compare_torch.py --only mlp,gpt2_block,llama_block --rounds 3 --markdown
    python3 benches/compare_torch.py --only conv3x3,conv3x3_cl,depthwise3x3,max_pool2d,bilinear_x2,resnet18_b1,resnet18_b8 --rounds 3 --markdown

The CNN workloads (issue 17) are a 3×3 convolution in both memory formats,
a depthwise convolution, ResNet's max pool, a bilinear ×2 upsampling, and
torchvision's ResNet-18 (random weights, eval mode; needs torchvision and
the repository's `python/kiln_export`) at batch 1 and 8, which ONNX Runtime
and OpenVINO also run.

The whole-model workload (issue 18): GPT-2 small from transformers (124M
parameters, random weights) on 1×128 and 8×128 tokens, exported with
kiln_export, which ONNX Runtime and OpenVINO also run:

    python3 benches/compare_torch.py --only gpt2_124m,gpt2_124m_b8 --rounds 3 --markdown

and BERT-base (8×128 tokens, an attention mask padding half the rows) and
a Llama-style 8-layer, 512-wide decoder with grouped-query attention (1×128
tokens, logits):

    python3 benches/compare_torch.py --only bert_base_b8,llama_8l --rounds 2 --markdown

The op workloads (issues 16 and 20): an embedding lookup, causal attention
over 1024 and 4096 tokens, linear + bias + gelu, cross_entropy over GPT-2's
vocabulary, scatter_add of 16M values into 64K bins, cumsum, topk(8) and
std over rows, a 12-op activation chain on 16M values, and cummax,
logcumsumexp and median over rows, scatter_reduce(amax) into bins and
index_add of rows:

    python3 benches/compare_torch.py --only embedding,sdpa_causal_1024,sdpa_causal_4096,linear_gelu,cross_entropy,scatter_add,cumsum_rows,topk8,std_rows,activation_chain --markdown
    python3 benches/compare_torch.py --only cummax_rows,logcumsumexp_rows,median_rows,scatter_amax,index_add_rows --rounds 3 --markdown
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
N = 16 * 1024 * 1024
NAMES = [
    "chain", "chain_mixed", "softmax", "layer_norm", "sum_all", "sum_rows",
    "matmul_1024", "matmul_4096", "channels_last", "transposed_add",
    "mlp", "gpt2_block", "llama_block",
    "conv3x3", "conv3x3_cl", "depthwise3x3", "depthwise3x3_cl", "max_pool2d", "bilinear_x2",
    "resnet18_b1", "resnet18_b8", "gpt2_124m", "gpt2_124m_b8", "bert_base_b8", "llama_8l",
    "embedding", "sdpa_causal_1024", "sdpa_causal_4096", "linear_gelu", "cross_entropy",
    "scatter_add", "cumsum_rows", "topk8", "std_rows", "activation_chain",
    "cummax_rows", "logcumsumexp_rows", "median_rows", "scatter_amax", "index_add_rows"]
# Workloads that ONNX Runtime and OpenVINO also run.
BLOCKS = ("mlp", "gpt2_block", "llama_block")
# torchvision models (random weights, eval mode), exported with kiln_export
# into the run's temporary folder; ONNX Runtime and OpenVINO run them too.
MODELS = ("resnet18_b1", "resnet18_b8", "gpt2_124m", "gpt2_124m_b8", "bert_base_b8", "llama_8l")
# Workloads whose inputs must be valid (indices in range): Kiln runs on the
# same input values as PyTorch, from a safetensors file.
SAME_INPUTS = ("embedding", "cross_entropy", "scatter_add", "scatter_amax", "index_add_rows")


def block_arg_names(torch, name):
    """The program's argument names, in order (the ONNX inputs' names)."""
    sys.path.insert(0, HERE)
    import check_blocks as cb
    return list(cb.BLOCKS[name][0](torch.Generator().manual_seed(0)))


def program_arg_names(program):
    """The argument names of a program's @main, in order."""
    import re
    with open(program) as f:
        head = next(line for line in f if line.startswith("func @main"))
    return re.findall(r"%([\w.]+):", head.split("->")[0])


def block_workloads(torch):
    """The transformer blocks: name -> (program, input factory, function, bytes, flops).

    The inputs are `check_blocks.py`'s (x first, then the weights, in the
    program's argument order); the functions are the blocks in plain torch,
    with the causal mask (and Llama's rotary cos/sin) built inside, as the
    programs do.
    """
    sys.path.insert(0, HERE)
    import check_blocks as cb
    F = torch.nn.functional

    def mask(x):
        idx = torch.arange(x.shape[1], device=x.device)  # on x's device: cuda_bench.py runs these on a GPU
        zero = torch.zeros((), dtype=x.dtype, device=x.device)
        return idx, torch.where(idx[None, :] <= idx[:, None], zero, torch.finfo(x.dtype).min)

    def mlp(x, w1, b1, w2, b2):
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)

    def gpt2(x, *w):
        return cb.gpt2_block_torch(x, mask(x)[1], *w)

    def llama(x, *w):
        idx, m = mask(x)
        return cb.llama_block_torch(x, m, idx.unsqueeze(0), *w)

    def factory(params):
        def make():
            gen = torch.Generator().manual_seed(0)
            return tuple(v.float().contiguous() for v in params(gen).values())
        return make

    def nbytes(params):  # inputs read once, the result (x's shape) written once
        p = params(torch.Generator().manual_seed(0))
        return 4 * (sum(v.numel() for v in p.values()) + p["x"].numel())

    g, l = cb.GPT2, cb.LLAMA
    gpt2_flops = 2 * g["tokens"] * g["n_embd"] * (4 * g["n_embd"] + 2 * g["n_inner"]) + 4 * g["n_embd"] * g["tokens"] ** 2
    llama_flops = 2 * l["tokens"] * l["hidden"] * (4 * l["hidden"] + 3 * l["inter"]) + 4 * l["hidden"] * l["tokens"] ** 2
    return {
        "mlp": ("mlp.kir", factory(cb.mlp_params), mlp, nbytes(cb.mlp_params), 2 * 2 * 64 * 1024 * 4096),
        "gpt2_block": ("gpt2_block.kir", factory(cb.gpt2_params), gpt2, nbytes(cb.gpt2_params), gpt2_flops),
        "llama_block": ("llama_block.kir", factory(cb.llama_params), llama, nbytes(cb.llama_params), llama_flops),
    }


def workloads(torch):
    """name -> (program file, input factory, function, bytes moved, flops)."""
    f32 = torch.float32

    def rand(*shape, dtype=f32):
        return (torch.rand(*shape, dtype=torch.float64) * 8 - 4).to(dtype)

    def chain(x, y, z):
        return torch.relu(x * 2.0 + y) * z - 1.0

    return {
        "chain": ("chain.kir", lambda: (rand(N), rand(N), rand(N)), chain, 16 * N, 0),
        "chain_mixed": (
            "chain_mixed.kir",
            lambda: (torch.randint(-9, 10, (N,), dtype=torch.int32), rand(N, dtype=torch.float16), rand(N, dtype=torch.float64)),
            chain,
            (4 + 2 + 8 + 8) * N,
            0,
        ),
        "softmax": ("softmax.kir", lambda: (rand(4096, 4096),), lambda x: torch.softmax(x, 1), 8 * 4096 * 4096, 0),
        "layer_norm": (
            "layer_norm.kir",
            lambda: (rand(8192, 1024),),
            lambda x: torch.nn.functional.layer_norm(x, (1024,)),
            8 * 8192 * 1024,
            0,
        ),
        "sum_all": ("sum_all.kir", lambda: (rand(N),), lambda x: x.sum(), 4 * N, 0),
        "sum_rows": ("sum_rows.kir", lambda: (rand(4096, 4096),), lambda x: x.sum(1), 4 * 4096 * 4096, 0),
        "matmul_1024": ("matmul_1024.kir", lambda: (rand(1024, 1024), rand(1024, 1024)), torch.matmul, 12 * 1024 * 1024, 2 * 1024**3),
        "matmul_4096": ("matmul_4096.kir", lambda: (rand(4096, 4096), rand(4096, 4096)), torch.matmul, 12 * 4096 * 4096, 2 * 4096**3),
        "channels_last": (
            "channels_last.kir",
            lambda: (
                rand(32, 64, 56, 56).contiguous(memory_format=torch.channels_last),
                rand(1, 64, 1, 1),
                rand(1, 64, 1, 1),
            ),
            lambda x, s, b: torch.relu(x * s + b),
            8 * 32 * 64 * 56 * 56,
            0,
        ),
        "transposed_add": ("transposed_add.kir", lambda: (rand(4096, 4096), rand(4096, 4096)), lambda x, y: x.t() + y, 12 * 4096 * 4096, 0),
        **block_workloads(torch),
        **cnn_workloads(torch),
        **op_workloads(torch),
        **model_workloads(torch),
    }


def model_workloads(torch):
    """Whole models from transformers at full size, random weights, eval
    mode (program None: exported with kiln_export when run): GPT-2 small
    (124M parameters, 12 layers) on 1×128 and 8×128 tokens, logits for
    every token; BERT-base on 8×128; a Llama-style 8-layer decoder."""
    try:
        import transformers
    except ImportError:
        return {}
    cfg = transformers.GPT2Config()
    model = transformers.GPT2LMHeadModel(cfg).eval()

    class Logits(torch.nn.Module):
        """A causal language model's logits for every token."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids, use_cache=False).logits

    tokens = 128
    params = sum(p.numel() for p in model.parameters())
    out = {
        f"gpt2_124m{suffix}": (
            None, lambda batch=batch: (torch.randint(0, cfg.vocab_size, (batch, tokens)),), Logits(model).eval(),
            4 * (params + batch * tokens * cfg.vocab_size), 2 * batch * tokens * params)
        for batch, suffix in ((1, ""), (8, "_b8"))
    }

    # BERT-base (110M parameters, 12 layers, 768 wide) on 8×128 tokens with
    # an attention mask that pads the last 32 tokens of half the rows.
    bert = transformers.BertModel(transformers.BertConfig()).eval()

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = bert

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids, attention_mask=attention_mask).last_hidden_state

    def bert_inputs(batch=8):
        mask = torch.ones(batch, tokens, dtype=torch.int64)
        mask[::2, tokens - 32:] = 0
        return torch.randint(0, bert.config.vocab_size, (batch, tokens)), mask

    bert_params = sum(p.numel() for p in bert.parameters())
    out["bert_base_b8"] = (None, bert_inputs, Hidden().eval(), 4 * (bert_params + 8 * tokens * 768),
                           2 * 8 * tokens * bert_params)

    # A Llama-style decoder: 8 layers, 512 wide, grouped-query attention (8
    # query heads, 4 key/value heads), SiLU-gated MLP 1376 wide, a
    # 32,000-token vocabulary; logits for 1×128 tokens.
    lcfg = transformers.LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=8,
                                    num_attention_heads=8, num_key_value_heads=4, vocab_size=32000,
                                    max_position_embeddings=2048)
    llama = transformers.LlamaForCausalLM(lcfg).eval()

    llama_params = sum(p.numel() for p in llama.parameters())
    out["llama_8l"] = (None, lambda: (torch.randint(0, lcfg.vocab_size, (1, tokens)),), Logits(llama).eval(),
                       4 * (llama_params + tokens * lcfg.vocab_size), 2 * tokens * llama_params)
    return out


def op_workloads(torch):
    """The op issues' workloads: embedding, causal attention, linear + gelu,
    cross_entropy and scatter_add (issue 16); cumsum, topk, std and an
    activation chain (issue 20)."""
    F = torch.nn.functional
    n = 16 * 1024 * 1024

    def rand(*shape):
        return torch.rand(*shape) * 2 - 1

    def attention(t):
        shape = (1, 12, t, 64)
        return (lambda: (rand(*shape), rand(*shape), rand(*shape)),
                lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                4 * 4 * 12 * t * 64, 2 * 2 * 12 * t * t * 64 // 2)

    def chain(x):
        for f in (F.silu, F.softplus, F.hardswish, F.mish, F.elu, F.gelu, torch.tanh, torch.sigmoid,
                  F.relu6, F.hardsigmoid, F.leaky_relu, F.softsign):
            x = f(x)
        return x

    a1024, a4096 = attention(1024), attention(4096)
    return {
        "embedding": ("embedding.kir", lambda: (rand(50257, 768), torch.randint(0, 50257, (4, 1024))),
                      lambda w, i: F.embedding(i, w), 4 * 2 * 4 * 1024 * 768, 0),
        "sdpa_causal_1024": ("sdpa_causal_1024.kir", *a1024),
        "sdpa_causal_4096": ("sdpa_causal_4096.kir", *a4096),
        "linear_gelu": ("linear_gelu.kir", lambda: (rand(4096, 768), rand(3072, 768), rand(3072)),
                        lambda x, w, b: F.gelu(F.linear(x, w, b)),
                        4 * (4096 * 768 + 3072 * 768 + 4096 * 3072), 2 * 4096 * 768 * 3072),
        "cross_entropy": ("cross_entropy.kir",
                          lambda: (rand(4096, 50257), torch.randint(0, 50257, (4096,))),
                          F.cross_entropy, 4 * 4096 * 50257, 0),
        "scatter_add": ("scatter_add.kir",
                        lambda: (torch.zeros(65536), torch.randint(0, 65536, (n,)), rand(n)),
                        lambda b, i, s: b.scatter_add(0, i, s), (8 + 4) * n, 0),
        "scatter_amax": ("scatter_amax.kir",
                         lambda: (torch.zeros(65536), torch.randint(0, 65536, (1 << 20,)), rand(1 << 20)),
                         lambda b, i, s: b.scatter_reduce(0, i, s, "amax", include_self=False),
                         (8 + 4) * (1 << 20), 0),
        "index_add_rows": ("index_add_rows.kir",
                           lambda: (rand(4096, 256), torch.randint(0, 4096, (16384,)), rand(16384, 256)),
                           lambda t, i, r: t.index_add(0, i, r), 4 * 2 * 16384 * 256, 0),
        "cumsum_rows": ("cumsum_rows.kir", lambda: (rand(4096, 4096),), lambda x: torch.cumsum(x, 1),
                        8 * 4096 * 4096, 0),
        "topk8": ("topk8.kir", lambda: (rand(4096, 4096),), lambda x: torch.topk(x, 8, 1),
                  4 * 4096 * 4096, 0),
        "cummax_rows": ("cummax_rows.kir", lambda: (rand(4096, 4096),), lambda x: torch.cummax(x, 1),
                        (4 + 4 + 8) * 4096 * 4096, 0),
        "logcumsumexp_rows": ("logcumsumexp_rows.kir", lambda: (rand(4096, 4096),),
                              lambda x: torch.logcumsumexp(x, 1), 8 * 4096 * 4096, 0),
        "median_rows": ("median_rows.kir", lambda: (rand(4096, 4096),), lambda x: torch.median(x, 1),
                        4 * 4096 * 4096, 0),
        "std_rows": ("std_rows.kir", lambda: (rand(8192, 1024),), lambda x: torch.std(x, 1),
                     4 * 8192 * 1024, 0),
        "activation_chain": ("activation_chain.kir", lambda: (rand(n),), chain, 8 * n, 0),
    }


def cnn_workloads(torch):
    """Convolution, pooling and resampling (issue 17), and torchvision's
    ResNet-18 at batch 1 and 8 on 224×224 images (program None: exported
    when run)."""
    F = torch.nn.functional
    cl = torch.channels_last

    def rand(*shape):
        return torch.rand(*shape) * 2 - 1

    conv_flops = 2 * 64 * 64 * 9 * 56 * 56
    out = {
        "conv3x3": ("conv3x3.kir", lambda: (rand(1, 64, 56, 56), rand(64, 64, 3, 3)),
                    lambda x, w: F.conv2d(x, w, padding=1), 4 * (2 * 64 * 56 * 56 + 64 * 64 * 9), conv_flops),
        "conv3x3_cl": ("conv3x3_cl.kir",
                       lambda: (rand(1, 64, 56, 56).contiguous(memory_format=cl),
                                rand(64, 64, 3, 3).contiguous(memory_format=cl)),
                       lambda x, w: F.conv2d(x, w, padding=1), 4 * (2 * 64 * 56 * 56 + 64 * 64 * 9), conv_flops),
        "depthwise3x3": ("depthwise3x3.kir", lambda: (rand(1, 256, 56, 56), rand(256, 1, 3, 3)),
                         lambda x, w: F.conv2d(x, w, padding=1, groups=256), 4 * 2 * 256 * 56 * 56,
                         2 * 256 * 9 * 56 * 56),
        "depthwise3x3_cl": ("depthwise3x3_cl.kir",
                            lambda: (rand(1, 256, 56, 56).contiguous(memory_format=cl), rand(256, 1, 3, 3)),
                            lambda x, w: F.conv2d(x, w, padding=1, groups=256), 4 * 2 * 256 * 56 * 56,
                            2 * 256 * 9 * 56 * 56),
        "max_pool2d": ("max_pool2d.kir", lambda: (rand(1, 64, 112, 112),),
                       lambda x: F.max_pool2d(x, 3, 2, 1), 4 * 64 * (112 * 112 + 56 * 56), 0),
        "bilinear_x2": ("bilinear_x2.kir", lambda: (rand(1, 64, 128, 128),),
                        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
                        4 * 64 * (128 * 128 + 256 * 256), 0),
    }
    try:
        import torchvision
    except ImportError:
        return out
    for batch in (1, 8):
        model = torchvision.models.resnet18().eval()
        out[f"resnet18_b{batch}"] = (
            None, lambda batch=batch: (torch.rand(batch, 3, 224, 224),), model,
            4 * (batch * 3 * 224 * 224 + sum(p.numel() for p in model.parameters())),
            batch * 2 * 1_814_000_000)
    return out


def median_ms(fn, args, runs=15, warmup=3):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - start)
        del out
    times.sort()
    return times[len(times) // 2] * 1e3


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def kiln_bench(kiln, program, inputs=None):
    cmd = [kiln, "bench", program, "--json"] + (["--inputs", inputs] if inputs else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def load():
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


def cpu_snapshot():
    """(wall s, busy CPU s of the whole machine, CPU s of this process and its children), or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    busy = sum(fields[:8]) - fields[3] - fields[4]  # user nice system [idle iowait] irq softirq steal
    t = os.times()
    return time.perf_counter(), busy / os.sysconf("SC_CLK_TCK"), t.user + t.system + t.children_user + t.children_system


def background_cores(start, end):
    """Cores kept busy by other processes between two snapshots."""
    if not start or not end or end[0] <= start[0]:
        return None
    return max(0.0, ((end[1] - start[1]) - (end[2] - start[2])) / (end[0] - start[0]))


def onnx_engines(torch, name, fn, inputs, arg_names, tmpdir):
    """(ORT runner or reason, OpenVINO runner or reason): runners take no argument."""
    try:
        import onnxruntime  # noqa: F401
        have_ort = True
    except ImportError:
        have_ort = False
    try:
        import openvino  # noqa: F401
        have_ov = True
    except ImportError:
        have_ov = False
    if not (have_ort or have_ov):
        return "onnxruntime not installed", "openvino not installed"

    class Block(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)

    path = os.path.join(tmpdir, f"{name}.onnx")
    try:
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            torch.onnx.export(Block().eval(), inputs, path, input_names=list(arg_names), output_names=["y"], dynamo=True)
    except Exception as e:  # no onnx/onnxscript, or an exporter failure
        reason = f"ONNX export failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return reason, reason
    feed = {n: t.numpy() for n, t in zip(arg_names, inputs)}
    ort_run = ov_run = None
    if have_ort:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        ort_run = lambda: sess.run(None, feed)[0]
    else:
        ort_run = "onnxruntime not installed"
    if have_ov:
        import openvino as ov
        core = ov.Core()
        compiled = core.compile_model(core.read_model(path), "CPU", {
            "INFERENCE_PRECISION_HINT": "f32",
            "INFERENCE_NUM_THREADS": 2,
            "NUM_STREAMS": 1,
            "PERFORMANCE_HINT": "LATENCY",
        })
        request = compiled.create_infer_request()
        # share_outputs=False: each call copies its result out, as each call of
        # the others allocates its output.
        ov_run = lambda: request.infer(feed, share_inputs=True, share_outputs=False)[0]
    else:
        ov_run = "openvino not installed"
    # The exported model must compute what the torch function does.
    ref = fn(*inputs).numpy()
    for engine, run in (("ort", ort_run), ("ov", ov_run)):
        if callable(run):
            err = float(abs(run() - ref).max()) / max(float(abs(ref).max()), 1e-30)
            print(json.dumps({"name": name, f"{engine}_check_rel_err": err}), file=sys.stderr)
    return ort_run, ov_run


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.path.join(ROOT, "target", "release", "kiln"))
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--no-onnx", action="store_true", help="skip ONNX Runtime and OpenVINO")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", nargs="*", help="workload names, comma- or space-separated")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds; figures are medians over rounds")
    parser.add_argument("--pause", type=float, default=0.5,
                        help="seconds of idle before each engine's measurement (lets other engines' spinning threads sleep)")
    args = parser.parse_args()
    if not os.path.exists(args.kiln):
        sys.exit(f"{args.kiln} not found: run `cargo build --release -p kiln-cli` first")
    only = [n for item in (args.only or []) for n in item.split(",") if n]
    unknown = [n for n in only if n not in NAMES]
    if unknown:
        sys.exit(f"unknown workload(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    names = [n for n in NAMES if not only or n in only]
    # A fresh Inductor cache: the first compiled call is a cold compile.
    import tempfile
    tmpdir = tempfile.mkdtemp(prefix="kiln-compare-")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kiln-inductor-")
    try:
        import torch
    except ImportError:
        torch = None
        print("torch is not installed: Kiln's figures only", file=sys.stderr)
    if torch:
        torch.set_num_threads(2)
        table = workloads(torch)
    load_start = os.getloadavg() if hasattr(os, "getloadavg") else None

    rows = []
    for name in names:
        row = {"name": name, "load_before": load()}
        snap = cpu_snapshot()
        program = os.path.join(HERE, "programs", f"{name}.kir")
        engines = {}  # engine -> (callable taking no argument) ; Kiln's is its own bench
        kiln_inputs = None
        if torch:
            _, make, fn, nbytes, flops = table[name]
            inputs = make()
            row["flops"] = flops
            if name in MODELS:
                # The model exported with kiln_export; Kiln reads the
                # weights and the input from one safetensors file.
                sys.path.insert(0, os.path.join(ROOT, "python"))
                import kiln_export
                from safetensors.torch import load_file, save_file
                program = os.path.join(tmpdir, f"{name}.kir")
                weights = os.path.join(tmpdir, f"{name}.safetensors")
                exported = kiln_export.export(fn, inputs, program, weights)
                arg_names = exported.user_inputs
                tensors = load_file(weights)
                tensors.update(zip(arg_names, inputs))
                kiln_inputs = os.path.join(tmpdir, f"{name}_inputs.safetensors")
                save_file(tensors, kiln_inputs)
            if name in SAME_INPUTS:
                from safetensors.torch import save_file
                arg_names = program_arg_names(program)
                kiln_inputs = os.path.join(tmpdir, f"{name}.safetensors")
                save_file(dict(zip(arg_names, inputs)), kiln_inputs)
            if name in BLOCKS:
                arg_names = block_arg_names(torch, name)
                try:
                    from safetensors.torch import save_file
                    kiln_inputs = os.path.join(tmpdir, f"{name}.safetensors")
                    save_file(dict(zip(arg_names, inputs)), kiln_inputs)
                except ImportError:
                    print("safetensors is not installed: Kiln runs the blocks on its own random inputs", file=sys.stderr)
            with torch.no_grad():
                engines["eager"] = lambda fn=fn: fn(*inputs)
                if not args.no_compile:
                    compiled = torch.compile(fn)
                    start = time.perf_counter()
                    compiled(*inputs)
                    row["compile_latency_s"] = time.perf_counter() - start
                    engines["compiled"] = lambda: compiled(*inputs)
                if (name in BLOCKS or name in MODELS) and not args.no_onnx:
                    for engine, run in zip(("ort", "ov"), onnx_engines(torch, name, fn, inputs, arg_names, tmpdir)):
                        if callable(run):
                            engines[engine] = run
                        else:
                            row[f"{engine}_missing"] = run
                            print(f"{name}: {engine}: {run}", file=sys.stderr)
        order = ["kiln", *engines]
        times = {e: [] for e in order}
        for r in range(args.rounds):
            for engine in (order if r % 2 == 0 else order[::-1]):
                time.sleep(args.pause)
                if engine == "kiln":
                    k = kiln_bench(args.kiln, program, kiln_inputs)
                    times["kiln"].append(k["run_ms_median"])
                    row.setdefault("kiln_compile", k["compile_ms"])
                    row.setdefault("gbps", k["gbps"])
                else:
                    with torch.no_grad():
                        times[engine].append(median_ms(engines[engine], ()))
        for engine, ts in times.items():
            row[engine] = median(ts)
            row[f"{engine}_rounds"] = [round(t, 3) for t in ts]
        row["load_after"] = load()
        row["background_cores"] = background_cores(snap, cpu_snapshot())
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    load_end = os.getloadavg() if hasattr(os, "getloadavg") else None

    def cell(v, fmt="{:.2f}"):
        return "" if v is None else fmt.format(v)

    def other(r, engine):
        if engine in r:
            return cell(r[engine]), cell(r[engine] / r["kiln"], "{:.1f}×")
        if f"{engine}_missing" in r:
            return "n/a", "n/a"
        return "", ""

    head = ["workload", "kiln ms", "eager ms", "compile ms", "ORT ms", "OpenVINO ms",
            "kiln/eager", "kiln/compile", "kiln/ORT", "kiln/OpenVINO",
            "kiln rate", "kiln compile ms", "torch.compile first call s", "load 1m before→after", "other procs' cores"]
    lines = []
    for r in rows:
        rate = f"{r['flops'] / r['kiln'] / 1e6:.0f} GFLOP/s" if r.get("flops") else f"{r['gbps']:.1f} GB/s"
        cols = {e: other(r, e) for e in ("eager", "compiled", "ort", "ov")}
        lines.append([
            r["name"], cell(r["kiln"]), cols["eager"][0], cols["compiled"][0], cols["ort"][0], cols["ov"][0],
            cols["eager"][1], cols["compiled"][1], cols["ort"][1], cols["ov"][1],
            rate, cell(r["kiln_compile"]), cell(r.get("compile_latency_s")),
            f"{cell(r['load_before'])}→{cell(r['load_after'])}", cell(r["background_cores"]),
        ])
    fmt_load = lambda l: "n/a" if l is None else " / ".join(f"{v:.2f}" for v in l)
    summary = (f"{args.rounds} round(s), engines interleaved in alternating order; median over rounds of "
               f"each engine's median. Load average (1m / 5m / 15m) before: {fmt_load(load_start)}, "
               f"after: {fmt_load(load_end)}; {os.cpu_count()} CPUs. \"other procs' cores\": CPU time of other "
               f"processes over the workload's wall time (from /proc/stat), the load that disturbs the figures.")
    if args.markdown:
        print(summary)
        print()
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        print(summary)
        widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for l in lines:
            print("  ".join(c.ljust(w) for c, w in zip(l, widths)))


if __name__ == "__main__":
    main()
