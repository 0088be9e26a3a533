#!/usr/bin/env bash
# Cross-build f2fscore for big-endian s390x, 32-bit i686 and 64-bit ARM
# (aarch64) with Debian's
# cross compilers and run the unit tests under qemu-user.
#
#   scripts/cross-test.sh [s390x|i686|aarch64|all]     (default: all)
#
# Builds the library, f2fscore-mkfs and every unit-test executable in
# build-cross-<arch>/ beside this script's repository (optimised as the native
# build, without debug information: it only slows the build down), then runs the unit
# tests with ctest (CMAKE_CROSSCOMPILING_EMULATOR runs them under qemu).
# Installs missing Debian packages with apt-get (as root, or through sudo).
#
# Environment:
#   F2FSCORE_CROSS_JOBS        parallel build jobs (default 2)
#   F2FSCORE_CROSS_BUILD_ROOT  where build-cross-<arch>/ go (default: the repo)
#   F2FSCORE_CROSS_REFERENCE_MKFS  a native f2fscore-mkfs: the cross-built
#                              images must be byte-identical to its image
#   (F2FSCORE_REQUIRE_* and F2FSCORE_SHARED_DIR pass through to the tests.)
#
# Besides the unit tests, each arch's f2fscore-mkfs formats a 3 GiB sparse
# image file under qemu (offsets past 2 GiB on 32-bit hosts) with fixed
# uuid and time; with several arches the images must be byte-identical.
#
# Exit status: 0 when every requested arch built and passed its tests,
# 1 on any failure, 2 on usage errors.
set -uo pipefail

usage() {
  echo "usage: $0 [s390x|i686|aarch64|all]" >&2
  exit 2
}

[[ $# -le 1 ]] || usage
case "${1:-all}" in
  s390x) ARCHES=(s390x) ;;
  i686) ARCHES=(i686) ;;
  aarch64) ARCHES=(aarch64) ;;
  all) ARCHES=(s390x i686 aarch64) ;;
  -h|--help) echo "usage: $0 [s390x|i686|aarch64|all]"; exit 0 ;;
  *) usage ;;
esac

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
SRC_DIR=$(cd -- "$SCRIPT_DIR/.." && pwd)
BUILD_ROOT=${F2FSCORE_CROSS_BUILD_ROOT:-$SRC_DIR}
JOBS=${F2FSCORE_CROSS_JOBS:-2}

log() { printf '==> %s\n' "$*"; }

# --- Packages ---------------------------------------------------------------
# Never libboost-dev: it is Boost 1.74 and conflicts with libboost1.81-dev.
PACKAGES=(cmake qemu-user zstd libgtest-dev libboost1.81-dev libexpected-dev libcli11-dev)
for arch in "${ARCHES[@]}"; do
  PACKAGES+=("g++-$arch-linux-gnu")
done
command -v ninja >/dev/null 2>&1 || command -v make >/dev/null 2>&1 || PACKAGES+=(make)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "installing: ${missing[*]}"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo)
    else
      echo "error: missing packages (${missing[*]}) and not root" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! "${SUDO[@]}" apt-get update -q ||
     ! "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    echo "error: could not install ${missing[*]}" >&2
    exit 1
  fi
fi

# ccache, where installed, keeps rebuilds of an unchanged tree cheap.
LAUNCHER=()
command -v ccache >/dev/null 2>&1 && LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

if command -v ninja >/dev/null 2>&1; then
  GENERATOR=Ninja
else
  GENERATOR="Unix Makefiles"
fi

declare -A QEMU=([s390x]=qemu-s390x [i686]=qemu-i386 [aarch64]=qemu-aarch64)
declare -A RESULT CONF_T BUILD_T TEST_T TESTS SKIPPED IMAGE_SUM

now() { date +%s; }

