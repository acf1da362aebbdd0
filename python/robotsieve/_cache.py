"""An executor's local copies of the rules files its tasks need.

Each executor copies a file from the rules' store the first time one of
its tasks needs it, into ``robotsieve-cache/`` under its scratch directory
(Spark's per-executor files root, gone when the executor exits), named by
the digest of the file's contents, so a new set never reads a stale copy.
A lock file (``fcntl.flock``) makes the Python workers of one executor
copy a file once: the second waits and finds it there. The copies are
held within a byte cap: before a copy, the least recently used others are
removed until it fits (a worker that has one mapped keeps reading it; the
name is gone). Each copy is checked against its digest while it is made.

When the environment variable :data:`EVENT_LOG_VARIABLE` is set, opens,
copies and tasks are appended to that file as JSON lines (tests read them).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from contextlib import contextmanager
from typing import Dict, Iterator, Tuple

import robotsieve
from robotsieve._store import CHUNK, Rules, RulesFile

#: When set in an executor's environment, every open, copy and task is
#: appended to this file as one JSON object a line.
EVENT_LOG_VARIABLE = "ROBOTSIEVE_SPARK_OPEN_LOG"

#: The cache's default byte cap per executor.
DEFAULT_CACHE_BYTES = 16 << 30

#: The artifacts this worker process has opened, by (local path, shard):
#: one mapping serves every batch and task the process runs.
_OPENED: Dict[Tuple[str, int, int], robotsieve.Artifact] = {}


def scratch_root() -> str:
    """The executor's scratch directory: Spark's files root, which every
    Python worker of the executor shares and Spark removes when the
    executor exits (the current directory outside Spark)."""
    try:
        from pyspark import SparkFiles

        root = SparkFiles.getRootDirectory()
    except Exception:  # not inside a Spark worker
        root = None
    return os.path.abspath(root or os.getcwd())


def note(event: str, **fields) -> None:
    """Appends one event to the event log, when one is asked for."""
    log = os.environ.get(EVENT_LOG_VARIABLE)
    if not log:
        return
    record = {"event": event, "pid": os.getpid(), "executor": scratch_root(), **fields}
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
        if context is not None:
            record.update(stage=context.stageId(), partition=context.partitionId(), attempt=context.attemptNumber())
    except ImportError:
        pass
    line = json.dumps(record) + "\n"
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())  # one write: lines of workers never interleave
    finally:
        os.close(fd)


@contextmanager
def _locked(folder: str) -> Iterator[None]:
    fd = os.open(os.path.join(folder, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _evict(folder: str, room: int, cap: int) -> None:
    """Removes least recently used copies until ``room`` more bytes fit under ``cap``."""
    copies = []
    for name in os.listdir(folder):
        if name.endswith(".rsv"):
            st = os.stat(os.path.join(folder, name))
            copies.append((st.st_mtime_ns, st.st_size, name))
    held = sum(size for _, size, _ in copies)
    for _, size, name in sorted(copies):
        if held + room <= cap:
            break
        os.unlink(os.path.join(folder, name))
        held -= size
        note("evict", name=name, bytes=size)


def local_copy(rules: Rules, file: RulesFile, cap: int = DEFAULT_CACHE_BYTES) -> str:
    """The local path of ``file``'s copy on this executor, copied from the
    store now if no worker of this executor has copied it yet."""
    folder = os.path.join(scratch_root(), "robotsieve-cache")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{file.digest}.rsv")
    with _locked(folder):
        if os.path.exists(path):
            os.utime(path)  # recently used
            return path
        _evict(folder, file.size, cap)
        part = path + ".part"
        sha = hashlib.sha256()
        copied = 0
        with rules.filesystem.open_input_stream(file.path) as source, open(part, "wb") as out:
            while True:
                chunk = source.read(CHUNK)
                if not chunk:
                    break
                sha.update(chunk)
                out.write(chunk)
                copied += len(chunk)
        if sha.hexdigest() != file.digest:
            os.unlink(part)
            raise robotsieve.ArtifactError(
                f"{rules.location}: {file.name} changed after the job read it (its digest differs): run the job again"
            )
        os.replace(part, path)
        note("copy", shard=file.index, bytes=copied)
    return path


def open_shard(path: str, file: RulesFile, is_set: bool) -> robotsieve.Artifact:
    """The artifact at ``path`` holding ``file`` (a shard of a set, opened
    alone, or a whole artifact), opened once per Python process."""
    key = (path, file.index, file.count)
    artifact = _OPENED.get(key)
    if artifact is None:
        if not is_set:
            artifact = robotsieve.Artifact(path)
        else:
            artifact = robotsieve.Artifact(path, shard=(file.index, file.count))
        _OPENED[key] = artifact
        note("open", shard=file.index)
    return artifact
