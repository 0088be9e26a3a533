#!/usr/bin/env bash
# Cross-build f2fscore for big-endian s390x, 32-bit i686 and 64-bit ARM
# (aarch64) with Debian's cross compilers and run the unit tests under
# qemu-user; and for 64-bit Windows with Debian's mingw-w64 (the posix
# threads variant), its unit tests and tools under wine.
#
#   scripts/cross-test.sh [s390x|i686|aarch64|windows|all]     (default: all)
#
# Builds the library, f2fscore-mkfs and every unit-test executable in
# build-cross-<arch>/ beside this script's repository (optimised as the native
# build, without debug information: it only slows the build down; the test
# sources at -O1), then runs the unit
# tests with ctest (CMAKE_CROSSCOMPILING_EMULATOR runs them under qemu or
# wine). The Windows build decompresses the zstd fixtures at build time with
# the host's zstd (tests/unzstd_fixtures.cmake): Windows has no zstd tool.
# Installs missing Debian packages with apt-get (as root, or through sudo).
#
# Environment:
#   F2FSCORE_CROSS_JOBS        parallel build jobs (default 2)
#   F2FSCORE_CROSS_BUILD_ROOT  where build-cross-<arch>/ go (default: the repo)
#   F2FSCORE_CROSS_HEADER_DEPS where the header-only dependencies are linked
#                              (default: build-cross-<arch>/header-deps)
#   F2FSCORE_CROSS_TEST_SAMPLE one case in N of the long seeded suites under
#                              qemu-user (default 4; 1 runs them all; wine
#                              runs them all: it is not emulated)
#   F2FSCORE_CROSS_REFERENCE_MKFS  a native f2fscore-mkfs: the cross-built
#                              images must be byte-identical to its image
#   (F2FSCORE_REQUIRE_* and F2FSCORE_SHARED_DIR pass through to the tests.)
#
# Besides the unit tests, each arch's f2fscore-mkfs formats a 3 GiB sparse
# image file under qemu (offsets past 2 GiB on 32-bit hosts) with fixed
# uuid and time; with several arches the images must be byte-identical.
#
# Casefolding: no target has ICU (Debian has no mingw-w64 build of it, and
# its multiarch packages cannot be installed beside the host's), so the
# Unicode facts table is generated once from the host's ICU
# (tools/gen/unicode_table.cpp, built with the host compiler against
# libicu-dev, into build-cross-unicode/) and compiled into every arch
# (-DF2FSCORE_CASEFOLD_TABLE); the casefold tests run there.
#
# On windows, after the mkfs image (tools_windows below), before its unit
# tests: the native
# fsck.f2fs -f calls the mkfs.exe image clean; f2fscore-fsck.exe and
# f2fscore-dump.exe info read it (dump info equal to the native tool's when
# F2FSCORE_CROSS_REFERENCE_MKFS names a native build's mkfs, whose build
# directory gives dump too); f2fscore-dump.exe extracts each Linux-made
# image of ../shared/images/syzkaller, and what it wrote (files' sizes and
# sha256, directories, symlinks through .f2fscore-links) must equal what
# Linux reads (seed_N.linux-manifest; scripts/compare-extract.py).
#
# Exit status: 0 when every requested arch built and passed its tests,
# 1 on any failure, 2 on usage errors.
set -uo pipefail

usage() {
  echo "usage: $0 [s390x|i686|aarch64|windows|all]" >&2
  exit 2
}

[[ $# -le 1 ]] || usage
case "${1:-all}" in
  s390x) ARCHES=(s390x) ;;
  i686) ARCHES=(i686) ;;
  aarch64) ARCHES=(aarch64) ;;
  windows) ARCHES=(windows) ;;
  all) ARCHES=(s390x i686 aarch64 windows) ;;
  -h|--help) echo "usage: $0 [s390x|i686|aarch64|windows|all]"; exit 0 ;;
  *) usage ;;
esac

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
SRC_DIR=$(cd -- "$SCRIPT_DIR/.." && pwd)
BUILD_ROOT=${F2FSCORE_CROSS_BUILD_ROOT:-$SRC_DIR}
JOBS=${F2FSCORE_CROSS_JOBS:-2}

log() { printf '==> %s\n' "$*"; }

# --- Packages ---------------------------------------------------------------
# Never libboost-dev: it is Boost 1.74 and conflicts with libboost1.81-dev.
PACKAGES=(cmake qemu-user zstd dpkg-dev libgtest-dev libboost1.81-dev libexpected-dev libcli11-dev g++ libicu-dev)
for arch in "${ARCHES[@]}"; do
  if [[ $arch == windows ]]; then
    PACKAGES+=(g++-mingw-w64-x86-64 wine wine64 f2fs-tools python3)
  else
    PACKAGES+=("g++-$arch-linux-gnu")
  fi
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

