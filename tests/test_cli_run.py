"""`nvcre certification run` / `report` across processes (the state file), exit codes and output forms."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from nvcre_tui.cli import main
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import NO_CHECKPOINTS, certification_for_categories

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = ROOT / "examples" / "burn-in.yaml"
README = ROOT / "README.md"


def test_run_wait_then_report_from_the_state_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state, results = tmp_path / "state.json", tmp_path / "results.json"
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--state", str(state), "--results-file", str(results)]) == 1
    out, err = capsys.readouterr()
    assert "Certification Report" in out and "Result:         FAILED" in out
    assert "[watch] Certification failed." in err
    written = json.loads(results.read_text())
    assert written["failedNodes"] == ["gpu-node-07", "gpu-node-12"]
    assert main(["certification", "report", "burn-in", "-o", "json", "--state", str(state)]) == 1  # a second "process"
    again = json.loads(capsys.readouterr().out)
    assert again["failedNodes"] == written["failedNodes"] and again["result"] == "FAILED"
    assert main(["certification", "report", "burn-in", "-o", "junit", "--state", str(state)]) == 1
    suite = ET.fromstring(capsys.readouterr().out).find("testsuite")
    assert suite is not None and suite.get("failures") == "2" and suite.get("tests") == "2"


def test_run_without_wait_leaves_it_running_and_report_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.json"
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--state", str(state)]) == 0
    capsys.readouterr()
    assert main(["certification", "report", "burn-in", "--state", str(state)]) == 3  # still running
    assert "Result:         RUNNING" in capsys.readouterr().out
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--state", str(state)]) == 2  # same name again
    assert "already exists" in capsys.readouterr().err


def test_run_without_wait_on_the_simulator_says_nothing_runs_it_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On a cluster `run` without --wait said that no engine keeps running it; on the simulator it advised `report`
    alone, which showed the certification RUNNING for ever: the process that ran the store's engine had exited."""
    state = tmp_path / "state.db"
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--state", str(state)]) == 0
    err = capsys.readouterr().err
    assert (f"No engine keeps running it after this command: pass --wait, or open the console (`nvcre --state {state}`), "
            f"which runs the engine; `nvcre certification report burn-in --state {state}` shows where it stands.") in " ".join(err.split()), err
    assert "Follow it" not in err  # not followed anywhere: nothing runs it


def test_a_name_taken_is_blamed_where_the_name_came_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--name overrides the file's metadata.name: a taken --name blamed the file's metadata.name, which named another."""
    state = tmp_path / "state.db"
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--name", "weekly", "--state", str(state)]) == 0
    capsys.readouterr()
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--name", "weekly", "--state", str(state)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("--name: certification 'weekly' already exists") and "use another --name" in err, err
    assert "metadata.name" not in err, err
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--state", str(state)]) == 0  # burn-in: the file's name
    capsys.readouterr()
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--state", str(state)]) == 2
    assert capsys.readouterr().err.startswith(f"{BURN_IN}: metadata.name: certification 'burn-in' already exists")


def test_timeout_prints_a_partial_report_and_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["certification", "run", "--cert-file", str(BURN_IN), "--wait", "--timeout", "10m", "--state", str(tmp_path / "s.json")])
    out, err = capsys.readouterr()
    assert code == 3
    assert "Result:         RUNNING" in out and "the certification goes on" in err


def test_report_of_an_unknown_certification_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "report", "nope", "--state", str(tmp_path / "s.json")]) == 2
    assert "certification 'nope' not found" in capsys.readouterr().err


def test_bad_timeout_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--wait", "--timeout", "soon", "--state", str(tmp_path / "s.json")]) == 2
    assert capsys.readouterr().err.startswith("--timeout: not a duration")


@pytest.mark.parametrize("argv", [["--read-only", "certification", "report", "x"], ["--theme", "nord", "certification", "list-categories"]])
def test_a_console_option_the_command_does_not_take_is_not_advised_after_it(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == f"nvcre: {argv[0]} is the console's option (nvcre {argv[0]} ...), and this command does not take it\n"


def test_options_before_a_command_are_the_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`nvcre --state S certification run ...` is `nvcre certification run --state S ...` (it was refused: argparse lets the
    command's defaults overwrite options given before it, so they were never taken)."""
    state = tmp_path / "state.db"
    assert main(["--state", str(state), "-n", "team", "certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait"]) == 1
    assert state.exists()  # burn-in fails two nodes, in namespace team of that store
    capsys.readouterr()
    assert main(["certification", "list", "--state", str(state), "-n", "team", "-o", "json"]) == 0
    assert [c["name"] for c in json.loads(capsys.readouterr().out)] == ["burn-in"]


