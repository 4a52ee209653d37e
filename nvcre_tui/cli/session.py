"""Which Session a command opens: the embedded simulator, or a Kubernetes API server.

A cluster when any kube flag is given (`--kubeconfig`, `--context`, `--sim-runner`) or a cluster is
configured ($KUBECONFIG, ~/.kube/config, in a pod) and `--sim` is not; otherwise the embedded simulator.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from nvcre_tui.cli.filepaths import file_path
from nvcre_tui.cli.kubeflags import add_kube_arguments, check_namespace, load_kube_target
from nvcre_tui.cli.oneline import say
from nvcre_tui.engine.api.vocabulary import INSTALL_NAMESPACE
from nvcre_tui.engine.clock import Clock, ManualClock, ScaledClock
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.db import check_history, default_history_path
from nvcre_tui.engine.planning.catalog import Catalog
from nvcre_tui.engine.sim.scenario import Scenario, default_scenario, load_scenario

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session
    from nvcre_tui.engine.kube.config import KubeTarget

__all__ = ["Told", "add_session_arguments", "in_other_namespaces", "named_history", "no_store_yet", "on_cluster", "open_session", "quiet_absent_history", "scenario_of", "state_path_of", "legacy_state_of", "tell_notices", "where_of"]


def add_session_arguments(parser: argparse.ArgumentParser, *, namespace_help: str | None = None) -> None:
    """--sim, --scenario, --state (simulator) and --kubeconfig, --context, -n, --sim-runner (cluster)."""
    parser.add_argument("--sim", action="store_true", help="use the embedded simulated fleet even when a cluster is configured")
    parser.add_argument("--scenario", metavar="S.yaml", help="simulated fleet scenario (default: the built-in 32 x H100 fleet)")
    parser.add_argument("--state", metavar="PATH", type=file_path, help="simulator store, an SQLite file (default $NVCRE_STATE or ~/.local/state/nvcre/sim.db)")
    parser.add_argument("--sim-runner", action="store_true",
                        help="on a cluster: the simulated fleet plays kubelet and GPUs (registers its Nodes when absent)")
    parser.add_argument("--install-namespace", metavar="NS", default=None, help="where `setup init` installed nvcre (default nvcre-system)")
    parser.add_argument("--history", metavar="PATH", type=file_path, help="archive of finished certifications (default $NVCRE_HISTORY or ~/.local/state/nvcre/history.db)")
    add_kube_arguments(parser, namespace_help=namespace_help)


def on_cluster(args: argparse.Namespace) -> bool:
    """Whether the flags (or the environment) point at a cluster rather than the embedded simulator."""
    from nvcre_tui.engine.kube.config import cluster_configured

    named = [flag for dest, flag in (("kubeconfig", "--kubeconfig"), ("context", "--context"), ("sim_runner", "--sim-runner"))
             if getattr(args, dest, None)]
    if getattr(args, "sim", False):
        if named:
            raise InputError(f"--sim runs the embedded simulator and {', '.join(named)} a cluster: give one or the other")
        return False
    cluster = bool(named) or cluster_configured()
    simulator = [flag for dest, flag in (("scenario", "--scenario"), ("state", "--state")) if getattr(args, dest, None)]
    if getattr(args, "sim_runner", False):
        simulator = [flag for flag in simulator if flag != "--scenario"]  # the fleet the simulated runner plays
    if cluster and simulator:
        how = "named" if named else "configured ($KUBECONFIG or ~/.kube/config)"
        raise InputError(f"{', '.join(simulator)} would be ignored: {'they are' if len(simulator) > 1 else 'it is'} the embedded "
                         f"simulator's and a cluster is {how}; add --sim to use the simulator")
    return cluster


def scenario_of(args: argparse.Namespace) -> Scenario:
    """The --scenario file; without one the fleet the simulator's store already holds (a store keeps its scenario:
    `report --state PATH` needs no --scenario), else the built-in fleet. Read once per command (`--scenario -` is
    stdin, read only once)."""
    from nvcre_tui.engine.sim_state import stored_scenario

    loaded = getattr(args, "_loaded_scenario", None)
    if loaded is None:
        path = getattr(args, "scenario", None)
        if path:
            loaded = load_scenario(path)
        else:  # --sim-runner plays a fleet on a cluster: the store is not its
            held = None if getattr(args, "sim_runner", False) else stored_scenario(state_path_of(args))
            loaded = held or default_scenario()
        args._loaded_scenario = loaded
    return loaded


def state_path_of(args: argparse.Namespace) -> Path:
    """The simulator's store file."""
    from nvcre_tui.engine.sim_state import default_state_path

    path = getattr(args, "state", None)
    return Path(path) if path else default_state_path()


