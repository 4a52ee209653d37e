"""PodWatch's routing, without a server: a pod event wakes the run its job label belongs to, a Node event
the runs on that node, and a finished run is forgotten (its pods' events wake nothing)."""

from __future__ import annotations

from nvcre_tui.engine.api.vocabulary import LABEL_JOB
from nvcre_tui.engine.clock import ManualClock
from nvcre_tui.engine.runners.kubernetes.watch import PodWatch, pod_cache
from nvcre_tui.engine.store import MemoryStore
from nvcre_tui.engine.store.protocol import NODE, POD, WORKLOADRUN


def _run(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default"}}


def _pod(label: str, namespace: str = "default") -> dict:
    return {"metadata": {"name": f"{label}-0", "namespace": namespace, "labels": {LABEL_JOB: label}}}


def test_events_wake_the_runs_they_concern_and_nothing_else() -> None:
    watch = PodWatch(pod_cache(MemoryStore(ManualClock())))
    woken: list[object] = []
    watch.connect(woken.append)
    watch.track(_run("a-run"), "a", ["n1", "n2"])
    watch.track(_run("b-run"), "b", ["n2"])
    watch._pod_changed(POD, None, _pod("a"), False)  # noqa: SLF001 - the cache's subscriber, called as the cache calls it
    watch._pod_changed(POD, None, _pod("a", "other"), False)  # noqa: SLF001 - same label, another namespace
    watch._pod_changed(POD, None, {"metadata": "broken"}, False)  # noqa: SLF001 - never raises
    watch._node_changed(NODE, None, {"metadata": {"name": "n2"}}, False)  # noqa: SLF001
    assert woken == [(WORKLOADRUN, ("default", "a-run")), (WORKLOADRUN, ("default", "a-run")), (WORKLOADRUN, ("default", "b-run"))]
    watch.forget(_run("a-run"))
    woken.clear()
    watch._pod_changed(POD, _pod("a"), None, False)  # noqa: SLF001
    watch._node_changed(NODE, None, {"metadata": {"name": "n1"}}, False)  # noqa: SLF001
    assert woken == []
