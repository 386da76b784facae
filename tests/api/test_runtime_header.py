"""The installed HalideRuntime.h: where Halide's wheel has it, and binary
compatible with Halide's (the same C program, compiled against each,
prints the same sizes, offsets and enum values)."""
import os
import shutil
import subprocess

import pytest

import ferrohalide as hl

# Each line prints one fact of the ABI.
FACTS = [
    "sizeof(struct halide_type_t)",
    "sizeof(halide_dimension_t)",
    "sizeof(halide_buffer_t)",
    "offsetof(halide_buffer_t, host)",
    "offsetof(halide_buffer_t, flags)",
    "offsetof(halide_buffer_t, type)",
    "offsetof(halide_buffer_t, dimensions)",
    "offsetof(halide_buffer_t, dim)",
    "offsetof(halide_buffer_t, padding)",
    "sizeof(struct halide_scalar_value_t)",
    "sizeof(struct halide_filter_argument_t)",
    "offsetof(struct halide_filter_argument_t, type)",
    "offsetof(struct halide_filter_argument_t, buffer_estimates)",
    "sizeof(struct halide_filter_metadata_t)",
    "offsetof(struct halide_filter_metadata_t, name)",
    "sizeof(struct halide_mutex)",
    "halide_type_int", "halide_type_uint", "halide_type_float", "halide_type_handle",
    "halide_type_bfloat", "halide_buffer_flag_host_dirty", "halide_buffer_flag_device_dirty",
    "halide_argument_kind_input_scalar", "halide_argument_kind_input_buffer",
    "halide_argument_kind_output_buffer",
] + [f"halide_error_code_{n}" for n in (
    "success generic_error explicit_bounds_too_small bad_type access_out_of_bounds "
    "buffer_allocation_too_large buffer_extents_too_large "
    "constraints_make_required_region_smaller constraint_violated param_too_small "
    "param_too_large out_of_memory buffer_argument_is_null debug_to_file_failed "
    "copy_to_host_failed copy_to_device_failed device_malloc_failed device_sync_failed "
    "device_free_failed no_device_interface unimplemented symbol_not_found internal_error "
    "device_run_failed unaligned_host_ptr bad_fold fold_factor_too_small requirement_failed "
    "buffer_extents_negative gpu_device_error trace_failed specialize_fail "
    "device_wrap_native_failed device_detach_native_failed host_is_null bad_extern_fold "
    "device_interface_no_device host_and_device_dirty buffer_is_null "
    "device_buffer_copy_failed device_crop_unsupported device_crop_failed "
    "incompatible_device_interface bad_dimensions device_dirty_with_no_device_support "
    "storage_bound_too_small split_factor_not_positive vscale_invalid "
    "cannot_profile_pipeline").split()] + [f"halide_target_feature_{n}" for n in (
    "jit sse41 avx avx2 avxvnni fma f16c user_context no_runtime avx512 avx512_knl "
    "avx512_skylake avx512_cannonlake avx512_zen4 avx512_zen5 avx512_sapphirerapids "
    "enable_llvm_loop_opt wasm_mvponly arm_fp16 rvv vulkan_version13 x86_apx simulator end"
).split()] + ["halide_llvm_large_code_model"]


def header_dir(module):
    return os.path.join(module.install_dir(), "include")


def test_the_header_is_installed_where_halides_wheel_has_it():
    halide = pytest.importorskip("halide")
    assert os.path.isfile(os.path.join(header_dir(halide), "HalideRuntime.h"))
    assert os.path.isfile(os.path.join(header_dir(hl), "HalideRuntime.h"))


def abi_facts(include, tmp_path):
    src = tmp_path / "facts.c"
    exe = tmp_path / f"facts_{abs(hash(include))}"
    lines = "".join(f'    printf("%s=%lld\\n", "{f}", (long long)({f}));\n' for f in FACTS)
    src.write_text(
        "#include <stddef.h>\n#include <stdio.h>\n#include \"HalideRuntime.h\"\n"
        f"int main(void) {{\n{lines}    return 0;\n}}\n"
    )
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-I", include, str(src), "-o", str(exe)],
                   check=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")
def test_the_header_is_binary_compatible_with_halides(tmp_path):
    halide = pytest.importorskip("halide")
    ours = abi_facts(header_dir(hl), tmp_path)
    theirs = abi_facts(header_dir(halide), tmp_path)
    assert ours == theirs
