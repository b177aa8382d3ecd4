"""After each vector a worker kills what its backend left running, except the helpers
it holds; the costly search for held helpers runs only when something else is there.

The scenario runs in a process of its own: in the test process it would kill the
children of other tests (a Dask cluster of a fixture) as strangers."""

from __future__ import annotations

import json
import subprocess
import sys

from hostile import LINUX_ONLY

pytestmark = LINUX_ONLY

SCENARIO = """
import json, os, subprocess, sys, time
from conformance import process_tree, worker

searches = []
real = worker.held_children
def counted():
    searches.append(real())
    return searches[-1]
worker.held_children = counted

def alive(pid):
    try:
        stat = open(f"/proc/{pid}/stat", "rb").read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")

sleep = [sys.executable, "-c", "import time; time.sleep(300)"]
helper = subprocess.Popen(sleep)  # held, like IREE's compiler server
steps = []
worker.end_vector_processes(object())
steps.append([len(searches), alive(helper.pid)])
worker.end_vector_processes(object())  # only the known helper below
steps.append([len(searches), alive(helper.pid)])
stranger = os.posix_spawn(sleep[0], sleep, dict(os.environ))  # no Popen holds it
worker.end_vector_processes(object())
steps.append([len(searches), alive(helper.pid), stranger in process_tree.descendants(os.getpid())])
helper.kill()
print(json.dumps({"steps": steps, "first": searches[0] == [helper.pid]}))
"""


def test_held_helpers_stay_and_the_search_runs_only_for_strangers() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCENARIO], capture_output=True, text=True, timeout=120, check=True
    )
    doc = json.loads(out.stdout)
    assert doc["first"]  # the first check finds the helper held
    # 1 search, helper kept; no new search for the known helper; a stranger: searched,
    # killed (and reaped: no longer below), the helper kept.
    assert doc["steps"] == [[1, True], [1, True], [2, True, False]]
