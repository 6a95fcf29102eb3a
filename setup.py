"""Builds the native Valkey module; the project's metadata is in pyproject.toml.

The module is a plain shared library that valkey-server loads with --loadmodule, not a
Python extension, so it gets a plain name (trafikey_lab/module/trafikey.so) where the lab
looks for it, in an installed package and in the source tree of an editable install alike.
"""

import os
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

COMPILER_HELP = """\
trafikey lab needs a C compiler to build its Valkey module (trafikey_lab/module/trafikey.c),
and none works here ({cause}). Install one, then install the lab again:
  Debian/Ubuntu: sudo apt-get install gcc
  macOS:         xcode-select --install
  conda:         conda install -c conda-forge c-compiler"""


def no_compiler(cause: BaseException) -> SystemExit:
    return SystemExit("error: " + COMPILER_HELP.format(cause=cause))


class BuildModule(build_ext):
    """build_ext for a server module: a plain file name, and one clear error without a compiler."""

    def get_ext_filename(self, fullname: str) -> str:
        return fullname.replace(".", os.sep) + ".so"

    def run(self) -> None:
        try:
            super().run()
        except PlatformError as exc:
            raise no_compiler(exc) from exc

    def build_extension(self, ext: Extension) -> None:
        # A compiler that cannot build an empty file is missing or broken; anything that
        # fails after this probe is a real error in the module and is reported as such.
        with tempfile.TemporaryDirectory() as scratch:
            probe = os.path.join(scratch, "probe.c")
            with open(probe, "w") as handle:
                handle.write("int trafikey_probe(void) { return 0; }\n")
            try:
                self.compiler.compile([probe], output_dir=scratch)
            except (CCompilerError, ExecError, OSError) as exc:
                raise no_compiler(exc) from exc
        super().build_extension(ext)


# TRAFIKEY_PURE_WHEEL=1 builds the library alone, without the module: the wheel the book's
# pages install into Pyodide, where no server runs and no C extension can load. Unset, the
# build is the usual one.
PURE = os.environ.get("TRAFIKEY_PURE_WHEEL") == "1"

setup(
    ext_modules=[] if PURE else [
        Extension(
            "trafikey_lab.module.trafikey",
            sources=["trafikey_lab/module/trafikey.c"],
            depends=["trafikey_lab/module/valkey_api.h"],
            extra_compile_args=["-Wall", "-Wextra", "-Werror", "-std=c11", "-O2"],
        )
    ],
    cmdclass={"build_ext": BuildModule},
)
