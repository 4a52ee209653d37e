"""GKE H100's GPUDirect fabrics (catalog/_workloads/fabrics.yaml): A3 Mega's TCPXO, A3 High's TCPX, rendered from what
the group's Nodes carry (the machine type, the GPU NIC networks of their allocatable), and otherwise not at all, saying
why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from nvcre_tui.cli import main
from nvcre_tui.engine.workloads import fabric_outcome, workload_manifests
from tests.workloads.matrix import GROUP_NODES, gke_a3_mega, placement, run_spec

NCCL = "communication/nccl-all-reduce"


def _worker_pod(objects: list[dict[str, Any]]) -> dict[str, Any]:
    runtime = next(obj for obj in objects if obj["kind"] == "TrainingRuntime")
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]


def _render(entry: str, nodes: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
    spec = run_spec(entry, "gcp", "h100")
    where = placement(entry, "gcp", "h100", node_objects=nodes)
    outcome = fabric_outcome(spec, where)
    return _worker_pod(workload_manifests(spec, where)), outcome.note if outcome else None


def _networks(node: dict[str, Any], names: list[str]) -> dict[str, Any]:
    node["status"]["allocatable"] = {"nvidia.com/gpu": "8", **{f"networking.gke.io.networks/{name}": "1" for name in names},
                                     **{f"networking.gke.io.networks/{name}.IP": "1" for name in names}}
    return node


def test_a3_mega_nodes_get_the_daemon_sidecar_host_volumes_and_their_networks_in_natural_order() -> None:
    names = [f"gpu-nic{i}" for i in (10, 2, 3, 4, 5, 6, 7, 8)]  # gpu-nic10 sorts after gpu-nic8, not before gpu-nic2
    pod, note = _render(NCCL, {name: _networks(gke_a3_mega(name), names) for name in GROUP_NODES})
    assert note is None
    attached = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert attached[0] == {"interfaceName": "eth0", "network": "default"}
    assert [(a["interfaceName"], a["network"]) for a in attached[1:]] == [
        (f"eth{i}", f"gpu-nic{n}") for i, n in enumerate((2, 3, 4, 5, 6, 7, 8, 10), start=1)]
    daemon = next(c for c in pod["spec"]["initContainers"] if c["name"] == "tcpxo-daemon")
    assert daemon["restartPolicy"] == "Always"  # a native sidecar: it does not keep a finished pod running
    hostpaths = {v["hostPath"]["path"] for v in pod["spec"]["volumes"] if "hostPath" in v}
    assert hostpaths == {"/home/kubernetes/bin/nvidia", "/sys", "/proc/sys", "/dev/aperture_devices"}
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] == "/dev/aperture_devices"


def test_training_on_a3_mega_gets_it_after_its_own_init_container_and_dcgm_does_not() -> None:
    nodes = {name: gke_a3_mega(name) for name in GROUP_NODES}
    pod, note = _render("training/nemotron5-8b", nodes)
    assert note is None
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["megatron-clone", "tcpxo-daemon"]
    dcgm, dcgm_note = _render("diagnostics/dcgm-level4", nodes)
    assert dcgm_note is None
    assert "initContainers" not in dcgm["spec"] and "networking.gke.io/interfaces" not in dcgm["metadata"].get("annotations", {})


def _not_rendered(pod: dict[str, Any]) -> bool:
    return "initContainers" not in pod["spec"] and not any("hostPath" in v for v in pod["spec"]["volumes"]) \
        and "networking.gke.io/interfaces" not in (pod["metadata"].get("annotations") or {})


def test_a3_high_nodes_get_gpudirect_tcpx_over_their_four_networks() -> None:
    nodes = {name: gke_a3_mega(name, networks=4, instance_type="a3-highgpu-8g") for name in GROUP_NODES}
    pod, note = _render(NCCL, nodes)
    assert note is None
    assert [c["name"] for c in pod["spec"]["initContainers"]] == ["tcpx-daemon"]
    attached = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [(a["interfaceName"], a["network"]) for a in attached] == [("eth0", "default"), *((f"eth{i}", f"vpc{i}") for i in range(1, 5))]
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4" and "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY" not in env
    mounts = {m["name"]: m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"]}
    assert mounts["tcpx-socket"] == env["NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX"] == "/run/tcpx"  # the daemon's sockets


def test_a3_high_nodes_short_of_networks_say_what_tcpx_lacks() -> None:
    nodes = {name: gke_a3_mega(name, networks=3, instance_type="a3-highgpu-8g") for name in GROUP_NODES}
    pod, note = _render(NCCL, nodes)
    assert _not_rendered(pod)
    assert note is not None and note.startswith("GPUDirect-TCPX not rendered: node gpu-node-01's allocatable lists 3 GKE networks")


def test_nodes_of_another_machine_type_or_of_both_are_told_what_each_fabric_needs() -> None:
    nodes = {name: gke_a3_mega(name, networks=4, instance_type="a3-edgegpu-8g") for name in GROUP_NODES}
    pod, note = _render(NCCL, nodes)
    assert _not_rendered(pod)
    assert note == ("GPUDirect-TCPXO or GPUDirect-TCPX not rendered: GPUDirect-TCPXO: node gpu-node-01 is "
                    "node.kubernetes.io/instance-type=a3-edgegpu-8g, not a3-megagpu-8g; GPUDirect-TCPX: node gpu-node-01 is "
                    "node.kubernetes.io/instance-type=a3-edgegpu-8g, not a3-highgpu-8g; NCCL between the nodes goes over TCP "
                    "on eth0")
    mixed = {GROUP_NODES[0]: gke_a3_mega(GROUP_NODES[0]), GROUP_NODES[1]: gke_a3_mega(GROUP_NODES[1], 4, "a3-highgpu-8g")}
    pod, note = _render(NCCL, mixed)
    assert _not_rendered(pod)
    assert note is not None and "GPUDirect-TCPXO: node gpu-node-02 is node.kubernetes.io/instance-type=a3-highgpu-8g" in note
    assert "GPUDirect-TCPX: node gpu-node-01 is node.kubernetes.io/instance-type=a3-megagpu-8g" in note


def test_a_node_short_of_networks_leaves_tcpxo_out_naming_it() -> None:
    nodes = {GROUP_NODES[0]: gke_a3_mega(GROUP_NODES[0]), GROUP_NODES[1]: gke_a3_mega(GROUP_NODES[1], networks=7)}
    pod, note = _render(NCCL, nodes)
    assert _not_rendered(pod)
    assert note is not None and note.startswith("GPUDirect-TCPXO not rendered: node gpu-node-02's allocatable lists 7 GKE networks")
    assert "eth1..eth8" in note


def test_nodes_on_different_networks_leave_tcpxo_out() -> None:
    nodes = {GROUP_NODES[0]: gke_a3_mega(GROUP_NODES[0]),
             GROUP_NODES[1]: _networks(gke_a3_mega(GROUP_NODES[1]), [f"other{i}" for i in range(1, 9)])}
    pod, note = _render(NCCL, nodes)
    assert _not_rendered(pod)
    assert note is not None and "nodes gpu-node-01 and gpu-node-02 list different networks" in note


def test_a_node_without_its_machine_type_label_or_unread_leaves_tcpxo_out() -> None:
    bare = gke_a3_mega(GROUP_NODES[0])
    del bare["metadata"]["labels"]["node.kubernetes.io/instance-type"]
    pod, note = _render(NCCL, {GROUP_NODES[0]: bare, GROUP_NODES[1]: gke_a3_mega(GROUP_NODES[1])})
    assert _not_rendered(pod)
    assert note is not None and "node gpu-node-01 has no node.kubernetes.io/instance-type label (GPUDirect-TCPXO needs a3-megagpu-8g)" in note
    pod, note = _render(NCCL, {GROUP_NODES[0]: gke_a3_mega(GROUP_NODES[0])})
    assert _not_rendered(pod) and note is not None and "node gpu-node-02's Node was not read" in note


def test_render_workloads_says_over_the_group_why_tcpxo_is_not_rendered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = []
    for name in GROUP_NODES:
        node = gke_a3_mega(name, networks=4, instance_type="a3-edgegpu-8g")
        node["metadata"]["labels"] |= {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
        node["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        nodes.append(node)
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes}))
    (tmp_path / "cert.yaml").write_text(yaml.safe_dump({
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification", "metadata": {"name": "gke"},
        "spec": {"target": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
                 "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}]}}))
    args = ["certification", "render", str(tmp_path / "cert.yaml"), "--workloads", "--nodes", str(tmp_path / "nodes.yaml")]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    why = ("GPUDirect-TCPXO or GPUDirect-TCPX not rendered: GPUDirect-TCPXO: node gpu-node-01 is "
           "node.kubernetes.io/instance-type=a3-edgegpu-8g")
    assert lines[0].startswith("# communication/nccl-all-reduce") and lines[1].startswith(f"# {why}")
    assert main([*args, "-o", "json"]) == 0
    assert capsys.readouterr().err.startswith(f"nvcre: communication/nccl-all-reduce group-0: {why}")



# Google's `simple` TCPXO profile (nccl-env-profile-simple.sh of the plugin, NCCL_LIB_DIR=/usr/local/nvidia/lib64), less
# what is not NCCL's tuning (CUDA_VISIBLE_DEVICES, NCCL_DEBUG*, LD_LIBRARY_PATH) and the NICs it discovers.
SIMPLE_PROFILE = {
    "NCCL_FASTRAK_IFNAME": "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8", "NCCL_FASTRAK_CTRL_DEV": "eth0", "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_CROSS_NIC": "0", "NCCL_ALGO": "Ring,Tree", "NCCL_PROTO": "Simple", "NCCL_MIN_NCHANNELS": "4",
    "NCCL_P2P_NET_CHUNKSIZE": "524288", "NCCL_P2P_PCI_CHUNKSIZE": "524288", "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_FASTRAK_NUM_FLOWS": "2", "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0", "NCCL_BUFFSIZE": "8388608", "NCCL_FASTRAK_USE_SNAP": "1",
    "NCCL_FASTRAK_USE_LLCM": "1", "NCCL_NET_GDR_LEVEL": "PIX", "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
    "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
    "NCCL_TUNER_CONFIG_PATH": "/usr/local/nvidia/lib64/a3plus_tuner_config_simple.textproto",
    "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": "/usr/local/nvidia/lib64/a3plus_guest_config_simple.textproto",
    "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS": "600000", "NCCL_NVLS_ENABLE": "0",
}


@pytest.mark.parametrize("entry", [NCCL, "training/nemotron5-8b"])
def test_a3_mega_runs_get_googles_simple_tcpxo_profile_whole(entry: str) -> None:
    """The plugin's guest config checker compares the run's NCCL env with the profile of the config file it is given and
    aborts a run that does not match: the installer's default files expect the default profile (NCCL_PROTO=Simple,LL128,
    NVLSTree with NCCL_NVLSTREE_MAX_CHUNKSIZE). The catalog's gcp/h100 runs set the `simple` one (NCCL_PROTO=Simple,
    NCCL_NVLS_ENABLE=0), so they get its `_simple` config files and the rest of it (the P2P chunk sizes)."""
    pod, note = _render(entry, {name: gke_a3_mega(name) for name in GROUP_NODES})
    assert note is None
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert {name: env.get(name) for name in SIMPLE_PROFILE} == SIMPLE_PROFILE


def test_a3_mega_gpu_container_starts_once_the_receive_daemon_is_ready() -> None:
    """RxDM takes about 30 s to set up, and the FasTrak plugin waits for it 30 s at NCCL init (FASTRAK_RXDM_INIT_TIMEOUT)
    before NCCL falls back to TCP: a run starting NCCL at once (a loopback) raced it. The daemon writes
    HEALTH_CHECK_LOG_FILE once ready; a startup probe reading it holds the pod's containers until then (a native
    sidecar's startup probe gates them), as Google's best practice has it."""
    pod, note = _render(NCCL, {name: gke_a3_mega(name) for name in GROUP_NODES})
    assert note is None
    daemon = next(c for c in pod["spec"]["initContainers"] if c["name"] == "tcpxo-daemon")
    ready_file = {e["name"]: e["value"] for e in daemon["env"]}["HEALTH_CHECK_LOG_FILE"]
    assert "_" not in ready_file  # the daemon does not write a file whose name has one
    probe = daemon["startupProbe"]
    assert probe["exec"]["command"] == ["cat", ready_file]
    assert probe["periodSeconds"] * probe["failureThreshold"] >= 120  # not restarted while it sets up


def test_a3_high_daemon_passes_its_route_tuning_to_setup_sh_as_separate_words() -> None:
    """tcpgpudmarxd runs `system("<scripts>/setup.sh " + setup_param)`; setup.sh drops its first word (--verbose) and
    sets the routes' initcwnd, rto_min and quickack from the next three. A value in quotes reached it as one word, and
    it modified no route."""
    import shlex

    nodes = {name: gke_a3_mega(name, networks=4, instance_type="a3-highgpu-8g") for name in GROUP_NODES}
    pod, note = _render(NCCL, nodes)
    assert note is None
    daemon = next(c for c in pod["spec"]["initContainers"] if c["name"] == "tcpx-daemon")
    argv = [*daemon["command"], *daemon.get("args", [])]
    flag = next(i for i, arg in enumerate(argv) if arg.startswith("--setup_param"))
    value = argv[flag].partition("=")[2] if "=" in argv[flag] else argv[flag + 1]
    assert shlex.split(f"/tcpgpudmarxd/build/a3-tuning-scripts/setup.sh {value}")[1:] == ["--verbose", "128", "2", "0"]