declare -A QEMU=([s390x]=qemu-s390x [i686]=qemu-i386 [aarch64]=qemu-aarch64 [windows]=wine)
declare -A RESULT CONF_T BUILD_T TEST_T TESTS SKIPPED IMAGE_SUM CODECS

now() { date +%s; }

# wine with one second run when its client lost the wineserver connection
# ("wine client error:0: recvmsg: Connection reset by peer", printed by wine
# itself before or while the program runs; it failed the tools steps of a CI
# run and one unit test of a local one). The wineserver is started again
# (persistent) before the second run; both runs' standard error is kept.
wine() {
  local err rc
  err=$(mktemp) || return 1
  command wine "$@" 2>"$err"
  rc=$?
  cat "$err" >&2
  if ((rc != 0)) && grep -q "wine client error" "$err"; then
    echo "cross-test: wine lost its wineserver (exit $rc); running again: $*" >&2
    wineserver -p </dev/null >/dev/null 2>&1
    command wine "$@" 2>"$err"
    rc=$?
    cat "$err" >&2
  fi
  rm -f "$err"
  return "$rc"
}

# The compression codecs (lz4, zstd, lzo2) for each target, built here from
# Debian's source packages (apt-get source, from deb-src lines added beside
# the release's deb lines) with the target's cross compiler, as static
# libraries, into build-cross-<arch>/codecs/. Debian packages these
# libraries for no mingw-w64 target, and its multiarch packages of the Linux
# targets cannot be installed beside the host's when a security update of
# one has no build for the other; the same sources serve every target. A
# failure leaves that target decoding lzo-rle only (the summary's codecs
# column says which it has); the tests of the missing codecs skip.
codec_sources() {  # prints the directory holding the unpacked sources
  local d="$BUILD_ROOT/build-cross-codec-src" SUDO=() f
  echo "$d"
  [[ -d $(echo "$d"/lz4-*/lib) && -d $(echo "$d"/libzstd-*/lib) && -d $(echo "$d"/lzo2-*/src) ]] && return 0
  [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  if ! apt-cache showsrc lz4 2>/dev/null | grep -q '^Package: lz4'; then
    for f in /etc/apt/sources.list.d/*.sources; do
      [[ $f != *-src.sources ]] && grep -q '^Types: deb$' "$f" || continue
      sed 's/^Types: deb$/Types: deb-src/' "$f" | "${SUDO[@]}" tee "${f%.sources}-src.sources" >/dev/null
    done
    if [[ -f /etc/apt/sources.list ]] && grep -q '^deb ' /etc/apt/sources.list; then
      sed -n 's/^deb /deb-src /p' /etc/apt/sources.list | "${SUDO[@]}" tee /etc/apt/sources.list.d/f2fscore-src.list >/dev/null
    fi
    "${SUDO[@]}" apt-get update -q >/dev/null || return 1
  fi
  rm -rf "$d" && mkdir -p "$d" || return 1
  # The newest version first (security updates); the release's where a
  # mirror lacks the update's sources.
  (cd "$d" && { apt-get source -q lz4 libzstd lzo2 >/dev/null 2>&1 ||
                apt-get source -q -t "$(. /etc/os-release && echo "$VERSION_CODENAME")" lz4 libzstd lzo2 >/dev/null; })
}
build_codecs() {  # ARCH TRIPLE: builds into $(codec_dir ARCH)
  local out src cc="$2-gcc" ar="$2-ar"
  [[ $1 != windows ]] || cc=$2-gcc-posix
  out=$(codec_dir "$1")
  [[ -e $out/lib/liblz4.a && -e $out/lib/libzstd.a && -e $out/lib/liblzo2.a ]] && return 0
  src=$(codec_sources) || return 1
  rm -rf "$out" && mkdir -p "$out/include" "$out/lib" "$out/obj/lz4" "$out/obj/zstd" "$out/obj/lzo" || return 1
  # Each library's sources compiled out of tree (one source tree serves
  # every target).
  local s
  s=$(echo "$src"/lz4-*/lib)
  (cd "$out/obj/lz4" && compile_all "$cc -O2" "$s"/lz4.c "$s"/lz4hc.c "$s"/lz4frame.c "$s"/xxhash.c &&
     $ar rcs "$out/lib/liblz4.a" ./*.o) &&
    cp "$s/lz4.h" "$s/lz4hc.h" "$s/lz4frame.h" "$out/include/" || return 1
  s=$(echo "$src"/libzstd-*/lib)
  (cd "$out/obj/zstd" && compile_all "$cc -O2 -I$s -I$s/common -DZSTD_LEGACY_SUPPORT=0 -DZSTD_DISABLE_ASM" \
     "$s"/common/*.c "$s"/compress/*.c "$s"/decompress/*.c && $ar rcs "$out/lib/libzstd.a" ./*.o) &&
    cp "$s/zstd.h" "$s/zstd_errors.h" "$out/include/" || return 1
  s=$(echo "$src"/lzo2-*)
  (cd "$out/obj/lzo" && compile_all "$cc -O2 -I$s/include -I$s -I$s/src" "$s"/src/*.c &&
     $ar rcs "$out/lib/liblzo2.a" ./*.o) &&
    cp -r "$s/include/lzo" "$out/include/" || return 1
  rm -rf "$out/obj"
  log "[$1] codecs built from Debian's sources: $(cd "$src" && ls -d -- */ | tr -d / | tr '\n' ' ')"
}
codec_dir() { echo "$BUILD_ROOT/build-cross-$1/codecs"; }
# compile_all "CC FLAGS" FILE...: FILE.o in the current directory, $JOBS at a
# time (the source paths hold no blanks).
compile_all() {
  local cmd=$1
  shift
  printf '%s\n' "$@" | xargs -P "$JOBS" -n 1 $cmd -c
}

