#!/usr/bin/env bash
# compare-builds.sh: one bin/croupier command, run from this tree and from another commit's, the
# way docs/benchmarks.md compares two builds. Each build's launcher cache is trained first (two
# runs of each, not reported: the launcher's first runs of a new build record and make its
# ahead-of-time cache). Then come rounds of one run of each, this tree first in odd rounds and
# the other build first in even ones. On the virtual machines the figures come from, memory
# that the run before freed is slow to touch again, so a plain alternation favours whichever
# build follows the one that frees less (docs/benchmarks.md, "Where a one-shot sort's cores
# go").
#
# Usage: benchmarks/scripts/compare-builds.sh [-r ROUNDS] [-f FIELD] BASE -- COMMAND [ARGS...]
#   BASE     the other build's commit; it is built in a temporary worktree, removed at the end
#   COMMAND  a bin/croupier subcommand that prints its report as JSON (give it --json)
#   -r       rounds (default 4)
#   -f       the report's field to compare (default: throughput_mb_per_s where the report has
#            it, else seconds)
# CROUPIER_JAVA_OPTS, if set, applies to both builds. Every report goes to stderr as it comes;
# stdout gets a line per run and a line per build: its figures, their range and their mean.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/benchmarks/scripts/json-field.sh"

die() { echo "compare-builds: $*" >&2; exit 2; }
# The header's lines from "Usage:" to its end.
usage() { sed -n '/^# Usage:/,/^[^#]/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

ROUNDS=4
FIELD=
while getopts r:f: opt; do
  case "$opt" in
    r) ROUNDS="$OPTARG" ;;
    f) FIELD="$OPTARG" ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] && [ "$2" = -- ] || usage
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "-r takes a number of rounds, at least 1: $ROUNDS"
BASE_REF="$1"
shift 2
BASE_COMMIT=$(git -C "$ROOT" rev-parse --verify -q "$BASE_REF^{commit}") || die "no commit $BASE_REF in $ROOT"
HEAD_NAME="this tree ($(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . || echo ', changed'))"
BASE_NAME="$BASE_REF ($(git -C "$ROOT" rev-parse --short "$BASE_COMMIT"))"

WORK=$(mktemp -d)
cleanup() {
  git -C "$ROOT" worktree remove --force "$WORK/base" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  git -C "$ROOT" worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
git -C "$ROOT" worktree add -q --detach "$WORK/base" "$BASE_COMMIT"

# One run of the command from tree $1; prints the field's value.
measure() {
  local json value
  json=$(cd "$1" && bin/croupier "${@:2}" | grep '^{' | tail -n 1) \
    || die "the run failed, or printed no JSON report (give the command --json), in $1: ${*:2}"
  printf '%s\n' "$json" >&2
  [ "$(field valid "$json")" != false ] || die "the run's output is invalid in $1: ${*:2}"
  if [ -z "$FIELD" ]; then
    FIELD=seconds
    [ -n "$(field throughput_mb_per_s "$json")" ] && FIELD=throughput_mb_per_s
  fi
  value=$(field "$FIELD" "$json")
  [ -n "$value" ] || die "the report has no field $FIELD: $json"
  printf '%s' "$value"
}

echo "training both builds' launcher caches (two runs each; the first builds the tree)..." >&2
for _ in 1 2; do
  measure "$ROOT" "$@" >/dev/null
  measure "$WORK/base" "$@" >/dev/null
done

HEAD_VALUES=()
BASE_VALUES=()
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="head base"; else order="base head"; fi
  for which in $order; do
    if [ "$which" = head ]; then
      v=$(measure "$ROOT" "$@"); HEAD_VALUES+=("$v"); name="$HEAD_NAME"
    else
      v=$(measure "$WORK/base" "$@"); BASE_VALUES+=("$v"); name="$BASE_NAME"
    fi
    printf 'round %d  %-40s %s %.4g\n' "$r" "$name" "$FIELD" "$v"
  done
done

summary() {
  printf '%s\n' "${@:2}" | awk -v name="$1" -v field="$FIELD" '
    { v[NR] = $1; sum += $1; if (NR == 1 || $1 < lo) lo = $1; if (NR == 1 || $1 > hi) hi = $1 }
    END {
      line = ""
      for (i = 1; i <= NR; i++) line = line (i > 1 ? " / " : "") sprintf("%.4g", v[i])
      printf "%-40s %s: %s (%.4g-%.4g, mean %.4g)\n", name, field, line, lo, hi, sum / NR
    }'
}
summary "$HEAD_NAME" "${HEAD_VALUES[@]}"
summary "$BASE_NAME" "${BASE_VALUES[@]}"
