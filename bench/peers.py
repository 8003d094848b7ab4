"""Peers: raw cv2, cvfilters, scikit-image/scipy, Pillow, pyvips and ImageMagick on the same images.

Part of the suite: ``python bench/run.py --only peers``. Target per operation:
cvfilters at least as fast as the fastest of scikit-image, Pillow and pyvips wherever
raw cv2 itself is.

What each column times:
- raw cv2 / cvfilters: one call on a numpy array (cvfilters on the cpu backend).
- scikit-image: scikit-image, or scipy.ndimage / numpy where marked; numpy in and out.
- Pillow: the filter on a ``PIL.Image`` made beforehand (conversion not timed).
- pyvips: the operation on an image wrapping the numpy array, evaluated by
  ``write_to_memory()`` (libvips is lazy; the operation cache is off).
- ImageMagick: ``convert IN.mpc OP null:`` as a subprocess. MPC is ImageMagick's
  memory-mapped pixel cache (no decoding) and ``null:`` discards the result (no
  encoding); the table shows the time net of ``convert IN.mpc null:`` (start-up and
  read), measured in the same rounds, with the total in brackets.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from common import (
    SIZE_LABEL,
    SIZES,
    WORK,
    Config,
    Section,
    Stat,
    Table,
    imagemagick,
    measure,
    ms,
    test_gray,
    test_image,
    verdict,
)
from ops import (
    OPS,
    PEER_FACTORIES,
    PEER_OPS,
    SK_LABEL,
    magick,
    magick_command,
    magick_files,
    pyvips_module,
    run_command,
)

import cvfilters as cvf

PEERS = tuple(PEER_FACTORIES)
# Libraries with nothing to warm up (pyvips' operation cache is off): their first call is a fair sample,
# and scikit-image's slow ones are too slow to call twice.
COLD_OK = (*PEERS, "magick", "magick-read")


def _cell(stats: dict[str, Stat], name: str, label: str = "") -> str:
    if name not in stats:
        return "n/a"
    return stats[name].cell() + (f" ({label})" if label else "")


def section(cfg: Config) -> Section:
    folder = WORK / "peers" / cfg.peer_size
    try:
        return _section(cfg, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the MPC pixel caches are large (about 0.5 GB at 24 MP)


def _magick_files(img: Any, gray: Any, folder: Path) -> tuple[dict[str, Path], str]:
    """ImageMagick's input files, or none and the reason ImageMagick is skipped (never a failure)."""
    if magick() is None:
        return {}, imagemagick()[1]
    try:
        return magick_files(img, gray, folder), ""
    except (OSError, subprocess.SubprocessError) as exc:
        return {}, f"`convert` could not write its input files ({type(exc).__name__}: {str(exc)[:80]})"


