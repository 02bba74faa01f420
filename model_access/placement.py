"""Placing one local model over several devices (local.device_map, through accelerate).

Three jobs: check a placement before any weight loads (the devices exist on this machine; an
explicit map names only the model's modules and leaves none out, checked on an empty "meta"
copy built from the config, so a wrong map costs a second, not a 70B load); the arguments
from_pretrained takes; and, once loaded, where each module really runs — accelerate's hooks
move an offloaded block's weights in for its forward, so its parameters sit on "meta" while it
runs on the hook's execution device, and only the hook knows."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from itertools import chain
from typing import TYPE_CHECKING, Any

from diarylab.foundation.errors import LabError
from diarylab.model_access.devices import Device, device_name, torch_name
from diarylab.model_access.loading import ModelSource, offline
from diarylab.model_access.settings import LocalSettings

if TYPE_CHECKING:
    import torch

WHERE = "local.device_map"
MAP_FIX = (
    'map each module to a device (print the model to see its modules), or use device_map = "auto"'
)


def check_placement(source: ModelSource, settings: LocalSettings) -> None:
    """Every placement mistake as one LabError before loading: devices first (cheap), then an
    explicit map against the model's own module names."""
    check_machine(settings)
    placement = settings.placement_map()
    if isinstance(placement, dict) and "" not in placement:
        modules, tensors = empty_model_names(source, settings)
        check_map(placement, modules, tensors)


def machine_gpus() -> int:
    import torch  # here: a check that names no GPU must not wait for torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_machine(settings: LocalSettings) -> None:
    """The devices a placement names exist here ("cuda:3" on a machine with two GPUs does not)."""
    placement = settings.placement_map()
    named: list[tuple[str, Device]] = []
    if settings.device is not None:
        # another torch device type ("xpu") is not ours to check: torch says if it exists
        with suppress(ValueError):
            named.append(("local.device", device_name(settings.device)))
    if isinstance(placement, dict):
        named += [(WHERE, d) for d in placement.values()]
    named += [("local.max_memory", d) for d in (settings.memory_limits() or {})]
    gpus = machine_gpus() if any(isinstance(d, int) for _, d in named) else 0
    for where, device in named:
        if isinstance(device, int) and device >= gpus:
            have = f"GPUs cuda:0..cuda:{gpus - 1}" if gpus else "no GPU"
            raise LabError(
                f"device {torch_name(device)} does not exist on this machine ({have})",
                where=where,
                fix="name a device this machine has (cpu, disk"
                + (f", 0..{gpus - 1}" if gpus else "")
                + '), or use device_map = "auto" to fill what there is',
            )
        if device == "mps" and not _mps_available():
            raise LabError(
                "device mps does not exist on this machine", where=where, fix='use "cpu"'
            )


def empty_model_names(source: ModelSource, settings: LocalSettings) -> tuple[set[str], list[str]]:
    """The module names and the parameter and buffer names of the model, from an empty copy
    (no weights read: accelerate's init_empty_weights builds it on the meta device)."""
    from accelerate import init_empty_weights
    from transformers import AutoConfig, AutoModelForCausalLM

    kwargs: dict[str, Any] = {"trust_remote_code": settings.trust_remote_code}
    if settings.revision:
        kwargs["revision"] = settings.revision
    if source.gguf_file:
        kwargs["gguf_file"] = source.gguf_file
    if source.kind == "hub" and offline():
        kwargs["local_files_only"] = True
    try:
        config = AutoConfig.from_pretrained(source.location, **kwargs)
    except (OSError, ValueError) as exc:
        raise LabError(
            f"cannot read the configuration of {source.spec!r} to check the device map: "
            f"{str(exc).splitlines()[0][:300]}",
            where=WHERE,
            fix="make the model's config.json readable (download it first), or use "
            'device_map = "auto"',
        ) from exc
    with init_empty_weights():
        empty = AutoModelForCausalLM.from_config(
            config, trust_remote_code=settings.trust_remote_code
        )
    modules = {name for name, _ in empty.named_modules()}
    tensors = [name for name, _ in chain(empty.named_parameters(), empty.named_buffers())]
    return modules, tensors


def check_map(placement: dict[str, Device], modules: set[str], tensors: Iterable[str]) -> None:
    """An explicit map names only modules the model has, and every weight falls under one."""
    unknown = sorted(m for m in placement if m not in modules)
    if unknown:
        raise LabError(
            f"the model has no module {unknown[0]!r}"
            + (f" (nor {', '.join(map(repr, unknown[1:4]))})" if len(unknown) > 1 else "")
            + f"; its top modules are {', '.join(_top_modules(modules))}",
            where=WHERE,
            fix=MAP_FIX,
        )
    tensors = list(tensors)
    left_out = sorted(
        {_uncovered_module(t, placement) for t in tensors if not _covered(t, placement)}
    )
    if left_out:
        shown = ", ".join(map(repr, left_out[:6])) + (" ..." if len(left_out) > 6 else "")
        raise LabError(
            f"the map leaves out {len(left_out)} module(s): {shown}",
            where=WHERE,
            fix='give every module a device (a map may name a parent, e.g. "model.layers.3" '
            'for all of that layer), or use device_map = "auto"',
        )
    # the most specific key holding the first weight places it, as in accelerate
    holders = [m for m in placement if tensors and _covered(tensors[0], {m: 0})]
    first = placement[max(holders, key=len)] if holders else None
    gpus = any(isinstance(d, int) for d in placement.values())
    if first == "disk" or (first == "cpu" and gpus):
        raise _offloaded_first(tensors[0].rsplit(".", 1)[0])


