"""Build of ndd: the Cython prepare phase, and the CUDA kernels compiled to PTX."""

import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))

CYTHON_MODULES = ["philox", "storage", "invocation", "args", "call", "elementwise"]
# Run-phase CPU kernels (nogil loops), one module per kernel family.
CPU_KERNEL_MODULES = sorted(
    os.path.splitext(name)[0]
    for name in os.listdir(os.path.join(HERE, "ndd", "_cpu"))
    if name.endswith(".pyx")
)
# The GPU runtime's compiled modules (ndd/_cuda/*.pyx), one concept per module.
CUDA_MODULES = sorted(
    os.path.splitext(name)[0]
    for name in os.listdir(os.path.join(HERE, "ndd", "_cuda"))
    if name.endswith(".pyx")
)
CPU_KERNEL_HEADERS = sorted(
    f"ndd/_cpu/{name}" for name in os.listdir(os.path.join(HERE, "ndd", "_cpu")) if name.endswith(".h")
)


class BuildPyWithKernels(build_py):
    """Also compile ``kernels/*.cu`` to PTX into ``ndd/_kernels`` (skipped without NVRTC)."""

    def run(self):
        sys.path.insert(0, os.path.join(HERE, "kernels"))
        try:
            import build as kernel_build
        finally:
            sys.path.pop(0)
        kernel_build.build_all(
            os.path.join(HERE, "ndd", "_kernels"), quiet=False, cache_dir=kernel_build.module_cache_dir()
        )
        super().run()


class BuildExtOnEveryCore(build_ext):
    """Compile the extension modules side by side, one per core, unless ``-j`` says otherwise:
    about 40 generated C files take minutes one at a time."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1


# Debug information makes the generated C files half as slow again to compile (a full build
# on two cores: 1 min 55 s with it, 1 min 16 s without), and no one ships it: it is built
# only when CFLAGS asks for it (CFLAGS=-g pip install ...).
DEBUG_INFO = any(flag.startswith("-g") and flag != "-g0" for flag in os.environ.get("CFLAGS", "").split())
# No contraction into fused multiply-adds unless the code asks (fmaf): a Python built with
# -march flags would otherwise change the CPU's sums, which the GPU kernels and the
# reference goldens match to the bit.
COMPILE_ARGS = ["-ffp-contract=off"] + ([] if DEBUG_INFO else ["-g0"])

extensions = (
    [
        Extension(
            f"ndd._prepare.{name}",
            [f"ndd/_prepare/{name}.pyx"],
            include_dirs=[numpy.get_include()],
            extra_compile_args=COMPILE_ARGS,
        )
        for name in CYTHON_MODULES
    ]
    + [
        Extension(
            f"ndd._cpu.{name}",
            [f"ndd/_cpu/{name}.pyx"],
            include_dirs=[numpy.get_include()],
            # host_pool installs a NumPy data allocator, an API of NumPy 1.22.
            define_macros=[("NPY_TARGET_VERSION", "NPY_1_22_API_VERSION")],
            extra_compile_args=["-O3", *COMPILE_ARGS],
            # C headers beside the kernels: editing one rebuilds every kernel module.
            depends=CPU_KERNEL_HEADERS,
        )
        for name in CPU_KERNEL_MODULES
    ]
    + [
        Extension(
            f"ndd._cuda.{name}",
            [f"ndd/_cuda/{name}.pyx"],
            extra_compile_args=["-O3", *COMPILE_ARGS],
        )
        for name in CUDA_MODULES
    ]
)

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "embedsignature": True},
        quiet=True,
        nthreads=os.cpu_count() or 1,
    ),
    cmdclass={"build_py": BuildPyWithKernels, "build_ext": BuildExtOnEveryCore},
)
