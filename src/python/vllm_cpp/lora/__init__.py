"""vLLM's vllm.lora package: the LoRARequest that selects an adapter per request."""
