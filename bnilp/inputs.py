"""Reading the files a user names (data, score files and sidecars, knowledge, result and warm-start JSON): whole,
in chunks, and only from a file or a pipe.

One read of a whole stream that never ends — a device such as ``/dev/zero`` given as the data, the knowledge or a
warm start — ran until the system's memory was gone and the kernel killed the process, without a word and deaf to
SIGTERM (a review: exit 137 after 22–58 s at 24 GB). Here a character or block device is refused as bad input, the
rest is read in chunks of :data:`READ_CHUNK` bytes (Python runs a signal's handler between them, so Ctrl-C and
SIGTERM end the run as anywhere else), and a stream that outgrows the free memory (a pipe that does not end) stops
as a limit."""

from __future__ import annotations

import os
import stat

from bnilp.errors import InputError, LimitError
from bnilp.memory import free_memory

#: bytes per read
READ_CHUNK = 1 << 24
#: what a file's text may take of the free memory: its bytes, their decoded text and what parses it
READ_MEMORY_FACTOR = 4


def read_input_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of ``path`` (a file, or a pipe until it ends). ``OSError`` as ``open`` raises it; a device is an
    :class:`InputError`, a stream whose text would not fit in the free memory (:data:`READ_MEMORY_FACTOR` times its
    size) a :class:`LimitError`, each naming ``path``."""
    chunks: list[bytes] = []
    total = 0
    with open(path, "rb") as handle:
        mode = os.fstat(handle.fileno()).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            raise InputError(f"{os.fspath(path)}: a device, not a file: give a file (or a pipe) to read")
        while chunk := handle.read(READ_CHUNK):
            chunks.append(chunk)
            total += len(chunk)
            free = free_memory()
            if free is not None and READ_MEMORY_FACTOR * total > free:
                raise LimitError(f"{os.fspath(path)}: out of memory reading it: {total / 2**20:,.0f} MiB read and "
                                 f"{free / 2**20:,.0f} MiB of memory left")
    return b"".join(chunks)


def read_input_text(path: str | os.PathLike[str], encoding: str = "utf-8", universal_newlines: bool = True) -> str:
    """The text of ``path`` (:func:`read_input_bytes`, decoded; ``UnicodeDecodeError`` as ``decode`` raises it),
    with ``universal_newlines`` every CRLF and lone CR made a LF, as ``open``'s text mode does (its default)."""
    text = read_input_bytes(path).decode(encoding)
    return text.replace("\r\n", "\n").replace("\r", "\n") if universal_newlines else text
