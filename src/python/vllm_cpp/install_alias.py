"""Installs (or removes) the `vllm` alias package, so that scripts written for vLLM run unchanged:

    python3 -m vllm_cpp.install_alias              # beside vllm_cpp
    python3 -m vllm_cpp.install_alias --target DIR
    python3 -m vllm_cpp.install_alias --uninstall

It never shadows a real vLLM: it refuses when `import vllm` would find a package that is not this
alias, and it replaces or removes only a `vllm` folder that is its own."""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import shutil
import sys
from typing import Optional

MARKER = "__vllm_cpp_alias__ = True"
ALIAS_SOURCE = pathlib.Path(__file__).resolve().parent / "vllm_alias"


def is_alias(package_dir: pathlib.Path) -> bool:
    init = package_dir / "__init__.py"
    return init.is_file() and MARKER in init.read_text(encoding="utf-8", errors="replace")


def importable_vllm() -> Optional[pathlib.Path]:
    """The folder `import vllm` would load (None when there is none)."""
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        return None if spec is None else pathlib.Path(spec.origin or "vllm")
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def install(target: pathlib.Path) -> str:
    found = importable_vllm()
    if found is not None and not is_alias(found):
        raise SystemExit(f"error: a real vLLM is installed ({found}): the vllm alias would "
                         "shadow it; not installing")
    destination = target / "vllm"
    if destination.exists() and not is_alias(destination):
        raise SystemExit(f"error: {destination} exists and is not the vllm-cpp alias; not "
                         "replacing it")
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(ALIAS_SOURCE, destination,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return f"installed the vllm alias of vllm_cpp in {destination}"


def uninstall(target: pathlib.Path) -> str:
    destination = target / "vllm"
    if not destination.exists():
        return f"no vllm alias in {target}"
    if not is_alias(destination):
        raise SystemExit(f"error: {destination} is not the vllm-cpp alias; not removing it")
    shutil.rmtree(destination)
    return f"removed the vllm alias from {destination}"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m vllm_cpp.install_alias",
                                     description="Install `import vllm` as an alias of vllm_cpp.")
    parser.add_argument("--target", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent,
                        help="the folder to put the vllm package in (default: vllm_cpp's)")
    parser.add_argument("--uninstall", action="store_true", help="remove the alias instead")
    args = parser.parse_args(argv)
    print(uninstall(args.target) if args.uninstall else install(args.target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
