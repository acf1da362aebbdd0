"""robotsieve.spark on a real Spark cluster of two executor processes
(local-cluster[2,1,1024]): filter_frontier gives the crawl2019 URL list
robotsieve filter's verdicts URL by URL, each Python worker process opening
the shipped artifact once; compile_corpus's 4-shard set gives the same
verdicts, and follows Google's redirect and status rules exactly as
`robotsieve compile --corpus` does."""

import collections
import datetime
import json
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
    return urls, rules, out, records


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    """One SparkSession on local-cluster[2,1,1024] for the module (starting
    one takes many seconds); every executor appends its opens and batches to
    ``spark.open_log``."""
    require_java()
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    from robotsieve.spark import OPEN_LOG_VARIABLE

    open_log = tmp_path_factory.mktemp("spark") / "opens.log"
    python = os.environ.get("PYSPARK_PYTHON", sys.executable)
    # The driver, the workers and the executors talk over the loopback only.
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("robotsieve-test")
        .config("spark.pyspark.python", python)
        .config("spark.executorEnv." + OPEN_LOG_VARIABLE, str(open_log))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.open_log = open_log
    try:
        yield session
    finally:
        session.stop()


def differences(rows, expected):
    """The URLs whose verdict in ``rows`` (id, url, verdict) is not filter's."""
    return [
        f"{url}: spark {verdict}, filter {expected[i][0]}"
        for i, url, verdict in rows
        if (verdict, url) != tuple(expected[i])
    ]


def filter_with_spark(spark, urls, rules, tmp_path):
    """filter_frontier over ``urls`` written as a Parquet frontier in four
    files, read in eight partitions: sorted (id, url, verdict) rows, and the
    opens and batches the executors logged."""
    from robotsieve.spark import filter_frontier

    spark.open_log.write_text("")
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
    events = [line.split() for line in spark.open_log.read_text().splitlines()]
    return rows, events


def cli_verdicts(urls, rules, out, name="verdicts"):
    """robotsieve filter's verdicts of ``urls`` with the artifact or shard set ``rules``."""
    listing = out / f"{name}-urls.txt"
    listing.write_text("".join(u + "\n" for u in urls), encoding="utf-8")
    verdicts = out / f"{name}.tsv"
    subprocess.run(
        [robotsieve_binary(), "filter", "--rules", rules, "--agent", AGENT, "--urls", listing,
         "--verdicts", verdicts, "--threads", "1"],
        check=True,
    )
    return [line.split("\t", 1) for line in verdicts.read_text(encoding="utf-8").splitlines()]


def test_filter_frontier_on_a_local_cluster_equals_robotsieve_filter(spark, crawl2019, tmp_path):
    urls, rules, out, _ = crawl2019
    expected = cli_verdicts(urls, rules, out)
    assert [u for _, u in expected] == urls
    rows, events = filter_with_spark(spark, urls, rules, tmp_path)
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
    assert executors == 2
    assert len(rows) == len(urls)
    wrong = differences(rows, expected)
    assert not wrong, f"{len(wrong)} of {len(urls)} differ:\n" + "\n".join(wrong[:20])
    counts = collections.Counter(v for v, _ in expected)
    assert counts["allowed"] and counts["disallowed"], counts

    opens = collections.Counter(pid for what, pid in events if what == "open")
    batches = collections.Counter(pid for what, pid in events if what == "batch")
    assert opens, "no worker opened the artifact"
    assert all(n == 1 for n in opens.values()), f"a worker process opened the artifact more than once: {opens}"
    assert set(batches) == set(opens)
    assert sum(batches.values()) > len(opens), f"{sum(batches.values())} batches in {len(opens)} processes"
    print(f"{len(urls)} URLs, {sum(batches.values())} batches, {len(opens)} worker processes, one open each")


FETCH_SCHEMA = "url string, status int, body binary, fetched_at string, location string, error string"


def fetch_rows(records):
    """Rows of FETCH_SCHEMA's columns (bodies as bytes), in order."""
    rows = []
    for r in records:
        body = r.get("body")
        rows.append(
            (
                r["url"],
                r["status"],
                body.encode() if isinstance(body, str) else body,
                r.get("fetched_at"),
                r.get("location"),
                r.get("error"),
            )
        )
    return rows


