#!/usr/bin/env python3
"""Kiln against PyTorch eager and torch.compile on the benchmark workloads.

Runs `kiln bench --json` on each program of `benches/programs/` and the same
computation in PyTorch (when torch is installed), with the method of the
project's performance anchors: 2 threads, median of 15 timed calls after 3
warm-up calls, every call allocating its output. Prints a table of times
and ratios (a ratio above 1 means Kiln is faster).

    cargo build --release -p kiln-cli
    python3 benches/compare_torch.py            # add --no-compile to skip Inductor
    python3 benches/compare_torch.py --markdown # the table for BENCHMARKS.md
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
    }


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


def kiln_bench(kiln, program):
    out = subprocess.run([kiln, "bench", program, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.path.join(ROOT, "target", "release", "kiln"))
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", nargs="*", help="workload names")
    args = parser.parse_args()
    if not os.path.exists(args.kiln):
        sys.exit(f"{args.kiln} not found: run `cargo build --release -p kiln-cli` first")
    # A fresh Inductor cache: the first compiled call is a cold compile.
    import tempfile
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kiln-inductor-")
    try:
        import torch
    except ImportError:
        torch = None
        print("torch is not installed: Kiln's figures only", file=sys.stderr)

    names = [
        "chain", "chain_mixed", "softmax", "layer_norm", "sum_all", "sum_rows",
        "matmul_1024", "matmul_4096", "channels_last", "transposed_add"]
    names = [n for n in names if not args.only or n in args.only]
    # Kiln first: PyTorch's OpenMP threads keep spinning after each call
    # and would take the cores from a Kiln process run meanwhile.
    rows = []
    for name in names:
        program = os.path.join(HERE, "programs", f"{name}.kir")
        k = kiln_bench(args.kiln, program)
        rows.append({"name": name, "kiln": k["run_ms_median"], "kiln_compile": k["compile_ms"], "gbps": k["gbps"]})
        print(json.dumps(rows[-1]), file=sys.stderr)
    for row in rows:
        name = row["name"]
        if torch:
            torch.set_num_threads(2)
            _, make, fn, nbytes, flops = workloads(torch)[name]
            inputs = make()
            with torch.no_grad():
                row["eager"] = median_ms(fn, inputs)
                if not args.no_compile:
                    compiled = torch.compile(fn)
                    start = time.perf_counter()
                    compiled(*inputs)
                    row["compile_latency_s"] = time.perf_counter() - start
                    row["compiled"] = median_ms(compiled, inputs)
            row["flops"] = flops
        print(json.dumps(row), file=sys.stderr)

    def cell(v, fmt="{:.2f}"):
        return "" if v is None else fmt.format(v)

    head = ["workload", "kiln ms", "eager ms", "compile ms", "kiln/eager", "kiln/compile", "kiln rate", "kiln compile ms", "torch.compile first call s"]
    lines = []
    for r in rows:
        rate = f"{r['flops'] / r['kiln'] / 1e6:.0f} GFLOP/s" if r.get("flops") else f"{r['gbps']:.1f} GB/s"
        eager, comp = r.get("eager"), r.get("compiled")
        lines.append([
            r["name"], cell(r["kiln"]), cell(eager), cell(comp),
            cell(eager / r["kiln"] if eager else None, "{:.1f}×"),
            cell(comp / r["kiln"] if comp else None, "{:.1f}×"),
            rate, cell(r["kiln_compile"]), cell(r.get("compile_latency_s")),
        ])
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for l in lines:
            print("  ".join(c.ljust(w) for c, w in zip(l, widths)))


if __name__ == "__main__":
    main()
