"""Upgrades and downgrades: `setup init` stamps the CRDs with the nvcre version and schema generation that installed
them; `setup status` says which version installed the cluster and whether this nvcre's schema is the same, newer or
older; `setup init` of an older nvcre refuses to replace a newer schema (one line, nothing applied) unless --force,
and says what it upgraded from; an engine's refusal names the installed version and its own. Over real HTTP against
the API-server emulator, as an SRE runs the commands."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from nvcre_tui.engine.api.vocabulary import ANNOTATION_INSTALLED_BY_VERSION, ANNOTATION_SCHEMA_GENERATION, ANNOTATION_SCHEMA_HASH
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube.install import NVCRE_VERSION, SCHEMA_GENERATION, install_crds
from nvcre_tui.engine.kube.session import _schema_check
from nvcre_tui.engine.store.kube import KubeStore
from nvcre_tui.engine.store.protocol import CRD
from tests.kube.test_setup import admin, kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures

# Each schema generation's CRD schema hashes, in install order. A schema change without a SCHEMA_GENERATION bump fails
# test_a_schema_change_bumps_the_generation: an older nvcre could not tell it is older.
GENERATIONS = {1: "5b88739a93de8bd9", 2: "971bbd4fe5caa37f", 3: "da47f0f25313d6c4", 4: "21be1e220a8c70a8"}
NEWER = str(SCHEMA_GENERATION + 1)
THIS = f"nvcre {NVCRE_VERSION} (schema generation {SCHEMA_GENERATION})"


def _combined() -> str:
    hashes = ",".join(crd["metadata"]["annotations"][ANNOTATION_SCHEMA_HASH] for crd in install_crds())
    return hashlib.sha256(hashes.encode()).hexdigest()[:16]


def test_a_schema_change_bumps_the_generation() -> None:
    assert GENERATIONS.get(SCHEMA_GENERATION) == _combined(), (
        "the CRDs' schema changed: bump SCHEMA_GENERATION in engine/kube/install.py and add "
        f"{SCHEMA_GENERATION + 1}: {_combined()!r} to GENERATIONS")


async def _stamp(admin: KubeStore, *, generation: str | None, version: str | None, names: tuple[str, ...] = ()) -> None:
    """The CRDs as another nvcre's `setup init` left them: another schema, its generation and version (None: unrecorded)."""
    for crd in install_crds():
        name = crd["metadata"]["name"]
        if names and name not in names:
            continue
        stored = await admin.get(CRD, name)
        annotations = stored["metadata"]["annotations"]
        annotations[ANNOTATION_SCHEMA_HASH] = "0123456789abcdef"
        for key, value in ((ANNOTATION_SCHEMA_GENERATION, generation), (ANNOTATION_INSTALLED_BY_VERSION, version)):
            if value is None:
                annotations.pop(key, None)
            else:
                annotations[key] = value
        await admin.update(CRD, stored)


async def _annotations(admin: KubeStore) -> list[dict[str, str]]:
    return [(await admin.get(CRD, crd["metadata"]["name"]))["metadata"]["annotations"] for crd in install_crds()]


def _crd_row(out: str) -> str:
    [row] = [line for line in out.splitlines() if line.startswith("nvcre CRDs")]
    return " ".join(row.split())


async def test_init_stamps_the_crds_with_this_version_and_status_says_who_installed_them(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    for annotations in await _annotations(admin):
        assert annotations[ANNOTATION_INSTALLED_BY_VERSION] == NVCRE_VERSION
        assert annotations[ANNOTATION_SCHEMA_GENERATION] == str(SCHEMA_GENERATION)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 0
    assert _crd_row(out) == f"nvcre CRDs ok 4/4 present, schema current, installed by this nvcre ({NVCRE_VERSION})"
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig, "-o", "json")
    import json

    assert json.loads(out)["schema"] == {"installedBy": [NVCRE_VERSION], "installedGeneration": SCHEMA_GENERATION, "differ": [],
                                         "installed": "same", "thisVersion": NVCRE_VERSION, "thisGeneration": SCHEMA_GENERATION}


async def test_init_of_an_older_nvcre_refuses_to_downgrade_a_newer_schema_unless_forced(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation=NEWER, version="9.9.0")
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 1
    assert _crd_row(out).startswith(f"nvcre CRDs newer installed by nvcre 9.9.0 (schema generation {NEWER}), newer than this {THIS}: "
                                    "use nvcre 9.9.0 or later")
    before = len(server.requests)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, out) == (2, "")
    assert err == (f"nvcre setup init: the CRDs were installed by nvcre 9.9.0 (schema generation {NEWER}), newer than this {THIS}: "
                   "applying this version's would downgrade them (an engine of the newer version then refuses them); use nvcre "
                   "9.9.0 or later, or downgrade with `nvcre setup init --force` (nothing applied)\n")
    assert [r for r in server.requests[before:] if r.verb not in ("get", "list", "watch")] == []  # not even a dry run
    assert all(a[ANNOTATION_INSTALLED_BY_VERSION] == "9.9.0" for a in await _annotations(admin))
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig, "--force")
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (f"nvcre is installed in namespace nvcre-system (CRDs downgraded (--force) from nvcre 9.9.0 "
                                    f"(schema generation {NEWER}) to {THIS})")
    assert all(a[ANNOTATION_INSTALLED_BY_VERSION] == NVCRE_VERSION for a in await _annotations(admin))


