#!/usr/bin/env python3
"""The distributed filter's costs, on local-cluster[2,2,2048] (two executor
JVMs, two Python workers each), in one run:

- the shuffled filter: ``filter_frontier`` with a shard set given as a
  file:// URI (each executor copies the shards its tasks need; the rows
  are shuffled by shard and sorted by origin);
- the unshuffled filter as it was before: ``preserve_order=True`` with the
  set at a local path, which ships every file to every executor
  (``SparkContext.addFile``) and classifies rows where they are;
- ``robotsieve filter --threads 1`` on the same URLs and the whole set.

Reported: bytes copied per executor (against the set's size), CPU seconds
per URL inside ``Artifact.classify`` (the executors' threads, from the
event log) against the CLI's CPU seconds per URL (user + system of the
process, whose opening and reading are a small part), and each job's wall
time, shuffle included (the frontier is read from Parquet and the result
written to Spark's ``noop`` sink).

The workload: origins ``https://h{i}.example`` (i below --origins), origin i serving real
robots file i mod 31,898 of ../shared/realworld/robots plus one rule of its
own, compiled into a --shards set; --urls URLs whose origin i is drawn
Zipf (exponent --zipf) over i, with paths of synth_frontier.py's frontier.
docs/scale-out.md reports ``--urls 10000000 --origins 250000 --shards 64``
with release builds (about 5 minutes on 2 cores); the defaults are a fifth
of that.

Usage: python python/benches/spark_filter.py [--urls N] [--origins N] [--shards N]
         [--bin target/debug/robotsieve] [--work DIR] [--json FILE]
Build both sides the same way (both dev, or both release).
"""

import argparse
import collections
import json
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from robotsieve import _native

REPO = Path(__file__).resolve().parents[2]
AGENT = "mybot"


def shared():
    return Path(os.environ.get("ROBOTSIEVE_SHARED", REPO.parent / "shared")) / "realworld"


def compile_one(job):
    """Compiles shard K of N from its origins' records (a pool's task)."""
    k, n, lines, path = job
    origins, _, _ = _native.compile_jsonl(lines, [AGENT], path, False, (k, n))
    return origins


def make_set(origins, shards, folder):
    """The set of ``origins`` distinct origins, compiled shard by shard on two processes."""
    files = sorted((shared() / "robots").glob("*.txt"))
    by_shard = collections.defaultdict(list)
    for i in range(origins):
        url = f"https://h{i}.example/robots.txt"
        body = files[i % len(files)].read_bytes().decode("utf-8", "replace")
        body += f"\nUser-agent: *\nDisallow: /only-h{i}/\n"
        by_shard[_native.shard_of_url(url, shards)].append(json.dumps({"url": url, "status": 200, "body": body}))
    folder.mkdir(parents=True, exist_ok=True)
    jobs = [(k, shards, "\n".join(by_shard[k]).encode(), str(folder / _native.shard_file_name(k, shards)))
            for k in range(shards)]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return sum(pool.map(compile_one, jobs))


