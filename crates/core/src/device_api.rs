//! Device APIs (Halide's `DeviceAPI`): where a loop nest runs, and what each
//! target says about them. The answers follow Halide 21's `Target` methods
//! and `get_default_device_api_for_target`, so schedules that ask
//! "does this target have a GPU / support doubles there" decide as in Halide.
//!
//! ferrohalide has no GPU back end: only `None`, `Host` and `Hexagon` (on a
//! Hexagon target, or offloaded from ARM: `lower/inject_hexagon_rpc.rs`)
//! ever run code.

use crate::ir::Type;
use crate::target::{arch, feature, Feature, Target};

/// The name prefix of the loop that `schedule_functions` wraps around each
/// `hexagon()` loop nest to be offloaded (its single iteration marks the
/// nest; the simplifier keeps it, `inject_hexagon_rpc` replaces it). The
/// kernel is named after it, as Halide names its kernels.
pub const OFFLOAD_LOOP_PREFIX: &str = "offload_rpc.";

/// Is `name` the loop marking a nest offloaded to Hexagon?
pub fn is_offload_loop(name: &str) -> bool {
    name.starts_with(OFFLOAD_LOOP_PREFIX)
}

/// Halide's `DeviceAPI`, with Halide's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceApi {
    None,
    Host,
    DefaultGpu,
    Cuda,
    OpenCl,
    Metal,
    Hexagon,
    HexagonDma,
    D3d12Compute,
    Vulkan,
    WebGpu,
}

/// (variant, Python member name, Halide value), for the members Halide's
/// Python module exposes (it leaves out HexagonDma, D3D12Compute, WebGPU).
pub const PYTHON_MEMBERS: &[(DeviceApi, &str, u8)] = &[
    (DeviceApi::None, "None", 0),
    (DeviceApi::Host, "Host", 1),
    (DeviceApi::DefaultGpu, "Default_GPU", 2),
    (DeviceApi::Cuda, "CUDA", 3),
    (DeviceApi::Vulkan, "Vulkan", 9),
    (DeviceApi::OpenCl, "OpenCL", 4),
    (DeviceApi::Metal, "Metal", 5),
    (DeviceApi::Hexagon, "Hexagon", 6),
];

impl DeviceApi {
    /// Halide's integer value.
    pub fn value(self) -> u8 {
        match self {
            DeviceApi::None => 0,
            DeviceApi::Host => 1,
            DeviceApi::DefaultGpu => 2,
            DeviceApi::Cuda => 3,
            DeviceApi::OpenCl => 4,
            DeviceApi::Metal => 5,
            DeviceApi::Hexagon => 6,
            DeviceApi::HexagonDma => 7,
            DeviceApi::D3d12Compute => 8,
            DeviceApi::Vulkan => 9,
            DeviceApi::WebGpu => 10,
        }
    }

    pub fn from_value(v: i64) -> Option<DeviceApi> {
        use DeviceApi::*;
        [None, Host, DefaultGpu, Cuda, OpenCl, Metal, Hexagon, HexagonDma, D3d12Compute, Vulkan, WebGpu]
            .into_iter()
            .find(|d| d.value() as i64 == v)
    }

    /// As Halide prints it (`<Default_GPU>` in its messages and loop nests).
    pub fn display_name(self) -> &'static str {
        match self {
            DeviceApi::None => "",
            DeviceApi::Host => "Host",
            DeviceApi::DefaultGpu => "Default_GPU",
            DeviceApi::Cuda => "CUDA",
            DeviceApi::OpenCl => "OpenCL",
            DeviceApi::Metal => "Metal",
            DeviceApi::Hexagon => "Hexagon",
            DeviceApi::HexagonDma => "HexagonDma",
            DeviceApi::D3d12Compute => "D3D12Compute",
            DeviceApi::Vulkan => "Vulkan",
            DeviceApi::WebGpu => "WebGPU",
        }
    }

    /// The target feature that enables this device (Halide's
    /// `target_feature_for_device_api`); `None` for host-side APIs.
    pub fn target_feature(self) -> Option<Feature> {
        match self {
            DeviceApi::Cuda => Some(feature::CUDA),
            DeviceApi::OpenCl => Some(feature::OPENCL),
            DeviceApi::Metal => Some(feature::METAL),
            DeviceApi::Hexagon => Some(feature::HVX),
            DeviceApi::D3d12Compute => Some(feature::D3D12_COMPUTE),
            DeviceApi::Vulkan => Some(feature::VULKAN),
            DeviceApi::WebGpu => Some(feature::WEBGPU),
            _ => None,
        }
    }
}

/// The device `Default_GPU` means for `t` (Host when it names none).
pub fn default_device_api(t: &Target) -> DeviceApi {
    use feature::*;
    let order = [
        (METAL, DeviceApi::Metal),
        (OPENCL, DeviceApi::OpenCl),
        (CUDA, DeviceApi::Cuda),
    ];
    if let Some((_, d)) = order.iter().find(|(f, _)| t.has_feature(*f)) {
        return *d;
    }
    if t.arch != arch::HEXAGON && t.has_feature(HVX) {
        return DeviceApi::Hexagon;
    }
    let rest = [
        (HEXAGON_DMA, DeviceApi::HexagonDma),
        (D3D12_COMPUTE, DeviceApi::D3d12Compute),
        (VULKAN, DeviceApi::Vulkan),
        (WEBGPU, DeviceApi::WebGpu),
    ];
    rest.iter()
        .find(|(f, _)| t.has_feature(*f))
        .map_or(DeviceApi::Host, |(_, d)| *d)
}

