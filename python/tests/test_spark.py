"""robotsieve.spark on a real Spark cluster of two executor processes with
two Python workers each (local-cluster[2,2,2048]): filter_frontier gives
robotsieve filter's verdicts URL by URL, with a whole artifact (each
Python worker opening it once) and with a 16-shard set given as a file://
URI (each task opening only its rows' shard, each executor copying only
the shards its tasks used, once, a skewed shard split over several tasks);
unknown_origins lists what filter --unknown-origins lists; compile_corpus's
shard sets give the same verdicts, written to a path or a URI, and follow
Google's redirect and status rules exactly as `robotsieve compile --corpus`
does."""

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


def compile_set(folder, origins, rule):
    """A 3-shard set of ``origins`` origins, each disallowing ``/{rule}{i}``,
    compiled by the CLI into ``folder``."""
    records = folder.parent / f"{folder.name}.jsonl"
    with records.open("w") as out:
        for i in range(origins):
            body = f"User-agent: *\nDisallow: /{rule}{i}\nAllow: /{rule}{i}/open$\n"
            out.write(json.dumps({"url": f"https://h{i}.example/robots.txt", "status": 200, "body": body}) + "\n")
    subprocess.run(
        [robotsieve_binary(), "compile", "--corpus", records, "--agent", AGENT, "--shards", "3", "-o", folder],
        check=True,
        capture_output=True,
    )


