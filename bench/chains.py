"""Chains: cvfilters pipelines fused and unfused vs the hand-written cv2 sequence.

Part of the suite: ``python bench/run.py --only chains``. Targets: the colour chain fused
is >= 3x faster than its four raw cv2 calls and within 1.2x of one ``cv2.LUT``; the warp
chain fused is within 1.3x of one ``cv2.remap``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
from common import SIZE_LABEL, SIZES, Config, Section, Table, max_diff, measure, ms, paired_ratio, verdict
from common import test_image as _test_image
from ops import SHARPEN3, vignette_mask

import cvfilters as cvf

COLOUR = "gamma:gamma=1.4 | brightness_contrast:brightness=10,contrast=1.2 | posterize:levels=16 | invert"
WARP = "rotate:angle=10 | swirl | flip"
BLUR = "gaussian_blur:sigma=2 | sharpen | vignette"


# ----------------------------------------------------------------------------- hand-written cv2
def colour_tables() -> tuple[np.ndarray, np.ndarray]:
    """The gamma and posterize tables, written from their formulas."""
    levels = np.arange(256, dtype=np.float64) / 255
    gamma = np.round(255 * levels ** (1 / 1.4)).astype(np.uint8)
    poster = np.round(255 * np.minimum(np.floor(levels * 16 + 1e-9), 15) / 15).astype(np.uint8)
    return gamma, poster


def colour_raw(img: np.ndarray) -> Any:
    gamma, poster = colour_tables()
    out = cv2.LUT(img, gamma)
    out = cv2.convertScaleAbs(out, alpha=1.2, beta=10)
    out = cv2.LUT(out, poster)
    return cv2.bitwise_not(out)


def colour_single_table() -> np.ndarray:
    """The four steps composed into one table (run on the 256 values themselves)."""
    return colour_raw(np.arange(256, dtype=np.uint8).reshape(1, 256)).reshape(256)


def warp_maps(height: int, width: int) -> dict[str, np.ndarray]:
    """Hand-written maps: rotate 10 degrees, swirl (scikit-image's formula), flip; and their composition.

    Each map gives the source of every output pixel (``cv2.remap`` convention). The
    composition is exact (evaluated analytically, no resampling of maps): output pixel p
    of flip(swirl(rotate(img))) comes from rotate_map(swirl_map(flip(p))).
    """
    x = np.arange(width, dtype=np.float32)[None, :]
    y = np.arange(height, dtype=np.float32)[:, None]
    cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
    theta = math.radians(10.0)
    cos, sin = math.cos(theta), math.sin(theta)
    decay = 0.75 * min(width, height) * math.log(2) / 5.0

    def swirl(px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dx, dy = px - cx, py - cy
        turn = 5.0 * np.exp(-np.hypot(dx, dy) / decay)
        c, s = np.cos(turn), np.sin(turn)
        return (cx + dx * c - dy * s).astype(np.float32), (cy + dx * s + dy * c).astype(np.float32)

    swirl_x, swirl_y = swirl(np.broadcast_to(x, (height, width)), np.broadcast_to(y, (height, width)))
    # flip first: the swirl is evaluated at the mirrored position; then the rotation (affine) on top.
    sx, sy = swirl_x[:, ::-1], swirl_y[:, ::-1]
    dx, dy = sx - cx, sy - cy
    composed_x = np.ascontiguousarray(cx + cos * dx - sin * dy, dtype=np.float32)
    composed_y = np.ascontiguousarray(cy + sin * dx + cos * dy, dtype=np.float32)
    # warpAffine with WARP_INVERSE_MAP takes the dst -> src matrix directly.
    rotate = np.array([[cos, -sin, cx - cos * cx + sin * cy], [sin, cos, cy - sin * cx - cos * cy]], np.float64)
    return {"swirl_x": swirl_x, "swirl_y": swirl_y, "x": composed_x, "y": composed_y, "rotate": rotate}


def warp_raw(img: np.ndarray, maps: dict[str, np.ndarray], swirl_border: int) -> Any:
    height, width = img.shape[:2]
    out = cv2.warpAffine(img, maps["rotate"], (width, height), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_CONSTANT)
    out = cv2.remap(out, maps["swirl_x"], maps["swirl_y"], cv2.INTER_LINEAR, borderMode=swirl_border)
    return cv2.flip(out, 1)


def blur_raw(img: np.ndarray, mask: np.ndarray) -> Any:
    out = cv2.GaussianBlur(img, (0, 0), 2)
    out = cv2.filter2D(out, -1, SHARPEN3)
    return cv2.multiply(out, mask, dtype=cv2.CV_8U)


# ----------------------------------------------------------------------------- section
def _pipelines(spec: str) -> tuple[cvf.Pipeline, cvf.Pipeline, int]:
    fused, unfused = cvf.Pipeline.parse(spec, fuse=True), cvf.Pipeline.parse(spec, fuse=False)
    return fused, unfused, len(fused.compile())


def _chain_table(title: str, spec: str, img: np.ndarray, hand: tuple[str, Callable[[], Any]],
                 single: tuple[str, Callable[[], Any]] | None, cfg: Config) -> tuple[Table, dict[str, float]]:
    fused, unfused, plan_steps = _pipelines(spec)
    variants = {"fused": lambda: fused(img, backend="cpu"), "unfused": lambda: unfused(img, backend="cpu"),
                "hand": hand[1]}
    if single:
        variants["single"] = single[1]
    stats = measure(variants, cfg, keep=True)
    labels = {"fused": f"cvfilters, fused ({plan_steps} step{'s' if plan_steps > 1 else ''} run)",
              "unfused": f"cvfilters, `fuse=False` ({len(unfused)} steps)", "hand": hand[0]}
    if single:
        labels["single"] = single[0]
    table = Table(f"{title}, {SIZE_LABEL[size_of(img)]}: `{spec}`",
                  ["variant", "ms", "hand-written / this", "max |diff| vs hand-written", "first call (ms)"])
    for name, label in labels.items():
        stat = stats[name]
        table.rows.append([label, stat.cell(), f"{paired_ratio(stats['hand'], stat):.2f}x",
                           "-" if name == "hand" else max_diff(stats["hand"].result, stat.result),
                           ms(stat.cold) if stat.cold is not None else "-"])
    if plan_steps == len(unfused) > 1:
        table.notes.append(f"`Pipeline.compile()` left this chain unfused: {plan_steps} steps run either way.")
    table.notes.append("first call: the warm-up call, not in the medians: it includes building and caching "
                       "tables and maps (cvfilters) on first use.")
    out = {name: stat.median for name, stat in stats.items()}
    out["fused/single"] = paired_ratio(stats["fused"], stats["single"]) if single else 0.0
    out["hand/fused"] = paired_ratio(stats["hand"], stats["fused"])
    return table, out


def size_of(img: np.ndarray) -> str:
    return next((k for k, v in SIZES.items() if v == img.shape[:2]), "tiny")


def section(cfg: Config) -> Section:
    height, width = SIZES[cfg.chain_size]
    img = np.array(_test_image(height, width))
    sizes = SIZE_LABEL[cfg.chain_size] + ("" if cfg.warp_size == cfg.chain_size else
                                          f" (warp chains: {SIZE_LABEL[cfg.warp_size]})")
    sec = Section("chains", f"Chains at {sizes}: fused vs unfused vs hand-written cv2 (cpu)")

    single = colour_single_table()
    table, t = _chain_table("Colour chain", COLOUR, img, ("hand-written cv2: 2 LUT + convertScaleAbs + bitwise_not",
                                                          lambda: colour_raw(img)),
                            ("one `cv2.LUT` with the composed table", lambda: cv2.LUT(img, single)), cfg)
    speedup, vs_lut = t["hand/fused"], t["fused/single"]
    table.notes.append("The hand-written tables follow the filters' formulas; `max |diff|` checks that both sides "
                       "compute the same image.")
    sec.tables.append(table)
    sec.summary.append([f"colour chain (4 steps, {SIZE_LABEL[cfg.chain_size]}), fused vs 4 raw cv2 calls",
                        ">= 3x faster",
                        f"{speedup:.2f}x", verdict(speedup >= 3.0)])
    sec.summary.append(["colour chain, fused vs one `cv2.LUT`", "<= 1.2x", f"{vs_lut:.2f}x", verdict(vs_lut <= 1.2)])

    warp_h, warp_w = SIZES[cfg.warp_size]
    warp_img = np.array(_test_image(warp_h, warp_w))
    maps = warp_maps(warp_h, warp_w)
    table, t = _chain_table(
        "Warp chain", WARP, warp_img,
        ("hand-written cv2: warpAffine + remap + flip",
         lambda: warp_raw(warp_img, maps, cv2.BORDER_REFLECT_101)),
        ("one `cv2.remap` with the composed maps (float32)",
         lambda: cv2.remap(warp_img, maps["x"], maps["y"], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)),
        cfg)
    vs_remap = t["fused/single"]
    table.notes.append("A fused warp resamples once, so it differs from the step-by-step result by the extra "
                       "interpolations, and where swirl's reflect101 border meets rotate's black corners: "
                       "`max |diff|` is informative only (the hand-written maps are independent code; unfused "
                       "cvfilters matches them within 1). The hand-written maps are built before timing.")
    sec.tables.append(table)
    sec.summary.append([f"warp chain `{WARP}` ({SIZE_LABEL[cfg.warp_size]}), fused vs one `cv2.remap`",
                        "<= 1.3x", f"{vs_remap:.2f}x", verdict(vs_remap <= 1.3)])

    mask = vignette_mask(height, width)
    table, t = _chain_table("Blur + sharpen + vignette", BLUR, img,
                            ("hand-written cv2: GaussianBlur + filter2D + multiply", lambda: blur_raw(img, mask)),
                            None, cfg)
    table.notes.append("No target; none of these steps is a point operation or a warp, so fusion leaves them as "
                       "they are.")
    sec.tables.append(table)
    sec.summary.append(["blur + sharpen + vignette, cvfilters vs hand-written cv2", "(no target)",
                        f"{1 / t['hand/fused']:.2f}x the time", "n/a"])
    return sec
