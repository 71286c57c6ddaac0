/* A stand-in for libamdhip64.so to test the AMD runtime without a GPU or
 * ROCm: it implements the HIP functions the runtime uses, runs nothing, and
 * logs each call it receives, one line each, to $STUB_LOG.
 *
 *   STUB_INIT_ERROR=N    hipInit returns N
 *   STUB_DEVICES=N       hipGetDeviceCount reports N devices (default 1)
 *   STUB_LAUNCH_ERROR=N  hipModuleLaunchKernel returns N
 *   STUB_LOAD_ERROR=N    hipModuleLoadData returns N
 *   STUB_PARAMS=N        kernel parameters logged per launch (default 0)
 *
 * hipModuleLoadData checks that the image is an AMDGPU ELF (e_machine 224)
 * and hipModuleGetFunction that the kernel's name is in it. Built with
 * -DSTUB_NO_ASYNC it lacks hipMallocAsync and hipFreeAsync (ROCm before
 * 5.3). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;

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

static unsigned long long nextAddress = 0x100000;

struct Module {
  unsigned char *image;
  size_t size;
};
struct Function {
  char name[256];
};

hipError_t hipInit(unsigned flags) {
  (void)flags;
  fprintf(logFile(), "hipInit\n");
  return envInt("STUB_INIT_ERROR", 0);
}
hipError_t hipGetDeviceCount(int *count) {
  *count = envInt("STUB_DEVICES", 1);
  return 0;
}
hipError_t hipModuleLoadData(void **module, const void *image) {
  if (envInt("STUB_LOAD_ERROR", 0))
    return envInt("STUB_LOAD_ERROR", 0);
  const unsigned char *elf = image;
  uint16_t machine, shentsize, shnum;
  uint64_t shoff;
  memcpy(&machine, elf + 18, 2);
  memcpy(&shoff, elf + 40, 8);
  memcpy(&shentsize, elf + 58, 2);
  memcpy(&shnum, elf + 60, 2);
  if (memcmp(elf, "\x7f" "ELF", 4) != 0 || machine != 224)
    return 200; /* hipErrorInvalidImage */
  struct Module *m = calloc(1, sizeof *m);
  m->size = shoff + (size_t)shentsize * shnum;
  m->image = malloc(m->size);
  memcpy(m->image, image, m->size);
  fprintf(logFile(), "hipModuleLoadData amdgpu-elf\n");
  *module = m;
  return 0;
}
hipError_t hipModuleUnload(void *module) {
  struct Module *m = module;
  free(m->image);
  free(m);
  fprintf(logFile(), "hipModuleUnload\n");
  return 0;
}
hipError_t hipModuleGetFunction(void **function, void *module,
                                const char *name) {
  struct Module *m = module;
  if (!memmem(m->image, m->size, name, strlen(name) + 1))
    return 500; /* hipErrorNotFound */
  struct Function *f = calloc(1, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", name);
  *function = f;
  return 0;
}
hipError_t hipMalloc(void **address, size_t bytes) {
  *address = (void *)nextAddress;
  nextAddress += 0x100000;
  fprintf(logFile(), "hipMalloc %zu %p\n", bytes, *address);
  return 0;
}
hipError_t hipFree(void *address) {
  fprintf(logFile(), "hipFree %p\n", address);
  return 0;
}
#ifndef STUB_NO_ASYNC
hipError_t hipMallocAsync(void **address, size_t bytes, void *stream) {
  *address = (void *)nextAddress;
  nextAddress += 0x100000;
  fprintf(logFile(), "hipMallocAsync %zu %p stream %p\n", bytes, *address,
          stream);
  return 0;
}
hipError_t hipFreeAsync(void *address, void *stream) {
  fprintf(logFile(), "hipFreeAsync %p stream %p\n", address, stream);
  return 0;
}
#endif
hipError_t hipModuleLaunchKernel(void *function, unsigned gx, unsigned gy,
                                 unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned shared, void *stream,
                                 void **params, void **extra) {
  (void)extra;
  struct Function *f = function;
  FILE *log = logFile();
  fprintf(log, "hipModuleLaunchKernel %s grid %u %u %u block %u %u %u "
          "shared %u stream %p args",
          f->name, gx, gy, gz, bx, by, bz, shared, stream);
  for (int i = 0; i < envInt("STUB_PARAMS", 0); ++i)
    fprintf(log, " %p", *(void **)params[i]);
  fprintf(log, "\n");
  return envInt("STUB_LAUNCH_ERROR", 0);
}
hipError_t hipStreamSynchronize(void *stream) {
  fprintf(logFile(), "hipStreamSynchronize %p\n", stream);
  return 0;
}
const char *hipGetErrorName(hipError_t error) {
  switch (error) {
  case 100: return "hipErrorNoDevice";
  case 200: return "hipErrorInvalidImage";
  case 209: return "hipErrorNoBinaryForGpu";
  case 700: return "hipErrorIllegalAddress";
  }
  return "hipErrorUnknown";
}
const char *hipGetErrorString(hipError_t error) {
  switch (error) {
  case 100: return "no ROCm-capable device is detected";
  case 200: return "device kernel image is invalid";
  case 209: return "no kernel image is available for execution on the device";
  case 700: return "an illegal memory access was encountered";
  }
  return "unknown error";
}
