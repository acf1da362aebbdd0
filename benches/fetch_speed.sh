#!/usr/bin/env bash
# `robotsieve fetch` against curl at its best, on the same URLs in the same
# run, and fetch's peak RSS against the number of origins:
#
#   http, https  N origins (default 100,000) served on loopback by
#                fetch_server (src/bin/fetch_server.rs: real bodies from
#                ../shared/realworld, 1 in 50 a fast 404, 503 or refused
#                connection, no redirects or timeouts), fetched R times
#                (default 3) by each client in turn. curl: `curl -Z
#                --parallel-max 256`, bodies to /dev/null, the list in parts
#                of 5,000 (a config file each, a `resolve` line and the CA
#                with each URL), one curl process per core (xargs -P). fetch: the
#                server's hosts file, its CA, as many in flight as the curl
#                processes together, one attempt per URL (--retries 0, as
#                curl), the per-IP limits opened (curl has none), records
#                to a .jsonl file.
#   rss          fetch at 1,000 in flight over 10,000, 100,000 and 1,000,000
#                origins (names from the server's DNS server on loopback,
#                records to a .jsonl.zst file), peak RSS of each and the
#                growth per origin between sizes.
#
# Usage: benches/fetch_speed.sh [--robotsieve BIN] [--n N] [--repeat R]
#                               [--workloads "http https rss"] [--data DIR] [--shared DIR]
#
# Columns: wall seconds, origins per second, CPU seconds per 1,000 origins
# of the client (user + system, all its processes) and of client and server
# together, and the outcome counts (200 / 404 / 503 / no answer) that show
# both clients did the same work. The load average is printed beside each
# run: on a shared machine compare the ratios of one run, not figures
# across runs. fetch_server is built with the profiling profile when it is
# not beside BIN. It listens on ports $FETCH_HTTP_PORT and $FETCH_HTTPS_PORT
# (default 18080 and 18443) of 127.1.0.1 to 127.1.3.232.
set -euo pipefail

usage_lines=2,34 n=100000 repeat=3
workloads="http https rss"
takes="--robotsieve --data --shared --repeat --n --workloads"
source "$(dirname "$0")/scripts/bench_args.sh" "$@"
server_bin=$(dirname "$bin")/fetch_server
if [ ! -x "$server_bin" ]; then
    nice -n 10 cargo build --profile profiling -q -p robotsieve-benches --features fetch-server --bin fetch_server
    server_bin=target/profiling/fetch_server
fi
require_executables "$server_bin"
command -v curl >/dev/null || { echo "$script: curl is not installed" >&2; exit 2; }
export ROBOTSIEVE_SHARED=$shared
cores=$(nproc)
# curl's processes together keep this many transfers in flight; fetch gets as many.
in_flight=$((256 * cores))
dir=$data/fetch
out=$(mktemp -d "${TMPDIR:-/tmp}/fetch_speed.XXXXXX")
server_pid=
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=
    fi
}
trap 'stop_server; rm -rf "$out"' EXIT

# start_server ORIGINS [--dns] [--parts N]: fetch_server on ORIGINS origins, its files in $dir.
start_server() {
    stop_server
    rm -rf "$dir"
    mkdir -p "$dir"
    "$server_bin" --dir "$dir" --http-port "${FETCH_HTTP_PORT:-18080}" --https-port "${FETCH_HTTPS_PORT:-18443}" \
        --origins "$@" >"$out/server.log" 2>&1 &
    server_pid=$!
    while [ ! -s "$dir/ready" ]; do
        kill -0 "$server_pid" 2>/dev/null || { echo "$script: fetch_server failed:" >&2; cat "$out/server.log" >&2; exit 2; }
        sleep 0.2
    done
}

# server_ticks: the server's user + system CPU so far, in clock ticks.
server_ticks() {
    awk '{ print $14 + $15 }' "/proc/$server_pid/stat"
}

# timed NAME CMD...: runs CMD under /usr/bin/time; sets wall, cpu (the
# client's user + system seconds), server_cpu (the server's in the same
# span), rss (the client's peak RSS, KB; the largest of its processes).
timed() {
    local name=$1 before after
    shift
    before=$(server_ticks)
    /usr/bin/time -f '%e %U %S %M' -o "$out/time" "$@" >"$out/$name.out" 2>"$out/$name.err" || true
    after=$(server_ticks)
    # The last line: before it, time says when the command exited non-zero
    # (curl does when a transfer failed, as the refused ones do).
    read -r wall user sys rss < <(tail -n 1 "$out/time")
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    server_cpu=$(awk -v a="$before" -v b="$after" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / t }')
}

