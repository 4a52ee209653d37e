"""A read RBAC refused said which role grants it only for certifications, workflows and runs: a refused read of
nvcre's Jobs (or of ConfigMaps, Events, a run's pods, the engine Lease) gave the server's words alone, `nvcre:
Forbidden: ...`. Every read the CLI and the console make says it now, from one table (grants.READS: resource -> role)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.app import NvcreApp
from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.grants import READS, reading_takes
from nvcre_tui.engine.store.errors import Forbidden, NotFound, ReadOnlyRefusal
from nvcre_tui.engine.store.protocol import (BATCH_JOB, CERTIFICATION, CLUSTER_ROLE, CONFIGMAP, EVENT, JOB, LEASE, NODE, POD,
                                             RBAC_GROUP, WORKFLOW, WORKLOADRUN)
from tests.kube.cluster import installed, installed_in_thread, store_on
from tests.kube.test_console_on_cluster import args_for, opener
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.users import least_privileged
from tests.test_cli_list import _create

NO_JOBS = "test-reads-all-but-jobs"  # a hand-made role: nvcre's kinds but its Jobs
JOBS_TAKE = ("reading nvcre jobs in namespace default takes nvcre-view there, which setup init folds into the built-in view, "
             "edit and admin roles: a RoleBinding to one of them")


async def _role_without_jobs(kubeconfig: Path) -> None:
    admin = await store_on(kubeconfig, SystemClock(), "test-admin")
    try:
        rule = {"apiGroups": [CERTIFICATION.group], "resources": ["certifications", "workflows", "workloadruns"],
                "verbs": ["get", "list", "watch"]}
        await admin.create(CLUSTER_ROLE, {"apiVersion": f"{RBAC_GROUP}/v1", "kind": "ClusterRole", "metadata": {"name": NO_JOBS},
                                          "rules": [rule]})
    finally:
        await admin.close()


@pytest.mark.parametrize("command", [["certification", "report", "soak"], ["certification", "list"],
                                     ["certification", "logs", "soak"]])
def test_a_refused_read_of_nvcre_jobs_names_the_role_that_grants_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    command: list[str]) -> None:
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_create(kubeconfig))
        asyncio.run(_role_without_jobs(kubeconfig))
        erin = asyncio.run(least_privileged(server, kubeconfig, "erin", roles=(NO_JOBS,), nodes=False))
        assert main([*command, "--kubeconfig", str(erin), "--history", str(tmp_path / "h.db")]) == 2
        err = capsys.readouterr().err
        [line] = [line for line in err.splitlines() if "forbidden" in line and "Nodes:" not in line]
        assert 'User "erin" cannot list resource "jobs" in API group "nvcre.nvidia.com"' in line, line
        assert line.endswith(f"; {JOBS_TAKE}"), line
        assert "Traceback" not in err


async def test_the_console_that_cannot_open_names_the_role_that_grants_the_read(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        await _role_without_jobs(kubeconfig)
        erin = await least_privileged(server, kubeconfig, "erin", roles=(NO_JOBS,), nodes=False)
        app = NvcreApp(opener=opener(args_for(erin, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(200, 50)) as pilot:
            for _ in range(100):
                if app.startup_error is not None:
                    break
                await pilot.pause(0.05)
        assert app.startup_error is not None and 'cannot list resource "jobs"' in app.startup_error
        assert app.startup_error.endswith(f"; {JOBS_TAKE}"), app.startup_error


def test_every_read_of_the_cli_and_console_has_one_grant_and_nothing_else_is_given_one() -> None:
    """The table covers the kinds read (nvcre's four, ConfigMaps, a run's pods, the engine Lease; Nodes say theirs);
    batch's Jobs share nvcre's kind name, not its grant; a refusal that is no RBAC's names none. Events had a row (the
    built-in view role) that no read used: the CLI and console read none, and the engine's get of one (before it
    counts it up) is part of a write nvcre-engine's ClusterRole grants, which view would not have answered."""
    read = (CERTIFICATION, WORKFLOW, JOB, WORKLOADRUN, CONFIGMAP, POD, LEASE, NODE)
    for kind in read:
        said = reading_takes(Forbidden.about(kind, None, "team-a", "forbidden"))
        assert said is not None and said.startswith("reading "), kind
        assert (kind is NODE) or "in namespace team-a" in said, said
    assert {(kind.group, kind.plural) for kind in read if kind is not NODE} == set(READS)
    assert reading_takes(Forbidden.about(BATCH_JOB, None, "team-a", "forbidden")) is None
    assert reading_takes(Forbidden.about(EVENT, "burn-in.1", "team-a", "forbidden")) is None
    assert reading_takes(ReadOnlyRefusal.about(JOB, None, "team-a", "read-only")) is None
    assert reading_takes(NotFound.about(JOB, None, "team-a", "not found")) is None
    write = Forbidden.about(CONFIGMAP, "results", "team-a", "forbidden")
    write.read = False  # a refused write (KubeStore knows the method): no read grant is its answer
    assert reading_takes(write) is None
    cluster_wide = reading_takes(Forbidden.about(CONFIGMAP, None, None, "forbidden"))
    assert cluster_wide is not None and "in every namespace" in cluster_wide and "-n NS reads one namespace" in cluster_wide
