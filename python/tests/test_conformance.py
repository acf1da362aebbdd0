"""Every conformance case of ../shared/conformance through the package:
verdict cases through RobotsTxt.can_fetch in both URL modes, and every case
with an absolute URL through robotsieve.compile + Artifact.classify."""

import re

import pyarrow as pa
import pytest

import robotsieve
from conftest import conformance_lines, verdict_cases

VERDICT_FILES = ["robots.jsonl", "google-spec-test.jsonl"]
TOKEN = re.compile(r"[A-Za-z_-]+")


@pytest.mark.parametrize("name", VERDICT_FILES)
def test_verdict_cases_through_can_fetch(name):
    failures = []
    cases = verdict_cases(name)
    for case in cases:
        for raw_urls, expected in [(True, case["allowed"]), (False, case["allowed_escaped"])]:
            rp = robotsieve.RobotsTxt.parse(case["body"], raw_urls=raw_urls)
            got = rp.can_fetch(case["url"], case["agents"])
            if got != expected:
                failures.append(f"{case['id']} (raw_urls={raw_urls}): expected {expected}, got {got}")
    assert not failures, f"{len(failures)} of {2 * len(cases)}:\n" + "\n".join(failures)


@pytest.mark.parametrize("name", VERDICT_FILES)
def test_verdict_cases_through_compile_and_classify(name, tmp_path):
    failures, checked = [], 0
    cases = verdict_cases(name)
    for case in cases:
        # A crawler is compiled by its product tokens; cases that pass other
        # strings test Google's library API, which can_fetch covers above.
        if not all(TOKEN.fullmatch(a) for a in case["agents"]) or "://" not in case["url"]:
            continue
        robots_url = re.match(r"^[a-zA-Z]+://[^/?#]*", case["url"]).group(0) + "/robots.txt"
        records = [{"url": robots_url, "status": 200, "body": case["body"]}]
        out = tmp_path / "case.rsv"
        robotsieve.compile(records, agents=[",".join(case["agents"])], output=out)
        artifact = robotsieve.Artifact(out)
        for raw_urls, expected in [(True, case["allowed"]), (False, case["allowed_escaped"])]:
            got = artifact.classify([case["url"]], agent=",".join(case["agents"]), raw_urls=raw_urls)
            verdict = got["verdict"][0].as_py()
            if verdict != ("allowed" if expected else "disallowed"):
                failures.append(f"{case['id']} (raw_urls={raw_urls}): expected allowed={expected}, got {verdict}")
        checked += 1
    assert checked > len(cases) * 0.9, f"only {checked} of {len(cases)} cases have product tokens"
    assert not failures, f"{len(failures)} failures over {checked} cases:\n" + "\n".join(failures)


def test_origin_cases_through_compile_and_classify(tmp_path):
    failures = []
    cases = conformance_lines("origins.jsonl")
    for i, case in enumerate(cases):
        out = tmp_path / f"origin{i}.rsv"
        try:
            robotsieve.compile([{"url": case["robots_url"], "status": 200, "body": ""}], agents=["anybot"], output=out)
        except robotsieve.CorpusError as e:
            # Not a robots.txt URL: it governs nothing.
            if case["applies"]:
                failures.append(f"{case['robots_url']} -> {case['url']}: compile refused it: {e}")
            continue
        verdict = robotsieve.Artifact(out).classify([case["url"]], agent="anybot")["verdict"][0].as_py()
        applies = verdict != "unknown"
        if applies != case["applies"]:
            failures.append(f"{case['robots_url']} -> {case['url']}: {verdict} ({case['note']})")
    assert not failures, f"{len(failures)} of {len(cases)}:\n" + "\n".join(failures)


def test_status_cases_through_compile_and_classify(tmp_path):
    failures = []
    cases = conformance_lines("status.jsonl")
    for i, case in enumerate(cases):
        robots_url = re.match(r"^[a-zA-Z]+://[^/?#]*", case["url"]).group(0) + "/robots.txt"
        record = {"url": robots_url, "status": case["status"], "body": case["robots"]}
        if case["status"] == 0:
            record["error"] = "timeout"
        agent = ",".join(case["agents"])
        out = tmp_path / f"status{i}.rsv"
        robotsieve.compile([record], agents=[agent], output=out)
        verdict = robotsieve.Artifact(out).classify([case["url"]], agent=agent)["verdict"][0].as_py()
        if verdict != ("allowed" if case["allowed"] else "disallowed"):
            failures.append(f"status {case['status']} {case['url']}: {verdict} ({case['note']})")
    assert not failures, f"{len(failures)} of {len(cases)}:\n" + "\n".join(failures)
