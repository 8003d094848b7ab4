"""ONNX model files checked before ``cv2.dnn`` reads them (in-process mirror of tests/cli/test_hostile.py).

Models are built with the ``onnx`` package; every refusal is compared whole with a message
written out here. Sizes at the limits use sparse files (``os.truncate``): their ``st_size``
is what the check reads, and nothing is written or read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from cvfilters.core.files import FileRefused
from cvfilters.filters._shared.model_files import check_model

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

GIB = 1 << 30


def external(name: str, location: str | None) -> Any:
    """A float tensor of 3 values kept in the external file ``location`` (no ``location`` entry for None)."""
    tensor = helper.make_tensor(name, TensorProto.FLOAT, [3], [0.0, 0.0, 0.0])
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    entries = [("offset", "0"), ("length", "12")] if location is None else [("location", location), ("offset", "0")]
    for key, value in entries:
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def internal(name: str) -> Any:
    return helper.make_tensor(name, TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])


def graph(initializers: list[Any] = (), nodes: list[Any] = (), sparse: list[Any] = ()) -> Any:  # type: ignore[assignment]
    io = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [3]) for name in ("input", "output")]
    return helper.make_graph(list(nodes) or [helper.make_node("Identity", ["input"], ["output"])], "g", io[:1],
                             io[1:], initializer=list(initializers), sparse_initializer=list(sparse))


def save(path: Path, body: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(helper.make_model(body, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    return str(path)


def model(path: Path, *tensors: Any) -> str:
    return save(path, graph(list(tensors)))


def refused(path: str) -> FileRefused:
    with pytest.raises(FileRefused) as caught:
        check_model(path)
    assert caught.value.path == path
    assert str(caught.value) == caught.value.reason
    return caught.value


def sparse_file(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    os.truncate(path, size)


# --- accepted ---------------------------------------------------------------------------------------------------
def test_a_model_without_external_data_needs_no_onnx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = model(tmp_path / "plain.onnx", internal("w"))
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    check_model(path)


@pytest.mark.parametrize("location", ["w.bin", "sub/w.bin", "sub/../w.bin", "./w.bin", "inner.bin"])
def test_external_data_inside_the_folder_is_accepted(tmp_path: Path, location: str) -> None:
    (tmp_path / "m" / "sub").mkdir(parents=True)
    (tmp_path / "m" / "w.bin").write_bytes(bytes(12))
    (tmp_path / "m" / "sub" / "w.bin").write_bytes(bytes(12))
    (tmp_path / "m" / "inner.bin").symlink_to(tmp_path / "m" / "sub" / "w.bin")  # a link that stays inside
    # internal tensors before and after: skipped, not checked (they have no location)
    check_model(model(tmp_path / "m" / "look.onnx", internal("a"), external("w", location), internal("b")))


def test_relative_model_paths_are_checked_from_the_working_folder(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(12))
    model(tmp_path / "look.onnx", external("w", "w.bin"))
    monkeypatch.chdir(tmp_path)
    check_model("look.onnx")
    (tmp_path / "w.bin").unlink()
    assert refused("look.onnx").reason == \
        "external data 'w.bin' of tensor 'w' cannot be read (No such file or directory)"


# --- refused: where the data is ---------------------------------------------------------------------------------
@pytest.mark.parametrize("location", ["../secret.bin", "sub/../../secret.bin", "link.bin", "sub"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    (tmp_path / "secret.bin").write_bytes(bytes(12))
    (tmp_path / "m" / "sub").mkdir(parents=True)
    (tmp_path / "m" / "link.bin").symlink_to(tmp_path / "secret.bin")
    path = model(tmp_path / "m" / "look.onnx", internal("first"), external("w", location))
    reason = "is a directory, not a regular file" if location == "sub" else \
        f"is outside {tmp_path / 'm'} (symlinks resolved)"
    assert refused(path).reason == f"external data {location!r} of tensor 'w' {reason}"


@pytest.mark.parametrize("location", ["/etc/passwd", "", None])
def test_absolute_empty_or_missing_locations_are_refused(tmp_path: Path, location: str | None) -> None:
    (tmp_path / "ok.bin").write_bytes(bytes(12))
    # a first tensor with a good location: without any location entry the bytes hold no key and nothing is checked
    path = model(tmp_path / "look.onnx", external("ok", "ok.bin"), external("w", location))
    assert refused(path).reason == \
        f"external data {location or ''!r} of tensor 'w' is not a relative name inside the model's folder"


def test_missing_and_non_regular_external_data_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.bin")
    assert refused(model(tmp_path / "a.onnx", external("w", "gone.bin"))).reason == \
        "external data 'gone.bin' of tensor 'w' cannot be read (No such file or directory)"
    assert refused(model(tmp_path / "b.onnx", external("w", "pipe.bin"))).reason == \
        "external data 'pipe.bin' of tensor 'w' is a FIFO (named pipe), not a regular file"


def test_names_in_the_message_are_escaped(tmp_path: Path) -> None:
    path = model(tmp_path / "look.onnx", external("w\x1b[2J", "../x\ny.bin"))
    assert refused(path).reason == \
        f"external data '../x\\\\ny.bin' of tensor 'w\\\\033[2J' is outside {tmp_path} (symlinks resolved)"


def test_a_model_reached_through_a_link_is_checked_where_cv2_dnn_reads_it(tmp_path: Path) -> None:
    """cv2.dnn opens external data beside the path it is given, not beside the link's target (OpenCV 5.1)."""
    (tmp_path / "real" / "w.bin").parent.mkdir()
    (tmp_path / "real" / "w.bin").write_bytes(bytes(12))
    model(tmp_path / "real" / "look.onnx", external("w", "w.bin"))
    (tmp_path / "secret.bin").write_bytes(bytes(12))
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / "look.onnx").symlink_to(tmp_path / "real" / "look.onnx")
    (tmp_path / "link" / "w.bin").symlink_to(tmp_path / "secret.bin")
    check_model(str(tmp_path / "real" / "look.onnx"))
    assert refused(str(tmp_path / "link" / "look.onnx")).reason == \
        f"external data 'w.bin' of tensor 'w' is outside {tmp_path / 'link'} (symlinks resolved)"


