"""vLLM's metric objects (vllm.v1.metrics.reader): LLM.get_metrics() lists Counter, Gauge,
Histogram and Vector objects named as the server's /metrics names them, with the labels
model_name and engine, from the engine's counters and the outputs the engine returned."""

from __future__ import annotations

from collections import Counter as _Tally
from dataclasses import dataclass


@dataclass
class Metric:
    name: str
    labels: dict[str, str]


@dataclass
class Counter(Metric):
    value: int


@dataclass
class Vector(Metric):
    values: list[int]


@dataclass
class Gauge(Metric):
    value: float


@dataclass
class Histogram(Metric):
    count: int
    sum: float
    buckets: dict[str, int]  # upper bound as Prometheus writes it ("1.0", "+Inf") -> cumulative


def _bucket_name(upper_bound: float) -> str:
    return repr(float(upper_bound))


def _histogram(name: str, labels: dict[str, str], upper_bounds: list[float],
               counts: list[int], total: float) -> Histogram:
    """counts: per bucket (not cumulative), one more than upper_bounds for those above all."""
    buckets: dict[str, int] = {}
    cumulative = 0
    for bound, count in zip(upper_bounds, counts):
        cumulative += count
        buckets[_bucket_name(bound)] = cumulative
    buckets["+Inf"] = sum(counts)
    return Histogram(name=name, labels=dict(labels), count=sum(counts), sum=total,
                     buckets=buckets)


def _one_two_five(max_value: int) -> list[int]:
    """vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up to max_value."""
    bounds = []
    power = 1
    while True:
        for mantissa in (1, 2, 5):
            if mantissa * power > max_value:
                return bounds
            bounds.append(mantissa * power)
        power *= 10


class RequestTally:
    """What finished requests reported, for the request-level metrics."""

    def __init__(self) -> None:
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.finished_reasons: _Tally[str] = _Tally()
        self.prompt_lengths: list[int] = []
        self.generation_lengths: list[int] = []

    def add_generated(self, num_tokens: int) -> None:
        self.generation_tokens += num_tokens

    def finish(self, num_prompt_tokens: int, num_generated: int, reasons: list[str]) -> None:
        self.prompt_tokens += num_prompt_tokens
        self.prompt_lengths.append(num_prompt_tokens)
        self.generation_lengths.append(num_generated)
        self.finished_reasons.update(reason for reason in reasons if reason)


def collect_metrics(model_name: str, max_model_len: int, stats: dict,
                    tally: RequestTally) -> list[Metric]:
    labels = {"model_name": model_name, "engine": "0"}
    metrics: list[Metric] = [
        Gauge("vllm:num_requests_running", dict(labels), float(stats["num_running"])),
        Gauge("vllm:num_requests_waiting", dict(labels), float(stats["num_waiting"])),
        Gauge("vllm:kv_cache_usage_perc", dict(labels), float(stats["kv_cache_usage"])),
        Counter("vllm:prefix_cache_queries", dict(labels), stats["prefix_cache_queries"]),
        Counter("vllm:prefix_cache_hits", dict(labels), stats["prefix_cache_hits"]),
        Counter("vllm:num_preemptions", dict(labels), stats["num_preemptions"]),
        Counter("vllm:prompt_tokens", dict(labels), tally.prompt_tokens),
        Counter("vllm:generation_tokens", dict(labels), tally.generation_tokens),
    ]
    for reason in ("stop", "length", "abort"):
        metrics.append(Counter("vllm:request_success", {**labels, "finished_reason": reason},
                               tally.finished_reasons[reason]))
    token_bounds = _one_two_five(max_model_len)
    for name, lengths in (("vllm:request_prompt_tokens", tally.prompt_lengths),
                          ("vllm:request_generation_tokens", tally.generation_lengths)):
        counts = [0] * (len(token_bounds) + 1)
        for length in lengths:
            counts[next((i for i, b in enumerate(token_bounds) if length <= b),
                        len(token_bounds))] += 1
        metrics.append(_histogram(name, labels, token_bounds, counts, float(sum(lengths))))
    metrics.append(_histogram("vllm:iteration_tokens_total", labels,
                              stats["iteration_tokens_upper_bounds"],
                              stats["iteration_tokens_steps_by_bucket"],
                              float(stats["iteration_tokens_sum"])))
    if stats["spec_decode_num_drafts"]:
        metrics += [
            Counter("vllm:spec_decode_num_drafts", dict(labels), stats["spec_decode_num_drafts"]),
            Counter("vllm:spec_decode_num_draft_tokens", dict(labels),
                    stats["spec_decode_num_draft_tokens"]),
            Counter("vllm:spec_decode_num_accepted_tokens", dict(labels),
                    stats["spec_decode_num_accepted_tokens"]),
            Vector("vllm:spec_decode_num_accepted_tokens_per_pos", dict(labels),
                   list(stats["spec_decode_num_accepted_tokens_per_pos"])),
        ]
    return metrics
