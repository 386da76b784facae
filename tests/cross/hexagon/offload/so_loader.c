/* A loader of ELF32 Hexagon shared objects for the bare-metal harness:
 * see so_loader.h. Built into the same static program as ../harness.c
 * (clang --target=hexagon-unknown-linux-musl -ffreestanding -fno-builtin),
 * whose functions it offers to the objects it loads. */
#include <stddef.h>
#include <stdint.h>

#include "so_loader.h"
#include "stdio.h"
#include "stdlib.h"
#include "string.h"
#include "time.h"

/* ---- system calls ---- */
long hx_syscall(long n, long a, long b, long c, long d, long e, long f) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r4 __asm__("r4") = e;
    register long r5 __asm__("r5") = f;
    register long r6 __asm__("r6") = n;
    __asm__ volatile("trap0(#1)"
                     : "+r"(r0)
                     : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6)
                     : "memory");
    return r0;
}

/* Hexagon Linux has the generic system call table; on a 32-bit machine its
 * number 222 is mmap2 (the offset counted in pages). */
enum { SYS_mmap2 = 222 };
enum { PROT_RWX = 7, MAP_PRIVATE_ANONYMOUS = 0x22 };

/* ---- ELF32 ---- */
typedef struct {
    unsigned char e_ident[16];
    uint16_t e_type, e_machine;
    uint32_t e_version, e_entry, e_phoff, e_shoff, e_flags;
    uint16_t e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx;
} Ehdr;
typedef struct {
    uint32_t p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_flags, p_align;
} Phdr;
typedef struct {
    int32_t d_tag;
    uint32_t d_val;
} Dyn;
typedef struct {
    uint32_t st_name, st_value, st_size;
    unsigned char st_info, st_other;
    uint16_t st_shndx;
} Sym;
typedef struct {
    uint32_t r_offset, r_info;
    int32_t r_addend;
} Rela;

enum { ET_DYN = 3, EM_HEXAGON = 164, PT_LOAD = 1, PT_DYNAMIC = 2 };
enum {
    DT_NULL = 0, DT_PLTRELSZ = 2, DT_HASH = 4, DT_STRTAB = 5, DT_SYMTAB = 6, DT_RELA = 7, DT_RELASZ = 8,
    DT_RELAENT = 9, DT_SYMENT = 11, DT_INIT = 12, DT_REL = 17, DT_RELSZ = 18, DT_PLTREL = 20, DT_JMPREL = 23,
    DT_INIT_ARRAY = 25, DT_INIT_ARRAYSZ = 27, DT_GNU_HASH = 0x6ffffef5,
};
enum { SHN_UNDEF = 0, SHN_ABS = 0xfff1 };
enum { STB_LOCAL = 0, STB_GLOBAL = 1, STB_WEAK = 2 };
enum { STT_TLS = 6 };
enum { R_HEX_NONE = 0, R_HEX_32 = 6, R_HEX_GLOB_DAT = 33, R_HEX_JMP_SLOT = 34, R_HEX_RELATIVE = 35 };

/* ---- the functions the harness provides ---- */
int qurt_hvx_lock(int mode);
int qurt_hvx_unlock(void);
void *HAP_request_VTCM(unsigned size, unsigned single_page);
int HAP_release_VTCM(void *p);
void halide_print(void *user_context, const char *msg);
void halide_error(void *user_context, const char *msg);
void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *dst, const void *src, size_t n);
uint64_t __hexagon_udivdi3(uint64_t n, uint64_t d);
uint64_t __hexagon_umoddi3(uint64_t n, uint64_t d);
int64_t __hexagon_divdi3(int64_t n, int64_t d);
int64_t __hexagon_moddi3(int64_t n, int64_t d);
uint32_t __hexagon_udivsi3(uint32_t n, uint32_t d);
uint32_t __hexagon_umodsi3(uint32_t n, uint32_t d);
int32_t __hexagon_divsi3(int32_t n, int32_t d);
int32_t __hexagon_modsi3(int32_t n, int32_t d);
double __hexagon_adddf3(double a, double b);
double __hexagon_subdf3(double a, double b);
double __hexagon_muldf3(double a, double b);
double __hexagon_divdf3(double a, double b);
float __hexagon_sqrtf(float x);

