"""Where the shipped data folders (catalog/, themes/) live, installed or in a checkout."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from nvcre_tui.engine.errors import InputError

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


def data_dir(name: str) -> Path:
    """Return the folder `name` ("catalog" or "themes").

    NVCRE_CATALOG_DIR / NVCRE_THEMES_DIR win, then the copy inside an installed wheel,
    then the folder at the top of a source checkout (editable installs, tests).
    """
    override = os.environ.get(f"NVCRE_{name.upper()}_DIR")
    if override:
        return Path(override)
    installed = _PACKAGE / "_data" / name
    if installed.is_dir():
        return installed
    return _CHECKOUT / name


def shown_file(name: str, root: Path, relative: str | Path) -> str:
    """How messages name a file of the data folder `name` rooted at `root`: `catalog/x/y.yaml` in the shipped
    folder, else its own path, so an error in a site catalog (NVCRE_CATALOG_DIR) points at the file to fix."""
    shipped = {(_PACKAGE / "_data" / name).resolve(), (_CHECKOUT / name).resolve()}
    return f"{name}/{relative}" if root.resolve() in shipped else str(root / relative)


def home(needed_for: str = "its files", choices: str = "--state PATH and --history PATH") -> Path:
    """The user's home folder: $HOME, else (unset or empty) the password database's, as a login shell would set it.
    Path.home() takes an empty $HOME for the filesystem root: the store went to /.local/state/nvcre/sim.db.
    Without either (a container run as an arbitrary UID, as OpenShift does) an InputError names what to set:
    `needed_for` is the file a default was wanted for, `choices` the flags and variables that name it instead."""
    value = os.environ.get("HOME") or ""
    if value:
        return Path(value)
    try:
        entry = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        entry = ""
    if not os.path.isabs(entry) or entry == "/":
        raise InputError(f"$HOME is {'unset' if 'HOME' not in os.environ else 'empty'} and user {os.getuid()} has no home folder "
                         f"in the password database, so {needed_for} has no default place: set $XDG_STATE_HOME (or HOME) "
                         f"to a writable folder, or give {choices}")
    return Path(entry)


def state_home(needed_for: str = "its files", choices: str = "--state PATH and --history PATH") -> Path:
    """nvcre's folder for its stores and history: $XDG_STATE_HOME/nvcre, else ~/.local/state/nvcre (see home(), which
    `needed_for` and `choices` are for). A relative $XDG_STATE_HOME is ignored, as the XDG spec says: it would name
    another folder from each working directory."""
    base = os.environ.get("XDG_STATE_HOME") or ""
    return (Path(base) if os.path.isabs(base) else home(needed_for, choices) / ".local" / "state") / "nvcre"


class NoHomeFolder(InputError):
    """A path's `~user` names no user on this machine. `reason` says so without the path (for an OSError's text)."""

    def __init__(self, path: str, user: str) -> None:
        # a bare `~` with neither $HOME nor a password entry (a container's arbitrary UID): this user has no home
        self.path, self.reason = path, (f"no user {user!r} on this machine, so no home folder ~{user}" if user else
                                        f"$HOME is unset and user {os.getuid()} has no home folder in the password database, "
                                        "so ~ names no folder: give the path in full")
        super().__init__(f"{path}: {self.reason}")


def typed_path(path: str | os.PathLike[str]) -> Path:
    """A path a user typed (the console's prompts, a flag's value, $KUBECONFIG), `~` and `~user` expanded: every
    `~` nvcre expands goes through here. NoHomeFolder (an InputError naming the path) when `~user` names no user
    (pathlib's expanduser raised RuntimeError "Could not determine home directory.", which ended the console and the CLI)."""
    text = os.fspath(path)
    if (text == "~" or text.startswith("~/")) and not os.environ.get("HOME"):
        # an empty $HOME is unset, as home() takes it: os.path.expanduser made `~/s.db` the filesystem root's /s.db
        try:
            return Path(str(home()) + text[1:])
        except InputError:
            raise NoHomeFolder(text, "") from None
    expanded = os.path.expanduser(text)
    if expanded.startswith("~"):
        raise NoHomeFolder(text, expanded[1:].split("/", 1)[0])
    return Path(expanded)
