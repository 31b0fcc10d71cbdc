"""The GIL is released while the engine steps: Python threads keep running during a step."""

import threading
import time

import pytest

LONG_STEP_SECONDS = 0.008  # steps at least this long are checked
EDGE_SECONDS = 0.001  # wake-ups this close to a step's start or end are not counted as inside it


def test_other_threads_run_during_steps(llm):
    from vllm_cpp import SamplingParams

    engine = llm.llm_engine
    params = SamplingParams(max_tokens=60, ignore_eos=True)
    for i in range(128):
        engine.add_request(f"gil-{i}", "Once upon a time " * 20, params)
    steps = []  # (start, end) per step

    def run_steps():
        while engine.has_unfinished_requests():
            start = time.perf_counter()
            engine.step()
            steps.append((start, time.perf_counter()))

    worker = threading.Thread(target=run_steps)
    worker.start()
    wake_ups = []
    while worker.is_alive():
        time.sleep(0.001)
        wake_ups.append(time.perf_counter())
    worker.join()
    long_steps = [(s, e) for s, e in steps if e - s >= LONG_STEP_SECONDS]
    long_seconds = sum(e - s - 2 * EDGE_SECONDS for s, e in long_steps)
    if long_seconds < 0.1:
        pytest.skip(f"too little time in long steps to tell ({long_seconds * 1000:.1f} ms)")
    # Holding the GIL through a step, this thread could not wake inside one at all; released, it
    # wakes about once a millisecond (a generous quarter of that allows for a loaded machine).
    inside = sum(
        1 for w in wake_ups if any(s + EDGE_SECONDS < w < e - EDGE_SECONDS for s, e in long_steps)
    )
    expected = long_seconds / 0.0011
    assert inside >= 0.25 * expected, (inside, expected, len(long_steps))
