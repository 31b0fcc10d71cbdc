#!/usr/bin/env python3
"""Analytic speed model of tensor-parallel (TP) and pipeline-parallel (PP) CPU inference.

Prints Markdown tables of expected decode tokens/s (batch 1, and batch-16 aggregate) and prefill
tokens/s for each model, weight format and deployment, with the largest term of the step time
named as the bound: "memory", "compute", "<link> lat" (message latency), "<link> bw" (link
bandwidth), or "does not fit". Every number is an input or derived from inputs; none is measured.

Assumptions:
 1. Weights: every matrix, token embedding and output head included, is stored at the format's
    bits per weight (Q4_K_M 4.85, Q8_0 8.5); norms and biases are ignored. The MoE router is
    held whole by every rank.
 2. A rank is one socket: 32 cores, 230 GB/s (75 % of 8 channels of DDR5-4800 = 307 GB/s) read
    from its own NUMA node only, 256 GiB RAM; a host is a 2-socket server with 512 GiB.
 3. A deployment fits when each rank's weights plus its KV cache for 16 sequences of 2048 tokens
    fit in 90 % of its socket's RAM. A PP stage keeps the KV cache of its own layers and holds
    its layers plus one of embedding or head.
 4. Step time = max(bytes read / bandwidth, FLOPs / compute) + communication; communication does
    not overlap computation or other communication.
 5. Compute: 0.35 TFLOP/s per core (this engine's int8-dot Q4_K GEMM on Zen 5 AVX-512 VNNI),
    scaled linearly with cores: 11.2 TFLOP/s per socket, used unchanged for Q8_0, attention and
    the batch-16 decode GEMMs. 2 FLOPs per weight per token; attention 4 x heads x head_dim FLOPs
    per layer per context token.
 6. Decode reads every weight the step uses once per step (shared by the batch), the head once,
    one embedding row per token (ignored), and the KV cache of each sequence at context 2048
    (bf16 K and V). Batch 16 is 16 sequences, each at context 2048; its tok/s is the aggregate.
 7. Prefill: one prompt of 2048 tokens; its attention sees 1024 tokens on average; logits (and the
    head's FLOPs) for its last row only.
 8. MoE: a step of b tokens reads the union E x (1 - (1 - k/E)^b) of the experts (8 of 128 at
    b = 1, about 82 at b = 16, all 128 at prefill); FLOPs count the k active experts per token.
 9. TP over N ranks: each rank holds 1/N of the q/o heads, FFN rows (of every expert), embedding
    and head rows, and KV heads (1 replicated head per rank when N > KV heads, as the engine
    does). Per step: 2 x layers all-reduces of tokens x hidden x 4 bytes, and one all-gather of
    the logits (rows x vocab x 4 bytes in all).
10. Links. Between the two sockets of a host (shared memory): one all-reduce or all-gather costs
    5 us + bytes / 20 GB/s. 25 GbE: 25 us + bytes / 3.1 GB/s per message; 100 GbE: 15 us +
    bytes / 12.5 GB/s. TP across hosts is one ring over all N ranks, every step of which waits
    for the network: all-reduce 2(N-1) latencies + 2(N-1)/N x bytes / bandwidth, all-gather
    (N-1) latencies + (N-1)/N x bytes / bandwidth.
11. PP over N hosts: each host runs TP=2 over its two sockets (-tp 2 -pp N), holding an equal contiguous layer range. A step of M micro-batches takes
    (M + N - 1) slots of (1/N of the TP group's work + one residual transfer of micro-batch tokens
    x hidden x 4 bytes), less the last slot's transfer, plus the logits back to stage 0. Decode:
    M = 1 (one stage works at a time). Prefill of P >= 128 tokens: M = min(4N, P // 64).
12. The engine's split rule holds: a row-parallel weight's columns per rank (o-proj, FFN down)
    must be whole quantization blocks (256 for Q4_K_M, taken as all K-quant; 32 for Q8_0).
"""
from typing import NamedTuple, Optional

GB = 1e9
GIB = 2 ** 30
CONTEXT = 2048           # decode KV context per sequence, and prefill prompt length
BATCH = 16               # sequences in the batched decode step
KV_BYTES = 2             # bf16 K and V
WIRE_BYTES = 4           # float32 activations and logits on the wire
CORES = 32               # per socket
FLOPS_PER_CORE = 0.35e12
SOCKET_BANDWIDTH = 230e9
SOCKET_RAM = 256 * GIB
USABLE_RAM = 0.9
BITS = {"Q4_K_M": 4.85, "Q8_0": 8.5}
BLOCK = {"Q4_K_M": 256, "Q8_0": 32}   # quantization block width, in weights


