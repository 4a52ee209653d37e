"""What `nvcre setup status` finds on a cluster: our install, the engine Lease, and what nvcre relies on.

Reads only (get and list through any ResourceStore). A check the user may not read (Forbidden) is
reported as unknown with the reason, never as missing.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from nvcre_tui.engine.api.bodies import annotations_of, conditions_of, labels_of, node_status
from nvcre_tui.engine.api.vocabulary import (ANNOTATION_INSTALLED_BY_VERSION, ANNOTATION_SCHEMA_GENERATION, ANNOTATION_SCHEMA_HASH, ENGINE_NAME, LABEL_GPU_PRESENT, LABEL_SIMULATED, RESOURCE_GPU, TRAINER_GROUP,
                                             VERSION_LABELS)
from nvcre_tui.engine.clock import Clock, format_time, parse_time
from nvcre_tui.engine.kube.hostengine import hostengine_found, hostengine_targets
from nvcre_tui.engine.kube.install import (NVCRE_VERSION, SCHEMA_GENERATION, InstalledSchema, install_crds, installed_schema,
                                           lease_reader_objects, rbac_objects, user_role_objects)
from nvcre_tui.engine.kube.deployment import observed
from nvcre_tui.engine.lease import EngineLease, LeaseHolder
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.platform import RACK_SCALE_ARCHITECTURES, node_gpu_architecture
from nvcre_tui.engine.store.errors import Forbidden, NotFound
from nvcre_tui.engine.store.protocol import CRD, DEPLOYMENT, LEASE, NAMESPACE, NODE, SERVICE, ResourceStore, kind_of

__all__ = ["CONTROLLER_NAMES", "SCHEDULER_LEASE", "CrdState", "crd_state", "ObjectState", "LeaseState", "DeploymentState",
           "InstallStatus", "probe", "TRAINER_CRDS", "RESOURCE_GPU"]

Obj = dict[str, Any]
T = TypeVar("T")
JOBSET_CRD = "jobsets.jobset.x-k8s.io"  # the Trainer makes a JobSet per TrainJob; JobSet's controller makes the pods
TRAINER_CRDS = ("trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org",
                "clustertrainingruntimes.trainer.kubeflow.org", JOBSET_CRD)
GPU_OPERATOR_CRDS = ("clusterpolicies.nvidia.com", "nvidiadrivers.nvidia.com")
GPU_OPERATOR_NAMESPACES = ("gpu-operator", "nvidia-gpu-operator")
DCGM_PREFIX = "nvidia-dcgm"  # nvidia-dcgm-exporter (GPU Operator), nvidia-dcgm (hostengine)
COMPUTE_DOMAIN_CRD = "computedomains.resource.nvidia.com"  # what a GB200/GB300 run with MNNVL on creates per group
# The leader-election Leases of the controllers a TrainJob needs (in whatever namespace they were installed): Kubeflow
# Trainer's, named after its API group (manifests/base/manager/controller_manager_config.yaml), and JobSet's
# (api/config/v1alpha1/defaults.go).
CONTROLLER_LEASES = {"trainer": TRAINER_GROUP, "jobset": "6d4f6a47.jobset.x-k8s.io"}
CONTROLLER_NAMES = {"trainer": "Kubeflow Trainer", "jobset": "JobSet"}
# Every kubelet renews a Lease named after its Node here (every 10 s, for 40 s); an API server alone has none.
NODE_LEASE_NAMESPACE = "kube-node-lease"
# The default scheduler's leader-election Lease (kube-scheduler --leader-elect, on by default; managed control planes
# show it too): without a scheduler no pod is placed.
SCHEDULER_LEASE = ("kube-system", "kube-scheduler")
NODE_LEASE_SLACK_SECONDS = 60.0  # beyond its duration: a kubelet's clock may lag ours


@dataclass(frozen=True)
class CrdState:
    """One CRD: present, Established, and for ours whether its schema hash is the one we would apply."""

    name: str
    present: bool
    established: bool = False
    versions: list[str] = field(default_factory=list)
    schema_hash: str | None = None
    expected_hash: str | None = None
    release: str | None = None  # a version label on the CRD, when its installer sets one
    installed_by_version: str | None = None  # ours: the nvcre version whose `setup init` installed it
    schema_generation: str | None = None  # ours: the schema generation it was installed with

    @property
    def current(self) -> bool:
        return self.present and (self.expected_hash is None or self.schema_hash == self.expected_hash)


@dataclass(frozen=True)
class ObjectState:
    """One object init makes: present, and whether its content is what init would apply."""

    kind: str
    name: str
    namespace: str | None
    present: bool
    current: bool
    read: bool = True  # False: RBAC refused its read (present and current are then unknown, False here)


@dataclass(frozen=True)
class LeaseState:
    holder: str
    live: bool
    acquired: str | None
    renewed: str | None
    held_seconds: float | None
    renewed_seconds_ago: float | None
    renewal: str | None = None  # `renewed 4s ago`, or that the holder's clock runs ahead (LeaseHolder.renewal)
    version: str | None = None  # the holder's nvcre version, as the Lease says it (None: not said, an older nvcre)


@dataclass(frozen=True)
class DeploymentState:
    """The Deployment `setup controller` applies (nvcre-engine in the install namespace): its image(s) and pods."""

    images: list[str]
    replicas: int  # spec.replicas (wanted)
    ready: int  # status.readyReplicas (no controller-manager: 0)
    # A Deployment controller has seen it (status.observedGeneration, of this spec or an earlier one: a new image is
    # seen at its next look): never on an API server alone, which makes no ReplicaSet nor pod of it
    observed: bool = True


def _deployment_state(deployment: Obj | None) -> DeploymentState | None:
    if deployment is None:
        return None
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    replicas = spec.get("replicas")
    return DeploymentState([str(c.get("image")) for c in containers if c.get("image")],
                           1 if replicas is None else int(replicas), int(status.get("readyReplicas") or 0), observed(deployment))


OUR_PART = ("crds", "namespace", "rbac")  # the checks `installed` (setup status's exit code) stands on


@dataclass
class InstallStatus:
    namespace: str
    crds: list[CrdState]
    namespace_present: bool
    rbac: list[ObjectState]
    lease: LeaseState | None
    trainer: list[CrdState]
    gpu_operator: list[str]  # the GPU Operator's own objects found: its CRDs, its namespace
    dcgm_services: list[str]
    gpu_nodes: int
    nodes: int
    unknown: dict[str, str] = field(default_factory=dict)  # check -> why it could not be read
    # The hostengine Services the catalog's dcgmi diagnostics connect to: address -> served (kube/hostengine.py).
    dcgm_hostengine: dict[str, bool] = field(default_factory=dict)
    # GB200/GB300 nodes (MNNVL on by default there) and whether ComputeDomains (NVIDIA's DRA driver) are served.
    rack_scale_nodes: int = 0
    compute_domains: bool = False
    simulated_nodes: int = 0  # Nodes `--sim-runner` registered (labelled so): no GPU behind them
    # GPU Nodes (not simulated) whose kubelet renews no Lease in kube-node-lease: no pod starts there (an API server
    # without kubelets, or nodes gone silent); of `kubelet_checked` such Nodes.
    kubelet_checked: int = 0
    silent_nodes: list[str] = field(default_factory=list)
    # Each of CONTROLLER_LEASES' controllers (trainer, jobset) -> the namespace of its renewed leader Lease, or None:
    # checked only where the Trainer's CRDs are served.
    controllers: dict[str, str | None] = field(default_factory=dict)
    scheduler: bool = False  # kube-scheduler's leader Lease renewed (unreadable: in `unknown`)
    gpu_labelled_nodes: int = 0  # Nodes (not simulated) labelled nvidia.com/gpu.present=true, as GPU Feature Discovery labels them
    namespace_terminating: bool = False  # the namespace is there, being deleted: not present (no install), but not missing
    # the namespaces nvcre is installed in instead (setup init's label); None: Namespaces may not be listed (unknown)
    elsewhere: list[str] | None = field(default_factory=list)
    # What the CRDs say of the nvcre that installed them against this one (None: none stamped by `setup init`).
    schema: InstalledSchema | None = None
    # The namespace carries setup init's label (part-of nvcre): an install is there. One kept after `setup reset` (init had
    # not created it) or made beforehand exists and holds none.
    namespace_holds_install: bool = True
    # Nodes labelled simulated that the simulator did not register (another client set the label): real Nodes to nvcre
    simulated_strangers: int = 0
    # `setup controller`'s Deployment of `nvcre controller` (None: none; unreadable: in `unknown` as controllerDeployment).
    # Not part of `installed`: the engine may as well run anywhere else (`nvcre controller`, a console).
    controller_deployment: DeploymentState | None = None
    # Nodes with GPUs (capacity nvidia.com/gpu) not labelled nvidia.com/gpu.present=true (made by hand, no GPU feature
    # discovery): counted among gpu_nodes, and no run plans them, whatever its target
    unlabelled_gpu_nodes: list[str] = field(default_factory=list)

    def _our_part(self) -> dict[str, bool]:
        """Each check of OUR_PART: whether what it read is as init makes it (a read refused reads as absent)."""
        return {"crds": all(crd.current and crd.established for crd in self.crds),
                "namespace": self.namespace_present and self.namespace_holds_install,
                "rbac": all(o.present and o.current for o in self.rbac)}

    @property
    def installed(self) -> bool:
        """Our part: every CRD present with our schema, the namespace (labelled by init), and the RBAC as init makes it."""
        return all(self._our_part().values())

    @property
    def install_unknown(self) -> bool:
        """Whether what this user may read leaves `installed` unknown: a check of our part it could not read (`unknown`:
        RBAC refused it), every one it read as init makes it. A check read missing or outdated is not installed,
        whatever the others."""
        parts = self._our_part()
        # RBAC is read object by object: one read missing or changed beside others refused is not installed, known
        read_wrong = any(o.read and not (o.present and o.current) for o in self.rbac)
        unread = [check for check in parts if check in self.unknown and not (check == "rbac" and read_wrong)]
        return bool(unread) and all(ok for check, ok in parts.items() if check not in unread)

    def to_json(self) -> dict[str, Any]:
        """camelCase JSON, as `setup status -o json` prints it (with `installed`, null when not known, and each CRD's
        `current`)."""
        data = asdict(self)
        data["installed"] = None if self.install_unknown else self.installed
        for key in ("crds", "trainer"):
            for entry, crd in zip(data[key], getattr(self, key)):
                entry["current"] = crd.current
        # which nvcre installed the CRDs, and whether this one's schema is the same, newer or older
        data["schema"] = None if self.schema is None else {
            "installedBy": list(self.schema.versions), "installedGeneration": self.schema.generation, "differ": list(self.schema.differ),
            "installed": self.schema.order, "thisVersion": NVCRE_VERSION, "thisGeneration": SCHEMA_GENERATION}
        return _camel(data)


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {_camel_key(k): v if k == "unknown" else _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(item) for item in value]
    return value


def _camel_key(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


async def _read(unknown: dict[str, str], check: str, read: Awaitable[T], default: T) -> T:
    try:
        return await read
    except NotFound:
        return default
    except Forbidden as error:
        unknown[check] = error.message
        return default


async def _get(store: ResourceStore, kind: Any, name: str, namespace: str | None = None) -> Obj | None:
    try:
        return await store.get(kind, name, namespace)
    except NotFound:
        return None


def crd_state(name: str, crd: Obj | None, expected_hash: str | None = None) -> CrdState:
    """What a stored CRD (None: absent) says about itself."""
    if crd is None:
        return CrdState(name, False, expected_hash=expected_hash)
    conditions = conditions_of(crd)
    established = any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)
    versions = [v["name"] for v in (crd.get("spec") or {}).get("versions") or [] if v.get("served", True)]
    labels = labels_of(crd)
    release = next((labels[key] for key in VERSION_LABELS if labels.get(key)), None)
    annotations = annotations_of(crd)
    return CrdState(name, True, established, versions, annotations.get(ANNOTATION_SCHEMA_HASH),
                    expected_hash, release, annotations.get(ANNOTATION_INSTALLED_BY_VERSION), annotations.get(ANNOTATION_SCHEMA_GENERATION))


def _same_content(stored: Obj, wanted: Obj) -> bool:
    """Whether the fields init sets (rules, subjects, roleRef) are as init sets them."""
    return all(stored.get(key) == wanted[key] for key in ("rules", "subjects", "roleRef") if key in wanted)


def _lease_state(holder: LeaseHolder | None, now: datetime) -> LeaseState | None:
    if holder is None:
        return None
    return LeaseState(
        holder.identity, holder.live,
        format_time(holder.acquired) if holder.acquired else None,
        format_time(holder.renewed) if holder.renewed else None,
        (now - holder.acquired).total_seconds() if holder.acquired else None,
        (now - holder.renewed).total_seconds() if holder.renewed else None,
        holder.renewal(now),
        holder.version,
    )


def _is_gpu_node(node: Obj) -> bool:
    labels = labels_of(node)
    capacity = node_status(node).get("capacity") or {}
    try:
        gpus = int(str(capacity.get(RESOURCE_GPU, "0")))
    except ValueError:
        gpus = 0
    return labels.get(LABEL_GPU_PRESENT) == "true" or gpus > 0


def _renewed(lease: Obj | None, now: datetime) -> bool:
    """Whether a Lease (a kubelet's, a controller's) was renewed within its duration (plus slack for a lagging clock)."""
    spec = (lease or {}).get("spec") or {}
    try:
        renewed = parse_time(spec.get("renewTime"))
        duration = float(spec.get("leaseDurationSeconds") or 40)
    except (TypeError, ValueError):
        return False
    return (now - renewed).total_seconds() <= duration + NODE_LEASE_SLACK_SECONDS


async def _silent_nodes(store: ResourceStore, clock: Clock, unknown: dict[str, str], nodes: list[Obj]) -> list[str]:
    """Of `nodes`, those whose kubelet renews no Lease in kube-node-lease (read only when there are nodes)."""
    if not nodes:
        return []
    leases = await _read(unknown, "kubelets", store.list(LEASE, NODE_LEASE_NAMESPACE), None)
    if leases is None:
        return []
    by_name = {lease["metadata"]["name"]: lease for lease in leases.items}
    now = clock.now()
    return sorted(name for node in nodes if not _renewed(by_name.get(name := node["metadata"]["name"]), now))


async def _controllers(store: ResourceStore, clock: Clock, unknown: dict[str, str]) -> dict[str, str | None]:
    """Each controller a TrainJob needs -> the namespace where its leader Lease is renewed, or None."""
    found: dict[str, str | None] = {}
    now = clock.now()
    for controller, name in CONTROLLER_LEASES.items():
        leases = await _read(unknown, "controllers", store.list(LEASE, None, field_selector=f"metadata.name={name}"), None)
        if leases is None:
            return {}
        fresh = [lease for lease in leases.items if _renewed(lease, now)]
        found[controller] = fresh[0]["metadata"].get("namespace") if fresh else None
    return found


async def _scheduler(store: ResourceStore, clock: Clock, unknown: dict[str, str]) -> bool:
    """Whether kube-scheduler's leader Lease is renewed."""
    namespace, name = SCHEDULER_LEASE
    return _renewed(await _read(unknown, "scheduler", _get(store, LEASE, name, namespace), None), clock.now())


