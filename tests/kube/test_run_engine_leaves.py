"""On an API server alone (kube-apiserver + etcd: no `nvcre controller`, no kubelet), the process that runs
`certification run --wait` is the only nvcre engine. When it stops following (its --timeout, or ctrl-c) nothing
advances the certification any more: it said "the certification goes on", and `report` showed RUNNING with no word
that nothing runs it. Both say so now; a report while an engine holds the Lease does not."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube.install import INSTALL_NAMESPACE
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.sim.scenario import Scenario
from tests.kube.cluster import installed_in_thread, store_on
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.runner.harness import register_gpu_nodes

FLEET = {"name": "two", "seed": 4, "nodes": [{"count": 2, "cliques": 1}]}
NO_ENGINE = ("this command was its engine: nothing advances it until another nvcre engine takes the lease "
             "(`nvcre controller`, or the console `nvcre`)")


async def _register(kubeconfig: Path) -> None:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        await register_gpu_nodes(store, SystemClock(), Scenario.model_validate(FLEET))  # real-looking GPU Nodes: no kubelet
    finally:
        await store.close()


async def _hold_lease(kubeconfig: Path) -> None:
    store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
    try:
        assert await EngineLease(store, SystemClock(), INSTALL_NAMESPACE, "controller@elsewhere/1", duration=3600).try_acquire()
    finally:
        await store.close()


def test_a_run_that_stops_following_says_nothing_advances_it_and_so_does_its_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_register(kubeconfig))
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                     "--name", "alone", "--wait", "--timeout", "2s", "--history", str(tmp_path / "h.db")])
        out, err = capsys.readouterr()
        assert code == 3 and "Result:         RUNNING" in out
        assert f"Timed out after 2s; the certification stays, but {NO_ENGINE}." in err
        assert "goes on" not in err

        report = ["certification", "report", "alone", "--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]
        assert main(report) == 3
        out, err = capsys.readouterr()
        assert "Result:         RUNNING" in out
        assert err.strip() == ("nvcre: alone is RUNNING, but no nvcre engine holds the lease nvcre-system/nvcre-engine: "
                               "nothing advances it until one runs (`nvcre controller`, or the console `nvcre`)")
        assert main([*report, "-o", "json"]) == 3
        out, err = capsys.readouterr()
        assert json.loads(out)["result"] == "RUNNING" and "no nvcre engine holds the lease" in err  # stdout stays JSON

        asyncio.run(_hold_lease(kubeconfig))  # `nvcre controller` runs elsewhere: RUNNING is progress, nothing to say
        assert main(report) == 3
        assert capsys.readouterr().err == ""


def test_the_note_names_each_certification_as_its_report_says_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A certification no category of which has started reads `Result: WAITING to start` in its report; the note under
    it said `is RUNNING` (the Certification's own result), as if it ran. It names each as its report's Result does."""
    from tests.kube.users import least_privileged

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                     "--name", "alone", "--wait", "--timeout", "2s", "--history", str(tmp_path / "h.db")])
        assert code == 3
        alice = asyncio.run(least_privileged(server, kubeconfig, "alice"))  # may not run the engine: it only creates
        assert main(["certification", "run", "--kubeconfig", str(alice), "--category", "communication/nccl-all-reduce",
                     "--name", "waits", "--history", str(tmp_path / "h.db")]) == 0
        capsys.readouterr()
        report = ["certification", "report", "--kubeconfig", str(alice), "--history", str(tmp_path / "h.db")]
        assert main([*report, "waits"]) == 3
        out, err = capsys.readouterr()
        assert "Result:         WAITING to start" in out
        assert err.strip() == ("nvcre: waits is WAITING to start, but no nvcre engine holds the lease nvcre-system/nvcre-engine: "
                               "nothing advances it until one runs (`nvcre controller`, or the console `nvcre`)")
        assert main([*report, "alone", "waits"]) == 3
        err = capsys.readouterr().err
        assert err.strip().startswith("nvcre: alone is RUNNING, waits is WAITING to start, but no nvcre engine holds the lease "), err
        assert err.strip().endswith("nothing advances them until one runs (`nvcre controller`, or the console `nvcre`)"), err


def test_a_run_into_a_namespace_that_does_not_exist_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said `--category: Certification nope/nvcre-...: namespaces "nope" not found`, as if the category were at fault."""
    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_register(kubeconfig))
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                     "-n", "nope", "--wait", "--history", str(tmp_path / "h.db")])
        err = capsys.readouterr().err
        assert code == 2
        assert err.strip().splitlines()[-1] == ("namespace nope not found on cluster emulator (nothing was created: "
                                                "kubectl create namespace nope, or another -n)")  # the namespace said once
        code = main(["certification", "report", "alone", "--kubeconfig", str(kubeconfig), "-n", "nope", "--history", str(tmp_path / "h.db")])
        assert code == 2 and capsys.readouterr().err.strip() == "certification 'alone' not found in namespace nope of cluster emulator"


def test_a_run_into_a_namespace_being_terminated_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A namespace deleted (Terminating: an API server without a namespace controller never empties it) and run into
    again: it said the server's `certifications.nvcre.nvidia.com "..." is forbidden: unable to create new content ...;
    metadata.namespace: ...`, which names neither that nothing was made nor what to do."""
    from nvcre_tui.engine.store.protocol import NAMESPACE

    async def terminating() -> None:
        store = await store_on(kubeconfig, SystemClock(), "nvcre-test")
        try:
            await store.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
            await store.delete(NAMESPACE, "team")
        finally:
            await store.close()

    with installed_in_thread(tmp_path) as (_, kubeconfig):
        asyncio.run(_register(kubeconfig))
        asyncio.run(terminating())
        code = main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
                     "--name", "again", "-n", "team", "--wait", "--history", str(tmp_path / "h.db")])
        err = capsys.readouterr().err
        assert code == 2
        assert err.strip().splitlines()[-1] == ("namespace team on cluster emulator is being deleted (Terminating) and admits no new "
                                                "object (certification again was not created: wait until it is gone and create it again, or another -n)")


def test_the_users_writes_and_the_engines_are_told_apart_by_their_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An audit log credited the user's own writes (the certification created, then deleted by --cleanup) to the
    engine, whose role may make neither (a walkthrough found it): the command's requests say `nvcre`, the engine's
    reconciling `nvcre-engine`."""
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        main(["certification", "run", "--kubeconfig", str(kubeconfig), "--category", "communication/nccl-all-reduce",
              "--name", "audited", "--wait", "--timeout", "2s", "--cleanup", "--history", str(tmp_path / "h.db")])
        capsys.readouterr()
        agents: dict[tuple[str, str, str], set[str]] = {}
        for request in server.requests:
            agents.setdefault((request.verb, request.resource, request.subresource), set()).add(request.user_agent.split("/")[0])
    assert agents[("create", "certifications", "")] == {"nvcre"} and agents[("delete", "certifications", "")] == {"nvcre"}
    assert agents[("create", "workflows", "")] == {"nvcre-engine"}
    assert {agent for (verb, resource, sub), found in agents.items() if sub == "status" and resource == "certifications"
            for agent in found} == {"nvcre-engine"}
    assert {agent for (verb, resource, _), found in agents.items() if resource == "leases" and verb != "get" for agent in found} == {"nvcre-engine"}
