//! What the JIT compiles for: an LLVM CPU name and a feature string, and
//! the largest buffer the target allows.

use inkwell::targets::TargetMachine;

/// The CPU and features code is generated for. `features` is LLVM's
/// comma-separated `+feat,-feat` list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JitTarget {
    pub cpu: String,
    pub features: String,
    /// Halide's `Target::maximum_buffer_size`: 2^31 - 1 bytes, 2^63 - 1
    /// with `large_buffers`. Larger allocations are errors.
    pub max_buffer_size: u64,
}

/// The maximum buffer size without `large_buffers`.
const DEFAULT_MAX_BUFFER_SIZE: u64 = i32::MAX as u64;

impl JitTarget {
    pub fn new(cpu: impl Into<String>, features: impl Into<String>) -> JitTarget {
        JitTarget {
            cpu: cpu.into(),
            features: features.into(),
            max_buffer_size: DEFAULT_MAX_BUFFER_SIZE,
        }
    }

    /// The machine we are running on, as LLVM detects it (once: in a
    /// virtual machine each of the detection's many `cpuid`s traps, and
    /// detecting took ~3% of compiling a small pipeline).
    pub fn host() -> JitTarget {
        static HOST: std::sync::OnceLock<JitTarget> = std::sync::OnceLock::new();
        HOST.get_or_init(|| {
            let cpu = TargetMachine::get_host_cpu_name().to_string();
            let features = TargetMachine::get_host_cpu_features().to_string();
            JitTarget::new(cpu, features)
        })
        .clone()
    }

    /// The host, with some features forced on or off, e.g. `"+avx2,-avx512f"`.
    pub fn host_with_features(overrides: &str) -> JitTarget {
        JitTarget::host().with_feature_overrides(overrides)
    }

    /// Apply `+feat` / `-feat` overrides (comma separated). Overrides are
    /// appended last, so LLVM clears the features that imply a disabled one
    /// (e.g. `-avx512f` also turns off avx512bw, avx512vl, ...).
    pub fn with_feature_overrides(&self, overrides: &str) -> JitTarget {
        let ov: Vec<&str> = overrides
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let names: Vec<&str> = ov
            .iter()
            .map(|s| s.trim_start_matches(['+', '-']))
            .collect();
        let mut feats: Vec<String> = self
            .features
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .filter(|s| !names.contains(&s.trim_start_matches(['+', '-'])))
            .map(str::to_string)
            .collect();
        for o in ov {
            let o = if o.starts_with('+') || o.starts_with('-') {
                o.to_string()
            } else {
                format!("+{o}")
            };
            feats.push(o);
        }
        JitTarget {
            features: feats.join(","),
            ..self.clone()
        }
    }

    /// Turn every AVX-512 feature off (for `x86-64-linux-avx2`-like targets).
    pub fn without_avx512(&self) -> JitTarget {
        let off: Vec<String> = self
            .features
            .split(',')
            .map(|s| s.trim().trim_start_matches(['+', '-']))
            .filter(|n| n.starts_with("avx512"))
            .map(|n| format!("-{n}"))
            .collect();
        let mut t = self.with_feature_overrides(&off.join(","));
        if !t.features.contains("-avx512f") {
            t = t.with_feature_overrides("-avx512f");
        }
        t
    }

    /// Whether LLVM feature `name` is on: its last `+name` or `-name`
    /// decides. Code generation asks this per instruction of some kinds,
    /// so it allocates nothing and scans from the end.
    pub fn has_feature(&self, name: &str) -> bool {
        self.features
            .rsplit(',')
            .map(str::trim)
            .find(|f| f.get(1..) == Some(name) && (f.starts_with('+') || f.starts_with('-')))
            .is_some_and(|f| f.starts_with('+'))
    }
}

impl Default for JitTarget {
    fn default() -> Self {
        JitTarget::host()
    }
}

// ---------------------------------------------------------------------------
// Halide targets <-> LLVM CPU features
// ---------------------------------------------------------------------------

use ferrohalide_core::target::{arch, feature, os, Feature, Target, Tune, TUNES};
use ferrohalide_core::{Error, Result};