/* A few more a runtime may ask for, which the harness does not have. */
static int hx_strncmp(const char *a, const char *b, size_t n) {
    for (; n; n--, a++, b++) {
        if (*a != *b || !*a) return (unsigned char)*a - (unsigned char)*b;
    }
    return 0;
}
static void *hx_memalign(size_t alignment, size_t size) {
    /* The harness's malloc returns 128-byte aligned memory and never frees. */
    if (alignment <= 128) return malloc(size);
    uintptr_t p = (uintptr_t)malloc(size + alignment);
    return p ? (void *)((p + alignment - 1) & ~(uintptr_t)(alignment - 1)) : 0;
}
static int hx_posix_memalign(void **out, size_t alignment, size_t size) {
    void *p = hx_memalign(alignment, size);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
static long hx_write(int fd, const void *data, size_t n) { return hx_syscall(64, fd, (long)data, (long)n, 0, 0, 0); }
/* Float division, correctly rounded: a double quotient of two floats,
 * itself correctly rounded, rounds to the correctly rounded float (53 >= 2 * 24 + 2). */
static float hx_divsf3(float a, float b) { return (float)__hexagon_divdf3((double)a, (double)b); }

/* QuRT's threads for a runtime built for it (Halide's own, hexagon-32-qurt),
 * on this machine's one thread: locks and signals do nothing (no other
 * thread holds or waits), a condition wait would wait forever (so it
 * aborts), and a thread cannot be started (so a thread pool's caller does
 * the work itself). */
static void hx_qurt_nothing(void *p) { (void)p; }
static void hx_qurt_cond_wait(void *cond, void *mutex) {
    (void)cond, (void)mutex;
    fprintf(stderr, "qurt_cond_wait: waiting for another thread, and there is none\n");
    abort();
}
static int hx_qurt_thread_create(void *id, void *attr, void (*entry)(void *), void *arg) {
    (void)id, (void)attr, (void)entry, (void)arg;
    return 1; /* QURT_EFAILED */
}
static int hx_qurt_thread_join(unsigned id, int *status) {
    (void)id;
    if (status) *status = 0;
    return 0;
}

struct known {
    const char *name;
    void *addr;
};
#define K(f) {#f, (void *)&f}
static const struct known harness_symbols[] = {
    K(abort), K(exit), K(malloc), K(calloc), K(free), K(memcpy), K(memmove), K(memset), K(memcmp), K(strlen),
    K(strcmp), K(atoi), K(getenv), K(fopen), K(fclose), K(fread), K(fwrite), K(printf), K(fprintf),
    K(stdout), K(stderr), K(clock_gettime), K(qurt_hvx_lock), K(qurt_hvx_unlock), K(HAP_request_VTCM),
    K(HAP_release_VTCM), K(halide_print), K(halide_error),
    K(__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes), K(__hexagon_udivdi3), K(__hexagon_umoddi3),
    K(__hexagon_divdi3), K(__hexagon_moddi3), K(__hexagon_udivsi3), K(__hexagon_umodsi3), K(__hexagon_divsi3),
    K(__hexagon_modsi3), K(__hexagon_adddf3), K(__hexagon_subdf3), K(__hexagon_muldf3), K(__hexagon_divdf3),
    K(__hexagon_sqrtf),
    {"strncmp", (void *)&hx_strncmp}, {"memalign", (void *)&hx_memalign},
    {"posix_memalign", (void *)&hx_posix_memalign}, {"write", (void *)&hx_write},
    {"__hexagon_divsf3", (void *)&hx_divsf3},
    {"qurt_mutex_init", (void *)&hx_qurt_nothing}, {"qurt_mutex_destroy", (void *)&hx_qurt_nothing},
    {"qurt_mutex_lock", (void *)&hx_qurt_nothing}, {"qurt_mutex_unlock", (void *)&hx_qurt_nothing},
    {"qurt_cond_init", (void *)&hx_qurt_nothing}, {"qurt_cond_destroy", (void *)&hx_qurt_nothing},
    {"qurt_cond_signal", (void *)&hx_qurt_nothing}, {"qurt_cond_broadcast", (void *)&hx_qurt_nothing},
    {"qurt_cond_wait", (void *)&hx_qurt_cond_wait}, {"qurt_thread_create", (void *)&hx_qurt_thread_create},
    {"qurt_thread_join", (void *)&hx_qurt_thread_join},
    {0, 0},
};
#undef K

/* ---- loaded objects ---- */
struct object {
    char name[64];
    uint8_t *base; /* where virtual address 0 of the object is */
    const Sym *syms;
    uint32_t nsyms;
    const char *strtab;
};
static struct object objects[16];
static int object_count;

static void fail(const char *soname, const char *what, const char *detail) {
    fprintf(stderr, "hx_load: %s: %s%s\n", soname, what, detail ? detail : "");
}

static uint32_t gnu_hash_symbol_count(const uint32_t *gh) {
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_words = gh[2];
    const uint32_t *buckets = gh + 4 + bloom_words; /* 32-bit bloom words in ELF32 */
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (buckets[i] > last) last = buckets[i];
    if (last < symoffset) return symoffset;
    while (!(chain[last - symoffset] & 1)) last++;
    return last + 1;
}

static int defines(const Sym *s) {
    int bind = s->st_info >> 4;
    return s->st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK);
}

