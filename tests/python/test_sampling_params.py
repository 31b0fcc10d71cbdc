"""SamplingParams: vLLM's fields, defaults and validation messages, and what each does to the
outputs (stop strings, n, logprobs, max_tokens), as the sampling-parameter examples use them."""

import math

import pytest


def test_defaults_are_vllms():
    from vllm_cpp import RequestOutputKind, SamplingParams

    params = SamplingParams()
    assert (params.n, params.temperature, params.top_p, params.top_k, params.min_p) == (
        1, 1.0, 1.0, 0, 0.0)
    assert (params.presence_penalty, params.frequency_penalty, params.repetition_penalty) == (
        0.0, 0.0, 1.0)
    assert params.max_tokens == 16 and params.min_tokens == 0 and params.seed is None
    assert params.stop == [] and params.stop_token_ids == [] and params.bad_words == []
    assert params.logprobs is None and params.prompt_logprobs is None
    assert params.skip_special_tokens and params.spaces_between_special_tokens
    assert params.detokenize and not params.ignore_eos and not params.include_stop_str_in_output
    assert params.output_kind == RequestOutputKind.CUMULATIVE
    assert SamplingParams(stop="\n").stop == ["\n"]
    greedy = SamplingParams(temperature=0, top_p=0.5, top_k=3)
    assert (greedy.top_p, greedy.top_k) == (1.0, 0)


@pytest.mark.parametrize("kwargs, message", [
    ({"n": 0}, "n must be at least 1, got 0."),
    ({"temperature": -1}, "temperature must be non-negative, got -1.0."),
    ({"top_p": 0}, "top_p must be in (0, 1], got 0.0."),
    ({"top_k": -2}, "top_k must be 0 (disable), or at least 1, got -2."),
    ({"min_p": 1.5}, "min_p must be in [0, 1], got 1.5."),
    ({"presence_penalty": 3}, "presence_penalty must be in [-2, 2], got 3.0."),
    ({"repetition_penalty": 0}, "repetition_penalty must be greater than zero, got 0.0."),
    ({"max_tokens": 0}, "max_tokens must be at least 1, got 0."),
    ({"min_tokens": 5, "max_tokens": 3},
     "min_tokens must be less than or equal to max_tokens=3, got 5."),
    ({"stop": ["a", ""]}, "stop cannot contain an empty string."),
])
def test_validation_errors_are_vllms(kwargs, message):
    from vllm_cpp import SamplingParams

    with pytest.raises(ValueError) as error:
        SamplingParams(**kwargs)
    assert str(error.value) == message


@pytest.mark.parametrize("kwargs", [{"detokenize": False}, {"logits_processors": [print]},
                                    {"best_of": 3}])
def test_unimplemented_fields_refuse_non_defaults(kwargs):
    from vllm_cpp import SamplingParams

    with pytest.raises(NotImplementedError, match="not supported by vllm-cpp"):
        SamplingParams(**kwargs)


def test_fields_are_vllms_in_vllms_order():
    from dataclasses import fields

    from vllm_cpp import SamplingParams

    assert [f.name for f in fields(SamplingParams)] == [
        "n", "best_of", "presence_penalty", "frequency_penalty", "repetition_penalty",
        "temperature", "top_p", "top_k", "min_p", "seed", "stop", "stop_token_ids", "ignore_eos",
        "max_tokens", "min_tokens", "logprobs", "prompt_logprobs", "detokenize",
        "skip_special_tokens", "spaces_between_special_tokens", "logits_processors",
        "include_stop_str_in_output", "truncate_prompt_tokens", "output_kind",
        "structured_outputs", "logit_bias", "allowed_token_ids", "extra_args", "bad_words"]


def test_every_cpp_field_row_is_a_keyword_and_reaches_the_engine():
    from vllm_cpp import SamplingParams, _core

    values = {"n": 2, "presence_penalty": 0.5, "frequency_penalty": 0.5,
              "repetition_penalty": 1.5, "temperature": 0.5, "top_p": 0.5, "top_k": 3,
              "min_p": 0.25, "seed": 9, "stop": ["x"], "stop_token_ids": [4],
              "ignore_eos": True, "max_tokens": 7, "min_tokens": 2, "logprobs": 1,
              "prompt_logprobs": 1, "skip_special_tokens": False,
              "spaces_between_special_tokens": False, "include_stop_str_in_output": True,
              "truncate_prompt_tokens": 5, "allowed_token_ids": [1, 2], "bad_words": ["b"]}
    assert set(_core.SAMPLING_FIELD_NAMES) == set(values)
    params = SamplingParams(**values)
    core = params._to_core()
    for name, value in values.items():
        assert getattr(params, name) == value, name
        assert getattr(core, name) == value, name


def test_add_request_validates_params_changed_after_construction(llm):
    from vllm_cpp import SamplingParams

    params = SamplingParams(max_tokens=2)
    params.top_p = 0.0  # vLLM checks at construction; the engine checks what it is given
    with pytest.raises(ValueError, match=r"^top_p must be in \(0, 1\], got 0.0.$"):
        llm.generate("Once", params, use_tqdm=False)


def test_unknown_field_is_a_type_error():
    from vllm_cpp import SamplingParams

    with pytest.raises(TypeError):
        SamplingParams(temprature=0.5)


def test_max_tokens_and_n(llm):
    from vllm_cpp import SamplingParams

    output = llm.generate("Once upon a time", SamplingParams(n=3, temperature=1.0, seed=3,
                                                             max_tokens=5, ignore_eos=True),
                          use_tqdm=False)[0]
    assert [c.index for c in output.outputs] == [0, 1, 2]
    for completion in output.outputs:
        assert len(completion.token_ids) == 5 and completion.finish_reason == "length"
    assert len({tuple(c.token_ids) for c in output.outputs}) > 1  # three different samples


