"""LoRA adapters through vLLM's Python API: LLM(enable_lora=True).generate with one LoRARequest
for all prompts or one per prompt, LLMEngine.add_request / add_lora / remove_lora / list_loras,
AsyncLLM.generate, against llama.cpp's greedy outputs of the shared LoRA oracle."""

import asyncio
import json

import pytest

from conftest import SHARED

ORACLE = SHARED / "oracles" / "lora"


def expected_prefixes(name):
    cases = json.loads((ORACLE / "greedy" / f"{name}.json").read_text())["cases"]
    return [(case["prompt"], case["expected_prefix"]) for case in cases]


@pytest.fixture(scope="module")
def lora_llm():
    if not (ORACLE / "base.gguf").exists():
        pytest.skip(f"LoRA oracle not found: {ORACLE}")
    from vllm_cpp import LLM

    return LLM(model=str(ORACLE / "base.gguf"), enable_lora=True, max_loras=2, max_lora_rank=16,
               kv_cache_memory_bytes=64 << 20)


def adapters():
    from vllm_cpp.lora.request import LoRARequest

    return (LoRARequest("sql", 1, str(ORACLE / "sql.gguf")),
            LoRARequest("poet", 2, str(ORACLE / "poet-peft")))


def test_one_adapter_per_prompt_mixed_in_one_batch_matches_llama_cpp(lora_llm):
    from vllm_cpp import SamplingParams

    sql, poet = adapters()
    cases = [(None, case) for case in expected_prefixes("base")]
    cases += [(sql, case) for case in expected_prefixes("sql")]
    cases += [(poet, case) for case in expected_prefixes("poet")]
    outputs = lora_llm.generate([prompt for _, (prompt, _) in cases],
                                SamplingParams(temperature=0, max_tokens=64),
                                lora_request=[adapter for adapter, _ in cases], use_tqdm=False)
    for (adapter, (prompt, prefix)), output in zip(cases, outputs):
        assert output.outputs[0].text.startswith(prefix), (adapter, prompt)
        assert output.lora_request == adapter


def test_one_adapter_for_every_prompt_and_chat(lora_llm, chat_template):
    from vllm_cpp import SamplingParams

    sql, _ = adapters()
    cases = expected_prefixes("sql")
    greedy = SamplingParams(temperature=0, max_tokens=64)
    outputs = lora_llm.generate([prompt for prompt, _ in cases], greedy, lora_request=sql,
                                use_tqdm=False)
    assert all(o.outputs[0].text.startswith(prefix) for o, (_, prefix) in zip(outputs, cases))
    with pytest.raises(ValueError, match="lengths of prompts and lora_request"):
        lora_llm.generate(["a", "b"], lora_request=[sql], use_tqdm=False)
    # chat renders the conversation, then generates with the adapter as generate() does.
    messages = [{"role": "user", "content": "Hi"}]
    chat = lora_llm.chat(messages, greedy, lora_request=sql, chat_template=chat_template,
                         use_tqdm=False)[0]
    prompt = lora_llm.preprocess_chat(messages, chat_template=chat_template)[0]
    assert chat.lora_request == sql
    assert chat.outputs[0].text == lora_llm.generate(prompt, greedy, lora_request=sql,
                                                     use_tqdm=False)[0].outputs[0].text
    assert chat.outputs[0].text != lora_llm.generate(prompt, greedy,
                                                     use_tqdm=False)[0].outputs[0].text


def test_llm_engine_add_request_and_adapter_cache(lora_llm):
    from vllm_cpp import SamplingParams
    from vllm_cpp.lora.request import LoRARequest

    engine = lora_llm.llm_engine
    sql, poet = adapters()
    assert engine.add_lora(poet)
    assert 2 in engine.list_loras()
    (prompt, prefix), = expected_prefixes("poet")[:1]
    engine.add_request("poet-0", prompt, SamplingParams(temperature=0, max_tokens=64),
                       lora_request=poet)
    final = None
    while engine.has_unfinished_requests():
        for output in engine.step():
            if output.finished:
                final = output
    assert final.outputs[0].text.startswith(prefix)
    assert final.lora_request == poet
    assert engine.remove_lora(2)
    assert 2 not in engine.list_loras()
    with pytest.raises(ValueError, match="No adapter found"):
        engine.add_lora(LoRARequest("missing", 9, str(ORACLE / "missing.gguf")))


def test_lora_request_checks_its_fields():
    from vllm_cpp.lora.request import LoRARequest

    with pytest.raises(ValueError, match="id must be > 0, got 0"):
        LoRARequest("a", 0, "/p")
    with pytest.raises(ValueError, match="lora_path cannot be empty"):
        LoRARequest("a", 1)
    assert LoRARequest("a", 1, "/p") == LoRARequest("a", 2, "/q")  # as vLLM: by name
    assert LoRARequest("a", 1, lora_local_path="/p").lora_path == "/p"


def test_lora_request_without_enable_lora_is_refused(llm):
    from vllm_cpp.lora.request import LoRARequest

    with pytest.raises(ValueError, match="LoRA is not enabled"):
        llm.generate("Once", lora_request=LoRARequest("sql", 1, str(ORACLE / "sql.gguf")),
                     use_tqdm=False)


def test_async_llm_generates_with_an_adapter():
    if not (ORACLE / "base.gguf").exists():
        pytest.skip(f"LoRA oracle not found: {ORACLE}")
    from vllm_cpp import AsyncEngineArgs, AsyncLLM, SamplingParams

    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(
        model=str(ORACLE / "base.gguf"), enable_lora=True, max_loras=2,
        kv_cache_memory_bytes=64 << 20))
    sql, poet = adapters()

    async def run(adapter, prompt, request_id):
        params = SamplingParams(temperature=0, max_tokens=64)
        return [o async for o in engine.generate(prompt, params, request_id,
                                                 lora_request=adapter)][-1]

    async def main():
        assert await engine.add_lora(poet)
        assert await engine.list_loras() == {2}
        jobs = [run(sql, *expected_prefixes("sql")[0][:1], "a-sql"),
                run(poet, *expected_prefixes("poet")[0][:1], "a-poet"),
                run(None, *expected_prefixes("base")[0][:1], "a-base")]
        return await asyncio.gather(*jobs)

    try:
        results = asyncio.run(main())
    finally:
        engine.shutdown()
    for name, result in zip(("sql", "poet", "base"), results):
        assert result.outputs[0].text.startswith(expected_prefixes(name)[0][1]), name
    assert results[0].lora_request == sql
