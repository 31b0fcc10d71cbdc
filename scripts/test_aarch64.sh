#!/usr/bin/env bash
# The aarch64 build and its tests: cross-builds the test binaries with Debian's aarch64 toolchain
# in build-aarch64 (cmake/aarch64-linux-gnu.cmake) and runs them under qemu-aarch64 -cpu max (NEON,
# dotprod, i8mm, SVE), once per ARM tier as VLLM_CPU_ISA caps it.
#   scripts/test_aarch64.sh        what scripts/test.sh (and so CI) runs, about 3.5 minutes of qemu
#                                  CPU time: every kernel test on i8mm, whose Linear tests also
#                                  run the neon and dotprod kernels by name; the tests that take
#                                  the tier from VLLM_CPU_ISA again on neon and dotprod, and on a
#                                  Cortex-A53 (no dotprod); on i8mm the model tests but the slow
#                                  per-family sweeps, the engine tests on stories260K that cover
#                                  generation, batching, preemption, logprobs, stops, structured
#                                  output and speculative decoding, and the llama.cpp oracles
#   scripts/test_aarch64.sh --all  every unit and conformance test binary on every tier
set -euo pipefail
cd "$(dirname "$0")/.."
all=false
[ "${1:-}" = "--all" ] && all=true
./scripts/setup_aarch64.sh
build="build-aarch64"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DVLLM_BUILD_PYTHON=OFF \
  -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake >/dev/null
# -L /: the arm64 multiarch glibc, as in cmake/aarch64-linux-gnu.cmake (which says why).
emulator=(qemu-aarch64 -cpu max -L /)
tiers=(neon dotprod i8mm)
# What qemu's user mode does not emulate: it accepts MADV_POPULATE_WRITE without populating, and
# keeps RLIMIT_AS from the guest (the limit would bind qemu itself).
not_emulated='KvStorageTest.IsResidentFromCreationAndReleasedWithIt:KvStorageTest.AnAllocationFailureIsAnError'
failed=()
# run_tests TIER FILTER BINARY...: each binary under the emulator with VLLM_CPU_ISA=TIER and the
# gtest filter, less the tests qemu cannot run.
run_tests() {
  local tier=$1 filter=$2
  shift 2
  if [[ $filter == *-* ]]; then filter+=":$not_emulated"; else filter+="-$not_emulated"; fi
  for binary in "$@"; do
    echo "== $tier: ${binary#"$build"/}"
    local start=$SECONDS
    if ! VLLM_CPU_ISA=$tier "${emulator[@]}" "$binary" --gtest_brief=1 \
      --gtest_filter="$filter"; then
      failed+=("$tier ${binary#"$build"/}")
    fi
    echo "   $((SECONDS - start)) s"
  done
}
kernels=$build/src/kernels/kernels_test
if $all; then
  cmake --build "$build" -j2
  mapfile -t binaries < <(find "$build/src" "$build/tests" -name '*_test' -type f -perm -u+x | sort)
  for tier in "${tiers[@]}"; do run_tests "$tier" '*' "${binaries[@]}"; done
else
  cmake --build "$build" -j2 --target kernels_test model_test engine_test oracle_test
  run_tests i8mm '*' "$kernels"
  # The tests whose paths follow BestIsa(): Linear (in place and through LinearWeight), the type
  # table's packed forms, activations, attention.
  for tier in neon dotprod; do
    run_tests "$tier" 'LinearTest.*:TypeTableTest.*:ElementwiseTest.*:Attend*:ScaleAccRowsTest.*' \
      "$kernels"
  done
  # Left out: the sweeps over every family's features and chunkings, and every quant type through
  # a whole model (--all runs them; the kernel tests check each type's arithmetic).
  model_sweeps=('QuantizedLogitsTest.*' '*ReferenceAblationTest.*' '*SteppedReferenceDecoderTest.*'
    '*HfCheckpointTest.*')
  run_tests i8mm "*-$(IFS=:; echo "${model_sweeps[*]}")" "$build/src/model/model_test"
  engine_tests=(EngineTest.GreedyMatchesTheReference EngineTest.BatchedEqualsAlone
    EngineTest.PreemptionDoesNotChangeOutputs EngineTest.SharedPrefixComputesOnlyTheSuffix
    'EngineTest.Stop*' 'EngineTest.*Logprobs*' EngineTest.NGivesNSequences
    EngineTest.LogitsProcessorsShapeTheOutput 'EngineTest.Refuses*' 'EngineSeedTest.*'
    'EngineCoreTest.*' 'AsyncLLMTest.*' 'OutputProcessorTest.*' 'GenerationConfigTest.*'
    StructuredOutputEngineTest.ChoiceGivesOneOfTheStringsAndStops
    StructuredOutputEngineTest.JsonSchemaOutputParsesAndValidates
    SpecDecodeEngineTest.GreedyBatchIsTokenIdenticalAndDraftsAreAccepted)
  run_tests i8mm "$(IFS=:; echo "${engine_tests[*]}")" "$build/src/engine/engine_test"
  run_tests i8mm '*' "$build/tests/conformance/oracle_test"
fi
# Detected rather than capped: on a CPU without dotprod (Cortex-A53) the kernels take the NEON tier
# (an SDOT there would stop the test with SIGILL).
echo "== cortex-a53, no VLLM_CPU_ISA: kernels' Linear and activation tests"
if ! qemu-aarch64 -cpu cortex-a53 -L / "$kernels" --gtest_brief=1 \
  --gtest_filter='LinearTest.*:ElementwiseTest.*'; then
  failed+=("cortex-a53 kernels_test")
fi
if [ ${#failed[@]} -gt 0 ]; then
  printf 'aarch64 failures: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "aarch64: all tests passed"
