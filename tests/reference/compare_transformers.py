#!/usr/bin/env python3
"""Checks vllm-cpp's answers (make_cases.py) against Hugging Face transformers' forward pass.

For each case directory: loads the model with transformers (F32, eager attention, CPU), runs each
prompt followed by vllm-cpp's greedy tokens in one forward pass, and compares
- every logprob vllm-cpp reported (prompt_logprobs and the generated tokens' top logprobs) with
  transformers' log-softmax at the same position and token;
- each greedy token with transformers' argmax (a different choice counts only where transformers'
  top two are closer than the logprob tolerance).
Prints one line per case and exits 1 if any case differs by more than --tolerance (in nats,
relative to max(1, |logprob|)).

Usage: compare_transformers.py CASES_DIR [--tolerance 1e-3] (needs torch and transformers)
"""
import argparse
import json
import os
import sys

import torch
import transformers


def token_id(name):
    return int(name.split(":", 1)[1])  # "token_id:<id>"


def check_case(model_dir, tolerance):
    with open(os.path.join(model_dir, "vllm_cpp_response.json")) as f:
        case = json.load(f)
    model, loading = transformers.AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
    # A tensor transformers did not find would be left at its random initialization.
    unloaded = {key: value for key, value in loading.items() if value}
    if unloaded:
        raise RuntimeError(f"weights not loaded as named: {unloaded}")
    model.eval()
    worst = 0.0  # largest |ours - theirs| / max(1, |theirs|)
    num_compared = 0
    greedy_mismatches = []
    choices = sorted(case["response"]["choices"], key=lambda c: c["index"])
    for prompt, choice in zip(case["prompts"], choices):
        generated = [token_id(t) for t in choice["logprobs"]["tokens"]]
        ids = prompt + generated
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0].double()
        theirs = torch.log_softmax(logits, dim=-1)  # [len(ids), vocab]: next-token logprobs

        def compare(position, token, ours):
            nonlocal worst, num_compared
            reference = theirs[position, token].item()
            worst = max(worst, abs(ours - reference) / max(1.0, abs(reference)))
            num_compared += 1

        # prompt_logprobs[j] (j >= 1) scores prompt token j given the tokens before it.
        for j, entries in enumerate(choice["prompt_logprobs"]):
            if entries is None:
                continue
            for token, entry in entries.items():
                compare(j - 1, int(token), entry["logprob"])
        for step, top in enumerate(choice["logprobs"]["top_logprobs"]):
            position = len(prompt) - 1 + step
            for name, logprob in top.items():
                compare(position, token_id(name), logprob)
            best = torch.topk(theirs[position], 2)
            chosen = generated[step]
            if best.indices[0].item() != chosen:
                gap = best.values[0].item() - theirs[position, chosen].item()
                if gap > tolerance * max(1.0, abs(best.values[0].item())):
                    greedy_mismatches.append((len(prompt), step, chosen,
                                              best.indices[0].item(), gap))
    return worst, num_compared, greedy_mismatches


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cases")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    failed = False
    for name in sorted(os.listdir(args.cases)):
        model_dir = os.path.join(args.cases, name)
        if not os.path.isfile(os.path.join(model_dir, "vllm_cpp_response.json")):
            continue
        try:
            worst, num_compared, mismatches = check_case(model_dir, args.tolerance)
        except Exception as error:  # a model transformers cannot load is a failed case
            print(f"{name}: ERROR {type(error).__name__}: {error}")
            failed = True
            continue
        ok = worst <= args.tolerance and not mismatches
        failed |= not ok
        print(f"{name}: {'ok' if ok else 'DIFFERS'}: {num_compared} logprobs, largest relative "
              f"difference {worst:.2e}, greedy mismatches {mismatches[:3]}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
