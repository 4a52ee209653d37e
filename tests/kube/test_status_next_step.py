"""`setup status` on a server where nvcre is not installed: every row of nvcre's own part says the one next step."""

from __future__ import annotations

from tests.kube.test_setup import kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures


def _row(out: str, name: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(name))


async def test_status_of_a_bare_server_says_to_run_setup_init_in_the_crds_namespace_and_rbac_rows(server, kubeconfig, capsys) -> None:
    """The RBAC row said "(run nvcre setup init)", the CRDs row only "missing certifications.nvcre.nvidia.com, ..." and
    the namespace row "missing nvcre-system": the first rows read did not say what to do."""
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 1
    for name in ("nvcre CRDs", "namespace", "RBAC"):
        assert _row(out, name).endswith("(run nvcre setup init)"), _row(out, name)
    code, out, _ = await nvcre(capsys, "setup", "status", "--install-namespace", "gpu-ops", "--kubeconfig", kubeconfig)
    for name in ("nvcre CRDs", "namespace", "RBAC"):  # the namespace it was given, which init must be given too
        assert _row(out, name).endswith("(run nvcre setup init --install-namespace gpu-ops)"), _row(out, name)
