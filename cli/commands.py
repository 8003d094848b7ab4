"""What the core commands do (apply, list, info, backends), without Typer.

:mod:`cvfilters.cli.app` declares their options for Typer and calls these; the fast path
(:mod:`cvfilters.cli.fast`) calls them directly, so a plain command line never imports
Typer. Every parameter is keyword-only and without a default: the defaults live in the
Typer declarations (and in the table generated from them).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from cvfilters.cli.common import build_pipeline, check_backend

state = {"debug": False}


class CommandExit(Exception):
    """End the command with ``code`` (its messages are already printed)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def echo(message: str) -> None:
    """A line on standard output."""
    print(message, flush=True)


def err(message: str) -> None:
    """A line on standard error, control characters (a newline in a file name too) escaped as ``ls -b`` does."""
    from cvfilters.core.files import shown

    print(shown(message), file=sys.stderr, flush=True)


def apply(*, inputs: list[str], output: str, specs: list[str] | None, pipeline_file: Path | None, backend: str,
          jobs: int, devices: str | None, scheduler: str | None, overwrite: bool, no_clobber: bool, dry_run: bool,
          recursive: bool, fmt: str | None, suffix: str, quality: int | None, max_pixels: int | None,
          frames: str | None, lossless: bool, dither: bool, explain: bool, memory: str | None,
          tile_size: int | None, large: bool, fuse: bool, linear: bool, colorspace: str, intent: str,
          compare: Path | None, compare_mode: str, histogram: Path | None) -> None:
    """``cvfilters apply``: run a pipeline on image and video files and write the results."""
    if scheduler is None and devices is None and not dry_run and (
            len(inputs) > 1 or any(os.path.isdir(source) for source in inputs)):  # one file never takes a pool
        from cvfilters.run import forkserver

        if forkserver.likely(jobs, inputs):
            forkserver.start()  # its imports overlap this command's own
    from cvfilters.cli.progress import Progress, process_start
    from cvfilters.core import leftovers
    from cvfilters.core.errors import UsageError
    from cvfilters.registry.params import allow_large
    from cvfilters.run import batch, executors, planning
    from cvfilters.run.tasks import Options

    with allow_large(large):
        pipeline = build_pipeline(specs, pipeline_file)
    if backend == "auto" and all(step.filter.point_only for step in pipeline.steps):
        backend = "cpu"  # what auto chooses for point operations on files, decided once: the GPUs are not probed
    if backend == "auto" and scheduler is None and _may_be_large(inputs) and not _runs_in_tiles(inputs):
        from cvfilters.backends import probe_soon

        probe_soon()  # overlaps the rest of the start-up; auto needs the answer for images >= 512 x 512
    check_backend(backend)
    _check_colour(colorspace, intent)
    from cvfilters.io.reading import max_pixels_limit

    max_pixels_limit(max_pixels)  # CVFILTERS_MAX_PIXELS=abc is a usage error, reported once
    if overwrite and no_clobber:
        raise UsageError("--overwrite and --no-clobber exclude each other")
    device_list = executors.device_ids(devices, backend) if devices else None
    tasks, failures = planning.plan(inputs, output, recursive=recursive, extension=_extension(fmt), name_suffix=suffix)
    if scheduler and any(task.stdout_format or str(task.source) == "-" for task in tasks):
        raise UsageError("- (standard input or output) cannot be used with --scheduler (remote workers)")
    _check_format_agrees(fmt, tasks)
    conflicts = [failure for failure in failures if failure.usage]
    if conflicts:
        for conflict in conflicts[:-1]:
            err(f"error: {conflict.message}")
        raise UsageError(conflicts[-1].message)
    replace_named = not no_clobber  # --compare and --histogram name files, replaced as -o FILE is
    if compare is not None:
        _check_compare(compare, compare_mode, tasks, failures, replace_named)
    if histogram is not None:
        from cvfilters.viz.plots import require_matplotlib

        require_matplotlib()
        _check_single_image("--histogram", histogram, tasks, failures)
    workers = len(device_list) if device_list else executors.worker_count(jobs, [task.source for task in tasks])
    budget = _budget(memory)
    one_image = bool(scheduler) and len(tasks) == 1 and _streams(tasks[0].source)
    options = Options(pipeline.to_dict(), backend, overwrite, quality, max_pixels, _frame_range(frames),
                      large, 1 if scheduler else workers, fuse, _colour_target(colorspace), intent, linear,
                      lossless=lossless, dither=dither, memory=budget, tile_size=tile_size,
                      scheduler=scheduler if one_image else None)
    if one_image:
        scheduler = None  # the tiles of the one image go to the cluster, not the file
    if explain and len(tasks) > 1:
        where = f"a pool of {workers}" if workers > 1 else "this process (a pool pays for more work)"
        err(f"batch: {len(tasks)} files, {'--jobs' if jobs else 'chosen from the work'}: {where}")
    if no_clobber:
        _refuse_clobbering(tasks, options)
    if dry_run:
        pipeline.fuse = fuse
        _dry_run(tasks, failures, options, pipeline)
        return
    for folder in {task.target.parent for task in tasks if task.stdout_format is None}:
        leftovers.remove_stale(folder)
    summary = batch.Summary(failed=len(failures))
    for failure in failures:
        err(f"error: {failure.message}")
    with executors.choose(workers, len(tasks), backend=backend, devices=device_list,
                          scheduler=scheduler) as executor, Progress(tasks) as progress:
        outcomes = batch.run(tasks, options, executor=executor, progress=progress.frames)
        for outcome in batch.timed(outcomes, summary, start=process_start()):
            _print_outcome(outcome, explain and summary.done == 1)
            progress.advance()
    if len(tasks) + len(failures) > 1:
        err(summary.line())
    if summary.failed:
        raise CommandExit(1)
    if compare is not None and summary.done == 1:
        from cvfilters.viz.sheets import write_before_after

        write_before_after(compare, tasks[0].source, tasks[0].target, mode=compare_mode, quality=quality,
                           overwrite=replace_named)
    if histogram is not None and summary.done == 1:
        from cvfilters.viz.plots import write_before_after_plot

        write_before_after_plot(histogram, tasks[0].source, tasks[0].target, overwrite=replace_named)



