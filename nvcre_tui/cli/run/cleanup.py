"""`run --wait --cleanup`: the certification deleted after its report (archived first), its children waited for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from nvcre_tui.cli.delete import CLEANUP_WAIT_SECONDS, taking_over
from nvcre_tui.engine.errors import InputError
from nvcre_tui.engine.history.deletion import delete_certification, left_message, wait_collected
from nvcre_tui.engine.printable import printable
from nvcre_tui.engine.store.errors import NotFound, failure_line
from nvcre_tui.engine.store.protocol import CERTIFICATION
from nvcre_tui.engine.units import format_duration

if TYPE_CHECKING:
    from nvcre_tui.engine.session import Session


async def cleanup_certification(session: Session, name: str, namespace: str, uid: str, console: Console) -> None:
    """--cleanup: delete the certification this run created or followed (by its uid: a namesake made since stays),
    archived first (its pull secret with it), and wait for its children to go. A failure is told in one line and
    leaves the run's exit code."""
    try:
        cert = await session.store.get(CERTIFICATION, name, namespace)
        if uid and cert["metadata"].get("uid") != uid:
            console.print(f"[yellow]cleanup: certification {escape(name)} was replaced by a new one meanwhile: left as it is[/]", soft_wrap=True)
            return
        from nvcre_tui.engine.kube.session import authorizer_of

        deletion = await delete_certification(session.store, session.cache, session.archiver, cert, authorizer=authorizer_of(session))
        console.print(escape(printable(deletion.said, newlines=False)), soft_wrap=True)
        left = await wait_collected(session.cache, session.engine, deletion.known, CLEANUP_WAIT_SECONDS,
                                    take_over=taking_over(session, console))
    except NotFound:
        return
    except InputError as error:
        console.print(f"[yellow]cleanup: {escape(printable(str(error), newlines=False))}[/]", soft_wrap=True)
        return
    except Exception as error:  # noqa: BLE001 - a store error, or the engine died while collecting: the run's exit code stands
        console.print(f"[yellow]cleanup: {escape(printable(failure_line(error), newlines=False))}[/]", soft_wrap=True)
        return
    if left:
        console.print(f"[yellow]cleanup: {escape(left_message(left, format_duration(CLEANUP_WAIT_SECONDS)))}[/]", soft_wrap=True)
