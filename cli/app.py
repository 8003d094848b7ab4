"""The ``cvfilters`` command line (Typer), installed as ``cvfilters.cli``.

Exit codes: 0 all done; 1 some inputs failed and the rest were written; 2 usage
error (unknown filter, bad parameter, unavailable backend), nothing written; 130
interrupted. Errors are one line each on stderr; ``--debug`` adds tracebacks.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer

from .common import build_pipeline, check_backend

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
                                        help="Output file (one input) or directory.")],
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
    overwrite: Annotated[bool, typer.Option(help="Replace existing outputs (never the input).")] = False,
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="Descend into sub-directories.")] = False,
    fmt: Annotated[str | None, typer.Option("--format", metavar="EXT",
                                            help="Extension of image outputs in a directory.")] = None,
    suffix: Annotated[str, typer.Option(metavar="TEXT", help="Appended to output names (_blur: photo.jpg -> "
                                                             "photo_blur.jpg).")] = "",
    quality: Annotated[int | None, typer.Option(min=1, max=100, metavar="Q", help="JPEG/WebP quality, 1-100.")
                       ] = None,
    max_pixels: Annotated[int | None, typer.Option(min=1, metavar="N", help="Refuse larger images (default 2^28).")
                          ] = None,
    frames: Annotated[str | None, typer.Option(metavar="START:STOP",
                                               help="Video frame range (STOP exclusive).")] = None,
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

    INPUT: image or video files, directories or globs. One input and OUT a file name:
    it is written there; otherwise OUT is a directory and relative names are kept.
    """
    if backend == "auto" and scheduler is None and _may_be_large(inputs):
        from cvfilters.backends import probe_soon

        probe_soon()  # overlaps the rest of the start-up; auto needs the answer for images >= 512 x 512
    from cvfilters import batch, executors
    from cvfilters.params import allow_large

    from .progress import Progress, process_start

    with allow_large(large):
        pipeline = build_pipeline(specs, pipeline_file)
    check_backend(backend)
    device_list = executors.device_ids(devices, backend) if devices else None
    tasks, failures = batch.plan(inputs, output, recursive=recursive, extension=_extension(fmt), name_suffix=suffix)
    if compare is not None:
        _check_compare(compare, compare_mode, tasks, failures, overwrite)
    if histogram is not None:
        from .plots import require_matplotlib

        require_matplotlib()
        _check_single_image("--histogram", histogram, tasks, failures)
    workers = len(device_list) if device_list else executors.worker_count(jobs, [task.source for task in tasks])
    options = batch.Options(pipeline.to_dict(), backend, overwrite, quality, max_pixels, _frame_range(frames),
                            large, 1 if scheduler else workers, fuse)
    if explain and len(tasks) > 1:
        where = f"a pool of {workers}" if workers > 1 else "this process (a pool pays for more work)"
        _err(f"batch: {len(tasks)} files, {'--jobs' if jobs else 'chosen from the work'}: {where}")
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
        from cvfilters.sheets import write_before_after

        write_before_after(compare, tasks[0].source, tasks[0].target, mode=compare_mode, quality=quality,
                           overwrite=overwrite)
    if histogram is not None and summary.done == 1:
        from .plots import write_before_after_plot

        write_before_after_plot(histogram, tasks[0].source, tasks[0].target, overwrite=overwrite)


PROBE_MIN_BYTES = 64 * 1024  # a file this small is unlikely to reach auto's GPU threshold (512 x 512)


def _may_be_large(inputs: list[str]) -> bool:
    """Whether ``auto`` will probably probe the GPUs: a batch, or a file that is not tiny (a guess, never a rule)."""
    if len(inputs) != 1 or not os.path.isfile(inputs[0]):
        return True
    return os.path.getsize(inputs[0]) >= PROBE_MIN_BYTES


def _check_compare(compare: Path, mode: str, tasks: list[Any], failures: list[Any], overwrite: bool) -> None:
    """Refuse --compare before any work: one input image, a writable name apart from input and output."""
    from cvfilters.sheets import check_before_after_target

    _check_single_image("--compare", compare, tasks, failures)
    check_before_after_target(compare, mode=mode, overwrite=overwrite)


def _check_single_image(option: str, path: Path, tasks: list[Any], failures: list[Any]) -> None:
    """A usage error unless the run has exactly one input image and ``path`` is neither it nor its output."""
    from cvfilters import io
    from cvfilters.errors import UsageError

    if len(tasks) != 1 or failures or tasks[0].source.suffix.lower() in io.VIDEO_EXTENSIONS:
        raise UsageError(f"{option} needs exactly one input image (not a video, directory or glob)")
    if path.resolve() in (tasks[0].source.resolve(), tasks[0].target.resolve()):
        raise UsageError(f"{option} {path}: must differ from the input and the output")


def _extension(fmt: str | None) -> str | None:
    from cvfilters import io
    from cvfilters.errors import UsageError

    if fmt is None:
        return None
    extension = "." + fmt.lower().lstrip(".")
    if extension not in io.IMAGE_EXTENSIONS:
        raise UsageError(f"--format {fmt!r} is not an image format cvfilters writes")
    return extension


def _frame_range(text: str | None) -> tuple[int, int | None] | None:
    from cvfilters.errors import UsageError

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
    from cvfilters.registry import catalog

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
    from cvfilters.docs import describe_filter
    from cvfilters.registry import get

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


# ---------------------------------------------------------------- entry point
def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (the console script calls this)."""
    from cvfilters.errors import CvfError, UsageError

    from .fast import FAST_COMMANDS, plain_call

    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] not in FAST_COMMANDS:
        _register_all_commands()
    command = typer.main.get_command(app)
    try:
        fast = plain_call(command, args)
        if fast is not None:
            callback, values = fast
            callback(**values)
            return 0
        if _register_all_commands():
            command = typer.main.get_command(app)
        _plain_metavars(command)
        code = command.main(args=args, prog_name="cvfilters", standalone_mode=False)
        return code if isinstance(code, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        _err("interrupted")
        return 130
    except typer.TyperException as exc:  # typer's own click: bad options, missing arguments
        _err(f"error: {exc.format_message()}")  # type: ignore[attr-defined]
        return getattr(exc, "exit_code", 2)
    except UsageError as exc:
        _report(exc)
        return 2
    except CvfError as exc:
        _report(exc)
        return 1
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Exception as exc:  # a bug: still one line unless --debug
        if _state["debug"]:
            raise
        _err(f"error: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
        return 1


def _register_all_commands() -> bool:
    """Import the modules that add commands to ``app`` (histogram, preview, sweep); True if it was needed."""
    if "cvfilters.cli.preview" in sys.modules and "cvfilters.cli.plots" in sys.modules:
        return False
    from . import plots, preview  # noqa: F401  (their commands register on import)

    return True


_METAVARS = {int: "N", float: "X", str: "TEXT", Path: "PATH"}


def _plain_metavars(group: Any) -> None:
    """Name option values in help as words (``--bins N``), not as Typer's type placeholders (``<int range>``)."""
    for command in group.commands.values():
        for param in command.params:
            annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
            element = getattr(annotation, "__args__", (annotation,))[0] if hasattr(annotation, "__origin__") \
                else annotation
            if param.param_type_name == "option" and param.metavar is None and element in _METAVARS:
                param.metavar = _METAVARS[element]


def _report(exc: Exception) -> None:
    if _state["debug"]:
        traceback.print_exception(exc)
    _err(f"error: {exc}")
