"""One engine at a time: a coordination.k8s.io/v1 Lease, over any ResourceStore.

The holder renews `spec.renewTime` every `duration / 3`; anyone may take the Lease over once
`renewTime + leaseDurationSeconds` has passed (an engine that died stops renewing). Every write is an
update carrying the resourceVersion that was read, so of two contenders exactly one wins (the other
meets Conflict). On the embedded store the same object is the "lease row" (design property 9).

Expiry is judged from the stored renewTime against our clock, as `nvcre setup status` shows it, at the price
of trusting that clocks roughly agree (a holder's clock behind ours by more than the duration would let two
engines overlap; the duration is the margin). A renewTime ahead of our clock (the holder's clock runs fast)
would keep a dead holder's Lease for the whole skew, so each contender also judges as client-go does, by its
own observation: a Lease it has seen unchanged for the duration has expired, whatever its times say.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import socket
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from nvcre_tui.engine.api.bodies import lease_spec
from nvcre_tui.engine.api.stamps import PACKAGE_VERSION
from nvcre_tui.engine.api.vocabulary import ANNOTATION_ENGINE_RUNNER, ANNOTATION_ENGINE_VERSION, ENGINE_NAME, LABEL_PART_OF
from nvcre_tui.engine.clock import Clock, parse_time
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.errors import (AlreadyExists, Conflict, Forbidden, NamespaceTerminating, NotFound, ReadOnlyRefusal,
                                          StoreError, Unauthorized)
from nvcre_tui.engine.store.protocol import LEASE, ResourceStore
from nvcre_tui.engine.units import format_age, format_duration

__all__ = ["LEASE_NAME", "LeaseHolder", "EngineLease", "engine_identity", "format_micro_time", "NO_HOLDER", "nothing_advances"]

LEASE_NAME = ENGINE_NAME
NO_HOLDER = "no engine holds the lease"  # a viewer's header, where no live holder has it (describe_holder)


def nothing_advances(what: str, *, short: bool = False) -> str:
    """Why a RUNNING certification is no progress while no engine holds the Lease: `nothing advances <what> until one
    runs`, as `certification logs --follow`, `report` and `list` say it on stderr (no_engine_note); `short`: without
    `until one runs`, for the console's header, whose badge must fit 80 columns."""
    return f"nothing advances {what}" + ("" if short else " until one runs")
Obj = dict[str, Any]


def format_micro_time(moment: datetime) -> str:
    """Kubernetes MicroTime: `2026-01-01T00:00:00.000000Z` (UTC, microseconds)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def engine_identity(role: str = "engine") -> str:
    """A holder identity naming the process: `<role>@<host>/<pid>` (shown by `nvcre setup status`)."""
    return f"{role}@{socket.gethostname()}/{os.getpid()}"


def _time(spec: Mapping[str, Any], key: str) -> datetime | None:
    value = spec.get(key)
    if not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None  # an unreadable time counts as never renewed: the Lease is up for grabs


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds the engine Lease, and whether their hold is still live at the time it was read."""

    identity: str
    acquired: datetime | None
    renewed: datetime | None
    duration_seconds: int
    live: bool
    transitions: int = 0
    ahead: float = 0.0  # seconds renewTime is ahead of the reader's clock (the holder's clock runs fast)
    runner: str | None = None  # RUNNER_PODS or RUNNER_SIMULATED (ANNOTATION_ENGINE_RUNNER); None: not said by this holder
    version: str | None = None  # its engine's nvcre version (ANNOTATION_ENGINE_VERSION); None: not said (an older nvcre)

    @property
    def skewed(self) -> bool:
        """renewTime is further ahead of the reader's clock than the duration: the clocks disagree."""
        return self.ahead > self.duration_seconds

    def renewal(self, now: datetime) -> str | None:
        """`renewed 4s ago`, or how far ahead of `now` a skewed clock wrote it; None when never renewed."""
        if self.renewed is None:
            return None
        if self.skewed:  # in units, as every age a person reads: "renewTime 3599s ahead" took counting
            return (f"renewTime {format_duration(int(self.ahead))} ahead of this clock: the clocks disagree; "
                    f"it expires once unchanged for {self.duration_seconds}s")
        # a second or so ahead: just now; a holder gone for days reads "renewed 2d3h ago", not "renewed 183600s ago"
        return f"renewed {format_age(max(0, int((now - self.renewed).total_seconds())))} ago"

    @classmethod
    def from_lease(cls, lease: Obj, now: datetime) -> LeaseHolder | None:
        """The holder recorded in a Lease object; None when nobody holds it."""
        spec = lease_spec(lease)
        identity = spec.get("holderIdentity") or ""
        if not identity:
            return None
        renewed = _time(spec, "renewTime")
        duration = int(spec.get("leaseDurationSeconds") or 0)
        live = renewed is not None and renewed + timedelta(seconds=duration) > now
        ahead = max(0.0, (renewed - now).total_seconds()) if renewed is not None else 0.0
        runner, version = _said_by(identity, (lease.get("metadata") or {}).get("annotations") or {})
        return cls(identity, _time(spec, "acquireTime"), renewed, duration, live, int(spec.get("leaseTransitions") or 0), ahead,
                   runner, version)


