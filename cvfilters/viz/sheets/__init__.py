"""Images about images: contact sheets, parameter sweeps and before/after comparisons.

Three compositions, all plain numpy/OpenCV:

* :func:`contact_sheet` lays equally sized 8-bit tiles out in a labelled grid (the
  gallery in ``docs/`` and ``cvfilters sweep``).
* :func:`parse_sweep` and :func:`sweep_sheet` render a filter over one or two parameter
  ranges, written ``name:param=a..b/n`` (``n`` values from ``a`` to ``b`` inclusive);
  the other parameters of the spec are given as usual.
* :func:`before_after` puts an image and its filtered result side by side or splits
  them down the middle, in the input's depth (``cvfilters apply --compare``).

Example::

    import cvfilters as cvf
    from cvfilters.viz.sheets import before_after, parse_sweep, sweep_sheet
    image = cvf.read("fixtures/astronaut.png")
    cvf.write("sheet.png", sweep_sheet(image, parse_sweep(["vignette:intensity=0..2/6"])))
    cvf.write("ba.png", before_after(image, cvf.apply(image, "sepia"), mode="split"))
"""

from cvfilters.core.pixels import full_scale
from cvfilters.viz.sheets.compare import COMPARE_MODES, before_after, check_before_after_target, write_before_after
from cvfilters.viz.sheets.contact import GAP, LABEL_HEIGHT, contact_sheet, label_strip
from cvfilters.viz.sheets.display import convert_channels, convert_depth, fit, to_display
from cvfilters.viz.sheets.sweeps import Axis, Sweep, parse_sweep, sweep_sheet

__all__ = ["COMPARE_MODES", "GAP", "LABEL_HEIGHT", "Axis", "Sweep", "before_after", "check_before_after_target",
           "contact_sheet", "convert_channels", "convert_depth", "fit", "full_scale", "label_strip", "parse_sweep",
           "sweep_sheet", "to_display", "write_before_after"]
