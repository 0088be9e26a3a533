#!/usr/bin/env bash
# Manual pages of the tools (docs/man/*.8.scd).
#   man_test.sh options TOOL PAGE.scd [SUBCOMMAND...]
#     every option TOOL --help prints (and TOOL SUBCOMMAND --help, for each
#     SUBCOMMAND given) appears in PAGE.scd, written in bold as *OPTION*.
#   man_test.sh render DIR
#     scdoc turns each DIR/*.8.scd into roff, and groff -man -ww renders it
#     without a warning. Without scdoc or groff: skips (77), or fails under
#     CI=true or F2FSCORE_REQUIRE_MAN=1.
set -uo pipefail
mode=${1:?usage: man_test.sh options TOOL PAGE [SUBCOMMAND...] | render DIR}
shift
strict=0
[[ "${F2FSCORE_REQUIRE_MAN:-0}" == 1 || "${CI:-}" == "true" ]] && strict=1

case "$mode" in
  options)
    tool=$1 page=$2
    shift 2
    [[ -x "$tool" ]] || { echo "FAIL: $tool is not an executable"; exit 1; }
    [[ -f "$page" ]] || { echo "FAIL: no manual page $page"; exit 1; }
    helps=("")
    for s in "$@"; do helps+=("$s"); done
    missing=0 checked=0
    for s in "${helps[@]}"; do
      # shellcheck disable=SC2086
      text=$("$tool" $s --help) || { echo "FAIL: $tool $s --help exited $?"; exit 1; }
      # Option lines of CLI11's help: two spaces, then -x,--long ARG ...
      opts=$(printf '%s\n' "$text" | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sed 's/:.*//' | grep '^-')
      for o in $opts; do
        checked=$((checked + 1))
        if ! grep -qF -- "*$o*" "$page"; then
          echo "FAIL: ${tool##*/}${s:+ $s}: option $o is not in $(basename "$page")"
          missing=$((missing + 1))
        fi
      done
    done
    [[ $checked -gt 0 ]] || { echo "FAIL: no options found in ${tool##*/} --help"; exit 1; }
    [[ $missing -eq 0 ]] || exit 1
    echo "PASS: ${tool##*/}: all $checked options of --help are in $(basename "$page")"
    ;;
  render)
    dir=$1
    for t in scdoc groff; do
      if ! command -v "$t" >/dev/null; then
        echo "$t is not installed (apt-get install scdoc groff-base)"
        [[ $strict == 1 ]] && { echo "FAIL: $t missing (CI=true or F2FSCORE_REQUIRE_MAN=1)"; exit 1; }
        exit 77
      fi
    done
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    status=0 n=0
    for src in "$dir"/*.8.scd; do
      page=$(basename "$src" .scd)
      n=$((n + 1))
      if ! scdoc < "$src" > "$tmp/$page" 2> "$tmp/err"; then
        echo "FAIL: scdoc $page: $(cat "$tmp/err")"; status=1; continue
      fi
      groff -man -Tutf8 -ww -z "$tmp/$page" 2> "$tmp/err"
      if [[ -s "$tmp/err" ]]; then
        echo "FAIL: groff warns on $page:"; cat "$tmp/err"; status=1; continue
      fi
      # NAME, SYNOPSIS, DESCRIPTION, EXIT STATUS, EXAMPLES, SEE ALSO in every page.
      for sec in NAME SYNOPSIS DESCRIPTION "EXIT STATUS" EXAMPLES "SEE ALSO"; do
        grep -q "^\.SH \"\?$sec\"\?\$" "$tmp/$page" || { echo "FAIL: $page has no $sec section"; status=1; }
      done
    done
    [[ $n -gt 0 ]] || { echo "FAIL: no pages in $dir"; exit 1; }
    [[ $status -eq 0 ]] && echo "PASS: $n pages render without warnings"
    exit $status
    ;;
  *) echo "usage: man_test.sh options|render ..."; exit 2 ;;
esac
