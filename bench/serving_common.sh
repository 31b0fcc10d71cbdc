# Shared by the serving benchmarks (sourced): the model file and the server's lifetime.

# Writes the random-weight TinyLlama-1.1B-shaped Q8_0 model to $1 when it is missing.
ensure_model() {
  if [ ! -f "$1" ]; then
    mkdir -p "$(dirname "$1")"
    build/vllm-cpp make-random-model --shape tinyllama-1.1b --dtype q8_0 \
      --vocab ../shared/vocab/ggml-vocab-llama-spm.gguf --out "$1"
  fi
}

# Starts `vllm-cpp serve $1` on port $2 with the further flags given and waits until it is
# healthy; its pid is left in $server.
start_server() {
  local model="$1" port="$2"
  shift 2
  build/vllm-cpp serve "$model" --host 127.0.0.1 --port "$port" -t 2 --log-stats-interval 0 \
    "$@" 2>/dev/null &
  server=$!
  wait_healthy "$port"
}

# Waits up to a minute for the server on port $1 to answer /health.
wait_healthy() {
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$1/health" >/dev/null && return
    sleep 0.2
  done
}
