"""The package's API: Arrow in and out, threads, errors, Protego's methods."""

import base64
import datetime
import json
import os

import pyarrow as pa
import pytest

import robotsieve

BODY = """User-agent: *
Disallow: /private
Crawl-delay: 1.5

User-agent: mybot
Disallow: /mine
Allow: /mine/open
Crawl-delay: 3
Request-rate: 2/1m 0800-1700
Visit-time: 0600-0845

Sitemap: https://a.example/sitemap.xml
Host: a.example
"""


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("rules") / "rules.rsv"
    info = robotsieve.compile(
        [
            {"url": "https://a.example/robots.txt", "status": 200, "body": BODY},
            {"url": "https://b.example/robots.txt", "status": 503, "body": ""},
            {"url": "https://c.example/robots.txt", "status": 404},
            {"url": "https://d.example/robots.txt", "status": 200, "body": b"User-agent: *\nDisallow: /\n"},
        ],
        agents=["mybot", "otherbot"],
        output=out,
        explain=True,
    )
    assert info["origins"] == 4
    return robotsieve.Artifact(out)


URLS = [
    "https://a.example/mine/x",
    "https://a.example/mine/open/y",
    "https://a.example/private",
    "https://b.example/",
    "https://c.example/anything",
    "https://d.example/x",
    "https://zzz.example/",
    "not a url",
]
EXPECTED_MYBOT = ["disallowed", "allowed", "allowed", "disallowed", "allowed", "disallowed", "unknown", "invalid"]


def verdicts(batch):
    return batch.column("verdict").to_pylist()


def test_every_arrow_string_type_and_lists_agree(artifact):
    for array in [
        pa.array(URLS, pa.string()),
        pa.array(URLS, pa.large_string()),
        pa.array([u.encode() for u in URLS], pa.binary()),
        pa.array([u.encode() for u in URLS], pa.large_binary()),
        pa.array(URLS, pa.string_view()),
        pa.chunked_array([URLS[:3], URLS[3:]]),
        URLS,
        [u.encode() for u in URLS],
    ]:
        assert verdicts(artifact.classify(array, agent="mybot")) == EXPECTED_MYBOT, type(array)


def test_schema_lines_rules_reasons(artifact):
    batch = artifact.classify(URLS, agent="mybot")
    assert batch.schema == robotsieve.SCHEMA
    assert batch.column("verdict").type == pa.dictionary(pa.int8(), pa.string())
    assert batch.column("line").to_pylist()[:3] == [6, 7, None]
    assert batch.column("rule").to_pylist()[:2] == ["disallow: /mine", "allow: /mine/open"]
    reasons = batch.column("reason").to_pylist()
    assert reasons[3] == "robots.txt fetch status 503: everything disallowed"
    assert reasons[6] == "no robots.txt for this origin"
    # Without explain the reasons of decided URLs are not computed; unknown
    # and invalid URLs cost nothing to explain and keep theirs.
    quiet = artifact.classify(URLS, agent="mybot", explain=False).column("reason").to_pylist()
    assert quiet == [None] * 6 + reasons[6:]


def test_slices_and_nulls_are_read_in_place(artifact):
    array = pa.array([None] + URLS + [None])
    batch = artifact.classify(array.slice(1, len(URLS)), agent="mybot")
    assert verdicts(batch) == EXPECTED_MYBOT
    assert verdicts(artifact.classify(array, agent="mybot")) == ["invalid"] + EXPECTED_MYBOT + ["invalid"]


def test_threads_give_the_same_batch_in_order(artifact):
    many = pa.array(URLS * 2000)
    one = artifact.classify(many, agent="mybot", threads=1)
    four = artifact.classify(many, agent="mybot", threads=4)
    assert one.equals(four)
    assert verdicts(one) == EXPECTED_MYBOT * 2000


def test_agents_are_looked_up_by_the_engine(artifact):
    assert artifact.agents == ["mybot", "otherbot"]
    assert verdicts(artifact.classify(URLS[:3], agent="OtherBot")) == ["allowed", "allowed", "disallowed"]
    with pytest.raises(robotsieve.AgentError, match="built for mybot and otherbot, not for nobot"):
        artifact.classify(URLS, agent="nobot")
    with pytest.raises(robotsieve.AgentError, match="invalid user-agent token"):
        artifact.classify(URLS, agent="Mozilla/5.0")


def test_damaged_artifacts_raise(tmp_path, artifact):
    data = open(artifact.path, "rb").read()
    cut = tmp_path / "cut.rsv"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(robotsieve.ArtifactError, match="cut.rsv"):
        robotsieve.Artifact(cut)
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    (tmp_path / "flipped.rsv").write_bytes(bytes(flipped))
    # Refused at open (the index), or by verify (a group, checked lazily).
    with pytest.raises(robotsieve.ArtifactError, match="flipped.rsv"):
        robotsieve.Artifact(tmp_path / "flipped.rsv").verify()
    artifact.verify()
    with pytest.raises(robotsieve.ArtifactError, match="missing.rsv"):
        robotsieve.Artifact(tmp_path / "missing.rsv")
    with pytest.raises(TypeError, match="string or binary"):
        artifact.classify(pa.array([1, 2]), agent="mybot")


