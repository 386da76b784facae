//! The runtime links into plain C programs: the host runtime module
//! (`runtime_module`) is written as an object file, and C programs compiled
//! with the system C compiler against the project's HalideRuntime.h call
//! it: parallel loops (nested, failing), memory, errors that do not abort,
//! the string builder, and replacing a weak runtime function by the
//! program's own definition.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ferrohalide_codegen_llvm::runtime_module;
use inkwell::context::Context;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetTriple,
};
use inkwell::OptimizationLevel;

const TRIPLE: &str = "x86_64-unknown-linux-gnu";

fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ferrohalide_{name}_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The host runtime as a position-independent object file.
fn runtime_object(dir: &Path) -> PathBuf {
    Target::initialize_x86(&InitializationConfig::default());
    let ctx = Context::create();
    let module = runtime_module(&ctx, TRIPLE).unwrap();
    let triple = TargetTriple::create(TRIPLE);
    let machine = Target::from_triple(&triple)
        .unwrap()
        .create_target_machine(
            &triple,
            "x86-64",
            "",
            OptimizationLevel::Default,
            RelocMode::PIC,
            CodeModel::Default,
        )
        .unwrap();
    let path = dir.join("runtime.o");
    machine
        .write_to_file(&module, FileType::Object, &path)
        .unwrap();
    path
}

