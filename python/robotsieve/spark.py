"""robotsieve on Spark: filter a frontier DataFrame with a compiled artifact
or shard set, list the origins it does not know, and compile a DataFrame of
robots.txt fetches into a shard set.

:func:`filter_frontier` with a shard set partitions the frontier as the set
is partitioned: each URL gets its shard (the engine's function, in
``mapInArrow``), partition K holds shard K's URLs (a shard with more than
``urls_per_task`` URLs splits over several partitions, sorted ranges of its
origins), each partition is sorted by origin, and each task opens only its
shard. The rules may be a local path on the driver, shipped to every
executor with ``SparkContext.addFile`` as they are, or any URI that
``pyarrow.fs`` opens (``file://``, ``hdfs://``, ``s3://``, ``gs://``): then
each executor copies, once, only the files its tasks need, into a cache
under its scratch directory (:mod:`robotsieve._cache`). Each Python worker
process opens (maps) a file once and classifies every later batch with it;
batches move as Arrow (no per-row Python).

:func:`compile_corpus` resolves newest-record-wins and redirects in Spark (a
window per fetched URL, then one join per redirect hop on the redirect
target), partitions the records by the engine's shard function and runs one
task per shard, which compiles shard K of N with the engine's own corpus
rules (``robotsieve compile --corpus ... --shard K/N``).

:func:`fetch_robots` fetches a DataFrame of origins into a DataFrame of
fetch records (the columns :func:`compile_corpus` takes), one fetcher per
task, the origins of one site (registrable domain) in one task.

Executors must run a Python that has robotsieve installed
(``PYSPARK_PYTHON``, or ``spark.pyspark.python``).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import robotsieve
from robotsieve import _native
from robotsieve import _memory_keyword, _record_line, _large_strings
from robotsieve._cache import DEFAULT_CACHE_BYTES, EVENT_LOG_VARIABLE, local_copy, note, open_shard
from robotsieve._store import Rules, filesystem_of, is_uri, join, list_names, open_rules, upload

#: The event log's environment variable (see :mod:`robotsieve._cache`):
#: executors append their opens, copies and tasks to the file it names.
OPEN_LOG_VARIABLE = EVENT_LOG_VARIABLE

#: A task classifies at most about this many URLs by default: a shard with
#: more splits over several partitions by sorted ranges of its origins.
DEFAULT_URLS_PER_TASK = 4_000_000

#: Sampled URLs per partition of a shard that splits, to place the ranges.
SAMPLES_PER_PART = 200

#: The columns the job adds while it moves rows (dropped from the result).
_ROW, _SHARD, _ORIGIN, _PART = "_robotsieve_row", "_robotsieve_shard", "_robotsieve_origin", "_robotsieve_part"

_VERDICT_DICTIONARY = pa.array(robotsieve.VERDICTS, pa.string())
_INVALID = robotsieve.VERDICTS.index("invalid")


def _add_file(spark_context, path: str) -> None:
    try:
        spark_context.addFile(path)
    except Exception as e:  # the same path added twice in one context
        if "already" not in str(e).lower():
            raise


def _ship(spark_context, rules: Rules) -> Tuple[str, ...]:
    """Adds the files of rules at a local path to the files every executor
    fetches; returns their names there, in shard order. The names are
    unique to the contents (hard links in a driver-side temporary folder:
    Spark names a symbolic link by its target; a copy where no hard link
    can be made), so two sets never meet under one name."""
    import shutil

    links = os.path.join(tempfile.gettempdir(), "robotsieve-ship")
    os.makedirs(links, exist_ok=True)
    shipped = []
    for file in rules.files:
        link = os.path.join(links, f"rs{file.digest[:16]}-{file.name}")
        if not os.path.exists(link):
            try:
                os.link(file.path, link)
            except OSError:  # another filesystem
                shutil.copyfile(file.path, link + ".part")
                os.replace(link + ".part", link)
        _add_file(spark_context, link)
        shipped.append(os.path.basename(link))
    return tuple(shipped)


@dataclass(frozen=True)
class _Source:
    """Where executors find the rules' files: shipped with ``addFile``
    (``shipped`` names them) or copied from the store into the cache."""

    rules: Rules
    shipped: Optional[Tuple[str, ...]]
    cache_bytes: int

    def artifact(self, index: int) -> robotsieve.Artifact:
        """The file of shard ``index`` (0 for a whole artifact), opened in this worker."""
        file = self.rules.files[index]
        if self.shipped is not None:
            from pyspark import SparkFiles

            path = SparkFiles.get(self.shipped[index])
        else:
            path = local_copy(self.rules, file, self.cache_bytes)
        return open_shard(path, file, self.rules.is_set)


def _source(spark_context, rules, agent: str, cache_bytes: int) -> _Source:
    """The rules checked on the driver and made reachable from the executors."""
    location = os.fspath(rules)
    checked = open_rules(location, agent)
    shipped = None if is_uri(location) else _ship(spark_context, checked)
    return _Source(checked, shipped, cache_bytes)


def _url_array(column) -> pa.Array:
    """A URL column as one Arrow array the engine reads."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_string_view(column.type):
        column = column.cast(pa.string())
    elif pa.types.is_binary_view(column.type):
        column = column.cast(pa.binary())
    return column


