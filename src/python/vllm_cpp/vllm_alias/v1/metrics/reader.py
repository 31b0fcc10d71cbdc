from vllm_cpp.metrics import Counter, Gauge, Histogram, Metric, Vector  # noqa: F401
