#!/usr/bin/env bash
# runtime_only_test.sh BUILD_DIR: find_package(f2fscore) on a machine with
# only the runtime dependencies of libf2fscore.so. Installs the build into a
# temporary prefix, then, in a private mount namespace, hides every file
# under /usr/include and the multiarch library directory that belongs to
# the -dev packages the library was built against (the list the installed
# f2fscoreConfig.cmake carries) and to Boost, CLI11 and nlohmann-json, by
# overlay mounts in which those files are deleted; the runtime libraries
# (libzstd.so.1, ...) stay. There:
#   0. every installed public header compiles on its own;
#   1. a project with find_package(f2fscore REQUIRED COMPONENTS shared)
#      builds examples/hello against f2fscore::shared, and it prints the
#      layout mkfs.f2fs 1.15 writes for 256 MiB;
#   2. find_package(f2fscore) without components is found and says why the
#      static libraries cannot be linked;
#   3. find_package(f2fscore REQUIRED COMPONENTS static) fails, naming a
#      missing library and its Debian package.
# Exit: 0 pass; 1 fail; 77 skip (not root, no unshare or overlay, or a build
# without F2FSCORE_SHARED; fails instead under F2FSCORE_REQUIRE_SHARED=1).
set -euo pipefail
build_dir=$(cd "${1:?usage: runtime_only_test.sh BUILD_DIR}" && pwd)
src_dir=$(cd "$(dirname "$0")/../.." && pwd)
skip() {
  if [[ "${F2FSCORE_REQUIRE_SHARED:-0}" == 1 ]]; then echo "FAIL: $* (required: F2FSCORE_REQUIRE_SHARED=1)"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
fail() { echo "FAIL: $*"; exit 1; }
[[ $(id -u) == 0 ]] || skip "needs root (mount namespace, overlay mounts)"
command -v unshare >/dev/null || skip "unshare not installed (util-linux)"
command -v dpkg >/dev/null || skip "not a Debian system (dpkg lists the -dev packages' files)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
config=$(find "$tmp/prefix" -name f2fscoreConfig.cmake | head -n1)
[[ -n "$config" ]] || fail "no f2fscoreConfig.cmake installed"
find "$tmp/prefix" -name 'libf2fscore.so.*' -type f | grep -q . || skip "the build has no libf2fscore.so (F2FSCORE_SHARED=OFF)"

# The -dev packages: those the config names, and the header-only ones the
# library's sources use privately.
pkgs=$(sed -n 's/^set(_f2fscore_deps "\(.*\)")$/\1/p' "$config" | tr ';' '\n' | sed 's/.*://' | sort -u)
[[ -n "$pkgs" ]] || fail "no dependency list in $config"
pkgs="$pkgs libboost1.81-dev libcli11-dev nlohmann-json3-dev"
multiarch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=/usr/lib/$multiarch
hide=$tmp/hide.txt
: >"$hide"
for p in $pkgs; do
  dpkg -L "$p" 2>/dev/null | while read -r f; do
    case "$f" in
      /usr/include/*|"$libdir"/*) [[ -f "$f" || -L "$f" ]] && echo "$f" ;;
    esac
  done >>"$hide" || true
done
grep -q "/zstd.h$" "$hide" || fail "libzstd-dev's zstd.h is not among the files to hide (is libzstd-dev installed?)"
echo "hiding $(wc -l <"$hide") files of: $(echo $pkgs)"

# The projects: one per case.
mkdir -p "$tmp/shared" "$tmp/any" "$tmp/static"
printf '%s\n' "cmake_minimum_required(VERSION 3.20)" "project(rt_shared LANGUAGES CXX)" \
  "find_package(f2fscore 0.1 REQUIRED COMPONENTS shared)" \
  "add_executable(f2fscore-hello \"$src_dir/examples/hello/main.cpp\")" \
  "target_link_libraries(f2fscore-hello PRIVATE f2fscore::shared)" >"$tmp/shared/CMakeLists.txt"
printf '%s\n' "cmake_minimum_required(VERSION 3.20)" "project(rt_any LANGUAGES CXX)" \
  "find_package(f2fscore 0.1 REQUIRED)" >"$tmp/any/CMakeLists.txt"
printf '%s\n' "cmake_minimum_required(VERSION 3.20)" "project(rt_static LANGUAGES CXX)" \
  "find_package(f2fscore 0.1 REQUIRED COMPONENTS static)" >"$tmp/static/CMakeLists.txt"

cat >"$tmp/inside.sh" <<EOF
set -euo pipefail
mount --make-rprivate /
# The overlays' upper and work directories on a tmpfs of this namespace:
# overlayfs takes them there whatever file system holds TMPDIR.
mkdir -p "$tmp/ov"
mount -t tmpfs tmpfs "$tmp/ov" || { echo "NO-OVERLAY"; exit 77; }
n=0
for d in /usr/include "$libdir"; do
  n=\$((n + 1))
  mkdir -p "$tmp/ov/\$n/upper" "$tmp/ov/\$n/work"
  mount -t overlay overlay -o "lowerdir=\$d,upperdir=$tmp/ov/\$n/upper,workdir=$tmp/ov/\$n/work" "\$d" ||
    { echo "NO-OVERLAY"; exit 77; }
done
xargs -d '\n' rm -f <"$hide"
[[ ! -e /usr/include/zstd.h && ! -e "$libdir/libzstd.so" && ! -e /usr/include/boost/version.hpp ]] ||
  { echo "FAIL: the -dev files are still visible"; exit 1; }
ls "$libdir"/libzstd.so.1 >/dev/null || { echo "FAIL: the runtime library libzstd.so.1 is hidden too"; exit 1; }

# 0. Every installed public header compiles on its own (a translation unit
#    that includes only it), with only tl-expected among the -dev packages.
inc="$tmp/prefix/include"
nh=0
while read -r h; do
  rel=\${h#"\$inc/"}
  printf '#include <%s>\n' "\$rel" | c++ -std=c++20 -fsyntax-only -Wall -Wextra -I"\$inc" -x c++ - 2>"$tmp/hdr.log" ||
    { cat "$tmp/hdr.log"; echo "FAIL: \$rel does not compile on its own"; exit 1; }
  nh=\$((nh + 1))
done < <(find "\$inc/f2fscore" -name '*.hpp' | sort)
echo "ok: \$nh public headers compile on their own with the -dev packages hidden"

# 1. f2fscore::shared builds and runs.
cmake -S "$tmp/shared" -B "$tmp/b-shared" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/shared.log" 2>&1 ||
  { cat "$tmp/shared.log"; echo "FAIL: find_package(f2fscore COMPONENTS shared) with only the runtime dependencies"; exit 1; }
cmake --build "$tmp/b-shared" >>"$tmp/shared.log" 2>&1 ||
  { tail -30 "$tmp/shared.log"; echo "FAIL: building against f2fscore::shared with only the runtime dependencies"; exit 1; }
"$tmp/b-shared/f2fscore-hello" >"$tmp/hello.out"
# 2. Without components: found, with the reason the archives cannot be linked.
cmake -S "$tmp/any" -B "$tmp/b-any" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/any.log" 2>&1 ||
  { cat "$tmp/any.log"; echo "FAIL: find_package(f2fscore) with only the runtime dependencies"; exit 1; }
# 3. The static component: refused.
if cmake -S "$tmp/static" -B "$tmp/b-static" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/static.log" 2>&1; then
  echo "FAIL: find_package(f2fscore COMPONENTS static) was found without the -dev packages"; exit 1
fi
EOF
rc=0
unshare -m bash "$tmp/inside.sh" >"$tmp/inside.log" 2>&1 || rc=$?
if [[ $rc == 77 ]]; then skip "overlay mounts are not available here"; fi
cat "$tmp/inside.log"
[[ $rc == 0 ]] || fail "see above"

# mkfs.f2fs 1.15 on 256 MiB: main starts at 4096 with 120 main segments.
expected="label=hello main_blkaddr=4096 segment_count_main=120"
out=$(cat "$tmp/hello.out")
[[ "$out" == "$expected"* ]] || fail "examples/hello against f2fscore::shared printed '$out', expected '$expected...'"
echo "ok: examples/hello built against f2fscore::shared with the -dev packages hidden: $out"
grep -q "the static libraries cannot be linked here (missing lib" "$tmp/any.log" ||
  { cat "$tmp/any.log"; fail "find_package(f2fscore) does not say why the static libraries cannot be linked"; }
echo "ok: find_package(f2fscore): $(grep -o 'the static libraries cannot be linked here.*' "$tmp/any.log" | head -c 160)..."
# CMake folds the reason over lines: compare it with the spaces squeezed.
static_msg=$(tr -s ' \n' '  ' <"$tmp/static.log")
grep -q "component static: f2fscore::f2fscore links lib[a-z0-9]* (Debian: [a-z0-9]*-dev)" <<<"$static_msg" ||
  { cat "$tmp/static.log"; fail "the refusal of COMPONENTS static does not name the missing library and package"; }
echo "ok: find_package(f2fscore COMPONENTS static) refused: $(grep -o 'component static:.\{0,100\}' <<<"$static_msg")..."
echo "PASS: find_package(f2fscore) with only the runtime dependencies"
