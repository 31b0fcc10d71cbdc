#!/usr/bin/env python3
"""Checks make_embedding_cases.py's embeddings against sentence-transformers (directories with
modules.json) or transformers' hidden states pooled by CLS, mean and last token, normalized.

Prints per case the largest absolute difference (against each pooling where there are no
modules) and exits 1 when no reference agrees within --tolerance.

Usage: compare_embeddings.py CASES_DIR [--tolerance 1e-4] (needs torch, transformers and
sentence-transformers)
"""
import argparse
import json
import os
import sys

import torch
import transformers
from sentence_transformers import SentenceTransformer


def references(model_dir, ids):
    """{name: normalized embedding} for one input."""
    input_ids = torch.tensor([ids])
    mask = torch.ones_like(input_ids)
    if os.path.isfile(os.path.join(model_dir, "modules.json")):
        model = SentenceTransformer(model_dir, device="cpu",
                                    model_kwargs={"dtype": torch.float32,
                                                  "attn_implementation": "eager"})
        with torch.no_grad():
            features = model({"input_ids": input_ids, "attention_mask": mask})
        return {"sentence-transformers": features["sentence_embedding"][0]}
    model = transformers.AutoModel.from_pretrained(model_dir, dtype=torch.float32,
                                                   attn_implementation="eager")
    with torch.no_grad():
        hidden = model(input_ids=input_ids, attention_mask=mask).last_hidden_state[0]
    pooled = {"cls": hidden[0], "mean": hidden.mean(dim=0), "last": hidden[-1]}
    return {name: torch.nn.functional.normalize(v, dim=0) for name, v in pooled.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cases")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    failed = False
    for name in sorted(os.listdir(args.cases)):
        model_dir = os.path.join(args.cases, name)
        path = os.path.join(model_dir, "vllm_cpp_response.json")
        if not os.path.isfile(path):
            continue
        with open(path) as f:
            case = json.load(f)
        worst = {}
        try:
            for item, ids in zip(sorted(case["response"]["data"], key=lambda d: d["index"]),
                                 case["inputs"]):
                ours = torch.tensor(item["embedding"], dtype=torch.float32)
                for reference, value in references(model_dir, ids).items():
                    difference = (ours - value.float()).abs().max().item()
                    worst[reference] = max(worst.get(reference, 0.0), difference)
        except Exception as error:
            print(f"{name}: ERROR {type(error).__name__}: {error}")
            failed = True
            continue
        ok = min(worst.values()) <= args.tolerance
        failed |= not ok
        print(f"{name}: {'ok' if ok else 'DIFFERS'}: largest absolute difference "
              + ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
