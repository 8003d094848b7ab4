"""cvfilters.run.planning without pixels: output names and the usage errors.

Every expectation is written out by hand (paths, messages, counts); nothing is computed with
the module's own helpers.
"""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from cvfilters.core.errors import UsageError
from cvfilters.run import planning
from cvfilters.run.tasks import Task


def touch_images(root: Path, *names: str) -> None:
    """Tiny real PNGs (4x3, grey 7) at ``root/name``."""
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        assert cv2.imwrite(str(path), np.full((3, 4), 7, np.uint8))


def targets(tasks: list[Task], root: Path) -> list[str]:
    return sorted(task.target.relative_to(root).as_posix() for task in tasks)


# ---------------------------------------------------------------- one named output
def test_one_file_to_a_named_file_replaces_it(tmp_path: Path) -> None:
    touch_images(tmp_path, "a.png")
    tasks, failures = planning.plan([str(tmp_path / "a.png")], str(tmp_path / "b.jpg"))
    assert failures == [] and tasks == [Task(tmp_path / "a.png", tmp_path / "b.jpg", replace=True)]


def test_one_file_to_a_name_without_extension_is_a_usage_error(tmp_path: Path) -> None:
    touch_images(tmp_path, "a.png")
    with pytest.raises(UsageError) as caught:
        planning.plan([str(tmp_path / "a.png")], str(tmp_path / "noext"))
    out = tmp_path / "noext"
    assert str(caught.value) == (f"-o {out}: has no extension; name an image file (such as {out}.png) or a folder "
                                 f"with a trailing slash ({out}/)")
    tasks, failures = planning.plan([str(tmp_path / "a.png")], str(tmp_path / "noext") + "/")  # a folder, made later
    assert not failures and tasks == [Task(tmp_path / "a.png", tmp_path / "noext" / "a.png")]


@pytest.mark.parametrize(("output", "fragment"), [
    ("out.xyz", "no encoder for .xyz (image formats: .avif, .bmp, "),
    ("missing/out.png", "folder {root}/missing does not exist (a single output file is written into an existing "
                        "folder)"),
])
def test_a_named_output_must_be_writable(tmp_path: Path, output: str, fragment: str) -> None:
    touch_images(tmp_path, "a.png")
    with pytest.raises(UsageError) as caught:
        planning.plan([str(tmp_path / "a.png")], str(tmp_path / output))
    assert str(caught.value).startswith(f"-o {tmp_path / output}: " + fragment.format(root=tmp_path))


@pytest.mark.parametrize("suffix", [".png", ".MP4", ".zarr"])
def test_several_inputs_to_one_file_name_are_a_usage_error(tmp_path: Path, suffix: str) -> None:
    touch_images(tmp_path / "in", "a.png", "b.png")
    out = tmp_path / f"out{suffix}"
    with pytest.raises(UsageError) as caught:
        planning.plan([str(tmp_path / "in/a.png"), str(tmp_path / "in/b.png")], str(out))
    assert str(caught.value) == (f"-o {out}: names a file, but 2 inputs need an output directory "
                                 "(give a folder name, or one input file)")
    with pytest.raises(UsageError, match="names a file, but a directory or glob input need an output directory"):
        planning.plan([str(tmp_path / "in")], str(out))
    with pytest.raises(UsageError, match="names a file, but a directory or glob input need"):
        planning.plan([str(tmp_path / "in/*.png")], str(out))


