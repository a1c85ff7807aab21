"""The one place where library errors become terminal output and exit codes."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
import orjson

from walkback.journal.errors import WRITE_ERRNOS, WRITE_FAILED, WalkbackError

F = TypeVar("F", bound=Callable[..., Any])

_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]}
_CONTROL.update({c: f"\\u{c:04x}" for c in [0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]})


def safe(text: object) -> str:
    """``text`` as one terminal-safe line: control, line-break and bidi characters escaped.

    Journals are written by models; what they contain must not move the cursor, recolour the
    terminal or fake extra output lines.
    """
    return str(text).translate(_CONTROL)


class CommandError(click.ClickException):
    """A ClickException whose exit code comes from the WalkbackError it wraps."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # click declares it on the class


def handle_errors(fn: F) -> F:
    """Turn expected failures into one ``Error: file:line: what`` line and the documented exit code
    (a failed write, whatever the file: 4)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except WalkbackError as e:
            raise CommandError(safe(e), e.exit_code) from None
        except OSError as e:
            if e.errno in WRITE_ERRNOS:  # the disk refused a write: name the file, one documented code
                where = f"{e.filename}: " if e.filename else ""
                raise CommandError(safe(f"{where}cannot write: {e.strerror}"), WRITE_FAILED) from None
            raise CommandError(safe(f"{type(e).__name__}: {e}"), 2) from None
        except (MemoryError, RecursionError) as e:
            raise CommandError(safe(f"{type(e).__name__}: {e}"), 2) from None

    return wrapper  # type: ignore[return-value]


def say_verification(path: object, session: Any) -> None:
    """Of a session read from a bundle, its verification result on stderr: every command that
    reads a bundle says whether it verifies (``valid, signed by …`` or ``DOES NOT VERIFY: …``)."""
    v = getattr(session, "verification", None)
    if v is not None:
        click.echo(safe(f"{path}: bundle {v.verdict}"), err=True)


def emit_json(data: Any) -> None:
    """Stable machine output: sorted keys, indented, one trailing newline."""
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(fn)


def progress_printer(label: str) -> Callable[[int], None] | None:
    """A progress callback that writes to stderr when it is a terminal (never into --json output)."""
    if not sys.stderr.isatty():
        return None

    def show(n: int) -> None:
        sys.stderr.write(f"\r{label}: {n:,} records")
        sys.stderr.flush()

    return show
