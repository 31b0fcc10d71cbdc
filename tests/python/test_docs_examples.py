"""vLLM's documentation examples (quickstart, sampling parameters, chat), each run as a script
unchanged except for the import line, the model and, for chat, the demo model's chat template
(it has none of its own); then the quickstart's outputs checked in detail."""

import subprocess
import sys
import textwrap

from conftest import CHAT_TEMPLATE


def run_example(tmp_path, source: str) -> subprocess.CompletedProcess:
    path = tmp_path / "example.py"
    path.write_text(textwrap.dedent(source))
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run


def test_quickstart_example(model, tmp_path):
    source = f"""
        from vllm_cpp import LLM, SamplingParams

        prompts = [
            "Hello, my name is",
            "The president of the United States is",
            "The capital of France is",
            "The future of AI is",
        ]
        sampling_params = SamplingParams(temperature=0.8, top_p=0.95)

        llm = LLM(model={model!r})

        outputs = llm.generate(prompts, sampling_params)

        for output in outputs:
            prompt = output.prompt
            generated_text = output.outputs[0].text
            print(f"Prompt: {{prompt!r}}, Generated text: {{generated_text!r}}")
        """
    runs = [run_example(tmp_path, source) for _ in range(2)]
    lines = runs[0].stdout.splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "Prompt: 'Hello", "Prompt: 'The president of the United States is'",
        "Prompt: 'The capital of France is'", "Prompt: 'The future of AI is'"]
    assert all("Generated text: '" in line and not line.endswith("''") for line in lines)
    # LLM's seed (vLLM's default 0) makes the sampled outputs the same on every run.
    assert runs[0].stdout == runs[1].stdout
    assert "Processed prompts: 100%" in runs[0].stderr  # use_tqdm's bar


def test_sampling_parameters_example(model, tmp_path):
    # vLLM's examples/offline_inference/basic/generate.py: the model's defaults, then overrides.
    run = run_example(tmp_path, f"""
        from vllm_cpp import LLM

        llm = LLM(model={model!r})
        sampling_params = llm.get_default_sampling_params()
        sampling_params.max_tokens = 24
        sampling_params.temperature = 0.7
        sampling_params.top_p = 0.9
        sampling_params.top_k = 40

        prompts = [
            "Hello, my name is",
            "The president of the United States is",
            "The capital of France is",
            "The future of AI is",
        ]
        outputs = llm.generate(prompts, sampling_params)

        print("-" * 50)
        for output in outputs:
            prompt = output.prompt
            generated_text = output.outputs[0].text
            print(f"Prompt: {{prompt!r}}\\nGenerated text: {{generated_text!r}}")
            print(len(output.outputs[0].token_ids))
            print("-" * 50)
        """)
    lengths = [int(line) for line in run.stdout.splitlines() if line.isdigit()]
    assert len(lengths) == 4 and all(1 <= n <= 24 for n in lengths)


def test_chat_example(model, tmp_path):
    # vLLM's LLM.chat example, with the chat template it shows as optional.
    run = run_example(tmp_path, f"""
        from vllm_cpp import LLM
        from vllm_cpp import SamplingParams

        llm = LLM(model={model!r})
        sampling_params = SamplingParams(temperature=0.5)
        chat_template = {CHAT_TEMPLATE!r}


        def print_outputs(outputs):
            for output in outputs:
                prompt = output.prompt
                generated_text = output.outputs[0].text
                print(f"Prompt: {{prompt!r}}, Generated text: {{generated_text!r}}")
            print("-" * 80)


        print("=" * 80)

        conversation = [
            {{"role": "system", "content": "You are a helpful assistant"}},
            {{"role": "user", "content": "Hello"}},
            {{"role": "assistant", "content": "Hello! How can I assist you today?"}},
            {{
                "role": "user",
                "content": "Write an essay about the importance of higher education.",
            }},
        ]
        outputs = llm.chat(conversation, sampling_params=sampling_params, use_tqdm=False,
                           chat_template=chat_template)
        print_outputs(outputs)

        # You can run batch inference with llm.chat API
        conversations = [conversation for _ in range(10)]
        outputs = llm.chat(conversations, sampling_params=sampling_params, use_tqdm=True,
                           chat_template=chat_template)
        print_outputs(outputs)
        """)
    prompts = [line for line in run.stdout.splitlines() if line.startswith("Prompt: ")]
    assert len(prompts) == 11
    assert all(line.startswith("Prompt: '<|system|>\\nYou are a helpful assistant\\n<|user|>")
               for line in prompts)
    assert "Processed prompts: 100%" in run.stderr


def test_quickstart_outputs(llm):
    from vllm_cpp import CompletionOutput, RequestOutput, SamplingParams

    prompts = ["Hello, my name is", "The capital of France is"]
    outputs = llm.generate(prompts, SamplingParams(temperature=0.8, top_p=0.95), use_tqdm=False)
    assert [o.prompt for o in outputs] == prompts
    tokenizer = llm.get_tokenizer()
    for output in outputs:
        assert isinstance(output, RequestOutput) and output.finished
        assert output.prompt_token_ids == tokenizer.encode(output.prompt)
        assert len(output.outputs) == 1
        completion = output.outputs[0]
        assert isinstance(completion, CompletionOutput)
        assert completion.index == 0
        assert len(completion.token_ids) <= 16  # SamplingParams' default max_tokens
        assert completion.finish_reason in ("length", "stop")
        assert completion.cumulative_logprob is None and completion.logprobs is None
        assert tokenizer.decode(output.prompt_token_ids + completion.token_ids, True) == (
            tokenizer.decode(output.prompt_token_ids, True) + completion.text)
        assert "RequestOutput(request_id=" in repr(output)
        assert "CompletionOutput(index=0, text=" in repr(output)
