#!/usr/bin/python3
"""Reference data for unigram_conformance_test: trains small SentencePiece Unigram models and
writes, per variant, what the C++ side loads and the ids SentencePiece gives.

Usage: unigram_reference.py OUT_DIR

For each variant (plain; byte_fallback on; remove_extra_whitespaces off) OUT_DIR/<variant>/ gets
  tokenizer.json  the file Hugging Face's converter writes for XLM-RoBERTa-style models:
                  Precompiled (the model's charsmap) + Strip(right) + Replace(" {2,}" -> "▁")
                  normalizer, Metaspace pre-tokenizer and decoder, Unigram model with the
                  fairseq id layout (<s> <pad> </s> <unk>, pieces shifted by one, <mask> last),
                  TemplateProcessing (plain) or RobertaProcessing (byte_fallback)
  gguf.json       the fields of a llama.cpp "t5" vocabulary (tokens, scores, token types,
                  precompiled charsmap, add_space_prefix, remove_extra_whitespaces, special ids);
                  the test writes the GGUF itself with vllm-cpp's GgufWriter
  tokenizer.model SentencePiece's own model file (the ModelProto), as slow-only repos ship it
  cases.json      [{"text", "ids", "decoded"}]: sentencepiece's encode (ids in SentencePiece's
                  own layout; tokenizer.json ids follow by the fairseq shift) and decode
Runs offline with Debian's python3-sentencepiece and python3-protobuf only.
"""
import base64
import io
import json
import os
import random
import sys

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

LATIN = ("the quick brown fox jumps over lazy dog city river mountain house garden water light "
         "école café naïve résumé façade über straße mañana niño São Paulo Zürich Ærø Øresund "
         "coöperate déjà vu piñata jalapeño crème brûlée smörgåsbord fjörður").split()
CYRILLIC = "привет мир москва город река книга школа".split()
GREEK = "καλημέρα κόσμε θάλασσα ήλιος".split()
CJK = ["東京", "大阪", "北京", "上海", "日本語", "中文", "漢字", "学校", "先生", "電車",
       "ひらがな", "カタカナ", "こんにちは", "ありがとう", "한국어", "서울", "안녕하세요"]
EMOJI = ["😀", "🎉", "👍", "❤️", "🌍", "🚀"]
DIGITS = ["0", "1", "42", "2024", "3.14", "1,000", "99%"]
# NFKC and the charsmap change these: full-width forms, ligatures, circled and compatibility
# characters, half-width katakana, decomposed accents.
COMPAT = ["ＡＢＣ", "ｘｙｚ", "１２３", "ﬁne", "ﬂow", "①②", "½", "™", "㍿", "ｶﾀｶﾅ", "Ⅻ",
          "e\u0301", "n\u0303", "\u3000", "…", "ＨＥＬＬＯ"]


SYLLABLES = ("ka ri on tes ma lu ver dan sé ño ül ber gen sch str ion ment ing ed er al ra to "
             "pre con de in un re ly ness ful").split()
# Common CJK ideographs (U+4E00 on) and kana, so the model learns multi-character pieces there too.
IDEOGRAPHS = [chr(0x4E00 + 37 * i) for i in range(120)] + [chr(0x3041 + i) for i in range(80)]


def make_corpus(rng):
  pseudo_words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4)))
                  for _ in range(1500)]
  pseudo_words += ["".join(rng.choice(IDEOGRAPHS) for _ in range(rng.randint(1, 4)))
                   for _ in range(800)]
  words = LATIN + CYRILLIC + GREEK + CJK + EMOJI + DIGITS + COMPAT + pseudo_words
  lines = []
  for _ in range(20000):
    lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(3, 14))))
  return lines


# Characters that never occur in the corpus (unknown to the model), and a pool for random cases.
RARE = ["鬱", "龘", "ꙮ", "𓀀", "ᚠ", "ก", "ཀ", "🦄", "🧬", "Ω", "∮", "\u2028"]
POOL = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'-()") +
        list("éèêëàâäôöûüçñßøåæ") + list("привет") + list("東京大阪日本語ひらがなカタカナ한국어") +
        EMOJI + COMPAT + RARE + [" ", "  ", "\t", "\n"])


def make_cases(rng):
  cases = [
      "", " ", "   ", "\t", "\n", "a", " a", "a ", "  a  b  ", "a\tb", "a\nb", "a \n b",
      "Hello world", "hello  world", "hello   world", " leading", "trailing ", "  both  ",
      "école café naïve", "e\u0301cole", "n\u0303", "a\u0308\u0301", "\u00e4", "Straße", "ÆØÅ æøå",
      "東京は日本の首都です。", "こんにちは、世界！", "カタカナとひらがな", "ｶﾀｶﾅ", "한국어 안녕하세요",
      "привет, мир!", "καλημέρα κόσμε", "😀🎉👍", "I ❤️ emoji 🚀🌍", "👨\u200d👩\u200d👧",
      "0123456789", "3.14159 2,718 1e10", "ＡＢＣ　ＤＥＦ　１２３", "ﬁne ﬂow ﬀ", "①②③ ½ ¼ ™ ㍿ Ⅻ",
      "…", "\u3000\u3000x\u3000", "鬱龘ꙮ", "a鬱b", "鬱 鬱", "𓀀𓀁", "🦄🧬", "ᚠᚢᚦ", "กขค",
      "mixed 東京 привет 😀 123 ＡＢＣ", "x\u2028y", "tab\tand\nnewline\r\nend", "\r\n",
      "don't stop", "UPPER lower MiXeD", "a" * 50, "ab " * 40, "東" * 30,
      " ".join(LATIN) + " " + " ".join(CJK),
  ]
  for _ in range(300):
    cases.append("".join(rng.choice(POOL) for _ in range(rng.randint(1, 40))))
  # A long input: linear-time segmentation must still hold every id.
  cases.append(" ".join(rng.choice(LATIN + CJK + CYRILLIC + EMOJI + COMPAT + SYLLABLES)
                        for _ in range(3000)))
  for _ in range(60):
    cases.append(" ".join("".join(rng.choice(SYLLABLES + IDEOGRAPHS) for _ in range(3))
                          for _ in range(rng.randint(1, 8))))
  return cases


