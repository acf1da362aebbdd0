#!/usr/bin/env python3
"""Artifact.classify against `robotsieve filter --threads 1` and Protego, in one run.

A frontier of N URLs (default 1,000,000) is made with
../shared/realworld/synth_frontier.py; its hosts' robots files are compiled
with robotsieve.compile (http and https records per host). Then, each timed
best of --repeat runs:

- classify: Artifact.classify over a pyarrow string array, one thread, with
  and without the reason column;
- filter: `robotsieve filter --threads 1 --verdicts /dev/null` (and with
  --explain) on the same URLs, its own elapsed_seconds from --stats (the
  pipeline, not process start or the artifact's opening);
- Protego: Protego.parse once per host (timed apart), then can_fetch per URL.

Usage: python python/benches/classify.py [--n 1000000] [--bin target/release/robotsieve]
Build both sides the same way (release): cargo build --release -p robotsieve-cli;
maturin develop --release -m python/Cargo.toml.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa

import robotsieve

REPO = Path(__file__).resolve().parents[2]
AGENT = "mybot"


def best(repeat, work):
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bin", default=str(REPO / "target" / "release" / "robotsieve"))
    parser.add_argument("--shared", default=os.environ.get("ROBOTSIEVE_SHARED", str(REPO.parent / "shared")))
    parser.add_argument("--protego-urls", type=int, default=None, help="URLs for Protego (default: all)")
    args = parser.parse_args()
    root = Path(args.shared) / "realworld"
    work = Path(tempfile.mkdtemp(prefix="robotsieve-bench-"))

    frontier = subprocess.run(
        [sys.executable, str(root / "synth_frontier.py"), "--root", str(root), "--n", str(args.n), "--seed", "1"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    rows = [line.split("\t") for line in frontier if line and not line.startswith("host\t")]
    hosts = sorted({r[0] for r in rows})
    urls = [r[1] for r in rows][: args.n]
    bodies = {}
    for host in hosts:
        path = root / "robots" / f"{host}.txt"
        if path.is_file():
            bodies[host] = path.read_bytes()
    records = [
        {"url": f"{scheme}://{host}/robots.txt", "status": 200, "body": body}
        for host, body in bodies.items()
        for scheme in ("http", "https")
    ]
    rules = work / "rules.rsv"
    robotsieve.compile(records, agents=[AGENT], output=rules, explain=True)
    artifact = robotsieve.Artifact(rules)
    array = pa.array(urls, pa.string())
    listing = work / "urls.txt"
    listing.write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    print(f"{len(urls)} URLs on {len(hosts)} hosts ({len(bodies)} with a robots.txt), "
          f"{listing.stat().st_size / 1e6:.1f} MB of text")

    fig = {}
    fig["classify"], batch = best(args.repeat, lambda: artifact.classify(array, agent=AGENT, explain=False))
    fig["classify_explain"], _ = best(args.repeat, lambda: artifact.classify(array, agent=AGENT))

    def filter_run(*extra):
        stats = work / "stats.json"
        subprocess.run(
            [args.bin, "filter", "--rules", rules, "--agent", AGENT, "--urls", listing, "--threads", "1",
             "--verdicts", work / "verdicts.tsv", "--stats", stats, *extra],
            check=True,
        )
        return json.loads(stats.read_text())["elapsed_seconds"]

    fig["filter"] = min(filter_run() for _ in range(args.repeat))
    cli = [line.split("\t", 1)[0] for line in (work / "verdicts.tsv").read_text().splitlines()]
    assert cli == batch.column("verdict").to_pylist(), "classify and filter disagree"
    fig["filter_explain"] = min(filter_run("--explain") for _ in range(args.repeat))

    try:
        from protego import Protego
    except ImportError:
        Protego = None
    if Protego is not None:
        started = time.perf_counter()
        parsers = {host: Protego.parse(body.decode("utf-8", errors="ignore")) for host, body in bodies.items()}
        fig["protego_parse"] = time.perf_counter() - started
        subset = urls[: args.protego_urls or len(urls)]
        started = time.perf_counter()
        allowed = 0
        for url in subset:
            rp = parsers.get(urlsplit(url).hostname or "")
            allowed += rp is None or rp.can_fetch(url, AGENT)
        fig["protego"] = (time.perf_counter() - started) * len(urls) / len(subset)
        fig["protego_urls"] = len(subset)

    n = len(urls)
    print(f"{'':28} {'seconds':>8} {'M URLs/s':>9} {'vs filter':>10}")
    for name, base in [("classify", "filter"), ("filter", "filter"), ("classify_explain", "filter_explain"),
                       ("filter_explain", "filter_explain"), ("protego", "filter")]:
        if name in fig:
            print(f"{name:28} {fig[name]:8.3f} {n / fig[name] / 1e6:9.2f} {fig[base] / fig[name]:9.2f}x")
    if "protego_parse" in fig:
        print(f"protego parse ({len(bodies)} files, once per host): {fig['protego_parse']:.2f} s; "
              f"can_fetch timed on {fig['protego_urls']} URLs")
    print(json.dumps({k: round(v, 4) for k, v in fig.items()}))


if __name__ == "__main__":
    main()
