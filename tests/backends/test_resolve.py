"""``backends.resolve``: a backend name becomes its factory and argument, and nothing is
built until ``build()``; ``get_backend`` is the two in one."""

from __future__ import annotations

import pytest

from conformance import backends
from conformance.backends import BackendError, ResolvedBackend, available, get_backend, resolve
from conformance.backends.base import capabilities_of
from conformance.backends.reference import ReferenceBackend


def test_a_built_in_name_resolves_to_its_factory_and_argument() -> None:
    found = resolve("iree:16")
    assert (found.name, found.argument) == ("iree", "16")
    assert found.factory.__qualname__ == "IreeBackend"  # found, not built: no IREE needed
    assert resolve("reference").argument is None
    assert resolve("command:").argument == ""  # an empty argument is the backend's to refuse


def test_build_makes_the_backend_get_backend_would() -> None:
    built = resolve("reference").build()
    assert isinstance(built, ReferenceBackend)
    assert type(get_backend("reference")) is type(built)


def test_nothing_is_built_while_resolving(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str | None] = []

    def factory(argument: str | None) -> ReferenceBackend:
        calls.append(argument)
        return ReferenceBackend()

    monkeypatch.setitem(backends.BUILTIN, "counted", ("unused:unused", "a test backend"))
    monkeypatch.setattr(backends, "_load", lambda target: factory)
    found = resolve("counted:x")
    assert calls == []
    found.build()
    assert calls == ["x"]


def test_an_unknown_name_is_refused_with_the_known_ones() -> None:
    with pytest.raises(BackendError, match=r"unknown backend 'nope'; known: .*reference"):
        resolve("nope:1")


def test_a_factory_that_returns_no_backend_is_refused_on_build() -> None:
    found = ResolvedBackend("odd", None, lambda argument: object())  # type: ignore[arg-type,return-value]
    with pytest.raises(BackendError, match="backend 'odd' does not provide name"):
        found.build()


def test_a_backend_names_its_capability_manifest_as_an_attribute() -> None:
    # Read off the factory, so the listing needs no LiteRT installed.
    assert capabilities_of(resolve("litert").factory) == "nnapi"
    assert capabilities_of(resolve("reference").factory) is None
    assert available()["litert"].endswith("[capabilities: nnapi]") or (
        "[capabilities: nnapi] [unavailable:" in available()["litert"]
    )
    assert "[capabilities" not in available()["reference"]


def test_a_capabilities_attribute_that_is_no_name_is_refused() -> None:
    class Odd:
        capabilities = 3

    with pytest.raises(BackendError, match="must be a manifest name, not 3"):
        capabilities_of(Odd())
