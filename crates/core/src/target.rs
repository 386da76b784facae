//! Compilation targets: Halide's target strings
//! (`arch-bits-os[-tune_<cpu>][-feature...]`), parsing, printing (features
//! sorted by name), feature queries and natural vector sizes. The JIT maps
//! a Target onto LLVM CPU features (crates/codegen-llvm/src/target.rs);
//! lowering reads the features that change the generated statement
//! (`no_asserts`).
//!
//! The enum values are Halide's, so the Python enums convert to the same
//! integers as the reference's.

use crate::error::{Error, Result};
use crate::ir::Type;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Os(pub u8);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arch(pub u8);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tune(pub u8);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Feature(pub u8);

/// (Python enum name, value, spelling in target strings).
pub const OSES: &[(&str, u8, &str)] = &[
    ("OSUnknown", 0, "os_unknown"),
    ("Linux", 1, "linux"),
    ("Windows", 2, "windows"),
    ("OSX", 3, "osx"),
    ("Android", 4, "android"),
    ("IOS", 5, "ios"),
    ("QuRT", 6, "qurt"),
    ("NoOS", 7, "noos"),
    ("Fuchsia", 8, "fuchsia"),
    ("wasmrt", 9, "wasmrt"),
];

pub const ARCHES: &[(&str, u8, &str)] = &[
    ("ArchUnknown", 0, "arch_unknown"),
    ("X86", 1, "x86"),
    ("ARM", 2, "arm"),
    ("Hexagon", 3, "hexagon"),
    ("POWERPC", 4, "powerpc"),
    ("WebAssembly", 5, "wasm"),
    ("RISCV", 6, "riscv"),
];

pub const TUNES: &[(&str, u8, &str)] = &[
    ("TuneGeneric", 0, "tune_generic"),
    ("TuneK8", 1, "tune_k8"),
    ("TuneK8_SSE3", 2, "tune_k8_sse3"),
    ("TuneAMDFam10", 3, "tune_amdfam10"),
    ("TuneBtVer1", 4, "tune_btver1"),
    ("TuneBdVer1", 5, "tune_bdver1"),
    ("TuneBdVer2", 6, "tune_bdver2"),
    ("TuneBdVer3", 7, "tune_bdver3"),
    ("TuneBdVer4", 8, "tune_bdver4"),
    ("TuneBtVer2", 9, "tune_btver2"),
    ("TuneZnVer1", 10, "tune_znver1"),
    ("TuneZnVer2", 11, "tune_znver2"),
    ("TuneZnVer3", 12, "tune_znver3"),
    ("TuneZnVer4", 13, "tune_znver4"),
    ("TuneZnVer5", 14, "tune_znver5"),
];

