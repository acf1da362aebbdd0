"""One shard of a set opened alone (``Artifact(path, shard=(K, N))``): it
answers its own origins' URLs as the whole set does, refuses another shard's
URLs naming them, and is checked against the shard's own header."""

import json

import pytest

import robotsieve
from robotsieve import _native

SHARDS = 4
HOSTS = [f"h{i}.example" for i in range(24)]


def record(i, host):
    """A fetch record per host: rules, an outage or a missing file, by turn."""
    url = f"https://{host}/robots.txt"
    if i % 3 == 0:
        return {"url": url, "status": 200, "body": f"User-agent: *\nDisallow: /p{i}\nAllow: /p{i}/open\n"}
    if i % 3 == 1:
        return {"url": url, "status": 503}
    return {"url": url, "status": 404}


@pytest.fixture(scope="module")
def shard_set(tmp_path_factory):
    """A set of 4 shards compiled one by one, as workers would."""
    directory = tmp_path_factory.mktemp("set")
    lines = "\n".join(json.dumps(record(i, h)) for i, h in enumerate(HOSTS)).encode()
    for k in range(SHARDS):
        out = directory / _native.shard_file_name(k, SHARDS)
        _native.compile_jsonl(lines, ["mybot"], str(out), False, shard=(k, SHARDS))
    return directory


def urls_of_host(host, i):
    return [f"https://{host}/", f"https://{host}/p{i}/x", f"https://{host}/p{i}/open"]


def test_each_shard_alone_answers_as_the_whole_set(shard_set):
    whole = robotsieve.Artifact(shard_set)
    by_shard = {k: [] for k in range(SHARDS)}
    for i, host in enumerate(HOSTS + ["nobody.example", "other.example"]):
        by_shard[_native.shard_of_url(f"https://{host}/", SHARDS)].extend(urls_of_host(host, i))
    assert sum(1 for urls in by_shard.values() if urls) > 1, "the hosts spread over several shards"
    seen = set()
    for k, urls in by_shard.items():
        urls = urls + ["not a url"]
        lone = robotsieve.Artifact(shard_set / _native.shard_file_name(k, SHARDS), shard=(k, SHARDS))
        assert lone.shard == (k, SHARDS)
        assert lone.files == 1
        got = lone.classify(urls, agent="mybot").column("verdict").to_pylist()
        expected = whole.classify(urls, agent="mybot").column("verdict").to_pylist()
        assert got == expected, f"shard {k}"
        seen.update(got)
    assert {"allowed", "disallowed", "unknown", "invalid"} <= seen


def test_a_url_of_another_shard_is_refused_naming_it_and_its_shard(shard_set):
    k = 0
    lone = robotsieve.Artifact(shard_set / _native.shard_file_name(k, SHARDS), shard=(k, SHARDS))
    foreign = next(h for h in HOSTS if _native.shard_of_url(f"https://{h}/", SHARDS) != k)
    belongs = _native.shard_of_url(f"https://{foreign}/", SHARDS)
    url = f"https://{foreign}/page"
    for explain in (False, True):
        with pytest.raises(robotsieve.ArtifactError) as raised:
            lone.classify([url], agent="mybot", explain=explain)
        message = str(raised.value)
        assert url in message
        assert f"shard {belongs} of {SHARDS}" in message
        assert _native.shard_file_name(belongs, SHARDS) in message


def test_the_shard_asked_for_must_be_the_headers(shard_set, tmp_path):
    path = shard_set / _native.shard_file_name(2, SHARDS)
    with pytest.raises(robotsieve.ArtifactError) as raised:
        robotsieve.Artifact(path, shard=(1, SHARDS))
    message = str(raised.value)
    assert str(path) in message
    assert f"shard 2 of {SHARDS}" in message and f"shard 1 of {SHARDS}" in message
    with pytest.raises(robotsieve.ArtifactError, match=f"shard 2 of {SHARDS}.*shard 2 of 8"):
        robotsieve.Artifact(path, shard=(2, 8))
    whole = tmp_path / "whole.rsv"
    robotsieve.compile([record(0, HOSTS[0])], agents=["mybot"], output=whole)
    with pytest.raises(robotsieve.ArtifactError, match="whole.rsv: not a shard"):
        robotsieve.Artifact(whole, shard=(0, 1))
    # Without shard=, a lone shard file is refused as before.
    with pytest.raises(robotsieve.ArtifactError, match="this is shard 2 of 4"):
        robotsieve.Artifact(path)
    for bad in [(4, 4), (-1, 4), (0, 0)]:
        with pytest.raises(ValueError, match="K must be in 0..N"):
            robotsieve.Artifact(path, shard=bad)
    with pytest.raises(TypeError, match="pair of ints"):
        robotsieve.Artifact(path, shard=("2", 4))
