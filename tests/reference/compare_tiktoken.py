#!/usr/bin/env python3
"""Checks make_o200k_case.py's token ids against tiktoken's o200k_base pattern and against Hugging
Face tokenizers, both over the case's Llama 3 ranks.

tiktoken's o200k_base() is called with its rank-table download replaced by the case's ranks, so
the pattern is tiktoken's own. Exits 1 when any text's ids differ.

Usage: compare_tiktoken.py CASE_DIR (needs tiktoken and tokenizers)
"""
import json
import os
import sys

import tiktoken
import tiktoken_ext.openai_public as openai_public
import tokenizers


def byte_level_decoder():
    """GPT-2's map from the printable characters of byte-level vocabularies back to bytes."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
                 list(range(ord("®"), ord("ÿ") + 1)))
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return {chr(code): byte for byte, code in zip(printable, codes)}


def main():
    case_dir = sys.argv[1]
    with open(os.path.join(case_dir, "vllm_cpp_ids.json")) as f:
        case = json.load(f)
    with open(os.path.join(case_dir, "tokenizer.json")) as f:
        vocab = json.load(f)["model"]["vocab"]
    to_byte = byte_level_decoder()
    ranks = {bytes(to_byte[c] for c in token): rank for token, rank in vocab.items()}
    openai_public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    spec = openai_public.o200k_base()
    encoding = tiktoken.Encoding(name="o200k-pattern-llama3-ranks", pat_str=spec["pat_str"],
                                 mergeable_ranks=ranks, special_tokens={})
    hf = tokenizers.Tokenizer.from_file(os.path.join(case_dir, "tokenizer.json"))
    print(f"tiktoken {tiktoken.__version__}, tokenizers {tokenizers.__version__}")
    print(f"tiktoken's o200k pattern equals the case's: {spec['pat_str'] == case['pattern']}")
    failed = False
    for text, ours in zip(case["texts"], case["ids"]):
        theirs = encoding.encode_ordinary(text)
        hf_ids = hf.encode(text, add_special_tokens=False).ids
        if ours != theirs or ours != hf_ids:
            failed = True
            print(f"DIFFERS {text!r}:\n  vllm-cpp   {ours}\n  tiktoken   {theirs}\n"
                  f"  tokenizers {hf_ids}")
    print(f"{len(case['texts'])} texts, {sum(map(len, case['ids']))} tokens: "
          f"{'DIFFER' if failed else 'all identical'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
