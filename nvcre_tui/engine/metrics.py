"""Prometheus metrics of the engine (`nvcre controller` serves them), on a registry of our own.

A registry per EngineMetrics (not prometheus-client's global one), so tests and several engines in one
process never see each other's samples.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, make_wsgi_app

from nvcre_tui.engine.api.bodies import certification_status
from nvcre_tui.engine.api.vocabulary import (FAILED, IN_PROGRESS, RESULT_FAILED, RESULT_INCOMPLETE, RESULT_PASSED, RESULT_RUNNING,
                                             SUCCEEDED, VALIDATION_FAILED)
from nvcre_tui.engine.controllers import conditions as cond

__all__ = ["EngineMetrics", "RECONCILE_BUCKETS", "count_objects"]

# Reconciles are milliseconds when they only read, up to seconds when the API server is slow.
RECONCILE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# /healthz fails once the engine's event loop has not beaten for this long (a loop wedged by a blocking call: the
# metrics thread would answer on regardless); the controller beats every HEARTBEAT_SECONDS.
HEARTBEAT_SECONDS = 5.0
STALE_SECONDS = 60.0
# Always exported (0 when none), so a dashboard shows the series before the first certification ends.
CERTIFICATION_RESULTS = (RESULT_RUNNING, RESULT_PASSED, RESULT_FAILED, RESULT_INCOMPLETE)
JOB_PHASES = ("Pending", IN_PROGRESS, SUCCEEDED, FAILED)
Obj = dict[str, Any]


def count_objects(certifications: Iterable[Obj], jobs: Iterable[Obj]) -> tuple[dict[str, int], dict[str, int], int]:
    """(certifications by report result, nvcre Jobs by phase, Jobs that missed a threshold), as `set_objects` takes
    them. A Job whose measurement missed a threshold is phase Succeeded (its workload ran) with ValidationFailed."""
    by_result: dict[str, int] = {}
    for cert in certifications:
        result = (certification_status(cert).get("summary") or {}).get("result") or RESULT_RUNNING
        by_result[result] = by_result.get(result, 0) + 1
    by_phase: dict[str, int] = {}
    validation_failed = 0
    for job in jobs:
        phase = cond.phase(job) or "Pending"
        by_phase[phase] = by_phase.get(phase, 0) + 1
        validation_failed += cond.is_true(job, VALIDATION_FAILED)
    return by_result, by_phase, validation_failed


class EngineMetrics:
    """The engine's metrics: reconcile duration and errors, objects by state, API requests and retries."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.reconcile_duration = Histogram(
            "nvcre_reconcile_duration_seconds", "Time one reconcile of one object took", ["kind"],
            buckets=RECONCILE_BUCKETS, registry=r)
        self.reconcile_errors = Counter(
            "nvcre_reconcile_errors_total", "Reconciles that ended in an error, by error class", ["kind", "class"],
            registry=r)
        self.certifications = Gauge("nvcre_certifications", "Certifications by result", ["result"], registry=r)
        self.jobs = Gauge("nvcre_jobs", "nvcre Jobs by phase", ["phase"], registry=r)
        # Apart from phase (NVCRE's meaning: the workload ran, Succeeded) so an alert on failed Jobs can add these.
        self.jobs_validation_failed = Gauge("nvcre_jobs_validation_failed",
                                            "nvcre Jobs whose measurement missed a threshold (phase Succeeded, ValidationFailed)",
                                            registry=r)
        self.api_retries = Counter("nvcre_api_retries_total", "API requests retried after a transient error",
                                   registry=r)
        self.api_requests = Counter("nvcre_api_requests_total", "API requests by verb and resource",
                                    ["verb", "resource"], registry=r)
        self.lease_held = Gauge("nvcre_engine_lease_held", "1 while this engine holds the nvcre-engine Lease",
                                registry=r)
        for result in CERTIFICATION_RESULTS:
            self.certifications.labels(result=result).set(0)
        for phase in JOB_PHASES:
            self.jobs.labels(phase=phase).set(0)
        # Counters fed from running totals (KubeStore.stats): what was already exported.
        self._retries_seen = 0
        self._requests_seen: dict[tuple[str, str], int] = {}
        self._server: Any = None
        self._beat: float | None = None  # time.monotonic() of the event loop's last heartbeat (None: none yet)

    def beat(self) -> None:
        """The engine's event loop is alive (called from it every HEARTBEAT_SECONDS)."""
        self._beat = time.monotonic()

    def health(self) -> str | None:
        """Why this process is unhealthy (its event loop stopped beating), or None."""
        if self._beat is None:
            return None  # starting: the loop has not run its first beat yet
        silent = time.monotonic() - self._beat
        return f"the engine's event loop has not run for {silent:.0f}s" if silent > STALE_SECONDS else None

    def observe_reconcile(self, kind: str, seconds: float, error: str | None = None) -> None:
        """One reconcile of a `kind` object took `seconds`; `error` is the error's class name, if any."""
        self.reconcile_duration.labels(kind=kind).observe(max(0.0, seconds))
        if error:
            self.reconcile_errors.labels(kind=kind, **{"class": error}).inc()

    def set_objects(self, certifications_by_result: Mapping[str, int], jobs_by_phase: Mapping[str, int],
                    jobs_validation_failed: int = 0) -> None:
        """Current counts; a result or phase no longer present drops to 0."""
        _set_all(self.certifications, "result", certifications_by_result)
        _set_all(self.jobs, "phase", jobs_by_phase)
        self.jobs_validation_failed.set(jobs_validation_failed)

    def set_api_retries(self, total: int) -> None:
        """The store's running total of retries (a smaller total means a new store: counted afresh)."""
        self.api_retries.inc(_delta(self._retries_seen, total))
        self._retries_seen = total

    def set_api_requests(self, totals: Mapping[tuple[str, str], int]) -> None:
        """The store's running totals of requests by (verb, resource plural)."""
        for (verb, resource), total in totals.items():
            seen = self._requests_seen.get((verb, resource), 0)
            self.api_requests.labels(verb=verb, resource=resource).inc(_delta(seen, total))
            self._requests_seen[(verb, resource)] = total

    def set_lease_held(self, held: bool) -> None:
        self.lease_held.set(1 if held else 0)

    def serve(self, port: int, addr: str = "0.0.0.0") -> int:
        """Serve /metrics (and /healthz, for a liveness probe) on `port` (0: any free port) in a daemon thread;
        returns the bound port."""
        # The address family of `addr` (`::` is IPv6), as prometheus-client's own server picks it.
        family = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)[0][0]
        server_class = type("MetricsServer", (_ThreadingServer,), {"address_family": family})
        self._server = make_server(addr, port, self._app(), server_class, handler_class=_QuietHandler)
        threading.Thread(target=self._server.serve_forever, name="metrics", daemon=True).start()
        return int(self._server.server_port)

    def _app(self) -> Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]:
        metrics = make_wsgi_app(self.registry)

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if environ.get("PATH_INFO") != "/healthz":
                return metrics(environ, start_response)
            problem = self.health()
            start_response("503 Service Unavailable" if problem else "200 OK", [("Content-Type", "text/plain; charset=utf-8")])
            return iter([(problem or "ok").encode() + b"\n"])

        return app

    def stop(self) -> None:
        """Stop serving (tests; the controller serves until the process exits)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def render(self) -> bytes:
        """The text exposition format, as a scrape gets it."""
        return generate_latest(self.registry)


def _delta(seen: int, total: int) -> int:
    return total - seen if total >= seen else total


def _set_all(gauge: Gauge, label: str, values: Mapping[str, int]) -> None:
    # Zero the stale series instead of clearing: a scrape from the server thread never sees a gap.
    present = {sample.labels[label] for metric in gauge.collect() for sample in metric.samples}
    for name in present - set(values):
        gauge.labels(**{label: name}).set(0)
    for name, count in values.items():
        gauge.labels(**{label: name}).set(count)


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    """One thread per scrape or probe, none left behind at exit."""

    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr (every scrape and probe would print a line)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass
