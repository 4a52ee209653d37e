"""The table `nvcre setup status` prints: one row (check, state, detail) per check of an `InstallStatus`.

States are words a reader scans for: ok, missing, partial, outdated, newer, no install, changed, found, not found, not seen,
none, not ready, unknown (a check the user may not read), and `-` where a check does not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcre_tui.cli import EXIT_BAD_INPUT
from nvcre_tui.engine.api.vocabulary import LABEL_GPU_PRESENT
from nvcre_tui.engine.units import format_age, listed
from nvcre_tui.engine.workloads.lookup import trainer_served

# engine.kube loads the Kubernetes client (about half a second): its names are imported where a row needs them.
if TYPE_CHECKING:
    from nvcre_tui.engine.kube.status import InstallStatus

__all__ = ["status_rows", "unreadable_summary"]


def _age(seconds: float | None) -> str:
    return "?" if seconds is None else format_age(max(0.0, seconds))


def status_rows(status: InstallStatus) -> list[tuple[str, str, str]]:
    """The table of `setup status`: one row per check."""
    from nvcre_tui.engine.kube.install import USER_ROLES

    crds = status.crds
    missing = [c.name for c in crds if not c.present]
    outdated = [c.name for c in crds if c.present and not c.current]
    pending = [c.name for c in crds if c.present and not c.established]
    crd_state, crd_detail = _crd_row(status, missing, outdated, pending)
    absent = [f"{o.kind} {o.name}" for o in status.rbac if o.read and not o.present]  # one refused is unknown, not missing
    changed = [f"{o.kind} {o.name}" for o in status.rbac if o.present and not o.current]
    rbac_state = "missing" if absent else "changed" if changed else "ok"
    rbac_wrong = bool(absent or changed)
    newer = status.schema is not None and status.schema.order == "newer"  # a newer nvcre's init made them: not this one's to redo
    advice = ("" if status.elsewhere else  # installed elsewhere: the namespace row says where
              f" (a newer nvcre installed nvcre; this one's setup init would downgrade it: ask nvcre "
              f"{status.schema.newest_version if status.schema and status.schema.newest_version else 'that version'}'s setup status)"
              if newer else f" ({_init_step(status)})")
    rbac_detail = (f"missing {', '.join(absent)}{advice}" if absent else
                   f"differs from init: {', '.join(changed)}{advice}" if changed
                   else f"{len(status.rbac)} objects as init makes them: the engine's, the users' roles ({', '.join(USER_ROLES)}), "
                        "the Lease reader")
    lease = status.lease
    if lease is None:
        lease_row = ("engine lease", "free", "no engine holds nvcre-engine")
    else:
        lease_row = ("engine lease", "held" if lease.live else "expired",
                     f"{lease.holder} ({f'nvcre {lease.version}' if lease.version else 'its version unrecorded'}), "
                     f"for {_age(lease.held_seconds)}, {lease.renewal or 'never renewed'}")
    trainer_present = [c for c in status.trainer if c.present]
    trainer_detail = "; ".join(f"{c.name.split('.')[0]} {','.join(c.versions) or '?'}" + (f" ({c.release})" if c.release else "")
                               for c in trainer_present) or "no trainer.kubeflow.org CRDs"
    absent = [c.name.split(".")[0] for c in status.trainer if not c.present]
    if trainer_present and absent:  # which of the Trainer's CRDs are absent (a run needs only TrainJob and TrainingRuntime)
        trainer_detail += "; not served: " + ", ".join(absent)
    # What the Kubernetes runner will create (it decides the same way, by discovery: workloads/lookup.py).
    served = {c.name.split(".")[0] for c in trainer_present}
    trainer_detail += ("; runs as TrainJobs" if trainer_served(served)
                       else "; runs use the batch fallback (batch/v1 Indexed Job + headless Service)")
    if trainer_served(served) and "jobsets" not in served:
        trainer_detail += " but no JobSet CRD is served: nothing will make their pods (install JobSet, which the Trainer needs)"
    trainer_state = "ok" if len(trainer_present) == len(status.trainer) else "partial" if trainer_present else "missing"
    rows = {  # keyed by the probe's check names, so a check we could not read says so instead
        "crds": ("nvcre CRDs", crd_state, crd_detail),
        "namespace": _namespace_row(status),
        "rbac": ("RBAC", rbac_state, rbac_detail),
        "lease": lease_row,
        "trainer": ("kubeflow trainer", trainer_state, trainer_detail),
        "gpuOperator": _gpu_operator_row(status.gpu_operator, status.gpu_labelled_nodes),
        "dcgm": ("dcgm", "found" if status.dcgm_services else "not found", ", ".join(status.dcgm_services) or "no nvidia-dcgm* Service"),
        "dcgmHostengine": _hostengine_row(status.dcgm_hostengine),
        "computeDomains": _compute_domain_row(status.rack_scale_nodes, status.compute_domains),
        "nodes": ("gpu nodes", str(status.gpu_nodes), f"of {status.nodes} nodes" + (
            f"; {status.simulated_nodes} simulated by --sim-runner (no GPU behind them; `setup reset` removes them)"
            if status.simulated_nodes else "") + (
            f"; {status.simulated_strangers} labelled simulated by another client, not the simulator (real Nodes to nvcre: "
            "--sim-runner does not play them and `setup reset` leaves them)" if status.simulated_strangers else "") + (
            f"; {unlabelled_said(status.unlabelled_gpu_nodes)} not labelled {LABEL_GPU_PRESENT}=true (GPU feature discovery sets it; "
            "label Nodes made by hand so): no run plans them" if status.unlabelled_gpu_nodes else "")),
        "kubelets": _kubelet_row(status.kubelet_checked, status.silent_nodes, status.simulated_nodes),
        "controllers": _controller_row(status.controllers, jobset="jobsets" in served),
        "scheduler": _scheduler_row(status.scheduler, status.kubelet_checked, status.simulated_nodes),
        "controllerDeployment": _deployment_row(status),
    }
    unknown = dict(status.unknown)
    for check, source in DERIVED.items():  # a row read from another check's answer cannot tell more than it
        if source in unknown and check not in unknown:
            unknown[check] = f"{rows[source][0]}: {unknown[source]}"
    if "rbac" in unknown and rbac_wrong:  # one read missing (or changed) beside others refused: not installed, said with both
        rows["rbac"] = (rows["rbac"][0], rows["rbac"][1], f"{rows['rbac'][2]}; cannot read the others: {unknown.pop('rbac')}")
    return [(row[0], "unknown", f"cannot read: {unknown[check]}") if check in unknown else row
            for check, row in rows.items()]


def unreadable_summary(status: InstallStatus) -> str | None:
    """One line under a table with checks this user may not read (RBAC, each row naming the permission refused): which
    it sees, which not, whether that leaves the install unknown, and who sees them all. None when every check was read."""
    rows = status_rows(status)
    unknown = [name for name, state, _ in rows if state == "unknown"]
    if not unknown:
        return None
    seen = [name for name, state, _ in rows if state not in ("unknown", "-")]
    installed = f"; so whether nvcre is installed is not known (exit {EXIT_BAD_INPUT})" if status.install_unknown else ""
    return (f"this user may not read {len(unknown)} of {len(rows)} checks (their rows say unknown and name the permission "
            f"refused; it reads {', '.join(seen) or 'none'}){installed}. setup status reads cluster-wide (CRDs, Namespaces, "
            "RBAC, Nodes, Services, Leases, Deployments): a cluster admin (as setup init needs) sees every check")


def unlabelled_said(names: list[str]) -> str:
    """`2 (gpu-1, gpu-2)`, `5 (a, b, c and 2 more)`: GPU nodes named, a few (units.listed)."""
    return f"{len(names)} ({listed(names, 3)})"


def _crd_row(status: InstallStatus, missing: list[str], outdated: list[str], pending: list[str]) -> tuple[str, str]:
    """Our CRDs: present, Established, and which nvcre version's `setup init` installed them against this one's: the
    same schema, an older one (`setup init` upgrades it) or a newer one (this nvcre's init refuses to downgrade it)."""
    from nvcre_tui.engine.kube.install import NVCRE_VERSION, THIS_NVCRE

    schema = status.schema
    if missing:  # the next step as the RBAC row says it (installed elsewhere: the namespace row says where)
        return "missing", f"missing {', '.join(missing)}" + ("" if status.elsewhere else f" ({_init_step(status)})")
    if schema is not None and schema.order == "newer":
        return "newer", (f"installed by {schema.installed_by}, newer than this {THIS_NVCRE}: use nvcre "
                         f"{schema.newest_version or 'that version'} or later (`setup init` of this one would downgrade them, "
                         "and refuses to without --force)")
    if schema is not None and schema.order == "older":
        return "outdated", (f"installed by {schema.installed_by}; this {THIS_NVCRE} is newer: {_stop_then_init(status)}run "
                            f"nvcre setup init to upgrade them ({', '.join(schema.differ)})")
    if outdated:
        by = f" (installed by {schema.installed_by})" if schema is not None else " (not installed by setup init)"
        return "outdated", (f"schema differs from this nvcre {NVCRE_VERSION}'s: {', '.join(outdated)}{by} "
                            f"({_stop_then_init(status)}run nvcre setup init)")
    if pending:
        return "pending", f"not Established: {', '.join(pending)}"
    by = "" if schema is None else (f", installed by this nvcre ({NVCRE_VERSION})" if schema.versions == (NVCRE_VERSION,) and not schema.unrecorded
                                    else f", installed by {schema.installed_by}, with this nvcre {NVCRE_VERSION}'s schema")
    return "ok", f"{len(status.crds)}/{len(status.crds)} present, schema current{by}"


def _stop_then_init(status: InstallStatus) -> str:
    """What comes before the `setup init` that upgrades the CRDs: stopping the engine of another version that holds the
    Lease, which init refuses to upgrade them under (cli/init_checks.py); nothing when none does."""
    from nvcre_tui.cli.init_checks import runs_another_schema

    lease = status.lease
    if lease is None or not lease.live or not runs_another_schema(lease.version, status.schema):
        return ""
    return (f"stop the engine {lease.holder} ({f'nvcre {lease.version}' if lease.version else 'its version unrecorded'}) that "
            "holds the Lease, which runs on them (init refuses to change them under it without --force), then ")


# Rows worked out from what another check read: the Trainer's controllers are looked for only once its CRDs are seen,
# the kubelets of the GPU Nodes listed.
DERIVED = {"controllers": "trainer", "kubelets": "nodes"}


def _namespace_row(status: InstallStatus) -> tuple[str, str, str]:
    if status.namespace_terminating:  # deleted (kubectl delete namespace, a setup reset cut short): no create is admitted
        from nvcre_tui.engine.kube.installs import terminating

        return ("namespace", "terminating", terminating(status.namespace, status.elsewhere))
    if not status.namespace_present and status.elsewhere:
        from nvcre_tui.engine.kube.installs import not_installed

        return ("namespace", "missing", not_installed(status.namespace, status.elsewhere))
    if status.namespace_present and not status.namespace_holds_install:
        from nvcre_tui.engine.api.vocabulary import INSTALL_NAMESPACE
        from nvcre_tui.engine.kube.installs import INSTALL_FLAG

        flag = "" if status.namespace == INSTALL_NAMESPACE else f" {INSTALL_FLAG} {status.namespace}"
        where = (f"; nvcre is installed in {', '.join(status.elsewhere)}: pass {INSTALL_FLAG} {status.elsewhere[0]}" if status.elsewhere
                 else f": run nvcre setup init{flag} to install into it")
        return ("namespace", "no install", f"{status.namespace} exists but holds no nvcre install (no setup init label: made "
                f"beforehand, or kept by setup reset because init had not created it){where}")
    if not status.namespace_present:
        return ("namespace", "missing", f"{status.namespace} ({_init_step(status)})")
    return ("namespace", "ok", status.namespace)


def _init_step(status: InstallStatus) -> str:
    """The next step of a row whose part `setup init` makes and is missing (CRDs, namespace, RBAC), one wording for
    each: init with the namespace status was given (init without it installs into nvcre-system)."""
    from nvcre_tui.engine.api.vocabulary import INSTALL_NAMESPACE
    from nvcre_tui.engine.kube.installs import INSTALL_FLAG

    return "run nvcre setup init" + ("" if status.namespace == INSTALL_NAMESPACE else f" {INSTALL_FLAG} {status.namespace}")


def _gpu_operator_row(objects: list[str], labelled: int) -> tuple[str, str, str]:
    """Whether the GPU Operator's own objects (its CRDs, its namespace) are there. GPU Feature Discovery's node label is
    told apart: anyone may set it (an API server alone has no operator behind it), so it never reads as the operator."""
    from nvcre_tui.engine.kube.status import GPU_OPERATOR_CRDS, GPU_OPERATOR_NAMESPACES

    nodes = (f"{labelled} node{'s' if labelled != 1 else ''} labelled {LABEL_GPU_PRESENT}=true (the label GPU Feature "
             "Discovery / the GPU Operator sets)") if labelled else ""
    if objects:
        return ("gpu operator", "found", "; ".join(filter(None, (", ".join(objects), nodes))))
    looked = f"no {' or '.join(GPU_OPERATOR_CRDS)} CRD, no {' or '.join(GPU_OPERATOR_NAMESPACES)} namespace"
    return ("gpu operator", "not found", f"{looked}; only {nodes}" if nodes else looked)


def _kubelet_row(checked: int, silent: list[str], simulated: int = 0) -> tuple[str, str, str]:
    """Whether a kubelet runs each GPU Node (renews its Lease in kube-node-lease): without one no pod ever starts there.
    The Nodes --sim-runner registered need none (the simulated fleet plays them)."""
    if not checked:
        return ("kubelets", "-", "only simulated GPU nodes (played by --sim-runner)" if simulated else "no GPU nodes")
    if not silent:
        return ("kubelets", "ok", f"{checked} of {checked} GPU nodes renew their kube-node-lease Lease")
    if len(silent) == checked:
        return ("kubelets", "missing", f"none of the {checked} GPU nodes renews a Lease in kube-node-lease: no kubelet runs "
                "them, so no pod will start there (each run fails WorkloadNotStarted, no node blamed: after its scheduling "
                "grace, or once its pods are placed after timeoutPerJob)")
    names = ", ".join(silent[:5]) + (f" (+{len(silent) - 5} more)" if len(silent) > 5 else "")
    return ("kubelets", "partial", f"{checked - len(silent)} of {checked} GPU nodes renew their kube-node-lease Lease; "
            f"no kubelet heard from: {names}")


def _controller_row(controllers: dict[str, str | None], *, jobset: bool = True) -> tuple[str, str, str]:
    """Whether the controllers that make a TrainJob's pods run (each renews its leader-election Lease). Without
    JobSet's CRD a TrainJob is never made at all: that, not a controller, is what the user must fix first."""
    if not controllers:
        return ("trainer controllers", "-", "no Kubeflow Trainer CRDs")
    if not jobset:
        return ("trainer controllers", "missing", "no JobSet CRD is served: each run fails at once (WorkloadNotCreated) before "
                "any controller could act; install JobSet, which the Trainer needs")
    from nvcre_tui.engine.kube.status import CONTROLLER_NAMES

    silent = [CONTROLLER_NAMES[key] for key, where in controllers.items() if where is None]
    if not silent:
        return ("trainer controllers", "ok", ", ".join(f"{CONTROLLER_NAMES[key]} in {where}" for key, where in controllers.items())
                + " (leader Lease renewed)")
    return ("trainer controllers", "missing", f"no renewed leader Lease of {' or '.join(silent)}'s controller in any namespace: "
            "not running (or running without leader election), so TrainJobs get no pods (each run fails WorkloadNotStarted)")


def _scheduler_row(renewed: bool, real_gpu_nodes: int, simulated: int = 0) -> tuple[str, str, str]:
    """Whether kube-scheduler runs (its leader Lease renewed): without a scheduler no pod is placed on any node."""
    from nvcre_tui.engine.kube.status import SCHEDULER_LEASE

    lease = "/".join(SCHEDULER_LEASE)
    if renewed:
        return ("scheduler", "ok", f"kube-scheduler (leader Lease {lease} renewed)")
    if not real_gpu_nodes:
        return ("scheduler", "-", f"no renewed Lease {lease}; " + ("only simulated GPU nodes, which need none" if simulated
                                                                    else "no GPU nodes"))
    return ("scheduler", "not seen", f"no renewed Lease {lease}: unless a scheduler runs without leader election, "
            "pods stay unplaced (each run fails WorkloadNotStarted after its scheduling grace, no node blamed)")


def _deployment_row(status: InstallStatus) -> tuple[str, str, str]:
    """The in-cluster engine `nvcre setup controller --image IMG` applies (a Deployment in the install namespace), if any:
    an engine may as well run elsewhere, so its absence is advice, never part of the install (the exit code)."""
    from nvcre_tui.engine.api.vocabulary import ENGINE_NAME
    from nvcre_tui.engine.kube.deployment import NO_DEPLOYMENT_CONTROLLER

    deployment = status.controller_deployment
    if deployment is None:
        return ("controller", "none", f"no Deployment {ENGINE_NAME} in {status.namespace}: run `nvcre controller` somewhere, "
                "or `nvcre setup controller --image IMG`")
    image = ", ".join(deployment.images) or "no image"
    # 0/1 ready, said alone, sent the user to look for a pod that an API server without kube-controller-manager never makes
    unseen = f"; {NO_DEPLOYMENT_CONTROLLER}" if not deployment.ready and not deployment.observed else ""
    return ("controller", "ok" if deployment.ready else "not ready",
            f"Deployment {ENGINE_NAME} ({image}): {deployment.ready}/{deployment.replicas} replicas ready{unseen}")


def _compute_domain_row(rack_scale_nodes: int, served: bool) -> tuple[str, str, str]:
    """Whether GB200/GB300 runs with MNNVL on (the default there) can get their ComputeDomain (NVIDIA's DRA driver)."""
    if not rack_scale_nodes:
        return ("compute domains", "-", "no GB200/GB300 nodes")
    if not served:
        return ("compute domains", "missing", f"{rack_scale_nodes} GB200/GB300 nodes and no ComputeDomain CRD: their runs with "
                "MNNVL on fail at once (install NVIDIA's DRA driver for GPUs, or set enableMNNVL: false)")
    return ("compute domains", "found", f"{rack_scale_nodes} GB200/GB300 nodes; runs with MNNVL on get a ComputeDomain each")


def _hostengine_row(targets: dict[str, bool]) -> tuple[str, str, str]:
    """Whether the DCGM diagnostics' `dcgmi --host` Services exist (GPU Operator dcgm.enabled=true)."""
    missing = [address for address, found in targets.items() if not found]
    if not targets:
        return ("dcgm hostengine", "-", "no catalog entry uses one")
    if missing:
        return ("dcgm hostengine", "missing", f"{', '.join(missing)}: DCGM diagnostics cannot connect "
                "(install the GPU Operator with dcgm.enabled=true)")
    return ("dcgm hostengine", "found", ", ".join(targets))
