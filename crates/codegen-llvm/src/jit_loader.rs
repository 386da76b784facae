//! Loading a compiled pipeline's relocatable object into this process
//! (LLVM's ORC LLJIT), whether it was compiled just now or read back from
//! the persistent cache (`jit_cache`): both go through the same loader, so
//! the cached path is the one every compilation exercises.
//!
//! Every ORC operation (loading, a lookup that links, clearing) runs under
//! one process-wide lock, [`serialized`]. LLVM 19's ORC, linking objects of
//! different JITDylibs on several threads at once, now and then handed out
//! an entry point whose callee in a packed sibling object was not mapped
//! (a segfault on the first call, or "Resource tracker ... became defunct"):
//! eight threads compiling small pipelines crashed one run in six. Linking
//! is a fraction of a millisecond, and LLVM's optimization and code
//! generation, the bulk of a compile, still run in parallel.
//!
//! The process has one LLJIT. Each object loads into a JITDylib of its own
//! (so two pipelines of the same name never clash), freed of its code when
//! the [`LoadedObject`] is dropped and then kept for a later object. The
//! JITDylibs are bare: an LLJIT per object, as before, built a target
//! machine of its own and compiled its platform's set-up IR on the first
//! lookup, ~0.5 ms of every pipeline's compile and most of a cached
//! pipeline's load. The object's undefined symbols resolve when it is
//! loaded, through the resolver the caller gives (for pipelines,
//! `runtime_symbols::lookup`: the process's JIT runtime, symbols registered
//! for extern stages, then the C library). Nothing in
//! the object depends on where those live, so the same bytes load in any
//! process.

use std::collections::HashSet;
use std::ffi::{c_void, CStr, CString};
use std::sync::{Condvar, Mutex, OnceLock};

use ferrohalide_core::{Error, Result};
use inkwell::llvm_sys::core::LLVMCreateMemoryBufferWithMemoryRangeCopy;
use inkwell::llvm_sys::error::{
    LLVMConsumeError, LLVMDisposeErrorMessage, LLVMErrorRef, LLVMGetErrorMessage,
};
use inkwell::llvm_sys::orc2::lljit::{
    LLVMOrcCreateLLJIT, LLVMOrcLLJITAddObjectFile, LLVMOrcLLJITGetExecutionSession,
    LLVMOrcLLJITMangleAndIntern, LLVMOrcLLJITRef,
};
use inkwell::llvm_sys::orc2::{
    LLVMJITEvaluatedSymbol, LLVMJITSymbolFlags, LLVMJITSymbolGenericFlags, LLVMOrcAbsoluteSymbols,
    LLVMOrcCJITDylibSearchOrderElement, LLVMOrcCLookupSet, LLVMOrcCLookupSetElement,
    LLVMOrcCSymbolMapPair, LLVMOrcCSymbolMapPairs, LLVMOrcCreateCustomCAPIDefinitionGenerator,
    LLVMOrcDefinitionGeneratorRef, LLVMOrcExecutionSessionCreateBareJITDylib,
    LLVMOrcExecutionSessionLookup, LLVMOrcExecutorAddress, LLVMOrcJITDylibAddGenerator,
    LLVMOrcJITDylibClear, LLVMOrcJITDylibDefine, LLVMOrcJITDylibLookupFlags, LLVMOrcJITDylibRef,
    LLVMOrcLookupKind, LLVMOrcLookupStateRef, LLVMOrcReleaseSymbolStringPoolEntry,
    LLVMOrcRetainSymbolStringPoolEntry, LLVMOrcSymbolLookupFlags, LLVMOrcSymbolStringPoolEntryStr,
};

use crate::jit::init_llvm;

/// How the symbols an object uses resolve to addresses.
pub(crate) type Resolver = fn(&str) -> Result<usize>;

/// The generator's state, one per JITDylib: the resolver of the object
/// loaded there now, and the first symbol that did not resolve (for the
/// error message).
struct Resolution {
    resolve: Mutex<Resolver>,
    unresolved: Mutex<Option<Error>>,
}

/// A JITDylib of the process's LLJIT, with its generator's state (which
/// lives as long as the JITDylib: the process).
struct Dylib {
    jd: LLVMOrcJITDylibRef,
    resolution: &'static Resolution,
}

