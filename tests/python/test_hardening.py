"""Hostile or careless use of the Python package: text that ends inside a UTF-8 character decodes
with replacement characters (never an exception that loses the batch), logprobs are limited as
the server limits them, Ctrl-C ends beam search and pooling calls, and thread counts are
bounded."""

import asyncio
import os
import signal
import threading
import time

import pytest

REPLACEMENT = "\ufffd"


@pytest.fixture(scope="module")
def lead_byte_id(llm) -> int:
    """The demo model's byte-fallback token <0xE2>: a UTF-8 lead byte that no character follows."""
    tokenizer = llm.get_tokenizer()
    ids = [i for i in range(tokenizer.vocab_size) if tokenizer.convert_ids_to_tokens(i) == "<0xE2>"]
    assert len(ids) == 1
    return ids[0]


def test_partial_utf8_decodes_to_replacement_characters(llm, lead_byte_id):
    from vllm_cpp import SamplingParams

    assert llm.get_tokenizer().decode([lead_byte_id]) == REPLACEMENT
    params = SamplingParams(max_tokens=3, allowed_token_ids=[lead_byte_id], logprobs=2,
                            prompt_logprobs=1)
    [output] = llm.generate([{"prompt_token_ids": [1, lead_byte_id, lead_byte_id]}], params,
                            use_tqdm=False)
    completion = output.outputs[0]
    assert completion.token_ids == [lead_byte_id] * 3
    assert completion.text == REPLACEMENT * 3
    assert all(p[lead_byte_id].decoded_token == REPLACEMENT for p in completion.logprobs)
    assert output.prompt_logprobs[1][lead_byte_id].decoded_token == REPLACEMENT


def test_hot_sampling_with_every_logprob_never_raises(model):
    from vllm_cpp import LLM, SamplingParams

    # Without a limit, 300 logprobs per position always include byte tokens like <0xE2>.
    llm = LLM(model=model, max_logprobs=-1)
    params = SamplingParams(temperature=2.0, max_tokens=24, logprobs=300, seed=7)
    outputs = llm.generate(["Once upon a time"] * 8, params, use_tqdm=False)
    decoded = {entry.decoded_token for output in outputs for position in output.outputs[0].logprobs
               for entry in position.values()}
    assert REPLACEMENT in decoded
    assert all(len(output.outputs[0].token_ids) == 24 for output in outputs)


def test_async_outputs_decode_partial_utf8(model, lead_byte_id):
    from vllm_cpp import AsyncEngineArgs, AsyncLLM, RequestOutputKind, SamplingParams

    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(model=model))

    async def run():
        params = SamplingParams(max_tokens=2, allowed_token_ids=[lead_byte_id], logprobs=1,
                                output_kind=RequestOutputKind.DELTA)
        return [output async for output in engine.generate("Once", params, "partial")]

    try:
        outputs = asyncio.run(run())
    finally:
        engine.shutdown()
    assert "".join(o.outputs[0].text for o in outputs) == REPLACEMENT * 2
    assert outputs[-1].finished


@pytest.mark.parametrize("kwargs, message", [
    ({"logprobs": 300}, "Requested sample logprobs of 300, which is greater than max allowed: 20"),
    ({"logprobs": -1}, "Requested sample logprobs of 512, which is greater than max allowed: 20"),
    ({"prompt_logprobs": 21},
     "Requested prompt logprobs of 21, which is greater than max allowed: 20"),
])
def test_logprobs_above_the_limit_are_refused(llm, kwargs, message):
    from vllm_cpp import SamplingParams

    with pytest.raises(ValueError, match=message):
        llm.generate(["Once", "upon"], SamplingParams(max_tokens=2, **kwargs), use_tqdm=False)
    assert not llm.llm_engine.has_unfinished_requests()
    [output] = llm.generate("Once", SamplingParams(max_tokens=2, logprobs=20, prompt_logprobs=20),
                            use_tqdm=False)
    assert len(output.outputs[0].logprobs) == 2


def test_cumulative_outputs_convert_each_position_once(llm):
    from vllm_cpp import SamplingParams

    # Two sequences, logprobs and a stop string the text holds back while it could complete.
    params = SamplingParams(n=2, temperature=0.8, seed=3, max_tokens=40, logprobs=5,
                            prompt_logprobs=2, stop=["zzz"])
    engine = llm.llm_engine
    engine.add_request("cumulative", "Once upon a time", params)
    steps = []
    while engine.has_unfinished_requests():
        steps.extend(engine.step())
    final = llm.generate("Once upon a time", params, use_tqdm=False)[0]
    assert steps[-1].finished and not any(o.finished for o in steps[:-1])
    for step in steps:
        assert [c.index for c in step.outputs] == [0, 1]
        assert step.prompt_logprobs == final.prompt_logprobs
        for index, completion in enumerate(step.outputs):
            whole = final.outputs[index]
            assert whole.text.startswith(completion.text)
            assert completion.token_ids == whole.token_ids[:len(completion.token_ids)]
            assert completion.logprobs == whole.logprobs[:len(completion.logprobs)]
    for index, whole in enumerate(final.outputs):
        last = steps[-1].outputs[index]
        assert (last.text, last.token_ids, last.logprobs, last.finish_reason) == (
            whole.text, whole.token_ids, whole.logprobs, whole.finish_reason)
        assert last.cumulative_logprob == pytest.approx(whole.cumulative_logprob)
    # A position is converted once: later outputs hold the same Logprob dicts, not new copies.
    assert steps[-1].outputs[0].logprobs[0] is steps[1].outputs[0].logprobs[0]
    assert steps[-1].outputs[0].token_ids is not steps[-2].outputs[0].token_ids


def interrupt_after(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_ends_beam_search(llm):
    from vllm_cpp import BeamSearchParams

    # 8 prompts x 10 beams x 400 steps: a minute of work, ended within a step or two.
    params = BeamSearchParams(beam_width=10, max_tokens=400, ignore_eos=True)
    timer = interrupt_after(0.5)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            llm.beam_search(["Once upon a time"] * 8, params)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 5.0
    assert not llm.llm_engine.has_unfinished_requests()
    [output] = llm.beam_search(["Once upon a time"], BeamSearchParams(beam_width=2, max_tokens=3))
    assert len(output.sequences) == 2


def test_ctrl_c_ends_a_pooling_call(tmp_path):
    from test_pooling import write_encoder
    from vllm_cpp import LLM

    embedder = LLM(model=write_encoder(tmp_path, "bert-tiny"), runner="pooling")
    texts = [f"text number {i} of a batch far too long to wait for" for i in range(200000)]
    timer = interrupt_after(0.5)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            embedder.embed(texts)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 10.0
    assert not embedder.llm_engine.has_unfinished_requests()
    assert len(embedder.embed(texts[:2])) == 2


@pytest.mark.parametrize("num_threads", [-3, 100000])
def test_thread_counts_out_of_range_are_refused(model, num_threads):
    from vllm_cpp import LLM

    start = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"num_threads \(-t/--threads\) must be 0 \(one per "
                                           rf"CPU\) or 1 to \d+ .*got {num_threads}"):
        LLM(model=model, num_threads=num_threads)
    assert time.monotonic() - start < 5.0
