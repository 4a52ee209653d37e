"""Resolve a category's options: every default filled in, in one documented order.

Lowest to highest: catalog/_defaults/options.yaml defaults < GPU node shape (architecture, platform)
< the entry's own defaults and time budget < testScale defaults (global, then the entry's) < the user.
"""

from __future__ import annotations

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.planning.catalog import Catalog, CatalogEntry


def resolve_options(
    catalog: Catalog, entry: CatalogEntry, user: CategoryOptions, platform: str, architecture: str
) -> CategoryOptions:
    """The user's options with every unset field filled from the catalog's defaults."""
    shape = catalog.gpu_defaults.shape(platform, architecture)
    layers = [
        catalog.option_defaults.defaults,
        CategoryOptions.model_validate(shape.model_dump(exclude_none=True)),
        CategoryOptions(timeout_per_job=entry.time_budget, test_scale=entry.test_scales[0]),
        entry.defaults,
    ]
    scale = user.test_scale or entry.test_scales[0]
    layers += [catalog.option_defaults.scale_defaults.get(scale), (entry.scale_defaults or {}).get(scale), user]
    resolved = CategoryOptions()
    for layer in layers:
        resolved = resolved.merged_with(layer)
    # Global thresholds reach every category; keep those this entry measures (checked per category on load).
    thresholds = {key: expr for key, expr in (resolved.thresholds or {}).items() if key in entry.metrics}
    return resolved.model_copy(update={"thresholds": thresholds or None})


def auto_nodes_per_job(entry: CatalogEntry, available: int, gpus_per_node: int, architecture: str) -> int:
    """Largest node count <= available that the entry's model constraints accept (training), else all."""
    if entry.min_gpus is None:
        return available
    parallel = entry.parallelism_for(architecture)
    for nodes in range(available, 0, -1):
        gpus = nodes * gpus_per_node
        if gpus >= entry.min_gpus and gpus % (parallel.tp * parallel.pp) == 0:
            return nodes
    return 0