def frontier_keys(urls, shards: int) -> Tuple[np.ndarray, pa.Array]:
    """The shard (0..shards-1) of each URL's origin, ``-1`` for a null or a
    line that is no URL (the classifier's invalid), and the origin's key
    (``scheme://host[:port]``, binary; null where the shard is -1), for an
    Arrow string or binary array, computed by the engine in one call."""
    array = _url_array(urls)
    schema_capsule, array_capsule = array.__arrow_c_array__()
    n, shard, keys = _native.frontier_keys(schema_capsule, array_capsule, shards)
    origin = _large_strings(n, keys, pa.large_binary())
    return np.frombuffer(shard, dtype="<i4"), origin


@dataclass
class _TaskTally:
    """What one task did, for the event log: the shards it asked, how many
    URLs, and the CPU seconds of its thread inside ``Artifact.classify``."""

    shards: set
    urls: int = 0
    classify_seconds: float = 0.0


def _verdicts(source: _Source, urls, shard: np.ndarray, agent: str, raw_urls: bool, tally: _TaskTally) -> pa.Array:
    """The verdict of each URL (text), each asked of the file of its shard;
    ``-1`` rows are invalid without asking."""
    urls = _url_array(urls)
    codes = np.full(len(shard), _INVALID, np.int8)
    tally.urls += len(shard)
    for k in np.unique(shard[shard >= 0]):
        rows = np.flatnonzero(shard == k)
        part = urls if len(rows) == len(urls) else urls.take(pa.array(rows))
        artifact = source.artifact(int(k))
        tally.shards.add(int(k))
        started = time.thread_time()
        result = artifact.classify(part, agent=agent, raw_urls=raw_urls, explain=False)
        tally.classify_seconds += time.thread_time() - started
        codes[rows] = result.column("verdict").indices.to_numpy(zero_copy_only=False)
    return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int8()), _VERDICT_DICTIONARY).cast(pa.string())


