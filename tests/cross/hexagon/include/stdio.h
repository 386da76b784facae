/* The few <stdio.h> declarations the cross-test program uses, for the
 * bare-metal Hexagon harness (there is no C library: harness.c defines
 * these). */
#ifndef FH_HARNESS_STDIO_H
#define FH_HARNESS_STDIO_H
#include <stddef.h>
typedef struct harness_file FILE;
extern FILE *stdout, *stderr;
FILE *fopen(const char *path, const char *mode);
size_t fread(void *data, size_t size, size_t count, FILE *f);
size_t fwrite(const void *data, size_t size, size_t count, FILE *f);
int fclose(FILE *f);
int printf(const char *format, ...);
int fprintf(FILE *f, const char *format, ...);
#endif