pub const FEATURES: &[(&str, u8, &str)] = &[
    ("JIT", 0, "jit"),
    ("Debug", 1, "debug"),
    ("EnableBacktraces", 2, "enable_backtraces"),
    ("NoAsserts", 3, "no_asserts"),
    ("NoBoundsQuery", 4, "no_bounds_query"),
    ("SSE41", 5, "sse41"),
    ("AVX", 6, "avx"),
    ("AVX2", 7, "avx2"),
    ("AVXVNNI", 8, "avxvnni"),
    ("FMA", 9, "fma"),
    ("FMA4", 10, "fma4"),
    ("F16C", 11, "f16c"),
    ("ARMv7s", 12, "armv7s"),
    ("NoNEON", 13, "no_neon"),
    ("VSX", 14, "vsx"),
    ("POWER_ARCH_2_07", 15, "power_arch_2_07"),
    ("CUDA", 16, "cuda"),
    ("CUDACapability30", 17, "cuda_capability_30"),
    ("CUDACapability32", 18, "cuda_capability_32"),
    ("CUDACapability35", 19, "cuda_capability_35"),
    ("CUDACapability50", 20, "cuda_capability_50"),
    ("CUDACapability61", 21, "cuda_capability_61"),
    ("CUDACapability70", 22, "cuda_capability_70"),
    ("CUDACapability75", 23, "cuda_capability_75"),
    ("CUDACapability80", 24, "cuda_capability_80"),
    ("CUDACapability86", 25, "cuda_capability_86"),
    ("OpenCL", 26, "opencl"),
    ("CLDoubles", 27, "cl_doubles"),
    ("CLAtomics64", 28, "cl_atomics64"),
    ("UserContext", 29, "user_context"),
    ("Profile", 30, "profile"),
    ("NoRuntime", 31, "no_runtime"),
    ("Metal", 32, "metal"),
    ("CPlusPlusMangling", 33, "c_plus_plus_name_mangling"),
    ("LargeBuffers", 34, "large_buffers"),
    ("HVX_128", 35, "hvx_128"),
    ("HVX_v62", 36, "hvx_v62"),
    ("FuzzFloatStores", 37, "fuzz_float_stores"),
    ("SoftFloatABI", 38, "soft_float_abi"),
    ("MSAN", 39, "msan"),
    ("AVX512", 40, "avx512"),
    ("AVX512_KNL", 41, "avx512_knl"),
    ("AVX512_Skylake", 42, "avx512_skylake"),
    ("AVX512_Cannonlake", 43, "avx512_cannonlake"),
    ("AVX512_Zen4", 44, "avx512_zen4"),
    ("AVX512_Zen5", 45, "avx512_zen5"),
    ("AVX512_SapphireRapids", 46, "avx512_sapphirerapids"),
    ("TraceLoads", 47, "trace_loads"),
    ("TraceStores", 48, "trace_stores"),
    ("TraceRealizations", 49, "trace_realizations"),
    ("TracePipeline", 50, "trace_pipeline"),
    ("HVX_v65", 51, "hvx_v65"),
    ("HVX_v66", 52, "hvx_v66"),
    ("HVX_v68", 53, "hvx_v68"),
    ("CLHalf", 54, "cl_half"),
    ("StrictFloat", 55, "strict_float"),
    ("TSAN", 56, "tsan"),
    ("ASAN", 57, "asan"),
    ("D3D12Compute", 58, "d3d12compute"),
    ("CheckUnsafePromises", 59, "check_unsafe_promises"),
    ("HexagonDma", 60, "hexagon_dma"),
    ("EmbedBitcode", 61, "embed_bitcode"),
    ("EnableLLVMLoopOpt", 62, "enable_llvm_loop_opt"),
    ("WasmMvpOnly", 63, "wasm_mvponly"),
    ("WasmSimd128", 64, "wasm_simd128"),
    ("WasmThreads", 65, "wasm_threads"),
    ("WasmBulkMemory", 66, "wasm_bulk_memory"),
    ("WebGPU", 67, "webgpu"),
    ("SVE", 68, "sve"),
    ("SVE2", 69, "sve2"),
    ("EGL", 70, "egl"),
    ("ARMDotProd", 71, "arm_dot_prod"),
    ("ARMFp16", 72, "arm_fp16"),
    ("LLVMLargeCodeModel", 73, "llvm_large_code_model"),
    ("RVV", 74, "rvv"),
    ("ARMv8a", 75, "armv8a"),
    ("ARMv81a", 76, "armv81a"),
    ("ARMv82a", 77, "armv82a"),
    ("ARMv83a", 78, "armv83a"),
    ("ARMv84a", 79, "armv84a"),
    ("ARMv85a", 80, "armv85a"),
    ("ARMv86a", 81, "armv86a"),
    ("ARMv87a", 82, "armv87a"),
    ("ARMv88a", 83, "armv88a"),
    ("ARMv89a", 84, "armv89a"),
    ("SanitizerCoverage", 85, "sanitizer_coverage"),
    ("ProfileByTimer", 86, "profile_by_timer"),
    ("SPIRV", 87, "spirv"),
    ("Vulkan", 88, "vulkan"),
    ("VulkanInt8", 89, "vk_int8"),
    ("VulkanInt16", 90, "vk_int16"),
    ("VulkanInt64", 91, "vk_int64"),
    ("VulkanFloat16", 92, "vk_float16"),
    ("VulkanFloat64", 93, "vk_float64"),
    ("VulkanV10", 94, "vk_v10"),
    ("VulkanV12", 95, "vk_v12"),
    ("VulkanV13", 96, "vk_v13"),
    ("Semihosting", 97, "semihosting"),
    ("AVX10_1", 98, "avx10_1"),
    ("X86APX", 99, "x86apx"),
    ("Simulator", 100, "simulator"),
];

