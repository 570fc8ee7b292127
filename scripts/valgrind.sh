#!/usr/bin/env bash
# Runs the Cranelift differential suite under valgrind's memcheck: JIT code
# must touch only its buffers (no invalid reads or writes, no use of
# uninitialised values). Usage: scripts/valgrind.sh [PROPTEST_CASES (default 40)]
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-40}"
bin=$(cargo test -p kiln-tests --test cranelift --no-run --message-format=json 2>/dev/null \
  | grep -o '"executable":"[^"]*cranelift[^"]*"' | tail -n 1 | cut -d'"' -f4)
echo "== $bin under memcheck, $cases random programs per property"
# JIT code is written at run time: --smc-check makes valgrind re-read it.
PROPTEST_CASES="$cases" valgrind --tool=memcheck --error-exitcode=99 --smc-check=all-non-file \
  --leak-check=no --track-origins=no --quiet \
  "$bin" --test-threads=1 2>&1 | tail -n 25
echo "valgrind: clean (exit ${PIPESTATUS[0]})"
