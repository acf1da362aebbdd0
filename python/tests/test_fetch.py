"""robotsieve.fetch and robotsieve.fetch_iter against a real HTTP server on
loopback (conftest.RobotsServer): the summary, the records as dicts
(statuses 200, 404, 503, a redirect hop), retries, arguments refused with
ValueError, the GIL released while fetching, and the Public Suffix List."""

import json
import threading
import time

import pytest

import robotsieve
from conftest import RobotsServer

UA = "mybot/1.0 (+https://example.org/bot)"
FAST = {"retries": 0, "per_ip_interval_ms": 0}


def lines_of(server):
    return [server.origin(host) for host in RobotsServer.SITES] + [server.origin("allow.test"), "not an origin"]


def test_fetch_writes_the_records_and_returns_the_summary(robots_server, tmp_path):
    out = tmp_path / "fetched.jsonl"
    summary = robotsieve.fetch(lines_of(robots_server), user_agent=UA, output=out, resolve=robots_server.resolve(), **FAST)
    assert not (tmp_path / "fetched.jsonl.partial").exists()
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary["origins"] == 5
    assert summary["records"] == len(records) == 7
    assert summary["by_status"] == {"0": 1, "2xx": 3, "3xx": 1, "4xx": 1, "5xx": 1}
    assert summary["errors"] == {"protocol": 1}
    assert (summary["bad_lines"], summary["duplicates_or_held"]) == (1, 1)
    by_url = {r["url"]: r for r in records}
    port = robots_server.port
    assert by_url[f"http://allow.test:{port}/robots.txt"]["body"] == "User-agent: *\nDisallow: /private\n"
    assert by_url[f"http://moved.test:{port}/robots.txt"]["location"] == "/robots-real.txt"
    # The listed-twice origin was fetched once.
    assert robots_server.hits[("allow.test", "/robots.txt")] >= 1

    # The file is a corpus compile reads: Google's rules per status.
    rules = tmp_path / "rules.rsv"
    robotsieve.compile(records, agents=["mybot"], output=rules)
    urls = [f"http://{h}:{port}{p}" for h in RobotsServer.SITES for p in ("/", "/private/x", "/secret")]
    verdicts = dict(zip(urls, robotsieve.Artifact(rules).classify(urls, agent="mybot").column("verdict").to_pylist()))
    assert verdicts[f"http://allow.test:{port}/private/x"] == "disallowed"
    assert verdicts[f"http://allow.test:{port}/"] == "allowed"
    assert verdicts[f"http://www.allow.test:{port}/"] == "disallowed"
    assert verdicts[f"http://missing.test:{port}/private/x"] == "allowed"
    assert verdicts[f"http://down.test:{port}/"] == "disallowed"
    assert verdicts[f"http://moved.test:{port}/secret"] == "disallowed"
    assert verdicts[f"http://moved.test:{port}/private/x"] == "allowed"


def test_fetch_writes_compressed_output_by_its_name(robots_server, tmp_path):
    import gzip

    out = tmp_path / "fetched.jsonl.gz"
    summary = robotsieve.fetch([robots_server.origin("missing.test")], user_agent=UA, output=out, resolve=robots_server.resolve(), **FAST)
    assert summary["by_status"] == {"4xx": 1}
    (record,) = [json.loads(line) for line in gzip.decompress(out.read_bytes()).decode().splitlines()]
    assert record["status"] == 404


def test_fetch_iter_yields_each_record_as_a_dict(robots_server):
    port = robots_server.port
    run = robotsieve.fetch_iter(lines_of(robots_server), user_agent=UA, resolve=robots_server.resolve(), **FAST)
    assert run.summary is None
    records = list(run)
    assert len(records) == 7
    assert all(set(r) == set(records[0]) for r in records)
    by_url = {r["url"]: r for r in records}
    ok = by_url[f"http://allow.test:{port}/robots.txt"]
    assert (ok["status"], ok["body"], ok["truncated"], ok["attempts"]) == (200, b"User-agent: *\nDisallow: /private\n", False, 1)
    assert ok["error"] is None and ok["location"] is None
    assert ok["fetched_at"].endswith("Z") and ok["fetched_at"][:2] == "20"
    assert by_url[f"http://missing.test:{port}/robots.txt"]["status"] == 404
    assert by_url[f"http://down.test:{port}/robots.txt"]["status"] == 503
    # The redirect: the hop's record, then the target's, in order.
    hop = records.index(by_url[f"http://moved.test:{port}/robots.txt"])
    assert (records[hop]["status"], records[hop]["location"]) == (301, "/robots-real.txt")
    assert records[hop + 1]["url"] == f"http://moved.test:{port}/robots-real.txt"
    assert records[hop + 1]["body"] == b"User-agent: *\nDisallow: /secret\n"
    bad = by_url["not an origin"]
    assert bad["status"] == 0 and bad["error"].startswith("protocol: not an origin")
    summary = run.summary
    assert summary["records"] == 7 and summary["origins"] == 5
    assert summary["by_status"] == {"0": 1, "2xx": 3, "3xx": 1, "4xx": 1, "5xx": 1}


