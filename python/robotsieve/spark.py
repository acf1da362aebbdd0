"""robotsieve on Spark: filter a frontier DataFrame with a compiled artifact,
and compile a DataFrame of robots.txt fetches into a shard set.

:func:`filter_frontier` ships the artifact to the executors with
``SparkContext.addFile``; each Python worker process opens (maps) it once,
on its first batch, and classifies every later batch with the same mapping,
through ``mapInArrow`` (Arrow batches in and out, no per-row Python).

:func:`compile_corpus` resolves newest-record-wins and redirects in Spark (a
window per fetched URL, then one join per redirect hop on the redirect
target), partitions the records by the engine's shard function and runs one
task per shard, which compiles shard K of N with the engine's own corpus
rules (``robotsieve compile --corpus ... --shard K/N``).

Executors must run a Python that has robotsieve installed
(``PYSPARK_PYTHON``, or ``spark.pyspark.python``).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pyarrow as pa

import robotsieve
from robotsieve import _native
from robotsieve import _memory_keyword, _record_line

#: The artifacts this worker process has opened, by local path: one mapping
#: serves every batch and task the process runs.
_OPENED: Dict[str, robotsieve.Artifact] = {}

#: When set in an executor's environment, every open and every batch is
#: appended to this file as ``open PID`` / ``batch PID`` (tests count them).
OPEN_LOG_VARIABLE = "ROBOTSIEVE_SPARK_OPEN_LOG"


def _note(what: str) -> None:
    log = os.environ.get(OPEN_LOG_VARIABLE)
    if log:
        with open(log, "a") as f:
            f.write(f"{what} {os.getpid()}\n")


def worker_artifact(path: str) -> robotsieve.Artifact:
    """The artifact at ``path``, opened once per Python process."""
    artifact = _OPENED.get(path)
    if artifact is None:
        artifact = robotsieve.Artifact(path)
        _OPENED[path] = artifact
        _note("open")
    return artifact


def _add_file(spark_context, path: str) -> None:
    try:
        spark_context.addFile(path)
    except Exception as e:  # the same path added twice in one context
        if "already" not in str(e).lower():
            raise


def _ship(spark_context, rules: str) -> Tuple[str, ...]:
    """Adds the artifact to the files every executor fetches; returns what
    :func:`_worker_path` needs to find it there.

    A file is shipped as it is. Spark ships no directories to a cluster, so
    the files of a shard set are shipped one by one under names unique to
    the set (hard links in a driver-side temporary folder: Spark names a
    symbolic link by its target; a copy where no hard link can be made), and
    each worker puts them together again (:func:`_worker_path`)."""
    rules = os.path.abspath(os.fspath(rules))
    if not os.path.exists(rules):
        raise robotsieve.ArtifactError(f"{rules}: no such artifact")
    if not os.path.isdir(rules):
        _add_file(spark_context, rules)
        return ("file", os.path.basename(rules))
    import hashlib
    import tempfile

    files = [(p, os.path.basename(p)) for p, *_ in robotsieve.Artifact(rules).shard_files]
    stamp = hashlib.sha256(
        "\0".join(f"{p}:{os.stat(p).st_size}:{os.stat(p).st_mtime_ns}" for p, _ in files).encode()
    ).hexdigest()[:16]
    links = os.path.join(tempfile.gettempdir(), f"robotsieve-ship-{stamp}")
    os.makedirs(links, exist_ok=True)
    shipped = []
    for path, name in files:
        link = os.path.join(links, f"rs{stamp}-{name}")
        if not os.path.exists(link):
            try:
                os.link(path, link)
            except OSError:  # another filesystem
                import shutil

                shutil.copyfile(path, link + ".part")
                os.replace(link + ".part", link)
        _add_file(spark_context, link)
        shipped.append(os.path.basename(link))
    return ("set", stamp, *shipped)


def _worker_path(shipped: Tuple[str, ...]) -> str:
    """The local path of a shipped artifact in this worker: the file, or a
    folder of links that gives the shard set's files their own names."""
    from pyspark import SparkFiles

    if shipped[0] == "file":
        return SparkFiles.get(shipped[1])
    stamp, names = shipped[1], shipped[2:]
    folder = os.path.abspath(os.path.join(SparkFiles.getRootDirectory(), f"robotsieve-set-{stamp}"))
    os.makedirs(folder, exist_ok=True)
    for name in names:
        link = os.path.join(folder, name[len(f"rs{stamp}-"):])
        if not os.path.lexists(link):
            try:
                os.symlink(os.path.abspath(SparkFiles.get(name)), link)
            except FileExistsError:  # another worker of this executor made it
                pass
    return folder


def filter_frontier(df, url_col: str, rules: str, agent: str, raw_urls: bool = False, column: str = "verdict"):
    """``df`` with a ``verdict`` column (allowed, disallowed, unknown or
    invalid) for the URLs in ``url_col``, as ``robotsieve filter`` decides
    them with the artifact ``rules`` for ``agent``.

    The artifact is opened on the driver first, so that a damaged file or an
    agent it was not compiled for fails here, not in a task.
    """
    from pyspark.sql.types import StringType, StructField, StructType

    local = robotsieve.Artifact(rules)
    local.classify([], agent=agent)  # checks the agent on the driver
    shipped = _ship(df.sparkSession.sparkContext, rules)
    if column in df.columns:
        raise ValueError(f"the DataFrame already has a column {column!r}")
    schema = StructType(df.schema.fields + [StructField(column, StringType(), True)])

    def classify(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        artifact = worker_artifact(_worker_path(shipped))
        for batch in batches:
            _note("batch")
            verdicts = artifact.classify(batch.column(url_col), agent=agent, raw_urls=raw_urls, explain=False)
            yield batch.append_column(column, verdicts.column("verdict").cast(pa.string()))

    return df.mapInArrow(classify, schema)


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
    writes ``output/<shard_file_name(K, N)>`` (under a temporary name,
    renamed into place), which says in its META that it is shard K of N.
    ``output`` must be a path every executor can write and the driver read:
    a local path on one machine, a shared filesystem on a cluster.

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
    output = os.path.abspath(os.fspath(output))
    os.makedirs(output, exist_ok=True)
    names = {shard_file_name(k, shards) for k in range(shards)}
    foreign = sorted(n for n in os.listdir(output) if n.endswith(".rsv") and n not in names)
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
            path = os.path.join(output, shard_file_name(index, shards))
            origins, warnings, spilled_runs = _compile_shard(
                [row for _, row in pairs], agents, path, explain, index, shards, native_memory
            )
            yield index, origins, warnings, spilled_runs

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
    robotsieve.Artifact(output)  # the set opens: every shard there, K of N, only its own origins
    warnings = sorted({w for _, _, ws, _ in done for w in ws})
    return {
        "shards": shards,
        "origins": sum(n for _, n, _, _ in done),
        "warnings": warnings,
        "path": output,
        "spilled_runs": sum(runs for _, _, _, runs in done),
    }
