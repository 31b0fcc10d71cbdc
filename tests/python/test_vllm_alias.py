"""`import vllm` through the alias package: installed only on request, never over a real vLLM,
and the module paths vLLM scripts import from give vllm_cpp's own objects."""

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

# The alias installs only where no real vLLM is importable (as on the machines CTest runs on).
needs_no_vllm = pytest.mark.skipif(importlib.util.find_spec("vllm") is not None,
                                   reason="a real vLLM is installed")


def run_python(source: str, *path_dirs) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(d) for d in path_dirs] +
                                        [env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, timeout=300, env=env)


def install_alias(*args, path_dirs=()) -> subprocess.CompletedProcess:
    return run_python(f"""
        import sys
        from vllm_cpp.install_alias import main
        sys.exit(main({list(args)!r}))
        """, *path_dirs)


@needs_no_vllm
def test_not_importable_until_installed(tmp_path):
    assert "ModuleNotFoundError" in run_python("import vllm").stderr
    assert install_alias("--target", str(tmp_path)).returncode == 0
    assert run_python("import vllm", tmp_path).returncode == 0


@needs_no_vllm
def test_vllm_module_paths_are_vllm_cpp_objects(tmp_path, model):
    run = install_alias("--target", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert "installed the vllm alias" in run.stdout
    check = run_python(f"""
        import vllm, vllm_cpp
        from vllm import LLM, SamplingParams
        from vllm.sampling_params import BeamSearchParams, RequestOutputKind
        from vllm.outputs import RequestOutput, CompletionOutput, PoolingRequestOutput
        from vllm.engine.arg_utils import EngineArgs, AsyncEngineArgs
        from vllm.engine.llm_engine import LLMEngine
        from vllm.engine.async_llm_engine import AsyncLLMEngine
        from vllm.v1.engine.async_llm import AsyncLLM
        from vllm.v1.engine.exceptions import EngineDeadError
        from vllm.v1.metrics.reader import Counter, Gauge, Histogram, Vector
        from vllm.inputs import TokensPrompt, TextPrompt
        from vllm.pooling_params import PoolingParams
        from vllm.entrypoints.llm import LLM as EntrypointsLLM
        from vllm.logprobs import Logprob
        assert LLM is vllm_cpp.LLM is EntrypointsLLM
        assert SamplingParams is vllm_cpp.SamplingParams
        assert AsyncLLMEngine is AsyncLLM is vllm_cpp.AsyncLLM
        assert sorted(vllm.__all__) == sorted(vllm_cpp.__all__)
        llm = LLM(model={model!r})
        out = llm.generate(["Once upon a time"], SamplingParams(temperature=0, max_tokens=8),
                           use_tqdm=False)
        assert isinstance(out[0], RequestOutput) and len(out[0].outputs[0].token_ids) == 8
        print("ok")
        """, tmp_path)
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == "ok"


def test_refuses_to_shadow_a_real_vllm(tmp_path):
    real = tmp_path / "site"
    (real / "vllm").mkdir(parents=True)
    (real / "vllm" / "__init__.py").write_text("__version__ = '0.11.0'\n")
    target = tmp_path / "target"
    target.mkdir()
    # A real vLLM anywhere on the import path: nothing is installed.
    run = install_alias("--target", str(target), path_dirs=[real])
    assert run.returncode != 0
    assert "a real vLLM is installed" in run.stderr
    assert not (target / "vllm").exists()
    # Nor is a folder named vllm that is not the alias replaced or removed.
    for args in (["--target", str(real)], ["--target", str(real), "--uninstall"]):
        run = install_alias(*args)
        assert run.returncode != 0
        assert "is not the vllm-cpp alias" in run.stderr
    assert (real / "vllm" / "__init__.py").read_text() == "__version__ = '0.11.0'\n"


@needs_no_vllm
def test_reinstall_and_uninstall_touch_only_the_alias(tmp_path):
    assert install_alias("--target", str(tmp_path)).returncode == 0
    # The alias already on the path is ours: installing again replaces it.
    assert install_alias("--target", str(tmp_path), path_dirs=[tmp_path]).returncode == 0
    run = install_alias("--target", str(tmp_path), "--uninstall")
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "vllm").exists()
