#!/usr/bin/env bash
# The README's multi-host launch, `mpirun -H a,b -np 2 vllm-cpp ... -tp 2`, with two loopback
# addresses as the two hosts. Open MPI starts the second host's daemon through its remote launch
# agent (ssh by default); the test's agent runs that command on this machine instead, so nothing
# leaves it. Open MPI then counts 127.0.0.2 as another node: the ranks cannot use shared memory
# and talk over TCP on lo only. generate gives one process's greedy text; a served job whose
# remote rank is killed stops answering and exits non-zero instead of hanging.
set -euo pipefail
binary="$1"
shared="$2"
model="$shared/models/stories260K.gguf"
prompt="Once upon a time"

source "$(dirname "${BASH_SOURCE[0]}")/test_server.sh"

# Open MPI 4.1 runs `AGENT HOST orted ARGS...`, ARGS quoted for the remote shell: drop HOST and
# give the rest to a local shell, as sshd would.
agent="$work/local_rsh_agent.sh"
cat >"$agent" <<EOF
#!/bin/sh
echo "\$1" >>"$work/agent_hosts.log"
shift
exec /bin/sh -c "\$*"
EOF
chmod +x "$agent"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_plm_rsh_agent="$agent"
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
hosts=(mpirun -H "127.0.0.1,127.0.0.2" -np 2 --bind-to none)  # both "hosts" share these 2 cores
run_args=(--prompt "$prompt" --temperature 0 --max-tokens 40 -t 1)

fail() {  # fail MESSAGE: shows the last run's logs and ends the test
  cat "$work/run.out" "$work/run.err" >&2 2>/dev/null || true
  echo "$1" >&2
  exit 1
}

one=$(timeout 60 "$binary" generate "$model" "${run_args[@]}" 2>"$work/run.err") ||
  fail "generate -tp 1 failed"

# Forced onto TCP, with the job map: rank 1 runs on node 127.0.0.2, started by the agent.
OMPI_MCA_btl=self,tcp timeout 60 "${hosts[@]}" --display-map --tag-output \
  "$binary" generate "$model" "${run_args[@]}" -tp 2 >"$work/run.out" 2>"$work/run.err" ||
  fail "mpirun -H 127.0.0.1,127.0.0.2 ... generate -tp 2 failed"
# --tag-output marks each write of rank 0's stdout; the untagged lines are mpirun's job map.
two=$(grep -o '\[1,0\]<stdout>:.*' "$work/run.out" | sed 's/\[1,0\]<stdout>://g')
[[ "$two" == "$one" ]] || fail "-tp 1: $one"$'\n'"-tp 2 on two hosts: $two"
grep -A1 "Data for node: 127.0.0.2" "$work/run.out" | grep -q "Process rank: 1" ||
  fail "the job map does not put rank 1 on node 127.0.0.2"
grep -qx "127.0.0.2" "$work/agent_hosts.log" || fail "the launch agent was not asked for 127.0.0.2"

# Pipeline parallel launches the same way: two stages on the two hosts, the same text.
OMPI_MCA_btl=self,tcp timeout 60 "${hosts[@]}" "$binary" generate "$model" "${run_args[@]}" \
  -pp 2 >"$work/run.out" 2>"$work/run.err" || fail "mpirun -H ... generate -pp 2 failed"
[[ "$(cat "$work/run.out")" == "$one" ]] || fail "-pp 2 on two hosts differs"
grep -q "pipeline stage 1 of 2 (layers 3-4)" "$work/run.err" || fail "no stage 1 on the hosts"

# Shared memory allowed too: it cannot start without a second rank on the node, so the ranks
# connect over TCP, and the text is the same.
OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_base_verbose=100 timeout 60 "${hosts[@]}" \
  "$binary" generate "$model" "${run_args[@]}" -tp 2 >"$work/run.out" 2>"$work/run.err" ||
  fail "mpirun -H ... generate -tp 2 with shared memory allowed failed"
[[ "$(cat "$work/run.out")" == "$one" ]] || fail "-tp 2 with shared memory allowed differs"
[[ $(grep -c "init of component vader returned failure" "$work/run.err") == 2 ]] ||
  fail "shared memory (vader) started on a rank: the two hosts count as one"
grep -q "btl:tcp: now connected to 127.0.0.1" "$work/run.err" || fail "no TCP connection"

# serve on two hosts: a completion, then rank 1 killed on 127.0.0.2. The job ends: /health stops
# answering (connection refused, no hang) and mpirun exits non-zero.
OMPI_MCA_btl=self,tcp start_server "$work/serve.log" "Serving .* on http://127.0.0.1:[0-9]" \
  "${hosts[@]}" "$binary" serve "$model" --served-model-name stories --host 127.0.0.1 --port 0 \
  -tp 2 -t 1 --max-model-len 256
expect_stories_completion "$work/serve.log"
worker=""
for pid in $(pgrep -x vllm-cpp); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" &&
    tr '\0' '\n' <"/proc/$pid/environ" | grep -q "^OMPI_MCA_plm_rsh_agent=$agent$"; then
    worker=$pid
  fi
done
[[ -n "$worker" ]] || { cat "$work/serve.log"; echo "no rank 1 of this job"; exit 1; }
kill -9 "$worker"
expect_server_exit "mpirun after its rank 1 on 127.0.0.2 died" 20
health=$(curl -sS -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health" 2>&1) &&
  { echo "/health answers $health after the job ended"; exit 1; }
grep -q "process rank 1 .* on node 127.0.0.2 exited on signal 9" "$work/serve.log" ||
  { cat "$work/serve.log"; echo "mpirun did not report rank 1's death"; exit 1; }