/// Features that change what compiled code does (or its ABI) and that
/// ferrohalide does not implement: profile, profile_by_timer, msan, tsan,
/// asan, sanitizer_coverage, fuzz_float_stores, check_unsafe_promises,
/// c_plus_plus_name_mangling, embed_bitcode, soft_float_abi. The other
/// features are implemented, select the instruction set, or only tune code
/// generation (`enable_llvm_loop_opt`, `semihosting`, ...); device
/// features are refused where a loop runs on the device.
const UNIMPLEMENTED_FEATURES: [Feature; 11] = [
    Feature(30),
    Feature(86),
    Feature(39),
    Feature(56),
    Feature(57),
    Feature(85),
    Feature(37),
    Feature(59),
    Feature(33),
    Feature(61),
    Feature(38),
];

/// Features also accepted under another spelling when parsing.
const FEATURE_ALIASES: &[(&str, u8)] = &[("hvx", 35)];

/// The trace features `trace_all` stands for.
const TRACE_ALL: [u8; 3] = [47, 48, 49];

pub mod feature {
    use super::Feature;
    pub const JIT: Feature = Feature(0);
    pub const DEBUG: Feature = Feature(1);
    pub const NO_ASSERTS: Feature = Feature(3);
    pub const NO_BOUNDS_QUERY: Feature = Feature(4);
    pub const USER_CONTEXT: Feature = Feature(29);
    pub const NO_RUNTIME: Feature = Feature(31);
    pub const C_PLUS_PLUS_MANGLING: Feature = Feature(33);
    pub const SSE41: Feature = Feature(5);
    pub const AVX: Feature = Feature(6);
    pub const AVX2: Feature = Feature(7);
    pub const AVXVNNI: Feature = Feature(8);
    pub const FMA: Feature = Feature(9);
    pub const F16C: Feature = Feature(11);
    pub const CUDA: Feature = Feature(16);
    pub const OPENCL: Feature = Feature(26);
    pub const METAL: Feature = Feature(32);
    pub const LARGE_BUFFERS: Feature = Feature(34);
    pub const AVX512: Feature = Feature(40);
    pub const AVX512_KNL: Feature = Feature(41);
    pub const AVX512_SKYLAKE: Feature = Feature(42);
    pub const AVX512_CANNONLAKE: Feature = Feature(43);
    pub const AVX512_ZEN4: Feature = Feature(44);
    pub const AVX512_ZEN5: Feature = Feature(45);
    pub const AVX512_SAPPHIRERAPIDS: Feature = Feature(46);
    pub const CL_DOUBLES: Feature = Feature(27);
    pub const HVX: Feature = Feature(35);
    pub const D3D12_COMPUTE: Feature = Feature(58);
    pub const HEXAGON_DMA: Feature = Feature(60);
    pub const WEBGPU: Feature = Feature(67);
    pub const VULKAN: Feature = Feature(88);
    pub const VULKAN_INT8: Feature = Feature(89);
    pub const VULKAN_INT16: Feature = Feature(90);
    pub const VULKAN_INT64: Feature = Feature(91);
    pub const VULKAN_FLOAT16: Feature = Feature(92);
    pub const VULKAN_FLOAT64: Feature = Feature(93);
    pub const ARMV7S: Feature = Feature(12);
    pub const HVX_V62: Feature = Feature(36);
    pub const HVX_V65: Feature = Feature(51);
    pub const HVX_V66: Feature = Feature(52);
    pub const HVX_V68: Feature = Feature(53);
    pub const NO_NEON: Feature = Feature(13);
    pub const SVE: Feature = Feature(68);
    pub const SVE2: Feature = Feature(69);
    pub const ARM_DOT_PROD: Feature = Feature(71);
    pub const ARM_FP16: Feature = Feature(72);
    pub const ARMV81A: Feature = Feature(76);
    pub const ARMV82A: Feature = Feature(77);
    pub const ARMV83A: Feature = Feature(78);
    pub const ARMV84A: Feature = Feature(79);
    pub const ARMV85A: Feature = Feature(80);
    pub const ARMV86A: Feature = Feature(81);
    pub const ARMV87A: Feature = Feature(82);
    pub const ARMV88A: Feature = Feature(83);
    pub const ARMV89A: Feature = Feature(84);
}