MAX_VERSION_CHARS = 64


def _said_by(identity: str, annotations: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The runner (ANNOTATION_ENGINE_RUNNER) and version (ANNOTATION_ENGINE_VERSION) the Lease's annotations give its
    holder `identity`: only when the version annotation names that holder. An older nvcre holding the Lease writes no
    version and keeps the annotations of the engine before it (the runner too, or both where it predates the runner's):
    both then are that engine's, not its holder's. The runner's value stays bare ("pods"), as an older reader compares it.
    The version on one line, at a version's length."""
    said = annotations.get(ANNOTATION_ENGINE_VERSION)
    if not isinstance(said, str):
        return None, None
    version, _, holder = said.partition(" ")
    if holder != identity or not version:
        return None, None
    runner = annotations.get(ANNOTATION_ENGINE_RUNNER)
    return (runner if isinstance(runner, str) else None), printable(version, newlines=False)[:MAX_VERSION_CHARS]


class EngineLease:
    """The `nvcre-engine` Lease in one namespace, seen by one contender (`identity`)."""

    NAME = LEASE_NAME

    def __init__(self, store: ResourceStore, clock: Clock, namespace: str, identity: str, duration: float = 15.0,
                 runner: str | None = None) -> None:
        """`runner`: what this contender's engine runs workloads with, said on the Lease it holds (None: a reader)."""
        if not identity:
            raise ValueError("EngineLease: identity must be a non-empty string")
        if not duration > 0:
            raise ValueError(f"EngineLease: duration must be > 0 seconds, got {duration}")
        self.store, self.clock, self.namespace, self.identity = store, clock, namespace, identity
        self.duration, self.runner = duration, runner
        self._last_renewed: float | None = None  # clock.monotonic() of our last successful write
        self._observed: tuple[tuple[str, ...], float] | None = None  # the Lease as last read, and since when (monotonic)
        self._taken: str | None = None  # how a renewal found the Lease not ours (`b holds it now`)
        self._refused_write = "wrote"  # what another client did that refused our last write: wrote it (409), deleted it (404)
        # Why `hold` returned, in words (`b holds it now`, `not renewed for 10s: ...`): "lost the engine lease" alone read
        # as another engine's doing when the API server had stopped answering.
        self.lost_why = ""
        # How the last failed renewal found the Lease's namespace: "gone" (its create: NotFound), "being deleted" (403
        # NamespaceTerminating), else None: nvcre uninstalled under the holder (`setup reset`), not a Lease to queue for.
        self.namespace_lost: str | None = None
        # Whether a renewal failed since the last that succeeded was refused by RBAC (403, not a namespace being deleted):
        # the engine's rights on its own Lease gone, as `setup reset` takes them; what `uninstalled` weighs with its other
        # reads. Kept through later failures: the reset then deletes the engine's ServiceAccount, whose token every later
        # request of a real server's answers 401.
        self.refused = False
        # Whether a renewal failed since the last that succeeded was refused 401 (the server no longer accepts the
        # engine's credentials: its ServiceAccount deleted, as `setup reset` does, or its token expired); kept likewise.
        self.unauthorized = False

    @property
    def duration_seconds(self) -> int:
        """leaseDurationSeconds as stored (whole seconds, rounded up so we never promise less)."""
        return max(1, math.ceil(self.duration))

    # ----- reads ---------------------------------------------------------------------------------------

    async def _read(self) -> Obj | None:
        try:
            return await self.store.get(LEASE, self.NAME, self.namespace)
        except NotFound:
            return None

    def _judge(self, lease: Obj) -> LeaseHolder | None:
        """The Lease's holder, no longer live once this contender has seen the Lease unchanged for its duration
        (client-go's observed time: a renewTime ahead of our clock must not keep a silent holder's hold)."""
        holder = LeaseHolder.from_lease(lease, self.clock.now())
        spec = lease_spec(lease)
        record = (str((lease.get("metadata") or {}).get("resourceVersion") or ""),
                  str(spec.get("holderIdentity") or ""), str(spec.get("renewTime") or ""))
        now = self.clock.monotonic()
        if self._observed is None or self._observed[0] != record:
            self._observed = (record, now)
        elif holder is not None and holder.live and now - self._observed[1] >= holder.duration_seconds:
            holder = replace(holder, live=False)
        return holder

    async def holder(self) -> LeaseHolder | None:
        """The current holder, or None when there is no Lease or nobody holds it."""
        lease = await self._read()
        return None if lease is None else self._judge(lease)

    # ----- writes --------------------------------------------------------------------------------------

    def _spec(self, previous: Mapping[str, Any], *, taking_over: bool) -> Obj:
        now = format_micro_time(self.clock.now())
        spec = dict(previous)
        spec.update(holderIdentity=self.identity, leaseDurationSeconds=self.duration_seconds, renewTime=now)
        if taking_over:
            spec["acquireTime"] = now
            # as client-go counts: every change of holder is a transition, from a released Lease too
            spec["leaseTransitions"] = int(previous.get("leaseTransitions") or 0) + 1
        return spec

    async def _create(self) -> bool:
        lease = {
            "apiVersion": LEASE.api_version, "kind": LEASE.kind,
            "metadata": {"name": self.NAME, "namespace": self.namespace,
                         "labels": {LABEL_PART_OF: "nvcre"}, **self._annotations({})},
            "spec": {**self._spec({}, taking_over=True), "leaseTransitions": 0},
        }
        try:
            await self.store.create(LEASE, lease)
        except AlreadyExists:
            return False  # another contender created it between our get and create
        self._last_renewed = self.clock.monotonic()
        return True

    def _annotations(self, metadata: Mapping[str, Any]) -> Obj:
        """The metadata's annotations with this contender's runner said (nothing to add for a reader)."""
        annotations = dict(metadata.get("annotations") or {})
        if self.runner is None:
            return {"annotations": annotations} if annotations else {}
        return {"annotations": {**annotations, ANNOTATION_ENGINE_RUNNER: self.runner,
                                ANNOTATION_ENGINE_VERSION: f"{PACKAGE_VERSION} {self.identity}"}}

    async def _write(self, lease: Obj, *, taking_over: bool) -> bool:
        metadata = lease.get("metadata") or {}
        updated = {**lease, "metadata": {**metadata, **self._annotations(metadata)},
                   "spec": self._spec(lease_spec(lease), taking_over=taking_over)}
        try:
            await self.store.update(LEASE, updated)  # carries the resourceVersion we read: optimistic
        except (Conflict, NotFound) as error:  # someone else wrote (or deleted) it since we read it
            self._refused_write = "deleted" if isinstance(error, NotFound) else "wrote"
            return False
        self._last_renewed = self.clock.monotonic()
        return True

    async def try_acquire(self) -> bool:
        """Hold the Lease: create it, renew it if ours, or take it over when free or expired."""
        lease = await self._read()
        if lease is None:
            return await self._create()
        holder = self._judge(lease)
        if holder is not None and holder.identity == self.identity:
            return await self._write(lease, taking_over=False)
        if holder is None or not holder.live:
            return await self._write(lease, taking_over=True)
        return False

    async def renew(self) -> bool:
        """Extend our hold; False when it is lost (someone else holds it now, or took it over)."""
        lease = await self._read()
        if lease is None:  # deleted under us (setup reset?): nobody else holds it, unless made again meanwhile
            if not await self._create():
                self._taken = "it was deleted, then made again by another client"
                return False
            return True
        holder = LeaseHolder.from_lease(lease, self.clock.now())
        if holder is None or holder.identity != self.identity:
            self._taken = f"{holder.identity} holds it now" if holder is not None else "it was released by another client"
            return False
        if not await self._write(lease, taking_over=False):
            self._taken = f"another client {self._refused_write} it since it was read"
            return False
        return True

    async def release(self) -> None:
        """Give the Lease up if we hold it, so the next engine need not wait for expiry."""
        lease = await self._read()
        if lease is None or lease_spec(lease).get("holderIdentity") != self.identity:
            return
        spec = {**lease["spec"], "holderIdentity": "", "leaseDurationSeconds": 1,
                "renewTime": format_micro_time(self.clock.now())}
        with contextlib.suppress(Conflict, NotFound):  # changed meanwhile: then it is not ours to release
            await self.store.update(LEASE, {**lease, "spec": spec})
        self._last_renewed = None

    async def _renew_within(self, seconds: float) -> bool:
        """`renew()`, given up (False: not renewed) once `seconds` of the clock pass without its answer."""
        renewal = asyncio.ensure_future(self.renew())
        timer = asyncio.ensure_future(self.clock.sleep(max(0.0, seconds)))
        try:
            await asyncio.wait({renewal, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not renewal.done():
                renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
        if renewal.cancelled() or not renewal.done():
            with contextlib.suppress(asyncio.CancelledError, StoreError):
                await renewal
            return False
        return renewal.result()

    async def hold(self, on_lost: Callable[[], Awaitable[None]] | None = None) -> None:
        """Renew every duration/3 until cancelled. Returns (after `on_lost`) once the Lease is lost:
        taken by someone else, or not renewed for 2/3 of the duration (transient errors), so that we
        stop before anyone else may take over."""
        renew_deadline = self.duration * 2 / 3
        failed: str | None = None  # the last renewal's error since the last renewal that succeeded
        self._taken, self.lost_why, self.namespace_lost, self.refused, self.unauthorized = None, "", None, False, False
        while True:
            await self.clock.sleep(self.duration / 3)
            since = None if self._last_renewed is None else self.clock.monotonic() - self._last_renewed
            try:
                # a renewal that hangs (no answer: a partition, a stalled server; the store retries for a minute
                # and more) must not outlast the deadline: past it another contender may hold the Lease
                # (woken late, past the renew deadline: the time before anyone may take over, halved)
                budget = 0.0 if since is None else renew_deadline - since if since < renew_deadline else (self.duration - since) / 2
                held = await self._renew_within(budget)
            except StoreError as error:
                held = True  # a transient failure is not a loss yet; the deadline below decides
                failed = " ".join(error.message.split())
                # NotFound escapes a renewal only from the create of a deleted Lease: its namespace is missing
                self.namespace_lost = ("being deleted" if isinstance(error, NamespaceTerminating)
                                       else "gone" if isinstance(error, NotFound) else None)
                self.refused = self.refused or (isinstance(error, Forbidden)  # RBAC's 403: not a 401, nor a namespace being deleted
                                                and not isinstance(error, (NamespaceTerminating, Unauthorized, ReadOnlyRefusal)))
                self.unauthorized = self.unauthorized or isinstance(error, Unauthorized)
            since = None if self._last_renewed is None else self.clock.monotonic() - self._last_renewed
            if held and since is not None and since < renew_deadline:
                if since < self.duration / 3:  # renewed just now: what failed before is over
                    failed, self.refused, self.unauthorized = None, False, False
                continue
            if self._taken is not None:
                self.lost_why = self._taken
            elif since is not None:
                self.lost_why = (f"not renewed for {format_duration(since)}: "
                                 + (failed or "the API server did not answer in time"))
            if on_lost is not None:
                await on_lost()
            return
