"""Following a running log past what the log source keeps (the pod log reader: a fixed head and a sliding
tail, 2,000 + 20,000 lines): the logs screen keeps appending the newest lines, reports a gap when more
arrived between two reads than the source keeps, and a flood of refreshes never cancels a read."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.screens.logs import GAP_LINE, LogsScreen
from nvcre_tui.engine.report.logtail import LogCursor
from nvcre_tui.widgets.log_view import LogLines

from .harness import certification_body, intra_all_reduce

HEAD, TAIL = 2_000, 20_000
JOB = "follow-communication-nccl-all-reduce-group-6-iter-1"


def line(number: int) -> str:
    return f"2026-01-01T00:{number // 60_000 % 60:02d}:{number // 1000 % 60:02d}.{number:09d}Z rank 0 line {number}"


class BoundedSource:
    """A LogSource answering as the pod log reader keeps a log: the first HEAD lines and the last TAIL."""

    def __init__(self) -> None:
        self.total = 0
        self.head: list[str] = []
        self.tail: deque[str] = deque(maxlen=TAIL)
        self.reads = 0
        self.gate: asyncio.Event | None = None  # when set, a read waits for it (a slow API server)

    def write(self, count: int) -> None:
        for _ in range(count):
            (self.head if len(self.head) < HEAD else self.tail).append(line(self.total))
            self.total += 1

    async def lines(self, run: dict[str, Any]) -> list[str]:
        self.reads += 1
        if self.gate is not None:
            await self.gate.wait()
        return [*self.head, *self.tail]


# ---- the cursor alone ------------------------------------------------------------------------------


def test_the_cursor_follows_a_source_that_stopped_growing() -> None:
    source, cursor, shown = BoundedSource(), LogCursor(), []
    for burst in (1_500, 15_000, 5_500, 3, 9_000, 1):  # past 22,000 from the third burst on
        source.write(burst)
        fresh = cursor.advance([*source.head, *source.tail])
        assert not fresh.restart and not fresh.gap
        shown += fresh.lines
    assert shown == [line(n) for n in range(source.total)]  # every line once, in order


def test_more_than_the_tail_between_two_reads_is_a_gap_then_the_newest_lines() -> None:
    source, cursor = BoundedSource(), LogCursor()
    source.write(HEAD + 10)
    cursor.advance([*source.head, *source.tail])
    source.write(TAIL + 500)  # the tail no longer holds the last line shown
    fresh = cursor.advance([*source.head, *source.tail])
    assert fresh.gap and not fresh.restart
    assert fresh.lines == list(source.tail) and fresh.lines[-1] == line(source.total - 1)


def test_another_log_starts_over_and_repeated_lines_never_place_the_cursor() -> None:
    cursor = LogCursor()
    cursor.advance(["same"] * 40 + ["end"])
    assert cursor.advance(["same"] * 40 + ["end", "same", "next"]).lines == ["same", "next"]
    fresh = cursor.advance(["other log", "line 2"])
    assert fresh.restart and fresh.lines == ["other log", "line 2"]
    assert cursor.advance([]).lines == []


# ---- the logs screen ----------------------------------------------------------------------------------


async def _running_app() -> tuple[NvcreApp, BoundedSource]:
    session = await SimSession.open(default_scenario(), None)
    await session.store.create(CERTIFICATION, certification_body(intra_all_reduce("follow")))
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=70)  # the job's run is Running
    source = BoundedSource()
    session.logs = source
    return NvcreApp(session=session, live=False), source


async def test_the_logs_screen_keeps_following_past_22000_kept_lines() -> None:
    app, source = await _running_app()
    async with app.run_test(size=(120, 40)) as pilot:
        source.write(1_000)
        await app.push_screen(LogsScreen(JOB))
        await app.workers.wait_for_complete()
        assert isinstance(app.screen, LogsScreen)
        lines = app.screen.query_one(LogLines)
        for _ in range(6):  # 6 x 5,000 more: the source's answer is capped at 22,000 from the 5th round
            source.write(5_000)
            app.screen.refresh_now()
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert lines.lines[-1] == line(source.total - 1), f"the pane stalled at {source.total} lines"
        assert len([*source.head, *source.tail]) == HEAD + TAIL  # the answer stopped growing long ago
        assert list(lines.lines) == [line(n) for n in range(source.total)]
        assert GAP_LINE not in lines.lines


async def test_refreshes_during_a_slow_read_ask_for_one_more_read_never_cancel_it() -> None:
    app, source = await _running_app()
    async with app.run_test(size=(120, 40)) as pilot:
        source.write(100)
        await app.push_screen(LogsScreen(JOB))
        await app.workers.wait_for_complete()
        assert isinstance(app.screen, LogsScreen)
        lines = app.screen.query_one(LogLines)
        source.gate = asyncio.Event()
        before = source.reads
        for _ in range(50):  # a busy cluster: the snapshot changes again and again while a read waits
            source.write(10)
            app.screen.refresh_now()
            await pilot.pause()
        assert source.reads == before + 1  # one read in flight, not 50 started and cancelled
        source.gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert source.reads == before + 2  # and exactly one more for everything that changed meanwhile
        assert lines.lines[-1] == line(source.total - 1)