// SAFETY: ORC allows a JITDylib to be used from any thread; one object
// uses a Dylib at a time.
unsafe impl Send for Dylib {}

/// The process's LLJIT, never disposed (code loaded into it may run until
/// the process exits).
struct Jit(LLVMOrcLLJITRef);

// SAFETY: ORC's LLJIT is thread-safe.
unsafe impl Send for Jit {}
unsafe impl Sync for Jit {}

fn jit() -> Result<LLVMOrcLLJITRef> {
    static JIT: OnceLock<std::result::Result<Jit, String>> = OnceLock::new();
    let jit = JIT.get_or_init(|| {
        init_llvm();
        let mut jit: LLVMOrcLLJITRef = std::ptr::null_mut();
        // SAFETY: a null builder asks for the defaults (this process, the host).
        match unsafe { take_error(LLVMOrcCreateLLJIT(&mut jit, std::ptr::null_mut())) } {
            Some(e) => Err(e),
            None => Ok(Jit(jit)),
        }
    });
    match jit {
        Ok(j) => Ok(j.0),
        Err(e) => Err(Error::internal(format!("cannot create the JIT: {e}"))),
    }
}

/// Run `f` holding the process's ORC lock (see the module comment). The
/// lock is reentrant on one thread: linking a pipeline resolves its
/// runtime symbols from inside ORC's lookup, through a lookup of the
/// runtime's own JITDylib.
pub(crate) fn serialized<R>(f: impl FnOnce() -> R) -> R {
    static LOCK: Mutex<()> = Mutex::new(());
    thread_local!(static HELD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if HELD.get() {
        return f();
    }
    let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    /// Marks the lock held by this thread until dropped (also on unwind).
    struct Held;
    impl Drop for Held {
        fn drop(&mut self) {
            HELD.set(false);
        }
    }
    HELD.set(true);
    let _held = Held;
    f()
}

/// JITDylibs whose objects were dropped, emptied, for the next objects.
fn idle() -> &'static Mutex<Vec<Dylib>> {
    static IDLE: OnceLock<Mutex<Vec<Dylib>>> = OnceLock::new();
    IDLE.get_or_init(Mutex::default)
}

/// An empty JITDylib whose generator resolves through `resolve`.
fn take_dylib(jit: LLVMOrcLLJITRef, resolve: Resolver) -> Dylib {
    let reused = idle().lock().unwrap_or_else(|p| p.into_inner()).pop();
    let dylib = reused.unwrap_or_else(|| {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = CString::new(format!("ferrohalide.{n}")).expect("no NUL");
        let resolution: &'static Resolution = Box::leak(Box::new(Resolution {
            resolve: Mutex::new(resolve),
            unresolved: Mutex::new(None),
        }));
        // SAFETY: `jit` is live; the name is unique in its session. ORC
        // owns the generator, whose context outlives it.
        unsafe {
            let jd = LLVMOrcExecutionSessionCreateBareJITDylib(
                LLVMOrcLLJITGetExecutionSession(jit),
                name.as_ptr(),
            );
            let generator = LLVMOrcCreateCustomCAPIDefinitionGenerator(
                generate,
                resolution as *const Resolution as *mut c_void,
                keep_resolution,
            );
            LLVMOrcJITDylibAddGenerator(jd, generator);
            Dylib { jd, resolution }
        }
    });
    *dylib.resolution.resolve.lock().unwrap_or_else(|p| p.into_inner()) = resolve;
    *dylib.resolution.unresolved.lock().unwrap_or_else(|p| p.into_inner()) = None;
    dylib
}

/// The generator's dispose: its state lives as long as the process.
extern "C" fn keep_resolution(_ctx: *mut c_void) {}

/// Code loaded into the process; freed when dropped.
pub(crate) struct LoadedObject {
    jit: LLVMOrcLLJITRef,
    dylib: Option<Dylib>,
    /// A lookup failed: the JITDylib may hold symbols in an error state,
    /// so it is not used again.
    failed: std::sync::atomic::AtomicBool,
}

// SAFETY: the JITDylib is only used by `lookup` (which ORC allows from any
// thread) and by `drop`; the loaded code itself is immutable.
unsafe impl Send for LoadedObject {}
unsafe impl Sync for LoadedObject {}

