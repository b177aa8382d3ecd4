"""The same seed gives the same draws whatever modules the process has loaded.

Hypothesis sometimes draws a constant from the source of the process's "local" modules
(strategies/draw.py, ``own_constants``): without the guard, importing one more local
module, or installing the project without ``-e``, would change a pack's bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_DRAWS = """
import json, sys
sys.path.insert(0, {folder!r})
if {extra!r}:
    import many_constants  # noqa: F401  (a local module full of integer constants)
import contextlib
from hypothesis import strategies as st
import strategies.draw
if {unguarded!r}:
    strategies.draw.own_constants = contextlib.nullcontext
from strategies.draw import draw_examples
values = st.lists(st.integers(0, 2**40), min_size=64, max_size=64)
print(json.dumps(draw_examples(values, 30, 7)))
"""


def _draws(folder: Path, extra: bool, unguarded: bool = False) -> list[list[int]]:
    code = _DRAWS.format(folder=str(folder), extra=extra, unguarded=unguarded)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(out.stdout)


def test_draws_do_not_depend_on_the_local_modules_loaded(tmp_path: Path) -> None:
    # 400 constants in range: unguarded, about 5 % of integer draws would pick one.
    constants = ", ".join(str(1_000_003 * k + 77) for k in range(400))
    (tmp_path / "many_constants.py").write_text(f"VALUES = ({constants},)\n")
    plain = _draws(tmp_path, extra=False)
    with_module = _draws(tmp_path, extra=True)
    assert len(plain) == 30
    assert with_module == plain
    planted = {1_000_003 * k + 77 for k in range(400)}
    assert not planted & {v for example in with_module for v in example}
    # The control: without the guard, the same draws pick up the module's constants.
    unguarded = _draws(tmp_path, extra=True, unguarded=True)
    assert planted & {v for example in unguarded for v in example}
    assert unguarded != plain
