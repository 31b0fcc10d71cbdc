#!/usr/bin/env bash
# Builds vllm-cpp and runs its main job on a model (default: the demo model in ../shared).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2
cmake --build build -j2 --target vllm-cpp >&2  # progress to stderr: stdout is the text
model="${1:-../shared/models/stories260K.gguf}"
prompt="${2:-Once upon a time}"
exec ./build/vllm-cpp generate --model "$model" --prompt "$prompt" --temperature 0 --max-tokens 40
