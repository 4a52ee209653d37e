"""Drill-down: certification -> category -> iteration / round -> group (job) -> node, with the
evidence of whatever is highlighted. Opens on the first failure (an infrastructure fault a diagnosis named, else
a failed node), so its evidence is one keypress from the dashboard (enter). Where a category diagnosed, a node's
rows carry its verdict: a node the diagnosis cleared is not marked failed by the test that first blamed it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Header, Static, Tree
from textual.widgets.tree import TreeNode

from nvcre_tui.engine.api.bodies import (
    certification_status,
    conditions_of,
    job_status,
    job_template_spec,
    meta_of,
    orchestration_of,
    workflow_spec,
    measurement_of,
    workflow_status,
)
from nvcre_tui.engine.api.vocabulary import FAILED, PHASE_GLYPHS, RESULT_RUNNING, STATE_GLYPHS, UNDER_SUSPICION, NodeState
from nvcre_tui.engine.report.nodestates import diagnosis_open, job_outcome, member_states
from nvcre_tui.engine.controllers import conditions as cond
from nvcre_tui.engine.controllers.iterations import group_failures
from nvcre_tui.engine.diagnose.clearance import Clearance, clearance
from nvcre_tui.engine.judging.thresholds import diagnosis_values, value_shower
from nvcre_tui.engine.diagnose.summary import crossing, record_text, rounds_weighed, tests_said, verdict_rows
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH, with_unit
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.report.model import measured_whole, threshold_out_of_reach
from nvcre_tui.engine.report.readmodel import CategoryView, CertificationView, pods_pending
from nvcre_tui.engine.units import count
from nvcre_tui.engine.views.cert_summary import certification_summary
from nvcre_tui.engine.views.certifications import deleting_result, deletion_said
from nvcre_tui.engine.views.diagnosis import InfraFault, category_faults, diagnose_state, diagnose_verdicts
from nvcre_tui.engine.views.failures import OUT_OF_REACH, FailureRow, JobIndex, category_unblamed, unblamed_subject
from nvcre_tui.engine.views.snapshot import Snapshot
from nvcre_tui.engine.views.suspicion import diagnosis_progress
from nvcre_tui.engine.views.waiting import PodsWaiting, pods_waiting
from nvcre_tui.screens.base import NvcreScreen
from nvcre_tui.widgets.command_bar import CommandBar
from nvcre_tui.widgets.detail import conditions_line, job_detail, label, runtime, shown_measurement, status_said
from nvcre_tui.widgets.diagnose_tests import clearance_text, passes_said, round_said, tested_line
from nvcre_tui.widgets.fitted_footer import FittedFooter
from nvcre_tui.widgets.fitted_list import ELLIPSIS
from nvcre_tui.widgets.fitted_tree import SHORTER, FittedTree
from nvcre_tui.widgets.hanging import HangingStatic
from nvcre_tui.widgets.rack_layout import natural_key
from nvcre_tui.widgets.tree_sync import PlannedNode, literal, sync
from nvcre_tui.widgets.verdict_mark import verdict_mark, verdict_said

Obj = dict[str, Any]


RUN_NOTES = ("within-domains",)  # diagnose notes about the run, not one node or link: shown under its verdicts (links: category_faults)


def _verdict_word(verdict: str) -> str:
    """A diagnosis's verdict as the drill-down says it: its `suspect` is the running diagnosis's narrowing set,
    UNDER_SUSPICION as the dashboard and the wall say it (suspect is a node blamed with its whole group)."""
    return UNDER_SUSPICION if verdict == NodeState.SUSPECT else verdict


def _threshold(wf: Obj) -> str | None:
    """The category's bus bandwidth threshold (its Jobs, a diagnosis's tests among them, are judged by it); None without one."""
    found = (job_template_spec(wf).get("thresholds") or {}).get(BUS_BANDWIDTH)
    return found if isinstance(found, str) else None


class DrilldownScreen(NvcreScreen):
    """One certification, level by level."""

    BINDINGS = [
        Binding("f", "next_failure", "Next failure", id="drill.next"),
        Binding("l", "logs", "Logs", id="drill.logs"),
        # b and x out of the footer where it has no room (FittedFooter), listed by ?: on 80 columns they cut ? and q off.
        Binding("b", "bandwidth", "Bandwidth", show=False, id="drill.bandwidth"),
        Binding("n", "node", "Node", id="drill.node"),
        # This certification's map (the dashboard's `m` merges them all); out of a full footer too.
        Binding("m", "map", "Rack map", show=False, id="drill.map"),
        Binding("x", "delete_certification", "Delete", show=False, id="drill.delete",
                tooltip="Delete this certification (asks first) and go back: its runs stop; Workflows, Jobs and runs go with it"),
        Binding("escape", "app.pop_screen", "Back", id="drill.back"),
    ]
    # The tree gets the larger share: its lines are cut at its edge (a verdict at depth three read "sus" on 80
    # columns), the detail pane wraps. Below NARROW columns the two share no line: side by side, the tree's rows were
    # cut ("FaultyNodesCo", "3 tes") and the detail's 28 columns broke a category's name mid-word; the tree goes on top.
    DEFAULT_CSS = """
    DrilldownScreen Tree { width: 5fr; }
    DrilldownScreen #detail-box { width: 3fr; border-left: solid $panel; padding: 0 1; }
    DrilldownScreen.-narrow #panes { layout: vertical; }
    DrilldownScreen.-narrow Tree { width: 1fr; height: 1fr; }
    DrilldownScreen.-narrow #detail-box { width: 1fr; height: 1fr; border-left: none; border-top: solid $panel; }
    """
    GUIDE_DEPTH = 3  # Textual's 4 columns per level, one less: verdicts sit three levels down
    NARROW = 100  # below this width the tree's guides take 2 columns a level: its labels are cut later

    def __init__(self, certification: str, focus: tuple[str, str] | None = None) -> None:
        """focus: (workflow, node) to open on instead of the first failed node (the dashboard's failures pane)."""
        super().__init__()
        self.certification = certification
        self.focus_on = focus
        self._placed = False
        # The suspect row the screen opened on while a diagnosis runs (no failure yet): not the user's choice, so the
        # first failure still takes the cursor when it comes, as it does from the root.
        self._on_suspect: tuple[str, ...] | None = None
        self._shown: CertificationView | None = None  # the read model last drawn (the same object while nothing changed)
        self._uid: str | None = None  # the uid of the certification shown (a namesake created later is another one)

    def compose(self) -> ComposeResult:
        yield Header()
        self.set_class(self._narrow(), "-narrow")
        with Horizontal(id="panes"):
            # Labels end at its width with "…" after a whole word (cut mid-word at the edge, a diagnosis's line lost
            # its round); the detail pane says all of it.
            tree: Tree[Any] = FittedTree(literal(self.certification), id="tree")  # a name typed after :cert is not markup
            tree.guide_depth = self._guide_depth()
            yield tree
            with VerticalScroll(id="detail-box"):
                yield HangingStatic(id="detail")
        yield CommandBar()
        # 80 columns hold the keys a new user needs (? and q were cut off); m, b and x where there is room.
        yield FittedFooter(if_room=("drill.map", "drill.bandwidth", "drill.delete"))

    def show(self, snapshot: Snapshot) -> None:
        cert = snapshot.certification(self.certification)
        tree = self.query_one(Tree)
        if self._gone:
            self.leave_once_on_top()
            return
        uid = str(meta_of(cert or {}).get("uid") or "") or None
        if self._uid is not None and (cert is None or (uid is not None and uid != self._uid)):
            self._went()  # shown, then deleted (a namesake made since is another certification)
            return
        if cert is None:  # never seen: a name typed after :cert, or one not created yet
            tree.root.set_label(literal(f"{self.certification} (not found)"))
            return
        self._uid = uid
        selected = tree.cursor_node.data if tree.cursor_node else None
        if tree.cursor_line > 0 and self._key_of(selected) != self._on_suspect:
            self._placed = True  # the user moved off the root (or the suspect opened on) before a failure came: the cursor is theirs now
        view = snapshot.views[self.certification]
        if view is not self._shown:  # the same object while nothing of this certification changed
            self._shown = view
            self._sync_tree(tree, cert, view, snapshot)
        target = self._find(tree.root, self._key_of(selected)) if selected and self._placed else None
        if target is None and self._placed and selected:  # its line went (a suspect cleared or convicted): where it went
            target = self._successor(tree.root, selected)
        if target is None and not self._placed:
            order = self._walk(tree.root)
            # The worst first, as the failures pane lists them: a node blamed by name before the members of a group blamed
            # whole (a hung group's four `! Timeout` came before the `✗ gpu-node-06` its crash convicted)
            failed = [n for n in order if (n.data or {}).get("failed")]
            target = self._focus_target(tree.root) or next((n for n in failed if not (n.data or {}).get("withGroup")), next(iter(failed), None))
            self._placed = target is not None or cond.is_terminal(cert)
            # No failure yet while a diagnosis holds suspects (the dashboard sends the user here for them): open on
            # the first, its category expanded, rather than collapsed on the root.
            suspect = None if self._placed else next((n for n in order if (n.data or {}).get("suspect")), None)
            self._on_suspect = self._key_of(suspect.data) if suspect is not None else None
            target = target or suspect
            if target is not None and target.allow_expand:
                # A failure that is a branch (a category that failed blaming nobody, a failed group): opened, so what
                # it holds is in sight. A diagnosis that left every node inconclusive opened collapsed on its
                # category, its "threshold out of reach" line and its verdicts hidden under it.
                target.expand()
        if target is not None:
            self._reveal(target)
            # Lines are assigned at the next layout; move the cursor once they are.
            self.call_after_refresh(tree.move_cursor, target)
        self._show_detail(target or tree.cursor_node or tree.root)

    def _went(self) -> None:
        """The certification shown is gone: empty the tree and the detail pane, say so once, and leave."""
        self._gone = True
        self._shown = None
        tree = self.query_one(Tree)
        tree.reset(literal(f"{self.certification} (deleted)"))
        self._show_detail(tree.root)
        if not self.deleting:  # our own `x`: the app has said what became of it
            self.notify(printable(f"certification {self.certification} was deleted by another client"), severity="warning",
                        title="deleted", markup=False)
        self.leave_once_on_top()

    def _refuse_if_gone(self) -> bool:
        """A key pressed on a deleted certification's (empty) screen: say why nothing opens."""
        if self._gone:
            self.notify(printable(f"certification {self.certification} was deleted: nothing to open"), markup=False)
        return self._gone

    def _sync_tree(self, tree: Tree[Any], cert: Obj, view: CertificationView, snapshot: Snapshot) -> None:
        """Plan the whole tree from the read model, then bring the live Tree to it in place."""
        summary = certification_status(cert).get("summary") or {}
        result = summary.get("result", RESULT_RUNNING)
        held = deletion_said(snapshot, self.certification)  # RUNNING for good where no garbage collector lets it go
        root = PlannedNode(Text(f"{self.certification}  {deleting_result(snapshot, self.certification) or result}  "
                                f"{summary.get('passedCategories', '')}"), {"kind": "cert", "cert": cert, "held": held})
        for category in view.categories if certification_status(cert).get("categoryStatuses") else []:
            status = category.status
            if category.workflow is not None:
                self._add_category(root, category, pods_waiting(snapshot, category))
            else:  # never got a Workflow (waiting for nodes, cannot render): still say why
                why = f"  {status.get('reason')}: {status.get('message')}" if status.get("reason") else ""
                failed = next(iter(category_unblamed(category)), None)  # failed so: a failure that blamed nobody
                root.add_leaf(f"{PHASE_GLYPHS.get(status['status'], '·')} {category.name}{why}",
                              data={"kind": "pending", "status": status, "title": category.name,
                                    **({"subject": failed.node, "workflow": {}, "failed": True, "unblamed": failed} if failed else {})})
        condition = next((c for c in conditions_of(cert) if c.get("status") == "True"), None)
        if condition and not any(category.workflow is not None for category in view.categories):
            root.add_leaf(f"{condition['type']}: {condition['reason']} — {condition.get('message', '')}", data={"kind": "condition"})
        sync(tree.root, root, self._key_of)  # in place: unchanged lines keep their node, expansion and cursor
        tree.root.expand()

    def _focus_target(self, root: TreeNode[Any]) -> TreeNode[Any] | None:
        """The failed leaf of the node asked for, in its category (a verdict or the group that convicted it), or
        the infrastructure fault asked for (by its subject)."""
        if self.focus_on is None:
            return None
        workflow, node = self.focus_on
        leaves = [n for n in self._walk(root) if node in ((n.data or {}).get("node"), (n.data or {}).get("subject"))
                  and (meta_of((n.data or {}).get("workflow") or {}).get("name") or "") == workflow]
        return next((n for n in reversed(leaves) if (n.data or {}).get("failed")), leaves[-1] if leaves else None)

    def _add_category(self, parent: PlannedNode, category: CategoryView, waiting: PodsWaiting | None = None) -> None:
        """A category and its levels; `waiting`: its Jobs in progress whose pods do not run yet, said on its line in place
        of its Workflow's reason (which says only how it was partitioned) and in its detail."""
        wf = category.workflow
        assert wf is not None
        key = category.key
        title = category.name  # `#2` where the certification runs it again, as the failures pane, the wall and the report say it
        phase, reason, _ = conditions_line(wf)
        glyph = PHASE_GLYPHS.get(phase, "·")
        if waiting is not None:
            reason = waiting.said()
            glyph = PHASE_GLYPHS["Pending"] if waiting.nothing_runs else glyph  # nothing of it runs: not shown as running
        shorter: list[str] = []
        diagnosing = diagnose_state(category) if waiting is None and diagnosis_open(wf) else None
        if diagnosing is not None:  # not "GroupsPartitioned" all along
            reason = f"diagnosing: {diagnosis_progress(diagnosing)}"
            # Shorter where the line has no room (80 and 120 columns cut "(confirmation), 3 tests" off): the glyph says it
            # runs, then the domain goes (the variant names the category in a certification), never the progress.
            variant = title.rpartition("/")[2]
            shorter = [f"{glyph} {title}  {diagnosis_progress(diagnosing)}", f"{glyph} {variant}  {diagnosis_progress(diagnosing)}",
                       f"{glyph} {variant}  {diagnosis_progress(diagnosing, stage=False)}"]  # the stage last: the detail says it
        reach = threshold_out_of_reach(category)
        # Failures that blamed nobody are failures too: `enter` and `f` land on their group (or on the category).
        unblamed = {row.node: row for row in category_unblamed(category)}
        state = diagnose_state(category)
        data: dict[str, Any] = {"kind": "workflow", "workflow": wf, "key": key, "blamed": category.failed_nodes, "reach": reach,
                                "waiting": waiting, "tested": tests_said(state) if state is not None else None, "title": title}
        if key in unblamed:
            data |= {"subject": key, "failed": True, "unblamed": unblamed[key]}
        # Its shorter wordings are its own: the leaves under it copy `data`.
        branch = parent.add(Text(printable(f"{glyph} {title}  {reason}", newlines=False)),
                            data={**data, SHORTER: [printable(said, newlines=False) for said in shorter]} if shorter else data)
        if reach:  # the threshold, not the nodes: said first, where "inconclusive" verdicts would otherwise be all
            # Named by the category where it blamed nodes: the failures pane's row of it (reach_rows) lands here (enter).
            branch.add_leaf(f"! {reach}", data={**data, "subject": title if category.failed_nodes else OUT_OF_REACH})
        timeline = category.timeline
        verdicts = diagnose_verdicts(category)
        if state is not None:
            self._add_verdicts(branch, wf, state, category_faults(category), category.jobs_by_name)
        for record in timeline:
            holder = branch
            if len(timeline) > 1 or record.round is not None:  # a diagnose round is named from the first (round 0)
                said = round_said(record.groups, state) if record.round is not None and record.groups else ""
                holder = branch.add(record.label + (" (current)" if record.current else "") + said,
                                    data={"kind": "iteration", "workflow": wf, "iteration": record.number})
            for group in sorted(record.groups, key=lambda g: (g.get("phase") != FAILED, natural_key(g["name"]))):
                self._add_group(holder, group, category.job_of(group), wf, verdicts, unblamed.get(unblamed_subject(category, record, group)), state)

    @staticmethod
    def _add_verdicts(parent: PlannedNode, wf: Obj, state: Obj, faults: list[InfraFault], jobs: Mapping[str, Obj]) -> None:
        """Diagnose: the infrastructure faults it named first (the first failure the screen opens on), then each
        node's verdict (faulty, intermittent, inconclusive, suspect) with the tests that decided it, then the nodes it
        cleared (healthy) though they failed tests, under one collapsed line."""
        rows = verdict_rows(state, diagnosis_values(job_template_spec(wf).get("thresholds")))
        by_verdict = Counter(str(row["verdict"]) for row in rows)  # in the order the rows come (most urgent first)
        # In the list's order, the healthy last: a line cut at its edge ("…") keeps the faults and the suspects (on 120
        # columns, mid-run, it read "(29 nodes healthy, 1 intermittent, 2 …" and lost the suspects and the link fault).
        tally = [count(len(faults), 'link fault')] if faults else []
        tally += [*(f"{n} {_verdict_word(verdict)}" for verdict, n in by_verdict.items()),
                  count(len(state.get('healthyNodes') or []), 'node') + " healthy"]
        # While it runs they are the rounds weighed so far: the current round's tests count once it ends (round 0 of an
        # onFailure diagnosis is the iterations it started from).
        weighed = rounds_weighed(state) - 1
        imported = (wf["spec"].get("orchestration") or {}).get("testScale") != "diagnose"
        when = ("" if not diagnosis_open(wf) or weighed < 0 else " as of the iterations" if weighed == 0 and imported
                else f" as of round {weighed}")
        # Shorter where the line has no room: the healthy count goes, then the round (the category's line says it).
        unhealthy = ", ".join(tally[:-1])
        shorter = [f"verdicts{when} ({unhealthy}, {ELLIPSIS})", f"verdicts ({unhealthy}, {ELLIPSIS})"] if unhealthy else []
        holder = parent.add(f"verdicts{when} ({', '.join(tally)})", data={"kind": "verdicts", "workflow": wf, SHORTER: shorter})
        index = JobIndex.of(jobs.values())  # once: a scan of every Job per verdict row took a second per redraw at 1024 nodes
        for fault in faults:
            holder.add_leaf(f"✗ {fault.subject}  {count(len(fault.tests), 'test')} failed",
                            data={"kind": "fault", "fault": fault, "state": state, "workflow": wf, "subject": fault.subject,
                                  "job": jobs.get(fault.job or ""), "failed": True})
        for row in rows:
            mark = NodeState.FAILED.glyph if row["verdict"] in ("faulty", "intermittent") else NodeState(row["verdict"]).glyph  # ! suspect, ? inconclusive
            # `l`: the log of the test that decided it (the one that convicted it, else its last failed test)
            decided = jobs.get(index.convicting(row["node"]) or "")
            # a suspect is no failure, but while the diagnosis runs it is what the user came for: `f` stops there too
            holder.add_leaf(f"{mark} {row['node']}  {_verdict_word(row['verdict'])}  {row['failed']}/{row['tests']} failed",
                            data={"kind": "verdict", "row": row, "state": state, "workflow": wf, "node": row["node"], "failed": mark == "✗",
                                  "suspect": row["verdict"] == NodeState.SUSPECT, "job": decided})
        # The nodes it cleared though they failed tests (a screening partner of a faulty node, a degraded link's ends):
        # each was a suspect on the way, and only the rounds' groups said why it left the list. One line, collapsed:
        # on 80x24 their rows pushed the rounds and the next category out of the tree's sight.
        # Only a member of a failed test can have failed one: the others (most of a large fleet) are not weighed one by one.
        failed_in = {node for test in state.get("tests") or [] if test.get("passed") is False for node in test.get("nodes") or []}
        clearances = [cleared for node in sorted(set(state.get("healthyNodes") or []) & failed_in, key=natural_key)
                      if (cleared := clearance(state, node)) is not None and cleared.failures]
        if clearances:
            listed = holder.add(f"{NodeState.PASSED.glyph} {count(len(clearances), 'node')} cleared after failing tests",
                                data={"kind": "cleared-list", "workflow": wf})
            for cleared in clearances:
                tests = sum(cleared.node in (t.get("nodes") or ()) for t in state.get("tests") or [])
                listed.add_leaf(f"{NodeState.PASSED.glyph} {cleared.node}  cleared  {len(cleared.failures)}/{tests} failed",
                                data={"kind": "cleared", "clearance": cleared, "state": state, "workflow": wf, "node": cleared.node,
                                      "job": jobs.get(index.convicting(cleared.node) or "")})
        for note in state.get("notes") or []:  # what the run could not tell: an unlocalised link, links not tested
            if note.get("kind") in RUN_NOTES:
                holder.add_leaf(f"? {note.get('message', '')}", data={"kind": "verdicts", "workflow": wf})

    @staticmethod
    def _verdict_detail(row: Obj, state: Obj, threshold: str | None = None) -> Text:
        text = Text()
        label(text, "Node", row["node"])
        label(text, "Verdict", f"{_verdict_word(row['verdict'])}, {row['record']}")  # the node is named on the line above
        for note in state.get("notes") or []:  # why a node stays inconclusive (no healthy node left to confirm it against)
            if row["node"] in (note.get("nodes") or ()) and note.get("kind") not in RUN_NOTES:
                label(text, "Why", str(note.get("message") or "").removeprefix(f"{row['node']}: ").removeprefix(f"{row['node']} "))
        text.append("\nTests that decided it:\n")
        crossed = crossing(state)
        for test in state.get("tests") or []:
            if row["node"] in test.get("nodes", []):
                text.append(f"  {tested_line(test, row['node'], threshold, crossed)}\n")
        return text

    @staticmethod
    def _cleared_detail(cleared: Clearance, state: Obj, threshold: str | None = None) -> Text:
        """A node the diagnosis cleared though it failed tests: its record, the passes that cleared it and each failure
        with what explained it."""
        text = Text()
        label(text, "Node", cleared.node)
        tests = [t for t in state.get("tests") or [] if cleared.node in (t.get("nodes") or ())]
        label(text, "Verdict", f"healthy, {record_text(tests, limit=6, crossed=crossing(state), shown=value_shower(BUS_BANDWIDTH, threshold), node=cleared.node)}")
        label(text, "Cleared", passes_said(cleared, threshold))
        text.append("\n")
        clearance_text(text, cleared, threshold)
        return text

    @staticmethod
    def _fault_detail(fault: InfraFault, state: Obj) -> Text:
        text = Text()
        label(text, "Fault", fault.subject)
        label(text, "Category", fault.category)
        label(text, "Diagnosis", fault.message)
        label(text, "Measured", fault.measured)
        text.append("\nTests that are its evidence:\n")
        named = set(fault.tests)
        for test in state.get("tests") or []:
            if test.get("group") in named:
                value = (f"  {with_unit(BUS_BANDWIDTH, shown_measurement(BUS_BANDWIDTH, test['value'], threshold=fault.threshold))}"
                         if test.get("value") is not None else "")
                text.append(f"  {'✓' if test.get('passed') else '✗'} {test['group']} ({test['stage']}) on {', '.join(test.get('nodes') or [])}{value}\n")
        text.append("\nl: the last failed test's log   b: bandwidth\n")
        return text

    def _add_group(self, parent: PlannedNode, group: Mapping[str, Any], job: Obj | None, wf: Obj, verdicts: Mapping[str, str],
                   unblamed: FailureRow | None = None, state: Obj | None = None) -> None:
        """A group and its members. `unblamed`: the group failed blaming nobody; it is then a failure of its own
        (`f` and `enter` land on it) and says why. `state`: the category's readable diagnose state (a cleared
        member's detail says why it was cleared)."""
        # a run cut short (a crash, a timeout) measured part of a sweep: its reason alone, no value (measured_whole)
        busbw = (group.get("measurements") or {}).get(BUS_BANDWIDTH) if measured_whole(group) else None
        # A group whose Job waits for its pods is not shown running: nothing of it runs yet, and its line says why.
        pending = pods_pending(job) if job is not None else None
        glyph = PHASE_GLYPHS["Pending"] if pending is not None else PHASE_GLYPHS.get(group.get("phase", "Pending"), "·")
        why = unblamed.reason if unblamed else f"waiting for pods: {pending}" if pending is not None else group.get("reason") or ""
        text = f"{glyph} {group['name']} ({count(len(group['nodes']), 'node')})"
        evidence = job_status(job).get("evidence") if job is not None else None  # its Job gone: the category's threshold judges it
        text += f"  {why}" + (f"  {with_unit(BUS_BANDWIDTH, shown_measurement(BUS_BANDWIDTH, busbw, evidence, _threshold(wf)))}" if busbw is not None else "")
        data = {"kind": "group", "group": group, "job": job, "workflow": wf, "verdicts": verdicts}
        holder = parent.add(text, data=data | ({"subject": unblamed.node, "failed": True, "unblamed": unblamed} if unblamed else {}))
        failures = group_failures(group, group["nodes"], job)
        blamed = {f["name"]: f for f in failures}
        outcome = str(group.get("phase") or (job_outcome(job) if job is not None else "Pending"))
        diagnosing = diagnosis_open(wf)
        # What this group says of each member, as the map says it (nodestates.member_states): a failed group's member it
        # did not blame ran and proved nothing (inconclusive), or never ran (untested).
        states = member_states(group["nodes"], failures, group["nodes"], outcome, group.get("reason"), waiting=pending is not None,
                               diagnosing=diagnosing)
        for name in sorted(group["nodes"], key=lambda n: (n not in blamed, natural_key(n))):  # as the map orders them
            failure = blamed.get(name)
            mark = STATE_GLYPHS[NodeState(states[name])]
            why = f"  {failure['reason']}" if failure else ""
            # The diagnosis's verdict on a member of a failed test, blamed by it or not: a node it cleared is not
            # failed (nor left in doubt) by this test.
            verdict = verdicts.get(name) if failure or outcome == FAILED else None
            shown = verdict_mark(verdict)
            if shown is not None:
                mark, why = STATE_GLYPHS[shown[0]], f"  {shown[1]}" + (f" · {failure['reason']}" if failure else "")
            # Where a diagnosis speaks (`verdicts`), its verdict rows are the failures `f` stops at: a convicted node was
            # also a failed member of each test that decided it (45 stops for 8 failures).
            holder.add_leaf(f"{mark} {name}{why}",
                            data={"kind": "node", "node": name, "job": job, "group": group, "workflow": wf, "verdict": verdict, "state": state, "verdicts": verdicts,
                                  "failed": bool(failure) and not verdicts and (shown is None or shown[0] is not NodeState.PASSED),
                                  "withGroup": shown is None and states[name] == NodeState.SUSPECT})  # blamed only with its whole group

    def _narrow(self) -> bool:
        return self.app.size.width < self.NARROW

    def _guide_depth(self) -> int:
        return 2 if self._narrow() else self.GUIDE_DEPTH

    def on_resize(self) -> None:
        self.set_class(self._narrow(), "-narrow")
        self.query_one(Tree).guide_depth = self._guide_depth()

    @staticmethod
    def _walk(node: TreeNode[Any]) -> list[TreeNode[Any]]:
        found = [node]
        for child in node.children:
            found += DrilldownScreen._walk(child)
        return found

    @staticmethod
    def _key_of(data: Any) -> tuple[str, ...]:
        # Job names carry the iteration (or diagnose round), so same-named groups of different iterations differ.
        data = data or {}
        group = data.get("group") or {}
        return (data.get("kind", ""), meta_of(data.get("workflow") or {}).get("name", ""), str(data.get("iteration", "")),
                group.get("jobRef") or "", group.get("name", ""), data.get("node", ""), data.get("subject", ""))

    def _key(self, node: TreeNode[Any]) -> tuple[str, ...]:
        return self._key_of(node.data)

    def _find(self, root: TreeNode[Any], key: tuple[str, ...]) -> TreeNode[Any] | None:
        return next((n for n in self._walk(root) if self._key(n) == key), None)

    def _successor(self, root: TreeNode[Any], gone: Mapping[str, Any]) -> TreeNode[Any] | None:
        """The line that says now what the cursor's vanished line said: the same node's (or fault's) line in the same
        category (a suspect's verdict row becomes its `cleared` row, or its `faulty` one), else that category's line.
        The cursor stayed on whatever line took its place, and the detail pane on the gone line's words: a node the
        diagnosis had since cleared read "under suspicion, failed 2 of 2 tests"."""
        workflow = meta_of(gone.get("workflow") or {}).get("name")
        if not workflow:
            return None
        lines = [n for n in self._walk(root) if meta_of((n.data or {}).get("workflow") or {}).get("name") == workflow]
        for field in ("node", "subject"):
            if gone.get(field):
                same = [n for n in lines if (n.data or {}).get(field) == gone[field]]
                # a verdict row (faulty, or cleared) before a test's member row: it says what became of the node
                found = next((n for n in same if (n.data or {}).get("kind") in ("verdict", "cleared", "fault")), same[0] if same else None)
                if found is not None:
                    return found
        return next((n for n in lines if (n.data or {}).get("kind") == "workflow"), None)

    @staticmethod
    def _reveal(node: TreeNode[Any]) -> None:
        parent = node.parent
        while parent is not None:
            parent.expand()
            parent = parent.parent

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        self._show_detail(event.node)

    def _show_detail(self, node: TreeNode[Any]) -> None:
        data = node.data or {}
        kind = data.get("kind")
        if self._gone:
            text = Text(printable(f"Certification {self.certification} was deleted: nothing is left to show.\nesc: back"))
        elif kind == "cert":
            text = self._certification_detail(data.get("held"))
        elif kind == "verdict":
            text = self._verdict_detail(data["row"], data["state"], _threshold(data["workflow"]))
        elif kind == "cleared-list":
            text = Text("Nodes the diagnosis holds healthy though they failed tests: each failure explained (by the members its "
                        "log named, a convicted member or a named link fault) or outweighed by the node's passes. Open the line "
                        "(enter) for each node and the tests that cleared it.")
        elif kind == "cleared":
            text = self._cleared_detail(data["clearance"], data["state"], _threshold(data["workflow"]))
        elif kind == "fault":
            text = self._fault_detail(data["fault"], data["state"])
        elif kind in ("node", "group") and data.get("job"):
            text = self._verdict_line(data) + job_detail(data["job"], data.get("node") if kind == "node" else None, self.nvcre.now(),
                                                         data.get("verdicts"), whole=measured_whole(data["group"]),
                                                         simulated=self.nvcre.times_simulated(), stamped_now=self.nvcre.stamped_now())
        elif kind == "workflow":
            text = self._workflow_detail(data["workflow"], data["blamed"], data.get("reach"), self.nvcre.now(), data.get("waiting"),
                                         data.get("tested"), data.get("title"))
        elif data.get("unblamed"):  # a failure that blamed nobody, its Job gone (or it never got a Workflow)
            text = self._unblamed_detail(data["unblamed"])
        elif kind == "pending":
            text = self._pending_detail(data["status"], data.get("title"))
        else:
            text = Text("Select a category, group or node.\nf: next failure   l: logs   b: bandwidth   n: node")
        self.query_one("#detail", HangingStatic).show(text)  # a wrapped value stays under its value, off the keys

    def _certification_detail(self, held: str | None) -> Text:
        """The certification itself (the top line): its summary as the dashboard says it (it said only "Select a
        category, group or node."), then the keys that act on it (l, b and n act on a category, group or node line
        only: listed here, they only said to select one)."""
        text = Text()
        if held:
            label(text, "Deleting", held)
        snapshot = self.nvcre.snapshot
        for key, value in certification_summary(snapshot, self.certification, self.nvcre.now()) if snapshot is not None else []:
            label(text, key, value)
        keys = ["f: next failure", "m: rack map", *(["x: delete"] if self.nvcre.policy.allows("delete_certification") else [])]
        text.append("\n" + "   ".join(keys))
        return text

    @staticmethod
    def _pending_detail(status: Mapping[str, Any], title: str | None = None) -> Text:
        """A category without a Workflow yet: categories run one after another, or it waits for nodes, or cannot render."""
        text = Text()
        label(text, "Category", title or f"{status.get('domain')}/{status.get('variant')}")
        label(text, "Status", status_said(str(status.get("status") or "Pending")))
        if status.get("reason"):
            label(text, "Reason", str(status["reason"]))
        label(text, "Why", str(status.get("message") or "not started: the categories before it run first (one after another)"))
        return text

    @staticmethod
    def _unblamed_detail(row: FailureRow) -> Text:
        text = Text()
        label(text, "Failed", row.node)
        label(text, "Reason", row.reason)
        if row.message:
            label(text, "Message", row.message)
        return text

    @staticmethod
    def _verdict_line(data: Mapping[str, Any]) -> Text:
        """The diagnosis's verdict on a member its Job blamed, above the Job's detail. A node it cleared says what
        explained this test's failure, the passes that cleared it and its other failures, each explained (it said only
        that the failure was not held against it)."""
        text = Text()
        shown = verdict_mark(data.get("verdict") if data.get("kind") == "node" else None)
        if shown is None:
            return text
        cleared = clearance(data["state"], data["node"]) if data.get("state") is not None else None
        if cleared is None:
            label(text, "Diagnosis", verdict_said(shown))
            return text
        threshold = _threshold(data["workflow"])
        this = cleared.of_test(str((data.get("group") or {}).get("name") or ""))
        label(text, "Diagnosis", verdict_said(shown) + (f": {this.said}" if this is not None else ""))
        label(text, "Cleared", passes_said(cleared, threshold))
        clearance_text(text, cleared, threshold)
        text.append("\n")
        return text

    @staticmethod
    def _workflow_detail(wf: Obj, failed: list[Obj], reach: str | None = None, now: datetime | None = None,
                         waiting: PodsWaiting | None = None, tested: str | None = None, title: str | None = None) -> Text:
        status, orch = workflow_status(wf), orchestration_of(wf)
        phase, reason, message = conditions_line(wf)
        text = Text()
        # The category as its line, the failures pane and the report name it (`#2` where it runs twice), as a category not
        # started yet says it (_pending_detail): it read the Workflow's name, `burn-diagnostics-dcgm-level4`.
        label(text, "Category", title or str(wf["metadata"]["name"]))
        label(text, "Status", status_said(phase))
        if reach:  # the threshold, not the nodes: first, where a short screen still shows it
            label(text, "Out of reach", reach)
        if waiting is not None:  # before its Workflow's reason, which says how it was partitioned, not why nothing runs
            label(text, "Waiting", waiting.said(now) + ("" if waiting.nothing_runs else f" (first: {waiting.job})"))
        label(text, "Reason", f"{reason}: {message}")
        label(text, "Runtime", runtime(status.get("startTime"), status.get("completionTime"), now))
        scale = workflow_spec(wf)['orchestration'].get('testScale')
        if tested:  # a diagnosis: its tests, whose sizes vary (nodesPerJob is its largest screening group's)
            label(text, "Scale", f"{scale}  {tested}")
        else:
            label(text, "Scale", f"{scale}  {count(orch.get('totalGroups', 0), 'group')} of {orch.get('nodesPerJob', '?')}")
        label(text, "Platform", f"{orch.get('detectedPlatform')} / {orch.get('detectedGPUArchitecture')}")
        for key, expression in (job_template_spec(wf).get("thresholds") or {}).items():
            label(text, "Threshold", f"{key}: {expression}")
        for item in orch.get("excludedNodes") or []:
            label(text, "Excluded", f"{item['name']}: {item.get('message') or item['reason']}")
        for failure in failed:
            label(text, "Failed", f"{failure['name']}: {failure['reason']} — {failure.get('message', '')}")
        return text

    def _current(self) -> dict[str, Any]:
        tree = self.query_one(Tree)
        return (tree.cursor_node.data if tree.cursor_node else None) or {}

    def action_map(self) -> None:
        """The map of this certification alone (its top bar says `certification NAME`): merged with the others (the
        dashboard's map), a node its diagnosis cleared showed another certification's `!` or `?`."""
        from nvcre_tui.screens.topology import TopologyScreen

        if not self._refuse_if_gone():
            self.app.push_screen(TopologyScreen(self.certification))

    def action_next_failure(self) -> None:
        if self._refuse_if_gone():
            return
        tree = self.query_one(Tree)
        order = self._walk(tree.root)  # document order: collapsed nodes have no line yet
        failed = [i for i, n in enumerate(order) if (n.data or {}).get("failed") or (n.data or {}).get("suspect")]
        if not failed:
            self.notify("no failures: no failed node, infrastructure fault, group or category, and no suspect under diagnosis")
            return
        here = order.index(tree.cursor_node) if tree.cursor_node in order else -1
        target = order[next((i for i in failed if i > here), failed[0])]
        self._reveal(target)
        self.call_after_refresh(tree.move_cursor, target)

    def action_logs(self) -> None:
        from nvcre_tui.screens.logs import LogsScreen

        if self._refuse_if_gone():
            return
        job = self._current().get("job")
        if self._nothing_ran("log"):
            return
        if job is None:
            self.notify("select a group or node with a job")
            return
        self.app.push_screen(LogsScreen(job["metadata"]["name"]))

    def action_bandwidth(self) -> None:
        from nvcre_tui.screens.bandwidth import BandwidthScreen, measured_by

        if self._refuse_if_gone():
            return
        wf = self._current().get("workflow")
        if self._nothing_ran("bandwidth"):
            return
        if wf is None:
            self.notify("select a category, group or node")
            return
        measurement = measurement_of(wf)
        if measurement.get("parser") != "nccl":  # the screen plots nccl-tests' busbw curves; the others measure something else
            self.notify(printable(f"b: bandwidth curves are for nccl-tests categories; {wf['metadata']['name']} has {measured_by(measurement)}",
                                  newlines=False), severity="warning", markup=False)
            return
        self.app.push_screen(BandwidthScreen(wf["metadata"]["name"]))

    def _nothing_ran(self, what: str) -> bool:
        """On a category with no Workflow (waiting for the categories before it, for nodes, or refused): say that nothing
        of it ran, so it has no `what` yet. `b` on one said "select a category, group or node" of a selected category."""
        data = self._current()
        if data.get("kind") != "pending":
            return False
        status = data["status"]
        why = f" ({status['reason']})" if status.get("reason") else ""
        name = data.get("title") or f"{status['domain']}/{status['variant']}"  # `#2`, as its line says it
        self.notify(printable(f"{name} has no Workflow{why}: nothing of it ran, no {what} yet",
                              newlines=False), markup=False)
        return True

    def action_delete_certification(self) -> None:
        if self._refuse_if_gone():
            return
        cert = self.nvcre.snapshot.certification(self.certification) if self.nvcre.snapshot else None
        if cert is None:
            self.notify(printable(f"no certification {self.certification}"), markup=False)  # the name may be as typed after :cert
            return
        self.ask_to_delete(cert, self._deleted)

    def _deleted(self) -> None:
        """Nothing is left to show: back to the screen this one was opened from (the dashboard)."""
        self._gone = True
        self.leave_once_on_top()

    def action_node(self) -> None:
        from nvcre_tui.screens.node import NodeScreen

        if self._refuse_if_gone():
            return
        name = self._current().get("node")
        if not name:
            self.notify("select a node line to open its record")
            return
        self.app.push_screen(NodeScreen(name))
