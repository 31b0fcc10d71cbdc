#!/usr/bin/env bash
# Installs what the aarch64 cross build and its qemu test run need (run as root; a no-op when
# present): Debian's cross toolchain, qemu's user-mode emulator, and the arm64 libraries of the
# rooms that link them, from Debian's multiarch packages (OpenSSL, PCRE2, ICU, Boost headers,
# yaml-cpp's runtime library: its -dev package is not multiarch, the host's headers serve), and
# the arm64 glibc and libstdc++ that the programs load under qemu (-L /).
# GoogleTest is built from the host's /usr/src/googletest inside the cross build.
set -euo pipefail
packages=(g++-aarch64-linux-gnu qemu-user libssl-dev:arm64 libpcre2-dev:arm64 libicu-dev:arm64
  libboost-dev:arm64 libyaml-cpp0.7:arm64 libc6:arm64 libstdc++6:arm64)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing packages: ${missing[*]} (run this script as root to install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
  apt-get update -qq
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
