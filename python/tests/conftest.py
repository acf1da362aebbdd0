"""What the tests share: the conformance cases of ../shared, read as
testkit/src/conformance.rs reads them."""

import base64
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_dir():
    """``$ROBOTSIEVE_SHARED`` or ``../shared`` beside the repository; under
    CI=true its absence fails the run instead of skipping."""
    env = os.environ.get("ROBOTSIEVE_SHARED")
    candidate = Path(env) if env else REPO.parent / "shared"
    if candidate.is_dir():
        return candidate
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the shared folder {candidate} is absent")
    pytest.skip(f"skipped: the shared folder {candidate} is absent")


def conformance_lines(name):
    path = shared_dir() / "conformance" / name
    if not path.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {path} is absent")
        pytest.skip(f"skipped: {path} is absent")
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert cases, f"{path} has no cases"
    return cases


def verdict_cases(name):
    """The verdict cases of robots.jsonl or google-spec-test.jsonl: the body
    as bytes, and ``allowed_escaped`` defaulting to ``allowed``."""
    cases = []
    for raw in conformance_lines(name):
        if "robots" in raw:
            body = raw["robots"].encode("utf-8")
        elif "robots_b64" in raw:
            body = base64.b64decode(raw["robots_b64"])
        else:
            g = raw["robots_gen"]
            body = (g["head"] + g["repeat"] * g["times"] + g["tail"]).encode("utf-8")
        cases.append(
            {
                "id": raw["id"],
                "body": body,
                "agents": raw["agents"],
                "url": raw["url"],
                "allowed": raw["allowed"],
                "allowed_escaped": raw.get("allowed_escaped", raw["allowed"]),
            }
        )
    return cases
