"""LoRA adapters beyond generate(), as vLLM takes them: LLM.beam_search(..., lora_request=) (one
LoRARequest or a list of one per prompt), and LLM.embed / encode / score and AsyncLLM.encode with
an adapter on a decoder run as a pooling model, on the shared LoRA oracle's base and adapters."""

import asyncio
import json
import math

import pytest

from conftest import SHARED

ORACLE = SHARED / "oracles" / "lora"


def oracle_prompts(name):
    return [case["prompt"]
            for case in json.loads((ORACLE / "greedy" / f"{name}.json").read_text())["cases"]]


def adapters():
    from vllm_cpp.lora.request import LoRARequest

    return (LoRARequest("sql", 1, str(ORACLE / "sql.gguf")),
            LoRARequest("poet", 2, str(ORACLE / "poet-peft")))


@pytest.fixture(scope="module")
def generator():
    if not (ORACLE / "base.gguf").exists():
        pytest.skip(f"LoRA oracle not found: {ORACLE}")
    from vllm_cpp import LLM

    return LLM(model=str(ORACLE / "base.gguf"), enable_lora=True, max_loras=2,
               kv_cache_memory_bytes=64 << 20)


@pytest.fixture(scope="module")
def pooler():
    if not (ORACLE / "base.gguf").exists():
        pytest.skip(f"LoRA oracle not found: {ORACLE}")
    from vllm_cpp import LLM

    return LLM(model=str(ORACLE / "base.gguf"), runner="pooling", enable_lora=True, max_loras=2,
               kv_cache_memory_bytes=64 << 20)


def test_beam_search_of_width_one_with_an_adapter_is_its_greedy_output(generator):
    from vllm_cpp import BeamSearchParams, SamplingParams

    sql, poet = adapters()
    prompts = oracle_prompts("sql")[:2] + oracle_prompts("poet")[:2]
    params = BeamSearchParams(beam_width=1, max_tokens=16, ignore_eos=True)
    greedy = SamplingParams(temperature=0, max_tokens=16, ignore_eos=True)
    per_prompt = [sql, sql, poet, None]
    beams = generator.beam_search(prompts, params, lora_request=per_prompt)
    expected = generator.generate(prompts, greedy, lora_request=per_prompt, use_tqdm=False)
    for beam, output in zip(beams, expected):
        assert beam.sequences[0].tokens[len(output.prompt_token_ids):] == \
            output.outputs[0].token_ids
    # One adapter for every prompt; it changes the beams the base gives.
    with_sql = generator.beam_search(prompts[:2], params, lora_request=sql)
    base = generator.beam_search(prompts[:2], params)
    assert [b.sequences[0].tokens for b in with_sql] == [b.sequences[0].tokens for b in beams[:2]]
    assert [b.sequences[0].tokens for b in with_sql] != [b.sequences[0].tokens for b in base]


def test_beam_search_lora_request_checks(generator):
    from vllm_cpp import BeamSearchParams

    sql, _ = adapters()
    params = BeamSearchParams(beam_width=2, max_tokens=2)
    with pytest.raises(ValueError, match="Lora request list should be the same length as the "
                                         "prompts"):
        generator.beam_search(["a", "b"], params, lora_request=[sql])
    with pytest.raises(TypeError, match="Invalid lora_request type"):
        generator.beam_search(["a"], params, lora_request="sql")


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) *
                                                        sum(y * y for y in b))


def test_embed_and_encode_with_adapters_per_prompt(pooler):
    sql, poet = adapters()
    prompts = oracle_prompts("poet")[:3]
    base = [o.outputs.embedding for o in pooler.embed(prompts, use_tqdm=False)]
    with_poet = [o.outputs.embedding for o in pooler.embed(prompts, lora_request=poet,
                                                            use_tqdm=False)]
    mixed = [o.outputs.embedding for o in pooler.embed(prompts, lora_request=[poet, None, sql],
                                                        use_tqdm=False)]
    with_sql = pooler.embed(prompts[2], lora_request=sql, use_tqdm=False)[0].outputs.embedding
    for got, expected in zip(mixed, [with_poet[0], base[1], with_sql]):
        assert got == pytest.approx(expected, abs=1e-5)
    assert all(cosine(a, b) < 0.999 for a, b in zip(with_poet, base))
    # encode: the raw last-token state, embed's before normalization.
    raw = pooler.encode(prompts[0], lora_request=poet, use_tqdm=False)[0].outputs.data
    norm = math.sqrt(sum(x * x for x in raw))
    assert [x / norm for x in raw] == pytest.approx(with_poet[0], abs=1e-5)
    with pytest.raises(ValueError, match="lengths of prompts and lora_request"):
        pooler.embed(prompts, lora_request=[poet], use_tqdm=False)


def test_score_with_an_adapter_is_the_cosine_of_its_embeddings(pooler):
    sql, _ = adapters()
    query, documents = "Once upon a time", ["there was a cat", "SELECT name FROM users"]
    scores = [o.outputs.score
              for o in pooler.score(query, documents, lora_request=sql, use_tqdm=False)]
    embedded = [o.outputs.embedding
                for o in pooler.embed([query] + documents, lora_request=sql, use_tqdm=False)]
    assert scores == pytest.approx([cosine(embedded[0], e) for e in embedded[1:]], abs=1e-5)
    base = [o.outputs.score for o in pooler.score(query, documents, use_tqdm=False)]
    assert scores != pytest.approx(base, abs=1e-4)


def test_async_llm_encode_with_an_adapter(pooler):
    from vllm_cpp import AsyncEngineArgs, AsyncLLM, PoolingParams

    _, poet = adapters()
    prompt = oracle_prompts("poet")[0]
    expected = pooler.encode(prompt, lora_request=poet, use_tqdm=False)[0].outputs.data
    engine = AsyncLLM.from_engine_args(AsyncEngineArgs(
        model=str(ORACLE / "base.gguf"), runner="pooling", enable_lora=True,
        kv_cache_memory_bytes=64 << 20))

    async def main():
        outputs = [o async for o in engine.encode(prompt, PoolingParams(task="encode"), "e-poet",
                                                  lora_request=poet)]
        return outputs[-1].outputs.data

    try:
        data = asyncio.run(main())
    finally:
        engine.shutdown()
    assert data == pytest.approx(expected, abs=1e-5)
