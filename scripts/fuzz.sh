#!/usr/bin/env bash
# Fuzzes everything that reads outside input (cargo-fuzz, libFuzzer, ASan):
#   kir_parse     .kir bytes → lexer, parser, verifier, printer round trip
#   tensor_files  bytes → safetensors and .npy readers
#   compile_run   .kir bytes → passes, fusion, Cranelift JIT and interpreter
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
# Needs: rustup's nightly toolchain and `cargo install cargo-fuzz`.
# Corpora start from tests/programs and tests/data/files; crashes land in
# fuzz/artifacts/TARGET/ (turn each into a test under tests/regressions/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(kir_parse tensor_files compile_run)
for t in kir_parse compile_run; do
  mkdir -p "fuzz/corpus/$t"
  cp tests/programs/*.kir tests/errors/*.kir tests/regressions/*.kir "fuzz/corpus/$t/" 2>/dev/null || true
done
mkdir -p fuzz/corpus/tensor_files
cp tests/data/files/* fuzz/corpus/tensor_files/ 2>/dev/null || true
for t in "${targets[@]}"; do
  echo "== $t: ${seconds}s"
  (cd fuzz && cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=20 2>&1 | tail -n 4)
done
