/* Which target features this CPU can run, for the wrapper of a
 * multi-target object (it calls halide_can_use_target_features to pick the
 * first of its targets whose code is safe here).
 *
 * A feature is "known" if this file can tell whether the CPU has it; code
 * asking for a feature that is not known is assumed to run (Halide's rule).
 * On x86-64 the answer comes from CPUID, and AVX-class features also need
 * the operating system to save the wider registers (XGETBV), so a virtual
 * machine that masks them is never sent into code that would fault. */

#include "internal.h"

#define FEATURE_WORDS ((halide_target_feature_end + 63) / 64)

typedef struct {
    uint64_t known[FEATURE_WORDS];
    uint64_t available[FEATURE_WORDS];
} cpu_features;

static void set_bit(uint64_t *words, int feature) {
    words[feature >> 6] |= (uint64_t)1 << (feature & 63);
}

#if defined(__x86_64__)
#include <cpuid.h>

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
    r[0] = r[1] = r[2] = r[3] = 0;
    __get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3]);
}

static uint64_t xgetbv0(void) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void detect(cpu_features *f) {
    static const int known[] = {
        halide_target_feature_sse41, halide_target_feature_avx,
        halide_target_feature_f16c, halide_target_feature_fma,
        halide_target_feature_avx2, halide_target_feature_avxvnni,
        halide_target_feature_avx512, halide_target_feature_avx512_knl,
        halide_target_feature_avx512_skylake, halide_target_feature_avx512_cannonlake,
        halide_target_feature_avx512_zen4, halide_target_feature_avx512_zen5,
        halide_target_feature_avx512_sapphirerapids,
    };
    for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        set_bit(f->known, known[i]);
    }
    unsigned vendor[4], l1[4], l7[4], l71[4];
    cpuid(0, 0, vendor);
    unsigned max_leaf = vendor[0];
    cpuid(1, 0, l1);
    const int osxsave = (l1[2] >> 27) & 1;
    const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    /* XMM and YMM state saved by the OS; and the three AVX-512 parts. */
    const int os_avx = (xcr0 & 0x6) == 0x6;
    const int os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;

    if ((l1[2] >> 19) & 1) set_bit(f->available, halide_target_feature_sse41);
    if (!os_avx || !((l1[2] >> 28) & 1)) return;
    set_bit(f->available, halide_target_feature_avx);
    if ((l1[2] >> 29) & 1) set_bit(f->available, halide_target_feature_f16c);
    if ((l1[2] >> 12) & 1) set_bit(f->available, halide_target_feature_fma);
    if (max_leaf < 7) return;
    cpuid(7, 0, l7);
    cpuid(7, 1, l71);
    const unsigned ebx = l7[1];
    if ((ebx >> 5) & 1) set_bit(f->available, halide_target_feature_avx2);
    if ((l71[0] >> 4) & 1) set_bit(f->available, halide_target_feature_avxvnni);
    if (!os_avx512) return;
    const unsigned f_cd = (1u << 16) | (1u << 28);
    const unsigned knl = f_cd | (1u << 26) | (1u << 27);
    const unsigned skylake = f_cd | (1u << 17) | (1u << 30) | (1u << 31);
    const unsigned cannonlake = skylake | (1u << 21);
    if ((ebx & f_cd) != f_cd) return;
    set_bit(f->available, halide_target_feature_avx512);
    if ((ebx & knl) == knl) set_bit(f->available, halide_target_feature_avx512_knl);
    if ((ebx & skylake) == skylake) set_bit(f->available, halide_target_feature_avx512_skylake);
    if ((ebx & cannonlake) != cannonlake) return;
    set_bit(f->available, halide_target_feature_avx512_cannonlake);
    /* avx512_bf16 (leaf 7.1 eax bit 5) and AVX-VNNI: Sapphire Rapids. */
    if (((l71[0] >> 4) & 1) && ((l71[0] >> 5) & 1)) {
        set_bit(f->available, halide_target_feature_avx512_sapphirerapids);
    }
    /* AMD family 19h with AVX-512 is Zen 4; 1Ah is Zen 5 (which also has
     * Zen 4's features). */
    const int amd = vendor[1] == 0x68747541 && vendor[3] == 0x69746e65 && vendor[2] == 0x444d4163;
    unsigned family = (l1[0] >> 8) & 0xf;
    if (family == 0xf) family += (l1[0] >> 20) & 0xff;
    if (amd && family >= 0x19) set_bit(f->available, halide_target_feature_avx512_zen4);
    if (amd && family >= 0x1a) set_bit(f->available, halide_target_feature_avx512_zen5);
}
#elif defined(__aarch64__) && defined(__linux__)
/* The kernel's hardware capability words (HWCAP_ASIMDDP, HWCAP_ASIMDHP,
 * HWCAP_SVE; HWCAP2_SVE2), from the C library's getauxval. */
unsigned long getauxval(unsigned long type);
enum { AT_HWCAP = 16, AT_HWCAP2 = 26 };

static void detect(cpu_features *f) {
    const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    set_bit(f->known, halide_target_feature_arm_dot_prod);
    set_bit(f->known, halide_target_feature_arm_fp16);
    set_bit(f->known, halide_target_feature_sve);
    set_bit(f->known, halide_target_feature_sve2);
    if ((hw >> 20) & 1) set_bit(f->available, halide_target_feature_arm_dot_prod);
    if ((hw >> 10) & 1) set_bit(f->available, halide_target_feature_arm_fp16);
    if ((hw >> 22) & 1) set_bit(f->available, halide_target_feature_sve);
    if ((hw2 >> 1) & 1) set_bit(f->available, halide_target_feature_sve2);
}
#else
static void detect(cpu_features *f) {
    (void)f; /* nothing known: every feature is assumed usable */
    (void)set_bit;
}
#endif

static cpu_features detected;
static int detected_ready;
static struct halide_mutex detect_lock;

static const cpu_features *this_cpu(void) {
    if (!ATOMIC_LOAD(&detected_ready)) {
        halide_mutex_lock(&detect_lock);
        if (!detected_ready) {
            cpu_features f = {{0}, {0}};
            detect(&f);
            detected = f;
            ATOMIC_STORE(&detected_ready, 1);
        }
        halide_mutex_unlock(&detect_lock);
    }
    return &detected;
}

WEAK int halide_default_can_use_target_features(int count, const uint64_t *features) {
    if (count != FEATURE_WORDS) {
        halide_error(NULL, "Internal error: wrong structure size passed to halide_can_use_target_features()\n");
        return 0;
    }
    const cpu_features *cpu = this_cpu();
    for (int i = 0; i < FEATURE_WORDS; i++) {
        uint64_t asked = features[i] & cpu->known[i];
        if ((asked & cpu->available[i]) != asked) {
            return 0;
        }
    }
    return 1;
}

static halide_can_use_target_features_t custom_can_use = halide_default_can_use_target_features;

WEAK halide_can_use_target_features_t halide_set_custom_can_use_target_features(
    halide_can_use_target_features_t fn) {
    halide_can_use_target_features_t old = custom_can_use;
    custom_can_use = fn;
    return old;
}

WEAK int halide_can_use_target_features(int count, const uint64_t *features) {
    return custom_can_use(count, features);
}
