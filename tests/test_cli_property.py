"""A property of the whole CLI: for random argv drawn from the real flags and random file contents
(valid shapes with wrong types, junk bytes, deep or oversized documents, devices, directories, stdin),
every command that reads input ends within a time bound, exits 0, 1, 2 or 3, prints no traceback, and
changes no file it was not asked to write.

Most examples call main() in-process (fast); a handful run the real `nvcre` process.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvcre_tui.cli import main
from nvcre_tui.engine.inputs import MAX_YAML_BYTES
from nvcre_tui.engine.sim.scenario import Scenario, build_nodes

ROOT = Path(__file__).resolve().parents[1]
TIME_BOUND_SECONDS = 60  # per command; a hang (the old /dev/zero, billion laughs) fails the test
EXIT_CODES = {0, 1, 2, 3}

CERT: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "burn-in.yaml").read_text())
SCENARIO: dict[str, Any] = {"name": "p", "seed": 1, "speed": 60.0, "nodes": [{"count": 2, "cliques": 1}],
                            "faults": [{"type": "slow-gpu", "node": "gpu-node-01", "factor": 0.5}]}
NODES: dict[str, Any] = {"apiVersion": "v1", "kind": "NodeList", "items": build_nodes(Scenario.model_validate(SCENARIO))}
STATE: dict[str, Any] = {
    "version": 1, "saveId": "0" * 32, "scenario": Scenario.model_validate(SCENARIO).to_wire(),
    "clock": "2026-01-01T00:00:00Z", "savedAt": "2026-01-01T00:00:00Z",
    "store": {"format": "nvcre-store/v1", "resourceVersion": "2", "kinds": [
        {"group": "nvcre.nvidia.com", "version": "v1alpha1", "kind": "Certification", "plural": "certifications",
         "namespaced": True, "items": [{**copy.deepcopy(CERT), "metadata": {"name": "burn-in", "namespace": "default", "uid": "u",
                                                                           "resourceVersion": "1"}}]}]},
}
NCCL_LOG = (ROOT / "tests" / "parsers" / "fixtures" / "nccl_e1_modern.txt").read_text()

# ---------------------------------------------------------------------------------------- values

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**18, max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["", "-", "1h", "99999999999h", "2026-13-45", "{index:zz}",
                                                                     "\x1b]0;x\x07", "\x9b31m", "a" * 300]),
    st.text(max_size=20),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=8)


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(document, dict):
        for key, value in document.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _paths(value, (*prefix, index))


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any] | Any:
    """`base` with one to three values replaced by values of any type (or removed)."""
    document: Any = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_paths(document))))
        value = draw(values)
        if not path:
            document = value
            continue
        parent = document
        for part in path[:-1]:
            parent = parent[part]
        if draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = value
    return document


def _dump(document: Any, as_json: bool) -> bytes:
    if as_json:
        return json.dumps(document, default=str).encode()
    return yaml.safe_dump(document, allow_unicode=True).encode()


def contents(base: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """What a file holds: the base with wrong types (YAML or JSON), junk, text, deep nesting."""
    return st.one_of(
        st.builds(_dump, mutated(base), st.booleans()),
        st.builds(_dump, mutated(base), st.booleans()),
        st.builds(_dump, mutated(base), st.booleans()),
        st.just(_dump(base, False)),
        st.binary(max_size=300),
        st.text(max_size=300).map(str.encode),
        st.integers(50, 20_000).map(lambda depth: b"a: " + b"[" * depth + b"]" * depth + b"\n"),
        st.integers(50, 20_000).map(lambda depth: b'{"a": ' * depth + b"1" + b"}" * depth),
        st.just(b"a: &x [1]\nb: [*x, *x]\n"),
        st.just(b"a: 1\na: 2\n"),
    )


# ------------------------------------------------------------------------------------------ argv

FILES = ("cert.yaml", "scenario.yaml", "nodes.yaml", "state.json", "tool.log")
ODD_PATHS = ("/dev/zero", "/dev/null", "missing.yaml", "folder", "big.yaml", "-")


@st.composite
def invocation(draw: st.DrawFn) -> tuple[list[str], set[str]]:
    """(argv relative to the work folder, the files it may write)."""
    def path(own: str) -> str:
        return draw(st.sampled_from([own] * 8 + list(ODD_PATHS)))

    def maybe(flag: str, value: str) -> list[str]:
        return [flag, value] if draw(st.booleans()) else []

    duration = st.sampled_from(["1m", "30s", "soon", "0s", "99999999999h", "-5m", "1h"])
    command = draw(st.sampled_from(["render", "run", "report", "parse", "setup", "list", "cluster"]))
    writes: set[str] = set()
    if command == "render":
        argv = ["certification", "render", path("cert.yaml"), *draw(st.sampled_from([[], ["--nodes", path("nodes.yaml")],
                                                                                       ["--scenario", path("scenario.yaml")]]))]
        argv += maybe("-o", draw(st.sampled_from(["yaml", "json", "xml"])))
    elif command == "run":
        state = path("state.json")
        argv = ["certification", "run", "--cert-file", path("cert.yaml"), "--state", state, "--wait", f"--timeout={draw(duration)}"]
        argv += maybe("--scenario", path("scenario.yaml")) + maybe("--name", draw(st.sampled_from(["again", "BAD", "x" * 70])))
        results = draw(st.sampled_from(["results.json", "folder", "/dev/full", "cert.yaml"]))
        argv += ["--results-file", results] if draw(st.booleans()) else []
        writes |= {state, "results.json"} | ({results} if "--results-file" in argv else set())
    elif command == "report":
        argv = ["certification", "report", draw(st.sampled_from(["burn-in", "nope", "BAD"])), "--state", path("state.json")]
        argv += maybe("--scenario", path("scenario.yaml")) + maybe("-o", draw(st.sampled_from(["text", "json", "junit"])))
        argv += maybe("-n", draw(st.sampled_from(["default", "x_y"])))
        if draw(st.booleans()):
            argv += ["--results-file", "results.json"]
            writes.add("results.json")
    elif command == "parse":
        argv = ["parse", draw(st.sampled_from(["nccl", "dcgm", "training"])), path("tool.log")]
        argv += maybe("-o", draw(st.sampled_from(["table", "json"])))
    elif command == "cluster":
        argv = ["cluster", "info", *draw(st.sampled_from([[], ["--nodes", path("nodes.yaml")], ["--scenario", path("scenario.yaml")]]))]
        argv += maybe("-o", draw(st.sampled_from(["table", "json", "yaml", "xml"])))
        argv += maybe("--topology-key", draw(st.sampled_from(["nvidia.com/gpu.clique", "a b", "x/" * 200])))
    elif command == "setup":
        argv = ["setup", "crds", *maybe("--kind", draw(st.sampled_from(["Job", "nope", "wf"])))]
    else:
        argv = ["certification", "list-categories", *maybe("-o", draw(st.sampled_from(["json", "yaml", "table"])))]
    return argv, writes


# ----------------------------------------------------------------------------------------- running

class _TimeBound(BaseException):
    """Raised by the alarm: BaseException, so the CLI's last-resort handler cannot swallow it."""


