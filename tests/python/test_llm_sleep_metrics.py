"""vLLM's LLM methods around the engine: sleep / wake_up, reset_prefix_cache, get_metrics,
collective_rpc, preprocess_chat; and AsyncLLM's check_health and encode."""

import asyncio

import pytest

from vllm_cpp import LLM, AsyncEngineArgs, AsyncLLM, SamplingParams
from vllm_cpp.async_llm import EngineDeadError
from vllm_cpp.metrics import Counter, Gauge, Histogram
from vllm_cpp.pooling import PoolingParams

GREEDY = SamplingParams(temperature=0, max_tokens=16)
LONG_PROMPT = "Once upon a time there was a dog. " * 8


@pytest.fixture()
def own_llm(model):
    return LLM(model=model, kv_cache_memory_bytes=64 << 20)


def metric(metrics, name, **labels):
    found = [m for m in metrics if m.name == name and labels.items() <= m.labels.items()]
    assert len(found) == 1, (name, found)
    return found[0]


def test_sleep_refuses_requests_and_wake_up_gives_the_same_outputs(own_llm):
    before = own_llm.generate([LONG_PROMPT], GREEDY, use_tqdm=False)[0].outputs[0].text
    own_llm.sleep(level=1)
    assert own_llm.llm_engine.is_sleeping()
    with pytest.raises(ValueError, match="sleeping"):
        own_llm.generate(["The dog"], GREEDY, use_tqdm=False)
    own_llm.wake_up()
    assert not own_llm.llm_engine.is_sleeping()
    assert own_llm.generate([LONG_PROMPT], GREEDY, use_tqdm=False)[0].outputs[0].text == before
    own_llm.sleep(level=2)
    own_llm.wake_up(tags=["weights"])
    assert own_llm.llm_engine.is_sleeping()  # the KV cache stays freed until its own wake-up
    own_llm.wake_up(tags=["kv_cache"])
    assert own_llm.generate([LONG_PROMPT], GREEDY, use_tqdm=False)[0].outputs[0].text == before
    with pytest.raises(ValueError, match="sleep level must be 1 or 2"):
        own_llm.sleep(level=3)


def test_reset_prefix_cache_and_metrics(own_llm):
    own_llm.generate([LONG_PROMPT], GREEDY, use_tqdm=False)
    hits = metric(own_llm.get_metrics(), "vllm:prefix_cache_hits").value
    own_llm.generate([LONG_PROMPT], GREEDY, use_tqdm=False)
    metrics = own_llm.get_metrics()
    assert metric(metrics, "vllm:prefix_cache_hits").value > hits
    assert own_llm.reset_prefix_cache() is True
    hits = metric(own_llm.get_metrics(), "vllm:prefix_cache_hits").value
    own_llm.generate([LONG_PROMPT], GREEDY, use_tqdm=False)
    metrics = own_llm.get_metrics()
    assert metric(metrics, "vllm:prefix_cache_hits").value == hits  # nothing left to hit

    labels = {"model_name": own_llm.llm_engine._model_name, "engine": "0"}
    running = metric(metrics, "vllm:num_requests_running")
    assert isinstance(running, Gauge) and running.value == 0 and running.labels == labels
    generated = metric(metrics, "vllm:generation_tokens")
    assert isinstance(generated, Counter) and generated.value == 3 * 16
    success = metric(metrics, "vllm:request_success", finished_reason="length")
    assert success.value == 3
    prompts = metric(metrics, "vllm:request_prompt_tokens")
    assert isinstance(prompts, Histogram) and prompts.count == 3 and prompts.buckets["+Inf"] == 3
    steps = metric(metrics, "vllm:iteration_tokens_total")
    assert steps.count > 0 and steps.buckets["1.0"] > 0  # decode steps of one token
    assert list(steps.buckets)[-1] == "+Inf" and steps.buckets["+Inf"] == steps.count


def test_collective_rpc_runs_on_the_one_worker(own_llm):
    assert own_llm.collective_rpc("check_health") == [None]
    assert own_llm.collective_rpc(lambda worker, x: (worker.rank, x), args=(7,)) == [(0, 7)]
    assert own_llm.collective_rpc("reset_prefix_cache") == [True]
    with pytest.raises(NotImplementedError, match="'load_weights' is not implemented"):
        own_llm.collective_rpc("load_weights")


def test_preprocess_chat_gives_what_chat_generates(llm, chat_template):
    conversation = [{"role": "user", "content": "Tell me a story."}]
    prompts = llm.preprocess_chat(conversation, chat_template=chat_template)
    assert len(prompts) == 1 and "Tell me a story." in prompts[0]["prompt"]
    assert prompts[0]["prompt_token_ids"]
    from_prompt = llm.generate(prompts, GREEDY, use_tqdm=False)[0].outputs[0].text
    from_chat = llm.chat(conversation, GREEDY, use_tqdm=False,
                         chat_template=chat_template)[0].outputs[0].text
    assert from_prompt == from_chat
    assert len(llm.preprocess_chat([conversation, conversation],
                                   chat_template=chat_template)) == 2


def test_async_check_health_and_encode(model):
    async def main():
        engine = AsyncLLM.from_engine_args(AsyncEngineArgs(model=model, runner="pooling",
                                                           kv_cache_memory_bytes=64 << 20))
        await engine.check_health()
        outputs = [o async for o in engine.encode("Once upon a time",
                                                  PoolingParams(task="embed"), "r1")]
        assert len(outputs) == 1 and outputs[0].request_id == "r1"
        assert len(outputs[0].outputs.embedding) > 0
        with pytest.raises(ValueError):
            [o async for o in engine.encode("x", PoolingParams(task="classify"), "r2")]
        engine.shutdown()
        with pytest.raises(EngineDeadError):
            await engine.check_health()

    asyncio.run(main())
