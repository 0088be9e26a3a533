#!/usr/bin/env bash
# Installs what f2fscore needs on Debian 12 (as root, or through sudo).
#   scripts/setup.sh          build dependencies and the reference tools
#   scripts/setup.sh --test   also what the tests need (qemu, cross compilers)
set -euo pipefail
pkgs=(g++ cmake ninja-build pkg-config
      libboost1.81-dev liburing-dev libzstd-dev liblz4-dev liblzo2-dev zlib1g-dev
      libcli11-dev libexpected-dev libgtest-dev libgmock-dev libbenchmark-dev libblkid-dev
      nlohmann-json3-dev libicu-dev f2fs-tools zstd e2fsprogs util-linux scdoc)
if [[ "${1:-}" == "--test" ]]; then
  pkgs+=(qemu-system-x86 busybox-static cpio qemu-user g++-s390x-linux-gnu g++-i686-linux-gnu
         fio valgrind strace time clang-14 libclang-rt-14-dev gnuplot-nox
         man-db groff-base)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all dependencies present"
