#!/usr/bin/env bash
# Builds vllm-cpp and runs every test (unit, conformance, e2e): the project's one test command.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
npm ci --prefix tests/e2e --no-audit --no-fund
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 "$@"
