"""What the tests share: the conformance cases of ../shared, read as
testkit/src/conformance.rs reads them."""

import base64
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_dir():
    """``$ROBOTSIEVE_SHARED`` or ``../shared`` beside the repository; under
    CI=true its absence fails the run instead of skipping."""
    env = os.environ.get("ROBOTSIEVE_SHARED")
    candidate = Path(env) if env else REPO.parent / "shared"
    if candidate.is_dir():
        return candidate
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the shared folder {candidate} is absent")
    pytest.skip(f"skipped: the shared folder {candidate} is absent")


def conformance_lines(name):
    path = shared_dir() / "conformance" / name
    if not path.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {path} is absent")
        pytest.skip(f"skipped: {path} is absent")
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert cases, f"{path} has no cases"
    return cases


def verdict_cases(name):
    """The verdict cases of robots.jsonl or google-spec-test.jsonl: the body
    as bytes, and ``allowed_escaped`` defaulting to ``allowed``."""
    cases = []
    for raw in conformance_lines(name):
        if "robots" in raw:
            body = raw["robots"].encode("utf-8")
        elif "robots_b64" in raw:
            body = base64.b64decode(raw["robots_b64"])
        else:
            g = raw["robots_gen"]
            body = (g["head"] + g["repeat"] * g["times"] + g["tail"]).encode("utf-8")
        cases.append(
            {
                "id": raw["id"],
                "body": body,
                "agents": raw["agents"],
                "url": raw["url"],
                "allowed": raw["allowed"],
                "allowed_escaped": raw.get("allowed_escaped", raw["allowed"]),
            }
        )
    return cases


class RobotsServer:
    """A real HTTP server on a loopback address, in a thread, serving
    virtual hosts by their ``Host`` header; the fetcher reaches them through
    ``resolve`` entries (trusted addresses). ``hits`` counts requests per
    host and path."""

    ADDRESS = "127.77.0.1"

    #: host -> path -> (status, headers, body)
    SITES = {
        "allow.test": {"/robots.txt": (200, {}, "User-agent: *\nDisallow: /private\n")},
        "www.allow.test": {"/robots.txt": (200, {}, "User-agent: mybot\nDisallow: /\n")},
        "missing.test": {"/robots.txt": (404, {}, "not here")},
        "down.test": {"/robots.txt": (503, {}, "busy")},
        "moved.test": {
            "/robots.txt": (301, {"Location": "/robots-real.txt"}, ""),
            "/robots-real.txt": (200, {}, "User-agent: *\nDisallow: /secret\n"),
        },
    }

    def __init__(self):
        import collections
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        server = self
        self.hits = collections.Counter()
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
                with server.lock:
                    server.hits[(host, self.path)] += 1
                status, headers, body = server.SITES.get(host, {}).get(self.path, (404, {}, "no such page"))
                data = body.encode("utf-8")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer((self.ADDRESS, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def origin(self, host):
        return f"http://{host}:{self.port}/"

    def resolve(self):
        """The ``resolve`` entries that send every virtual host here."""
        return [f"{host}:{self.port}:{self.ADDRESS}" for host in self.SITES]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def robots_server():
    server = RobotsServer()
    yield server
    server.close()
