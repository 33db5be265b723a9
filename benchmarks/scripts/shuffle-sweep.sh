#!/usr/bin/env bash
# shuffle-sweep.sh: job time of every shuffle strategy against the number of partitions, in
# memory and out of core (the Exoshuffle paper's Figure 10), through the sort benchmark.
#
# In memory: `sort-benchmark --in-memory` generates MEM_SIZE of records into the object
# stores, sorts them there and checks them there (no file), with stores large enough that
# nothing spills. Out of core: `sort-benchmark` sorts a DISK_SIZE file into a file through
# stores DISK_SIZE / 4 in total (so most of the data must spill), with the input evicted from
# the page cache first; its bound is the report's: the input read and the output written once,
# and what the stores cannot hold written and read back, at the disk bandwidth the command
# measures on the spot (docs/shuffle.md). Every run validates its output (order, count, checksum).
#
# Usage: benchmarks/scripts/shuffle-sweep.sh [memory|disk|both] [SPILL_DIR]
#   env: NODES (4), STRATEGIES ("simple riffle magnet push"), MEM_SIZE (1g), MEM_STORE (1g per
#        node), MEM_PARTITIONS ("16 64 256"), DISK_SIZE (4g), DISK_STORE (256m per node),
#        DISK_PARTITIONS ("64 256")
# Prints Markdown tables on stdout; every JSON report goes to stderr as it comes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MODE="${1:-both}"
SPILL_DIR="${2:-${TMPDIR:-/tmp}}"
NODES="${NODES:-4}"
STRATEGIES="${STRATEGIES:-simple riffle magnet push}"
MEM_SIZE="${MEM_SIZE:-1g}"
MEM_STORE="${MEM_STORE:-1g}"
MEM_PARTITIONS="${MEM_PARTITIONS:-16 64 256}"
DISK_SIZE="${DISK_SIZE:-4g}"
DISK_STORE="${DISK_STORE:-256m}"
DISK_PARTITIONS="${DISK_PARTITIONS:-64 256}"
CROUPIER="$ROOT/bin/croupier"

source "$ROOT/benchmarks/scripts/json-field.sh"

run() {
  local json
  json=$("$CROUPIER" sort-benchmark --json --nodes "$NODES" "$@")
  printf '%s\n' "$json" >&2
  [ "$(field valid "$json")" = true ] || { printf 'shuffle-sweep: invalid output for: %s\n' "$*" >&2; exit 1; }
  printf '%s' "$json"
}

"$CROUPIER" version >/dev/null   # builds once, before any timing

if [ "$MODE" = memory ] || [ "$MODE" = both ]; then
  echo "In memory: $MEM_SIZE on $NODES nodes x $MEM_STORE store (load average at start: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
  echo "| strategy | partitions | seconds | MB/s | spilled MB |"
  echo "|---|---|---|---|---|"
  for s in $STRATEGIES; do
    for p in $MEM_PARTITIONS; do
      j=$(run --in-memory --size "$MEM_SIZE" --store-memory "$MEM_STORE" --strategy "$s" --partitions "$p")
      printf '| %s | %s | %.2f | %.0f | %.0f |\n' "$s" "$p" "$(field seconds "$j")" \
        "$(field throughput_mb_per_s "$j")" "$(awk "BEGIN{print $(field spilled_bytes "$j")/1e6}")"
    done
  done
  echo
fi

if [ "$MODE" = disk ] || [ "$MODE" = both ]; then
  echo "Out of core: $DISK_SIZE file to file on $NODES nodes x $DISK_STORE store, spill dir $SPILL_DIR (load average at start: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
  echo "| strategy | partitions | seconds | disk write / read MB/s | bound s | ratio | spilled MB | restored MB |"
  echo "|---|---|---|---|---|---|---|---|"
  for s in $STRATEGIES; do
    for p in $DISK_PARTITIONS; do
      j=$(run --size "$DISK_SIZE" --store-memory "$DISK_STORE" --strategy "$s" --partitions "$p" --spill-dir "$SPILL_DIR")
      w=$(field disk_write_mb_per_s "$j"); r=$(field disk_read_mb_per_s "$j"); t=$(field seconds "$j")
      printf '| %s | %s | %.1f | %.0f / %.0f | %.1f | %.2f | %.0f | %.0f |\n' "$s" "$p" "$t" "$w" "$r" \
        "$(field bound_seconds "$j")" "$(field ratio_to_bound "$j")" "$(awk "BEGIN{print $(field spilled_bytes "$j")/1e6}")" \
        "$(awk "BEGIN{print $(field restored_bytes "$j")/1e6}")"
    done
  done
fi
