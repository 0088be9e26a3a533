#!/usr/bin/env bash
# Configures and builds f2fscore into build/ (Release with debug info), with
# the shared library beside the static one (F2FSCORE_SHARED: one more link,
# which the install test checks).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${F2FSCORE_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DF2FSCORE_SHARED=ON "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
