#!/usr/bin/python3
"""Embedding throughput beside llama-server --embeddings (issue 15): both servers up at once on
the same GGUF, one POST /v1/embeddings of `batch` inputs of 128 tokens each ([CLS] + 126 words +
[SEP] under the bge WordPiece vocabulary) per measurement, the two servers taking turns, so that
both see the same machine load. Prints each run and, per batch size, the best and median
embeddings/s of each server and their ratio.

Usage: bench/embeddings.py MODEL.gguf [--vllm build/vllm-cpp] [--llama-bin /tmp/llama/build/bin]
           [--batches 1,64] [--reps 5] [--threads 2] [--vllm-flag=--max-num-batched-tokens=8192]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request

# Common English words that are one WordPiece token each in the bge (bert-base-uncased) vocabulary.
WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so no will "
    "more who its out into than them can only other time new some could these two may first then "
    "do any like my now over such our man me even most made after also did many before must "
    "through back years where much your way well down should because each just those people how "
    "too little state good very make world still own see men work long get here between both life "
    "being under never day same another know while last might us great old year off come since "
    "against go came right used take three"
).split()
WORDS_PER_INPUT = 126  # + [CLS] and [SEP]: 128 tokens


def inputs(count):
    rng = random.Random(1234)
    return [" ".join(rng.choice(WORDS) for _ in range(WORDS_PER_INPUT)) for _ in range(count)]


def post(port, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/embeddings",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=3600) as response:
        answer = json.loads(response.read())
    return time.perf_counter() - start, answer


def wait_healthy(port, process, name):
    for _ in range(1200):
        if process.poll() is not None:
            sys.exit(f"{name} exited with {process.returncode} before it was healthy")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    sys.exit(f"{name} did not become healthy")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--vllm", default="build/vllm-cpp")
    parser.add_argument("--llama-bin", default="/tmp/llama/build/bin")
    parser.add_argument("--batches", default="1,64")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--vllm-port", type=int, default=8141)
    parser.add_argument("--llama-port", type=int, default=8142)
    parser.add_argument("--vllm-flag", action="append", default=[],
                        help="extra flag for vllm-cpp serve, e.g. --vllm-flag=--max-num-seqs=64")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    context = 128 * max(batches)  # 128 tokens per slot, as bench/RESULTS.md ran llama-server
    servers = {
        "vllm-cpp": ([args.vllm, "serve", args.model, "--host", "127.0.0.1", "--port",
                      str(args.vllm_port), "-t", str(args.threads), "--served-model-name", "m",
                      "--log-stats-interval", "0"] + args.vllm_flag, args.vllm_port, {}),
        "llama-server": ([os.path.join(args.llama_bin, "llama-server"), "-m", args.model,
                          "--embeddings", "-t", str(args.threads), "--host", "127.0.0.1",
                          "--port", str(args.llama_port), "-c", str(context), "-b", str(context),
                          "-ub", "512", "-np", str(max(batches))],
                         args.llama_port, {"LD_LIBRARY_PATH": args.llama_bin}),
    }
    print("vllm-cpp:", " ".join(servers["vllm-cpp"][0]))
    print("llama-server:", " ".join(servers["llama-server"][0]))
    processes = {}
    try:
        for name, (command, port, env) in servers.items():
            processes[name] = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL,
                                               env={**os.environ, **env})
        for name, (_, port, _) in servers.items():
            wait_healthy(port, processes[name], name)
        rates = {(name, batch): [] for name in servers for batch in batches}
        for batch in batches:
            body = {"model": "m", "input": inputs(batch)}
            for name, (_, port, _) in servers.items():  # warm-up, and the token count
                _, answer = post(port, body)
                print(f"{name} batch {batch}: {answer['usage']['prompt_tokens']} prompt tokens, "
                      f"{len(answer['data'][0]['embedding'])} dimensions", flush=True)
            for rep in range(args.reps):
                order = list(servers.items())
                if rep % 2:
                    order.reverse()
                for name, (_, port, _) in order:
                    seconds, _ = post(port, body)
                    rates[(name, batch)].append(batch / seconds)
                    print(f"  rep {rep} {name:12s} batch {batch:3d}: {batch / seconds:8.2f} "
                          f"embeddings/s ({seconds:.3f} s)", flush=True)
        print("\n| batch | vllm-cpp best / median | llama-server best / median | ratio best / median |")
        print("|---|---|---|---|")
        for batch in batches:
            ours, theirs = rates[("vllm-cpp", batch)], rates[("llama-server", batch)]
            print(f"| {batch} | {max(ours):.2f} / {statistics.median(ours):.2f} | "
                  f"{max(theirs):.2f} / {statistics.median(theirs):.2f} | "
                  f"{max(ours) / max(theirs):.2f}x / "
                  f"{statistics.median(ours) / statistics.median(theirs):.2f}x |")
    finally:
        for process in processes.values():
            process.terminate()
            process.wait()


if __name__ == "__main__":
    main()
