"""robotsieve on Spark: filter a frontier DataFrame with a compiled artifact.

:func:`filter_frontier` ships the artifact to the executors with
``SparkContext.addFile``; each Python worker process opens (maps) it once,
on its first batch, and classifies every later batch with the same mapping,
through ``mapInArrow`` (Arrow batches in and out, no per-row Python).
Executors must run a Python that has robotsieve installed
(``PYSPARK_PYTHON``, or ``spark.pyspark.python``).
"""

from __future__ import annotations

import os
from typing import Dict, Iterator, Tuple

import pyarrow as pa

import robotsieve

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


def _ship(spark_context, rules: str) -> str:
    """Adds the artifact (a file, or a folder such as a shard set) to the
    files every executor fetches; returns the name SparkFiles knows it by."""
    rules = os.path.abspath(os.fspath(rules))
    if not os.path.exists(rules):
        raise robotsieve.ArtifactError(f"{rules}: no such artifact")
    name = os.path.basename(rules.rstrip("/"))
    try:
        spark_context.addFile(rules, recursive=os.path.isdir(rules))
    except Exception as e:  # the same path added twice in one context
        if "already" not in str(e).lower():
            raise
    return name


def filter_frontier(df, url_col: str, rules: str, agent: str, raw_urls: bool = False, column: str = "verdict"):
    """``df`` with a ``verdict`` column (allowed, disallowed, unknown or
    invalid) for the URLs in ``url_col``, as ``robotsieve filter`` decides
    them with the artifact ``rules`` for ``agent``.

    The artifact is opened on the driver first, so that a damaged file or an
    agent it was not compiled for fails here, not in a task.
    """
    from pyspark import SparkFiles
    from pyspark.sql.types import StringType, StructField, StructType

    local = robotsieve.Artifact(rules)
    local.classify([], agent=agent)  # checks the agent on the driver
    name = _ship(df.sparkSession.sparkContext, rules)
    if column in df.columns:
        raise ValueError(f"the DataFrame already has a column {column!r}")
    schema = StructType(df.schema.fields + [StructField(column, StringType(), True)])

    def classify(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        artifact = worker_artifact(SparkFiles.get(name))
        for batch in batches:
            _note("batch")
            verdicts = artifact.classify(batch.column(url_col), agent=agent, raw_urls=raw_urls, explain=False)
            yield batch.append_column(column, verdicts.column("verdict").cast(pa.string()))

    return df.mapInArrow(classify, schema)


def verdict_counts(df, column: str = "verdict") -> Tuple[Tuple[str, int], ...]:
    """The number of rows per verdict, for reports."""
    return tuple(sorted((r[column], r["count"]) for r in df.groupBy(column).count().collect()))