@contextlib.contextmanager
def _time_bound(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise _TimeBound

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _prepare(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "folder").mkdir()
    with (folder / "big.yaml").open("wb") as big:  # sparse: over the cap without writing 2 MiB
        big.truncate(MAX_YAML_BYTES + 1)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _unexpected_changes(before: dict[str, bytes], after: dict[str, bytes], writes: set[str]) -> list[str]:
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name) and name not in writes)


file_sets = st.fixed_dictionaries({
    "cert.yaml": contents(CERT), "scenario.yaml": contents(SCENARIO), "nodes.yaml": contents(NODES),
    "state.json": contents(STATE), "tool.log": st.one_of(st.just(NCCL_LOG.encode()), st.binary(max_size=300),
                                                           st.text(max_size=300).map(str.encode)),
})


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=file_sets, call=invocation(), stdin=st.binary(max_size=200))
def test_every_command_ends_cleanly_on_any_input(files: dict[str, bytes], call: tuple[list[str], set[str]], stdin: bytes) -> None:
    argv, writes = call
    with tempfile.TemporaryDirectory() as work, contextlib.chdir(work):
        folder = Path(work)
        _prepare(folder, files)
        before = _snapshot(folder)
        out, err = io.StringIO(), io.StringIO()
        sys_stdin = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="strict")
        try:
            with _time_bound(TIME_BOUND_SECONDS), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exit_:  # argparse usage errors
                    code = int(exit_.code or 0)
        finally:
            sys.stdin = sys_stdin
        assert code in EXIT_CODES, (argv, code, err.getvalue()[-500:])
        assert "Traceback" not in err.getvalue(), (argv, err.getvalue()[-2000:])
        assert _unexpected_changes(before, _snapshot(folder), writes) == [], argv


@settings(max_examples=5, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=file_sets, call=invocation(), stdin=st.binary(max_size=200))
def test_the_real_process_ends_cleanly_on_any_input(files: dict[str, bytes], call: tuple[list[str], set[str]], stdin: bytes) -> None:
    argv, writes = call
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        _prepare(folder, files)
        before = _snapshot(folder)
        done = subprocess.run([sys.executable, "-m", "nvcre_tui", *argv], input=stdin, capture_output=True, cwd=folder,
                              timeout=TIME_BOUND_SECONDS, env={"PATH": "/usr/bin:/bin", "NVCRE_STATE": str(folder / "state.json")})
        stderr = done.stderr.decode(errors="replace")
        assert done.returncode in EXIT_CODES, (argv, done.returncode, stderr[-500:])
        assert "Traceback" not in stderr, (argv, stderr[-2000:])
        assert _unexpected_changes(before, _snapshot(folder), writes) == [], argv
