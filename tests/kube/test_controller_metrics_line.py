"""`nvcre controller`'s "metrics on ..." line, over real HTTP against the emulator."""

from __future__ import annotations

import socket

from tests.kube.test_setup import kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_controller_that_cannot_start_does_not_say_where_its_metrics_are(server, kubeconfig, capsys) -> None:
    """It printed "metrics on http://0.0.0.0:9090/metrics" before its start checks, then that nvcre is not installed: a
    pod's log told where to scrape an engine that never ran. The port is still bound first (in use: bad input at once),
    but said only once the controller started."""
    port = _free_port()
    code, out, err = await nvcre(capsys, "controller", "--kubeconfig", kubeconfig, "--metrics-addr", "127.0.0.1",
                                 "--metrics-port", str(port), "--lease-duration", "3")
    assert (code, out) == (2, "")
    assert "CRDs are not installed" in err and "metrics on" not in err, err
    assert len(err.splitlines()) == 1
