/*===- BufferPool.c - Reusing allocator linked into every CPU artifact ----===*
 *
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * CPU S4 lowers memref.alloc/dealloc to the generic allocation functions
 * below (finalize-memref-to-llvm{use-generic-functions}), and S5 links this
 * file's archive into each artifact's shared object. A compiled model
 * allocates the same temporaries with the same sizes on every call; handing
 * back freed blocks of exactly the requested size saves the page faults
 * (zeroed fresh pages from the kernel) that malloc's trimming and mmap'ed
 * large blocks cost on every call.
 *
 * Freed blocks are kept in per-size lists, up to POLYBLOCKS_POOL_BYTES in
 * total (default 1 GiB; 0 disables the pool); beyond that they go back to
 * libc. The functions are hidden: each artifact binds its own pool. Thread-safe (one mutex: allocations come from serial code and from
 * the first iteration of each thread's share of a parallel loop). Each
 * artifact has its own pool, released when the artifact is unloaded.
 *===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Each block starts with a header of kHeader bytes (a multiple of every
 * alignment requested below that size) holding its size and header size. */
enum { kHeader = 64, kBuckets = 1024 };

typedef struct Block {
  size_t size;   /* usable bytes */
  size_t header; /* bytes before the user pointer */
  struct Block *next;
} Block;

static Block *buckets[kBuckets];
static size_t cachedBytes;
static size_t limitBytes = (size_t)1 << 30;
static int limitRead;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static size_t bucketOf(size_t size, size_t header) {
  uint64_t h = (uint64_t)size * 0x9E3779B97F4A7C15ull ^ header;
  return (size_t)(h >> 40) % kBuckets;
}

static void readLimit(void) {
  const char *env = getenv("POLYBLOCKS_POOL_BYTES");
  if (env && *env)
    limitBytes = (size_t)strtoull(env, NULL, 10);
  limitRead = 1;
}

static void *allocate(size_t size, size_t alignment) {
  size_t header = kHeader;
  if (alignment > header)
    header = alignment;
  pthread_mutex_lock(&lock);
  if (!limitRead)
    readLimit();
  Block **link = &buckets[bucketOf(size, header)];
  for (Block *b = *link; b; link = &b->next, b = b->next) {
    if (b->size == size && b->header == header) {
      *link = b->next;
      cachedBytes -= size;
      pthread_mutex_unlock(&lock);
      return (char *)b + header;
    }
  }
  pthread_mutex_unlock(&lock);
  void *base = NULL;
  if (posix_memalign(&base, header, header + size) != 0)
    return NULL;
  Block *b = (Block *)base;
  b->size = size;
  b->header = header;
  b->next = NULL;
  /* The header size is also kept just below the user pointer. */
  ((size_t *)((char *)base + header))[-1] = header;
  return (char *)base + header;
}

#define PB_HIDDEN __attribute__((visibility("hidden")))

PB_HIDDEN void *_mlir_memref_to_llvm_alloc(size_t size) { return allocate(size, 16); }

PB_HIDDEN void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                   size_t size) {
  return allocate(size, alignment);
}

PB_HIDDEN void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  size_t header = ((size_t *)ptr)[-1];
  Block *b = (Block *)((char *)ptr - header);
  pthread_mutex_lock(&lock);
  if (!limitRead)
    readLimit();
  if (cachedBytes + b->size <= limitBytes) {
    Block **head = &buckets[bucketOf(b->size, b->header)];
    b->next = *head;
    *head = b;
    cachedBytes += b->size;
    pthread_mutex_unlock(&lock);
    return;
  }
  pthread_mutex_unlock(&lock);
  free(b);
}

/* Releases the pool when the artifact is unloaded. */
__attribute__((destructor)) static void releasePool(void) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < kBuckets; ++i) {
    Block *b = buckets[i];
    while (b) {
      Block *next = b->next;
      free(b);
      b = next;
    }
    buckets[i] = NULL;
  }
  cachedBytes = 0;
  pthread_mutex_unlock(&lock);
}