def _check_colour(colorspace: str, intent: str) -> None:
    """A usage error for an unknown intent or a profile that cannot be read, before any work."""
    from cvfilters.core.errors import UsageError
    from cvfilters.io import colour

    if intent not in colour.INTENTS:
        raise UsageError(f"--intent {intent!r} is not one of {', '.join(colour.INTENTS)}")
    if colorspace.lower() != "keep":
        colour.profile_bytes(_colour_target(colorspace) or "")


def _colour_target(colorspace: str) -> str | None:
    """The --colorspace value as workers take it: None for keep, a path made absolute (workers may run elsewhere)."""
    if colorspace.lower() == "keep":
        return None
    if colorspace.lower() in ("srgb", "adobe-rgb", "adobergb", "adobe_rgb"):
        return colorspace.lower()
    return os.path.abspath(colorspace)


def _check_format_agrees(fmt: str | None, tasks: list[Any]) -> None:
    """A usage error where ``-o`` names an image file whose suffix says another format than ``--format``."""
    from cvfilters.core.errors import UsageError
    from cvfilters.io.formats import image_format

    wanted = image_format(_extension(fmt) or "")
    for task in tasks:
        named = image_format(task.target.suffix)
        if wanted is not None and task.stdout_format is None and named is not None and named != wanted:
            raise UsageError(f"-o {task.target} is {named.name} but --format {fmt} asks for {wanted.name}; "
                             "give one of them")


def _budget(memory: str | None) -> int | None:
    from cvfilters.run.budget import parse_size

    return parse_size(memory) if memory is not None else None


def _streams(source: Path) -> bool:
    from cvfilters.run.streaming import wanted

    return str(source) != "-" and wanted(source)


def _refuse_clobbering(tasks: list[Any], options: Any) -> None:
    """--no-clobber: a named output file that exists is a usage error once its input is known to be
    good (a bad input is reported as such); outputs in a directory are skipped as without it."""
    from dataclasses import replace

    from cvfilters.core.errors import UsageError
    from cvfilters.run import processing

    for task in tasks:
        if task.replace and task.stdout_format is None and os.path.lexists(task.target):
            outcome = processing.dry_run(replace(task, replace=False), options)
            if outcome.status == "failed":
                err(f"error: {outcome.message}")
                raise CommandExit(1)
            raise UsageError(f"{task.target}: exists; --no-clobber refuses to replace it")


def _dry_run(tasks: list[Any], failures: list[Any], options: Any, pipeline: Any) -> None:
    """Print on standard output what a run would read, write and skip, and the steps it would run
    (errors go to standard error, as in a run)."""
    from cvfilters.run import batch, processing

    counts = batch.Summary(failed=len(failures))
    for failure in failures:
        err(f"error: {failure.message}")
    for task in tasks:
        outcome = processing.dry_run(task, options)
        counts.add(outcome)
        if outcome.status == "failed":
            err(f"error: {outcome.message}")
        else:
            echo(outcome.message)
    for index, step in enumerate(pipeline.compile(), 1):
        echo(f"step {index}: {step.to_spec()}")
    echo(f"dry run: would write {counts.done}, skip {counts.skipped}, fail {counts.failed}; nothing written")
    if counts.failed:
        raise CommandExit(1)


