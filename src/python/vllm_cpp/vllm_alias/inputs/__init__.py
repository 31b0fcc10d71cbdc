from vllm_cpp.inputs import EmbedsPrompt, PromptType, TextPrompt, TokensPrompt  # noqa: F401
