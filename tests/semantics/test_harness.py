"""The harness's comparison rules themselves (needs neither module)."""
import numpy as np
import pytest

from .harness import Mismatch, Raised, Tol, assert_same, ulp_distance


def test_ulp_distance():
    a = np.array([1.0, 0.0, -0.0, 1.0], np.float32)
    b = np.array([np.nextafter(np.float32(1), np.float32(2)), -0.0, 0.0,
                  np.float32(1.0)], np.float32)
    assert ulp_distance(a, b).tolist() == [1, 0, 0, 0]
    tiny = np.array([np.float32(1e-45)], np.float32)
    assert ulp_distance(tiny, -tiny).tolist() == [2]
    big = np.array([1.0], np.float64)
    assert ulp_distance(big, np.nextafter(big, 2)).tolist() == [1]


def test_assert_same_rules():
    i = np.array([1, 2, 3], np.int32)
    assert_same(i, i.copy())
    with pytest.raises(Mismatch):
        assert_same(i, i + np.array([0, 0, 1], np.int32))
    with pytest.raises(Mismatch):
        assert_same(i, i.astype(np.int64))  # dtype
    with pytest.raises(Mismatch):
        assert_same(i, i.reshape(3, 1))  # shape
    f = np.array([1.0, np.nan, np.inf], np.float32)
    assert_same(f, f.copy())
    with pytest.raises(Mismatch):
        assert_same(f, np.array([1.0, 1.0, np.inf], np.float32))  # NaN position
    g = np.array([np.nextafter(np.float32(1), np.float32(2)), np.nan, np.inf], np.float32)
    with pytest.raises(Mismatch):
        assert_same(f, g)  # 1 ULP with a 0 ULP bound
    assert_same(Tol(f, ulp=1), g)
    assert_same(Tol(f, rel=1e-6), g)
    with pytest.raises(Mismatch):
        assert_same(Tol(f, ulp=4), np.array([1.0, np.nan, -np.inf], np.float32))
    assert_same(Raised("HalideError", "a"), Raised("HalideError", "b"))
    with pytest.raises(Mismatch):
        assert_same(Raised("HalideError", "a"), Raised("TypeError", "a"))
    with pytest.raises(Mismatch):
        assert_same({"a": 1}, {"a": True})  # bool vs int
