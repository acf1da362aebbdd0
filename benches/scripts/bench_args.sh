# Sourced by the benches/*.sh scripts that compare two robotsieve binaries
# on the callgrind.sh workloads (callgrind.sh, same_verdicts.sh, damage.sh,
# filter_speed.sh, filter_serial.sh, filter_cache.sh, filter_scale.sh): the
# options they share, parsed, defaulted and checked one way, and the
# cached inputs they share (the helpers at the end: `frontier`, `compiled`,
# `artifact_for`, `speed_lists`), made one way.
#
# A script sets, before it sources this file with its arguments
# (`source "$(dirname "$0")/scripts/bench_args.sh" "$@"`),
#   usage_lines   the sed range of its usage comment (for --help), e.g. 2,16
#   takes         the options it takes, of those below (space separated)
#   n             its default for --n (if it takes --n)
#   repeat        its default for --repeat (if it takes --repeat; else 1)
#   workloads     its default for --workloads (if it takes --workloads)
#   rounds, urls, threads  its defaults for --rounds, --urls, --threads (if
#                 it takes them; else 1, 0 and 1)
#   copies, seed  its defaults for --copies and --seed (if it takes them;
#                 else 1 and 1)
#   groupings     its default for --groupings (if it takes --groupings)
# and sourcing parses the arguments (`bench_args`), checks that the
# binaries named are executables, and sets `script` (the script's name, for
# messages) and
#   bin       --robotsieve BIN   (default target/profiling/robotsieve,
#                                 built first with the profiling profile)
#   baseline  --baseline BIN     (default none)
#   compiler  --compiler BIN     (default none)
#   n         --n N
#   repeat    --repeat R         (how many runs a figure is the best of)
#   workloads --workloads "NAME..." (which of the script's workloads to run)
#   rounds    --rounds R         (how many times each case runs)
#   urls      --urls N           (how many URLs a generated list holds)
#   threads   --threads T        (filter's --threads)
#   copies    --copies K         (how many damaged copies of an artifact)
#   seed      --seed S           (a random generator's seed)
#   groupings --groupings "G..." (filter's --grouping values to run)
#   keep      --keep             (a switch, no value: 1 if given, else empty)
#   median    --median           (a switch: a figure is the median of the
#                                 --repeat runs instead of the fastest)
#   agent     --agent NAME       (default mybot)
#   data      --data DIR         (default target/callgrind-data)
#   shared    --shared DIR       (default $ROBOTSIEVE_SHARED, else the first
#                                 of ../shared and /work/shared that exists)
# An option the script does not take, or an unknown one, exits 2 naming it.

script=$(basename "$0")
bin=
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
copies=${copies:-1}
seed=${seed:-1}
groupings=${groupings:-}
keep=
median=

bench_args() {
    while [ $# -gt 0 ]; do
        case " $takes -h --help " in
            *" $1 "*) ;;
            *) echo "$script: unknown argument $1 (see --help)" >&2; exit 2 ;;
        esac
        case "$1" in
            -h|--help) sed -n "${usage_lines}p" "$0"; exit 0 ;;
            --keep) keep=1; shift; continue ;;
            --median) median=1; shift; continue ;;
        esac
        [ $# -ge 2 ] || { echo "$script: $1 needs a value" >&2; exit 2; }
        # Each option sets the variable of its name, --robotsieve sets bin.
        case "$1" in
            --robotsieve) bin=$2 ;;
            --baseline|--compiler|--n|--agent|--data|--shared|--repeat|--workloads|--rounds|--urls|--threads|--copies|--seed|--groupings)
                printf -v "${1#--}" '%s' "$2" ;;
        esac
        shift 2
    done
    if [ -z "$bin" ]; then
        # The profiling profile: release code with line tables, the one
        # build every figure and baseline here is measured on.
        nice -n 10 cargo build --profile profiling -q -p robotsieve-cli
        bin=target/profiling/robotsieve
    fi
    case "$n" in
        ''|*[!0-9]*) echo "$script: --n takes a whole number, not '$n'" >&2; exit 2 ;;
    esac
    local name value
    for name in repeat rounds threads copies; do
        value=${!name}
        case "$value" in
            ''|0|*[!0-9]*) echo "$script: --$name takes a whole number from 1, not '$value'" >&2; exit 2 ;;
        esac
    done
    for name in urls seed; do
        value=${!name}
        case "$value" in
            ''|*[!0-9]*) echo "$script: --$name takes a whole number, not '$value'" >&2; exit 2 ;;
        esac
    done
    if [ -z "$shared" ]; then
        for d in ../shared /work/shared; do [ -d "$d" ] && { shared=$d; break; }; done
    fi
    require_executables "$bin" $baseline $compiler
}

# require_executables BIN...: exits 2 naming the first that is not one.
require_executables() {
    for b in "$@"; do
        [ -x "$b" ] || { echo "$script: $b is not an executable (cargo build --release -p robotsieve-cli)" >&2; exit 2; }
    done
}

# Helpers for the workloads' cached inputs (after bench_args). Each exits 2
# with a message naming what is missing or what failed; those that print a
# path run in a command substitution (`x=$(frontier N) || exit 2`: a
# substitution does not inherit `set -e`, so each failure exits explicitly).

