# One-command set-up: every target creates or reuses .venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ndd-installed
SOURCES := pyproject.toml setup.py $(wildcard ndd/_prepare/*.pyx ndd/_prepare/*.pxd ndd/_cpu/*.pyx ndd/_cpu/*.h ndd/_cuda/*.pyx kernels/*.cu kernels/*.cuh kernels/build.py)
REFERENCE_PY ?= $(HOME)/dali-ref/bin/python

.PHONY: demo test test-cuda12 test-newest-python test-oldest-python test-oldest-libraries test-sanitized test-portable test-aarch64 bench bench-readers bench-cpu-pipeline bench-ops bench-gpu kernels lint docs clean

$(STAMP): $(SOURCES)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The gpu extra (cuda-python, NVRTC) installs without a GPU; the tests use it to
	# compile every kernel to PTX. torch 2.13.0 is the CPU build this machine image ships.
	$(PY) -m pip install -q -e '.[test,gpu]' 'torch==2.13.0'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m ndd.demo

# The kernels first: the GPU runtime tests load them through the fake driver. The tests
# run in one worker process per core (pytest-xdist); kernel builds are shared through
# ndd's on-disk kernel cache, which `make kernels` has just filled.
test: kernels
	$(PY) -m pytest -q -n auto

# The GPU runtime's tests once more with cuda-python 12.x (.venv has the newest, 13.x),
# in a side virtualenv that uses the ndd built in place here.
test-cuda12: $(STAMP)
	test -x .venv-cu12/bin/python || $(PYTHON) -m venv .venv-cu12
	.venv-cu12/bin/python -m pip install -q 'cuda-python>=12.6,<13' nvidia-cuda-nvrtc-cu12 numpy pillow simplejpeg lz4 isal pytest pytest-timeout pytest-xdist
	PYTHONPATH=$(CURDIR) .venv-cu12/bin/python -m pytest -q -n auto -p no:cacheprovider tests/cuda

# The tests once more on other Pythons (pyenv's here), each in a side virtualenv made
# afresh by CI with the newest releases pip finds there of the libraries ndd uses
# (.ci/other_python): the newest Python, where a new release that changes what ndd calls
# fails first (PyAV 19 did), and the oldest ndd supports, 3.10 (PyAV 17 there). Set
# NEWEST_PYTHON or OLDEST_PYTHON to choose others; without one the target says so.
NEWEST_PYTHON ?= $(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python)))
OLDEST_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.10*/bin/python))
test-newest-python: kernels
	@if [ -z "$(NEWEST_PYTHON)" ]; then echo "$@: no Python 3.12 or later here (set NEWEST_PYTHON): skipped"; \
	else .ci/other_python $(NEWEST_PYTHON) .venv-newest; fi

test-oldest-python: kernels
	@if [ -z "$(OLDEST_PYTHON)" ]; then echo "$@: no Python 3.10 here (set OLDEST_PYTHON): skipped"; \
	else .ci/other_python $(OLDEST_PYTHON) .venv-oldest; fi

# The tests with the oldest releases of the runtime dependencies that pyproject.toml
# admits (numpy 1.26, Pillow 10, simplejpeg 1.7, lz4 4.0, isal 1.7), in .venv-oldest-libs.
test-oldest-libraries: kernels
	.ci/oldest_libraries

# The tests on a copy of ndd built with Cython's bounds checks and AddressSanitizer
# (in build/sanitized): an index out of range or a use of freed memory fails them.
test-sanitized: kernels
	.ci/sanitized

# The code other processors than x86-64 run (ARM: NVIDIA Grace, Apple silicon): the
# tests on a copy built without the x86 vector code (in build/portable), and every
# compiled module's C compiled for aarch64 by a cross compiler (.ci/portable).
test-portable: kernels
	.ci/portable

# The tests on aarch64 emulated by qemu (.ci/aarch64; needs root; not part of CI).
test-aarch64: $(STAMP)
	.ci/aarch64

# Compile every CUDA kernel to PTX with NVRTC (no GPU needed); fails on a compile error.
kernels: $(STAMP)
	$(PY) kernels/build.py ndd/_kernels

# Benchmarks against the reference, installed in its own virtualenv (never in .venv):
#   python3 -m venv ~/dali-ref && ~/dali-ref/bin/pip install nvidia-dali-cuda120==2.4.0 pillow
bench: $(STAMP)
	$(PY) bench/dispatch.py --reference-python $(REFERENCE_PY)

# Samples per second of readers.File and readers.Numpy against the reference.
bench-readers: $(STAMP)
	$(PY) bench/readers.py --reference-python $(REFERENCE_PY)

# Images per second of the training, validation and decode pipelines against the
# reference and torchvision (ImageFolder + transforms.v2 + DataLoader).
# torch stays the CPU build that .venv has: a newer torchvision would bring a CUDA 13
# torch and its NVRTC 13, which cannot build the sm_70 kernels.
bench-cpu-pipeline: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]' 'torch==2.13.0'
	$(PY) bench/cpu_pipeline.py --reference-python $(REFERENCE_PY)

# CPU milliseconds per image of each image operator (1 thread, sync_cpu) against the reference.
bench-ops: $(STAMP)
	$(PY) bench/ops.py --reference-python $(REFERENCE_PY)

# GPU operators (needs a GPU): bandwidth as a fraction of the device's copy bandwidth,
# and per-call dispatch cost against the reference's dynamic mode.
bench-gpu: $(STAMP)
	$(PY) bench/gpu_ops.py --reference-python $(REFERENCE_PY)

# The documentation site into docs/_build/html: the API reference generated from the operator
# schemas, the migration guide and the tutorial notebooks, all executed; a warning fails it.
# The docs extra is installed from pyproject.toml without reinstalling (rebuilding) ndd.
docs: $(STAMP)
	$(PY) -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs'], sep='\n')" | xargs $(PY) -m pip install -q
	$(PY) -m sphinx -W --keep-going -b html docs docs/_build/html

lint: $(STAMP)
	$(PY) -m pip install -q ruff cython-lint pycodestyle
	$(PY) -m ruff check ndd tests bench kernels examples
	$(PY) -m ruff format --check ndd tests bench kernels examples
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/cython-lint ndd/_prepare ndd/_cpu ndd/_cuda

clean:
	rm -rf $(VENV) .venv-cu12 .venv-newest .venv-oldest build *.egg-info ndd/_prepare/*.c ndd/_prepare/*.so ndd/_cpu/*.c ndd/_cpu/*.so ndd/_cuda/*.c ndd/_cuda/*.so ndd/_kernels
