"""Build of ndd: the Cython prepare phase, and the CUDA kernels compiled to PTX."""

import os
import sys
import tempfile

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))

CYTHON_MODULES = ["philox", "storage", "invocation", "args", "call", "elementwise"]
# The cropping JPEG decoder links libjpeg-turbo, and is built only where its headers are
# found (the image decoders decode whole images without it).
JPEG_REGION = "jpeg_region"
# Run-phase CPU kernels (nogil loops), one module per kernel family.
CPU_KERNEL_MODULES = sorted(
    os.path.splitext(name)[0]
    for name in os.listdir(os.path.join(HERE, "ndd", "_cpu"))
    if name.endswith(".pyx") and not name.startswith(JPEG_REGION)
)
# The GPU runtime's compiled modules (ndd/_cuda/*.pyx), one concept per module.
CUDA_MODULES = sorted(
    os.path.splitext(name)[0]
    for name in os.listdir(os.path.join(HERE, "ndd", "_cuda"))
    if name.endswith(".pyx")
)
CPU_KERNEL_HEADERS = sorted(
    f"ndd/_cpu/{name}"
    for name in os.listdir(os.path.join(HERE, "ndd", "_cpu"))
    if name.endswith(".h") and not name.startswith(JPEG_REGION)
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


def _links_libjpeg_turbo(compiler):
    """Whether a program calling libjpeg-turbo's cropping API compiles and links here."""
    program = (
        "#include <stdio.h>\n#include <jpeglib.h>\n"
        "int main(void) { void (*crop)(j_decompress_ptr, JDIMENSION *, JDIMENSION *) = jpeg_crop_scanline;"
        " return crop == NULL; }\n"
    )
    with tempfile.TemporaryDirectory() as scratch:
        source = os.path.join(scratch, "probe.c")
        with open(source, "w") as f:
            f.write(program)
        try:
            objects = compiler.compile([source], output_dir=scratch)
            compiler.link_executable(objects, "probe", output_dir=scratch, libraries=["jpeg"])
        except Exception:
            return False
    return True


class BuildExtOnEveryCore(build_ext):
    """Compile the extension modules side by side, one per core, unless ``-j`` says otherwise:
    about 40 generated C files take minutes one at a time. The cropping JPEG decoder is left
    out, with a note, where libjpeg-turbo's headers or library are missing."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        name = f"ndd._cpu.{JPEG_REGION}"
        if any(ext.name == name for ext in self.extensions) and not _links_libjpeg_turbo(self.compiler):
            print(f"note: {name} not built (no libjpeg-turbo headers): cropping decoders decode whole JPEGs")
            self.extensions = [ext for ext in self.extensions if ext.name != name]
        super().build_extensions()


# Debug information makes the generated C files half as slow again to compile (a full build
# on two cores: 1 min 55 s with it, 1 min 16 s without), and no one ships it: it is built
# only when CFLAGS asks for it (CFLAGS=-g pip install ...).
DEBUG_INFO = any(flag.startswith("-g") and flag != "-g0" for flag in os.environ.get("CFLAGS", "").split())
# No contraction into fused multiply-adds unless the code asks (fmaf): a Python built with
# -march flags would otherwise change the CPU's sums, which the GPU kernels and the
# reference goldens match to the bit.
COMPILE_ARGS = ["-ffp-contract=off"] + ([] if DEBUG_INFO else ["-g0"])
# Cython writes its C files under build/, one folder per Python and NumPy: a C file made
# for another interpreter's NumPy headers does not compile with this one's, and the
# side-Python test steps build in the same tree.
CYTHON_BUILD_DIR = os.path.join("build", "cython", f"{sys.implementation.cache_tag}-numpy{numpy.__version__}")

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
            include_dirs=[numpy.get_include(), "ndd/_cpu"],
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
            f"ndd._cpu.{JPEG_REGION}",
            [f"ndd/_cpu/{JPEG_REGION}.pyx"],
            include_dirs=[numpy.get_include(), "ndd/_cpu"],
            libraries=["jpeg"],
            extra_compile_args=["-O3", *COMPILE_ARGS],
            depends=[f"ndd/_cpu/{JPEG_REGION}.h"],
        )
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
        build_dir=CYTHON_BUILD_DIR,
        nthreads=os.cpu_count() or 1,
    ),
    cmdclass={"build_py": BuildPyWithKernels, "build_ext": BuildExtOnEveryCore},
)
