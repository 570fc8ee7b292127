#!/usr/bin/env python3
"""The benchmark workloads on a GPU: `kiln bench --backend cuda --json` for
every program in benches/programs, as a Markdown table for BENCHMARKS.md.

"run" is a whole call (inputs copied to the GPU, results back); "device" is
the same steps with inputs and results resident in device memory, the
figure to compare with the card's bandwidth (`--peak-gbps`, device to
device: about 3000 for an H100 SXM, 4800 for an H200).

    cargo build --release -p kiln-cli
    LD_LIBRARY_PATH=.../nvidia/cuda_nvrtc/lib python3 benches/cuda_bench.py --peak-gbps 3000
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.path.join(ROOT, "target", "release", "kiln"))
    parser.add_argument("--peak-gbps", type=float, default=3000.0)
    args = parser.parse_args()
    programs = os.path.join(ROOT, "benches", "programs")
    print("| workload | run ms | device ms | device GB/s | of peak |")
    print("|---|---|---|---|---|")
    for name in sorted(os.listdir(programs)):
        path = os.path.join(programs, name)
        out = subprocess.run([args.kiln, "bench", path, "--backend", "cuda", "--json"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(f"| {name} | failed: {out.stderr.strip()} | | | |")
            continue
        r = json.loads(out.stdout)
        device_gbps = r.get("device_gbps")
        share = f"{100 * device_gbps / args.peak_gbps:.0f}%" if device_gbps else "-"
        print(f"| {name} | {r['run_ms_median']:.3f} | {r.get('device_ms_median', float('nan')):.4f} "
              f"| {device_gbps or float('nan'):.0f} | {share} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
