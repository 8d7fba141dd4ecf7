"""Kernels built for the CPU (ndd/_cuda/host_kernels.py): the GPU's execution model
(grid, blocks, barriers, shared memory, warp shuffles) on the host, checked with small
kernel files written here against numpy."""

import json

import numpy as np
import pytest

import ndd

pytest.importorskip("cuda.bindings")

from ndd._cuda.host_kernels import HostKernels, compiler  # noqa: E402

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C++ compiler")

SOURCE = r"""
extern "C" __global__ void block_sum(const float* in, float* out, unsigned long long n) {
  __shared__ float partial[256];
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
extern "C" __global__ void warp_sums(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  if (threadIdx.x % 32 == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}
extern "C" __global__ void reverse_blocks(const int* in, int* out) {
  NDD_DYNAMIC_SHARED(int, tile);
  tile[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
extern "C" __global__ void histogram(const unsigned char* in, unsigned int* bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[in[i]], 1u);
}
"""
INDEX_SOURCE = r"""
extern "C" __global__ void coordinates(int* out, float scale) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  int w = gridDim.x * blockDim.x, h = gridDim.y * blockDim.y;
  out[(z * h + y) * w + x] = (int)(scale * (100 * z + 10 * y + x));
}
"""
PARAMS = {
    "block_sum": ["ptr", "ptr", "u64"],
    "warp_sums": ["ptr", "ptr"],
    "reverse_blocks": ["ptr", "ptr"],
    "histogram": ["ptr", "ptr", "i32"],
    "coordinates": ["ptr", "f32"],
}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    folder = tmp_path_factory.mktemp("host_kernels")
    (folder / "barriers.cu").write_text(SOURCE)
    (folder / "indices.cu").write_text(INDEX_SOURCE)
    modules = {
        "barriers": ["block_sum", "warp_sums", "reverse_blocks", "histogram"],
        "indices": ["coordinates"],
    }
    manifest = {
        "modules": {
            module: {"source": f"{module}.cu", "kernels": {k: {"params": PARAMS[k]} for k in names}}
            for module, names in modules.items()
        }
    }
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return HostKernels(folder)


def _ptr(array):
    return array.ctypes.data.to_bytes(8, "little")


def test_barriers_let_a_block_reduce_through_shared_memory(kernels):
    values = np.random.default_rng(0).integers(0, 100, 700).astype(np.float32)
    sums = np.zeros(3, np.float32)
    kernels.launch(
        "block_sum", (3, 1, 1), (256, 1, 1), 0, [_ptr(values), _ptr(sums), (700).to_bytes(8, "little")]
    )
    np.testing.assert_array_equal(sums, [values[:256].sum(), values[256:512].sum(), values[512:].sum()])


def test_warp_shuffles_stay_within_their_warp(kernels):
    values = np.arange(256, dtype=np.int32) ** 2 % 1000
    sums = np.zeros(8, np.int32)
    kernels.launch("warp_sums", (2, 1, 1), (128, 1, 1), 0, [_ptr(values), _ptr(sums)])
    np.testing.assert_array_equal(sums, values.reshape(8, 32).sum(axis=1))


def test_dynamic_shared_memory_is_shared_by_the_block(kernels):
    values = np.arange(192, dtype=np.int32)
    out = np.zeros_like(values)
    kernels.launch("reverse_blocks", (3, 1, 1), (64, 1, 1), 64 * 4, [_ptr(values), _ptr(out)])
    np.testing.assert_array_equal(out, values.reshape(3, 64)[:, ::-1].ravel())


def test_atomics_count_every_thread(kernels):
    values = np.random.default_rng(1).integers(0, 8, 1000).astype(np.uint8)
    bins = np.zeros(256, np.uint32)
    kernels.launch(
        "histogram", (4, 1, 1), (256, 1, 1), 0, [_ptr(values), _ptr(bins), (1000).to_bytes(4, "little")]
    )
    np.testing.assert_array_equal(bins, np.bincount(values, minlength=256))


def test_three_dimensional_grids_and_blocks_cover_every_thread_once(kernels):
    out = np.full((4, 6, 10), -1, np.int32)
    scale = np.float32(2.0).tobytes()
    kernels.launch("coordinates", (2, 3, 2), (5, 2, 2), 0, [_ptr(out), scale])
    z, y, x = np.indices(out.shape)
    np.testing.assert_array_equal(out, 2 * (100 * z + 10 * y + x))


def test_the_declared_parameter_kinds_are_read_from_the_manifest(kernels):
    assert kernels.params("block_sum") == ["ptr", "ptr", "u64"]


def test_a_misaligned_access_fails_the_launch_as_on_a_gpu(kernels):
    """A GPU stops a kernel that reads a float at an address that is not a multiple of 4;
    the host build checks every typed access for the same."""
    values = np.zeros(64, np.float32)
    sums = np.zeros(1, np.float32)
    aligned = values.ctypes.data
    kernels.launch(
        "block_sum", (1, 1, 1), (32, 1, 1), 0, [_ptr(values), _ptr(sums), (32).to_bytes(8, "little")]
    )
    odd = (aligned + 2).to_bytes(8, "little")
    with pytest.raises(
        RuntimeError, match=r"block_sum made a misaligned access: .* multiple of 4 \(line 5 of barriers"
    ):
        kernels.launch("block_sum", (1, 1, 1), (32, 1, 1), 0, [odd, _ptr(sums), (32).to_bytes(8, "little")])
    # the next launch starts clean
    kernels.launch(
        "block_sum", (1, 1, 1), (32, 1, 1), 0, [_ptr(values), _ptr(sums), (32).to_bytes(8, "little")]
    )


def test_a_kernel_writing_past_its_allocation_fails_the_launch(host_kernels, monkeypatch):
    """On a GPU, writing past an allocation is an illegal address or silently overwrites
    another buffer; the FakeDriver runs host kernels between guard bytes and fails the launch."""
    from gpu_testing import install_fake

    from ndd._cuda import kernel_files, launch, modules
    from ndd._cuda.device_array import DeviceArray
    from ndd._cuda.fake import FakeDriver

    monkeypatch.setattr(kernel_files, "KERNELS_DIR", host_kernels.kernels_dir)
    for _ in install_fake(FakeDriver(devices=1, host_kernels=host_kernels)):
        stream = ndd.get_current_stream()
        array = DeviceArray.from_host(np.zeros(10, np.uint32), 0, stream.handle)
        fill = modules.get_function(0, "indexing", "fill_u32")
        value = (7).to_bytes(8, "little")
        fill.launch(
            launch.grid_for(10, 256), 256, stream.handle, array.ptr, int.from_bytes(value, "little"), 10
        )
        np.testing.assert_array_equal(array.to_host(), np.full(10, 7, np.uint32))
        with pytest.raises(RuntimeError, match=r"fill_u32 wrote outside the allocation of 40 bytes"):
            fill.launch(launch.grid_for(11, 256), 256, stream.handle, array.ptr, 9, 11)
