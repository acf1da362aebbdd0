"""A Scrapy robots.txt parser with Google's semantics.

In settings.py::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "robotsieve.scrapy.RobotParser"

Scrapy hands :meth:`RobotParser.allowed` the whole User-Agent header
(``Scrapy/2.11 (+https://scrapy.org)``) or ``ROBOTSTXT_USER_AGENT``; the
crawler is named by its product token as Google reads a ``user-agent`` line:
the leading run of letters, ``-`` and ``_`` (``Scrapy``). A string without
one (``*``, ``/1.0``) names no crawler, so only the ``*`` groups apply.
Nothing here raises on a user agent or a body: the body is read as bytes,
exactly as fetched.
"""

from __future__ import annotations

from typing import Any, Union

from . import RobotsTxt, product_token

try:
    from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
except ImportError:  # Scrapy absent: the class still works on its own.
    _ScrapyRobotParser = object  # type: ignore[assignment,misc]


def _text(value: Union[str, bytes]) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value


class RobotParser(_ScrapyRobotParser):  # type: ignore[misc,valid-type]
    """Scrapy's robots parser interface over :class:`robotsieve.RobotsTxt`."""

    def __init__(self, robotstxt_body: bytes, spider: Any = None):
        self.spider = spider
        self.rp = RobotsTxt.parse(robotstxt_body or b"")

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> "RobotParser":
        """Parses the body Scrapy downloaded (any status: see the README)."""
        return cls(robotstxt_body, None if not crawler else crawler.spider)

    @staticmethod
    def agent_tokens(user_agent: Union[str, bytes]) -> list:
        """The product tokens that name the crawler: none for a string
        without one, so that only the ``*`` groups apply."""
        token = product_token(_text(user_agent or ""))
        return [token] if token else []

    def allowed(self, url: Union[str, bytes], user_agent: Union[str, bytes]) -> bool:
        """Whether the crawler of ``user_agent`` may fetch ``url``."""
        return self.rp.can_fetch(_text(url), self.agent_tokens(user_agent))

    def crawl_delay(self, user_agent: Union[str, bytes]):
        """The crawler's group's ``crawl-delay`` in seconds, or None."""
        return self.rp.crawl_delay(self.agent_tokens(user_agent))
