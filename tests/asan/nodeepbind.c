/*
 * nodeepbind.c: an LD_PRELOAD shim that lets a module built with AddressSanitizer load
 * into an uninstrumented valkey-server.
 *
 * Valkey opens modules with dlopen(..., RTLD_DEEPBIND). The ASan runtime refuses any
 * library opened that way ("incompatible with sanitizer runtime"), because a deep-bound
 * library would resolve malloc and friends to libc instead of ASan's interceptors. This
 * dlopen clears the flag and hands the call to the next dlopen in the lookup order (ASan's
 * interceptor, then libc's). List it in LD_PRELOAD before libasan.
 *
 * Build: gcc -shared -fPIC -o nodeepbind.so nodeepbind.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef void *(*dlopen_fn)(const char *, int);

void *dlopen(const char *file, int mode)
{
    static dlopen_fn next;

    if (next == NULL) next = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
    if (next == NULL) return NULL;
    return next(file, mode & ~RTLD_DEEPBIND);
}
