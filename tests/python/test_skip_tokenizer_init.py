"""LLM(skip_tokenizer_init=True) and LLM(tokenizer_mode=...) as vLLM takes them: no tokenizer
loads, so prompts are {"prompt_token_ids": [...]} and outputs have token ids with empty text."""

import pytest


def test_token_ids_in_and_out(model, llm):
    from vllm_cpp import LLM, SamplingParams

    skipping = LLM(model=model, skip_tokenizer_init=True)
    params = SamplingParams(temperature=0, max_tokens=6)
    with pytest.raises(ValueError, match="cannot pass text prompts when"):
        skipping.generate("Once upon a time", params, use_tqdm=False)
    with pytest.raises(ValueError, match="skip_tokenizer_init is True"):
        skipping.get_tokenizer()
    prompt = {"prompt_token_ids": [1, 400, 300, 200]}
    output = skipping.generate(prompt, params, use_tqdm=False)[0]
    completion = output.outputs[0]
    assert completion.text == ""
    assert len(completion.token_ids) == 6  # no tokenizer, so no EOS: it runs to max_tokens
    assert output.prompt_token_ids == [1, 400, 300, 200]
    # The same ids as with the tokenizer, up to where that one stops at EOS.
    expected = llm.generate(prompt, params, use_tqdm=False)[0].outputs[0].token_ids
    assert list(completion.token_ids[:len(expected)]) == list(expected)
    with pytest.raises(ValueError, match="stop strings need a tokenizer"):
        skipping.generate(prompt, SamplingParams(max_tokens=2, stop=["."]), use_tqdm=False)


def test_tokenizer_modes(model):
    from vllm_cpp import LLM

    assert LLM(model=model, tokenizer_mode="slow").get_tokenizer().encode("Once") != []
    # Engine start errors are RuntimeErrors here.
    with pytest.raises(RuntimeError, match="custom"):
        LLM(model=model, tokenizer_mode="custom")
    # A GGUF file's vocabulary is no tekken.json.
    with pytest.raises(RuntimeError, match="tekken.json"):
        LLM(model=model, tokenizer_mode="mistral")
