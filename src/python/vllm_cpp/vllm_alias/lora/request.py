from vllm_cpp.lora.request import LoRARequest  # noqa: F401