impl Drop for LoadedObject {
    fn drop(&mut self) {
        let Some(dylib) = self.dylib.take() else { return };
        // SAFETY: nothing runs this object's code any more (its owner is
        // being dropped); clearing frees the code and the symbols.
        let cleared = serialized(|| unsafe { take_error(LLVMOrcJITDylibClear(dylib.jd)) }).is_none();
        if cleared && !*self.failed.get_mut() {
            idle().lock().unwrap_or_else(|p| p.into_inner()).push(dylib);
        }
    }
}

/// The message of an LLVM error (consuming it); None for success.
unsafe fn take_error(e: LLVMErrorRef) -> Option<String> {
    if e.is_null() {
        return None;
    }
    let m = LLVMGetErrorMessage(e);
    let s = CStr::from_ptr(m).to_string_lossy().into_owned();
    LLVMDisposeErrorMessage(m);
    Some(s)
}

unsafe fn consume(e: LLVMErrorRef) {
    if !e.is_null() {
        LLVMConsumeError(e);
    }
}

/// Defines the symbols ORC asks for (those the object uses and nothing
/// in it defines) as absolute addresses from the object's resolver.
extern "C" fn generate(
    _generator: LLVMOrcDefinitionGeneratorRef,
    ctx: *mut c_void,
    _state: *mut LLVMOrcLookupStateRef,
    _kind: LLVMOrcLookupKind,
    jd: LLVMOrcJITDylibRef,
    _flags: LLVMOrcJITDylibLookupFlags,
    set: LLVMOrcCLookupSet,
    len: usize,
) -> LLVMErrorRef {
    // A panic must not unwind into LLVM: an unresolved symbol is the worst
    // it can cause, reported when the entry point is looked up.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: ORC passes `len` valid entries and the context we gave it.
        let resolution = unsafe { &*(ctx as *const Resolution) };
        let resolve = *resolution.resolve.lock().unwrap_or_else(|p| p.into_inner());
        let mut pairs = Vec::with_capacity(len);
        for i in 0..len {
            let entry = unsafe { &*set.add(i) };
            let name = unsafe { CStr::from_ptr(LLVMOrcSymbolStringPoolEntryStr(entry.Name)) };
            match resolve(&name.to_string_lossy()) {
                Ok(address) => {
                    // LLVMOrcAbsoluteSymbols takes over one reference to the name.
                    unsafe { LLVMOrcRetainSymbolStringPoolEntry(entry.Name) };
                    pairs.push(LLVMOrcCSymbolMapPair {
                        Name: entry.Name,
                        Sym: LLVMJITEvaluatedSymbol {
                            Address: address as LLVMOrcExecutorAddress,
                            Flags: LLVMJITSymbolFlags {
                                GenericFlags: LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsExported
                                    as u8
                                    | LLVMJITSymbolGenericFlags::LLVMJITSymbolGenericFlagsCallable as u8,
                                TargetFlags: 0,
                            },
                        },
                    });
                }
                Err(e) => {
                    let mut u = resolution
                        .unresolved
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    u.get_or_insert(e);
                }
            }
        }
        if !pairs.is_empty() {
            // SAFETY: the pairs hold retained names; ORC owns the unit after.
            unsafe {
                let unit = LLVMOrcAbsoluteSymbols(pairs.as_mut_ptr(), pairs.len());
                consume(LLVMOrcJITDylibDefine(jd, unit));
            }
        }
    });
    std::ptr::null_mut()
}

/// The header of several objects packed into one blob ([`pack_objects`]).
const PACKED_MAGIC: &[u8; 8] = b"FHOBJS\x00\x01";

/// One blob holding `objects` (the partitions of a module compiled on
/// several threads): a single object as it is, several behind a header
/// (magic, count, lengths).
pub(crate) fn pack_objects(mut objects: Vec<Vec<u8>>) -> Vec<u8> {
    if objects.len() == 1 {
        return objects.pop().unwrap_or_default();
    }
    let mut out = PACKED_MAGIC.to_vec();
    out.extend_from_slice(&(objects.len() as u64).to_le_bytes());
    for o in &objects {
        out.extend_from_slice(&(o.len() as u64).to_le_bytes());
    }
    for o in &objects {
        out.extend_from_slice(o);
    }
    out
}