# frontier N: the path of $data/synthetic/frontier-N.txt, a synth_frontier.py
# frontier of N URLs (--seed 1), made once from $shared/realworld.
frontier() {
    local list=$data/synthetic/frontier-$1.txt
    if [ ! -s "$list" ]; then
        [ -f "$shared/realworld/synth_frontier.py" ] ||
            { echo "$script: no $shared/realworld/synth_frontier.py (give --shared DIR)" >&2; exit 2; }
        mkdir -p "$data/synthetic"
        python3 "$shared/realworld/synth_frontier.py" --root "$shared/realworld" --n "$1" --seed 1 |
            tail -n +2 | cut -f2 > "$list.$$.tmp" && mv "$list.$$.tmp" "$list" ||
            { echo "$script: making $list failed" >&2; rm -f "$list.$$.tmp"; exit 2; }
    fi
    echo "$list"
}

# compiled BIN DIR: the path of DIR/rules-SUM.rsv, workload DIR's corpus
# (DIR/corpus.jsonl, as callgrind.sh makes it) compiled by BIN (SUM: the
# first 12 hex digits of BIN's sha1), compiled now when missing.
compiled() {
    local sum artifact
    sum=$(sha1sum "$1" | cut -c1-12)
    artifact=$2/rules-$sum.rsv
    if [ ! -s "$artifact" ]; then
        [ -s "$2/corpus.jsonl" ] || { echo "$script: $2/corpus.jsonl is missing (run benches/callgrind.sh first)" >&2; exit 2; }
        nice -n 10 "$1" compile --agent "$agent" --corpus "$2/corpus.jsonl" -o "$artifact.$$.tmp.rsv" >"$2/compile-$sum.log" 2>&1 &&
            mv "$artifact.$$.tmp.rsv" "$artifact" ||
            { echo "$script: $1 compile failed, see $2/compile-$sum.log" >&2; rm -f "$artifact.$$.tmp.rsv"; exit 2; }
    fi
    echo "$artifact"
}

# reads RUN ARTIFACT: whether RUN opens ARTIFACT (`inspect` reads its header:
# the same format and semantics versions as RUN's own).
reads() {
    "$1" inspect --rules "$2" >/dev/null 2>&1
}

# artifact_for RUN COMPILER DIR: the artifact of workload DIR that RUN is
# measured on: COMPILER's (see `compiled`), so that two binaries are compared
# on the very same file, unless RUN cannot read it (another format version:
# `inspect` refuses it), in which case RUN's own. Use it as
# `artifact=$(artifact_for ...) || exit 2`.
artifact_for() {
    local artifact
    artifact=$(compiled "$2" "$3") || exit 2
    if ! reads "$1" "$artifact"; then
        artifact=$(compiled "$1" "$3") || exit 2
    fi
    echo "$artifact"
}

# speed_lists: makes the lists filter_speed.sh, filter_serial.sh and
# filter_cache.sh run, once, in $data/speed/ from the base lists that
# callgrind.sh and same_verdicts.sh cache (crawl2019's URLs; a 300,000-URL
# frontier, made here when missing): frontier-x20.txt (the frontier 20
# times), frontier-x20-sorted.txt (the same sorted by host) and
# crawl2019-x40.txt (crawl2019's URLs 40 times). Exits 2 when a base list or
# a workload's corpus is missing.
speed_lists() {
    local base=$data/crawl2019/urls.txt speed=$data/speed f
    for f in "$base" "$data/crawl2019/corpus.jsonl" "$data/synthetic/corpus.jsonl"; do
        [ -s "$f" ] || { echo "$script: $f is missing (run benches/callgrind.sh first)" >&2; exit 2; }
    done
    local frontier_list
    frontier_list=$(frontier 300000) || exit 2
    mkdir -p "$speed"
    if [ ! -s "$speed/frontier-x20-sorted.txt" ]; then
        for _ in $(seq 20); do cat "$frontier_list"; done > "$speed/frontier-x20.txt.$$.tmp"
        for _ in $(seq 40); do cat "$base"; done > "$speed/crawl2019-x40.txt.$$.tmp"
        LC_ALL=C sort -t/ -k3,3 -s "$speed/frontier-x20.txt.$$.tmp" > "$speed/frontier-x20-sorted.txt.$$.tmp"
        # The sorted list last: its presence says the three are whole.
        for f in frontier-x20 crawl2019-x40 frontier-x20-sorted; do mv "$speed/$f.txt.$$.tmp" "$speed/$f.txt"; done
    fi
}

# filter_scale.sh's files: its 1x and 4x artifacts and lists (under target/).
scale_dir=target/filter-scale

# scale_artifact RUN N: the artifact of N origins (filter_scale.sh) that RUN
# is measured on: $scale_dir/origins-N.rsv, built by this tree's library
# (compile_scale), when RUN reads it, else $scale_dir/origins-N-SUM.rsv, the
# same origins compiled by RUN (SUM: its sha1's first 12 hex digits), which
# filter_scale.sh makes. Exits 2 when that one is missing.
scale_artifact() {
    local artifact=$scale_dir/origins-$2.rsv
    if ! reads "$1" "$artifact"; then
        artifact=$scale_dir/origins-$2-$(sha1sum "$1" | cut -c1-12).rsv
        [ -s "$artifact" ] ||
            { echo "$script: $1 does not read $scale_dir/origins-$2.rsv, and $artifact is missing (run filter_scale.sh --keep with it)" >&2; exit 2; }
    fi
    echo "$artifact"
}

bench_args "$@"
