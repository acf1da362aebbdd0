"""A real Scrapy crawl of a site on 127.0.0.1 with robotsieve as the robots.txt
parser: the server's log must show every allowed page and no disallowed one."""

import http.server
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from robotsieve.scrapy import RobotParser

# `*` disallows everything: the crawl reaches any page only if Scrapy's
# User-Agent header is reduced to the token `Scrapy` of the specific group.
ROBOTS = b"""User-agent: *
Disallow: /

User-agent: scrapy
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$
"""
ALLOWED = ["/", "/a", "/b", "/private/open", "/private/open/deeper", "/doc.pdf.html"]
DISALLOWED = ["/private", "/private/x", "/private/y/z", "/doc.pdf", "/a/doc.pdf"]


def page(links):
    return ("<html><body>" + "".join(f'<a href="{l}">{l}</a>' for l in links) + "</body></html>").encode()


class Site(http.server.BaseHTTPRequestHandler):
    requested = []

    def do_GET(self):
        Site.requested.append(self.path)
        if self.path == "/robots.txt":
            body, kind = ROBOTS, "text/plain"
        elif self.path == "/":
            body, kind = page(ALLOWED[1:] + DISALLOWED), "text/html"
        elif self.path in ALLOWED or self.path in DISALLOWED:
            # Every page links to every other, disallowed ones included.
            body, kind = page(ALLOWED + DISALLOWED), "text/html"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


SPIDER = textwrap.dedent(
    """
    import scrapy

    class Site(scrapy.Spider):
        name = "site"

        def __init__(self, start, **kw):
            super().__init__(**kw)
            self.start_urls = [start]

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)
    """
)


def test_a_scrapy_crawl_requests_exactly_the_allowed_pages(tmp_path):
    pytest.importorskip("scrapy")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Site.requested = []
    try:
        (tmp_path / "spider.py").write_text(SPIDER)
        start = f"http://127.0.0.1:{server.server_port}/"
        run = subprocess.run(
            [sys.executable, "-m", "scrapy", "runspider", "spider.py", "-a", f"start={start}",
             "-s", "ROBOTSTXT_OBEY=True", "-s", "ROBOTSTXT_PARSER=robotsieve.scrapy.RobotParser",
             "-s", "USER_AGENT=Scrapy/2.11 (+https://scrapy.org)", "-s", "CLOSESPIDER_TIMEOUT=60",
             "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ},
        )
    finally:
        server.shutdown()
    assert run.returncode == 0, run.stderr[-3000:]
    requested = Site.requested
    assert requested[0] == "/robots.txt", requested
    assert requested.count("/robots.txt") == 1
    assert not set(DISALLOWED) & set(requested), f"disallowed pages were fetched: {requested}"
    assert set(ALLOWED) <= set(requested), f"allowed pages were not fetched: {requested}"
    assert "'robotstxt/forbidden'" in run.stderr, "Scrapy refused the disallowed links through the parser"


def test_user_agents_never_raise():
    rp = RobotParser.from_crawler(None, ROBOTS)
    assert rp.allowed("http://h/a", "Scrapy/2.11 (+https://scrapy.org)")
    assert rp.allowed(b"http://h/a", b"scrapy")
    assert not rp.allowed("http://h/private/x", "Scrapy/2.11")
    for odd in ["", "*", "/1.0", "  Scrapy", "Mozilla/5.0 (compatible; scrapy)", "\x00", "ünï"]:
        rp.allowed("http://h/a", odd)  # the * group or the token's: never an exception
    assert not rp.allowed("http://h/a", "*"), "no token: the * group, which disallows everything"
    assert RobotParser.from_crawler(None, b"\xff\xfe garbage").allowed("http://h/a", "x")
    assert RobotParser.from_crawler(None, b"").allowed("http://h/a", "x")