def check_shard_set(path, shards, origins):
    """The directory holds shards 0..N-1, each naming itself K of N by the
    engine's scheme, and opens as one set of ``origins`` origins."""
    from robotsieve.spark import shard_file_name

    names = [shard_file_name(k, shards) for k in range(shards)]
    assert sorted(os.listdir(path)) == names
    whole = robotsieve.Artifact(path)
    scheme = robotsieve._native.SHARD_SCHEME
    assert whole.shard_files == [(str(path / name), k, shards, scheme) for k, name in enumerate(names)]
    assert whole.files == shards
    assert whole.origins == origins


def test_compile_corpus_shards_give_filter_verdicts_on_crawl2019(spark, crawl2019, tmp_path):
    """compile_corpus with 4 shards over crawl2019's robots files, then
    filter_frontier with that shard set: robotsieve filter's verdicts (of the
    artifact robotsieve.compile wrote from the same records)."""
    from robotsieve.spark import compile_corpus

    urls, rules, out, records = crawl2019
    expected = cli_verdicts(urls, rules, out)
    df = spark.createDataFrame(fetch_rows(records), FETCH_SCHEMA).repartition(6)
    shard_set = tmp_path / "rules"
    summary = compile_corpus(df, agents=[AGENT], output=str(shard_set), shards=4)
    assert summary["shards"] == 4
    assert summary["origins"] == robotsieve.Artifact(rules).origins == len(records)
    check_shard_set(shard_set, 4, len(records))

    rows, _ = filter_with_spark(spark, urls, shard_set, tmp_path)
    wrong = differences(rows, expected)
    assert not wrong, f"{len(wrong)} of {len(urls)} differ:\n" + "\n".join(wrong[:20])
    # The CLI reads the same set the same way.
    assert cli_verdicts(urls, shard_set, out, "shard-set") == expected
    assert summary["spilled_runs"] == 0
    # Resolved in a budget of 4 KiB a task, the sorts spill to temporary
    # files on the executors and the set gives the same verdicts.
    small = tmp_path / "rules-small"
    summary_small = compile_corpus(df, agents=[AGENT], output=str(small), shards=4, memory=4096)
    assert summary_small["spilled_runs"] > 4, summary_small
    assert summary_small["origins"] == summary["origins"]
    check_shard_set(small, 4, len(records))
    assert cli_verdicts(urls, small, out, "shard-set-small") == expected
    with pytest.raises(ValueError, match="memory must be a positive number"):
        compile_corpus(df, agents=[AGENT], output=str(tmp_path / "never"), shards=4, memory=0)
    print(f"{len(records)} records in 4 shards: {len(urls)} verdicts equal; {summary_small['spilled_runs']} runs spilled in 4 KiB")


def day(n, extra=""):
    """RFC 3339 text of 2026-01-01 plus ``n`` days (``extra`` replaces the zone)."""
    moment = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(days=n)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (extra or "Z")


def rules_body(*paths):
    return "User-agent: *\n" + "".join(f"Disallow: {p}\n" for p in paths)