/// The ISA features of a Halide x86 target and the LLVM features each
/// needs (a feature is usable when all of them are on).
const X86_ISA: &[(Feature, &[&str])] = &[
    (feature::SSE41, &["sse4.1"]),
    (feature::AVX, &["avx"]),
    (feature::AVX2, &["avx2"]),
    (feature::FMA, &["fma"]),
    (feature::F16C, &["f16c"]),
    (feature::AVXVNNI, &["avxvnni"]),
    (feature::AVX512, &["avx512f", "avx512cd"]),
    (
        feature::AVX512_KNL,
        &["avx512f", "avx512cd", "avx512er", "avx512pf"],
    ),
    (
        feature::AVX512_SKYLAKE,
        &["avx512f", "avx512cd", "avx512vl", "avx512bw", "avx512dq"],
    ),
    (
        feature::AVX512_CANNONLAKE,
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512bw",
            "avx512dq",
            "avx512ifma",
            "avx512vbmi",
        ],
    ),
    (
        feature::AVX512_ZEN4,
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512bw",
            "avx512dq",
            "avx512ifma",
            "avx512vbmi",
            "avx512vnni",
            "avx512bf16",
            "avx512vbmi2",
            "avx512bitalg",
            "avx512vpopcntdq",
        ],
    ),
    (
        feature::AVX512_ZEN5,
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512bw",
            "avx512dq",
            "avx512ifma",
            "avx512vbmi",
            "avx512vnni",
            "avx512bf16",
            "avx512vbmi2",
            "avx512bitalg",
            "avx512vpopcntdq",
            "avxvnni",
            "avx512vp2intersect",
        ],
    ),
    (
        feature::AVX512_SAPPHIRERAPIDS,
        &[
            "avx512f",
            "avx512cd",
            "avx512vl",
            "avx512bw",
            "avx512dq",
            "avx512ifma",
            "avx512vbmi",
            "avx512vnni",
            "avx512bf16",
            "avx512fp16",
            "avxvnni",
        ],
    ),
];

/// LLVM features that only exist as part of some vector ISA level: a
/// target that does not ask for them gets them switched off, so e.g.
/// `x86-64-linux-avx2` never uses AVX-512 even on an AVX-512 host.
const X86_VECTOR_FEATURES: &[&str] = &[
    "sse4.1",
    "sse4.2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avxvnni",
    "avx512f",
    "avx512cd",
    "avx512er",
    "avx512pf",
    "avx512vl",
    "avx512bw",
    "avx512dq",
    "avx512ifma",
    "avx512vbmi",
    "avx512vnni",
    "avx512bf16",
    "avx512vbmi2",
    "avx512bitalg",
    "avx512vpopcntdq",
    "avx512vp2intersect",
    "avx512fp16",
    "avx10.1-256",
    "avx10.1-512",
    "amx-tile",
    "amx-int8",
    "amx-bf16",
    "vaes",
    "vpclmulqdq",
    "gfni",
    "evex512",
];

fn host_has(host: &JitTarget, names: &[&str]) -> bool {
    names.iter().all(|n| host.has_feature(n))
}

fn host_tune(cpu: &str) -> Tune {
    let want = format!("tune_{cpu}");
    TUNES
        .iter()
        .find(|e| e.2 == want)
        .map(|e| Tune(e.1))
        .unwrap_or(Tune(0))
}

/// The Halide target of this machine, from the CPU LLVM detects.
pub fn detect_host_target() -> Target {
    let host = JitTarget::host();
    let mut t = Target::new(os::LINUX, arch::X86, 64, host_tune(&host.cpu), &[]);
    if !cfg!(target_os = "linux") {
        t.os = if cfg!(target_os = "windows") {
            os::WINDOWS
        } else {
            os::OSX
        };
    }
    if !cfg!(target_arch = "x86_64") {
        t.arch = arch::ARM;
        return t;
    }
    for (f, needs) in X86_ISA {
        if host_has(&host, needs) {
            t.set_feature(*f, true);
        }
    }
    t
}

/// Detect the host once and make it `Target::host()`.
pub fn init_host_target() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| Target::set_host(detect_host_target()));
}

impl JitTarget {
    /// What to generate code for, for a Halide target: the host CPU with
    /// the vector features the target does not name switched off. Targets
    /// for another machine (or asking for features this CPU lacks) are
    /// refused, since their code cannot run here. Gathers stay gather
    /// instructions where they are measured faster than loading lane by
    /// lane (`hardware_gathers`).
    pub fn for_target(t: &Target) -> Result<JitTarget> {
        let max_buffer_size = t.maximum_buffer_size() as u64;
        let isa = Self::isa_for_target(t)?;
        let isa = if isa.has_feature("avx2") && crate::hardware_gathers::pay_off_here() {
            isa.with_feature_overrides(&format!("+{}", crate::hardware_gathers::FEATURE))
        } else {
            isa
        };
        Ok(JitTarget {
            max_buffer_size,
            ..isa
        })
    }

