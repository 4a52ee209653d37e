"""Pod logs from the API server (`pods/log`), read incrementally and kept bounded.

Each read asks only for what is new: `sinceTime` at the last timestamp seen (the API takes whole
seconds, so lines of that second already kept are skipped by count) with `timestamps=true`, streamed
line by line. Per pod the reader keeps the first HEAD lines (nccl-tests prints its rank table and the
column header there) and the last TAIL lines (results, failure lines): never a whole log in memory.
Buffers outlive the pod (a failed group's pods are deleted to free the GPUs), up to MAX_PODS of them.

A read the API server could not answer (a 5xx, a throttle, a connection cut mid-log) leaves what was kept, and the next
read goes on from there. A viewer is shown what was kept; the engine, which judges a run by its log, is told the read
failed (`required`), and looks again with backoff, for up to READ_PATIENCE_SECONDS of one log's failing reads: a log
judged from what an outage let through convicted a passing run ("no nccl-tests result rows found").
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from nvcre_tui.engine.api.bodies import pod_status
from nvcre_tui.engine.api.vocabulary import FAILED, SUCCEEDED
from nvcre_tui.engine.parsers.base import split_kubelet_prefix
from nvcre_tui.engine.clock import Clock, SystemClock
from nvcre_tui.engine.store.errors import Invalid, NotFound, StoreError, Timeout, Unavailable
from nvcre_tui.engine.store.kube.answers import Subject
from nvcre_tui.engine.store.kube.lost import lost_because
from nvcre_tui.engine.store.kube.paths import object_path
from nvcre_tui.engine.store.protocol import POD

if TYPE_CHECKING:  # a type only: the runner that imports this module runs simulated runs too, without the client
    from nvcre_tui.engine.store.kube.transport import Transport

__all__ = ["PodLogReader", "PodLog", "PodLogSource"]

HEAD, TAIL, MAX_PODS = 2_000, 20_000, 256
LINE_LIMIT = 64 * 1024  # a longer line is cut (progress bars without newlines)
# Characters kept, besides the line counts: a workload printing long lines (a certification's own image may) would
# otherwise hold HEAD + TAIL lines of LINE_LIMIT each, 1.4 GB a pod, in the one engine every namespace shares.
HEAD_CHARS, TAIL_CHARS, TOTAL_CHARS = 1 << 20, 8 << 20, 256 << 20
READ_TIMEOUT = 30.0
# How long (the reader's clock) a log may fail to be read before the engine judges its run from what was kept: an API
# server or kubelet that is away for minutes is waited out; a node whose kubelet never answers again does not hold the
# run's verdict for ever.
READ_PATIENCE_SECONDS = 300.0


@dataclass
class PodLog:
    """What is kept of one container's log, and where the next read starts."""

    head_limit: int = HEAD
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL))
    head: list[str] = field(default_factory=list)
    head_chars: int = 0
    tail_chars: int = 0
    cursor: datetime | None = None  # the last kubelet timestamp kept
    at_cursor: int = 0              # how many kept lines carry exactly that timestamp
    total: int = 0
    final: bool = False             # read after the container ended: nothing more will come
    unread_since: float | None = None  # clock.monotonic() of the first of the failed reads since the last one that answered

    def add(self, line: str, stamp: datetime | None) -> None:
        if stamp is not None:
            if stamp == self.cursor:
                self.at_cursor += 1
            else:
                self.cursor, self.at_cursor = stamp, 1
        self.total += 1
        if len(self.head) < self.head_limit and self.head_chars + len(line) <= HEAD_CHARS:
            self.head.append(line)
            self.head_chars += len(line)
            return
        if self.tail.maxlen is not None and len(self.tail) == self.tail.maxlen:
            self.tail_chars -= len(self.tail[0])  # the deque drops it
        self.tail.append(line)
        self.tail_chars += len(line)
        while self.tail_chars > TAIL_CHARS and len(self.tail) > 1:
            self.tail_chars -= len(self.tail.popleft())

    @property
    def size(self) -> int:
        """Characters kept."""
        return self.head_chars + self.tail_chars

    def lines(self) -> list[str]:
        return [*self.head, *self.tail]


def by_time(*logs: list[str]) -> list[str]:
    """Several pods' kubelet-timestamped logs as one, in time order (a line without a timestamp keeps its place after
    the line before it; equal times keep the logs' order)."""
    keyed = []
    for source, lines in enumerate(logs):
        stamp: datetime | None = None
        for position, line in enumerate(lines):
            stamp = split_kubelet_prefix(line)[0] or stamp
            keyed.append((stamp.timestamp() if stamp else float("-inf"), source, position, line))
    return [line for *_, line in sorted(keyed)]