def make_frontier(urls, origins, exponent, folder):
    """URLs of origins drawn Zipf over i, as Parquet (id, url) and as a text list."""
    made = subprocess.run(
        [sys.executable, shared() / "synth_frontier.py", "--root", shared(), "--n", "50000", "--seed", "3"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()[1:]
    paths = []
    for line in made:
        rest = line.split("\t")[1].split("://", 1)[-1]
        cut = rest.find("/")
        paths.append(rest[cut:] if cut >= 0 else "/")
    rng = np.random.default_rng(1)
    hosts = (rng.zipf(exponent, urls) - 1) % origins
    chosen = rng.integers(0, len(paths), urls)
    listing = [f"https://h{h}.example{paths[p]}" for h, p in zip(hosts, chosen)]
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table({"id": pa.array(np.arange(urls), pa.int64()), "url": pa.array(listing, pa.string())})
    pq.write_table(table, folder / "frontier.parquet", row_group_size=256 * 1024)
    (folder / "frontier.txt").write_text("\n".join(listing) + "\n", encoding="utf-8")
    return len(set(hosts.tolist()))


def cli_cost(binary, rules, urls_file):
    """CPU seconds (user + system) and wall seconds of ``robotsieve filter --threads 1``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([binary, "filter", "--rules", rules, "--agent", AGENT, "--urls", urls_file,
                    "--verdicts", "/dev/null", "--threads", "1"], check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def spark_session(log):
    from pyspark.sql import SparkSession

    from robotsieve.spark import OPEN_LOG_VARIABLE

    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    return (
        SparkSession.builder.master("local-cluster[2,2,2048]")
        .appName("robotsieve-bench")
        .config("spark.pyspark.python", os.environ.get("PYSPARK_PYTHON", sys.executable))
        .config("spark.executorEnv." + OPEN_LOG_VARIABLE, str(log))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )


def run_job(spark, log, frontier, rules, **options):
    """One filter job to the noop sink: wall seconds and the events it logged."""
    from robotsieve.spark import filter_frontier

    since = len(log.read_text().splitlines()) if log.exists() else 0
    started = time.perf_counter()
    df = spark.read.parquet(str(frontier))
    filter_frontier(df, "url", rules, AGENT, **options).write.format("noop").mode("overwrite").save()
    wall = time.perf_counter() - started
    events = [json.loads(line) for line in log.read_text().splitlines()[since:]]
    return wall, events


def summary(events, set_bytes, shipped_whole):
    copied = collections.Counter()
    for e in events:
        if e["event"] == "copy":
            copied[e["executor"]] += e["bytes"]
    tasks = [e for e in events if e["event"] == "task"]
    executors = {e["executor"] for e in tasks}
    per_executor = {x: (set_bytes if shipped_whole else copied[x]) for x in executors}
    urls = sum(e["urls"] for e in tasks)
    seconds = sum(e["classify_seconds"] for e in tasks)
    return {
        "tasks": len(tasks),
        "bytes_per_executor": sorted(per_executor.values()),
        "share_of_set": [round(b / set_bytes, 3) for b in sorted(per_executor.values())],
        "classify_cpu_ns_per_url": round(seconds / max(urls, 1) * 1e9, 1),
        "urls": urls,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=2_000_000)
    parser.add_argument("--origins", type=int, default=50_000)
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--zipf", type=float, default=1.1)
    parser.add_argument("--bin", default=str(REPO / "target" / "debug" / "robotsieve"))
    parser.add_argument("--work", help="keep the generated files here (default: a temporary folder)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="robotsieve-spark-bench-"))
    try:
        rules = work / f"set-{args.origins}-{args.shards}"
        started = time.perf_counter()
        if not rules.is_dir():
            make_set(args.origins, args.shards, rules)
        print(f"set: {args.origins} origins in {args.shards} shards, {time.perf_counter() - started:.0f} s",
              file=sys.stderr)
        frontier = work / f"frontier-{args.urls}-{args.origins}"
        if not (frontier / "frontier.parquet").exists():
            distinct = make_frontier(args.urls, args.origins, args.zipf, frontier)
            print(f"frontier: {args.urls} URLs on {distinct} origins", file=sys.stderr)
        set_bytes = sum(f.stat().st_size for f in rules.iterdir())
        log = work / "events.log"
        log.write_text("")
        spark = spark_session(log)
        try:
            shuffled_wall, shuffled = run_job(spark, log, frontier / "frontier.parquet", rules.as_uri())
            today_wall, today = run_job(spark, log, frontier / "frontier.parquet", str(rules), preserve_order=True)
        finally:
            spark.stop()
        cli_cpu, cli_wall = cli_cost(args.bin, rules, frontier / "frontier.txt")
        figures = {
            "urls": args.urls,
            "origins": args.origins,
            "shards": args.shards,
            "set_bytes": set_bytes,
            "shuffled": {"wall_seconds": round(shuffled_wall, 1), **summary(shuffled, set_bytes, False)},
            "unshuffled_addfile": {"wall_seconds": round(today_wall, 1), **summary(today, set_bytes, True)},
            "cli": {"cpu_ns_per_url": round(cli_cpu / args.urls * 1e9, 1), "wall_seconds": round(cli_wall, 1)},
            "load_average": os.getloadavg(),
        }
        cli_ns = figures["cli"]["cpu_ns_per_url"]
        for name in ("shuffled", "unshuffled_addfile"):
            figures[name]["classify_speed_vs_cli"] = round(cli_ns / figures[name]["classify_cpu_ns_per_url"], 2)
        print(json.dumps(figures, indent=2))
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
