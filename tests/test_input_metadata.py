"""Input files are held to what an API server takes: a certification's metadata (no server-set or unknown fields,
valid labels and annotations), an image reference and a scheduler name, a scenario's node names; and standard input
is read once. Objects read back from a store keep what the server set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from nvcre_tui.cli import main
from nvcre_tui.engine.api.base import MAX_ANNOTATIONS_BYTES, SERVER_SET_METADATA, GangScheduler
from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.resources import Certification
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.manifest import certification_from_text
from nvcre_tui.engine.sim.scenario import Scenario, build_nodes

ROOT = Path(__file__).resolve().parents[1]
BURN_IN = str(ROOT / "examples" / "burn-in.yaml")

# One value per server-set field, as a live object carries it.
SERVER_SET: dict[str, Any] = {
    "uid": "0b7c1f62-5a39-4d0e-9f0e-2f1d3c4b5a69", "resourceVersion": "42", "generation": 1,
    "creationTimestamp": "2026-01-05T10:00:00Z", "deletionTimestamp": "2026-01-05T11:00:00Z", "deletionGracePeriodSeconds": 0,
    "finalizers": ["example.com/never"], "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
    "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "holder", "uid": "1"}], "selfLink": "/apis/x",
}


def _cert(metadata: dict[str, Any], category: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": metadata,
            "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                     "categories": [{"domain": "communication", "variant": "nccl-all-reduce", **(category or {})}], **spec}}


def _problems(document: dict[str, Any]) -> list[str]:
    with pytest.raises(InputError) as raised:
        certification_from_text("cert.yaml", json.dumps(document), default_catalog())
    return raised.value.messages


def test_every_server_set_field_is_covered() -> None:
    assert sorted(SERVER_SET) == sorted(SERVER_SET_METADATA)


@pytest.mark.parametrize("field", sorted(SERVER_SET))
def test_a_server_set_field_in_a_file_is_refused_by_name(field: str) -> None:
    assert _problems(_cert({"name": "c", field: SERVER_SET[field]})) == [
        f"cert.yaml: metadata.{field}: set by the server, not in a certification file"]


def test_an_object_read_back_keeps_what_the_server_set() -> None:
    """ObjectMeta reads objects from the store and the cluster: the input check must not be on it."""
    cert = Certification.model_validate(_cert({"name": "c", **SERVER_SET, "someFutureField": {"x": 1}}))
    wire = cert.to_wire()["metadata"]
    assert wire["finalizers"] == ["example.com/never"] and wire["uid"] == SERVER_SET["uid"]
    assert wire["someFutureField"] == {"x": 1}


def test_each_problem_is_told_once_and_all_are_told() -> None:
    """A server-set field of the wrong type is refused for being there, not also for its type."""
    assert _problems(_cert({"name": "c", "finalizers": 5, "namepsace": "prod", "labels": {"team": "a b"}})) == [
        "cert.yaml: metadata.finalizers: set by the server, not in a certification file",
        "cert.yaml: metadata.labels.team: must be a label value (letters, digits, '-', '_', '.'), got 'a b'",
        "cert.yaml: metadata.namepsace: unknown field",
    ]


def test_a_missing_name_is_told_once() -> None:
    assert _problems(_cert({"labels": {"team": "gpu"}})) == ["cert.yaml: metadata.name: required field is missing"]


def test_what_a_file_may_write_is_kept() -> None:
    metadata = {"name": "c", "namespace": "prod", "labels": {"example.com/team": "gpu", "empty": ""},
                "annotations": {"example.com/note": "any text\nover lines, even 'quotes' and ünïcode"}}
    cert = certification_from_text("cert.yaml", json.dumps(_cert(metadata)), default_catalog())
    assert cert.to_wire()["metadata"] == metadata


@pytest.mark.parametrize(("metadata", "message"), [
    ({"generateName": "c-"}, "metadata.generateName: not taken: a certification is named by metadata.name (`run --name` gives another)"),
    ({"labels": {"a/b/c": "x"}}, "metadata.labels: 'a/b/c' is not a valid label key ([prefix/]name, name up to 63 of A-Z a-z 0-9 "
                                 "- _ ., prefix a DNS subdomain)"),
    ({"labels": {"team": "x" * 64}}, "metadata.labels.team: must be at most 63 characters"),
    ({"labels": {"team": 7}}, "metadata.labels.team: must be a string, got 7"),
    ({"annotations": {"-bad": "x"}}, "metadata.annotations: '-bad' is not a valid annotation key ([prefix/]name, name up to 63 of "
                                     "A-Z a-z 0-9 - _ ., prefix a DNS subdomain)"),
    ({"annotations": {"note": "x" * MAX_ANNOTATIONS_BYTES}},
     f"metadata.annotations: {MAX_ANNOTATIONS_BYTES + 4} bytes in all, more than the {MAX_ANNOTATIONS_BYTES} the API server takes"),
    ({"namespace": "Prod"}, "metadata.namespace: must be a lowercase DNS label (a-z, 0-9, '-'), got 'Prod'"),
])
def test_bad_metadata_is_refused_by_field(metadata: dict[str, Any], message: str) -> None:
    assert _problems(_cert({"name": "c", **metadata})) == [f"cert.yaml: {message}"]


def test_a_refused_file_creates_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, state = tmp_path / "fin.yaml", tmp_path / "s.db"
    path.write_text(json.dumps(_cert({"name": "fin", "finalizers": ["example.com/never"]})))
    assert main(["certification", "run", "--sim", "--cert-file", str(path), "--state", str(state), "--wait"]) == 2
    assert capsys.readouterr().err == f"{path}: metadata.finalizers: set by the server, not in a certification file\n"
    assert not state.exists()


@pytest.mark.parametrize("image", ["nvcr.io/nvidia/pytorch:25.01-py3", "localhost:5000/a/b@sha256:" + "0" * 64, "x"])
def test_an_image_reference_is_taken(image: str) -> None:
    assert CategoryOptions.model_validate({"image": image}).image == image


@pytest.mark.parametrize("image", ["", " nvcr.io/x:1", "nvcr.io/x:1 ", "nvcr.io/x y:1", "nvcr.io/x:1\nsecond", "nvcr.io/x:1\t",
                                   "nvcr.io/x:1\x1b[31m", "nvcr.io/x:1\x7f", "nvcr.io/x:1\u00a0", "nvcr.io/\u0445:1", "a" * 513])
def test_an_image_with_spaces_or_control_characters_is_refused(image: str) -> None:
    problems = _problems(_cert({"name": "c"}, {"options": {"image": image}}))
    assert len(problems) == 1 and problems[0].startswith("cert.yaml: spec.categories[0].options.image: must ")


@pytest.mark.parametrize("name", ["kai-scheduler", "runai-scheduler", "scheduler.example.com"])
def test_a_scheduler_name_is_a_dns_subdomain(name: str) -> None:
    assert GangScheduler.model_validate({"schedulerName": name}).scheduler_name == name


@pytest.mark.parametrize("name", ["Bad Scheduler!", "kai\x1b[31m", "kai-", "", "a" * 254])
def test_a_scheduler_name_that_is_no_dns_subdomain_is_refused(name: str) -> None:
    problems = _problems(_cert({"name": "c"}, gangScheduler={"schedulerName": name}))
    assert len(problems) == 1 and problems[0].startswith("cert.yaml: spec.gangScheduler.schedulerName: must ")


def _pool_problem(pool: dict[str, Any]) -> str | None:
    try:
        Scenario.model_validate({"nodes": [{"count": 2, **pool}]})
    except ValidationError as error:
        [problem] = error.errors(include_url=False)
        assert problem["loc"] == ("nodes", 0) and (problem.get("ctx") or {}).get("key") == "namePrefix"
        return str(problem["msg"])
    return None


@pytest.mark.parametrize("pool", [{}, {"namePrefix": "rack1.gpu-"}, {"namePrefix": ""}, {"namePrefix": "a" * 61},
                                  {"namePrefix": "a" * 58, "firstIndex": 99998, "nameDigits": 5}])
def test_node_names_a_server_takes(pool: dict[str, Any]) -> None:
    assert _pool_problem(pool) is None
    names = [node["metadata"]["name"] for node in build_nodes(Scenario.model_validate({"nodes": [{"count": 2, **pool}]}))]
    assert all(len(name) <= 63 for name in names)


@pytest.mark.parametrize(("pool", "said"), [
    ({"namePrefix": "a-."}, "'a-.02', which no API server takes"),
    ({"namePrefix": "rack..gpu-"}, "'rack..gpu-02', which no API server takes"),
    ({"namePrefix": "gpu.-"}, "'gpu.-02', which no API server takes"),
    ({"namePrefix": "a" * 62}, "of up to 64 characters"),
    ({"namePrefix": "a" * 58, "firstIndex": 99999, "nameDigits": 5}, "of up to 64 characters"),  # the second is 100000
])
def test_node_names_no_server_takes_are_refused_naming_the_prefix(pool: dict[str, Any], said: str) -> None:
    problem = _pool_problem(pool)
    assert problem is not None and said in problem


def test_a_scenario_with_bad_node_names_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text('nodes: [{count: 2, namePrefix: "a-."}]\n')
    assert main(["cluster", "info", "--sim", "--scenario", str(scenario)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"{scenario}: nodes[0].namePrefix: gives node names such as 'a-.02', which no API server takes: each part between "
        "dots must start and end with a letter or digit"]


@pytest.mark.parametrize(("argv", "message"), [
    (["certification", "render", "-", "--scenario", "-"], "- and --scenario -"),
    (["certification", "run", "--sim", "--cert-file", "-", "--scenario", "-"], "--cert-file - and --scenario -"),
])
def test_standard_input_is_read_once(argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", open(BURN_IN))  # noqa: SIM115 - closed by the test's end
    state = tmp_path / "s.db"
    assert main([*argv, "--state", str(state)] if "run" in argv else argv) == 2
    assert capsys.readouterr().err == f"{message}: standard input can be read once; pass one of them as a file\n"
    assert not state.exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--cert-file", "-", "--scenario", "-"],
     "--workload-registry-password - and --cert-file - and --scenario -: standard input can be read once; pass the "
     "certification and the scenario as files"),
    (["--cert-file", BURN_IN, "--scenario", "-"],
     "--workload-registry-password - and --scenario -: standard input can be read once; pass the scenario as a file"),
])
def test_the_registry_password_keeps_standard_input(flags: list[str], message: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    login = ["--workload-registry", "r.example.com", "--workload-registry-username", "u", "--workload-registry-password", "-"]
    state = tmp_path / "s.db"
    assert main(["certification", "run", "--sim", *flags, *login, "--state", str(state)]) == 2
    assert capsys.readouterr().err.splitlines() == [message]
    assert not state.exists()


def test_a_stored_certification_an_earlier_nvcre_accepted_still_reads() -> None:
    """The image and scheduler checks are on input only: a certification started before them keeps running and reporting."""
    stored = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "c", "uid": "u"},
              "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}, "gangScheduler": {"schedulerName": "KAI_Scheduler"},
                       "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "options": {"image": "nvcr.io/x:1 "}}]}}
    cert = Certification.model_validate(stored)
    assert cert.spec.gang_scheduler is not None and cert.spec.gang_scheduler.scheduler_name == "KAI_Scheduler"
