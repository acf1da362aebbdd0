#!/usr/bin/env bash
# The serial part of `robotsieve filter` and the Amdahl bound it sets on two
# threads, measured so that the machine's load does not blur it. The calling
# thread cuts the input, orders the chunks and writes them; the pool does
# the rest. Two measures of the calling thread's share:
#
# - instructions: callgrind --separate-threads=yes over the first N and 2N
#   URLs of the workload, (I(2N) - I(N)) / N per thread; exact, the same at
#   any load;
# - CPU seconds, user and system (the kernel's side of the writes, which
#   callgrind does not see): the kernel's own per-thread accounting, read
#   with scripts/thread_times.py from /proc while the finished process is a
#   zombie, over the whole list (no valgrind, no tracer); plus the wall time
#   of the commit's fsync (strace -T on fsync and fdatasync only), which is
#   in series with everything.
#
#   crawl2019-x40   crawl2019's URLs repeated 40 times (filter_speed.sh's list)
#   frontier-x20    the 300,000-URL frontier repeated 20 times, with
#                   --grouping partitioned (auto's choice on the whole list;
#                   the N-URL prefixes are too small for auto to take it)
#
# Usage: benches/filter_serial.sh [--robotsieve BIN] [--baseline BIN] [--data DIR] [--n 200000]
#                                 [--threads 2] [--repeat 1] [--workloads "NAME..."]
#
# Each binary runs without outputs (--stats only) and with --verdicts to a
# file. The base lists and corpora are callgrind.sh's (run it first), the
# whole lists filter_speed.sh's (made from them when missing:
# scripts/bench_args.sh, speed_lists); the artifacts are compiled by the
# baseline when given, else BIN, and by BIN itself when it does not read the
# baseline's format (another format version). The CPU figures are the
# run of least total CPU of --repeat runs. Columns (per URL unless said):
#
#   caller I, pool I   instructions on the calling thread and on all others
#   f(I), bound(I)     caller / (caller + pool), and Amdahl's bound on 2 threads,
#                      1 / (f + (1 - f) / 2), from instructions alone
#   caller us, sys us  the calling thread's user + system CPU, and its system
#                      CPU alone, in microseconds per URL of the whole list
#   all us             the whole process's user + system CPU, microseconds per URL
#   fsync ms           wall milliseconds in fsync/fdatasync, the whole run
#   f, bound           caller CPU / all CPU, and Amdahl's bound from it
set -euo pipefail

usage_lines=2,40 n=200000 threads=2
workloads="crawl2019-x40 frontier-x20"
takes="--robotsieve --baseline --data --shared --n --threads --repeat --workloads"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
[ "$n" -gt 0 ] || { echo "$script: --n must be at least 1" >&2; exit 2; }
for tool in valgrind strace python3; do
    command -v "$tool" >/dev/null || { echo "$script: $tool is not installed" >&2; exit 2; }
done
thread_times=$(dirname "$0")/scripts/thread_times.py
compiler=${baseline:-$bin}
speed_lists
out=$(mktemp -d "$data/serial-out.XXXXXX")
trap 'rm -rf "$out"' EXIT

# prefix BASE COUNT FILE: the first COUNT lines of BASE repeated.
prefix() {
    awk -v f="$1" -v m="$2" 'BEGIN {
        while (c < m) { while (c < m && (getline l < f) > 0) { print l; c++ } close(f) }
    }' > "$3"
}

# failed CMD...: says which command failed, with its errors, and exits 2.
failed() {
    echo "$script: failed: $*" >&2
    cat "$out/err" >&2
    exit 2
}

# caller_pool CMD...: "caller pool" instructions of one callgrind run
# (callgrind numbers the threads as they start: 01 is the calling thread).
caller_pool() {
    rm -f "$out"/cg.*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/cg.%p" "$@" \
        >/dev/null 2>"$out/err" || failed "$@"
    awk '/^totals:/ { if (FILENAME ~ /-01$/) c += $2; else p += $2 } END { printf "%d %d\n", c, p }' "$out"/cg.*-*
}

