#!/usr/bin/env python3
"""Summarize the raw outputs of compare.sh as Markdown tables.

usage: summarize.py RESULTS_DIR COLUMN...   (reads RESULTS_DIR/COLUMN.<round>.txt)

Each program prints lines `<workload> <ops/s> ops/s <seconds> s cpu=<seconds> check=<n>` and
one `db-size <bytes> ...` line; lines starting with '#' are comments. Printed: the median ops/s
of each workload per column with the ratios FogKit/GRDB, the database sizes, the median CPU
seconds, and whether the check values agree across programs and rounds.
"""
import glob
import os
import re
import statistics
import sys

WORKLOADS = [
    ("W1-insert", "records/s, 400 per txn"),
    ("W2a-get-1/txn", "lookups/s"),
    ("W2b-get-400/txn", "lookups/s"),
    ("W3a-author-top50", "queries/s"),
    ("W3b-score-range", "queries/s, ~1000 rows each"),
    ("W4-update", "records/s, 400 per txn"),
    ("W5-scan-tag", "records/s"),
]

# (numerator, denominator) pairs printed as ratio columns, when both columns ran.
RATIOS = [("FogKit", "GRDB"), ("FogKit-relaxed", "GRDB"), ("FogKit", "GRDB-FULL"), ("FogKit-PG", "GRDB-FULL"), ("FogKit-PG", "FogKit")]


def parse(path):
    rows, size = {}, None
    with open(path) as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if fields[0] == "db-size" and len(fields) > 1:
                size = int(fields[1])
            elif len(fields) >= 7 and fields[2] == "ops/s":
                rows[fields[0]] = dict(
                    ops=float(fields[1]), sec=float(fields[3]),
                    cpu=float(fields[5].split("=", 1)[1]), check=fields[6].split("=", 1)[1])
    return rows, size


def round_number(path):
    m = re.search(r"\.(\d+)\.txt$", path)
    return int(m.group(1)) if m else 0


def ops(x):
    return f"{x:,.0f}"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    folder, names = sys.argv[1], sys.argv[2:]
    runs = {}
    for n in names:
        paths = sorted(glob.glob(os.path.join(folder, glob.escape(n) + ".*.txt")), key=round_number)
        runs[n] = [parse(p) for p in paths if re.fullmatch(re.escape(n) + r"\.\d+\.txt", os.path.basename(p))]
    ratios = [(a, b) for a, b in RATIOS if a in names and b in names]

    counts = ", ".join(f"{n}={len(r)}" for n, r in runs.items())
    print(f"rounds per column: {counts}; cells: median ops/s (higher is better)\n")
    header = ["workload"] + names + [f"{a}/{b}" for a, b in ratios]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))

    cpu_rows, check_report, disagreements = [], [], []
    for w, unit in WORKLOADS:
        medians, cpus, checks_by_column = {}, [], {}
        for n in names:
            rs = [rows[w] for rows, _ in runs[n] if w in rows]
            if not rs:
                cpus.append("n/a")
                continue
            medians[n] = statistics.median(x["ops"] for x in rs)
            cpus.append(f"{statistics.median(x['cpu'] for x in rs):.3f}")
            checks_by_column[n] = [x["check"] for x in rs]
        cells = [ops(medians[n]) if n in medians else "n/a" for n in names]
        for a, b in ratios:
            cells.append(f"{medians[a] / medians[b]:.2f}×" if a in medians and b in medians and medians[b] else "n/a")
        print(f"| {w} ({unit}) | " + " | ".join(cells) + " |")
        cpu_rows.append(f"| {w} | " + " | ".join(cpus) + " |")
        values = {c for cs in checks_by_column.values() for c in cs}
        if len(values) > 1:
            detail = "; ".join(f"{n}: {', '.join(cs)}" for n, cs in checks_by_column.items())
            disagreements.append(f"{w}: {detail}")
        elif values:
            check_report.append(f"{w}={values.pop()}")

    sizes = {}
    for n in names:
        s = [z for _, z in runs[n] if z is not None]
        if s:
            sizes[n] = statistics.median(s)
    cells = [f"{sizes[n] / 1e6:.1f} MB" if n in sizes else "n/a" for n in names]
    for a, b in ratios:
        cells.append(f"{sizes[a] / sizes[b]:.2f}×" if a in sizes and b in sizes and sizes[b] else "n/a")
    print("| database file at end | " + " | ".join(cells) + " |")

    print("\nmedian CPU seconds (user+sys) per workload; wall time minus CPU is mostly waiting for fsync\n")
    print("| workload | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    print("\n".join(cpu_rows))

    if disagreements:
        print("\nCHECKS DIFFER: these columns did not do the same work, their figures do not compare:")
        for d in disagreements:
            print(f"  {d}")
        return 1
    print("\nchecks agree across all programs and rounds: " + ", ".join(check_report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
