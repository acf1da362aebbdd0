r"""robotsieve: robots.txt at crawl-frontier scale, from Python.

- :class:`Artifact` opens a compiled artifact (``robotsieve compile``, or
  :func:`compile`) memory-mapped and classifies Arrow arrays of URLs, zero-copy,
  into a ``pyarrow.RecordBatch`` of verdicts.
- :class:`RobotsTxt` is one robots.txt with Protego's method names and
  Google's semantics for the verdicts.
- :func:`compile` turns fetch records (dicts or an Arrow table) into an artifact.
- :func:`fetch` and :func:`fetch_iter` get robots.txt files as Google gets
  them (``robotsieve fetch``), into a file or as dicts while they complete;
  :func:`registrable_domain` reads the Public Suffix List compiled in.

Every error is a :class:`RobotsieveError` with the engine's message.

One robots.txt, asked as Google would answer:

>>> import robotsieve
>>> robots = robotsieve.RobotsTxt.parse("User-agent: *\nDisallow: /private\nAllow: /private/ok\n")
>>> robots.can_fetch("https://example.com/private/x", "mybot")
False
>>> robots.can_fetch("https://example.com/private/ok", "mybot")
True

Many origins: compile their fetch records once, then classify URLs in bulk:

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "rules.rsv")
>>> records = [
...     {"url": "https://example.com/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /private\n"},
...     {"url": "https://down.example/robots.txt", "status": 503},
... ]
>>> robotsieve.compile(records, agents=["mybot"], output=path)["origins"]
2
>>> rules = robotsieve.Artifact(path)
>>> urls = ["https://example.com/a", "https://example.com/private/x", "https://down.example/", "https://new.example/"]
>>> rules.classify(urls, agent="mybot").column("verdict").to_pylist()
['allowed', 'disallowed', 'disallowed', 'unknown']
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import os
import re
from collections import namedtuple
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

from . import _native
from ._native import AgentError, ArtifactError, CorpusError, RobotsieveError, product_token

__all__ = [
    "Artifact",
    "RobotsTxt",
    "compile",
    "product_token",
    "RobotsieveError",
    "ArtifactError",
    "AgentError",
    "CorpusError",
    "VERDICTS",
    "RequestRate",
    "VisitTime",
    "fetch",
    "fetch_iter",
    "FetchRun",
    "FETCH_DEFAULTS",
    "registrable_domain",
]

#: The verdicts, in the order of the verdict column's dictionary.
VERDICTS: List[str] = list(_native.VERDICTS)
_VERDICT_DICTIONARY = pa.array(VERDICTS, pa.string())

#: The schema of :meth:`Artifact.classify`'s batches.
SCHEMA = pa.schema(
    [
        ("verdict", pa.dictionary(pa.int8(), pa.string())),
        ("line", pa.uint32()),
        ("rule", pa.large_string()),
        ("reason", pa.large_string()),
    ]
)

UserAgents = Union[str, Sequence[str]]


def _as_arrow(urls: Any) -> Union[pa.Array, pa.ChunkedArray]:
    """Any Arrow string/binary array as it is; a list of str or bytes as one."""
    if isinstance(urls, (pa.Array, pa.ChunkedArray)):
        return urls
    if hasattr(urls, "__arrow_c_array__"):
        return pa.array(urls)
    urls = list(urls)
    if any(isinstance(u, (bytes, bytearray, memoryview)) for u in urls):
        return pa.array(
            [u.encode() if isinstance(u, str) else (None if u is None else bytes(u)) for u in urls], pa.binary()
        )
    return pa.array(urls, pa.string())


def _large_strings(length: int, buffers: tuple, type: pa.DataType = pa.large_string()) -> pa.Array:
    """A large_string (or large_binary) array of the native side's
    (validity, offsets, data) buffers."""
    validity, offsets, data = buffers
    return pa.Array.from_buffers(type, length, [pa.py_buffer(validity), pa.py_buffer(offsets), pa.py_buffer(data)])


class Artifact:
    """A compiled artifact, memory-mapped and validated lazily.

    Opening checks the header and the origin index (a truncated, foreign or
    damaged index raises :class:`ArtifactError`); each origin's rules are
    checked the first time a URL reaches them, and a damaged group raises
    :class:`ArtifactError` from ``classify``, never a wrong verdict.
    :meth:`verify` checks every byte. Lookups read only the pages the URLs'
    origins need, so one artifact serves many calls and threads.
    """

    def __init__(self, path: Union[str, os.PathLike], shard: Optional[Tuple[int, int]] = None):
        """Opens the artifact file, or the shard set directory, at ``path``.

        ``shard=(K, N)`` opens the file of shard K of an N-shard set alone,
        for a worker that holds only that shard: the file's header must say
        it is shard K of N (else :class:`ArtifactError` naming the file, the
        header's K/N and the one asked for). It answers its own origins' URLs
        exactly as the whole set does; a URL whose origin belongs to another
        shard raises :class:`ArtifactError` from ``classify``, naming the URL
        and its shard, never ``unknown``.
        """
        if shard is not None:
            k, n = shard
            if isinstance(k, bool) or isinstance(n, bool) or not (isinstance(k, int) and isinstance(n, int)):
                raise TypeError(f"shard must be a (K, N) pair of ints, not {shard!r}")
            if not 0 <= k < n <= 65536:
                raise ValueError(f"shard {k} of {n}: K must be in 0..N and N in 1..65536")
            shard = (k, n)
        self._native = _native.Artifact(os.fspath(path), shard)

    @property
    def shard(self) -> Optional[Tuple[int, int]]:
        """``(K, N)`` for a shard opened alone, else ``None``."""
        return self._native.shard

    @property
    def path(self) -> str:
        """The file it was opened from."""
        return os.fspath(self._native.path)

    @property
    def agents(self) -> List[str]:
        """The crawlers it was compiled for (``TOKEN[,TOKEN...]`` each)."""
        return self._native.agents

    @property
    def origins(self) -> int:
        """How many origins it holds."""
        return self._native.origins

    @property
    def shard_files(self) -> List[tuple]:
        """For a shard set, each file as ``(path, K, N, scheme)``, in K order,
        as the file's META describes it (``scheme`` names the shard function);
        empty for a whole artifact."""
        return [(os.fspath(p), k, n, scheme) for p, k, n, scheme in self._native.shard_files]

    @property
    def files(self) -> int:
        """How many files it was opened from: a shard set's N, 1 for one file."""
        return self._native.files

    @property
    def explains(self) -> bool:
        """Whether it keeps the rules (compiled with ``explain=True`` / ``--explain``)."""
        return self._native.explains

    def verify(self) -> None:
        """Checks every byte (every group's checksum and tables, as
        ``robotsieve inspect --verify``); raises :class:`ArtifactError` naming
        the first damage."""
        self._native.verify()

    def __repr__(self) -> str:
        return f"robotsieve.Artifact({self.path!r}, agents={self.agents}, origins={self.origins})"

    def classify(
        self,
        urls: Any,
        agent: str,
        threads: int = 1,
        raw_urls: bool = False,
        explain: bool = True,
    ) -> pa.RecordBatch:
        """The verdict of every URL, in input order, as a ``pyarrow.RecordBatch``.

        ``urls`` is any Arrow string or binary array (``string``,
        ``large_string``, ``binary``, ``large_binary``; a ChunkedArray too),
        read in place through the Arrow C data interface, or a list of
        ``str``/``bytes``. ``agent`` is one of the artifact's crawlers
        (``"mybot"`` or ``"mybot-news,mybot"``). The GIL is released while
        the engine works, on ``threads`` threads.

        Columns: ``verdict`` (dictionary: allowed, disallowed, unknown,
        invalid), ``line`` and ``rule`` (the deciding robots.txt line and
        rule; null where no rule decided or the artifact was compiled without
        explain), ``reason`` (why, as ``robotsieve filter --explain`` says it;
        null with ``explain=False``, which skips that work). A null URL is
        invalid. ``raw_urls=True`` matches paths byte for byte as Google's
        library does instead of escaping them first.
        """
        array = _as_arrow(urls)
        if isinstance(array, pa.ChunkedArray):
            batches = [self._classify_array(c, agent, threads, raw_urls, explain) for c in array.chunks]
            if not batches:
                return pa.RecordBatch.from_pylist([], schema=SCHEMA)
            return pa.Table.from_batches(batches, SCHEMA).combine_chunks().to_batches()[0]
        return self._classify_array(array, agent, threads, raw_urls, explain)

    def _classify_array(self, array: pa.Array, agent: str, threads: int, raw_urls: bool, explain: bool):
        if not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type) and not (
            pa.types.is_binary(array.type) or pa.types.is_large_binary(array.type)
        ):
            if pa.types.is_string_view(array.type):
                array = array.cast(pa.string())
            elif pa.types.is_binary_view(array.type):
                array = array.cast(pa.binary())
        schema_capsule, array_capsule = array.__arrow_c_array__()
        n, verdicts, lines, line_valid, rules, reasons = self._native.classify_arrow(
            schema_capsule, array_capsule, agent, int(threads), bool(raw_urls), bool(explain)
        )
        codes = pa.Array.from_buffers(pa.int8(), n, [None, pa.py_buffer(verdicts)])
        verdict = pa.DictionaryArray.from_arrays(codes, _VERDICT_DICTIONARY)
        line = pa.Array.from_buffers(pa.uint32(), n, [pa.py_buffer(line_valid), pa.py_buffer(lines)])
        return pa.RecordBatch.from_arrays(
            [verdict, line, _large_strings(n, rules), _large_strings(n, reasons)], schema=SCHEMA
        )


