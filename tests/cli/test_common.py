"""The option checks the commands share, with the exact one-line message each gives (exit 2 in the CLI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cvfilters.cli.common import build_pipeline, check_backend, check_named_output
from cvfilters.core.errors import UsageError


def test_no_filter_and_no_pipeline_file_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as info:
        build_pipeline(None, None)
    assert str(info.value) == "give at least one filter with -f SPEC or a pipeline file with -p FILE"


def test_a_pipeline_file_comes_before_the_filters(tmp_path: Path) -> None:
    spec = tmp_path / "look.yaml"
    spec.write_text("version: 1\nsteps: [{filter: sepia}]\n")
    assert [step.filter.name for step in build_pipeline(["invert"], spec).steps] == ["sepia", "invert"]


def test_an_unknown_backend_lists_the_four(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        check_backend("gpu")
    assert str(info.value) == "--backend 'gpu' is not one of auto, cpu, opencl, cuda"


def test_an_output_that_is_an_input_is_refused_hard_links_too(tmp_path: Path) -> None:
    source, link = tmp_path / "in.png", tmp_path / "link.png"
    source.write_bytes(b"x")
    os.link(source, link)
    for output in (source, link):
        with pytest.raises(UsageError) as info:
            check_named_output(output, [source], no_clobber=False)
        assert str(info.value) == f"{output}: is the input file; cvfilters never overwrites its input"


def test_an_output_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    output = tmp_path / "nowhere" / "out.png"
    with pytest.raises(UsageError) as info:
        check_named_output(output, [], no_clobber=False)
    assert str(info.value) == f"-o {output}: folder {tmp_path / 'nowhere'} does not exist"


def test_no_clobber_refuses_an_existing_output_even_a_dangling_link(tmp_path: Path) -> None:
    output = tmp_path / "out.png"
    output.symlink_to(tmp_path / "gone.png")
    with pytest.raises(UsageError, match=r"out\.png: exists; --no-clobber refuses to replace it$"):
        check_named_output(output, [], no_clobber=True)
    check_named_output(output, [], no_clobber=False)  # replaced, as cp does