class Model(NamedTuple):
    name: str
    layers: int
    hidden: int
    ffn: int             # per expert for MoE
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    formats: tuple
    experts: int = 0     # 0: dense FFN
    active: int = 0


MODELS = (
    Model("Llama-3.1-8B", 32, 4096, 14336, 32, 8, 128, 128256, ("Q4_K_M", "Q8_0")),
    Model("Llama-3.1-70B", 80, 8192, 28672, 64, 8, 128, 128256, ("Q4_K_M", "Q8_0")),
    Model("Qwen3-235B-A22B", 94, 4096, 1536, 64, 4, 128, 151936, ("Q4_K_M", "Q8_0"), 128, 8),
)


class Link(NamedTuple):
    name: str
    latency: float       # seconds per message
    bandwidth: float     # bytes per second
    ring: bool           # False: one shared-memory operation between the two sockets of a host


SHM = Link("x-socket", 5e-6, 20e9, False)
GBE25 = Link("25GbE", 25e-6, 3.1e9, True)
GBE100 = Link("100GbE", 15e-6, 12.5e9, True)


class Deployment(NamedTuple):
    name: str
    tp: int
    pp: int = 1
    tp_link: Link = SHM
    pp_link: Optional[Link] = None


DEPLOYMENTS = (
    Deployment("1 socket", 1),
    Deployment("1 host, TP=2", 2),
    Deployment("2 hosts, TP=4, 25GbE", 4, tp_link=GBE25),
    Deployment("2 hosts, TP=4, 100GbE", 4, tp_link=GBE100),
    Deployment("2 hosts, PP=2 x TP=2, 25GbE", 2, 2, pp_link=GBE25),
    Deployment("4 hosts, TP=8, 100GbE", 8, tp_link=GBE100),
    Deployment("4 hosts, PP=4 x TP=2, 100GbE", 2, 4, pp_link=GBE100),
)


def kv_heads_per_rank(m, tp):
    return m.kv_heads // tp if m.kv_heads >= tp else 1


def layer_weights(m, tp, experts):
    """Weights of one layer a TP rank holds (experts = all) or reads (experts = those used)."""
    attention = m.hidden * m.head_dim * (2 * m.heads / tp + 2 * kv_heads_per_rank(m, tp))
    if not m.experts:
        return attention + 3 * m.hidden * m.ffn / tp
    return attention + m.hidden * m.experts + experts * 3 * m.hidden * m.ffn / tp


def experts_touched(m, tokens):
    return m.experts * (1 - (1 - m.active / m.experts) ** tokens) if m.experts else 0


def kv_bytes(m, tp, context):
    """Bytes of K and V one sequence holds on one TP rank at this context."""
    return 2 * m.layers * kv_heads_per_rank(m, tp) * m.head_dim * KV_BYTES * context


def total_weights(m):
    return m.layers * layer_weights(m, 1, m.experts) + 2 * m.vocab * m.hidden


def fits(m, fmt, d):
    per_rank = m.layers / d.pp * layer_weights(m, d.tp, m.experts)
    per_rank += (2 if d.pp == 1 else 1) * m.vocab * m.hidden / d.tp
    need = per_rank * BITS[fmt] / 8 + BATCH * kv_bytes(m, d.tp, CONTEXT) / d.pp
    return need <= USABLE_RAM * SOCKET_RAM


def splits(m, fmt, d):
    return all(cols % (d.tp * BLOCK[fmt]) == 0 for cols in (m.heads * m.head_dim, m.ffn))


def add_message(terms, link, messages, nbytes):
    terms[link.name + " lat"] = terms.get(link.name + " lat", 0.0) + messages * link.latency
    terms[link.name + " bw"] = terms.get(link.name + " bw", 0.0) + nbytes / link.bandwidth


def add_collective(terms, link, n, nbytes, reduce):
    """All-reduce (reduce=True) or all-gather of nbytes in all over n ranks."""
    if n == 1:
        return
    if not link.ring:
        add_message(terms, link, 1, nbytes if reduce else nbytes / 2)
    elif reduce:
        add_message(terms, link, 2 * (n - 1), 2 * (n - 1) / n * nbytes)
    else:
        add_message(terms, link, n - 1, (n - 1) / n * nbytes)


