#!/usr/bin/env bash
# Installs what f2fscore needs on Debian 12 (as root, or through sudo).
#   scripts/setup.sh          build dependencies and the reference tools
#   scripts/setup.sh --test   also what the tests need (qemu, cross compilers),
#                             and s390x binaries made runnable directly
#                             (binfmt_misc through qemu-user, see below)
set -euo pipefail
pkgs=(g++ cmake ninja-build pkg-config
      libboost1.81-dev liburing-dev libzstd-dev liblz4-dev liblzo2-dev zlib1g-dev
      libcli11-dev libexpected-dev libgtest-dev libgmock-dev libbenchmark-dev libblkid-dev
      nlohmann-json3-dev libicu-dev f2fs-tools zstd e2fsprogs util-linux scdoc libfuse3-dev fuse3
      pybind11-dev python3-dev android-libsparse-dev libselinux1-dev libssl-dev)
if [[ "${1:-}" == "--test" ]]; then
  pkgs+=(qemu-system-x86 busybox-static cpio qemu-user qemu-user-binfmt g++-s390x-linux-gnu g++-i686-linux-gnu g++-aarch64-linux-gnu
         g++-mingw-w64-x86-64 wine wine64 wine-binfmt
         fio valgrind strace time clang-14 libclang-rt-14-dev gnuplot-nox
         man-db groff-base git sqlite3 stress-ng dbench fuse2fs python3 android-sdk-libsparse-utils fsverity)
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
if [[ "${1:-}" == "--test" ]]; then
  # The cross builds' s390x binaries (build-cross-s390x/) run directly, as
  # on the target: the kernel hands them to qemu-s390x (binfmt_misc), and
  # Debian's qemu-user finds their libraries under /etc/qemu-binfmt/s390x.
  # systemd registers the handler when it runs; without it (containers,
  # CI) it is registered here. i686 binaries run natively on x86-64.
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  bm=/proc/sys/fs/binfmt_misc
  [[ -e $bm/register ]] || $sudo mount -t binfmt_misc binfmt_misc "$bm" 2>/dev/null || true
  conf=/usr/lib/binfmt.d/qemu-s390x.conf
  if [[ -e $bm/register && -f $conf && ! -e $bm/qemu-s390x ]]; then
    $sudo sh -c "cat $conf > $bm/register" 2>/dev/null || true
  fi
  $sudo mkdir -p /etc/qemu-binfmt
  [[ -e /etc/qemu-binfmt/s390x ]] || $sudo ln -s /usr/s390x-linux-gnu /etc/qemu-binfmt/s390x
  # The Windows build's .exe files run directly too, through wine (Debian's
  # wine-binfmt registers it with update-binfmts; without it, here).
  if [[ -e $bm/register && ! -e $bm/DOSWin && ! -e $bm/wine && -x /usr/bin/wine ]]; then
    $sudo sh -c "echo ':DOSWin:M::MZ::/usr/bin/wine:' > $bm/register" 2>/dev/null || true
  fi
  if [[ -e $bm/DOSWin || -e $bm/wine ]]; then
    echo "setup: Windows .exe files run through wine (binfmt_misc)"
  else
    echo "setup: binfmt_misc not available: run Windows .exe files as wine BINARY"
  fi
  if [[ -e $bm/qemu-s390x ]]; then
    echo "setup: s390x binaries run through qemu-s390x (binfmt_misc)"
  else
    echo "setup: binfmt_misc not available: run s390x binaries as qemu-s390x -L /usr/s390x-linux-gnu BINARY"
  fi
fi
echo "setup: all dependencies present"
