"""`setup init` that would change the CRDs' schema under an engine holding the Lease (an upgrade while the old version's
controller runs) applied them without a word, and that engine went on writing with its old schema. It now refuses,
naming the engine, its version as its Lease says it, and what becomes of it, unless --force, which goes ahead and says
the same. The Lease says its holder's nvcre version (annotation nvcre.nvidia.com/engine-version, with the holder's
identity, so that an older holder, which keeps the annotation it finds, reads as unrecorded). Over real HTTP against
the API-server emulator, as an SRE runs the commands."""

from __future__ import annotations

from nvcre_tui.engine.api.vocabulary import ANNOTATION_ENGINE_VERSION, RUNNER_PODS
from nvcre_tui.engine.kube.install import NVCRE_VERSION, SCHEMA_GENERATION
from nvcre_tui.engine.lease import EngineLease, format_micro_time
from nvcre_tui.engine.store import LEASE
from tests.kube.test_schema_versions import _annotations, _stamp
from tests.kube.test_setup import admin, kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures

THIS = f"nvcre {NVCRE_VERSION} (schema generation {SCHEMA_GENERATION})"
STOP = ("stop it first (its Deployment or `nvcre controller` process; a console or `run --wait` that runs one: quit it), run "
        "`nvcre setup init`, then this version's engine; or `nvcre setup init --force` (nothing applied)")
CHECKS = ("it stops reconciling within 10s of the change, gives the Lease back and stays stopped (`nvcre controller` exits 2, "
          "its pod restarting into that refusal until it runs this version's image), writing with its old schema until then")
# That build already runs "this version's image" (its tag is this version's): only an image of this build starts.
ANOTHER_BUILD = CHECKS.replace("until it runs this version's image", f"until it runs an image of this build (its version tag, "
                               f"nvcre {NVCRE_VERSION}, is that other build's too: rebuild the image from this nvcre)")
NEVER = ("it never looks at the CRDs again (an nvcre from before engines said their version on the Lease) and goes on writing "
         "its objects with its old schema, which these prune or refuse, until it is stopped")
UPGRADING = f"upgrading the CRDs nvcre 0.0.9 (schema generation 0) installed to {THIS} under a running engine: "


def _lease_row(status: tuple[int, str, str]) -> str:
    return next(" ".join(line.split()) for line in status[1].splitlines() if line.startswith("engine lease"))


async def _held_by(admin, server, identity: str, said: str | None) -> None:
    """An engine holds the Lease now; its annotation (None: none) as that engine's nvcre wrote it."""
    await EngineLease(admin, server.clock, "nvcre-system", identity, 3600).try_acquire()
    lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")
    annotations = lease["metadata"].setdefault("annotations", {})
    annotations.pop(ANNOTATION_ENGINE_VERSION, None)
    if said is not None:
        annotations[ANNOTATION_ENGINE_VERSION] = said
    lease["spec"]["renewTime"] = format_micro_time(server.clock.now())
    await admin.update(LEASE, lease)


async def test_init_refuses_to_upgrade_the_crds_under_a_running_engine_unless_forced_and_says_what_becomes_of_it(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation="0", version="0.0.9")  # what nvcre 0.0.9's init left
    await _held_by(admin, server, "ctl-old", "0.0.9 ctl-old")
    status = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert _lease_row(status).startswith("engine lease held ctl-old (nvcre 0.0.9), for ")
    # status advised the `setup init` that refuses: it says to stop that engine first
    [crds] = [" ".join(line.split()) for line in status[1].splitlines() if line.startswith("nvcre CRDs")]
    assert crds == (f"nvcre CRDs outdated installed by nvcre 0.0.9 (schema generation 0); this {THIS} is newer: stop the engine "
                    "ctl-old (nvcre 0.0.9) that holds the Lease, which runs on them (init refuses to change them under it without "
                    "--force), then run nvcre setup init to upgrade them (certifications.nvcre.nvidia.com, workflows.nvcre.nvidia.com, "
                    "jobs.nvcre.nvidia.com, workloadruns.nvcre.nvidia.com)"), crds
    before = len(server.requests)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, out) == (2, "")
    assert err == f"nvcre setup init: {UPGRADING}ctl-old holds the engine Lease in nvcre-system (nvcre 0.0.9): {CHECKS}; {STOP}\n", err
    assert [r for r in server.requests[before:] if r.verb not in ("get", "list", "watch")] == []  # not even a dry run
    assert all(a["nvcre.nvidia.com/installed-by-version"] == "0.0.9" for a in await _annotations(admin))
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--dry-run")
    assert code == 0 and err.splitlines()[0] == (f"nvcre setup init: {UPGRADING}ctl-old holds the engine Lease in nvcre-system "
                                                 f"(nvcre 0.0.9): {CHECKS} (a dry run: nothing applied)"), err
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--force")
    assert code == 0 and err == f"nvcre setup init: --force: {UPGRADING}ctl-old holds the engine Lease in nvcre-system (nvcre 0.0.9): {CHECKS}\n", err
    assert out.splitlines()[-1] == f"nvcre is installed in namespace nvcre-system (CRDs upgraded from nvcre 0.0.9 (schema generation 0) to {THIS})"


