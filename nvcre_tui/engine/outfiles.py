"""Writing output files (results, state, saved logs): checked before work starts, written atomically,
and every failure one InputError line naming the path (ENOSPC, EACCES, EISDIR, EROFS ...)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from nvcre_tui.engine.errors import InputError
from nvcre_tui.paths import NoHomeFolder, typed_path

__all__ = ["check_file_named", "check_writable", "env_path", "folder_named", "followed", "replace_file", "write_atomically"]

# Write ends of named pipes opened by check_writable, by (device, inode), until replace_file writes through them:
# closing the probe would hand a reader already waiting (`cat pipe`) an end of file before the output comes.
_PIPES: dict[tuple[int, int], int] = {}


def _open_pipe(target: Path) -> int:
    """The write end of a named pipe, opened without waiting: a plain open would block until a reader comes,
    forever when none does. OSError ENXIO when no process has it open for reading."""
    try:
        return os.open(target, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, "a named pipe that no process reads; start its reader first") from None
        raise


def folder_named(text: str) -> bool:
    """Whether a path names a folder by its form: it ends with a separator ("out/"), which Path() drops, so the file
    written would take the folder's name."""
    return text.endswith(("/", os.sep))


def file_named_message(text: str) -> str:
    """Why a path that ends with a separator is refused where a file is written."""
    return f"{text} ends with '/', a folder's name: name a file"


def check_file_named(text: str, what: str) -> str:
    """`text` (a file to write, from `what`: $NVCRE_STATE ...), or InputError when it names a folder by its form."""
    if folder_named(text):
        raise InputError(f"{what}: {file_named_message(text)}")
    return text


def env_path(name: str) -> Path:
    """The file environment variable `name` ($NVCRE_STATE ...) names for nvcre to write, `~` expanded as check_writable
    expands it (the store opened ./~/sim.db, checked as $HOME/sim.db); InputError naming the variable when it names a
    folder by its form or a home folder no user has."""
    text = check_file_named(os.environ[name], f"${name}")
    try:
        return typed_path(text)
    except NoHomeFolder as error:
        raise InputError(f"${name}: {error}") from None


def _writable(path: Path, info: os.stat_result) -> bool:
    # The mode bits count too: root may write anywhere, but a file or folder without write bits was
    # made read-only on purpose.
    return os.access(path, os.W_OK) and bool(info.st_mode & 0o222)


def followed(target: Path, euid: int | None = None) -> Path:
    """The file a write to `target` lands in. A symbolic link is followed only where the kernel's
    protected_symlinks would follow it on open (the link is the writer's, or its folder's owner's, or the folder
    is not a shared sticky one like /tmp: else anyone could aim a planted link at the writer's files), and only
    into a folder that exists (a dangling link never makes folders). Raises OSError."""
    if not target.is_symlink():
        return target
    link, folder = target.lstat(), target.parent.stat()
    shared = bool(folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH)
    if shared and link.st_uid not in (os.geteuid() if euid is None else euid, folder.st_uid):
        raise PermissionError(errno.EACCES, f"symbolic link in shared folder {target.parent} belongs to someone else; not followed")
    resolved = Path(os.path.realpath(target))
    if not resolved.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"symbolic link to {resolved}, whose folder does not exist")
    return resolved


def check_writable(path: str | os.PathLike[str], what: str = "", *, stream: bool = False) -> None:
    """InputError unless `path` can be written: not a directory, not read-only, in a writable folder. `stream`: an
    output replace_file writes (results, a saved log), which may be a named pipe only while a process reads it (its
    write end is then kept open for replace_file); otherwise a store's caller refuses pipes in its own words."""
    label = f"{what}: " if what else ""
    try:
        target = typed_path(path)
    except NoHomeFolder as error:
        raise InputError(f"{label}{error}") from None
    if isinstance(path, str) and folder_named(path):
        raise InputError(f"{label}{file_named_message(path)}")
    try:
        info = target.stat()
    except FileNotFoundError:
        info = None
    except OSError as error:
        raise InputError(f"{label}{path}: cannot write: {error.strerror or error}") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise InputError(f"{label}{path}: is a directory, not a file")
    if info is not None and not _writable(target, info):
        raise InputError(f"{label}{path}: is read-only; not written")
    if stream and info is not None and stat.S_ISFIFO(info.st_mode):  # a reader must hold it now: found before the work
        if (info.st_dev, info.st_ino) not in _PIPES:
            try:
                _PIPES[(info.st_dev, info.st_ino)] = _open_pipe(target)
            except OSError as error:
                raise InputError(f"{label}{path}: cannot write: {error.strerror or error}") from None
        return
    if info is not None and not stat.S_ISREG(info.st_mode):
        if stream and stat.S_ISCHR(info.st_mode):  # written in place (/dev/stdout, /dev/null): an empty write finds /dev/full now
            try:
                descriptor = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
                try:
                    os.write(descriptor, b"")
                finally:
                    os.close(descriptor)
            except OSError as error:
                raise InputError(f"{label}{path}: cannot write: {error.strerror or error}") from None
        return
    try:
        folder = followed(target).parent  # a symbolic link's file is written, in its folder
    except OSError as error:
        raise InputError(f"{label}{path}: cannot write: {error.strerror or error}") from None
    while not folder.exists() and folder != folder.parent:  # missing folders are created on write
        folder = folder.parent
    try:
        folder_info = folder.stat()
    except OSError as error:
        raise InputError(f"{label}{path}: cannot write: {error.strerror or error}") from None
    if not stat.S_ISDIR(folder_info.st_mode):
        raise InputError(f"{label}{path}: cannot write: {folder} is not a folder")
    if not _writable(folder, folder_info):
        raise InputError(f"{label}{path}: cannot write: folder {folder} is not writable")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def replace_file(path: str | os.PathLike[str], text: str, *, make_parents: bool = True) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`: a failed write leaves
    the old content whole and no temporary file behind. Devices and pipes are written in place (a named pipe
    only when a process reads it: ENXIO otherwise, never a wait); a symbolic link is written through.
    Raises OSError."""
    try:
        target = typed_path(path)
    except NoHomeFolder as error:  # said as the OSError every caller already turns into one line
        raise FileNotFoundError(errno.ENOENT, error.reason) from None
    try:
        info = target.stat()
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "Is a directory")
    if info is not None and stat.S_ISFIFO(info.st_mode):
        descriptor = _PIPES.pop((info.st_dev, info.st_ino), None)
        if descriptor is None:
            descriptor = _open_pipe(target)
        os.set_blocking(descriptor, True)  # a reader holds it: the output waits for it as it reads, as a shell's would
        with open(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        return
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(target, "w", encoding="utf-8") as stream:
            stream.write(text)
        return
    # A symbolic link stays one: the file it names is replaced (renaming over the link would replace the link).
    target = followed(target)
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temporary, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_atomically(path: str | os.PathLike[str], text: str, what: str = "") -> None:
    """replace_file (missing folders created), every failure one InputError line naming the path (and the flag
    `what` that gave it)."""
    try:
        replace_file(path, text)
    except OSError as error:
        raise InputError(f"{f'{what}: ' if what else ''}{path}: cannot write: {error.strerror or error}") from None
