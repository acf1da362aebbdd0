#!/bin/sh
# Folds what the fuzzers found (work/TARGET) into the committed corpus
# (corpus/TARGET) and minimises it with `cargo fuzz cmin`: only inputs that
# reach an edge no other input does stay (-use_counters=0: edges, not hit
# counts, which keeps the committed corpora small). Usage: fuzz/cmin.sh TARGET...
set -eu
cd "$(dirname "$0")"
for target in "$@"; do
    mkdir -p "corpus/$target"
    [ -d "work/$target" ] && find "work/$target" -type f -exec cp -n {} "corpus/$target/" \;
    nice -n 19 cargo +stable fuzz cmin -s none -a "$target" "corpus/$target" -- -rss_limit_mb=2048 -timeout=120 -use_counters=0 >"work/cmin-$target.log" 2>&1
    # Large robots and WARC inputs are mostly the real files of shared/ they
    # were mutated from: those are replayed from shared/ itself, and shared/
    # files are never committed.
    case $target in robots | warc) find "corpus/$target" -type f -size +4k -delete ;; esac
    printf '%s: %s files, %s\n' "$target" "$(ls "corpus/$target" | wc -l)" "$(du -sh --apparent-size "corpus/$target" | cut -f1)"
done