static void *symbol_address(const struct object *o, const Sym *s) {
    return s->st_shndx == SHN_ABS ? (void *)(uintptr_t)s->st_value : o->base + s->st_value;
}

void *hx_sym(void *handle, const char *name) {
    const struct object *o = (const struct object *)handle;
    for (uint32_t i = 1; i < o->nsyms; i++) {
        const Sym *s = &o->syms[i];
        if (defines(s) && strcmp(o->strtab + s->st_name, name) == 0) return symbol_address(o, s);
    }
    return 0;
}

/* The value of symbol `index` of `o` for its relocations: its own
 * definition (DT_SYMBOLIC; local symbols too), else the first definition
 * in the objects loaded before, else the harness's. */
static int resolve(const struct object *o, uint32_t index, uint32_t *value) {
    if (index == 0) {
        *value = 0;
        return 1;
    }
    if (index >= o->nsyms) {
        fail(o->name, "relocation with a bad symbol index", 0);
        return 0;
    }
    const Sym *s = &o->syms[index];
    const char *name = o->strtab + s->st_name;
    if ((s->st_info & 0xf) == STT_TLS) {
        fail(o->name, "thread-local symbol not supported: ", name);
        return 0;
    }
    if (s->st_shndx != SHN_UNDEF) {
        *value = (uint32_t)(uintptr_t)symbol_address(o, s);
        return 1;
    }
    for (int i = 0; i < object_count; i++) {
        void *p = hx_sym(&objects[i], name);
        if (p) {
            *value = (uint32_t)(uintptr_t)p;
            return 1;
        }
    }
    for (const struct known *k = harness_symbols; k->name; k++) {
        if (strcmp(k->name, name) == 0) {
            *value = (uint32_t)(uintptr_t)k->addr;
            return 1;
        }
    }
    if ((s->st_info >> 4) == STB_WEAK) {
        *value = 0;
        return 1;
    }
    fail(o->name, "unresolved symbol ", name);
    return 0;
}

static int relocate(const struct object *o, const Rela *r, uint32_t bytes) {
    for (uint32_t i = 0; i < bytes / sizeof(Rela); i++) {
        uint32_t type = r[i].r_info & 0xff, index = r[i].r_info >> 8, s;
        uint32_t *where = (uint32_t *)(o->base + r[i].r_offset);
        switch (type) {
        case R_HEX_NONE:
            break;
        case R_HEX_RELATIVE:
            *where = (uint32_t)(uintptr_t)o->base + (uint32_t)r[i].r_addend;
            break;
        case R_HEX_32:
        case R_HEX_GLOB_DAT:
        case R_HEX_JMP_SLOT:
            if (!resolve(o, index, &s)) return 0;
            *where = s + (uint32_t)r[i].r_addend;
            break;
        default: {
            char num[12];
            int n = 11;
            num[n] = 0;
            do { num[--n] = (char)('0' + type % 10); type /= 10; } while (type);
            fail(o->name, "unsupported relocation type ", num + n);
            return 0;
        }
        }
    }
    return 1;
}