def test_an_option_before_and_after_the_command_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    code = main(["--state", str(first), "certification", "run", "--sim", "--state", str(second), "--cert-file", str(BURN_IN), "--wait"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and not first.exists() and not second.exists()
    assert err == "nvcre certification run: --state given twice; give it once; see nvcre certification run --help\n"


def test_a_results_file_that_is_the_store_or_an_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON report written over the simulator's store (or the certification it ran) would lose it silently."""
    state, cert = tmp_path / "state.db", tmp_path / "cert.yaml"
    cert.write_bytes(BURN_IN.read_bytes())
    assert main(["certification", "run", "--sim", "--state", str(state), "--cert-file", str(cert), "--wait"]) == 1
    stored = state.read_bytes()
    capsys.readouterr()
    for argv, flag in ((["certification", "run", "--sim", "--state", str(state), "--cert-file", str(cert), "--wait", "--results-file", str(state)], "--state"),
                       (["certification", "run", "--sim", "--state", str(tmp_path / "b.db"), "--cert-file", str(cert), "--wait", "--results-file", str(cert)], "--cert-file"),
                       (["certification", "report", "burn-in", "--sim", "--state", str(state), "--results-file", str(tmp_path / "." / "state.db")], "--state")):
        assert main(argv) == 2, argv
        assert capsys.readouterr().err.strip().endswith(f"is the {flag} file; the report would replace it: write it elsewhere")
    assert state.read_bytes() == stored and cert.read_bytes() == BURN_IN.read_bytes() and not (tmp_path / "b.db").exists()


def test_the_console_without_a_terminal_is_one_line_and_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Under pytest stdin and stdout are no terminal, as in a script or with `<&-`: Textual would draw escape codes into
    the pipe until killed (or fail on a closed stdin with a traceback)."""
    state = tmp_path / "state.db"
    for argv in (["--sim", "--state", str(state)], ["wall", "--sim", "--state", str(state)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "the console needs a terminal (stdin and stdout)" in err
    assert not state.exists()


def test_a_run_refused_for_its_plan_or_its_history_creates_no_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A store created by a refused run would hold the scenario's fleet, and refuse the next run on another fleet."""
    import sqlite3

    state, other = tmp_path / "new" / "state.db", tmp_path / "other.db"
    too_big = ROOT / "tests" / "corpus" / "bad" / "39-nodes-per-job-larger-than-fleet.yaml"
    assert main(["certification", "run", "--sim", "--state", str(state), "--cert-file", str(too_big), "--wait"]) == 2
    assert "nodesPerJob: 64 nodes per job but only 32 eligible nodes match" in capsys.readouterr().err
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    assert main(["certification", "run", "--sim", "--state", str(state), "--cert-file", str(BURN_IN), "--wait", "--history", str(other)]) == 2
    assert capsys.readouterr().err.strip().endswith("an SQLite database but not an nvcre history (it holds tables notes); --history PATH names another")
    assert not state.exists() and not state.parent.exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["certification", "list-categories", "-o", "xml"],
     "nvcre certification list-categories: argument -o/--output: invalid choice: 'xml' (choose from 'table', 'json', 'yaml'); "
     "see nvcre certification list-categories --help"),
    (["certification", "run", "--sim", "--sim-runner", "--cert-file", str(BURN_IN)],
     "--sim runs the embedded simulator and --sim-runner a cluster: give one or the other"),
    (["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--name", ""],
     "nvcre certification run: argument --name: empty; see nvcre certification run --help"),
    (["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--timeout", "5m"], "--timeout: needs --wait (it bounds how long the run is followed)"),
    (["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--results-file", ""],
     "nvcre certification run: argument --results-file: empty; see nvcre certification run --help"),
    # An empty value (an unset shell variable) is refused, never taken for the default file, fleet or cluster.
    *[(argv, f"nvcre {command}: argument {flag}: empty; see nvcre {command} --help") for command, flag, argv in (
        ("certification render", "--nodes", ["certification", "render", str(BURN_IN), "--nodes", ""]),
        ("certification render", "--kubeconfig", ["certification", "render", str(BURN_IN), "--kubeconfig", ""]),
        ("certification report", "--state", ["certification", "report", "burn-in", "--sim", "--state", ""]),
        ("certification report", "--results-file", ["certification", "report", "burn-in", "--sim", "--results-file", ""]),
        ("history nodes", "--history", ["history", "nodes", "--history", ""]),
        ("parse", "FILE", ["parse", "nccl", ""]),
    )],
    (["certification", "render", str(BURN_IN), "--scenario", str(ROOT / "tests" / "cases" / "scenarios" / "all-pass-every-category" / "scenario.yaml"), "--kubeconfig", "k"],
     "--scenario and --kubeconfig/--context: each names the nodes to plan on; give one"),
])
def test_flags_that_would_be_dropped_or_conflict_are_one_line(argv: list[str], message: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    assert main([*argv, "--state", str(state)] if argv[1] == "run" else argv) == 2
    assert capsys.readouterr().err == message + "\n"
    assert not state.exists()


def test_simulator_flags_with_a_configured_cluster_are_refused_not_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))  # as on an SRE's laptop: a cluster is configured
    assert main(["certification", "report", "burn-in", "--state", str(tmp_path / "state.db")]) == 2
    assert capsys.readouterr().err == ("--state would be ignored: it is the embedded simulator's and a cluster is configured "
                                       "($KUBECONFIG or ~/.kube/config); add --sim to use the simulator\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["controller", "--lease-duration", "inf"], "--lease-duration: must be 3 to 3600 seconds (an hour), got inf"),
    (["setup", "init", "--timeout", "inf"], "nvcre setup init: argument --timeout: must be 0 to 86400 seconds (a day), got 'inf'; see nvcre setup init --help"),
    (["certification", "render", "-", "--nodes", "-"], "- and --nodes -: standard input can be read once; pass one of them as a file"),
    (["setup", "status", "--kubeconfig", "/"], "--kubeconfig /: is a directory, not a file"),
])
def test_unbounded_or_impossible_flags_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == message + "\n"


