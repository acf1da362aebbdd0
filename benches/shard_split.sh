#!/usr/bin/env bash
# `robotsieve shard-of --split` at frontier size: the synthetic frontier of
# --urls URLs (synth_frontier.py, --seed 1) split over the 64 shards of the
# synthetic corpus's shard set, and the same list repeated --rounds times,
# each split checked and measured:
#
#   - row for row: every part through its shard file alone
#     (`filter --shard K/64`), its rows put back at their input lines (the
#     parts' .lines files), equals the whole set's verdicts on the list,
#     every line exactly once (`cmp`);
#   - peak RSS and wall time of the split (/usr/bin/time) under two sort
#     budgets (--memory): 100M, which both lists exceed (RSS should stay
#     flat in the list's length: the sort spills beyond its budget), and
#     the default 1G, which the longer list fills.
#
# Usage: benches/shard_split.sh [--robotsieve BIN] [--urls N] [--rounds R]
#                               [--data DIR] [--shared DIR]
#   N   URLs of the base frontier (default 1000000); R: the longest list is
#       the frontier R times (default 10); the lists measured are 1x and Rx
#   The synthetic corpus comes from callgrind.sh's cache (run it first; DIR
#   defaults to target/callgrind-data).
# Prints one line per list; exit status 1 when a split's verdicts differ,
# 2 when something is missing.
set -euo pipefail

usage_lines=2,23 urls=1000000 rounds=10 n=0
takes="--robotsieve --urls --rounds --data --shared"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
[ -s "$data/synthetic/corpus.jsonl" ] ||
    { echo "$script: $data/synthetic/corpus.jsonl is missing (run benches/callgrind.sh first)" >&2; exit 2; }
base=$(frontier "$urls") || exit 2
shards=64
work=$(mktemp -d "$data/shard-split.XXXXXX")
trap 'rm -rf "$work"' EXIT

set_dir=$data/synthetic/set-$shards-$(sha1sum "$bin" | cut -c1-12)
if [ ! -s "$set_dir/$(printf '%05d-of-%05d' 0 "$shards").rsv" ]; then
    rm -rf "$set_dir.tmp"
    nice -n 10 "$bin" compile --agent "$agent" --shards "$shards" --corpus "$data/synthetic/corpus.jsonl" \
        -o "$set_dir.tmp" >"$work/compile.log" 2>&1 ||
        { echo "$script: compile failed:" >&2; cat "$work/compile.log" >&2; exit 2; }
    rm -rf "$set_dir" && mv "$set_dir.tmp" "$set_dir"
fi

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $shards shards"
printf '%-12s %12s %7s %9s %10s %s\n' list urls memory wall peak-MB verdicts
status=0
for budget in 100M 1G; do
for copies in 1 "$rounds"; do
    list=$work/list-$copies.txt
    for _ in $(seq "$copies"); do cat "$base"; done > "$list"
    lines=$(wc -l < "$list")
    parts=$work/parts-$copies
    /usr/bin/time -f '%e %M' -o "$work/time" "$bin" shard-of --shards "$shards" --line-numbers \
        --memory "$budget" --split "$parts" --urls "$list" 2>"$work/split.log" ||
        { echo "$script: shard-of --split failed:" >&2; cat "$work/split.log" >&2; exit 2; }
    read -r wall peak_kb < "$work/time"

    # The whole set's rows, numbered by input line (the list has no blank
    # lines, so row i is line i).
    "$bin" filter --agent "$agent" --rules "$set_dir" --urls "$list" --verdicts "$work/whole.tsv" 2>/dev/null
    nl -ba -w1 -s$'\t' "$work/whole.tsv" > "$work/whole.numbered"
    # Each part through its shard file alone, its rows at their input lines.
    : > "$work/parts.numbered"
    for k in $(seq 0 $((shards - 1))); do
        stem=$(printf '%05d-of-%05d' "$k" "$shards")
        [ -s "$parts/$stem.txt" ] || continue
        "$bin" filter --agent "$agent" --rules "$set_dir/$stem.rsv" --shard "$k/$shards" \
            --urls "$parts/$stem.txt" --verdicts "$work/part.tsv" 2>/dev/null
        paste "$parts/$stem.lines" "$work/part.tsv" >> "$work/parts.numbered"
    done
    if [ -s "$parts/invalid.txt" ]; then
        "$bin" filter --agent "$agent" --rules "$set_dir" --urls "$parts/invalid.txt" --verdicts "$work/part.tsv" 2>/dev/null
        paste "$parts/invalid.lines" "$work/part.tsv" >> "$work/parts.numbered"
    fi
    LC_ALL=C sort -t$'\t' -k1,1n -S 25% "$work/parts.numbered" -o "$work/parts.sorted"
    if cmp -s "$work/whole.numbered" "$work/parts.sorted"; then
        same="identical ($lines rows)"
    else
        same="DIFFER"
        status=1
    fi
    printf '%-12s %12s %7s %9s %10.1f %s\n' "frontier-x$copies" "$lines" "$budget" "$wall" "$(awk -v k="$peak_kb" 'BEGIN { print k / 1024 }')" "$same"
    rm -rf "$parts" "$list" "$work"/*.tsv "$work"/*.numbered "$work"/*.sorted
done
done
exit "$status"
