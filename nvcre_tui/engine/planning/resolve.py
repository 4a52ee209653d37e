"""Resolve a category's options: every default filled in, in one documented order.

Lowest to highest: catalog/_defaults/options.yaml defaults < GPU node shape (architecture, platform)
< the entry's own defaults and time budget < testScale defaults (global, then the entry's) < the user.
Without the nodes' architecture and platform (a user who may not read Nodes) the shape's options (SHAPE_OPTIONS) are
unset unless a layer above it sets them.
"""

from __future__ import annotations

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.planning.catalog import ArchShape, Catalog, CatalogEntry

# The options a GPU node shape sets (catalog/_defaults/gpu-defaults.yaml): those that depend on the nodes.
SHAPE_OPTIONS = frozenset(ArchShape.model_fields)


def resolve_options(
    catalog: Catalog, entry: CatalogEntry, user: CategoryOptions, platform: str | None, architecture: str | None
) -> CategoryOptions:
    """The user's options with every unset field filled from the catalog's defaults; platform or architecture None:
    not known (the nodes unread), so SHAPE_OPTIONS stay unset where the shape would decide them."""
    resolved = CategoryOptions().merged_with(catalog.option_defaults.defaults)
    if platform is not None and architecture is not None:
        resolved = resolved.merged_with(CategoryOptions.model_validate(catalog.gpu_defaults.shape(platform, architecture).model_dump(exclude_none=True)))
    else:  # the nodes' shape would replace these defaults: not known
        resolved = resolved.model_copy(update=dict.fromkeys(SHAPE_OPTIONS))
    scale = user.test_scale or entry.test_scales[0]
    layers = [
        CategoryOptions(timeout_per_job=entry.time_budget, test_scale=entry.test_scales[0]), entry.defaults,
        catalog.option_defaults.scale_defaults.get(scale), (entry.scale_defaults or {}).get(scale), user,
    ]
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
