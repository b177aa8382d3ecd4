"""Starting a process that a test interrupts with Ctrl-C (SIGINT).

A process started in the background of a shell without job control (``cmd &`` in a
script, as CI runners do) inherits SIGINT *ignored*, and Python then never raises
KeyboardInterrupt.  A terminal's foreground job has the default disposition: the tests
give their child that, so they test what a user at a terminal gets wherever they run.
"""

from __future__ import annotations

import signal


def as_a_terminal_job() -> None:
    """``preexec_fn``: SIGINT back to its default, as in a terminal's foreground job."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
