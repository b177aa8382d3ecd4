"""What a Vulkan device claims of TOSA: the capability query of ``VK_ARM_data_graph``.

A queue family that runs data graphs lists, per processing engine, the operation sets
it takes (``vkGetPhysicalDeviceQueueFamilyDataGraphPropertiesARM``); for the TOSA
instruction set, ``VK_ARM_data_graph_instruction_set_tosa`` then reports the profiles
and extensions it supports, each with quality flags (accelerated, conformant,
experimental, deprecated), and its level
(``vkGetPhysicalDeviceQueueFamilyDataGraphEngineOperationPropertiesARM`` with a
``VkQueueFamilyDataGraphTOSAPropertiesARM``).  That report is the device's claim: a
vector that needs an extension the device does not report is skipped, and a
certificate names the claim.

The query runs in a child process with the layer environment, so the Vulkan loader
never loads into the runner; ``python -m conformance.backends.vulkan.claim
[ICD_MANIFEST]`` prints its report as JSON.  It needs no headers: the structures are
laid out here with ctypes, as the Vulkan registry defines them.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["QUALITY", "DeviceClaim", "device_claim", "parse", "query", "report"]

# VkStructureType values (Vulkan registry).
_APPLICATION_INFO = 0
_INSTANCE_CREATE_INFO = 1
_QUEUE_FAMILY_DATA_GRAPH_PROPERTIES = 1000507018
_QUEUE_FAMILY_DATA_GRAPH_TOSA_PROPERTIES = 1000508000
_API_VERSION_1_3 = (1 << 22) | (3 << 12)
_NAME_SIZE = 128  # VK_MAX_DATA_GRAPH_TOSA_NAME_SIZE_ARM, and the operation's name
# VkDataGraphTOSAQualityFlagBitsARM
QUALITY = {1: "accelerated", 2: "conformant", 4: "experimental", 8: "deprecated"}
_LEVELS = {0: "none", 1: "8K"}  # VkDataGraphTOSALevelARM
_CHILD = "TOSA_CONFORMANCE_VULKAN_QUERY"  # set in the child that makes the Vulkan calls
_OPERATION_TYPES = {0: "SPIR-V extended instruction set", 1: "neural model", 2: "builtin model"}


class _ApplicationInfo(ctypes.Structure):
    _fields_ = [
        ("sType", ctypes.c_int), ("pNext", ctypes.c_void_p),
        ("pApplicationName", ctypes.c_char_p), ("applicationVersion", ctypes.c_uint32),
        ("pEngineName", ctypes.c_char_p), ("engineVersion", ctypes.c_uint32),
        ("apiVersion", ctypes.c_uint32),
    ]  # fmt: skip


class _InstanceCreateInfo(ctypes.Structure):
    _fields_ = [
        ("sType", ctypes.c_int), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32),
        ("pApplicationInfo", ctypes.POINTER(_ApplicationInfo)),
        ("enabledLayerCount", ctypes.c_uint32), ("ppEnabledLayerNames", ctypes.c_void_p),
        ("enabledExtensionCount", ctypes.c_uint32), ("ppEnabledExtensionNames", ctypes.c_void_p),
    ]  # fmt: skip


class _DataGraphProperties(ctypes.Structure):
    # VkQueueFamilyDataGraphPropertiesARM: engine {type, isForeign}, operation
    # {operationType, name, version}
    _fields_ = [
        ("sType", ctypes.c_int), ("pNext", ctypes.c_void_p),
        ("engineType", ctypes.c_int), ("isForeign", ctypes.c_uint32),
        ("operationType", ctypes.c_int), ("name", ctypes.c_char * _NAME_SIZE),
        ("version", ctypes.c_uint32),
    ]  # fmt: skip


class _NameQuality(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * _NAME_SIZE), ("qualityFlags", ctypes.c_uint32)]


class _TosaProperties(ctypes.Structure):
    _fields_ = [
        ("sType", ctypes.c_int), ("pNext", ctypes.c_void_p),
        ("profileCount", ctypes.c_uint32), ("pProfiles", ctypes.POINTER(_NameQuality)),
        ("extensionCount", ctypes.c_uint32), ("pExtensions", ctypes.POINTER(_NameQuality)),
        ("level", ctypes.c_int),
    ]  # fmt: skip


def _flags(bits: int) -> list[str]:
    return [name for bit, name in QUALITY.items() if bits & bit]


def _names(array: Any, count: int) -> dict[str, list[str]]:
    return {array[i].name.decode(): _flags(array[i].qualityFlags) for i in range(count)}


def query() -> dict[str, Any]:
    """Ask the Vulkan loader of this process (its environment as it is) for every
    device's data-graph operation sets and TOSA claims."""
    vk = ctypes.CDLL("libvulkan.so.1")
    app = _ApplicationInfo(
        _APPLICATION_INFO, None, b"tosa-conformance", 1, None, 0, _API_VERSION_1_3
    )
    info = _InstanceCreateInfo(
        _INSTANCE_CREATE_INFO, None, 0, ctypes.pointer(app), 0, None, 0, None
    )
    instance = ctypes.c_void_p()
    status = vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance))
    if status != 0:
        raise RuntimeError(f"vkCreateInstance returned VkResult {status}")
    proc = vk.vkGetInstanceProcAddr
    proc.restype = ctypes.c_void_p
    proc.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

    def function(name: str, *args: Any) -> Any:
        address = proc(instance, name.encode())
        if not address:
            return None
        return ctypes.CFUNCTYPE(ctypes.c_int, *args)(address)

    properties_2 = ctypes.c_uint32 * 206  # VkPhysicalDeviceProperties: name at offset 20
    count = ctypes.c_uint32()
    vk.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), None)
    handles = (ctypes.c_void_p * count.value)()
    vk.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), handles)
    graph_sets = function(
        "vkGetPhysicalDeviceQueueFamilyDataGraphPropertiesARM",
        ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32), ctypes.c_void_p,
    )  # fmt: skip
    engine_properties = function(
        "vkGetPhysicalDeviceQueueFamilyDataGraphEngineOperationPropertiesARM",
        ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(_DataGraphProperties), ctypes.c_void_p,
    )  # fmt: skip
    found = []
    for handle in handles:
        props = properties_2()
        vk.vkGetPhysicalDeviceProperties(ctypes.c_void_p(handle), ctypes.byref(props))
        device_name = bytes(props)[20 : 20 + 256].split(b"\0")[0].decode()
        families = ctypes.c_uint32()
        vk.vkGetPhysicalDeviceQueueFamilyProperties(
            ctypes.c_void_p(handle), ctypes.byref(families), None
        )
        sets = []
        for family in range(families.value if graph_sets is not None else 0):
            n = ctypes.c_uint32()
            graph_sets(handle, family, ctypes.byref(n), None)
            if not n.value:
                continue
            array = (_DataGraphProperties * n.value)()
            for item in array:
                item.sType = _QUEUE_FAMILY_DATA_GRAPH_PROPERTIES
            graph_sets(handle, family, ctypes.byref(n), array)
            for item in array:
                entry: dict[str, Any] = {
                    "queue_family": family,
                    "operation": _OPERATION_TYPES.get(item.operationType, str(item.operationType)),
                    "name": item.name.decode(),
                    "version": item.version,
                    "foreign": bool(item.isForeign),
                }
                if item.name.decode().startswith("TOSA") and engine_properties is not None:
                    tosa = _TosaProperties()
                    tosa.sType = _QUEUE_FAMILY_DATA_GRAPH_TOSA_PROPERTIES
                    status = engine_properties(
                        handle, family, ctypes.byref(item), ctypes.byref(tosa)
                    )
                    if status == 0:
                        entry["profiles"] = _names(tosa.pProfiles, tosa.profileCount)
                        entry["extensions"] = _names(tosa.pExtensions, tosa.extensionCount)
                        entry["level"] = _LEVELS.get(tosa.level, str(tosa.level))
                sets.append(entry)
        found.append({"device": device_name, "data_graph": sets})
    vk.vkDestroyInstance(instance, None)
    return {"devices": found}


