"""nvcre's install namespace being deleted (Terminating: `kubectl delete namespace nvcre-system`, or a `setup reset`
interrupted), over real HTTP against the emulator. A real API server refuses every create there (403 Forbidden,
NamespaceLifecycle: "unable to create new content in namespace nvcre-system because it is being terminated"), the
engine Lease's included, and a Terminating namespace never becomes Active again: `nvcre controller` printed
`engine lease: ... forbidden ...` every 2 s for ever. Every command that would run an engine says so in one line, exit 2,
as it does for a missing namespace."""

from __future__ import annotations

import asyncio

from nvcre_tui.engine.store import CERTIFICATION, LEASE, NAMESPACE, NODE
from tests.console.harness import certification_body, intra_all_reduce
from tests.kube.test_install_namespace import _controller
from tests.kube.test_setup import _gpu_node, admin, kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures

CATEGORY = ("certification", "run", "--category", "communication/nccl-all-reduce")


# One wording for every command that meets it (setup init advised removing the finalizer with kubectl; the others
# `nvcre setup reset`, which also deletes the CRDs and so every Certification): each way out with what it costs.
ADVICE = ("nvcre's install namespace nvcre-system is being deleted (Terminating), and the API server refuses new objects "
          "in it, the engine Lease's included, until it is gone. Wait for it to go (a cluster's namespace controller "
          "empties it, then removes it; `kubectl describe namespace nvcre-system` says what it still holds), then run "
          "`nvcre setup init`: nothing else is lost; or install into another namespace now with `nvcre setup init "
          "--install-namespace NS`, then pass --install-namespace NS to every command. An API server with no namespace "
          "controller never removes it: once it holds nothing, `kubectl get namespace nvcre-system -o json | jq "
          "'.spec.finalizers=[]' | kubectl replace --raw /api/v1/namespaces/nvcre-system/finalize -f -` removes the "
          "namespace alone, while `nvcre setup reset` removes it too but also deletes the CRDs and with them every "
          "Certification, Workflow, Job and WorkloadRun in every namespace")


def terminating(url: str) -> str:
    return f"{url}: {ADVICE}"


async def _delete_install_namespace(admin) -> None:
    await admin.delete(NAMESPACE, "nvcre-system")  # no namespace controller: it stays Terminating, its objects in it
    assert (await admin.get(NAMESPACE, "nvcre-system"))["status"]["phase"] == "Terminating"