fetch_flags=(--user-agent "robotsieve-bench/1.0" --retries 0 --per-ip-interval-ms 0)

# fetch_outcomes FILE: "200 404 503 0" counts of fetch's records.
fetch_outcomes() {
    local reader=cat
    case $1 in *.zst) reader="zstd -dc" ;; esac
    $reader "$1" | grep -o '"status":[0-9]*' | awk -F: '
        { c[$2]++ } END { printf "%d/%d/%d/%d", c[200], c[404], c[503], c[0] }'
}

# curl_outcomes FILE: the same counts from curl's --write-out lines (000: no answer).
curl_outcomes() {
    awk '{ c[$1 + 0]++ } END { printf "%d/%d/%d/%d", c[200], c[404], c[503], c[0] }' "$1"
}

row() {
    local client=$1 mode=$2 outcomes=$3 origins=$4
    awk -v c="$client" -v m="$mode" -v w="$wall" -v cpu="$cpu" -v s="$server_cpu" -v n="$origins" \
        -v o="$outcomes" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
        printf "%-10s %-6s %8.2f %10.0f %12.3f %14.3f  %-22s %5s\n", c, m, w, n / w, cpu * 1000 / n, (cpu + s) * 1000 / n, o, l }'
}

speed() {
    local mode=$1 origins
    origins=$(wc -l < "$dir/$mode.txt")
    for round in $(seq "$repeat"); do
        rm -f "$out/fetched.jsonl"
        timed fetch "$bin" fetch "${fetch_flags[@]}" --urls "$dir/$mode.txt" -o "$out/fetched.jsonl" \
            --hosts-file "$dir/hosts" --ca-cert "$dir/ca.pem" --concurrency "$in_flight" --per-ip-connections "$in_flight"
        [ -s "$out/fetched.jsonl" ] || { echo "$script: fetch wrote nothing:" >&2; cat "$out/fetch.err" >&2; exit 2; }
        row robotsieve "$mode" "$(fetch_outcomes "$out/fetched.jsonl")" "$origins"
        timed curl bash -c 'ls "$1"/curl-"$2"-*.cfg | xargs -P "$3" -n 1 curl -s -Z --parallel-max 256 -K' \
            _ "$dir" "$mode" "$cores"
        row curl "$mode" "$(curl_outcomes "$out/curl.out")" "$origins"
    done
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $cores cores; $(curl --version | head -1 | cut -d' ' -f1-2)"
for workload in $workloads; do
    case $workload in
        http|https)
            if [ -z "$server_pid" ]; then
                start_server "$n" --parts 5000
                printf '%-10s %-6s %8s %10s %12s %14s  %-22s %5s\n' client mode wall origins/s "cpu/1k" "+server/1k" "200/404/503/none" load
            fi
            speed "$workload"
            ;;
        rss)
            printf '%-10s %8s %8s %10s %10s %16s  %-22s %5s\n' origins wall "cpu s" "peak RSS" "MB" "growth B/origin" "200/404/503/none" load
            previous=
            for size in 10000 100000 1000000; do
                start_server "$size" --dns --parts 0
                rm -f "$out/fetched.jsonl.zst"
                timed fetch "$bin" fetch "${fetch_flags[@]}" --urls "$dir/http.txt" -o "$out/fetched.jsonl.zst" \
                    --dns-server "$(cat "$dir/dns")" --allow-private --concurrency 1000 --per-ip-connections 1000
                [ -s "$out/fetched.jsonl.zst" ] || { echo "$script: fetch wrote nothing:" >&2; cat "$out/fetch.err" >&2; exit 2; }
                growth=-
                if [ -n "$previous" ]; then
                    growth=$(awk -v a="${previous#* }" -v b="$rss" -v m="${previous% *}" -v n="$size" \
                        'BEGIN { printf "%.1f", (b - a) * 1024 / (n - m) }')
                fi
                awk -v n="$size" -v w="$wall" -v c="$cpu" -v r="$rss" -v g="$growth" \
                    -v o="$(fetch_outcomes "$out/fetched.jsonl.zst")" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
                    'BEGIN { printf "%-10d %8.1f %8.1f %10d %10.1f %16s  %-22s %5s\n", n, w, c, r, r / 1024, g, o, l }'
                previous="$size $rss"
                rm -f "$out/fetched.jsonl.zst"
            done
            stop_server
            ;;
        *) echo "$script: unknown workload $workload (http, https, rss)" >&2; exit 2 ;;
    esac
done
