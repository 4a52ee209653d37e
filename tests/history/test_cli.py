"""`nvcre history ...` on an archive made by `nvcre certification run --wait` in another process's shoes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.sim.scenario import build_nodes
from tests.history.helpers import all_then_one_node, fleet, loopback


@pytest.fixture()
def archive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """Three finished certifications, all run through the CLI: two failing gpu-node-02, one failing everyone."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(fleet().model_dump(by_alias=True, exclude_none=True, mode="json")))
    history = tmp_path / "history.db"
    for name, threshold in (("week-1", "value >= 300"), ("week-2", "value >= 300"), ("week-3", "value >= 100000")):
        cert = tmp_path / f"{name}.yaml"
        cert.write_text(yaml.safe_dump(loopback(name, threshold)))
        code = main(["certification", "run", "--sim", "--scenario", str(scenario), "--state", str(tmp_path / "state.json"),
                     "--history", str(history), "--cert-file", str(cert), "--wait"])
        assert code == 1
    capsys.readouterr()
    return history


def test_certifications_lists_every_archived_run(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "certifications", "--history", str(archive), "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["result"], r["failedNodes"]) for r in rows] == [("week-1", "FAILED", 1), ("week-2", "FAILED", 1), ("week-3", "FAILED", 4)]
    assert main(["history", "certifications", "--history", str(archive), "--last", "1"]) == 0
    table = capsys.readouterr().out
    assert "week-3" in table and "week-1" not in table


def test_nodes_ranks_repeat_offenders_in_the_last_n(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "nodes", "--history", str(archive), "-o", "json"]) == 0
    nodes = json.loads(capsys.readouterr().out)
    assert nodes[0]["node"] == "gpu-node-02" and nodes[0]["failures"] == 3 and nodes[0]["window"] == 3
    assert {n["node"]: n["failures"] for n in nodes[1:]} == {"gpu-node-01": 1, "gpu-node-03": 1, "gpu-node-04": 1}
    assert len(nodes[0]["trend"]["communication/nccl-loopback"]) == 3
    assert main(["history", "nodes", "--history", str(archive), "--last", "2", "-o", "json"]) == 0
    window = {n["node"]: (n["failures"], n["window"]) for n in json.loads(capsys.readouterr().out)}
    assert window["gpu-node-02"] == (2, 2) and window["gpu-node-01"] == (1, 2)
    # Every column is of the window: certifications, the last result and its reason, the trend (they were all-time:
    # "CERTS 3" and the trend's three values beside "--last 1").
    assert main(["history", "nodes", "--history", str(archive), "--last", "1", "-o", "json"]) == 0
    latest = {n["node"]: n for n in json.loads(capsys.readouterr().out)}["gpu-node-01"]
    assert (latest["window"], latest["lastCertification"], latest["lastResult"]) == (1, "week-3", "failed")
    assert latest["certifications"] == 3  # JSON keeps the total it always gave
    assert len(latest["trend"]["communication/nccl-loopback"]) == 1
    assert main(["history", "nodes", "--history", str(archive), "--last", "2", "-o", "json"]) == 0
    earlier = {n["node"]: n for n in json.loads(capsys.readouterr().out)}["gpu-node-01"]
    assert earlier["window"] == 2 and earlier["staleness"]["lastPass"] == "week-2"  # staleness: its last pass ever
    assert main(["history", "nodes", "--history", str(archive)]) == 0
    table = capsys.readouterr().out
    assert table.index("gpu-node-02") < table.index("gpu-node-01") and "3/3" in table and "never passed" in table


