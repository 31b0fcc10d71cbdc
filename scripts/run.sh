#!/usr/bin/env bash
# Builds vllm-cpp and runs its main job: the OpenAI-compatible server on a model (default: the
# demo model in ../shared, else a tiny random model the binary writes into its cache). Extra
# arguments go to `vllm-cpp serve` (e.g. --port 8001).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >&2
cmake --build build -j2 --target vllm-cpp >&2
model=../shared/models/stories260K.gguf
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then
  model=$1
  shift
elif [ ! -f "$model" ]; then
  # No companion data folder: `vllm-cpp serve` with no model writes a tiny random-weight model
  # into ~/.cache/vllm-cpp on first run and serves it.
  exec ./build/vllm-cpp serve "$@"
fi
# The demo model has no chat template of its own: give it a minimal one.
if [ "$model" = ../shared/models/stories260K.gguf ] && [[ " $* " != *" --chat-template "* ]]; then
  set -- --chat-template tests/e2e/chat_template.jinja "$@"
fi
exec ./build/vllm-cpp serve "$model" "$@"