def _offloaded_first(module: str) -> LabError:
    # Offloaded weights wait on "meta" until their block runs, and transformers' generate
    # reads the model's device from its first weight: it would build its inputs on "meta".
    return LabError(
        f"the map offloads the model's first weights ({module}), and generation reads the "
        "model's device from them",
        where=WHERE,
        fix=f"put {module} on the device that computes first (a GPU, or cpu on a machine "
        "without one), or give max_memory room for it",
    )


def check_loaded(model: Any) -> None:
    """A map made by "auto" can offload the first weights too (max_memory too small for the
    embeddings): refused as an explicit map doing so is, before the model is used."""
    name, first = next(iter(model.named_parameters()))
    if first.device.type == "meta":
        raise _offloaded_first(name.rsplit(".", 1)[0])


def _covered(tensor: str, placement: dict[str, Device]) -> bool:
    return any(tensor == m or tensor.startswith(m + ".") for m in placement)


def _uncovered_module(tensor: str, placement: dict[str, Device]) -> str:
    """The largest module holding `tensor` that the map says nothing about (a whole missing
    layer is named as "model.layers.1", not as its nine weights)."""
    parts = tensor.split(".")
    for end in range(1, len(parts) + 1):
        module = ".".join(parts[:end])
        if not any(m == module or m.startswith(module + ".") for m in placement):
            return module
    return tensor


def _top_modules(modules: set[str]) -> list[str]:
    """The map's usual granularity: the children of the decoder stack's ModuleList collapsed
    to a range ("model.layers.0..29"), everything else at depth two."""
    names = sorted({".".join(m.split(".")[:3]) for m in modules if m})
    layers = [n for n in names if n.rsplit(".", 1)[-1].isdigit()]
    others = [n for n in names if n not in layers and not any(x.startswith(n + ".") for x in names)]
    if layers:
        stem = layers[0].rsplit(".", 1)[0]
        count = sum(1 for n in layers if n.rsplit(".", 1)[0] == stem)
        others.append(f"{stem}.0..{stem}.{count - 1}")
    return sorted(others)


def pretrained_kwargs(settings: LocalSettings) -> dict[str, Any]:
    """What from_pretrained takes for the placement (nothing for a one-device load)."""
    placement = settings.placement_map()
    if placement is None:
        return {}
    kwargs: dict[str, Any] = {"device_map": placement}
    if (limits := settings.memory_limits()) is not None:
        kwargs["max_memory"] = limits
    if settings.offload_folder is not None:
        kwargs["offload_folder"] = settings.offload_folder
    return kwargs


def _mps_available() -> bool:
    import torch

    return bool(torch.backends.mps.is_available())


def main_device(settings: LocalSettings) -> torch.device:
    import torch

    """The device a mapped model computes on first (what picks the default dtype): its first
    GPU, or the CPU on a map (or a machine) without one."""
    placement = settings.placement_map()
    if isinstance(placement, dict):
        gpus = sorted(d for d in placement.values() if isinstance(d, int))
        return torch.device(torch_name(gpus[0])) if gpus else torch.device("cpu")
    return torch.device("cuda" if machine_gpus() else "cpu")


def execution_device(root: torch.nn.Module, path: str) -> torch.device:
    """Where the module at `path` (dotted, from `root`) runs: the execution device of the
    nearest accelerate hook on it or above it, else the device of its own weights."""
    import torch

    modules = [root]
    for part in [p for p in path.split(".") if p]:
        modules.append(modules[-1].get_submodule(part))
    for module in reversed(modules):
        device = _hook_device(getattr(module, "_hf_hook", None))
        if device is not None:
            return device
    for tensor in chain(modules[-1].parameters(), modules[-1].buffers()):
        if tensor.device.type != "meta":
            return tensor.device
    return torch.device("cpu")


def _hook_device(hook: Any) -> torch.device | None:
    import torch

    # A SequentialHook holds several; an AlignDevicesHook has the execution device.
    for one in getattr(hook, "hooks", None) or ([hook] if hook is not None else []):
        device = getattr(one, "execution_device", None)
        if device is not None:
            return torch.device(torch_name(device) if isinstance(device, int) else device)
    return None


def placement_record(model: Any, settings: LocalSettings) -> dict[str, Any]:
    """Where a loaded model's modules are, for the manifest: what was asked, the map that was
    made, the devices it spans, and whether that is one device."""
    made = getattr(model, "hf_device_map", None)
    if made:
        resolved = {m: torch_name(d) if isinstance(d, int) else str(d) for m, d in made.items()}
    else:
        resolved = {"": str(next(model.parameters()).device)}
    devices = sorted(set(resolved.values()))
    single = len(devices) == 1 and devices != ["disk"]
    record: dict[str, Any] = {
        "device_map": settings.device_map,
        "max_memory": settings.max_memory,
        "resolved_map": resolved,
        "devices": devices,
        "single_device": single,
    }
    if settings.device_map == "auto" and single:
        record["note"] = f"auto found one device ({devices[0]}): loaded as a single-device model"
    return record
