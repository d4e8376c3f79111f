/* kernels/cuda/load.c - the CUDA backend, loaded on first use.
 *
 * A CUDA build puts the backend (the kernels/cuda sources, linked with cudart,
 * cuBLAS and cuSOLVER) in a module of its own, optbench-cuda.so, beside the
 * program. ob_cuda_backend_ops loads it the first time a command asks for a
 * CUDA device (--backend cuda or auto), so that the program starts, and runs
 * on the CPU, where the CUDA libraries cannot be found (a machine without
 * them; an environment without their paths), and commands that open no
 * device (report, compare, history, list) never map them.
 *
 * Where it is looked for: $OPTBENCH_CUDA_MODULE when set (a path, and only
 * that one); else beside the program, then in the folder above it (a test
 * program in the build's tests/ folder). The module must come from the same
 * build as the program: it refuses another's (ob_cuda_module_ops checks
 * the version, the revision and the sizes of the tables they share). */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/backend.h"
#include "kernels/cuda/module.h"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const ob_backend_ops *cuda_ops;
static char cuda_missing[1024];

#ifdef OB_CUDA_MODULE_NAME
/* The folder of the running program ("" when it cannot be read). */
static void program_dir(char *dir, size_t n)
{
    char exe[PATH_MAX];
    const ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    dir[0] = '\0';
    if (k <= 0) return;
    exe[k] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    snprintf(dir, n, "%s", exe[0] ? exe : "/");
}

/* Loads the module at path: 1 when it is there (cuda_ops, or cuda_missing
 * says why it cannot be used), 0 when no file is. */
static int load_from(const char *path)
{
    if (access(path, F_OK) != 0) return 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(cuda_missing, sizeof cuda_missing,
                 "the CUDA backend (%s) cannot be loaded: %s (are the CUDA libraries installed and on the "
                 "library path?)", path, why ? why : "unknown error");
        return 1;
    }
    ob_cuda_module_fn *fn = NULL;
    *(void **)&fn = dlsym(h, OB_CUDA_MODULE_ENTRY);
    const ob_backend_ops *ops = NULL;
    if (fn) ops = fn(OB_CUDA_MODULE_STAMP, sizeof(ob_backend_ops), sizeof(ob_device));
    if (!ops) {
        snprintf(cuda_missing, sizeof cuda_missing,
                 "the CUDA backend %s is not this program's (%s): rebuild both (cmake --build BUILD --target "
                 "optbench)", path, fn ? "another build of optbench" : "no " OB_CUDA_MODULE_ENTRY);
        dlclose(h);
        return 1;
    }
    cuda_ops = ops; /* kept loaded until the process ends */
    return 1;
}
#endif

static void load(void)
{
#ifndef OB_CUDA_MODULE_NAME
    snprintf(cuda_missing, sizeof cuda_missing,
             "this build has no CUDA backend (rebuild with -DOB_CUDA=ON on a machine with the CUDA toolkit)");
#else
    const char *env = getenv("OPTBENCH_CUDA_MODULE");
    if (env && env[0]) {
        if (!load_from(env))
            snprintf(cuda_missing, sizeof cuda_missing,
                     "the CUDA backend OPTBENCH_CUDA_MODULE names (%s) does not exist", env);
        return;
    }
    char dir[PATH_MAX], path[PATH_MAX + 64];
    program_dir(dir, sizeof dir);
    if (!dir[0]) {
        snprintf(cuda_missing, sizeof cuda_missing,
                 "the CUDA backend cannot be found: the program's folder is unknown (set OPTBENCH_CUDA_MODULE "
                 "to the path of %s)", OB_CUDA_MODULE_NAME);
        return;
    }
    snprintf(path, sizeof path, "%s/%s", dir, OB_CUDA_MODULE_NAME);
    if (load_from(path)) return;
    snprintf(path, sizeof path, "%s/../%s", dir, OB_CUDA_MODULE_NAME);
    if (load_from(path)) return;
    snprintf(cuda_missing, sizeof cuda_missing,
             "the CUDA backend %s is not beside the program (in %s), where a CUDA build puts it: copy it there "
             "with the program, or set OPTBENCH_CUDA_MODULE to its path", OB_CUDA_MODULE_NAME, dir);
#endif
}

const ob_backend_ops *ob_cuda_backend_ops(void)
{
    pthread_once(&load_once, load);
    return cuda_ops;
}

const char *ob_cuda_backend_missing(void)
{
    pthread_once(&load_once, load);
    return cuda_ops ? "" : cuda_missing;
}

int ob_cuda_backend_built(void)
{
#ifdef OB_CUDA_MODULE_NAME
    return 1;
#else
    return 0;
#endif
}
