"""AsyncLLM's sleep mode as vLLM's: sleep(level, mode) / wake_up(tags) / is_sleeping(), with
requests in flight ended ("abort", the default) or waited for ("wait"), and new ones held until
the engine is awake."""

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


def test_sleep_holds_new_requests_until_wake_up_which_gives_the_same_outputs(engine):
    async def main():
        before = (await completion_of(engine, PROMPT, "a")).text
        assert await engine.is_sleeping() is False
        await engine.sleep()
        assert await engine.is_sleeping() is True
        held = asyncio.create_task(completion_of(engine, PROMPT, "held"))
        await asyncio.sleep(0.2)
        assert not held.done()  # waiting for the engine, not refused
        await engine.wake_up()
        assert await engine.is_sleeping() is False
        assert (await asyncio.wait_for(held, 30)).text == before
        assert (await completion_of(engine, PROMPT, "b")).text == before
        await engine.sleep(level=2)
        held = asyncio.create_task(completion_of(engine, PROMPT, "held after level 2"))
        await engine.wake_up(tags=["weights"])
        assert await engine.is_sleeping()  # the KV cache stays freed until its own wake-up
        await asyncio.sleep(0.1)
        assert not held.done()
        await engine.wake_up(tags=["kv_cache"])
        assert (await asyncio.wait_for(held, 30)).text == before
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


def test_sleep_wait_mode_is_not_starved_by_a_stream_of_new_requests(engine):
    """Requests keep coming every few milliseconds while sleep(mode="wait") runs: it still ends
    once the requests in flight have finished, and those that came meanwhile run after
    wake_up()."""
    short = SamplingParams(temperature=0, max_tokens=24, ignore_eos=True)
    long = SamplingParams(temperature=0, max_tokens=60, ignore_eos=True)

    async def main():
        long_outputs = []

        async def long_request():
            async for output in engine.generate("Once", long, "long"):
                long_outputs.append(output)
            return long_outputs[-1].outputs[0]

        tasks = []
        feeding = True

        async def feed():
            while feeding:
                request_id = f"new-{len(tasks)}"
                tasks.append(asyncio.create_task(completion_of(engine, "The dog", request_id,
                                                               short)))
                await asyncio.sleep(0.003)

        long_task = asyncio.create_task(long_request())
        while not long_outputs:  # in flight once its first output is out
            await asyncio.sleep(0.001)
        feeder = asyncio.create_task(feed())
        await asyncio.sleep(0.05)
        await asyncio.wait_for(engine.sleep(mode="wait"), 60)
        assert long_task.done()
        finished_awake = sum(task.done() for task in tasks)
        await asyncio.sleep(0.2)  # requests keep coming while it sleeps
        feeding = False
        await feeder
        assert await engine.is_sleeping()
        assert sum(task.done() for task in tasks) == finished_awake  # nothing ran asleep
        assert finished_awake < len(tasks)
        await engine.wake_up()
        completions = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        return long_task.result(), completions

    waited, completions = asyncio.run(main())
    assert waited.finish_reason == "length" and len(waited.token_ids) == 60
    for completion in completions:
        assert completion.finish_reason == "length" and len(completion.token_ids) == 24


def test_shutdown_ends_the_requests_waiting_for_wake_up(engine):
    async def main():
        await engine.sleep()
        held = asyncio.create_task(completion_of(engine, PROMPT, "held"))
        await asyncio.sleep(0.1)
        engine.shutdown()
        with pytest.raises(RuntimeError, match="shut down"):
            await asyncio.wait_for(held, 30)

    asyncio.run(main())


def test_sleep_refuses_unknown_modes_and_levels(engine):
    async def main():
        with pytest.raises(ValueError, match="Invalid pause mode: later"):
            await engine.sleep(mode="later")
        with pytest.raises(NotImplementedError, match="mode='keep'"):
            await engine.sleep(mode="keep")
        with pytest.raises(RuntimeError, match="sleep level must be 1 or 2"):
            await engine.sleep(level=3)
        # A sleep that failed leaves the engine taking requests.
        after = await asyncio.wait_for(completion_of(engine, "The dog", "after"), 30)
        assert after.finish_reason in ("stop", "length")
        with pytest.raises(RuntimeError, match="unknown wake_up tag"):
            await engine.wake_up(tags=["everything"])
        assert await engine.is_sleeping() is False

    asyncio.run(main())
