#!/usr/bin/env bash
# Instructions per URL of `robotsieve filter --threads 1 --verdicts`, counted
# exactly by callgrind, on the peers workloads and the lists filter_speed.sh
# runs (see benches/README.md):
#
#   crawl2019      the URLs of realworld/urls/crawl2019-linkgraph.tsv (111,824)
#                  with the robots.txt files of the same crawl (an http and an
#                  https record per host, as `peers` builds its corpus);
#   synthetic      a synth_frontier.py frontier of 2N URLs (--seed 1) over every
#                  robots.txt file of realworld/robots/ (the whole-corpus artifact);
#   crawl2019-x40  crawl2019's URLs 40 times (4.47 M), crawl2019's artifact;
#   frontier-x20   a 300,000-URL frontier (--seed 1) 20 times (6 M), the
#                  whole-corpus artifact; frontier-x20-sorted: the same sorted
#                  by host (the lists of scripts/bench_args.sh, speed_lists).
#
# Each figure is (I(2N) - I(N)) / N: the instructions of a run over the first
# 2N URLs of the list minus those of a run over the first N, so process
# start-up and opening the artifact cancel out. The run over no URLs at all
# gives what start-up plus opening (and fully checking) the artifact costs.
#
# Usage: benches/callgrind.sh [--robotsieve BIN] [--baseline BIN] [--compiler BIN] [--n N]
#                              [--workloads "NAME..."] [--shared DIR] [--data DIR] [--agent NAME]
#   BIN    the binary to measure (default target/profiling/robotsieve, built
#          with `cargo build --profile profiling -p robotsieve-cli`); --baseline: a
#          second binary (a previous build, say) measured in the same run on the same
#          artifacts, its lines printed first; --compiler: the binary that
#          compiles the artifacts (default the first of --baseline and BIN),
#          so that both are measured on the very same files
#   N      URLs of the smaller run (default 20000). Every list must hold 2N
#          URLs: at N = 100,000 crawl2019 (111,824) is too short, so measure
#          crawl2019-x40 and frontier-x20 there. A list that is too short, or
#          an unknown workload, is an error naming it (exit 2) before any run.
#   NAME   the workloads to run, in order (default "crawl2019 synthetic")
#   DIR    ../shared (default: $ROBOTSIEVE_SHARED, ../shared, /work/shared);
#          --data: where inputs are cached (default target/callgrind-data)
#
# Inputs (URL lists, corpora, the frontier) are cached in the data directory;
# artifacts are cached per checksum of the binary that compiled them. Both
# binaries run on the compiler's artifact; a binary that does not read its
# format (`inspect` refuses it: another format version) runs on one it
# compiles itself (scripts/bench_args.sh, artifact_for).
# Prints one line per workload and binary; exit status 2 when something is
# missing or a run fails.
set -euo pipefail

