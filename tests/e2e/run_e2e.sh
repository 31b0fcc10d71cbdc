#!/usr/bin/env bash
# Starts `vllm-cpp serve` on the demo model and runs the end-to-end tests against it.
# Usage: run_e2e.sh VLLM_CPP_BINARY SHARED_DIR
set -euo pipefail
binary=$(realpath "$1")
shared=$(realpath "$2")
cd "$(dirname "$0")"
if [ ! -d node_modules/openai ]; then
  echo "node_modules missing: run 'npm ci' in tests/e2e (scripts/test.sh does)" >&2
  exit 1
fi
log=$(mktemp)
# Port 0 would be ideal, but the tests need to know it: pick a free one from the kernel.
port=$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
"$binary" serve "$shared/models/stories260K.gguf" --port "$port" --host 127.0.0.1 \
  --api-key e2e-key --served-model-name stories --chat-template chat_template.jinja \
  --max-request-body-bytes 1048576 --max-model-len 256 --log-stats-interval 0 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  if node -e "fetch('http://127.0.0.1:$port/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"; then
    break
  fi
  if ! kill -0 $server 2>/dev/null; then
    cat "$log" >&2
    exit 1
  fi
  sleep 0.1
done
status=0
VLLM_E2E_PORT=$port VLLM_E2E_BINARY=$binary VLLM_E2E_SHARED=$shared node --test --test-concurrency=1 ./*.test.mjs || status=$?
if ! kill -0 $server 2>/dev/null; then
  echo "the server died during the tests:" >&2
  status=1
fi
if [ $status -ne 0 ]; then tail -50 "$log" >&2; fi
exit $status
