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