def step(m, fmt, d, tokens, seqs, context, attention_context, micro_batches=1):
    """Seconds of one forward step and its terms (each term's seconds on the critical path)."""
    mb_tokens = tokens / micro_batches
    read = m.layers * layer_weights(m, d.tp, experts_touched(m, mb_tokens))
    read = (read + m.vocab * m.hidden / d.tp) * BITS[fmt] / 8
    read += seqs * kv_bytes(m, d.tp, context) / micro_batches
    flops = 2 * mb_tokens * m.layers * layer_weights(m, d.tp, m.active)
    flops += 2 * seqs / micro_batches * m.vocab * m.hidden / d.tp
    flops += 4 * mb_tokens * m.layers * m.heads / d.tp * m.head_dim * attention_context
    work = {"memory": read / SOCKET_BANDWIDTH, "compute": flops / (CORES * FLOPS_PER_CORE)}
    for _ in range(2 * m.layers):
        add_collective(work, d.tp_link, d.tp, mb_tokens * m.hidden * WIRE_BYTES, True)
    add_collective(work, d.tp_link, d.tp, seqs / micro_batches * m.vocab * WIRE_BYTES, False)
    slots = micro_batches + d.pp - 1
    terms = {name: seconds * slots / d.pp for name, seconds in work.items()}
    if d.pp > 1:
        add_message(terms, d.pp_link, slots - 1,
                    (slots - 1) * mb_tokens * m.hidden * WIRE_BYTES)
        add_message(terms, d.pp_link, 1, seqs * m.vocab * WIRE_BYTES)
    seconds = sum(s for name, s in terms.items() if name not in ("memory", "compute"))
    seconds += max(terms["memory"], terms["compute"])
    return seconds, terms


def rate(m, fmt, d, phase):
    """(tokens/s, bound) for phase 'decode1', 'decode16' or 'prefill'."""
    if not fits(m, fmt, d):
        return None, "does not fit"
    tokens = {"decode1": 1, "decode16": BATCH, "prefill": CONTEXT}[phase]
    if phase == "prefill":
        mbs = min(4 * d.pp, tokens // 64) if d.pp > 1 and tokens >= 128 else 1
        seconds, terms = step(m, fmt, d, tokens, 1, CONTEXT, CONTEXT / 2, mbs)
    else:
        seconds, terms = step(m, fmt, d, tokens, tokens, CONTEXT, CONTEXT)
    bound = max(terms, key=terms.get)
    return tokens / seconds, "%s %.0f%%" % (bound, 100 * terms[bound] / seconds)


def size_table():
    print("| Model | Format | Weights GB (GiB) | Weights read per token at b=1, GB "
          "| KV per sequence at 2048, GB | Fits 1 socket | Fits 1 host (TP=2) |")
    print("|---|---|---|---|---|---|---|")
    for m in MODELS:
        for fmt in m.formats:
            weights = total_weights(m) * BITS[fmt] / 8
            _, terms = step(m, fmt, DEPLOYMENTS[0], 1, 0, CONTEXT, CONTEXT)
            print("| %s | %s | %.1f (%.1f) | %.1f | %.3f | %s | %s |" % (
                m.name, fmt, weights / GB, weights / GIB, terms["memory"] * SOCKET_BANDWIDTH / GB,
                kv_bytes(m, 1, CONTEXT) / GB, "yes" if fits(m, fmt, DEPLOYMENTS[0]) else "no",
                "yes" if fits(m, fmt, DEPLOYMENTS[1]) else "no"))


def speed_table(m):
    print("\n### %s (%.1f B weights)\n" % (m.name, total_weights(m) / 1e9))
    print("| Format | Deployment | Decode b=1 tok/s | bound | Decode b=16 tok/s | bound "
          "| Prefill tok/s | bound |")
    print("|---|---|--:|---|--:|---|--:|---|")
    for fmt in m.formats:
        for d in DEPLOYMENTS:
            cells = []
            for phase in ("decode1", "decode16", "prefill"):
                tps, bound = rate(m, fmt, d, phase)
                cells += ["-" if tps is None else "%.1f" % tps if tps < 100 else "%.0f" % tps,
                          bound]
            mark = "" if splits(m, fmt, d) else " (*)"
            print("| %s | %s%s | %s |" % (fmt, d.name, mark, " | ".join(cells)))


def main():
    print("## Model sizes\n")
    size_table()
    print("\n## Expected speed (bound: largest term, as a share of the step time)")
    for m in MODELS:
        speed_table(m)
    print("\n(*) The engine refuses this split today: FFN down columns per rank are not whole "
          "blocks.")


if __name__ == "__main__":
    main()
