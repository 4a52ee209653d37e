"""An error with no words of its own (an OSError aiohttp passes on with the arguments of a bare one the socket or TLS
layer raised, a library's bare raise): the transport, a pod log read and kubeconfig loading said its Python class name
instead (`connection lost (ClientOSError)`, `kubeconfig ...: ValueError`). They now say what happened, in words."""

from __future__ import annotations

import pytest

from nvcre_tui.engine.kube import config
from nvcre_tui.engine.store import errors


@pytest.mark.parametrize("error", [OSError(), ConnectionResetError(), ConnectionError(), ValueError(" \n")],
                         ids=["oserror", "reset", "connection", "blank"])
def test_an_error_without_words_is_said_in_words_never_its_class(error: BaseException) -> None:
    assert type(error).__name__ not in config._one_line(error)
    assert config._one_line(error) == config.UNSAID and config._one_line(error, config.UNSAID_TLS) == config.UNSAID_TLS
    assert errors.said(error, errors.CUT_SHORT) == errors.CUT_SHORT


def test_a_connection_lost_without_a_reason_says_so() -> None:
    """aiohttp passes on an OSError the socket or TLS layer raised bare with its (no) arguments: `connection lost
    (ClientOSError)` it read."""
    from aiohttp import ClientOSError

    from nvcre_tui.engine.store.kube.lost import lost_because

    assert lost_because(ClientOSError()) == "the connection closed before the answer ended, no reason given"


def test_an_error_with_words_says_them_on_one_line() -> None:
    assert errors.said(ConnectionResetError(104, "Connection reset\nby peer"), "") == "[Errno 104] Connection reset by peer"
    assert config._one_line(ValueError("oidc: missing configuration")) == "oidc: missing configuration"


def test_a_dropped_watch_stream_says_why_in_words() -> None:
    """It read `watch stream dropped ()` for a stream silent past its read timeout (a TimeoutError has no words), and
    aiohttp's repr for one cut short."""
    from aiohttp import ClientPayloadError
    from aiohttp.http_exceptions import TransferEncodingError

    from nvcre_tui.engine.store.kube.watch import _Garbled, dropped_because

    cut = ClientPayloadError("Response payload is not completed: <TransferEncodingError: 400, message='Not enough data'>")
    cut.__cause__ = TransferEncodingError("Not enough data to satisfy transfer length header.")
    assert dropped_because(TimeoutError(), 330.0) == "no data within 330s"
    assert dropped_because(cut, 330.0) == "the connection closed before the answer ended"
    assert dropped_because(_Garbled('{"type":"ADD'), 330.0) == "cut mid-event: a line that is no JSON, '{\"type\":\"ADD'"