# cpu CMD...: "caller_user caller_sys all_user all_sys" seconds, the run of
# least total CPU of $repeat.
cpu() {
    local best= line
    for _ in $(seq "$repeat"); do
        line=$(python3 "$thread_times" "$@" 2>"$out/err") || failed "$@"
        if [ -z "$best" ] || awk -v a="$line" -v b="$best" \
            'BEGIN { split(a, x, " "); split(b, y, " "); exit !(x[3] + x[4] < y[3] + y[4]) }'; then
            best=$line
        fi
    done
    echo "$best"
}

# fsync_ms CMD...: wall milliseconds of the run's fsync and fdatasync calls.
fsync_ms() {
    strace -f -T -e trace=fsync,fdatasync -o "$out/strace" "$@" >/dev/null 2>"$out/err" || failed "$@"
    awk 'match($NF, /^<[0-9.]+>$/) { s += substr($NF, 2, length($NF) - 2) } END { printf "%.1f\n", s * 1000 }' "$out/strace"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; N = $n, --threads $threads"
printf '%-22s %-14s %-8s %9s %9s %6s %8s %9s %7s %7s %8s %6s %6s\n' \
    binary workload output "caller I" "pool I" "f(I)" "bound(I)" "caller us" "sys us" "all us" "fsync ms" f bound
for workload in $workloads; do
    case $workload in
        crawl2019-x40) base=$data/crawl2019/urls.txt dir=$data/crawl2019 ;;
        frontier-x20) base=$data/synthetic/frontier-300000.txt dir=$data/synthetic ;;
        *) echo "$script: unknown workload $workload (crawl2019-x40, frontier-x20)" >&2; exit 2 ;;
    esac
    # The whole list, as filter_speed.sh runs it.
    list=$data/speed/$workload.txt
    urls=$(wc -l < "$list")
    prefix "$base" "$n" "$out/urls-1.txt"
    prefix "$base" $((2 * n)) "$out/urls-2.txt"
    for run in $baseline "$bin"; do
        artifact=$(artifact_for "$run" "$compiler" "$dir") || exit 2
        flags=()
        if [ "$workload" = frontier-x20 ] && [[ $("$run" filter --help) == *--grouping* ]]; then
            flags=(--grouping partitioned)
        fi
        for output in none verdicts; do
            # filter_command LIST: the run over LIST, in cmd.
            filter_command() {
                cmd=("$run" filter --rules "$artifact" --agent "$agent" --urls "$1"
                    --threads "$threads" "${flags[@]}" --stats "$out/stats.json")
                [ "$output" = none ] || cmd+=(--verdicts "$out/verdicts.tsv")
            }
            filter_command "$out/urls-1.txt"
            read -r ci1 pi1 < <(caller_pool "${cmd[@]}")
            filter_command "$out/urls-2.txt"
            read -r ci2 pi2 < <(caller_pool "${cmd[@]}")
            filter_command "$list"
            read -r cu cs au as < <(cpu "${cmd[@]}")
            sync=$(fsync_ms "${cmd[@]}")
            rm -f "$out/verdicts.tsv"
            awk -v r="$(basename "$run")" -v w="$workload" -v o="$output" -v n="$n" -v m="$urls" \
                -v ci1="$ci1" -v ci2="$ci2" -v pi1="$pi1" -v pi2="$pi2" \
                -v cu="$cu" -v cs="$cs" -v au="$au" -v as="$as" -v sync="$sync" 'BEGIN {
                    c = (ci2 - ci1) / n; p = (pi2 - pi1) / n; fi = c / (c + p)
                    f = (au + as > 0) ? (cu + cs) / (au + as) : 0
                    printf "%-22s %-14s %-8s %9.1f %9.1f %6.3f %8.2f %9.4f %7.4f %7.4f %8.1f %6.3f %6.2f\n",
                        r, w, o, c, p, fi, 1 / (fi + (1 - fi) / 2),
                        (cu + cs) / m * 1e6, cs / m * 1e6, (au + as) / m * 1e6, sync, f, 1 / (f + (1 - f) / 2) }'
        done
    done
done
