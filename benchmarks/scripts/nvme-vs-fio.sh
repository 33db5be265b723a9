#!/usr/bin/env bash
# nvme-vs-fio.sh: nvme-io's RowSampler against fio random reads and a MappedByteBuffer
# baseline, on the same file, in the same run. Prints a Markdown table.
#
# For each row size (100 B, 512 B, 4 KiB, 64 KiB) it runs REPS rounds of 1 and 2, then 3
# once, each for RUN_SECONDS:
#   1. the sampler (default 64 KiB chunks; rows of one read are scattered over the batch),
#   2. fio --rw=randread --direct=1 with the sampler's mean read size rounded to 4 KiB as
#      the block size and THREADS reads in flight: libaio at iodepth=THREADS (one thread), and
#      psync with numjobs=THREADS (blocking reads on THREADS threads, as the sampler does),
#   3. THREADS threads copying random rows out of MappedByteBuffers (the page-cache baseline),
# then the sampler again with one row per read (--chunk-bytes = row size: fully independent
# rows), against fio at that block size. Every run starts with the file evicted from the page
# cache (posix_fadvise, this file only) and reports the page-cache bytes it added (mincore).
#
# Needs: fio (Debian/Ubuntu: apt-get install -y fio), a JDK 25 (JAVA_HOME or java on PATH),
# Maven, and FILE_GIB GiB free on the disk holding DIR. The file is deleted at exit.
#
# Usage: benchmarks/scripts/nvme-vs-fio.sh [DIR]   (default DIR: benchmarks/target)
#   env: FILE_GIB (default 4), THREADS (16), RUN_SECONDS (10), SIZES ("100 512 4096 65536"),
#        REPS (3): rounds of sampler, fio libaio, fio psync per cell. Figures are medians over
#        the rounds; "vs" columns are the median (min-max) of the per-round ratios.
#        ENGINE (auto): the sampler's I/O engine, auto | aio | threads.
#        SECTIONS ("chunked one-row"): which of the two tables to measure.
#        SAMPLING (with): the sampler draws chunks with replacement, or "without" (every
#        chunk once per epoch).
# The whole run holds /tmp/croupier-bench.lock, so no other benchmark on the machine runs
# between the sampler and fio. It takes the lock itself; a caller that already holds it sets
# CROUPIER_BENCH_LOCKED=1 (flock locks do not nest: the inner one would wait forever).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIR="${1:-$ROOT/benchmarks/target}"
FILE_GIB="${FILE_GIB:-4}"
THREADS="${THREADS:-16}"
SECONDS_PER_RUN="${RUN_SECONDS:-10}"
SIZES="${SIZES:-100 512 4096 65536}"
REPS="${REPS:-3}"
ENGINE="${ENGINE:-auto}"
SECTIONS="${SECTIONS:-chunked one-row}"
SAMPLING="${SAMPLING:-with}"
case "$SAMPLING" in with|without) ;; *) echo "nvme-vs-fio: SAMPLING=$SAMPLING: must be with or without" >&2; exit 2 ;; esac
LOCK=/tmp/croupier-bench.lock
if [ "${CROUPIER_BENCH_LOCKED:-}" != 1 ]; then
  exec env CROUPIER_BENCH_LOCKED=1 flock "$LOCK" "$0" "$@"
fi

die() { printf 'nvme-vs-fio: %s\n' "$*" >&2; exit 2; }

command -v fio >/dev/null 2>&1 || die "fio is not installed; on Debian/Ubuntu: apt-get update && apt-get install -y fio"
command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is not on PATH"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
JAVAC="${JAVA_HOME:+$JAVA_HOME/bin/}javac"
"$JAVA" -version 2>&1 | grep -Eq 'version "(2[5-9]|[3-9][0-9])' || die "needs JDK 25 or newer: set JAVA_HOME"

# Build nvme-io and compile just this benchmark against it, so a sibling module being
# mid-edit cannot break the run. JVM flags come from the file the build generates.
(cd "$ROOT" && mvn -B -o -q -pl nvme-io install -DskipTests >&2)
FLAGS_FILE="$ROOT/examples/target/classes/croupier-jvm.flags"
# examples/target may be shared with other builds on the machine: build it only under its lock.
[ -f "$FLAGS_FILE" ] || (cd "$ROOT" && flock /tmp/croupier-examples-build.lock \
  mvn -B -o -q -pl examples package -DskipTests >&2)