usage_lines=2,43 n=20000 workloads="crawl2019 synthetic"
takes="--robotsieve --baseline --compiler --n --workloads --shared --data --agent"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
realworld=$shared/realworld
[ -d "$realworld" ] || { echo "callgrind.sh: no shared/realworld (give --shared DIR)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 2; }
mkdir -p "$data"
data=$(cd "$data" && pwd)
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
bin=$(absolute "$bin")
[ -z "$baseline" ] || baseline=$(absolute "$baseline")
compiler=$(absolute "${compiler:-${baseline:-$bin}}")
sum=$(sha1sum "$compiler" | cut -c1-12)

# corpus.jsonl for hosts: one line "host<TAB>robots file" per host on stdin.
# Bodies are the files' exact bytes (body_b64 when they are not UTF-8).
corpus_of_hosts() {
    python3 -c '
import base64, json, sys
for line in sys.stdin:
    host, path = line.rstrip("\n").split("\t")
    raw = open(path, "rb").read()
    try:
        body = {"body": raw.decode("utf-8")}
    except UnicodeDecodeError:
        body = {"body_b64": base64.b64encode(raw).decode()}
    for scheme in ("http", "https"):
        print(json.dumps(dict(url=f"{scheme}://{host}/robots.txt", status=200, **body)))
'
}

# Inputs, built once.
c19=$data/crawl2019
if [ ! -s "$c19/corpus.jsonl" ]; then
    mkdir -p "$c19"
    tail -n +2 "$realworld/urls/crawl2019-linkgraph.tsv" | cut -f2 > "$c19/urls.$$.tmp" && mv "$c19/urls.$$.tmp" "$c19/urls.txt"
    tail -n +2 "$realworld/urls/crawl2019-linkgraph.tsv" | awk -F'\t' -v rw="$realworld" \
        '$3 != "" { h = tolower($1); if (!(h in seen)) { seen[h]; print h "\t" rw "/" $3 } }' |
        corpus_of_hosts > "$c19/corpus.$$.tmp" && mv "$c19/corpus.$$.tmp" "$c19/corpus.jsonl"
fi
syn=$data/synthetic
if [ ! -s "$syn/corpus.jsonl" ]; then
    mkdir -p "$syn"
    for f in "$realworld"/robots/*.txt; do
        h=$(basename "$f" .txt)
        printf '%s\t%s\n' "$(printf '%s' "$h" | tr 'A-Z' 'a-z')" "$f"
    done | corpus_of_hosts > "$syn/corpus.$$.tmp" && mv "$syn/corpus.$$.tmp" "$syn/corpus.jsonl"
fi

# Each workload's list and corpus directory, checked before any run: an
# unknown name or a list of fewer than 2N URLs exits 2 naming it.
lists=() dirs=()
for workload in $workloads; do
    case $workload in
        crawl2019) list=$c19/urls.txt ;;
        synthetic) list=$(frontier $((2 * n))) || exit 2 ;;
        crawl2019-x40|frontier-x20|frontier-x20-sorted)
            speed_lists
            list=$data/speed/$workload.txt ;;
        *) echo "callgrind.sh: unknown workload $workload (crawl2019, synthetic, crawl2019-x40, frontier-x20, frontier-x20-sorted)" >&2; exit 2 ;;
    esac
    have=$(head -n $((2 * n)) "$list" | wc -l)
    [ "$have" -eq $((2 * n)) ] ||
        { echo "callgrind.sh: workload $workload: $list has $have URLs, fewer than 2N = $((2 * n))" >&2; exit 2; }
    lists+=("$list")
    case $workload in crawl2019*) dirs+=("$c19") ;; *) dirs+=("$syn") ;; esac
done
[ ${#lists[@]} -gt 0 ] || { echo "callgrind.sh: --workloads names no workload" >&2; exit 2; }

# instructions BIN WORKDIR ARTIFACT URLS: the instructions callgrind counts for one filter run.
instructions() {
    local run=$1
    shift
    local out=$1/callgrind.out
    rm -f "$out"
    valgrind --tool=callgrind --callgrind-out-file="$out" "$run" filter --rules "$2" --agent "$agent" \
        --urls "$3" --verdicts "$1/verdicts.txt" --threads 1 >/dev/null 2>"$1/valgrind.log" ||
        { echo "callgrind.sh: filter failed, see $1/valgrind.log" >&2; exit 2; }
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

# Each run works in a directory of its own, so that two runs at once (two
# people, or two binaries) never read each other's callgrind output.
runs=$(mktemp -d "$data/callgrind-run.XXXXXX")
trap 'rm -rf "$runs"' EXIT

echo "binary $bin${baseline:+, baseline $baseline}; artifacts compiled by $compiler (sha1 $sum), agent $agent, N = $n"
i=0
for workload in $workloads; do
    list=${lists[$i]} dir=${dirs[$i]}
    i=$((i + 1))
    work=$runs/$workload
    mkdir -p "$work"
    head -n "$n" "$list" > "$work/n.txt"
    head -n $((2 * n)) "$list" > "$work/2n.txt"
    : > "$work/none.txt"
    for run in $baseline "$bin"; do
        artifact=$(artifact_for "$run" "$compiler" "$dir") || exit 2
        [ "$artifact" = "$dir/rules-$sum.rsv" ] ||
            echo "($run does not read $compiler's format: measured on $artifact, compiled by itself)"
        open=$(instructions "$run" "$work" "$artifact" "$work/none.txt")
        one=$(instructions "$run" "$work" "$artifact" "$work/n.txt")
        two=$(instructions "$run" "$work" "$artifact" "$work/2n.txt")
        label=$workload
        [ "$run" = "$bin" ] || label="$workload (baseline)"
        awk -v w="$label" -v n="$n" -v a="$one" -v b="$two" -v o="$open" -v s="$(stat -c %s "$artifact")" 'BEGIN {
            printf "%-22s instructions per URL %.1f  (I(%d) = %d, I(%d) = %d); start-up + open of the %.1f MB artifact %d\n",
                w, (b - a) / n, n, a, 2 * n, b, s / 1e6, o }'
    done
done
