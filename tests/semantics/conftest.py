"""pytest configuration for the differential suite (see harness.py)."""


def pytest_report_header(config):
    from . import harness  # noqa: WPS433

    mode = "SELFTEST (halide vs halide)" if harness.SELFTEST else \
        "%s vs %s" % (harness.REF_MODULE, harness.IMPL_MODULE)
    return "ferrohalide differential suite: " + mode
