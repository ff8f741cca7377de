"""Score files, the hand-off between scoring and search: GOBNILP/Jaakkola files, and URLearning's PSS files
(:func:`parse_pss`, :func:`format_pss`; :func:`read_score_file` reads either, :func:`write_score_file` writes PSS
where the name ends in ``.pss``).

Format (Jaakkola et al. 2010; GOBNILP, pygobnilp)::

    n                      number of variables
    NAME k                 a variable and the number of its candidate parent sets
    SCORE m P1 ... Pm      k lines: local score (higher is better), parent count, parent names
    ...

bnilp writes sections best-first with full ``repr`` precision and no comments (GOBNILP's and
pygobnilp's readers take the first line as n). Settings go to a JSON sidecar ``FILE.json``.
The reader is token-based: it accepts ``#`` comment lines, any spaces or tabs between tokens and lines
anywhere but inside a parent set (its parents are on its score's line), plain ASCII numbers (strtod's
spellings), and rejects a malformed or truncated file with ``file:line`` and what it expected.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import numbers
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bnilp.errors import InputError, OutputError, check_flag, check_path, not_utf8
from bnilp.inputs import read_input_text
from bnilp.threads import WAITING_FOR_A_READER

Families = dict[str, dict[frozenset[str], float]]
#: the sidecar's field holding the SHA-256 of the score file's text it was written with
SIDECAR_HASH = "score_file_sha256"
#: the sidecar's field saying its record was copied from a file that no hash tied to one (a PSS header, a sidecar
#: older than the hash): written again, it keeps what it claims, unchecked (:func:`record_unvouched`)
RECORD_UNVOUCHED = "record_unvouched"


def record_unvouched(meta: Mapping[str, Any]) -> bool:
    """Whether a table's record was read from a file without a sidecar bnilp wrote for it (a PSS header's
    ``score_type``, a sidecar older than :data:`SIDECAR_HASH`), or copied from one (:data:`RECORD_UNVOUCHED`): what
    it claims — score equivalence above all — is assumed, not known. Writing such a table stamps a hash on its new
    sidecar, so without the flag a PSS file claiming BIC for scores that are not score-equivalent came back vouched
    and its classes were listed unchecked (a review: 2 DAGs of one class at BF 1 where one is credible)."""
    read_from_a_file = "pss" in meta or "n_parent_sets" in meta
    return bool(meta.get(RECORD_UNVOUCHED)) or (read_from_a_file and SIDECAR_HASH not in meta)


@dataclass
class ScoreTable:
    """Candidate parent sets and their local scores.

    ``variables`` keeps file order; ``families[child][parents] = local score`` (higher is better).
    ``meta`` holds how the table was made (score, settings, ε, palim, pruning counts …).
    """

    variables: list[str]
    families: Families
    meta: dict[str, Any] = field(default_factory=dict)
    #: background knowledge the search must also enforce (:func:`bnilp.knowledge.restrict_table` sets it)
    knowledge: Any = None

    def __repr__(self) -> str:
        """A summary (the generated repr printed every family: megabytes for a large table)."""
        sets = sum(len(f) for f in self.families.values())
        return (f"ScoreTable({len(self.variables)} variables, {sets} parent sets, score={self.meta.get('score')!r}, "
                f"epsilon={self.meta.get('epsilon')!r})")

    def n_parent_sets(self) -> int:
        """The number of candidate parent sets over all variables."""
        return sum(len(f) for f in self.families.values())

    def sorted_family(self, child: str) -> list[tuple[frozenset[str], float]]:
        """Parent sets of ``child`` best first; ties by size then names (deterministic)."""
        items = self.families[child].items()
        return sorted(items, key=lambda kv: (-kv[1], len(kv[0]), sorted(kv[0])))

    def network_score(self, parents: dict[str, frozenset[str]]) -> float:
        """Exact total score of a network (``math.fsum`` of its local scores)."""
        return math.fsum(self.families[v][frozenset(parents[v])] for v in self.variables)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: where the system shows this process's open descriptors as files (Linux, macOS; not Windows)
DESCRIPTOR_FOLDER = "/dev/fd"

#: the longest file name, in bytes, that check_writable lets through (NAME_MAX of Linux, macOS and NTFS)
NAME_MAX = 255


def open_descriptor(path: str | os.PathLike[str]) -> int | None:
    """The descriptor of this process an output path names — ``-`` and ``/dev/stdout`` (1), ``/dev/stderr`` (2),
    ``/dev/fd/N`` or ``/proc/self/fd/N`` (N) — else None. Such a path is written into that open descriptor,
    whatever it leads to: with stdout redirected to a log (``>> log``) the name resolves to the log file, and
    replacing that file (or reopening it for writing, which truncates) destroyed what the log held. (``-`` wrote a
    file named ``-``, found by a review; such a file is named with a folder other than ``.``: ``$PWD/-``.)"""
    text = os.path.normpath(os.fspath(path)).replace(os.sep, "/")     # Windows: normpath gives \dev\stdout
    named = {"-": 1, "/dev/stdout": 1, "/dev/stderr": 2}.get(text)
    if named is not None:
        return named
    # the names, not DESCRIPTOR_FOLDER: '/dev/fd/N' names descriptor N also where that folder is missing (Windows)
    match = re.fullmatch(r"/(?:dev|proc/self)/fd/([0-9]+)", text)
    return int(match.group(1)) if match else None


def _is_open(descriptor: int) -> bool:
    try:
        os.fstat(descriptor)
    except OSError:
        return False
    return True


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names an open descriptor (:func:`open_descriptor`) or is (or links to) something that
    exists and is neither a regular file nor a directory: a device (``/dev/null``), a FIFO or a socket —
    written into, not replaced."""
    if open_descriptor(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode          # follows links
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


#: errors of writing a file out (no space, a size limit, a quota, a device error, a read-only file system): one
#: line naming the output (:class:`OutputError`), not a traceback
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO, errno.EROFS})


def _cannot_write(path: str | os.PathLike[str], exc: OSError) -> OutputError:
    return OutputError(f"{os.fspath(path)}: cannot be written ({exc.strerror or exc})")


@dataclass
class _Pending:
    """One output written to its temporary file ``tmp``, waiting to be put at ``path``."""

    tmp: str
    path: Path
    stream: bool


@dataclass
class _Replaced:
    """A file of a set being put in place: whether a file was there before and the copy of it kept (a hard link,
    else a copy; None where neither could be made), until the whole set is in place."""

    path: Path
    existed: bool
    backup: str | None
    replaced: bool = False
    #: the replaced file's (device, inode), where it existed: what :meth:`put_back` checks is still there before it
    #: removes a copy (``replaced`` is set only after the rename returns: an interrupt between the two)
    identity: tuple[int, int] | None = None

    def put_back(self) -> bool:
        """The path as it was before the set (False: a file that was there is lost — no copy of it was kept)."""
        with contextlib.suppress(OSError):
            if self.backup is not None:
                os.replace(self.backup, self.path)
                return True
            if not self.existed:
                _remove(str(self.path))
                return True
        with contextlib.suppress(OSError):
            if self.backup is not None and os.path.samefile(self.backup, self.path):
                mode = stat.S_IMODE(os.stat(self.path).st_mode)
                _remove(self.backup)    # never replaced, and the system refuses renames onto it (Windows: a file
                os.chmod(self.path, mode)   # open in another program): the ".NAME.….old" link was left beside it
                return True             # (its mode is the file's: removing a read-only link made both writable)
        if self.backup is not None and not self.replaced and self.identity is not None \
                and self.identity == _identity(self.path):
            # a copy (no hard link could be made: an immutable file, another user's in a folder with the sticky bit)
            # of a file the system would not let be replaced, which is still there: the copy goes (a review found
            # one ".NAME.….old" more beside the file after every refused run)
            with contextlib.suppress(OSError):
                _remove(self.backup)
            return True
        return not self.replaced and self.backup is None    # a copy kept: the file at the path is no longer it


