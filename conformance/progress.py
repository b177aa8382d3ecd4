"""Progress of a long job: a live rich bar on a terminal, plain lines elsewhere.

A :class:`Progress` is the ``progress(done, total, failed)`` callback that generate,
run, certify and fuzz take.  On a terminal it draws one labelled bar (``generate``,
``run``) with the count, the failures so far, the elapsed time and the ETA; when
stderr is a file or a pipe (CI logs) it writes a plain line every tenth of the way,
so logs stay readable and short.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO


def _clock(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


class Progress:
    """``progress(done, total, failed=0)``; use as a context manager so the bar stops
    cleanly on an error or Ctrl-C."""

    def __init__(
        self,
        label: str,
        *,
        unit: str = "vectors",
        enabled: bool = True,
        stream: TextIO | None = None,
    ) -> None:
        self.label = label
        self.unit = unit
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self.last_tenth = -1
        self.done = 0  # the latest counts, for the interrupted message
        self.total = 0
        self._bar: Any = None  # rich.progress.Progress, made at the first call on a TTY
        self._task: Any = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def line(self, done: int, total: int, failed: int = 0) -> str:
        """The plain progress line (also what the tests read)."""
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (total - done) if done else None
        parts = [f"{self.label}: {done}/{total} {self.unit}"]
        if failed:
            parts.append(f"{failed} failed")
        parts.append(f"elapsed {_clock(elapsed)}")
        if eta is not None and done < total:
            parts.append(f"ETA {_clock(eta)}")
        return ", ".join(parts)

    def __call__(self, done: int, total: int, failed: int = 0) -> None:
        self.done, self.total = done, total
        if not self.enabled or total == 0:
            return
        if not self.tty:
            tenth = 10 * done // total
            if tenth != self.last_tenth:
                self.last_tenth = tenth
                self.stream.write(self.line(done, total, failed) + "\n")
                self.stream.flush()
            return
        if self._bar is None:
            self._start_bar(total)
        self._bar.update(self._task, completed=done, total=total, failed=failed)
        if done >= total:
            self.close()

    def _start_bar(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(self.unit),
            TextColumn("[red]{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(file=self.stream),
            transient=False,
        )
        self._task = self._bar.add_task(self.label, total=total, failed=0)
        self._bar.start()