def test_node_shows_each_certification_and_judges_staleness_against_given_nodes(archive: Path, tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "node", "gpu-node-01", "--history", str(archive), "-o", "json"]) == 0
    node = json.loads(capsys.readouterr().out)
    assert [(e["certification"], e["result"]) for e in node["certifications"]] == [("week-1", "passed"), ("week-2", "passed"), ("week-3", "failed")]
    assert node["staleness"]["status"] == "current" and node["staleness"]["lastPass"] == "week-2"
    measured = node["certifications"][0]["categories"][0]["measurements"]["busBandwidthGBps"]
    assert measured > 300 and node["trend"]["communication/nccl-loopback"][0] == measured
    # The Nodes now (a driver upgrade on gpu-node-01) say it needs re-certification.
    nodes = build_nodes(fleet(nodeChanges=[{"node": "gpu-node-01", "driverVersion": "575.57.08"}]))
    listing = tmp_path / "nodes.yaml"
    listing.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "NodeList", "items": nodes}))
    assert main(["history", "node", "gpu-node-01", "--history", str(archive), "--nodes", str(listing)]) == 0
    out = capsys.readouterr().out
    assert "STALE: stale since week-2: driver 570.124.06 → 575.57.08" in out
    assert "week-1" in out and "ThresholdViolation" in out and "bus bandwidth trend: nccl-loopback" in out


