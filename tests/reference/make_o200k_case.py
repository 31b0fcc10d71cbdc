#!/usr/bin/env python3
"""Writes the case that compare_tiktoken.py checks: GPT-4o / gpt-oss (o200k) pre-tokenization.

No o200k rank table is at hand, so the case pairs o200k's split pattern (the one vllm-cpp runs
for GGUF files whose tokenizer.ggml.pre is "gpt-4o") with Llama 3's byte-level BPE ranks:
a tokenizer.json that is Llama 3.1's with its Split pattern replaced. vllm-cpp's `tokenize`
encodes a corpus that exercises the pattern's branches (cased words with contractions, digit
runs, punctuation, newlines, scripts, marks) with it; compare_tiktoken.py encodes the same texts
with tiktoken's own o200k_base pattern over the same ranks, and with Hugging Face tokenizers.

Usage: make_o200k_case.py BUILD/vllm-cpp SHARED_DIR OUT_DIR (python3 standard library only)
"""
import json
import os
import re
import subprocess
import sys

CORPUS = [
    "Hello world! It's a test.",
    "DON'T STOP. I'M here, you'Re there; they'LL see. We'd've",
    "HTTPServerError iPhone McDonald's camelCaseWord snake_case_word",
    "Numbers: 1 12 123 1234 1234567 3.14159 -42 1e10 ١٢٣٤٥ ⅷ",
    "   leading spaces and trailing   ",
    "line one\nline two\r\nline three\n\n\n  indented\tTabbed\t\t end",
    "path/to/file.txt // comment /* block */ <tag attr=\"v\"/>",
    "!!! ??? ... --- *** ### $$$ %%% &&& @@@ ~~~",
    "Ünïcödé façade naïve résumé Ελληνικά Кириллица ÀÉÎÕÜ",
    "e\u0301te\u0301 (combining acute) n\u0303 a\u0308\u0304",
    "日本語のテキストと中文文本，还有한국어 텍스트。",
    "العربية النص مع الأرقام ١٢٣ و עברית",
    "हिन्दी पाठ और தமிழ் உரை",
    "emoji 😀😃🎉👍🏽 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵",
    "ǅungla ǈubav ǋegoš (title-case letters)",
    "def f(x):\n    return x**2 + 1  # square\n\nprint(f(3))\n",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null}}",
    "MiXeD CaSe WoRdS aNd ALLCAPS lowercase Capitalized",
    "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D",
    "tab\there, vertical\x0bform\x0cfeed, nbsp\u00a0here, ideographic\u3000space",
    "a/b\n/c\r\n/d  /e",
    "x" * 50 + " " + "ab" * 30,
    "The year 2024 had 366 days; 1,000,000 people; 0.5%; $19.99; 10:30am",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligature and ẞ sharp s",
]


def main():
    binary, shared, out = sys.argv[1:4]
    tokenizer_dir = os.path.join(out, "o200k-llama3-ranks")
    os.makedirs(tokenizer_dir, exist_ok=True)
    source = os.path.join(shared, "tokenizers/llama3_1")
    with open(os.path.join(source, "tokenizer.json")) as f:
        tokenizer = json.load(f)
    # vllm-cpp's GGUF "gpt-4o" pattern, read from the source so that the case checks it.
    config_source = os.path.join(os.path.dirname(__file__), "../../src/tokenizer/"
                                 "pre_tokenizer_config.cc")
    with open(config_source) as f:
        text = f.read()
    block = text[text.index('{{"gpt-4o"'):]
    block = block[:block.index("}}}")]
    pattern = "".join(json.loads(f'"{piece}"') for piece in re.findall(r'"((?:[^"\\]|\\.)*)"',
                                                                       block)[3:])
    split = tokenizer["pre_tokenizer"]["pretokenizers"][0]
    assert split["type"] == "Split"
    split["pattern"]["Regex"] = pattern
    with open(os.path.join(tokenizer_dir, "tokenizer.json"), "w") as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    with open(os.path.join(source, "tokenizer_config.json")) as f:
        config = f.read()
    with open(os.path.join(tokenizer_dir, "tokenizer_config.json"), "w") as f:
        f.write(config)
    ids = []
    for text in CORPUS:
        result = subprocess.run([binary, "tokenize", "--tokenizer", tokenizer_dir, "--text", text],
                                check=True, capture_output=True, text=True)
        ids.append(json.loads(result.stdout))
    with open(os.path.join(tokenizer_dir, "vllm_cpp_ids.json"), "w") as f:
        json.dump({"pattern": pattern, "texts": CORPUS, "ids": ids}, f, ensure_ascii=False)
    print(f"{len(CORPUS)} texts, pattern {pattern}")


if __name__ == "__main__":
    main()
