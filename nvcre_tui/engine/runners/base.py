"""The Runner contract: executes WorkloadRuns and serves their output.

A runner is level-triggered like the controllers: `reconcile_run` reads a WorkloadRun and writes its
status (phase Scheduling / Running / Succeeded / Failed, times, exit code, the node at fault) through the
store; nothing lives only in memory, so a restarted engine continues where the last one stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from nvcre_tui.engine.api.vocabulary import FAILED
from nvcre_tui.engine.store.protocol import ResourceKind

Obj = dict[str, Any]


class Runner(Protocol):
    """Executes WorkloadRuns on some fleet."""

    simulated: bool

    async def reconcile_run(self, run: Obj) -> float | None:
        """Advance one WorkloadRun; return seconds until it needs another look (None: only on change)."""
        ...

    async def logs(self, run: Obj, *, required: bool = True) -> list[str]:
        """The run's output (launcher / rank-0 log): kubelet-timestamped lines without trailing newlines. `required`: the
        engine is to judge the run by it, so a read the server fails raises its retryable error (looked at again, for up
        to kube/podlogs.READ_PATIENCE_SECONDS); not required (evidence after a verdict made otherwise, a viewer): what
        was kept. A verdict its log does not decide must not wait on a kubelet that no longer answers."""
        ...

    async def stop(self, run: Obj) -> None:
        """Stop a run that is being abandoned (timeout, hardware failure); its logs stay readable."""
        ...

    async def tick(self) -> float | None:
        """Fleet-level actions outside any run (a node cordoned at time t); seconds until the next one."""
        ...

    async def release(self, owner: Obj) -> None:
        """Delete what the runner made on the cluster for an nvcre Job (or a standalone WorkloadRun) that is
        being collected because its Certification is gone (engine/controllers/collect.py)."""
        ...


# How often a namespace where runs are short of pods, or categories wait, is asked whether it is being terminated.
NAMESPACE_PROBE_SECONDS = 30.0


@runtime_checkable
class NodeOccupants(Protocol):
    """A runner that can read which pods not nvcre's are bound to a node (the Kubernetes runner: another team's
    training holding its GPUs), for discovery to leave a busy node out (NodeBusy). Runners without it (the simulated
    fleet, where nothing but nvcre runs) are never asked."""

    async def others_on(self, nodes: Sequence[str]) -> dict[str, list[Obj]]:
        """node -> the pods bound to it that nvcre did not make and that have not finished, for each of `nodes`."""
        ...


@runtime_checkable
class NamespaceProbe(Protocol):
    """A runner that can tell whether a namespace is being terminated (the Kubernetes runner): a category waiting
    there tries no create, so it never meets the refusal that says so. Runners without it are never asked."""

    async def namespace_closing(self, kind: ResourceKind, probe: Obj) -> bool:
        """Whether `probe`'s namespace refuses new objects because it is being terminated; `probe` is an object of
        `kind` that could be created there. Asked of the cluster at most once an interval a namespace."""
        ...


@runtime_checkable
class EndedRelease(Protocol):
    """A runner that holds cluster objects past a run's end unless it gives them back (the Kubernetes runner: a failed
    run's workload, a run's ComputeDomain). The WorkloadRun controller asks it of every ended run it reconciles (all of
    them as an engine starts): an engine that died, restarted or lost its Lease between writing a run's end and
    releasing them would otherwise leave them until the Certification is deleted."""

    async def release_ended(self, run: Obj) -> None:
        """Release what ended `run` still holds, unless done already (idempotent; a no-op for a run that held nothing)."""
        ...


STOP_EXIT_CODE = 137  # SIGKILL after the grace period: what kubelet reports for a pod that was stopped


def stopped_status(phase: str | None, now: str) -> dict[str, Any]:
    """The status patch of a run the engine stopped. Only a run whose pods ran has an exit code (137, as kubelet
    reports a killed container): a run stopped before any pod started has none (137 would read as an OOM kill)."""
    if phase == "Running":
        return {"phase": FAILED, "reason": "Stopped", "exitCode": STOP_EXIT_CODE, "message": "stopped by the engine", "completionTime": now}
    return {"phase": FAILED, "reason": "Stopped", "message": "stopped by the engine before its pods ran", "completionTime": now}
