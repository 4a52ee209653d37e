"""The pod-log reader over real HTTP: only what is new is fetched (sinceTime + timestamps), nothing is
read twice even within one second, memory stays bounded (head + tail), and a pod that is gone keeps
what was read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.kube.podlogs import PodLogReader
from nvcre_tui.engine.sim.outputs import kubelet_prefix
from nvcre_tui.engine.store.protocol import POD
from tests.kube.cluster import store_on
from tests.kubeapi import ApiServer

START = datetime(2026, 1, 1, tzinfo=UTC)


def stamped(seconds: float, text: str) -> str:
    return f"{kubelet_prefix(START + timedelta(seconds=seconds))}{text}\n"


@pytest.fixture
async def cluster(tmp_path: Path):
    clock = ManualClock(START)
    server = ApiServer(clock=clock)
    await server.start()
    store = await store_on(server.write_kubeconfig(tmp_path / "kubeconfig"), clock, "nvcre-engine")
    pod = await store.create(POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rank0", "namespace": "default"},
                                   "spec": {"containers": [{"name": "node", "image": "nccl"}, {"name": "side", "image": "x"}]}})
    yield server, store, pod
    await store.close()
    await server.stop()


def log_requests(server: ApiServer) -> list:
    return [r for r in server.requests if r.subresource == "log"]


async def test_reads_only_what_is_new_with_a_since_time_cursor(cluster) -> None:
    server, store, pod = cluster
    reader = PodLogReader.of_store(store)
    text = stamped(0, "first") + stamped(1.25, "second") + stamped(1.5, "third")
    server.set_pod_log("default", "rank0", text, container="node")
    assert [line.split(" ", 1)[1] for line in await reader.read(pod, "node")] == ["first", "second", "third"]
    # Two more lines, one in the same second as the last one read (sinceTime has whole seconds).
    server.set_pod_log("default", "rank0", text + stamped(1.75, "fourth") + stamped(3, "fifth"), container="node")
    lines = await reader.read(pod, "node")
    assert [line.split(" ", 1)[1] for line in lines] == ["first", "second", "third", "fourth", "fifth"]
    first, second = log_requests(server)
    assert "sinceTime" not in first.query and first.query.get("timestamps") == "true" and first.query.get("container") == "node"
    assert second.query.get("sinceTime") == "2026-01-01T00:00:01Z"


async def test_keeps_a_bounded_head_and_tail(cluster) -> None:
    server, store, pod = cluster
    reader = PodLogReader.of_store(store, head=3, tail=4)
    server.set_pod_log("default", "rank0", "".join(stamped(i, f"line {i}") for i in range(100)), container="node")
    lines = await reader.read(pod, "node")
    assert [line.split(" ", 1)[1] for line in lines] == ["line 0", "line 1", "line 2", "line 96", "line 97", "line 98", "line 99"]


async def test_a_deleted_pod_keeps_what_was_read_and_a_finished_one_is_not_read_again(cluster) -> None:
    server, store, pod = cluster
    reader = PodLogReader.of_store(store)
    server.set_pod_log("default", "rank0", stamped(0, "done"), container="node")
    finished = {**pod, "status": {"phase": "Succeeded"}}
    assert len(await reader.read(finished, "node")) == 1
    assert len(await reader.read(finished, "node")) == 1
    assert len(log_requests(server)) == 1  # a finished container's log is complete once read
    await store.delete(POD, "rank0", "default")
    assert len(await reader.read(pod, "node")) == 1  # gone: what was kept
    assert reader.kept(pod["metadata"]["uid"], "node") is not None


def test_long_lines_are_bounded_by_characters_not_only_by_count() -> None:
    """A workload printing 64 KiB lines held HEAD + TAIL of them, 1.4 GB a pod, in the one engine all namespaces share."""
    from collections import deque

    from nvcre_tui.engine.kube.podlogs import HEAD, HEAD_CHARS, LINE_LIMIT, TAIL, TAIL_CHARS, PodLog

    log = PodLog(head_limit=HEAD, tail=deque(maxlen=TAIL))
    line = "x" * LINE_LIMIT
    for _ in range(600):
        log.add(line, None)
    assert log.head_chars <= HEAD_CHARS and log.tail_chars <= TAIL_CHARS and log.size == sum(map(len, log.lines()))
    assert log.total == 600 and log.lines()[-1] == line  # the end is kept: results and failures print there
    short = PodLog(head_limit=3, tail=deque(maxlen=2))
    for index in range(10):
        short.add(f"line {index}", None)
    assert short.lines() == ["line 0", "line 1", "line 2", "line 8", "line 9"] and short.size == 30


def test_the_logs_of_every_pod_together_stay_within_their_budget() -> None:
    from collections import deque

    from nvcre_tui.engine.kube.podlogs import TOTAL_CHARS, PodLog, PodLogReader

    reader = PodLogReader(None)  # type: ignore[arg-type]  # no reads: only what it keeps
    big = "y" * (TOTAL_CHARS // 30)  # one string, held by every log: the budget counts characters, the test allocates once
    for index in range(40):
        log = reader._logs[(f"pod-{index}", "node")] = PodLog(head_limit=0, tail=deque(maxlen=10))
        log.add(big, None)
    reader._within_budget()
    assert sum(log.size for log in reader._logs.values()) <= TOTAL_CHARS and ("pod-39", "node") in reader._logs
    assert ("pod-0", "node") not in reader._logs  # the least recently read go first


async def test_a_read_the_server_fails_or_cuts_is_raised_to_the_engine_kept_for_a_viewer_and_resumed_without_repeats(cluster) -> None:
    """A log read answered 503, or cut mid-log, was judged as the whole log (the cut one raised aiohttp's own error): a
    passing run failed "no result rows" or ReconcileError. The engine (`required`) is now told the read failed, a viewer
    gets what was kept; the next read goes on after the last whole line, and past READ_PATIENCE_SECONDS of failing
    reads the engine too gets what was kept (a kubelet that never answers again does not hold a verdict for ever)."""
    from nvcre_tui.engine.kube.podlogs import READ_PATIENCE_SECONDS
    from nvcre_tui.engine.store.errors import RetryableError
    from tests.kubeapi import Fault

    server, store, pod = cluster
    clock = ManualClock(START)
    reader = PodLogReader.of_store(store, clock=clock)
    text = "".join(stamped(i, f"line {i}") for i in range(6))
    server.set_pod_log("default", "rank0", text, container="node")
    server.faults.add(Fault(method="GET", path=r"/log$", cut_body_after=len(stamped(0, "line 0")) * 2 + 5, times=1))
    # said in words: it was aiohttp's repr, `(Response payload is not completed: <TransferEncodingError: 400, ...>)`
    with pytest.raises(RetryableError, match=r": log of container node: connection lost while reading \(the connection closed "
                                             r"before the answer ended\)$"):
        await reader.read(pod, "node", required=True)
    server.faults.add(Fault(method="GET", path=r"/log$", status=503, times=1))
    assert [line.split(" ", 1)[1] for line in await reader.read(pod, "node")] == ["line 0", "line 1"]  # a viewer: kept
    assert [line.split(" ", 1)[1] for line in await reader.read(pod, "node", required=True)] == [f"line {i}" for i in range(6)]
    server.faults.add(Fault(method="GET", path=r"/log$", status=500))
    with pytest.raises(RetryableError):
        await reader.read(pod, "node", required=True)
    clock.advance(READ_PATIENCE_SECONDS)
    assert len(await reader.read(pod, "node", required=True)) == 6
