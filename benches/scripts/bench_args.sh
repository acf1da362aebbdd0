# Sourced by the benches/*.sh scripts that compare two robotsieve binaries
# on the callgrind.sh workloads (callgrind.sh, same_verdicts.sh,
# filter_speed.sh, filter_cache.sh, filter_scale.sh): the options they share, parsed,
# defaulted and checked one way.
#
# Before sourcing, a script sets
#   script        its name, for messages
#   usage_lines   the sed range of its usage comment (for --help), e.g. 2,16
#   takes         the options it takes, of those below (space separated)
#   n             its default for --n (if it takes --n)
#   repeat        its default for --repeat (if it takes --repeat; else 1)
#   workloads     its default for --workloads (if it takes --workloads)
#   rounds, urls, threads  its defaults for --rounds, --urls, --threads (if
#                 it takes them; else 1, 0 and 1)
# and after sourcing calls `bench_args "$@"`, which sets
#   bin       --robotsieve BIN   (default target/release/robotsieve)
#   baseline  --baseline BIN     (default none)
#   compiler  --compiler BIN     (default none)
#   n         --n N
#   repeat    --repeat R         (how many runs a figure is the best of)
#   workloads --workloads "NAME..." (which of the script's workloads to run)
#   rounds    --rounds R         (how many times each case runs)
#   urls      --urls N           (how many URLs a generated list holds)
#   threads   --threads T        (filter's --threads)
#   keep      --keep             (a switch, no value: 1 if given, else empty)
#   agent     --agent NAME       (default mybot)
#   data      --data DIR         (default target/callgrind-data)
#   shared    --shared DIR       (default $ROBOTSIEVE_SHARED, else the first
#                                 of ../shared and /work/shared that exists)
# An option the script does not take, or an unknown one, exits 2 naming it.

bin=target/release/robotsieve
baseline=
compiler=
agent=mybot
data=target/callgrind-data
shared=${ROBOTSIEVE_SHARED:-}
repeat=${repeat:-1}
workloads=${workloads:-}
rounds=${rounds:-1}
urls=${urls:-0}
threads=${threads:-1}
keep=

bench_args() {
    while [ $# -gt 0 ]; do
        case " $takes -h --help " in
            *" $1 "*) ;;
            *) echo "$script: unknown argument $1 (see --help)" >&2; exit 2 ;;
        esac
        case "$1" in
            -h|--help) sed -n "${usage_lines}p" "$0"; exit 0 ;;
            --keep) keep=1; shift; continue ;;
        esac
        [ $# -ge 2 ] || { echo "$script: $1 needs a value" >&2; exit 2; }
        case "$1" in
            --robotsieve) bin=$2 ;;
            --baseline) baseline=$2 ;;
            --compiler) compiler=$2 ;;
            --n) n=$2 ;;
            --agent) agent=$2 ;;
            --data) data=$2 ;;
            --shared) shared=$2 ;;
            --repeat) repeat=$2 ;;
            --workloads) workloads=$2 ;;
            --rounds) rounds=$2 ;;
            --urls) urls=$2 ;;
            --threads) threads=$2 ;;
        esac
        shift 2
    done
    case "$n" in
        ''|*[!0-9]*) echo "$script: --n takes a whole number, not '$n'" >&2; exit 2 ;;
    esac
    local name value
    for name in repeat rounds threads; do
        value=${!name}
        case "$value" in
            ''|0|*[!0-9]*) echo "$script: --$name takes a whole number from 1, not '$value'" >&2; exit 2 ;;
        esac
    done
    case "$urls" in
        ''|*[!0-9]*) echo "$script: --urls takes a whole number, not '$urls'" >&2; exit 2 ;;
    esac
    if [ -z "$shared" ]; then
        for d in ../shared /work/shared; do [ -d "$d" ] && { shared=$d; break; }; done
    fi
    return 0
}

# require_executables BIN...: exits 2 naming the first that is not one.
require_executables() {
    for b in "$@"; do
        [ -x "$b" ] || { echo "$script: $b is not an executable (cargo build --release -p robotsieve-cli)" >&2; exit 2; }
    done
}