def _classifier(source: _Source, url_col: str, agent: str, raw_urls: bool, names: List[str], keep_origin: bool):
    """The ``mapInArrow`` function that appends the verdict column to each
    batch (and the origin key, for :func:`unknown_origins`): batches that
    carry their shards (after the shuffle) are classified by them, others
    have theirs computed here."""
    shards = source.rules.shards

    def classify(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        tally = _TaskTally(set())
        for batch in batches:
            urls = batch.column(url_col)
            if _SHARD in batch.schema.names:
                shard = batch.column(_SHARD).to_numpy(zero_copy_only=False)
                origin = batch.column(_ORIGIN)
            else:
                shard, origin = frontier_keys(urls, shards)
            out = [batch.column(name) for name in names]
            out.append(_verdicts(source, urls, shard, agent, raw_urls, tally))
            if keep_origin:
                out.append(origin.cast(pa.binary()))
            yield pa.RecordBatch.from_arrays(out, names=names + ["verdict"] + ([_ORIGIN] if keep_origin else []))
        note("task", shards=sorted(tally.shards), urls=tally.urls, classify_seconds=tally.classify_seconds)

    return classify


def _shard_counts(df, url_col: str, shards: int) -> Dict[int, int]:
    """How many URLs of ``df`` each shard has (-1: lines that are no URL)."""
    from pyspark.sql import functions as F

    def count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            shard, _ = frontier_keys(batch.column(0), shards)
            counts = np.bincount(shard + 1, minlength=shards + 1)
            present = np.flatnonzero(counts)
            yield pa.RecordBatch.from_arrays(
                [pa.array(present - 1, pa.int32()), pa.array(counts[present], pa.int64())], names=["shard", "urls"]
            )

    counted = df.select(url_col).mapInArrow(count, "shard int, urls long")
    return {r["shard"]: r["urls"] for r in counted.groupBy("shard").agg(F.sum("urls").alias("urls")).collect()}


def _split_points(rowed, url_col: str, shards: int, parts: Dict[int, int], counts: Dict[int, int]):
    """For each shard that splits into ``parts[k]`` partitions: the sorted
    (origin key, row id) points that begin its partitions after the first,
    the quantiles of a sample of its URLs in that order."""
    if not parts:
        return {}
    fraction = np.zeros(shards)
    for k, n in parts.items():
        fraction[k] = min(1.0, SAMPLES_PER_PART * n / counts[k])

    def sample(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        rng = np.random.default_rng(context.partitionId() if context else 0)
        for batch in batches:
            shard, origin = frontier_keys(batch.column(url_col), shards)
            chance = np.where(shard >= 0, fraction[np.maximum(shard, 0)], 0.0)
            picked = pa.array(np.flatnonzero(rng.random(len(shard)) < chance), pa.int64())
            yield pa.RecordBatch.from_arrays(
                [pa.array(shard, pa.int32()).take(picked), origin.take(picked).cast(pa.binary()),
                 batch.column(_ROW).take(picked)],
                names=["shard", "origin", "row"],
            )

    drawn: Dict[int, list] = {}
    for r in rowed.select(url_col, _ROW).mapInArrow(sample, "shard int, origin binary, row long").collect():
        drawn.setdefault(r["shard"], []).append((bytes(r["origin"]), r["row"]))
    points = {}
    for k, n in parts.items():
        keys = sorted(drawn.get(k, []))
        chosen = sorted({keys[len(keys) * i // n] for i in range(1, n)}) if keys else []
        if chosen:
            points[k] = chosen
    return points


def _partition_values(spark, partitions: int) -> np.ndarray:
    """``values[p]``: a long that Spark's hash partitioning into
    ``partitions`` sends to partition p (``pmod(hash(v), P) == p``, found by
    Spark's own hash function), so that ``repartition(P, column)`` on a
    column of these values puts each row in the partition chosen for it."""
    from pyspark.sql import functions as F

    candidates = max(64, 8 * partitions)
    while True:
        rows = (
            spark.range(candidates)
            .select(F.expr(f"pmod(hash(id), {partitions})").alias("p"), "id")
            .groupBy("p")
            .agg(F.min("id").alias("v"))
            .collect()
        )
        if len(rows) == partitions:
            values = np.zeros(partitions, np.int64)
            for r in rows:
                values[r["p"]] = r["v"]
            return values
        candidates *= 4


def _routed(df, url_col: str, shards: int, urls_per_task: int):
    """``df`` with each row's shard and origin key, shuffled so that each
    partition holds the URLs of one shard (a shard of more than
    ``urls_per_task`` URLs over several, by sorted ranges of (origin, row
    id)) and sorted within it by (origin key, row id). Lines that are no URL
    are spread over the partitions by row id."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    rowed = df.withColumn(_ROW, F.monotonically_increasing_id())
    counts = _shard_counts(df, url_col, shards)
    parts = {k: max(1, math.ceil(n / urls_per_task)) for k, n in counts.items() if k >= 0 and n > 0}
    points = _split_points(rowed, url_col, shards, {k: n for k, n in parts.items() if n > 1}, counts)
    first = np.full(shards, -1, np.int64)
    total = 0
    for k in sorted(parts):
        first[k] = total
        total += len(points.get(k, ())) + 1
    total = max(total, 1)
    # A shard that had no URL when counted (a frontier that is not read the
    # same way twice) still gets a partition: correct, if not alone in it.
    unplanned = first < 0
    first[unplanned] = np.flatnonzero(unplanned) % total
    values = _partition_values(df.sparkSession, total)
    extra = [StructField(_SHARD, IntegerType()), StructField(_ORIGIN, BinaryType()), StructField(_PART, LongType())]
    schema = StructType(rowed.schema.fields + extra)

    def route(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            shard, origin = frontier_keys(batch.column(url_col), shards)
            row = batch.column(_ROW).to_numpy(zero_copy_only=False)
            part = np.where(shard >= 0, first[np.maximum(shard, 0)], row % total)
            for k, starts in points.items():
                mine = np.flatnonzero(shard == k)
                if not len(mine):
                    continue
                keys, rows = origin.take(pa.array(mine)), row[mine]
                for key, start in starts:
                    at = pa.scalar(key, pa.large_binary())
                    after = pc.greater(keys, at).to_numpy(zero_copy_only=False)
                    same = pc.equal(keys, at).to_numpy(zero_copy_only=False)
                    part[mine] += after | (same & (rows >= start))
            columns = list(batch.columns) + [
                pa.array(shard, pa.int32()),
                origin.cast(pa.binary()),
                pa.array(values[part], pa.int64()),
            ]
            yield pa.RecordBatch.from_arrays(columns, names=batch.schema.names + [_SHARD, _ORIGIN, _PART])

    routed = rowed.mapInArrow(route, schema)
    return routed.repartition(total, _PART).sortWithinPartitions(_ORIGIN, _ROW)


def _classified(df, url_col, source: _Source, agent, raw_urls, column, preserve_order, urls_per_task, keep_origin):
    from pyspark.sql.types import BinaryType, StringType, StructField, StructType

    if column in df.columns:
        raise ValueError(f"the DataFrame already has a column {column!r}")
    taken = [c for c in df.columns if c.startswith("_robotsieve_")]
    if taken:
        raise ValueError(f"the DataFrame has a column {taken[0]!r}: names starting _robotsieve_ are the job's")
    if url_col not in df.columns:
        raise ValueError(f"the DataFrame has no column {url_col!r} (columns: {', '.join(df.columns)})")
    if not isinstance(urls_per_task, int) or isinstance(urls_per_task, bool) or urls_per_task < 1:
        raise ValueError(f"urls_per_task must be a positive whole number, not {urls_per_task!r}")
    names = list(df.columns)
    fields = df.schema.fields + [StructField(column, StringType(), True)]
    if keep_origin:
        fields.append(StructField(_ORIGIN, BinaryType(), True))
    rows = df if preserve_order or not source.rules.is_set else _routed(df, url_col, source.rules.shards, urls_per_task)
    classify = _classifier(source, url_col, agent, raw_urls, names, keep_origin)
    out = rows.mapInArrow(classify, StructType(fields))
    return out if column == "verdict" else out.withColumnRenamed("verdict", column)


def filter_frontier(
    df,
    url_col: str,
    rules: Union[str, os.PathLike],
    agent: str,
    raw_urls: bool = False,
    column: str = "verdict",
    preserve_order: bool = False,
    urls_per_task: int = DEFAULT_URLS_PER_TASK,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
):
    """``df`` with a ``verdict`` column (allowed, disallowed, unknown or
    invalid) for the URLs in ``url_col``, as ``robotsieve filter`` decides
    them with the artifact or shard set ``rules`` for ``agent``.

    ``rules`` is a local path on the driver (shipped whole to every
    executor) or a URI that ``pyarrow.fs`` opens (``file://``, ``hdfs://``,
    ``s3://``, ``gs://``), from which each executor copies only the files
    its tasks need, once, into a cache of at most ``cache_bytes`` under its
    scratch directory. The files are checked on the driver first (headers,
    the set complete, the agent), so that a damaged file or an agent they
    were not compiled for fails here, not in a task.

    For a shard set the rows are shuffled so that each task holds the URLs
    of one shard (at most about ``urls_per_task`` of them: a bigger shard
    splits by sorted ranges of its origins), sorted by origin, and opens that
    shard alone; the result's row order is Spark's, as after any shuffle,
    and every row, a line that is no URL (``invalid``) too, is there once.
    ``preserve_order=True`` keeps the rows where they are (no shuffle):
    each task opens every shard its rows need.
    """
    session = df.sparkSession
    source = _source(session.sparkContext, rules, agent, cache_bytes)
    return _classified(df, url_col, source, agent, raw_urls, column, preserve_order, urls_per_task, False)


def unknown_origins(
    df,
    url_col: str,
    rules: Union[str, os.PathLike],
    urls_per_task: int = DEFAULT_URLS_PER_TASK,
    cache_bytes: int = DEFAULT_CACHE_BYTES,
):
    """The robots.txt URLs to fetch next: one row (column ``robots_url``,
    ``scheme://host[:port]/robots.txt``) for each origin of the URLs in
    ``url_col`` that ``rules`` does not hold, once each, as ``robotsieve
    filter --unknown-origins`` lists them (in no particular order). ``rules``
    is read as :func:`filter_frontier` reads it."""
    from pyspark.sql import functions as F

    source = _source(df.sparkSession.sparkContext, rules, None, cache_bytes)
    if not source.rules.agents:
        raise robotsieve.ArtifactError(f"{source.rules.location}: compiled for no agent")
    agent = source.rules.agents[0]  # whether an origin is known does not depend on the agent
    verdicts = _classified(df.select(url_col), url_col, source, agent, False, "verdict", False, urls_per_task, True)
    robots = F.concat(F.col(_ORIGIN).cast("string"), F.lit("/robots.txt")).alias("robots_url")
    return verdicts.where(F.col("verdict") == "unknown").select(robots).distinct()


def verdict_counts(df, column: str = "verdict") -> Tuple[Tuple[str, int], ...]:
    """The number of rows per verdict, for reports."""
    return tuple(sorted((r[column], r["count"]) for r in df.groupBy(column).count().collect()))


#: The columns of a fetch record (``robotsieve compile --corpus``'s fields);
#: ``url`` and ``status`` are required, the others optional.
FETCH_COLUMNS = ("url", "status", "body", "fetched_at", "location", "error")


def shard_of_url(url: str, shards: int) -> int:
    """The shard (0..shards-1) of the origin of ``url`` (any URL of it): the
    engine's shard function, as ``robotsieve shard-of`` prints it; use it to
    partition a frontier as a shard set is partitioned."""
    return _native.shard_of_url(url, shards)


def shard_file_name(index: int, shards: int) -> str:
    """The file name of shard ``index`` of ``shards`` in a shard set's directory."""
    return _native.shard_file_name(index, shards)


def _utc_text(micros: Optional[int]) -> Optional[str]:
    """A Spark timestamp (microseconds since the epoch) in RFC 3339, UTC."""
    if micros is None:
        return None
    seconds, fraction = divmod(micros, 1_000_000)
    moment = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction:06d}Z"


def _fetch_columns(df):
    """The fetch columns of ``df``, typed as the resolution needs them:
    ``fetched_at`` as text (a timestamp column as microseconds, turned into
    RFC 3339 text by :func:`_keyed`) and absent optional columns as nulls."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampNTZType, TimestampType

    missing = [c for c in ("url", "status") if c not in df.columns]
    if missing:
        raise ValueError(f"the fetch records have no column {missing[0]!r} (columns: {', '.join(df.columns)})")
    types = {f.name: f.dataType for f in df.schema.fields}
    body = F.col("body") if "body" in df.columns else F.lit(None).cast("string")
    if "fetched_at" not in df.columns:
        fetched = F.lit(None).cast("string")
        micros = F.lit(None).cast("long")
    elif isinstance(types["fetched_at"], TimestampNTZType):
        raise ValueError("fetched_at is a timestamp without a time zone: give it as TIMESTAMP or RFC 3339 text")
    elif isinstance(types["fetched_at"], TimestampType):
        fetched = F.lit(None).cast("string")
        micros = F.unix_micros(F.col("fetched_at"))
    else:
        fetched = F.col("fetched_at").cast("string")
        micros = F.lit(None).cast("long")
    text = lambda name: F.col(name).cast("string") if name in df.columns else F.lit(None).cast("string")  # noqa: E731
    return df.select(
        F.col("url").cast("string").alias("url"),
        F.col("status").cast("long").alias("status"),
        body.alias("body"),
        fetched.alias("fetched_at"),
        micros.alias("_micros"),
        text("location").alias("location"),
        text("error").alias("error"),
    ).withColumn("_seq", F.monotonically_increasing_id())


def _keyed(records, shards: int):
    """``records`` with what the resolution joins and orders on, computed by
    the engine (``fetch_keys``): ``_key`` (the URL as redirects find it),
    ``_shard`` (the shard of the origin whose /robots.txt it is), ``_target``
    (a redirect's target key) and the fetch time (``_sec``, ``_nano``)."""
    from pyspark.sql.types import BinaryType, IntegerType, LongType, StructField, StructType

    fields = [f for f in records.schema.fields if f.name != "_micros"]
    schema = StructType(
        fields
        + [
            StructField("_key", BinaryType(), True),
            StructField("_shard", IntegerType(), True),
            StructField("_target", BinaryType(), True),
            StructField("_sec", LongType(), True),
            StructField("_nano", IntegerType(), True),
        ]
    )
    names = [f.name for f in fields]

    def keys(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            columns = {name: batch.column(name) for name in batch.schema.names}
            micros = columns["_micros"].to_pylist()
            given = columns["fetched_at"].to_pylist()
            fetched = [t if t is not None else _utc_text(m) for t, m in zip(given, micros)]
            key, shard, target, sec, nano = _native.fetch_keys(
                columns["url"].to_pylist(),
                columns["status"].to_pylist(),
                columns["location"].to_pylist(),
                fetched,
                shards,
            )
            columns["fetched_at"] = pa.array(fetched, pa.string())
            out = [columns[name] for name in names] + [
                pa.array(key, pa.binary()),
                pa.array(shard, pa.int32()),
                pa.array(target, pa.binary()),
                pa.array(sec, pa.int64()),
                pa.array(nano, pa.int32()),
            ]
            yield pa.RecordBatch.from_arrays(out, names=names + ["_key", "_shard", "_target", "_sec", "_nano"])

    return records.mapInArrow(keys, schema)


def _assign(keyed, cached: list):
    """(``shard``, ``_seq``): every record each shard needs to resolve its
    origins as ``Corpus::resolve`` does. Those are all the /robots.txt
    records of its origins (the 30-day rule looks past the newest), and, for
    each redirect among them, the newest record of each URL on the chain, up
    to ``MAX_REDIRECTS`` hops: one join per hop on the redirect target, until
    no chain goes on. The frames it persists are appended to ``cached``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def keep(df):
        cached.append(df.persist())
        return df

    light = keyed.select("_seq", "_key", "_shard", "_target", "_sec", "_nano")
    # Newest wins: the latest fetch time (undated records are older than any
    # dated one), ties to the record read last.
    order = Window.partitionBy("_key").orderBy(
        F.col("_sec").desc_nulls_last(), F.col("_nano").desc_nulls_last(), F.col("_seq").desc()
    )
    newest = keep(
        light.where(F.col("_key").isNotNull())
        .withColumn("_rank", F.row_number().over(order))
        .where(F.col("_rank") == 1)
        .select(F.col("_key").alias("target"), "_seq", F.col("_target").alias("next"))
    )
    roots = light.where(F.col("_shard").isNotNull()).select(F.col("_shard").alias("shard"), "_seq", "_target")
    needed = roots.select("shard", "_seq")
    frontier = keep(
        roots.where(F.col("_target").isNotNull()).select("shard", F.col("_target").alias("target")).distinct()
    )
    for _ in range(_native.MAX_REDIRECTS):
        if frontier.isEmpty():
            break
        hop = keep(frontier.join(newest, "target"))
        needed = needed.union(hop.select("shard", "_seq"))
        frontier = keep(hop.where(F.col("next").isNotNull()).select("shard", F.col("next").alias("target")).distinct())
    return needed.distinct()


_RECORD_PLACE = re.compile(r"^records:(\d+): ")


def _compile_shard(
    rows: List[Any], agents: List[str], path: str, explain: bool, index: int, shards: int, native_memory: dict
):
    """Compiles shard ``index`` of ``shards`` from its records (in the order
    the DataFrame holds them, which decides ties as the command line's input
    order does) into ``path``, resolving them within the budget of
    ``native_memory`` (:func:`robotsieve._memory_keyword`); returns the origins, the warnings and the sorted
    runs spilled. A bad record's error names its URL."""
    rows = sorted(rows, key=lambda r: r["_seq"])
    records = [{name: row[name] for name in FETCH_COLUMNS} for row in rows]
    lines = "\n".join(_record_line(r, i + 1) for i, r in enumerate(records))
    try:
        origins, warnings, spilled_runs = _native.compile_jsonl(
            lines.encode("utf-8"), agents, path, explain, (index, shards), **native_memory
        )
    except robotsieve.CorpusError as e:
        place = _RECORD_PLACE.match(str(e))
        if not place:
            raise
        url = records[int(place.group(1)) - 1]["url"]
        raise robotsieve.CorpusError(f"the fetch record of {url}: {str(e)[place.end():]}") from None
    return origins, warnings, spilled_runs


def _task_error(error: Exception) -> Exception:
    """A robotsieve error raised in a task, as that error on the driver."""
    text = str(error)
    for kind in (robotsieve.CorpusError, robotsieve.AgentError, robotsieve.ArtifactError):
        match = re.search(rf"{kind.__name__}: (.+)", text)
        if match:
            return kind(match.group(1).strip())
    return error


def compile_corpus(
    fetches_df,
    agents: Sequence[str],
    output: Union[str, os.PathLike],
    shards: int,
    explain: bool = False,
    memory: Optional[int] = None,
) -> dict:
    """Compiles a DataFrame of robots.txt fetch records into a shard set of
    ``shards`` artifacts in the directory ``output``.

    ``fetches_df`` has the columns of ``robotsieve compile --corpus``'s
    records: ``url`` (the URL fetched) and ``status`` (0: no answer), and
    optionally ``body`` (text or binary), ``fetched_at`` (a TIMESTAMP, or RFC
    3339 text), ``location`` and ``error``. Google's rules apply as on the
    command line: the newest record of an origin wins (undated records are
    older; a tie in time goes to the later row in the DataFrame's order, as
    ``monotonically_increasing_id`` numbers its rows, which is the order of
    the files read; a shuffle such as ``repartition`` before the call makes
    that order arbitrary), redirects are followed through the
    records for up to five hops, 4xx means no restrictions, 5xx, 429 and no
    answer block the site within the 30-day rule. The verdicts of the set
    equal those of ``robotsieve compile --corpus`` over the same records.

    In Spark: the newest record per fetched URL (a window), the redirect
    chains (one join per hop on the target), and the partition by the
    engine's shard function (:func:`shard_of_url`); then one task per shard
    writes ``output/<shard_file_name(K, N)>``, which says in its META that
    it is shard K of N. ``output`` is a local path every executor can write
    and the driver read (one machine, or a shared filesystem), each file
    written under a temporary name and renamed into place; or a URI that
    ``pyarrow.fs`` opens (``file://``, ``hdfs://``, ``s3://``, ``gs://``),
    each file written on the executor's local disk first, then uploaded
    (under a temporary name and renamed where the store renames; straight
    under its final name in an object store, which has no rename and shows
    an upload whole or not at all).

    Each task resolves its shard's records as :func:`robotsieve.compile`
    does, in bounded memory: sorts that spill to temporary files on the
    executor beyond ``memory`` bytes (default 1 GiB, as ``--memory``; it
    sizes the writer's tables too). The rows of a shard are held by Spark
    as a task's input, so size the shards to the executors' memory.

    Returns ``{"shards": N, "origins": ..., "warnings": [...], "path": ...,
    "spilled_runs": R}`` (R: the sorted runs all tasks spilled).
    A bad record raises :class:`robotsieve.CorpusError` naming its URL, an
    invalid agent :class:`robotsieve.AgentError`, both before any file is
    written under its final name.
    """
    native_memory = _memory_keyword(memory)
    if isinstance(agents, str):
        agents = [agents]
    agents = _native.agent_names(list(agents))
    if not isinstance(shards, int) or isinstance(shards, bool) or not 1 <= shards <= 65536:
        raise ValueError(f"shards must be a whole number from 1 to 65536, not {shards!r}")
    output = os.fspath(output)
    remote = is_uri(output)
    filesystem, root = filesystem_of(output)
    if not remote:
        output = root
    filesystem.create_dir(root, recursive=True)
    names = {shard_file_name(k, shards) for k in range(shards)}
    foreign = sorted(n for n in list_names(filesystem, root) if n.endswith(".rsv") and n not in names)
    if foreign:
        raise robotsieve.ArtifactError(
            f"{output}: holds {foreign[0]}, which is no shard of a set of {shards}: remove it or choose another output"
        )

    keyed = _keyed(_fetch_columns(fetches_df), shards).persist()
    cached = [keyed]
    try:
        needed = _assign(keyed, cached)
        rows = needed.join(keyed.drop("_shard"), "_seq")

        def compile_partition(index: int, pairs: Iterator[Tuple[int, Any]]):
            name = shard_file_name(index, shards)
            rows = [row for _, row in pairs]
            if not remote:
                path = os.path.join(output, name)
                yield index, *_compile_shard(rows, agents, path, explain, index, shards, native_memory)
                return
            with tempfile.TemporaryDirectory(prefix="robotsieve-shard-") as local:
                path = os.path.join(local, name)
                done = _compile_shard(rows, agents, path, explain, index, shards, native_memory)
                upload(path, filesystem, join(root, name))
            yield index, *done

        results = (
            rows.rdd.map(lambda row: (row["shard"], row))
            .partitionBy(shards, lambda shard: shard)
            .mapPartitionsWithIndex(compile_partition)
        )
        try:
            done = results.collect()
        except Exception as e:  # a task's error, wrapped by Py4J
            raise _task_error(e) from e
    finally:
        for df in cached:
            df.unpersist()
    written = sorted(index for index, _, _, _ in done)
    if written != list(range(shards)):
        raise robotsieve.ArtifactError(f"{output}: shards {written} written, not 0..{shards - 1}")
    open_rules(output)  # every shard there, K of N, its header and META sound
    if not remote:
        robotsieve.Artifact(output)  # and each holds only its own origins
    warnings = sorted({w for _, _, ws, _ in done for w in ws})
    return {
        "shards": shards,
        "origins": sum(n for _, n, _, _ in done),
        "warnings": warnings,
        "path": output,
        "spilled_runs": sum(runs for _, _, _, runs in done),
    }


#: The columns of :func:`fetch_robots`'s records: a record line's fields
#: (``robotsieve fetch``), ``body`` as the bytes fetched.
FETCH_RECORD_FIELDS = (
    ("url", pa.string()),
    ("status", pa.int32()),
    ("body", pa.binary()),
    ("truncated", pa.bool_()),
    ("fetched_at", pa.string()),
    ("location", pa.string()),
    ("error", pa.string()),
    ("max_age", pa.int64()),
    ("retry_after", pa.int64()),
    ("attempts", pa.int32()),
    ("elapsed_ms", pa.int64()),
    ("ftp_reply", pa.string()),
)

#: Records per Arrow batch a fetch task yields.
FETCH_BATCH = 1024

_SITE = "_robotsieve_site"


def _record_batch(records: List[dict]) -> pa.RecordBatch:
    arrays = [pa.array([r[name] for r in records], type) for name, type in FETCH_RECORD_FIELDS]
    return pa.RecordBatch.from_arrays(arrays, names=[name for name, _ in FETCH_RECORD_FIELDS])


def task_limits(limits: dict, tasks: int) -> dict:
    """The limits one of ``tasks`` fetch tasks runs with, so that the
    cluster as a whole keeps the per-IP ``limits``: connections to one
    address divided among the tasks (at least one each), the interval
    between request starts to one address multiplied by them. The other
    limits are each task's own."""
    limits = dict(limits)
    defaults = robotsieve.FETCH_DEFAULTS
    connections = limits.get("per_ip_connections", defaults["per_ip_connections"])
    interval = limits.get("per_ip_interval_ms", defaults["per_ip_interval_ms"])
    if isinstance(connections, int) and not isinstance(connections, bool) and connections >= 1:
        limits["per_ip_connections"] = max(1, connections // tasks)
    if isinstance(interval, int) and not isinstance(interval, bool) and interval >= 0:
        limits["per_ip_interval_ms"] = interval * tasks
    return limits


def fetch_robots(origins_df, user_agent: str, column: Optional[str] = None, tasks: Optional[int] = None, **limits):
    """Fetches the robots.txt of each origin in ``origins_df`` as
    :func:`robotsieve.fetch` does and returns a DataFrame of the fetch
    records, one row a record (a redirect chain's hops each a row), with the
    columns of :data:`FETCH_RECORD_FIELDS`: those :func:`compile_corpus`
    takes (``url``, ``status``, ``body`` as binary, ``fetched_at`` as RFC
    3339 text, ``location``, ``error``) and the cache's (``max_age``,
    ``retry_after``, ``attempts``, ...).

    ``origins_df`` holds input lines as ``robotsieve fetch --urls`` reads
    them (origins, robots.txt URLs, bare hosts) in ``column`` (default: its
    only column, e.g. :func:`unknown_origins`'s ``robots_url``). The lines
    are spread over ``tasks`` partitions (default: the context's default
    parallelism) by the registrable domain of their host (the Public Suffix
    List compiled in, :func:`robotsieve.registrable_domain`), so that one
    site's hosts, which often share addresses, are fetched by one task
    under one set of per-IP limits. Each task runs one fetcher over all its
    lines (in ``mapInArrow``), with ``limits`` as :func:`robotsieve.fetch`
    takes them, but for the per-IP limits divided among the tasks
    (:func:`task_limits`), so that the cluster as a whole keeps them;
    ``concurrency`` is each task's. A URL listed twice in one task is
    fetched once. The limits are checked on the driver (ValueError naming a
    bad one) before any task starts; the DataFrame is lazy, as Spark's are:
    the fetch runs when it is first computed, so ``persist`` it (or write
    it out) before using it more than once.
    """
    robotsieve._native.check_fetch_options(user_agent, limits)
    if column is None:
        if len(origins_df.columns) != 1:
            raise ValueError(f"column: origins_df has the columns {', '.join(origins_df.columns)}: name one")
        column = origins_df.columns[0]
    elif column not in origins_df.columns:
        raise ValueError(f"column: origins_df has no column {column!r} (columns: {', '.join(origins_df.columns)})")
    if tasks is None:
        tasks = origins_df.sparkSession.sparkContext.defaultParallelism
    if not isinstance(tasks, int) or isinstance(tasks, bool) or tasks < 1:
        raise ValueError(f"tasks must be a positive whole number, not {tasks!r}")
    per_task = task_limits(limits, tasks)
    robotsieve._native.check_fetch_options(user_agent, per_task)

    from pyspark.sql import functions as F

    lines = origins_df.select(F.col(column).cast("string").alias("line"))
    sited_schema = _spark_schema(pa.schema([("line", pa.string()), (_SITE, pa.string())]))

    def sites(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            column = batch.column(0).to_pylist()
            keys = _native.sites_of_lines(column)
            arrays = [pa.array(column, pa.string()), pa.array(keys, pa.string())]
            yield pa.RecordBatch.from_arrays(arrays, names=["line", _SITE])

    def fetch_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_lines = [line for batch in batches for line in batch.column(0).to_pylist() if line is not None]
        if not task_lines:
            return
        pending = []
        for record in robotsieve.fetch_iter(task_lines, user_agent=user_agent, **per_task):
            pending.append(record)
            if len(pending) >= FETCH_BATCH:
                yield _record_batch(pending)
                pending = []
        if pending:
            yield _record_batch(pending)

    schema = pa.schema(list(FETCH_RECORD_FIELDS))
    spark_schema = _spark_schema(schema)
    sited = lines.mapInArrow(sites, sited_schema).repartition(tasks, _SITE).select("line")
    return sited.mapInArrow(fetch_task, spark_schema)


def _spark_schema(schema: pa.Schema):
    """The Spark schema of an Arrow schema of strings, binaries, booleans and integers."""
    from pyspark.sql.types import BinaryType, BooleanType, IntegerType, LongType, StringType, StructField, StructType

    kinds = {
        pa.string(): StringType(),
        pa.binary(): BinaryType(),
        pa.bool_(): BooleanType(),
        pa.int32(): IntegerType(),
        pa.int64(): LongType(),
    }
    return StructType([StructField(f.name, kinds[f.type], True) for f in schema])
