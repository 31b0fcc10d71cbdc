"""Pooling models through vLLM's LLM API (runner="pooling"): embed, classify, score, encode on
random-weight BERT encoders that vllm-cpp's make-random-model writes (bge's WordPiece
vocabulary), and the refusals between generative and pooling models."""

import math
import os
import subprocess

import pytest

from conftest import SHARED
from vllm_cpp import (LLM, ClassificationRequestOutput, EmbeddingRequestOutput, PoolingParams,
                      ScoringRequestOutput, SamplingParams)

VOCAB = SHARED / "vocab" / "ggml-vocab-bert-bge.gguf"
TEXTS = ["a small bird sings in the old tree", "the river runs to the sea",
         "children play games in the park on a sunny afternoon"]


def write_encoder(directory, shape: str) -> str:
    binary = os.environ.get("VLLM_CPP_BINARY")
    if not binary or not VOCAB.exists():
        pytest.skip("needs VLLM_CPP_BINARY (set by CTest) and the bge vocabulary")
    path = str(directory / f"{shape}.gguf")
    subprocess.run([binary, "make-random-model", "--shape", shape, "--vocab", str(VOCAB),
                    "--out", path], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    return LLM(model=write_encoder(tmp_path_factory.mktemp("bert"), "bert-tiny"),
               runner="pooling", hf_overrides={"is_matryoshka": True})


@pytest.fixture(scope="module")
def reranker(tmp_path_factory):
    return LLM(model=write_encoder(tmp_path_factory.mktemp("reranker"), "bert-reranker-tiny"))


def norm(values):
    return math.sqrt(sum(v * v for v in values))


def test_embed_gives_unit_vectors_of_the_hidden_size(embedder):
    outputs = embedder.embed(TEXTS)
    assert [type(o) for o in outputs] == [EmbeddingRequestOutput] * 3
    for output in outputs:
        assert len(output.outputs.embedding) == 64
        assert output.outputs.hidden_size == 64
        assert norm(output.outputs.embedding) == pytest.approx(1.0, abs=1e-5)
        assert output.prompt_token_ids and output.finished


def test_matryoshka_dimensions_and_normalize(embedder):
    short = embedder.embed(TEXTS[0], pooling_params=PoolingParams(dimensions=16))[0]
    assert len(short.outputs.embedding) == 16
    assert norm(short.outputs.embedding) == pytest.approx(1.0, abs=1e-5)
    raw = embedder.embed(TEXTS[0], pooling_params=PoolingParams(normalize=False))[0]
    assert norm(raw.outputs.embedding) != pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError):
        embedder.embed(TEXTS[0], pooling_params=PoolingParams(dimensions=1000))


def test_dimensions_need_a_matryoshka_model(tmp_path):
    plain = LLM(model=write_encoder(tmp_path, "bert-tiny"), runner="pooling")
    with pytest.raises(ValueError, match="does not support matryoshka representation"):
        plain.embed(TEXTS[0], pooling_params=PoolingParams(dimensions=16))
    listed = LLM(model=write_encoder(tmp_path, "bert-tiny"), runner="pooling",
                 hf_overrides={"matryoshka_dimensions": [16, 32]})
    assert len(listed.embed(TEXTS[0], pooling_params=PoolingParams(dimensions=32))[0]
               .outputs.embedding) == 32
    with pytest.raises(ValueError, match=r"only supports \[16, 32\] matryoshka dimensions"):
        listed.embed(TEXTS[0], pooling_params=PoolingParams(dimensions=20))


def test_an_embedding_is_the_same_alone_and_in_a_batch(embedder):
    alone = embedder.embed([TEXTS[1]])[0].outputs.embedding
    batched = embedder.embed(TEXTS)[1].outputs.embedding
    assert alone == batched


def test_truncation_keeps_the_last_tokens(embedder):
    whole = embedder.embed(TEXTS[2])[0]
    cut = embedder.embed(TEXTS[2], truncate_prompt_tokens=4)[0]
    assert len(cut.prompt_token_ids) == 4
    assert cut.prompt_token_ids == whole.prompt_token_ids[-4:]


def test_encode_and_bi_encoder_score(embedder):
    encoded = embedder.encode(TEXTS[0])[0]
    assert len(encoded.outputs.data) == 64
    a, b = (o.outputs.embedding for o in embedder.embed(TEXTS[:2]))
    scores = embedder.score(TEXTS[0], [TEXTS[0], TEXTS[1]])
    assert [type(s) for s in scores] == [ScoringRequestOutput] * 2
    assert scores[0].outputs.score == pytest.approx(1.0, abs=1e-5)
    assert scores[1].outputs.score == pytest.approx(sum(x * y for x, y in zip(a, b)), abs=1e-5)


def test_cross_encoder_classifies_and_scores_pairs(reranker):
    probs = reranker.classify(TEXTS)
    assert [type(o) for o in probs] == [ClassificationRequestOutput] * 3
    for output in probs:
        assert len(output.outputs.probs) == 1 and 0.0 < output.outputs.probs[0] < 1.0
    scores = reranker.score("what sings in the tree?", TEXTS)
    assert len(scores) == 3
    assert all(0.0 < s.outputs.score < 1.0 for s in scores)
    again = reranker.score("what sings in the tree?", TEXTS)
    assert [s.outputs.score for s in again] == [s.outputs.score for s in scores]


def test_tasks_the_model_does_not_serve_are_refused(embedder, llm):
    with pytest.raises(ValueError):
        embedder.generate("Once upon a time", SamplingParams(max_tokens=4), use_tqdm=False)
    with pytest.raises(ValueError):
        llm.embed("Once upon a time")
    with pytest.raises(NotImplementedError):
        embedder.encode(TEXTS[0], pooling_task="token_classify")