# --- refused: where the tensor is -------------------------------------------------------------------------------
def outside(name: str) -> Any:
    return external(name, "../secret.bin")


def nodes_holding(tensor: Any) -> dict[str, list[Any]]:
    """A graph per place a tensor can sit in a node: attribute t, attribute tensors, subgraph g, subgraphs."""
    inner = graph([tensor])
    return {
        "t": [helper.make_node("Constant", [], ["output"], value=tensor)],
        "tensors": [helper.make_node("Custom", ["input"], ["output"], list_of=[internal("ok"), tensor])],
        "g": [helper.make_node("If", ["input"], ["output"], then_branch=inner, else_branch=graph())],
        "graphs": [helper.make_node("Custom", ["input"], ["output"], branches=[graph(), inner])],
    }


@pytest.mark.parametrize("place", ["t", "tensors", "g", "graphs"])
def test_tensors_in_node_attributes_and_subgraphs_are_checked(tmp_path: Path, place: str) -> None:
    (tmp_path / "secret.bin").write_bytes(bytes(12))
    path = save(tmp_path / "m" / place / "look.onnx", graph(nodes=nodes_holding(outside(f"w_{place}"))[place]))
    folder = tmp_path / "m" / place
    assert refused(path).reason == \
        f"external data '../secret.bin' of tensor 'w_{place}' is outside {folder} (symlinks resolved)"
    # the same graphs with the data inside are accepted
    (folder / "w.bin").write_bytes(bytes(12))
    check_model(save(folder / "ok.onnx", graph(nodes=nodes_holding(external(f"w_{place}", "w.bin"))[place])))


@pytest.mark.parametrize("part", ["values", "indices"])
def test_sparse_initializers_are_checked(tmp_path: Path, part: str) -> None:
    values, indices = internal("values"), helper.make_tensor("indices", TensorProto.INT64, [3], [0, 1, 2])
    chosen = outside(part)
    sparse = helper.make_sparse_tensor(chosen if part == "values" else values,
                                       chosen if part == "indices" else indices, [3])
    path = save(tmp_path / "m" / "look.onnx", graph(sparse=[sparse]))
    assert refused(path).reason == \
        f"external data '../secret.bin' of tensor {part!r} is outside {tmp_path / 'm'} (symlinks resolved)"


# --- refused: the model file itself -----------------------------------------------------------------------------
def test_the_model_file_must_be_a_regular_file_of_at_most_2_gib(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.onnx")
    (tmp_path / "dir.onnx").mkdir()
    sparse_file(tmp_path / "huge.onnx", 2 * GIB + 1)
    assert refused(str(tmp_path / "pipe.onnx")).reason == "is a FIFO (named pipe), not a regular file"
    assert refused(str(tmp_path / "dir.onnx")).reason == "is a directory, not a regular file"
    assert refused(str(tmp_path / "huge.onnx")).reason == "is 2147483649 bytes, larger than the limit of 2 GiB"
    assert refused(str(tmp_path / "gone.onnx")).reason == "cannot be read (No such file or directory)"


def test_bytes_holding_the_location_key_that_are_not_onnx_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\x0a\x08location\xff\xff")  # field 1 (ir_version, a varint) given as a string: not a model
    assert refused(str(path)).reason == "is not an ONNX model (DecodeError)"


def test_without_onnx_a_model_with_external_data_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "w.bin").write_bytes(bytes(12))
    path = model(tmp_path / "look.onnx", external("w", "w.bin"))
    monkeypatch.setitem(sys.modules, "onnx", None)
    assert refused(path).reason == ("keeps weights in external files; install the onnx package so cvfilters can "
                                    "check where they are")


# --- the 8 GiB bound on all external data together ---------------------------------------------------------------
def test_external_data_is_bounded_at_8_gib_in_all(tmp_path: Path) -> None:
    sparse_file(tmp_path / "full.bin", 8 * GIB)
    sparse_file(tmp_path / "over.bin", 8 * GIB + 1)
    for name in ("a", "b", "c"):
        sparse_file(tmp_path / f"{name}.bin", 3 * GIB)
    sparse_file(tmp_path / "half.bin", 4 * GIB)
    check_model(model(tmp_path / "full.onnx", external("w", "full.bin")))  # exactly the limit
    check_model(model(tmp_path / "halves.onnx", external("w", "half.bin"), external("v", "half.bin")))  # 4 + 4
    assert refused(model(tmp_path / "over.onnx", external("w", "over.bin"))).reason == \
        "external data 'over.bin' of tensor 'w' is 8589934593 bytes, larger than the limit of 8 GiB"
    # 3 + 3 GiB counted, 2 GiB left for the third
    assert refused(model(tmp_path / "three.onnx", *(external(n, f"{n}.bin") for n in "abc"))).reason == \
        "external data 'c.bin' of tensor 'c' is 3221225472 bytes, larger than the limit of 2 GiB"
