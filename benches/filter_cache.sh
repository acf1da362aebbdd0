#!/usr/bin/env bash
# Cache misses per URL of `robotsieve filter --threads 1`, simulated by
# valgrind's cachegrind (deterministic: the same on a quiet and a loaded
# machine), so that two gaps of the filter can be shown whatever the load:
#
#   random / sorted   the first N URLs of filter_speed.sh's frontier x20 (in
#                     random origin order) against the same URLs sorted by
#                     host, over the whole-corpus artifact;
#   1x / 4x           the first N URLs of filter_scale.sh's two lists, each
#                     over its artifact (31,898 and 127,592 origins).
#
# Usage: benches/filter_cache.sh [--robotsieve BIN] [--baseline BIN] [--n N] [--data DIR]
#
# Run callgrind.sh and filter_scale.sh --keep first (their inputs are
# reused: the frontier x20 is filter_speed.sh's, made from callgrind.sh's
# when missing; the 1x and 4x lines are skipped without filter_scale.sh's
# files). Each binary runs on the artifacts it reads: the baseline's (or
# BIN's) compiled whole-corpus artifact, and filter_scale.sh's, or those it
# compiled with a binary of another format version (see bench_args.sh). N
# defaults to 600,000. The random list runs --grouping windowed and
# partitioned, the sorted one windowed (what auto picks), the 1x and 4x lists
# partitioned; with --baseline each case runs the baseline first. The
# simulated caches are a 48 KiB 12-way D1 and, as the last level, one core's
# 2 MiB 16-way L2 (this machine's L3 is shared by every process on it).
# Figures per URL: instructions, D1 misses and last-level data misses of the
# whole run (start-up and opening the artifact included) over N.
set -euo pipefail

usage_lines=2,26
takes="--robotsieve --baseline --n --data --shared"
n=600000
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
command -v valgrind >/dev/null || { echo "filter_cache.sh: valgrind is not installed" >&2; exit 2; }
compiler=${baseline:-$bin}
speed_lists
scale=$scale_dir
# Each binary's 1x and 4x artifacts, before anything runs.
for origins in 31898 127592; do
    [ -s "$scale/origins-$origins.rsv" ] || continue
    for run in $baseline "$bin"; do
        scale_artifact "$run" "$origins" > /dev/null || exit 2
    done
done
out=$(mktemp -d "${TMPDIR:-/tmp}/filter-cache.XXXXXX")
trap 'rm -rf "$out"' EXIT

# slice NAME LIST: the first N lines of LIST as $out/NAME.txt (1 when LIST is there).
slice() {
    [ -s "$2" ] || return 1
    head -n "$n" "$2" > "$out/$1.txt"
}

# measure LABEL ARTIFACTS LIST GROUPING: one line of figures per binary.
# ARTIFACTS is `synthetic` (callgrind.sh's whole-corpus workload) or one of
# filter_scale.sh's origin counts: each binary runs on the artifact it reads
# (scripts/bench_args.sh: artifact_for, scale_artifact).
measure() {
    local artifact
    for run in $baseline "$bin"; do
        if [ "$2" = synthetic ]; then
            artifact=$(artifact_for "$run" "$compiler" "$data/synthetic") || exit 2
        else
            artifact=$(scale_artifact "$run" "$2") || exit 2
        fi
        valgrind --tool=cachegrind --cache-sim=yes --D1=49152,12,64 --LL=2097152,16,64 \
            --cachegrind-out-file="$out/cg.out" "$run" filter --rules "$artifact" --agent mybot --urls "$3" \
            --threads 1 --grouping "$4" --stats "$out/stats.json" >/dev/null 2>"$out/log" ||
            { echo "filter_cache.sh: $run failed, see below" >&2; cat "$out/log" >&2; exit 2; }
        awk -v b="$(basename "$run")" -v l="$1" -v g="$4" -v n="$n" '
            / I *refs:/ { gsub(",", "", $4); i = $4 }
            / D1 *misses:/ { gsub(",", "", $4); d = $4 }
            / LLd misses:/ { gsub(",", "", $4); ll = $4 }
            END { printf "%-24s %-14s %-12s %8.0f %8.2f %8.2f\n", b, l, g, i / n, d / n, ll / n }' "$out/log"
    done
}

echo "N = $n; $(git rev-parse --short HEAD 2>/dev/null || echo '?'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-24s %-14s %-12s %8s %8s %8s\n' binary workload grouping "I/URL" "D1/URL" "LL/URL"
slice random "$data/speed/frontier-x20.txt"
LC_ALL=C sort -t/ -k3,3 -s "$out/random.txt" > "$out/sorted.txt"
measure "random" synthetic "$out/random.txt" windowed
measure "random" synthetic "$out/random.txt" partitioned
measure "sorted" synthetic "$out/sorted.txt" windowed
for origins in 31898 127592; do
    if slice "scale-$origins" "$scale/urls-$origins.txt" && [ -s "$scale/origins-$origins.rsv" ]; then
        measure "$origins origins" "$origins" "$out/scale-$origins.txt" partitioned
    else
        echo "(no $scale/urls-$origins.txt: run filter_scale.sh --keep first)"
    fi
done
