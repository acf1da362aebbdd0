#!/usr/bin/env bash
# Wall and CPU time of `robotsieve filter` on three workloads, with
# and without the verdicts output, at 1 and 2 threads, and what `cat` takes
# to write a file of the same size on the same file system, all in one run:
#
#   frontier x20   a synth_frontier.py frontier of 300,000 URLs (--seed 1) repeated 20 times
#   sorted         the same 6 M URLs sorted by host
#   crawl2019 x40  the 111,824 crawl2019 URLs repeated 40 times
#
# Usage: benches/filter_speed.sh [--robotsieve BIN] [--baseline BIN] [--data DIR] [--repeat R]
#                                [--median] [--workloads "NAME..."]
#
# The base lists and corpora are those callgrind.sh caches (run it first;
# DIR defaults to target/callgrind-data); the lists above are made from them
# once (scripts/bench_args.sh, speed_lists). The artifacts are compiled by
# the baseline when given (else BIN), and by BIN itself when it does not
# read the baseline's format (another format version). Each figure is the
# fastest of R runs (default 2), or with --median the run of median wall
# time (R odd); CPU is user + system seconds of that run. With a baseline,
# each case's runs alternate between the two binaries (baseline, BIN,
# baseline, ...), so that a change in the machine's speed during the run
# falls on both alike. The load average is
# printed first: on a busy machine compare CPU seconds. A binary that has
# `filter --grouping` runs the random-order frontier twice, windowed and
# with the default (auto: partitioned, see README "Filter performance").
# --workloads picks some of frontier-x20, frontier-x20-sorted, crawl2019-x40.
#
# Columns: wall and CPU of the run without outputs (--stats only), and
# with --verdicts to a file (which is synced before its rename); `cat+sync`
# is the wall time of `cat VERDICTS > COPY && sync COPY` on the same file
# system (the writing the verdicts run adds, durably), and `target` is
# plain wall + cat+sync wall: the --verdicts run should take at most
# that.
set -euo pipefail

usage_lines=2,29 n=0 repeat=2
workloads="frontier-x20 frontier-x20-sorted crawl2019-x40"
takes="--robotsieve --baseline --data --shared --repeat --median --workloads"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
compiler=${baseline:-$bin}
speed_lists
lists=$data/speed
out=$(mktemp -d "$data/speed-out.XXXXXX")
trap 'rm -rf "$out"' EXIT

# once FILE CMD...: "wall cpu" of one run, FILE (the run's output, or -)
# removed before it, outside its time: replacing a file of hundreds of MB
# frees its blocks inside the rename or unlink (50 to 97 ms on this
# machine's ext4 with discard, measured with strace -T), a cost of the
# previous run's file, not of the run.
once() {
    local file=$1
    shift
    [ "$file" = - ] || rm -f "$file"
    /usr/bin/time -f '%e %U %S' -o "$out/time" "$@" >/dev/null 2>"$out/err" ||
        { echo "filter_speed.sh: failed: $*" >&2; cat "$out/err" >&2; exit 2; }
    read -r wall user sys < "$out/time"
    awk -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f %.2f\n", w, u + s }'
}

# pick FILE: the figure of the runs listed in FILE ("wall cpu" a line): the
# fastest, or with --median the run of median wall time.
pick() {
    local at=1
    [ -z "$median" ] || at=$(( (repeat + 1) / 2 ))
    sort -n -k1,1 "$1" | sed -n "${at}p"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
printf '%-24s %-19s %-9s %7s %6s %6s %8s %9s %8s %8s %6s\n' binary workload grouping threads wall cpu "M/s" verd-wall verd-cpu cat+sync target
runs=($baseline "$bin")
for workload in $workloads; do
    list=$lists/$workload.txt
    urls=$(wc -l < "$list")
    # Each binary's artifact for the workload, and the groupings it runs.
    artifacts=() groupings=()
    for run in "${runs[@]}"; do
        case $workload in
            crawl2019*) corpus=$data/crawl2019 ;;
            *) corpus=$data/synthetic ;;
        esac
        artifact=$(artifact_for "$run" "$compiler" "$corpus") || exit 2
        artifacts+=("$artifact")
        g=default
        if [[ $("$run" filter --help) == *--grouping* ]]; then
            g=auto
            [ "$workload" = frontier-x20 ] && g="windowed auto"
        fi
        groupings+=("$g")
    done
    for grouping in $(printf '%s\n' ${groupings[@]} | awk '!seen[$0]++'); do
        for threads in 1 2; do
            rm -f "$out"/runs.*
            for _ in $(seq "$repeat"); do
                for i in "${!runs[@]}"; do
                    [[ " ${groupings[$i]} " == *" $grouping "* ]] || continue
                    run=${runs[$i]}
                    flags=()
                    [ "$grouping" = default ] || flags=(--grouping "$grouping")
                    common=(filter --rules "${artifacts[$i]}" --agent mybot --urls "$list" --threads "$threads" "${flags[@]}")
                    once - "$run" "${common[@]}" --stats "$out/stats.json" >> "$out/runs.$i.plain"
                    once "$out/verdicts.tsv" "$run" "${common[@]}" --verdicts "$out/verdicts.tsv" >> "$out/runs.$i.verdicts"
                    once "$out/copy.tsv" sh -c "cat '$out/verdicts.tsv' > '$out/copy.tsv' && sync '$out/copy.tsv'" >> "$out/runs.$i.copy"
                    rm -f "$out/copy.tsv"
                done
            done
            for i in "${!runs[@]}"; do
                [ -s "$out/runs.$i.plain" ] || continue
                awk -v r="$(basename "${runs[$i]}")" -v w="$workload" -v g="$grouping" -v t="$threads" \
                    -v p="$(pick "$out/runs.$i.plain")" -v v="$(pick "$out/runs.$i.verdicts")" \
                    -v c="$(pick "$out/runs.$i.copy")" -v n="$urls" 'BEGIN {
                    split(p, a, " "); split(v, b, " "); split(c, d, " ")
                    printf "%-24s %-19s %-9s %7d %6.2f %6.2f %8.2f %9.2f %8.2f %8.2f %6.2f\n", r, w, g, t, a[1], a[2], n / a[1] / 1e6, b[1], b[2], d[1], a[1] + d[1] }'
            done
        done
    done
done
