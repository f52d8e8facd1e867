#!/usr/bin/env bash
# FogKit vs SQLite (GRDB) on the seven reference workloads W1–W5, in one command.
#
#   usage: Benchmarks/compare.sh [-n ROUNDS] [FOG_BENCH_ARGS ...]
#
#   Benchmarks/compare.sh                 # 3 interleaved rounds (about 6 minutes once built)
#   Benchmarks/compare.sh -n 1            # one round (about 2 minutes once built)
#   Benchmarks/compare.sh -n 3 --only W2a,W3a   # extra arguments go to `fog-bench workloads`
#   Benchmarks/compare.sh --postgres -n 1 # adds FogKit on PostgreSQL (a throwaway server, fsync on)
#
# Builds fog-bench and bench-grdb in release (the first build of GRDB takes a minute or
# two), then runs, in each round, one after the other:
#
#   FogKit          fog-bench workloads [FOG_BENCH_ARGS]      every commit durable (fsync), the default
#   FogKit-relaxed  fog-bench workloads --durability relaxed  LMDB's MDB_NOMETASYNC: may lose the last
#                                                            commit on power loss, never corrupts
#   GRDB            bench-grdb NORMAL   SQLite, WAL, synchronous=NORMAL (GRDB's default): may lose the
#                                       last commits on power loss, never corrupts
#   GRDB-FULL       bench-grdb FULL     SQLite, WAL, synchronous=FULL: every commit durable
#
#   FogKit-PG       fog-bench workloads --store postgres://…  with --postgres: the same container on a
#                                       PostgreSQL server of this machine (scripts/postgres start --fsync,
#                                       Unix socket, synchronous_commit on), a fresh schema each round;
#                                       its CPU column counts only the client, not the server
#
# and prints a Markdown table of the median ops/s of each workload per column, the ratios
# FogKit/GRDB, the database sizes, and whether the check values agree across programs and
# rounds (a column whose checks differ did not do the same work). Raw outputs go to a
# temporary folder ($COMPARE_RESULTS if set), printed at the end. Like-for-like durability:
# FogKit vs GRDB-FULL, FogKit-relaxed vs GRDB.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

rounds=3
postgres=
if [[ ${1:-} == -h || ${1:-} == --help ]]; then awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0; fi
while [[ ${1:-} == -n || ${1:-} == --postgres ]]; do
  if [[ $1 == --postgres ]]; then
    postgres=1
    shift
    continue
  fi
  [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: -n takes a positive number of rounds" >&2; exit 2; }
  rounds=$2
  shift 2
done
fog_args=(${@+"$@"})

out=${COMPARE_RESULTS:-$(mktemp -d "${TMPDIR:-/tmp}/fogkit-compare.XXXXXX")}
mkdir -p "$out"

cd "$here"
for product in fog-bench bench-grdb; do
  echo "building $product (release)..." >&2
  if ! swift build -c release --product "$product" > "$out/build-$product.log" 2>&1; then
    tail -30 "$out/build-$product.log" >&2
    echo "compare.sh: building $product failed; log: $out/build-$product.log" >&2
    exit 1
  fi
done
bin=$(swift build -c release --show-bin-path)

columns=(FogKit FogKit-relaxed GRDB GRDB-FULL)
if [[ -n $postgres ]]; then
  # A throwaway server with fsync on, stopped however the script ends.
  eval "$("$here/../scripts/postgres" start --fsync)"
  trap '"$here/../scripts/postgres" stop' EXIT
  columns+=(FogKit-PG)
fi
command_of() {
  case $1 in
    FogKit) echo "$bin/fog-bench" workloads ${fog_args[@]+"${fog_args[@]}"} ;;
    FogKit-relaxed) echo "$bin/fog-bench" workloads --durability relaxed ${fog_args[@]+"${fog_args[@]}"} ;;
    GRDB) echo "$bin/bench-grdb" NORMAL ;;
    GRDB-FULL) echo "$bin/bench-grdb" FULL ;;
    FogKit-PG) echo "$bin/fog-bench" workloads --store "$FOG_TEST_POSTGRES_URL" ${fog_args[@]+"${fog_args[@]}"} ;;
  esac
}
run_column() {
  case $1 in
    FogKit) "$bin/fog-bench" workloads ${fog_args[@]+"${fog_args[@]}"} ;;
    FogKit-relaxed) "$bin/fog-bench" workloads --durability relaxed ${fog_args[@]+"${fog_args[@]}"} ;;
    GRDB) "$bin/bench-grdb" NORMAL ;;
    GRDB-FULL) "$bin/bench-grdb" FULL ;;
    FogKit-PG) "$bin/fog-bench" workloads --store "$FOG_TEST_POSTGRES_URL" ${fog_args[@]+"${fog_args[@]}"} ;;
  esac
}

failures=()
for ((r = 1; r <= rounds; r++)); do
  for c in "${columns[@]}"; do
    echo "round $r/$rounds: $c: $(command_of "$c")" >&2
    if ! run_column "$c" > "$out/$c.$r.txt" 2> "$out/$c.$r.err"; then
      echo "compare.sh: $c failed in round $r (see $out/$c.$r.err)" >&2
      failures+=("$c round $r")
    fi
  done
done

tmp=${TMPDIR:-/tmp}
echo "machine: nproc=$(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "temp dir $tmp on $(df -T "$tmp" | awk 'NR==2 {print $2" ("$1")"}'), kernel $(uname -r), $(swift --version 2>/dev/null | head -1)"
grep -h '^# ' "$out"/*.1.txt | grep -v '# plan' | sed 's/ dir=.*//' | sort -u || true
echo
status=0
python3 "$here/summarize.py" "$out" "${columns[@]}" || status=$?
if ((${#failures[@]})); then
  echo
  echo "FAILED runs: ${failures[*]}"
fi
echo
echo "raw outputs: $out"
if ((${#failures[@]})); then exit 1; fi
exit "$status"
