"""Differential fuzzing: Hypothesis draws cases, the backend runs them, the reference
and the compliance rules judge them; a failure is shrunk to a minimal case and saved
as an ordinary vector in a findings pack, with a command that replays it.

Each (operator, mode) pair gets its own search, so one bug does not hide the others;
searches run in a seeded order until the example budget or the time is spent.  Every
search has its own Hypothesis example database in ``FINDINGS.hypothesis/`` beside the
findings folder (outside it, so the findings stay a pack that passes verify-pack), so
a rerun with the same -o tries the known failures first.
"""

from __future__ import annotations

import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Unsatisfiable

from conformance.claims import Claim, required_modes
from conformance.executors.local import IsolatedPool
from conformance.runner import serve
from conformance.spec import Spec, TypeSupport
from conformance.verdicts import CRASHED, ERROR_EXPECTED, FAILED, TIMEOUT, VectorResult
from vectors.pack_model import LoadedVector, Vector

FINDING_KINDS = {
    "wrong-result": "an output outside its compliance bound",
    "accepted-invalid": "ran a graph that breaks an ERROR_IF",
    "rejected-valid": "rejected a valid graph",
    "crash": "crashed",
    "timeout": "did not finish in time",
}


def finding_kind(result: VectorResult) -> str | None:
    if result.verdict == ERROR_EXPECTED:
        return "accepted-invalid"
    if result.verdict == CRASHED:
        return "crash"
    if result.verdict == TIMEOUT:
        return "timeout"
    if result.verdict == FAILED:
        return "rejected-valid" if result.detail.startswith("rejected") else "wrong-result"
    return None


@dataclass
class Finding:
    kind: str
    operator: str
    mode: str
    vector: str
    detail: str
    margin: float | None
    replay: str
    examples: int  # examples tried in this pair's search before the failure


def claim_flags(claim: Claim) -> str:
    """The command-line flags that make ``claim`` again."""
    flags = [f"--profile {p}" for p in claim.profiles]
    flags += [f"--extension {e}" for e in claim.extensions]
    return " ".join([*flags, f"--level {claim.level.name}"])


def database_path(out: Path) -> Path:
    """The folder of the example databases of the findings pack ``out``."""
    return out.parent / f"{out.name}.hypothesis"


class _Failure(Exception):
    def __init__(self, vector: Vector, result: VectorResult) -> None:
        super().__init__(f"{result.verdict}: {result.detail[:200]}")
        self.vector = vector
        self.result = result


def _vector_worker(conn: Connection, backend_spec: str, claim: dict[str, Any]) -> None:
    """Worker loop for vectors that are not in a pack: each is written as a one-vector
    pack and loaded back, so every backend (commands too) sees real files."""
    from vectors.pack import open_pack, write_pack_index, write_vector
    from vectors.pack_model import PackMeta

    tmp_root = Path(tempfile.mkdtemp(prefix="tosa-fuzz-"))

    def load(vector: Vector) -> LoadedVector:
        folder = tmp_root / "pack"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        entry = write_vector(folder, vector)
        from conformance.spec import load_spec

        write_pack_index(folder, PackMeta.create(load_spec(), claim, 0), [entry])
        return open_pack(folder).load(vector.name)

    try:
        serve(conn, backend_spec, load, lambda v: (v.operator, v.mode, v.kind))
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)


