"""Backends: the implementations the runner checks.

``get_backend("NAME[:ARGUMENT]")`` makes one: built-in names first, then factories
registered under the entry-point group ``tosa_conformance.backends``.
``resolve("NAME[:ARGUMENT]")`` finds the factory without building the backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points

from conformance.backends.base import Backend, BackendError, BackendResult, capabilities_of

__all__ = [
    "BUILTIN",
    "Backend",
    "BackendError",
    "BackendResult",
    "ResolvedBackend",
    "available",
    "get_backend",
    "resolve",
]

ENTRY_POINT_GROUP = "tosa_conformance.backends"

# name -> "module:factory"; imported only when used, so a missing optional tool
# affects only its own backend.
BUILTIN: dict[str, tuple[str, str]] = {
    "reference": ("conformance.backends.reference:ReferenceBackend", "this project's evaluator"),
    "command": (
        "conformance.backends.command:CommandBackend",
        "command:EXECUTABLE [ARG...], a program run like Arm's tosa_reference_model --test_desc",
    ),
    "mutant": (
        "conformance.backends.mutants:MutantBackend",
        "the reference with one injected bug: mutant:NAME (tosa-conformance mutants)",
    ),
    "tosa-reference-model": (
        "conformance.backends.arm:ArmBackend",
        "Arm's C++ reference model (tosa-tools, the 'arm' extra): in process or its executable",
    ),
    "iree": (
        "conformance.backends.iree:IreeBackend",
        "IREE (the 'iree' extra): TOSA MLIR compiled for llvm-cpu and run on local-task; "
        "iree:N compiles N vectors per module",
    ),
    "litert": (
        "conformance.backends.litert:LiteRTBackend",
        "LiteRT (the 'litert' extra): one .tflite model per vector, CPU interpreter",
    ),
    "vulkan": (
        "conformance.backends.vulkan:VulkanBackend",
        "Arm's ML SDK for Vulkan (the 'vulkan' extra): model converter to VGF, run by the "
        "scenario runner on a Vulkan device with the emulation layers; vulkan:device=lvp",
    ),
    "python": (
        "conformance.backends:python_backend",
        "python:MODULE:FACTORY or python:FILE.py:FACTORY, a Python backend without an entry point",
    ),
}

# Built-in backends that need an optional extra: name -> "module:function" telling why
# the backend cannot be made on this machine (None when it can); `backends` shows it.
AVAILABILITY: dict[str, str] = {
    "iree": "conformance.backends.iree:unavailable",
    "litert": "conformance.backends.litert:unavailable",
    "vulkan": "conformance.backends.vulkan:unavailable",
}


def python_backend(argument: str | None) -> Backend:
    """``python:MODULE:FACTORY`` or ``python:PATH.py:FACTORY``: call FACTORY(None)."""
    if not argument or ":" not in argument:
        raise BackendError("python backend needs MODULE:FACTORY or FILE.py:FACTORY")
    where, _, attr = argument.rpartition(":")
    if where.endswith(".py"):
        import importlib.util
        from pathlib import Path

        path = Path(where)
        if not path.is_file():
            raise BackendError(f"python backend: no file {where}")
        spec = importlib.util.spec_from_file_location(f"tosa_backend_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except SyntaxError as exc:
            raise BackendError(
                f"python backend: {where}, line {exc.lineno}: syntax error: {exc.msg}"
            ) from None
        except Exception as exc:  # the user's module: any error is theirs to fix
            raise BackendError(_raised(f"{where} raised on import", exc)) from None
    else:
        try:
            module = import_module(where)
        except SyntaxError as exc:
            raise BackendError(
                f"python backend: {exc.filename}, line {exc.lineno}: syntax error: {exc.msg}"
            ) from None
        except ImportError as exc:
            raise BackendError(f"python backend: cannot import {where}: {exc}") from None
        except Exception as exc:
            raise BackendError(_raised(f"{where} raised on import", exc)) from None
    factory = getattr(module, attr, None)
    if factory is None:
        raise BackendError(f"python backend: {where} has no {attr!r}")
    try:
        return factory(None)
    except BackendError:
        raise
    except Exception as exc:
        raise BackendError(_raised(f"{where}:{attr}(None) raised", exc)) from None


def _raised(what: str, exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"python backend: {what} {type(exc).__name__}" + (f": {text}" if text else "")


def _load(target: str) -> Callable[[str | None], Backend]:
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)


def available() -> dict[str, str]:
    """Every backend name with a one-line description."""
    out = {name: desc for name, (_, desc) in BUILTIN.items()}
    for name, (target, _) in BUILTIN.items():
        manifest = capabilities_of(_load(target))
        if manifest:
            out[name] += f" [capabilities: {manifest}]"
    for name, target in AVAILABILITY.items():
        reason = _load(target)()  # type: ignore[call-arg]
        if reason:
            out[name] += f" [unavailable: {reason}]"
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, f"third party: {ep.value}")
    return out


@dataclass(frozen=True)
class ResolvedBackend:
    """A backend name found: its factory and argument, nothing built yet (so a name is
    checked, or listed, without starting a compiler or loading a model)."""

    name: str
    argument: str | None
    factory: Callable[[str | None], Backend]

    def build(self) -> Backend:
        backend = self.factory(self.argument)
        if not isinstance(backend, Backend):
            raise BackendError(
                f"backend {self.name!r} does not provide name, unsupported() and run()"
            )
        return backend


def resolve(spec: str) -> ResolvedBackend:
    """``NAME`` or ``NAME:ARGUMENT`` resolved to its factory: built-in names first, then
    the entry points of :data:`ENTRY_POINT_GROUP`.  BackendError: no such backend."""
    name, sep, argument = spec.partition(":")
    arg = argument if sep else None
    if name in BUILTIN:
        return ResolvedBackend(name, arg, _load(BUILTIN[name][0]))
    eps = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not eps:
        known = ", ".join(sorted(available()))
        raise BackendError(f"unknown backend {name!r}; known: {known}")
    return ResolvedBackend(name, arg, eps[0].load())


def get_backend(spec: str) -> Backend:
    """A backend from ``NAME`` or ``NAME:ARGUMENT``; BackendError names what is wrong."""
    return resolve(spec).build()
