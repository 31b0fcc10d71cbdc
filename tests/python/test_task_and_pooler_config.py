"""vLLM 0.10's deprecated LLM(task=...) mapped onto runner / convert as `--task` is, and
pooler_config replacing the model's pooling, on the stories260K demo model."""

import math

import pytest

from vllm_cpp import LLM, EngineArgs, PoolingParams

PROMPT = "Once upon a time there was a dog"


def test_task_maps_onto_runner_and_convert(model):
    embedder = LLM(model=model, task="embed")
    assert len(embedder.embed(PROMPT)[0].outputs.embedding) == 64
    core = EngineArgs(model=model, runner="pooling", convert="classify", task="generate")._to_core()
    assert (core.runner, core.convert) == ("generate", "auto")
    core = EngineArgs(model=model, task="score")._to_core()
    assert (core.runner, core.convert) == ("pooling", "auto")
    with pytest.raises(ValueError, match="reward models"):
        EngineArgs(model=model, task="reward")._to_core()
    with pytest.raises(ValueError, match="not one of vLLM's tasks"):
        EngineArgs(model=model, task="chat")._to_core()


def test_pooler_config_replaces_the_models_pooling(model):
    last = LLM(model=model, runner="pooling", convert="embed").embed(PROMPT)[0]
    mean = LLM(model=model, runner="pooling", convert="embed",
               pooler_config={"pooling_type": "MEAN", "normalize": False}).embed(PROMPT)[0]
    assert mean.outputs.embedding != last.outputs.embedding
    assert abs(math.hypot(*mean.outputs.embedding) - 1.0) > 1e-3  # not normalized by default
    older_name = LLM(model=model, runner="pooling", convert="embed",
                     override_pooler_config={"pooling_type": "MEAN", "normalize": False})
    assert older_name.embed(PROMPT)[0].outputs.embedding == mean.outputs.embedding
    normalized = older_name.embed(PROMPT, pooling_params=PoolingParams(normalize=True))[0]
    assert math.hypot(*normalized.outputs.embedding) == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(Exception, match="step_tag_id is not supported"):
        LLM(model=model, runner="pooling", pooler_config={"step_tag_id": 3})