read -r -a JVM_FLAGS < "$FLAGS_FILE"
CLASSES="$ROOT/benchmarks/target/nvme-bench-classes"
mkdir -p "$CLASSES"
"$JAVAC" -d "$CLASSES" -cp "$ROOT/nvme-io/target/classes" \
  "$ROOT"/benchmarks/src/main/java/dev/croupier/benchmarks/nvme/*.java
bench() { "$JAVA" "${JVM_FLAGS[@]}" -cp "$CLASSES:$ROOT/nvme-io/target/classes" \
  dev.croupier.benchmarks.nvme.SamplerVsMmap "$@"; }

# A size that every row size divides: 25 * 64 KiB = 1638400 = lcm(100, 512, 4096, 65536).
UNIT=1638400
BYTES=$(( FILE_GIB * 1024 * 1024 * 1024 / UNIT * UNIT ))
mkdir -p "$DIR"
FREE=$(( $(df -Pk "$DIR" | awk 'NR==2 {print $4}') * 1024 ))
[ "$FREE" -gt $(( BYTES + (1 << 30) )) ] || die "$DIR has $FREE bytes free; needs $BYTES plus 1 GiB"
FILE="$DIR/nvme-vs-fio-$$.bin"
trap 'rm -f "$FILE"' EXIT
echo "writing $BYTES bytes of random data to $FILE ..." >&2
fio --name=fill --filename="$FILE" --rw=write --bs=1M --size="$BYTES" --direct=1 --ioengine=libaio \
  --iodepth=8 --refill_buffers --output=/dev/null

json() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" <<<"$1"; }
# fio terse v3: field 7 = read bandwidth KiB/s, field 8 = read IOPS.
fio_bw() { # engine bs numjobs iodepth -> "GiB/s IOPS"
  fio --name=randread --filename="$FILE" --rw=randread --bs="$2" --direct=1 --ioengine="$1" \
    --numjobs="$3" --iodepth="$4" --time_based --runtime="$SECONDS_PER_RUN" --group_reporting \
    --norandommap --randrepeat=0 --output-format=terse --terse-version=3 \
    | awk -F';' '{printf "%.3f %.0f", $7 / 1048576, $8}'
}
gib() { awk -v v="$1" 'BEGIN {printf "%.3f", v}'; }
msamples() { awk -v v="$1" 'BEGIN {printf "%.0f", v}'; }

# Median of the numbers given as arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
# "median% (min-max%)" of the per-round ratios a_i / b_i; arguments: the a's, then the b's.
ratios() {
  local n=$(( $# / 2 )) i out=()
  local args=("$@")
  for (( i = 0; i < n; i++ )); do out+=("$(awk -v a="${args[i]}" -v b="${args[n + i]}" 'BEGIN {printf "%.1f", 100 * a / b}')"); done
  local sorted; sorted=$(printf '%s\n' "${out[@]}" | sort -g | tr '\n' ' ')
  awk -v m="$(median "${out[@]}")" -v s="$sorted" 'BEGIN {n = split(s, v, " "); printf "%.0f%% (%.0f-%.0f)", m, v[1], v[n]}'
}

run_size() { # row_size chunk_bytes with_mmap
  local rs=$1 chunk=$2 batch=1024 s bs="" r g
  local samples=() rows=() disk=() aio=() ps=() cache=0
  [ "$rs" -ge 65536 ] && batch=256
  # Rounds alternate sampler, fio libaio and fio psync: the virtio disk's speed drifts by
  # tens of percent from minute to minute, so only runs next to each other compare.
  for (( r = 0; r < REPS; r++ )); do
    s=$(bench sampler "$FILE" "$rs" "$batch" "$THREADS" "$SECONDS_PER_RUN" "$chunk" "$ENGINE" "$SAMPLING")
    [ -n "$bs" ] || bs=$(( ( $(json "$s" mean_read_bytes) + 2048 ) / 4096 * 4096 ))
    samples+=("$(json "$s" samples_per_s)"); rows+=("$(json "$s" gib_per_s)"); disk+=("$(json "$s" disk_gib_per_s)")
    cache=$(( cache + $(json "$s" page_cache_added_bytes) ))
    read -r g _ <<<"$(fio_bw libaio "$bs" 1 "$THREADS")"; aio+=("$g")
    read -r g _ <<<"$(fio_bw psync "$bs" "$THREADS" 1)"; ps+=("$g")
  done
  local mm_cell="-" mm_cache="-" mm
  if [ "$3" = yes ]; then
    mm=$(bench mmap "$FILE" "$rs" "$batch" "$THREADS" "$SECONDS_PER_RUN")
    mm_cell="$(msamples "$(json "$mm" samples_per_s)") / $(gib "$(json "$mm" gib_per_s)")"
    mm_cache="$(( $(json "$mm" page_cache_added_bytes) / 1048576 )) MiB"
  fi
  printf '| %s B | %s KiB | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s |\n' \
    "$rs" "$(( bs / 1024 ))" "$(msamples "$(median "${samples[@]}")")" "$(gib "$(median "${rows[@]}")")" \
    "$(gib "$(median "${disk[@]}")")" "$(( cache / 4096 ))" "$(gib "$(median "${aio[@]}")")" \
    "$(gib "$(median "${ps[@]}")")" "$(ratios "${disk[@]}" "${aio[@]}")" "$(ratios "${disk[@]}" "${ps[@]}")" \
    "$mm_cell" "$mm_cache"
}

header() {
  echo
  echo "$1"
  echo
  echo "| row | fio bs | sampler samples/s | rows GiB/s | disk GiB/s | cache pages added (all rounds) | fio libaio / psync GiB/s | disk vs libaio | disk vs psync | mmap samples/s / GiB/s | mmap cache added |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
}

echo "machine: $(nproc) vCPU, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $("$JAVA" -version 2>&1 | head -n1); $(fio --version)"
echo "file: $(( BYTES / 1048576 )) MiB on $(df -P "$DIR" | awk 'NR==2 {print $1}') ($(stat -f -c %T "$DIR")); reads in flight = $THREADS; sampler engine $ENGINE, $SAMPLING replacement; $REPS rounds of $SECONDS_PER_RUN s per cell"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ " $SECTIONS " == *" chunked "* ]]; then
  header "Chunked reads (default chunkBytes = 64 KiB):"
  for rs in $SIZES; do run_size "$rs" 65536 yes; done
fi
if [[ " $SECTIONS " == *" one-row "* ]]; then
  header "One row per read (chunkBytes = row size; fully independent rows):"
  for rs in $SIZES; do run_size "$rs" "$rs" no; done
fi
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
