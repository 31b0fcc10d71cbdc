"""The Python API gives what the C++ API gives, token for token: `vllm-cpp generate` (the C++
LLM class) and the Python LLM on the same prompts, greedy and seeded sampling."""

import json
import os
import subprocess

import pytest

PROMPTS = ["Once upon a time", "The dog ran", "Lily and Ben went to the park", "One day"]


def cpp_generate(model, tmp_path, *flags):
    binary = os.environ.get("VLLM_CPP_BINARY")
    if not binary:
        pytest.skip("VLLM_CPP_BINARY is not set (CTest sets it)")
    prompts_file = tmp_path / "prompts.txt"
    prompts_file.write_text("\n".join(PROMPTS) + "\n")
    run = subprocess.run([binary, "generate", model, "--prompts-file", str(prompts_file), *flags],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    return [line["text"] for line in sorted(lines, key=lambda line: line["index"])]


def test_greedy_matches_cpp(llm, model, tmp_path):
    from vllm_cpp import SamplingParams

    expected = cpp_generate(model, tmp_path, "--max-tokens", "40", "--temperature", "0")
    outputs = llm.generate(PROMPTS, SamplingParams(temperature=0, max_tokens=40), use_tqdm=False)
    assert [o.outputs[0].text for o in outputs] == expected
    # The model's known greedy continuation (../shared/DESIGN.md).
    assert outputs[0].outputs[0].text.startswith(", there was a little girl named Lily.")


def test_seeded_sampling_matches_cpp(llm, model, tmp_path):
    from vllm_cpp import SamplingParams

    expected = cpp_generate(model, tmp_path, "--max-tokens", "32", "--temperature", "0.8",
                            "--top-p", "0.95", "--seed", "7")
    params = SamplingParams(temperature=0.8, top_p=0.95, seed=7, max_tokens=32)
    outputs = llm.generate(PROMPTS, params, use_tqdm=False)
    assert [o.outputs[0].text for o in outputs] == expected


def test_token_id_prompts_match_text_prompts(llm):
    from vllm_cpp import SamplingParams, TokensPrompt

    params = SamplingParams(temperature=0, max_tokens=24)
    by_text = llm.generate(PROMPTS, params, use_tqdm=False)
    by_ids = llm.generate([TokensPrompt(prompt_token_ids=o.prompt_token_ids) for o in by_text],
                          params, use_tqdm=False)
    for text_output, ids_output in zip(by_text, by_ids):
        assert ids_output.prompt is None
        assert ids_output.outputs[0].token_ids == text_output.outputs[0].token_ids
    by_dict = llm.generate({"prompt": PROMPTS[0]}, params, use_tqdm=False)
    assert by_dict[0].outputs[0].token_ids == by_text[0].outputs[0].token_ids


def test_batch_invariance(llm):
    from vllm_cpp import SamplingParams

    params = SamplingParams(temperature=0, max_tokens=24)
    alone = [llm.generate(p, params, use_tqdm=False)[0].outputs[0].token_ids for p in PROMPTS]
    together = [o.outputs[0].token_ids for o in llm.generate(PROMPTS * 8, params, use_tqdm=False)]
    assert together == alone * 8