async def test_upgrading_an_older_install_is_the_normal_path_and_says_what_it_upgraded_from(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation="0", version="0.0.9", names=("workflows.nvcre.nvidia.com",))
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 1
    assert _crd_row(out) == (f"nvcre CRDs outdated installed by nvcre 0.0.9 (schema generation 0); this {THIS} is newer: run nvcre "
                             "setup init to upgrade them (workflows.nvcre.nvidia.com)")
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == f"nvcre is installed in namespace nvcre-system (CRDs upgraded from nvcre 0.0.9 (schema generation 0) to {THIS})"
    # an install from before nvcre recorded its version: its schema hash only
    await _stamp(admin, generation=None, version=None)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == ("nvcre is installed in namespace nvcre-system (CRDs upgraded from an nvcre that recorded no "
                                    f"version (before schema generation 1) to {THIS})")
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert code == 0 and "schema current" in _crd_row(out)
    # this very schema, installed by an nvcre that recorded no version: not "before schema generation 1"
    for crd in install_crds():
        stored = await admin.get(CRD, crd["metadata"]["name"])
        for key in (ANNOTATION_SCHEMA_GENERATION, ANNOTATION_INSTALLED_BY_VERSION):
            del stored["metadata"]["annotations"][key]
        await admin.update(CRD, stored)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    assert (code, _crd_row(out)) == (0, "nvcre CRDs ok 4/4 present, schema current, installed by an nvcre that recorded no version, "
                                        f"with this nvcre {NVCRE_VERSION}'s schema")


async def test_the_engine_refusal_names_the_installed_version_and_its_own(server, kubeconfig, admin, capsys, tmp_path: Path) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    target = await load_target(kubeconfig)
    await _stamp(admin, generation=NEWER, version="9.9.0", names=("jobs.nvcre.nvidia.com",))
    outdated, _ = await _schema_check(admin, target)
    assert outdated == (f"jobs.nvcre.nvidia.com was installed by nvcre 9.9.0 (schema generation {NEWER}), newer than this engine's "
                        f"{THIS}: run the engine of nvcre 9.9.0 or later (`nvcre setup init --force` of this version would downgrade "
                        "the CRDs, and a newer engine then refuses them)")
    await _stamp(admin, generation="0", version="0.0.9", names=("jobs.nvcre.nvidia.com",))
    outdated, _ = await _schema_check(admin, target)
    assert outdated == (f"jobs.nvcre.nvidia.com was installed by nvcre 0.0.9 (schema generation 0), older than this engine's {THIS}: "
                        "run `nvcre setup init` of this version to upgrade the CRDs before running an engine")


async def test_a_sim_runner_run_on_newer_crds_says_why_no_fleet_was_registered(server, kubeconfig, admin, capsys, tmp_path: Path) -> None:
    """It said only that the cluster has no Nodes: the fleet registers its Nodes where it runs the engine, and the
    newer CRDs kept this one from running it."""
    cert = Path(__file__).resolve().parents[2] / "examples" / "certification.yaml"
    assert (await nvcre(capsys, "setup", "init", "--sim-runner", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation=NEWER, version="9.9.0")
    code, out, err = await nvcre(capsys, "certification", "run", "--sim-runner", "--cert-file", str(cert), "--kubeconfig", kubeconfig,
                                 "--history", str(tmp_path / "h.db"))
    [line] = err.splitlines()
    assert code == 2 and line.endswith(
        "nothing to certify; --sim-runner registers its fleet's Nodes only where it runs the engine, and this process is a viewer: "
        "certifications.nvcre.nvidia.com, workflows.nvcre.nvidia.com, jobs.nvcre.nvidia.com, workloadruns.nvcre.nvidia.com were "
        f"installed by nvcre 9.9.0 (schema generation {NEWER}), newer than this engine's {THIS}: run the engine of nvcre 9.9.0 or "
        "later (`nvcre setup init --force` of this version would downgrade the CRDs, and a newer engine then refuses them)"), err
    assert server.objects("", "nodes") == []


async def test_a_version_annotation_anyone_may_set_is_shown_in_one_line(server, kubeconfig, admin, capsys) -> None:
    """The annotation is the cluster's text: a newline in it split `setup init`'s one line (and status's row) in two."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation=NEWER, version="9.9.0\nnvcre is installed\x1b[2J" + "x" * 200)
    code, out, err = await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig)
    [line] = err.splitlines()
    assert code == 2 and "\x1b" not in line
    assert line.startswith("nvcre setup init: the CRDs were installed by nvcre 9.9.0 nvcre is installed\ufffd[2J" + "x" * 36 + " (schema")


async def test_status_on_a_newer_install_does_not_advise_the_init_that_refuses(server, kubeconfig, admin, capsys) -> None:
    """A newer nvcre's init grants other rules: status said "RBAC changed ... (run nvcre setup init)", the init that
    refuses to downgrade."""
    from nvcre_tui.engine.store.protocol import CLUSTER_ROLE

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    await _stamp(admin, generation=NEWER, version="9.9.0")
    role = await admin.get(CLUSTER_ROLE, "nvcre-engine")
    role["rules"].append({"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]})  # as 9.9.0 grants it
    await admin.update(CLUSTER_ROLE, role)
    code, out, _ = await nvcre(capsys, "setup", "status", "--kubeconfig", kubeconfig)
    [row] = [" ".join(line.split()) for line in out.splitlines() if line.startswith("RBAC ")]
    assert code == 1 and row == ("RBAC changed differs from init: ClusterRole nvcre-engine (a newer nvcre installed nvcre; this one's "
                                 "setup init would downgrade it: ask nvcre 9.9.0's setup status)"), out
