"""vLLM's prompt forms: a string, TextPrompt {"prompt": ...} or TokensPrompt
{"prompt_token_ids": [...]}, and what the engine receives for each."""

from __future__ import annotations

from typing import Optional, TypedDict, Union


class TextPrompt(TypedDict, total=False):
    prompt: str


class TokensPrompt(TypedDict, total=False):
    prompt_token_ids: list[int]
    prompt: str  # the text the ids came from, echoed in RequestOutput.prompt


PromptType = Union[str, TextPrompt, TokensPrompt]

_SUPPORTED_KEYS = {"prompt", "prompt_token_ids"}


def parse_prompt(prompt: PromptType) -> tuple[Union[str, list[int]], Optional[str]]:
    """(what the engine receives: text or token ids, the prompt text RequestOutput shows)."""
    if isinstance(prompt, str):
        return prompt, prompt
    if not isinstance(prompt, dict):
        raise TypeError(f"a prompt must be a str, a TextPrompt or a TokensPrompt, not "
                        f"{type(prompt).__name__}")
    unsupported = sorted(set(prompt) - _SUPPORTED_KEYS)
    if unsupported:
        raise NotImplementedError(f"prompt fields not supported by vllm-cpp: {unsupported}")
    if "prompt_token_ids" in prompt:
        token_ids = prompt["prompt_token_ids"]
        if not all(isinstance(token_id, int) for token_id in token_ids):
            raise TypeError("prompt_token_ids must be a list of int")
        return list(token_ids), prompt.get("prompt")
    if "prompt" in prompt:
        return prompt["prompt"], prompt["prompt"]
    raise ValueError("a prompt dict needs 'prompt' or 'prompt_token_ids'")


def is_single_prompt(prompts: object) -> bool:
    """True for one prompt (str or dict), False for a list of them."""
    return isinstance(prompts, (str, dict))
