"""LogView and LogsScreen: the nccl-tests log of a simulated job, search, follow/wrap/time toggles, save,
a tiny ring buffer that drops lines, a running job's tail, and 100,000 lines rendered a screen at a time."""

from __future__ import annotations

import asyncio
import copy
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input, Static

import nvcre_tui.widgets.log_lines as log_view_module
from nvcre_tui.app import NvcreApp
from nvcre_tui.engine.session import SimSession
from nvcre_tui.engine.sim.scenario import default_scenario
from nvcre_tui.engine.store.protocol import CERTIFICATION, JOB, WORKLOADRUN
from nvcre_tui.screens.logs import LogsScreen
from nvcre_tui.widgets.log_view import LogLines, LogView, SavePrompt

from .harness import certification_body, intra_all_reduce, reopen, save_finished

INTRA_ALL_REDUCE = intra_all_reduce("logs")
WORKFLOW = "logs-communication-nccl-all-reduce"
SLOW_JOB = f"{WORKFLOW}-group-6-iter-1"  # group-6 is gpu-node-07 (groups follow node order)
NCCL_ROW = re.compile(r"^\s+\d+\s+\d+\s+float\s+sum\s")


@pytest.fixture(scope="module")
def finished_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The settled simulator saved once; each test reopens a private copy. Beside it, `pristine.json`, a copy no test
    opens in place: a session on it holds the engine itself, where one on the file other tests opened may be a viewer
    (its header says who holds the engine, a process id)."""
    saved = save_finished(tmp_path_factory.mktemp("logs") / "state.json", INTRA_ALL_REDUCE)
    shutil.copyfile(saved, saved.with_name("pristine.json"))
    return saved



async def open_app(state: Path) -> NvcreApp:
    session = await SimSession.open(default_scenario(), state)
    session.path = None  # never write back to the shared state file
    return NvcreApp(session=session, live=False)


async def show_logs(app: NvcreApp, pilot: Pilot[None], job: str = SLOW_JOB, **options: Any) -> LogLines:
    await app.push_screen(LogsScreen(job, **options))
    await app.workers.wait_for_complete()
    await pilot.pause()
    return app.screen.query_one(LogLines)


async def runner_lines(app: NvcreApp, job: str = SLOW_JOB) -> list[str]:
    assert isinstance(app.session, SimSession) and app.snapshot is not None
    run = app.snapshot.run_of(job)
    assert run is not None
    return await app.session.runner.logs(run)


def visible(lines: LogLines) -> list[str]:
    return [lines.render_line(y).text.rstrip() for y in range(lines.size.height)]


def status(app: App[Any]) -> str:
    return str(app.screen.query_one("#log-status", Static).render())


# ---- the logs screen on a finished job -------------------------------------------------------------


async def test_finished_job_shows_its_whole_log_following_the_end(finished_state: Path) -> None:
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        expected = await runner_lines(app)
        assert list(lines.lines) == expected
        header = str(app.screen.query_one("#logs-header", Static).render())
        assert SLOW_JOB in header and "Succeeded" in header and "gpu-node-07" in header
        shown = visible(lines)
        assert sum(bool(NCCL_ROW.match(row)) for row in shown) > 10  # the table, timestamps hidden
        assert any(row.startswith("# Avg bus bandwidth") for row in shown)  # following: the footer is in view
        assert lines.follow and lines.is_vertical_scroll_end
        assert status(app).startswith(f"{len(expected)} lines · 0 dropped · ● follow on · ○ wrap off")
        cleared: list[int] = []
        clear = lines.clear

        def counted_clear() -> None:
            cleared.append(lines.line_count)
            clear()

        lines.clear = counted_clear  # type: ignore[method-assign]
        assert app.snapshot is not None and isinstance(app.screen, LogsScreen)
        app.screen.show(app.snapshot)  # the same run again: nothing to reload
        rerun = copy.deepcopy(app.snapshot)
        run = rerun.run_of(SLOW_JOB)
        assert run is not None
        run["metadata"]["uid"] = "another-run"
        app.screen.show(rerun)  # a new run under the same name: the pane starts over
        await app.workers.wait_for_complete()
        assert cleared == [len(expected)] and list(lines.lines) == expected
        await pilot.press("escape")
        assert not isinstance(app.screen, LogsScreen)


async def test_search_jumps_to_matches_and_cycles_with_n(finished_state: Path) -> None:
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        query = "17179869184"  # the largest size: one row per cycle
        expected = [i for i, line in enumerate(lines.lines) if query in line]
        assert len(expected) >= 2
        await pilot.press("home", "slash")
        app.screen.query_one("#log-search", Input).value = query
        await pilot.press("enter")
        assert isinstance(app.focused, LogLines)
        assert (lines.match_count, lines.match_position, lines.current_line) == (len(expected), 1, expected[0])
        assert not lines.follow  # a jump pauses following
        assert any(query in row for row in visible(lines))
        assert f"match 1/{len(expected)} “{query}”" in status(app)
        await pilot.press("n")
        assert (lines.match_position, lines.current_line) == (2, expected[1])
        await pilot.press("N", "N")  # back to the first, then around to the last
        assert (lines.match_position, lines.current_line) == (len(expected), expected[-1])
        await pilot.press("slash", "enter")  # the prompt keeps the query: enter again goes on to the next
        assert (lines.match_position, lines.current_line) == (1, expected[0])
        row = next(y for y in range(lines.size.height) if query in lines.render_line(y).text)
        highlighted = [s for s in lines.render_line(row) if s.text == query]
        assert highlighted and highlighted[0].style is not None and highlighted[0].style.reverse


async def test_an_invalid_regex_is_searched_as_text_and_a_miss_is_reported(finished_state: Path) -> None:
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        assert lines.search("(out-of-place") == sum("(out-of-place" in line for line in lines.lines) == 0
        assert lines.search("[0x18") == sum("[0x18" in line for line in lines.lines) > 0
        assert lines.search("no such text anywhere") == 0
        assert lines.match_position == 0 and "match 0/0" in lines.status().plain


async def test_follow_pauses_on_scroll_up_and_resumes_with_s_or_end(finished_state: Path) -> None:
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        await pilot.press("up")
        assert not lines.follow and "○ follow off" in status(app)
        await pilot.press("end")
        assert lines.follow and lines.is_vertical_scroll_end
        await pilot.press("pageup", "s")
        assert lines.follow and lines.is_vertical_scroll_end
        await pilot.press("s")
        assert not lines.follow


async def test_wrap_and_timestamps_toggle(finished_state: Path) -> None:
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        await pilot.press("t")
        # the simulator's stamps are sim time, said so, each its time of day: its date read as a real one
        assert lines.timestamps and all(re.match(r"\d\d:\d\d:\d\d\.\d+Z ", row) for row in visible(lines) if row), visible(lines)
        assert "● sim time on" in status(app) and "2026-" not in "".join(visible(lines))
        longest = max(len(line) for line in lines.lines) - len("2026-01-01T")
        assert longest > lines.size.width and lines.virtual_size.width == longest
        await pilot.press("w")
        await pilot.pause()
        assert lines.wrap and "● wrap on" in status(app)
        assert lines.virtual_size.width < lines.size.width  # no horizontal scrolling while wrapped
        assert lines.virtual_size.height > lines.line_count  # long lines take two rows
        assert lines.follow and lines.is_vertical_scroll_end
        shown = visible(lines)
        assert shown[-1] == lines.lines[-1].removeprefix("2026-01-01T")  # the last line is on the bottom row
        await pilot.press("w", "t")
        await pilot.pause()
        assert not lines.wrap and lines.virtual_size.height == lines.line_count
        assert not any(row.startswith("2026-") for row in visible(lines))


async def test_ctrl_s_saves_every_buffered_line(finished_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SavePrompt)
        assert app.screen.query_one(Input).value == f"{SLOW_JOB}.log"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen)
        saved = (tmp_path / f"{SLOW_JOB}.log").read_text(encoding="utf-8")
        assert saved.splitlines() == list(lines.lines) == await runner_lines(app)  # raw: timestamps kept


async def test_an_unwritable_save_path_is_a_message_not_a_crash(finished_state: Path, tmp_path: Path) -> None:
    app = await open_app(finished_state)
    messages: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await show_logs(app, pilot)
        original = app.notify

        def notify(message: str, **kw: Any) -> None:
            messages.append(message)
            original(message, **kw)

        app.notify = notify  # type: ignore[method-assign]
        await pilot.press("ctrl+s")
        await pilot.pause()
        target = tmp_path / "missing-dir" / "x.log"
        app.screen.query_one(Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, LogsScreen) and not target.exists()
        assert any(m.startswith(f"cannot save to {target}") for m in messages)


async def test_a_tiny_buffer_keeps_the_tail_and_counts_the_drops(finished_state: Path) -> None:
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot, max_lines=50)
        expected = await runner_lines(app)
        assert list(lines.lines) == expected[-50:]
        assert lines.dropped == len(expected) - 50
        assert f"50 lines · {len(expected) - 50} dropped" in status(app)


# ---- a running job: only the new tail is appended --------------------------------------------------


async def test_a_running_job_appends_only_the_new_tail() -> None:
    session = await SimSession.open(default_scenario(), None)
    await session.store.create(CERTIFICATION, certification_body(INTRA_ALL_REDUCE))
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=70)  # scheduled at 5 s, rows from 50 s
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        first = await runner_lines(app)
        assert "Running" in str(app.screen.query_one("#logs-header", Static).render())
        assert list(lines.lines) == first and any(NCCL_ROW.match(log_view_module.strip_kubelet_prefix(x)) for x in first)
        batches: list[list[str]] = []
        append = lines.append_lines

        def append_lines(lines: Iterable[str]) -> None:  # named as the method's own parameter
            batches.append(list(lines))
            append(lines)

        lines.append_lines = append_lines  # type: ignore[method-assign]
        await session.engine.run_until_settled(max_seconds=20)
        assert isinstance(app.screen, LogsScreen)
        app.screen.refresh_now()  # what each snapshot change (or the live poll) does
        await app.workers.wait_for_complete()
        await pilot.pause()
        second = await runner_lines(app)
        assert len(second) > len(first) and second[: len(first)] == first
        assert batches == [second[len(first) :]]
        assert list(lines.lines) == second


async def test_a_job_with_no_output_yet_says_why_and_that_it_will_come() -> None:
    session = await SimSession.open(default_scenario(), None)
    await session.store.create(CERTIFICATION, certification_body(INTRA_ALL_REDUCE))
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=1)  # scheduled at 5 s, first output near 50 s of running

    async def advance(seconds: float) -> None:
        assert session.engine is not None
        await session.engine.run_until_settled(max_seconds=seconds)
        await app.refresh_snapshot()
        assert isinstance(app.screen, LogsScreen)
        app.screen.refresh_now()  # what the live poll does while the snapshot stays the same
        await app.workers.wait_for_complete()
        await pilot.pause()

    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        assert "Scheduling" in str(app.screen.query_one("#logs-header", Static).render())
        # why, as its Job says it (on a cluster: which controller makes no pod, and when the Job fails), on its own rows
        assert visible(lines)[:3] == ["No output yet: the run is Scheduling; its pods have not started.",
                                      "Why: scheduling 1 pod(s); it fails in 4m59s, after 5m00s of this", "Its output will appear here as it comes."]
        assert status(app).startswith("0 lines · 0 dropped")
        await advance(10)
        assert "Running" in str(app.screen.query_one("#logs-header", Static).render()) and lines.line_count == 0
        assert visible(lines)[:2] == ["No output yet: the run is Running and has printed nothing so far.", "Its output will appear here as it comes."]
        await advance(60)
        assert lines.line_count and list(lines.lines) == await runner_lines(app)
        assert not any("No output" in row for row in visible(lines))


async def test_a_running_simulated_run_read_without_the_fleet_promises_no_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """A console that does not play the fleet (a cluster's --sim-runner run, this console without it) said the run's
    output comes only with --sim-runner, then "Its output will appear here as it comes.", which it never does there.
    (This console plays the fleet: `plays_the_fleet` answers as one that does not would.)"""
    import nvcre_tui.screens.logs as logs_screen

    session = await SimSession.open(default_scenario(), None)
    await session.store.create(CERTIFICATION, certification_body(INTRA_ALL_REDUCE))
    assert session.engine is not None
    await session.engine.run_until_settled(max_seconds=11)  # Running, nothing printed yet (first output near 50 s)
    monkeypatch.setattr(logs_screen, "plays_the_fleet", lambda _session: False)
    app = NvcreApp(session=session, live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        assert "Running" in str(app.screen.query_one("#logs-header", Static).render()) and lines.line_count == 0
        shown = " ".join(visible(lines))
        assert "a simulated run, whose output only --sim-runner makes" in shown, shown
        assert "will appear" not in shown, shown


# ---- LogView alone: ring buffer, splitting, 100,000 lines ------------------------------------------


class LogApp(App[None]):
    def __init__(self, max_lines: int = log_view_module.DEFAULT_MAX_LINES, simulated: bool = False) -> None:
        super().__init__()
        self.max_lines, self.simulated = max_lines, simulated

    def compose(self) -> ComposeResult:
        yield LogView(max_lines=self.max_lines, simulated=self.simulated)


@pytest.mark.parametrize("simulated", [True, False])
async def test_simulated_stamps_say_sim_time_their_first_day_left_out(simulated: bool) -> None:
    """`t` showed a simulated run's stamps as real dates (2026-01-01T00:07:44...) under a header saying sim time. On a
    simulated clock each is its time of day, the status says `sim time`, and a later day's stamp stays whole (a time of
    day alone would read as the first day's); a real log's stamps are as the kubelet wrote them."""
    app = LogApp(simulated=simulated)
    async with app.run_test(size=(80, 8)) as pilot:
        lines = app.query_one(LogLines)
        lines.focus()
        raw = ["no stamp here", "2026-01-01T23:59:59.5Z last of the day", "2026-01-02T00:00:01.25Z next day"]
        lines.append_lines(raw)
        await pilot.press("t")
        await pilot.pause()
        rows = [row for row in visible(lines) if row]
        if simulated:
            assert rows == ["no stamp here", "23:59:59.5Z last of the day", "2026-01-02T00:00:01.25Z next day"], rows
            assert "● sim time on" in status(app)
        else:
            assert rows == raw and "● time on" in status(app) and "sim time" not in status(app)
        lines.clear()
        lines.append_lines(["2026-01-02T00:00:02Z again"])  # a new log: its own first day
        await pilot.pause()
        assert [row for row in visible(lines) if row] == ["00:00:02Z again" if simulated else "2026-01-02T00:00:02Z again"]


def synthetic(count: int) -> Iterator[str]:
    return (f"2026-01-01T00:00:00.000000000Z line {i:06d} {'x' * (i * 7919 % 150)}" for i in range(count))


async def test_batches_split_lines_replace_controls_and_drop_beyond_the_ring() -> None:
    app = LogApp(max_lines=5)
    async with app.run_test(size=(80, 12)) as pilot:
        lines = app.query_one(LogLines)
        lines.append_lines(["one\ntwo\r\n", "three\x1b[31m"])
        lines.append_lines([f"n{i}" for i in range(6)])
        await pilot.pause()
        assert list(lines.lines) == ["n1", "n2", "n3", "n4", "n5"]
        assert (lines.dropped, lines.line_count) == (4, 5)
        lines.clear()
        lines.append_lines(["tab\there", "bell\x07"])
        await pilot.pause()
        assert [lines.render_line(y).text.rstrip() for y in range(2)] == ["tab     here", "bell\ufffd"]


async def test_a_search_forgets_matches_that_leave_the_ring() -> None:
    app = LogApp(max_lines=10)
    async with app.run_test(size=(80, 12)) as pilot:
        lines = app.query_one(LogLines)
        lines.append_lines(f"{'hit' if i % 3 == 0 else 'miss'} {i}" for i in range(10))
        assert lines.search("hit") == 4  # 0 3 6 9
        lines.append_lines(f"miss {i}" for i in range(10, 15))  # 0 and 3 leave the ring
        await pilot.pause()
        assert lines.match_count == 2
        lines.action_match(1)
        assert lines.lines[lines.current_line or 0] in ("hit 6", "hit 9")


@pytest.mark.parametrize("wrap", [False, True])
async def test_100k_lines_render_one_screen_at_a_time(wrap: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    total = 100_000
    app = LogApp()
    async with app.run_test(size=(120, 40)) as pilot:
        lines = app.query_one(LogLines)
        lines.focus()
        lines.wrap = wrap
        lines.append_lines(synthetic(total))
        await pilot.pause()
        height = lines.size.height
        assert lines.line_count == total and lines.dropped == 0
        assert "line 099999" in "".join(visible(lines))
        calls = 0
        display = log_view_module._display

        def counting(line: str, timestamps: bool, day: str | None = None) -> str:
            nonlocal calls
            calls += 1
            return display(line, timestamps, day)

        monkeypatch.setattr(log_view_module, "_display", counting)
        await pilot.press("pageup")
        await pilot.pause()
        shown = "".join(visible(lines))
        assert not lines.follow and "line 099999" not in shown
        assert re.search(r"line 0999[0-9]{2}", shown)
        await pilot.press("pageup", "pageup")
        await pilot.pause()
        assert calls <= 4 * height  # only lines that reached the screen were rendered, never the whole log
        assert len(lines._cache) <= log_view_module.CACHED_LINES


# ---- snapshot ------------------------------------------------------------------------------------------


def test_snapshot_logs_screen(snap_compare: Any, finished_state: Path) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.pause()
        await pilot.app.push_screen(LogsScreen(SLOW_JOB))
        await pilot.app.workers.wait_for_complete()
        await pilot.press("slash", *"busbw", "enter")
        await pilot.pause()

    session = asyncio.run(reopen(finished_state.with_name("pristine.json")))
    assert session.engine is not None  # not a viewer: the header says no process id
    assert snap_compare(NvcreApp(session=session, live=False), terminal_size=(120, 40), run_before=run_before)


async def test_saving_over_an_existing_file_asks_first(finished_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nvcre_tui.widgets.log_view import ConfirmOverwrite

    monkeypatch.chdir(tmp_path)
    existing = tmp_path / f"{SLOW_JOB}.log"
    existing.write_text("keep me\n")
    app = await open_app(finished_state)
    async with app.run_test(size=(120, 40)) as pilot:
        lines = await show_logs(app, pilot)
        for answer, expected in (("n", "keep me\n"), ("escape", "keep me\n"), ("y", None)):
            await pilot.press("ctrl+s")
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmOverwrite)
            await pilot.press(answer)
            await pilot.pause()
            assert isinstance(app.screen, LogsScreen)
            if expected is not None:
                assert existing.read_text() == expected
        assert existing.read_text().splitlines() == list(lines.lines)
        assert sorted(p.name for p in tmp_path.iterdir()) == [existing.name]  # no temporary file left


async def test_log_text_reaches_the_screen_neutralised() -> None:
    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield LogLines()

    app = Host()
    async with app.run_test(size=(80, 10)) as pilot:
        lines = app.query_one(LogLines)
        lines.append_lines(["plain", "osc \x1b]0;owned\x07 csi \x1b[2J c1 \x9b31m bidi \u202e"])
        await pilot.pause()
        shown = "".join(segment.text for y in range(2) for segment in lines.render_line(y))
        assert "plain" in shown and "owned" in shown
        assert not any(c in shown for c in "\x1b\x07\x9b\u202e")


class GoneLogs:
    """A cluster's log source once a failed run's pods were deleted: nothing left to read."""

    async def lines(self, run: dict[str, Any]) -> list[str]:
        return []


async def test_a_run_whose_pods_are_gone_shows_the_tail_its_job_kept(finished_state: Path) -> None:
    app = await open_app(finished_state)
    assert isinstance(app.session, SimSession)
    tail = "NCCL WARN NET/IB : Got completion from peer with error 12\nTest NCCL failure common.cu:1279"
    log = {"podName": "p-launcher", "nodeName": "gpu-node-07", "exitCode": 1, "reason": "WorkloadFailed", "tail": tail}
    await app.session.store.patch_status(JOB, SLOW_JOB, "default", {"failureLog": log})
    app.session.logs = GoneLogs()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.refresh_snapshot()
        lines = await show_logs(app, pilot)
        assert list(lines.lines)[1:] == tail.splitlines()
        assert "the run's pods are gone" in lines.lines[0] and "p-launcher on gpu-node-07" in lines.lines[0]


async def test_a_run_that_never_made_a_pod_reads_as_its_reason_with_no_exit_code(finished_state: Path) -> None:
    """A run that never created a pod (the API server refused its workload) has no exit code: its header names the
    reason alone, never `exit 1` (which reads like a crash) nor `exit -`."""
    app = await open_app(finished_state)
    assert isinstance(app.session, SimSession) and app.snapshot is None
    async with app.run_test(size=(120, 40)) as pilot:
        await app.refresh_snapshot()
        assert app.snapshot is not None
        run = app.snapshot.run_of(SLOW_JOB)
        assert run is not None
        refused = {"phase": "Failed", "reason": "WorkloadNotCreated", "completionTime": run["status"]["completionTime"],
                   "message": 'TrainJob "x" is invalid: spec.podTemplateOverrides[0]: Invalid value'}
        await app.session.store.update_status(WORKLOADRUN, {**await app.session.store.get(WORKLOADRUN, run["metadata"]["name"], "default"),
                                                            "status": refused})
        await app.refresh_snapshot()
        await show_logs(app, pilot)
        header = str(app.screen.query_one("#logs-header", Static).render())
        assert "✗ Failed (WorkloadNotCreated)" in header and "exit" not in header, header
