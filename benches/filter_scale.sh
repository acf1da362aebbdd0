#!/usr/bin/env bash
# Filter throughput against the artifact's size: the same number of URLs,
# in random order, through a 1x and a 4x artifact of the real corpus made
# distinct (31,898 and 127,592 origins: origin i is https://h{i}.example
# serving real file i mod 31,898 of realworld/robots plus one rule unique to
# its host, as benches/src/bin/compile_scale.rs makes them). The aim is the 4x run
# at least 0.9x the speed of the 1x run.
#
# Usage: benches/filter_scale.sh [--robotsieve BIN] [--baseline BIN] [--urls N] [--threads T]
#                                [--rounds R] [--groupings "G..."] [--keep]
#
# Each list holds N URLs (default 3,000,000): a random origin of the
# artifact's and a path of the synth_frontier.py frontier (callgrind.sh's
# target/callgrind-data/synthetic/frontier-300000.txt when present, else a
# few fixed paths), so both lists have the same paths and the same share of
# unknown origins (none). Each artifact is run with each --grouping of G
# (default "windowed auto"; auto partitions), T threads (default 1), and the
# figures are CPU seconds (user + system, and each), URLs per CPU second, peak
# RSS and minor page faults (the mapped artifact's pages, mostly); the load
# average is printed first. R rounds (default 1), the 1x and 4x cases
# alternating within each; with --baseline (a previous build, say), both
# binaries run each case one after the other, so that their CPU seconds are
# measured under the same load. The end prints, per binary and grouping, the
# 4x speed over the 1x (1x CPU seconds / 4x CPU seconds) of each round and of
# the rounds' sums. A binary that does
# not read this tree's artifacts (another format version: `inspect` refuses
# them) runs on the same origins compiled by itself (`compile_scale
# synth-corpus`, then its `compile --corpus`; origins-N-SUM.rsv, SUM its
# sha1's first 12 hex digits). Everything generated is under
# target/filter-scale/ and deleted at the end unless --keep (the 4x
# artifact is about 700 MB, the lists about 52 MB per million URLs).
#
# The flatness figure: 9 M URLs, partitioned, one thread, three rounds:
#   benches/filter_scale.sh --urls 9000000 --groupings auto --rounds 3
set -euo pipefail

usage_lines=2,34 n=0 rounds=1 urls=3000000 threads=1 groupings="windowed auto"
takes="--robotsieve --baseline --rounds --urls --threads --groupings --keep"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
work=$scale_dir
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT
nice -n 10 cargo build --profile profiling -q -p robotsieve-benches --bin compile_scale
scale=target/profiling/compile_scale
frontier=target/callgrind-data/synthetic/frontier-300000.txt

for n in 31898 127592; do
    artifact=$work/origins-$n.rsv
    if [ ! -s "$artifact" ]; then
        nice -n 10 "$scale" synth-build "$n" "$artifact" $((1 << 30)) real > "$work/build-$n.log" ||
            { echo "filter_scale.sh: building $artifact failed, see $work/build-$n.log" >&2; exit 2; }
    fi
    if [ ! -s "$work/urls-$n.txt" ]; then
        python3 - "$n" "$urls" "$frontier" > "$work/urls-$n.txt" <<'EOF'
import random, sys
n, count, frontier = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
paths = []
try:
    with open(frontier) as f:
        for line in f:
            rest = line.rstrip("\n").split("://", 1)[-1]
            cut = rest.find("/")
            paths.append(rest[cut:] if cut >= 0 else "/")
except OSError:
    paths = ["/", "/index.html", "/search?q=x", "/a/b/c", "/robotsieve-bench-0/x"]
rng = random.Random(1)
out = sys.stdout
for _ in range(count):
    out.write("https://h%d.example%s\n" % (rng.randrange(n), paths[rng.randrange(len(paths))]))
EOF
    fi
done

# A binary that does not read this tree's format (another format version)
# runs on the same origins compiled by itself (`compile --corpus`).
for run in $baseline "$bin"; do
    for n in 31898 127592; do
        reads "$run" "$work/origins-$n.rsv" && continue
        own=$work/origins-$n-$(sha1sum "$run" | cut -c1-12).rsv
        [ ! -s "$own" ] || continue
        echo "($run does not read $work/origins-$n.rsv: compiling $own)"
        if [ ! -s "$work/corpus-$n.jsonl" ]; then
            nice -n 10 "$scale" synth-corpus "$n" "$work/corpus-$n.jsonl" ||
                { echo "filter_scale.sh: writing $work/corpus-$n.jsonl failed" >&2; exit 2; }
        fi
        nice -n 10 "$run" compile --agent mybot --corpus "$work/corpus-$n.jsonl" -o "$own.$$.tmp.rsv" > "$own.log" 2>&1 &&
            mv "$own.$$.tmp.rsv" "$own" ||
            { echo "filter_scale.sh: $run compile failed, see $own.log" >&2; rm -f "$own.$$.tmp.rsv"; exit 2; }
    done
done

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $urls URLs, $threads threads"
for run in $baseline "$bin"; do
    echo "binary $run (sha1 $(sha1sum "$run" | cut -c1-12)): $("$run" --version)"
done
printf '%-24s %-10s %8s %10s %8s %8s %6s %6s %12s %9s %9s\n' \
    binary origins MB grouping wall cpu user sys "M URLs/cpu-s" "RSS MB" "minor flt"
: > "$work/cpu"
for round in $(seq "$rounds"); do
for n in 31898 127592; do
    for grouping in $groupings; do
      for run in $baseline "$bin"; do
        artifact=$(scale_artifact "$run" "$n") || exit 2
        /usr/bin/time -f '%e %U %S %M %R' -o "$work/time" "$run" filter --rules "$artifact" --agent mybot \
            --urls "$work/urls-$n.txt" --threads "$threads" --grouping "$grouping" --stats "$work/stats.json" \
            2>"$work/err" || { echo "filter_scale.sh: filter failed" >&2; cat "$work/err" >&2; exit 2; }
        read -r wall user sys rss faults < "$work/time"
        echo "$(basename "$run") $grouping $round $n $user $sys" >> "$work/cpu"
        awk -v b="$(basename "$run")" -v n="$n" -v g="$grouping" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
            -v f="$faults" -v c="$urls" -v mb="$(stat -c %s "$artifact")" 'BEGIN {
            printf "%-24s %-10d %8.0f %10s %8.2f %8.2f %6.2f %6.2f %12.2f %9.0f %9d\n",
                b, n, mb / 1e6, g, w, u + s, u, s, c / (u + s) / 1e6, r / 1024, f }'
      done
    done
done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
# 4x speed over 1x: 1x CPU seconds over 4x CPU seconds, each round and summed.
awk '{ key = $1 " " $2; cpu[key, $3, $4] = $5 + $6; if (!(key in seen)) { seen[key]; order[++k] = key }
       if ($3 > rounds) rounds = $3 }
     END {
       for (i = 1; i <= k; i++) {
           key = order[i]; line = ""; one = 0; four = 0
           for (r = 1; r <= rounds; r++) {
               line = line sprintf(" %.3f", cpu[key, r, 31898] / cpu[key, r, 127592])
               one += cpu[key, r, 31898]; four += cpu[key, r, 127592]
           }
           printf "4x/1x speed, %s: rounds%s; summed %.3f (1x %.2f CPU s, 4x %.2f)\n", key, line, one / four, one, four
       }
     }' "$work/cpu"
