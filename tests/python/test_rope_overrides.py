"""LLM(hf_overrides=..., rope_scaling=..., rope_theta=...) as vLLM takes them: config.json keys (a
GGUF file's metadata twins) replaced before the model is built."""

import pytest


def _first_logprobs(llm):
    from vllm_cpp import SamplingParams

    params = SamplingParams(temperature=0, max_tokens=4, logprobs=1)
    output = llm.generate("Once upon a time there was", params, use_tqdm=False)[0].outputs[0]
    return [next(iter(step.values())).logprob for step in output.logprobs]


def test_overrides_reach_the_model(model, llm):
    from vllm_cpp import LLM

    scaled = LLM(model=model, hf_overrides={"max_position_embeddings": 512},
                 rope_scaling={"rope_type": "linear", "factor": 2.0})
    # vLLM's derivation: the context times the linear factor.
    assert scaled.llm_engine.max_model_len == 1024
    assert llm.llm_engine.max_model_len == 2048
    # rope_theta wins over hf_overrides' own, as vLLM folds it in.
    theta = LLM(model=model, hf_overrides={"rope_theta": 10000.0}, rope_theta=100.0)
    assert _first_logprobs(theta) != pytest.approx(_first_logprobs(llm))


def test_what_a_gguf_file_cannot_take_is_refused(model):
    from vllm_cpp import LLM

    with pytest.raises(RuntimeError, match="key 'tie_word_embeddings' has no GGUF metadata twin"):
        LLM(model=model, hf_overrides={"tie_word_embeddings": False})
    with pytest.raises(RuntimeError, match="rope_scaling type 'dynamic' has no GGUF metadata"):
        LLM(model=model, rope_scaling={"rope_type": "dynamic", "factor": 2.0})
