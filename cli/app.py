"""The ``cvfilters`` command line (Typer), installed as ``cvfilters.cli``.

Exit codes: 0 all done; 1 some inputs failed and the rest were written; 2 usage
error (unknown filter, bad parameter, unavailable backend), nothing written; 130
interrupted. Errors are one line each on stderr; ``--debug`` adds tracebacks.
"""

from __future__ import annotations

import json
import os
import traceback
from pathlib import Path
from typing import Annotated, Any

import typer

from .common import build_pipeline, check_backend
from .progress import Progress

app = typer.Typer(
    name="cvfilters",
    help="Image filters on OpenCV: one definition, cpu / OpenCL / CUDA backends.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
_state = {"debug": False}


def _err(message: str) -> None:
    typer.echo(message, err=True)


@app.callback()
def _main(debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False) -> None:
    _state["debug"] = debug


# ---------------------------------------------------------------- apply
@app.command()
def apply(
    inputs: Annotated[list[str], typer.Argument(metavar="INPUT...", help="Images, videos, directories or globs.")],
    output: Annotated[str, typer.Option("-o", "--output", help="Output file (one input) or directory.")],
    specs: Annotated[list[str] | None, typer.Option("-f", "--filter", metavar="SPEC",
                                                    help="name or name:key=value,...; repeat or join with |")] = None,
    pipeline_file: Annotated[Path | None, typer.Option("-p", "--pipeline", help="YAML/JSON pipeline file.")] = None,
    backend: Annotated[str, typer.Option(help="auto, cpu, opencl or cuda.")] = "auto",
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0, help="Worker processes; 0 = one per core.")] = 0,
    devices: Annotated[str | None, typer.Option(help="GPUs for data-parallel workers: all or 0,1,...")] = None,
    scheduler: Annotated[str | None, typer.Option(envvar="CVFILTERS_SCHEDULER",
                                                  help="Dask scheduler address (tcp://host:8786).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace existing outputs (never the input).")] = False,
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="Descend into sub-directories.")] = False,
    fmt: Annotated[str | None, typer.Option("--format", help="Extension of image outputs in a directory.")] = None,
    suffix: Annotated[str, typer.Option(help="Appended to output names: photo.jpg -> photo<SUFFIX>.jpg.")] = "",
    quality: Annotated[int | None, typer.Option(min=1, max=100, help="JPEG/WebP quality.")] = None,
    max_pixels: Annotated[int | None, typer.Option(min=1, help="Refuse larger images (default 2^28).")] = None,
    frames: Annotated[str | None, typer.Option(help="Video frame range START:STOP (STOP exclusive).")] = None,
    explain: Annotated[bool, typer.Option(help="Print the plan: backend, steps, transfers, fallbacks.")] = False,
    large: Annotated[bool, typer.Option("--allow-large", help="Permit parameters that can run very long.")] = False,
    fuse: Annotated[bool, typer.Option("--fuse/--no-fuse", help="Merge point ops, matrices and warps.")] = True,
    compare: Annotated[Path | None, typer.Option(help="Also write the input and its result side by side "
                                                      "(one input image only).")] = None,
    compare_mode: Annotated[str, typer.Option(help="side (both whole) or split (left half before, right after).")
                            ] = "side",
    histogram: Annotated[Path | None, typer.Option(help="Also plot the histograms of the input and its result "
                                                        "(one input image only; needs matplotlib).")] = None,
) -> None:
    """Run a pipeline on image and video files and write the results."""
    from cvfilters import batch, executors
    from cvfilters.params import allow_large

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
    workers = len(device_list) if device_list else min(jobs or os.cpu_count() or 1, max(len(tasks), 1))
    options = batch.Options(pipeline.to_dict(), backend, overwrite, quality, max_pixels, _frame_range(frames),
                            large, 1 if scheduler else workers, fuse)
    summary = batch.Summary(failed=len(failures))
    for failure in failures:
        _err(f"error: {failure.message}")
    with executors.choose(workers, len(tasks), backend=backend, devices=device_list,
                          scheduler=scheduler) as executor, Progress(tasks) as progress:
        outcomes = batch.run(tasks, options, executor=executor, progress=progress.frames)
        for outcome in batch.timed(outcomes, summary):
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
    category: Annotated[str | None, typer.Option(help="Only this category.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON list of {name, category, summary}.")] = False,
) -> None:
    """List the registered filters."""
    from cvfilters.errors import UsageError
    from cvfilters.registry import CATEGORIES, filters

    if category is not None and category not in CATEGORIES:
        raise UsageError(f"--category {category!r} is not one of {', '.join(CATEGORIES)}")
    chosen = filters(category)
    if as_json:
        typer.echo(json.dumps([{"name": f.name, "category": f.category, "summary": f.summary} for f in chosen],
                              indent=2))
        return
    width = max((len(f.name) for f in chosen), default=0)
    for flt in chosen:
        typer.echo(f"{flt.name:<{width}}  {flt.category:<9}  {flt.summary}")


@app.command()
def info(
    name: Annotated[str, typer.Argument(help="Filter name.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON object with a params list.")] = False,
) -> None:
    """Describe a filter and its parameters."""
    from cvfilters.registry import get

    flt = get(name)
    data = flt.info()
    if as_json:
        typer.echo(json.dumps(data, indent=2))
        return
    typer.echo(f"{flt.name} ({flt.category}, alpha: {flt.alpha})\n  {flt.summary}\n")
    typer.echo("\n".join("  " + line for line in flt.description.splitlines()))
    typer.echo("\nparameters:" if flt.params else "\nparameters: none")
    for param in data["params"]:
        allowed = (f"one of {', '.join(param['choices'])}" if "choices" in param else
                   f"[{param.get('min', '-inf')}, {param.get('max', 'inf')}]" if "min" in param or "max" in param
                   else "")
        unit = f" {param['unit']}" if param["unit"] else ""
        default = "required" if param["required"] else f"default {json.dumps(param['default'])}"
        typer.echo(f"  {param['name']} ({param['type']}{unit}, {default}{', ' + allowed if allowed else ''})")
        typer.echo(f"      {param['help']}")
    from cvfilters.boundary import DTYPE_NOTE

    typer.echo(f"\nimages: uint8, uint16, float32 (0..1); 1, 3 or 4 channels. {DTYPE_NOTE}.")


@app.command()
def backends(as_json: Annotated[bool, typer.Option("--json", help="JSON list.")] = False) -> None:
    """Show which backends can run here, on which device, and if not, why."""
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

    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="cvfilters", standalone_mode=False)
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


def _report(exc: Exception) -> None:
    if _state["debug"]:
        traceback.print_exception(exc)
    _err(f"error: {exc}")