def test_bad_input_is_one_line_and_exit_2(archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "node", "no-such-node", "--history", str(archive)]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    assert main(["history", "nodes", "--history", str(tmp_path / "absent.db")]) == 2
    assert "absent.db: no history database" in capsys.readouterr().err
    junk = tmp_path / "junk.db"
    junk.write_text("junk" * 1000)
    assert main(["history", "certifications", "--history", str(junk)]) == 2
    assert "junk.db" in capsys.readouterr().err
    assert main(["history", "nodes", "--last", "zero"]) == 2  # a usage error: its code, in one line
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_source_keeps_one_stores_certifications_and_several_are_said(archive: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Every simulated fleet has a gpu-node-02: a second store's run (another state file) is another machine of the
    same name, merged by name unless --source keeps one store, and said when several are merged."""
    scenario, cert = tmp_path / "scenario.yaml", tmp_path / "elsewhere.yaml"
    cert.write_text(yaml.safe_dump(loopback("elsewhere", "value >= 300")))
    assert main(["certification", "run", "--sim", "--scenario", str(scenario), "--state", str(tmp_path / "other.db"),
                 "--history", str(archive), "--cert-file", str(cert), "--wait"]) == 1
    capsys.readouterr()
    assert main(["history", "certifications", "--history", str(archive), "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len({r["source"] for r in rows}) == 2 and all(r["simulated"] for r in rows)
    assert main(["history", "node", "gpu-node-02", "--history", str(archive), "-o", "json"]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)["certifications"]) == 4
    assert "holds certifications of 2 sources, whose nodes are merged by name: --source TEXT keeps one" in err
    assert main(["history", "node", "gpu-node-02", "--history", str(archive), "--source", "other.db", "-o", "json"]) == 0
    out, err = capsys.readouterr()
    assert [e["certification"] for e in json.loads(out)["certifications"]] == ["elsewhere"] and err == ""
    assert main(["history", "nodes", "--history", str(archive), "--source", "no-such-store"]) == 2
    err = capsys.readouterr().err
    assert "--source 'no-such-store': no certification in" in err and "other.db" in err and len(err.strip().splitlines()) == 1
    assert main(["history", "certifications", "--history", str(archive)]) == 0
    assert "FAILED (simulated)" in capsys.readouterr().out
    # Bad input is one line: the note of merged sources came first, making it two (a command that fails prints nothing)
    for argv, said in ((["nodes", "--nodes", str(tmp_path / "absent.yaml")], f"{tmp_path / 'absent.yaml'}: no such file"),
                       (["node", "gpu-node-99"], f"node 'gpu-node-99': no results in the history {archive}")):
        assert main(["history", *argv, "--history", str(archive)]) == 2
        assert capsys.readouterr() == ("", said + "\n"), argv


def test_a_node_name_that_is_no_utf8_text_is_no_node_of_the_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bytes that are no UTF-8 in NAME (lone surrogates in argv): SQLite could not bind it, an internal error (exit 70)."""
    from nvcre_tui.engine.history import open_history

    archive = tmp_path / "history.db"
    open_history(archive).close()
    assert main(["history", "node", "gpu-\udcff", "--history", str(archive)]) == 2
    assert capsys.readouterr() == ("", f"node 'gpu-\\udcff': no results in the history {archive}\n")


def test_a_trend_is_one_series_per_group_size() -> None:
    """A node alone (intra-node, ~264 GB/s) and 32 nodes across the network (~147) are no trend of one another: mixed
    in one sparkline a healthy node looked like one degrading."""
    from nvcre_tui.engine.history.queries import HistoryQuery

    def entry(size: int, value: float) -> dict[str, object]:
        job = {"job": "j", "groupSize": size, "measurements": {"busBandwidthGBps": value}}
        return {"categories": [{"category": "communication/nccl-all-reduce", "busBW": value, "jobs": [job]}]}

    query = HistoryQuery(Path("unused.db"))
    assert query.trend("n", [entry(1, 264.0), entry(32, 147.0), entry(1, 265.0)]) == {
        "communication/nccl-all-reduce (1 node)": [264.0, 265.0], "communication/nccl-all-reduce (32 nodes)": [147.0]}
    assert query.trend("n", [entry(1, 264.0), entry(1, 263.0)]) == {"communication/nccl-all-reduce": [264.0, 263.0]}


def test_a_certification_not_in_this_state_names_where_the_history_archived_it(archive: Path, tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """An on-call engineer reporting week-1 without the --state it ran in read only "not found"; the history knew."""
    other = tmp_path / "other.json"
    assert main(["certification", "report", "week-1", "--sim", "--state", str(other), "--history", str(archive)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "certification 'week-1' not found in namespace default of the simulator" in err
    assert f"the history archived it from sim:{(tmp_path / 'state.json').resolve()} (--state {(tmp_path / 'state.json').resolve()}" in err
    assert main(["certification", "report", "no-such", "--sim", "--state", str(other), "--history", str(archive)]) == 2
    assert "archived it" not in capsys.readouterr().err
    # Deleted from where it ran (the console's x), archived from there: said too
    state = tmp_path / "state.json"
    assert main(["certification", "delete", "week-1", "--sim", "--state", str(state), "--history", str(archive)]) == 0
    capsys.readouterr()
    assert main(["certification", "report", "week-1", "--sim", "--state", str(state), "--history", str(archive)]) == 2
    assert "; the history archived it from here (nvcre history certifications)" in capsys.readouterr().err


def test_last_n_leaves_out_the_nodes_none_of_them_held(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`history nodes --last 1` after a certification of one node listed the three others as `untested` (0/0): a state
    they never had in it (the last certification held one node, and tested it)."""
    history = all_then_one_node(tmp_path)
    capsys.readouterr()
    assert main(["history", "nodes", "--history", str(history), "--last", "1", "-o", "json"]) == 0
    assert [(n["node"], n["window"], n["lastResult"]) for n in json.loads(capsys.readouterr().out)] == [("gpu-node-01", 1, "passed")]
    assert main(["history", "nodes", "--history", str(history), "--last", "1"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split()[0] for row in rows] == ["gpu-node-01"] and "untested" not in "".join(rows), rows
    assert main(["history", "nodes", "--history", str(history), "-o", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4  # all of them: every node


def test_node_says_the_threshold_a_value_missed_beside_it(archive: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An on-call walkthrough read `history node gpu-node-03`: `busBandwidthGBps 290.51` under ThresholdViolation, the
    threshold it missed nowhere (the report says `expected value >= 300`, the failures pane `(value >= 300)`). A value
    that missed its threshold has it beside it; one that met it stands alone. Each value says its unit (`242.64 GB/s`,
    parsers.measurements.with_unit), the trend's last one on its line too: they read as bare numbers."""
    assert main(["history", "node", "gpu-node-02", "--history", str(archive)]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith("week-")]
    assert len(rows) == 3 and all(re.search(r"busBandwidthGBps \d+\.\d\d GB/s \(value >= \d+\)$", row) for row in rows), rows
    assert any(re.fullmatch(r"bus bandwidth trend: nccl-loopback \S+ \d+\.\d\d GB/s", line) for line in out), out
    assert "(value >= 300)" in rows[0] and "(value >= 100000)" in rows[2]
    assert main(["history", "node", "gpu-node-01", "--history", str(archive)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("week-")]
    assert "value >=" not in rows[0] and rows[2].endswith("(value >= 100000)"), rows


def test_node_says_why_the_latest_certification_failed_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An on-call walkthrough read `history node gpu-node-12`: REASON `WorkloadFailed`, MEASURED `-` in every row, and
    nothing said why (a CUDA failure, an Xid 79: the GPU fell off the bus), only the JSON's `message`. Under the table, each category
    of the latest certification that did not pass the node says it, as the report does; a node that passed has none."""
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps({"name": "two", "seed": 4, "nodes": [{"count": 2}],
                                    "faults": [{"type": "xid", "node": "gpu-node-02", "xid": 79}]}))
    history = ["--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", "--scenario", str(scenario), "--state", str(tmp_path / "s.db"), *history,
                 "--category", "communication/nccl-loopback", "--name", "night", "--wait"]) == 1
    capsys.readouterr()
    assert main(["history", "node", "gpu-node-02", *history]) == 0
    out = capsys.readouterr().out.splitlines()
    why = out.index("why, in night (the latest that did not pass it):")
    assert out[why + 1].startswith("  communication/nccl-loopback: WorkloadFailed — ") and "Cuda failure 999" in out[why + 1], out
    assert out[why + 2].startswith("baseline: ")
    assert main(["history", "node", "gpu-node-01", *history]) == 0
    assert "why, in" not in capsys.readouterr().out


def test_a_suspects_why_says_its_whole_group_was_blamed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A node blamed only with its whole group (a hung group's Timeout, a group below its threshold) is no node the
    evidence convicts: its why says so, as the report's failed nodes do, not the group's reason as if its own."""
    scenario = tmp_path / "fleet.yaml"
    scenario.write_text(json.dumps({"name": "two", "seed": 4, "nodes": [{"count": 2}]}))
    cert = tmp_path / "cert.yaml"
    cert.write_text(yaml.safe_dump({"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "whole"},
                                    "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                                             "categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                                             "options": {"testScale": "full-scale",
                                                                         "thresholds": {"busBandwidthGBps": "value >= 100000"}}}]}}))
    history = ["--history", str(tmp_path / "h.db")]
    assert main(["certification", "run", "--scenario", str(scenario), "--state", str(tmp_path / "s.db"), *history,
                 "--cert-file", str(cert), "--wait"]) == 1
    capsys.readouterr()
    assert main(["history", "node", "gpu-node-01", *history]) == 0
    out = capsys.readouterr().out.splitlines()
    why = out.index("why, in whole (the latest that did not pass it):")
    assert out[why + 1].startswith("  communication/nccl-all-reduce: ThresholdViolation (suspect: its whole group failed together, "
                                   "no node named) — "), out
    # the checks it failed as the report's failed node says them (`measured ..., expected value >= 100000`), not the
    # engine's message (`Threshold "busBandwidthGBps" violated: ...`)
    assert main(["certification", "report", "whole", "--scenario", str(scenario), "--state", str(tmp_path / "s.db")]) == 1
    reported = next(line for line in capsys.readouterr().out.splitlines() if "gpu-node-01" in line and " — " in line)
    detail = reported.split(" — ", 1)[1].rsplit(" [", 1)[0]
    assert "expected value >= 100000" in detail and out[why + 1].endswith(" — " + detail), (out[why + 1], reported)


def test_nodes_table_fits_a_120_column_terminal(archive: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """BASELINE said `current (baseline unchanged since week-2)` in every row of a node that passed: the table wrapped
    each row over two or three lines at 120 columns. It says `current`; the certification it last passed is in the
    JSON (`staleness.lastPass`) and in `history node NAME`, which say everything."""
    import re
    import sys

    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["history", "nodes", "--history", str(archive)]) == 0
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in capsys.readouterr().out.splitlines()]
    assert max(len(line) for line in lines) <= 120, lines
    rows = {line.split()[0]: line for line in lines[1:]}
    assert len(lines) == 1 + len(rows) == 5, lines  # one line per node: none wrapped
    assert "  current  " in rows["gpu-node-01"] and "never passed" in rows["gpu-node-02"]
    monkeypatch.undo()
    assert main(["history", "node", "gpu-node-01", "--history", str(archive)]) == 0
    assert "baseline: current (baseline unchanged since week-2)" in capsys.readouterr().out
