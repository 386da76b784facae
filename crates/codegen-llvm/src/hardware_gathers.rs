//! Whether the JIT leaves vector gathers to the CPU's gather instructions
//! (`vgatherdps` and kin) or writes them out as one scalar load per lane,
//! as Halide does on x86 (`expand_gathers`).
//!
//! Which is faster depends on the machine, not on its instruction set: on
//! some CPUs the gather instruction is much faster than eight scalar loads
//! with their extracts and inserts (the Intel Xeon these notes were
//! measured on: bilateral_grid runs in 10.8 ms instead of 17.0,
//! local_laplacian in 44 instead of 80); on others (by published figures,
//! not measured here: AMD's cores before Zen 4, Intel's whose microcode
//! mitigates Gather Data Sampling) it can be slower than the lanes. A CPU's name does not tell: virtual machines
//! report a model of their own (this Xeon says Rocket Lake, an affected
//! design). So the JIT times both forms once per process, on a small table
//! in the L1 cache (~0.5 ms), and uses the instruction only when it is
//! clearly faster. The choice changes speed only: both forms load the
//! same elements. Near the margin two measurements may differ, and the
//! choice is part of the cache's keys, so the first one is stored in the
//! cache folder (`jit_cache::machine_fact`) and every later process
//! sharing it takes that one instead of measuring.
//!
//! The choice is carried as LLVM's `fast-gather` tuning feature in the JIT
//! target's features, so the persistent cache's key has it, and the back
//! end (which otherwise uses gather instructions only with AVX-512) emits
//! them for AVX2 too. Ahead-of-time objects keep the per-lane form: they
//! must not depend on the machine that built them.
//!
//! `FERROHALIDE_GATHERS=hardware` or `=lanes` decides without measuring
//! (the tests run both forms).

use std::sync::OnceLock;

use crate::target::JitTarget;

/// The LLVM feature that marks a JIT target whose gathers stay gathers.
pub(crate) const FEATURE: &str = "fast-gather";

/// Whether code for `target` leaves gathers to the gather instructions
/// (the JIT chose them, and the target has AVX2).
pub(crate) fn enabled(target: &JitTarget) -> bool {
    target.has_feature(FEATURE) && target.has_feature("avx2")
}

/// Whether the gather instructions pay off on this machine (decided once
/// per process, and measured once per machine and cache folder: processes
/// sharing a cache take the first measurement stored there, so they agree
/// on the target, and with it on the cache's keys).
pub(crate) fn pay_off_here() -> bool {
    static CHOICE: OnceLock<bool> = OnceLock::new();
    *CHOICE.get_or_init(|| match std::env::var("FERROHALIDE_GATHERS").as_deref() {
        Ok("hardware") => avx2_here(),
        Ok("lanes") => false,
        _ => {
            let host = JitTarget::host();
            let fact = crate::jit_cache::machine_fact("gathers", &format!("{} {}", host.cpu, host.features), || {
                measured_choice().into_bytes()
            });
            let fact = String::from_utf8_lossy(&fact).into_owned();
            if crate::jit::debug_level() >= 1 {
                eprintln!("gathers: {fact}");
            }
            fact.starts_with(INSTRUCTIONS) && avx2_here()
        }
    })
}

const INSTRUCTIONS: &str = "gather instructions";

/// The choice a measurement makes, with its figures, as text that starts
/// with `INSTRUCTIONS` when the instruction pays off.
fn measured_choice() -> String {
    match measure() {
        None => "lane by lane (no AVX2)".to_string(),
        Some((hardware, lanes)) => format!(
            "{} (8 floats: {:.2} ns with a gather instruction, {:.2} ns lane by lane)",
            if hardware * MARGIN < lanes { INSTRUCTIONS } else { "lane by lane" },
            hardware,
            lanes
        ),
    }
}

/// How much faster the instruction must be: near a tie the per-lane form
/// (Halide's) is kept. This table stays in the L1 cache and the loop does
/// nothing else, so the lanes' extra instructions cost less here than in
/// real loops (the Xeon above: 1.4 times faster here, 1.6 to 1.8 times in
/// bilateral_grid's and local_laplacian's gathering loops).
const MARGIN: f64 = 1.15;

