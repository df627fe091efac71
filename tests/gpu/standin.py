"""A small STAND-IN for CuPy, on NumPy, to test ringsim's CuPy plumbing on a machine without
a GPU. It is never a GPU and nothing it measures is a result.

It models what ringsim's CuPy code relies on, from CuPy's source: a current device and a
current stream per device; streams and events that belong to the device current when they
were made (using one on another device is refused, as CUDA does); arrays that live on the
device current when they were made; `copy()` that brings an array to the current device
(a non-contiguous one is first made contiguous on its own device's current stream, logged
as an unordered copy: cupy/_core/core.pyx ndarray.copy); element-wise work on an array of
another device refused (cupy/_core/_kernel.pyx checks peer access; ringsim never relies on
it); `add` that copies an input sharing memory with `out` unless it is the same object
(_kernel.pyx) and flushes float32 subnormals to zero as CuPy's `-ftz=true` does (cupy issue
8382); device pointers that are real NumPy addresses, bounds-checked before every
memcpyAsync / memcpyPeerAsync; peer access that must be enabled once per pair; RawKernel
launches of ringsim's two kernels carried out by the NumPy emulation (tests/gpu/emulation.py).
Work runs at once, in issue order: streams are not concurrent here, so races are checked by
the vector clocks of tests/gpu/test_placement.py, not by this stand-in.
"""

from __future__ import annotations

import ctypes
import time
import weakref
from types import SimpleNamespace

import numpy as np

from ringsim.execute.gpu import kernel

from .emulation import emulate, emulate_add

HEADERS_MISSING = ("Failed to find CUDA headers. Please install CUDA toolkit headers "
                   "(e.g., pip install cupy-cuda12x[ctk]) or specify CUDA_PATH environment variable.")


class StandinError(RuntimeError):
    """Something real CuPy or CUDA would refuse (or do wrongly)."""