@dataclass
class _OutputSet:
    """The outputs of one :func:`output_set` block and the folders made for them; ``closed`` once committed or
    discarded (a context copied while it was open — an asyncio task — must not write into it afterwards)."""

    pending: list[_Pending] = field(default_factory=list)
    made: list[Path] = field(default_factory=list)
    closed: bool = False
    #: files removed once the set is in place, unless the set writes them (:meth:`retire`)
    retired: list[Path] = field(default_factory=list)

    def retire(self, path: Path) -> None:
        """``path`` removed when the set is committed (not when it is discarded), unless one of its outputs is put
        there: a report folder's files of an earlier run that this one does not write."""
        self.retired.append(path)

    def make_folder(self, folder: Path) -> None:
        """``folder`` and its missing ancestors made, each recorded (a set that fails removes them again)."""
        folder = Path(os.path.realpath(folder))     # a dangling link on the path: the folder it names is made
        missing = []
        above = folder
        while not above.exists() and above != above.parent:
            missing.append(above)
            above = above.parent
        folder.mkdir(parents=True, exist_ok=True)
        self.made.extend(reversed(missing))

    def discard(self, since: tuple[int, int] = (0, 0)) -> None:
        """Every temporary file removed, every folder made (and left empty) removed: nothing of the set stays —
        or, ``since`` (lengths of :attr:`pending` and :attr:`made` when a nested block began), nothing of what
        was added after."""
        for entry in self.pending[since[0]:]:
            _remove(entry.tmp)
        del self.pending[since[0]:]
        for folder in reversed(self.made[since[1]:]):
            with contextlib.suppress(OSError):
                folder.rmdir()                  # only when empty: a folder the user filled meanwhile stays
        del self.made[since[1]:]

    def commit(self) -> None:
        """Streams first (a device, FIFO or descriptor: written into, the likeliest to fail — ``/dev/full``, a
        closed pipe), then each file renamed over its path, the file it replaces kept (a hard link, else a copy)
        until all are in place: a rename refused (an immutable file) puts the replaced files back and removes
        the new ones, so the set is whole or absent."""
        try:
            for entry in [e for e in self.pending if e.stream]:
                descriptor = open_descriptor(entry.path)
                if descriptor is None:
                    _copy_into(entry.tmp, entry.path)
                else:
                    _write_descriptor(entry.tmp, descriptor, entry.path)
            self._rename_all([e for e in self.pending if not e.stream])
        except BaseException:
            self.discard()
            raise
        for entry in self.pending:
            _remove(entry.tmp)
        written = {os.path.realpath(entry.path) for entry in self.pending}
        for path in self.retired:
            if os.path.realpath(path) not in written and not os.path.isdir(path):
                with contextlib.suppress(OSError):
                    _remove(str(path))
        self.pending.clear()
        self.retired.clear()

    @staticmethod
    def _rename_all(files: list[_Pending]) -> None:
        done: list[_Replaced] = []
        try:
            for entry in files:
                existed = os.path.lexists(entry.path)
                step = _Replaced(entry.path, existed, _keep_beside(entry.path) if existed else None,
                                 identity=_identity(entry.path) if existed else None)
                done.append(step)           # before the rename: an interrupt just after it is undone too
                try:
                    os.chmod(entry.tmp, _mode_for(entry.path))
                    os.replace(entry.tmp, entry.path)
                except OSError as exc:
                    raise _cannot_write(entry.path, exc) from None
                step.replaced = True
        except BaseException as exc:
            lost = [str(step.path) for step in reversed(done) if not step.put_back()]
            if lost and isinstance(exc, OutputError):
                raise OutputError(f"{exc}; already replaced, and no copy could be kept to put back: "
                                  f"{', '.join(lost)}") from None
            raise
        for step in done:
            if step.backup is not None:
                _remove(step.backup)


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path`` (None where there is none)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _remove(path: str) -> None:
    """``path`` removed (gone already is fine). Windows refuses to remove a read-only file — a temporary file takes
    the mode of the file it replaces (:func:`_mode_for`), so over a read-only output a refused rename left a
    ``PermissionError`` traceback in place of its one line: the file is made writable and removed again."""
    with contextlib.suppress(FileNotFoundError):
        try:
            os.unlink(path)
        except PermissionError:
            if os.stat(path).st_mode & stat.S_IWRITE:   # not read-only (POSIX: the folder refuses): no help here
                raise
            os.chmod(path, stat.S_IWRITE | stat.S_IREAD)
            os.unlink(path)


def _keep_beside(path: Path) -> str | None:
    """What lies at ``path`` kept under a fresh name in its folder until a set is in place: a hard link, else
    (a file system without hard links, or a file at its link limit) a copy; None where neither can be made."""
    for _ in range(8):
        backup = path.parent / f".{path.name[:40]}.{os.urandom(6).hex()}.old"
        try:
            os.link(path, backup, follow_symlinks=False)
            return str(backup)
        except FileExistsError:
            continue
        except OSError:
            break
    else:
        return None
    try:
        shutil.copy2(path, backup, follow_symlinks=False)
        return str(backup)
    except OSError:
        _remove(str(backup))
        return None


_OUTPUT_SET: ContextVar[_OutputSet | None] = ContextVar("bnilp_output_set", default=None)


@contextmanager
def output_set() -> Iterator[_OutputSet]:
    """The files :func:`atomic_output` writes inside the block are put in place together when it ends, or none
    of them: a command's outputs (``--json``, ``--report``, ``--dot``; a score file and its sidecar; simulated
    data and its truth) are one result, and a write that fails half-way (no space, a size limit, a file that
    may not be replaced) left some written and others not — a score file without its sidecar, a JSON saying
    ``complete`` without the report. An exception out of the block discards them all (and the folders made
    for them). A nested block belongs to the outermost; an exception out of it discards what it added (so a
    caller that catches it keeps no half of, say, a score file and its sidecar)."""
    outer = _OUTPUT_SET.get()
    if outer is not None and not outer.closed:
        since = (len(outer.pending), len(outer.made))
        try:
            yield outer
        except BaseException:
            outer.discard(since)
            raise
        return
    current = _OutputSet()
    token = _OUTPUT_SET.set(current)
    try:
        yield current
    except BaseException:
        current.closed = True
        current.discard()
        raise
    finally:
        _OUTPUT_SET.reset(token)
    current.closed = True
    current.commit()


def check_file_name(raw: str) -> None:
    """An :class:`InputError` where the path ``raw`` names a folder by its form — it ends in ``/`` (or ``/.``,
    ``/..``) —, which ``Path`` would drop and write the file it names without (:func:`atomic_output`)."""
    if raw.endswith(tuple({"/", os.sep, os.altsep or "/"})) or os.path.basename(raw) in (".", ".."):
        dot = "" if raw.endswith(tuple({"/", os.sep, os.altsep or "/"})) else " and a dot"
        raise InputError(f"{raw} ends in '/'{dot}: it names a folder, give a file name")


@contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success it is renamed to ``path`` (atomic on POSIX) — at the
    end of the enclosing :func:`output_set`, with the other outputs of the set, if there is one.

    On an exception the temporary file is removed and ``path`` is left as it was; a write that fails (no space,
    a size limit) is an :class:`OutputError` naming ``path``. A symbolic link stays: the file it points to is
    replaced. A device, FIFO or socket (:func:`is_stream`) gets the whole file copied into it once it is
    complete (the temporary file then lies in the system's temporary folder, which an error then names):
    renaming a file over ``/dev/null`` replaced the device with a regular file, and a reader of ``/dev/stdout``
    or a FIFO got nothing. A path that ends in ``/`` (or ``/.``, ``/..``) names a folder: an :class:`InputError`
    (``Path`` drops the slash, and the API wrote ``out.bif/`` and ``out.bif/.`` as ``out.bif``, or said "Is a
    directory" where there was none: two reviews).
    """
    raw = check_path(path, "path")
    check_file_name(raw)
    path = Path(raw)
    stream = is_stream(path)
    if not stream and path.is_symlink():
        path = Path(os.path.realpath(path))
    check_writable(path, probe=False)   # a directory there, no permission: one line (mkstemp below tries the folder)
    folder = Path(tempfile.gettempdir()) if stream else path.parent if str(path.parent) else Path(".")
    where = Path(f"{path} (through the temporary folder {folder})") if stream else path
    with output_set() as outputs:
        try:
            outputs.make_folder(folder)
            # the name's head only: the temporary name must not pass the file system's limit where the name does not
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise _cannot_write(where, exc) from None
        os.close(fd)
        outputs.pending.append(_Pending(tmp, path, stream))
        try:
            yield tmp
        except OSError as exc:      # out of this block (a set of its own) the temporary file is discarded
            if exc.errno in _WRITE_ERRNOS:
                raise _cannot_write(where, exc) from None
            raise


def _mode_for(path: Path) -> int:
    """The permissions a file written at ``path`` gets: those of the file it replaces (a private ``chmod 600``
    result stays private), else what ``open`` would give under the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _write_descriptor(source: str, descriptor: int, name: Path) -> None:
    """``source``'s bytes written into the open ``descriptor`` (after what Python's own stdout/stderr buffers
    hold), appending where it appends; an error is one line naming ``name``."""
    for handle in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            handle.flush()
    try:
        with open(source, "rb") as src:
            while chunk := src.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(descriptor, view):]
    except BrokenPipeError:
        raise               # the reader left (`| head`): not the output's fault (see _copy_into)
    except OSError as exc:
        raise _cannot_write(name, exc) from None


def _opened_for_writing(stream: Path):
    """``open(stream, "wb")``, with :data:`~bnilp.threads.WAITING_FOR_A_READER` set while it waits: opening a
    FIFO blocks until a reader opens it, and a signal meanwhile must be able to end the run."""
    WAITING_FOR_A_READER.set()
    try:
        return open(stream, "wb")
    finally:
        WAITING_FOR_A_READER.clear()


def _copy_into(source: str, stream: Path) -> None:
    """``source``'s bytes written into the device or FIFO ``stream`` (an error, one line naming it)."""
    try:
        with open(source, "rb") as src, _opened_for_writing(stream) as dst:
            shutil.copyfileobj(src, dst)
    except BrokenPipeError:
        raise               # the reader left; the command line ends quietly with exit 1, as click does for stdout
    except OSError as exc:
        raise _cannot_write(stream, exc) from None


def check_writable(path: str | os.PathLike[str], folder: bool = False, probe: bool = True) -> None:
    """Raise :class:`InputError` unless ``path`` (a file, or with ``folder`` a directory) could be written by
    :func:`atomic_output`: not an existing directory (file) or file (folder), and its nearest existing
    ancestor a directory this process may write in — tried by making and removing an empty file there (a
    permission check alone lets root through to /proc and /sys; ``probe`` False skips that try, for a caller that
    makes its own file there at once). Leaves nothing — for checking output paths before the work that fills them."""
    path = Path(path)
    long = [part for part in path.parts if len(os.fsencode(part)) > NAME_MAX]
    if long:                        # before any look at the path: the system refuses even to say it is not there
        raise InputError(f"{path}: cannot be written ({long[0][:20]}… is longer than the {NAME_MAX} bytes a file "
                         "name may have)")
    if path.exists() and path.is_dir() != folder:
        raise InputError(f"{path}: is {'a file' if folder else 'a directory'}")
    if folder and open_descriptor(path) is not None:       # '-' made a folder named '-' (and sent the terminal's
        raise InputError(f"{path}: names a stream, and this is a folder")   # report to stderr: a review)
    if not folder and is_stream(path):      # a device or FIFO: written into (atomic_output), not made beside
        descriptor = open_descriptor(path)
        if descriptor is not None and not _is_open(descriptor):
            raise InputError(f"{path}: cannot be written (descriptor {descriptor} is not open)")
        named = path if descriptor is None else Path(DESCRIPTOR_FOLDER, str(descriptor))
        if (descriptor is None or named.exists()) and not os.access(named, os.W_OK):   # no /dev/fd: Windows
            raise InputError(f"{path}: cannot be written (no permission)")
        return
    # through symbolic links, dangling ones too (:meth:`_OutputSet.make_folder` makes the folder such a link names;
    # walked as missing, a dangling link passed here and failed after the work: "File exists", a review)
    real = Path(os.path.realpath(path))
    above = real if folder and real.exists() else real.parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise InputError(f"{path}: cannot be written ({above} is not a directory)")
    if not os.access(above, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot be written (no permission in {above})")
    if not folder and real.parent == above and _sticky_refuses(real):
        raise InputError(f"{path}: cannot be written (it belongs to another user, in a folder with the sticky bit: "
                         "it may not be replaced)")
    if not probe:
        return
    try:                            # root passes os.access everywhere; /proc and /sys refuse it a file all the same
        fd, tried = tempfile.mkstemp(prefix=".bnilp-probe.", dir=above)
    except OSError as exc:
        raise InputError(f"{path}: cannot be written (no file can be made in {above}: "
                         f"{exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(tried)


def _sticky_refuses(path: Path) -> bool:
    """Whether the system refuses to replace the file at ``path`` by a rename: its folder has the sticky bit (as
    ``/tmp``) and neither the folder nor the file is this user's (POSIX, not root). ``os.access`` says yes to such
    a file, and the run failed after its work (a review: another user's ``r.json`` in a shared folder)."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None or geteuid() == 0:
        return False
    try:
        file_stat, folder_stat = os.stat(path), os.stat(path.parent)
    except OSError:
        return False
    return bool(folder_stat.st_mode & stat.S_ISVTX) and geteuid() not in (file_stat.st_uid, folder_stat.st_uid)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def strict_json(x: Any) -> Any:
    """Strict JSON (RFC 8259 has no NaN or infinity): non-finite floats (an unbounded gap, ε = ∞)
    become null, in mappings, lists and tuples at any depth."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, Mapping):
        return {k: strict_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [strict_json(v) for v in x]
    return x


def format_jaakkola(table: ScoreTable) -> str:
    """The table as Jaakkola text (sections in ``table.variables`` order, best-first)."""
    lines = [str(len(table.variables))]
    for child in table.variables:
        family = table.sorted_family(child)
        lines.append(f"{child} {len(family)}")
        for parents, score in family:
            names = sorted(parents, key=table.variables.index)
            lines.append(" ".join([repr(float(score)), str(len(names)), *names]))
    return "\n".join(lines) + "\n"


def check_score_file_names(names: list[str], where: str = "", path: str | os.PathLike[str] | None = None, *,
                           pss: bool | None = None) -> None:
    """Names a score file can hold: not empty, no whitespace (it separates the tokens), no leading ``#`` (a
    comment line), and for a PSS file (``pss``, or by default ``path`` ending in :data:`PSS_SUFFIX`) none that
    URLearning's reader would misread (:func:`pss_unreadable_name`) — else an :class:`InputError` (``where``: what
    asks for the file, e.g. ``--scores``), which the commands raise from the data's columns before any scoring."""
    if pss is None:
        pss = path is not None and score_file_format(path) == "pss"
    for name in names:
        if not name or any(ch.isspace() for ch in name) or name.startswith("#"):
            raise InputError(f"{where}{': ' if where else ''}variable name {name!r} cannot be written to a score file "
                             "(empty, contains whitespace or starts with '#')")
        why = pss_unreadable_name(name) if pss else ""
        if why:
            raise InputError(f"{where}{': ' if where else ''}variable {name!r} cannot be written to a PSS file: its "
                             f"name {why} (write a Jaakkola score file instead: a name not ending in {PSS_SUFFIX})")


def write_jaakkola(table: ScoreTable, path: str | os.PathLike[str], sidecar: bool = True) -> str | None:
    """Write the score file atomically, and its JSON sidecar ``path + '.json'`` when asked and ``path`` is a file
    (a stream has none); not a table the reader would refuse (:func:`check_table`: it wrote a variable as its own
    parent, an empty family, NaN, and raised ``KeyError``/``TypeError`` on others — a review). Returns the sidecar's
    path, or None where none was written."""
    check_is_table(table)
    return _write_table(table, check_path(path, "path"), sidecar, format_jaakkola)


def _write_table(table: ScoreTable, path: str, sidecar: bool, formatter: Any, pss: bool = False) -> str | None:
    """:func:`write_jaakkola` and :func:`write_pss`: the table in ``formatter``'s text and its sidecar."""
    sidecar = check_flag(sidecar, "sidecar")       # 0, '' or None wrote none, 'no' one (a review)
    check_table(table, os.fspath(path))    # what the reader would refuse (a self-parent, NaN, …) is not written
    check_score_file_names(table.variables, os.fspath(path) if pss else "", pss=pss)
    body = formatter(table)
    with output_set():                          # both or neither (a file without its sidecar loses its provenance)
        atomic_write_text(path, body)
        if sidecar and not is_stream(path):        # /dev/null, stdout, a pipe: no file to put a sidecar beside
            meta = dict(table.meta)
            if record_unvouched(meta):
                meta[RECORD_UNVOUCHED] = True
            meta["n_variables"] = len(table.variables)
            meta["n_parent_sets"] = table.n_parent_sets()
            meta[SIDECAR_HASH] = hashlib.sha256(body.encode("utf-8")).hexdigest()
            text = json.dumps(strict_json(meta), indent=2, default=str, allow_nan=False)
            atomic_write_text(sidecar_path(path), text + "\n")
            return sidecar_path(path)
    return None


#: the score-file formats bnilp reads and writes (:func:`read_score_file`, :func:`write_score_file`)
SCORE_FILE_FORMATS = ("jaakkola", "pss")
#: the name ending that makes :func:`write_score_file` (``bnilp score -o``, ``learn --scores``) write PSS
PSS_SUFFIX = ".pss"
#: bnilp's score names → URLearning's (``META score_type``); a PSS file's other names are kept, in lower case
PSS_SCORE_TYPES = {"bic": "BIC", "bdeu": "BDeu"}
#: URLearning's score names (``META score_type``) beside bnilp's own (:data:`bnilp.scores.REGISTRY`): fNML is
#: URLearning's, not score-equivalent
PSS_OTHER_SCORES = ("fnml",)
#: bnilp's own header field: the size up to which a table a palim cut is exact (``parent_limit`` cannot say 0)
PSS_EXACT_KEY = "exact_for_parent_sets_up_to"


def score_file_format(path: str | os.PathLike[str]) -> str:
    """The format :func:`write_score_file` writes to ``path``: ``"pss"`` for a name ending in :data:`PSS_SUFFIX`
    (any case), else ``"jaakkola"`` (a stream, ``-``, included)."""
    return "pss" if os.fspath(path).lower().endswith(PSS_SUFFIX) else "jaakkola"


def pss_unreadable_name(name: str) -> str:
    """Why URLearning's reader would misread a file naming variable ``name``, or "". Its reader (Malone's
    URLearning, ``score_cache.cpp``, read for the format, not copied) takes any line that *contains* "meta" (any case)
    for a META line and any line that contains "var " for a new variable, so a parent set of ``metastasis`` would
    be skipped and ``covar X`` read as a variable; it splits a line at spaces alone."""
    low = name.lower()
    if "meta" in low:
        return "contains 'meta', and URLearning's reader takes every line containing 'meta' for a META line"
    if low.endswith("var"):
        return "ends in 'var', and URLearning's reader takes every line containing 'var ' for a new variable"
    return ""


def format_pss(table: ScoreTable) -> str:
    """The table as a PSS file ("parent set scores", URLearning's format; Malone, Yuan et al. 2011–2014)::

        META pss_version = 0.1
        META num_records=N            (where the table's record has N)
        META parent_limit=K           (n − 1, as URLearning writes it, for a table no palim cut)
        META exact_for_parent_sets_up_to=K   (bnilp's: a table a palim cut; parent_limit then K, if K ≥ 1)
        META score_type=BIC           (BIC, BDeu, or bnilp's score name; none where the record has no score)
        META ess=1.0                  (BDeu)

        VAR NAME
        META arity=R                  (where the record has the arities)
        SCORE P1 P2 …                 a line per parent set: local score (higher is better), then its parents

    Sections in ``table.variables`` order, sets best-first, scores at full ``repr`` precision (URLearning writes 6
    decimals of a 32-bit float; its reader takes any)."""
    meta = table.meta
    score = meta.get("score")
    lines = ["META pss_version = 0.1"]
    if isinstance(meta.get("N"), int):
        lines.append(f"META num_records={meta['N']}")
    cut = exact_up_to(meta) if meta.get("palim_reached") else None
    if cut is None:
        lines.append(f"META parent_limit={max(0, len(table.variables) - 1)}")
    else:
        lines += [f"META parent_limit={cut}"] if cut >= 1 else []
        lines.append(f"META {PSS_EXACT_KEY}={cut}")
    if isinstance(score, str):
        lines.append(f"META score_type={PSS_SCORE_TYPES.get(score, score)}")
    if score == "bdeu" and meta.get("ess") is not None:
        lines.append(f"META ess={float(meta['ess'])!r}")
    arities = meta.get("arities") if isinstance(meta.get("arities"), Mapping) else {}
    for child in table.variables:
        lines += ["", f"VAR {child}"]
        if isinstance(arities.get(child), int):
            lines.append(f"META arity={arities[child]}")
        for parents, value in table.sorted_family(child):
            lines.append(" ".join([repr(float(value)), *sorted(parents, key=table.variables.index)]))
    return "\n".join(lines) + "\n"


def exact_up_to(meta: Mapping[str, Any]) -> int | None:
    """The parent-set size up to which a table cut by its palim is exact: ``exact_for_parent_sets_up_to``, else
    its ``palim`` (0 is a size, not a missing value; the sidecar reader requires one of them with
    ``palim_reached``)."""
    exact = meta.get("exact_for_parent_sets_up_to")
    return meta.get("palim") if exact is None else exact


def write_score_file(table: ScoreTable, path: str | os.PathLike[str], sidecar: bool = True) -> str | None:
    """Write ``table`` as PSS where ``path`` ends in :data:`PSS_SUFFIX` (:func:`write_pss`), else as Jaakkola text
    (:func:`write_jaakkola`), with the same JSON sidecar either way; returns the sidecar's path or None."""
    if score_file_format(check_path(path, "path")) == "pss":
        return write_pss(table, path, sidecar)
    return write_jaakkola(table, path, sidecar)


def write_pss(table: ScoreTable, path: str | os.PathLike[str], sidecar: bool = True) -> str | None:
    """Write the table as a PSS file (:func:`format_pss`) atomically, with the sidecar :func:`write_jaakkola` writes
    (its hash that of this text). Names URLearning's reader would misread (:func:`pss_unreadable_name`) are an
    :class:`InputError` naming the variable: the Jaakkola format holds them."""
    check_is_table(table)
    return _write_table(table, check_path(path, "path"), sidecar, format_pss, pss=True)


def sidecar_path(path: str | os.PathLike[str]) -> str:
    """Where the sidecar of the score file at ``path`` lies: ``PATH.json`` beside the file ``path`` leads to — a
    symbolic link's target is the file written (:func:`atomic_output`), and its sidecar went beside the link,
    where reading the target did not find it."""
    text = os.fspath(path)
    return f"{os.path.realpath(text) if os.path.islink(text) else text}.json"


class _Tokens:
    """Whitespace tokens of a text with their line numbers; ``#`` starts a comment line."""

    def __init__(self, text: str, filename: str):
        self.filename = filename
        self.items: list[tuple[str, int]] = []
        # lines end at \n, \r\n or \r only, as editors count them (str.splitlines also breaks at \f, \v,
        # \x85, \u2028: a form feed put every later error a line off, a \v split a family's line)
        for lineno, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            self.items.extend((tok, lineno) for tok in stripped.split())
        self.pos = 0
        self.last_line = self.items[-1][1] if self.items else 1

    def next(self, expected: str) -> tuple[str, int]:
        if self.pos >= len(self.items):
            raise InputError(f"{self.filename}:{self.last_line}: file ends early: expected {expected}")
        tok = self.items[self.pos]
        self.pos += 1
        return tok

    def next_int(self, expected: str) -> tuple[int, int]:
        tok, line = self.next(expected)
        if not (tok.isascii() and tok.isdigit()):        # str.isdigit alone takes non-ASCII digits
            if tok.startswith("-") and tok[1:].isascii() and tok[1:].isdigit():
                raise InputError(f"{self.filename}:{line}: expected {expected}, found negative {tok}")
            raise InputError(f"{self.filename}:{line}: expected {expected}, found {_shown(tok)}")
        return _count(tok, f"{self.filename}:{line}", expected), line

    def next_score(self) -> tuple[float, int]:
        tok, line = self.next("a local score")
        return _plain_score(tok, f"{self.filename}:{line}"), line


#: the most digits a count in a score file may have (a count past Python's 4,300-digit conversion limit was a
#: ValueError traceback, a review; no table has 10¹⁸ of anything)
MAX_COUNT_DIGITS = 18


def _count(tok: str, where: str, expected: str) -> int:
    """``tok`` (ASCII digits) as an int, or an :class:`InputError` at ``where`` where it has more than
    :data:`MAX_COUNT_DIGITS` significant digits."""
    if len(tok.lstrip("0")) > MAX_COUNT_DIGITS:
        raise InputError(f"{where}: expected {expected}, found {_shown(tok, quote=False)}: too large")
    return int(tok)


def _shown(tok: str, quote: bool = True) -> str:
    """A token for an error line: whole up to 40 characters, else its first 20 and its length (a 5,000-digit score
    was echoed whole, a review)."""
    if len(tok) <= 40:
        return repr(tok) if quote else tok
    return f"{tok[:20]!r}…({len(tok)} characters)" if quote else f"{tok[:20]}…({len(tok)} digits)"


def _plain_score(tok: str, where: str) -> float:
    """A local score written as a plain ASCII number, finite — else an :class:`InputError` at ``where``."""
    try:       # float() reads strtod's spellings, and Python's own: underscores, non-ASCII digits
        if "_" in tok or not tok.isascii():
            raise ValueError(tok)
        value = float(tok)
    except ValueError:
        raise InputError(f"{where}: expected a local score, found {_shown(tok)}") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: local score {_shown(tok)} is not finite")
    return value


def _add_parent_set(families: Families, child: str, parents: list[str], score: float, where: str,
                    columns: Mapping[str, str] | None = None) -> frozenset[str]:
    """Record ``child``'s parent set ``parents`` with its score, refusing (at ``where``, or at the parent's own place
    in ``columns``) a repeated parent, the child among its parents and a set listed twice; returns the set (its
    parents' names are checked once all are known)."""
    key = frozenset(parents)
    if len(key) != len(parents):
        raise InputError(f"{where}: a parent is repeated in {parents}")
    problem = _set_problem(child, key, None)
    if problem:
        raise InputError(f"{(columns or {}).get(child, where)}: {problem}")
    if key in families[child]:
        raise InputError(f"{where}: parent set {sorted(key)} of {child!r} is listed twice")
    families[child][key] = score
    return key


def parse_jaakkola(text: str, filename: str = "<string>") -> ScoreTable:
    """Parse Jaakkola text; errors name ``filename:line`` and what was expected."""
    toks = _Tokens(text, filename)
    if toks.items and toks.items[0][0].upper() in ("META", "VAR"):
        raise InputError(f"{filename}:{toks.items[0][1]}: expected the number of variables, found "
                         f"{toks.items[0][0]!r}: a PSS file, not a Jaakkola one (read_score_file reads either)")
    n, nline = toks.next_int("the number of variables")
    if n == 0:
        raise InputError(f"{filename}:{nline}: the score file declares no variables")
    variables: list[str] = []
    families: Families = {}
    pending: list[tuple[str, frozenset[str], str]] = []
    for _ in range(n):
        name, line = toks.next("a variable name")
        if name in families:
            raise InputError(f"{filename}:{line}: variable {name!r} has a second section")
        k, kline = toks.next_int(f"the number of parent sets of {name!r}")
        if k == 0:
            raise InputError(f"{filename}:{kline}: variable {name!r} has no parent sets (a network needs one for "
                             "every variable)")
        variables.append(name)
        families[name] = {}
        for _ in range(k):
            score, line = toks.next_score()
            m, _ = toks.next_int("the number of parents")
            parents = []
            for _ in range(m):
                parent, pline = toks.next(f"a parent name ({m} expected on line {line})")
                if pline != line:
                    raise InputError(f"{filename}:{line}: expected {m} parents, found {len(parents)}")
                parents.append(parent)
            if toks.pos < len(toks.items) and toks.items[toks.pos][1] == line:
                extra = [tok for tok, tline in toks.items[toks.pos:toks.pos + 50] if tline == line]
                raise InputError(f"{filename}:{line}: {len(extra)} token(s) after the {m} parent(s) of this set "
                                 f"(first {extra[0]!r}): a parent set's line is its score, its parent count m and "
                                 "m parent names, and nothing more")
            where = f"{filename}:{line}"
            pending.append((name, _add_parent_set(families, name, parents, score, where), where))
    if toks.pos < len(toks.items):
        tok, line = toks.items[toks.pos]
        raise InputError(f"{filename}:{line}: unexpected {_shown(tok)} after the last of {n} variable sections")
    _check_parents_declared(variables, pending, families, filename)
    return ScoreTable(variables=variables, families=families)


def _check_parents_declared(variables: list[str], pending: list[tuple], families: Families, filename: str) -> None:
    """Once a file is read: every parent of every ``pending`` (child, set, where[, each parent's place]) a declared
    variable, and totals the search can sum (:func:`check_score_range`)."""
    known = set(variables)
    for name, key, where, *places in pending:
        unknown = sorted(map(str, key - known))
        if unknown:
            at = places[0].get(unknown[0], where) if places else where
            raise InputError(f"{at}: {_set_problem(name, frozenset(unknown[:1]), known)}")
    check_score_range(families, filename)


def _pss_words(line: str) -> list[tuple[str, int]]:
    """The whitespace-separated words of a line with their 1-based columns."""
    return [(m.group(), m.start() + 1) for m in re.finditer(r"\S+", line)]


def _pss_meta(line: str, where: str) -> tuple[str, str, int, int]:
    """``META key = value`` → (key in lower case, value, the key's column, the value's column), spaces around ``=``
    optional."""
    start = line.index(line.strip()[:4]) + 4
    key, eq, value = line[start:].partition("=")
    if not eq or not key.strip():
        raise InputError(f"{where}: expected 'META key=value', found {line.strip()!r}")
    after = start + len(key) + 1
    return (key.strip().lower(), value.strip(), start + len(key) - len(key.lstrip()) + 1,
            after + len(value) - len(value.lstrip()) + 1)


def _pss_header_meta(header: dict[str, tuple[str, str]], n: int) -> tuple[dict[str, Any], int | None]:
    """What a PSS file's header (key → (value, where)) says about how the table was made, in the sidecar's fields:
    ``score`` from ``score_type`` where it names a score (URLearning's ``BIC``, ``BDeu``, ``fNML`` — not
    score-equivalent, so its classes are not enumerated — or bnilp's; another name is no score's, so the table's
    equivalence stays unknown), ``ess``, ``N`` (``num_records``), and where the table was cut, ``palim`` with
    ``palim_reached`` and ``exact_for_parent_sets_up_to``: bnilp's own field of that name, else a
    ``parent_limit`` from 1 to n − 2 (URLearning writes n − 1 for no limit, lowers it for BIC to ⌊ln(2N/ln N)⌋
    and does not record whether that cut anything, so the file is taken to be exact only up to it). Nothing
    records the ε it was pruned for (URLearning prunes for ε = 0), so the search says so (``pruning_note``). The
    header itself is kept under ``pss``. Numbers are plain ASCII (no ``_``, no other digits), as the scores.
    Returns the record and the ``parent_limit`` that cut the table (no set is larger), or None."""
    from bnilp.scores import REGISTRY

    meta: dict[str, Any] = {"pss": {k: v for k, (v, _) in header.items()}}

    def number(key: str, pattern: str, what: str) -> str:
        value, where = header[key]
        if not re.fullmatch(pattern, value):
            raise InputError(f"{where}: META {key} must be {what}, got {value!r}")
        return value

    def integer(key: str, pattern: str, what: str) -> int:
        value = number(key, pattern, what)
        size = _count(value.lstrip("-"), f"{header[key][1]}: META {key}", what)
        return -size if value.startswith("-") else size

    score = header.get("score_type", ("", ""))[0].lower()
    if score in REGISTRY or score in PSS_OTHER_SCORES:
        meta["score"] = score
    if "ess" in header:                 # URLearning writes it for every score: read, kept for BDeu
        ess = float(number("ess", r"[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?|[0-9]+\.", "a positive number"))
        if not 1e-100 <= ess < math.inf:
            raise InputError(f"{header['ess'][1]}: META ess must be a number ≥ 1e-100, got {header['ess'][0]!r}")
        if score == "bdeu":
            meta["ess"] = ess
    if "num_records" in header:
        meta["N"] = integer("num_records", r"[0-9]+", "an integer ≥ 0")
    limit = held = None
    if PSS_EXACT_KEY in header:         # bnilp's: exact up to it (required parents may make a set larger)
        limit = integer(PSS_EXACT_KEY, r"[0-9]+", "an integer ≥ 0")
    elif "parent_limit" in header:
        given = integer("parent_limit", r"-?[0-9]+", "an integer")
        limit = held = given if 0 < given < n - 1 else None
    if limit is not None:
        meta.update(palim=limit, palim_reached=True, exact_for_parent_sets_up_to=limit)
    return meta, held


def parse_pss(text: str, filename: str = "<string>") -> ScoreTable:
    """Parse a PSS file (:func:`format_pss` shows the format): ``META`` lines, then a ``VAR NAME`` line per variable
    followed by its ``META`` lines (``arity`` read; ``values`` and any other key passed over — no per-variable key
    limits a table, a per-variable ``parent_limit`` included) and a line per parent set, its score
    (higher is better) and its parents' names. ``META`` and ``VAR`` are read in any case, ``#`` starts a comment
    line, a parent may be a variable declared later. Errors name ``filename:line:column`` (the column of the word
    at fault) and what was expected; a file whose totals the search cannot sum names the file. The header's
    settings go to ``meta`` (:func:`_pss_header_meta`: a parent set larger than a ``parent_limit`` that cut the
    table is an error), and the arities where every variable has one."""
    header: dict[str, tuple[str, str]] = {}
    variables: list[str] = []
    families: Families = {}
    arities: dict[str, int] = {}
    pending: list[tuple[str, frozenset[str], str, dict[str, str]]] = []
    child: str | None = None
    child_at = ""
    for lineno, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        words = _pss_words(line)
        if not words or words[0][0].startswith("#"):
            continue
        first, col = words[0]
        where = f"{filename}:{lineno}:{col}"
        if first.upper() == "META":
            key, value, kcol, vcol = _pss_meta(line, where)
            at = f"{filename}:{lineno}:{vcol}"
            if child is None:
                if key in header:
                    raise InputError(f"{filename}:{lineno}:{kcol}: META {key} is given twice")
                header[key] = (value, at)
            elif key == "arity":
                if child in arities:        # as a header key given twice is (a review: the last one won)
                    raise InputError(f"{filename}:{lineno}:{kcol}: META arity of {child!r} is given twice")
                if not (value.isascii() and value.isdigit()
                        and _count(value, f"{at}: META arity of {child!r}", "an integer ≥ 1") >= 1):
                    raise InputError(f"{at}: META arity of {child!r} must be an integer ≥ 1, got {value!r}")
                arities[child] = int(value)
            continue
        if first.upper() == "VAR":
            if len(words) != 2:
                raise InputError(f"{where}: expected 'VAR NAME' (one name, no spaces), found {line.strip()!r}")
            name, ncol = words[1]
            if name in families:
                raise InputError(f"{filename}:{lineno}:{ncol}: variable {name!r} has a second section")
            if child is not None and not families[child]:
                raise InputError(f"{child_at}: variable {child!r} has no parent sets (a network needs one for every "
                                 "variable)")
            child, child_at = name, f"{filename}:{lineno}:{ncol}"
            variables.append(name)
            families[name] = {}
            continue
        if child is None:
            raise InputError(f"{where}: expected META or VAR before the first parent set, found {first!r}")
        value = _plain_score(first, where)
        columns = {w: f"{filename}:{lineno}:{c}" for w, c in reversed(words[1:])}     # a name's first column
        parents = [w for w, _ in words[1:]]
        for i, (w, c) in enumerate(words[1:]):
            if w in parents[:i]:
                raise InputError(f"{filename}:{lineno}:{c}: a parent is repeated in {parents}")
        key = _add_parent_set(families, child, parents, value, where, columns)
        pending.append((child, key, where, columns))
    if child is None:
        raise InputError(f"{filename}: no VAR section: the score file declares no variables")
    if not families[child]:
        raise InputError(f"{child_at}: variable {child!r} has no parent sets (a network needs one for every variable)")
    meta, limit = _pss_header_meta(header, len(variables))
    for name, key, where, _ in pending:
        if limit is not None and len(key) > limit:
            raise InputError(f"{where}: a parent set of {len(key)} for {name!r}, but the header says the file holds "
                             f"parent sets of at most {limit} (parent_limit)")
    _check_parents_declared(variables, pending, families, filename)
    if set(arities) == set(variables):
        meta["arities"] = {v: arities[v] for v in variables}
    return ScoreTable(variables=variables, families=families, meta=meta)


def _set_problem(child: str, parents: frozenset[str], known: set[str] | None) -> str:
    """What makes ``parents`` no candidate parent set of ``child`` (the child among them, a parent that is not
    one of the ``known`` variables), or "" — the per-set checks of :func:`parse_jaakkola` and
    :func:`check_table`."""
    if child in parents:
        return f"{child!r} is listed as its own parent"
    if known is not None:
        unknown = sorted(map(str, parents - known))
        if unknown:
            return f"parent {unknown[0]!r} of {child!r} is not a declared variable"
    return ""


def check_is_table(table: object, where: str = "table") -> None:
    """An :class:`InputError` naming ``where`` unless ``table`` is a :class:`ScoreTable`."""
    if not isinstance(table, ScoreTable):
        raise InputError(f"{where} must be a ScoreTable (bnilp.scorefile.read_jaakkola reads one), got "
                         f"{type(table).__name__}")


def check_table(table: ScoreTable, where: str = "table") -> None:
    """The checks :func:`parse_jaakkola` makes of a file, made of a :class:`ScoreTable` built by hand: at least one
    variable, names that are distinct strings, a family of at least one parent set for each variable and for
    nothing else, each set a ``frozenset`` of other variables, each score a finite real number, and totals the
    search can sum (:func:`check_score_range`) — else an :class:`InputError` naming ``where`` (the API's
    parameter), before any search."""
    check_is_table(table, where)
    variables, families = table.variables, table.families
    if not isinstance(variables, list) or not variables:
        raise InputError(f"{where}: the score table has no variables (variables must be a non-empty list of names)")
    bad = [v for v in variables if not isinstance(v, str) or not v]
    if bad:
        raise InputError(f"{where}: variable {bad[0]!r} is not a name (a non-empty string)")
    seen: set[str] = set()
    for v in variables:
        if v in seen:
            raise InputError(f"{where}: variable {v!r} is listed twice in variables")
        seen.add(v)
    if not isinstance(families, Mapping):
        raise InputError(f"{where}: families must be a dict of variable → {{frozenset of parents: score}}")
    extra = sorted(map(str, set(families) - seen))
    if extra:
        raise InputError(f"{where}: families has an entry for {extra[0]!r}, which is not in variables")
    for child in variables:
        family = families.get(child)
        if not isinstance(family, Mapping) or not family:
            raise InputError(f"{where}: variable {child!r} has no parent sets (a network needs one for every "
                             "variable)")
        for parents, score in family.items():
            if not isinstance(parents, frozenset):
                raise InputError(f"{where}: parent set {parents!r} of {child!r} is not a frozenset of names")
            problem = _set_problem(child, parents, seen)
            if problem:
                raise InputError(f"{where}: {problem}")
            if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
                raise InputError(f"{where}: the score of parent set {sorted(map(str, parents))} of {child!r} must "
                                 f"be a finite number, got {score!r}")
    check_score_range(families, where)


#: the most by which the best and the worst network totals of a score table may differ: the search hands SCIP each
#: family's score less its variable's best, and SCIP takes 1e20 for infinity (``numerics/infinity``)
MAX_SCORE_SPREAD = 1e18


def check_score_range(families: Mapping[str, Mapping[Any, float]], where: str) -> None:
    """Every network total and every difference of two must be a number the search can use: the sums of the
    variables' best and of their worst local scores finite, and their difference below
    :data:`MAX_SCORE_SPREAD`. Finite scores near ±1e308 pass the reader one by one, but their totals overflow
    (the search sums them); an :class:`InputError` naming ``where`` (the score file, or the API's parameter)
    says so before any search."""
    best = [max(f.values()) for f in families.values() if f]
    worst = [min(f.values()) for f in families.values() if f]
    try:
        high, low = math.fsum(best), math.fsum(worst)
    except OverflowError:               # fsum: "intermediate overflow"
        high = low = math.inf
    except (TypeError, ValueError):     # not numbers: the solver's own checks name them
        return
    if not (math.isfinite(high) and math.isfinite(low)):
        raise InputError(f"{where}: the local scores are too large: the sum of the variables' best or worst scores "
                         "overflows a float (±1.8e308); rescale them")
    if not high - low < MAX_SCORE_SPREAD:
        raise InputError(f"{where}: the local scores spread too far: the variables' best scores sum to {high:.6g} "
                         f"and their worst to {low:.6g}, {MAX_SCORE_SPREAD:g} or more apart (the solver takes 1e20 "
                         "for infinity); rescale them")


def read_jaakkola(path: str | os.PathLike[str]) -> ScoreTable:
    """Read a Jaakkola score file (and its JSON sidecar into ``meta`` if there is one)."""
    return _read_table(path, parse_jaakkola)


def read_pss(path: str | os.PathLike[str]) -> ScoreTable:
    """Read a PSS score file (:func:`parse_pss`; its JSON sidecar, where bnilp wrote one, into ``meta``)."""
    return _read_table(path, parse_pss)


def read_score_file(path: str | os.PathLike[str]) -> ScoreTable:
    """Read a score file of either format (:data:`SCORE_FILE_FORMATS`), told apart by its first token: a number
    begins a Jaakkola file, ``META`` or ``VAR`` (any case) a PSS file (:func:`score_file_format_of_text`)."""
    return _read_table(path, None)


def score_file_format_of_text(text: str) -> str:
    """``"pss"`` where the first token that is no comment (``#``) is ``META`` or ``VAR`` in any case — or is no
    count while a later line begins with one of them (a parent set before the first ``VAR``) — else ``"jaakkola"``
    (whose parser then says what is wrong with a file of neither format)."""
    for line in re.split(r"\r\n|\r|\n", text):
        words = line.split()
        if words and not words[0].startswith("#"):
            if words[0].upper() in ("META", "VAR"):
                return "pss"
            if not (words[0].isascii() and words[0].isdigit()) and re.search(r"(?im)^[ \t]*(META|VAR)[ \t]", text):
                return "pss"        # a parent set before the first VAR: the PSS reader says so
            return "jaakkola"
    return "jaakkola"


def _read_table(path: str | os.PathLike[str], parse: Any) -> ScoreTable:
    """A score file read by ``parse`` (None: by the format its text shows), and its sidecar."""
    path = Path(check_path(path, "path"))
    try:
        text = read_input_text(path, "utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from None
    if parse is None:
        parse = parse_pss if score_file_format_of_text(text) == "pss" else parse_jaakkola
    table = parse(text, str(path))
    sidecar = Path(sidecar_path(path))
    if sidecar.exists():
        table.meta = _read_sidecar(sidecar)
        _check_sidecar_belongs(table, text, sidecar)
    return table


def _check_sidecar_belongs(table: ScoreTable, text: str, sidecar: Path) -> None:
    """A sidecar vouches for one score file — the ε it was pruned for, whether a palim cut it — so one written
    for another file (a stale copy, a result JSON saved over it) would make a truncated table pass for a
    complete one: its file's SHA-256, or (sidecars older than the hash) its counts, must match."""
    meta = table.meta
    if meta.get("knowledge"):       # its variables the file's: an unknown one named neither file (a review)
        from bnilp.knowledge import Knowledge

        try:
            Knowledge.coerce(meta["knowledge"]).validated(list(table.variables), [])
        except InputError as exc:
            raise InputError(f"{sidecar}: its 'knowledge' does not fit {sidecar.name[:-5]} ({exc})") from None
    digest = meta.get(SIDECAR_HASH)
    if digest is not None:
        if digest != hashlib.sha256(text.encode("utf-8")).hexdigest():
            raise InputError(f"{sidecar}: written for another score file (its {SIDECAR_HASH} does not match "
                             f"{sidecar.name[:-5]}); move it away to use the score file without its provenance")
        return
    if "n_parent_sets" not in meta:
        raise InputError(f"{sidecar}: not a score-file sidecar (no n_parent_sets or {SIDECAR_HASH}); move it away "
                         "to use the score file without its provenance")
    for key, have in (("n_parent_sets", table.n_parent_sets()), ("n_variables", len(table.variables))):
        if key in meta and meta[key] != have:
            raise InputError(f"{sidecar}: written for another score file ({key} {meta[key]!r}, the file has "
                             f"{have}); move it away to use the score file without its provenance")


def _read_sidecar(sidecar: Path) -> dict[str, Any]:
    """A score file's provenance (:func:`write_jaakkola`'s sidecar). It decides what the file may be used for —
    the ε it was pruned for, the knowledge it was scored under — so one that cannot be read, or whose fields
    have the wrong types, is an :class:`InputError` naming it, never ignored."""
    from bnilp.knowledge import Knowledge

    try:
        meta = json.loads(read_input_text(sidecar))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        # ValueError: JSON's own errors and an integer past Python's 4,300 digits; RecursionError: nested ~1,000
        # deep (both were tracebacks, a review)
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise InputError(f"{sidecar}: not a readable score-file sidecar ({why}); move it away to use the score "
                         "file without its provenance") from None
    if not isinstance(meta, dict):
        raise InputError(f"{sidecar}: a score-file sidecar is a JSON object, not {type(meta).__name__}")
    for key in ("epsilon", "bf", "ess"):
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            raise InputError(f"{sidecar}: {key!r} must be a finite number or null, got {value!r}")
    for key, low, strict in (("epsilon", 0, False), ("bf", 1, False), ("ess", 0, True)):
        value = meta.get(key)
        if value is not None and (value <= low if strict else value < low):
            raise InputError(f"{sidecar}: {key!r} must be {'>' if strict else '≥'} {low}, got {value!r}")
    if (meta.get("epsilon") is not None and meta.get("bf") is not None
            and not math.isclose(math.log(meta["bf"]), meta["epsilon"], rel_tol=1e-9, abs_tol=1e-12)):
        raise InputError(f"{sidecar}: 'bf' {meta['bf']!r} and 'epsilon' {meta['epsilon']!r} disagree (ε = ln BF): "
                         "which one the file was pruned for is unknown")
    odd = _non_finite(meta)      # json reads NaN and ±Infinity, which strict JSON (what bnilp writes) has not
    if odd:
        raise InputError(f"{sidecar}: {odd} is not a finite number (NaN or Infinity; a sidecar is strict JSON)")
    for key in ("prune", "palim_reached", "score_time_limit_reached", "score_memory_limit_reached",
                "score_equivalent", RECORD_UNVOUCHED):
        value = meta.get(key)
        if key in meta and not isinstance(value, bool):     # null too: it would read as false ("not reached")
            raise InputError(f"{sidecar}: {key!r} must be true or false, got {json.dumps(value)}")
    for key in ("palim", "exact_for_parent_sets_up_to", "knowledge_palim"):
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise InputError(f"{sidecar}: {key!r} must be an integer ≥ 0 or null, got {value!r}")
    if meta.get("palim_reached") and meta.get("exact_for_parent_sets_up_to") is None and meta.get("palim") is None:
        raise InputError(f"{sidecar}: 'palim_reached' is true but neither 'palim' nor 'exact_for_parent_sets_up_to' "
                         "says up to which parent-set size the table is exact")
    for key in ("score_time_limit_reached", "score_memory_limit_reached"):   # a scoring limit cuts at a palim
        if meta.get(key) and not meta.get("palim_reached"):
            raise InputError(f"{sidecar}: {key!r} is true but 'palim_reached' is not (a scoring limit leaves the "
                             "table exact up to a parent-set size: which one is unknown)")
    for key in ("score", "prior"):
        if key in meta and not isinstance(meta[key], str):
            raise InputError(f"{sidecar}: {key!r} must be a name (a string), got {json.dumps(meta[key])}")
    unpruned = meta.get("knowledge_unpruned")
    if unpruned is not None and (not isinstance(unpruned, list) or not all(isinstance(v, str) for v in unpruned)):
        raise InputError(f"{sidecar}: 'knowledge_unpruned' must be a list of variable names, got {unpruned!r}")
    if meta.get("epsilon") is None and meta.get("bf") is not None:      # what the file was pruned for: either says it
        meta["epsilon"] = math.log(meta["bf"])
    known = meta.get("knowledge")
    if known is not None:
        try:
            if not isinstance(known, dict):
                raise TypeError(f"an object, not {type(known).__name__}")
            recorded = Knowledge.coerce(known)
            said = known.get("statements")
            if said is not None and (not isinstance(said, list) or not all(isinstance(x, str) for x in said)):
                raise TypeError(f"'statements' must be a list of lines, got {said!r}")
        except (TypeError, ValueError, InputError) as exc:
            raise InputError(f"{sidecar}: 'knowledge' is not a knowledge record ({exc})") from None
        meta["knowledge"] = recorded.to_dict()      # its statements those of its fields, whatever the file held
    return meta


def _non_finite(x: Any, path: str = "") -> str:
    """The path of the first non-finite float in a JSON value (``'epsilon'``, ``'counts'.'A'``), or ""."""
    if isinstance(x, float):
        return "" if math.isfinite(x) else (path or "the value")
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
    for key, value in items:
        found = _non_finite(value, f"{path}.{key!r}" if path else repr(key))
        if found:
            return found
    return ""
