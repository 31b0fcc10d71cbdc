"""LLM(enable_prompt_embeds=True).generate({"prompt_embeds": ...}) as vLLM takes it: the rows of
the model's token_embd table for a prompt's own tokens generate what the token ids do."""

import struct

import pytest

_SCALAR_BYTES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def token_embeddings(path, token_ids):
    """The rows of the GGUF's F32 token_embd.weight for token_ids: [len(token_ids)][hidden]."""
    data = open(path, "rb").read()
    at = 8

    def unpack(fmt):
        nonlocal at
        values = struct.unpack_from("<" + fmt, data, at)
        at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def string():
        nonlocal at
        size = unpack("Q")
        at += size
        return data[at - size:at].decode()

    def skip(value_type):
        nonlocal at
        if value_type == 8:
            string()
        elif value_type == 9:
            item_type, count = unpack("I"), unpack("Q")
            for _ in range(count):
                skip(item_type)
        else:
            at += _SCALAR_BYTES[value_type]

    num_tensors, num_keys = unpack("Q"), unpack("Q")
    alignment = 32
    for _ in range(num_keys):
        key, value_type = string(), unpack("I")
        if key == "general.alignment":
            alignment = unpack("I")
        else:
            skip(value_type)
    tensors = {}
    for _ in range(num_tensors):
        name = string()
        dims = [unpack("Q") for _ in range(unpack("I"))]
        tensors[name] = (dims, unpack("I"), unpack("Q"))
    dims, ggml_type, offset = tensors["token_embd.weight"]
    assert ggml_type == 0  # F32
    start = (at + alignment - 1) // alignment * alignment + offset
    hidden = dims[0]
    return [list(struct.unpack_from(f"<{hidden}f", data, start + 4 * hidden * token_id))
            for token_id in token_ids]


@pytest.fixture(scope="module")
def embeds_llm(model):
    from vllm_cpp import LLM

    return LLM(model=model, enable_prompt_embeds=True)


def test_own_token_embeddings_generate_as_the_token_ids(model, embeds_llm):
    from vllm_cpp import SamplingParams

    ids = embeds_llm.get_tokenizer().encode("Once upon a time")
    rows = token_embeddings(model, ids)
    params = SamplingParams(temperature=0, max_tokens=20, logprobs=2)
    by_ids, by_rows, batched = embeds_llm.generate(
        [{"prompt_token_ids": ids}, {"prompt_embeds": rows}, {"prompt_embeds": [rows]}], params,
        use_tqdm=False)
    for output in (by_rows, batched):
        completion = output.outputs[0]
        assert completion.token_ids == by_ids.outputs[0].token_ids
        assert completion.logprobs == by_ids.outputs[0].logprobs
        assert completion.text.startswith(", there was a little girl named Lily")
        assert output.prompt_token_ids == [0] * len(ids)  # vLLM's placeholders


    class ArrayLike:  # as a numpy array or a torch tensor gives its values
        def tolist(self):
            return rows

    array = embeds_llm.generate({"prompt_embeds": ArrayLike()}, params, use_tqdm=False)[0]
    assert array.outputs[0].token_ids == by_ids.outputs[0].token_ids


def test_refusals(model, llm, embeds_llm):
    from vllm_cpp import SamplingParams

    params = SamplingParams(temperature=0, max_tokens=4)
    rows = token_embeddings(model, [1, 403])
    with pytest.raises(ValueError, match="You must set `--enable-prompt-embeds`"):
        llm.generate({"prompt_embeds": rows}, params, use_tqdm=False)
    with pytest.raises(ValueError, match="hidden size 3, but the model's hidden_size is 64"):
        embeds_llm.generate({"prompt_embeds": [[0.5, 0.5, 0.5]]}, params, use_tqdm=False)
    with pytest.raises(ValueError, match=r"must be of shape \(seq_len, hidden_size\)"):
        embeds_llm.generate({"prompt_embeds": [0.5, 0.5]}, params, use_tqdm=False)
    with pytest.raises(ValueError, match="invalid torch.save file"):
        embeds_llm.generate({"prompt_embeds": b"not a zip"}, params, use_tqdm=False)


def test_async_generate_takes_prompt_embeds(model, embeds_llm):
    """AsyncLLMEngine.generate({"prompt_embeds": ...}) streams what LLM.generate gives, with
    vLLM's placeholder prompt ids; an engine without enable_prompt_embeds refuses it."""
    import asyncio

    from vllm_cpp import AsyncEngineArgs, AsyncLLMEngine, RequestOutputKind, SamplingParams

    ids = embeds_llm.get_tokenizer().encode("Once upon a time")
    rows = token_embeddings(model, ids)
    params = SamplingParams(temperature=0, max_tokens=12, output_kind=RequestOutputKind.DELTA)
    offline = embeds_llm.generate({"prompt_embeds": rows}, params, use_tqdm=False)[0]

    async def stream(engine, prompt, request_id):
        return [output async for output in engine.generate(prompt, params, request_id)]

    engine = AsyncLLMEngine.from_engine_args(
        AsyncEngineArgs(model=model, enable_prompt_embeds=True))
    try:
        deltas = asyncio.run(stream(engine, {"prompt_embeds": rows}, "embeds-0"))
        assert len(deltas) > 1 and deltas[-1].finished
        assert sum((o.outputs[0].token_ids for o in deltas), []) == offline.outputs[0].token_ids
        assert "".join(o.outputs[0].text for o in deltas) == offline.outputs[0].text
        assert deltas[0].prompt is None
        assert deltas[0].prompt_token_ids == [0] * len(ids)
        with pytest.raises(ValueError, match="invalid torch.save file"):
            asyncio.run(stream(engine, {"prompt_embeds": b"not a zip"}, "embeds-1"))
    finally:
        engine.shutdown()
    plain = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(model=model))
    try:
        with pytest.raises(ValueError, match="You must set `--enable-prompt-embeds`"):
            asyncio.run(stream(plain, {"prompt_embeds": rows}, "embeds-2"))
    finally:
        plain.shutdown()


def test_repetition_penalty_sees_the_placeholder_ids(model):
    """As vLLM's V1 sampler, whose prompt ids for penalties are the request's token row (zeros
    for an embeddings prompt): repetition_penalty weighs token 0, not the tokens the rows came
    from."""
    from vllm_cpp import LLM, SamplingParams

    llm = LLM(model=model, enable_prompt_embeds=True, logprobs_mode="processed_logits",
              max_logprobs=-1)
    ids = llm.get_tokenizer().encode("Once upon a time")
    rows = token_embeddings(model, ids)

    def first_logits(penalty):
        params = SamplingParams(temperature=0, max_tokens=1, logprobs=-1,
                                repetition_penalty=penalty)
        output = llm.generate({"prompt_embeds": rows}, params, use_tqdm=False)[0]
        return {token: entry.logprob for token, entry in output.outputs[0].logprobs[0].items()}

    plain, penalized = first_logits(1.0), first_logits(2.0)
    assert plain[0] < 0 and penalized[0] == pytest.approx(2 * plain[0])
    assert 0 not in ids
    assert [penalized[token] for token in ids] == [plain[token] for token in ids]
