"""Fixtures of the vllm_cpp tests: the demo model, its chat template (it has none of its own)
and one LLM shared by the tests that only read from it. Run by CTest (python_api) with
PYTHONPATH set to the build tree's python/ folder."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("VLLM_SHARED_DIR", REPO.parent / "shared"))
MODEL = str(SHARED / "models" / "stories260K.gguf")
CHAT_TEMPLATE = (REPO / "tests" / "e2e" / "chat_template.jinja").read_text()


@pytest.fixture(scope="session")
def model() -> str:
    if not os.path.exists(MODEL):
        pytest.skip(f"demo model not found: {MODEL}")
    return MODEL


@pytest.fixture(scope="session")
def llm(model):
    from vllm_cpp import LLM

    return LLM(model=model)


@pytest.fixture(scope="session")
def chat_template() -> str:
    return CHAT_TEMPLATE
