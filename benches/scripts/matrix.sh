#!/usr/bin/env bash
# filter --matrix against one filter run per crawler, on a synthetic frontier:
# checks that the matrix equals the five single runs URL by URL, and measures
# the cost of five crawlers in one pass against one crawler's run (the target
# is at most 2x). Usage, from the workspace root (it builds the profiling
# profile, target/profiling/robotsieve, unless ROBOTSIEVE names a binary):
#
#     bash benches/scripts/matrix.sh [N=1000000] [THREADS=2] [REPEAT=3]
#
# Inputs are cached in target/matrix-data (delete it to rebuild them). Needs
# ../shared/realworld (or $ROBOTSIEVE_SHARED/realworld) and python3.
set -euo pipefail
n=${1:-1000000}
threads=${2:-2}
repeat=${3:-3}
if [ -z "${ROBOTSIEVE:-}" ]; then
    nice -n 10 cargo build --profile profiling -q -p robotsieve-cli
fi
bin=${ROBOTSIEVE:-target/profiling/robotsieve}
shared=${ROBOTSIEVE_SHARED:-../shared}
real="$shared/realworld"
[ -d "$real/robots" ] || { echo "skipped: $real is absent"; exit 0; }
data=target/matrix-data
mkdir -p "$data"
agents=(gptbot ccbot claudebot google-extended googlebot)

if [ ! -s "$data/urls-$n.txt" ]; then
    echo "generating a $n-URL frontier"
    python3 "$real/synth_frontier.py" --root "$real" --n "$n" --seed 1 | tail -n +2 | cut -f2 > "$data/urls-$n.txt"
fi
if [ ! -s "$data/rules.rsv" ]; then
    echo "compiling $real/robots for ${agents[*]}"
    args=()
    for a in "${agents[@]}"; do args+=(--agent "$a"); done
    "$bin" compile "${args[@]}" --robots-dir "$real/robots" -o "$data/rules.rsv"
fi
urls="$data/urls-$n.txt"
elapsed() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_seconds"])' "$1"; }
best() { sort -g | head -1; }

# One crawler at a time, each fastest of REPEAT.
single_total=0
for a in "${agents[@]}"; do
    t=$(for _ in $(seq "$repeat"); do
        "$bin" filter --rules "$data/rules.rsv" --agent "$a" --urls "$urls" --threads "$threads" \
            --verdicts "$data/single-$a.tsv" --stats "$data/single-$a.json"
        elapsed "$data/single-$a.json"
    done | best)
    echo "single  $a: ${t}s"
    single_total=$(python3 -c "print($single_total + $t)")
done
single_mean=$(python3 -c "print($single_total / ${#agents[@]})")

# All five in one pass.
t_matrix=$(for _ in $(seq "$repeat"); do
    "$bin" filter --rules "$data/rules.rsv" --all-agents --urls "$urls" --threads "$threads" \
        --matrix "$data/matrix.tsv" --stats "$data/matrix.json"
    elapsed "$data/matrix.json"
done | best)
echo "matrix  ${#agents[@]} crawlers: ${t_matrix}s"

# URL by URL: the matrix equals the single runs.
python3 - "$data" "${agents[@]}" <<'PY'
import sys
data, agents = sys.argv[1], sys.argv[2:]
singles = [open(f"{data}/single-{a}.tsv", encoding="utf-8", errors="surrogateescape") for a in agents]
with open(f"{data}/matrix.tsv", encoding="utf-8", errors="surrogateescape") as m:
    header = m.readline().rstrip("\n").split("\t")
    assert header == ["url"] + agents, header
    rows = 0
    for line in m:
        cols = line.rstrip("\n").rsplit("\t", len(agents))
        for c, f in enumerate(singles):
            verdict, url = f.readline().rstrip("\n").split("\t", 1)
            assert url == cols[0] and verdict == cols[1 + c], (rows, agents[c], line, verdict, url)
        rows += 1
for f in singles:
    assert f.readline() == "", "a single run has more lines than the matrix"
print(f"equal: {rows} rows x {len(agents)} crawlers, matrix == one filter run per crawler")
PY
python3 -c "
m, s, k = $t_matrix, $single_mean, ${#agents[@]}
print(f'cost: {k} crawlers in one pass {m:.3f}s, one crawler {s:.3f}s (mean of {k}): ratio {m/s:.2f}x (target <= 2x); {k} separate runs {s*k:.3f}s')"

# Instructions, counted exactly by callgrind on one thread (the shared machine
# makes wall times noisy): a 100,000-URL prefix of the list, less a run on an
# empty list (opening and checking the artifact, the same for both).
if command -v valgrind > /dev/null && [ "${CALLGRIND:-1}" = 1 ]; then
    head -n 100000 "$urls" > "$data/urls-100k.txt"
    : > "$data/empty.txt"
    count() {
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" filter --rules "$data/rules.rsv" --threads 1 \
            --urls "$1" "${@:2}" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    base=$(count "$data/empty.txt" --agent gptbot --stats "$data/cg.json")
    one=$(count "$data/urls-100k.txt" --agent gptbot --verdicts "$data/cg-single.tsv")
    five=$(count "$data/urls-100k.txt" --all-agents --matrix "$data/cg-matrix.tsv")
    python3 -c "
b, o, f = $base, $one, $five
print(f'instructions (callgrind, 100,000 URLs, 1 thread, less {b:,} to open the artifact): one crawler {o-b:,}, five in one pass {f-b:,}: ratio {(f-b)/(o-b):.2f}x')"
fi