async def probe(store: ResourceStore, clock: Clock, namespace: str) -> InstallStatus:
    """Everything `setup status` reports, read from the store."""
    unknown: dict[str, str] = {}
    crds: list[CrdState] = []
    stored_crds: list[Obj | None] = []
    for wanted in install_crds():
        name = wanted["metadata"]["name"]
        crd = await _read(unknown, "crds", _get(store, CRD, name), None)
        crds.append(crd_state(name, crd, wanted["metadata"]["annotations"][ANNOTATION_SCHEMA_HASH]))
        stored_crds.append(crd)
    namespace_obj = await _read(unknown, "namespace", _get(store, NAMESPACE, namespace), None)
    rbac = []
    # the users' roles too: without nvcre-view and nvcre-edit every user bound to them is refused, and status said ok
    for wanted in [*rbac_objects(namespace), *user_role_objects(), *lease_reader_objects(namespace)]:  # an older install lacks some
        meta = wanted["metadata"]
        refused: dict[str, str] = {}  # this object's read alone: the others' may be refused while it is read
        stored = await _read(refused, "rbac", _get(store, kind_of(wanted), meta["name"], meta.get("namespace")), None)
        unknown.update(refused)
        rbac.append(ObjectState(wanted["kind"], meta["name"], meta.get("namespace"), stored is not None,
                                stored is not None and _same_content(stored, wanted), read=not refused))
    lease = EngineLease(store, clock, namespace, identity="nvcre-setup-status")
    holder = await _read(unknown, "lease", lease.holder(), None)
    trainer = [crd_state(name, await _read(unknown, "trainer", _get(store, CRD, name), None)) for name in TRAINER_CRDS]
    nodes = (await _read(unknown, "nodes", store.list(NODE), None))
    node_items = nodes.items if nodes is not None else []
    gpu_nodes = sum(1 for node in node_items if _is_gpu_node(node))
    evidence = [f"{name} CRD" for name in GPU_OPERATOR_CRDS
                if await _read(unknown, "gpuOperator", _get(store, CRD, name), None) is not None]
    evidence += [f"namespace {name}" for name in GPU_OPERATOR_NAMESPACES
                 if await _read(unknown, "gpuOperator", _get(store, NAMESPACE, name), None) is not None]
    # GPU Feature Discovery's label, on Nodes it could have labelled (--sim-runner's fleet carries it too): a label anyone
    # may set, so it is told apart from the operator's own objects and never counts as finding the operator
    # the Nodes --sim-runner registered (labelled simulated by the simulator itself); one merely labelled so is a real Node
    from nvcre_tui.engine.sim.fleet import registered_by_simulator

    simulated = {node["metadata"]["name"] for node in node_items if registered_by_simulator(node)}
    strangers = sum(1 for node in node_items if labels_of(node).get(LABEL_SIMULATED) == "true" and node["metadata"]["name"] not in simulated)
    labelled = sum(1 for node in node_items if labels_of(node).get(LABEL_GPU_PRESENT) == "true" and node["metadata"]["name"] not in simulated)
    services = await _read(unknown, "dcgm", store.list(SERVICE), None)
    dcgm = [f"{s['metadata'].get('namespace')}/{s['metadata']['name']}" for s in (services.items if services else [])
            if s["metadata"]["name"].startswith(DCGM_PREFIX)]
    if "dcgm" in unknown:
        unknown["dcgmHostengine"] = unknown["dcgm"]
    hostengine = {t.address: hostengine_found(t, services.items if services else [])
                  for t in hostengine_targets(default_catalog().entries)}
    # a Terminating namespace is on its way out (setup reset): not an install
    namespace_present = namespace_obj is not None and (namespace_obj.get("status") or {}).get("phase") != "Terminating"
    rack_scale = sum(1 for node in node_items if node_gpu_architecture(node) in RACK_SCALE_ARCHITECTURES)
    domains = await _read(unknown, "computeDomains", _get(store, CRD, COMPUTE_DOMAIN_CRD), None) is not None
    # the simulated fleet plays its own Nodes' kubelets (`--sim-runner`): only the others need one
    real_gpu_nodes = [node for node in node_items if _is_gpu_node(node) and node["metadata"]["name"] not in simulated]
    silent = await _silent_nodes(store, clock, unknown, real_gpu_nodes)
    unlabelled = sorted(node["metadata"]["name"] for node in node_items
                        if _is_gpu_node(node) and labels_of(node).get(LABEL_GPU_PRESENT) != "true")
    controllers = await _controllers(store, clock, unknown) if any(c.present for c in trainer) else {}
    scheduler = await _scheduler(store, clock, unknown)
    deployment = await _read(unknown, "controllerDeployment", _get(store, DEPLOYMENT, ENGINE_NAME, namespace), None)
    from nvcre_tui.engine.kube.installs import install_namespaces, is_install

    installs = await install_namespaces(store)
    elsewhere = None if installs is None else [name for name in installs if name != namespace]
    return InstallStatus(namespace, crds, namespace_present, rbac,
                         _lease_state(holder, clock.now()), trainer, evidence, dcgm, gpu_nodes, len(node_items), unknown,
                         hostengine, rack_scale, domains,
                         len(simulated),
                         len(real_gpu_nodes), silent, controllers, scheduler, labelled,
                         namespace_obj is not None and not namespace_present, elsewhere, installed_schema(stored_crds),
                         namespace_obj is None or is_install(namespace_obj), strangers, _deployment_state(deployment),
                         unlabelled_gpu_nodes=unlabelled)
