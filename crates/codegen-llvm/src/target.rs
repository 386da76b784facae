//! What the JIT compiles for: an LLVM CPU name and a feature string.

use inkwell::targets::TargetMachine;

/// The CPU and features code is generated for. `features` is LLVM's
/// comma-separated `+feat,-feat` list.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JitTarget {
    pub cpu: String,
    pub features: String,
}

impl JitTarget {
    pub fn new(cpu: impl Into<String>, features: impl Into<String>) -> JitTarget {
        JitTarget {
            cpu: cpu.into(),
            features: features.into(),
        }
    }

    /// The machine we are running on, as LLVM detects it.
    pub fn host() -> JitTarget {
        let cpu = TargetMachine::get_host_cpu_name().to_string();
        let features = TargetMachine::get_host_cpu_features().to_string();
        JitTarget { cpu, features }
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
            cpu: self.cpu.clone(),
            features: feats.join(","),
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

    pub fn has_feature(&self, name: &str) -> bool {
        let plus = format!("+{name}");
        let minus = format!("-{name}");
        let mut on = false;
        for f in self.features.split(',').map(str::trim) {
            if f == plus {
                on = true;
            } else if f == minus {
                on = false;
            }
        }
        on
    }
}

impl Default for JitTarget {
    fn default() -> Self {
        JitTarget::host()
    }
}
