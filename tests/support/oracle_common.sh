# oracle_common.sh: sourced (not run) by the Linux-oracle test scripts
# (tests/writer/*_linux.sh, tests/meta/meta_linux.sh, tests/stats/stats_oracle.sh,
# tests/populate/populate_linux.sh). The caller sets repo_root first.
#
#   oracle_setup NAME [--fsck]
#       NAME is the script's name, used in messages. Sets oracle (ORACLE, or
#       ../shared/oracle/linux-f2fs beside the repository); without it the
#       script skips (exit 77), or fails (exit 1) under F2FSCORE_REQUIRE_ORACLE=1.
#       With --fsck: exports F2FSCORE_REQUIRE_FSCK (default: the value of
#       F2FSCORE_REQUIRE_ORACLE) and sets fsck (FSCK_F2FS, or
#       /usr/sbin/fsck.f2fs); without it the script skips (77), or fails (1)
#       under F2FSCORE_REQUIRE_FSCK=1.
#   oracle_skip MESSAGE...
#       Exit 77 with "NAME: SKIP: MESSAGE", or 1 with "NAME: FAIL: MESSAGE"
#       under F2FSCORE_REQUIRE_ORACLE=1.
#   oracle_workdir
#       Sets work to a new temporary directory, removed on exit.

oracle_skip() {
  if [[ "${F2FSCORE_REQUIRE_ORACLE:-0}" == 1 ]]; then
    echo "$oracle_script: FAIL: $* and F2FSCORE_REQUIRE_ORACLE=1" >&2; exit 1
  fi
  echo "$oracle_script: SKIP: $*" >&2; exit 77
}

oracle_setup() {
  oracle_script="$1"
  oracle="${ORACLE:-$repo_root/../shared/oracle/linux-f2fs}"
  [[ -x "$oracle" ]] || oracle_skip "Linux oracle not found at $oracle"
  if [[ "${2:-}" == --fsck ]]; then
    export F2FSCORE_REQUIRE_FSCK="${F2FSCORE_REQUIRE_FSCK:-${F2FSCORE_REQUIRE_ORACLE:-0}}"
    fsck="${FSCK_F2FS:-/usr/sbin/fsck.f2fs}"
    if [[ ! -x "$fsck" ]]; then
      if [[ "$F2FSCORE_REQUIRE_FSCK" == 1 ]]; then echo "$oracle_script: FAIL: $fsck not found" >&2; exit 1; fi
      echo "$oracle_script: SKIP: $fsck not found" >&2; exit 77
    fi
  fi
}

oracle_workdir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/${oracle_script%.sh}.XXXXXX")
  trap 'rm -rf "$work"' EXIT
}
