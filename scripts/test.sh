#!/usr/bin/env bash
# Installs everything, builds, and runs every test: unit, interop with
# f2fs-tools, the installed-package example, the Linux oracle, the
# sanitizer build, and the big-endian and 32-bit cross builds under qemu-user.
# In CI (CI=true) a test that lacks what it needs fails instead of skipping.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --test || exit 1
if [[ "${CI:-}" == "true" || "${F2FSCORE_STRICT:-}" == "1" ]]; then
  export F2FSCORE_REQUIRE_ORACLE=1 F2FSCORE_REQUIRE_FSCK=1 F2FSCORE_REQUIRE_SHARED=1 F2FSCORE_REQUIRE_MAN=1
fi
status=0
"$root/scripts/build.sh" || exit 1

echo "== sanitizers (ASan + UBSan): unit tests, the checker on seeded mutations"
asan="$root/build-asan"
cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DF2FSCORE_SANITIZE=ON >/dev/null &&
  cmake --build "$asan" -j "$(nproc)" --target f2fscore_unit_tests f2fscore_fsck_mutation_tests >/dev/null &&
  "$asan/tests/f2fscore_unit_tests" --gtest_brief=1 &&
  "$asan/tests/fsck/f2fscore_fsck_mutation_tests" --gtest_brief=1 || status=1

echo "== fuzz: open and walk, and the checker (libFuzzer, ASan + UBSan)"
"$root/scripts/fuzz.sh" "${F2FSCORE_FUZZ_SECONDS:-60}" || status=1

echo "== cross builds: s390x (big-endian) and i686 (32-bit) under qemu-user"
"$root/scripts/cross-test.sh" all || status=1

echo "== ctest: unit, interop, install, oracle"
(cd "$root/build" && ctest --output-on-failure -j 2 --timeout 1800) || status=1
exit $status
