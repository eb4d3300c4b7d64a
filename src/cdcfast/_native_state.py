"""Whether the compiled kernels load (SPEC §1): a missing extension falls back to the
reference decoders with a RuntimeWarning, unless CDCFAST_REQUIRE_NATIVE=1 makes it an
ImportError (as CI does)."""
from __future__ import annotations

import os
import warnings

from .formats import native_modules

# every kernel a decoder runs (a format whose kernel is missing would otherwise fail); not
# _json nor _masks, which no decoder imports: _json is the JSON scanner's test entry points
# (tests/test_json_scan.py), _masks the hex-mask kernel of _hexmask.h as a column function
# for its tests and benchmark (tests/test_qlik_masks.py, bench/test_bench_masks.py,
# cdcfast.bench.qlik); _qlik reads the masks through _hexmask.h itself
MODULES = native_modules()        # the union of the registered formats' NATIVE

try:
    for _name in MODULES:
        __import__(f"{__package__}.{_name}")
    available = True
    reason = None
except ImportError as e:  # pragma: no cover - exercised by the fallback test in a subprocess
    available = False
    reason = e

if not available:
    if os.environ.get("CDCFAST_REQUIRE_NATIVE", "") not in ("", "0"):
        raise ImportError(f"cdcfast's native kernels are not built ({reason}); "
                          "CDCFAST_REQUIRE_NATIVE is set") from reason
    warnings.warn(f"cdcfast's native kernels are not built ({reason}): using the slow "
                  "pure-Python reference decoders", RuntimeWarning, stacklevel=3)
