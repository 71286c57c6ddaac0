/* A stand-in for libcuda.so.1 to test the NVIDIA runtime without a GPU:
 * it implements the driver functions the runtime uses, runs nothing, and
 * logs each call it receives, one line each, to $STUB_LOG.
 *
 *   STUB_INIT_ERROR=N    cuInit returns N
 *   STUB_DEVICES=N       cuDeviceGetCount reports N devices (default 1)
 *   STUB_POOLS=0|1       the device supports cuMemAllocAsync (default 0)
 *   STUB_LAUNCH_ERROR=N  cuLaunchKernel returns N
 *   STUB_LOAD_ERROR=N    cuModuleLoadData returns N
 *
 * Kernel parameter counts come from the PTX's `.entry name(` declarations;
 * modules loaded from a cubin log launches without their arguments. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

static FILE *logFile(void) {
  static FILE *file;
  if (!file) {
    const char *path = getenv("STUB_LOG");
    file = path ? fopen(path, "a") : stderr;
    setvbuf(file, NULL, _IOLBF, 0);
  }
  return file;
}

static int envInt(const char *name, int fallback) {
  const char *value = getenv(name);
  return value ? atoi(value) : fallback;
}

static int context = 1;
static void *current;
static unsigned long long nextAddress = 0x100000;

struct Module {
  char *ptx; /* NULL for a cubin */
};
struct Function {
  char name[256];
  int numParams; /* -1: unknown (cubin) */
};

CUresult cuInit(unsigned flags) {
  (void)flags;
  fprintf(logFile(), "cuInit\n");
  return envInt("STUB_INIT_ERROR", 0);
}
CUresult cuDeviceGetCount(int *count) {
  *count = envInt("STUB_DEVICES", 1);
  return 0;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 75 ? 9 : attribute == 115 ? envInt("STUB_POOLS", 0) : 0;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) {
  (void)device;
  *ctx = &context;
  fprintf(logFile(), "cuDevicePrimaryCtxRetain\n");
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  (void)device;
  fprintf(logFile(), "cuDevicePrimaryCtxRelease\n");
  return 0;
}
CUresult cuCtxGetCurrent(void **ctx) {
  *ctx = current;
  return 0;
}
CUresult cuCtxSetCurrent(void *ctx) {
  current = ctx;
  return 0;
}
CUresult cuCtxGetDevice(int *device) {
  *device = 0;
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) {
  if (envInt("STUB_LOAD_ERROR", 0))
    return envInt("STUB_LOAD_ERROR", 0);
  struct Module *m = calloc(1, sizeof *m);
  int cubin = memcmp(image, "\x7f" "ELF", 4) == 0;
  if (!cubin)
    m->ptx = strdup((const char *)image);
  fprintf(logFile(), "cuModuleLoadData %s\n", cubin ? "cubin" : "ptx");
  *module = m;
  return 0;
}
CUresult cuModuleUnload(void *module) {
  struct Module *m = module;
  free(m->ptx);
  free(m);
  fprintf(logFile(), "cuModuleUnload\n");
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  struct Module *m = module;
  struct Function *f = calloc(1, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", name);
  f->numParams = -1;
  if (m->ptx) {
    char pattern[300];
    snprintf(pattern, sizeof pattern, ".entry %s(", name);
    const char *start = strstr(m->ptx, pattern);
    if (!start) {
      free(f);
      return 500; /* CUDA_ERROR_NOT_FOUND */
    }
    const char *end = strchr(start, ')');
    f->numParams = 0;
    for (const char *p = strstr(start, ".param"); p && p < end;
         p = strstr(p + 1, ".param"))
      ++f->numParams;
  }
  *function = f;
  return 0;
}
CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  (void)function;
  fprintf(logFile(), "cuFuncSetAttribute %d %d\n", attribute, value);
  return 0;
}
CUresult cuMemAlloc_v2(unsigned long long *address, size_t bytes) {
  *address = nextAddress;
  nextAddress += 0x100000;
  fprintf(logFile(), "cuMemAlloc %zu 0x%llx\n", bytes, *address);
  return 0;
}
CUresult cuMemFree_v2(unsigned long long address) {
  fprintf(logFile(), "cuMemFree 0x%llx\n", address);
  return 0;
}
CUresult cuMemAllocAsync(unsigned long long *address, size_t bytes,
                         void *stream) {
  *address = nextAddress;
  nextAddress += 0x100000;
  fprintf(logFile(), "cuMemAllocAsync %zu 0x%llx stream %p\n", bytes,
          *address, stream);
  return 0;
}
CUresult cuMemFreeAsync(unsigned long long address, void *stream) {
  fprintf(logFile(), "cuMemFreeAsync 0x%llx stream %p\n", address, stream);
  return 0;
}
CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  (void)extra;
  struct Function *f = function;
  FILE *log = logFile();
  fprintf(log, "cuLaunchKernel %s grid %u %u %u block %u %u %u shared %u "
          "stream %p context %s args",
          f->name, gx, gy, gz, bx, by, bz, shared, stream,
          current == &context ? "ok" : "wrong");
  for (int i = 0; i < f->numParams; ++i)
    fprintf(log, " 0x%llx", *(unsigned long long *)params[i]);
  fprintf(log, "\n");
  return envInt("STUB_LAUNCH_ERROR", 0);
}
CUresult cuStreamSynchronize(void *stream) {
  fprintf(logFile(), "cuStreamSynchronize %p\n", stream);
  return 0;
}
CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
  case 209: *name = "CUDA_ERROR_NO_BINARY_FOR_GPU"; return 0;
  case 700: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0;
  }
  *name = NULL;
  return 1;
}
CUresult cuGetErrorString(CUresult error, const char **message) {
  switch (error) {
  case 100: *message = "no CUDA-capable device is detected"; return 0;
  case 209: *message = "no kernel image is available for execution on the device"; return 0;
  case 700: *message = "an illegal memory access was encountered"; return 0;
  }
  *message = NULL;
  return 1;
}