pub mod os {
    use super::Os;
    pub const UNKNOWN: Os = Os(0);
    pub const LINUX: Os = Os(1);
    pub const WINDOWS: Os = Os(2);
    pub const OSX: Os = Os(3);
    pub const ANDROID: Os = Os(4);
    pub const IOS: Os = Os(5);
    pub const NOOS: Os = Os(7);
}

pub mod arch {
    use super::Arch;
    pub const UNKNOWN: Arch = Arch(0);
    pub const X86: Arch = Arch(1);
    pub const ARM: Arch = Arch(2);
    pub const HEXAGON: Arch = Arch(3);
}

fn lookup<'a>(table: &'a [(&'a str, u8, &'a str)], v: u8) -> Option<&'a (&'a str, u8, &'a str)> {
    table.iter().find(|e| e.1 == v)
}

macro_rules! enum_names {
    ($t:ty, $table:ident) => {
        impl $t {
            /// The spelling in target strings.
            pub fn as_str(self) -> &'static str {
                lookup($table, self.0).map_or("unknown", |e| e.2)
            }
            /// The Python enum member name.
            pub fn enum_name(self) -> &'static str {
                lookup($table, self.0).map_or("unknown", |e| e.0)
            }
            pub fn from_value(v: i64) -> Option<$t> {
                $table.iter().find(|e| e.1 as i64 == v).map(|e| Self(e.1))
            }
        }
    };
}
enum_names!(Os, OSES);
enum_names!(Arch, ARCHES);
enum_names!(Tune, TUNES);
enum_names!(Feature, FEATURES);

/// A compilation target: architecture, bits, OS, processor tuning and a
/// set of features.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    pub os: Os,
    pub arch: Arch,
    pub bits: i32,
    pub tune: Tune,
    features: u128,
}

impl Default for Target {
    /// Halide's `Target()`: `arch_unknown-0-os_unknown`.
    fn default() -> Self {
        Target {
            os: os::UNKNOWN,
            arch: arch::UNKNOWN,
            bits: 0,
            tune: Tune(0),
            features: 0,
        }
    }
}

fn not_understood(s: &str) -> Error {
    let list = |table: &[(&str, u8, &str)]| {
        let mut v: Vec<&str> = table.iter().map(|e| e.2).collect();
        v.sort();
        v.join(", ")
    };
    let mut features: Vec<&str> = FEATURES.iter().map(|e| e.2).collect();
    features.extend(FEATURE_ALIASES.iter().map(|e| e.0));
    features.push("trace_all");
    features.sort();
    Error::user(format!(
        "Did not understand Halide target {s}\n\
         Expected format is arch-bits-os-processor-feature1-feature2-...\n\
         Where arch is: {}.\n\
         bits is either 32 or 64.\n\
         os is: {}.\n\
         processor is: {}.\n\
         Features are: {}.\n\
         The target can also begin with \"host\", which stands for this machine's \
         architecture, OS and features.\n\
         On this platform, the host target is: {}\n",
        list(ARCHES),
        list(OSES),
        list(TUNES),
        features.join(", "),
        Target::host()
    ))
}