class CUDARuntimeError(RuntimeError):
    """Like cupy_backends.cuda.api.runtime.CUDARuntimeError: carries CUDA's status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _flush(x: np.ndarray) -> np.ndarray:
    """float32 / complex64 subnormals to sign-preserving zero, as -ftz=true does."""
    if x.dtype == np.complex64:
        return _flush(x.real.copy()) + 1j * _flush(x.imag.copy())
    if x.dtype != np.float32:
        return x
    tiny = np.finfo(np.float32).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.float32(0), x), x).astype(np.float32)


class Cupy:
    """The stand-in module: `xp = Cupy(devices=2)` is used where ringsim takes `cupy`."""

    def __init__(self, devices: int = 1, *, peer: bool = True, free_bytes: int = 1 << 34,
                 compile_error: str | None = None) -> None:
        self.__name__ = "standin_cupy"  # not "cupy": nothing may take it for the real one
        self.count, self.can_peer, self.free_bytes = devices, peer, free_bytes
        self.compile_error = compile_error
        self.log: list[tuple] = []          # what happened that a test may ask about
        self.device_stack = [0]
        self.current_stream: dict[int, Stream] = {}
        self.allocations: list[tuple[int, int, int, weakref.ref]] = []
        self.peer_enabled: set[tuple[int, int]] = set()
        cupy = self

        class ndarray(np.ndarray):
            """A NumPy array that lives on a stand-in device."""

            def __array_finalize__(self, obj) -> None:
                if self.base is None or not isinstance(obj, ndarray):
                    self._device = cupy.device_stack[-1]  # new memory: the current device's
                    cupy._register(self)
                else:
                    self._device = getattr(obj, "_device", cupy.device_stack[-1])

            @property
            def device(self):
                return Device(cupy, self._device)

            @property
            def data(self):
                return MemoryPointer(cupy, self.ctypes.data, self._device)

            def get(self):
                return np.array(self.view(np.ndarray))

            def copy(self, order="C"):
                here = cupy.device_stack[-1]
                if self._device != here and not self.flags.c_contiguous:
                    cupy.log.append(("unordered-contiguous-copy", self._device, here))
                out = np.array(self.view(np.ndarray), order=order).view(ndarray)
                return out

            def __setitem__(self, key, value) -> None:
                cupy._on_current(self, value)
                super().__setitem__(key, np.asarray(value) if isinstance(value, ndarray) else value)

            def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
                cupy._on_current(*inputs, *(out or ()))
                args = [np.asarray(x) if isinstance(x, ndarray) else x for x in inputs]
                if ufunc is np.add and out is not None:
                    for i, x in enumerate(inputs):
                        if x is not out[0] and isinstance(x, np.ndarray) and np.shares_memory(x, out[0]):
                            cupy.log.append(("overlap-copy", "add"))
                            args[i] = np.array(args[i])
                if ufunc is np.add:
                    args = [_flush(x) if isinstance(x, np.ndarray) else x for x in args]
                result = getattr(ufunc, method)(*args, **kwargs)
                if ufunc is np.add:
                    result = _flush(np.asarray(result))
                if out is not None:
                    out[0].view(np.ndarray)[...] = result
                    return out[0]
                return np.asarray(result).view(ndarray) if isinstance(result, np.ndarray) else result

        self.ndarray = ndarray
        runtime = SimpleNamespace(
            CUDARuntimeError=CUDARuntimeError, memcpyDeviceToDevice=3,
            getDeviceCount=lambda: self.count, getDevice=lambda: self.device_stack[-1],
            deviceCanAccessPeer=self._can_access_peer, deviceEnablePeerAccess=self._enable_peer,
            memcpyAsync=self._memcpy_async, memcpyPeerAsync=self._memcpy_peer_async,
            memGetInfo=lambda: (self.free_bytes, self.free_bytes))
        self.cuda = SimpleNamespace(
            runtime=runtime, Device=lambda device=None: Device(self, device),
            Stream=lambda non_blocking=False: Stream(self, non_blocking),
            Event=lambda disable_timing=False, **_: Event(self, disable_timing),
            get_current_stream=lambda: self._stream_of(self.device_stack[-1]),
            get_elapsed_time=self._elapsed)
        self.random = SimpleNamespace(default_rng=self._rng)
        self.float16, self.float32, self.float64, self.int32, self.uint8 = (
            np.float16, np.float32, np.float64, np.int32, np.uint8)

    # --- devices, memory ------------------------------------------------------------------
    def _register(self, array) -> None:
        start = array.ctypes.data
        self.allocations.append((start, start + array.nbytes, array._device, weakref.ref(array)))
        if len(self.allocations) > 4096:
            self.allocations = [a for a in self.allocations if a[3]() is not None]

    def _owner(self, ptr: int, nbytes: int) -> int:
        """The device whose live allocation holds [ptr, ptr + nbytes), or StandinError."""
        for start, stop, device, ref in reversed(self.allocations):
            if ref() is not None and start <= ptr and ptr + nbytes <= stop:
                return device
        raise StandinError(f"{nbytes} bytes at {ptr:#x} are not inside one live device allocation")

    def _on_current(self, *arrays) -> None:
        here = self.device_stack[-1]
        for x in arrays:
            if isinstance(x, self.ndarray) and x._device != here:
                raise StandinError(f"an array of device {x._device} used on device {here} "
                                   "(CuPy refuses it without peer access; ringsim must switch devices)")

    def _stream_of(self, device: int):
        if device not in self.current_stream:
            self.current_stream[device] = Stream(self, False, device=device, null=True)
        return self.current_stream[device]

    def _can_access_peer(self, device: int, peer: int) -> int:
        return int(self.can_peer and device != peer)

    def _enable_peer(self, peer: int) -> None:
        pair = (self.device_stack[-1], peer)
        if pair in self.peer_enabled:
            raise CUDARuntimeError(704, "cudaErrorPeerAccessAlreadyEnabled")
        if not self._can_access_peer(*pair):
            raise CUDARuntimeError(217, "cudaErrorPeerAccessUnsupported")
        self.peer_enabled.add(pair)
        self.log.append(("enable-peer", *pair))

    def _check_stream(self, stream_ptr: int):
        stream = Stream.by_ptr.get(stream_ptr)
        if stream is None:
            raise StandinError(f"no stream {stream_ptr}")
        if stream.device != self.device_stack[-1]:
            raise StandinError(f"a copy on a stream of device {stream.device} issued on device "
                               f"{self.device_stack[-1]}")

    def _memcpy_async(self, dst: int, src: int, nbytes: int, kind: int, stream: int) -> None:
        self._check_stream(stream)
        if kind != 3 or self._owner(dst, nbytes) != self._owner(src, nbytes):
            raise StandinError("memcpyAsync device to device within one device only")
        ctypes.memmove(dst, src, nbytes)
        self.log.append(("memcpy", nbytes))

    def _memcpy_peer_async(self, dst: int, dst_dev: int, src: int, src_dev: int, nbytes: int,
                           stream: int) -> None:
        self._check_stream(stream)
        if (self._owner(dst, nbytes), self._owner(src, nbytes)) != (dst_dev, src_dev):
            raise StandinError("memcpyPeerAsync given the wrong devices for its pointers")
        ctypes.memmove(dst, src, nbytes)
        self.log.append(("memcpy-peer", src_dev, dst_dev, nbytes))

    def _elapsed(self, start, end) -> float:
        if start.disable_timing or end.disable_timing:
            raise StandinError("get_elapsed_time of an event made with disable_timing=True")
        return (end.time - start.time) * 1000.0

    def _rng(self, seed=None):
        rng = np.random.default_rng(seed)
        cupy = self

        class Generator:
            def standard_normal(self, shape, dtype=np.float64):
                return cupy.asarray(rng.standard_normal(shape, dtype=dtype))
        return Generator()

    # --- the functions of the module ringsim calls ----------------------------------------
    def asarray(self, x, dtype=None):
        if isinstance(x, self.ndarray) and (dtype is None or x.dtype == dtype):
            return x  # CuPy's asarray keeps an array on its own device
        return np.array(np.asarray(x), dtype=dtype).view(self.ndarray)

    def ascontiguousarray(self, x):
        if isinstance(x, self.ndarray) and x.flags.c_contiguous:
            return x
        self._on_current(x)
        return np.ascontiguousarray(np.asarray(x)).view(self.ndarray)

    def asnumpy(self, x):
        return x.get() if isinstance(x, self.ndarray) else np.asarray(x)

    def zeros(self, shape, dtype=float):
        return np.zeros(shape, dtype=dtype).view(self.ndarray)

    def empty(self, shape, dtype=float):
        return np.empty(shape, dtype=dtype).view(self.ndarray)

    def ones(self, shape, dtype=float):
        return np.ones(shape, dtype=dtype).view(self.ndarray)

    def empty_like(self, x):
        return np.empty(x.shape, dtype=x.dtype).view(self.ndarray)

    def add(self, a, b, out=None):
        return np.add(a, b, out=out)

    def roll(self, x, shift, axis=None):
        self._on_current(x)
        return np.roll(np.asarray(x), shift, axis=axis).view(self.ndarray)

    def abs(self, x):
        return np.abs(x)

    def all(self, x):
        return np.all(np.asarray(x))

    def RawKernel(self, code: str, name: str, options=()):  # noqa: N802 (CuPy's name)
        return RawKernel(self, code, name)


class Device:
    """cupy.cuda.Device: a context manager that makes `id` the current device."""

    def __init__(self, cupy: Cupy, device: int | None) -> None:
        self.cupy = cupy
        self.id = cupy.device_stack[-1] if device is None else int(device)
        if not 0 <= self.id < cupy.count:
            raise CUDARuntimeError(101, "cudaErrorInvalidDevice: invalid device ordinal")

    def __enter__(self):
        self.cupy.device_stack.append(self.id)
        return self

    def __exit__(self, *exc) -> None:
        self.cupy.device_stack.pop()

    def synchronize(self) -> None:
        self.cupy.log.append(("device-synchronize", self.id))


class Stream:
    """cupy.cuda.Stream of the device current when it was made."""

    by_ptr: dict[int, "Stream"] = {}
    _next = [1]

    def __init__(self, cupy: Cupy, non_blocking: bool, *, device: int | None = None,
                 null: bool = False) -> None:
        self.cupy, self.non_blocking = cupy, non_blocking
        self.device = cupy.device_stack[-1] if device is None else device
        self.ptr = 0 if null else Stream._next[0]
        Stream._next[0] += 1
        if not null:
            Stream.by_ptr[self.ptr] = self
        else:
            self.ptr = -1 - self.device  # a stand-in handle for the device's null stream
            Stream.by_ptr[self.ptr] = self
        self._previous: list = []

    def __enter__(self):
        here = self.cupy.device_stack[-1]
        if self.device != here:
            raise StandinError(f"a stream of device {self.device} made current on device {here}")
        self._previous.append(self.cupy.current_stream.get(here))
        self.cupy.current_stream[here] = self
        return self

    def __exit__(self, *exc) -> None:
        previous = self._previous.pop()
        if previous is None:
            del self.cupy.current_stream[self.device]
        else:
            self.cupy.current_stream[self.device] = previous

    def synchronize(self) -> None:
        self.cupy.log.append(("stream-synchronize", self.device, self.ptr))

    def wait_event(self, event: "Event") -> None:
        if not isinstance(event, Event):
            raise StandinError("wait_event takes an Event")


class Event:
    """cupy.cuda.Event of the device current when it was made."""

    def __init__(self, cupy: Cupy, disable_timing: bool) -> None:
        self.cupy, self.disable_timing = cupy, disable_timing
        self.device, self.time = cupy.device_stack[-1], None

    def record(self, stream: Stream | None = None) -> None:
        here = self.cupy.device_stack[-1]
        stream = stream or self.cupy._stream_of(here)
        if stream.device != self.device or here != self.device:
            raise StandinError(f"an event of device {self.device} recorded on a stream of device "
                               f"{stream.device} while device {here} is current")
        self.time = time.perf_counter()

    def synchronize(self) -> None:
        if self.time is None:
            raise StandinError("synchronize on an event never recorded")


class MemoryPointer:
    """cupy.cuda.MemoryPointer: a device address."""

    def __init__(self, cupy: Cupy, ptr: int, device_id: int) -> None:
        self.cupy, self.ptr, self.device_id = cupy, ptr, device_id

    def copy_from_device_async(self, src: "MemoryPointer", size: int, stream=None) -> None:
        self.cupy._owner(self.ptr, size), self.cupy._owner(src.ptr, size)
        ctypes.memmove(self.ptr, src.ptr, size)


class RawKernel:
    """cupy.RawKernel of ringsim's kernel source: compiles (or fails as configured) and runs
    ringsim_step / ringsim_add through the NumPy emulation."""

    def __init__(self, cupy: Cupy, code: str, name: str) -> None:
        self.cupy, self.code, self.name = cupy, code, name

    def compile(self) -> None:
        if self.cupy.compile_error:
            raise RuntimeError(self.cupy.compile_error)
        if f" {self.name}(" not in self.code:
            raise StandinError(f"no kernel {self.name} in the source")

    def __call__(self, grid, block, args) -> None:
        self.compile()
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        self.cupy._on_current(*arrays)
        self.cupy.log.append(("launch", self.name, *(id(a) for a in arrays)))
        plain = [a.view(np.ndarray) if isinstance(a, np.ndarray) else a for a in args]
        if self.name == kernel.KERNEL_NAME:
            emulate(grid, block, *plain)
        elif self.name == kernel.ADD_KERNEL_NAME:
            a, b, out, n = plain
            assert int(n) == out.size
            emulate_add(a, b, out)
        else:
            raise StandinError(f"the stand-in runs only ringsim's kernels, not {self.name}")
