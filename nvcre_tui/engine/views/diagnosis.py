"""A category's diagnosis as the console reads it: its readable state and each node's verdict (read once per stored
state), and the infrastructure faults it named (degraded links and uplinks between cliques)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nvcre_tui.engine.api.bodies import job_template_spec, workflow_spec
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_CLIQUE
from nvcre_tui.engine.diagnose import readable
from nvcre_tui.engine.diagnose.state import STATUS_KEYS
from nvcre_tui.engine.judging.fabric_fault import fault_message
from nvcre_tui.engine.parsers.measurements import BUS_BANDWIDTH
from nvcre_tui.engine.report.model import measured_span
from nvcre_tui.engine.report.readmodel import CategoryView
from nvcre_tui.engine.views.snapshot import Obj, Snapshot


_READ_LIMIT = 64  # diagnose states kept read (one per diagnosing category of the certifications shown)
_read: dict[int, tuple[object, Obj, dict[str, str]]] = {}  # id(stored) -> (stored, readable, verdicts)


def _diagnosis(category: CategoryView) -> tuple[Obj, dict[str, str]] | None:
    """The category's diagnose state as `diagnose.readable` spells it out, and each node's status in it; read once
    per stored state (the watch cache shares an unchanged object between snapshots; the entry keeps it, so its id
    is not reused while kept)."""
    stored = category.orchestration.get("diagnose")
    if stored is None:
        return None
    found = _read.get(id(stored))
    if found is None or found[0] is not stored:
        state = readable(stored)
        verdicts: dict[str, str] = {str(node): status for status, key in STATUS_KEYS.items() for node in state.get(key) or []}
        found = _read[id(stored)] = (stored, state, verdicts)
        while len(_read) > _READ_LIMIT:
            del _read[next(iter(_read))]
    return found[1], found[2]


def diagnose_state(category: CategoryView) -> Obj | None:
    """The category's readable diagnose state (`diagnose.readable`), None when it does not diagnose. Shared: never change it."""
    found = _diagnosis(category)
    return found[0] if found is not None else None


def diagnose_verdicts(category: CategoryView) -> dict[str, str]:
    """Node -> where the category's diagnosis left it (healthy, faulty, intermittent, inconclusive, suspect,
    untested); {} without a diagnosis. Shared: never change it."""
    found = _diagnosis(category)
    return found[1] if found is not None else {}


@dataclass(frozen=True)
class InfraFault:
    """An infrastructure fault a diagnosis named (`diagnose.infrastructureFaults[]`): a degraded link between two
    cliques, or one clique's uplink, with the category that named it and the failed tests that are its evidence."""

    cliques: tuple[str, ...]
    message: str
    category: str
    workflow: str
    topology_key: str  # the Node label whose values the cliques are
    tests: tuple[str, ...] = ()
    values: tuple[float, ...] = ()  # the measured values of its failed tests
    threshold: str = ""  # the category's busBandwidthGBps expression
    job: str | None = None  # the Job of its last failed test (its log is the evidence)
    localised: bool = True  # False: tests across these cliques failed, but no one link could be named (a note)

    @property
    def subject(self) -> str:
        """What it names: "fabric clique-0 ↔ clique-1 degraded", "uplink of clique-3 degraded", "links between 8
        cliques degraded" (a fabric fault), "links between clique-0, clique-1, clique-2 degraded (not localised)"."""
        if not self.localised:
            return f"links between {', '.join(self.cliques) or 'cliques'} degraded (not localised)"
        if len(self.cliques) == 1:
            return f"uplink of {self.cliques[0]} degraded"
        if len(self.cliques) > 2:
            return f"links between {len(self.cliques)} cliques degraded"
        return f"fabric {' ↔ '.join(self.cliques) or 'between cliques'} degraded"

    @property
    def measured(self) -> str:
        """The failed tests' values: "busBandwidthGBps 184.28-186.11 in 4 tests (value >= 300)"; "-" when none."""
        return measured_span(self.values, self.threshold or None)


def _topology_key(workflow: Obj) -> str:
    """The label naming the cliques the Workflow's diagnosis localised links between."""
    spec = workflow_spec(workflow).get("orchestration") or {}
    chosen = spec.get("diagnose") or (spec.get("onFailure") or {}).get("diagnose") or {}
    return str(chosen.get("topologyKey") or LABEL_GPU_CLIQUE)


# Diagnose notes saying links between cliques failed without one being named: shown beside the named faults.
UNLOCALISED_NOTES = ("fabric-unresolved",)


def category_faults(category: CategoryView) -> list[InfraFault]:
    """The infrastructure faults the category's diagnosis named, as it named them (none without a diagnosis)."""
    stored = category.orchestration.get("diagnose") or {}
    if not stored.get("infrastructureFaults") and not stored.get("notes"):
        return []  # most diagnoses name none: not worth reading the state for
    state, wf = diagnose_state(category), category.workflow
    if state is None or wf is None:
        return []
    tests = {str(t.get("group")): t for t in state.get("tests") or [] if isinstance(t, Mapping)}
    job_refs_by_group = {g["name"]: g.get("jobRef") for record in category.timeline for g in record.groups}
    threshold = str((job_template_spec(wf).get("thresholds") or {}).get(BUS_BANDWIDTH) or "")
    faults = []
    unresolved: dict[tuple[str, ...], Mapping[str, Any]] = {}  # one per set of cliques
    for note in state.get("notes") or []:
        if isinstance(note, Mapping) and note.get("kind") in UNLOCALISED_NOTES:
            unresolved.setdefault(tuple(str(c) for c in note.get("cliques") or []), note)
    for note in [*(state.get("infrastructureFaults") or []), *unresolved.values()]:
        failed = [str(name) for name in note.get("tests") or [] if tests.get(str(name), {}).get("passed") is False]
        values = tuple(float(v) for name in failed if isinstance(v := tests[name].get("value"), int | float) and not isinstance(v, bool))
        refs = [ref for name in failed if (ref := job_refs_by_group.get(name)) and ref in category.jobs_by_name]
        named = note.get("kind") not in UNLOCALISED_NOTES
        faults.append(InfraFault(tuple(str(c) for c in note.get("cliques") or []),
                                 fault_message(note, state, job_template_spec(wf).get("thresholds")) if named else str(note.get("message") or ""), category.key,
                                 str(wf["metadata"]["name"]), _topology_key(wf), tuple(str(t) for t in note.get("tests") or []),
                                 values, threshold, refs[-1] if refs else None, named))
    return faults


def infrastructure_faults(snapshot: Snapshot, cert_name: str | None = None) -> list[InfraFault]:
    """Every infrastructure fault one certification's diagnoses named (all certifications' when None), in category order."""
    return [fault for name, view in snapshot.views.items() if cert_name in (None, name)
            for category in view.categories for fault in category_faults(category)]


def clique_marks(faults: Iterable[InfraFault], topology_key: str) -> dict[str, str]:
    """Clique -> a map header's mark for the faults touching it: "✗link" (a degraded link to another clique),
    "✗uplink" (its own uplink); only faults whose cliques are values of `topology_key` (the map's grouping)."""
    marks: dict[str, str] = {}
    for fault in faults:
        if fault.topology_key != topology_key or not fault.localised:
            continue
        for clique in fault.cliques:
            if marks.get(clique) != "✗uplink":
                marks[clique] = "✗uplink" if len(fault.cliques) == 1 else "✗link"
    return marks
