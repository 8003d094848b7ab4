"""Device backends: images that live off the host, and the counted way back to it.

A primitive a device backend cannot run on its device falls back explicitly
(:meth:`DeviceBackend.fallback`: download, run on the one process-wide cpu backend,
upload), counted in ``counters.fallbacks`` and shown by ``--explain``. The primitives
added after the first device backends were written (sqrt, minimum/maximum,
compare/select) are fallbacks here by default; a backend overrides those its device runs.
"""

from __future__ import annotations

from typing import Any

from cvfilters.backends.base import Backend
from cvfilters.backends.cpu import host


class DeviceBackend(Backend):
    """A backend whose native images are device images (``cv2.UMat``, ``cv2.cuda.GpuMat``)."""

    def fallback(self, primitive: str, *args: Any, host_result: bool = False) -> Any:
        """Run the cpu backend's ``primitive`` on host copies of this backend's images.

        Device arguments (also inside lists) are copied to the host, the result is
        copied back (unless ``host_result``: statistics stay on the host), and
        ``counters.fallbacks[primitive]`` is incremented; those copies are not counted
        as pipeline uploads or downloads.
        """

        def on_host(arg: Any) -> Any:
            if self.is_native(arg):
                return self.to_host(arg)
            if isinstance(arg, (list, tuple)) and any(self.is_native(a) for a in arg):
                return [on_host(a) for a in arg]
            return arg

        result = getattr(host(), primitive)(*(on_host(arg) for arg in args))
        self.counters.fallbacks[primitive] += 1
        if host_result:
            return result
        return [self.to_device(r) for r in result] if isinstance(result, list) else self.to_device(result)

    def sqrt(self, image: Any) -> Any:
        return self.fallback("sqrt", image)

    def minimum(self, a: Any, b: Any) -> Any:
        return self.fallback("minimum", a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        return self.fallback("maximum", a, b)

    def compare(self, a: Any, b: Any, op: int) -> Any:
        return self.fallback("compare", a, b, op)

    def select(self, mask: Any, yes: Any, no: Any) -> Any:
        return self.fallback("select", mask, yes, no)