#: Protego's request rate: ``requests`` per ``seconds``, between the optional times.
RequestRate = namedtuple("RequestRate", ["requests", "seconds", "start_time", "end_time"])
#: Protego's visit time window.
VisitTime = namedtuple("VisitTime", ["start_time", "end_time"])

_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*([smhd]?)\s*(?:(\d{4})\s*-\s*(\d{4}))?", re.IGNORECASE)
_TIMES = re.compile(r"^\s*(\d{4})\s*-\s*(\d{4})")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _hhmm(text: str) -> Optional[_dt.time]:
    try:
        return _dt.time(int(text[:2]), int(text[2:]))
    except ValueError:
        return None


def _tokens(user_agent: UserAgents) -> List[str]:
    if isinstance(user_agent, str):
        return [user_agent]
    return list(user_agent)


class RobotsTxt:
    """One robots.txt body, with Protego's method names and argument order.

    Verdicts are Google's (exact product-token groups, the longest match
    wins, allow wins a tie, ``*`` and ``$`` wildcards, 500 KiB cut); where
    Protego differs, Google wins (see the README). ``user_agent`` is one
    product token or a list of the tokens of one crawler, taken as Google's
    library takes them. URLs are escaped as robotsieve escapes patterns unless
    the body was parsed with ``raw_urls=True`` (Google's byte-for-byte reading).
    """

    def __init__(self, body: Union[str, bytes], raw_urls: bool = False):
        if isinstance(body, str):
            body = body.encode("utf-8")
        self._native = _native.Robots(bytes(body), raw_urls)

    @classmethod
    def parse(cls, body: Union[str, bytes], raw_urls: bool = False) -> "RobotsTxt":
        """Parses a robots.txt body (text or the bytes as fetched)."""
        return cls(body, raw_urls)

    def can_fetch(self, url: str, user_agent: UserAgents) -> bool:
        """Whether the crawler may fetch ``url`` (an absolute URL)."""
        return self._native.decide(url, _tokens(user_agent))[0]

    def explain(self, url: str, user_agent: UserAgents) -> dict:
        """The verdict and the deciding rule: ``{"allowed", "line", "rule"}``
        (``line`` and ``rule`` are None when no rule matched)."""
        allowed, line, rule = self._native.decide(url, _tokens(user_agent))
        return {"allowed": allowed, "line": line, "rule": rule}

    def _field(self, user_agent: UserAgents, key: str) -> Optional[str]:
        """The last value of ``key`` in the crawler's group (the last wins, as in Protego)."""
        values = [value for _, name, value in self._native.other_fields(_tokens(user_agent)) if name == key]
        return values[-1] if values else None

    def crawl_delay(self, user_agent: UserAgents) -> Optional[float]:
        """The ``crawl-delay`` of the crawler's group in seconds, or None
        (Google ignores it; the group is the one whose rules decide)."""
        value = self._field(user_agent, "crawl-delay")
        try:
            return None if value is None else float(value)
        except ValueError:
            return None

    def request_rate(self, user_agent: UserAgents) -> Optional[RequestRate]:
        """The ``request-rate`` of the crawler's group (``1/10s 0800-1700``), or None."""
        value = self._field(user_agent, "request-rate")
        match = _RATE.match(value) if value is not None else None
        if not match:
            return None
        requests, per, unit, start, end = match.groups()
        seconds = int(per) * _UNIT_SECONDS[unit.lower()]
        return RequestRate(
            int(requests), seconds, _hhmm(start) if start else None, _hhmm(end) if end else None
        )

    def visit_time(self, user_agent: UserAgents) -> Optional[VisitTime]:
        """The ``visit-time`` window of the crawler's group (``0600-0845``), or None."""
        value = self._field(user_agent, "visit-time")
        match = _TIMES.match(value) if value is not None else None
        if not match:
            return None
        start, end = _hhmm(match.group(1)), _hhmm(match.group(2))
        return VisitTime(start, end) if start and end else None

    @property
    def sitemaps(self) -> List[str]:
        """Every ``sitemap`` URL of the file, in order (they belong to no group)."""
        return self._native.sitemaps()

    @property
    def preferred_host(self) -> Optional[str]:
        """The last ``host`` value of the file, as in Protego, or None (Google ignores it)."""
        hosts = self._native.unknown_fields("host")
        return hosts[-1] if hosts else None


