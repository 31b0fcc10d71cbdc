#!/usr/bin/env bash
# Installs the Debian packages vllm-cpp builds and tests with (run as root; a no-op when present).
set -euo pipefail
packages=(build-essential cmake pkg-config libgtest-dev libgmock-dev
  nlohmann-json3-dev libboost-dev libssl-dev openssl libyaml-cpp-dev libpcre2-dev libicu-dev libcli11-dev clang libclang-rt-14-dev
  # The Python package (pybind11) and its tests; sentencepiece writes the Unigram tokenizer
  # references the conformance tests compare against; numpy runs the quantized-HF oracle's
  # checkpoint generator.
  python3-dev pybind11-dev python3-pytest python3-sentencepiece python3-protobuf python3-numpy
  # Open MPI: the ranks of tensor parallelism (src/dist), their launch (mpirun) and transports.
  openmpi-bin libopenmpi-dev)
missing=()
# The e2e tests' client needs node and npm (any recent nodejs package provides both).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: ${missing[*]} (run this script as root to install them)" >&2
    exit 1
  fi
  apt-get install -y "${missing[@]}" || { apt-get update && apt-get install -y "${missing[@]}"; }
fi
