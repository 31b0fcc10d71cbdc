"""llm.llm_engine / LLMEngine: vLLM's add_request / step / abort_request loop."""

import pytest


def test_step_loop_matches_generate(llm):
    from vllm_cpp import SamplingParams

    engine = llm.llm_engine
    params = SamplingParams(temperature=0, max_tokens=20)
    engine.add_request("a", "Once upon a time", params)
    engine.add_request("b", {"prompt_token_ids": [1, 403, 407]}, params)
    seen = {"a": [], "b": []}
    while engine.has_unfinished_requests():
        for output in engine.step():
            seen[output.request_id].append(output)
    for request_id, prompt in (("a", "Once upon a time"),
                               ("b", {"prompt_token_ids": [1, 403, 407]})):
        outputs = seen[request_id]
        assert outputs[-1].finished and not any(o.finished for o in outputs[:-1])
        lengths = [len(o.outputs[0].token_ids) for o in outputs]
        assert lengths == sorted(lengths) and lengths[-1] == 20  # cumulative outputs grow
        expected = llm.generate(prompt, params, use_tqdm=False)[0]
        assert outputs[-1].outputs[0].token_ids == expected.outputs[0].token_ids
        assert outputs[-1].outputs[0].text == expected.outputs[0].text
    assert seen["a"][-1].prompt == "Once upon a time" and seen["b"][-1].prompt is None


def test_abort_request(llm):
    from vllm_cpp import SamplingParams

    engine = llm.llm_engine
    engine.add_request("x", "Once upon a time", SamplingParams(max_tokens=100, ignore_eos=True))
    engine.step()
    aborted = engine.abort_request(["x"])
    assert [o.outputs[0].finish_reason for o in aborted] == ["abort"]
    assert not engine.has_unfinished_requests()


def test_from_engine_args_and_refusals(model):
    from vllm_cpp import EngineArgs, LLMEngine, SamplingParams

    engine = LLMEngine.from_engine_args(EngineArgs(model=model, max_model_len=64))
    assert engine.max_model_len == 64
    with pytest.raises(ValueError):
        engine.add_request("long", {"prompt_token_ids": [1] * 100}, SamplingParams())
    with pytest.raises(ValueError):
        engine.add_request("oov", {"prompt_token_ids": [1, 100000]}, SamplingParams())
    with pytest.raises(TypeError):
        engine.add_request("p", "hi", {"temperature": 0})
    assert not engine.has_unfinished_requests()
    engine.add_request("ok", "Once", SamplingParams(max_tokens=2, temperature=0))
    engine.add_request("ok2", "Once", SamplingParams(max_tokens=2, temperature=0))
    with pytest.raises(ValueError):
        engine.add_request("ok", "Once", SamplingParams())  # duplicate id
    while engine.has_unfinished_requests():
        engine.step()
