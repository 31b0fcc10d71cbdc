"""AsyncLLM / AsyncLLMEngine: generate() as an async generator, streaming, concurrency, abort."""

import asyncio

import pytest


@pytest.fixture(scope="module")
def async_llm(model):
    from vllm_cpp import AsyncEngineArgs, AsyncLLM

    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(model=model))
    yield engine
    engine.shutdown()


def test_streaming_matches_offline(async_llm, llm):
    from vllm_cpp import RequestOutputKind, SamplingParams

    greedy = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=30),
                          use_tqdm=False)[0].outputs[0]

    async def stream(kind):
        params = SamplingParams(temperature=0, max_tokens=30, output_kind=kind)
        return [o async for o in async_llm.generate("Once upon a time", params, f"r-{kind}")]

    deltas = asyncio.run(stream(RequestOutputKind.DELTA))
    assert len(deltas) > 1 and deltas[-1].finished
    assert "".join(o.outputs[0].text for o in deltas) == greedy.text
    assert sum((o.outputs[0].token_ids for o in deltas), []) == greedy.token_ids
    cumulative = asyncio.run(stream(RequestOutputKind.CUMULATIVE))
    assert cumulative[-1].outputs[0].token_ids == greedy.token_ids
    final = asyncio.run(stream(RequestOutputKind.FINAL_ONLY))
    assert len(final) == 1 and final[0].outputs[0].text == greedy.text


def test_concurrent_requests(async_llm):
    from vllm_cpp import SamplingParams

    async def one(i):
        params = SamplingParams(temperature=0, max_tokens=10 + i)
        last = None
        async for output in async_llm.generate(f"Story {i}:", params, request_id=f"c{i}"):
            last = output
        return last

    async def main():
        return await asyncio.gather(*(one(i) for i in range(8)))

    results = asyncio.run(main())
    assert [len(r.outputs[0].token_ids) for r in results] == [10 + i for i in range(8)]
    assert [r.request_id for r in results] == [f"c{i}" for i in range(8)]


def test_abort_and_cancel(async_llm):
    from vllm_cpp import SamplingParams

    params = SamplingParams(max_tokens=400, ignore_eos=True)

    async def abort_midway():
        outputs = []
        async for output in async_llm.generate("Once", params, "to-abort"):
            outputs.append(output)
            if len(outputs) == 2:
                await async_llm.abort("to-abort")
        return outputs

    outputs = asyncio.run(abort_midway())
    assert outputs[-1].finished and outputs[-1].outputs[0].finish_reason == "abort"
    assert len(outputs[-1].outputs[0].token_ids) < 400

    async def cancel_midway():
        generator = async_llm.generate("Once", params, "to-close")
        await generator.__anext__()
        await generator.aclose()  # a client that goes away: the request is aborted
        short = SamplingParams(temperature=0, max_tokens=3)
        return [o async for o in async_llm.generate("Once", short, "after")]

    assert asyncio.run(cancel_midway())[-1].finished


def test_refused_request_raises_value_error(async_llm):
    from vllm_cpp import SamplingParams

    async def main():
        return [o async for o in async_llm.generate({"prompt_token_ids": [1, 10**6]},
                                                    SamplingParams(), "bad")]

    with pytest.raises(ValueError):
        asyncio.run(main())


def test_alias_and_shutdown(model):
    from vllm_cpp import AsyncEngineArgs, AsyncLLM, AsyncLLMEngine, SamplingParams

    assert AsyncLLMEngine is AsyncLLM
    engine = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(model=model))
    assert engine.is_running
    engine.shutdown()
    assert engine.is_stopped

    async def main():
        return [o async for o in engine.generate("Once", SamplingParams(), "late")]

    with pytest.raises(RuntimeError, match="shut down"):
        asyncio.run(main())
    with pytest.raises(RuntimeError, match="shut down"):
        asyncio.run(engine.get_tokenizer()).encode("Once")
