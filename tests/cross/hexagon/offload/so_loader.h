/* A small loader of ELF32 Hexagon shared objects for the bare-metal
 * Hexagon harness (../harness.c), standing in for QuRT's dlopenbuf: it
 * maps an image's PT_LOAD segments into readable, writable and executable
 * memory, applies its RELA relocations eagerly (RTLD_NOW), resolving
 * symbols in the object itself first (DT_SYMBOLIC), then in the objects
 * loaded before it, then in the functions the harness provides, and runs
 * its initializers. */
#ifndef FH_HEXAGON_SO_LOADER_H
#define FH_HEXAGON_SO_LOADER_H

/* Loads `size` bytes of shared object `image` (copied; the image may be
 * freed afterwards). Returns a handle, or 0 after printing why not. */
void *hx_load(const char *soname, const unsigned char *image, int size);

/* The address of the global (or weak) symbol `name` defined in the object
 * `handle`, or 0 if it defines none. */
void *hx_sym(void *handle, const char *name);

/* A Linux system call through trap0 (number in r6, arguments in r0-r5);
 * returns the kernel's result (a negative errno on failure). */
long hx_syscall(long n, long a, long b, long c, long d, long e, long f);

#endif
