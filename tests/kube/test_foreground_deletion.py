"""A certification deleted in the foreground (`kubectl delete --cascade=foreground`, Argo CD's deletion) on an API server
without kube-controller-manager: its `foregroundDeletion` finalizer is the garbage collector's, which never comes, so it
stays Terminating with its whole tree. nvcre's own deletion (propagationPolicy Background, as the API server then drops
that finalizer) removes it, and `setup reset` is not held by it.

Run on the emulator, and on a real kube-apiserver + etcd when KUBEBUILDER_ASSETS names them (skipped without)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.protocol import BATCH_JOB, CERTIFICATION, JOB, WORKFLOW, WORKLOADRUN
from tests.kube.bare import SERVERS, Bare, bare_server
from tests.kube.cluster import store_on

CERT_PATH = "/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/certifications/{name}"


@pytest.fixture(params=SERVERS)
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Bare]:
    yield from bare_server(request, tmp_path)


async def _left(kubeconfig: Path) -> dict[str, list[str]]:
    """What of nvcre's tree the namespace still holds (the batch Job: the workload, no Trainer here)."""
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        return {kind.plural + ("" if kind.group == CERTIFICATION.group else f".{kind.group}"):
                sorted(o["metadata"]["name"] for o in (await store.list(kind, "default")).items)
                for kind in (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN, BATCH_JOB)}
    finally:
        await store.close()


def _started_then_deleted_in_the_foreground(cluster: Bare, capsys: pytest.CaptureFixture[str]) -> None:
    """`run --wait` until its timeout (its engine made the tree, no pod ever runs), then kubectl's foreground delete."""
    kubeconfig = cluster.kubeconfig
    code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                 "--name", "fg", "--wait", "--timeout", "3s"])
    assert code == 3, capsys.readouterr().err
    assert all(asyncio.run(_left(kubeconfig)).values())  # a Workflow, Job, run and batch Job each
    deleting = cluster.delete(CERT_PATH.format(name="fg"), "Foreground")
    assert deleting["metadata"]["finalizers"] == ["foregroundDeletion"]
    capsys.readouterr()


