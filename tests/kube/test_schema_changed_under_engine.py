"""An engine whose CRDs `setup init` of another nvcre re-stamps while it runs (an upgrade applied under the engine that
holds the Lease) stops reconciling instead of writing its objects with its old schema: it checked the schema only at its
start. `nvcre controller` exits 2 with one line naming both versions and gives the Lease back; a console (or `run
--wait`) stops its engine, gives the Lease back, and stays a viewer that says why until `setup init` of its version. Over real HTTP against the emulator."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from nvcre_tui.engine.clock import SystemClock
from nvcre_tui.engine.kube import load_target
from nvcre_tui.engine.kube import schemaguard
from nvcre_tui.engine.kube.install import NVCRE_VERSION, SCHEMA_GENERATION
from nvcre_tui.engine.kube.session import KubeSession
from nvcre_tui.engine.lease import EngineLease
from nvcre_tui.engine.planning.catalog_load import default_catalog
from nvcre_tui.engine.store import LEASE, NotFound
from tests.kube.cluster import until
from tests.kube.test_install_namespace import _controller
from tests.kube.test_schema_versions import NEWER, _stamp
from tests.kube.test_setup import admin, kubeconfig, no_user_cluster, nvcre, server  # noqa: F401 - fixtures

THIS = f"nvcre {NVCRE_VERSION} (schema generation {SCHEMA_GENERATION})"
SAID = "engine stopped: the nvcre CRDs changed while it ran: "
# Which CRDs it names depends on when it looked: init applies them one after another.
BY = (f" installed by nvcre 9.9.0 (schema generation {NEWER}), newer than this engine's {THIS}: run the engine of nvcre "
      "9.9.0 or later (`nvcre setup init --force` of this version would downgrade the CRDs, and a newer engine then refuses them)")


def stopped(line: str | None) -> bool:
    """`line` is the one line of an engine stopped on the CRDs nvcre 9.9.0 re-stamped, naming both versions."""
    if line is None or not line.startswith(SAID) or not line.endswith(BY):
        return False
    names = line[len(SAID):-len(BY)].rsplit(" ", 1)[0].split(", ")  # "a, b were" / "a was"
    return bool(names) and all(name.endswith(".nvcre.nvidia.com") for name in names)


@pytest.fixture(autouse=True)
def quick_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schemaguard, "SCHEMA_CHECK_SECONDS", 0.1)


async def _holder(admin) -> str | None:
    try:
        return (await admin.get(LEASE, EngineLease.NAME, "nvcre-system"))["spec"].get("holderIdentity")
    except NotFound:
        return None


async def test_the_controller_exits_with_one_line_naming_both_versions_once_its_crds_are_restamped(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    controller = _controller(kubeconfig, "--identity", "ctl-old")
    try:
        async def held() -> bool:
            return await _holder(admin) == "ctl-old"

        await until(held)
        await asyncio.sleep(0.3)  # a few looks at the unchanged CRDs: nothing said, nothing stopped
        assert not controller.done()
        await _stamp(admin, generation=NEWER, version="9.9.0")  # what `setup init --force` of nvcre 9.9.0 leaves
        code = await asyncio.wait_for(controller, 15)
    finally:
        if not controller.done():
            await EngineLease(admin, server.clock, "nvcre-system", "test", 1).try_acquire()
            await asyncio.wait_for(controller, 15)
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and [line for line in err if stopped(line.removeprefix("nvcre controller: "))], err
    assert err[-1] == "nvcre controller: stopped; released the engine lease for the next engine", err
    assert not await _holder(admin)  # the engine of 9.9.0 need not wait for it to expire


async def test_a_console_engine_stops_gives_the_lease_back_and_stays_a_viewer_that_says_why(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        assert session.engine is not None and session.engine_stopped is None
        engine = session.engine
        running = asyncio.create_task(engine.run())
        await asyncio.sleep(0.3)
        assert session.engine is engine and not running.done()
        await _stamp(admin, generation=NEWER, version="9.9.0")

        async def ended() -> bool:  # the engine returned, and the Lease went back after its last key
            return session.engine is None and running.done() and session.lease is None

        await until(ended)
        running.result()  # it returned: stopped, not failed
        assert stopped(session.engine_stopped) and session.viewer_reason == f"viewer: {session.engine_stopped}"
        assert session.lease is None and not await _holder(admin)
        assert not await session.take_over()  # never again with this schema, though the Lease is free
        assert session.engine is None and session.viewer_reason == f"viewer: {session.engine_stopped}"
    finally:
        await session.close()


async def test_an_engine_on_its_own_schema_restamped_the_same_goes_on(server, kubeconfig, admin, capsys) -> None:
    """`setup init` of this very version again (or `setup crds | kubectl apply`) changes nothing an engine writes."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        running = asyncio.create_task(session.engine.run()) if session.engine is not None else None
        assert running is not None
        assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
        await asyncio.sleep(0.5)
        assert session.engine is not None and session.engine_stopped is None and not running.done()
        running.cancel()
    finally:
        await session.close()