def test_fetch_iter_retries_a_503(robots_server):
    before = robots_server.hits[("down.test", "/robots.txt")]
    run = robotsieve.fetch_iter(
        [robots_server.origin("down.test")],
        user_agent=UA,
        resolve=robots_server.resolve(),
        retries=2,
        retry_backoff=0,
        per_ip_interval_ms=0,
    )
    (record,) = list(run)
    assert (record["status"], record["attempts"]) == (503, 3)
    assert robots_server.hits[("down.test", "/robots.txt")] - before == 3


def test_a_loopback_address_from_dns_is_blocked_by_default():
    # No resolve entry: the name is looked up, and "localhost" is loopback.
    (record,) = list(robotsieve.fetch_iter(["http://localhost:9/"], user_agent=UA, retries=0))
    assert record["status"] == 0
    assert record["error"].split(":")[0] in ("blocked", "dns")


def test_the_gil_is_released_while_fetching(tmp_path):
    """A thread counting in Python goes on while fetch_iter waits for a
    slow answer (the fetch thread holds no GIL)."""
    import http.server

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            time.sleep(0.6)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    slow = http.server.ThreadingHTTPServer((RobotsServer.ADDRESS, 0), Slow)
    threading.Thread(target=slow.serve_forever, daemon=True).start()
    try:
        ticks = []
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks.append(time.monotonic())
                time.sleep(0.01)

        counter = threading.Thread(target=count)
        counter.start()
        port = slow.server_address[1]
        summary = robotsieve.fetch([f"http://slow.test:{port}/"], user_agent=UA, output=tmp_path / "x.jsonl", resolve=[f"slow.test:{port}:{RobotsServer.ADDRESS}"], retries=0)
        stop.set()
        counter.join()
        assert summary["by_status"] == {"4xx": 1}
        assert len(ticks) >= 20, f"the counting thread ran {len(ticks)} times in 0.6 s"
    finally:
        slow.shutdown()
        slow.server_close()


@pytest.mark.parametrize(
    "kwargs, named",
    [
        ({"retries": -1}, "retries"),
        ({"concurrency": 0}, "concurrency"),
        ({"per_ip_connections": True}, "per_ip_connections"),
        ({"connect_timeout": -2.0}, "connect_timeout"),
        ({"total_timeout": "soon"}, "total_timeout"),
        ({"resolve": ["example.com:80"]}, "resolve"),
        ({"dns_server": "nowhere"}, "dns_server"),
        ({"allow_private": "yes"}, "allow_private"),
        ({"ca_cert": "/no/such/ca.pem"}, "ca_cert"),
        ({"hosts_file": "/no/such/hosts"}, "hosts_file"),
        ({"retry_after": 3}, "retry_after"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs, named, tmp_path):
    with pytest.raises(ValueError, match=named):
        robotsieve.fetch(["example.com"], user_agent=UA, output=tmp_path / "x.jsonl", **kwargs)
    with pytest.raises(ValueError, match=named):
        robotsieve.fetch_iter(["example.com"], user_agent=UA, **kwargs)
    assert not list(tmp_path.iterdir()), "a refused call writes nothing"


def test_bad_urls_and_user_agents_raise_value_error(tmp_path):
    with pytest.raises(ValueError, match="urls"):
        robotsieve.fetch_iter("https://example.com", user_agent=UA)
    with pytest.raises(ValueError, match="urls"):
        robotsieve.fetch_iter(["https://example.com", 7], user_agent=UA)
    with pytest.raises(ValueError, match="user_agent"):
        robotsieve.fetch_iter(["https://example.com"], user_agent=" ")


def test_the_defaults_are_the_command_lines():
    d = robotsieve.FETCH_DEFAULTS
    assert (d["concurrency"], d["per_ip_connections"], d["per_ip_interval_ms"], d["retries"]) == (256, 4, 100, 2)
    assert (d["connect_timeout"], d["response_timeout"], d["total_timeout"]) == (10.0, 15.0, 30.0)
    assert d["allow_private"] is False and d["resolve"] == []


@pytest.mark.parametrize(
    "host, domain",
    [
        ("www.example.com", "example.com"),
        ("www.bbc.co.uk", "bbc.co.uk"),
        ("co.uk", None),
        ("alice.github.io", "alice.github.io"),
        ("x.bob.github.io", "bob.github.io"),
        ("www.bücher.de", "xn--bcher-kva.de"),
        ("WWW.Example.COM.", "example.com"),
        ("www.allow.test", "allow.test"),
        ("127.0.0.1", None),
    ],
)
def test_registrable_domain_reads_the_public_suffix_list(host, domain):
    assert robotsieve.registrable_domain(host) == domain
