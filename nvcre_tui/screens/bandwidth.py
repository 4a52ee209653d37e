"""Bandwidth of one nccl-tests Workflow: (a) busbw against message size per group, read from each
finished run's log with the real parser; (b) busBandwidthGBps over nodes (single-node jobs) or groups,
from the Jobs' measurements, with low outliers named.

With more than four groups the plot shows the chosen group against the median of all groups. The chooser
starts on the lowest group. A finished log never changes, so each one is parsed once.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from nvcre_tui.engine.api.bodies import MeasurementSpec, group_nodes, job_label, job_status, job_template_spec, labels_of, measurement_of, run_status
from nvcre_tui.engine.api.vocabulary import FAILED, LABEL_DOMAIN, LABEL_GROUP, LABEL_ITERATION, LABEL_VARIANT, PHASE_GLYPHS, SUCCEEDED
from nvcre_tui.engine.judging.thresholds import ThresholdError, compile_threshold
from nvcre_tui.engine.judging.measure import stored_value
from nvcre_tui.engine.grants import with_grant
from nvcre_tui.engine.parsers import ParseError, parse_nccl
from nvcre_tui.engine.parsers.measurements import BANDWIDTH_UNIT, BUS_BANDWIDTH
from nvcre_tui.engine.controllers.iterations import job_groups
from nvcre_tui.engine.report.model import cut_short, not_measured_said
from nvcre_tui.engine.report.nodestates import job_outcome
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.screens.base import NO_COMMAND_BAR, NvcreScreen, error_said
from nvcre_tui.widgets.bandwidth import MEDIAN_GLYPH, OUTLIER_GLYPH, SERIES_GLYPHS, BandwidthHistogram, BandwidthPlot, Outlier, Series, find_outliers, size_label
from nvcre_tui.widgets.detail import shown_measurement
from nvcre_tui.widgets.rack_layout import natural_key

Obj = dict[str, Any]
FINISHED = (SUCCEEDED, FAILED)


@dataclass(frozen=True)
class JobRow:
    """One job of the Workflow as the chooser and the histogram see it."""

    job: str
    label: str
    value: float | None  # the Job's measured busBandwidthGBps (None: not measured)
    run: Obj | None
    finished: bool
    single_node: bool
    outcome: str  # the Job's outcome (nodestates.job_outcome): its ✓/✗ in the chooser, as every screen says it
    shown: str  # `value` on its side of the threshold that judged it (detail.shown_measurement); "" when not measured
    cut_short: str | None = None  # its group's reason where its run measured no whole one (model.cut_short): no value


def job_rows(snapshot: Snapshot, workflow_name: str) -> list[JobRow]:
    """The Workflow's jobs, labelled by node (single-node jobs) or group, `#n` added to a group's run that iterations
    repeat (a diagnose test, named for its round, never is)."""
    jobs = snapshot.jobs_of(workflow_name)
    runs = Counter(labels_of(j).get(LABEL_GROUP) for j in jobs)
    workflow = next((wf for wf in snapshot.workflows if wf["metadata"]["name"] == workflow_name), None)
    threshold = (job_template_spec(workflow).get("thresholds") or {}).get(BUS_BANDWIDTH) if workflow is not None else None
    groups = job_groups(workflow) if workflow is not None else {}  # how each Job's group ended: a whole run's value, or none
    rows = []
    for job in jobs:
        meta = job["metadata"]
        nodes = group_nodes(job)
        labels = labels_of(job)
        label = job_label(job)
        if runs[labels.get(LABEL_GROUP)] > 1:
            label += f" #{labels.get(LABEL_ITERATION)}"
        run = snapshot.run_of(meta["name"])
        value = (job_status(job).get("measurements") or {}).get(BUS_BANDWIDTH)
        group = groups.get(meta["name"])
        # a run cut short (a crash, a timeout) measured part of a sweep: no value of the spread, its reason said instead
        cut = cut_short(group) if group is not None else None
        usable = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and cut is None
        measured = float(value) if usable and value is not None else None
        shown = shown_measurement(BUS_BANDWIDTH, measured, job_status(job).get("evidence"), threshold) if measured is not None else ""
        rows.append(JobRow(meta["name"], label, measured, run, run_status(run or {}).get("phase") in FINISHED, len(nodes) == 1,
                           job_outcome(job), shown, cut))
    return sorted(rows, key=lambda row: (natural_key(row.label), row.label))


def median_curve(curves: list[dict[int, float]]) -> dict[int, float]:
    """Per message size, the median busbw over the curves that have that size."""
    sizes = sorted({size for curve in curves for size in curve})
    return {size: statistics.median(c[size] for c in curves if size in c) for size in sizes}


CHOOSER_TEXT = 28  # the chooser's text width before its first layout (its 34 columns less border, padding, scrollbar)


class BandwidthScreen(NvcreScreen):
    """Bus bandwidth of one Workflow: curves by message size, spread over nodes or groups, outliers."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="bandwidth.back"), NO_COMMAND_BAR]
    DEFAULT_CSS = """
    BandwidthScreen #bw-title { height: auto; padding: 0 1; border-bottom: solid $panel; }
    BandwidthScreen #bw-groups { width: 34; height: 1fr; }
    BandwidthScreen #bw-body { width: 1fr; padding: 0 1; }
    BandwidthScreen .note { color: $text-muted; }
    """

    def __init__(self, workflow_name: str) -> None:
        super().__init__()
        self.workflow_name = workflow_name
        self._rows: list[JobRow] = []
        self._outliers: list[Outlier] = []
        self._curves: dict[str, dict[int, float]] = {}  # job -> size -> out-of-place busbw
        self._curve_errors: dict[str, str] = {}
        self._selected: str | None = None
        self._expression: str | None = None  # the Workflow's busBandwidthGBps expression
        self._uid: str | None = None  # the uid of the Workflow shown, once seen (one made again later is another one)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="bw-title")
        with Horizontal():
            yield OptionList(id="bw-groups")
            with VerticalScroll(id="bw-body"):
                yield Static(f"busbw ({BANDWIDTH_UNIT}) against message size: out-of-place, mean per size", classes="panel-title")
                yield BandwidthPlot(id="bw-plot")
                yield Static(id="bw-plot-note", classes="note")
                yield Static(id="bw-histogram-title", classes="panel-title")
                yield BandwidthHistogram(id="bw-histogram")
                yield Static(id="bw-outliers")
        yield Footer(compact=True)  # 80 columns hold the keys a new user needs: ? and q were cut off

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        super().on_mount()

    @property
    def outliers(self) -> list[Outlier]:
        """The low outliers found at the last snapshot."""
        return list(self._outliers)

    def show(self, snapshot: Snapshot) -> None:
        wf = next((w for w in snapshot.workflows if w["metadata"]["name"] == self.workflow_name), None)
        title = self.query_one("#bw-title", Static)
        uid = str(wf["metadata"].get("uid") or "") if wf is not None else None
        if self._gone or (self._uid is not None and uid != self._uid):
            self._went()
            return
        if wf is None:
            title.update(Text(f"Workflow {self.workflow_name} not found", style="italic"))
            return
        self._uid = uid
        measurement = measurement_of(wf)
        if measurement.get("parser") != "nccl":
            title.update(Text(f"{self.workflow_name}: not an nccl-tests category ({measured_by(measurement)}); no bandwidth to show"))
            return
        self._rows = rows = job_rows(snapshot, self.workflow_name)
        expression = (job_template_spec(wf).get("thresholds") or {}).get(BUS_BANDWIDTH)
        self._expression = expression if isinstance(expression, str) else None
        title.update(self._title(wf, measurement, rows, expression, snapshot.category_name(self.workflow_name)))
        values = {row.label: row.value for row in rows if row.value is not None}
        meets, threshold_note = self._threshold(expression)
        self._outliers = find_outliers(values, meets, threshold_note, {row.label: row.shown for row in rows})
        per = "node" if rows and all(row.single_node for row in rows) else "group"
        self.query_one("#bw-histogram-title", Static).update(f"{BUS_BANDWIDTH} per {per} ({len(values)} measured of {len(rows)} jobs)")
        self.query_one(BandwidthHistogram).set_values(values, self._outliers)
        self.query_one("#bw-outliers", Static).update(self._outlier_text(rows))
        self._fill_chooser(rows)
        pending = [(row.job, row.run) for row in rows if row.finished and row.run and row.job not in self._curves and row.job not in self._curve_errors]
        if pending:
            self._load_curves(pending)
        self._draw_plot()

    def _went(self) -> None:
        """The Workflow shown is gone (its certification deleted, or itself): its curves, spread and outliers go too, and
        the screen goes back to the drill-down (which says a deleted certification once, and leaves too). They stayed
        under "Workflow ... not found", and a Workflow made again under its name reused the old runs' curves."""
        if not self._gone:
            self._gone = True
            self.workers.cancel_group(self, "bandwidth")
            self._rows, self._outliers, self._curves, self._curve_errors, self._selected = [], [], {}, {}, None
            self.query_one("#bw-title", Static).update(Text(f"Workflow {self.workflow_name} was deleted: nothing is left to plot. esc: back"))
            self.query_one(OptionList).clear_options()
            self.query_one(BandwidthPlot).series = []
            self.query_one(BandwidthHistogram).set_values({}, [])
            for note in ("#bw-plot-note", "#bw-histogram-title", "#bw-outliers"):
                self.query_one(note, Static).update("")
        self.leave_once_on_top()

    @staticmethod
    def _title(wf: Obj, measurement: MeasurementSpec, rows: list[JobRow], expression: str | None, category: str | None = None) -> Text:
        """`category`: its name as the drill-down says it (`#2` where the certification runs it twice; both runs'
        titles read alike), else its Workflow's domain/variant."""
        labels = labels_of(wf)
        text = Text.assemble(("Workflow ", "bold"), wf["metadata"]["name"], "   ",
                             category or f"{labels.get(LABEL_DOMAIN)}/{labels.get(LABEL_VARIANT)}",
                             f" · {measurement.get('testType') or 'nccl'}   ",
                             (f"{len(rows)} jobs, {sum(r.finished for r in rows)} finished", ""))
        text.append(f"   threshold {BUS_BANDWIDTH}: {expression}" if expression else "   no threshold")
        return text

    @staticmethod
    def _threshold(expression: str | None) -> tuple[Callable[[float], bool] | None, str]:
        """(value -> passes, how to say it), or (None, "") without a usable threshold."""
        if not expression:
            return None, ""
        try:
            compiled = compile_threshold(BUS_BANDWIDTH, expression)
        except ThresholdError:
            return None, ""  # the engine reports a bad threshold on the Workflow; here only the spread counts
        return (lambda value: compiled.evaluate(value).passed), f"threshold {expression}"

    def _outlier_text(self, rows: list[JobRow]) -> Text:
        text = Text()
        text.append("Outliers", style="bold")
        text.append(" (below median − 3 MAD and at least 5% below it, or failing the threshold)\n", style="italic")
        for outlier in self._outliers:
            text.append(f"  {OUTLIER_GLYPH} {outlier.label:<16} {outlier.shown:>8} {BANDWIDTH_UNIT}  {outlier.reason}\n")
        for row in rows:
            if row.value is None and row.finished:  # never a silent pass: a finished job without a value is named
                why = not_measured_said(row.cut_short) if row.cut_short is not None else f"no {BUS_BANDWIDTH} measured"
                text.append(f"  ✗ {row.label:<16} {'—':>8} {BANDWIDTH_UNIT}  {why}\n")
        if text.plain.count("\n") == 1:
            text.append("  none\n")
        return text

    def _fill_chooser(self, rows: list[JobRow]) -> None:
        chooser = self.query_one(OptionList)
        flagged = {o.label for o in self._outliers}
        prompts = []
        # The labels' column as wide as the longest label, the value and its ▾ kept on the label's line while they fit the
        # list (34 columns, its border, padding and scrollbar: 28 of text); a longer label (a diagnosis's "r0-screen-15
        # (2 nodes)") has them on a line of its own, right-aligned. A fixed 19 wrapped "▾" onto a line of its own
        # under every flagged node on 80x24, and a diagnosis's value under its label at the list's left edge.
        room = chooser.scrollable_content_region.width or CHOOSER_TEXT
        labels = max((cell_len(row.label) for row in rows), default=0)
        for row in rows:
            # The Job's own verdict (a crash with a fine value failed; a low value above the threshold passed), and
            # apart from it, ▾ where the value is a low outlier of this Workflow's spread or fails the threshold.
            mark = PHASE_GLYPHS.get(row.outcome, "·")  # a missing value shows as "—" beside it; the Outliers list names it
            value = f"{row.shown:>7}" if row.value is not None else "      —"
            low = f" {OUTLIER_GLYPH}" if row.label in flagged else "  "
            line = f"{mark} {row.label}{' ' * (labels - cell_len(row.label))} {value}{low}"
            if cell_len(line) > room:
                line = f"{mark} {row.label}\n{value + low:>{room}}"
            prompts.append(Option(Text(line.rstrip()), id=row.job))
        if [str(o.prompt) for o in chooser.options] != [str(p.prompt) for p in prompts]:
            chooser.clear_options()
            chooser.add_options(prompts)
        measured = [row for row in rows if row.value is not None]
        if self._selected is None and measured:
            self._selected = min(measured, key=lambda r: (r.value, r.label)).job  # start on the most suspect
        ids = [row.job for row in rows]
        if self._selected in ids and chooser.highlighted != ids.index(self._selected):
            chooser.highlighted = ids.index(self._selected)

    def on_resize(self) -> None:
        if self._rows:
            self.call_after_refresh(self._fill_chooser, self._rows)  # the prompts fitted to the list's new width

    @on(OptionList.OptionHighlighted, "#bw-groups")
    def _chosen(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id != self._selected:
            self._selected = event.option.id
            self._draw_plot()

    @work(exclusive=True, group="bandwidth", exit_on_error=False)
    async def _load_curves(self, pending: list[tuple[str, Obj]]) -> None:
        """Parse each finished run's log once (the runner is the log source)."""
        session = self.nvcre.session
        assert session is not None
        for job, run in pending:
            try:
                result = parse_nccl(await session.logs.lines(run))
            except ParseError as error:
                self._curve_errors[job] = f"{error.reason}: {error.message}"
            except Exception as error:  # noqa: BLE001 - a runner failure is shown, never a traceback
                self._curve_errors[job] = with_grant(f"cannot read the log: {error_said(error)}", error)  # RBAC: which role grants it
            else:
                # As the engine stores a measurement (12 significant digits): the raw averages' float noise put the peak on
                # the other side of a rounding, "peak 183.73" beside the chooser's and the report's measured 183.74.
                self._curves[job] = {size.size: stored_value(size.out_of_place.busbw) for size in result.sizes}
            await asyncio.sleep(0)  # one log at a time: keys stay responsive on big Workflows
        self._draw_plot()

    def _draw_plot(self) -> None:
        plotted = [row for row in self._rows if row.job in self._curves]
        selected = next((row for row in plotted if row.job == self._selected), None)
        if len(plotted) <= len(SERIES_GLYPHS):
            ordered = sorted(plotted, key=lambda row: row.job == self._selected)  # the chosen one draws last
            series = [Series(row.label, self._curves[row.job], SERIES_GLYPHS[plotted.index(row)],
                             "selected" if row is selected else "other") for row in ordered]
        else:
            series = [Series(f"median of {len(plotted)} groups", median_curve([self._curves[r.job] for r in plotted]), MEDIAN_GLYPH, "median")]
            if selected is not None:
                series.append(Series(selected.label, self._curves[selected.job], SERIES_GLYPHS[0], "selected"))
        self.query_one(BandwidthPlot).series = series
        self.query_one("#bw-plot-note", Static).update(self._plot_note(plotted, selected))

    def _plot_note(self, plotted: list[JobRow], selected: JobRow | None) -> str:
        if selected is None:
            row = next((r for r in self._rows if r.job == self._selected), None)
            if row is None:
                return "choose a group on the left"
            return self._curve_errors.get(row.job, f"{row.label}: {'log not read yet' if row.finished else 'run not finished'}")
        curve = self._curves[selected.job]
        peak = max(curve, key=lambda size: curve[size])
        if selected.cut_short is not None:  # its curve is what it read before it stopped: no peak of a whole sweep
            return f"{selected.label}: {not_measured_said(selected.cut_short)}; its sweep stops at {size_label(max(curve))}"
        others = [max(self._curves[r.job].values()) for r in plotted if r.cut_short is None]  # a partial sweep's is no peak
        # the peak is the measured busBandwidthGBps (the largest out-of-place busbw): on its side of the threshold
        return (f"{selected.label}: peak {shown_measurement(BUS_BANDWIDTH, curve[peak], threshold=self._expression)} {BANDWIDTH_UNIT} at {size_label(peak)}; "
                f"median peak of {len(others)} curves {statistics.median(others):.1f} {BANDWIDTH_UNIT}")


def measured_by(measurement: MeasurementSpec) -> str:
    """How a category is measured, said: `parser dcgm`, or that it names no parser."""
    return f"parser {measurement['parser']}" if measurement.get("parser") else "no parser named"