class PodLogReader:
    """Reads containers' logs through a KubeStore's connection pool (its Transport)."""

    def __init__(self, transport: Transport, *, head: int = HEAD, tail: int = TAIL, clock: Clock | None = None) -> None:
        self._transport = transport
        self.head, self.tail = head, tail
        self.clock = clock or SystemClock()
        self._logs: OrderedDict[tuple[str, str], PodLog] = OrderedDict()

    @classmethod
    def of_store(cls, store: Any, *, clock: Clock | None = None, **limits: int) -> PodLogReader:
        """The reader sharing a KubeStore's connections, auth and retries."""
        return cls(store._transport, clock=clock, **limits)  # noqa: SLF001 - one pool per process; the store exposes no other handle

    def kept(self, uid: str, container: str) -> list[str] | None:
        """What was read of a pod's log (also after the pod is gone); None when never read."""
        found = self._logs.get((uid, container))
        return found.lines() if found else None

    async def read(self, pod: dict[str, Any], container: str, *, required: bool = False) -> list[str]:
        """The container's log so far (head + tail), fetching only what is new. A pod that is gone or not
        started yet answers with what was kept; so does a read the server failed, unless `required` (the engine is
        to judge the run by it): then the retryable error is raised, for READ_PATIENCE_SECONDS of failing reads."""
        meta = pod["metadata"]
        key = (meta.get("uid") or meta["name"], container)
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = PodLog(head_limit=self.head, tail=deque(maxlen=self.tail))
            while len(self._logs) > MAX_PODS:
                self._logs.popitem(last=False)
        self._logs.move_to_end(key)
        if log.final:
            return log.lines()
        ended = pod_status(pod).get("phase") in (SUCCEEDED, FAILED)
        try:
            await self._fetch(meta["namespace"], meta["name"], container, log)
            log.final = ended
            log.unread_since = None
        except (NotFound, Invalid):
            log.unread_since = None  # the pod is gone, or its container is still waiting to start (400): what was kept
        except StoreError as error:
            if not error.retryable:
                raise
            now = self.clock.monotonic()
            log.unread_since = now if log.unread_since is None else log.unread_since
            if required and now - log.unread_since < READ_PATIENCE_SECONDS:
                raise
        self._within_budget()
        return log.lines()

    def _within_budget(self) -> None:
        """Forget the least recently read logs while all kept hold more than TOTAL_CHARS (the one just read stays)."""
        total = sum(log.size for log in self._logs.values())
        while total > TOTAL_CHARS and len(self._logs) > 1:
            _, oldest = self._logs.popitem(last=False)
            total -= oldest.size

    async def _fetch(self, namespace: str, name: str, container: str, log: PodLog) -> None:
        query = [("container", container), ("timestamps", "true")]
        cursor, already = log.cursor, log.at_cursor
        if cursor is not None:
            query.append(("sinceTime", f"{cursor:%Y-%m-%dT%H:%M:%S}Z"))  # whole seconds, as metav1.Time
        seen = 0

        def take(raw: bytes) -> None:
            nonlocal seen
            line = raw[:LINE_LIMIT].decode("utf-8", errors="replace").rstrip("\r")
            stamp = split_kubelet_prefix(line)[0]
            if cursor is not None and stamp is not None:
                if stamp < cursor:
                    return  # earlier in the cursor's second
                if stamp == cursor and seen < already:
                    seen += 1
                    return  # kept by the last read
            log.add(line, stamp)

        response = await self._transport.open_stream(object_path(POD, name, namespace, "log"), Subject(POD, name, namespace),
                                                     query, READ_TIMEOUT)
        import aiohttp  # here: a simulated run imports this module without the client

        try:
            pending = b""
            async for chunk in response.content.iter_any():
                *complete, pending = (pending + chunk).split(b"\n")
                for raw in complete:
                    take(raw)
                pending = pending[:LINE_LIMIT]
            if pending:
                take(pending)
        except TimeoutError:  # the stream stalled: the lines taken are kept, the next read starts after them
            raise Timeout.about(POD, name, namespace, f"log of container {container}: no data within {READ_TIMEOUT:g}s") from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as error:  # cut mid-log (the line cut is not taken)
            raise Unavailable.about(POD, name, namespace, f"log of container {container}: connection lost while reading "
                                                          f"({lost_because(error)})") from None
        finally:
            self._transport.close_stream(response)


class PodLogSource:
    """The Session's LogSource on a cluster: the run's result pod log, headed by where it comes from."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner  # a KubernetesRunner (logs, log_origin)

    async def lines(self, run: dict[str, Any]) -> list[str]:
        origin = await self.runner.log_origin(run)
        if origin is None:
            return []
        pod, container, node = origin
        # a viewer: what was kept when the server fails a read (the next read goes on from there)
        return [f"==> pod {pod} · container {container} · node {node or '(not scheduled)'}", *await self.runner.logs(run, required=False)]
