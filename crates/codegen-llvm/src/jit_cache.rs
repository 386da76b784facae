//! The persistent JIT cache: the machine code of a lowered pipeline,
//! compiled once, is read back by later processes instead of compiled
//! again (Halide's JIT has no such cache; its users asked for one in
//! Halide issue #5605).
//!
//! - Key: a BLAKE3 hash of everything that decides the code: this build
//!   of ferrohalide (`FERROHALIDE_BUILD_ID`, a hash of its sources), the
//!   LLVM version, the target CPU and features, and the complete encoding
//!   of the lowered pipeline (`ir::fingerprint`). A pipeline that differs
//!   in anything code generation reads gets another key. The JIT runtime,
//!   which each process otherwise compiles on first use, is cached too.
//! - Where: `$FERROHALIDE_CACHE_DIR`, else `$XDG_CACHE_HOME/ferrohalide`,
//!   else `~/.cache/ferrohalide`; entries live in its `jit` folder.
//!   `FERROHALIDE_CACHE_DIR=off` (or empty) disables the cache. The
//!   entries are code this process runs: the folder is created private
//!   (0700, files 0600), and a folder another user owns, or that others
//!   can write to, is not used (with one warning).
//! - Integrity: an entry holds a magic number, its key, the object's
//!   length and the object's BLAKE3 hash. Anything that does not check out
//!   (a truncated or corrupt file, another key) is deleted and the
//!   pipeline compiled again; it is never loaded.
//! - Concurrency: an entry is written to a private temporary file and
//!   renamed into place, so readers see a whole entry or none.
//! - Size: entries beyond `FERROHALIDE_CACHE_SIZE_MB` (default 512) go,
//!   least recently used first (a hit refreshes an entry's time). Finding
//!   them reads the whole folder, ~110 ms for the ~40,000 small entries
//!   512 MB holds, so a write scans with a probability proportional to its
//!   size: across all processes sharing the folder, about once per 1/32 of
//!   the limit written, and always when one entry is that large.
//!
//! - Front-end entries (`.f`): keyed on the pipeline as the user wrote it
//!   (`serialize::write_key`: definitions, schedules, Parameters' ranges and
//!   constraints, bound Buffers' layouts) plus the target and build, they
//!   hold the object together with what running it needs (arguments, output
//!   regions, inputs by name, warnings lowering gave), so a fresh process
//!   skips lowering too. `FERROHALIDE_CACHE_VERIFY=1` lowers anyway on each
//!   hit and fails if the lowered pipeline's key differs from the stored one
//!   (the test suite and the fuzzer run with it).
//!
//! - Machine facts (`.m`): what a process measured about this machine and
//!   put into the target (whether gather instructions pay off), stored
//!   once so that every process sharing the folder agrees on its keys.
//!   They are not evicted.
//!
//! A cache that cannot be read or written only costs time: failures fall
//! back to compiling and are reported with `HL_DEBUG_CODEGEN=1`.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use ferrohalide_core::ir::fingerprint::Fingerprint;
use ferrohalide_core::lower::{LoweredArgument, LoweredPipeline};
use ferrohalide_core::Result;
use inkwell::llvm_sys::blake3::{
    llvm_blake3_hasher, llvm_blake3_hasher_finalize, llvm_blake3_hasher_init, llvm_blake3_hasher_update,
};

use crate::jit::debug_level;
use crate::target::JitTarget;

const MAGIC: &[u8; 8] = b"FHJIT\x00\x00\x01";
const HEADER: usize = 8 + 32 + 8 + 32;
const DEFAULT_SIZE_MB: f64 = 512.0;
/// Temporary files older than this were left by a process that died.
const STALE_TEMPORARY: Duration = Duration::from_secs(600);

pub type Digest = [u8; 32];

