"""A user bound to nvcre-edit alone in a namespace (README: "Bind `nvcre-edit` in a namespace to let a team certify there")
lists and reports its certifications. `certification list` exited 2 on `Forbidden: Node: nodes is forbidden`: every
command's session listed the Nodes cluster-wide, which no namespaced role grants. A viewer now goes on without them;
`list` shows nothing that needs them, `report` says once that it shows none."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.store.errors import Forbidden
from nvcre_tui.engine.store.memory import MemoryStore
from nvcre_tui.engine.store.protocol import CERTIFICATION, NODE, LabelSelectorInput, ListResult, ResourceKind
from nvcre_tui.engine.store.readonly import ReadOnlyStore
from nvcre_tui.engine.store.cache import WatchCache
from tests.kube.cluster import installed_in_thread
from tests.kube.test_run_engine_leaves import _register
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.users import least_privileged
from tests.test_cli_list import _create


def test_an_edit_user_without_nodes_lists_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_register(kubeconfig))
        asyncio.run(_create(kubeconfig))
        bob = asyncio.run(least_privileged(server, kubeconfig, "bob", ("nvcre-edit",), nodes=False))
        cluster = ["--kubeconfig", str(bob), "--history", str(tmp_path / "h.db")]
        assert main(["certification", "list", *cluster]) == 0
        out, err = capsys.readouterr()
        assert sorted(line.split()[0] for line in out.splitlines()[1:]) == ["burn-in", "soak"]
        assert err == ""  # no column of the list needs a Node: nothing to say
        assert main(["certification", "list", *cluster, "-o", "json"]) == 0
        assert sorted(row["name"] for row in json.loads(capsys.readouterr().out)) == ["burn-in", "soak"]

        assert main(["certification", "report", "soak", *cluster]) == 3  # RUNNING: no engine ran it
        out, err = capsys.readouterr()
        assert "Name:           soak" in out and "Traceback" not in err
        said = [line for line in err.splitlines() if "Nodes" in line]
        # it said `--read-only`, the wall and `report` needed them, above the report it had just shown without them
        assert said == ["nvcre: Nodes: this user may not list them on cluster emulator (forbidden): shown without them (no map, "
                        "no node states or GPU nodes found; the rest as usual); those take get, list and watch on nodes, which no "
                        "namespaced role grants (a ClusterRole with them and a ClusterRoleBinding)"]
        assert not [r for r in server.requests if r.user == "bob" and r.resource == "nodes" and r.verb == "watch"]


class _NoNodes(ReadOnlyStore):
    """A store whose Node list the server refuses, as RBAC does."""

    async def list(self, kind: ResourceKind, namespace: str | None = None, label_selector: LabelSelectorInput = None,
                   field_selector: str | None = None) -> ListResult:
        if kind == NODE:
            raise Forbidden.about(NODE, None, None, "nodes is forbidden: User \"bob\" cannot list resource \"nodes\"")
        return await super().list(kind, namespace, label_selector, field_selector)


async def test_a_cache_does_without_an_optional_kind_it_may_not_list_and_only_that() -> None:
    store = _NoNodes(MemoryStore(SystemClock()))
    cache = WatchCache(store, (NODE, CERTIFICATION), optional=(NODE,))
    await cache.start()
    try:
        assert cache.list(NODE) == [] and "nodes is forbidden" in cache.withheld[NODE]
        assert CERTIFICATION not in cache.withheld
    finally:
        await cache.stop()
    with pytest.raises(Forbidden):  # a kind not optional still fails the start: the caller says it in one line
        await WatchCache(store, (NODE, CERTIFICATION)).start()


def test_a_certification_the_server_refuses_is_one_line_and_the_others_are_reported(tmp_path: Path,
                                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`report soak burn-in` where the API server refuses the read of soak alone (RBAC by resourceNames): the store's
    error stopped the whole command before burn-in's report printed. Now burn-in is reported and soak is one line,
    exit 2."""
    from tests.kubeapi.faults import Fault

    with installed_in_thread(tmp_path) as (server, kubeconfig):
        asyncio.run(_create(kubeconfig))
        server.faults.add(Fault(method="GET", path=r"/certifications/soak$", status=403,
                                message='certifications.nvcre.nvidia.com "soak" is forbidden: injected'))
        cluster = ["--kubeconfig", str(kubeconfig), "--history", str(tmp_path / "h.db")]
        assert main(["certification", "report", "soak", "burn-in", *cluster, "-o", "json"]) == 2
        out, err = capsys.readouterr()
        assert [report["name"] for report in json.loads(out)] == ["burn-in"]
        refused = [line for line in err.splitlines() if "soak" in line]
        assert len(refused) == 1 and refused[0].startswith("certification 'soak': ") and "forbidden" in refused[0], err
        assert "Traceback" not in err


async def test_a_cache_whose_first_list_was_refused_is_not_taken_as_started() -> None:
    """A start whose first list the server refused (a kind not optional: the runner's pods, which a viewer bound to
    nvcre-view alone may not list) left the cache marked started: the next start returned at once with nothing cached,
    and the console's log pane read that as "the run's pods are gone" for a run whose pods this user may not see."""
    store = _NoNodes(MemoryStore(SystemClock()))
    cache = WatchCache(store, (NODE,))
    for _ in range(2):
        with pytest.raises(Forbidden):
            await cache.start()
    assert not cache.synced.is_set()