class Fuzzer:
    def __init__(
        self,
        spec: Spec,
        claim: Claim,
        backend: str,
        out: Path,
        *,
        ops: str | None = None,
        seed_value: int = 0,
        timeout: float = 30.0,
        invalid: bool = True,
        capabilities: Any = None,  # conformance.capabilities.Manifest: its pairs and limits
    ) -> None:
        from strategies.valid import has_recipe

        self.spec = spec
        self.claim = claim
        self.backend = backend
        self.out = out
        self.seed = seed_value
        self.timeout = timeout
        self.invalid = invalid
        pattern = re.compile(ops, re.IGNORECASE) if ops else None  # as generate and run
        self.pairs = [
            m
            for m in required_modes(spec, claim)
            if (pattern is None or pattern.fullmatch(m.operator))
            and has_recipe(m.operator)
            and (capabilities is None or capabilities.claims(m))
        ]
        self.capabilities = capabilities
        self.findings: list[Finding] = []
        self.entries: list[Any] = []
        self.examples = 0
        self.pool = IsolatedPool(_vector_worker, (backend, claim.to_json()), 1, timeout)

    def close(self) -> None:
        self.pool.close()

    def _strategy(self, mode: TypeSupport) -> st.SearchStrategy[Any]:
        from strategies.invalid import breakers_for, invalid_cases
        from strategies.recipes import RecipeContext
        from strategies.shapes import Budget
        from strategies.valid import valid_cases

        level = self.claim.level
        budget = Budget()
        if self.capabilities is not None:  # drawn within the manifest's limits
            budget = self.capabilities.constrain(budget, mode.operator)
        valid = valid_cases(self.spec, mode.operator, mode.mode, level, budget)
        rc = RecipeContext(self.spec, self.spec.operator(mode.operator), mode, level, budget)
        if not self.invalid or not breakers_for(mode.operator, rc):
            return st.tuples(st.just("valid"), valid)
        broken = invalid_cases(self.spec, mode.operator, mode.mode, level, budget)
        return st.one_of(st.tuples(st.just("valid"), valid), st.tuples(st.just("error"), broken))

    def _run(self, vector: Vector) -> VectorResult:
        results: list[VectorResult] = []
        entry = type(
            "E", (), {"operator": vector.operator, "mode": vector.mode, "kind": vector.kind}
        )
        self.pool.run([(vector.name, vector)], {vector.name: entry}, results.append)
        return results[0]

    def search(self, mode: TypeSupport, max_examples: int, deadline: float) -> Finding | None:
        from conformance.vectorize import case_to_vector
        from vectors.pack_model import Provenance
        from vectors.pack_write import vector_files

        slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{mode.operator}-{mode.mode}").strip("-").lower()
        name = f"finding_{slug}"
        tried = [0]

        def test(drawn: tuple[str, Any]) -> None:
            if time.monotonic() > deadline:
                return  # out of time: the remaining examples are no-ops
            kind, case = drawn
            vector = case_to_vector(
                case,
                self.spec,
                self.claim.level,
                name=name,
                kind=kind,
                clause=case.rule_broken,
                provenance=Provenance(
                    strategy=case.strategy,
                    seed=self.seed,
                    index=tried[0],
                    regenerate=f"tosa-conformance fuzz --backend {self.backend} "
                    f"{claim_flags(self.claim)} --ops {mode.operator} --seed {self.seed} "
                    f"-o {self.out}",
                    rule_broken=case.rule_broken,
                ),
            )
            if vector is None:
                return  # the reference disagrees with the recipe: not a test
            try:
                vector_files(vector)  # the same checks as writing it into a pack
            except ValueError:
                return  # e.g. a broken attribute the flatbuffer cannot hold: no vector
            tried[0] += 1
            self.examples += 1
            result = self._run(vector)
            if finding_kind(result) is not None:
                raise _Failure(vector, result)

        db = DirectoryBasedExampleDatabase(str(database_path(self.out) / slug))
        runner = settings(
            database=db,
            max_examples=max_examples,
            deadline=None,
            phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            derandomize=False,
            print_blob=False,
        )(seed(self.seed)(given(self._strategy(mode))(test)))
        try:
            runner()
        except _Failure as failure:
            return self._save(failure, tried[0])
        except Unsatisfiable:
            return None
        return None

    def _save(self, failure: _Failure, examples: int) -> Finding:
        from vectors.pack import write_vector

        self.out.mkdir(parents=True, exist_ok=True)
        self.entries = [e for e in self.entries if e.name != failure.vector.name]
        self.entries.append(write_vector(self.out, failure.vector))
        r = failure.result
        kind = finding_kind(r) or "wrong-result"
        finding = Finding(
            kind,
            r.operator,
            r.mode,
            failure.vector.name,
            r.detail,
            r.margin,
            f"tosa-conformance run --pack {self.out} --backend {self.backend} "
            f"--vectors {failure.vector.name} --jobs 1",
            examples,
        )
        self.findings.append(finding)
        return finding

    def run(
        self,
        *,
        max_examples: int = 50,
        seconds: float | None = None,
        on_finding: Callable[[Finding], None] | None = None,
        on_pair: Callable[[TypeSupport], None] | None = None,
        executor: Any = None,
    ) -> list[Finding]:
        """Search every pair (seeded order), each up to ``max_examples``, until
        ``seconds`` are spent; then write the findings pack's index.  With an
        ``executor`` (conformance.executors.Executor) a round's pairs are searched on
        Dask workers at once, sharing the example databases under ``out``."""
        started = time.monotonic()
        end = started + seconds if seconds else float("inf")
        order = list(self.pairs)
        random.Random(self.seed).shuffle(order)
        rounds = 0
        while order and time.monotonic() < end:
            if executor is not None:
                from conformance.executors.fuzz_pairs import search_round

                for remote in search_round(self, executor, order, max_examples, end, on_pair):
                    if on_finding is not None:
                        on_finding(remote)
            for mode in order if executor is None else ():
                if time.monotonic() >= end:
                    break
                if on_pair is not None:
                    on_pair(mode)
                finding = self.search(mode, max_examples, end)
                if finding is not None and on_finding is not None:
                    on_finding(finding)
            rounds += 1
            if seconds is None:
                break  # one pass over the pairs when only examples bound the run
            # Next round: new seed, and only pairs without a finding (their example
            # database would replay the same failure first).
            found = {(f.operator, f.mode) for f in self.findings}
            order = [m for m in order if m.key not in found]
            self.seed += 1
        self.save_index(rounds)
        return self.findings

    def save_index(self, rounds: int = 0) -> None:
        """Write the findings pack's pack.json (also after an interrupted run)."""
        from vectors.pack import write_pack_index
        from vectors.pack_model import PackMeta

        if self.entries:
            meta = PackMeta.create(
                self.spec, self.claim.to_json(), self.seed, {"fuzz": True, "rounds": rounds}
            )
            write_pack_index(self.out, meta, self.entries)
