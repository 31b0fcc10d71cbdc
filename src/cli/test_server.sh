# shellcheck shell=bash
# Sourced by the CLI's shell tests that start `serve`: a scratch directory $work, removed at exit
# after the server start_server left running is stopped.
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# start_server LOG READY COMMAND...: runs the server COMMAND in the background, its output in LOG,
# and returns once LOG has a line matching the grep pattern READY; the test fails, showing LOG, if
# the server stops first or is not ready within 60 s.
start_server() {
  local log="$1" ready="$2"
  shift 2
  : >"$log"  # emptied first: a previous server's lines must not count
  "$@" >"$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 600); do
    grep -q -- "$ready" "$log" && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$log"; echo "serve stopped: $*"; exit 1; }
    sleep 0.1
  done
  cat "$log"
  echo "serve was not ready in 60 s: $*"
  exit 1
}

# served_port LOG: the port a server on http://127.0.0.1 (started with --port 0) names in LOG.
served_port() {
  sed -n 's/.*Serving .* on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$1"
}

# stop_server: stops the server start_server started and waits for it to exit.
stop_server() {
  kill "$server_pid"
  wait "$server_pid" || true
  server_pid=""
}

# expect_stories_completion LOG: sets port to the port of the server logging to LOG (the demo
# model served as "stories") and checks its greedy completion of "Once upon a time".
expect_stories_completion() {
  port=$(served_port "$1")
  local completion
  completion=$(curl -sS -m 30 "http://127.0.0.1:$port/v1/completions" \
    -H "Content-Type: application/json" \
    -d '{"model": "stories", "prompt": "Once upon a time", "max_tokens": 8, "temperature": 0}')
  [[ "$completion" == *'there was a little girl'* ]] || { echo "completion: $completion"; exit 1; }
}

# rank_one_of_server: the pid of MPI rank 1 among the children of the server start_server left
# running (a job started by `serve -tp/-pp N` on this host); the test fails when there is none.
rank_one_of_server() {
  local pid
  for pid in $(pgrep -P "$server_pid"); do
    if tr '\0' '\n' <"/proc/$pid/environ" | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
      echo "$pid"
      return
    fi
  done
  cat "$work/serve.log" >&2
  echo "no rank 1 under $server_pid" >&2
  exit 1
}

# expect_server_exit WHAT SECONDS: the server start_server left running ends within SECONDS, with
# a non-zero status; WHAT names it in the failure messages.
expect_server_exit() {
  local what="$1" seconds="$2" status=0
  for _ in $(seq 1 $((seconds * 10))); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$server_pid" 2>/dev/null; then
    cat "$work/serve.log"
    echo "$what still runs after $seconds s"
    exit 1
  fi
  wait "$server_pid" || status=$?
  server_pid=""
  [[ "$status" != 0 ]] || { cat "$work/serve.log"; echo "$what exited 0"; exit 1; }
}

# expect_exit_after_rank_killed WHAT: kills MPI rank 1 of the server's job, then expects the whole
# job to end within 30 s with a non-zero status.
expect_exit_after_rank_killed() {
  local worker
  worker=$(rank_one_of_server)
  kill -9 "$worker"
  expect_server_exit "$1 after its rank 1 was killed" 30
}