    fn isa_for_target(t: &Target) -> Result<JitTarget> {
        init_host_target();
        let host_t = Target::host();
        if *t == Target::default() {
            return Ok(JitTarget::host());
        }
        if !t.same_machine(&host_t) {
            return Err(Error::user(format!(
                "Cannot run code compiled for target {t} on this machine ({host_t}): the JIT needs the host's architecture, bit width and OS.\n"
            )));
        }
        let host = JitTarget::host();
        let isa =
            |x: &Target| -> Vec<bool> { X86_ISA.iter().map(|(f, _)| x.has_feature(*f)).collect() };
        if isa(t) == isa(&host_t) {
            return Ok(host);
        }
        let mut on: Vec<&str> = vec![];
        for (f, needs) in X86_ISA {
            if t.has_feature(*f) {
                if !host_has(&host, needs) {
                    return Err(Error::user(format!(
                        "Cannot JIT-compile for target {t}: this CPU does not support {}.\n",
                        f.as_str()
                    )));
                }
                on.extend_from_slice(needs);
            }
        }
        // AVX implies the SSE levels below it; AVX-512 the AVX levels.
        if on.iter().any(|n| n.starts_with("avx")) {
            on.extend_from_slice(&["sse4.1", "sse4.2", "avx"]);
        }
        if on.iter().any(|n| n.starts_with("avx512")) {
            on.extend_from_slice(&["avx2", "fma", "f16c", "evex512"]);
        }
        let overrides: Vec<String> = X86_VECTOR_FEATURES
            .iter()
            .filter(|n| host.has_feature(n) || on.contains(n))
            .map(|n| {
                if on.contains(n) {
                    format!("+{n}")
                } else {
                    format!("-{n}")
                }
            })
            .collect();
        Ok(host.with_feature_overrides(&overrides.join(",")))
    }
}

impl JitTarget {
    /// What to generate ahead-of-time code for, and the LLVM triple: the
    /// baseline CPU of the target's architecture with exactly the ISA
    /// features the target names (the code must run on any machine with
    /// them, not only this one). A machine ferrohalide cannot compile for,
    /// or a feature it cannot honour, is an error that names it.
    pub fn for_aot(t: &Target) -> Result<(JitTarget, &'static str)> {
        init_host_target();
        let t = if *t == Target::default() { Target::host() } else { t.clone() };
        let (mut jt, triple) = match (t.arch, t.bits, t.os) {
            (arch::X86, 64, os::LINUX) => (x86_aot(&t), "x86_64-unknown-linux-gnu"),
            (arch::X86, 64, os::OSX) => (x86_aot(&t), "x86_64-apple-macosx10.12.0"),
            (arch::X86, 64, os::WINDOWS) => (x86_aot(&t), "x86_64-pc-windows-msvc"),
            (arch::ARM, 64, os::LINUX) => (arm64_aot(&t, "generic")?, "aarch64-unknown-linux-gnu"),
            (arch::ARM, 64, os::ANDROID) => (arm64_aot(&t, "generic")?, "aarch64-unknown-linux-android"),
            (arch::ARM, 64, os::OSX) => (arm64_aot(&t, "apple-m1")?, "arm64-apple-macosx11.0.0"),
            (arch::ARM, 64, os::IOS) => (arm64_aot(&t, "apple-a7")?, "arm64-apple-ios13.0.0"),
            (arch::ARM, 32, os::LINUX) => (arm32_aot(&t, "cortex-a9")?, "armv7-unknown-linux-gnueabihf"),
            (arch::ARM, 32, os::ANDROID) => (arm32_aot(&t, "cortex-a9")?, "armv7-unknown-linux-androideabi"),
            (arch::ARM, 32, os::IOS) if t.has_feature(feature::ARMV7S) => {
                (arm32_aot(&t, "swift")?, "armv7s-apple-ios10.0.0")
            }
            (arch::ARM, 32, os::IOS) => (arm32_aot(&t, "cortex-a9")?, "armv7-apple-ios10.0.0"),
            (arch::HEXAGON, 32, os::NOOS) => (hexagon_aot(&t)?, "hexagon-unknown-none-elf"),
            _ => {
                return Err(Error::user(format!(
                    "Compiling ahead of time for target {t} is not supported by ferrohalide yet: \
                     it compiles objects for x86-64 Linux, macOS and Windows, arm-64 Linux, \
                     Android, macOS and iOS, and arm-32 Linux, Android and iOS.\n"
                )))
            }
        };
        jt.max_buffer_size = t.maximum_buffer_size() as u64;
        Ok((jt, triple))
    }
}