fn blake3(parts: &[&[u8]]) -> Digest {
    // SAFETY: the hasher is a plain struct LLVM initializes; the slices
    // are valid for their lengths.
    unsafe {
        let mut h: llvm_blake3_hasher = std::mem::zeroed();
        llvm_blake3_hasher_init(&mut h);
        for p in parts {
            llvm_blake3_hasher_update(&mut h, p.as_ptr() as *const _, p.len());
        }
        let mut out = [0u8; 32];
        llvm_blake3_hasher_finalize(&mut h, out.as_mut_ptr(), out.len());
        out
    }
}

fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn llvm_version() -> (u32, u32, u32) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: writes three integers.
    unsafe { inkwell::llvm_sys::core::LLVMGetVersion(&mut a, &mut b, &mut c) };
    (a, b, c)
}

/// A key: what `describe` writes, after what every entry depends on
/// (this build, the LLVM version, the code generator's stress mode and
/// LLVM options given through the environment).
fn key(kind: &str, describe: impl FnOnce(&mut Fingerprint)) -> Digest {
    let mut f = Fingerprint::new();
    f.str(kind);
    f.str(env!("FERROHALIDE_BUILD_ID"));
    let (a, b, c) = llvm_version();
    f.str(&format!("LLVM {a}.{b}.{c}"));
    f.u64(crate::jit::stress_codegen() as u64);
    for knob in ["FERROHALIDE_LLVM_ARGS", "FERROHALIDE_LLVM_PIPELINE"] {
        f.str(&std::env::var(knob).unwrap_or_default());
    }
    describe(&mut f);
    blake3(&[&f.bytes])
}

/// The key of the code `p` compiles to for `target`.
pub fn pipeline_key(p: &LoweredPipeline, target: &JitTarget) -> Digest {
    key("ferrohalide JIT pipeline", |f| {
        let JitTarget { cpu, features, max_buffer_size } = target;
        f.str(cpu);
        f.str(features);
        f.u64(*max_buffer_size);
        let LoweredPipeline { name, args, body } = p;
        f.str(name);
        f.u64(args.len() as u64);
        for arg in args {
            let LoweredArgument { name, kind, ty, dimensions, estimates } = arg;
            f.str(name);
            f.debug(kind);
            f.ty(*ty);
            f.u64(*dimensions as u64);
            f.debug(estimates);
        }
        f.stmt(body);
    })
}

/// The key of a pipeline's front-end entry: `pipeline` is its
/// `serialize::write_key` encoding, `options` what else lowering reads
/// (the Halide target string, whether entry checks are made).
pub fn frontend_key(pipeline: &[u8], options: &str, target: &JitTarget) -> Digest {
    key("ferrohalide JIT front end", |f| {
        let JitTarget { cpu, features, max_buffer_size } = target;
        f.str(cpu);
        f.str(features);
        f.u64(*max_buffer_size);
        f.str(options);
        f.u64(pipeline.len() as u64);
        f.bytes.extend_from_slice(pipeline);
    })
}

/// The payload of the front-end entry for `key`, if there is a whole one.
pub fn read_frontend_entry(key: &Digest) -> Option<Vec<u8>> {
    let dir = cache_dir()?;
    let path = dir.join(format!("{}.f", hex(key)));
    if !path.exists() {
        return None;
    }
    let payload = read_entry(&path, key)?;
    let _ = fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(SystemTime::now()));
    Some(payload)
}

/// Store `payload` as the front-end entry for `key` (failures only cost time).
pub fn write_frontend_entry(key: &Digest, payload: &[u8]) {
    let Some(dir) = cache_dir() else { return };
    let path = dir.join(format!("{}.f", hex(key)));
    if let Err(e) = write_entry(&dir, &path, key, payload) {
        debug(&format!("cannot write {}: {e}", path.display()));
    }
    evict_after_writing(&dir, payload.len());
}

