"""The model's tokenizer as LLM.get_tokenizer() returns it: encode, decode and
apply_chat_template (Hugging Face's names and defaults), rendered by the project's own Jinja
engine (src/chat_template/) the way the server's chat endpoint renders."""

from __future__ import annotations

import json
from typing import Any, Optional, Union

from . import _core

Conversation = list[dict[str, Any]]

# vLLM's error for get_tokenizer() under skip_tokenizer_init.
_NO_TOKENIZER = "Unable to get tokenizer because skip_tokenizer_init is True"

_NO_TEMPLATE = ("As of transformers v4.44, default chat template is no longer allowed, so you "
                "must provide a chat template if the tokenizer does not define one.")


def _message_content(content: Any) -> Any:
    """A message's content as one string: text parts joined by newlines (vLLM's "string"
    content format)."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TypeError(f"message content must be a str or a list of parts, not "
                        f"{type(content).__name__}")
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type", "text") == "text":
            texts.append(part["text"])
        else:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise NotImplementedError(f"message content part of type {kind!r} is not supported "
                                      "by vllm-cpp (text only)")
    return "\n".join(texts)


def _normalize_messages(conversation: Conversation) -> Conversation:
    messages = []
    for message in conversation:
        if not isinstance(message, dict) or "role" not in message:
            raise ValueError("each message must be a dict with a 'role'")
        normalized = dict(message)
        if "content" in normalized:
            normalized["content"] = _message_content(normalized["content"])
        messages.append(normalized)
    return messages


class Tokenizer:
    """Text <-> token ids with the model's vocabulary, and its chat template."""

    def __init__(self, engine: Union[_core.Engine, _core.AsyncEngine]) -> None:
        self._engine = engine
        self.chat_template = engine.chat_template or None

    @property
    def _core(self) -> _core.Tokenizer:
        # Looked up on each use: after AsyncLLM.shutdown() this raises instead of reading a
        # tokenizer that is gone.
        return self._engine.tokenizer

    @property
    def vocab_size(self) -> int:
        return self._core.vocab_size

    def __len__(self) -> int:
        return self._core.vocab_size

    @property
    def bos_token_id(self) -> Optional[int]:
        return self._core.bos_id if self._core.bos_id >= 0 else None

    @property
    def eos_token_id(self) -> Optional[int]:
        return self._core.eos_id if self._core.eos_id >= 0 else None

    @property
    def bos_token(self) -> Optional[str]:
        return None if self.bos_token_id is None else self._core.token_to_piece(self.bos_token_id)

    @property
    def eos_token(self) -> Optional[str]:
        return None if self.eos_token_id is None else self._core.token_to_piece(self.eos_token_id)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self._core.encode(text, add_special_tokens)

    def decode(self, token_ids: Union[int, list[int]], skip_special_tokens: bool = False) -> str:
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        return self._core.decode(list(token_ids), skip_special_tokens)

    def convert_ids_to_tokens(self, ids: Union[int, list[int]]) -> Union[str, list[str]]:
        if isinstance(ids, int):
            return self._core.token_to_piece(ids)
        return [self._core.token_to_piece(token_id) for token_id in ids]

    def apply_chat_template(self, conversation: Conversation, tools: Optional[list[dict]] = None,
                            documents: Optional[list[dict]] = None,
                            chat_template: Optional[str] = None,
                            add_generation_prompt: bool = False,
                            continue_final_message: bool = False, tokenize: bool = True,
                            **kwargs: Any) -> Union[str, list[int]]:
        """Renders `conversation` (a list of {"role", "content"} messages); extra keyword
        arguments become template variables. Token ids when `tokenize`, else the text."""
        if add_generation_prompt and continue_final_message:
            raise ValueError("continue_final_message and add_generation_prompt are not "
                             "compatible. Use continue_final_message when you want the model to "
                             "continue the final message, and add_generation_prompt when you "
                             "want to add a header that will prompt it to start a new assistant "
                             "message instead.")
        source = chat_template or self.chat_template
        if not source:
            raise ValueError(_NO_TEMPLATE)
        messages = _normalize_messages(conversation)
        variables = dict(kwargs)
        variables.update(messages=messages, add_generation_prompt=add_generation_prompt,
                         continue_final_message=continue_final_message,
                         bos_token=self.bos_token or "", eos_token=self.eos_token or "")
        if tools is not None:
            variables["tools"] = tools
        if documents is not None:
            variables["documents"] = documents
        text = _core.render_chat_template(source, json.dumps(variables, ensure_ascii=False))
        if continue_final_message:
            text = _cut_after_final_message(text, messages)
        if not tokenize:
            return text
        return self.encode(text, add_special_tokens=False)


def _cut_after_final_message(text: str, messages: Conversation) -> str:
    """The rendered chat up to the end of the final message's content, so that the model
    continues that message."""
    final_content = messages[-1].get("content") if messages else None
    at = text.rfind(final_content) if final_content else -1
    if at < 0:
        raise ValueError("continue_final_message is set but the final message does not appear "
                         "in the rendered chat")
    return text[:at + len(final_content)]