def test_diagnose_with_mnnvl_over_several_cliques_and_a_bandwidth_threshold_stays_inside_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Inside an NVL domain the tests run over NVLink, across domains over the network: one threshold would fail every
    cross-clique test and name healthy links, so the run stays inside the cliques. With MNNVL off (every test over
    the network), or without a threshold (a test fails only when it crashes, on either path), it crosses them."""
    scenario = ROOT / "tests" / "cases" / "scenarios" / "gb200-intra-rack-mnnvl" / "scenario.yaml"  # two GB200 cliques
    cert = tmp_path / "cert.yaml"
    options: dict[str, Any] = {"testScale": "diagnose", "thresholds": {"busBandwidthGBps": "value >= 150"}}
    body = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "gb200-diagnose"},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": options}]}}

    def within() -> bool:
        cert.write_text(json.dumps(body))
        assert main(["certification", "render", str(cert), "--scenario", str(scenario), "-o", "json"]) == 0
        [workflow] = json.loads(capsys.readouterr().out)["items"]
        return bool(workflow["spec"]["orchestration"]["diagnose"]["withinDomains"])  # the run follows it (test_diagnose)

    assert within()
    options["enableMNNVL"] = False
    assert not within()
    del options["thresholds"]
    options.pop("enableMNNVL")
    assert not within()


@pytest.mark.parametrize(("scale", "mnnvl", "outcome"), [
    ("full-scale", None, "onFailure: diagnose of a full-scale run with MNNVL on over 2 cliques"),  # it crossed them
    ("intra-rack", None, {"minGroupSize": 2, "topologyKey": "nvidia.com/gpu.clique", "withinDomains": True}),
    ("intra-rack", False, {"minGroupSize": 2, "topologyKey": "nvidia.com/gpu.clique", "withinDomains": False}),  # all over the network
    ("full-scale", False, {"minGroupSize": 2, "topologyKey": "nvidia.com/gpu.clique", "withinDomains": False}),
])
def test_on_failure_diagnose_on_nvl_domains_with_mnnvl_stays_inside_them_or_is_refused(
        scale: str, mnnvl: bool | None, outcome: str | dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An intra-rack run only tested inside its cliques (over NVLink): its narrowing stays there. A full-scale run
    crossed them, and its narrowing would judge NVLink and network tests by one threshold: refused."""
    scenario = ROOT / "tests" / "cases" / "scenarios" / "gb200-intra-rack-mnnvl" / "scenario.yaml"  # two GB200 cliques
    options: dict[str, Any] = {"testScale": scale, "onFailure": "diagnose", "thresholds": {"busBandwidthGBps": "value >= 150"}}
    if mnnvl is not None:
        options["enableMNNVL"] = mnnvl
    body = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "gb200-on-failure"},
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": options}]}}
    cert = tmp_path / "cert.yaml"
    cert.write_text(json.dumps(body))
    code = main(["certification", "render", str(cert), "--scenario", str(scenario), "-o", "json"])
    captured = capsys.readouterr()
    if isinstance(outcome, str):
        assert code == 2 and captured.err.count("\n") == 1 and outcome in captured.err and "set enableMNNVL: false" in captured.err
        return
    assert code == 0
    [workflow] = [o for o in json.loads(captured.out)["items"] if o["kind"] == "Workflow"]
    assert workflow["spec"]["orchestration"]["onFailure"]["diagnose"] == outcome


def test_a_results_file_that_is_the_default_store_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """No --state: the store is in its default place ($NVCRE_STATE here), which the report must not replace either."""
    store = tmp_path / "sim.db"
    monkeypatch.setenv("NVCRE_STATE", str(store))
    assert main(["certification", "run", "--sim", "--cert-file", str(BURN_IN), "--wait", "--results-file", str(store)]) == 2
    assert capsys.readouterr().err.strip().endswith("is the --state file; the report would replace it: write it elsewhere")
    assert not store.exists()