/// A fact about this machine that `measure` finds, measured once per
/// machine and cache folder: every process sharing the folder then uses
/// the first measurement stored, so all compute the same keys (a fact
/// that went into the target, measured again by each process, could come
/// out differently under load and make processes miss each other's
/// entries). `machine` names what the fact depends on (the host CPU and
/// its features); a folder shared between machines keeps one per machine.
/// Without a cache folder, `measure` runs every time.
pub(crate) fn machine_fact(name: &str, machine: &str, measure: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    let Some(dir) = cache_dir() else {
        return measure();
    };
    let key = key("ferrohalide machine fact", |f| {
        f.str(name);
        f.str(machine);
    });
    let path = dir.join(format!("{}.m", hex(&key)));
    if path.exists() {
        if let Some(fact) = read_entry(&path, &key) {
            return fact;
        }
    }
    let fact = measure();
    // The first process to store the fact wins: a hard link fails if the
    // entry exists, and the loser takes the winner's fact.
    match write_entry_with(&dir, &key, &fact, |tmp| fs::hard_link(tmp, &path)) {
        Ok(()) => fact,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_entry(&path, &key).unwrap_or(fact),
        Err(e) => {
            debug(&format!("cannot write {}: {e}", path.display()));
            fact
        }
    }
}

/// Is the persistent cache in use (a usable folder, not turned off)?
pub fn enabled() -> bool {
    cache_dir().is_some()
}

/// Is `FERROHALIDE_CACHE_VERIFY` set: check every front-end hit by lowering?
pub fn verify_frontend_hits() -> bool {
    std::env::var("FERROHALIDE_CACHE_VERIFY").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The key of the JIT runtime's code for a target triple (the runtime's
/// source is part of the build identity).
pub(crate) fn runtime_key(triple: &str) -> Digest {
    key("ferrohalide JIT runtime", |f| f.str(triple))
}

fn debug(msg: &str) {
    if debug_level() >= 1 {
        eprintln!("JIT cache: {msg}");
    }
}

/// The cache folder, created if needed; None if the cache is off or the
/// folder is not safe to run code from.
fn cache_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("FERROHALIDE_CACHE_DIR") {
        Some(v) if v.is_empty() || v == "off" => return None,
        Some(v) => PathBuf::from(v),
        None => match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
            Some(x) if x.is_absolute() => x.join("ferrohalide"),
            _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache").join("ferrohalide"),
        },
    };
    let dir = base.join("jit");
    if let Err(e) = fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir) {
        debug(&format!("cannot create {}: {e}", dir.display()));
        return None;
    }
    match private_to_this_user(&dir) {
        Ok(()) => Some(dir),
        Err(why) => {
            static WARNED: AtomicBool = AtomicBool::new(false);
            if !WARNED.swap(true, Ordering::Relaxed) {
                eprintln!("ferrohalide: not using the JIT cache in {}: {why}", dir.display());
            }
            None
        }
    }
}

extern "C" {
    fn geteuid() -> u32;
}

fn private_to_this_user(dir: &Path) -> std::result::Result<(), String> {
    let m = fs::metadata(dir).map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { geteuid() };
    if m.uid() != me {
        return Err(format!("it belongs to user {}, not to this user ({me})", m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!("other users can write to it (mode {:o})", m.mode() & 0o777));
    }
    Ok(())
}

/// The object with key `key`: from the cache, or from `compile` (then
/// stored).
pub(crate) fn object_for(key: Digest, compile: impl FnOnce() -> Result<Vec<u8>>) -> Result<Vec<u8>> {
    let Some(dir) = cache_dir() else {
        return compile();
    };
    let t = std::time::Instant::now();
    let path = dir.join(format!("{}.o", hex(&key)));
    if let Some(object) = read_entry(&path, &key) {
        // Refresh the time eviction goes by.
        let _ = fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(SystemTime::now()));
        crate::jit::debug_time("JIT cache hit", t);
        return Ok(object);
    }
    crate::jit::debug_time("JIT cache miss", t);
    let object = compile()?;
    if let Err(e) = write_entry(&dir, &path, &key, &object) {
        debug(&format!("cannot write {}: {e}", path.display()));
    }
    evict_after_writing(&dir, object.len());
    Ok(object)
}