/// The objects in a blob made by [`pack_objects`].
fn unpack_objects(blob: &[u8]) -> Result<Vec<&[u8]>> {
    let Some(rest) = blob.strip_prefix(PACKED_MAGIC) else {
        return Ok(vec![blob]);
    };
    let bad = || Error::internal("a packed JIT object is malformed");
    let word = |at: usize| -> Result<usize> {
        let b = rest.get(at..at + 8).ok_or_else(bad)?;
        usize::try_from(u64::from_le_bytes(b.try_into().map_err(|_| bad())?)).map_err(|_| bad())
    };
    let count = word(0)?;
    let mut at = count
        .checked_add(1)
        .and_then(|n| n.checked_mul(8))
        .ok_or_else(bad)?;
    let mut out = Vec::with_capacity(count.min(64));
    for i in 0..count {
        let len = word(8 * (i + 1))?;
        let end = at.checked_add(len).ok_or_else(bad)?;
        out.push(rest.get(at..end).ok_or_else(bad)?);
        at = end;
    }
    if at != rest.len() {
        return Err(bad());
    }
    Ok(out)
}

/// Load the relocatable object `bytes`, or the objects packed in it
/// ([`pack_objects`]; they link to each other), compiled for this machine
/// with position-independent code; `resolve` gives the addresses of what
/// they use and do not define.
pub(crate) fn load_object(bytes: &[u8], name: &str, resolve: Resolver) -> Result<LoadedObject> {
    serialized(|| load_object_serialized(bytes, name, resolve))
}

fn load_object_serialized(bytes: &[u8], name: &str, resolve: Resolver) -> Result<LoadedObject> {
    let objects = unpack_objects(bytes)?;
    let jit = jit()?;
    let dylib = take_dylib(jit, resolve);
    let jd = dylib.jd;
    let loaded = LoadedObject {
        jit,
        dylib: Some(dylib),
        failed: false.into(),
    };
    let buffer_name = CString::new(name.replace('\0', "")).unwrap_or_default();
    for object in objects {
        // SAFETY: `jit` and `jd` are live; ORC takes ownership of the
        // buffer copy.
        unsafe {
            let buffer = LLVMCreateMemoryBufferWithMemoryRangeCopy(
                object.as_ptr() as *const _,
                object.len(),
                buffer_name.as_ptr(),
            );
            if let Some(e) = take_error(LLVMOrcLLJITAddObjectFile(jit, jd, buffer)) {
                loaded.failed.store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(Error::internal(format!(
                    "cannot load the compiled code of {name}: {e}"
                )));
            }
        }
    }
    Ok(loaded)
}

/// Where `LLVMOrcExecutionSessionLookup` leaves its answer.
#[derive(Default)]
struct LookupResult {
    answer: Mutex<Option<std::result::Result<u64, String>>>,
    ready: Condvar,
}

extern "C" fn on_lookup(err: LLVMErrorRef, pairs: LLVMOrcCSymbolMapPairs, n: usize, ctx: *mut c_void) {
    // SAFETY: `ctx` is the LookupResult `lookup` waits on; ORC passes `n`
    // pairs, or an error it hands over to us.
    let result = unsafe { &*(ctx as *const LookupResult) };
    let answer = match unsafe { take_error(err) } {
        Some(e) => Err(e),
        None if n == 1 => Ok(unsafe { (*pairs).Sym.Address }),
        None => Err(format!("{n} definitions found")),
    };
    *result.answer.lock().unwrap_or_else(|p| p.into_inner()) = Some(answer);
    result.ready.notify_all();
}

