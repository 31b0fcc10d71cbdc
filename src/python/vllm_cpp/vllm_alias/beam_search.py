from vllm_cpp.beam_search import BeamSearchOutput, BeamSearchSequence  # noqa: F401
