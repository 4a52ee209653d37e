"""A file nvcre writes named with a trailing '/' (a folder's name) is refused in one line, exit 2, and nothing is
made: `report --results-file subdir/` wrote a JSON file named `subdir` (Path() drops the separator), and the same
for --state, --history, $NVCRE_STATE and $NVCRE_HISTORY."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.outfiles import check_writable

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")
RUN = ["certification", "run", "--cert-file", BURN_IN, "--wait"]


@pytest.mark.parametrize(("argv", "env", "said"), [
    (["certification", "report", "burn-in", "--state", "s1.db", "--results-file", "subdir/"], {},
     "nvcre certification report: argument --results-file: subdir/ ends with '/', a folder's name: name a file; see"),
    ([*RUN, "--state", "s.db", "--results-file", "out/"], {}, "nvcre certification run: argument --results-file: out/ ends with '/'"),
    ([*RUN, "--state", "st/"], {}, "nvcre certification run: argument --state: st/ ends with '/', a folder's name: name a file"),
    ([*RUN, "--state", "s.db", "--history", "hi/"], {}, "nvcre certification run: argument --history: hi/ ends with '/'"),
    (["history", "certifications", "--history", "h/"], {}, "nvcre history certifications: argument --history: h/ ends with '/'"),
    (RUN, {"NVCRE_STATE": "x/"}, "$NVCRE_STATE: x/ ends with '/', a folder's name: name a file"),
    (RUN, {"NVCRE_HISTORY": "x/"}, "$NVCRE_HISTORY: x/ ends with '/', a folder's name: name a file"),
])
def test_a_written_file_named_as_a_folder_is_refused_and_nothing_made(
        argv: list[str], env: dict[str, str], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.startswith(said) and len(err.splitlines()) == 1, err
    assert list(tmp_path.rglob("*")) == []


def test_check_writable_refuses_a_folder_name(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="ends with '/'"):
        check_writable(f"{tmp_path}/saved/", "save")


def test_a_store_named_in_bytes_that_are_no_utf8_is_used_and_archived(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file name of bytes that are no UTF-8 (lone surrogates in argv): the store's SQLite URI could not be encoded,
    an internal error (exit 70); then the history could not hold its source, sim:<path> (the run was not archived)."""
    import json

    state, history = tmp_path / "fleet-\udcff.db", tmp_path / "history.db"
    assert main(["certification", "run", "--category", "diagnostics/dcgm-level4", "--state", str(state),
                 "--history", str(history), "--wait"]) == 0
    assert "could not archive" not in capsys.readouterr().err
    assert main(["history", "certifications", "--history", str(history), "-o", "json"]) == 0
    [archived] = json.loads(capsys.readouterr().out)
    assert archived["source"] == f"sim:{tmp_path.resolve()}/fleet-\\xff.db" and archived["result"] == "PASSED"
