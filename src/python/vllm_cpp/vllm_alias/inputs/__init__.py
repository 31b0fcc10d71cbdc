from vllm_cpp.inputs import PromptType, TextPrompt, TokensPrompt  # noqa: F401
