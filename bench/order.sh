# Sourced by the bench scripts that run several tools one after another in
# each run: the order of a run's tools.
#
# williams_row R TOOL...: prints the tools in the order of row R (taken
# modulo the number of rows) of a Williams design, a Latin square balanced
# for neighbours. Row 0 is 0, 1, n-1, 2, n-2, ...; row i adds i (mod n); for
# odd n, rows n..2n-1 are rows 0..n-1 reversed. Over n runs (n even) or 2n
# runs (n odd) every tool runs in every position equally often and follows
# every other tool equally often, so what one tool leaves behind (the host's
# writeback, a deleted output being freed, a warm cache) lands on each of the
# others in turn. A plain rotation keeps each tool's successor fixed.
williams_row() {
  local row=$1
  shift
  local -a t=("$@") base=(0) out=()
  local n=$# j lo=1 hi=$(($# - 1)) rows
  for ((j = 1; j < n; j++)); do
    if ((j % 2)); then base+=("$lo"); lo=$((lo + 1)); else base+=("$hi"); hi=$((hi - 1)); fi
  done
  rows=$n
  ((n % 2)) && rows=$((2 * n))
  row=$((row % rows))
  for ((j = 0; j < n; j++)); do out+=("${t[$(((base[j] + row) % n))]}"); done
  if ((row >= n)); then
    local -a rev=()
    for ((j = n - 1; j >= 0; j--)); do rev+=("${out[j]}"); done
    out=("${rev[@]}")
  fi
  echo "${out[*]}"
}
