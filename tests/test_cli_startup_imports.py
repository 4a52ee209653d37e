"""A command that talks to no API server imports no Kubernetes client: `nvcre --help` and a simulated `list` spent
0.76 s of CPU importing kubernetes_asyncio (and aiohttp) at every start, through kube.config's and podlogs' module-level
imports and store/kube/__init__.py's eager KubeStore. Each case runs in a fresh interpreter, so what an earlier test
imported does not hide it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ("kubernetes_asyncio", "aiohttp")

_PROBE = """
import contextlib, io, json, sys
from nvcre_tui.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(json.loads(sys.argv[1]))
print(json.dumps({"code": code, "modules": sorted(m for m in sys.modules if m.split(".")[0] in %r)}))
""" % (CLIENT,)


def _imported_by(argv: list[str]) -> tuple[int, list[str]]:
    import json

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=60, check=True)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    return answer["code"], answer["modules"]


@pytest.mark.parametrize("argv", [["--help"], ["parse", "--help"], ["certification", "list", "--sim", "--state", "{state}"]],
                         ids=["help", "parse-help", "sim-list"])
def test_a_command_without_a_cluster_imports_no_kubernetes_client(argv: list[str], tmp_path: Path) -> None:
    code, modules = _imported_by([word.format(state=tmp_path / "sim") for word in argv])
    assert code == 0
    assert modules == []


def test_the_probe_sees_the_client_when_it_is_imported() -> None:
    """The probe is not blind: a KubeStore, asked for by name, brings the client in."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", "import sys; from nvcre_tui.engine.store.kube import KubeStore; "
                           "print('kubernetes_asyncio' in sys.modules, 'aiohttp' in sys.modules)"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=True)
    assert done.stdout.split() == ["True", "True"]