/// The device a target's features require (`None` for a plain CPU target).
pub fn required_device_api(t: &Target) -> DeviceApi {
    use feature::*;
    [
        (CUDA, DeviceApi::Cuda),
        (D3D12_COMPUTE, DeviceApi::D3d12Compute),
        (HVX, DeviceApi::Hexagon),
        (HEXAGON_DMA, DeviceApi::HexagonDma),
        (METAL, DeviceApi::Metal),
        (OPENCL, DeviceApi::OpenCl),
        (VULKAN, DeviceApi::Vulkan),
        (WEBGPU, DeviceApi::WebGpu),
    ]
    .iter()
    .find(|(f, _)| t.has_feature(*f))
    .map_or(DeviceApi::None, |(_, d)| *d)
}

/// Whether `t` can run code scheduled on `api`.
pub fn supports_device_api(t: &Target, api: DeviceApi) -> bool {
    match api {
        DeviceApi::None | DeviceApi::Host => true,
        DeviceApi::DefaultGpu => t.has_gpu_feature(),
        DeviceApi::HexagonDma => t.has_feature(feature::HEXAGON_DMA),
        other => other.target_feature().is_some_and(|f| t.has_feature(f)),
    }
}

/// Whether values of type `ty` are usable anywhere on `t` (Halide's
/// one-argument `supports_type`: 64-bit types on the GPU APIs that lack them).
pub fn supports_type(t: &Target, ty: Type) -> bool {
    use feature::*;
    if ty.bits != 64 {
        return true;
    }
    let no_64 = t.has_feature(METAL) || t.has_feature(D3D12_COMPUTE) || t.has_feature(WEBGPU);
    if ty.is_float() {
        !no_64
            && (!t.has_feature(OPENCL) || t.has_feature(CL_DOUBLES))
            && (!t.has_feature(VULKAN) || t.has_feature(VULKAN_FLOAT64))
    } else {
        !no_64 && (!t.has_feature(VULKAN) || t.has_feature(VULKAN_INT64))
    }
}

/// Whether values of type `ty` are usable on device `api` of `t`.
pub fn supports_type_on(t: &Target, ty: Type, api: DeviceApi) -> bool {
    use feature::*;
    let api = if api == DeviceApi::DefaultGpu { default_device_api(t) } else { api };
    let (float, int) = (ty.is_float(), ty.is_int_or_uint());
    match api {
        DeviceApi::Hexagon if float || ty.bits == 64 => ty.lanes == 1,
        DeviceApi::Metal => ty.bits != 64,
        DeviceApi::OpenCl if float && ty.bits == 64 => t.has_feature(CL_DOUBLES),
        DeviceApi::D3d12Compute | DeviceApi::WebGpu => ty.bits < 64,
        DeviceApi::Vulkan => match (float, int, ty.bits) {
            (true, _, 64) => t.has_feature(VULKAN_FLOAT64),
            (true, _, 16) => t.has_feature(VULKAN_FLOAT16),
            (_, true, 64) => t.has_feature(VULKAN_INT64),
            (_, true, 16) => t.has_feature(VULKAN_INT16),
            (_, true, 8) => t.has_feature(VULKAN_INT8),
            _ => true,
        },
        _ => true,
    }
}

/// Whether this machine can run code for `t`'s device: true for targets
/// that need none; false otherwise, since ferrohalide has no device runtime.
/// Metal off macOS is Halide's error (its JIT refuses to build Metal there).
pub fn host_supports_target_device(t: &Target) -> crate::Result<bool> {
    match required_device_api(t) {
        DeviceApi::None => Ok(true),
        DeviceApi::Metal if Target::host().os != crate::target::os::OSX => Err(
            crate::error::Error::user("JIT support for Metal only implemented on OS X\n"),
        ),
        _ => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(s: &str) -> Target {
        Target::parse(s).unwrap()
    }

    #[test]
    fn device_support_follows_features() {
        let cuda = target("x86-64-linux-cuda");
        let plain = target("x86-64-linux");
        assert!(supports_device_api(&cuda, DeviceApi::Cuda));
        assert!(!supports_device_api(&plain, DeviceApi::Cuda));
        assert!(supports_device_api(&plain, DeviceApi::Host));
        assert!(!host_supports_target_device(&cuda).unwrap());
        assert!(host_supports_target_device(&plain).unwrap());
    }

    #[test]
    fn doubles_on_metal() {
        let metal = target("x86-64-osx-metal");
        let plain = target("x86-64-osx");
        assert!(!supports_type(&metal, Type::float(64)));
        assert!(supports_type(&plain, Type::float(64)));
        assert!(!supports_type_on(&plain, Type::float(64), DeviceApi::Metal));
        assert!(supports_type_on(&plain, Type::float(64), DeviceApi::Host));
    }
}