def state_named_by(args: argparse.Namespace) -> str:
    """What named the store, for a message about it: --state, $NVCRE_STATE, or neither (the default place). "--state:"
    before a default path (an unwritable $HOME) sent the user to a flag they had not given."""
    import os

    if getattr(args, "state", None):
        return "--state"
    return "$NVCRE_STATE" if os.environ.get("NVCRE_STATE") else "the simulator's store (default place; --state PATH names another)"


def legacy_state_of(args: argparse.Namespace) -> Path | None:
    """The old default JSON state to import into the default store (None when a path was named)."""
    from nvcre_tui.engine.sim_state import legacy_default_path

    return None if getattr(args, "state", None) else legacy_default_path()


def no_store_yet(args: argparse.Namespace) -> bool:
    """On the simulator, no store file yet (nor an old state to import): no certification to read, delete or archive,
    so the commands that look (`list`, `report`, `delete`) make no file, neither store nor history (see
    quiet_absent_history)."""
    if on_cluster(args) or state_path_of(args).exists():
        return False
    legacy = legacy_state_of(args)
    return legacy is None or not legacy.exists()


def named_history(args: argparse.Namespace) -> tuple[Path, str] | None:
    """The history the user named and what named it: --history, else $NVCRE_HISTORY (a variable the user set is as
    explicit as the flag: a file there that cannot be the history is bad input, exit 2, not "history off" and exit 0);
    None for the default place. InputError when $NVCRE_HISTORY names a folder ("x/")."""
    import os

    if getattr(args, "history", None):
        return Path(args.history), "--history"
    if os.environ.get("NVCRE_HISTORY"):
        return default_history_path(), "$NVCRE_HISTORY"
    return None


def quiet_absent_history(session: Session) -> None:
    """With no store yet there is nothing to archive: a named --history that does not exist either is no news (`history
    off: h.db: no such file` came before `No certifications ...`, a line about nothing)."""
    from nvcre_tui.engine.history.archive import NO_HISTORY_READ_ONLY

    session.notices[:] = [notice for notice in session.notices if not notice.endswith(NO_HISTORY_READ_ONLY)]


async def open_session(args: argparse.Namespace, catalog: Catalog, *, live: bool, want_engine: bool, role: str = "engine",
                       readonly: bool = False, archive_writes: bool = True, nodes_needed: bool = True,
                       target: KubeTarget | None = None) -> Session:
    """Open the session the flags name. `live`: a clock that runs (console, controller) rather than a
    ManualClock the caller drives (`run --wait`). `readonly` (report, a read-only console): on the
    simulator the store is opened read-only, so nothing is written to it. `archive_writes=False` (a read-only
    console, the wall): the history is only read, so the session writes no file at all. `nodes_needed=False`: what the
    command shows needs no Node (`certification list`), so a user who may not list them is not told they are missing.
    `target`: the flags' cluster, loaded already (the console loads it before it takes the screen: its exec plugin may
    prompt there, and is not run again)."""
    named = named_history(args)
    history: Path | Literal["default"] = named[0] if named else "default"
    if named and not readonly and archive_writes:
        check_history(*named)  # before the store is opened (and a new store file made) on a named history that is none
    elif history == "default":
        default_history_path()  # the default place needing a home that cannot be found is said before any file is made
    install = check_namespace(getattr(args, "install_namespace", None), "--install-namespace") or INSTALL_NAMESPACE  # the simulator too
    if not on_cluster(args):
        from nvcre_tui.engine.session import SimSession

        return await SimSession.open(scenario_of(args), state_path_of(args), catalog, live=live, history=history, readonly=readonly,
                                     want_engine=want_engine, role=role, legacy=legacy_state_of(args),
                                     archive_writes=archive_writes, namespace=check_namespace(getattr(args, "namespace", None)) or "default")
    from nvcre_tui.engine.kube.session import KubeSession

    target = target or await load_kube_target(args)
    sim_runner = bool(getattr(args, "sim_runner", False))
    scenario: Scenario | None = None
    clock: Clock | None = None
    if sim_runner:  # simulated time on a real server: as fast as the engine can (--wait), or at the scenario's speed
        scenario = scenario_of(args)
        now = datetime.now(UTC).replace(microsecond=0)
        clock = ScaledClock(scenario.speed, start=now) if live else ManualClock(now)
    return await KubeSession.open(target, catalog, clock=clock, scenario=scenario, want_engine=want_engine,
                                  install_namespace=install, role=role, history=history, archive_writes=archive_writes,
                                  nodes_needed=nodes_needed)


