"""A standalone WorkloadRun (written by a user, not rendered from a catalog entry) completed the way
NVCRE completes one: the GPU node shape of its platform and architecture, MNNVL on for GB200/GB300 unless
set, and the base NCCL env plus per-platform patches from catalog/_workloads/standalone.yaml underneath
the user's own settings (env by name, other fields whole).

Catalog-rendered runs (those an nvcre Job creates) already carry their entry's fabric settings and must
not get these: the base env disables shared memory, which the NVSwitch loopback test needs on.
"""

from __future__ import annotations

from typing import Any

from nvcre_tui.engine.api.resources import WorkloadRunSpec
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.merge import deep_merge
from nvcre_tui.engine.planning.platform import RACK_SCALE_ARCHITECTURES
from nvcre_tui.engine.planning.render import substitute
from nvcre_tui.engine.workloads.data import STANDALONE_VARIABLES, standalone_data


def standalone_spec(spec: WorkloadRunSpec, platform: str, architecture: str) -> WorkloadRunSpec:
    """`spec` with the node shape, MNNVL default and automatic env / resources filled in under it."""
    shape = default_catalog().gpu_defaults.shape(platform, architecture)
    data = standalone_data()
    mnnvl = spec.enable_mnnvl if spec.enable_mnnvl is not None else architecture in RACK_SCALE_ARCHITECTURES
    gpus = spec.gpus_per_node or shape.gpus_per_node or 1
    nics = spec.mlnx_per_node if spec.mlnx_per_node is not None else (shape.mlnx_per_node or 0)
    auto: dict[str, Any] = {"env": dict(data.env)}
    for override in data.overrides:
        if override.when.matches(platform, architecture):
            auto = deep_merge(auto, override.patch)
    variables = {"mnnvl": int(mnnvl), "mlnxPerNode": nics}
    assert variables.keys() == STANDALONE_VARIABLES  # what loading standalone.yaml checked its placeholders against
    auto = substitute(auto, variables, "catalog/_workloads/standalone.yaml")
    wire = spec.to_wire()
    env = {**{name: str(value) for name, value in auto.get("env", {}).items()}, **{var.name: var.value for var in spec.env or []}}
    wire.update(env=[{"name": name, "value": value} for name, value in env.items()], gpusPerNode=gpus, mlnxPerNode=nics, enableMNNVL=mnnvl,
                extendedResources={**auto.get("extendedResources", {}), **(spec.extended_resources or {})})
    if spec.resource_claims is None and auto.get("resourceClaims"):
        wire["resourceClaims"] = list(auto["resourceClaims"])
    return WorkloadRunSpec.model_validate(wire)
