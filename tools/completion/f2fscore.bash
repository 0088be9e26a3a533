# bash completion for the f2fscore tools (f2fscore-mkfs, -fsck, -dump,
# -sload, -io, -label and the others installed beside them).
#
# The options, their value sets and the subcommands come from the tool's own
# --help (CLI11's layout: "  -s,--long TYPE:{a,b}  text" under "Options:",
# "  name  text" under "Subcommands:"), read once per tool and shell, so the
# completion follows the installed binary. Positionals complete as files
# (images, block devices, directories).
#
# Installed as share/bash-completion/completions/<tool>, which bash-completion
# loads when <tool> is first completed; or source this file from ~/.bashrc.

# _f2fscore_help_table TOOL: prints "KIND<TAB>WORD<TAB>VALUES" lines, KIND one
# of opt (an option taking no value), val (an option taking a value, VALUES
# its choices separated by commas, or empty for any value), sub (a subcommand).
_f2fscore_help_table() {
  local tool=$1 section="" line names type choices n
  while IFS= read -r line; do
    case $line in
      Options:*) section=opt; continue ;;
      Subcommands:*) section=sub; continue ;;
      Positionals:*) section=pos; continue ;;
      [![:space:]]*) section=""; continue ;;
    esac
    [[ $line =~ ^\ \ ([^[:space:]].*)$ ]] || continue
    line=${BASH_REMATCH[1]}
    case $section in
      opt)
        [[ $line == -* ]] || continue
        names=${line%% *}
        type=""
        [[ $line =~ ^[^[:space:]]+\ ([A-Z]+[^[:space:]]*) ]] && type=${BASH_REMATCH[1]}
        choices=""
        [[ $type =~ \{([^}]*)\} ]] && choices=${BASH_REMATCH[1]}
        local IFS=,
        for n in $names; do
          if [[ -n $type ]]; then printf 'val\t%s\t%s\n' "$n" "$choices"; else printf 'opt\t%s\t\n' "$n"; fi
        done
        unset IFS
        ;;
      sub) printf 'sub\t%s\t\n' "${line%% *}" ;;
    esac
  done < <("$tool" --help 2>/dev/null)
}

# _f2fscore_known_values TOOL OPTION: the values of options whose --help
# describes them in words rather than as a {set}: feature names, encodings,
# I/O patterns (comma-separated lists complete their last item).
_f2fscore_known_values() {
  case "${1##*/} $2" in
    "f2fscore-mkfs -O")
      echo "encrypt extra_attr project_quota inode_checksum flexible_inline_xattr quota inode_crtime lost_found verity sb_checksum casefold compression ro" ;;
    "f2fscore-mkfs -C" | "f2fscore-tune -C" | "f2fscore-tune --encoding") echo "utf8 utf8:strict utf8:hashonly utf8:strict,hashonly" ;;
    "f2fscore-tune -O" | "f2fscore-tune --features") echo "encrypt casefold verity sb_checksum" ;;
    "f2fscore-tune -U" | "f2fscore-tune --uuid") echo "random" ;;
    "f2fscore-io --rw") echo "read write randread randwrite" ;;
    "f2fscore-io --backend") echo "auto io_uring uring posix sync overlapped" ;;
  esac
}

_f2fscore() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev="" tool=${COMP_WORDS[0]} key
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # --option=value: complete the value of --option.
  if [[ $cur == --*=* ]]; then
    prev=${cur%%=*}
    cur=${cur#*=}
  fi
  key=_f2fscore_table_${tool//[^A-Za-z0-9]/_}
  if [[ -z ${!key+set} ]]; then
    printf -v "$key" '%s' "$(_f2fscore_help_table "$tool")"
  fi
  local table=${!key} kind word values
  local -a opts=() subs=()
  local prev_values="" prev_takes=0
  while IFS=$'\t' read -r kind word values; do
    case $kind in
      opt) opts+=("$word") ;;
      val) opts+=("$word")
           if [[ $word == "$prev" ]]; then prev_takes=1; prev_values=$values; fi ;;
      sub) subs+=("$word") ;;
    esac
  done <<<"$table"

  COMPREPLY=()
  local known
  known=$(_f2fscore_known_values "$tool" "$prev")
  if ((prev_takes)) && [[ -n $known ]]; then
    local head="" last=$cur
    if [[ $cur == *,* ]]; then head=${cur%,*},; last=${cur##*,}; fi
    mapfile -t COMPREPLY < <(compgen -P "$head" -W "$known" -- "$last")
    return 0
  fi
  if ((prev_takes)); then
    if [[ -n $prev_values ]]; then
      mapfile -t COMPREPLY < <(compgen -W "${prev_values//,/ }" -- "$cur")
    else
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${opts[*]}" -- "$cur")
    return 0
  fi
  # A subcommand is offered once a positional (the image) is given.
  if ((${#subs[@]})); then
    local i positionals=0 have_sub=0 w
    for ((i = 1; i < COMP_CWORD; i++)); do
      w=${COMP_WORDS[i]}
      [[ $w == -* ]] && continue
      local s
      for s in "${subs[@]}"; do [[ $w == "$s" ]] && have_sub=1; done
      positionals=$((positionals + 1))
    done
    if ((positionals >= 1 && !have_sub)); then
      mapfile -t COMPREPLY < <(compgen -W "${subs[*]}" -- "$cur")
      return 0
    fi
  fi
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  return 0
}

complete -o filenames -F _f2fscore f2fscore-mkfs f2fscore-fsck f2fscore-dump f2fscore-sload \
  f2fscore-io f2fscore-label f2fscore-resize f2fscore-tune f2fscore-fuse