# Runs one arch; sets RESULT[$arch] and the timings.
run_arch() {
  local arch=$1 triple="$1-linux-gnu"
  local bdir="$BUILD_ROOT/build-cross-$arch"
  local deps="$bdir/header-deps"
  local t0 t1 logf

  RESULT[$arch]="FAIL (setup)"
  CONF_T[$arch]=- BUILD_T[$arch]=- TEST_T[$arch]=- TESTS[$arch]=- SKIPPED[$arch]=- IMAGE_SUM[$arch]=-
  for tool in "$triple-g++" "${QEMU[$arch]}" zstd; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "error: $tool not found" >&2
      return 1
    fi
  done

  # Header-only dependencies staged as symlinks (no find_package when cross
  # compiling: the host's CMake packages are for x86-64).
  mkdir -p "$deps" || return 1
  local dep
  for dep in tl boost CLI nlohmann; do
    if [[ ! -d /usr/include/$dep ]]; then
      echo "error: /usr/include/$dep missing" >&2
      return 1
    fi
    ln -sfn "/usr/include/$dep" "$deps/$dep" || return 1
  done

  log "[$arch] configure $bdir"
  RESULT[$arch]="FAIL (configure)"
  t0=$(now)
  if ! cmake -S "$SRC_DIR" -B "$bdir" -G "$GENERATOR" \
      -DCMAKE_TOOLCHAIN_FILE="$SRC_DIR/cmake/toolchains/$triple.cmake" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
      -DF2FSCORE_HEADER_DEPS="$deps" \
      -DF2FSCORE_BUILD_TOOLS=ON -DF2FSCORE_BUILD_TESTS=ON -DF2FSCORE_BUILD_BENCH=OFF \
      "${LAUNCHER[@]}"; then
    return 1
  fi
  t1=$(now); CONF_T[$arch]=$((t1 - t0))

  # Every executable whose tests carry the label `unit` (those that do not
  # exist in this configuration are left out).
  local want=(f2fscore f2fscore-mkfs f2fscore_unit_tests f2fscore_corrupt_tests f2fscore_fsck_unit_tests
              f2fscore_fsck_mutation_tests f2fscore_meta_tests f2fscore_writer_tests f2fscore_writer_damage_tests
              f2fscore_writer_fsync_tests f2fscore_writer_ipu_tests f2fscore_writer_cache_tests
              f2fscore_writer_ns_tests f2fscore_writer_gc_tests f2fscore_writer_managers_tests f2fscore_stats_tests)
  local have targets=() t
  have=$(cmake --build "$bdir" --target help 2>/dev/null)
  for t in "${want[@]}"; do
    grep -qE "^(\.\.\. )?$t(:|$| )" <<<"$have" && targets+=("$t")
  done
  log "[$arch] build ${targets[*]} (-j$JOBS)"
  RESULT[$arch]="FAIL (build)"
  t0=$(now)
  if ! cmake --build "$bdir" -j "$JOBS" --target "${targets[@]}"; then
    return 1
  fi
  t1=$(now); BUILD_T[$arch]=$((t1 - t0))

  # The binaries must really be for the target (and mkfs must not have
  # linked the host's libblkid).
  local f
  for f in "$bdir/tools/mkfs/f2fscore-mkfs" "$bdir/tests/f2fscore_unit_tests"; do
    log "[$arch] ${f##*/}: $(file -b "$f" 2>/dev/null | cut -d, -f1-2 || echo "?")"
  done
  # f2fscore-mkfs on a sparse 3 GiB image file (past 2 GiB: 64-bit file
  # offsets on i686), reproducible thanks to the fixed uuid and time.
  RESULT[$arch]="FAIL (mkfs)"
  local img="$bdir/cross-mkfs.img"
  rm -f "$img"
  if ! truncate -s 3G "$img" ||
     ! "${QEMU[$arch]}" -L "/usr/$triple" "$bdir/tools/mkfs/f2fscore-mkfs" -q \
         -l cross -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -T 1700000000 \
         -O extra_attr,inode_checksum,sb_checksum,quota,lost_found,inode_crtime,flexible_inline_xattr \
         "$img"; then
    echo "error: f2fscore-mkfs fails under ${QEMU[$arch]}" >&2
    rm -f "$img"
    return 1
  fi
  IMAGE_SUM[$arch]=$(cksum <"$img" | cut -d" " -f1)
  rm -f "$img"
  log "[$arch] f2fscore-mkfs under ${QEMU[$arch]}: 3 GiB image, cksum ${IMAGE_SUM[$arch]}"

  log "[$arch] unit tests under ${QEMU[$arch]}"
  RESULT[$arch]="FAIL (tests)"
  logf="$bdir/ctest-unit.log"
  t0=$(now)
  ctest --test-dir "$bdir" -L unit --output-on-failure --timeout 900 -j "$JOBS" 2>&1 | tee "$logf"
  local rc=${PIPESTATUS[0]}
  t1=$(now); TEST_T[$arch]=$((t1 - t0))
  TESTS[$arch]=$(grep -E 'tests passed, [0-9]+ tests? failed out of' "$logf" | tail -n1 || true)
  [[ -n ${TESTS[$arch]} ]] || TESTS[$arch]="no ctest summary"
  SKIPPED[$arch]=$(grep -c '(Skipped)$' "$logf" || true)
  # ctest with no tests exits 0: treat "no tests" as failure.
  if ((rc != 0)); then
    return 1
  fi
  if ! grep -qE 'out of [1-9][0-9]*$' "$logf"; then
    RESULT[$arch]="FAIL (no tests ran)"
    return 1
  fi
  RESULT[$arch]=PASS
  return 0
}