def where_of(session: Session) -> str:
    """Where a command looked, for "not found" messages: the simulator's store file, else the session's title."""
    path = getattr(session, "path", None)  # the simulator's store file (none on a cluster)
    cluster = getattr(session, "cluster", None)  # a cluster's title names the namespace too, which the messages name
    return f"the simulator ({path})" if path else str(cluster) if cluster else session.title


def archived_elsewhere(session: Session, name: str, namespace: str) -> str:
    """For a "not found" message: where the history archived a certification of that name from another cluster or
    simulator state ("; the history archived it from sim:/tmp/a.db (--state /tmp/a.db, or nvcre history
    certifications)"), else ""."""
    history = session.history
    if history is None:
        return ""
    try:
        every = history.sources_of(name, namespace)
    except InputError:  # a damaged or unreadable history: the message stays as it was
        return ""
    sources = [s for s in every if s not in (history.sources or ())]
    if not sources:  # archived from here (deleted since, as the console's x does), or never
        return "; the history archived it from here (nvcre history certifications)" if every else ""
    more = f" and {len(sources) - 1} more" if len(sources) > 1 else ""
    hint = f"--state {sources[0].removeprefix('sim:')}, or " if sources[0].startswith("sim:/") else ""
    return f"; the history archived it from {sources[0]}{more} ({hint}nvcre history certifications)"


async def in_other_namespaces(session: Session, name: str, namespace: str) -> str:
    """For a "not found" message: the other namespaces of this store or cluster that hold a certification of that name
    ("; namespace team-a holds one: -n team-a"), a forgotten -n being the likeliest cause; "" when none does, or when
    the list is refused (a user bound in one namespace may not list them all: not known, not said)."""
    from nvcre_tui.engine.store.errors import StoreError
    from nvcre_tui.engine.store.protocol import CERTIFICATION

    try:
        found = (await session.store.list(CERTIFICATION, None)).items
    except (StoreError, InputError):
        return ""
    others = sorted({str(meta.get("namespace")) for meta in (cert.get("metadata") or {} for cert in found)
                     if meta.get("name") == name and meta.get("namespace") != namespace})
    if not others:
        return ""
    if len(others) == 1:
        return f"; namespace {others[0]} holds one: -n {others[0]}"
    return f"; namespaces {', '.join(others)} hold one each: -n NS"


@dataclass
class Told:
    """How many of a session's notices a command told so far: shared by what tells them as they come (`run --wait`
    while it follows) and by what tells the rest before exiting."""

    count: int = 0


async def open_looking_session(args: argparse.Namespace, *, writes: bool = False, want_engine: bool = False, live: bool = False,
                               nodes_needed: bool = True) -> tuple[Session, int]:
    """The session of a command that looks at certifications (`list`, `report`, `logs`, `delete`) and its notices told:
    with no store yet it makes no file, neither store nor history (no_store_yet), and says nothing of a history that is
    not there either; the store is opened read-only unless the command `writes` (delete) and there is one."""
    from nvcre_tui.engine.planning.catalog_load import default_catalog

    nothing = no_store_yet(args)
    session = await open_session(args, default_catalog(), live=live, want_engine=want_engine, readonly=nothing or not writes,
                                 archive_writes=not nothing, nodes_needed=nodes_needed)
    if nothing:
        quiet_absent_history(session)
    return session, tell_notices(session)


def tell_notices(session: Session, told: int = 0) -> int:
    """The session's notices after the first `told` on stderr, one line each (`nvcre: history off: ...`); how
    many are told by now. Called on opening and before exiting (an archive that failed meanwhile); the console
    shows them itself."""
    for notice in session.notices[told:]:
        say(f"nvcre: {notice}")
    return len(session.notices)
