"""vLLM's prompt forms: a string, TextPrompt {"prompt": ...}, TokensPrompt
{"prompt_token_ids": [...]} or EmbedsPrompt {"prompt_embeds": ...}, and what the engine
receives for each."""

from __future__ import annotations

from typing import Any, Optional, TypedDict, Union


class TextPrompt(TypedDict, total=False):
    prompt: str


class TokensPrompt(TypedDict, total=False):
    prompt_token_ids: list[int]
    prompt: str  # the text the ids came from, echoed in RequestOutput.prompt


class EmbedsPrompt(TypedDict):
    # (seq_len, hidden_size), or (1, seq_len, hidden_size): the bytes torch.save wrote, or an
    # array-like (a numpy array, anything with tolist(), nested lists of floats). Needs
    # LLM(..., enable_prompt_embeds=True).
    prompt_embeds: Any


PromptType = Union[str, TextPrompt, TokensPrompt, EmbedsPrompt]

_SUPPORTED_KEYS = {"prompt", "prompt_token_ids"}


class PromptEmbeds:
    """An EmbedsPrompt as the engine takes it: torch.save bytes, or (num_tokens, hidden_size,
    row-major values)."""

    def __init__(self, given: Any) -> None:
        if isinstance(given, (bytes, bytearray, memoryview)):
            self.data: Union[bytes, tuple[int, int, list[float]]] = bytes(given)
            return
        rows = given.tolist() if hasattr(given, "tolist") else given
        if isinstance(rows, list) and len(rows) == 1 and isinstance(rows[0], list) and \
                rows[0] and isinstance(rows[0][0], list):
            rows = rows[0]  # a batch of one, squeezed as vLLM does
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows) or \
                len({len(row) for row in rows}) > 1:
            raise ValueError("prompt_embeds must be of shape (seq_len, hidden_size).")
        hidden_size = len(rows[0]) if rows else 0
        self.data = (len(rows), hidden_size, [float(value) for row in rows for value in row])


def parse_prompt(prompt: PromptType, allow_embeds: bool = False
                 ) -> tuple[Union[str, list[int], PromptEmbeds], Optional[str]]:
    """(what the engine receives: text, token ids or embeddings (only where `allow_embeds`), the
    prompt text RequestOutput shows)."""
    if isinstance(prompt, str):
        return prompt, prompt
    if not isinstance(prompt, dict):
        raise TypeError(f"a prompt must be a str, a TextPrompt, a TokensPrompt or an "
                        f"EmbedsPrompt, not {type(prompt).__name__}")
    if "prompt_embeds" in prompt:
        if not allow_embeds:
            raise NotImplementedError("prompt_embeds are taken by generate() and add_request() "
                                      "only")
        if len(prompt) > 1:
            raise NotImplementedError(f"prompt fields not supported with prompt_embeds by "
                                      f"vllm-cpp: {sorted(set(prompt) - {'prompt_embeds'})}")
        return PromptEmbeds(prompt["prompt_embeds"]), None
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
