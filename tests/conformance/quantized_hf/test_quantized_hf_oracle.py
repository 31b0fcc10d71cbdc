"""The quantized Hugging Face checkpoints of ../shared/oracles/quantized_hf through the Python API,
against llama.cpp's greedy token ids on the same weights dequantized to F32.

For each format (GPTQ, AWQ, FP8, compressed-tensors), vllm_cpp.LLM loads the generated checkpoint
directory and continues each of the oracle's 6 prompts (given as token ids: the checkpoint's
tokenizer and llama.cpp's vocabulary differ) greedily for 32 tokens; the first `n` ids must equal
the oracle's. The same runs on each checkpoint dequantized to F32 by dequantize.py check the
oracle's reading of the formats and the engine's F32 path: a format whose quantized run fails while
its dequantized one passes points at that format's loader.

Run by CTest (quantized_hf_oracle) with PYTHONPATH holding the build tree's package and this
directory, and QUANTIZED_HF_OUT naming where the checkpoints are written (once; reused while their
sha256s match).
"""
import os
import pathlib

import pytest

from dequantize import dequantize_checkpoint
from oracle_models import DEFAULT_SHARED, ensure_models, load_oracle

SHARED = pathlib.Path(os.environ.get("VLLM_SHARED_DIR", DEFAULT_SHARED))
OUT = pathlib.Path(os.environ.get("QUANTIZED_HF_OUT", pathlib.Path.cwd() / "quantized_hf_oracle"))
MAX_TOKENS = 32
FORMATS = sorted(load_oracle(SHARED)["formats"])


@pytest.fixture(scope="session")
def oracle():
    return ensure_models(OUT, SHARED)


def first_divergence(got, expected, n):
    """The first step below n where got differs from expected (a missing id counts), or None."""
    for step in range(n):
        if step >= len(got) or got[step] != expected[step]:
            return step
    return None


def check_greedy_ids(checkpoint, fmt, cases):
    """Asserts that greedy continuations of the prompts from checkpoint start with the oracle's
    first n ids, naming every prompt that does not and its first divergence."""
    from vllm_cpp import LLM, SamplingParams

    # The prompts and their 32 tokens fit 64 positions: a small KV cache.
    llm = LLM(model=str(checkpoint), max_model_len=64)
    prompts = [{"prompt_token_ids": case["prompt_token_ids"]} for case in cases]
    outputs = llm.generate(prompts, SamplingParams(temperature=0, max_tokens=MAX_TOKENS),
                           use_tqdm=False)
    report = []
    for index, (case, output) in enumerate(zip(cases, outputs)):
        got, expected, n = list(output.outputs[0].token_ids), case["ids"], case["n"]
        step = first_divergence(got, expected, n)
        if step is not None:
            got_id = got[step] if step < len(got) else "no token"
            report.append(f"prompt {index} {case['prompt_token_ids']}: first divergence at step "
                          f"{step} of n={n}: got {got_id}, the oracle's {expected[step]}\n"
                          f"    got    {got[:n]}\n    oracle {expected[:n]}")
    matched = len(cases) - len(report)
    print(f"{checkpoint}: {matched}/{len(cases)} prompts match the oracle")
    assert not report, (f"{fmt}: {matched}/{len(cases)} prompts match the oracle\n" +
                        "\n".join(report))


@pytest.mark.parametrize("fmt", FORMATS)
def test_quantized_checkpoint_matches_the_oracle(oracle, fmt):
    check_greedy_ids(OUT / fmt, fmt, oracle["formats"][fmt])


@pytest.mark.parametrize("fmt", FORMATS)
def test_dequantized_checkpoint_matches_the_oracle(oracle, fmt):
    dequantized = OUT / "dequantized" / fmt
    dequantize_checkpoint(OUT / fmt, dequantized)
    check_greedy_ids(dequantized, fmt, oracle["formats"][fmt])