def test_stop_string(llm):
    from vllm_cpp import SamplingParams

    completion = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=40,
                                                                 stop=["."]),
                              use_tqdm=False)[0].outputs[0]
    assert completion.text == ", there was a little girl named Lily"
    assert completion.finish_reason == "stop" and completion.stop_reason == "."
    with_stop = llm.generate("Once upon a time", SamplingParams(
        temperature=0, max_tokens=40, stop=["."], include_stop_str_in_output=True),
        use_tqdm=False)[0].outputs[0]
    assert with_stop.text == ", there was a little girl named Lily."


def test_logprobs(llm):
    from vllm_cpp import Logprob, SamplingParams

    output = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=8,
                                                             logprobs=3, prompt_logprobs=2),
                          use_tqdm=False)[0]
    completion = output.outputs[0]
    assert len(completion.logprobs) == len(completion.token_ids) == 8
    total = 0.0
    for token_id, position in zip(completion.token_ids, completion.logprobs):
        assert token_id in position and 3 <= len(position) <= 4
        assert all(isinstance(entry, Logprob) for entry in position.values())
        assert position[token_id].rank == 1  # greedy picks the most likely token
        assert isinstance(position[token_id].decoded_token, str)
        total += position[token_id].logprob
    assert math.isclose(completion.cumulative_logprob, total, rel_tol=1e-4)
    assert output.prompt_logprobs[0] is None  # nothing predicts the first prompt token
    assert len(output.prompt_logprobs) == len(output.prompt_token_ids)
    assert all(len(p) >= 2 for p in output.prompt_logprobs[1:])


def test_default_sampling_params(llm):
    from vllm_cpp import SamplingParams

    defaults = llm.get_default_sampling_params()
    assert isinstance(defaults, SamplingParams) and defaults.max_tokens == 16
    outputs = llm.generate(["Once upon a time"], use_tqdm=False)  # sampling_params=None
    assert len(outputs[0].outputs[0].token_ids) <= 16


def test_one_params_per_prompt(llm):
    from vllm_cpp import SamplingParams

    outputs = llm.generate(["Once upon a time", "One day"],
                           [SamplingParams(temperature=0, max_tokens=3),
                            SamplingParams(temperature=0, max_tokens=6)], use_tqdm=False)
    assert [len(o.outputs[0].token_ids) for o in outputs] == [3, 6]
    with pytest.raises(ValueError, match="The lengths of prompts and sampling_params must be"):
        llm.generate(["a", "b"], [SamplingParams()], use_tqdm=False)


def test_structured_outputs(llm):
    import re

    from vllm_cpp import SamplingParams, StructuredOutputsParams

    choice = SamplingParams(temperature=0, max_tokens=10,
                            structured_outputs=StructuredOutputsParams(choice=["cat", "dog"]))
    assert llm.generate("Once upon a time", choice, use_tqdm=False)[0].outputs[0].text in (
        "cat", "dog")
    digits = SamplingParams(temperature=0, max_tokens=10,
                            structured_outputs=StructuredOutputsParams(regex="[0-9]{3}"))
    completion = llm.generate("Once upon a time", digits, use_tqdm=False)[0].outputs[0]
    assert re.fullmatch("[0-9]{3}", completion.text) and completion.finish_reason == "stop"
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    as_json = SamplingParams(max_tokens=4, structured_outputs=StructuredOutputsParams(json=schema))
    assert llm.generate("Once", as_json, use_tqdm=False)[0].outputs[0].text.startswith("{")
    with pytest.raises(ValueError, match="only use one kind"):
        SamplingParams(structured_outputs=StructuredOutputsParams(regex="a+", choice=["a"]))
    # As vLLM's: the params themselves refuse two constraints, and unknown fields.
    with pytest.raises(ValueError, match="only use one kind"):
        StructuredOutputsParams(json=schema, json_object=False)
    with pytest.raises(TypeError):
        StructuredOutputsParams(regex="a", schema=schema)
    with pytest.raises(ValueError, match="cannot be combined"):
        SamplingParams(structured_outputs=StructuredOutputsParams(
            json=schema, whitespace_pattern=" ?", disable_any_whitespace=True))
    # whitespace_pattern: exactly one space between JSON's tokens.
    one_key = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    spaced = SamplingParams(
        temperature=0, max_tokens=30,
        structured_outputs=StructuredOutputsParams(json=one_key, whitespace_pattern=" "))
    assert llm.generate("Once", spaced, use_tqdm=False)[0].outputs[0].text.startswith('{ "n" : ')


def test_generation_config_and_logprobs_mode(model, tmp_path):
    from vllm_cpp import LLM, SamplingParams

    overridden = LLM(model=model, override_generation_config={"temperature": 0.0,
                                                              "max_new_tokens": 5})
    defaults = overridden.get_default_sampling_params()
    assert defaults.temperature == 0.0 and defaults.max_tokens == 5
    (tmp_path / "generation_config.json").write_text('{"top_k": 7}')
    from_dir = LLM(model=model, generation_config=str(tmp_path))
    assert from_dir.get_default_sampling_params().top_k == 7
    with pytest.raises(Exception, match="--generation-config .*: not auto, vllm or a directory"):
        LLM(model=model, generation_config=str(tmp_path / "missing"))
    # raw_logits: the values are the model's logits; the greedy token's is above 0 here, which
    # no log-probability is.
    raw = LLM(model=model, logprobs_mode="raw_logits")
    output = raw.generate(["Once upon a time"],
                          SamplingParams(temperature=0, max_tokens=1, logprobs=1),
                          use_tqdm=False)[0].outputs[0]
    assert output.logprobs[0][output.token_ids[0]].logprob > 0
