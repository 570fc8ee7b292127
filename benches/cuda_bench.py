#!/usr/bin/env python3
"""The benchmark workloads on a GPU: Kiln's CUDA backend beside PyTorch
eager and torch.compile on the same card, in one run.

For every program in benches/programs (compare_torch.py's workloads, in its
order), `kiln bench --backend cuda --json --steps`: "run" is a whole call
(inputs copied to the GPU, results back); "device" is the same steps with
inputs and results resident in device memory, the figure to compare with
the card's bandwidth. The bandwidth ceiling is measured in the same run: a
device-to-device copy of 1 GiB through PyTorch, counting bytes read and
written (`--peak-gbps` overrides it where torch is missing); "of same-size
copy" compares with a copy of the workload's own bytes, which pays the same
launch and tail costs.

PyTorch runs the same computation (compare_torch.py's functions) on
resident inputs, timed with CUDA events: the median of 20 calls after 3
warm-ups. torch.compile runs the workloads named by `--compile` (its cold
compile is slow; the default is the pointwise and reduction set).

    cargo build --release -p kiln-cli
    LD_LIBRARY_PATH=.../nvidia/cuda_nvrtc/lib python3 benches/cuda_bench.py --json-out gpu.json

Each Kiln workload has `--timeout` seconds; the run stops starting new
workloads after `--deadline` seconds. Failures are rows, with Kiln's error.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare_torch as ct  # noqa: E402

COMPILE = ["chain", "chain_mixed", "softmax", "layer_norm", "sum_all", "sum_rows",
           "channels_last", "transposed_add", "std_rows", "activation_chain"]


def event_ms(torch, fn, args, runs=20, warmup=3):
    """The median device time of `fn(*args)` in ms (CUDA events)."""
    for _ in range(warmup):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return ct.median(times)


def copy_ms(torch, nbytes):
    """The device time of a device-to-device copy moving `nbytes` (half read,
    half written)."""
    x = torch.empty(max(nbytes // 2, 1), dtype=torch.uint8, device="cuda").random_()
    y = torch.empty_like(x)
    return event_ms(torch, y.copy_, (x,))


def copy_gbps(torch):
    """Device-to-device copy bandwidth of 1 GiB, bytes read plus bytes written."""
    return 2 * (1 << 30) / (copy_ms(torch, 2 << 30) * 1e-3) / 1e9


def kiln_row(args, name, program, inputs_file):
    cmd = [args.kiln, "bench", program, "--backend", "cuda", "--json", "--steps"]
    if inputs_file:
        cmd += ["--inputs", inputs_file]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {args.timeout} s"}
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.path.join(ROOT, "target", "release", "kiln"))
    parser.add_argument("--peak-gbps", type=float, help="the card's copy bandwidth (measured when torch is here)")
    parser.add_argument("--only", nargs="*", help="workload names, comma- or space-separated")
    parser.add_argument("--compile", default=",".join(COMPILE), help="workloads torch.compile runs ('' for none)")
    parser.add_argument("--timeout", type=float, default=40.0, help="seconds for one Kiln workload")
    parser.add_argument("--deadline", type=float, default=1e9, help="start no workload after this many seconds")
    parser.add_argument("--json-out", help="every row, Kiln's steps included, as JSON")
    args = parser.parse_args()
    began = time.perf_counter()
    names = [n for n in ct.NAMES if n not in ct.MODELS]
    if args.only:
        names = [n for item in args.only for n in item.split(",") if n]
    compile_names = set(n for n in args.compile.split(",") if n)

    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    import tempfile
    tmpdir = tempfile.mkdtemp(prefix="kiln-cuda-bench-")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="kiln-inductor-"))
    peak = args.peak_gbps
    table = {}
    if torch:
        table = ct.workloads(torch)
        if peak is None:
            peak = copy_gbps(torch)
        print(f"# {torch.cuda.get_device_name()}; torch {torch.__version__}; "
              f"device-to-device copy {peak:.0f} GB/s (read + written)", flush=True)
    rows = []
    for name in names:
        if time.perf_counter() - began > args.deadline:
            rows.append({"name": name, "kiln": {"error": "not run (deadline)"}})
            continue
        program = os.path.join(HERE, "programs", f"{name}.kir")
        row = {"name": name}
        inputs = None
        if torch and name in table:
            _, make, fn, nbytes, _ = table[name]
            inputs = make()
            row["bytes"] = nbytes
        inputs_file = None
        if inputs is not None and (name in ct.SAME_INPUTS or name in ct.BLOCKS):
            from safetensors.torch import save_file
            names_ = ct.block_arg_names(torch, name) if name in ct.BLOCKS else ct.program_arg_names(program)
            inputs_file = os.path.join(tmpdir, f"{name}.safetensors")
            save_file(dict(zip(names_, inputs)), inputs_file)
        row["kiln"] = kiln_row(args, name, program, inputs_file)
        if torch and "bytes" in row["kiln"]:
            # The same bytes copied: small workloads pay launch and tail
            # costs that a 1 GiB copy hides.
            row["copy_ms"] = copy_ms(torch, row["kiln"]["bytes"])
        if inputs is not None:
            gpu = tuple(t.to("cuda") for t in inputs)
            try:
                with torch.no_grad(), torch.device("cuda"):
                    row["eager_ms"] = event_ms(torch, fn, gpu)
                    if name in compile_names:
                        compiled = torch.compile(fn)
                        start = time.perf_counter()
                        compiled(*gpu)
                        torch.cuda.synchronize()
                        row["compile_latency_s"] = time.perf_counter() - start
                        row["compiled_ms"] = event_ms(torch, compiled, gpu)
            except Exception as e:  # a torch failure is a row, not the end of the run
                row["torch_error"] = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            del gpu
            torch.cuda.empty_cache()
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "kiln"} | {
            "kiln": {k: v for k, v in row["kiln"].items() if k != "steps"}}), file=sys.stderr, flush=True)

    def f(v, fmt):
        return fmt.format(v) if isinstance(v, (int, float)) else "n/a"

    print("| workload | Kiln run ms | Kiln device ms | GB/s | of copy | of same-size copy | eager ms "
          "| torch.compile ms | eager ÷ Kiln | compile ÷ Kiln |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        k = row["kiln"]
        if "error" in k:
            print(f"| {row['name']} | failed: {k['error'][:120]} | | | | | {f(row.get('eager_ms'), '{:.4f}')} "
                  f"| {f(row.get('compiled_ms'), '{:.4f}')} | | |")
            continue
        dev = k.get("device_ms_median")
        gbps = k.get("device_gbps")
        share = f"{100 * gbps / peak:.0f}%" if gbps and peak else "n/a"
        same = f"{100 * row['copy_ms'] / dev:.0f}%" if dev and "copy_ms" in row else "n/a"
        ratio = lambda t: f"{t / dev:.2f}" if isinstance(t, float) and dev else "n/a"  # noqa: E731
        print(f"| {row['name']} | {k['run_ms_median']:.3f} | {f(dev, '{:.4f}')} | {f(gbps, '{:.0f}')} | {share} | {same} "
              f"| {f(row.get('eager_ms'), '{:.4f}')} | {f(row.get('compiled_ms'), '{:.4f}')} "
              f"| {ratio(row.get('eager_ms'))} | {ratio(row.get('compiled_ms'))} |")
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump({"peak_gbps": peak, "rows": rows}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
