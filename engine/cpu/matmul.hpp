#pragma once
// Matrix multiplication of a batch of activations by a row-major weight matrix: the one kernel
// that decides CPU decode speed. Decode (n = 1) streams every weight once and is bound by memory
// bandwidth; prefill (n > 1) reuses each block of weight rows across all tokens from cache, so
// it costs fewer bytes per token.
#include <initializer_list>

#include "engine/cpu/thread_pool.hpp"
#include "engine/model.hpp"

namespace atlas::engine::cpu {

/// y[t][o] = sum_i w[o][i] * x[t][i] for t < n, o < out (llama2.c matmul(), batched).
/// Shapes: w [out][in], x [n][in], y [n][out]. Uses AVX2+FMA when the CPU has it (checked at
/// run time), else portable code with the same blocking.
void matmul(ThreadPool& pool, float* y, const float* x, const float* w, int n, int in, int out);

/// As above with the weight in its stored type (float32, bf16, f16 or Q8_0; engine/model.hpp
/// Weight): bf16 / f16 rows are widened to float32 in registers, never copied; Q8_0 rows are
/// widened 16 rows at a time into a per-thread buffer (`in` a multiple of 32). Results are
/// bit-identical to multiplying the float32 widening of the whole matrix.
void matmul(ThreadPool& pool, float* y, const float* x, const Weight& w, int n, int in, int out);

/// As matmul() on the calling thread only (for work already split across the pool's workers).
void matmul_serial(float* y, const float* x, const Weight& w, int n, int in, int out);

/// One product of a fused matmul: y [n][out] = x W^T with w [out][in] (float32, or a typed Weight).
struct MatmulOut {
  MatmulOut(float* y_, const float* w_, int out_) : y(y_), w(w_), out(out_) {}
  MatmulOut(float* y_, const Weight& w_, int out_);
  float* y;
  const void* w;
  DType dtype = DType::f32;
  int out;
};

/// Several products of the same x (e.g. Q, K and V; gate and up) in one parallel dispatch, so
/// the workers wake once instead of once per matrix.
void matmul_fused(ThreadPool& pool, const float* x, int n, int in, std::initializer_list<MatmulOut> products);

/// sum_i a[i] * b[i] (AVX2+FMA when available).
float dot(const float* a, const float* b, int n);

/// x[i] = exp(x[i] - shift) for i < n; returns the sum of the new values (softmax's
/// numerator and denominator). AVX2 path: the Cephes expf polynomial (relative error ~1e-7,
/// as std::exp within float rounding), 8 lanes at a time.
float exp_shifted_sum(float* x, int n, float shift);

/// attention() (ops.hpp) with AVX2+FMA for head_dim 8, 16, 32 or 64 (stories260K: 8): eight
/// positions' scores per step without a horizontal sum each, the softmax's exp 8 lanes at a time,
/// V rows summed in registers and normalised once. Same shapes and result as attention() up to
/// float summation order. Returns false, writing nothing, when the AVX2 kernels are off or not
/// available, or for another head_dim.
bool attention_simd(float* out, const float* q, const float* k, const float* v, int n_pos, int head_dim, int stride,
                    float* scores);
/// True when the AVX2+FMA kernels are in use.
bool matmul_uses_avx2();

/// Selects the AVX2+FMA kernels (default, when the CPU has them) or the portable ones, so tests
/// cover both; not thread-safe against running matmuls. Returns false when `on` is impossible.
bool set_matmul_avx2(bool on);

}  // namespace atlas::engine::cpu