async def _hold(admin, server, identity: str) -> EngineLease:
    lease = EngineLease(admin, server.clock, "nvcre-system", identity, 3600)
    assert await lease.try_acquire()
    return lease


async def test_a_standby_controller_checks_the_crds_again_when_it_takes_the_lease(server, kubeconfig, admin, capsys) -> None:
    """A standby checked the schema when it started, then waited for the Lease while `setup init` of another version
    ran: it took the Lease and reconciled with its old schema until its guard's next look."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    other = await _hold(admin, server, "ctl-new")
    controller = _controller(kubeconfig, "--identity", "ctl-standby")
    try:
        await asyncio.sleep(1.0)  # it opened (schema checked) and queues for the Lease
        assert not controller.done()
        await _stamp(admin, generation=NEWER, version="9.9.0")
        server.clear_requests()
        await other.release()
        code = await asyncio.wait_for(controller, 15)
    finally:
        if not controller.done():
            await asyncio.wait_for(controller, 15)
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and err[-1].startswith("nvcre controller: http") and err[-1].endswith(BY), err
    assert not await _holder(admin)  # given back at once
    writes = [r for r in server.requests if r.verb not in ("get", "list", "watch") and r.resource != "leases"]
    assert writes == [], writes  # nothing reconciled with the old schema


async def test_a_viewer_console_does_not_take_the_lease_over_on_crds_of_another_version(server, kubeconfig, admin, capsys) -> None:
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    other = await _hold(admin, server, "ctl-new")
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        assert session.engine is None and "held by ctl-new" in (session.viewer_reason or "")
        await _stamp(admin, generation=NEWER, version="9.9.0")
        await other.release()
        assert not await session.take_over()
        assert session.engine is None and session.engine_stopped is not None and session.engine_stopped.endswith(BY)
        assert session.viewer_reason == f"viewer: {session.engine_stopped}" and not await _holder(admin)
        server.clear_requests()
        assert not await session.take_over()  # not while the schema is another's: it does not take the Lease to find the same
        assert server.requests_where(verb="update", resource="leases") == [] and server.requests_where(verb="create", resource="leases") == []
    finally:
        await session.close()


async def test_the_lease_goes_back_only_once_the_key_in_hand_is_written(server, kubeconfig, admin, capsys) -> None:
    """The console's engine stopped, and its Lease went back at once while its last reconcile still wrote: the next
    engine (of the CRDs' version) could take the Lease and meet those writes."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        engine = session.engine
        assert engine is not None and session.lease is not None
        mine = session.lease.identity
        engine.reconciling = True  # a reconcile in flight (its writes not all done)
        await _stamp(admin, generation=NEWER, version="9.9.0")

        async def stopped_engine() -> bool:
            return session.engine is None

        await until(stopped_engine)
        await asyncio.sleep(0.3)
        assert await _holder(admin) == mine  # still held: the key in hand is not written yet
        engine.reconciling = False

        async def given_back() -> bool:
            return not await _holder(admin)

        await until(given_back)
        assert session.lease is None and stopped(session.engine_stopped)
    finally:
        await session.close()


async def test_the_lease_is_still_renewed_while_the_key_in_hand_is_written(server, kubeconfig, admin, capsys,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The console's engine stopped its Lease's renewals first, then waited (up to 30 s) for its last reconcile: a Lease
    of 15 s lapsed meanwhile, and the next engine could take it while those writes went on (what the wait is for)."""
    monkeypatch.setattr(EngineLease.__init__, "__defaults__", (1.5, None))  # a 1.5 s Lease: renewed every 0.5 s
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        engine = session.engine
        assert engine is not None and session.lease is not None and session.lease.duration == 1.5
        engine.reconciling = True  # a reconcile in flight (its writes not all done)
        await _stamp(admin, generation=NEWER, version="9.9.0")

        async def stopped_engine() -> bool:
            return session.engine is None

        await until(stopped_engine)
        await asyncio.sleep(2.5)  # longer than the Lease's duration
        holder = await EngineLease(admin, SystemClock(), "nvcre-system", "probe").holder()
        assert holder is not None and holder.live, holder  # still this engine's: nobody may take it yet
        engine.reconciling = False

        async def given_back() -> bool:
            return not await _holder(admin)

        await until(given_back)
        assert session.lease is None and stopped(session.engine_stopped)
    finally:
        await session.close()


async def test_a_look_the_server_answers_unauthorized_once_is_tried_again(server, kubeconfig, admin, capsys) -> None:
    """A 401 (a ServiceAccount token rotated under the engine, an authentication webhook's hiccup) is a Forbidden to the
    store, which the guard took for CRDs it may not read: it stopped looking for good, and the engine then wrote on over
    CRDs another nvcre re-stamped. It is tried again at the next look, as any other failed look."""
    from tests.kubeapi.faults import Fault

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        engine = session.engine
        assert engine is not None
        running = asyncio.create_task(engine.run())
        once = server.faults.add(Fault(method="GET", path=r"customresourcedefinitions", status=401, message="Unauthorized", times=1))

        async def refused() -> bool:
            return once.hits >= 1

        await until(refused)
        await _stamp(admin, generation=NEWER, version="9.9.0")

        async def ended() -> bool:
            return session.engine is None and running.done() and session.lease is None

        await until(ended)
        assert stopped(session.engine_stopped)
    finally:
        await session.close()


async def test_a_lease_lost_while_the_key_in_hand_is_written_still_waits_for_its_schema(server, kubeconfig, admin, capsys,
                                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The console's engine stopped on CRDs another nvcre re-stamped, and lost its Lease while its last reconcile still
    wrote (a renewal refused: another took it): losing it cancelled the guard before it began to wait for this version's
    schema, so the session stayed a viewer for good, `setup init` of its version notwithstanding, its header saying
    "lost the engine lease" rather than why it runs no engine."""
    from nvcre_tui.engine.kube.session import SCHEMA_RESTORED
    from nvcre_tui.engine.lease import format_micro_time

    monkeypatch.setattr(EngineLease.__init__, "__defaults__", (1.5, None))  # a 1.5 s Lease: renewed every 0.5 s
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        engine = session.engine
        assert engine is not None and session.lease is not None
        engine.reconciling = True  # a reconcile in flight: the guard waits for it, the Lease still held
        await _stamp(admin, generation=NEWER, version="9.9.0")

        async def stopped_engine() -> bool:
            return session.engine is None

        await until(stopped_engine)
        lease = await admin.get(LEASE, EngineLease.NAME, "nvcre-system")  # another engine takes it meanwhile
        lease["spec"] = {**lease["spec"], "holderIdentity": "ctl-new", "leaseDurationSeconds": 3600,
                         "renewTime": format_micro_time(SystemClock().now())}
        await admin.update(LEASE, lease)

        async def lost() -> bool:
            return session.lease is None

        await until(lost)
        engine.reconciling = False
        assert session.viewer_reason == f"viewer: {session.engine_stopped}" and stopped(session.engine_stopped)
        assert (await nvcre(capsys, "setup", "init", "--force", "--kubeconfig", kubeconfig))[0] == 0
        await EngineLease(admin, SystemClock(), "nvcre-system", "ctl-new").release()

        async def took_it() -> bool:
            return await session.take_over()

        await until(took_it)
        assert session.engine is not None and session.engine_stopped is None
        assert session.notices.count(SCHEMA_RESTORED) == 1
    finally:
        await session.close()


async def test_crds_deleted_under_a_stopped_engine_are_not_taken_for_this_versions_schema(server, kubeconfig, admin, capsys) -> None:
    """A console whose engine stopped on CRDs another nvcre re-stamped waits for `setup init` of its version. Once the
    CRDs were deleted (`setup reset`), no CRD carrying another schema read as its own: it said "the nvcre CRDs now carry
    this nvcre's schema (`nvcre setup init` of this version ran)", which nothing ran, and took the Lease to run an
    engine over CRDs that are not there."""
    from nvcre_tui.engine.kube.install import install_crds
    from nvcre_tui.engine.kube.session import SCHEMA_RESTORED
    from nvcre_tui.engine.store.protocol import CRD

    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    try:
        await _stamp(admin, generation=NEWER, version="9.9.0")

        async def stopped_engine() -> bool:
            return session.engine is None and session.lease is None

        await until(stopped_engine)
        for crd in install_crds():
            await admin.delete(CRD, crd["metadata"]["name"])
        await asyncio.sleep(1.0)  # ten looks at the CRDs
        assert SCHEMA_RESTORED not in session.notices
        assert not await session.take_over() and session.engine is None and not await _holder(admin)
    finally:
        await session.close()


async def test_a_session_closed_while_its_stopped_engine_loses_the_lease_leaves_no_schema_wait_running(
        server, kubeconfig, admin, capsys) -> None:
    """close() cancelled the tasks it saw when it began: a wait for this version's schema started meanwhile (the Lease
    lost while close waited for the guard, or the guard's cancellation swallowed while it awaited the Lease's renewals)
    went on reading the CRDs over closed connections for good."""
    assert (await nvcre(capsys, "setup", "init", "--kubeconfig", kubeconfig))[0] == 0
    session = await KubeSession.open(await load_target(kubeconfig), default_catalog(), history=None)
    engine = session.engine
    assert engine is not None
    engine.reconciling = True  # the guard waits for the key in hand, the Lease still held
    await _stamp(admin, generation=NEWER, version="9.9.0")

    async def stopped_engine() -> bool:
        return session.engine is None

    await until(stopped_engine)
    closing = asyncio.create_task(session.close())
    await asyncio.sleep(0)  # close() cancels the guard and waits for it
    await session._lost()  # what the Lease's renewal says meanwhile, once it finds the Lease another's
    await closing
    awaiting = session._awaiting
    assert awaiting is None or awaiting.done(), awaiting
