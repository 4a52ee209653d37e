"""Why a connection was lost mid-answer, in words, for `connection lost while reading (...)`: aiohttp says an answer
cut short (its length or last chunk never came) as Python's repr of its parser's error, `Response payload is not
completed: <TransferEncodingError: 400, message='Not enough data to satisfy transfer length header.'>`, class names a
user cannot read. aiohttp is imported here only when an error is said (a simulated run never imports it)."""

from __future__ import annotations

from ..errors import CUT_SHORT, said

__all__ = ["lost_because"]


def lost_because(error: BaseException) -> str:
    """What ended the answer `error` (an aiohttp connection or payload error) cut: the connection closing before its
    end, or the error's own words (a gzip answer that does not decode, a reset: `[Errno 104] ...`), or, where it has
    none, that it gave no reason."""
    from aiohttp import ClientPayloadError
    from aiohttp.http_exceptions import ContentLengthError, TransferEncodingError

    if isinstance(error, ClientPayloadError) and isinstance(error.__cause__, (ContentLengthError, TransferEncodingError)):
        return CUT_SHORT
    return said(error, f"{CUT_SHORT}, no reason given")