impl LoadedObject {
    /// The address of a function the object defines (linking it, and
    /// resolving what it uses, on the first lookup).
    pub(crate) fn lookup(&self, symbol: &str) -> Result<usize> {
        let failed = serialized(|| self.lookup_address(symbol));
        let dylib = self.dylib.as_ref().expect("only a dropped object has none");
        let missing = dylib
            .resolution
            .unresolved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if missing.is_some() || failed.is_err() {
            self.failed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // A symbol that did not resolve fails the lookup even when ORC
        // reports success: with several objects in one dylib, LLVM 19 can
        // hand out the entry point while an object it calls failed to link,
        // and calling it then jumps to an unbound address.
        if let Some(missing) = missing {
            return Err(missing);
        }
        failed.map_err(|e| Error::internal(format!("linking {symbol} failed: {e}")))
    }

    fn lookup_address(&self, symbol: &str) -> std::result::Result<usize, String> {
        let c = CString::new(symbol).map_err(|_| "a symbol name contains NUL".to_string())?;
        let jd = self.dylib.as_ref().expect("only a dropped object has none").jd;
        let result = LookupResult::default();
        // SAFETY: `jit` and `jd` are live; the interned name is released
        // after the lookup (which takes a reference of its own); `result`
        // outlives the lookup, which answers before we return.
        unsafe {
            let name = LLVMOrcLLJITMangleAndIntern(self.jit, c.as_ptr());
            let mut order = [LLVMOrcCJITDylibSearchOrderElement {
                JD: jd,
                JDLookupFlags: LLVMOrcJITDylibLookupFlags::LLVMOrcJITDylibLookupFlagsMatchAllSymbols,
            }];
            let mut set = [LLVMOrcCLookupSetElement {
                Name: name,
                LookupFlags: LLVMOrcSymbolLookupFlags::LLVMOrcSymbolLookupFlagsRequiredSymbol,
            }];
            LLVMOrcExecutionSessionLookup(
                LLVMOrcLLJITGetExecutionSession(self.jit),
                LLVMOrcLookupKind::LLVMOrcLookupKindStatic,
                order.as_mut_ptr(),
                order.len(),
                set.as_mut_ptr(),
                set.len(),
                on_lookup,
                &result as *const LookupResult as *mut c_void,
            );
            LLVMOrcReleaseSymbolStringPoolEntry(name);
        }
        let mut answer = result.answer.lock().unwrap_or_else(|p| p.into_inner());
        while answer.is_none() {
            answer = result.ready.wait(answer).unwrap_or_else(|p| p.into_inner());
        }
        answer.take().expect("answered").map(|a| a as usize)
    }
}

/// The names of the symbols the object `bytes` defines (those in one of
/// its sections; local ones included).
pub(crate) fn defined_symbols(bytes: &[u8]) -> Result<HashSet<String>> {
    use inkwell::llvm_sys::core::{LLVMCreateMemoryBufferWithMemoryRange, LLVMDisposeMemoryBuffer};
    use inkwell::llvm_sys::object::*;
    let mut out = HashSet::new();
    // SAFETY: the buffer borrows `bytes`, which outlive it; every iterator
    // and the binary are disposed before the buffer.
    unsafe {
        let buffer = LLVMCreateMemoryBufferWithMemoryRange(
            bytes.as_ptr() as *const _,
            bytes.len(),
            c"object".as_ptr(),
            0,
        );
        let mut message = std::ptr::null_mut();
        let binary = LLVMCreateBinary(buffer, std::ptr::null_mut(), &mut message);
        if binary.is_null() {
            let m = if message.is_null() {
                String::new()
            } else {
                CStr::from_ptr(message).to_string_lossy().into_owned()
            };
            if !message.is_null() {
                inkwell::llvm_sys::core::LLVMDisposeMessage(message);
            }
            LLVMDisposeMemoryBuffer(buffer);
            return Err(Error::internal(format!("cannot read an object file: {m}")));
        }
        let symbols = LLVMObjectFileCopySymbolIterator(binary);
        let section = LLVMObjectFileCopySectionIterator(binary);
        while LLVMObjectFileIsSymbolIteratorAtEnd(binary, symbols) == 0 {
            LLVMMoveToContainingSection(section, symbols);
            if LLVMObjectFileIsSectionIteratorAtEnd(binary, section) == 0 {
                out.insert(
                    CStr::from_ptr(LLVMGetSymbolName(symbols))
                        .to_string_lossy()
                        .into_owned(),
                );
            }
            LLVMMoveToNextSymbol(symbols);
        }
        LLVMDisposeSectionIterator(section);
        LLVMDisposeSymbolIterator(symbols);
        LLVMDisposeBinary(binary);
        LLVMDisposeMemoryBuffer(buffer);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;
    use inkwell::targets::{CodeModel, FileType, RelocMode, Target, TargetMachine};
    use inkwell::OptimizationLevel;

    /// The host object of the LLVM IR `text`.
    fn object_of(text: &str) -> Vec<u8> {
        init_llvm();
        let context = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "test");
        let module = context.create_module_from_ir(buffer).unwrap();
        let triple = TargetMachine::get_default_triple();
        let machine = Target::from_triple(&triple)
            .unwrap()
            .create_target_machine(
                &triple,
                "",
                "",
                OptimizationLevel::Default,
                RelocMode::PIC,
                CodeModel::Small,
            )
            .unwrap();
        let object = machine
            .write_to_memory_buffer(&module, FileType::Object)
            .unwrap();
        object.as_slice().to_vec()
    }

    #[test]
    fn the_helpers_of_128_bit_division_resolve() {
        let object = object_of(
            "define i64 @quotient(i64 %a, i64 %b) {
               %wa = zext i64 %a to i128
               %big = shl i128 %wa, 64
               %wb = zext i64 %b to i128
               %q = udiv i128 %big, %wb
               %r = lshr i128 %q, 64
               %t = trunc i128 %r to i64
               ret i64 %t
             }",
        );
        let code = load_object(&object, "quotient", crate::runtime_symbols::lookup).unwrap();
        let quotient: extern "C" fn(u64, u64) -> u64 =
            unsafe { std::mem::transmute(code.lookup("quotient").unwrap()) };
        assert_eq!(quotient(1 << 40, 1 << 8), 1 << 32);
    }