def _record_line(record: dict, number: int) -> str:
    out = {}
    for key in ("url", "status", "location", "error"):
        value = record.get(key)
        if value is not None:
            out[key] = value
    # A body as str or bytes, or as the corpus format's ``body_b64`` (a
    # record read back from a fetch file with json.loads): the native reader
    # checks the base64 and refuses a record with both.
    body = record.get("body")
    if isinstance(body, (bytes, bytearray, memoryview)):
        body = base64.b64encode(bytes(body)).decode("ascii")
        if record.get("body_b64") is not None:
            raise CorpusError(f"records:{number}: both body and body_b64")
        out["body_b64"] = body
    elif body is not None:
        out["body"] = body
    if record.get("body_b64") is not None:
        out["body_b64"] = record["body_b64"]
    fetched_at = record.get("fetched_at")
    if isinstance(fetched_at, _dt.datetime):
        if fetched_at.tzinfo is None:
            fetched_at = fetched_at.replace(tzinfo=_dt.timezone.utc)
        fetched_at = fetched_at.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if fetched_at is not None:
        out["fetched_at"] = fetched_at
    try:
        return json.dumps(out, ensure_ascii=False)
    except (TypeError, ValueError) as e:
        raise CorpusError(f"records:{number}: not a fetch record ({e})") from None