async def test_the_controller_exits_2_when_its_install_namespace_is_terminating(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _delete_install_namespace(admin)
    capsys.readouterr()
    assert await asyncio.wait_for(_controller(kubeconfig), 30) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"nvcre controller: {terminating(server.url)}"
    assert not [line for line in err if "engine lease:" in line]  # no retry loop
    assert (await admin.list(LEASE, "nvcre-system")).items == []
    assert server.requests_where(verb="create", resource="leases")[-1].status == 403


async def test_a_run_says_the_install_namespace_is_terminating_before_creating_anything(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await admin.create(NODE, _gpu_node("gpu-a"))
    await _delete_install_namespace(admin)
    code, out, err = await nvcre(capsys, *CATEGORY, "--kubeconfig", kubeconfig)
    assert (code, out, err) == (2, "", terminating(server.url) + "\n")
    assert (await admin.list(CERTIFICATION)).items == []


async def test_setup_status_says_the_install_namespace_is_terminating_not_missing(server, kubeconfig, admin, capsys) -> None:
    """It said `namespace  missing  nvcre-system` of a namespace `kubectl get namespace` lists (Terminating), and the
    SRE who runs `setup init` then is refused: `setup init` cannot create in it either."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _delete_install_namespace(admin)
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    row = next(line for line in out.splitlines() if line.startswith("namespace "))
    assert code == 1 and row.split(None, 2)[1:] == ["terminating", terminating(server.url).split(": ", 1)[1]], out


async def test_a_lease_left_in_a_terminating_namespace_is_not_taken(server, kubeconfig, admin, capsys) -> None:
    """An API server alone leaves the Lease in a Terminating namespace (no namespace controller deletes it) and admits
    its update: the controller took it and ran an engine in an install on its way out. Asked as the engine may ask
    (a dry-run create of its Lease: no read of Namespaces, which its ServiceAccount may not do), it says why not."""
    from nvcre_tui.engine.lease import EngineLease

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    assert await EngineLease(admin, server.clock, "nvcre-system", "old@host/1", 1).try_acquire()
    await _delete_install_namespace(admin)
    capsys.readouterr()
    assert await asyncio.wait_for(_controller(kubeconfig), 30) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"nvcre controller: {terminating(server.url)}"
    assert (await admin.get(LEASE, "nvcre-engine", "nvcre-system"))["spec"]["holderIdentity"] == "old@host/1"
    probe = server.requests_where(verb="create", resource="leases")[-1]
    assert (probe.query.get("dryRun"), probe.status, probe.user_agent.startswith("nvcre-engine")) == ("All", 403, True)


async def test_setup_init_gives_the_same_advice_as_every_other_command(server, kubeconfig, admin, capsys) -> None:
    """`setup init` suggested removing the namespace's finalizer with kubectl, `setup status` and `run` suggested
    `nvcre setup reset` (which also deletes every Certification) without saying so: one wording, its costs said."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _delete_install_namespace(admin)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (1, f"nvcre setup init: {ADVICE}\n")


async def test_delete_wait_says_nothing_was_deleted_and_that_delete_without_wait_works(server, kubeconfig, admin, capsys) -> None:
    """`delete --wait` runs an engine, whose Lease the Terminating namespace refuses: it exited 2 saying only that the
    namespace is Terminating, leaving the user to guess whether the certification went. It says nothing was deleted,
    and that the same command without --wait deletes it, which it does."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await admin.create(CERTIFICATION, certification_body(intra_all_reduce("burn-in")))
    await _delete_install_namespace(admin)
    code, out, err = await nvcre(capsys, "certification", "delete", "burn-in", "--wait", "--kubeconfig", kubeconfig)
    assert (code, out, len(err.splitlines())) == (2, "", 1), err
    assert err == (f"{server.url}: nothing deleted: --wait runs an nvcre engine, and none can run now; the same command "
                   "without --wait deletes it (its Workflows, Jobs and runs then go with the cluster's garbage collector, "
                   f"or the next nvcre engine). {ADVICE}\n")
    assert [c["metadata"]["name"] for c in (await admin.list(CERTIFICATION, "default")).items] == ["burn-in"]
    code, out, err = await nvcre(capsys, "certification", "delete", "burn-in", "--kubeconfig", kubeconfig)
    assert code == 0 and "Traceback" not in err, err
    assert (await admin.list(CERTIFICATION, "default")).items == []


async def test_the_ways_out_of_an_install_in_another_namespace_name_it_and_say_what_reset_may_cost_when_unknown() -> None:
    """`setup reset` of a namespace other than nvcre-system needs `--install-namespace`: the advice named bare commands,
    which act on nvcre-system. Where the other installs cannot be told (the engine's ServiceAccount reads no Namespaces),
    the advice says what reset deletes in each case instead of that it deletes every Certification."""
    from nvcre_tui.engine.kube.installs import terminating as advice

    text = advice("gpu-ops", None)
    assert "then run `nvcre setup init --install-namespace gpu-ops`: nothing else is lost" in text
    assert text.endswith("while `nvcre setup reset --install-namespace gpu-ops` removes it too but, where it is nvcre's only "
                         "install, also deletes the CRDs and with them every Certification, Workflow, Job and WorkloadRun in "
                         "every namespace (beside another install it keeps them)")
    assert advice("nvcre-system", []) == ADVICE


async def test_setup_status_for_a_user_who_cannot_list_namespaces_says_what_reset_costs_in_either_case(server, kubeconfig, admin, tmp_path, capsys) -> None:
    """A user who may get the install namespace but not list Namespaces: setup status took the other installs as none,
    and its Terminating row said reset deletes every Certification, which it keeps beside another install (here one in
    gpu-ops). Unknown installs say both cases, as the engine's line does."""
    from tests.kube.test_setup import _ops_user

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await admin.create(NAMESPACE, {"metadata": {"name": "gpu-ops", "labels": {"nvcre.nvidia.com/install": "true"}}})  # an older init's second
    await _delete_install_namespace(admin)
    ops = await _ops_user(server, admin, tmp_path, [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]}])
    code, out, err = await nvcre(capsys, "setup", "status", "--kubeconfig", ops)
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("namespace "))
    rest = [line for line in lines[at + 1:] if line.startswith(" ")][:1] if lines[at + 1].startswith(" ") else []  # wrapped
    row = " ".join(" ".join([lines[at], *rest]).split())
    assert code == 1 and row.startswith("namespace terminating nvcre's install namespace nvcre-system is being deleted"), out
    assert row.endswith("while `nvcre setup reset` removes it too but, where it is nvcre's only install, also deletes the CRDs "
                        "and with them every Certification, Workflow, Job and WorkloadRun in every namespace (beside another "
                        "install it keeps them)"), row
