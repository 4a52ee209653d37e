"""The one order certifications are shown in: the dashboard's rows, the wall's rotation and `certification list`.

Most urgent first (vocabulary.RESULT_ORDER: unfinished, failed, incomplete, passed), newest first within a result.
The wall rotated by name and `list` went oldest first while the dashboard went by result: three orders of one fleet."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from nvcre_tui.engine.api.bodies import creation_order
from nvcre_tui.engine.api.vocabulary import RESULT_FAILED, RESULT_ORDER, RESULT_RUNNING
from nvcre_tui.engine.controllers import conditions as cond

Obj = Mapping[str, Any]
Cert = TypeVar("Cert", bound=Mapping[str, Any])


def result_of(cert: Obj) -> str:
    """A certification's result as the console shows it: its summary's, else RUNNING while it has not finished (no
    status yet included), else FAILED (the engine ended it before its summary was written). Tolerates damaged parts."""
    status = cert.get("status")
    status = status if isinstance(status, Mapping) else {}
    summary = status.get("summary")
    result = summary.get("result") if isinstance(summary, Mapping) else None
    if isinstance(result, str) and result:
        return result
    return RESULT_FAILED if cond.is_terminal(cert) else RESULT_RUNNING


def in_shown_order(certs: Iterable[Cert], result: Callable[[Cert], str] = result_of) -> list[Cert]:
    """`certs` most urgent result first (RESULT_ORDER; another result after them), newest first within a result
    (api.bodies.creation_order: created in one second, as the store created them)."""
    def rank(cert: Cert) -> int:
        said = result(cert)
        return RESULT_ORDER.index(said) if said in RESULT_ORDER else len(RESULT_ORDER)

    newest_first = sorted(certs, key=lambda cert: creation_order(_raw(cert)), reverse=True)
    return sorted(newest_first, key=rank)  # stable: newest first within a result


def _raw(cert: Obj) -> dict[str, Any]:
    """creation_order's argument, its parts mappings even where damaged (a damaged certification still lists)."""
    metadata, status = cert.get("metadata"), cert.get("status")
    return {"metadata": metadata if isinstance(metadata, Mapping) else {}, "status": status if isinstance(status, Mapping) else {}}
