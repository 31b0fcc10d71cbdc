#!/usr/bin/python3
"""Offline throughput of the Python API beside the C++ one (BENCHMARKS.md workload 3: 200
prompts of 256 random token ids, 128 output tokens each, ignore_eos, all at once): runs
`vllm-cpp bench throughput`, then vllm_cpp's LLM.generate on the same shape in this process, and
prints both figures and their ratio (the Python API should be within 2 % of the C++ one).

Usage: PYTHONPATH=build/python bench/python_throughput.py MODEL [--binary build/vllm-cpp]
       [--num-prompts 200] [--input-len 256] [--output-len 128] [--repeats 1] [-t THREADS]
"""

import argparse
import random
import re
import subprocess
import time

from vllm_cpp import LLM, SamplingParams


def cpp_output_tokens_per_second(args: argparse.Namespace) -> float:
    command = [args.binary, "bench", "throughput", args.model, "--num-prompts",
               str(args.num_prompts), "--input-len", str(args.input_len), "--output-len",
               str(args.output_len), "-t", str(args.threads)]
    print("$", " ".join(command), flush=True)
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    print(run.stdout, end="", flush=True)
    return float(re.search(r"([\d.]+) output tokens/s", run.stdout).group(1))


def python_output_tokens_per_second(llm: LLM, args: argparse.Namespace) -> float:
    # Ids drawn as `bench throughput` draws them: uniform over the vocabulary past its first 1000
    # ids (the special and byte tokens of most vocabularies), so prefix-cache hits are as likely.
    rng = random.Random(0)
    vocab_size = llm.get_tokenizer().vocab_size
    first = min(vocab_size - 1, 1000)
    prompts = [{"prompt_token_ids": [rng.randrange(first, vocab_size)
                                     for _ in range(args.input_len)]}
               for _ in range(args.num_prompts)]
    params = SamplingParams(temperature=1.0, top_p=1.0, ignore_eos=True,
                            max_tokens=args.output_len)
    start = time.perf_counter()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    seconds = time.perf_counter() - start
    num_output = sum(len(o.outputs[0].token_ids) for o in outputs)
    num_total = num_output + sum(len(o.prompt_token_ids) for o in outputs)
    print(f"Python LLM.generate: {len(outputs) / seconds:.2f} requests/s, "
          f"{num_total / seconds:.2f} total tokens/s, {num_output / seconds:.2f} output tokens/s "
          f"({seconds:.2f} s)", flush=True)
    return num_output / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--binary", default="build/vllm-cpp")
    parser.add_argument("--num-prompts", type=int, default=200)
    parser.add_argument("--input-len", type=int, default=256)
    parser.add_argument("--output-len", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("-t", "--threads", type=int, default=0)
    args = parser.parse_args()
    llm = LLM(model=args.model, num_threads=args.threads)
    for _ in range(args.repeats):
        cpp = cpp_output_tokens_per_second(args)
        python = python_output_tokens_per_second(llm, args)
        print(f"Python / C++ output throughput: {python / cpp:.4f}", flush=True)


if __name__ == "__main__":
    main()