def test_a_scenario_on_stdin_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    scenario = (ROOT / "tests" / "cases" / "scenarios" / "all-pass-every-category" / "scenario.yaml").read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(scenario))
    assert main(["certification", "run", "--sim", "--scenario", "-", "--state", str(tmp_path / "s.db"), "--cert-file", str(BURN_IN)]) == 0
    assert "Certification burn-in created" in capsys.readouterr().err


def test_a_kubelets_canonical_quantities_are_taken_in_a_nodes_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The RDMA shared-device plugin reports 1000 devices as "1k" (canonical form): a whole number, as extended resources are.
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text('items:\n  - metadata: {name: gpu-0, labels: {nvidia.com/gpu.present: "true"}}\n'
                     '    status: {allocatable: {nvidia.com/gpu: "8", rdma/rdma_shared_device_a: 1k, cpu: 95500m}}\n')
    assert main(["certification", "render", str(BURN_IN), "--nodes", str(nodes)]) == 0
    nodes.write_text(nodes.read_text().replace("1k", '"1.5"'))
    assert main(["certification", "render", str(BURN_IN), "--nodes", str(nodes)]) == 2
    assert "rdma/rdma_shared_device_a is an extended resource, a whole number such as 8, not '1.5'" in capsys.readouterr().err


@pytest.mark.parametrize(("allocatable", "said"), [
    ('{nvidia.com/gpu: "8", example.com/foo: "8e30"}', "example.com/foo: '8e30' is more devices than a node can report (at most 2^63-1)"),
    ('{nvidia.com/gpu: "99999999999999999999999"}', "nvidia.com/gpu: '99999999999999999999999' is more devices than a node can report (at most 2^63-1)"),
    ('{nvidia.com/gpu: "8Ki"}', "nvidia.com/gpu: '8Ki' is 8192 GPUs on one node; at most 64 (more only as nvidia.com/gpu.replicas shares of each GPU)"),
    ('{nvidia.com/gpu: "1E"}', "nvidia.com/gpu: '1E' is 1000000000000000000 GPUs on one node; at most 64 (more only as nvidia.com/gpu.replicas shares of each GPU)"),
])
def test_a_device_count_no_node_has_is_one_line_naming_the_resource(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    allocatable: str, said: str) -> None:
    """"8e30" was an internal error (decimal.DivisionImpossible), "1E" (exa, a valid quantity) a Python message about
    int(), and 8192 GPUs on a node were taken."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(f"items:\n  - metadata: {{name: gpu-0}}\n    status: {{allocatable: {allocatable}}}\n")
    assert main(["certification", "render", str(BURN_IN), "--nodes", str(nodes)]) == 2
    assert capsys.readouterr().err.strip() == f"{nodes}: items[0].status.allocatable: {said}"


def test_a_node_sharing_its_gpus_may_show_more_than_64_and_is_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Time-slicing 8 GPUs ten ways advertises 80: a node list exported from such a cluster is read (the node left out
    as partitioned), not refused whole; past 64 times the replicas it is no count a node shows."""
    shared = ("  - metadata: {name: ts-0, labels: {nvidia.com/gpu.present: 'true', nvidia.com/gpu.replicas: '10', "
              "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3-SHARED}}\n    status: {allocatable: {nvidia.com/gpu: 'ALLOCATABLE'}}\n")
    whole = "  - metadata: {name: gpu-1, labels: {nvidia.com/gpu.present: 'true', nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}\n" \
            "    status: {allocatable: {nvidia.com/gpu: '8'}}\n"
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("items:\n" + shared.replace("ALLOCATABLE", "80") + whole)
    assert main(["certification", "render", str(BURN_IN), "--nodes", str(nodes), "-o", "json"]) == 0
    workflows = json.loads(capsys.readouterr().out)["items"]
    excluded = {(e["name"], e["reason"]) for wf in workflows for e in wf["status"]["orchestration"].get("excludedNodes") or []}
    assert ("ts-0", "PartitionedGPUs") in excluded
    nodes.write_text("items:\n" + shared.replace("ALLOCATABLE", "800") + whole)
    assert main(["certification", "render", str(BURN_IN), "--nodes", str(nodes)]) == 2
    assert capsys.readouterr().err.strip() == f"{nodes}: items[0].status.allocatable: nvidia.com/gpu: '800' is 800 GPUs on one node; at most 640"


