"""LLM.chat and the tokenizer's apply_chat_template: vLLM's chat example with the demo model's
template (tests/e2e/chat_template.jinja), rendered by the project's own Jinja engine."""

import pytest

# vLLM's offline chat example conversation.
CONVERSATION = [
    {"role": "system", "content": "You are a helpful assistant"},
    {"role": "user", "content": "Hello"},
    {"role": "assistant", "content": "Hello! How can I assist you today?"},
    {"role": "user", "content": "Write an essay about the importance of higher education."},
]
RENDERED = ("<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\n"
            "Hello! How can I assist you today?\n<|user|>\nWrite an essay about the importance "
            "of higher education.\n")


def test_chat_prompt_and_tokens(llm, chat_template):
    from vllm_cpp import SamplingParams

    sampling_params = SamplingParams(temperature=0.5)
    outputs = llm.chat(CONVERSATION, sampling_params=sampling_params, use_tqdm=False,
                       chat_template=chat_template)
    assert len(outputs) == 1
    output = outputs[0]
    assert output.prompt == RENDERED + "<|assistant|>\n"
    assert output.prompt_token_ids == llm.get_tokenizer().encode(output.prompt,
                                                                 add_special_tokens=False)
    assert output.finished and output.outputs[0].token_ids


def test_chat_batch_of_conversations(llm, chat_template):
    from vllm_cpp import SamplingParams

    conversations = [CONVERSATION, [{"role": "user", "content": [
        {"type": "text", "text": "Tell me"}, {"type": "text", "text": "a story"}]}]]
    outputs = llm.chat(conversations, SamplingParams(temperature=0, max_tokens=8),
                       use_tqdm=False, chat_template=chat_template)
    assert [o.prompt for o in outputs] == [RENDERED + "<|assistant|>\n",
                                           "<|user|>\nTell me\na story\n<|assistant|>\n"]
    greedy = llm.generate({"prompt_token_ids": outputs[1].prompt_token_ids},
                          SamplingParams(temperature=0, max_tokens=8), use_tqdm=False)
    assert greedy[0].outputs[0].token_ids == outputs[1].outputs[0].token_ids


def test_apply_chat_template(llm, chat_template):
    tokenizer = llm.get_tokenizer()
    assert tokenizer.apply_chat_template(CONVERSATION, chat_template=chat_template,
                                         tokenize=False) == RENDERED
    ids = tokenizer.apply_chat_template(CONVERSATION, chat_template=chat_template,
                                        add_generation_prompt=True)
    assert ids == tokenizer.encode(RENDERED + "<|assistant|>\n", add_special_tokens=False)
    continued = tokenizer.apply_chat_template(
        CONVERSATION[:3], chat_template=chat_template, continue_final_message=True,
        tokenize=False)
    assert continued.endswith("Hello! How can I assist you today?")
    variables = "{{ greeting }}{% for m in messages %}{{ m['content'] }}{% endfor %}"
    assert tokenizer.apply_chat_template(CONVERSATION[1:2], chat_template=variables,
                                         tokenize=False, greeting="Hi: ") == "Hi: Hello"


def test_tokenizer_encode_decode(llm):
    tokenizer = llm.get_tokenizer()
    ids = tokenizer.encode("Once upon a time")
    assert ids[0] == tokenizer.bos_token_id
    assert tokenizer.encode("Once upon a time", add_special_tokens=False) == ids[1:]
    assert tokenizer.decode(ids, skip_special_tokens=True) == "Once upon a time"
    assert tokenizer.decode(ids) == "<s> Once upon a time"  # Hugging Face's default keeps <s>
    assert tokenizer.convert_ids_to_tokens(ids) == ["<s>", "▁Once", "▁upon", "▁a", "▁time"]
    assert (tokenizer.bos_token, tokenizer.eos_token) == ("<s>", "</s>")
    assert tokenizer.vocab_size == len(tokenizer) == 512


def test_chat_errors(llm, chat_template):
    with pytest.raises(ValueError, match="default chat template is no longer allowed"):
        llm.chat(CONVERSATION, use_tqdm=False)  # the demo model has no template
    with pytest.raises(ValueError, match="not compatible"):
        llm.chat(CONVERSATION, use_tqdm=False, chat_template=chat_template,
                 continue_final_message=True)
    with pytest.raises(ValueError, match="boom"):
        llm.chat(CONVERSATION, use_tqdm=False, chat_template="{{ raise_exception('boom') }}")
    with pytest.raises(ValueError, match="Invalid chat template"):
        llm.chat(CONVERSATION, use_tqdm=False, chat_template="{% for %}")
    with pytest.raises(NotImplementedError, match="image_url"):
        llm.chat([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
                 use_tqdm=False, chat_template=chat_template)
