#!/usr/bin/env bash
# Damage judge: K copies of the whole-corpus artifact, each with one byte
# flipped (XOR with a mask from 1 to 255) at a uniform offset, both drawn
# from a seeded generator. For each copy:
#
#   inspect --verify   must refuse it (exit 2): every byte is checked;
#   filter             on each workload's list, with --verdicts, must either
#                      exit 2 or write verdicts `cmp`-identical to those of
#                      the intact artifact: a damaged byte never decides a
#                      verdict.
#
# Usage: benches/damage.sh [--robotsieve BIN] [--copies K] [--seed S] [--urls M]
#                          [--workloads "NAME..."] [--threads T] [--data DIR]
#                          [--shared DIR] [--agent NAME]
#   K      copies (default 100); S: the generator's seed (default 1)
#   M      filter only the first M URLs of each list (default 0: all of it)
#   NAME   lists of filter_speed.sh (scripts/bench_args.sh, speed_lists):
#          crawl2019-x40, frontier-x20, frontier-x20-sorted (default
#          "crawl2019-x40 frontier-x20"); all run on the whole-corpus
#          artifact (synthetic/corpus.jsonl compiled by BIN), which holds
#          crawl2019's hosts too
#   T      filter's --threads (default 2)
#
# Prints a line per copy (offset, mask, what verify and each filter run did,
# and verify's message), then the table: copies refused by verify, and per
# workload filter runs that exited 2, gave identical verdicts, gave
# DIFFERENT verdicts, or ended otherwise (a panic or a signal). Exit status
# 1 when a copy was accepted by verify, a verdict differed or a run crashed;
# 2 when an input is missing or the intact artifact fails.
set -euo pipefail

usage_lines=2,29 n=0 threads=2 urls=0 copies=100 seed=1
workloads="crawl2019-x40 frontier-x20"
takes="--robotsieve --copies --seed --urls --workloads --threads --data --shared --agent"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
speed_lists
artifact=$(compiled "$bin" "$data/synthetic") || exit 2
work=$(mktemp -d "$data/damage.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Each workload's list (its first M URLs with --urls) and the intact
# artifact's verdicts on it.
lists=() names=($workloads)
for workload in $workloads; do
    case $workload in
        crawl2019-x40|frontier-x20|frontier-x20-sorted) list=$data/speed/$workload.txt ;;
        *) echo "damage.sh: unknown workload $workload (crawl2019-x40, frontier-x20, frontier-x20-sorted)" >&2; exit 2 ;;
    esac
    if [ "$urls" -gt 0 ]; then
        head -n "$urls" "$list" > "$work/$workload.urls"
        list=$work/$workload.urls
    fi
    lists+=("$list")
    "$bin" filter --rules "$artifact" --agent "$agent" --urls "$list" --threads "$threads" \
        --verdicts "$work/intact-$workload.tsv" 2>"$work/err" ||
        { echo "damage.sh: filter fails on the intact $artifact:" >&2; cat "$work/err" >&2; exit 2; }
done
"$bin" inspect --rules "$artifact" --verify >/dev/null 2>"$work/err" ||
    { echo "damage.sh: inspect --verify refuses the intact $artifact:" >&2; cat "$work/err" >&2; exit 2; }

size=$(stat -c %s "$artifact")
python3 -c '
import random, sys
size, copies, seed = map(int, sys.argv[1:])
rng = random.Random(seed)
for _ in range(copies):
    print(rng.randrange(size), rng.randrange(1, 256))
' "$size" "$copies" "$seed" > "$work/flips"

first=
[ "$urls" -eq 0 ] || first=" (first $urls URLs)"
echo "binary $bin; artifact $artifact ($size bytes); $copies copies, seed $seed; workloads $workloads$first; $threads threads"
printf '%5s %12s %4s  %-8s' copy offset mask verify
for workload in $workloads; do printf ' %-20s' "$workload"; done
echo "  verify's message"
declare -A count
damaged=$work/damaged.rsv
copy=0
while read -r offset mask; do
    copy=$((copy + 1))
    cp "$artifact" "$damaged"
    python3 -c '
import sys
path, offset, mask = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "r+b") as f:
    f.seek(offset)
    byte = f.read(1)[0]
    f.seek(offset)
    f.write(bytes([byte ^ mask]))
' "$damaged" "$offset" "$mask"
    status=0
    "$bin" inspect --rules "$damaged" --verify >/dev/null 2>"$work/verify.err" || status=$?
    case $status in
        2) verify=refused ;;
        0) verify=ACCEPTED ;;
        *) verify="CRASH($status)" ;;
    esac
    count[verify $verify]=$(( ${count[verify $verify]:-0} + 1 ))
    printf '%5d %12d %4d  %-8s' "$copy" "$offset" "$mask" "$verify"
    for i in "${!lists[@]}"; do
        name=${names[$i]}
        rm -f "$work/verdicts.tsv"
        status=0
        "$bin" filter --rules "$damaged" --agent "$agent" --urls "${lists[$i]}" --threads "$threads" \
            --verdicts "$work/verdicts.tsv" >/dev/null 2>"$work/filter.err" || status=$?
        case $status in
            2) outcome="exit 2" ;;
            0) if cmp -s "$work/verdicts.tsv" "$work/intact-$name.tsv"; then outcome=identical; else outcome=DIFFERENT; fi ;;
            *) outcome="CRASH($status)" ;;
        esac
        count[$name $outcome]=$(( ${count[$name $outcome]:-0} + 1 ))
        printf ' %-20s' "$outcome"
    done
    printf '  %s\n' "$(head -n 1 "$work/verify.err" | sed -e "s|^robotsieve: ||" -e "s|$damaged: ||" | cut -c1-100)"
done < "$work/flips"
rm -f "$damaged"

echo
printf '%-22s %8s %8s %10s %10s %8s\n' "" refused "exit 2" identical DIFFERENT other
accepted=$(( copies - ${count[verify refused]:-0} ))
printf '%-22s %8d %8s %10s %10s %8d\n' "inspect --verify" "${count[verify refused]:-0}" - - - "$accepted"
failed=$accepted
for name in $workloads; do
    other=$(( copies - ${count[$name exit 2]:-0} - ${count[$name identical]:-0} - ${count[$name DIFFERENT]:-0} ))
    printf '%-22s %8s %8d %10d %10d %8d\n' "filter $name" - "${count[$name exit 2]:-0}" \
        "${count[$name identical]:-0}" "${count[$name DIFFERENT]:-0}" "$other"
    failed=$(( failed + ${count[$name DIFFERENT]:-0} + other ))
done
if [ "$failed" -gt 0 ]; then
    echo "damage.sh: FAILED: $failed of the outcomes above are a copy accepted by verify, DIFFERENT verdicts or a crash" >&2
    exit 1
fi
echo "every copy refused by verify; every filter run exited 2 or gave identical verdicts"
