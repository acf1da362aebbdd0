"""filter_frontier on a real Spark cluster of two executor processes
(local-cluster[2,1,1024]): the crawl2019 URL list with its own robots files
gets robotsieve filter's verdicts URL by URL, and each Python worker process
opens the shipped artifact once."""

import collections
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import robotsieve
from conftest import REPO, shared_dir

AGENT = "mybot"


def require_java():
    if shutil.which("java"):
        return
    message = "the Spark tests need Java 17 (java is not on PATH): apt-get install openjdk-17-jre-headless"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def robotsieve_binary():
    """The CLI that ./test's cargo test built (built here if absent)."""
    binary = Path(os.environ.get("ROBOTSIEVE_BIN", REPO / "target" / "debug" / "robotsieve"))
    if not binary.exists():
        subprocess.run(["cargo", "build", "-q", "-p", "robotsieve-cli", "--bin", "robotsieve"], cwd=REPO, check=True)
    return binary


@pytest.fixture(scope="module")
def crawl2019(tmp_path_factory):
    """The URL list, and an artifact compiled with robotsieve.compile from
    its robots files (http and https records per host)."""
    root = shared_dir() / "realworld"
    listing = root / "urls" / "crawl2019-linkgraph.tsv"
    if not listing.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{listing} is absent")
        pytest.skip(f"skipped: {listing} is absent")
    urls, files = [], {}
    for line in listing.read_text(encoding="utf-8").splitlines()[1:]:
        host, url, robots_file = line.split("\t")[:3]
        urls.append(url)
        if robots_file and host not in files:
            files[host] = (root / robots_file).read_bytes()
    records = [
        {"url": f"{scheme}://{host}/robots.txt", "status": 200, "body": body}
        for host, body in files.items()
        for scheme in ("http", "https")
    ]
    out = tmp_path_factory.mktemp("crawl2019")
    rules = out / "rules.rsv"
    robotsieve.compile(records, agents=[AGENT], output=rules)
    return urls, rules, out


def cli_verdicts(urls, rules, out):
    listing = out / "urls.txt"
    listing.write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    verdicts = out / "verdicts.tsv"
    subprocess.run(
        [robotsieve_binary(), "filter", "--rules", rules, "--agent", AGENT, "--urls", listing,
         "--verdicts", verdicts, "--threads", "1"],
        check=True,
    )
    return [line.split("\t", 1) for line in verdicts.read_text(encoding="utf-8").splitlines()]


def test_filter_frontier_on_a_local_cluster_equals_robotsieve_filter(crawl2019, tmp_path):
    require_java()
    pyspark = pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    from robotsieve.spark import OPEN_LOG_VARIABLE, filter_frontier

    urls, rules, out = crawl2019
    expected = cli_verdicts(urls, rules, out)
    assert [u for _, u in expected] == urls
    open_log = tmp_path / "opens.log"
    python = os.environ.get("PYSPARK_PYTHON", sys.executable)
    # The driver, the workers and the executors talk over the loopback only.
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    spark = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("robotsieve-test")
        .config("spark.pyspark.python", python)
        .config("spark.executorEnv." + OPEN_LOG_VARIABLE, str(open_log))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    try:
        # The frontier as crawl data lives: Parquet, read in partitions.
        frontier = tmp_path / "frontier"
        frontier.mkdir()
        table = pa.table({"id": pa.array(range(len(urls)), pa.int64()), "url": pa.array(urls)})
        bounds = [len(urls) * k // 4 for k in range(5)]
        for part in range(4):
            rows = table.slice(bounds[part], bounds[part + 1] - bounds[part])
            pq.write_table(rows, frontier / f"part-{part}.parquet")
        df = spark.read.parquet(str(frontier)).repartition(8)
        got = filter_frontier(df, url_col="url", rules=str(rules), agent=AGENT).select("id", "url", "verdict")
        rows = sorted(got.collect())
        executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    finally:
        spark.stop()
    assert executors == 2
    assert len(rows) == len(urls)
    differences = [
        f"{url}: spark {verdict}, filter {expected[i][0]}"
        for i, url, verdict in rows
        if (verdict, url) != tuple(expected[i])
    ]
    assert not differences, f"{len(differences)} of {len(urls)} differ:\n" + "\n".join(differences[:20])
    counts = collections.Counter(v for v, _ in expected)
    assert counts["allowed"] and counts["disallowed"], counts

    events = [line.split() for line in open_log.read_text().splitlines()]
    opens = collections.Counter(pid for what, pid in events if what == "open")
    batches = collections.Counter(pid for what, pid in events if what == "batch")
    assert opens, "no worker opened the artifact"
    assert all(n == 1 for n in opens.values()), f"a worker process opened the artifact more than once: {opens}"
    assert set(batches) == set(opens)
    assert sum(batches.values()) > len(opens), f"{sum(batches.values())} batches in {len(opens)} processes"
    print(f"{len(urls)} URLs, {sum(batches.values())} batches, {len(opens)} worker processes, one open each")
