#!/usr/bin/env bash
# The aarch64 build and its tests: cross-builds vllm-cpp with Debian's aarch64 toolchain in
# build-aarch64 (cmake/aarch64-linux-gnu.cmake) and runs the test binaries under qemu-aarch64
# -cpu max (NEON, dotprod, i8mm, SVE), once per ARM tier as VLLM_CPU_ISA caps it.
#   scripts/test_aarch64.sh        the subset CI has time for: the tier-dependent kernel tests on
#                                  every tier, all kernel, model, engine and oracle tests
#                                  (stories260K) on i8mm
#   scripts/test_aarch64.sh --all  every unit and conformance test binary on every tier
set -euo pipefail
cd "$(dirname "$0")/.."
all=false
[ "${1:-}" = "--all" ] && all=true
./scripts/setup_aarch64.sh
build=build-aarch64
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DVLLM_BUILD_PYTHON=OFF \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake >/dev/null
emulator=(qemu-aarch64 -cpu max -L /usr/aarch64-linux-gnu)
tiers=(neon dotprod i8mm)
failed=()
# run_tests TIER BINARY... [--gtest_filter=...]: each binary under the emulator with
# VLLM_CPU_ISA=TIER (and the filter, where given).
run_tests() {
  local tier=$1
  shift
  local filter=()
  if [[ "${*: -1}" == --gtest_filter=* ]]; then
    filter=("${*: -1}")
    set -- "${@:1:$#-1}"
  fi
  for binary in "$@"; do
    echo "== $tier: ${binary#"$build"/} ${filter[*]}"
    if ! VLLM_CPU_ISA=$tier "${emulator[@]}" "$binary" --gtest_brief=1 "${filter[@]}"; then
      failed+=("$tier ${binary#"$build"/}")
    fi
  done
}
if $all; then
  cmake --build "$build" -j2
  mapfile -t binaries < <(find "$build/src" "$build/tests" -name '*_test' -type f -perm -u+x | sort)
  for tier in "${tiers[@]}"; do run_tests "$tier" "${binaries[@]}"; done
else
  cmake --build "$build" -j2 --target kernels_test model_test engine_test oracle_test
  # The tests whose kernels differ between tiers (Linear's every path and ARM's bits, the
  # activations); the rest of kernels_test, and the model, engine and oracle tests, on i8mm.
  for tier in "${tiers[@]}"; do
    run_tests "$tier" "$build/src/kernels/kernels_test" \
      --gtest_filter='LinearTest.EveryPath*:LinearTest.Arm*:ElementwiseTest.*:TypeTableTest.*'
  done
  run_tests i8mm "$build/src/kernels/kernels_test" "$build/src/model/model_test" \
    "$build/src/engine/engine_test" "$build/tests/conformance/oracle_test"
fi
# Detected rather than capped: on a CPU without dotprod (Cortex-A53) the kernels take the NEON tier
# (an SDOT there would stop the test with SIGILL).
echo "== cortex-a53, no VLLM_CPU_ISA: kernels' Linear and activation tests"
if ! qemu-aarch64 -cpu cortex-a53 -L /usr/aarch64-linux-gnu "$build/src/kernels/kernels_test" \
  --gtest_brief=1 --gtest_filter='LinearTest.*:ElementwiseTest.*'; then
  failed+=("cortex-a53 kernels_test")
fi
if [ ${#failed[@]} -gt 0 ]; then
  printf 'aarch64 failures: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "aarch64: all tests passed"