@pytest.mark.parametrize("replicas", ["\u00b2", "+4", "1e3", "99999999999999999999"])
def test_a_replicas_label_that_is_no_plain_count_is_no_share(tmp_path: Path, capsys: pytest.CaptureFixture[str], replicas: str) -> None:
    """A superscript two is a digit to str.isdigit and no number to int(): it was an internal error."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(json.dumps({"items": [{"metadata": {"name": "gpu-0", "labels": {"nvidia.com/gpu.replicas": replicas}},
                                            "status": {"allocatable": {"nvidia.com/gpu": "80"}}}]}))
    assert main(["cluster", "info", "--nodes", str(nodes)]) == 2
    err = capsys.readouterr().err
    # "²" and "+4" are no label values at all (the API server refuses them too): the file's check says so first
    said = "must be a label value" if replicas in ("\u00b2", "+4") else "is 80 GPUs on one node; at most 64"
    assert said in err and "internal error" not in err


def test_exa_is_a_quantity_suffix_and_an_exponent_needs_digits() -> None:
    from nvcre_tui.engine.units import parse_quantity

    assert parse_quantity("1E") == 10**18 and parse_quantity("2e3") == 2000 and parse_quantity("1Ei") == 2**60


def test_run_by_category_certifies_every_gpu_node_of_the_one_product(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """NVCRE's `run --category d/v`: no file; the target is the GPU nodes of the product found on the fleet."""
    state, results = tmp_path / "state.db", tmp_path / "results.json"
    argv = ["certification", "run", "--sim", "--category", "communication/nccl-all-reduce", "--name", "quick", "--wait",
            "--state", str(state), "--results-file", str(results)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "Discovered GPU nodes with product: NVIDIA-H100-80GB-HBM3" in err and "  - communication/nccl-all-reduce" in err
    report = json.loads(results.read_text())
    assert report["result"] == "PASSED" and report["totalNodes"] == 32
    assert main(["certification", "report", "quick", "--sim", "--state", str(state)]) == 0


def test_run_by_category_on_a_fleet_of_two_gpu_products_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "mixed.yaml"
    scenario.write_text("name: mixed\nseed: 1\nnodes:\n  - {count: 2}\n  - {count: 2, namePrefix: b200-, gpuProduct: NVIDIA-B200}\n")
    state = tmp_path / "state.db"
    assert main(["certification", "run", "--sim", "--scenario", str(scenario), "--category", "communication/nccl-all-reduce",
                 "--state", str(state)]) == 2
    assert capsys.readouterr().err == ("--category: the GPU nodes hold 2 products (NVIDIA-B200, NVIDIA-H100-80GB-HBM3): certify one at a "
                                       "time with --cert-file and a nodeSelector on nvidia.com/gpu.product\n")
    assert not state.exists()  # nothing was created


@pytest.mark.parametrize(("category", "message"), [
    ("nccl", "--category: expected DOMAIN/VARIANT (see `nvcre certification list-categories`), got 'nccl'"),
    ("communication/", "--category: expected DOMAIN/VARIANT (see `nvcre certification list-categories`), got 'communication/'"),
    ("foo/bar", "--category: spec.categories[0].domain: unknown domain 'foo'; known: communication, diagnostics, training"),
])
def test_a_category_that_is_not_one_is_one_line_and_creates_nothing(category: str, message: str, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    assert main(["certification", "run", "--sim", "--category", category, "--state", str(state)]) == 2
    assert capsys.readouterr().err == message + "\n"
    assert not state.exists()


@pytest.mark.parametrize(("argv", "message"), [
    (["--category", "communication/nccl-all-reduce", "--cert-file", str(BURN_IN)], "argument --cert-file: not allowed with argument --category"),
    ([], "one of the arguments --cert-file --category is required"),
])
def test_a_run_takes_a_file_or_categories_not_both_nor_neither(argv: list[str], message: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certification", "run", "--sim", *argv, "--state", str(tmp_path / "state.db")]) == 2
    assert capsys.readouterr().err == f"nvcre certification run: {message}; see nvcre certification run --help\n"


def test_category_option_flags_set_every_categorys_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results.json"
    argv = ["certification", "run", "--sim", "--category", "communication/nccl-all-reduce", "--repeat-count", "2", "--nodes-per-job", "2",
            "--no-enable-mnnvl", "--name", "options", "--wait", "--state", str(tmp_path / "state.db"), "--results-file", str(results)]
    assert main(argv) == 0
    capsys.readouterr()
    [category] = json.loads(results.read_text())["categories"]
    assert (category["nodesPerJob"], len(category["iterations"]), category["mnnvl"]) == (2, 2, False)


@pytest.mark.parametrize(("argv", "message"), [
    (["--category", "communication/nccl-all-reduce", "--repeat-count", "0"], "--category: spec.categories[0].options.repeatCount: must be >= 1"),
    (["--cert-file", str(BURN_IN), "--repeat-count", "2"], "--repeat-count: goes with --category; a file sets it in spec.categories[].options"),
    (["--category", "diagnostics/dcgm-level4", "--max-steps", "10"],
     "--max-steps: diagnostics/dcgm-level4 does not read maxSteps (taken by training/nemotron5-56b, training/nemotron5-8b)"),
    (["--category", "communication/nccl-loopback", "--nodes-per-job", "4"],  # it ran with 1 node per Job, without a word
     "--nodes-per-job: communication/nccl-loopback runs one node per Job, which does not read nodesPerJob (read by testScale full-scale); leave it out"),
    (["--category", "training/nemotron5-8b", "--enable-checkpoint"], "--enable-checkpoint: " + NO_CHECKPOINTS),
    (["--category", "training/nemotron5-8b", "--no-enable-checkpoint", "--storage-class", "fast"], "--storage-class: " + NO_CHECKPOINTS),
    (["--category", "communication/nccl-all-reduce", "--nodes-per-job", "two"],
     "nvcre certification run: argument --nodes-per-job: must be a whole number in digits 0-9, got 'two'; see nvcre certification run --help"),
    (["--category", "communication/nccl-all-reduce", "--nodes-per-job", "\u0663"],  # int() reads Arabic-Indic 3 as 3
     "nvcre certification run: argument --nodes-per-job: must be a whole number in digits 0-9, got '\u0663'; see nvcre certification run --help"),
    (["--category", "communication/nccl-all-reduce", "--repeat-count", " 2"],
     "nvcre certification run: argument --repeat-count: must be a whole number in digits 0-9, got ' 2'; see nvcre certification run --help"),
])
def test_a_category_option_flag_that_cannot_apply_is_one_line_and_creates_nothing(argv: list[str], message: str, tmp_path: Path,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    assert main(["certification", "run", "--sim", *argv, "--state", str(state)]) == 2
    assert capsys.readouterr().err == message + "\n"
    assert not state.exists()


def test_help_does_not_offer_the_checkpoint_flags_every_run_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--enable-checkpoint, --max-restarts and --storage-class are NVCRE's and always refused: taken (so the refusal names
    them) but not listed in --help as if they did something; the README does not offer them either."""
    assert main(["certification", "run", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--nodes-per-job" in shown and "--repeat-count" in shown
    for flag in ("--enable-checkpoint", "--max-restarts", "--storage-class", "checkpoint"):
        assert flag not in shown, flag
        assert f"`{flag}" not in README.read_text()
    assert main(["certification", "run", "--sim", "--category", "training/nemotron5-8b", "--max-restarts", "2",
                 "--state", str(tmp_path / "state.db")]) == 2
    assert capsys.readouterr().err == "--max-restarts: " + NO_CHECKPOINTS + "\n"
    assert not (tmp_path / "state.db").exists()


def test_every_category_option_flag_names_an_option_certifications_take() -> None:
    from nvcre_tui.cli.run.flags import CATEGORY_OPTION_FLAGS
    from nvcre_tui.engine.api.options import option_aliases

    assert {option for option, _, _ in CATEGORY_OPTION_FLAGS.values()} <= option_aliases()


def test_each_category_takes_the_option_flags_its_workload_reads() -> None:
    catalog = default_catalog()
    cert = certification_for_categories(["communication/nccl-all-reduce", "training/nemotron5-8b"], "both", catalog,
                                        {"maxSteps": 20, "repeatCount": 2})
    nccl, training = (category.options for category in cert.spec.categories)
    assert nccl is not None and training is not None
    assert (nccl.max_steps, nccl.repeat_count) == (None, 2)
    assert (training.max_steps, training.repeat_count) == (20, 2)


def test_each_category_takes_the_orchestration_flags_its_way_of_running_reads() -> None:
    cert = certification_for_categories(["communication/nccl-all-reduce", "communication/nccl-loopback"], "both", default_catalog(),
                                        {"nodesPerJob": 4, "repeatCount": 2})
    full_scale, loopback = (category.options for category in cert.spec.categories)
    assert full_scale is not None and loopback is not None
    assert (full_scale.nodes_per_job, full_scale.repeat_count) == (4, 2)
    assert (loopback.nodes_per_job, loopback.repeat_count) == (None, 2)


def test_the_advised_report_command_finds_the_certification_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state.db"
    assert main(["certification", "run", "--sim", "--state", str(state), "-n", "team-a", "--cert-file", str(BURN_IN)]) == 0
    advice = capsys.readouterr().err.splitlines()[-1]
    found = re.search(r"`nvcre (certification report [^`]*)`", advice)
    assert found is not None, advice
    command = found[1]
    assert command == f"certification report burn-in --sim --state {state} -n team-a"
    assert main(command.split()) in (1, 3)  # found: FAILED, or still running


def test_report_of_several_certifications(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As NVCRE's `report NAME...`: text sections in the order given, a JSON array (and results file), one JUnit
    file with a suite each; the exit is FAILED's when one failed, else RUNNING's when one runs, else 0. A name not
    found is one line after the others' reports, and exit 2 (`report quick nope` printed nothing, its line read as
    for `report nope` alone); a name given twice, or -o html for several, is refused."""
    state, results = tmp_path / "state.db", tmp_path / "results.json"
    assert main(["certification", "run", "--sim", "--category", "communication/nccl-all-reduce", "--name", "quick", "--wait",
                 "--state", str(state)]) == 0
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--wait", "--state", str(state)]) == 1
    assert main(["certification", "run", "--cert-file", str(BURN_IN), "--name", "later", "--state", str(state)]) == 0
    capsys.readouterr()
    assert main(["certification", "report", "quick", "burn-in", "--state", str(state)]) == 1
    out = capsys.readouterr().out
    assert out.count("Certification Report") == 2 and out.index("quick") < out.index("burn-in")
    assert main(["certification", "report", "quick", "later", "-o", "json", "--state", str(state), "--results-file", str(results)]) == 3
    shown = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["result"]) for r in shown] == [("quick", "PASSED"), ("later", "RUNNING")]
    assert json.loads(results.read_text()) == shown
    assert main(["certification", "report", "burn-in", "later", "quick", "-o", "junit", "--state", str(state)]) == 1
    suites = ET.fromstring(capsys.readouterr().out).findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["burn-in", "later", "quick"]
    assert main(["certification", "report", "quick", "-o", "json", "--state", str(state)]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "quick"  # one name: one object, as before
    nope = f"certification 'nope' not found in namespace default of the simulator ({state})\n"
    assert main(["certification", "report", "nope", "--state", str(state)]) == 2
    assert capsys.readouterr() == ("", nope)
    assert main(["certification", "report", "quick", "nope", "--state", str(state)]) == 2
    out, err = capsys.readouterr()
    assert out.count("Certification Report") == 1 and "quick" in out and err == nope, (out, err)
    results.unlink()
    assert main(["certification", "report", "nope", "quick", "-o", "json", "--state", str(state), "--results-file", str(results)]) == 2
    out, err = capsys.readouterr()
    assert [r["name"] for r in json.loads(out)] == ["quick"] and err == nope  # an array: several names were asked for
    assert json.loads(results.read_text()) == json.loads(out)
    assert main(["certification", "report", "burn-in", "nope", "-o", "junit", "--state", str(state)]) == 2  # not 1: the input was bad
    out, err = capsys.readouterr()
    assert [suite.get("name") for suite in ET.fromstring(out).findall("testsuite")] == ["burn-in"] and err == nope
    assert main(["certification", "report", "nope", "nada", "--state", str(state)]) == 2
    assert capsys.readouterr() == ("", nope + nope.replace("'nope'", "'nada'"))
    for argv, message in ((["quick", "quick"], "NAME: 'quick' is given twice"),
                          (["quick", "burn-in", "-o", "html"], "-o html: one certification per file"),
                          (["quick", "Bad_Name"], "NAME: 'Bad_Name' is not a certification name")):
        assert main(["certification", "report", *argv, "--state", str(state)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.splitlines()) == 1 and message in err


def test_the_default_timeout_allows_a_diagnosis_after_the_iterations() -> None:
    """`--timeout`'s default: each category's Job budget × iterations × waves, and DIAGNOSE_ROUNDS more where
    onFailure: diagnose may follow (it used to be left out, and a healthy wait ended 'timed out')."""
    from types import SimpleNamespace

    from nvcre_tui.cli.run.timeout import DIAGNOSE_ROUNDS, default_timeout
    from nvcre_tui.engine.api.resources import OrchestrationSpec

    def rendered(**orchestration: Any) -> list[Any]:
        spec = OrchestrationSpec.model_validate({"execution": {"timeoutPerJob": "1h"}, "iterations": 2, **orchestration})
        return [SimpleNamespace(workflow=SimpleNamespace(spec=SimpleNamespace(orchestration=spec)), groups=[1, 2])]

    plain = default_timeout(rendered())
    assert plain == 2 * 3600 * 1.5
    assert default_timeout(rendered(onFailure={"diagnose": {}})) == (2 + DIAGNOSE_ROUNDS) * 3600 * 1.5


def test_the_default_timeout_of_a_certification_not_planned_here_counts_its_budgets() -> None:
    """A user who may not list Nodes plans nothing here: `run --wait` followed any certification for 30 minutes, a
    24-hour training too (exit 3 while it ran). Its categories' budgets, known without the nodes, count one round of
    groups each."""
    from nvcre_tui.cli.run.timeout import DIAGNOSE_ROUNDS, default_timeout
    from nvcre_tui.engine.api.options import CategoryOptions
    from nvcre_tui.engine.planning.render import check_certification

    catalog = default_catalog()
    cert = certification_for_categories(["training/nemotron5-56b", "communication/nccl-all-reduce"], "t", catalog)
    known = check_certification(cert, catalog, "--category")
    assert default_timeout([], known) == (24 + 1) * 3600 * 1.5
    cert.spec.categories[1].options = CategoryOptions.model_validate({"onFailure": "diagnose", "repeatCount": 2})
    assert default_timeout([], check_certification(cert, catalog, "--category")) == (24 + 2 + DIAGNOSE_ROUNDS) * 3600 * 1.5


def test_a_table_a_script_reads_has_no_padding_after_its_last_word(capsys: pytest.CaptureFixture[str]) -> None:
    """Rich pads every cell to its column: piped, each line of `list-categories` ended in spaces up to the widest."""
    assert main(["certification", "list-categories"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 5 and lines[0].startswith("DOMAIN") and all(line == line.rstrip() for line in lines)


def test_a_file_name_holding_a_newline_is_still_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The name was printed raw: the message broke over two lines, the second looking like a message of its own."""
    folder = tmp_path / "a\nb"
    folder.mkdir()
    (folder / "c.yaml").write_text("kind: Certification\n")
    assert main(["certification", "render", str(folder / "c.yaml")]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith(f"{tmp_path}/a\ufffdb/c.yaml: ") for line in lines), lines


def test_a_namespace_flag_that_contradicts_the_file_is_refused_as_kubectl_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """-n team-b replaced the file's metadata.namespace team-a in silence: the certification ran where the file
    did not say."""
    cert = tmp_path / "c.yaml"
    cert.write_text(BURN_IN.read_text().replace("name: burn-in", "name: burn-in\n  namespace: team-a", 1))
    state = tmp_path / "s.db"
    assert main(["certification", "run", "--sim", "--cert-file", str(cert), "--state", str(state), "-n", "team-b"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{cert}: metadata.namespace 'team-a' does not match -n 'team-b': pass -n team-a, or leave the namespace out of the file"]
    assert not state.exists()
    assert main(["certification", "run", "--sim", "--cert-file", str(cert), "--state", str(state), "-n", "team-a"]) == 0


def test_what_run_says_is_never_wrapped_at_80_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Piped (no terminal: 80 columns), a line past 80 characters was broken in two, `(the ⏎simulator)`."""
    name = "a-certification-name-long-enough-to-pass-eighty-columns"
    cert = tmp_path / "c.yaml"
    cert.write_text(BURN_IN.read_text().replace("name: burn-in", f"name: {name}", 1))
    assert main(["certification", "run", "--sim", "--cert-file", str(cert), "--state", str(tmp_path / "s.db")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert f"Certification {name} created in namespace default (the simulator)." in lines


def test_run_wait_follows_a_category_run_twice_as_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both nccl-all-reduce categories were one `[watch] communication/nccl-all-reduce` line, the second's status
    taken for the first's change: each is followed by its report title (#1, #2)."""
    category = ("    - domain: communication\n      variant: nccl-all-reduce\n"
                "      options: {testScale: intra-node, thresholds: {busBandwidthGBps: \"value >= %s\"}}\n")
    cert = tmp_path / "twice.yaml"
    cert.write_text("apiVersion: nvcre.nvidia.com/v1alpha1\nkind: Certification\nmetadata: {name: twice}\nspec:\n"
                    "  target: {nodeSelector: {nvidia.com/gpu.present: \"true\"}}\n  categories:\n" + category % 1 + category % 100000)
    assert main(["certification", "run", "--sim", "--state", str(tmp_path / "s.db"), "--cert-file", str(cert), "--wait"]) == 1
    err = capsys.readouterr().err
    assert "[watch] communication/nccl-all-reduce #1: Succeeded" in err and "[watch] communication/nccl-all-reduce #2: Failed" in err, err


def test_run_wait_says_each_round_of_a_diagnosis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A diagnosis of ten minutes printed only InProgress, then Failed: each round is a line, with its suspects and
    what it has convicted so far."""
    case = Path(__file__).parent / "cases" / "scenarios" / "diagnose-flaky-and-fabric"
    assert main(["certification", "run", "--sim", "--state", str(tmp_path / "s.db"), "--scenario", str(case / "scenario.yaml"),
                 "--cert-file", str(case / "cert.yaml"), "--wait"]) == 1
    err = capsys.readouterr().err
    rounds = [int(m.group(1)) for m in re.finditer(r"^\[watch\] communication/nccl-all-reduce: diagnose round (\d+), stage \w+: ", err, re.M)]
    assert len(rounds) >= 3 and rounds == sorted(rounds), err
    assert re.search(r"^\[watch\] communication/nccl-all-reduce: diagnose round \d+, stage \w+: \d+ suspects?(, \d+ (faulty|intermittent))*, 1 link fault \(", err, re.M), err
    assert err.index("diagnose round") < err.index("[watch] communication/nccl-all-reduce: Failed")