def fairseq_vocab(proto):
  """XLM-RoBERTa's layout: <s> <pad> </s> <unk>, SentencePiece's pieces from id 3 shifted by
  one, then <mask>."""
  vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
  vocab += [[p.piece, p.score] for p in proto.pieces[3:]]
  vocab.append(["<mask>", 0.0])
  return vocab


def added_token(token_id, content, lstrip=False):
  return {"id": token_id, "content": content, "single_word": False, "lstrip": lstrip,
          "rstrip": False, "normalized": False, "special": True}


def tokenizer_json(proto, byte_fallback):
  vocab = fairseq_vocab(proto)
  charsmap = base64.b64encode(proto.normalizer_spec.precompiled_charsmap).decode()
  metaspace = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always",
               "split": True}
  if byte_fallback:
    post_processor = {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                      "trim_offsets": True, "add_prefix_space": True}
    decoder = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, metaspace]}
  else:
    post_processor = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "</s>", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "</s>", "type_id": 0}},
                 {"SpecialToken": {"id": "</s>", "type_id": 0}},
                 {"Sequence": {"id": "B", "type_id": 0}},
                 {"SpecialToken": {"id": "</s>", "type_id": 0}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                           "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}}
    decoder = metaspace
  return {
      "version": "1.0",
      "truncation": None,
      "padding": None,
      "added_tokens": [added_token(0, "<s>"), added_token(1, "<pad>"), added_token(2, "</s>"),
                       added_token(3, "<unk>"), added_token(len(vocab) - 1, "<mask>", True)],
      "normalizer": {"type": "Sequence", "normalizers": [
          {"type": "Precompiled", "precompiled_charsmap": charsmap},
          {"type": "Strip", "strip_left": False, "strip_right": True},
          {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]},
      "pre_tokenizer": metaspace,
      "post_processor": post_processor,
      "decoder": decoder,
      "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": byte_fallback},
  }


def gguf_json(proto):
  spec = proto.normalizer_spec
  return {
      "tokens": [p.piece for p in proto.pieces],
      "scores": [p.score for p in proto.pieces],
      # ModelProto.SentencePiece.Type numbers are GGUF's token types (1 normal ... 6 byte).
      "types": [p.type for p in proto.pieces],
      "precompiled_charsmap": list(spec.precompiled_charsmap),  # bytes
      "add_space_prefix": spec.add_dummy_prefix,
      "remove_extra_whitespaces": spec.remove_extra_whitespaces,
      "unk_id": proto.trainer_spec.unk_id,
      "bos_id": proto.trainer_spec.bos_id,
      "eos_id": proto.trainer_spec.eos_id,
  }


def main():
  out_dir = sys.argv[1]
  rng = random.Random(15)
  corpus = make_corpus(rng)
  cases = make_cases(rng)
  # keep_whitespace: remove_extra_whitespaces off, for the GGUF path only (Hugging Face's
  # converter writes the same whitespace-collapsing normalizer whatever the model says).
  for variant, byte_fallback, remove_extra_whitespaces in (("plain", False, True),
                                                           ("byte_fallback", True, True),
                                                           ("keep_whitespace", False, False)):
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(corpus), model_writer=model, model_type="unigram",
        vocab_size=3000 if byte_fallback else 2500, character_coverage=0.995,
        normalization_rule_name="nmt_nfkc", byte_fallback=byte_fallback, num_threads=1,
        remove_extra_whitespaces=remove_extra_whitespaces, hard_vocab_limit=False,
        minloglevel=2)
    proto = model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    processor = spm.SentencePieceProcessor(model_proto=model.getvalue())
    directory = os.path.join(out_dir, variant)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "tokenizer.model"), "wb") as f:
      f.write(model.getvalue())
    with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
      json.dump(tokenizer_json(proto, byte_fallback), f, ensure_ascii=False)
    with open(os.path.join(directory, "gguf.json"), "w", encoding="utf-8") as f:
      json.dump(gguf_json(proto), f, ensure_ascii=False)
    records = []
    for text in cases:
      ids = processor.encode(text)
      records.append({"text": text, "ids": ids, "decoded": processor.decode(ids)})
    with open(os.path.join(directory, "cases.json"), "w", encoding="utf-8") as f:
      json.dump(records, f, ensure_ascii=False)


if __name__ == "__main__":
  main()