def _section(cfg: Config, folder: Path) -> Section:
    height, width = SIZES[cfg.peer_size]
    img, gray = test_image(height, width), test_gray(height, width)
    files, magick_skip = _magick_files(img, gray, folder)
    sec = Section("peers", f"Peers on the same images, {SIZE_LABEL[cfg.peer_size]}, BGR uint8")
    table = Table(f"{SIZE_LABEL[cfg.peer_size]} (ms)",
                  ["operation", "raw cv2", "cvfilters", "scikit-image / scipy", "Pillow", "pyvips",
                   "cvfilters / fastest of those three", "ImageMagick CLI, net (total)",
                   "target: cvfilters <= fastest peer where cv2 is"])
    passed, judged, misses = 0, 0, []
    for key in PEER_OPS:
        op = OPS[key]
        src = gray if op.gray else img
        variants: dict[str, Any] = {
            "cv2": op.raw(src, src.shape),
            "cvf": lambda src=src, op=op: cvf.apply(src, op.filter, backend="cpu", **op.params),
        }
        for peer, factory in PEER_FACTORIES.items():
            try:
                fn = factory(key, src, src.shape)
            except ImportError:  # scipy / scikit-image / Pillow missing: that column is n/a
                fn = None
            if fn is not None:
                variants[peer] = fn
        command = magick_command(key, files, op.gray, width, height) if files else None
        if command:
            variants["magick"] = run_command(command)
            variants["magick-read"] = run_command(magick_command("read", files, op.gray, width, height))
        stats = measure(variants, cfg, cold_ok=COLD_OK)

        peer_times = {p: stats[p].median for p in PEERS if p in stats}
        cv2_ms, cvf_ms = stats["cv2"].median, stats["cvf"].median
        if not peer_times:
            ok, against, rel = None, "no peer implements it", "-"
        else:
            best = min(peer_times, key=peer_times.get)
            rel = f"{cvf_ms / peer_times[best]:.2f}x ({best})"
            if cv2_ms <= peer_times[best]:
                ok, against = cvf_ms <= peer_times[best], ""
            else:
                ok, against = None, f"cv2 slower than {best}"
        if ok is not None:
            judged += 1
            passed += ok
            if not ok:
                misses.append(f"{key} {rel}")
        magick_cell = "n/a"
        if "magick" in stats:
            net = stats["magick"].median - stats["magick-read"].median
            magick_cell = f"{ms(net)} ({ms(stats['magick'].median)})"
        table.rows.append([op.label, _cell(stats, "cv2"), _cell(stats, "cvf"),
                           _cell(stats, "scikit-image", SK_LABEL.get(key, "")), _cell(stats, "Pillow"),
                           _cell(stats, "pyvips"), rel, magick_cell,
                           verdict(ok) + (f" ({against})" if against else "")])
        del stats
    table.notes += [
        "Same parameters everywhere as far as each library allows: Gaussian sigma 3 (Pillow's GaussianBlur(3) is a "
        "box approximation, pyvips' `gaussblur(3)` its default integer kernel truncated at min_ampl 0.2, "
        "ImageMagick `-blur 0x3`, the separable Gaussian); convolutions with integer kernels "
        "(pyvips `precision=integer`, scipy `correlate` with uint8 output, which wraps instead of saturating); "
        "scikit-image `equalize_hist`/`equalize_adapthist` (float64 out; its clip limit is another scale than "
        "OpenCV's); `denoise_bilateral(win_size=9, sigma_color=75/255, sigma_spatial=75)`; pixellate as box "
        "means then nearest-neighbour upscaling (Pillow `reduce(16)`, pyvips `shrink(ceil=True).zoom`, "
        "scikit-image `downscale_local_mean` + `repeat`, ImageMagick `-scale` twice); vignette as a multiply by the "
        "same precomputed mask (numpy, `ImageChops.multiply`, vips `*` + `cast`, ImageMagick "
        "`-compose multiply`).",
        "cartoon: raw cv2 is the classic recipe (half scale INTER_AREA, 7x `bilateralFilter(9, 20, 7)`, linear "
        "upscale, `medianBlur(7)` on gray, `adaptiveThreshold` mean 9 / C 2, `bitwise_and`); cvfilters runs "
        "`cartoon:passes=7,quantize=none,sensitivity=1,thickness=1`, the same recipe (its colour path is "
        "float32); scikit-image runs the same recipe with `rescale`, 7x `denoise_bilateral`, "
        "`scipy.ndimage.median_filter`, `threshold_local`. The cartoon filter's defaults do more (k-means to 8 "
        "colours, 2 px outlines): see the cartoon defaults table.",
        "n/a: the library has no such operation (Pillow: no CLAHE/bilateral; pyvips: `hist_local` is another "
        "algorithm than CLAHE, no bilateral; ImageMagick 6.9.11: no `-clahe`, no bilateral).",
        "`1x`: timed once (the first call took over the slow threshold); the target column uses it as is.",
    ]
    if pyvips_module() is None:
        table.notes.append("pyvips is not installed here: its column is n/a.")
    if not files:
        table.notes.append(f"ImageMagick skipped: {magick_skip}; its column is n/a.")
    sec.tables.append(table)
    sec.tables.append(_cartoon_defaults(cfg, img))
    sec.summary.append(["cvfilters vs the fastest of scikit-image, Pillow, pyvips (where cv2 is faster than it)",
                        "at least as fast", f"{passed}/{judged} ops" + (f"; misses: {', '.join(misses)}"
                                                                        if misses else ""),
                        verdict(passed == judged) if judged else "n/a"])
    return sec


def _cartoon_defaults(cfg: Config, img: Any) -> Table:
    """What `cvf.apply(img, "cartoon")` with its defaults costs next to the raw recipe."""
    shape = img.shape
    stats = measure({"recipe": OPS["cartoon"].raw(img, shape),
                     "matched": lambda: cvf.apply(img, "cartoon", backend="cpu", **OPS["cartoon"].params),
                     "defaults": lambda: cvf.apply(img, "cartoon", backend="cpu")}, cfg)
    recipe = stats["recipe"].median
    table = Table(f"Cartoon: the filter's defaults vs the recipe, {SIZE_LABEL[cfg.peer_size]} (cpu)",
                  ["variant", "ms", "vs the raw cv2 recipe"])
    for name, label in (("recipe", "raw cv2 recipe (uint8, 7 bilateral passes at half scale)"),
                        ("matched", "`cartoon:passes=7,quantize=none,sensitivity=1,thickness=1`"),
                        ("defaults", "`cartoon` defaults (5 passes, k-means to 8 colours, 2 px outlines)")):
        table.rows.append([label, stats[name].cell(), f"{stats[name].median / recipe:.2f}x"])
    table.notes.append("`cvfilters info cartoon`: the defaults quantize with k-means on the host (8 colours, "
                       "seeded) after 5 bilateral passes, and dilate the outlines to 2 px: more work than the "
                       "recipe, so only the matched row is a like-for-like comparison.")
    return table