fn avx2_here() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Nanoseconds per 8-float gather, with the instruction and lane by lane
/// (the fastest of several alternating runs each); None without AVX2.
#[cfg(target_arch = "x86_64")]
fn measure() -> Option<(f64, f64)> {
    if !avx2_here() {
        return None;
    }
    const TABLE: usize = 1024;
    const GATHERS: usize = 64;
    const REPEATS: usize = 256;
    let table: Vec<f32> = (0..TABLE).map(|i| i as f32).collect();
    // Scattered indices (a multiplicative hash), every lane a different line.
    let index: Vec<i32> = (0..GATHERS * 8)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 22) as i32 % TABLE as i32)
        .collect();
    let time = |f: unsafe fn(&[f32], &[i32], usize) -> f32| {
        let t = std::time::Instant::now();
        // SAFETY: AVX2 is present (checked above); the indices are in the table.
        std::hint::black_box(unsafe { f(std::hint::black_box(&table), &index, REPEATS) });
        t.elapsed().as_secs_f64() * 1e9 / (GATHERS * REPEATS) as f64
    };
    let (mut hardware, mut lanes) = (f64::MAX, f64::MAX);
    for _ in 0..9 {
        hardware = hardware.min(time(x86::with_instruction));
        lanes = lanes.min(time(x86::lane_by_lane));
    }
    Some((hardware, lanes))
}

#[cfg(not(target_arch = "x86_64"))]
fn measure() -> Option<(f64, f64)> {
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// The sum of `table` gathered at each group of 8 `index`es, `repeats`
    /// times, with `vgatherdps`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn with_instruction(table: &[f32], index: &[i32], repeats: usize) -> f32 {
        let mut acc = [_mm256_setzero_ps(); 4];
        for _ in 0..repeats {
            for (k, lanes) in index.chunks_exact(8).enumerate() {
                let i = _mm256_loadu_si256(lanes.as_ptr() as *const __m256i);
                acc[k % 4] = _mm256_add_ps(acc[k % 4], _mm256_i32gather_ps::<4>(table.as_ptr(), i));
            }
        }
        sum(acc)
    }

    /// The same sum, each lane's index extracted from the vector and its
    /// element loaded on its own (the per-lane form `expand_gathers` writes).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn lane_by_lane(table: &[f32], index: &[i32], repeats: usize) -> f32 {
        let mut acc = [_mm256_setzero_ps(); 4];
        let t = table.as_ptr();
        for _ in 0..repeats {
            for (k, lanes) in index.chunks_exact(8).enumerate() {
                let i = _mm256_loadu_si256(lanes.as_ptr() as *const __m256i);
                let v = _mm256_setr_ps(
                    *t.add(_mm256_extract_epi32::<0>(i) as usize),
                    *t.add(_mm256_extract_epi32::<1>(i) as usize),
                    *t.add(_mm256_extract_epi32::<2>(i) as usize),
                    *t.add(_mm256_extract_epi32::<3>(i) as usize),
                    *t.add(_mm256_extract_epi32::<4>(i) as usize),
                    *t.add(_mm256_extract_epi32::<5>(i) as usize),
                    *t.add(_mm256_extract_epi32::<6>(i) as usize),
                    *t.add(_mm256_extract_epi32::<7>(i) as usize),
                );
                acc[k % 4] = _mm256_add_ps(acc[k % 4], v);
            }
        }
        sum(acc)
    }

    /// The lanes of four independent sums (one chain would time the
    /// additions' latency, not the loads), added.
    #[target_feature(enable = "avx2")]
    unsafe fn sum(acc: [__m256; 4]) -> f32 {
        let mut lanes = [0f32; 32];
        for (k, v) in acc.iter().enumerate() {
            _mm256_storeu_ps(lanes[8 * k..].as_mut_ptr(), *v);
        }
        lanes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathers_stay_only_where_chosen_and_avx2_is_on() {
        let t = |f: &str| JitTarget::new("x86-64", f);
        assert!(enabled(&t("+avx2,+fma,+fast-gather")));
        assert!(!enabled(&t("+avx2,+fast-gather,-fast-gather")));
        assert!(!enabled(&t("-avx2,+fast-gather")));
        assert!(!enabled(&t("+avx2")));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn both_forms_load_the_same_elements() {
        if !avx2_here() {
            return;
        }
        let table: Vec<f32> = (0..64).map(|i| (i * i) as f32).collect();
        let index: Vec<i32> = (0..32).map(|i| (i * 7) % 64).collect();
        // SAFETY: AVX2 is present; the indices are in the table.
        let (a, b) = unsafe { (x86::with_instruction(&table, &index, 3), x86::lane_by_lane(&table, &index, 3)) };
        assert_eq!(a, b);
    }
}
