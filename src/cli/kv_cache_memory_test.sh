#!/usr/bin/env bash
# The KV cache's size on every engine command (generate, chat, bench throughput / latency, serve):
# VLLM_CPU_KVCACHE_SPACE (GiB) sizes it, --kv-cache-memory-bytes wins over it, and each command
# takes --gpu-memory-utilization, refusing a share outside (0, 1] in vLLM's words.
set -euo pipefail
binary="$1"
model="$2/models/stories260K.gguf"

source "$(dirname "${BASH_SOURCE[0]}")/expect_error.sh"
source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"

# A block of the demo model holds 16 tokens x 5 layers of float32 K and V: 20480 bytes.
# 0.01 GiB = 10737418 bytes: 524 blocks; 4 MiB: 204 blocks.
expect_blocks() {  # expect_blocks BLOCKS COMMAND...: the engine's log line names BLOCKS blocks
  local blocks="$1"
  shift
  local stderr
  stderr=$("$@" 2>&1 >/dev/null) || { printf 'failed: %s\n%s\n' "$*" "$stderr"; exit 1; }
  if [[ "$stderr" != *"KV cache: $blocks blocks of 16 tokens"* ]]; then
    printf 'command: %s\nexpected %s KV blocks; stderr: %s\n' "$*" "$blocks" "$stderr"
    exit 1
  fi
}

generate=("$binary" generate "$model" --prompt "Once upon a time" --max-tokens 4 --temperature 0)
VLLM_CPU_KVCACHE_SPACE=0.01 expect_blocks 524 "${generate[@]}"
VLLM_CPU_KVCACHE_SPACE=0.01 expect_blocks 204 "${generate[@]}" --kv-cache-memory-bytes 4194304
VLLM_CPU_KVCACHE_SPACE=0.01 expect_blocks 524 "${generate[@]}" --gpu-memory-utilization 0.5
expect_error "VLLM_CPU_KVCACHE_SPACE must be a number of GiB, got 'lots'" \
  env VLLM_CPU_KVCACHE_SPACE=lots "${generate[@]}"

# Every engine command takes the share, and refuses one out of range in vLLM's words.
too_large="gpu_memory_utilization (--gpu-memory-utilization): Input should be less than or equal to 1, got 1.5"
expect_error "$too_large" "${generate[@]}" --gpu-memory-utilization 1.5
expect_error "Input should be greater than 0, got 0" "${generate[@]}" --gpu-memory-utilization 0
expect_error "$too_large" "$binary" chat "$model" --gpu-memory-utilization 1.5 </dev/null
expect_error "$too_large" "$binary" bench throughput "$model" --gpu-memory-utilization 1.5
expect_error "$too_large" "$binary" bench latency "$model" --gpu-memory-utilization 1.5
VLLM_CPU_KVCACHE_SPACE=0.01 expect_blocks 524 "$binary" bench latency "$model" --input-len 8 \
  --output-len 2 --batch-size 1 --num-iters-warmup 0 --num-iters 1

# serve: the same engine, so the same cache.
start_server "$work/log" "Serving .* on http://127.0.0.1:" env VLLM_CPU_KVCACHE_SPACE=0.01 \
  "$binary" serve "$model" --host 127.0.0.1 --port 0 --gpu-memory-utilization 0.9
grep -q "KV cache: 524 blocks of 16 tokens" "$work/log" || { cat "$work/log"; exit 1; }
stop_server
echo "ok"
