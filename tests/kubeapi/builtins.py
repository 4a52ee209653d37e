"""What built-in strategies do on create and update: defaults the real server fills in and the few
validation rules clients commonly trip over. Only what matters to clients of a bare API server.

Not emulated: admission plugins other than NamespaceLifecycle, the full pod/job/service validation,
IP allocation beyond a counter, and service-account token controllers.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

from .errors import Cause
from .storage import clone

__all__ = ["prepare_create", "validate_builtin", "check_immutable", "BOOTSTRAP", "POD_SPEC_MUTABLE"]

# What a bare kube-apiserver creates itself at start (besides the namespaces): the `kubernetes` Service
# and the cluster-admin role bound to system:masters. The other bootstrap roles are not preloaded.
BOOTSTRAP: tuple[tuple[str, str, str | None, Obj], ...] = (
    ("", "services", "default", {"metadata": {"name": "kubernetes", "labels": {
        "component": "apiserver", "provider": "kubernetes"}}, "spec": {
        "clusterIP": "10.0.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}}),
    ("rbac.authorization.k8s.io", "clusterroles", None, {"metadata": {"name": "cluster-admin", "labels": {
        "kubernetes.io/bootstrapping": "rbac-defaults"}, "annotations": {
        "rbac.authorization.kubernetes.io/autoupdate": "true"}}, "rules": [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, {"nonResourceURLs": ["*"], "verbs": ["*"]}]}),
    ("rbac.authorization.k8s.io", "clusterrolebindings", None, {"metadata": {"name": "cluster-admin", "labels": {
        "kubernetes.io/bootstrapping": "rbac-defaults"}, "annotations": {
        "rbac.authorization.kubernetes.io/autoupdate": "true"}}, "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]}),
)

Obj = dict[str, Any]
_cluster_ips = itertools.count(1)


def _pod(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    for container in spec.get("containers") or []:
        if isinstance(container, dict):
            container.setdefault("terminationMessagePath", "/dev/termination-log")
            container.setdefault("terminationMessagePolicy", "File")
            image = str(container.get("image", ""))
            container.setdefault("imagePullPolicy", "Always" if image.endswith(":latest") or ":" not in image else
                                 "IfNotPresent")
    obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}


def _namespace(obj: Obj) -> None:
    obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]
    obj["status"] = {"phase": "Active"}
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


def _service(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec.get("clusterIP") != "None":
        number = next(_cluster_ips)
        spec.setdefault("clusterIP", f"10.0.{number // 250}.{number % 250 + 2}")
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
    obj["status"] = {"loadBalancer": {}}


def _job(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    uid = obj["metadata"]["uid"]
    if not spec.get("manualSelector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
        labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": obj["metadata"]["name"],
                       "controller-uid": uid, "job-name": obj["metadata"]["name"]})
    obj["status"] = {}


PREPARE_CREATE: dict[str, Callable[[Obj], None]] = {
    "Pod": _pod, "Namespace": _namespace, "Service": _service, "Job": _job,
}


def prepare_create(group: str, kind: str, obj: Obj) -> None:
    """Defaults of a new built-in object (in place)."""
    if group in ("", "batch"):
        prepare = PREPARE_CREATE.get(kind)
        if prepare is not None and not (kind == "Job" and group != "batch"):
            prepare(obj)


def _containers(obj: Obj) -> list[Cause]:
    containers = (obj.get("spec") or {}).get("containers")
    if not containers:
        return [Cause("FieldValueRequired", "Required value", "spec.containers")]
    causes = []
    for index, container in enumerate(containers):
        for required in ("name", "image"):
            if not (isinstance(container, dict) and container.get(required)):
                causes.append(Cause("FieldValueRequired", "Required value", f"spec.containers[{index}].{required}"))
    return causes


def _job_template(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") or {}
    template = spec.get("template") or {}
    causes = []
    if not (template.get("spec") or {}).get("containers"):
        causes.append(Cause("FieldValueRequired", "Required value", "spec.template.spec.containers"))
    if (template.get("spec") or {}).get("restartPolicy") not in ("OnFailure", "Never"):
        causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{(template.get("spec") or {}).get("restartPolicy", "Always")}": '
                            'supported values: "OnFailure", "Never"', "spec.template.spec.restartPolicy"))
    return causes


POD_SPEC_MUTABLE = ("spec.containers[*].image, spec.initContainers[*].image, spec.activeDeadlineSeconds, "
                    "spec.tolerations (only additions to existing tolerations), spec.terminationGracePeriodSeconds "
                    "(allow it to be set to 1 if it was previously negative)")


def _pod_spec_frozen(new: Obj, old: Obj) -> list[Cause]:
    """A Pod's spec is immutable but for images, activeDeadlineSeconds and added tolerations (binding a pod
    to a node goes through pods/binding, not an update)."""
    def comparable(spec: Obj) -> Obj:
        out = clone(spec)
        for field in ("containers", "initContainers"):
            for container in out.get(field) or []:
                if isinstance(container, dict):
                    container.pop("image", None)
        for field in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"):
            out.pop(field, None)
        return out
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    causes = []
    if comparable(new_spec) != comparable(old_spec):
        causes.append(Cause("FieldValueForbidden", "Forbidden: pod updates may not change fields other than "
                            + POD_SPEC_MUTABLE, "spec"))
    old_tolerations = old_spec.get("tolerations") or []
    if new_spec.get("tolerations") is not None and old_tolerations[: len(old_tolerations)] != (
            new_spec.get("tolerations") or [])[: len(old_tolerations)]:
        causes.append(Cause("FieldValueForbidden", "Forbidden: existing toleration can not be modified except its "
                            "tolerationSeconds", "spec.tolerations"))
    return causes


def check_immutable(group: str, kind: str, new: Obj, old: Obj) -> list[Cause]:
    """ConfigMaps and Secrets marked `immutable: true` keep their data (and the mark) forever; Pod specs
    change only in the few fields the pod strategy allows."""
    if not group and kind == "Pod":
        return _pod_spec_frozen(new, old)
    if group or kind not in ("ConfigMap", "Secret") or not old.get("immutable"):
        return []
    causes = []
    for field in ("data", "binaryData") + (("stringData", "type") if kind == "Secret" else ()):
        if new.get(field) != old.get(field):
            causes.append(Cause("FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set", field))
    if not new.get("immutable"):
        causes.append(Cause("FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set",
                            "immutable"))
    return causes


CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")
CONFIG_KEY_MESSAGE = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
                      "'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")


def config_key_problems(key: str) -> list[str]:
    """apimachinery's IsConfigMapKey (ConfigMap and Secret data keys): at most 253 bytes of [-._a-zA-Z0-9],
    not '.' or '..' nor starting with '..' (they would escape the mounted volume's directory)."""
    problems = ["must be no more than 253 characters"] if len(key.encode()) > 253 else []
    if not CONFIG_KEY.fullmatch(key):
        problems.append(CONFIG_KEY_MESSAGE)
    if key in (".", ".."):
        problems.append(f"must not be '{key}'")
    elif key.startswith(".."):
        problems.append("must not start with '..'")
    return problems


def _configmap(obj: Obj) -> list[Cause]:
    causes = []
    sections = {section: obj.get(section) or {} for section in ("data", "binaryData")}
    for section, entries in sections.items():
        for key in entries:
            causes += [Cause("FieldValueInvalid", f'Invalid value: "{key}": {problem}', f"{section}[{key}]")
                       for problem in config_key_problems(str(key))]
    for key in sections["data"]:
        if key in sections["binaryData"]:
            causes.append(Cause("FieldValueInvalid", f'Invalid value: "{key}": duplicate of key present in binaryData', f"data[{key}]"))
    # the values count, not the keys (ValidateConfigMap's totalSize)
    size = sum(len(v) for entries in sections.values() for v in entries.values() if isinstance(v, str))
    if size > 1048576:
        causes.append(Cause("FieldValueTooLong", "Too long: must have at most 1048576 bytes", "[]"))
    for key, value in sections["data"].items():
        if not isinstance(value, str):
            causes.append(Cause("FieldValueTypeInvalid", "Invalid value: must be a string", f"data[{key}]"))
    return causes


def _event(obj: Obj) -> list[Cause]:
    """Legacy (core v1) Event rules: an event about a cluster-scoped object lives in "default" (or no
    namespace); one about a namespaced object lives in that object's namespace."""
    involved = obj.get("involvedObject") or {}
    namespace = obj.get("metadata", {}).get("namespace", "")
    target = involved.get("namespace") or ""
    if (not target and namespace not in ("", "default")) or (target and target != namespace):
        return [Cause("FieldValueInvalid", f'Invalid value: "{target}": does not match event.namespace',
                      "involvedObject.namespace")]
    return []


VALIDATE: dict[tuple[str, str], Callable[[Obj], list[Cause]]] = {
    ("", "Event"): _event,
    ("", "Pod"): _containers, ("batch", "Job"): _job_template, ("", "ConfigMap"): _configmap, ("", "Secret"): _configmap,
}


def validate_builtin(group: str, kind: str, obj: Obj) -> list[Cause]:
    check = VALIDATE.get((group, kind))
    return check(obj) if check else []