def status_corpus():
    """Fetch records that exercise Google's rules: duplicates (newest wins,
    undated older, ties to the later record), redirects within and across
    origins (relative, to a path that is no robots.txt, a five-hop chain, a
    six-hop one, a loop, a missing target, none at all, 304), 4xx, 5xx, 429,
    no answer, and the 30-day rule."""
    r = []

    def add(url, status, body=None, at=None, location=None, error=None):
        r.append({"url": url, "status": status, "body": body, "fetched_at": at, "location": location, "error": error})

    add("https://plain.test/robots.txt", 200, rules_body("/private"))
    # Duplicates: an undated record is older than any dated one; the newest wins.
    add("https://dup.test/robots.txt", 200, rules_body("/new"), day(5))
    add("https://dup.test/robots.txt", 200, rules_body("/old"), day(1))
    add("https://dup.test/robots.txt", 200, rules_body("/undated"))
    # A tie in time goes to the record read last; offsets and fractions count.
    add("https://tie.test/robots.txt", 200, rules_body("/first"), day(2))
    add("https://tie.test/robots.txt", 200, rules_body("/second"), day(2, "+00:00"))
    add("https://frac.test/robots.txt", 200, rules_body("/later"), "2026-01-01T00:00:00.5Z")
    add("https://frac.test/robots.txt", 200, rules_body("/earlier"), "2026-01-01T01:00:00.25+01:00")
    # Redirects: across schemes and hosts (other shards), to the newest record of the target.
    add("http://hop.test/robots.txt", 301, location="https://hop.test/robots.txt")
    add("https://hop.test/robots.txt", 200, rules_body("/hop"))
    add("https://away.test/robots.txt", 302, location="https://target.test/robots.txt")
    add("https://target.test/robots.txt", 200, rules_body("/old-target"), day(1))
    add("https://target.test/robots.txt", 200, rules_body("/new-target"), day(3))
    add("https://rel.test/robots.txt", 301, location="/rules/robots.txt")
    add("https://rel.test/rules/robots.txt", 200, rules_body("/relative"))
    add("https://offroot.test/robots.txt", 307, location="https://files.test/shared/robots.txt?v=2")
    add("https://files.test/shared/robots.txt?v=2", 200, rules_body("/shared"))
    add("https://to5xx.test/robots.txt", 301, location="https://down.test/robots.txt")
    add("https://down.test/robots.txt", 503)
    add("https://to404.test/robots.txt", 301, location="//gone.test/robots.txt")
    add("https://gone.test/robots.txt", 404)
    # Five hops end at a body; six hops count as 404.
    for n in range(5):
        add(f"https://c{n}.test/robots.txt", 301, location=f"https://c{n + 1}.test/robots.txt")
    add("https://c5.test/robots.txt", 200, rules_body("/chain"))
    for n in range(6):
        add(f"https://d{n}.test/robots.txt", 301, location=f"https://d{n + 1}.test/robots.txt")
    add("https://d6.test/robots.txt", 200, rules_body("/too-far"))
    add("https://loop.test/robots.txt", 301, location="https://loop2.test/robots.txt")
    add("https://loop2.test/robots.txt", 301, location="https://loop.test/robots.txt")
    add("https://missing.test/robots.txt", 302, location="https://nowhere.test/robots.txt")
    add("https://nolocation.test/robots.txt", 302)
    add("https://notmodified.test/robots.txt", 304)
    # A redirect whose newest record is a redirect again (the older is a body).
    add("https://moved.test/robots.txt", 200, rules_body("/moved-old"), day(1))
    add("https://moved.test/robots.txt", 301, location="https://plain.test/robots.txt", at=day(2))
    # Statuses.
    add("https://e404.test/robots.txt", 404)
    add("https://e403.test/robots.txt", 403, "forbidden")
    add("https://e500.test/robots.txt", 500)
    add("https://e429.test/robots.txt", 429)
    add("https://dns.test/robots.txt", 0, error="dns")
    add("https://odd.test/robots.txt", 199)
    # The 30-day rule: blocked within 30 days of the last reachable fetch,
    # back to it after; failures alone for more than 30 days: unrestricted.
    add("https://outage.test/robots.txt", 200, rules_body("/kept"), day(0))
    add("https://outage.test/robots.txt", 503, at=day(40))
    add("https://brief.test/robots.txt", 200, rules_body("/kept"), day(0))
    add("https://brief.test/robots.txt", 503, at=day(10))
    add("https://never.test/robots.txt", 503, at=day(0))
    add("https://never.test/robots.txt", 500, at=day(45))
    add("https://was404.test/robots.txt", 404, at=day(0))
    add("https://was404.test/robots.txt", 503, at=day(31))
    # A newer 4xx after a body: unrestricted; a redirect to a down site after 31 days.
    add("https://lost.test/robots.txt", 200, rules_body("/"), day(0))
    add("https://lost.test/robots.txt", 410, at=day(3))
    add("https://redirdown.test/robots.txt", 200, rules_body("/rd"), day(0))
    add("https://redirdown.test/robots.txt", 302, location="https://down.test/robots.txt", at=day(31))
    return r