/// x86-64: the `x86-64` baseline CPU with the vector features of the
/// target's ISA levels on and every other vector feature off.
fn x86_aot(t: &Target) -> JitTarget {
    let mut on: Vec<&str> = vec![];
    for (f, needs) in X86_ISA {
        if t.has_feature(*f) {
            on.extend_from_slice(needs);
        }
    }
    if on.iter().any(|n| n.starts_with("avx")) {
        on.extend_from_slice(&["sse4.1", "sse4.2", "avx"]);
    }
    if on.iter().any(|n| n.starts_with("avx512")) {
        on.extend_from_slice(&["avx2", "fma", "f16c", "evex512"]);
    }
    if on.contains(&"sse4.1") {
        on.push("ssse3");
        on.push("sse4.2");
    }
    // (LLVM 19 knows no avx512er/avx512pf: Xeon Phi is gone.)
    let features: Vec<String> = X86_VECTOR_FEATURES
        .iter()
        .filter(|n| !matches!(**n, "avx512er" | "avx512pf") || on.contains(n))
        .map(|n| if on.contains(n) { format!("+{n}") } else { format!("-{n}") })
        .chain(on.iter().filter(|n| !X86_VECTOR_FEATURES.contains(n)).map(|n| format!("+{n}")))
        .collect();
    JitTarget::new("x86-64", features.join(","))
}

/// The ARM ISA features of a Halide target and the LLVM features each
/// turns on (AArch64 always has NEON; `no_neon` turns it off).
const ARM64_ISA: &[(Feature, &str)] = &[
    (feature::ARM_DOT_PROD, "+dotprod"),
    (feature::ARM_FP16, "+fullfp16"),
    (feature::ARMV81A, "+v8.1a"),
    (feature::ARMV82A, "+v8.2a"),
    (feature::ARMV83A, "+v8.3a"),
    (feature::ARMV84A, "+v8.4a"),
    (feature::ARMV85A, "+v8.5a"),
    (feature::ARMV86A, "+v8.6a"),
    (feature::ARMV87A, "+v8.7a"),
    (feature::ARMV88A, "+v8.8a"),
    (feature::ARMV89A, "+v8.9a"),
    (feature::NO_NEON, "-neon"),
];

/// arm-64: the baseline CPU of the platform (`generic`, ARMv8-A with
/// NEON; Apple's first CPU of the platform), plus the features the target
/// names. Scalable vectors are refused: code is generated for fixed
/// 128-bit NEON vectors only.
fn arm64_aot(t: &Target, cpu: &str) -> Result<JitTarget> {
    for f in [feature::SVE, feature::SVE2] {
        if t.has_feature(f) {
            return Err(Error::user(format!(
                "Target feature {} (target {t}) is not supported by ferrohalide yet: \
                 arm-64 code uses fixed 128-bit NEON vectors.\n",
                f.as_str()
            )));
        }
    }
    let mut features = vec!["+neon"];
    for (f, llvm) in ARM64_ISA {
        if t.has_feature(*f) {
            features.push(llvm);
        }
    }
    Ok(JitTarget::new(cpu, features.join(",")))
}

/// Hexagon: the CPU of the newest `hvx_v6x` level named (v60 if none),
/// with 128-byte HVX vectors when the target has `hvx` (`hvx_128`).
/// Levels from v68 on are refused (QEMU 7.2, which proves these objects,
/// runs up to v67).
fn hexagon_aot(t: &Target) -> Result<JitTarget> {
    if t.has_feature(feature::HVX_V68) {
        return Err(Error::user(format!(
            "Target feature hvx_v68 (target {t}) is not supported by ferrohalide yet.\n"
        )));
    }
    let version = if t.has_feature(feature::HVX_V66) {
        "v66"
    } else if t.has_feature(feature::HVX_V65) {
        "v65"
    } else if t.has_feature(feature::HVX_V62) {
        "v62"
    } else {
        "v60"
    };
    let features = if t.has_feature(feature::HVX) {
        format!("+hvx{version},+hvx-length128b")
    } else {
        String::from("-hvx")
    };
    Ok(JitTarget::new(format!("hexagon{version}"), features))
}

/// arm-32: ARMv7-A (Halide's `cortex-a9`; `swift` for armv7s) with NEON
/// unless `no_neon`. The ARMv8 feature levels and SVE are arm-64's only.
fn arm32_aot(t: &Target, cpu: &str) -> Result<JitTarget> {
    let arm64_only = ARM64_ISA.iter().map(|(f, _)| *f).filter(|f| *f != feature::NO_NEON);
    if let Some(f) = arm64_only.chain([feature::SVE, feature::SVE2]).find(|f| t.has_feature(*f)) {
        return Err(Error::user(format!(
            "Target feature {} is not supported by ferrohalide for 32-bit ARM (target {t}).\n",
            f.as_str()
        )));
    }
    let neon = if t.has_feature(feature::NO_NEON) { "-neon" } else { "+neon" };
    Ok(JitTarget::new(cpu, format!("+v7,+vfp3,{neon}")))
}