/// What the host machine supports, set by the backend (which can ask the
/// CPU); before that, a plain x86-64 Linux machine.
static HOST: std::sync::OnceLock<Target> = std::sync::OnceLock::new();

impl Target {
    pub fn new(os: Os, arch: Arch, bits: i32, tune: Tune, features: &[Feature]) -> Target {
        let mut t = Target {
            os,
            arch,
            bits,
            tune,
            features: 0,
        };
        for f in features {
            t.set_feature(*f, true);
        }
        t
    }

    /// Record the host target (once; the backend detects it).
    pub fn set_host(t: Target) {
        let _ = HOST.set(t);
    }

    /// The machine we run on (without `jit`).
    pub fn host() -> Target {
        HOST.get()
            .cloned()
            .unwrap_or_else(|| Target::new(os::LINUX, arch::X86, 64, Tune(0), &[feature::SSE41]))
    }

    /// Parse a target string. `""` is the host; `host` may begin the string.
    pub fn parse(s: &str) -> Result<Target> {
        if s.is_empty() {
            return Ok(Target::host());
        }
        Self::parse_strict(s).ok_or_else(|| not_understood(s))
    }

    /// Halide's `validate_target_string` (the empty string is not valid).
    /// Halide's `validate_target_string`: it parses, and names an
    /// architecture, an OS and a bit width (none unknown).
    pub fn validate(s: &str) -> bool {
        !s.is_empty()
            && Self::parse_strict(s).is_some_and(|t| t.arch.0 != 0 && t.os.0 != 0 && t.bits != 0)
    }

    fn parse_strict(s: &str) -> Option<Target> {
        let mut t = Target::default();
        let (mut has_os, mut has_arch, mut has_bits, mut has_tune) = (false, false, false, false);
        for (i, tok) in s.split('-').enumerate() {
            if tok.is_empty() {
                return None;
            }
            if i == 0 && tok == "host" {
                t = Target::host();
                has_os = true;
                has_arch = true;
                has_bits = true;
                continue;
            }
            if let Some(e) = ARCHES.iter().find(|e| e.2 == tok) {
                if has_arch {
                    return None;
                }
                t.arch = Arch(e.1);
                has_arch = true;
            } else if let Some(e) = OSES.iter().find(|e| e.2 == tok) {
                if has_os {
                    return None;
                }
                t.os = Os(e.1);
                has_os = true;
            } else if tok == "32" || tok == "64" || tok == "0" {
                if has_bits {
                    return None;
                }
                t.bits = tok.parse().ok()?;
                has_bits = true;
            } else if let Some(e) = TUNES.iter().find(|e| e.2 == tok) {
                if has_tune {
                    return None;
                }
                t.tune = Tune(e.1);
                has_tune = true;
            } else if let Some(e) = FEATURES.iter().find(|e| e.2 == tok) {
                t.set_feature(Feature(e.1), true);
            } else if let Some(e) = FEATURE_ALIASES.iter().find(|e| e.0 == tok) {
                t.set_feature(Feature(e.1), true);
            } else if tok == "trace_all" {
                for f in TRACE_ALL {
                    t.set_feature(Feature(f), true);
                }
            } else {
                return None;
            }
        }
        (has_os && has_arch && has_bits).then_some(t)
    }

    pub fn has_feature(&self, f: Feature) -> bool {
        f.0 < 128 && self.features & (1u128 << f.0) != 0
    }
    pub fn set_feature(&mut self, f: Feature, value: bool) {
        if f.0 >= 128 {
            return;
        }
        if value {
            self.features |= 1u128 << f.0;
        } else {
            self.features &= !(1u128 << f.0);
        }
    }
    pub fn with_feature(&self, f: Feature) -> Target {
        let mut t = self.clone();
        t.set_feature(f, true);
        t
    }
    pub fn without_feature(&self, f: Feature) -> Target {
        let mut t = self.clone();
        t.set_feature(f, false);
        t
    }
    pub fn features_all_of(&self, fs: &[Feature]) -> bool {
        fs.iter().all(|f| self.has_feature(*f))
    }
    pub fn features_any_of(&self, fs: &[Feature]) -> bool {
        fs.iter().any(|f| self.has_feature(*f))
    }
    /// The features that are set, in value order.
    pub fn features(&self) -> Vec<Feature> {
        (0..128u8)
            .map(Feature)
            .filter(|f| self.has_feature(*f))
            .collect()
    }

