"""One-line messages for what goes wrong underneath a command (issue #16 item 12).

Disk full, a read-only or non-database file, a lock held too long, a server
that went away: each becomes one line naming the cause instead of a traceback.
Every message has passwords of URLs masked.
"""

from __future__ import annotations

import errno

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError, SQLAlchemyError

from arena.db.session import mask_passwords

_UNCHANGED = "nothing of this command's current transaction was stored"

_NO_PARTITION = (
    "a battle of this ingest falls into no partition of the partitioned battles table: "
    f"create one for its time (docs/scale.md, partitions ahead of time); {_UNCHANGED}"
)

_GONE = f"lost the connection to the database server (shut down or restarted?); {_UNCHANGED}"

#: (fragment of the driver's message, lower case) -> what to tell the user
_DRIVER_MESSAGES = (
    (
        "database is locked",
        "the database is locked: another command kept writing to it for longer than "
        "the command's wait allows; try again later or allow a longer wait",
    ),
    (
        "lock timeout",
        "waited longer than the command's wait for a lock held by another command; try "
        "again later or allow a longer wait",
    ),
    ("database or disk is full", f"the disk is full; {_UNCHANGED}"),
    ("could not extend file", f"the database server's disk is full; {_UNCHANGED}"),
    ("no space left on device", f"the disk is full; {_UNCHANGED}"),
    ("readonly database", "the database file (or its folder) is read-only: cannot write to it"),
    ("read-only", "the database is read-only: cannot write to it"),
    ("file is not a database", "the database file is not an SQLite database"),
    ("database disk image is malformed", "the database file is corrupt (not a sound SQLite file)"),
    (
        "unable to open database file",
        "cannot open the database file (missing folder or no permission)",
    ),
    ("terminating connection", _GONE),
    ("server closed the connection", _GONE),
    ("connection is lost", _GONE),
    ("consuming input failed", _GONE),
)


def describe(exc: BaseException) -> str | None:
    """A one-line message for ``exc`` if it is a known environmental failure, else None."""
    raw = str(exc.orig if isinstance(exc, DBAPIError) else exc).strip()
    if raw.startswith("no partition of relation"):  # from COPY: the driver's own error
        # the DETAIL line names the partition key's value
        return mask_passwords(f"{_NO_PARTITION} ({' '.join(raw.splitlines()[:2])})")
    if isinstance(exc, DBAPIError):
        text = str(exc.orig).strip()
        lowered = text.lower()
        for fragment, message in _DRIVER_MESSAGES:
            if fragment in lowered:
                return mask_passwords(f"{message} ({_first_line(text)})")
        if exc.connection_invalidated:
            return mask_passwords(f"{_GONE} ({_first_line(text)})")
        if isinstance(exc, OperationalError | InterfaceError):  # unreachable, refused, ...
            return mask_passwords(f"database error: {_first_line(text)}")
        return None
    if isinstance(exc, SQLAlchemyError):
        return None
    if isinstance(exc, OSError) and exc.errno is not None:
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno == errno.ENOSPC:
            return f"the disk is full{where}; {_UNCHANGED}"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return f"cannot write{where}: {exc.strerror}"
    return None


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""
