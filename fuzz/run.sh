#!/bin/sh
# Fuzzes one target for a while on one core, niced, and appends its figures
# (executions from libFuzzer's final stats, CPU seconds from the kernel) to
# work/runs.tsv. Usage: fuzz/run.sh TARGET SECONDS [libFuzzer options...]
# (options given override the defaults below, e.g. -max_len=16384 -timeout=30).
# New inputs go to work/TARGET (outside git), seeded from corpus/TARGET,
# regressions/TARGET and corpus-seeds/TARGET (see README.md).
set -eu
cd "$(dirname "$0")"
target=$1; seconds=$2; shift 2
mkdir -p "work/$target" "corpus/$target" "regressions/$target" artifacts/"$target"
dict=""; [ -f "dict/$target.dict" ] && dict="-dict=dict/$target.dict"
log="work/$target-$(date -u +%Y%m%dT%H%M%S).log"
seeds=""; [ -d "corpus-seeds/$target" ] && seeds="corpus-seeds/$target"
# Build first, so that the CPU time counted below is the fuzzer's alone.
nice -n "${NICE:-19}" cargo +stable fuzz build -s none -a "$target" >"$log" 2>&1
/usr/bin/time -f '%U %S' -o work/time.$$ nice -n "${NICE:-19}" cargo +stable fuzz run -s none -a "$target" \
    "work/$target" "corpus/$target" "regressions/$target" $seeds -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="artifacts/$target/" $dict "$@" >>"$log" 2>&1 || status=$?
[ -f work/time.$$ ] || { echo "no timing: see $log" >&2; exit 1; }
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
cpu=$(tail -1 work/time.$$ | awk '{print $1 + $2}'); rm -f work/time.$$
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "${execs:-?}" "$cpu" "${status:-0}" "$log" >>work/runs.tsv
tail -1 work/runs.tsv