    #[test]
    fn an_unresolved_symbol_in_any_packed_object_fails_the_lookup() {
        // The entry point's object links; the object it calls does not.
        // ORC hands out the entry's address anyway: the lookup must fail.
        let entry = object_of(
            "declare i32 @helper(i32)
             define i32 @entry(i32 %x) {
               %y = call i32 @helper(i32 %x)
               ret i32 %y
             }",
        );
        let helper = object_of(
            "declare i32 @no_such_function_anywhere(i32)
             define i32 @helper(i32 %x) {
               %y = call i32 @no_such_function_anywhere(i32 %x)
               ret i32 %y
             }",
        );
        for objects in [vec![entry.clone(), helper.clone()], vec![helper, entry]] {
            let code = load_object(
                &pack_objects(objects),
                "entry",
                crate::runtime_symbols::lookup,
            )
            .unwrap();
            let e = code.lookup("entry").unwrap_err();
            assert!(e.to_string().contains("no_such_function_anywhere"), "{e}");
        }
    }

    #[test]
    fn objects_defining_the_same_name_load_side_by_side_and_their_dylibs_are_reused() {
        let one = object_of("define i32 @value() { ret i32 1 }");
        let two = object_of("define i32 @value() { ret i32 2 }");
        let call = |code: &LoadedObject| {
            let f: extern "C" fn() -> i32 = unsafe { std::mem::transmute(code.lookup("value").unwrap()) };
            f()
        };
        // Dropped objects' JITDylibs serve the next ones, emptied.
        for _ in 0..4 {
            let a = load_object(&one, "value", crate::runtime_symbols::lookup).unwrap();
            let b = load_object(&two, "value", crate::runtime_symbols::lookup).unwrap();
            assert_eq!((call(&b), call(&a)), (2, 1));
        }
    }

    #[test]
    fn packed_objects_unpack_to_themselves() {
        let one = vec![0x7f, b'E', b'L', b'F', 1, 2, 3];
        assert_eq!(
            unpack_objects(&pack_objects(vec![one.clone()])).unwrap(),
            vec![&one[..]]
        );
        let parts = vec![one.clone(), vec![], vec![9; 100]];
        let packed = pack_objects(parts.clone());
        let back: Vec<Vec<u8>> = unpack_objects(&packed)
            .unwrap()
            .into_iter()
            .map(|s| s.to_vec())
            .collect();
        assert_eq!(back, parts);
        // Truncated or padded blobs are refused, never read past their end.
        for bad in [&packed[..packed.len() - 1], &packed[..20]] {
            assert!(unpack_objects(bad).is_err());
        }
        let mut longer = packed.clone();
        longer.push(0);
        assert!(unpack_objects(&longer).is_err());
        let mut huge = packed.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(unpack_objects(&huge).is_err());
    }
}
