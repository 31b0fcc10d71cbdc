"""Bad input gets a clear Python error: unknown and unsupported engine arguments, bad model
paths, refused prompts; and Ctrl-C during generate aborts the batch and leaves the LLM usable."""

import os
import signal
import threading

import pytest


def test_unknown_argument_is_a_type_error(model):
    from vllm_cpp import LLM

    with pytest.raises(TypeError, match="unexpected keyword argument 'max_num_seq'"):
        LLM(model=model, max_num_seq=4)


@pytest.mark.parametrize("kwargs, field", [
    ({"tensor_parallel_size": 2}, "tensor_parallel_size"),
    ({"swap_space": 8}, "swap_space"),
])
def test_unsupported_argument_is_not_implemented(model, kwargs, field):
    from vllm_cpp import LLM

    with pytest.raises(NotImplementedError, match=f"{field}=.* is not supported by vllm-cpp"):
        LLM(model=model, **kwargs)


def test_bad_model_paths(tmp_path):
    from vllm_cpp import LLM

    with pytest.raises(RuntimeError, match="is neither a local file or directory nor a Hugging "
                       "Face model id"):
        LLM(model=str(tmp_path / "missing.gguf"))
    not_a_model = tmp_path / "junk.gguf"
    not_a_model.write_bytes(b"not a gguf file at all")
    with pytest.raises(RuntimeError):
        LLM(model=str(not_a_model))


def test_engine_args_reach_the_engine(model):
    from vllm_cpp import LLM, SamplingParams

    llm = LLM(model=model, max_model_len=32, max_num_seqs=2, block_size=32,
              enable_prefix_caching=False, kv_cache_memory_bytes=1 << 22, seed=None)
    assert llm.llm_engine.max_model_len == 32
    with pytest.raises(ValueError):
        llm.generate({"prompt_token_ids": [1] * 40}, SamplingParams(), use_tqdm=False)


def test_quantization_reaches_the_loader(model):
    from vllm_cpp import LLM

    # A vLLM method name is a checkpoint's quantization: a GGUF file refuses it by name.
    with pytest.raises(RuntimeError, match="--quantization gptq names a Hugging Face checkpoint"):
        LLM(model=model, quantization="gptq")
    with pytest.raises(RuntimeError, match=r"unsupported --quantization 'bogus' \(supported: "
                       r"q8_0, q6_k, q4_k .*awq, awq_marlin, gptq, gptq_marlin, fp8, "
                       r"compressed-tensors, bitsandbytes\)"):
        LLM(model=model, quantization="bogus")


def test_quantization_method_meets_the_checkpoint(tmp_path):
    import subprocess

    from conftest import SHARED
    from vllm_cpp import LLM, SamplingParams

    binary = os.environ.get("VLLM_CPP_BINARY")
    if not binary:
        pytest.skip("VLLM_CPP_BINARY is not set (CTest sets it)")
    checkpoint = str(tmp_path / "gptq")
    subprocess.run([binary, "make-random-model", "--shape", "llama-tiny", "--vocab",
                    str(SHARED / "vocab" / "ggml-vocab-llama-spm.gguf"), "--out", checkpoint,
                    "--hf-dir", str(SHARED / "tokenizers" / "llama2"), "--quantization", "gptq"],
                   check=True, capture_output=True)
    llm = LLM(model=checkpoint, quantization="gptq_marlin", kv_cache_memory_bytes=1 << 22)
    outputs = llm.generate({"prompt_token_ids": [1, 2, 3]}, SamplingParams(max_tokens=2),
                           use_tqdm=False)
    assert len(outputs[0].outputs[0].token_ids) == 2
    with pytest.raises(RuntimeError, match=r"model config \(gptq\) does not match .* \(awq\)"):
        LLM(model=checkpoint, quantization="awq")


def test_refused_prompt_aborts_the_batch(llm):
    from vllm_cpp import SamplingParams

    with pytest.raises(ValueError):
        llm.generate(["Once", {"prompt_token_ids": [1, 10**6]}], SamplingParams(), use_tqdm=False)
    assert not llm.llm_engine.has_unfinished_requests()
    with pytest.raises(TypeError):
        llm.generate([42], use_tqdm=False)
    with pytest.raises(NotImplementedError):
        llm.generate({"prompt": "x", "multi_modal_data": {}}, use_tqdm=False)


def test_ctrl_c_aborts_the_batch(llm):
    from vllm_cpp import SamplingParams

    params = SamplingParams(max_tokens=480, ignore_eos=True)  # ~30k tokens: seconds of work
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            llm.generate(["Once upon a time"] * 64, params, use_tqdm=False)
    finally:
        timer.cancel()
    assert not llm.llm_engine.has_unfinished_requests()
    outputs = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=4),
                           use_tqdm=False)
    assert len(outputs[0].outputs[0].token_ids) == 4
