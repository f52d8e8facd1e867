#!/usr/bin/env bash
# Runs W4 (10,000 updates) RUNS times on one copy of a kept store, to see the change log's
# compaction passes in a long run of updates (Docs/Performance.md, round 17).
#
#   Benchmarks/w4-repeat.sh FOG_BENCH STORE [RUNS] [DURABILITY]
#
# FOG_BENCH is a fog-bench binary, STORE a store kept by FOG_BENCH_STORE (made once with
# `FOG_BENCH_STORE=STORE fog-bench workloads --durability none --only W2a`). The store is
# copied first, so STORE itself is not changed. Prints each run's W4 line.
set -euo pipefail
bench=$1
store=$2
runs=${3:-24}
durability=${4:-durable}
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp -r "$store"/. "$copy"
sync
for i in $(seq 1 "$runs"); do
  echo "$i $(FOG_BENCH_STORE="$copy" "$bench" workloads --durability "$durability" --only W4 | grep '^W4')"
done
echo "data.mdb $(stat -c %s "$copy/data.mdb") bytes"
