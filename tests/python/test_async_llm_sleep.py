"""AsyncLLM's sleep mode as vLLM's: sleep(level, mode) / wake_up(tags) / is_sleeping(), with
requests in flight ended ("abort", the default) or waited for ("wait")."""

import asyncio

import pytest

from vllm_cpp import AsyncEngineArgs, AsyncLLM, SamplingParams

GREEDY = SamplingParams(temperature=0, max_tokens=16)
PROMPT = "Once upon a time there was a dog. " * 4


@pytest.fixture()
def engine(model):
    engine = AsyncLLM.from_engine_args(
        AsyncEngineArgs(model=model, kv_cache_memory_bytes=64 << 20))
    yield engine
    engine.shutdown()


async def completion_of(engine, prompt, request_id, params=GREEDY):
    outputs = [o async for o in engine.generate(prompt, params, request_id)]
    return outputs[-1].outputs[0]


def test_sleep_refuses_requests_and_wake_up_gives_the_same_outputs(engine):
    async def main():
        before = (await completion_of(engine, PROMPT, "a")).text
        assert await engine.is_sleeping() is False
        await engine.sleep()
        assert await engine.is_sleeping() is True
        with pytest.raises(ValueError, match="sleeping"):
            await completion_of(engine, "The dog", "refused")
        await engine.wake_up()
        assert await engine.is_sleeping() is False
        assert (await completion_of(engine, PROMPT, "b")).text == before
        await engine.sleep(level=2)
        await engine.wake_up(tags=["weights"])
        assert await engine.is_sleeping()  # the KV cache stays freed until its own wake-up
        await engine.wake_up(tags=["kv_cache"])
        assert (await completion_of(engine, PROMPT, "c")).text == before

    asyncio.run(main())


def test_sleep_ends_the_requests_in_flight_by_default(engine):
    long = SamplingParams(max_tokens=400, ignore_eos=True)

    async def main():
        outputs = []
        async for output in engine.generate("Once", long, "long"):
            outputs.append(output)
            if len(outputs) == 2:
                await engine.sleep()
        assert await engine.is_sleeping()
        await engine.wake_up()
        after = await completion_of(engine, PROMPT, "after")
        return outputs, after

    outputs, after = asyncio.run(main())
    assert outputs[-1].finished and outputs[-1].outputs[0].finish_reason == "abort"
    assert len(outputs[-1].outputs[0].token_ids) < 400
    assert after.finish_reason == "length" and len(after.token_ids) == 16


def test_sleep_wait_mode_lets_the_requests_in_flight_finish(engine):
    params = SamplingParams(temperature=0, max_tokens=60, ignore_eos=True)

    async def main():
        task = asyncio.create_task(completion_of(engine, "Once", "waited", params))
        await asyncio.sleep(0)  # the task runs until it waits for its first output: submitted
        await engine.sleep(mode="wait")
        completion = await task
        assert await engine.is_sleeping()
        await engine.wake_up()
        return completion

    completion = asyncio.run(main())
    assert completion.finish_reason == "length" and len(completion.token_ids) == 60


def test_sleep_refuses_unknown_modes_and_levels(engine):
    async def main():
        with pytest.raises(ValueError, match="Invalid pause mode: later"):
            await engine.sleep(mode="later")
        with pytest.raises(NotImplementedError, match="mode='keep'"):
            await engine.sleep(mode="keep")
        with pytest.raises(RuntimeError, match="sleep level must be 1 or 2"):
            await engine.sleep(level=3)
        with pytest.raises(RuntimeError, match="unknown wake_up tag"):
            await engine.wake_up(tags=["everything"])
        assert await engine.is_sleeping() is False

    asyncio.run(main())
