"""robotsieve.compile resolves its records as `robotsieve compile --corpus`
does, in bounded memory: under a budget small enough to spill sorted runs,
the artifact is the command line's byte for byte (but for META, which names
the sources) and answers the same."""

import json
import struct
import subprocess

import pytest

import robotsieve
from test_spark import robotsieve_binary

# The META section's kind in the section table (engine/src/format/header.rs, Section::Meta).
META = 1
# The header's length in bytes (format 7).
HEADER_LEN = 56


def corpus():
    """Fetch records with duplicates (an older and a newer fetch of one
    URL, and the same record twice), redirects followed to a body and to no
    record, 5xx and 4xx answers, and a record that is not at the root."""
    records = []
    for i in range(240):
        url = f"https://host{i}.example/robots.txt"
        body = f"User-agent: *\nDisallow: /p{i % 7}\n\nUser-agent: mybot\nDisallow: /mine{i % 3}\n"
        if i % 5 == 0:
            older = {"url": url, "status": 200, "body": "User-agent: *\nDisallow: /\n"}
            records.append({**older, "fetched_at": "2026-01-01T00:00:00Z"})
            records.append({"url": url, "status": 200, "body": body, "fetched_at": "2026-06-01T00:00:00Z"})
        elif i % 7 == 1:
            records.append({"url": url, "status": 301, "location": f"https://host{i + 1}.example/robots.txt"})
        elif i % 13 == 2:
            records.append({"url": url, "status": 302, "location": "/elsewhere/robots.txt"})
        elif i % 11 == 3:
            records.append({"url": url, "status": 503, "body": ""})
        elif i % 17 == 4:
            records.append({"url": url, "status": 404})
        else:
            records.append({"url": url, "status": 200, "body": body})
            if i % 9 == 0:
                records.append({"url": url, "status": 200, "body": body})
    off_root = {"url": "https://host3.example/sub/robots.txt", "status": 200, "body": "User-agent: *\nDisallow: /\n"}
    records.append(off_root)
    return records


def sections(path):
    """The artifact's sections by kind, as its section table places them
    (format 7: the section count at byte 40 of the 56-byte header, the
    table's 32-byte entries right after it)."""
    data = path.read_bytes()
    count = struct.unpack_from("=I", data, 40)[0]
    out = {}
    for i in range(count):
        kind, offset, length = struct.unpack_from("=I4xQQ", data, HEADER_LEN + 32 * i)
        out[kind] = data[offset : offset + length]
    return out


@pytest.mark.parametrize("memory", [2048, None])
def test_compile_equals_the_cli_on_the_bounded_path(tmp_path, memory):
    records = corpus()
    jsonl = tmp_path / "fetches.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in records))
    cli_out = tmp_path / "cli.rsv"
    budget = ["--memory", str(memory)] if memory else []
    agents = ["--agent", "mybot", "--agent", "otherbot"]
    subprocess.run(
        [robotsieve_binary(), "compile", "--corpus", jsonl, *agents, "-o", cli_out, *budget], check=True, capture_output=True
    )
    py_out = tmp_path / "py.rsv"
    info = robotsieve.compile(records, agents=["mybot", "otherbot"], output=py_out, memory=memory)
    if memory:
        assert info["spilled_runs"] > 10, f"{len(records)} records in {memory} bytes: {info['spilled_runs']} runs"
    else:
        assert info["spilled_runs"] == 0
    assert any("is not /robots.txt at the root" in w for w in info["warnings"]), info["warnings"]

    ours, theirs = sections(py_out), sections(cli_out)
    assert ours.keys() == theirs.keys()
    for kind in ours:
        if kind != META:
            assert ours[kind] == theirs[kind], f"section kind {kind} differs"

    urls = [f"https://host{i}.example/{p}" for i in range(245) for p in ("", "p0", "p3", "mine1", "x")]
    got = {}
    for name, path in (("python", py_out), ("cli", cli_out)):
        artifact = robotsieve.Artifact(path)
        artifact.verify()
        assert artifact.origins == info["origins"]
        got[name] = {
            agent: artifact.classify(urls, agent=agent).column("verdict").to_pylist() for agent in ("mybot", "otherbot")
        }
    assert got["python"] == got["cli"]
    verdicts = set(got["python"]["mybot"])
    assert {"allowed", "disallowed", "unknown"} <= verdicts, verdicts


def test_memory_must_be_a_positive_number_of_bytes(tmp_path):
    with pytest.raises(ValueError, match="memory"):
        robotsieve.compile(
            [{"url": "https://a.example/robots.txt", "status": 404}], ["mybot"], tmp_path / "x.rsv", memory=0
        )
