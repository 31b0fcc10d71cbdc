#!/usr/bin/env bash
# Builds vllm-cpp and runs every test (unit, conformance, e2e), then the aarch64 cross build's tests
# under qemu (scripts/test_aarch64.sh's CI subset; VLLM_SKIP_AARCH64=1 leaves them out): the
# project's one test command. Arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
npm ci --prefix tests/e2e --no-audit --no-fund
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
status=0
ctest --test-dir build --output-on-failure -j2 "$@" || status=$?
# After ctest rather than inside it, so that ctest's -j2 stays the suite's own; either failing
# fails the command, and both report.
if [ "${VLLM_SKIP_AARCH64:-0}" != 1 ]; then ./scripts/test_aarch64.sh || status=1; fi
exit "$status"
