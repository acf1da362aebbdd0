"""Where a distributed job's rules live: a local path on the driver or any
URI that ``pyarrow.fs`` opens (``file://``, ``hdfs://``, ``s3://``,
``gs://``), read through the same ``pyarrow.fs`` calls whatever the store.

The driver checks a set's files with two ranged reads each (the header and
section table, then META: the checks opening makes of them, without
copying the file). The header holds the file's content digest (every group
blob's and section's checksum hashed together), by which executors cache
their copies (:mod:`robotsieve._cache`): a new set, even one whose changed
rule kept every length, never reads a stale copy, and the driver reads no
file whole.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import robotsieve
from robotsieve import _native

#: Bytes read at a time when a file is digested, copied or uploaded.
CHUNK = 1 << 20


@dataclass(frozen=True)
class RulesFile:
    """One artifact file of a rules location: shard ``index`` of ``count``
    (0 of 1 for a whole artifact), its path in ``Rules.filesystem``, its
    size and the content digest its header records (16 hex digits: the
    same for every copy of the file, different for different contents)."""

    path: str
    index: int
    count: int
    size: int
    digest: str

    @property
    def name(self) -> str:
        """The file's own name (a shard set's ``00003-of-00064.rsv``)."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Rules:
    """An artifact or a shard set, checked on the driver: where it is
    (``location`` as given, ``filesystem`` that reads it), its files in
    shard order, and the agents it was compiled for. ``is_set`` is false
    for one whole artifact."""

    location: str
    filesystem: object
    files: Tuple[RulesFile, ...]
    agents: Tuple[str, ...]
    is_set: bool

    @property
    def shards(self) -> int:
        """N: how many shards (1 for a whole artifact)."""
        return len(self.files)

    @property
    def size(self) -> int:
        """The bytes of all its files."""
        return sum(f.size for f in self.files)


def is_uri(location: str) -> bool:
    """Whether ``location`` names a store (``scheme://...``) rather than a local path."""
    return "://" in location


def filesystem_of(location: str):
    """The ``pyarrow.fs`` filesystem and the path in it of a local path or a URI."""
    from pyarrow import fs

    if is_uri(location):
        return fs.FileSystem.from_uri(location)
    return fs.LocalFileSystem(), os.path.abspath(location)


def join(path: str, name: str) -> str:
    """``name`` inside the folder ``path`` of a ``pyarrow.fs`` filesystem."""
    return path.rstrip("/") + "/" + name


def _read_file_head(filesystem, path: str, size: int, label: str):
    """The agents, shard and content digest of the artifact ``path``, from
    two ranged reads."""
    head_len = min(_native.ARTIFACT_HEAD_LEN, size)
    with filesystem.open_input_file(path) as f:
        head = f.read_at(head_len, 0)
        meta_at, meta_len, digest = _native.artifact_head(label, head, size)
        meta = f.read_at(meta_len, meta_at)
    agents, shard = _native.artifact_meta(label, head, size, meta)
    return agents, shard, digest


def open_rules(location, agent: Optional[str] = None) -> Rules:
    """Checks the artifact or shard set at ``location`` (a local path or a
    URI) on the driver and describes it: every file's header, section table
    and META (ranged reads), a set's files all there (shards 0..N-1 of one
    N, one scheme, the same agents, each under its own name), and, when
    ``agent`` is given, that the rules were compiled for it. Raises
    :class:`robotsieve.ArtifactError` naming the file, or
    :class:`robotsieve.AgentError`."""
    from pyarrow import fs

    location = os.fspath(location)
    filesystem, root = filesystem_of(location)
    info = filesystem.get_file_info(root)
    if info.type == fs.FileType.NotFound:
        raise robotsieve.ArtifactError(f"{location}: no such artifact")
    if info.type == fs.FileType.Directory:
        listing = filesystem.get_file_info(fs.FileSelector(root))
        infos = sorted((i for i in listing if i.type == fs.FileType.File and i.base_name.endswith(".rsv")),
                       key=lambda i: i.base_name)
        if not infos:
            raise robotsieve.ArtifactError(f"{location}: a folder without artifact files (*.rsv)")
    else:
        infos = [info]
    agents: Optional[Tuple[str, ...]] = None
    found: Dict[int, RulesFile] = {}
    count: Optional[int] = None
    for i in infos:
        label = join(location, i.base_name) if info.type == fs.FileType.Directory else location
        file_agents, shard, digest = _read_file_head(filesystem, i.path, i.size, label)
        if agents is None:
            agents = tuple(file_agents)
        elif tuple(file_agents) != agents:
            raise robotsieve.ArtifactError(f"{label}: compiled for {file_agents}, other files of the set for {list(agents)}")
        if info.type != fs.FileType.Directory:
            index, n = 0, 1
            if shard is not None:
                raise robotsieve.ArtifactError(
                    f"{label}: shard {shard[0]} of {shard[1]} of a set: give the set's folder"
                )
        else:
            if shard is None:
                raise robotsieve.ArtifactError(f"{label}: a whole artifact inside a shard set's folder")
            index, n, scheme = shard
            if scheme != _native.SHARD_SCHEME:
                raise robotsieve.ArtifactError(f"{label}: split by {scheme!r}, not {_native.SHARD_SCHEME!r}")
            if count is None:
                count = n
            if n != count:
                raise robotsieve.ArtifactError(f"{label}: shard {index} of {n}, other files of the set are of {count}")
            if i.base_name != _native.shard_file_name(index, n):
                raise robotsieve.ArtifactError(
                    f"{label}: holds shard {index} of {n}, whose name is {_native.shard_file_name(index, n)}"
                )
        found[index] = RulesFile(i.path, index, n, i.size, digest)
    n = count or 1
    missing = [k for k in range(n) if k not in found]
    if missing:
        raise robotsieve.ArtifactError(
            f"{location}: shard {_native.shard_file_name(missing[0], n)} of the set of {n} is missing"
        )
    agents = agents or ()
    if agent is not None:
        (wanted,) = _native.agent_names([agent])
        if wanted not in agents:
            raise robotsieve.AgentError(f"{location}: not compiled for {wanted!r} (it was for {', '.join(agents)})")
    files = tuple(found[k] for k in range(n))
    return Rules(location, filesystem, files, agents, info.type == fs.FileType.Directory)


def upload(local_path: str, filesystem, path: str) -> None:
    """Puts the local file ``local_path`` at ``path`` in ``filesystem``, so
    that no partial file is ever read under the final name: through a
    temporary name and a rename where the store renames (local files,
    HDFS), straight under the final name where it has no rename (object
    stores, whose upload appears whole or not at all)."""
    renames = filesystem.type_name in ("local", "hdfs")
    target = path + ".part" if renames else path
    with open(local_path, "rb") as source, filesystem.open_output_stream(target) as out:
        while True:
            chunk = source.read(CHUNK)
            if not chunk:
                break
            out.write(chunk)
    if renames:
        filesystem.move(target, path)


def list_names(filesystem, path: str) -> List[str]:
    """The names of the files in the folder ``path`` (none if it is absent)."""
    from pyarrow import fs

    if filesystem.get_file_info(path).type == fs.FileType.NotFound:
        return []
    return [i.base_name for i in filesystem.get_file_info(fs.FileSelector(path)) if i.type == fs.FileType.File]