def _memory_keyword(memory: Optional[int]) -> dict:
    """``_native.compile_jsonl``'s ``memory`` keyword for a budget of
    ``memory`` bytes (None: the native default, 1 GiB), checked here so that
    :func:`compile` and ``spark.compile_corpus`` refuse the same values with
    the same message."""
    if memory is None:
        return {}
    if not isinstance(memory, int) or isinstance(memory, bool) or memory < 1:
        raise ValueError(f"memory must be a positive number of bytes, not {memory!r}")
    return {"memory": memory}


def compile(
    records: Any,
    agents: Sequence[str],
    output: Union[str, os.PathLike],
    explain: bool = False,
    memory: Optional[int] = None,
) -> dict:
    """Compiles fetch records into an artifact at ``output`` (written under a
    temporary name and renamed into place).

    ``records`` is an iterable of dicts or an Arrow table/batch with the
    fields of ``robotsieve compile --corpus``: ``url`` (the robots.txt URL
    fetched) and ``status`` (0: no answer), optionally ``body`` (str or
    bytes) or ``body_b64`` (how a fetch file holds a body that is not
    UTF-8), ``fetched_at`` (RFC 3339 or a datetime), ``location`` and
    ``error``. Newest wins per origin and redirects are followed as the
    command line does. ``agents`` lists the crawlers (``"mybot"``,
    ``"mybot-news,mybot"``). The records are resolved as ``robotsieve
    compile --corpus`` resolves them, in bounded memory: two passes over a
    temporary copy, sorts that spill to temporary files beyond ``memory``
    bytes (default 1 GiB, as ``--memory``; it sizes the writer's tables
    too), so the artifact is byte for byte the command line's but for its
    META's list of sources. Returns ``{"origins": N, "warnings": [...],
    "spilled_runs": R}`` (the sorted runs written to temporary files).
    A bad record raises :class:`CorpusError` naming it (``records:N``).
    """
    native_memory = _memory_keyword(memory)
    if isinstance(agents, str):
        agents = [agents]
    if isinstance(records, (pa.Table, pa.RecordBatch)):
        records = records.to_pylist()
    lines = "\n".join(_record_line(r, i + 1) for i, r in enumerate(records))
    origins, warnings, spilled_runs = _native.compile_jsonl(
        lines.encode("utf-8"), list(agents), os.fspath(output), bool(explain), **native_memory
    )
    return {"origins": origins, "warnings": warnings, "spilled_runs": spilled_runs}