# The Unicode facts table of casefolding, from the host's ICU: sets
# UNICODE_TABLE (and UNICODE_NOTE for the summary). Generated again when
# the generator's source is newer than the table.
UNICODE_TABLE="" UNICODE_NOTE=-
unicode_table() {
  local d="$BUILD_ROOT/build-cross-unicode" gen="$SRC_DIR/tools/gen/unicode_table.cpp" out
  local table="$d/f2fscore_unicode_table.inc"
  mkdir -p "$d" || return 1
  if [[ ! -s $table || $gen -nt $table ]]; then
    rm -f "$table"
    c++ -std=c++20 -O1 "$gen" -o "$d/f2fscore-gen-unicode-table" -licuuc || return 1
    out=$("$d/f2fscore-gen-unicode-table" "$table") || return 1
    log "$out"
  fi
  UNICODE_TABLE=$table
  UNICODE_NOTE="$(head -1 "$table" | sed -n 's/.*from \(ICU [^)]*)\).*/\1/p'), $(tail -1 "$table" | sed 's|^// ||')"
}

# Runs one arch; sets RESULT[$arch] and the timings.
run_arch() {
  local arch=$1 triple="$1-linux-gnu" cxx="$1-linux-gnu-g++" exe=""
  local bdir="$BUILD_ROOT/build-cross-$arch"
  local deps=${F2FSCORE_CROSS_HEADER_DEPS:-$bdir/header-deps}
  local t0 t1 logf
  local -a run
  if [[ $arch == windows ]]; then
    triple=x86_64-w64-mingw32 cxx=x86_64-w64-mingw32-g++-posix exe=.exe
    run=(wine)
    # A wine prefix of the build's own, made at the first run; one
    # wineserver kept for the whole run (each test is a process).
    export WINEPREFIX="$bdir/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  else
    run=("${QEMU[$arch]}" -L "/usr/$triple")
  fi

  RESULT[$arch]="FAIL (setup)"
  CONF_T[$arch]=- BUILD_T[$arch]=- TEST_T[$arch]=- TESTS[$arch]=- SKIPPED[$arch]=- IMAGE_SUM[$arch]=-
  for tool in "$cxx" "${QEMU[$arch]}" zstd; do
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
  # The codecs found for the target: -DF2FSCORE_<C>_LIBRARY/_INCLUDE_DIR.
  local codec_args=() spec c lib hdr a
  CODECS[$arch]=""
  if ! build_codecs "$arch" "$triple"; then
    echo "warning: the codecs for $arch could not be built from Debian's sources: lzo-rle only" >&2
  fi
  for spec in LZ4:lz4:lz4.h ZSTD:zstd:zstd.h LZO:lzo2:lzo; do
    IFS=: read -r c lib hdr <<<"$spec"
    a=$(codec_dir "$arch")/lib/lib$lib.a
    [[ -e $a && -e $(codec_dir "$arch")/include/$hdr ]] || continue
    codec_args+=("-DF2FSCORE_${c}_LIBRARY=$a" "-DF2FSCORE_${c}_INCLUDE_DIR=$(codec_dir "$arch")/include")
    CODECS[$arch]+="${CODECS[$arch]:+,}$lib"
  done
  log "[$arch] codecs: ${CODECS[$arch]:-none} (lzo-rle always)"

  log "[$arch] configure $bdir"
  RESULT[$arch]="FAIL (configure)"
  t0=$(now)
  if ! cmake -S "$SRC_DIR" -B "$bdir" -G "$GENERATOR" \
      -DCMAKE_TOOLCHAIN_FILE="$SRC_DIR/cmake/toolchains/$triple.cmake" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
      -DF2FSCORE_HEADER_DEPS="$deps" -DF2FSCORE_TEST_COMPILE_OPTIONS=-O1 \
      -DF2FSCORE_BUILD_TOOLS=ON -DF2FSCORE_BUILD_TESTS=ON -DF2FSCORE_BUILD_BENCH=OFF \
      -DF2FSCORE_CASEFOLD_TABLE="$UNICODE_TABLE" "${codec_args[@]}" "${LAUNCHER[@]}"; then
    return 1
  fi
  t1=$(now); CONF_T[$arch]=$((t1 - t0))

  # Every executable whose tests carry the label `unit` (those that do not
  # exist in this configuration are left out).
  local want=(f2fscore f2fscore-mkfs f2fscore_unit_tests f2fscore_corrupt_tests f2fscore_fsck_unit_tests
              f2fscore_fsck_mutation_tests f2fscore_meta_tests f2fscore_writer_tests f2fscore_writer_damage_tests
              f2fscore_writer_fsync_tests f2fscore_writer_ipu_tests f2fscore_writer_cache_tests
              f2fscore_writer_ns_tests f2fscore_writer_gc_tests f2fscore_writer_managers_tests f2fscore_stats_tests
              f2fscore_writer_casefold_tests f2fscore_writer_quota_tests f2fscore_handle_tests
              f2fscore_test_devices_tests)
  [[ $arch != windows ]] || want+=(f2fscore-fsck f2fscore-dump f2fscore-sload f2fscore-io)  # tools_windows
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
  for f in "$bdir/tools/mkfs/f2fscore-mkfs$exe" "$bdir/tests/f2fscore_unit_tests$exe"; do
    [[ -e $f ]] || continue
    log "[$arch] ${f##*/}: $(file -b "$f" 2>/dev/null | cut -d, -f1-2 || echo "?")"
  done
  # f2fscore-mkfs on a sparse 3 GiB image file (past 2 GiB: 64-bit file
  # offsets on i686), reproducible thanks to the fixed uuid and time.
  RESULT[$arch]="FAIL (mkfs)"
  local img="$bdir/cross-mkfs.img" img_arg="$bdir/cross-mkfs.img"
  [[ $arch != windows ]] || img_arg="Z:$img"  # wine's Z: is the host's /
  rm -f "$img"
  if [[ $arch == windows ]]; then
    # One wineserver, persistent until `wineserver -k` at the end, and the
    # prefix's services started now with their output to /dev/null (a
    # service started by a test would hold ctest's output pipe open).
    wineserver -p </dev/null >/dev/null 2>&1
    wine wineboot </dev/null >/dev/null 2>&1
    log "[$arch] wine prefix $WINEPREFIX"
  fi
  if ! truncate -s 3G "$img" ||
     ! "${run[@]}" "$bdir/tools/mkfs/f2fscore-mkfs$exe" -q \
         -l cross -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -T 1700000000 \
         -O extra_attr,inode_checksum,sb_checksum,quota,lost_found,inode_crtime,flexible_inline_xattr \
         "$img_arg"; then
    echo "error: f2fscore-mkfs fails under ${QEMU[$arch]}" >&2
    rm -f "$img"
    return 1
  fi
  IMAGE_SUM[$arch]=$(cksum <"$img" | cut -d" " -f1)
  if [[ $arch == windows ]]; then
    RESULT[$arch]="FAIL (tools)"
    t0=$(now)
    if ! tools_windows "$bdir" "$img"; then
      rm -f "$img"
      wineserver -k 2>/dev/null
      return 1
    fi
    t1=$(now); TOOLS_T=$((t1 - t0))
  fi
  rm -f "$img"
  log "[$arch] f2fscore-mkfs under ${QEMU[$arch]}: 3 GiB image, cksum ${IMAGE_SUM[$arch]}"

  log "[$arch] unit tests under ${QEMU[$arch]}"
  RESULT[$arch]="FAIL (tests)"
  logf="$bdir/ctest-unit.log"
  t0=$(now)
  local sample=1 repeat=()
  [[ $arch == windows ]] || sample=${F2FSCORE_CROSS_TEST_SAMPLE:-4}
  # Wine's client can lose its wineserver connection as a process starts
  # ("wine client error:0: recvmsg: Connection reset by peer", which failed
  # one test of a local CI run): a failed test gets a second run there, both
  # in the log.
  [[ $arch != windows ]] || repeat=(--repeat until-pass:2)
  log "[$arch] long seeded suites: one case in $sample (F2FSCORE_TEST_SAMPLE)"
  F2FSCORE_TEST_SAMPLE=$sample \
    ctest --test-dir "$bdir" -L unit --output-on-failure --timeout 900 -j "$JOBS" "${repeat[@]}" 2>&1 | tee "$logf"
  local rc=${PIPESTATUS[0]}
  t1=$(now); TEST_T[$arch]=$((t1 - t0))
  TESTS[$arch]=$(grep -E 'tests passed, [0-9]+ tests? failed out of' "$logf" | tail -n1 || true)
  [[ -n ${TESTS[$arch]} ]] || TESTS[$arch]="no ctest summary"
  SKIPPED[$arch]=$(grep -c '(Skipped)$' "$logf" || true)
  [[ $arch != windows ]] || wineserver -k 2>/dev/null
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

# The Windows tools under wine, on the mkfs image $2 of build dir $1.
TOOLS_T=-
TOOLS_NOTE=-
tools_windows() {
  local bdir=$1 img=$2 out="$1/tools-test" ref_build=""
  local fsck="$bdir/tools/fsck/f2fscore-fsck.exe" dump="$bdir/tools/dump/f2fscore-dump.exe"
  local mkfs="$bdir/tools/mkfs/f2fscore-mkfs.exe" sload="$bdir/tools/sload/f2fscore-sload.exe"
  local io="$bdir/tools/io/f2fscore-io.exe"
  [[ -z ${F2FSCORE_CROSS_REFERENCE_MKFS:-} ]] ||
    ref_build=$(cd "$(dirname "$F2FSCORE_CROSS_REFERENCE_MKFS")/../.." && pwd)
  rm -rf "$out" && mkdir -p "$out" || return 1
  # The image of the native mkfs with the same options: the same bytes but
  # the superblocks' version and init_version (the kernel's /proc/version
  # on Linux, "f2fscore VERSION" on Windows) and the superblock checksums.
  if [[ -n $ref_build ]]; then
    local ref_img="$out/native-mkfs.img" dump_native="$ref_build/tools/dump/f2fscore-dump"
    truncate -s 3G "$ref_img" &&
      "$F2FSCORE_CROSS_REFERENCE_MKFS" -q -l cross -U 0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5 -T 1700000000 \
        -O extra_attr,inode_checksum,sb_checksum,quota,lost_found,inode_crtime,flexible_inline_xattr "$ref_img" ||
      return 1
    if ! cmp -i 8192 "$img" "$ref_img" ||
       ! diff <("$dump_native" "$ref_img" sb | grep -v '^\(version\|init_version\|crc\) ') \
              <("$dump_native" "$img" sb | grep -v '^\(version\|init_version\|crc\) '); then
      echo "error: the f2fscore-mkfs.exe image differs from the native f2fscore-mkfs image" >&2
      rm -f "$ref_img"
      return 1
    fi
    rm -f "$ref_img"
    log "[windows] f2fscore-mkfs.exe image: the native image's bytes but the superblocks' version strings"
  fi
  # fsck.f2fs on a copy: it may rewrite the checkpoint (nat_bits) of what it checks.
  cp --sparse=always "$img" "$out/fsck-copy.img" || return 1
  if ! fsck.f2fs -f "$out/fsck-copy.img" >"$out/fsck.f2fs.txt" 2>&1; then
    echo "error: fsck.f2fs -f finds the f2fscore-mkfs.exe image unclean:" >&2
    cat "$out/fsck.f2fs.txt" >&2
    return 1
  fi
  rm -f "$out/fsck-copy.img"
  log "[windows] fsck.f2fs -f: the f2fscore-mkfs.exe image is clean"
  if ! wine "$fsck" -n -f "Z:$img" >"$out/fsck.txt" 2>&1; then
    echo "error: f2fscore-fsck.exe -n -f fails on the image:" >&2
    cat "$out/fsck.txt" >&2
    return 1
  fi
  # A path starting with '/' is an operand, not a Windows-style option
  # (CLI11's "/name" options are off): mkfs, fsck and dump with "$img" as typed.
  local slash="$out/slash.img"
  truncate -s 1G "$slash" || return 1
  local -a cmds=("$mkfs|-f|-q|$slash" "$fsck|-n|-f|$slash" "$dump|$slash|info")
  for c in "${cmds[@]}"; do
    local -a argv
    IFS='|' read -r -a argv <<<"$c"
    if ! wine "${argv[@]}" >"$out/slash.txt" 2>&1; then
      echo "error: ${argv[*]} under wine fails on a /-rooted path:" >&2
      cat "$out/slash.txt" >&2
      return 1
    fi
  done
  rm -f "$slash"
  if ! wine "$dump" "Z:$img" info >"$out/info.txt" 2>&1; then
    echo "error: f2fscore-dump.exe info fails:" >&2
    cat "$out/info.txt" >&2
    return 1
  fi
  if [[ -n $ref_build && -x $ref_build/tools/dump/f2fscore-dump ]]; then
    "$ref_build/tools/dump/f2fscore-dump" "$img" info >"$out/info.native.txt" 2>&1
    sed "s|Z:$img|$img|" "$out/info.txt" >"$out/info.unix-path.txt"  # the path as given to each
    if ! diff -u "$out/info.native.txt" "$out/info.unix-path.txt" >"$out/info.diff"; then
      echo "error: f2fscore-dump.exe info differs from the native f2fscore-dump info:" >&2
      head -40 "$out/info.diff" >&2
      return 1
    fi
    log "[windows] f2fscore-dump.exe info: the same as the native build's"
  fi
  log "[windows] f2fscore-fsck.exe -n -f and f2fscore-dump.exe info pass"
  # f2fscore-io.exe: a raw write onto the F2FS image is refused without
  # --force and writes nothing; a raw read runs; `fs` runs a workload
  # through the writer, which fsck.f2fs -f finds clean.
  local ioimg="$out/io.img" before
  truncate -s 256M "$ioimg" && wine "$mkfs" -q "Z:$ioimg" </dev/null >"$out/io.txt" 2>&1 || return 1
  before=$(cksum <"$ioimg")
  wine "$io" --rw write --size 1M --bs 4k "Z:$ioimg" </dev/null >>"$out/io.txt" 2>&1
  local rc=$?
  if ((rc != 1)) || [[ $(cksum <"$ioimg") != "$before" ]] || ! grep -q "holds an F2FS volume" "$out/io.txt"; then
    echo "error: f2fscore-io.exe --rw write onto an F2FS image: exit $rc, not refused with nothing written:" >&2
    cat "$out/io.txt" >&2
    return 1
  fi
  if ! wine "$io" --rw randread --size 16M --bs 4k --runtime 1 "Z:$ioimg" </dev/null >>"$out/io.txt" 2>&1 ||
     ! wine "$io" fs "Z:$ioimg" --workload smallfiles </dev/null >>"$out/io.txt" 2>&1; then
    echo "error: f2fscore-io.exe randread or fs --workload smallfiles fails:" >&2
    cat "$out/io.txt" >&2
    return 1
  fi
  # Raw random writes then reads of a plain image file with 32 requests in
  # flight, through each Windows backend (overlapped I/O, the default, and
  # the synchronous one), direct and buffered: the backend used is the one asked.
  local rawimg="$out/raw.img" b mode
  for b in overlapped sync; do
    for mode in --direct --buffered; do
      rm -f "$rawimg"
      if ! wine "$io" --rw randwrite --bs 4k --iodepth 32 --size 16M --create --backend "$b" "$mode" "Z:$rawimg" \
             </dev/null >>"$out/io.txt" 2>&1 ||
         ! wine "$io" --rw randread --bs 4k --iodepth 32 --size 16M --runtime 1 --backend "$b" "$mode" --json \
             "Z:$rawimg" </dev/null >"$out/io.$b.json" 2>>"$out/io.txt" ||
         ! grep -q "\"backend\": *\"$b\"" "$out/io.$b.json"; then
        echo "error: f2fscore-io.exe --iodepth 32 --backend $b $mode raw writes or reads of an image file fail:" >&2
        cat "$out/io.txt" "$out/io.$b.json" >&2
        return 1
      fi
    done
  done
  rm -f "$rawimg"
  if ! fsck.f2fs -f "$ioimg" >"$out/io.fsck.txt" 2>&1 ||
     grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' "$out/io.fsck.txt"; then
    echo "error: fsck.f2fs -f finds the image f2fscore-io.exe fs wrote unclean:" >&2
    cat "$out/io.fsck.txt" >&2
    return 1
  fi
  rm -f "$ioimg"
  log "[windows] f2fscore-io.exe: raw write onto F2FS refused, randread and fs smallfiles run, fsck.f2fs clean; raw randwrite and randread at depth 32 through the overlapped and sync backends"
  # Extraction of the Linux-made images against what Linux reads.
  local shared=${F2FSCORE_SHARED_DIR:-$SRC_DIR/../shared}
  local dir="$shared/images/syzkaller" n=0 z base
  if [[ ! -d $dir ]]; then
    echo "warning: $dir missing: extraction not tested" >&2
    TOOLS_NOTE="extraction not tested (no $dir)"
    return 0
  fi
  for z in "$dir"/seed_*.img.zst; do
    base=${z##*/}
    base=${base%.img.zst}
    local x="$out/$base.img" dest="$out/$base.out"
    zstd -q -d -f "$z" -o "$x" || return 1
    mkdir -p "$dest"
    wine "$dump" "Z:$x" extract / "Z:$dest" >"$out/$base.extract.txt" 2>&1
    if ! python3 "$SCRIPT_DIR/compare-extract.py" "$dir/$base.linux-manifest" "$dest" \
         "$out/$base.extract.txt" >"$out/$base.compare.txt" 2>&1; then
      echo "error: $base: what f2fscore-dump.exe extracted differs from what Linux reads:" >&2
      cat "$out/$base.compare.txt" >&2
      return 1
    fi
    rm -f "$x"
    # Copied in again by f2fscore-mkfs.exe --populate (the mapping read
    # back) and extracted again: still what Linux reads; fsck.f2fs clean.
    local rt="$out/$base.rt.img" rtdest="$out/$base.rt.out"
    rm -rf "$rtdest" && mkdir -p "$rtdest" && truncate -s 128M "$rt" || return 1
    if ! wine "$mkfs" -q -f --populate "Z:$dest" "Z:$rt" </dev/null >"$out/$base.rt.txt" 2>&1; then
      echo "error: $base: f2fscore-mkfs.exe --populate of the extracted tree fails:" >&2
      cat "$out/$base.rt.txt" >&2
      return 1
    fi
    wine "$dump" "Z:$rt" extract / "Z:$rtdest" >"$out/$base.rt.extract.txt" 2>&1
    if ! python3 "$SCRIPT_DIR/compare-extract.py" "$dir/$base.linux-manifest" "$rtdest" \
         "$out/$base.extract.txt" >"$out/$base.rt.compare.txt" 2>&1; then
      echo "error: $base: extracted, copied in by f2fscore-mkfs.exe --populate and extracted again, it differs from what Linux reads:" >&2
      cat "$out/$base.rt.compare.txt" >&2
      return 1
    fi
    if ! fsck.f2fs -f "$rt" >"$out/$base.rt.fsck.txt" 2>&1 ||
       grep -qE '\[Fail\]|\[ASSERT\]|\[FIX\]|Fixing|Reconnect|Move curseg' "$out/$base.rt.fsck.txt"; then
      echo "error: $base: fsck.f2fs -f finds the f2fscore-mkfs.exe --populate image unclean:" >&2
      cat "$out/$base.rt.fsck.txt" >&2
      return 1
    fi
    rm -rf "$rt" "$rtdest"
    n=$((n + 1))
  done
  # Names Windows forbids, a reserved device name, '%', a trailing dot and
  # space, bytes that are not UTF-8, a symlink: a host tree copied in by the
  # native mkfs --populate, extracted by dump.exe, compared with the tree.
  local names_note=""
  if [[ -n $ref_build ]]; then
    local src="$out/names-src" nimg="$out/names.img" ndest="$out/names.out"
    rm -rf "$src" "$ndest" && mkdir -p "$src/d<>" "$ndest" || return 1
    printf 1 >"$src/a:b"; printf 2 >"$src/q?"; printf 3 >"$src/CON"; printf 4 >"$src/con.txt"
    printf 5 >"$src/trail."; printf 6 >"$src/trail "; printf 7 >"$src/pct%41"; printf 8 >"$src/$(printf 'tab\tname')"
    printf 9 >"$src/$(printf 'bad\377')"; printf 10 >"$src/d<>/x|y"; printf 11 >"$src/.f2fscore-links"
    ln -s 'a:b' "$src/ln"
    truncate -s 64M "$nimg" && "$F2FSCORE_CROSS_REFERENCE_MKFS" -q -f --populate "$src" "$nimg" >/dev/null || return 1
    python3 "$SCRIPT_DIR/compare-extract.py" --manifest "$src" >"$out/names.manifest" || return 1
    wine "$dump" "Z:$nimg" extract / "Z:$ndest" >"$out/names.extract.txt" 2>&1
    if ! python3 "$SCRIPT_DIR/compare-extract.py" "$out/names.manifest" "$ndest" "$out/names.extract.txt" \
         >"$out/names.compare.txt" 2>&1; then
      echo "error: names Windows forbids: what f2fscore-dump.exe extracted differs from the tree copied in:" >&2
      cat "$out/names.extract.txt" "$out/names.compare.txt" >&2
      return 1
    fi
    rm -f "$nimg"
    # f2fscore-sload.exe copies the extraction into a fresh image: the
    # native dump extracts the source tree's names, symlink and contents
    # (modes aside: Windows keeps none).
    local simg="$out/names-sload.img" sdest="$out/names-sload.out"
    local native_dump="$ref_build/tools/dump/f2fscore-dump"
    rm -rf "$sdest" && mkdir -p "$sdest" && truncate -s 64M "$simg" || return 1
    if ! wine "$mkfs" -q -f "Z:$simg" </dev/null >"$out/names-sload.txt" 2>&1 ||
       ! wine "$sload" -f "Z:$ndest" "Z:$simg" </dev/null >>"$out/names-sload.txt" 2>&1 ||
       ! "$native_dump" "$simg" extract / "$sdest" >>"$out/names-sload.txt" 2>&1; then
      echo "error: names Windows forbids: f2fscore-sload.exe of the extraction, or its native extraction, fails:" >&2
      cat "$out/names-sload.txt" >&2
      return 1
    fi
    local nomode='BEGIN { FS = OFS = "|" } $1 == "D" || $1 == "F" { $3 = "-" } { print }'
    if ! diff <(awk "$nomode" "$out/names.manifest") \
              <(python3 "$SCRIPT_DIR/compare-extract.py" --manifest "$sdest" | awk "$nomode") >"$out/names-sload.diff"; then
      echo "error: names Windows forbids: f2fscore-sload.exe did not give the tree back:" >&2
      cat "$out/names-sload.diff" >&2
      return 1
    fi
    rm -rf "$simg" "$sdest"
    names_note="; forbidden names and symlinks mapped and read back, and copied in again by sload.exe"
  fi
  TOOLS_NOTE="mkfs image clean under fsck.f2fs; fsck, dump info pass; io raw write refused on F2FS, io fs clean; $n Linux images extracted as Linux reads them, and again after mkfs --populate of the extraction$names_note"
  log "[windows] $TOOLS_NOTE"
  return 0
}

failed=0
if unicode_table; then
  log "casefolding: the Unicode facts table $UNICODE_TABLE ($UNICODE_NOTE)"
  for arch in "${ARCHES[@]}"; do
    run_arch "$arch" || failed=1
  done
else
  echo "error: the Unicode facts table could not be generated from the host's ICU (libicu-dev)" >&2
  failed=1
  for arch in "${ARCHES[@]}"; do
    RESULT[$arch]="FAIL (unicode table)"
    CONF_T[$arch]=- BUILD_T[$arch]=- TEST_T[$arch]=- TESTS[$arch]=- SKIPPED[$arch]=- IMAGE_SUM[$arch]=-
  done
fi

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
  [[ $key != windows ]] || continue  # its version string differs: compared in tools_windows
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
printf '%-7s %-22s %9s %7s %7s  %-18s %-15s %s\n' arch result configure build tests "mkfs cksum" codecs "ctest"
for arch in "${ARCHES[@]}"; do
  skipped=""
  [[ ${SKIPPED[$arch]} == - || ${SKIPPED[$arch]} == 0 ]] || skipped=" (${SKIPPED[$arch]} skipped)"
  printf '%-7s %-22s %8ss %6ss %6ss  %-18s %-15s %s\n' "$arch" "${RESULT[$arch]}" \
    "${CONF_T[$arch]}" "${BUILD_T[$arch]}" "${TEST_T[$arch]}" "${IMAGE_SUM[$arch]}" "${CODECS[$arch]:-none}" \
    "${TESTS[$arch]}$skipped"
done
[[ -z ${IMAGE_SUM[native]:-} ]] || printf '%-7s %-22s %9s %7s %7s  %-18s\n' native reference "" "" "" "${IMAGE_SUM[native]}"
echo "mkfs images across arches: $image_check"
echo "casefolding: the table generated from the host's $UNICODE_NOTE"
[[ $TOOLS_NOTE == - ]] || echo "windows tools under wine (${TOOLS_T}s): $TOOLS_NOTE"
echo "===================================================================="
if ((failed)); then
  echo "cross-test: FAILED"
  exit 1
fi
echo "cross-test: all passed"
exit 0