def test_delete_wait_removes_a_certification_held_by_a_foreground_deletion(cluster: Bare,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """It waited its whole timeout and blamed the absent engine (`is nvcre controller running?`) while it ran one."""
    kubeconfig = cluster.kubeconfig
    _started_then_deleted_in_the_foreground(cluster, capsys)
    code = main(["certification", "delete", "fg", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "30s"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "certification fg deleted from namespace default; it had not finished: its runs stop" in err
    assert asyncio.run(_left(kubeconfig)) == {"certifications": [], "workflows": [], "jobs": [], "workloadruns": [],
                                            "jobs.batch": []}


def test_delete_wait_collects_a_workflow_kubectl_deleted_in_the_foreground(cluster: Bare, capsys: pytest.CaptureFixture[str]) -> None:
    """One of its Workflows deleted with --cascade=foreground first, then the certification with nvcre: the engine never
    looked at an object being deleted, so that Workflow, its Job and run stayed, and `delete --wait` waited its whole
    timeout blaming an absent engine while it ran one."""
    kubeconfig = cluster.kubeconfig
    assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                 "--name", "fg", "--wait", "--timeout", "3s"]) == 3
    [workflow] = asyncio.run(_left(kubeconfig))["workflows"]
    deleting = cluster.delete(f"/apis/nvcre.nvidia.com/v1alpha1/namespaces/default/workflows/{workflow}", "Foreground")
    assert deleting["metadata"]["finalizers"] == ["foregroundDeletion"]
    capsys.readouterr()
    code = main(["certification", "delete", "fg", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "30s"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert asyncio.run(_left(kubeconfig)) == {"certifications": [], "workflows": [], "jobs": [], "workloadruns": [],
                                            "jobs.batch": []}


def test_delete_wait_names_the_finalizer_of_another_client_that_holds_a_workflow(cluster: Bare,
                                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A Workflow some other controller holds by its own finalizer stays (with its Job and run) until that controller lets
    it go: the wait said no engine had removed them (`is nvcre controller running?`) while it ran one."""
    from nvcre_tui.engine.store.protocol import WORKFLOW

    kubeconfig = cluster.kubeconfig
    assert main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                 "--name", "fg", "--wait", "--timeout", "3s"]) == 3
    [workflow] = asyncio.run(_left(kubeconfig))["workflows"]

    async def hold() -> None:
        store = await store_on(kubeconfig, SystemClock(), "another-controller")
        try:
            held = await store.get(WORKFLOW, workflow, "default")
            held["metadata"]["finalizers"] = ["example.com/hold"]
            await store.update(WORKFLOW, held)
        finally:
            await store.close()

    asyncio.run(hold())
    capsys.readouterr()
    code = main(["certification", "delete", "fg", "--kubeconfig", str(kubeconfig), "--wait", "--timeout", "3s"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.splitlines()[-1] == (f"after 3s, 3 of its objects remain (Job, Workflow, WorkloadRun): workflow default/{workflow} "
                                    "is held by example.com/hold; whoever set a finalizer removes it, then what it holds goes "
                                    "with the rest"), err


def _run_deleted_in_the_foreground_meanwhile(cluster: Bare, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, float, str]:
    """`run --wait` of fw, deleted with kubectl's --cascade=foreground two seconds in: its exit code, seconds, stderr."""
    import threading
    import time
    import urllib.error

    def delete_when_seen() -> None:
        for _ in range(200):
            try:
                cluster.delete(CERT_PATH.format(name="fw"), "Foreground")
                return
            except (urllib.error.HTTPError, RuntimeError):  # not created yet (the emulator's 404, or envtest's ApiError)
                time.sleep(0.05)

    deleter = threading.Timer(2.0, delete_when_seen)
    deleter.start()
    started = time.monotonic()
    code = main(["certification", "run", "--kubeconfig", str(cluster.kubeconfig), "--category", "communication/nccl-all-reduce",
                 "--name", "fw", "--wait", "--timeout", "60s", *flags])
    deleter.join()
    return code, started, capsys.readouterr().err


def test_run_wait_ends_when_its_certification_is_deleted_in_the_foreground(cluster: Bare,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """It followed a certification no engine would ever advance again until its timeout (an hour by default), then said
    it went on; a deletion in the background ends the follow at once (exit 2), and now so does this one, saying what
    holds it."""
    import time

    code, started, err = _run_deleted_in_the_foreground_meanwhile(cluster, capsys)
    assert code == 2 and time.monotonic() - started < 30, err
    assert err.strip().splitlines()[-1].startswith(
        "certification 'fw' was deleted while it was followed (`nvcre certification delete`, the console's x or kubectl); it has "
        "no report; certification fw is being deleted (since "), err
    assert err.strip().endswith("`nvcre certification delete fw` completes the deletion"), err


def test_run_wait_cleanup_says_it_completed_a_foreground_deletion(cluster: Bare, capsys: pytest.CaptureFixture[str]) -> None:
    """--cleanup's deletion completes it (the server drops the collector's finalizer), yet the last line still sent the
    user to `nvcre certification delete fw` to complete the deletion."""
    code, _, err = _run_deleted_in_the_foreground_meanwhile(cluster, capsys, "--cleanup")
    assert code == 2, err
    assert err.strip().splitlines()[-1] == (
        "certification 'fw' was deleted while it was followed (`nvcre certification delete`, the console's x or kubectl); it has "
        "no report; it was held by foregroundDeletion, and --cleanup completed the deletion"), err
    assert not any(asyncio.run(_left(cluster.kubeconfig)).values())


def test_report_and_list_say_what_holds_the_deletion_and_how_to_complete_it(cluster: Bare, capsys: pytest.CaptureFixture[str]) -> None:
    """Its report read RUNNING (exit 3), and said only that no engine held the lease, as if one would advance it."""
    kubeconfig = cluster.kubeconfig
    _started_then_deleted_in_the_foreground(cluster, capsys)
    held = (") and held by foregroundDeletion, the garbage collector's finalizer (kubectl delete --cascade=foreground): an API "
            "server without kube-controller-manager never removes it; `nvcre certification delete fg` completes the deletion")
    code = main(["certification", "report", "fg", "--kubeconfig", str(kubeconfig)])
    out, err = capsys.readouterr()
    assert code == 3 and "Result:         RUNNING" in out
    [line] = err.splitlines()
    assert line.startswith("nvcre: certification fg is being deleted (since ") and line.endswith(held), err
    assert main(["certification", "list", "--kubeconfig", str(kubeconfig)]) == 0  # the list, where it read RUNNING alone
    out, err = capsys.readouterr()
    assert out.splitlines()[1].split()[:2] == ["fg", "RUNNING"]
    [line] = err.splitlines()
    assert line.startswith("nvcre: certification fg is being deleted (since ") and line.endswith(held), err


async def _install_left(kubeconfig: Path) -> dict[str, Any]:
    """The nvcre CRDs still there, and the install namespace (its phase) if it is."""
    from nvcre_tui.engine.store.errors import NotFound
    from nvcre_tui.engine.store.protocol import CRD, NAMESPACE

    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        crds = sorted(c["metadata"]["name"] for c in (await store.list(CRD)).items if c["metadata"]["name"].endswith(".nvcre.nvidia.com"))
        try:
            phase = (await store.get(NAMESPACE, "nvcre-system")).get("status", {}).get("phase")
        except NotFound:
            phase = None
        return {"crds": crds, "namespace": phase}
    finally:
        await store.close()


def test_reset_is_not_held_by_a_certification_deleted_in_the_foreground(cluster: Bare,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The Certification CRD waited for it for the whole timeout ("their objects are being removed": they never were),
    then reset exited leaving nvcre-system Terminating for good, so `setup init` was refused ever after."""
    kubeconfig = cluster.kubeconfig
    _started_then_deleted_in_the_foreground(cluster, capsys)
    code = main(["setup", "reset", "--kubeconfig", str(kubeconfig), "--yes", "--force", "--timeout", "10"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    assert ("certification default/fg (foregroundDeletion) deleted: only a garbage collector removes that finalizer, and the "
            "CRDs' deletion waits for it") in out.splitlines()
    assert asyncio.run(_install_left(kubeconfig)) == {"crds": [], "namespace": None}
    assert main(["setup", "init", "--kubeconfig", str(kubeconfig)]) == 0


def test_reset_names_the_finalizer_of_another_client_that_holds_the_crds_and_still_removes_the_namespace(
        cluster: Bare, capsys: pytest.CaptureFixture[str]) -> None:
    """A finalizer nvcre did not set is left to whoever set it, and named; the install namespace, which does not wait for
    the CRDs, is still removed."""
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    kubeconfig = cluster.kubeconfig

    async def held_by_another() -> None:
        store = await store_on(kubeconfig, SystemClock(), "kubectl")
        try:
            await store.create(CERTIFICATION, {
                "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
                "metadata": {"name": "kept", "namespace": "default", "finalizers": ["example.com/hold"]},
                "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                         "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}})
        finally:
            await store.close()

    asyncio.run(held_by_another())
    code = main(["setup", "reset", "--kubeconfig", str(kubeconfig), "--yes", "--force", "--timeout", "2"])
    out, err = capsys.readouterr()
    assert code == 1
    assert err.splitlines() == [
        "nvcre setup reset: CRDs still being deleted after 2s: certifications.nvcre.nvidia.com (1 object held by finalizers "
        "nobody removed: certification default/kept (example.com/hold); whoever set them removes them, then the CRDs go)"], err
    assert asyncio.run(_install_left(kubeconfig)) == {"crds": ["certifications.nvcre.nvidia.com"], "namespace": None}


def test_another_clients_finalizer_is_left_to_it_and_a_certification_not_being_deleted_has_no_note() -> None:
    from nvcre_tui.engine.kube.held import deletion_held

    stamp = "2026-01-01T00:00:00Z"
    assert deletion_held("c", {"metadata": {"finalizers": ["example.com/hold"]}}) is None  # not being deleted
    assert deletion_held("c", {"metadata": {"deletionTimestamp": stamp, "finalizers": ["example.com/hold", "foregroundDeletion"]}}) == (
        f"certification c is being deleted (since {stamp}) and held by example.com/hold, foregroundDeletion: whoever set it "
        "(example.com/hold) removes it, then it goes")
    assert "--cascade=orphan" in str(deletion_held("c", {"metadata": {"deletionTimestamp": stamp, "finalizers": ["orphan"]}}))
