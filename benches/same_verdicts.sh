#!/usr/bin/env bash
# Checks that two robotsieve binaries give byte-identical `filter --verdicts`
# (and `--stats` counts) on the two callgrind.sh workloads: every URL of
# crawl2019, and a synth_frontier.py frontier (--seed 1, N URLs), each at 1
# and 2 threads. Meant for "verdicts identical to a previous build's": build that
# binary, then
#
#   benches/same_verdicts.sh --baseline MAIN_BIN [--robotsieve BIN] [--n N] [--data DIR] [--shared DIR]
#
# BIN defaults to target/profiling/robotsieve (built first), N to 300000, DIR to
# target/callgrind-data (the inputs callgrind.sh caches there are reused:
# run callgrind.sh once first). The artifacts are compiled by the baseline
# (cached per its checksum, as callgrind.sh does) and both binaries run on
# them, unless BIN does not read the baseline's format (another format
# version: `inspect` refuses it), in which case BIN runs on the artifact it
# compiles from the same corpus. Prints one line per comparison; exit
# status 1 when any differ, 2 when something is missing.
set -euo pipefail

usage_lines=2,17 n=300000
takes="--robotsieve --baseline --n --data --shared"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
[ -n "$baseline" ] || { echo "same_verdicts.sh: give --baseline BIN" >&2; exit 2; }
for f in "$data/crawl2019/corpus.jsonl" "$data/synthetic/corpus.jsonl"; do
    [ -s "$f" ] || { echo "same_verdicts.sh: $f is missing (run benches/callgrind.sh first)" >&2; exit 2; }
done
frontier=$(frontier "$n") || exit 2
out=$(mktemp -d "$data/same-verdicts.XXXXXX")
trap 'rm -rf "$out"' EXIT
status=0
for workload in crawl2019 synthetic; do
    dir=$data/$workload
    baseline_artifact=$(artifact_for "$baseline" "$baseline" "$dir") || exit 2
    bin_artifact=$(artifact_for "$bin" "$baseline" "$dir") || exit 2
    [ "$bin_artifact" = "$baseline_artifact" ] ||
        echo "($bin does not read $baseline's format: each runs on the artifact it compiled)"
    if [ "$workload" = crawl2019 ]; then list=$dir/urls.txt; else list=$frontier; fi
    for threads in 1 2; do
        for side in baseline bin; do
            run=$baseline artifact=$baseline_artifact
            [ "$side" = bin ] && run=$bin artifact=$bin_artifact
            "$run" filter --rules "$artifact" --agent "$agent" --urls "$list" --threads "$threads" \
                --verdicts "$out/$side.tsv" --stats "$out/$side.json" 2>"$out/$side.log" ||
                { echo "same_verdicts.sh: $run failed:" >&2; cat "$out/$side.log" >&2; exit 2; }
            python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["counts"], sort_keys=True))' \
                "$out/$side.json" > "$out/$side.counts"
        done
        urls=$(wc -l < "$out/bin.tsv")
        if cmp -s "$out/baseline.tsv" "$out/bin.tsv" && cmp -s "$out/baseline.counts" "$out/bin.counts"; then
            echo "$workload, $threads thread(s): $urls verdicts identical; counts $(cat "$out/bin.counts")"
        else
            echo "$workload, $threads thread(s): DIFFERENT verdicts or counts ($(cat "$out/baseline.counts") against $(cat "$out/bin.counts"))"
            diff "$out/baseline.tsv" "$out/bin.tsv" | head -5 || true
            status=1
        fi
    done
done
exit $status
