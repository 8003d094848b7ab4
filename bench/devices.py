"""Backends: the same operations on cpu, opencl (UMat) and cuda (GpuMat).

Part of the suite: ``python bench/run.py --only backends [--backends cpu,opencl,cuda]``.
Every variant gets a warm-up call that is not counted, so pocl's first-use kernel
compilation (0.7-4 s per kernel) and CUDA context set-up are excluded. Device-resident variants take a UMat/GpuMat
and synchronise (``cv2.ocl.finish()`` / the null CUDA stream) inside the timing;
``from host`` variants take and return numpy arrays, transfers included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
from common import SIZE_LABEL, SIZES, Config, Section, Table, measure, paired_ratio, test_gray, test_image
from ops import OPS, PEER_OPS

import cvfilters as cvf
from cvfilters.backends import availability


def _ocl_sync() -> None:
    cv2.ocl.finish()


def _cuda_sync() -> None:
    cv2.cuda.Stream.Null().waitForCompletion()


def _synced(fn: Callable[[], Any], sync: Callable[[], None]) -> Callable[[], Any]:
    def run() -> Any:
        out = fn()
        sync()
        return out

    return run


def _to_device(backend: str, array: Any) -> Any:
    if backend == "opencl":
        return cv2.UMat(array)
    image = cv2.cuda.GpuMat()
    image.upload(array)
    return image


def _fallbacks(op_filter: str, params: dict[str, Any], image: Any, backend: str) -> str:
    _, report = cvf.Pipeline([(op_filter, params)]).run(image, backend=backend)
    found = report.counters.fallbacks
    return ", ".join(f"{name} x{n}" for name, n in sorted(found.items())) or "none"


def section(cfg: Config) -> Section:
    height, width = SIZES[cfg.device_size]
    sec = Section("backends", f"Backends: cpu vs opencl vs cuda, {SIZE_LABEL[cfg.device_size]}, BGR uint8")
    devices, skipped = [], []
    for name in cfg.backends:
        if name == "cpu":
            continue
        status = availability(name)
        if status.available:
            devices.append((name, status.device))
        else:
            skipped.append(f"{name}: not measured, unavailable here ({status.reason})")
    for name in ("opencl", "cuda"):
        if name not in cfg.backends:
            skipped.append(f"{name}: not requested (`--backends` {','.join(cfg.backends)})")

    columns = ["operation", "cpu: cvfilters", "cpu: raw cv2"]
    for name, _ in devices:
        columns += [f"{name}: cvfilters (device-resident)", f"{name}: cvfilters (from host)"]
        if name == "opencl":
            columns.append("opencl: raw cv2 on UMat")
        columns += [f"{name} resident / cpu", f"{name}: host fallbacks"]
    table = Table(f"{SIZE_LABEL[cfg.device_size]} (ms)", columns)
    sync = {"opencl": _ocl_sync, "cuda": _cuda_sync}
    ratios: dict[str, list[float]] = {name: [] for name, _ in devices}
    for key in PEER_OPS:
        op = OPS[key]
        img = test_gray(height, width) if op.gray else test_image(height, width)
        shape = img.shape
        variants: dict[str, Callable[[], Any]] = {
            "cpu": lambda img=img, op=op: cvf.apply(img, op.filter, backend="cpu", **op.params),
            "cpu-raw": op.raw(img, shape)}
        fallbacks = {}
        for name, _ in devices:
            resident = _to_device(name, img)
            variants[name] = _synced(lambda r=resident, n=name, op=op: cvf.apply(r, op.filter, backend=n, **op.params),
                                     sync[name])
            variants[f"{name}-host"] = lambda n=name, img=img, op=op: cvf.apply(img, op.filter, backend=n, **op.params)
            if name == "opencl":
                variants["opencl-raw"] = _synced(op.raw(resident, shape), _ocl_sync)
            fallbacks[name] = _fallbacks(op.filter, op.params, resident, name)
        stats = measure(variants, cfg)
        row = [op.label, stats["cpu"].cell(), stats["cpu-raw"].cell()]
        for name, _ in devices:
            row += [stats[name].cell(), stats[f"{name}-host"].cell()]
            if name == "opencl":
                row.append(stats["opencl-raw"].cell())
            value = paired_ratio(stats[name], stats["cpu"])
            row += [f"{value:.2f}x", fallbacks[name]]
            ratios[name].append(value)
        table.rows.append(row)
        del stats, variants
    table.notes += [f"{name}: {device}" for name, device in devices]
    table.notes += skipped
    table.notes += [
        "Device-resident: `cvf.apply(umat_or_gpumat, ..., backend=B)` plus a device synchronisation; "
        "from host: `cvf.apply(ndarray, ..., backend=B)` (upload, run, download). Raw cv2 on UMat: the same "
        "cv2 calls as the raw cpu column with UMat arguments.",
        "A pocl OpenCL device runs on the same 2 CPU cores as the cpu backend; it is expected to be slower. "
        "OpenCV 5 has no OpenCL kernel for GaussianBlur, medianBlur above 5 and adaptiveThreshold: on a UMat they "
        "run the CPU code plus copies.",
    ]
    if any(name == "opencl" for name, _ in devices):
        resident = cv2.UMat(test_image(height, width))
        get = measure({"get": resident.get}, cfg)["get"]
        table.notes.append(f"`cvfilters.backends.execution.info_of` reads a UMat's shape with `UMat.get()`, "
                           f"a full download "
                           f"on every call; that alone costs {get.cell()} ms here for the BGR image and is part "
                           "of every device-resident opencl time above.")
    sec.tables.append(table)
    for name, device in devices:
        values = sorted(ratios[name])
        sec.summary.append([f"{name} ({device}) vs cpu, device-resident", "(no target)",
                            f"{values[len(values) // 2]:.2f}x the cpu time (median over {len(values)} ops; "
                            f"{values[0]:.2f}x to {values[-1]:.2f}x)", "n/a"])
    for line in skipped:
        if line.startswith("cuda"):
            sec.summary.append(["cuda vs cpu", "(no target)", line.split(": ", 1)[1], "n/a"])
    return sec