/// Compile `source` with the runtime object and run it.
fn build_and_run(name: &str, source: &str) -> Output {
    let dir = scratch_dir(name);
    let object = runtime_object(&dir);
    let src = dir.join("main.c");
    let exe = dir.join("main");
    std::fs::write(&src, source).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/include");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(cc)
        .args(["-std=c11", "-O1", "-Wall", "-Werror", "-I"])
        .arg(&include)
        .arg(&src)
        .arg(&object)
        .arg("-o")
        .arg(&exe)
        .args(["-lpthread", "-lm"])
        .status()
        .expect("a C compiler (cc)");
    assert!(status.success(), "compiling {} failed", src.display());
    // The thread count comes from the environment until the program sets it.
    let out = Command::new(&exe)
        .env("HL_NUM_THREADS", "3")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

const CALLS: &str = r#"
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "HalideRuntime.h"

#define CHECK(c) do { if (!(c)) { printf("FAILED line %d: %s\n", __LINE__, #c); return 1; } } while (0)

static int add_index(void *uc, int i, uint8_t *closure) {
    __atomic_fetch_add((long *)closure, i, __ATOMIC_RELAXED);
    return i == 37 ? -7 : 0;
}
static int inner(void *uc, int i, uint8_t *closure) {
    __atomic_fetch_add((long *)closure, i + 1, __ATOMIC_RELAXED);
    return 0;
}
static int outer(void *uc, int i, uint8_t *closure) {
    return halide_do_par_for(uc, inner, 0, 10, closure);
}
static int count_once(void *uc, int i, uint8_t *closure) {
    __atomic_fetch_add(&((int *)closure)[i], 1, __ATOMIC_RELAXED);
    return 0;
}
/* The owner runs out of iterations long before this ends (beyond its
 * spin): it sleeps, and the thread finishing the loop wakes it. */
static int slow_last(void *uc, int i, uint8_t *closure) {
    if (i == 63) {
        struct timespec t = {0, 2000000};
        nanosleep(&t, NULL);
    }
    return count_once(uc, i, closure);
}

int main(void) {
    CHECK(halide_get_num_threads() == 3);
    long sum = 0;
    /* The first failing task's code comes back. */
    CHECK(halide_do_par_for(NULL, add_index, 0, 100, (uint8_t *)&sum) == -7);
    long nested = 0;
    for (int k = 0; k < 20; k++) {
        CHECK(halide_do_par_for(NULL, outer, 0, 16, (uint8_t *)&nested) == 0);
    }
    CHECK(nested == 20 * 16 * 55);
    /* Tiny loops back to back: every iteration runs exactly once, and
     * each loop returns only after all of them (the owner spinning, or
     * asleep for a slow one). */
    static int counts[64];
    for (int k = 0; k < 20000; k++) {
        CHECK(halide_do_par_for(NULL, k % 1000 == 999 ? slow_last : count_once, 0, 64, (uint8_t *)counts) == 0);
        for (int i = 0; i < 64; i++) {
            CHECK(counts[i] == k + 1);
        }
    }
    /* Every size, fewer iterations than threads included: each loop is
     * cut into one range per thread, and each iteration runs once. */
    for (int size = 1; size <= 64; size++) {
        memset(counts, 0, sizeof counts);
        CHECK(halide_do_par_for(NULL, count_once, 0, size, (uint8_t *)counts) == 0);
        for (int i = 0; i < 64; i++) {
            CHECK(counts[i] == (i < size ? 1 : 0));
        }
    }
    CHECK(halide_set_num_threads(2) == 3);
    CHECK(halide_get_num_threads() == 2);
    sum = 0;
    CHECK(halide_do_par_for(NULL, inner, 5, 1000, (uint8_t *)&sum) == 0);
    CHECK(sum == 1000 * 1001 / 2 + 5 * 1000);
    halide_shutdown_thread_pool();
    sum = 0;
    CHECK(halide_do_par_for(NULL, inner, 0, 100, (uint8_t *)&sum) == 0);
    CHECK(sum == 5050);

    void *p = halide_malloc(NULL, 1000);
    CHECK(p != NULL && (uintptr_t)p % 64 == 0);
    memset(p, 1, 1000);
    halide_free(NULL, p);
    halide_free(NULL, NULL);
    /* A thread's freed block comes back for a request it holds without
     * wasting more than 4x; not while in use, not when too small. */
    void *a = halide_malloc(NULL, 20000);
    halide_free(NULL, a);
    void *b = halide_malloc(NULL, 20000);
    CHECK(b == a);
    void *c = halide_malloc(NULL, 10000);
    CHECK(c != b);
    halide_free(NULL, c);
    halide_free(NULL, b);
    void *e = halide_malloc(NULL, 30000);
    CHECK(e != b);
    halide_free(NULL, e);
    void *f = halide_malloc(NULL, 100);
    CHECK(f != e);
    halide_free(NULL, f);
    /* A thread keeps several freed blocks: the smallest that suits a
     * request comes back. */
    void *s1 = halide_malloc(NULL, 300000), *s2 = halide_malloc(NULL, 600000);
    void *s3 = halide_malloc(NULL, 900000);
    halide_free(NULL, s1);
    halide_free(NULL, s2);
    halide_free(NULL, s3);
    void *t3 = halide_malloc(NULL, 800000), *t1 = halide_malloc(NULL, 250000);
    void *t2 = halide_malloc(NULL, 500000);
    CHECK(t3 == s3 && t1 == s1 && t2 == s2);
    halide_free(NULL, t1);
    halide_free(NULL, t2);
    halide_free(NULL, t3);
    /* At most 4 MB in all: of five 1 MB blocks, the four freed last come
     * back. */
    void *m[5], *n[4];
    for (int i = 0; i < 5; i++) {
        m[i] = halide_malloc(NULL, 1 << 20);
    }
    for (int i = 0; i < 5; i++) {
        halide_free(NULL, m[i]);
    }
    for (int i = 0; i < 4; i++) {
        n[i] = halide_malloc(NULL, 1 << 20);
        int found = 0;
        for (int j = 1; j < 5; j++) {
            found |= n[i] == m[j];
        }
        CHECK(found);
    }
    for (int i = 0; i < 4; i++) {
        halide_free(NULL, n[i]);
    }
    /* Large blocks (over 1 MB) freed by any thread serve a later request
     * that uses at least half of one: the smallest that fits comes back. */
    void *big1 = halide_malloc(NULL, 8 << 20);
    void *big2 = halide_malloc(NULL, 3 << 20);
    CHECK(big1 && big2 && (uintptr_t)big1 % 64 == 0 && (uintptr_t)big2 % 64 == 0);
    memset(big1, 1, 8 << 20);
    halide_free(NULL, big1);
    halide_free(NULL, big2);
    void *big3 = halide_malloc(NULL, 2 << 20);
    CHECK(big3 == big2);
    void *big4 = halide_malloc(NULL, 2 << 20);
    CHECK(big4 != big1 && big4 != big2);
    void *big5 = halide_malloc(NULL, 7 << 20);
    CHECK(big5 == big1);
    halide_free(NULL, big3);
    halide_free(NULL, big4);
    halide_free(NULL, big5);
    /* What is held is bounded: 40 blocks of 20 MB come and go. */
    void *many[40];
    for (int i = 0; i < 40; i++) {
        many[i] = halide_malloc(NULL, 20 << 20);
        CHECK(many[i] != NULL);
    }
    for (int i = 0; i < 40; i++) {
        halide_free(NULL, many[i]);
    }
    void *again = halide_malloc(NULL, 20 << 20);
    CHECK(again != NULL);
    halide_free(NULL, again);

    /* An error is reported, kept, and the program goes on. */
    halide_error(NULL, "something failed\n");
    char msg[64];
    CHECK(ferrohalide_last_error_message(msg, sizeof msg) == strlen("something failed"));
    CHECK(strcmp(msg, "something failed") == 0);
    CHECK(ferrohalide_last_error_message(msg, 5) == 16 && strcmp(msg, "some") == 0);
    ferrohalide_clear_last_error();
    CHECK(ferrohalide_last_error_message(msg, sizeof msg) == 0 && msg[0] == 0);

    char text[64];
    char *end = text + sizeof text;
    char *d = halide_int64_to_string(text, end, -42, 1);
    d = halide_string_to_string(d, end, " ");
    d = halide_uint64_to_string(d, end, 7, 3);
    d = halide_string_to_string(d, end, " ");
    d = halide_double_to_string(d, end, 1.5, 0);
    d = halide_string_to_string(d, end, " ");
    d = halide_double_to_string(d, end, 1.0 / 3.0, 1);
    d = halide_string_to_string(d, end, " ");
    d = halide_pointer_to_string(d, end, (void *)0xbeef);
    CHECK(strcmp(text, "-42 007 1.500000 3.333333e-01 0xbeef") == 0);
    /* Output is cut to fit and stays terminated. */
    char small[4];
    CHECK(halide_string_to_string(small, small + 4, "abcdef") == small + 3 && strcmp(small, "abc") == 0);

    CHECK(halide_float16_bits_to_float(0x3c00) == 1.0f);
    CHECK(halide_float16_bits_to_double(0x7bff) == 65504.0);
    CHECK(halide_float16_bits_to_double(0x0001) == 5.9604644775390625e-08);

    struct halide_mutex_array *locks = halide_mutex_array_create(16);
    CHECK(locks != NULL);
    CHECK(halide_mutex_array_lock(locks, 3) == 0 && halide_mutex_array_unlock(locks, 3) == 0);
    halide_mutex_array_destroy(NULL, locks);

    halide_print(NULL, "printed\n");
    halide_shutdown_thread_pool();
    printf("done\n");
    return 0;
}
"#;

#[test]
fn a_c_program_calls_the_runtime_and_survives_an_error() {
    let out = build_and_run("c_runtime_calls", CALLS);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("printed\n") && stdout.ends_with("done\n"), "{stdout}");
    assert_eq!(stderr, "Error: something failed\n");
}

