#!/usr/bin/env bash
# Builds robotsieve and runs the frontier workflow on the sample in corpus/sample:
# compile the fetch records into an artifact, inspect it, filter a frontier
# through it, and check a few URLs with the deciding rule named.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p robotsieve-cli
bin=target/release/robotsieve
out=target/demo
mkdir -p "$out"

echo "== compile: fetch records -> artifact (two crawlers, with explanations)"
"$bin" compile --agent mybot --agent googlebot-news,googlebot \
    --corpus corpus/sample/fetches.jsonl --explain -o "$out/rules.rsv"

echo
echo "== inspect"
"$bin" inspect --rules "$out/rules.rsv" --largest 3
"$bin" inspect --rules "$out/rules.rsv" --origin https://shop.example

echo
echo "== filter: the frontier, sorted into four lists and a verdicts file"
"$bin" filter --rules "$out/rules.rsv" --agent mybot --urls corpus/sample/frontier.txt \
    --allowed "$out/allowed.txt" --disallowed "$out/disallowed.txt" \
    --unknown "$out/unknown.txt" --invalid "$out/invalid.txt" \
    --verdicts "$out/verdicts.tsv" --explain --stats "$out/stats.json"
column -t -s $'\t' "$out/verdicts.tsv" 2>/dev/null || cat "$out/verdicts.tsv"
echo
echo "stats: $(cat "$out/stats.json")"

echo
echo "== check: one robots.txt, no artifact"
printf 'User-agent: *\nDisallow: /private\nAllow: /private/ok\n' > "$out/robots.txt"
"$bin" check --robots "$out/robots.txt" --agent mybot \
    https://example.com/a https://example.com/private/x https://example.com/private/ok
