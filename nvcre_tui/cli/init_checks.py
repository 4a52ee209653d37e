"""What `nvcre setup init` says before it changes the CRDs' schema under a running engine.

An engine checks its CRDs' schema at its start and, from this version on, every SCHEMA_CHECK_SECONDS while it runs (it
then stops and gives the Lease back); an older engine never looks again and goes on writing its objects with its own
schema, which the new CRDs prune or refuse. So init refuses, naming each engine that holds a Lease (who, and its version
where the Lease says it) and what will happen to it, unless --force: the SRE stops the engine, upgrades, then runs the
new version's engine. Nothing is said when the schema does not change (init of the same version again), nor of an
engine that says this very version on CRDs another version stamped (init gives it its own schema back); one that says
this version on CRDs a build of this version with another schema stamped (a development build) is that build, and named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nvcre_tui.engine.clock import Clock
from nvcre_tui.engine.printable import printable

if TYPE_CHECKING:  # the Kubernetes client loads only in commands that reach a cluster
    from nvcre_tui.engine.kube.install import InstalledSchema
    from nvcre_tui.engine.kube.installs import LiveEngine
    from nvcre_tui.engine.store.kube import KubeStore

__all__ = ["engines_under", "change_under", "refusal", "runs_another_schema"]

STOP_IT = "its Deployment or `nvcre controller` process; a console or `run --wait` that runs one: quit it"


async def engines_under(store: KubeStore, clock: Clock, namespaces: list[str], installed: InstalledSchema) -> list[LiveEngine]:
    """The engines holding a Lease now (in any namespace; `namespaces` where Leases cannot be listed across them) whose
    schema is not this nvcre's: every one but those that say they are this very version, unless a build of this version
    stamped the `installed` CRDs with another schema (an engine saying this version runs that build's schema then: an
    engine runs on no CRDs but its own schema's, checked at its start). None readable: none."""
    from nvcre_tui.engine.kube.installs import live_engines

    return [engine for engine in await live_engines(store, clock, namespaces) or [] if runs_another_schema(engine.version, installed)]


def runs_another_schema(version: str | None, installed: InstalledSchema | None) -> bool:
    """Whether an engine whose Lease says `version` runs on a schema other than this nvcre's (`installed`: the CRDs it
    runs on): one of another version, or of this one where a build of it stamped them with another schema."""
    from nvcre_tui.engine.kube.install import NVCRE_VERSION

    return version != NVCRE_VERSION or (installed is not None and NVCRE_VERSION in installed.versions)


def change_under(engines: list[LiveEngine], installed: InstalledSchema) -> str:
    """One line: the CRDs would change under these engines, and what becomes of each."""
    from nvcre_tui.engine.kube.install import THIS_NVCRE

    doing = {"older": "upgrading", "newer": "downgrading"}.get(installed.order, "replacing")
    told = "; ".join(f"{printable(engine.identity, newlines=False)} holds the engine Lease in {engine.namespace} "
                     f"({_version(engine)}): {_fate(engine)}" for engine in engines)
    return f"{doing} the CRDs {installed.installed_by} installed to {THIS_NVCRE} under a running engine: {told}"


def _version(engine: LiveEngine) -> str:
    from nvcre_tui.engine.kube.install import NVCRE_VERSION

    if not engine.version:
        return "its version unrecorded"
    return f"nvcre {engine.version}" + (", another build of this version" if engine.version == NVCRE_VERSION else "")


def _fate(engine: LiveEngine) -> str:
    from nvcre_tui.engine.kube.install import NVCRE_VERSION
    from nvcre_tui.engine.kube.schemaguard import SCHEMA_CHECK_SECONDS

    if engine.version:
        # Another build of this very version already runs "this version's image": only an image of this build (its
        # schema) starts on the new CRDs, and the version tag cannot tell the two apart.
        image = ("an image of this build (its version tag, nvcre " + NVCRE_VERSION + ", is that other build's too: rebuild "
                 "the image from this nvcre)") if engine.version == NVCRE_VERSION else "this version's image"
        return (f"it stops reconciling within {SCHEMA_CHECK_SECONDS:g}s of the change, gives the Lease back and stays stopped "
                f"(`nvcre controller` exits 2, its pod restarting into that refusal until it runs {image}), "
                "writing with its old schema until then")
    return ("it never looks at the CRDs again (an nvcre from before engines said their version on the Lease) and goes on "
            "writing its objects with its old schema, which these prune or refuse, until it is stopped")


def refusal(engines: list[LiveEngine], installed: InstalledSchema) -> str:
    """`setup init`'s one line without --force (nothing applied)."""
    return (f"nvcre setup init: {change_under(engines, installed)}; stop it first ({STOP_IT}), run `nvcre setup init`, then "
            "this version's engine; or `nvcre setup init --force` (nothing applied)")
