"""An executor's local copies of the rules files its tasks need.

Each executor copies a file from the rules' store the first time one of
its tasks needs it, into ``robotsieve-cache/`` under its scratch directory
(Spark's per-executor files root, gone when the executor exits), named by
the content digest its header records, so a new set never reads a stale
copy.
A lock file (``fcntl.flock``) makes the Python workers of one executor
copy a file once: the second waits and finds it there. The copies are
held within a byte cap: before a copy, the least recently used others are
removed until it fits (a worker that has one mapped keeps reading it; the
name is gone). A copy is checked whole before it is renamed into place:
its size and header digest must be those the driver read, and every byte
must pass ``Artifact.verify`` (which recomputes the digest), so the cache
never holds a copy that differs from the file the job was planned on.

When the environment variable :data:`EVENT_LOG_VARIABLE` is set, opens,
copies and tasks are appended to that file as JSON lines (tests read them).
"""

from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from typing import Dict, Iterator, Tuple

import robotsieve
from robotsieve import _native
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
        copied = 0
        with rules.filesystem.open_input_stream(file.path) as source, open(part, "wb") as out:
            while True:
                chunk = source.read(CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                copied += len(chunk)
        try:
            _check_copy(part, copied, rules, file)
        except BaseException:
            os.unlink(part)
            raise
        os.replace(part, path)
        note("copy", shard=file.index, bytes=copied)
    return path


def _check_copy(part: str, copied: int, rules: Rules, file: RulesFile) -> None:
    """Raises :class:`robotsieve.ArtifactError` naming ``file`` unless the
    copy ``part`` (``copied`` bytes) is the file the driver read: its size,
    the content digest in its header, then every byte against that digest
    (``Artifact.verify``)."""
    label = f"{rules.location}: {file.name}"
    changed = f"{label} changed after the job read it"
    if copied != file.size:
        raise robotsieve.ArtifactError(f"{changed} ({copied} bytes, not {file.size}): run the job again")
    with open(part, "rb") as f:
        head = f.read(_native.ARTIFACT_HEAD_LEN)
    try:
        _, _, digest = _native.artifact_head(label, head, copied)
    except robotsieve.ArtifactError as e:
        raise robotsieve.ArtifactError(f"{changed} ({e}): run the job again") from None
    if digest != file.digest:
        raise robotsieve.ArtifactError(
            f"{changed} (its digest is {digest}, not {file.digest}): run the job again"
        )
    try:
        robotsieve.Artifact(part, shard=(file.index, file.count) if rules.is_set else None).verify()
    except robotsieve.ArtifactError as e:
        raise robotsieve.ArtifactError(f"{label} is damaged in the store: {e}") from None


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