def test_compile_from_an_arrow_table_and_its_errors(tmp_path):
    table = pa.table(
        {
            "url": ["https://e.example/robots.txt", "https://e.example/robots.txt"],
            "status": [200, 200],
            "body": ["User-agent: *\nDisallow: /old\n", "User-agent: *\nDisallow: /new\n"],
            "fetched_at": [datetime.datetime(2026, 1, 1), datetime.datetime(2026, 6, 1)],
        }
    )
    out = tmp_path / "t.rsv"
    robotsieve.compile(table, agents="mybot", output=out)
    got = robotsieve.Artifact(out).classify(["https://e.example/old", "https://e.example/new"], agent="mybot")
    assert verdicts(got) == ["allowed", "disallowed"], "the newest fetch wins"
    with pytest.raises(robotsieve.CorpusError, match=r"records:2: .*status"):
        robotsieve.compile([{"url": "https://e.example/robots.txt", "status": 200}, {"url": "x"}], ["mybot"], out)
    with pytest.raises(robotsieve.AgentError):
        robotsieve.compile([{"url": "https://e.example/robots.txt", "status": 200}], ["my bot"], out)
    with pytest.raises(robotsieve.CorpusError, match="no-such-dir"):
        robotsieve.compile(
            [{"url": "https://e.example/robots.txt", "status": 200}], ["mybot"], tmp_path / "no-such-dir" / "x.rsv"
        )
    assert sorted(os.listdir(tmp_path)) == ["t.rsv"], "no partial file is left"


def test_compile_reads_body_b64_as_a_fetch_file_holds_it(tmp_path):
    """A body that is not UTF-8 reaches a fetch file as ``body_b64``; a
    record read back with json.loads compiles to the rules of its bytes."""
    body = b"User-agent: *\nDisallow: /caf\xe9\nDisallow: /private\n"
    url = "https://latin1.example/robots.txt"
    as_bytes, as_b64 = tmp_path / "bytes.rsv", tmp_path / "b64.rsv"
    robotsieve.compile([{"url": url, "status": 200, "body": body}], ["mybot"], as_bytes)
    line = json.dumps({"url": url, "status": 200, "body_b64": base64.b64encode(body).decode("ascii")})
    robotsieve.compile([json.loads(line)], ["mybot"], as_b64)
    urls = ["https://latin1.example/private/x", "https://latin1.example/caf%E9", "https://latin1.example/open"]
    got = verdicts(robotsieve.Artifact(as_b64).classify(urls, agent="mybot"))
    assert got == ["disallowed", "disallowed", "allowed"]
    assert got == verdicts(robotsieve.Artifact(as_bytes).classify(urls, agent="mybot"))
    with pytest.raises(robotsieve.CorpusError, match=r"records:1: both body and body_b64"):
        robotsieve.compile([{"url": url, "status": 200, "body": body, "body_b64": "AA=="}], ["mybot"], as_b64)
    with pytest.raises(robotsieve.CorpusError, match=r"records:1: .*body_b64"):
        robotsieve.compile([{"url": url, "status": 200, "body_b64": "not base64!"}], ["mybot"], as_b64)


def test_robots_txt_protego_methods():
    rp = robotsieve.RobotsTxt.parse(BODY)
    assert rp.can_fetch("https://a.example/mine/x", "mybot") is False
    assert rp.can_fetch("https://a.example/mine/open/1", "mybot") is True
    assert rp.can_fetch("https://a.example/private", "mybot") is True, "the specific group replaces *"
    assert rp.can_fetch("https://a.example/private", "otherbot") is False
    assert rp.can_fetch("https://a.example/private", ["mybot-news", "otherbot"]) is False
    assert rp.explain("https://a.example/mine/x", "mybot") == {"allowed": False, "line": 6, "rule": "disallow: /mine"}
    assert rp.explain("https://a.example/", "mybot") == {"allowed": True, "line": None, "rule": None}
    assert rp.crawl_delay("mybot") == 3.0
    assert rp.crawl_delay("otherbot") == 1.5
    assert rp.request_rate("mybot") == robotsieve.RequestRate(2, 60, datetime.time(8, 0), datetime.time(17, 0))
    assert rp.request_rate("otherbot") is None
    assert rp.visit_time("mybot") == robotsieve.VisitTime(datetime.time(6, 0), datetime.time(8, 45))
    assert list(rp.sitemaps) == ["https://a.example/sitemap.xml"]
    assert rp.preferred_host == "a.example"


def test_raw_urls_matches_byte_for_byte():
    body = "User-agent: *\nDisallow: /caf%C3%A9\n"
    assert robotsieve.RobotsTxt.parse(body).can_fetch("https://a.example/café", "bot") is False
    assert robotsieve.RobotsTxt.parse(body, raw_urls=True).can_fetch("https://a.example/café", "bot") is True


def test_product_token():
    assert robotsieve.product_token("Scrapy/2.11 (+https://scrapy.org)") == "Scrapy"
    assert robotsieve.product_token("my-bot_2") == "my-bot_"
    assert robotsieve.product_token("*") == ""
    assert robotsieve.product_token("") == ""


def test_shard_of_url_is_the_cli_shard_of(tmp_path):
    """robotsieve.spark.shard_of_url and shard_file_name are the engine's,
    as `robotsieve shard-of` prints them, for several set sizes."""
    import subprocess

    from test_spark import robotsieve_binary

    from robotsieve.spark import shard_file_name, shard_of_url

    urls = [f"https://host{i}.example/x" for i in range(40)] + ["HTTP://Host0.Example:80/", "https://[::1]:8443/"]
    for shards in (1, 4, 64):
        out = subprocess.run(
            [robotsieve_binary(), "shard-of", "--shards", str(shards), *urls], check=True, capture_output=True, text=True
        ).stdout
        expected = [line.split("\t") for line in out.splitlines()]
        got = [[str(shard_of_url(u, shards)), shard_file_name(shard_of_url(u, shards), shards), u] for u in urls]
        assert got == expected
        assert shards == 1 or len({k for k, _, _ in expected}) > 1
    with pytest.raises(ValueError, match="not a url"):
        shard_of_url("not a url", 4)
