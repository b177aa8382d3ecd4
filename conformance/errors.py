"""The base of every error the command line reports as one line with exit status 2.

An error of this kind is the user's to fix (a bad argument, a damaged pack, a results
file that belongs to another run, a full disk): ``tosa-conformance`` prints its message
and exits 2, never a traceback.  Subclasses keep their own module and meaning
(``PackError``, ``UsageError``, ``SpecError``, ``ClaimError``, ``BackendError``).
"""

from __future__ import annotations


class ConformanceError(Exception):
    """An error with a one-line message that names the file or argument at fault."""