failed=0
for arch in "${ARCHES[@]}"; do
  run_arch "$arch" || failed=1
done

# The same image from every arch (and from a native mkfs, if given).
image_check="-"
if [[ -n ${F2FSCORE_CROSS_REFERENCE_MKFS:-} ]]; then
  ref_img="$BUILD_ROOT/build-cross-reference.img"
  rm -f "$ref_img"
  if truncate -s 3G "$ref_img" &&
     "$F2FSCORE_CROSS_REFERENCE_MKFS" -q -l cross -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -T 1700000000 \
       -O extra_attr,inode_checksum,sb_checksum,quota,lost_found,inode_crtime,flexible_inline_xattr \
       "$ref_img"; then
    IMAGE_SUM[native]=$(cksum <"$ref_img" | cut -d" " -f1)
  else
    IMAGE_SUM[native]="(reference mkfs failed)"
  fi
  rm -f "$ref_img"
fi
declare -A seen=()
made=()
for key in "${ARCHES[@]}" native; do
  [[ -n ${IMAGE_SUM[$key]:-} && ${IMAGE_SUM[$key]} != - ]] || continue
  seen[${IMAGE_SUM[$key]}]=1
  made+=("$key")
done
if ((${#seen[@]} > 1)); then
  image_check="MISMATCH: ${made[*]} wrote different images"
  failed=1
elif ((${#made[@]} > 1)); then
  image_check="identical (${made[*]})"
elif ((${#made[@]} == 1)); then
  image_check="only ${made[*]} (nothing to compare with)"
fi

echo
echo "======================== cross-test summary ========================"
printf '%-7s %-22s %9s %7s %7s  %-18s %s\n' arch result configure build tests "mkfs cksum" "ctest"
for arch in "${ARCHES[@]}"; do
  skipped=""
  [[ ${SKIPPED[$arch]} == - || ${SKIPPED[$arch]} == 0 ]] || skipped=" (${SKIPPED[$arch]} skipped)"
  printf '%-7s %-22s %8ss %6ss %6ss  %-18s %s\n' "$arch" "${RESULT[$arch]}" \
    "${CONF_T[$arch]}" "${BUILD_T[$arch]}" "${TEST_T[$arch]}" "${IMAGE_SUM[$arch]}" "${TESTS[$arch]}$skipped"
done
[[ -z ${IMAGE_SUM[native]:-} ]] || printf '%-7s %-22s %9s %7s %7s  %-18s\n' native reference "" "" "" "${IMAGE_SUM[native]}"
echo "mkfs images across arches: $image_check"
echo "===================================================================="
if ((failed)); then
  echo "cross-test: FAILED"
  exit 1
fi
echo "cross-test: all passed"
exit 0
