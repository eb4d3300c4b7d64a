"""Builds the Cython kernels in native/ into the cdcfast package."""
import glob
import os
import runpy

from Cython.Build import cythonize
from setuptools import Extension, setup

NATIVE = os.path.join("native", "cdcfast")

# the formats' code specs (src/cdcfast/formats/_*_codes.py) -> native/cdcfast/_*_codes.pxd,
# which the kernels cimport (the committed files are the same: tests/test_codes.py)
runpy.run_path(os.path.join("native", "codes_pxd.py"))["write_all"]()

FLAGS = ["-O3", "-fno-strict-aliasing"]
LINK = []
# CDCFAST_SANITIZE=1: every kernel under AddressSanitizer and UndefinedBehaviorSanitizer, for
# the fuzzers and a run of the suite (the interpreter is not built with them: run under
# ci/sanitize.sh, which preloads their runtime)
# CDCFAST_SANITIZE=fuzz (clang only) adds libFuzzer's coverage, so that atheris's fuzzers see
# the kernels' branches (ci/fuzz.sh builds it out of the tree and preloads atheris's runtime)
# CDCFAST_SANITIZE=fuzz-ubsan: the same without AddressSanitizer (whose allocator halves the
# fuzzers' speed), for the campaign's executions beyond the ones under both
SANITIZE_MODE = os.environ.get("CDCFAST_SANITIZE", "")
if SANITIZE_MODE not in ("", "0"):
    SANITIZE = [("-fsanitize=undefined" if SANITIZE_MODE == "fuzz-ubsan"
                 else "-fsanitize=address,undefined")
                + (",fuzzer-no-link" if SANITIZE_MODE.startswith("fuzz") else ""),
                "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
    # (line tables are what a sanitizer report needs, and compile faster than full -g)
    FLAGS = ["-O1", "-gline-tables-only" if SANITIZE_MODE.startswith("fuzz") else "-g",
             "-fno-strict-aliasing"] + SANITIZE
    LINK = SANITIZE


def ext(name):
    return Extension(f"cdcfast.{name}", [os.path.join(NATIVE, f"{name}.pyx")],
                     include_dirs=["native"], extra_compile_args=FLAGS,
                     extra_link_args=LINK,
                     depends=glob.glob(os.path.join(NATIVE, "*.pxd"))
                     + glob.glob(os.path.join(NATIVE, "*.h")))


# every kernel in native/cdcfast (the package cannot be imported here to ask its registry;
# tests/test_registry.py checks these are the formats' NATIVE and the shared test modules)
NAMES = sorted(os.path.basename(p)[:-len(".pyx")]
               for p in glob.glob(os.path.join(NATIVE, "*.pyx")))

setup(
    ext_modules=cythonize(
        [ext(name) for name in NAMES],
        include_path=["native"],
        compiler_directives={"language_level": 3},
    ),
)
