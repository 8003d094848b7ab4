"""ONNX model files checked before ``cv2.dnn`` reads them: regular, bounded, external data confined.

An ONNX initializer may keep its bytes in another file, named by the ``location`` entry
of its ``external_data``; ``cv2.dnn`` opens that name relative to the model's folder
without checking it, so ``../secret.txt`` (or a symlink out) would be read into the
weights and from there into the output pixels. :func:`check_model` refuses a model
whose external data is not a regular file inside the model's folder (symlinks resolved),
before ``cv2.dnn`` sees the model. The folder is that of the path as given, where ``cv2.dnn``
looks, not that of a linked model's target.

Finding the entries needs the ``onnx`` package, which is only imported when the model's
bytes hold a ``location`` key at all (the protobuf encoding of the key is fixed:
field 1, length 8, ``location``); without ``onnx`` such a model is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cvfilters.core.files import FileRefused, check_regular, read_regular, shown

MAX_MODEL_FILE = 2 << 30  # protobuf's own limit on one message
MAX_EXTERNAL_DATA = 8 << 30
_LOCATION_KEY = b"\x0a\x08location"


def check_model(path: str) -> None:
    """Raise :class:`FileRefused` unless ``path`` is a regular model file whose external data is confined."""
    data = read_regular(path, MAX_MODEL_FILE)
    if _LOCATION_KEY not in data:
        return
    try:
        import onnx
    except ImportError:
        raise FileRefused(path, "keeps weights in external files; install the onnx package so cvfilters can check "
                                "where they are") from None
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and others: cv2.dnn reports an unreadable model the same way
        raise FileRefused(path, f"is not an ONNX model ({type(exc).__name__})") from None
    # cv2.dnn opens external data beside the path it is given, not beside a linked model's target: confine to that
    folder = Path(path).parent
    total = 0
    for tensor in _tensors(model.graph):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        location = {entry.key: entry.value for entry in tensor.external_data}.get("location", "")
        try:
            if not location or Path(location).is_absolute():
                raise FileRefused(location, "is not a relative name inside the model's folder")
            total += check_regular(folder / location, MAX_EXTERNAL_DATA - total, root=folder).stat().st_size
        except FileRefused as exc:
            raise FileRefused(path, f"external data {shown(location)!r} of tensor {shown(tensor.name)!r} "
                                    f"{exc.reason}") from None


def _tensors(graph: Any) -> Iterator[Any]:
    """Every tensor of a graph and its subgraphs: initializers, sparse ones, and node attributes."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield from (sparse.values, sparse.indices)
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("g"):
                yield from _tensors(attribute.g)
            for subgraph in attribute.graphs:
                yield from _tensors(subgraph)


__all__ = ["MAX_EXTERNAL_DATA", "MAX_MODEL_FILE", "check_model"]