async def test_an_engine_whose_lease_says_no_version_is_said_to_go_on_writing_with_its_old_schema(server, kubeconfig, admin, capsys) -> None:
    """An older nvcre writes no version annotation, and keeps the one it finds: one naming another holder is not its."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation="0", version="0.0.9")
    for said in (None, f"{NVCRE_VERSION} controller-before-it"):
        await _held_by(admin, server, "ctl-older", said)
        status = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
        assert _lease_row(status).startswith("engine lease held ctl-older (its version unrecorded), for "), status
        code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
        assert (code, err) == (2, f"nvcre setup init: {UPGRADING}ctl-older holds the engine Lease in nvcre-system (its version "
                                  f"unrecorded): {NEVER}; {STOP}\n"), err


async def test_the_lease_says_its_holders_version_and_init_of_that_version_goes_ahead_under_it(server, kubeconfig, admin, capsys) -> None:
    """An engine of this very version runs on the schema this init applies: nothing to say (it checks the CRDs at its
    start, so it runs on CRDs another version stamped only where it may not read them)."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    lease = EngineLease(admin, server.clock, "nvcre-system", "ctl-this", 3600, runner=RUNNER_PODS)
    assert await lease.try_acquire()
    holder = await lease.holder()
    assert holder is not None and holder.version == NVCRE_VERSION
    assert (await admin.get(LEASE, "nvcre-engine", "nvcre-system"))["metadata"]["annotations"][ANNOTATION_ENGINE_VERSION] == f"{NVCRE_VERSION} ctl-this"
    await _stamp(admin, generation="0", version="0.0.9")
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, ""), err
    # and this version's init again, the schema unchanged, says nothing of any engine
    await lease.release()
    await _held_by(admin, server, "ctl-older", None)
    now = await EngineLease(admin, server.clock, "nvcre-system", "probe").holder()
    assert now is not None and now.identity == "ctl-older"
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, ""), err


async def test_an_older_holder_is_not_told_to_run_what_the_engine_before_it_ran(server, kubeconfig, admin, capsys) -> None:
    """The Lease's runner annotation (nvcre.nvidia.com/engine-runner) was read as its holder's whoever wrote it: an older
    nvcre that took the Lease kept the fleet's 'simulated-fleet' of the engine before it, and readers refused (or let
    through) certifications by what that older engine does not do. The runner is its holder's only where the version
    annotation names that holder, as the version is; its value stays bare for an older reader."""
    from nvcre_tui.engine.api.vocabulary import ANNOTATION_ENGINE_RUNNER, RUNNER_SIMULATED

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    fleet = EngineLease(admin, server.clock, "nvcre-system", "console-sim", 3600, runner=RUNNER_SIMULATED)
    assert await fleet.try_acquire()
    holder = await fleet.holder()
    assert holder is not None and (holder.runner, holder.version) == (RUNNER_SIMULATED, NVCRE_VERSION)
    assert (await admin.get(LEASE, "nvcre-engine", "nvcre-system"))["metadata"]["annotations"][ANNOTATION_ENGINE_RUNNER] == RUNNER_SIMULATED
    await fleet.release()
    lease = await admin.get(LEASE, "nvcre-engine", "nvcre-system")  # an older nvcre takes it: it keeps what it finds
    lease["spec"].update(holderIdentity="ctl-older", leaseDurationSeconds=3600, renewTime=format_micro_time(server.clock.now()))
    await admin.update(LEASE, lease)
    older = await EngineLease(admin, server.clock, "nvcre-system", "probe").holder()
    assert older is not None and older.identity == "ctl-older" and (older.runner, older.version) == (None, None), older


async def test_an_engine_of_this_version_on_crds_another_build_of_it_stamped_is_named(server, kubeconfig, admin, capsys) -> None:
    """A development build of this very version (its version string, its schema generation, another schema) stamped
    the CRDs and runs the engine: its Lease says this version, and init took it for one on this schema and replaced the
    CRDs under it without a word; it then stopped. Where the CRDs whose schema differs say this version installed
    them, an engine saying this version is named as any other; where another version stamped them, it is this build
    (above: nothing to say)."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation=str(SCHEMA_GENERATION), version=NVCRE_VERSION)  # the dev build's init
    await _held_by(admin, server, "ctl-dev", f"{NVCRE_VERSION} ctl-dev")
    status = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    [crds] = [" ".join(line.split()) for line in status[1].splitlines() if line.startswith("nvcre CRDs")]
    assert f"stop the engine ctl-dev (nvcre {NVCRE_VERSION}) that holds the Lease" in crds, crds  # as init will ask
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, out) == (2, "")
    assert err == (f"nvcre setup init: replacing the CRDs {THIS} installed to {THIS} under a running engine: ctl-dev holds the "
                   f"engine Lease in nvcre-system (nvcre {NVCRE_VERSION}, another build of this version): {ANOTHER_BUILD}; {STOP}\n"), err
    assert all(a["nvcre.nvidia.com/schema-hash"] == "0123456789abcdef" for a in await _annotations(admin))  # nothing applied
