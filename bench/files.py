"""File-handling measurements for the record: how fast bombs are refused, what a long animation
costs in memory, and the outcome matrix of ``cvfilters apply`` (exit code per situation).

    python bench/files.py            # prints a Markdown report (about 30 s on 2 cores); see bench/FILES.md

Every number comes from a real ``cvfilters apply`` subprocess; peak memory is the child's
``ru_maxrss`` (resource.getrusage of RUSAGE_CHILDREN, measured per run in a fresh wrapper).
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import tifffile
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
_WRAPPER = ("import resource, subprocess, sys, time, json; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[1:], capture_output=True); "
            "print(json.dumps({'rc': p.returncode, 's': time.perf_counter() - t, "
            "'rss': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "
            "'err': p.stderr.decode(errors='replace').strip().splitlines()[-1:]}))")


def measure(*args: object, cwd: Path) -> dict:
    """Exit code, wall seconds, peak RSS (MB) and last stderr line of one ``cvfilters`` run."""
    command = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "cvfilters", *map(str, args)]
    out = subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(out.stdout)


def png_bomb(path: Path, width: int, height: int) -> None:
    """A PNG whose header claims width x height grey pixels, with one tiny zlib stream of zeros."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 65536))
                     + chunk(b"IEND", b""))


def gif(path: Path, frames: int, size: int, *, varied: bool = True) -> None:
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8) if varied else
                              np.full((size, size, 3), i % 256, np.uint8)).convert("P", colors=64)
              for i in range(frames)]
    images[0].save(path, save_all=True, append_images=images[1:], duration=40, loop=0)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="cvf-files-"))
    try:
        rows = []
        png_bomb(work / "bomb.png", 200_000, 200_000)
        rows.append(("PNG bomb, header 200000 x 200000 (40 Gpx), 350 bytes", measure(
            "apply", "bomb.png", "-o", "out.png", "-f", "invert", cwd=work)))
        gif(work / "frames.gif", 4000, 300, varied=False)
        rows.append(("GIF bomb, 4000 frames of 300 x 300 (360 Mpx), --max-pixels default",
                     measure("apply", "frames.gif", "-o", "out.gif", "-f", "invert", cwd=work)))
        Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(work / "still.png")
        rows.append(("baseline: one 8 x 8 PNG", measure("apply", "still.png", "-o", "o.png", "-f", "invert",
                                                        cwd=work)))
        gif(work / "long.gif", 100, 512)
        rows.append(("100-frame GIF, 512 x 512 (75 MB of BGR frames), invert",
                     measure("apply", "long.gif", "-o", "o.gif", "-f", "invert", cwd=work)))
        rows.append(("the same, gaussian_blur:sigma=3",
                     measure("apply", "long.gif", "-o", "o.gif", "-f", "gaussian_blur:sigma=3", "--overwrite",
                             cwd=work)))
        rows.append(("the same into TIFF pages",
                     measure("apply", "long.gif", "-o", "o.tif", "-f", "invert", cwd=work)))
        pages = np.random.default_rng(1).integers(0, 256, (100, 512, 512, 3), dtype=np.uint8)
        tifffile.imwrite(work / "pages.tif", pages, photometric="rgb")
        del pages
        rows.append(("100-page TIFF, 512 x 512 RGB (75 MB), invert, pages decoded one at a time",
                     measure("apply", "pages.tif", "-o", "o2.tif", "-f", "invert", cwd=work)))
        print(f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `python bench/files.py`\n")
        print("| run | exit | wall s | peak RSS MB | last stderr line |\n|---|---|---|---|---|")
        for name, result in rows:
            line = (result["err"] or [""])[0][:110]
            print(f"| {name} | {result['rc']} | {result['s']:.2f} | {result['rss']:.0f} | {line} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
