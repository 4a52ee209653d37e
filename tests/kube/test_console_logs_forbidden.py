"""The console's log pane for a user bound to nvcre-view alone (no pods, no pods/log: README, "Users' roles"). Its first
read said "No output: cannot read the log: pods is forbidden" and its next read (the runner's pod cache, left marked
started by the refused list) "the run's pods are gone" over the tail the Job kept; every read told the refusal again. A
finished run's kept tail is shown now under why (the pods cannot be read), and the refusal is told once, naming the role
that grants the read, as `certification logs` does."""

from __future__ import annotations

from pathlib import Path

from nvcre_tui.app import NvcreApp
from nvcre_tui.screens.logs import LogsScreen
from tests.kube.cluster import installed
from tests.kube.test_console_on_cluster import args_for, opened, opener, until
from tests.kube.test_setup import no_user_cluster  # noqa: F401 - autouse: never the developer's cluster
from tests.kube.users import least_privileged
from tests.test_cli_logs import POD_READ, SLOW, _as_on_a_cluster, burned  # noqa: F401 - burned: the fixture


def screen_text(app: NvcreApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_view_user_sees_the_kept_tail_and_is_told_once_which_role_reads_pods(burned: Path, tmp_path: Path) -> None:  # noqa: F811
    async with installed(tmp_path) as (server, kubeconfig):
        await _as_on_a_cluster(kubeconfig, burned, server)
        carol = await least_privileged(server, kubeconfig, "carol", roles=("nvcre-view",), nodes=False)
        app = NvcreApp(opener=opener(args_for(carol, history=str(tmp_path / "h.db")), read_only=False), live=True)
        async with app.run_test(size=(200, 40)) as pilot:
            await opened(app, pilot)
            await app.push_screen(LogsScreen(SLOW))
            # the first read's answer (bounded, not a fixed pause a loaded machine outruns), then several more reads:
            # the pane polls once a second, and on every snapshot; the refusal must still be told once
            await until(pilot, lambda: "==> cannot read the run's pods" in screen_text(app))
            for _ in range(30):
                await pilot.pause(0.1)
            text = screen_text(app)
            assert "==> cannot read the run's pods (forbidden): the last" in text and "pods are gone" not in text, text
            assert "No output" not in text, text
            told = [n.message for n in app._notifications if "cannot read the logs" in n.message]
            assert len(told) == 1, told
            assert 'User "carol" cannot list resource "pods"' in told[0] and told[0].endswith(f"; {POD_READ}"), told