def test_an_existing_folder_named_like_a_file_is_a_folder_but_an_existing_zarr_is_an_output(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.png", "b.png")
    (tmp_path / "looks.png").mkdir()
    tasks, _ = planning.plan([str(tmp_path / "in/a.png"), str(tmp_path / "in/b.png")], str(tmp_path / "looks.png"))
    assert targets(tasks, tmp_path) == ["looks.png/a.png", "looks.png/b.png"]
    (tmp_path / "old.zarr").mkdir()
    tasks, _ = planning.plan([str(tmp_path / "in/a.png")], str(tmp_path / "old.zarr"))
    assert tasks == [Task(tmp_path / "in/a.png", tmp_path / "old.zarr", replace=True)]


def test_a_zarr_folder_is_an_input_not_a_folder_of_inputs(tmp_path: Path) -> None:
    touch_images(tmp_path / "scan.zarr", "c.png")  # a folder with an image inside, named .zarr
    tasks, failures = planning.plan([str(tmp_path / "scan.zarr")], str(tmp_path / "out") + "/")
    assert not failures and tasks == [Task(tmp_path / "scan.zarr", tmp_path / "out" / "scan.zarr")]


# ---------------------------------------------------------------- folders and globs
def test_a_folder_without_media_is_a_failure_with_a_hint_unless_recursive(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "sub/a.png")
    (tmp_path / "in" / "notes.txt").write_text("x")
    tasks, failures = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"))
    assert tasks == [] and [f.message for f in failures] == [
        f"{tmp_path / 'in'}: is a directory without image or video files (--recursive descends into sub-directories)"]
    assert failures[0].status == "failed" and not failures[0].usage
    assert failures[0].task == Task(tmp_path / "in", tmp_path / "in")
    (tmp_path / "empty").mkdir()
    tasks, failures = planning.plan([str(tmp_path / "empty")], str(tmp_path / "out"), recursive=True)
    assert [f.message for f in failures] == [f"{tmp_path / 'empty'}: is a directory without image or video files"]


def test_extensions_match_in_any_case_and_broken_links_are_kept(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.PNG", "b.Jpg")
    (tmp_path / "in" / "gone.png").symlink_to(tmp_path / "nowhere.png")
    (tmp_path / "in" / "folder.png").mkdir()  # a folder named like an image is not one
    tasks, failures = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"))
    assert not failures and targets(tasks, tmp_path) == ["out/a.PNG", "out/b.Jpg", "out/gone.png"]


def test_a_glob_matches_extensions_in_any_case_and_keeps_names_under_its_base(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.png", "B.PNG", "c.pNg", "d.jpg", "sub/e.png", "sub/deep/f.PNG")
    tasks, failures = planning.plan([str(tmp_path / "in" / "*.png")], str(tmp_path / "out"))
    assert not failures and targets(tasks, tmp_path) == ["out/B.PNG", "out/a.png", "out/c.pNg"]
    tasks, _ = planning.plan([str(tmp_path / "in" / "**" / "*.png")], str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/B.PNG", "out/a.png", "out/c.pNg", "out/sub/deep/f.PNG", "out/sub/e.png"]
    tasks, _ = planning.plan([str(tmp_path / "in" / "s*" / "*.png")], str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/sub/e.png"]  # the base is the fixed part, in/


def test_a_glob_relative_to_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch_images(tmp_path, "a.png", "b.png")
    monkeypatch.chdir(tmp_path)
    tasks, failures = planning.plan(["*.png"], "out")
    assert not failures and sorted(t.target.as_posix() for t in tasks) == ["out/a.png", "out/b.png"]
    assert sorted(t.source.as_posix() for t in tasks) == ["a.png", "b.png"]


def test_a_glob_that_matches_nothing_is_one_failure(tmp_path: Path) -> None:
    pattern = str(tmp_path / "none" / "*.png")
    tasks, failures = planning.plan([pattern], str(tmp_path / "out"))
    assert tasks == [] and [(f.task, f.status, f.usage, f.message) for f in failures] == [
        (Task(Path(pattern), Path(pattern)), "failed", False, f"{pattern}: no files match")]


def test_a_glob_never_loops_through_a_link_to_an_ancestor(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.png", "sub/b.png")
    (tmp_path / "in" / "sub" / "up").symlink_to("..")  # in/sub/up/sub/up/... loops
    tasks, failures = planning.plan([str(tmp_path / "in" / "**" / "*.png")], str(tmp_path / "out"))
    assert not failures and targets(tasks, tmp_path) == ["out/a.png", "out/sub/b.png"]


def test_a_glob_takes_each_file_once_by_its_shortest_name(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.png", "deep/sub/b.png")
    (tmp_path / "in" / "same").symlink_to("deep/sub")  # another name for in/deep/sub: b.png once
    tasks, failures = planning.plan([str(tmp_path / "in" / "**" / "*.png")], str(tmp_path / "out"))
    assert not failures and targets(tasks, tmp_path) == ["out/a.png", "out/same/b.png"]


def test_a_glob_of_a_name_that_exists_is_that_file(tmp_path: Path) -> None:
    touch_images(tmp_path, "[1].png", "1.png")
    tasks, _ = planning.plan([str(tmp_path / "[1].png")], str(tmp_path / "out") + "/")
    assert [t.source.name for t in tasks] == ["[1].png"]


def test_several_folders_and_globs_add_up(tmp_path: Path) -> None:
    touch_images(tmp_path, "in/a/1.png", "in/b/2.png", "c.png")
    tasks, _ = planning.plan([str(tmp_path / "c.png"), str(tmp_path / "in/a"), str(tmp_path / "in/b")],
                             str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/1.png", "out/2.png", "out/c.png"]
    tasks, _ = planning.plan([str(tmp_path / "c.png"), str(tmp_path / "in/a/*.png"), str(tmp_path / "in/b/*.png")],
                             str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/1.png", "out/2.png", "out/c.png"]


def test_a_glob_takes_files_only_and_rewrites_only_a_plain_last_extension(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.v1.PNG", "b.png", "sub/d.png")
    for name in ("c.jng", "scan"):  # names only: planning reads no file
        (tmp_path / "in" / name).write_bytes(b"")
    tasks, _ = planning.plan([str(tmp_path / "in" / "*")], str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/a.v1.PNG", "out/b.png", "out/c.jng", "out/scan"]  # not the folder sub
    tasks, _ = planning.plan([str(tmp_path / "in" / "*.v1.png")], str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/a.v1.PNG"]  # the extension after the last dot, in any case
    tasks, _ = planning.plan([str(tmp_path / "in" / "*.[pj]ng")], str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/b.png", "out/c.jng"]  # a pattern as the extension is kept as it is
    tasks, _ = planning.plan([str(tmp_path / "i*" / "scan")], str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/in/scan"]


def test_a_glob_through_a_link_to_its_own_ancestor_matches_nothing(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    touch_images(tmp_path / "in", "a.png", "sub/b.png")
    (tmp_path / "in" / "sub" / "up").symlink_to("..")  # in/sub/up is in/
    pattern = str(tmp_path / "in" / "sub" / "up" / "*.png")
    tasks, failures = planning.plan([pattern], str(tmp_path / "out"))
    assert tasks == [] and [f.message for f in failures] == [f"{pattern}: no files match"]
    monkeypatch.chdir(tmp_path / "in" / "sub")
    tasks, failures = planning.plan(["up/*.png"], "out")  # the link as the first part of a relative glob
    assert tasks == [] and [f.message for f in failures] == ["up/*.png: no files match"]
    (tmp_path / "root").symlink_to("/")  # every folder is below the root
    assert planning._through_loop(tmp_path / "root" / "x.png")
    assert not planning._through_loop(tmp_path / "in" / "sub" / "b.png")


def test_renaming_keeps_video_containers_and_adds_the_suffix(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.png")
    (tmp_path / "in" / "clip.MOV").write_bytes(b"")
    tasks, _ = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"), extension=".jpg", name_suffix="_x")
    assert targets(tasks, tmp_path) == ["out/a_x.jpg", "out/clip_x.MOV"]
    tasks, _ = planning.plan([str(tmp_path / "in")], str(tmp_path / "out"))
    assert targets(tasks, tmp_path) == ["out/a.png", "out/clip.MOV"]


def test_outputs_that_are_inputs_are_usage_failures_a_hard_link_too(tmp_path: Path) -> None:
    touch_images(tmp_path / "in", "a.png", "b.png")
    os.link(tmp_path / "in" / "b.png", tmp_path / "b.png")  # out/b.png would be in/b.png under another name
    tasks, failures = planning.plan([str(tmp_path / "in")], str(tmp_path))
    assert tasks == [Task(tmp_path / "in/a.png", tmp_path / "a.png")]
    assert [(f.task, f.status, f.usage, f.message) for f in failures] == [
        (Task(tmp_path / "in/b.png", tmp_path / "b.png"), "failed", True,
         f"{tmp_path / 'in/b.png'}: output {tmp_path / 'b.png'} would replace an input file; cvfilters never "
         "overwrites its inputs")]
    _, failures = planning.plan([str(tmp_path / "in")], str(tmp_path / "in"))
    assert len(failures) == 2 and all(f.usage for f in failures)


def test_a_missing_input_claims_no_output_name(tmp_path: Path) -> None:
    touch_images(tmp_path / "b", "x.png")
    tasks, failures = planning.plan([str(tmp_path / "a/x.png"), str(tmp_path / "b/x.png")], str(tmp_path / "out"))
    assert not failures and [t.source for t in tasks] == [tmp_path / "a/x.png", tmp_path / "b/x.png"]
    tasks, failures = planning.plan([str(tmp_path / "b/x.png"), str(tmp_path / "b/x.png")], str(tmp_path / "out"))
    assert len(tasks) == 1 and [(f.task, f.status) for f in failures] == [
        (Task(tmp_path / "b/x.png", tmp_path / "out/x.png"), "failed")]
    assert [f.message for f in failures] == [
        f"{tmp_path / 'b/x.png'}: output {tmp_path / 'out/x.png'} is also the output of {tmp_path / 'b/x.png'}"]


# ---------------------------------------------------------------- standard input and output
def test_standard_output_takes_the_input_format_or_the_one_asked(tmp_path: Path) -> None:
    assert planning.plan(["a.PNG"], "-") == ([Task(Path("a.PNG"), Path("-"), True, ".png")], [])
    assert planning.plan(["a.png"], "-", extension=".jpg") == ([Task(Path("a.png"), Path("-"), True, ".jpg")], [])
    assert planning.plan(["-"], "-", extension=".tif")[0][0].stdout_format == ".tif"
    assert planning.plan(["-"], str(tmp_path / "o.png")) == ([Task(Path("-"), tmp_path / "o.png", True)], [])


@pytest.mark.parametrize(("inputs", "output", "message"), [
    (["-", "a.png"], "out", "- (standard input or output) takes exactly one input"),
    (["a.png", "b.png"], "-", "- (standard input or output) takes exactly one input"),
    (["clip.avi"], "-", "- (standard input or output) takes images, not videos"),
    (["-"], "o.MP4", "- (standard input or output) takes images, not videos"),
    (["-"], "-", "-o - (standard output) needs --format EXT (png, jpg, tif, ...)"),
    (["a.txt"], "-", "-o - (standard output) needs --format EXT (png, jpg, tif, ...)"),
    (["-"], "o.xyz", "-o o.xyz: an input from standard input needs an output image file name"),
    (["-"], "folder.png", "-o folder.png: an input from standard input needs an output image file name"),
])
def test_standard_streams_usage_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inputs: list[str],
                                       output: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.png").mkdir()
    with pytest.raises(UsageError) as caught:
        planning.plan(inputs, output)
    assert str(caught.value) == message
