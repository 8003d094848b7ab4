"""Animations, videos and output defaults against peers (issue 23): prints a Markdown report.

    python bench/frames.py [--old PATH]     # --old: a checkout of the previous cvfilters to compare

Every cvfilters number comes from a real ``cvfilters apply`` subprocess (peak memory is the
child's ``ru_maxrss``); ImageMagick ``convert`` and ``vips`` run on the same files in the same
run, interleaved, where installed. PSNR is computed here with numpy against the exact result
(the inverted decoded input). One run per cell on a shared, noisy 2-core machine: timings are
rough.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageSequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_WRAPPER = ("import resource, subprocess, sys, time, json; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[1:], capture_output=True); "
            "print(json.dumps({'rc': p.returncode, 's': time.perf_counter() - t, "
            "'rss': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "
            "'err': p.stderr.decode(errors='replace').strip().splitlines()[-1:]}))")


def run(command: list[str], cwd: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *command], capture_output=True, text=True, check=True,
                         cwd=cwd, env=dict(os.environ, PYTHONPATH=str(cwd)))
    return json.loads(out.stdout)


def cvf(*args: object, old: Path | None = None) -> dict:
    """``cvfilters apply ARGS`` from this tree, or from the checkout ``old``."""
    return run([sys.executable, "-m", "cvfilters", "apply", *map(str, args)], old or ROOT)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else float(10 * np.log10(255.0**2 / mse))


def gif_frames(path: Path) -> list[np.ndarray]:
    with Image.open(path) as image:
        return [np.asarray(frame.convert("RGB"))[..., ::-1].copy() for frame in ImageSequence.Iterator(image)]


def photo() -> np.ndarray:
    from skimage import data

    return np.ascontiguousarray(data.chelsea()[..., ::-1])


def gif_quality(work: Path, old: Path | None) -> list[str]:
    cv2.imwrite(str(work / "cat.png"), photo())
    exact = 255 - photo()
    rows = ["| photo (451x300) inverted to GIF | PSNR dB vs exact |", "|---|---|"]
    tools: list[tuple[str, list[str] | None]] = [
        ("cvfilters (this branch)", None), ("cvfilters --dither", ["--dither"]),
        ("cvfilters (before)", "old"),  # type: ignore[list-item]
        ("ImageMagick convert -negate", ["convert", str(work / "cat.png"), "-negate", "OUT"]),
        ("vips invert", ["vips", "invert", str(work / "cat.png"), "OUT"]),
    ]
    for name, extra in tools:
        out = work / f"cat_{len(rows)}.gif"
        if extra is None or isinstance(extra, list) and extra[0] == "--dither":
            cvf(work / "cat.png", "-o", out, "-f", "invert", *(extra or []))
        elif extra == "old":
            if old is None:
                continue
            cvf(work / "cat.png", "-o", out, "-f", "invert", old=old)
        else:
            if shutil.which(extra[0]) is None:
                continue
            subprocess.run([arg.replace("OUT", str(out)) for arg in extra], check=True, capture_output=True)
        rows.append(f"| {name} | {psnr(gif_frames(out)[0], exact):.1f} |")
    greys = [40, 90, 140, 190]
    images = [Image.new("RGB", (64, 64), (g, g, g)) for g in greys]
    images[0].save(work / "grey.gif", save_all=True, append_images=images[1:], duration=100)
    cvf(work / "grey.gif", "-o", work / "grey_out.gif", "-f", "invert")
    got = [tuple(int(v) for v in frame[0, 0][::-1]) for frame in gif_frames(work / "grey_out.gif")]
    rows.append(f"\nFour flat grey frames {greys} inverted: {got}")
    return rows


def long_gif(path: Path, count: int, size: int = 512) -> None:
    from cvfilters.io.gif import GifWriter

    y, x = np.mgrid[0:size, 0:size]
    with open(path, "wb") as file:
        writer = GifWriter(file, (size, size), loop=0)
        for index in range(count):
            level = ((x + y + 4 * index) // 8 % 64 * 4).astype(np.uint8)
            writer.add(np.dstack([level, 255 - level, level // 2]), 40)
        writer.close()


def memory(work: Path, old: Path | None, counts: tuple[int, ...]) -> list[str]:
    rows = ["| 512x512 GIF, invert | frames | peak RSS MB | seconds |", "|---|---|---|---|"]
    for count in counts:
        long_gif(work / f"long{count}.gif", count)
        result = cvf(work / f"long{count}.gif", "-o", work / f"long{count}_out.gif", "-f", "invert")
        with Image.open(work / f"long{count}_out.gif") as out:
            kept = out.n_frames
        rows.append(f"| this branch (kept {kept}) | {count} | {result['rss']:.0f} | {result['s']:.1f} |")
        if old is not None and count <= 100:
            before = cvf(work / f"long{count}.gif", "-o", work / f"long{count}_old.gif", "-f", "invert",
                         "--max-pixels", str(2**40), old=old)
            rows.append(f"| before | {count} | {before['rss']:.0f} | {before['s']:.1f} |")
    return rows


def pages(work: Path, old: Path | None, counts: tuple[int, ...]) -> list[str]:
    import tifffile

    rows = ["| TIFF of 8x8 pages, invert | pages | seconds | exit |", "|---|---|---|---|"]
    for count in counts:
        with tifffile.TiffWriter(work / f"p{count}.tif") as writer:
            for index in range(count):
                writer.write(np.full((8, 8), index % 256, np.uint8), contiguous=False)
        result = cvf(work / f"p{count}.tif", "-o", work / f"p{count}_out.tif", "-f", "invert")
        rows.append(f"| this branch | {count} | {result['s']:.1f} | {result['rc']} |")
        if old is not None and count <= 300:
            before = cvf(work / f"p{count}.tif", "-o", work / f"p{count}_old.tif", "-f", "invert", old=old)
            rows.append(f"| before | {count} | {before['s']:.1f} | {before['rc']} |")
    return rows


def clip(path: Path, count: int = 30) -> list[np.ndarray]:
    big = cv2.resize(photo(), (640, 426))
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 25.0, (320, 240))
    for index in range(count):
        writer.write(np.ascontiguousarray(big[40 : 280, 4 * index : 4 * index + 320]))
    writer.release()
    capture = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    capture.release()
    return frames


def video(work: Path, old: Path | None) -> list[str]:
    source = clip(work / "clip.avi")
    rows = ["| 320x240 x 30 frames, invert | codec | PSNR dB (mean) | KB |", "|---|---|---|---|"]
    cases = [("this branch .mp4", ".mp4", None, []),
             ("this branch .mp4 --quality 90", ".mp4", None, ["--quality", "90"]),
             ("this branch .webm", ".webm", None, []), ("this branch .avi", ".avi", None, []),
             ("before .mp4", ".mp4", old, [])]
    for name, ext, which, extra in cases:
        if name.startswith("before") and old is None:
            continue
        out = work / f"v_{len(rows)}{ext}"
        result = cvf(work / "clip.avi", "-o", out, "-f", "invert", *extra, old=which)
        if result["rc"] != 0:
            rows.append(f"| {name} | failed: {result['err']} | | |")
            continue
        capture = cv2.VideoCapture(str(out))
        scores = []
        for want in source:
            ok, got = capture.read()
            if not ok:
                break
            scores.append(psnr(got, 255 - want))
        capture.release()
        probe = subprocess.run([_ffmpeg(), "-hide_banner", "-i", str(out)], capture_output=True, text=True).stderr
        codec = next((line.split("Video:")[1].split()[0] for line in probe.splitlines() if "Video:" in line), "?")
        rows.append(f"| {name} | {codec} | {np.mean(scores):.1f} ({len(scores)} frames) | "
                    f"{out.stat().st_size / 1024:.0f} |")
    return rows


def _ffmpeg() -> str:
    import imageio_ffmpeg

    return str(imageio_ffmpeg.get_ffmpeg_exe())


def sizes(work: Path, old: Path | None) -> list[str]:
    big = cv2.resize(photo(), (1353, 900), interpolation=cv2.INTER_CUBIC)
    cv2.imwrite(str(work / "big.jpg"), big, [cv2.IMWRITE_JPEG_QUALITY, 85])
    source = work / "big.jpg"
    rows = [f"| {source.stat().st_size // 1024} KB JPEG (q85, 1353x900), invert | .webp KB | .jpg KB |",
            "|---|---|---|"]
    for name in ("this branch", "before", "ImageMagick", "vips"):
        found = []
        for ext in (".webp", ".jpg"):
            out = work / f"s_{name.replace(' ', '')}{ext}"
            if name == "this branch":
                cvf(source, "-o", out, "-f", "invert")
            elif name == "before":
                if old is None:
                    break
                cvf(source, "-o", out, "-f", "invert", old=old)
            elif name == "ImageMagick" and shutil.which("convert"):
                subprocess.run(["convert", str(source), "-negate", str(out)], check=True)
            elif name == "vips" and shutil.which("vips"):
                subprocess.run(["vips", "invert", str(source), str(out)], check=True)
            if out.exists():
                found.append(f"{out.stat().st_size / 1024:.0f}")
        if found:
            rows.append(f"| {name} | {' | '.join(found)} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", type=Path, help="a checkout of the previous cvfilters (for 'before' rows)")
    parser.add_argument("--frames", type=int, nargs="*", default=[10, 100, 2000])
    parser.add_argument("--pages", type=int, nargs="*", default=[300, 1000, 3000])
    parser.add_argument("--only", nargs="*", default=["gif", "memory", "pages", "video", "sizes"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        sections = {"gif": lambda: gif_quality(work, args.old),
                    "memory": lambda: memory(work, args.old, tuple(args.frames)),
                    "pages": lambda: pages(work, args.old, tuple(args.pages)),
                    "video": lambda: video(work, args.old), "sizes": lambda: sizes(work, args.old)}
        for name in args.only:
            started = time.perf_counter()
            print("\n".join(sections[name]()), flush=True)
            print(f"\n({name}: {time.perf_counter() - started:.0f} s)\n", flush=True)


if __name__ == "__main__":
    main()
