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
//! design). So the JIT times both forms once per process, in a small
//! gathering loop shaped like the apps' (~0.2 ms), and uses the instruction
//! only when it is faster there. The choice changes speed only: both forms load the
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
            let fact = crate::jit_cache::machine_fact("gathers in a grid slice", &format!("{} {}", host.cpu, host.features), || {
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
            "{} (8 outputs of a grid slice: {:.2} ns with gather instructions, {:.2} ns lane by lane)",
            if hardware * MARGIN < lanes { INSTRUCTIONS } else { "lane by lane" },
            hardware,
            lanes
        ),
    }
}

/// How much faster the instruction must be: near a tie the per-lane form
/// (Halide's) is kept. The measured loop is a real one's shape, so a small
/// margin suffices (an AMD Zen 4: 1.06-1.09 times faster in the loop, 1.1
/// times in bilateral_grid).
const MARGIN: f64 = 1.04;

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

/// Nanoseconds per 8 outputs of a gathering loop, with the instruction and
/// lane by lane (the fastest of several alternating runs each); None
/// without AVX2.
///
/// The loop is the slice of a bilateral grid (8 gathers of a trilinear
/// interpolation at a data-dependent depth, with its index and weight
/// arithmetic in vector registers), not gathers alone: what the lanes cost
/// is their extracts and inserts competing with the loop's other vector
/// work, so a loop that does nothing else favours them (Zen 4: 1.6 times
/// faster than the instruction there, 1.09 times slower here and in
/// bilateral_grid).
#[cfg(target_arch = "x86_64")]
fn measure() -> Option<(f64, f64)> {
    if !avx2_here() {
        return None;
    }
    let grid = x86::Grid::new();
    // A smooth input, as images are: neighbouring lanes mostly share a depth.
    let input: Vec<f32> = (0..x86::OUTPUTS).map(|i| 0.1 + 0.8 * i as f32 / x86::OUTPUTS as f32).collect();
    const REPEATS: usize = 16;
    let time = |f: unsafe fn(&x86::Grid, &[f32]) -> f32| {
        let t = std::time::Instant::now();
        for _ in 0..REPEATS {
            // SAFETY: AVX2 is present (checked above); the input's depths index the grid.
            std::hint::black_box(unsafe { f(std::hint::black_box(&grid), &input) });
        }
        t.elapsed().as_secs_f64() * 1e9 / (x86::OUTPUTS / 8 * REPEATS) as f64
    };
    let (mut hardware, mut lanes) = (f64::MAX, f64::MAX);
    for _ in 0..9 {
        hardware = hardware.min(time(x86::slice_with_instruction));
        lanes = lanes.min(time(x86::slice_lane_by_lane));
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

    /// Outputs per timed call (the grid's width in cells is an eighth of it).
    pub(super) const OUTPUTS: usize = 256;
    const ROW: i32 = 32;
    const LEVEL: i32 = 8 * ROW;
    const LEVELS: i32 = 12;
    /// Depth per unit of input (inputs in [0, 1) reach levels 0..=10).
    const SCALE: f32 = 10.0;

    /// A small grid of `LEVELS` levels of `LEVEL` floats (in the L1 cache).
    pub(super) struct Grid(Vec<f32>);

    impl Grid {
        pub(super) fn new() -> Grid {
            Grid((0..LEVELS * LEVEL).map(|i| (i % 1000) as f32).collect())
        }
    }

    /// One bilateral-grid slice over `input` (whose values are in [0, 1)),
    /// its outputs summed, with `$gather(table, index)` loading each corner.
    macro_rules! slice {
        ($name:ident, $gather:ident) => {
            #[target_feature(enable = "avx2")]
            pub(super) unsafe fn $name(grid: &Grid, input: &[f32]) -> f32 {
                assert!(input.len() >= OUTPUTS && grid.0.len() == (LEVELS * LEVEL) as usize);
                let t = grid.0.as_ptr();
                let scale = _mm256_set1_ps(SCALE);
                let (level, row, next) = (_mm256_set1_epi32(LEVEL), _mm256_set1_epi32(ROW), _mm256_set1_epi32(1));
                let wx = _mm256_setr_ps(0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875);
                let wy = _mm256_set1_ps(0.375);
                let lerp = |a: __m256, b: __m256, w: __m256| _mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(b, a), w));
                let mut acc = _mm256_setzero_ps();
                for i in (0..OUTPUTS).step_by(8) {
                    let z = _mm256_mul_ps(_mm256_loadu_ps(input.as_ptr().add(i)), scale);
                    let zi = _mm256_cvttps_epi32(z);
                    let zf = _mm256_sub_ps(z, _mm256_cvtepi32_ps(zi));
                    let at = _mm256_add_epi32(_mm256_set1_epi32((i / 8) as i32), _mm256_mullo_epi32(zi, level));
                    let corner = |i: __m256i| lerp($gather(t, i), $gather(t, _mm256_add_epi32(i, level)), zf);
                    let a = corner(at);
                    let b = corner(_mm256_add_epi32(at, next));
                    let c = corner(_mm256_add_epi32(at, row));
                    let d = corner(_mm256_add_epi32(at, _mm256_add_epi32(row, next)));
                    let out = lerp(lerp(a, b, wx), lerp(c, d, wx), wy);
                    acc = _mm256_add_ps(acc, out);
                }
                let mut lanes = [0f32; 8];
                _mm256_storeu_ps(lanes.as_mut_ptr(), acc);
                lanes.iter().sum()
            }
        };
    }

    slice!(slice_with_instruction, gather_instruction);
    slice!(slice_lane_by_lane, gather_lanes);

    /// `vgatherdps`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn gather_instruction(t: *const f32, i: __m256i) -> __m256 {
        _mm256_i32gather_ps::<4>(t, i)
    }

    /// Each lane's index extracted from the vector and its element loaded
    /// on its own (the per-lane form `expand_gathers` writes).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn gather_lanes(t: *const f32, i: __m256i) -> __m256 {
        _mm256_setr_ps(
            *t.add(_mm256_extract_epi32::<0>(i) as usize),
            *t.add(_mm256_extract_epi32::<1>(i) as usize),
            *t.add(_mm256_extract_epi32::<2>(i) as usize),
            *t.add(_mm256_extract_epi32::<3>(i) as usize),
            *t.add(_mm256_extract_epi32::<4>(i) as usize),
            *t.add(_mm256_extract_epi32::<5>(i) as usize),
            *t.add(_mm256_extract_epi32::<6>(i) as usize),
            *t.add(_mm256_extract_epi32::<7>(i) as usize),
        )
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
        let grid = x86::Grid::new();
        let input: Vec<f32> = (0..x86::OUTPUTS).map(|i| ((i * 37) % 100) as f32 / 100.0).collect();
        // SAFETY: AVX2 is present; the input's depths index the grid.
        let (a, b) = unsafe { (x86::slice_with_instruction(&grid, &input), x86::slice_lane_by_lane(&grid, &input)) };
        assert_eq!(a, b);
        assert!(a > 0.0);
    }
}
