"""LLM.beam_search with vLLM's BeamSearchParams, over the engine's beam search."""

import pytest


def test_beam_search(llm):
    from vllm_cpp import BeamSearchOutput, BeamSearchParams, SamplingParams

    prompts = [{"prompt": "Once upon a time"}, {"prompt_token_ids": [1, 403, 407]}]
    outputs = llm.beam_search(prompts, BeamSearchParams(beam_width=3, max_tokens=10))
    assert len(outputs) == 2 and all(isinstance(o, BeamSearchOutput) for o in outputs)
    prompt_ids = llm.get_tokenizer().encode("Once upon a time")
    sequences = outputs[0].sequences
    assert len(sequences) == 3
    assert len({tuple(s.tokens) for s in sequences}) == 3
    for sequence in sequences:
        assert sequence.tokens[:len(prompt_ids)] == prompt_ids
        assert sequence.text.startswith("Once upon a time")
        assert len(sequence.logprobs) == len(sequence.tokens) - len(prompt_ids)
    assert outputs[1].sequences[0].tokens[:3] == [1, 403, 407]

    # Width 1 keeps the most likely token each step: greedy decoding.
    width_one = llm.beam_search(["Once upon a time"], BeamSearchParams(beam_width=1, max_tokens=12,
                                                                       ignore_eos=True))
    greedy = llm.generate("Once upon a time", SamplingParams(temperature=0, max_tokens=12,
                                                             ignore_eos=True), use_tqdm=False)
    assert width_one[0].sequences[0].tokens[len(prompt_ids):] == greedy[0].outputs[0].token_ids


def test_beam_search_errors(llm):
    from vllm_cpp import BeamSearchParams

    with pytest.raises(ValueError, match="beam_width must be at least 1"):
        llm.beam_search(["Once"], BeamSearchParams(beam_width=0, max_tokens=4))
    with pytest.raises(TypeError):
        llm.beam_search(["Once"], {"beam_width": 2})
