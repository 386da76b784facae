/* <stdlib.h> for the bare-metal Hexagon harness (defined in harness.c). */
#ifndef FH_HARNESS_STDLIB_H
#define FH_HARNESS_STDLIB_H
#include <stddef.h>
void *malloc(size_t size);
void *calloc(size_t count, size_t size);
void free(void *p);
void exit(int status) __attribute__((noreturn));
void abort(void) __attribute__((noreturn));
int atoi(const char *s);
char *getenv(const char *name);
#endif
