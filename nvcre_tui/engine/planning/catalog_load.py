"""The catalog as every command uses it: read (catalog.read_catalog), then each entry rendered for every platform
and GPU architecture (once per set of overrides, GPU shape and parallelism they give). A site catalog
(NVCRE_CATALOG_DIR) whose template or defaults hold a wrong type (`tolerations: [5]`, `gpusPerNode: 65`) is refused
when it loads, naming its file and field, rather than failing the first certification that renders it as a bug of
nvcre."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from nvcre_tui.engine.api.options import CategoryOptions
from nvcre_tui.engine.api.validation import validation_messages
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.planning.catalog import Catalog, CatalogEntry, read_catalog
from nvcre_tui.engine.planning.platform import PLATFORMS, UNKNOWN_ARCHITECTURE
from nvcre_tui.engine.planning.render import render_run_spec
from nvcre_tui.engine.planning.resolve import resolve_options
from nvcre_tui.paths import shown_file


def load_catalog(root: Path | None = None) -> Catalog:
    """Read every entry under `root` (default: the shipped catalog/, or NVCRE_CATALOG_DIR) and render each."""
    catalog = read_catalog(root)
    check_renders(catalog, functools.partial(shown_file, "catalog", catalog.root))
    return catalog


@functools.lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The shipped catalog (or NVCRE_CATALOG_DIR's), loaded once per process."""
    return load_catalog()


def check_renders(catalog: Catalog, shown: Callable[[str], str]) -> None:
    """Render every entry on every (platform, architecture) its overrides, GPU shapes and parallelism tell apart;
    InputError naming the file (`shown(relative path)`) and field of the first that gives no valid WorkloadRun spec."""
    architectures = [*catalog.gpu_defaults.architectures, UNKNOWN_ARCHITECTURE]
    platforms = _platforms(catalog)
    for platform in platforms:
        for architecture in architectures:
            _shape(catalog, platform, architecture, shown)
    for entry in catalog.entries.values():
        # What a render depends on besides the platform's and architecture's names (strings wherever they go): the
        # overrides that apply, the GPU shape and the parallelism. One render per such set tells them all.
        rendered: set[tuple[object, ...]] = set()
        for platform in platforms:
            for architecture in architectures:
                applying = tuple(i for i, o in enumerate(entry.overrides) if o.when.matches(platform, architecture))
                shape = catalog.gpu_defaults.shape(platform, architecture).model_dump_json()
                key = (applying, shape, entry.parallelism_for(architecture).model_dump_json())
                if key in rendered:
                    continue
                rendered.add(key)
                options = _options(catalog, entry, platform, architecture, shown)
                try:
                    render_run_spec(entry, options, platform, architecture, nodes_per_job=2)
                except ValidationError as error:
                    where = f"{shown(f'{entry.key}.yaml')} (rendered for {platform}, {architecture}; template and overrides)"
                    raise InputError(validation_messages(error, where)[:1]) from None


def _platforms(catalog: Catalog) -> list[str]:
    """The platforms the defaults or an override name, and one that none names: every other renders as it does."""
    named = set(catalog.gpu_defaults.platforms)
    for entry in catalog.entries.values():
        for override in entry.overrides:
            match = override.when.platform
            if match is not None:
                named.update(filter(None, [match.equals, *(match.in_ or []), *(match.not_in or [])]))
    other = next((platform for platform in PLATFORMS if platform not in named), None)
    return sorted(named) + ([other] if other else [])


def _shape(catalog: Catalog, platform: str, architecture: str, shown: Callable[[str], str]) -> None:
    """The GPU defaults of one platform and architecture, as options (their bounds: `gpusPerNode` at most 64)."""
    try:
        CategoryOptions.model_validate(catalog.gpu_defaults.shape(platform, architecture).model_dump(exclude_none=True, by_alias=True))
    except ValidationError as error:
        raise InputError(validation_messages(error, f"{shown('_defaults/gpu-defaults.yaml')} ({architecture} on {platform})")[:1]) from None


def _options(catalog: Catalog, entry: CatalogEntry, platform: str, architecture: str, shown: Callable[[str], str]) -> CategoryOptions:
    try:
        return resolve_options(catalog, entry, CategoryOptions(), platform, architecture)
    except ValidationError as error:
        where = f"{shown('_defaults/gpu-defaults.yaml')} ({architecture} on {platform}, with {entry.key}'s defaults)"
        raise InputError(validation_messages(error, where)[:1]) from None