    /// An error naming the first feature of this target that would change
    /// what compiled code does but that ferrohalide does not implement
    /// (Halide's profiler, the sanitizers' instrumentation, ...): compiling
    /// for it must not quietly produce code without it.
    pub fn check_features_implemented(&self) -> crate::error::Result<()> {
        match UNIMPLEMENTED_FEATURES.iter().find(|f| self.has_feature(**f)) {
            Some(f) => Err(crate::error::Error::unimplemented(format!(
                "Target feature {} (target {self})",
                f.as_str()
            ))),
            None => Ok(()),
        }
    }

    pub fn has_gpu_feature(&self) -> bool {
        use feature::*;
        self.features_any_of(&[CUDA, OPENCL, METAL, D3D12_COMPUTE, VULKAN, WEBGPU])
    }
    pub fn has_large_buffers(&self) -> bool {
        self.has_feature(feature::LARGE_BUFFERS)
    }
    pub fn maximum_buffer_size(&self) -> i64 {
        if self.bits == 64 && self.has_large_buffers() {
            i64::MAX
        } else {
            i32::MAX as i64
        }
    }

    /// Lanes of `t` that fill one native vector register: 16 bytes, more on
    /// x86 with wider vector extensions (integers need AVX2 for 32 bytes
    /// and Skylake-class AVX-512 for 64; floats AVX and AVX-512).
    pub fn natural_vector_size(&self, t: Type) -> i32 {
        use feature::*;
        let bytes = t.bytes().max(1) as i32;
        let is_integer = !t.is_float();
        let wide_ints = [
            AVX512_SKYLAKE,
            AVX512_CANNONLAKE,
            AVX512_SAPPHIRERAPIDS,
            AVX512_ZEN4,
            AVX512_ZEN5,
        ];
        let vector_bytes = if self.arch == arch::HEXAGON && self.has_feature(HVX) {
            128
        } else if self.arch != arch::X86 {
            16
        } else if is_integer {
            if self.features_any_of(&wide_ints) {
                64
            } else if self.features_any_of(&[AVX2, AVX512, AVX512_KNL]) {
                32
            } else {
                16
            }
        } else if self.features_any_of(&[AVX512, AVX512_KNL]) || self.features_any_of(&wide_ints) {
            64
        } else if self.features_any_of(&[AVX, AVX2]) {
            32
        } else {
            16
        };
        vector_bytes / bytes
    }

    /// The target a runtime shared by code for all of `targets` is built
    /// for: their machine (which must be one), the tuning of the last, and
    /// only the features every one has (so it runs wherever any of them
    /// does), never `no_runtime`.
    pub fn runtime_for(targets: &[Target]) -> Result<Target> {
        let Some(last) = targets.last() else {
            return Err(Error::user("Must specify at least one target.\n"));
        };
        if targets.iter().any(|t| !t.same_machine(last)) {
            return Err(Error::user(
                "All Targets must have matching arch-bits-os to share a runtime.\n",
            ));
        }
        let mut out = last.clone();
        out.features = targets.iter().fold(!0u128, |acc, t| acc & t.features);
        out.set_feature(feature::NO_RUNTIME, false);
        Ok(out)
    }

    /// Do `self` and `other` name the same machine (arch, bits, OS)?
    pub fn same_machine(&self, other: &Target) -> bool {
        self.arch == other.arch && self.bits == other.bits && self.os == other.os
    }