const OVERRIDE: &str = r#"
#include <stdio.h>
#include "HalideRuntime.h"

static int errors;
/* Replaces the runtime's weak halide_error at link time. */
void halide_error(void *user_context, const char *msg) {
    errors++;
    printf("mine: %s\n", msg);
}

int main(void) {
    /* The runtime's own error reports reach the program's halide_error. */
    int old = halide_set_num_threads(-1);
    if (errors != 1 || halide_get_num_threads() != old) {
        return 1;
    }
    return 0;
}
"#;

#[test]
fn a_program_replaces_a_weak_runtime_function() {
    let out = build_and_run("c_runtime_override", OVERRIDE);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.starts_with("mine: halide_set_num_threads"), "{stdout}");
    assert!(out.stderr.is_empty());
}

#[test]
fn the_runtime_module_links_into_a_module_of_its_triple() {
    let ctx = Context::create();
    let host = "x86_64-pc-linux-gnu";
    let module = ctx.create_module("pipeline");
    module.set_triple(&TargetTriple::create(host));
    let runtime = runtime_module(&ctx, host).unwrap();
    assert_eq!(runtime.get_triple().as_str().to_str().unwrap(), host);
    module.link_in_module(runtime).unwrap();
    module.verify().unwrap();
    for name in ["halide_malloc", "halide_error", "halide_do_par_for", "halide_mutex_array_create"] {
        let f = module.get_function(name).unwrap();
        assert!(f.count_basic_blocks() > 0, "{name} is defined");
    }
    let err = runtime_module(&ctx, "riscv64-unknown-linux-gnu").unwrap_err();
    assert!(err.to_string().contains("riscv64-unknown-linux-gnu"), "{err}");
}
