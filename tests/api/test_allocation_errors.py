"""Requests for buffers too large to exist are HalideErrors, never a crash
or an abort. (Halide 21's Python bindings crash on these: its Buffer
allocates without checking. The messages follow the checks Halide's
compiled pipelines make on their output buffers and its Buffer's overflow
check; tests/semantics/test_allocation_errors.py compares the intermediate
allocation errors with the reference.)"""
import gc

import pytest

import ferrohalide as hl
from ferrohalide import _core

x, y = hl.Var("x"), hl.Var("y")


def u8_func():
    f = hl.Func("f")
    f[x, y] = hl.u8(x + y)
    return f


def test_realize_beyond_the_maximum_buffer_size():
    f = u8_func()
    with pytest.raises(hl.HalideError, match=r"Total allocation for buffer f(\$\d+)? is 4294967296, "
                       r"which exceeds the maximum size of 2147483647"):
        f.realize([2**16, 2**16])


def test_realize_whose_element_count_overflows():
    f = u8_func()
    with pytest.raises(hl.HalideError, match=r"is 4611686014132420609, which exceeds the maximum size"):
        f.realize([2**31 - 1, 2**31 - 1])


def test_realize_rounding_up_past_32_bits():
    # The split rounds the extent up past 2^31 - 1: the region the output
    # needs cannot be computed in 32 bits (halide: "extents ... negative").
    f = hl.Func("f")
    f[x] = hl.u8(x)
    f.split(x, hl.Var("xo"), hl.Var("xi"), 16, hl.TailStrategy.RoundUp)
    with pytest.raises(hl.HalideError, match=r"output buffer f(\$\d+)? required in dimension 0 overflows 32-bit"):
        f.realize([2**31 - 1])


def test_buffer_whose_stride_does_not_fit():
    with pytest.raises(hl.HalideError, match=r"stride of dimension 2 would be 4294967296"):
        hl.Buffer(hl.UInt(8), [2**16, 2**16, 2**16])


def test_buffer_too_large_to_allocate():
    # 2^48 bytes: more than any x86-64 address space.
    with pytest.raises(hl.HalideError, match=r"out of memory allocating 281474976710656 bytes"):
        hl.Buffer(hl.UInt(8), [2**24, 2**24])


def test_buffer_whose_byte_count_overflows():
    with pytest.raises(hl.HalideError):
        hl.Buffer(hl.Int(64), [2**31 - 1, 2**31 - 1, 4])


def test_nothing_is_left_behind_and_work_goes_on():
    gc.collect()
    before = dict(_core._live_objects())
    for _ in range(3):
        f = u8_func()
        with pytest.raises(hl.HalideError):
            f.realize([2**16, 2**16])
        with pytest.raises(hl.HalideError):
            hl.Buffer(hl.UInt(8), [2**24, 2**24])
        assert f.realize([4, 4])[3, 2] == 5
        del f
    gc.collect()
    assert dict(_core._live_objects()) == before