#: The limits :func:`fetch` and :func:`fetch_iter` take as keyword
#: arguments, with their defaults: those of ``robotsieve fetch`` (the flag is
#: ``--`` and the name with ``-`` for ``_``; seconds as numbers, lists for
#: the flags given more than once).
FETCH_DEFAULTS: dict = dict(_native.fetch_defaults())


def _fetch_lines(urls: Iterable[str]) -> List[str]:
    """The input lines, checked: an iterable of strings, not one string."""
    if isinstance(urls, (str, bytes)):
        raise ValueError("urls must be an iterable of lines (origins, robots.txt URLs or hosts), not one string")
    lines = list(urls)
    for number, line in enumerate(lines, 1):
        if not isinstance(line, str):
            raise ValueError(f"urls: item {number} is {type(line).__name__}, not a string")
    return lines


def fetch(urls: Iterable[str], *, user_agent: str, output: Union[str, os.PathLike], **limits: Any) -> dict:
    """Fetches the robots.txt of each origin in ``urls`` as Google does and
    writes the fetch records to ``output``, as ``robotsieve fetch --urls ...
    -o OUTPUT`` does: JSON Lines (``.gz`` or ``.zst`` by the name), written to
    ``OUTPUT.partial`` as fetches complete and renamed when the run ends, in
    the corpus format :func:`compile` and ``robotsieve compile --corpus``
    read.

    ``urls`` holds lines as ``--urls`` reads them: origins
    (``https://example.com``), robots.txt URLs, or bare hosts (both
    schemes); a line that names no origin gets a status-0 record. ``limits``
    are the command line's flags as keywords, with its defaults
    (:data:`FETCH_DEFAULTS`): ``concurrency``, ``per_ip_connections``,
    ``per_ip_interval_ms``, ``max_waiting``, ``connect_timeout``,
    ``response_timeout``, ``total_timeout``, ``retries``,
    ``retry_backoff``, ``retry_wait_cap``, ``ca_cert``, ``resolve``
    (``["HOST:PORT:ADDR", ...]`` as curl spells it), ``hosts_file``,
    ``dns_server`` (``"ADDR:PORT"``), ``dns_timeout``, ``allow_private``.
    A bad argument raises ``ValueError`` naming it.

    The GIL is released while fetching (other threads run); the call
    returns when every origin is fetched, with the run's summary, the dict
    ``--stats`` writes. Unlike the command line it watches no signals: a
    Ctrl-C is seen when the call returns.

    >>> import os, tempfile, robotsieve
    >>> out = os.path.join(tempfile.mkdtemp(), "fetched.jsonl")
    >>> summary = robotsieve.fetch(["not an origin"], user_agent="mybot/1.0", output=out)
    >>> summary["bad_lines"], summary["records"], summary["by_status"]
    (1, 1, {'0': 1})
    >>> robotsieve.fetch(["example.com"], user_agent="mybot/1.0", output=out, retries=-1)
    Traceback (most recent call last):
    ...
    ValueError: retries must be a whole number of at least 0, not -1
    """
    lines = _fetch_lines(urls)
    return json.loads(_native.fetch_to_file(lines, user_agent, os.fspath(output), limits))


