"""Engine metrics: the exposition a Prometheus scrape gets, on a registry of our own."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from nvcre_tui.engine.metrics import EngineMetrics, Obj, count_objects


def samples(metrics: EngineMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample as {(name, sorted labels): value}, parsed back from the text exposition."""
    text = metrics.render().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_reconcile_duration_and_errors() -> None:
    metrics = EngineMetrics()
    metrics.observe_reconcile("Job", 0.004)
    metrics.observe_reconcile("Job", 0.3, error="ServerError")
    metrics.observe_reconcile("Workflow", 0.02, error="ServerError")
    got = samples(metrics)
    assert got[("nvcre_reconcile_duration_seconds_count", (("kind", "Job"),))] == 2
    assert abs(got[("nvcre_reconcile_duration_seconds_sum", (("kind", "Job"),))] - 0.304) < 1e-9
    assert got[("nvcre_reconcile_duration_seconds_bucket", (("kind", "Job"), ("le", "0.005")))] == 1
    assert got[("nvcre_reconcile_duration_seconds_bucket", (("kind", "Job"), ("le", "0.5")))] == 2
    assert got[("nvcre_reconcile_errors_total", (("class", "ServerError"), ("kind", "Job")))] == 1
    assert got[("nvcre_reconcile_errors_total", (("class", "ServerError"), ("kind", "Workflow")))] == 1


def test_objects_by_state_drop_to_zero_when_gone() -> None:
    metrics = EngineMetrics()
    assert samples(metrics)[("nvcre_certifications", (("result", "PASSED"),))] == 0  # exported before any run
    metrics.set_objects({"RUNNING": 2, "PASSED": 1}, {"InProgress": 3, "Odd": 1})
    metrics.set_objects({"PASSED": 3}, {"Succeeded": 4})
    got = samples(metrics)
    assert got[("nvcre_certifications", (("result", "PASSED"),))] == 3
    assert got[("nvcre_certifications", (("result", "RUNNING"),))] == 0
    assert got[("nvcre_jobs", (("phase", "Succeeded"),))] == 4
    assert got[("nvcre_jobs", (("phase", "InProgress"),))] == 0
    assert got[("nvcre_jobs", (("phase", "Odd"),))] == 0


def test_api_totals_become_counters() -> None:
    metrics = EngineMetrics()
    metrics.set_api_retries(3)
    metrics.set_api_retries(5)
    metrics.set_api_requests({("get", "certifications"): 4})
    metrics.set_api_requests({("get", "certifications"): 6, ("patch", "jobs"): 1})
    got = samples(metrics)
    assert got[("nvcre_api_retries_total", ())] == 5
    assert got[("nvcre_api_requests_total", (("resource", "certifications"), ("verb", "get")))] == 6
    assert got[("nvcre_api_requests_total", (("resource", "jobs"), ("verb", "patch")))] == 1
    metrics.set_api_retries(2)  # a new store started counting from zero: its 2 retries add up
    assert samples(metrics)[("nvcre_api_retries_total", ())] == 7


def test_count_objects_from_the_stored_objects() -> None:
    certs: list[Obj] = [{"status": {"summary": {"result": "PASSED"}}}, {"status": {}}, {}]
    missed = {"status": {"conditions": [{"type": "Succeeded", "status": "True"}, {"type": "ValidationFailed", "status": "True"}]}}
    jobs: list[Obj] = [{"status": {"conditions": [{"type": "Succeeded", "status": "True"}]}}, {"status": {}}, missed]
    # A Job that missed a threshold ran (phase Succeeded, as NVCRE says it), and is counted apart for an alert.
    assert count_objects(certs, jobs) == ({"PASSED": 1, "RUNNING": 2}, {"Succeeded": 2, "Pending": 1}, 1)
    metrics = EngineMetrics()
    metrics.set_objects(*count_objects(certs, jobs))
    assert samples(metrics)[("nvcre_jobs_validation_failed", ())] == 1


def test_each_instance_has_its_own_registry() -> None:
    first, second = EngineMetrics(), EngineMetrics()
    first.observe_reconcile("Job", 0.1)
    assert ("nvcre_reconcile_duration_seconds_count", (("kind", "Job"),)) not in samples(second)


def test_serve_answers_a_scrape_over_http() -> None:
    metrics = EngineMetrics()
    metrics.set_lease_held(True)
    port = metrics.serve(0, addr="127.0.0.1")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            body = response.read().decode()
    finally:
        metrics.stop()
    assert "nvcre_engine_lease_held 1.0" in body


def test_healthz_answers_while_the_event_loop_beats_and_fails_once_it_stopped() -> None:
    """A liveness probe on /healthz: the metrics thread answers even while the engine's loop is wedged, so the
    answer is the age of the loop's last heartbeat, not that the thread runs."""
    import time
    import urllib.error
    import urllib.request

    from nvcre_tui.engine.metrics import STALE_SECONDS

    metrics = EngineMetrics()
    port = metrics.serve(0, "127.0.0.1")
    try:
        def get(path: str) -> tuple[int, str]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
                    return answer.status, answer.read().decode()
            except urllib.error.HTTPError as error:
                return error.code, error.read().decode()

        assert get("/healthz") == (200, "ok\n")  # starting: no beat yet
        metrics.beat()
        assert get("/healthz") == (200, "ok\n")
        status, body = get("/metrics")
        assert status == 200 and "nvcre_certifications" in body
        metrics._beat = time.monotonic() - STALE_SECONDS - 5  # the loop's last beat, long ago
        status, body = get("/healthz")
        assert status == 503 and body.startswith("the engine's event loop has not run for 6")
    finally:
        metrics.stop()


def test_metrics_are_served_on_an_ipv6_address_too() -> None:
    """--metrics-addr :: (IPv6) binds, as prometheus-client's own server did."""
    import socket
    import urllib.request

    if not socket.has_ipv6:
        import pytest

        pytest.skip("this machine has no IPv6")
    metrics = EngineMetrics()
    try:
        port = metrics.serve(0, "::1")
        with urllib.request.urlopen(f"http://[::1]:{port}/healthz", timeout=5) as answer:
            assert answer.status == 200
    finally:
        metrics.stop()
