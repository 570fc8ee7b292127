// The CUDA C that Kiln generates, compiled as host C++ (g++ -std=c++20)
// and run without a GPU: each block's threads are real threads, blocks run
// one after another, `__syncthreads` is a barrier of the block and a warp
// shuffle a barrier of the warp. Only what Kiln's kernels use is here.
//
// This checks what the GPU would compute when the generated code is
// correct CUDA: indexing, launch shapes, block and warp reductions,
// vector and tiled walks, element semantics. It does not model memory
// coalescing, speed, or races the hardware would resolve differently.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <barrier>
#include <memory>
#include <thread>
#include <vector>

#define KILN_HOST_EMULATION 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __align__(n) __attribute__((aligned(n)))
// Blocks run one at a time, so a function's statics are its block's
// shared memory.
#define __shared__ static

struct kiln_dim3 {
  unsigned x, y, z;
};
struct uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};

static thread_local kiln_dim3 threadIdx;
static thread_local kiln_dim3 blockIdx;
static kiln_dim3 blockDim;
static kiln_dim3 gridDim;
static std::barrier<>* kiln_emu_block;
static std::vector<std::unique_ptr<std::barrier<>>> kiln_emu_warps;
static unsigned long long kiln_emu_lanes[1024];

static inline void __syncthreads() { kiln_emu_block->arrive_and_wait(); }

template <typename T> static inline T __shfl_down_sync(unsigned, T v, int delta) {
  static_assert(sizeof(T) <= 8, "one lane holds 8 bytes");
  const unsigned t = threadIdx.x, lane = t % 32;
  std::barrier<>& warp = *kiln_emu_warps[t / 32];
  memcpy(&kiln_emu_lanes[t], &v, sizeof(T));
  warp.arrive_and_wait();
  T r = v;
  if (lane + delta < 32) memcpy(&r, &kiln_emu_lanes[t + delta], sizeof(T));
  warp.arrive_and_wait();
  return r;
}

template <typename T> static inline T __shfl_sync(unsigned, T v, int src) {
  static_assert(sizeof(T) <= 8, "one lane holds 8 bytes");
  const unsigned t = threadIdx.x, warp_base = t - t % 32;
  std::barrier<>& warp = *kiln_emu_warps[t / 32];
  memcpy(&kiln_emu_lanes[t], &v, sizeof(T));
  warp.arrive_and_wait();
  T r;
  memcpy(&r, &kiln_emu_lanes[warp_base + src], sizeof(T));
  warp.arrive_and_wait();
  return r;
}

static inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline int atomicOr(int* p, int v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static inline void __syncwarp(unsigned = 0xffffffffu) { kiln_emu_warps[threadIdx.x / 32]->arrive_and_wait(); }

static inline float __int_as_float(int x) { float r; memcpy(&r, &x, 4); return r; }
static inline int __float_as_int(float x) { int r; memcpy(&r, &x, 4); return r; }
static inline float __uint_as_float(unsigned x) { float r; memcpy(&r, &x, 4); return r; }
static inline double __longlong_as_double(long long x) { double r; memcpy(&r, &x, 8); return r; }

// The conversions the preamble writes in PTX: round to nearest even.
static inline unsigned short kiln_f2h(float x) {
  _Float16 h = (_Float16)x;
  unsigned short r;
  memcpy(&r, &h, 2);
  return r;
}
static inline float kiln_h2f(unsigned short h) {
  _Float16 v;
  memcpy(&v, &h, 2);
  return (float)v;
}
static inline unsigned short kiln_f2bf(float x) {
  unsigned bits;
  memcpy(&bits, &x, 4);
  if (x != x) return 0x7fff;  // cvt.rn.bf16.f32's canonical NaN
  return (unsigned short)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
static inline float kiln_bf2f(unsigned short h) { return __uint_as_float(((unsigned)h) << 16); }

// Runs `kernel` on a grid of `grid` blocks of `block` threads.
template <typename F> static void kiln_emu_launch(unsigned grid, unsigned block, F kernel) {
  std::barrier<> block_barrier(block);
  kiln_emu_block = &block_barrier;
  kiln_emu_warps.clear();
  for (unsigned w = 0; w < (block + 31) / 32; ++w)
    kiln_emu_warps.push_back(std::make_unique<std::barrier<>>(block - w * 32 < 32 ? block - w * 32 : 32));
  blockDim = {block, 1, 1};
  gridDim = {grid, 1, 1};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < block; ++t) {
    threads.emplace_back([&, t] {
      threadIdx = {t, 0, 0};
      for (unsigned b = 0; b < grid; ++b) {
        blockIdx = {b, 0, 0};
        kernel();
        // The next block starts when every thread left this one.
        block_barrier.arrive_and_wait();
      }
    });
  }
  for (auto& t : threads) t.join();
}