class FetchRun:
    """The records of a :func:`fetch_iter` run, as dicts, in the order the
    fetches complete; :attr:`summary` once all have been read. Dropping the
    iterator early stops the run."""

    def __init__(self, native: Any):
        self._native = native

    def __iter__(self) -> "FetchRun":
        return self

    def __next__(self) -> dict:
        record = self._native.__next__()
        if record is None:
            raise StopIteration
        return record

    @property
    def summary(self) -> Optional[dict]:
        """The run's summary (as :func:`fetch` returns it) once every
        record has been read, else None."""
        text = self._native.summary_json
        return None if text is None else json.loads(text)


def fetch_iter(urls: Iterable[str], *, user_agent: str, **limits: Any) -> FetchRun:
    """Fetches as :func:`fetch` does (the same lines, limits and records),
    yielding each record as a dict as its fetch completes, in no particular
    order: a redirect chain's hops together and in order. The fetch runs on
    a thread of its own with the GIL released; waiting for the next record
    releases it too (and a Ctrl-C raises ``KeyboardInterrupt`` there).

    A record dict has every field of a record line (``url``, ``status``,
    ``body``, ``truncated``, ``fetched_at``, ``location``, ``error``,
    ``max_age``, ``retry_after``, ``attempts``, ``elapsed_ms``,
    ``ftp_reply``), ``None`` where the line leaves one out, and ``body`` as
    the bytes fetched (at most 512,000). A list of them is what
    :func:`compile` takes.

    >>> import robotsieve
    >>> run = robotsieve.fetch_iter(["not an origin"], user_agent="mybot/1.0")
    >>> [(r["url"], r["status"], r["error"].split(":")[0]) for r in run]
    [('not an origin', 0, 'protocol')]
    >>> run.summary["bad_lines"]
    1
    """
    lines = _fetch_lines(urls)
    return FetchRun(_native.fetch_iter(lines, user_agent, limits))


def registrable_domain(host: str) -> Optional[str]:
    """The registrable domain of ``host`` by the Public Suffix List compiled
    into robotsieve: a public suffix and one label more. The host is read as
    URLs read it (case folded, IDN in punycode); ``None`` for an IP address
    or a public suffix itself.

    >>> import robotsieve
    >>> robotsieve.registrable_domain("www.Example.co.uk")
    'example.co.uk'
    >>> robotsieve.registrable_domain("alice.github.io")
    'alice.github.io'
    >>> robotsieve.registrable_domain("www.bücher.de")
    'xn--bcher-kva.de'
    >>> print(robotsieve.registrable_domain("co.uk"))
    None
    """
    return _native.registrable_domain(host)
