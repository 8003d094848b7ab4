# Names vulture (dead-code check, run by .ci/run) cannot see being used. Regenerate the list with
#   vulture cvfilters cli --min-confidence 60 --ignore-decorators "@register,@app.command,@app.callback" \
#     --make-whitelist
# and keep only what is really used. Filters built by a call (matrix_filter, point_filter,
# color_kernel, warp_kernel) are used through the registry: list each new one here.
# ruff: noqa
# fmt: off

# filters registered by a call, found through cvfilters.registry.catalog
saturation, hue_shift, sepia, color_matrix  # cvfilters/filters/color.py
swirl, bulge, pinch, stretch, sphere  # cvfilters/filters/distort.py
tone_curve, exposure, brightness_contrast, posterize, solarize  # cvfilters/filters/tone.py
affine, perspective  # cvfilters/filters/warp.py
expand  # rotate_coords' keyword: a warp kernel takes every declared parameter (output_size uses it)

# Param._coerce_<kind>: dispatched by kind name (getattr)
_._coerce_int, _._coerce_float, _._coerce_bool, _._coerce_choice, _._coerce_str, _._coerce_path
_._coerce_point, _._coerce_color

# public API used by scripts, tests and users
with_filter_table  # scripts/update_docs.py, tests/project/test_docs.py
fx_stub  # scripts/update_fx_stub.py writes cvfilters/fx.pyi
point_op_of, color_matrix_of, lut_table, lut_file_of  # introspection of point, matrix and lut filters
__call__  # Filter objects are called like functions
unregister  # removing a user's filter
__getattr__, __dir__  # cvfilters/__init__.py: the lazy package namespace (PEP 562)
loaded  # registry.loaded(): scripts/update_manifest.py attributes filters to their families
backend_availability  # cvfilters/__init__.py: re-exported for type checkers
list_filters  # cvfilters/__init__.py: re-exported for type checkers
get_filter  # cvfilters/__init__.py: re-exported for type checkers
process_tiled  # cvfilters/__init__.py: re-exported for type checkers
streamable  # io/regions.py, io/tiff_regions.py: public, says why a file is decoded whole (TiffSource's errors cite it)