void *hx_load(const char *soname, const unsigned char *image, int size) {
    const Ehdr *eh = (const Ehdr *)image;
    if (object_count == (int)(sizeof(objects) / sizeof(objects[0]))) {
        fail(soname, "too many objects", 0);
        return 0;
    }
    if (size < (int)sizeof(Ehdr) || memcmp(eh->e_ident, "\177ELF\1\1", 6) != 0) {
        fail(soname, "not a little-endian ELF32 image", 0);
        return 0;
    }
    if (eh->e_type != ET_DYN || eh->e_machine != EM_HEXAGON) {
        fail(soname, "not a Hexagon shared object", 0);
        return 0;
    }
    if (eh->e_phoff + (uint32_t)eh->e_phnum * sizeof(Phdr) > (uint32_t)size) {
        fail(soname, "program headers past the end", 0);
        return 0;
    }
    /* Copy the headers: the image need not be 4-byte aligned. */
    Phdr ph[32];
    int nph = eh->e_phnum;
    if (nph > 32) {
        fail(soname, "too many program headers", 0);
        return 0;
    }
    memcpy(ph, image + eh->e_phoff, nph * sizeof(Phdr));

    uint32_t lo = 0xffffffffu, hi = 0, dyn_vaddr = 0;
    int has_dynamic = 0;
    for (int i = 0; i < nph; i++) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_memsz) {
            if (ph[i].p_vaddr < lo) lo = ph[i].p_vaddr;
            if (ph[i].p_vaddr + ph[i].p_memsz > hi) hi = ph[i].p_vaddr + ph[i].p_memsz;
            if (ph[i].p_filesz > ph[i].p_memsz || ph[i].p_offset + ph[i].p_filesz > (uint32_t)size) {
                fail(soname, "a PT_LOAD segment past the end of the image", 0);
                return 0;
            }
        } else if (ph[i].p_type == PT_DYNAMIC) {
            dyn_vaddr = ph[i].p_vaddr;
            has_dynamic = 1;
        }
    }
    if (hi == 0 || !has_dynamic) {
        fail(soname, "no PT_LOAD or no PT_DYNAMIC segment", 0);
        return 0;
    }
    lo &= ~4095u;
    uint32_t span = (hi - lo + 4095u) & ~4095u;
    long map = hx_syscall(SYS_mmap2, 0, (long)span, PROT_RWX, MAP_PRIVATE_ANONYMOUS, -1, 0);
    if (map < 0 && map > -4096) {
        fail(soname, "mmap failed", 0);
        return 0;
    }

    struct object *o = &objects[object_count];
    memset(o, 0, sizeof(*o));
    size_t name_len = strlen(soname);
    if (name_len >= sizeof(o->name)) name_len = sizeof(o->name) - 1;
    memcpy(o->name, soname, name_len);
    o->base = (uint8_t *)map - lo;
    for (int i = 0; i < nph; i++) {
        if (ph[i].p_type != PT_LOAD) continue;
        memcpy(o->base + ph[i].p_vaddr, image + ph[i].p_offset, ph[i].p_filesz);
        memset(o->base + ph[i].p_vaddr + ph[i].p_filesz, 0, ph[i].p_memsz - ph[i].p_filesz);
    }

    uint32_t rela = 0, relasz = 0, jmprel = 0, pltrelsz = 0, pltrel = DT_RELA, relsz = 0, init = 0,
             init_array = 0, init_arraysz = 0, hash = 0, gnu_hash = 0, symtab = 0, strtab = 0;
    for (const Dyn *d = (const Dyn *)(o->base + dyn_vaddr); d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_RELA: rela = d->d_val; break;
        case DT_RELASZ: relasz = d->d_val; break;
        case DT_JMPREL: jmprel = d->d_val; break;
        case DT_PLTRELSZ: pltrelsz = d->d_val; break;
        case DT_PLTREL: pltrel = d->d_val; break;
        case DT_RELSZ: relsz = d->d_val; break;
        case DT_INIT: init = d->d_val; break;
        case DT_INIT_ARRAY: init_array = d->d_val; break;
        case DT_INIT_ARRAYSZ: init_arraysz = d->d_val; break;
        case DT_HASH: hash = d->d_val; break;
        case DT_GNU_HASH: gnu_hash = d->d_val; break;
        case DT_SYMTAB: symtab = d->d_val; break;
        case DT_STRTAB: strtab = d->d_val; break;
        case DT_SYMENT:
            if (d->d_val != sizeof(Sym)) { fail(soname, "unexpected DT_SYMENT", 0); return 0; }
            break;
        case DT_RELAENT:
            if (d->d_val != sizeof(Rela)) { fail(soname, "unexpected DT_RELAENT", 0); return 0; }
            break;
        default: break;
        }
    }
    if (relsz || (pltrelsz && pltrel != DT_RELA)) {
        fail(soname, "REL relocations are not supported (only RELA)", 0);
        return 0;
    }
    if (!symtab || !strtab || (!hash && !gnu_hash)) {
        fail(soname, "no DT_SYMTAB, DT_STRTAB or hash table", 0);
        return 0;
    }
    o->syms = (const Sym *)(o->base + symtab);
    o->strtab = (const char *)(o->base + strtab);
    o->nsyms = hash ? ((const uint32_t *)(o->base + hash))[1]
                    : gnu_hash_symbol_count((const uint32_t *)(o->base + gnu_hash));

    if (!relocate(o, (const Rela *)(o->base + rela), rela ? relasz : 0)) return 0;
    if (!relocate(o, (const Rela *)(o->base + jmprel), jmprel ? pltrelsz : 0)) return 0;

    /* Loaded: later objects may use its symbols, and its initializers may
     * look itself up. */
    object_count++;
    if (init) ((void (*)(void))(o->base + init))();
    for (uint32_t i = 0; i < init_arraysz / 4; i++) {
        uint32_t f = ((const uint32_t *)(o->base + init_array))[i];
        if (f && f != 0xffffffffu) ((void (*)(void))(uintptr_t)f)();
    }
    return o;
}
