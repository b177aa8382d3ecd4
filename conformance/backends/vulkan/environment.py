"""Where Arm's ML SDK for Vulkan is, and the environment its Vulkan device needs.

The SDK's pieces are Python distributions (the ``vulkan`` extra); the Vulkan loader
and a device are the system's (Debian: ``libvulkan1``, and ``mesa-vulkan-drivers`` for
lavapipe, a CPU device).  :func:`missing` names the first piece that is absent and
the command that installs it.

The emulation layers implement ``VK_ARM_tensors`` and ``VK_ARM_data_graph`` over any
device.  Their manifests ship in one folder, and Debian 12's loader (1.3.239) stacks
explicit layers in the order it finds their manifests, which puts the tensor layer
first and fails with "requires extension: VK_ARM_tensors".  So each manifest is copied
into its own folder, with an absolute ``library_path``, and the graph layer's folder
comes first in ``VK_LAYER_PATH`` (:func:`layer_environment`; docs/vulkan.md).
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import json
import os
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

__all__ = [
    "APT_HINT", "DISTRIBUTIONS", "PIP_HINT", "Device", "converter", "devices",
    "layer_environment", "missing", "sdk_versions",
]  # fmt: skip

PIP_HINT = "pip install -e '.[vulkan]'"
APT_HINT = "apt-get install -y libvulkan1 mesa-vulkan-drivers"
# Python module -> the distribution that provides it.
DISTRIBUTIONS = (
    ("model_converter", "ai-ml-sdk-model-converter"),
    ("scenario_runner_py", "ai-ml-sdk-scenario-runner"),
    ("emulation_layer", "ai-ml-emulation-layer-for-vulkan"),
    ("vgf_lib", "ai-ml-sdk-vgf-library"),
)
# The layers, graph first: the order the loader must stack them in.
LAYERS = (
    ("VK_LAYER_ML_Graph_Emulation", "VkLayer_Graph"),
    ("VK_LAYER_ML_Tensor_Emulation", "VkLayer_Tensor"),
)
# Where the loader looks for drivers (ICD manifests) when nothing overrides it.
ICD_FOLDERS = ("/usr/share/vulkan/icd.d", "/usr/local/share/vulkan/icd.d", "/etc/vulkan/icd.d")


def _package_dir(module: str) -> Path | None:
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if found is None or found.origin is None:
        return None
    return Path(found.origin).parent


@dataclass(frozen=True)
class Device:
    """A Vulkan driver the loader can be pointed at: its manifest's name and file."""

    name: str  # the manifest's file name up to "_icd" (lvp, radeon, intel, ...)
    manifest: Path


def devices(folders: tuple[str, ...] = ICD_FOLDERS) -> list[Device]:
    """The drivers installed, by manifest (``lvp`` is Mesa's lavapipe)."""
    out = []
    for folder in folders:
        for path in sorted(Path(folder).glob("*.json")) if Path(folder).is_dir() else ():
            out.append(Device(path.name.split("_icd")[0].split(".")[0], path))
    return out


def find_device(choice: str) -> Device:
    """The driver ``choice`` names: a manifest's name (``lvp``) or its path.
    ValueError names the ones there are."""
    if choice.endswith(".json"):
        path = Path(choice)
        if not path.is_file():
            raise ValueError(f"no Vulkan driver manifest {choice}")
        return Device(path.name.split("_icd")[0], path.resolve())
    found = [d for d in devices() if d.name == choice]
    if not found:
        known = ", ".join(sorted({d.name for d in devices()})) or "none installed"
        raise ValueError(f"no Vulkan driver {choice!r}; drivers: {known}")
    return found[0]


def missing() -> str | None:
    """What is missing for the backend, and the command that installs it; None when
    nothing is (nothing is imported)."""
    for module, dist in DISTRIBUTIONS:
        if _package_dir(module) is None:
            return f"{dist} is not installed; {PIP_HINT}"
    if ctypes.util.find_library("vulkan") is None:
        return f"the Vulkan loader (libvulkan.so.1) is not installed; {APT_HINT}"
    if not devices():
        return f"no Vulkan driver is installed (lavapipe is a CPU one); {APT_HINT}"
    return None


def converter() -> Path:
    """The model converter's executable (the distribution's, not its Python wrapper)."""
    base = _package_dir("model_converter")
    if base is None:
        raise FileNotFoundError(f"ai-ml-sdk-model-converter is not installed; {PIP_HINT}")
    return base / "binaries" / "bin" / "model-converter"


def scenario_runner() -> Path:
    """The scenario runner's executable (the reproducers run it)."""
    base = _package_dir("scenario_runner")
    if base is None:
        raise FileNotFoundError(f"ai-ml-sdk-scenario-runner is not installed; {PIP_HINT}")
    return base / "binaries" / "bin" / "scenario-runner"


def vgf_dump() -> Path:
    """The VGF library's dump tool, which reads a VGF's bindings."""
    base = _package_dir("vgf_lib")
    if base is None:
        raise FileNotFoundError(f"ai-ml-sdk-vgf-library is not installed; {PIP_HINT}")
    return base / "binaries" / "bin" / "vgf_dump"


def layer_environment(folder: Path, device: Device | None = None) -> dict[str, str]:
    """The environment that stacks the emulation layers (their manifests written under
    ``folder``, one folder each, graph first), on ``device`` when one is chosen."""
    base = _package_dir("emulation_layer")
    if base is None:
        raise FileNotFoundError(f"ai-ml-emulation-layer-for-vulkan is not installed; {PIP_HINT}")
    deploy = base / "deploy"
    lib = deploy / "lib"
    paths = []
    for _name, stem in LAYERS:
        shipped = deploy / "share/vulkan/explicit_layer.d" / f"{stem}.json"
        manifest = json.loads(shipped.read_text())
        manifest["layer"]["library_path"] = str(lib / f"lib{stem}.so")
        own = folder / stem
        own.mkdir(parents=True, exist_ok=True)
        (own / f"{stem}.json").write_text(json.dumps(manifest, indent=1))
        paths.append(str(own))
    env = {
        "VK_LAYER_PATH": os.pathsep.join(paths),
        "VK_INSTANCE_LAYERS": ":".join(name for name, _ in LAYERS),
        "LD_LIBRARY_PATH": os.pathsep.join(
            p for p in (str(lib), os.environ.get("LD_LIBRARY_PATH", "")) if p
        ),
    }
    if device is not None:
        # The newer loader reads VK_DRIVER_FILES, Debian 12's VK_ICD_FILENAMES.
        env["VK_DRIVER_FILES"] = env["VK_ICD_FILENAMES"] = str(device.manifest)
    return env


def sdk_versions() -> dict[str, str]:
    """The installed version of each SDK distribution (certificates record them)."""
    out = {}
    for _module, dist in DISTRIBUTIONS:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out