/// The object in the entry at `path`, if the entry is whole and for
/// `key`; an entry that is not is removed.
fn read_entry(path: &Path, key: &Digest) -> Option<Vec<u8>> {
    let bytes = fs::read(path).ok()?;
    let valid = bytes.len() >= HEADER
        && &bytes[..8] == MAGIC
        && bytes[8..40] == key[..]
        && u64::from_le_bytes(bytes[40..48].try_into().ok()?) == (bytes.len() - HEADER) as u64
        && blake3(&[&bytes[HEADER..]])[..] == bytes[48..80];
    if !valid {
        debug(&format!("{} is damaged; removed", path.display()));
        let _ = fs::remove_file(path);
        return None;
    }
    Some(bytes[HEADER..].to_vec())
}

fn write_entry(dir: &Path, path: &Path, key: &Digest, object: &[u8]) -> std::io::Result<()> {
    write_entry_with(dir, key, object, |tmp| fs::rename(tmp, path))
}

/// Write an entry to a private temporary file, then `publish` it (a rename
/// or a link into place), so readers see a whole entry or none. The
/// temporary file is gone afterwards.
fn write_entry_with(
    dir: &Path,
    key: &Digest,
    object: &[u8],
    publish: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(key)?;
        f.write_all(&(object.len() as u64).to_le_bytes())?;
        f.write_all(&blake3(&[object]))?;
        f.write_all(object)?;
        drop(f);
        publish(&tmp)
    })();
    let _ = fs::remove_file(&tmp);
    result
}

fn size_limit() -> u64 {
    let mb = std::env::var("FERROHALIDE_CACHE_SIZE_MB")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .unwrap_or(DEFAULT_SIZE_MB);
    (mb * 1024.0 * 1024.0) as u64
}

/// After writing an entry of `written` bytes: now and then (see the
/// module comment), `evict`.
fn evict_after_writing(dir: &Path, written: usize) {
    let every = (size_limit() / 32).max(1);
    if scan_due(written as u64, every, random_u64()) {
        evict(dir);
    }
}

/// Whether a write of `written` bytes scans, given a scan is due about
/// every `every` bytes written and `random`, a uniformly random number.
fn scan_due(written: u64, every: u64, random: u64) -> bool {
    written >= every || random % every < written
}

/// A random number (std's per-process random hash keys, which differ at
/// every call).
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

/// Remove the least recently used entries beyond the size limit, and
/// temporary files that a dead process left.
fn evict(dir: &Path) {
    let Ok(list) = fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    let mut entries = Vec::new();
    for e in list.flatten() {
        let Ok(m) = e.metadata() else { continue };
        let name = e.file_name().to_string_lossy().into_owned();
        let modified = m.modified().unwrap_or(now);
        if name.starts_with(".tmp-") {
            if now.duration_since(modified).unwrap_or_default() > STALE_TEMPORARY {
                let _ = fs::remove_file(e.path());
            }
        } else if name.ends_with(".o") || name.ends_with(".f") {
            entries.push((modified, m.len(), e.path()));
        }
    }
    let limit = size_limit();
    let mut total: u64 = entries.iter().map(|e| e.1).sum();
    if total <= limit {
        return;
    }
    entries.sort();
    for (_, len, path) in entries {
        if total <= limit {
            break;
        }
        if fs::remove_file(&path).is_ok() {
            debug(&format!("evicted {}", path.display()));
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_scans_for_eviction_with_probability_in_proportion_to_its_size() {
        // An entry as large as the interval always scans (so a small limit
        // is kept exactly).
        assert!(scan_due(1000, 1000, 999) && scan_due(5000, 1000, 0));
        // A smaller one scans for `written` of every `every` random values.
        let hits = (0..10_000u64).filter(|&r| scan_due(250, 1000, r)).count();
        assert_eq!(hits, 2_500);
        let draws = (0..20_000).filter(|_| scan_due(100, 1000, random_u64())).count();
        assert!((1_400..2_600).contains(&draws), "{draws} scans of 20,000 at 10%");
    }
}
