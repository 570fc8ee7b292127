"""Per-token decode of GPT-2 small (124M parameters, random weights), Kiln
beside transformers in PyTorch eager, in one run.

Kiln: `crates/kiln/examples/gpt2.rs --generate N` (kiln::nn's GPT-2 with a
key/value cache of static length: one compiled program for the prompt,
one for every one-token step), which prints the one-token steps' median.
PyTorch: `GPT2LMHeadModel` with its dynamic cache (`use_cache=True`),
the same prompt, greedy, each one-token call timed. Both on 2 threads;
rounds alternate the engines; the tokens chosen must agree.

    cargo build --release -p kiln --example gpt2
    python3 benches/gpt2_decode.py --prompt 448 --new 33 --rounds 2

The cache holds prompt + new positions (481 by default, about the
issue's 512).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def kiln_round(example, model, ids, new):
    out = subprocess.run(
        [example, model, "--ids", ",".join(map(str, ids)), "--generate", str(new)],
        capture_output=True, text=True, check=True,
    ).stdout
    median = float(re.search(r"one-token steps: median ([0-9.]+) ms", out).group(1))
    tokens = [int(t) for t in re.search(r"greedy continuation \[([0-9, ]+)\]", out).group(1).split(",")]
    return median, tokens


def torch_round(torch, model, ids, new):
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=True)
        past = out.past_key_values
        nxt = int(out.logits[0, -1].argmax())
        tokens, times = [nxt], []
        while len(tokens) < new:
            start = time.perf_counter()
            out = model(torch.tensor([[nxt]]), past_key_values=past, use_cache=True)
            nxt = int(out.logits[0, -1].argmax())
            times.append((time.perf_counter() - start) * 1e3)
            past = out.past_key_values
            tokens.append(nxt)
    warm = sorted(times[1:])
    return warm[len(warm) // 2], tokens


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--example", default=os.path.join(ROOT, "target", "release", "examples", "gpt2"))
    parser.add_argument("--prompt", type=int, default=448)
    parser.add_argument("--new", type=int, default=33)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    import torch
    import transformers

    torch.set_num_threads(2)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config()).eval()
    ids = [(i * 7919) % 50257 for i in range(args.prompt)]
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        path = os.path.join(tmp, "model.safetensors")
        before = load_average()
        kiln, eager = [], []
        for r in range(args.rounds):
            order = ("kiln", "torch") if r % 2 == 0 else ("torch", "kiln")
            for engine in order:
                if engine == "kiln":
                    ms, kiln_tokens = kiln_round(args.example, path, ids, args.new)
                    kiln.append(ms)
                else:
                    ms, torch_tokens = torch_round(torch, model, ids, args.new)
                    eager.append(ms)
        after = load_average()
    same = kiln_tokens == torch_tokens
    k, e = sorted(kiln)[len(kiln) // 2], sorted(eager)[len(eager) // 2]
    print(f"{args.rounds} round(s), load average {before} -> {after}; tokens agree: {same}")
    print()
    print("| cache positions | kiln ms/token | eager ms/token | kiln/eager | rounds kiln | rounds eager |")
    print("|---|---|---|---|---|---|")
    print(f"| {args.prompt + args.new} | {k:.2f} | {e:.2f} | {e / k:.1f}x | "
          f"{', '.join(f'{x:.2f}' for x in kiln)} | {', '.join(f'{x:.2f}' for x in eager)} |")
    if not same:
        print("kiln:", kiln_tokens, file=sys.stderr)
        print("torch:", torch_tokens, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
