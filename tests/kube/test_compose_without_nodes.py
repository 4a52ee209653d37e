"""A user bound to nvcre-edit and nvcre-view in one namespace, without Node reading (what setup's roles grant), composes a
certification in the console. Compose planned on the Nodes it could not read: every category said "no eligible nodes
match (there is no Node at all ...)" and submit was refused, while `certification run` for the same user creates it and
leaves the plan to the engine. Compose now says once why nothing is planned, checks what needs no Node, and submits."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from nvcre_tui.app import NvcreApp
from nvcre_tui.compose.review import NODES_UNKNOWN
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.store.protocol import NODE
from nvcre_tui.screens.compose import ComposeScreen
from tests.kube.cluster import certification_names, installed
from tests.kube.test_console_on_cluster import args_for, opened, opener
from tests.kube.test_run_engine_leaves import _register
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.users import least_privileged

CERT = """apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: bob-compose}
spec:
  target: {nodeSelector: {nvidia.com/gpu.present: "true"}, nodeNames: [gpu-node-01]}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: intra-node, onFailure: diagnose}}
"""


def _text(screen: ComposeScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_an_edit_user_who_may_not_list_nodes_composes_and_submits(tmp_path: Path) -> None:
    async with installed(tmp_path) as (server, kubeconfig):
        await _register(kubeconfig)
        bob = await least_privileged(server, kubeconfig, "bob", nodes=False)
        app = NvcreApp(opener=opener(args_for(bob, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(160, 50)) as pilot:
            await opened(app, pilot)
            assert app.session is not None and NODE in app.session.cache.withheld
            await app.push_screen(ComposeScreen())
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, ComposeScreen)
            # what needs no Node is still checked: diagnose on an intra-node scale is refused, as `run` refuses it
            await screen.fill(certification_from_text("x", CERT, default_catalog()))
            await pilot.pause()
            result = screen.check()
            assert result.problems == ("compose: spec.categories[0].options.onFailure: onFailure: diagnose needs testScale "
                                       "intra-rack or full-scale (a multi-node test), not intra-node",), result.problems
            assert "no eligible nodes" not in _text(screen, "#plan")
            # fixed: nothing else stands in the way, and why nothing is planned is said once, not per category or field
            await screen.fill(certification_from_text("x", CERT.replace(", onFailure: diagnose", ""), default_catalog()))
            await pilot.pause()
            result = screen.check()
            assert result.problems == () and result.nodes_unknown == NODES_UNKNOWN
            plan = _text(screen, "#plan")
            assert plan.count("may not list Nodes") == 1 and plan.startswith(NODES_UNKNOWN), plan
            assert "eligible" not in plan and "communication/nccl-all-reduce  intra-node" in plan, plan
            assert _text(screen, "#selector-msg") == "" and _text(screen, "#names-msg") == ""  # no "0 of 0 nodes match"
            assert "ready to submit bob-compose" in _text(screen, "#status")
            await pilot.press("ctrl+s")
            for _ in range(100):
                if not isinstance(app.screen, ComposeScreen):
                    break
                await pilot.pause(0.05)
            assert not isinstance(app.screen, ComposeScreen)
        assert await certification_names(kubeconfig) == ["bob-compose"]
        assert not [r for r in server.requests if r.user == "bob" and r.resource == "nodes" and r.verb != "list"]