@dataclass(frozen=True)
class DeviceClaim:
    """The TOSA claim of one device: names as TOSA writes them (PRO-INT, EXT-INT16),
    each with its quality flags."""

    device: str
    instruction_set: str
    profiles: dict[str, list[str]]
    extensions: dict[str, list[str]]
    level: str

    def names_tosa(self) -> bool:
        """Whether the report uses TOSA's profile names (PRO-INT, PRO-FP), so that
        what it leaves out is not claimed."""
        return any(name.startswith("PRO-") for name in self.profiles)

    def summary(self) -> str:
        def part(names: dict[str, list[str]]) -> str:
            return ", ".join(f"{n} ({'/'.join(f) or 'no quality'})" for n, f in names.items())

        return (
            f"profiles {part(self.profiles) or 'none'}; extensions "
            f"{part(self.extensions) or 'none'}; level {self.level}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device, "instruction_set": self.instruction_set,
            "profiles": self.profiles, "extensions": self.extensions, "level": self.level,
        }  # fmt: skip


def parse(report: dict[str, Any]) -> DeviceClaim | str:
    """The first device's TOSA claim in a :func:`query` report, or why there is none."""
    for device in report.get("devices", []):
        for entry in device.get("data_graph", []):
            if entry.get("name", "").startswith("TOSA") and "profiles" in entry:
                return DeviceClaim(
                    device["device"], entry["name"], entry["profiles"],
                    entry["extensions"], entry["level"],
                )  # fmt: skip
    names = ", ".join(d.get("device", "?") for d in report.get("devices", [])) or "none"
    return f"no Vulkan device reports a TOSA instruction set (devices: {names})"


def report(device_manifest: str | None = None) -> dict[str, Any] | str:
    """:func:`query`'s report, run in a child process with the emulation layers (on the
    driver of ``device_manifest`` when given), or why it failed."""
    from conformance.backends.vulkan.environment import layer_environment

    env = dict(os.environ)
    env.update(layer_environment(Path(tempfile.gettempdir()) / "tosa-vulkan-layers"))
    if device_manifest is not None:
        env["VK_DRIVER_FILES"] = env["VK_ICD_FILENAMES"] = device_manifest
    env[_CHILD] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.backends.vulkan.claim"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"the Vulkan capability query failed: {last}"
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@cache
def device_claim(device_manifest: str | None = None) -> DeviceClaim | str:
    """The device's TOSA claim (:func:`report`), or why there is none."""
    found = report(device_manifest)
    return found if isinstance(found, str) else parse(found)


def main() -> None:
    """Print the report: the query itself in the child, else the child's answer."""
    if os.environ.get(_CHILD):
        try:
            print(json.dumps(query(), indent=1))
        except (OSError, RuntimeError) as e:
            print(f"vulkan claim query: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        return
    found = report(sys.argv[1] if len(sys.argv) > 1 else None)
    if isinstance(found, str):
        print(found, file=sys.stderr)
        raise SystemExit(2)
    print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