def test_executor_cache_copies_once_under_its_lock_and_evicts_the_least_recently_used(tmp_path, monkeypatch):
    """Two worker processes of one executor ask for the same file at once:
    one copies it, the other finds it; beyond the byte cap the least
    recently used copy goes; a file changed since the driver read it, and
    one damaged in the store, are refused and leave nothing behind. The
    copies are keyed by the digest the driver read from each header."""
    import multiprocessing

    from robotsieve import _cache, _store

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    log = tmp_path / "events.log"
    monkeypatch.setattr(_cache, "scratch_root", lambda: str(scratch))
    monkeypatch.setattr(_cache, "CHUNK", 4096)  # copies of many pieces
    monkeypatch.setenv(_cache.EVENT_LOG_VARIABLE, str(log))
    store = tmp_path / "store"
    compile_set(store, 3000, "p")
    rules = _store.open_rules(store.as_uri(), AGENT)
    sizes = [f.size for f in rules.files]
    assert min(sizes) > 8 * 4096, sizes
    digests = [f.digest for f in rules.files]
    assert len(set(digests)) == 3 and all(len(d) == 16 for d in digests), digests
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(2), context.Queue()
    workers = [context.Process(target=copy_in_child, args=(rules, barrier, results)) for _ in range(2)]
    for w in workers:
        w.start()
    paths = {results.get(timeout=120) for _ in workers}
    for w in workers:
        w.join()
        assert w.exitcode == 0
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["copy"], events
    (path,) = paths
    assert Path(path).read_bytes() == Path(rules.files[0].path).read_bytes()
    assert os.path.basename(path) == f"{digests[0]}.rsv"

    cap = sum(sizes) - 1
    second = _cache.local_copy(rules, rules.files[1], cap)
    os.utime(path, ns=(1, 1))  # file 0 used longest ago ...
    assert _cache.local_copy(rules, rules.files[0], cap) == path  # ... until now, without a copy
    _cache.local_copy(rules, rules.files[2], cap)
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["copy", "copy", "evict", "copy"], events
    assert events[2]["name"] == os.path.basename(second)
    cached = scratch / "robotsieve-cache"
    assert sorted(p.name for p in cached.glob("*.rsv")) == sorted([f"{digests[0]}.rsv", f"{digests[2]}.rsv"])

    # Shard 1 recompiled with other rules after the driver read the set.
    other = tmp_path / "other"
    compile_set(other, 3000, "q")
    shutil.copyfile(other / "00001-of-00003.rsv", rules.files[1].path)
    with pytest.raises(robotsieve.ArtifactError, match="00001-of-00003.rsv changed after the job read it"):
        _cache.local_copy(rules, rules.files[1], cap)
    # One byte past the header damaged in the store: the header and its
    # digest are the driver's, and the copy's whole check refuses it.
    damaged = bytearray(Path(rules.files[2].path).read_bytes())
    damaged[len(damaged) // 2] ^= 0x10
    shutil.rmtree(cached)
    Path(rules.files[2].path).write_bytes(bytes(damaged))
    with pytest.raises(robotsieve.ArtifactError, match="00002-of-00003.rsv is damaged in the store"):
        _cache.local_copy(rules, rules.files[2], cap)
    assert not list(cached.glob("*.part")) and not list(cached.glob("*.rsv"))


def copy_in_child(rules, barrier, results):
    from robotsieve import _cache

    barrier.wait()
    results.put(_cache.local_copy(rules, rules.files[0]))


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
    """One SparkSession on local-cluster[2,2,2048] for the module (starting
    one takes many seconds): two executors, each with two cores, so two
    Python workers, as the per-executor cache and its lock need; every
    executor appends its opens, copies and tasks to ``spark.open_log``."""
    require_java()
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    from robotsieve.spark import OPEN_LOG_VARIABLE

    open_log = tmp_path_factory.mktemp("spark") / "events.log"
    open_log.write_text("")
    python = os.environ.get("PYSPARK_PYTHON", sys.executable)
    # The driver, the workers and the executors talk over the loopback only.
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = (
        SparkSession.builder.master("local-cluster[2,2,2048]")
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
    """The URLs whose verdict in ``rows`` (id, url, verdict, ...) is not filter's."""
    return [
        f"{url}: spark {verdict}, filter {expected[i][0]}"
        for i, url, verdict, *_ in rows
        if (verdict, url) != tuple(expected[i])
    ]


def read_events(spark, since=0):
    """The events the executors logged, from line ``since`` on."""
    return [json.loads(line) for line in spark.open_log.read_text().splitlines()[since:]]


def write_frontier(urls, tmp_path, name="frontier"):
    """``urls`` as a Parquet frontier (columns id, url) in four files."""
    frontier = tmp_path / name
    frontier.mkdir()
    table = pa.table({"id": pa.array(range(len(urls)), pa.int64()), "url": pa.array(urls)})
    bounds = [len(urls) * k // 4 for k in range(5)]
    for part in range(4):
        rows = table.slice(bounds[part], bounds[part + 1] - bounds[part])
        pq.write_table(rows, frontier / f"part-{part}.parquet")
    return frontier


def filter_with_spark(spark, urls, rules, tmp_path, **options):
    """filter_frontier over ``urls`` written as a Parquet frontier in four
    files, read in eight partitions: sorted (id, url, verdict, partition)
    rows, and the events the executors logged meanwhile."""
    from pyspark.sql import functions as F

    from robotsieve.spark import filter_frontier

    since = len(read_events(spark))
    df = spark.read.parquet(str(write_frontier(urls, tmp_path))).repartition(8)
    got = filter_frontier(df, url_col="url", rules=str(rules), agent=AGENT, **options)
    rows = sorted(got.select("id", "url", "verdict", F.spark_partition_id().alias("task")).collect())
    return [tuple(r) for r in rows], read_events(spark, since)


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

    opens = collections.Counter(e["pid"] for e in events if e["event"] == "open")
    tasks = collections.Counter(e["pid"] for e in events if e["event"] == "task")
    assert opens, "no worker opened the artifact"
    assert all(n == 1 for n in opens.values()), f"a worker process opened the artifact more than once: {opens}"
    assert set(tasks) == set(opens)
    assert sum(tasks.values()) > len(opens), f"{sum(tasks.values())} tasks in {len(opens)} processes"
    print(f"{len(urls)} URLs, {sum(tasks.values())} tasks, {len(opens)} worker processes, one open each")


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


# A 16-shard set as a file:// URI: the shuffle by shard, the per-executor
# copies, the skew split, unknown_origins.

SHARDS = 16
SYNTH_URLS = 30_000


@pytest.fixture(scope="module")
def sixteen(spark, crawl2019, tmp_path_factory):
    """A synthetic frontier (synth_frontier.py) beside crawl2019's URLs, and
    a 16-shard set compiled by compile_corpus into a file:// URI from the
    robots files of both lists' hosts (some of the frontier's hosts have
    none: their URLs are unknown)."""
    from robotsieve.spark import compile_corpus

    urls, whole, out, records = crawl2019
    root = shared_dir() / "realworld"
    made = subprocess.run(
        [sys.executable, root / "synth_frontier.py", "--root", root, "--n", str(SYNTH_URLS), "--seed", "7"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()[1:]
    synthetic = [line.split("\t")[1] for line in made]
    hosts = {line.split("\t")[0] for line in made}
    known = {r["url"].split("://", 1)[1].split("/", 1)[0] for r in records}
    extra = [
        {"url": f"{scheme}://{host}/robots.txt", "status": 200, "body": (root / "robots" / f"{host}.txt").read_bytes()}
        for host in sorted(hosts - known)
        if (root / "robots" / f"{host}.txt").is_file()
        for scheme in ("http", "https")
    ]
    everything = records + extra
    folder = tmp_path_factory.mktemp("sixteen")
    uri = (folder / "set").as_uri()
    df = spark.createDataFrame(fetch_rows(everything), FETCH_SCHEMA).repartition(4)
    summary = compile_corpus(df, agents=[AGENT], output=uri, shards=SHARDS)
    assert summary["origins"] == len(everything)
    check_shard_set(folder / "set", SHARDS, len(everything))
    return {"uri": uri, "path": folder / "set", "crawl2019": urls, "synthetic": synthetic, "out": folder}


def shard_of(url):
    """The shard of ``url``'s origin in the 16-shard set; None for a line that is no URL."""
    from robotsieve.spark import shard_of_url

    try:
        return shard_of_url(url, SHARDS)
    except ValueError:
        return None


def check_routing(rows, events):
    """Each task opened only the shard of its rows (one), and each executor
    copied only shards its tasks used, none twice (over the whole session).
    Returns the rows per task."""
    tasks = [e for e in events if e["event"] == "task"]
    assert tasks, "no task logged"
    held = collections.defaultdict(set)
    sizes = collections.Counter()
    for _, url, _, task in rows:
        sizes[task] += 1
        if shard_of(url) is not None:
            held[task].add(shard_of(url))
    used_by_executor = collections.defaultdict(set)
    for e in tasks:
        assert len(held[e["partition"]]) <= 1, f"task {e['partition']} holds shards {held[e['partition']]}"
        assert set(e["shards"]) == held[e["partition"]], (e, held[e["partition"]])
        used_by_executor[e["executor"]].update(e["shards"])
    for e in (e for e in events if e["event"] == "open"):
        assert e["shard"] in held[e["partition"]], f"task {e['partition']} opened shard {e['shard']}, not its rows'"
    return sizes, used_by_executor


def check_copies(spark, events):
    """Over the whole session: no shard copied twice on one executor, each
    copied by an executor one of whose tasks used it. Returns the bytes
    copied per executor in ``events`` (one run's)."""
    everything = read_events(spark)
    copies = collections.Counter((e["executor"], e["shard"]) for e in everything if e["event"] == "copy")
    assert copies, "no shard was copied"
    twice = [c for c, n in copies.items() if n > 1]
    assert not twice, f"copied twice on one executor: {twice}"
    used = collections.defaultdict(set)
    for e in everything:
        if e["event"] == "task":
            used[e["executor"]].update(e["shards"])
    for executor, shard in copies:
        assert shard in used[executor], f"{executor} copied shard {shard}, which none of its tasks used"
    copied = collections.Counter()
    for e in events:
        if e["event"] == "copy":
            copied[e["executor"]] += e["bytes"]
    return copied


@pytest.mark.parametrize("frontier", ["crawl2019", "synthetic"])
def test_sixteen_shard_uri_each_task_opens_its_shard_and_verdicts_equal_filter(spark, sixteen, frontier, tmp_path):
    urls = sixteen[frontier]
    expected = cli_verdicts(urls, sixteen["path"], tmp_path)
    rows, events = filter_with_spark(spark, urls, sixteen["uri"], tmp_path)
    assert len(rows) == len(urls)
    wrong = differences(rows, expected)
    assert not wrong, f"{len(wrong)} of {len(urls)} differ:\n" + "\n".join(wrong[:20])
    counts = collections.Counter(v for v, _ in expected)
    assert counts["allowed"] and counts["disallowed"] and counts["unknown"], counts
    sizes, used = check_routing(rows, events)
    assert len(sizes) >= SHARDS, f"{len(sizes)} tasks for {SHARDS} shards"
    copied = check_copies(spark, events)
    whole = sum(f.stat().st_size for f in sixteen["path"].iterdir())
    if frontier == "crawl2019":  # the first run: the executors' caches were empty
        assert len(copied) == 2, f"only {list(copied)} copied shards"
        assert all(b < whole for b in copied.values()), f"an executor copied the whole set: {copied} of {whole}"
    print(f"{frontier}: {len(urls)} URLs in {len(sizes)} tasks; bytes copied per executor {dict(copied)} of {whole}")


def test_skewed_frontier_splits_its_big_shard_over_several_tasks(spark, sixteen, tmp_path):
    """One origin holds half the URLs: its shard splits by sorted ranges of
    (origin, row) into tasks of about urls_per_task URLs, each opening that
    shard alone, and the verdicts stay filter's."""
    base = sixteen["crawl2019"][:20_000]
    big = collections.Counter(u.split("/")[2] for u in base).most_common(1)[0][0]
    paths = [u.split("/", 3)[3] if u.count("/") >= 3 else "" for u in base]
    urls = base + [f"https://{big}/{paths[i % len(paths)]}?n={i}" for i in range(len(base))]
    expected = cli_verdicts(urls, sixteen["path"], tmp_path)
    per_task = 4000
    rows, events = filter_with_spark(spark, urls, sixteen["uri"], tmp_path, urls_per_task=per_task)
    wrong = differences(rows, expected)
    assert not wrong, f"{len(wrong)} of {len(urls)} differ:\n" + "\n".join(wrong[:20])
    sizes, _ = check_routing(rows, events)
    check_copies(spark, events)
    heavy = shard_of(f"https://{big}/")
    tasks_of_heavy = {e["partition"] for e in events if e["event"] == "task" and e["shards"] == [heavy]}
    assert len(tasks_of_heavy) >= len(base) // per_task, f"the big shard went to {len(tasks_of_heavy)} tasks"
    biggest = max(sizes.values())
    assert biggest < 3 * per_task, f"a task of {biggest} URLs"


def test_preserve_order_keeps_rows_in_place(spark, sixteen, tmp_path):
    """preserve_order=True: no shuffle, the rows in the frontier's order,
    each task opening the shards its rows need; the verdicts filter's."""
    from robotsieve.spark import filter_frontier

    urls = sixteen["synthetic"]
    expected = cli_verdicts(urls, sixteen["path"], tmp_path)
    table = pa.table({"id": pa.array(range(len(urls)), pa.int64()), "url": pa.array(urls)})
    pq.write_table(table, tmp_path / "frontier.parquet")
    df = spark.read.parquet(str(tmp_path / "frontier.parquet")).coalesce(1)
    got = filter_frontier(df, "url", sixteen["uri"], AGENT, preserve_order=True).collect()
    assert [r["id"] for r in got] == list(range(len(urls)))
    assert [(r["verdict"], r["url"]) for r in got] == [tuple(e) for e in expected]
    check_copies(spark, [])


def test_unknown_origins_lists_each_missing_robots_txt_once(spark, sixteen, tmp_path):
    from robotsieve.spark import unknown_origins

    urls = sixteen["synthetic"] + ["no url at all", None]
    listing = tmp_path / "urls.txt"
    listing.write_text("".join(u + "\n" for u in urls if u is not None), encoding="utf-8")
    fetch = tmp_path / "fetch.txt"
    subprocess.run(
        [robotsieve_binary(), "filter", "--rules", sixteen["path"], "--agent", AGENT, "--urls", listing,
         "--unknown-origins", fetch],
        check=True,
    )
    expected = fetch.read_text(encoding="utf-8").splitlines()
    assert expected, "the frontier has no unknown origin"
    df = spark.createDataFrame([(u,) for u in urls], "url string")
    got = [r["robots_url"] for r in unknown_origins(df, "url", sixteen["uri"]).collect()]
    assert len(got) == len(set(got)), "an origin listed twice"
    assert sorted(got) == sorted(expected)


def test_rules_are_checked_on_the_driver(spark, sixteen, tmp_path):
    """A missing location, a damaged or missing shard and an agent the set
    was not compiled for fail before any task, naming what is wrong."""
    from robotsieve.spark import filter_frontier

    df = spark.createDataFrame([("https://example.com/",)], "url string")
    absent = (tmp_path / "absent").as_uri()
    with pytest.raises(robotsieve.ArtifactError, match="absent: no such artifact"):
        filter_frontier(df, "url", absent, AGENT)
    with pytest.raises(robotsieve.AgentError, match="otherbot"):
        filter_frontier(df, "url", sixteen["uri"], "otherbot")
    damaged = tmp_path / "damaged"
    shutil.copytree(sixteen["path"], damaged)
    victim = damaged / "00003-of-00016.rsv"
    data = bytearray(victim.read_bytes())
    data[40] ^= 0xFF  # the section count, under the header checksum
    victim.write_bytes(bytes(data))
    with pytest.raises(robotsieve.ArtifactError, match="00003-of-00016.rsv"):
        filter_frontier(df, "url", damaged.as_uri(), AGENT)
    victim.write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(robotsieve.ArtifactError, match="00003-of-00016.rsv.*truncated"):
        filter_frontier(df, "url", damaged.as_uri(), AGENT)
    victim.unlink()
    with pytest.raises(robotsieve.ArtifactError, match="00003-of-00016.rsv of the set of 16 is missing"):
        filter_frontier(df, "url", damaged.as_uri(), AGENT)


def test_fetch_robots_gives_the_verdicts_of_the_command_line_path(spark, robots_server, tmp_path):
    """fetch_robots on the cluster against the loopback test server: one
    record per hop with the columns compile_corpus takes, one site's hosts
    in one task, and through compile_corpus the verdicts of robotsieve.fetch
    + robotsieve.compile (the command line's fetch and compile --corpus) on
    the same server."""
    from pyspark.sql import functions as F

    from conftest import RobotsServer
    from robotsieve.spark import compile_corpus, fetch_robots, task_limits

    limits = {"resolve": robots_server.resolve(), "retries": 0, "per_ip_interval_ms": 5}
    lines = [robots_server.origin(host) for host in RobotsServer.SITES] + [robots_server.origin("allow.test")]
    origins = spark.createDataFrame([(line,) for line in lines], "origin string")
    fetched = fetch_robots(origins, user_agent="mybot/1.0", tasks=4, **limits).withColumn(
        "task", F.spark_partition_id()
    )
    fetched = fetched.persist()
    try:
        rows = fetched.collect()
        assert len(rows) == 6  # five origins, the redirect two hops, the repeated line once
        port = robots_server.port
        by_url = {r["url"]: r for r in rows}
        assert by_url[f"http://allow.test:{port}/robots.txt"]["task"] == by_url[f"http://www.allow.test:{port}/robots.txt"]["task"]
        assert bytes(by_url[f"http://allow.test:{port}/robots.txt"]["body"]) == b"User-agent: *\nDisallow: /private\n"
        assert sorted(r["status"] for r in rows) == [200, 200, 200, 301, 404, 503]
        assert by_url[f"http://moved.test:{port}/robots.txt"]["location"] == "/robots-real.txt"

        shard_set = tmp_path / "set"
        compile_corpus(fetched.drop("task"), agents=[AGENT], output=str(shard_set), shards=2)
    finally:
        fetched.unpersist()

    out = tmp_path / "fetched.jsonl"
    robotsieve.fetch(lines, user_agent="mybot/1.0", output=out, **limits)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    robotsieve.compile(records, agents=[AGENT], output=tmp_path / "rules.rsv")

    urls = [f"http://{h}:{port}{p}" for h in RobotsServer.SITES for p in ("/", "/private/x", "/secret", "/robots-real.txt")]
    urls.append(f"http://elsewhere.test:{port}/")
    spark_verdicts = robotsieve.Artifact(shard_set).classify(urls, agent=AGENT).column("verdict").to_pylist()
    cli_verdicts = robotsieve.Artifact(tmp_path / "rules.rsv").classify(urls, agent=AGENT).column("verdict").to_pylist()
    assert spark_verdicts == cli_verdicts
    assert collections.Counter(cli_verdicts) == {"allowed": 10, "disallowed": 10, "unknown": 1}

    # The per-IP limits are shared among the tasks; the others are each task's.
    assert task_limits({"per_ip_connections": 8, "per_ip_interval_ms": 100, "concurrency": 64}, 4) == {
        "per_ip_connections": 2,
        "per_ip_interval_ms": 400,
        "concurrency": 64,
    }
    assert task_limits({}, 16)["per_ip_connections"] == 1
    with pytest.raises(ValueError, match="retries"):
        fetch_robots(origins, user_agent="mybot/1.0", retries=-1)
    with pytest.raises(ValueError, match="column"):
        fetch_robots(origins.withColumn("other", F.lit(1)), user_agent="mybot/1.0")