PROBE_MIN_BYTES = 64 * 1024  # a file this small is unlikely to reach auto's GPU threshold (512 x 512)


def _may_be_large(inputs: list[str]) -> bool:
    """Whether ``auto`` will probably probe the GPUs: a batch, or a file that is not tiny (a guess, never a rule)."""
    if len(inputs) != 1 or not os.path.isfile(inputs[0]):
        return True
    return os.path.getsize(inputs[0]) >= PROBE_MIN_BYTES


def _runs_in_tiles(inputs: list[str]) -> bool:
    """Whether the one input will run through CPU tiles (streamed, or large by its header), so ``auto``
    never asks the GPUs (probing an OpenCL runtime costs tens of MB of memory)."""
    if len(inputs) != 1 or not os.path.isfile(inputs[0]):
        return False
    from cvfilters.run.streaming import large_by_header, wanted

    return wanted(inputs[0]) or large_by_header(inputs[0])


def _check_compare(compare: Path, mode: str, tasks: list[Any], failures: list[Any], overwrite: bool) -> None:
    """Refuse --compare before any work: one input image, a writable name apart from input and output."""
    from cvfilters.viz.sheets import check_before_after_target

    _check_single_image("--compare", compare, tasks, failures)
    check_before_after_target(compare, mode=mode, overwrite=overwrite)


def _check_single_image(option: str, path: Path, tasks: list[Any], failures: list[Any]) -> None:
    """A usage error unless the run has exactly one input image and ``path`` is neither it nor its output."""
    from cvfilters.core.errors import UsageError
    from cvfilters.io.formats import VIDEO_EXTENSIONS

    if len(tasks) != 1 or failures or tasks[0].source.suffix.lower() in VIDEO_EXTENSIONS:
        raise UsageError(f"{option} needs exactly one input image (not a video, directory or glob)")
    if "-" in (str(tasks[0].source), str(tasks[0].target)):
        raise UsageError(f"{option} needs files, not standard input or output")
    if path.resolve() in (tasks[0].source.resolve(), tasks[0].target.resolve()):
        raise UsageError(f"{option} {path}: must differ from the input and the output")


def _extension(fmt: str | None) -> str | None:
    from cvfilters.core.errors import UsageError
    from cvfilters.io.formats import IMAGE_EXTENSIONS

    if fmt is None:
        return None
    extension = "." + fmt.lower().lstrip(".")
    if extension not in IMAGE_EXTENSIONS:
        raise UsageError(f"--format {fmt!r} is not an image format cvfilters writes")
    return extension


def _frame_range(text: str | None) -> tuple[int, int | None] | None:
    from cvfilters.core.errors import UsageError

    if text is None:
        return None
    start, colon, stop = text.partition(":")
    try:
        first, last = int(start or 0), int(stop) if stop else None
    except ValueError:
        first, last = -1, None
    if not colon or first < 0 or (last is not None and last <= first):
        raise UsageError(f"--frames {text!r} must be START:STOP with 0 <= START < STOP (either may be empty)")
    return first, last


def _print_outcome(outcome: Any, explain: bool) -> None:
    for note in outcome.warnings:
        err(f"warning: {note}")
    if outcome.status == "failed":
        err(f"error: {outcome.message}")
    elif outcome.status == "skipped":
        err(outcome.message)
    elif explain:
        for line in outcome.report:
            err(line)


def list_filters(*, category: str | None, as_json: bool) -> None:
    """``cvfilters list``: the filters (name, category, summary)."""
    from cvfilters.registry.catalog import catalog

    chosen = catalog(category)
    if as_json:
        echo(json.dumps([{k: e[k] for k in ("name", "category", "summary")} for e in chosen], indent=2))
        return
    width = max((len(e["name"]) for e in chosen), default=0)
    for entry in chosen:
        echo(f"{entry['name']:<{width}}  {entry['category']:<9}  {entry['summary']}")


def info(*, name: str, as_json: bool) -> None:
    """``cvfilters info NAME``: a filter and its parameters."""
    from cvfilters.registry.catalog import get
    from cvfilters.viz.describe import describe_filter

    flt = get(name)
    if as_json:
        echo(json.dumps(flt.info(), indent=2))
        return
    echo(describe_filter(flt))


def backends(*, as_json: bool) -> None:
    """``cvfilters backends``: which backends can run here (device, or why not)."""
    from cvfilters.backends import BACKEND_NAMES, availability

    rows = [availability(name).as_dict() for name in BACKEND_NAMES if name != "auto"]
    if as_json:
        echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "available" if row["available"] else "unavailable"
        echo(f"{row['name']:<7} {state:<11}  {row['device'] if row['available'] else row['reason']}")