PROBE_PATHS = ["/", "/private", "/new", "/old", "/undated", "/first", "/second", "/later", "/earlier", "/hop",
               "/old-target", "/new-target", "/relative", "/shared", "/chain", "/too-far", "/moved-old", "/kept",
               "/rd", "/x"]


def test_compile_corpus_follows_google_redirect_and_status_rules_as_the_cli(spark, tmp_path):
    """The same records through `robotsieve compile --corpus` and through
    compile_corpus (4 shards; fetched_at as text and as a TIMESTAMP column):
    every origin's verdicts on every probe path are equal."""
    from pyspark.sql import functions as F

    from robotsieve.spark import compile_corpus, shard_of_url

    records = status_corpus()
    corpus = tmp_path / "fetches.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n")
    cli_rules = tmp_path / "cli.rsv"
    subprocess.run(
        [robotsieve_binary(), "compile", "--corpus", corpus, "--agent", AGENT, "-o", cli_rules],
        check=True, capture_output=True,
    )
    origins = sorted({r["url"].split("/robots.txt")[0] for r in records if r["url"].endswith("/robots.txt")})
    urls = [o + p for o in origins for p in PROBE_PATHS]
    expected = cli_verdicts(urls, cli_rules, tmp_path, "cli")

    # The corpus is a test of something only if the rules decide differently
    # across it and redirects cross shards.
    verdict = {u: v for v, u in expected}
    assert verdict["https://dup.test/new"] == "disallowed" and verdict["https://dup.test/old"] == "allowed"
    assert verdict["https://c0.test/chain"] == "disallowed" and verdict["https://d0.test/too-far"] == "allowed"
    assert verdict["https://e500.test/x"] == "disallowed" and verdict["https://e403.test/x"] == "allowed"
    assert verdict["https://outage.test/kept"] == "disallowed" and verdict["https://outage.test/x"] == "allowed"
    assert verdict["https://brief.test/x"] == "disallowed" and verdict["https://never.test/x"] == "allowed"
    assert verdict["https://away.test/new-target"] == "disallowed"
    assert verdict["https://away.test/old-target"] == "allowed"
    crossing = [(a, b) for a, b in [("https://away.test", "https://target.test"), ("https://c0.test", "https://c1.test"),
                                    ("http://hop.test", "https://hop.test")]
                if shard_of_url(a, 4) != shard_of_url(b, 4)]
    assert crossing, "no redirect of the corpus crosses shards"

    # In three partitions, in the order of the file (a tie in time goes to
    # the later row, as to the later line).
    as_text = spark.createDataFrame(spark.sparkContext.parallelize(fetch_rows(records), 3), FETCH_SCHEMA)
    # The same rows with fetched_at as a TIMESTAMP (microseconds: enough for this corpus).
    as_time = as_text.withColumn("fetched_at", F.to_timestamp("fetched_at"))
    for name, df in [("text", as_text), ("timestamp", as_time)]:
        shard_set = tmp_path / f"rules-{name}"
        summary = compile_corpus(df, agents=[AGENT], output=str(shard_set), shards=4)
        check_shard_set(shard_set, 4, robotsieve.Artifact(cli_rules).origins)
        assert summary["origins"] == robotsieve.Artifact(cli_rules).origins
        got = cli_verdicts(urls, shard_set, tmp_path, f"spark-{name}")
        wrong = [f"{u}: compile_corpus {g}, compile --corpus {e}" for (g, u), (e, _) in zip(got, expected) if g != e]
        assert not wrong, f"fetched_at as {name}: {len(wrong)} of {len(urls)} differ:\n" + "\n".join(wrong[:30])
        # And through the package, as filter_frontier's executors classify.
        through_python = robotsieve.Artifact(shard_set).classify(urls, agent=AGENT).column("verdict").to_pylist()
        assert through_python == [e for e, _ in expected]
