"""The ``cvfilters`` command line (Typer), installed as ``cvfilters.cli``.

Exit codes: 0 all done; 1 some inputs failed and the rest were written; 2 usage
error (unknown filter, bad parameter, unavailable backend), nothing written; 130
interrupted. Errors are one line each on stderr; ``--debug`` adds tracebacks.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from cvfilters.cli.common import build_pipeline, check_backend

EXAMPLES = """Examples:

\b
  cvfilters apply photo.jpg -o soft.jpg -f gaussian_blur:sigma=3
  cvfilters apply shots/ -o out/ -f "sepia | vignette_effect:color=navy"
  cvfilters apply scan.png -o clean.png -p look.yaml --explain
  cvfilters list --category blur
  cvfilters info vignette_effect

Shell completion: cvfilters --install-completion (bash, zsh, fish, PowerShell).
"""
APPLY_EXAMPLES = """Examples:

\b
  cvfilters apply in.png -o out.png -f invert
  cvfilters apply in.png -o out.png -f "gaussian_blur:sigma=2 | pixellate"
  cvfilters apply 'photos/*.jpg' -o small/ -f pixellate --format webp
  cvfilters apply clip.mp4 -o clip_toon.mp4 -f cartoon --frames 0:100

Colours (color=, fill=) are written in RGB(A): red, #ff0000, #ff000080,
rgb(255,0,0), rgba(255,0,0,0.5) or fractions [1,0,0].
"""

app = typer.Typer(
    name="cvfilters",
    help="Image filters on OpenCV: one definition, cpu / OpenCL / CUDA backends.",
    epilog=EXAMPLES,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"max_content_width": 100},
)
_state = {"debug": False}


def _err(message: str) -> None:
    typer.echo(message, err=True)


def _version(value: bool) -> None:
    if value:
        from cvfilters import __version__

        typer.echo(f"cvfilters {__version__}")
        raise typer.Exit()


@app.callback()
def _main(debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
          version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    _state["debug"] = debug


# ---------------------------------------------------------------- apply
@app.command(epilog=APPLY_EXAMPLES)
def apply(
    inputs: Annotated[list[str], typer.Argument(metavar="INPUT", hidden=True, show_default=False)],
    output: Annotated[str, typer.Option("-o", "--output", metavar="OUT",
                                        help="Output file (one input) or directory; - writes standard output.")],
    specs: Annotated[list[str] | None, typer.Option(
        "-f", "--filter", metavar="SPEC", help="name or name:key=value,... (repeat, or join steps with |).")] = None,
    pipeline_file: Annotated[Path | None, typer.Option("-p", "--pipeline", metavar="FILE",
                                                       help="YAML/JSON pipeline file.")] = None,
    backend: Annotated[str, typer.Option(metavar="NAME", help="auto, cpu, opencl or cuda.")] = "auto",
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, metavar="N",
                                      help="Worker processes; 0: chosen from the work.")] = 0,
    devices: Annotated[str | None, typer.Option(
        metavar="IDS", help="GPUs for data-parallel workers: all, or a list such as 0,1.")] = None,
    scheduler: Annotated[str | None, typer.Option(envvar="CVFILTERS_SCHEDULER", metavar="ADDRESS",
                                                  help="Dask scheduler address (tcp://host:8786).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace existing outputs in a directory (never the input).")
                         ] = False,
    no_clobber: Annotated[bool, typer.Option("--no-clobber", help="Never replace an existing output file: "
                                                                  "refuse (one named file) or skip.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would be read, written, skipped and run; "
                                                            "write nothing.")] = False,
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="Descend into sub-directories.")] = False,
    fmt: Annotated[str | None, typer.Option("--format", metavar="EXT",
                                            help="Extension of image outputs in a directory, or of "
                                                 "standard output.")] = None,
    suffix: Annotated[str, typer.Option(metavar="TEXT", help="Appended to output names (_blur: photo.jpg -> "
                                                             "photo_blur.jpg).")] = "",
    quality: Annotated[int | None, typer.Option(min=1, max=100, metavar="Q", help="JPEG/WebP quality, 1-100.")
                       ] = None,
    max_pixels: Annotated[int | None, typer.Option(min=1, metavar="N", help="Refuse larger images (default 2^28).")
                          ] = None,
    frames: Annotated[str | None, typer.Option(metavar="START:STOP",
                                               help="Video or animation frame range (STOP exclusive).")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Print the plan: backend, steps, transfers, fallbacks.")
                       ] = False,
    large: Annotated[bool, typer.Option("--allow-large", help="Permit parameters that can run very long.")] = False,
    fuse: Annotated[bool, typer.Option("--fuse/--no-fuse", help="Merge point ops, matrices and warps.")] = True,
    compare: Annotated[Path | None, typer.Option(
        metavar="FILE", help="Also write the input and its result side by side (one input image only).")] = None,
    compare_mode: Annotated[str, typer.Option(metavar="MODE",
                                              help="side (both whole) or split (left half before, right after).")
                            ] = "side",
    histogram: Annotated[Path | None, typer.Option(
        metavar="FILE", help="Also plot the histograms of the input and its result (one input image only; needs "
                             "matplotlib).")] = None,
) -> None:
    """Run a pipeline on image and video files and write the results.

    INPUT: image or video files, directories or globs; - reads standard input. One input
    and OUT a file name: it is written there (replaced if it exists, unless --no-clobber);
    otherwise OUT is a directory, relative names are kept and existing outputs are skipped
    unless --overwrite.
    """
    if backend == "auto" and scheduler is None and _may_be_large(inputs):
        from cvfilters.backends import probe_soon

        probe_soon()  # overlaps the rest of the start-up; auto needs the answer for images >= 512 x 512
    from cvfilters.cli.progress import Progress, process_start
    from cvfilters.core import leftovers
    from cvfilters.core.errors import UsageError
    from cvfilters.registry.params import allow_large
    from cvfilters.run import batch, executors

    with allow_large(large):
        pipeline = build_pipeline(specs, pipeline_file)
    check_backend(backend)
    if overwrite and no_clobber:
        raise UsageError("--overwrite and --no-clobber exclude each other")
    device_list = executors.device_ids(devices, backend) if devices else None
    tasks, failures = batch.plan(inputs, output, recursive=recursive, extension=_extension(fmt), name_suffix=suffix)
    if scheduler and any(task.stdout_format or str(task.source) == "-" for task in tasks):
        raise UsageError("- (standard input or output) cannot be used with --scheduler (remote workers)")
    conflicts = [failure for failure in failures if failure.usage]
    if conflicts:
        for conflict in conflicts[:-1]:
            _err(f"error: {conflict.message}")
        raise UsageError(conflicts[-1].message)
    replace_named = not no_clobber  # --compare and --histogram name files, replaced as -o FILE is
    if compare is not None:
        _check_compare(compare, compare_mode, tasks, failures, replace_named)
    if histogram is not None:
        from cvfilters.viz.plots import require_matplotlib

        require_matplotlib()
        _check_single_image("--histogram", histogram, tasks, failures)
    workers = len(device_list) if device_list else executors.worker_count(jobs, [task.source for task in tasks])
    pipeline.fuse = fuse
    options = batch.Options(pipeline, backend, overwrite, quality, max_pixels, _frame_range(frames),
                            large, 1 if scheduler else workers, fuse)
    if explain and len(tasks) > 1:
        where = f"a pool of {workers}" if workers > 1 else "this process (a pool pays for more work)"
        _err(f"batch: {len(tasks)} files, {'--jobs' if jobs else 'chosen from the work'}: {where}")
    if no_clobber:
        _refuse_clobbering(tasks, options)
    if dry_run:
        _dry_run(tasks, failures, options, pipeline)
        return
    for folder in {task.target.parent for task in tasks if task.stdout_format is None}:
        leftovers.remove_stale(folder)
    summary = batch.Summary(failed=len(failures))
    for failure in failures:
        _err(f"error: {failure.message}")
    with executors.choose(workers, len(tasks), backend=backend, devices=device_list,
                          scheduler=scheduler) as executor, Progress(tasks) as progress:
        outcomes = batch.run(tasks, options, executor=executor, progress=progress.frames)
        for outcome in batch.timed(outcomes, summary, start=process_start()):
            _print_outcome(outcome, explain and summary.done == 1)
            progress.advance()
    if len(tasks) + len(failures) > 1:
        _err(summary.line())
    if summary.failed:
        raise typer.Exit(1)
    if compare is not None and summary.done == 1:
        from cvfilters.viz.sheets import write_before_after

        write_before_after(compare, tasks[0].source, tasks[0].target, mode=compare_mode, quality=quality,
                           overwrite=replace_named)
    if histogram is not None and summary.done == 1:
        from cvfilters.viz.plots import write_before_after_plot

        write_before_after_plot(histogram, tasks[0].source, tasks[0].target, overwrite=replace_named)


def _refuse_clobbering(tasks: list[Any], options: Any) -> None:
    """--no-clobber: a named output file that exists is a usage error once its input is known to be
    good (a bad input is reported as such); outputs in a directory are skipped as without it."""
    from dataclasses import replace

    from cvfilters.core.errors import UsageError
    from cvfilters.run import batch

    for task in tasks:
        if task.replace and task.stdout_format is None and os.path.lexists(task.target):
            outcome = batch.dry_run(replace(task, replace=False), options)
            if outcome.status == "failed":
                _err(f"error: {outcome.message}")
                raise typer.Exit(1)
            raise UsageError(f"{task.target}: exists; --no-clobber refuses to replace it")


def _dry_run(tasks: list[Any], failures: list[Any], options: Any, pipeline: Any) -> None:
    """Print on standard output what a run would read, write and skip, and the steps it would run
    (errors go to standard error, as in a run)."""
    from cvfilters.run import batch

    counts = batch.Summary(failed=len(failures))
    for failure in failures:
        _err(f"error: {failure.message}")
    for task in tasks:
        outcome = batch.dry_run(task, options)
        counts.add(outcome)
        if outcome.status == "failed":
            _err(f"error: {outcome.message}")
        else:
            typer.echo(outcome.message)
    for index, step in enumerate(pipeline.compile(), 1):
        typer.echo(f"step {index}: {step.to_spec()}")
    typer.echo(f"dry run: would write {counts.done}, skip {counts.skipped}, fail {counts.failed}; nothing written")
    if counts.failed:
        raise typer.Exit(1)


PROBE_MIN_BYTES = 64 * 1024  # a file this small is unlikely to reach auto's GPU threshold (512 x 512)


def _may_be_large(inputs: list[str]) -> bool:
    """Whether ``auto`` will probably probe the GPUs: a batch, or a file that is not tiny (a guess, never a rule)."""
    if len(inputs) != 1 or not os.path.isfile(inputs[0]):
        return True
    return os.path.getsize(inputs[0]) >= PROBE_MIN_BYTES


def _check_compare(compare: Path, mode: str, tasks: list[Any], failures: list[Any], overwrite: bool) -> None:
    """Refuse --compare before any work: one input image, a writable name apart from input and output."""
    from cvfilters.viz.sheets import check_before_after_target

    _check_single_image("--compare", compare, tasks, failures)
    check_before_after_target(compare, mode=mode, overwrite=overwrite)


def _check_single_image(option: str, path: Path, tasks: list[Any], failures: list[Any]) -> None:
    """A usage error unless the run has exactly one input image and ``path`` is neither it nor its output."""
    from cvfilters.core.errors import UsageError
    from cvfilters.io import images as io

    if len(tasks) != 1 or failures or tasks[0].source.suffix.lower() in io.VIDEO_EXTENSIONS:
        raise UsageError(f"{option} needs exactly one input image (not a video, directory or glob)")
    if "-" in (str(tasks[0].source), str(tasks[0].target)):
        raise UsageError(f"{option} needs files, not standard input or output")
    if path.resolve() in (tasks[0].source.resolve(), tasks[0].target.resolve()):
        raise UsageError(f"{option} {path}: must differ from the input and the output")


def _extension(fmt: str | None) -> str | None:
    from cvfilters.core.errors import UsageError
    from cvfilters.io import images as io

    if fmt is None:
        return None
    extension = "." + fmt.lower().lstrip(".")
    if extension not in io.IMAGE_EXTENSIONS:
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
        _err(f"warning: {note}")
    if outcome.status == "failed":
        _err(f"error: {outcome.message}")
    elif outcome.status == "skipped":
        _err(outcome.message)
    elif explain:
        _err("\n".join(outcome.report))


# ---------------------------------------------------------------- list / info
@app.command("list")
def list_filters(
    category: Annotated[str | None, typer.Option(metavar="NAME", help="Only this category (any case).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON list of {name, category, summary}.")] = False,
) -> None:
    """List the filters (name, category, summary)."""
    from cvfilters.registry.catalog import catalog

    chosen = catalog(category)
    if as_json:
        typer.echo(json.dumps([{k: e[k] for k in ("name", "category", "summary")} for e in chosen], indent=2))
        return
    width = max((len(e["name"]) for e in chosen), default=0)
    for entry in chosen:
        typer.echo(f"{entry['name']:<{width}}  {entry['category']:<9}  {entry['summary']}")


@app.command()
def info(
    name: Annotated[str, typer.Argument(metavar="NAME", hidden=True, show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="JSON object with a params list.")] = False,
) -> None:
    """Describe a filter and its parameters.

    NAME: a filter name, in any case (cvfilters list shows them).
    """
    from cvfilters.registry.catalog import get
    from cvfilters.viz.describe import describe_filter

    flt = get(name)
    if as_json:
        typer.echo(json.dumps(flt.info(), indent=2))
        return
    typer.echo(describe_filter(flt))


@app.command()
def backends(as_json: Annotated[bool, typer.Option("--json", help="JSON list.")] = False) -> None:
    """Show which backends can run here (device, or why not)."""
    from cvfilters.backends import BACKEND_NAMES, availability

    rows = [availability(name).as_dict() for name in BACKEND_NAMES if name != "auto"]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        state = "available" if row["available"] else "unavailable"
        typer.echo(f"{row['name']:<7} {state:<11}  {row['device'] if row['available'] else row['reason']}")
