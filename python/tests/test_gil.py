"""Artifact.classify releases the GIL while the engine works: another Python
thread makes progress during the native call. A control that holds the GIL
as long (list.sort of many floats) shows the same harness reporting none.

The harness needs no timing threshold: the switch interval is raised so far
that a thread holding the GIL never hands it over on its own, so the counter
thread can only run inside the call when the call releases the GIL, and then
it runs there on any machine that schedules it at all (the call is retried on
a larger input until it has)."""

import random
import sys
import threading
import time

import pyarrow as pa
import pytest

import robotsieve

BODY = "User-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\n"
HOSTS = 64


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("gil") / "rules.rsv"
    records = [{"url": f"https://h{i}.example/robots.txt", "status": 200, "body": BODY} for i in range(HOSTS)]
    robotsieve.compile(records, agents=["mybot"], output=out)
    return robotsieve.Artifact(out)


def urls(n):
    paths = ["/", "/private/x", "/private/open/y", "/doc.pdf", "/a/b/c?q=1"]
    return pa.array([f"https://h{i % HOSTS}.example{paths[i % len(paths)]}" for i in range(n)])


class Counter:
    """A thread that, as often as it gets the GIL, counts the times it finds
    ``inside`` set; it gives the GIL up after each look (time.sleep(0)), so
    the main thread always gets it back."""

    def __init__(self):
        self.inside = False
        self.during = 0
        self.looks = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop:
            self.looks += 1
            if self.inside:
                self.during += 1
            time.sleep(0)

    def around(self, call):
        """Runs ``call()`` with ``inside`` set; how many looks fell inside it."""
        before = self.during
        self.inside = True
        call()
        self.inside = False
        return self.during - before


@pytest.fixture
def counter():
    interval = sys.getswitchinterval()
    # A GIL holder keeps the GIL for up to 1000 s: no forced switch in a test.
    sys.setswitchinterval(1000.0)
    c = Counter()
    c.thread.start()
    while c.looks == 0:  # the counter runs (the main thread gives the GIL up here)
        time.sleep(0.001)
    try:
        yield c
    finally:
        c.stop = True
        c.thread.join()
        sys.setswitchinterval(interval)


def native_call(artifact, array):
    """The engine's part of classify: the native method, its arguments made beforehand."""
    schema, capsule = array.__arrow_c_array__()
    return lambda: artifact._native.classify_arrow(schema, capsule, "mybot", 1, False, False)


def test_classify_lets_another_thread_run_during_the_call(artifact, counter):
    n = 50_000
    progress = []
    for _ in range(8):
        array = urls(n)
        progress.append((n, counter.around(native_call(artifact, array))))
        if progress[-1][1] > 0:
            break
        n *= 2
    assert progress[-1][1] > 0, f"the other thread never ran during classify: {progress}"
    # The call still answers: every URL classified, in order.
    verdicts = artifact.classify(urls(10), agent="mybot").column("verdict").to_pylist()
    assert verdicts[:5] == ["allowed", "disallowed", "allowed", "disallowed", "allowed"]
    print(f"the counter thread looked {progress[-1][1]} times during classify of {progress[-1][0]} URLs")


def test_the_harness_sees_no_progress_while_a_call_holds_the_gil(counter):
    """The control: list.sort of floats runs in C holding the GIL all along;
    the counter never looks inside it, however long it takes."""
    for size in (200_000, 400_000, 800_000):
        numbers = [random.random() for _ in range(size)]
        assert counter.around(numbers.sort) == 0
