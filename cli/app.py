"""The ``cvfilters`` command line (Typer), installed as ``cvfilters.cli``.

Exit codes: 0 all done; 1 some inputs failed and the rest were written; 2 usage
error (unknown filter, bad parameter, unavailable backend), nothing written; 130
interrupted. Errors are one line each on stderr; ``--debug`` adds tracebacks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cvfilters.cli import commands

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
def _version(value: bool) -> None:
    if value:
        from cvfilters import __version__

        typer.echo(f"cvfilters {__version__}")
        raise typer.Exit()


@app.callback()
def _main(debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
          version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    commands.state["debug"] = debug


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
    quality: Annotated[int | None, typer.Option(min=1, max=100, metavar="Q",
                                                help="JPEG/WebP/AVIF quality, 1-100 (default: JPEG keeps the "
                                                     "input's, else 90; WebP 90).")] = None,
    lossless: Annotated[bool, typer.Option("--lossless", help="Lossless WebP.")] = False,
    dither: Annotated[bool, typer.Option("--dither", help="Dither GIF frames of more than 256 colours.")] = False,
    max_pixels: Annotated[int | None, typer.Option(min=1, metavar="N", help="Refuse larger images (default 2^28).")
                          ] = None,
    frames: Annotated[str | None, typer.Option(metavar="START:STOP",
                                               help="Video or animation frame range (STOP exclusive).")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Print the plan: backend, steps, transfers, fallbacks; "
                                                            "tiles, halo, passes and peak memory when tiled.")
                       ] = False,
    memory: Annotated[str | None, typer.Option(metavar="SIZE", help="Memory budget (512M, 2G); default: half of "
                                                                    "what the machine and its cgroup leave.")
                      ] = None,
    tile_size: Annotated[int | None, typer.Option("--tile-size", min=16, metavar="N",
                                                  help="Force the side of output tiles (pixels).")] = None,
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
    colorspace: Annotated[str, typer.Option(
        metavar="SPACE", help="keep (the values as stored), srgb, adobe-rgb or an ICC file: convert from the input's "
                              "profile through LittleCMS before filtering and embed the new profile.")] = "keep",
    intent: Annotated[str, typer.Option(metavar="INTENT", help="Rendering intent of --colorspace: relative, "
                                                               "perceptual, saturation or absolute.")] = "relative",
    linear: Annotated[bool, typer.Option("--linear", help="Run the filters that mix light (blurs, resize, warps, "
                                                          "sharpening) on linear values (the profile's transfer "
                                                          "function, sRGB by default).")] = False,
) -> None:
    """Run a pipeline on image and video files and write the results.

    INPUT: image or video files, directories or globs; - reads standard input. One input
    and OUT a file name: it is written there (replaced if it exists, unless --no-clobber);
    otherwise OUT is a directory, relative names are kept and existing outputs are skipped
    unless --overwrite.
    """
    commands.apply(**locals())


# ---------------------------------------------------------------- list / info
@app.command("list")
def list_filters(
    category: Annotated[str | None, typer.Option(metavar="NAME", help="Only this category (any case).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON list of {name, category, summary}.")] = False,
) -> None:
    """List the filters (name, category, summary)."""
    commands.list_filters(**locals())


@app.command()
def info(
    name: Annotated[str, typer.Argument(metavar="NAME", hidden=True, show_default=False)],
    as_json: Annotated[bool, typer.Option("--json", help="JSON object with a params list.")] = False,
) -> None:
    """Describe a filter and its parameters.

    NAME: a filter name, in any case (cvfilters list shows them).
    """
    commands.info(**locals())


@app.command()
def backends(as_json: Annotated[bool, typer.Option("--json", help="JSON list.")] = False) -> None:
    """Show which backends can run here (device, or why not)."""
    commands.backends(**locals())
