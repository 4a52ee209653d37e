"""The repository's Dockerfile, read for what `nvcre setup controller`'s Deployment relies on (no image is built here):
a Python 3.11 base, `pip install .` of what the package needs, a numeric non-root user, ENTRYPOINT nvcre, CMD controller."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from nvcre_tui.cli import build_parser
from nvcre_tui.engine.kube.deployment import controller_deployment

ROOT = Path(__file__).resolve().parents[1]


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined and comments left out."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def only(name: str) -> str:
    values = [rest for word, rest in instructions() if word == name]
    assert len(values) == 1, f"{name}: {values}"
    return values[0]


def test_the_base_is_python_3_11_slim() -> None:
    assert only("FROM") == "python:3.11-slim"
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"] == ">=3.11"


def test_it_installs_this_package_from_what_it_copies() -> None:
    steps = instructions()
    copied = [part for word, rest in steps if word == "COPY" for part in rest.split()[:-1]]
    for source in copied:
        assert (ROOT / source).exists(), source
    # what `pip install .` reads: the build files, the package, the license files it names, and the data setup.py
    # ships inside it
    license_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license-files"]
    assert {"pyproject.toml", "setup.py", "README.md", *license_files, "nvcre_tui", "catalog", "themes"} <= set(copied)
    [install] = [rest for word, rest in steps if word == "RUN" and "pip install" in rest]
    assert re.search(r"\bpip install \.(\s|$)", install), install


def test_it_runs_as_a_numeric_non_root_user_after_the_install() -> None:
    steps = instructions()
    user = only("USER")
    uid = user.partition(":")[0]
    assert uid.isdigit() and int(uid) != 0, user  # the kubelet's runAsNonRoot accepts only a numeric non-zero USER
    assert steps.index(("USER", user)) > max(i for i, (word, _) in enumerate(steps) if word == "RUN")


def test_entrypoint_is_nvcre_and_cmd_the_controller_the_deployment_runs() -> None:
    entrypoint, cmd = json.loads(only("ENTRYPOINT")), json.loads(only("CMD"))  # exec form: SIGTERM reaches nvcre
    assert entrypoint == list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]) == ["nvcre"]
    assert cmd == ["controller"]
    args = controller_deployment("img")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == cmd[0]
    parsed = build_parser().parse_args(args)  # the Deployment's args are `nvcre controller`'s own flags
    assert parsed.install_namespace == "nvcre-system" and parsed.metrics_port == int(only("EXPOSE"))
