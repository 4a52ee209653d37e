"""What `run` checks for a user who may not read Nodes (planning.render.check_category) is what render_category would
refuse on any nodes: its options, resolved without the nodes' GPU shape, agree with those resolved on every shape
but for the shape's own options, which stay unset where the shape would decide them."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.planning.resolve import SHAPE_OPTIONS, resolve_options

USERS = [CategoryOptions(), CategoryOptions.model_validate({"gpusPerNode": 2, "maxBytes": "1G", "maxSteps": -1, "onFailure": "diagnose"}),
         CategoryOptions.model_validate({"testScale": "intra-node", "enableMNNVL": False, "timeoutPerJob": "10m"})]


@pytest.mark.parametrize("user", USERS)
def test_options_without_the_nodes_are_those_of_every_shape_but_the_shapes_own(user: CategoryOptions) -> None:
    catalog = default_catalog()
    defaults = catalog.gpu_defaults
    shapes = [("onprem", arch) for arch in [*defaults.architectures, "unknown"]]
    shapes += [(platform, arch) for platform, corrections in defaults.platforms.items() for arch in corrections]
    for entry in catalog.entries.values():
        if user.test_scale and user.test_scale not in entry.test_scales:
            continue
        unknown = resolve_options(catalog, entry, user, None, None)
        for platform, arch in shapes:
            known = resolve_options(catalog, entry, user, platform, arch)
            for name in CategoryOptions.model_fields:
                mine, theirs = getattr(unknown, name), getattr(known, name)
                if name in SHAPE_OPTIONS:
                    assert mine in (None, theirs), (entry.key, platform, arch, name)
                    assert (mine is None) == (getattr(user, name) is None and getattr(entry.defaults, name, None) is None), (entry.key, name)
                else:
                    assert mine == theirs, (entry.key, platform, arch, name)