    /// `get_jit_target_from_environment()`: `HL_JIT_TARGET` (read each
    /// time) or the host, plus `jit`; it must describe this machine.
    pub fn jit_from_environment() -> Result<Target> {
        let t = match std::env::var("HL_JIT_TARGET") {
            Ok(s) if !s.is_empty() => {
                let t = Target::parse(&s)?;
                if !t.same_machine(&Target::host()) {
                    return Err(Error::user(
                        "HL_JIT_TARGET must match the host OS, architecture, and bit width.\n",
                    ));
                }
                t
            }
            _ => Target::host(),
        };
        Ok(t.with_feature(feature::JIT))
    }

    /// `get_target_from_environment()`: `HL_TARGET` or the host.
    pub fn from_environment() -> Result<Target> {
        match std::env::var("HL_TARGET") {
            Ok(s) if !s.is_empty() => Target::parse(&s),
            _ => Ok(Target::host()),
        }
    }
}

impl std::fmt::Display for Target {
    /// `arch-bits-os[-tune]-features`, features sorted by name (a feature
    /// with two names, `hvx` / `hvx_128`, under both, as Halide prints it).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}-{}",
            self.arch.as_str(),
            self.bits,
            self.os.as_str()
        )?;
        if self.tune.0 != 0 {
            write!(f, "-{}", self.tune.as_str())?;
        }
        let mut names: Vec<&str> = vec![];
        let trace_all = TRACE_ALL.iter().all(|&x| self.has_feature(Feature(x)));
        for feat in self.features() {
            if trace_all && TRACE_ALL.contains(&feat.0) {
                continue;
            }
            names.push(feat.as_str());
            // Halide prints every name a feature has (`hvx` and `hvx_128`).
            names.extend(FEATURE_ALIASES.iter().filter(|e| e.1 == feat.0).map(|e| e.0));
        }
        if trace_all {
            names.push("trace_all");
        }
        names.sort();
        for n in names {
            write!(f, "-{n}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        Target::parse(s).unwrap().to_string()
    }

    #[test]
    fn parse_and_print() {
        assert_eq!(canon("x86-64-linux-sse41-avx"), "x86-64-linux-avx-sse41");
        assert_eq!(canon("linux-x86-64"), "x86-64-linux");
        assert_eq!(
            canon("x86-64-linux-tune_znver4-avx2"),
            "x86-64-linux-tune_znver4-avx2"
        );
        assert_eq!(canon("x86-64-linux-tune_generic"), "x86-64-linux");
        assert_eq!(canon("x86-64-linux-trace_all"), "x86-64-linux-trace_all");
        assert_eq!(Target::default().to_string(), "arch_unknown-0-os_unknown");
        for unknowns in ["arch_unknown-0-os_unknown", "0-arch_unknown-os_unknown-sse41", "x86-0-linux"] {
            assert!(!Target::validate(unknowns), "{unknowns}");
        }
        assert!(Target::validate("x86-32-linux-sse41"));
        for bad in [
            "x86-64",
            "linux",
            "x86-65-linux",
            "x86-64-linux-linux",
            "X86-64-LINUX",
            "-x86-64-linux",
            "x86-64-linux-",
        ] {
            assert!(!Target::validate(bad), "{bad}");
            assert!(Target::parse(bad)
                .unwrap_err()
                .message
                .starts_with("Did not understand Halide target"));
        }
    }

    #[test]
    fn vector_sizes() {
        let nvs = |s: &str, t: Type| Target::parse(s).unwrap().natural_vector_size(t);
        assert_eq!(nvs("x86-64-linux", Type::uint(8)), 16);
        assert_eq!(nvs("x86-64-linux-avx", Type::float(32)), 8);
        assert_eq!(nvs("x86-64-linux-avx", Type::int(32)), 4);
        assert_eq!(nvs("x86-64-linux-avx2", Type::int(16)), 16);
        assert_eq!(nvs("x86-64-linux-avx512", Type::int(32)), 8);
        assert_eq!(nvs("x86-64-linux-avx512", Type::float(32)), 16);
        assert_eq!(nvs("x86-64-linux-avx512_skylake", Type::uint(8)), 64);
        assert_eq!(nvs("arm-64-linux", Type::float(64)), 2);
    }
}
