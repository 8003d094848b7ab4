"""Planning a batch: inputs (files, directories, globs, standard streams) into tasks with output paths.

Names only: no file is read or written. Outputs in a directory keep the relative names under
each input directory or glob base; an input that matches nothing, an output that two inputs
share and an output that would replace an input are failed outcomes, not tasks.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path

from cvfilters.core.errors import UsageError
from cvfilters.io import zarr_regions
from cvfilters.io.formats import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS
from cvfilters.run.tasks import Outcome, Task


def plan(inputs: Sequence[str], output: str, *, recursive: bool = False, extension: str | None = None,
         name_suffix: str = "") -> tuple[list[Task], list[Outcome]]:
    """Expand inputs (files, directories, globs) into tasks with output paths.

    One plain input file and an ``output`` that is not a directory and has an
    extension: the output is that file. Otherwise ``output`` is a directory and the
    relative names under each input directory or glob base are kept. ``extension``
    (``".png"``) replaces the extension of image outputs in a directory (videos keep
    their container); ``name_suffix`` is appended to every output stem
    (``photo.jpg`` -> ``photo_blur.jpg``). Directories contribute their image and
    video files.

    Returns
    -------
    (tasks, failures)
        Failures are inputs that match nothing, outputs that two inputs share, and (marked
        ``usage``) outputs that would replace one of the inputs (never allowed).
        Standard input and output are ``-`` (one input, one output).

    Raises
    ------
    UsageError
        Several inputs, a directory or a glob, and ``output`` names a file (an image or
        video extension, not an existing directory).
    """
    if "-" in (output, *inputs):
        return _plan_stream(inputs, output, extension)
    sources: list[tuple[Path, Path]] = []
    failures: list[Outcome] = []
    plain_files = 0
    for item in inputs:
        path = Path(item)
        if path.is_dir() and not zarr_regions.is_zarr(path):
            walker = path.rglob("*") if recursive else path.glob("*")
            found = [(f, f.relative_to(path)) for f in sorted(walker) if _is_media(f)]
            if not found:
                hint = "" if recursive else " (--recursive descends into sub-directories)"
                failures.append(Outcome(Task(path, path), "failed",
                                        f"{item}: is a directory without image or video files{hint}"))
            sources += found
        elif glob.has_magic(item) and not path.exists():
            base = _glob_base(item)
            matches = _glob(item)
            if not matches:
                failures.append(Outcome(Task(path, path), "failed", f"{item}: no files match"))
            sources += [(m, m.relative_to(base)) for m in matches]
        else:
            plain_files += 1
            sources.append((path, Path(path.name)))
    out = Path(output)
    named = not out.is_dir() or zarr_regions.is_zarr(out)  # an existing Zarr array is an output, not a folder
    single = len(inputs) == 1 and plain_files == 1 and named and out.suffix != ""
    if not single and len(inputs) == 1 and plain_files == 1 and named and not output.endswith(("/", os.sep)):
        raise UsageError(f"-o {output}: has no extension; name an image file (such as {output}.png) or a folder "
                         f"with a trailing slash ({output}/)")
    if not single and out.suffix.lower() in IMAGE_EXTENSIONS | VIDEO_EXTENSIONS | zarr_regions.ZARR_EXTENSIONS \
            and named:
        what = f"{len(inputs)} inputs" if len(inputs) > 1 else "a directory or glob input"
        raise UsageError(f"-o {output}: names a file, but {what} need an output directory "
                         "(give a folder name, or one input file)")
    tasks: list[Task] = []
    claimed: dict[Path, Path] = {}
    inputs_found = {Path(os.path.realpath(source)) for source, _ in sources}
    inodes = {_inode(source) for source, _ in sources} - {None}
    for source, relative in sources:
        target = out if single else out / _renamed(relative, extension, name_suffix)
        key = Path(os.path.abspath(target))
        if Path(os.path.realpath(target)) in inputs_found or _inode(target) in inodes:  # a hard link too
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} would replace an input file; cvfilters never "
                                    "overwrites its inputs", usage=True))
            continue
        if key in claimed:
            failures.append(Outcome(Task(source, target), "failed",
                                    f"{source}: output {target} is also the output of {claimed[key]}"))
            continue
        if os.path.lexists(source):  # a missing input fails on its own; it claims no output name
            claimed[key] = source
        tasks.append(Task(source, target, replace=single))
    if single and tasks:  # not an input (that is reported above): a format we write, in a folder that exists
        _check_named_output(output)
    return tasks, failures


def _plan_stream(inputs: Sequence[str], output: str, extension: str | None) -> tuple[list[Task], list[Outcome]]:
    """``-`` as the input (standard input) or the output (standard output): one input, one output."""
    if len(inputs) != 1:
        raise UsageError("- (standard input or output) takes exactly one input")
    source = Path(inputs[0])
    if source.suffix.lower() in VIDEO_EXTENSIONS or Path(output).suffix.lower() in VIDEO_EXTENSIONS:
        raise UsageError("- (standard input or output) takes images, not videos")
    if output == "-":
        ext = extension or (source.suffix.lower() if inputs[0] != "-" else None)
        if ext not in IMAGE_EXTENSIONS:
            raise UsageError("-o - (standard output) needs --format EXT (png, jpg, tif, ...)")
        return [Task(source, Path("-"), replace=True, stdout_format=ext)], []
    target = Path(output)
    if Path(output).is_dir() or target.suffix.lower() not in IMAGE_EXTENSIONS:
        raise UsageError(f"-o {output}: an input from standard input needs an output image file name")
    return [Task(source, target, replace=True)], []


def _renamed(relative: Path, extension: str | None, name_suffix: str) -> Path:
    is_video = relative.suffix.lower() in VIDEO_EXTENSIONS
    new_extension = relative.suffix if is_video or not extension else extension
    return relative.with_name(relative.stem + name_suffix + new_extension)


def _is_media(path: Path) -> bool:
    """An image or video file by its extension; broken symlinks count, so they are reported, not skipped."""
    return path.suffix.lower() in IMAGE_EXTENSIONS | VIDEO_EXTENSIONS and (path.is_file() or path.is_symlink())


def _check_named_output(output: str) -> None:
    """A single named output file: a format cvfilters writes, in a folder that exists (as ``cp``)."""
    out = Path(output)
    if out.suffix.lower() not in IMAGE_EXTENSIONS | VIDEO_EXTENSIONS | zarr_regions.ZARR_EXTENSIONS:
        raise UsageError(f"-o {output}: no encoder for {out.suffix} (image formats: "
                         f"{', '.join(sorted(IMAGE_EXTENSIONS))})")
    if not out.parent.is_dir():
        raise UsageError(f"-o {output}: folder {out.parent} does not exist (a single output file is written into an "
                         "existing folder)")


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _glob(pattern: str) -> list[Path]:
    """The files a glob matches, by Python's rules (``**`` descends), its extension matched in any case,
    each file once, never through a symlink to one of its own ancestors (a loop)."""
    head, tail = os.path.split(pattern)
    stem, dot, suffix = tail.rpartition(".")
    if dot and stem and suffix.isalnum():
        tail = f"{stem}." + "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in suffix)
    found: dict[str, Path] = {}
    for match in sorted(glob.glob(os.path.join(head, tail), recursive=True), key=lambda m: (m.count(os.sep), m)):
        path = Path(match)
        if path.is_file() and not _through_loop(path):
            found.setdefault(os.path.realpath(path), path)
    return sorted(found.values())


def _through_loop(path: Path) -> bool:
    parts = path.parent.parts
    for count in range(1, len(parts) + 1):
        current = Path(*parts[:count])
        if current.is_symlink():
            real, above = os.path.realpath(current), os.path.realpath(current.parent)
            if above == real or above.startswith(real.rstrip(os.sep) + os.sep):
                return True
    return False


def _glob_base(pattern: str) -> Path:
    parts = Path(pattern).parts
    fixed = list(parts[: next(i for i, p in enumerate(parts) if glob.has_magic(p))])
    return Path(*fixed) if fixed else Path(".")
