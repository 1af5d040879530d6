#pragma once
// Matrix multiplication of a batch of activations by a row-major weight matrix: the one kernel
// that decides CPU decode speed. Decode (n = 1) streams every weight once and is bound by memory
// bandwidth; prefill (n > 1) reuses each block of weight rows across all tokens from cache, so
// it costs fewer bytes per token.
#include "engine/cpu/thread_pool.hpp"

namespace atlas::engine::cpu {

/// y[t][o] = sum_i w[o][i] * x[t][i] for t < n, o < out (llama2.c matmul(), batched).
/// Shapes: w [out][in], x [n][in], y [n][out]. Uses AVX2+FMA when the CPU has it (checked at
/// run time), else portable code with the same blocking.
void matmul(ThreadPool& pool, float* y, const float* x, const float* w, int n, int in, int out);

/// sum_i a[i] * b[i] (AVX2+FMA when available).
float dot(const float* a, const float* b, int n);

/// True when the AVX2+FMA kernels are in use.
bool matmul_uses_avx2();

}  // namespace atlas::engine::cpu
