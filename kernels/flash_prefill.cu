#include "kernels/flash_prefill.hpp"

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/check.hpp"

namespace atlas::kernels {
namespace {

using bf16 = __nv_bfloat16;

constexpr int kThreads = 128;  // 4 warps x 16 query rows
constexpr int kBlockQ = 64;
constexpr int kBlockK = 64;
constexpr int kPad = 8;  // bf16 per shared row beyond d: the fragment reads below are bank-conflict free

/// D = A(16x16, row) . B(16x8, col) + D; fragments as in the PTX ISA ("Matrix fragments for
/// mma.m16n8k16"): lane = 4 * group + t; A regs (row g, cols 2t..2t+1), (g+8, same), (g, +8),
/// (g+8, +8); B regs (k 2t..2t+1, n g), (k +8, n g); D (g, 2t..2t+1), (g+8, 2t..2t+1).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                         std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Four 8x8 bf16 matrices from shared memory; lane l gives the address of row l % 8 of matrix
/// l / 8, and receives (row l / 4, cols 2 (l % 4) .. +1) of each (transposed with kTrans), which
/// is the mma B-fragment layout.
template <bool kTrans>
__device__ __forceinline__ void ldmatrix_x4(unsigned addr, std::uint32_t& r0, std::uint32_t& r1, std::uint32_t& r2,
                                            std::uint32_t& r3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
#endif
}

/// 16-byte global -> shared copy that bypasses registers; src_bytes 0 writes zeros.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

template <int D>
constexpr std::size_t smem_bytes() {
  return 2 /*stages*/ * 2 /*K, V*/ * kBlockK * (D + kPad) * sizeof(bf16);
}

/// Two shared-memory stages: the next key tile streams in (cp.async) while this one is used.
template <int D>
__global__ void __launch_bounds__(kThreads) flash_prefill_kernel(FlashPrefillArgs a) {
  constexpr int LDS = D + kPad;
  constexpr int kTile = kBlockK * LDS;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  bf16* const smem = reinterpret_cast<bf16*>(smem_raw);  // [stage][K, V][kBlockK][LDS]
  const int h = blockIdx.y;
  const int qt = gridDim.x - 1 - blockIdx.x;  // the longest (last) query tiles start first
  const int kvh = h / (a.n_heads / a.n_kv_heads);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int gr = lane >> 2, t = lane & 3;
  const int q0 = qt * kBlockQ + warp * 16;  // this warp's first query row
  const int r0 = q0 + gr, r1 = r0 + 8;

  // Q fragments for the whole head dimension stay in registers.
  const bf16* Q = static_cast<const bf16*>(a.q) + h * a.q_head_stride;
  std::uint32_t qa[D / 16][4];
  auto q32 = [&](int r, int c) -> std::uint32_t {
    return r < a.n_query ? *reinterpret_cast<const std::uint32_t*>(Q + static_cast<size_t>(r) * D + c) : 0u;
  };
#pragma unroll
  for (int kc = 0; kc < D / 16; ++kc) {
    const int c = kc * 16 + 2 * t;
    qa[kc][0] = q32(r0, c);
    qa[kc][1] = q32(r1, c);
    qa[kc][2] = q32(r0, c + 8);
    qa[kc][3] = q32(r1, c + 8);
  }

  float o[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;
  const float sl2 = a.scale * 1.4426950408889634f;  // softmax in base 2
  const int qp0 = a.pos0 + r0, qp1 = a.pos0 + r1;    // positions of this lane's two rows
  const int block_last = min(a.n_query, (qt + 1) * kBlockQ) - 1;
  const int kv_end = a.pos0 + block_last + 1;         // keys this block needs
  const int warp_last_pos = a.pos0 + min(q0 + 15, a.n_query - 1);

  const bf16* K = static_cast<const bf16*>(a.k_cache) + static_cast<size_t>(kvh) * a.max_seq * D;
  const bf16* V = static_cast<const bf16*>(a.v_cache) + static_cast<size_t>(kvh) * a.max_seq * D;

  const int n_tiles = (kv_end + kBlockK - 1) / kBlockK;
  auto load_tile = [&](int tile) {
    bf16* ks = smem + (tile & 1) * 2 * kTile;
    bf16* vs = ks + kTile;
    const int k0 = tile * kBlockK;
    for (int i = threadIdx.x; i < kBlockK * D / 8; i += kThreads) {
      const int r = i / (D / 8), c = (i % (D / 8)) * 8;
      const bool in = k0 + r < kv_end;
      const size_t off = in ? static_cast<size_t>(k0 + r) * D + c : 0;
      cp_async16(smem_addr(&ks[r * LDS + c]), K + off, in ? 16 : 0);
      cp_async16(smem_addr(&vs[r * LDS + c]), V + off, in ? 16 : 0);
    }
    cp_async_commit();
  };
  load_tile(0);
  // ldmatrix row addresses of this lane: matrix l / 8, row l % 8.
  const int mi = lane >> 3, ri = lane & 7;
  for (int tile = 0; tile < n_tiles; ++tile) {
    if (tile + 1 < n_tiles) {
      load_tile(tile + 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();  // this tile is in shared memory for every warp
    const int k0 = tile * kBlockK;
    const bf16* ks = smem + (tile & 1) * 2 * kTile;
    const bf16* vs = ks + kTile;
    if (k0 <= warp_last_pos) {  // else every key of the tile is in this warp's future

      // S = Q K^T for 16 rows x 64 keys. ldmatrix x4: B fragments (b0, b1) of key tiles nt, nt+1.
      float s[kBlockK / 8][4];
#pragma unroll
      for (int nt = 0; nt < kBlockK / 8; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
      for (int kc = 0; kc < D / 16; ++kc) {
#pragma unroll
        for (int nt = 0; nt < kBlockK / 8; nt += 2) {
          std::uint32_t b0, b1, b2, b3;
          ldmatrix_x4<false>(smem_addr(&ks[(nt * 8 + ri + (mi >> 1) * 8) * LDS + kc * 16 + (mi & 1) * 8]), b0, b1, b2, b3);
          mma_bf16(s[nt], qa[kc], b0, b1);
          mma_bf16(s[nt + 1], qa[kc], b2, b3);
        }
      }
      // Scale, causal mask, online softmax (each row's four lanes share a max through shuffles).
      float mx0 = m0, mx1 = m1;
#pragma unroll
      for (int nt = 0; nt < kBlockK / 8; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = k0 + nt * 8 + 2 * t + (e & 1);
          const bool visible = key <= (e < 2 ? qp0 : qp1);
          s[nt][e] = visible ? s[nt][e] * sl2 : -INFINITY;
        }
        mx0 = fmaxf(mx0, fmaxf(s[nt][0], s[nt][1]));
        mx1 = fmaxf(mx1, fmaxf(s[nt][2], s[nt][3]));
      }
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
      mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
      mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
      // Key 0 is visible to every row, so after the first tile both maxima are finite.
      const float al0 = exp2f(m0 - mx0), al1 = exp2f(m1 - mx1);
      m0 = mx0;
      m1 = mx1;
      float rs0 = 0.0f, rs1 = 0.0f;
#pragma unroll
      for (int nt = 0; nt < kBlockK / 8; ++nt) {
        s[nt][0] = exp2f(s[nt][0] - mx0);
        s[nt][1] = exp2f(s[nt][1] - mx0);
        s[nt][2] = exp2f(s[nt][2] - mx1);
        s[nt][3] = exp2f(s[nt][3] - mx1);
        rs0 += s[nt][0] + s[nt][1];
        rs1 += s[nt][2] + s[nt][3];
      }
      l0 = l0 * al0 + rs0;
      l1 = l1 * al1 + rs1;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        o[dt][0] *= al0;
        o[dt][1] *= al0;
        o[dt][2] *= al1;
        o[dt][3] *= al1;
      }
      // O += P V: the S accumulators of key tiles 2kk, 2kk+1 are exactly P's A fragment;
      // ldmatrix x4 .trans: B fragments (b0, b1) of dim tiles dt, dt+1.
#pragma unroll
      for (int kk = 0; kk < kBlockK / 16; ++kk) {
        const std::uint32_t pa[4] = {pack2(s[2 * kk][0], s[2 * kk][1]), pack2(s[2 * kk][2], s[2 * kk][3]),
                                     pack2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                     pack2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
        for (int dt = 0; dt < D / 8; dt += 2) {
          std::uint32_t b0, b1, b2, b3;
          ldmatrix_x4<true>(smem_addr(&vs[(kk * 16 + ri + (mi & 1) * 8) * LDS + (dt + (mi >> 1)) * 8]), b0, b1, b2, b3);
          mma_bf16(o[dt], pa, b0, b1);
          mma_bf16(o[dt + 1], pa, b2, b3);
        }
      }
    }  // k0 <= warp_last_pos
    __syncthreads();  // every warp is done with this stage before it is refilled
  }

  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  const float inv0 = 1.0f / l0, inv1 = 1.0f / l1;
  bf16* out = static_cast<bf16*>(a.out);
#pragma unroll
  for (int dt = 0; dt < D / 8; ++dt) {
    const int c = h * D + dt * 8 + 2 * t;
    if (r0 < a.n_query)
      *reinterpret_cast<std::uint32_t*>(out + static_cast<size_t>(r0) * a.out_ld + c) =
          pack2(o[dt][0] * inv0, o[dt][1] * inv0);
    if (r1 < a.n_query)
      *reinterpret_cast<std::uint32_t*>(out + static_cast<size_t>(r1) * a.out_ld + c) =
          pack2(o[dt][2] * inv1, o[dt][3] * inv1);
  }
}

}  // namespace

bool flash_attention_prefill_supported(ElemType wtype, int head_dim) {
  return wtype == ElemType::bf16 && (head_dim == 64 || head_dim == 128);
}

void flash_attention_prefill_prepare() {
  ATLAS_CUDA_CHECK(cudaFuncSetAttribute(flash_prefill_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem_bytes<128>())));
  ATLAS_CUDA_CHECK(cudaFuncSetAttribute(flash_prefill_kernel<64>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(smem_bytes<64>())));
}

void flash_attention_prefill(const FlashPrefillArgs& a, cudaStream_t stream) {
  if (!flash_attention_prefill_supported(ElemType::bf16, a.head_dim))
    throw KernelError("flash_attention_prefill: head_dim " + std::to_string(a.head_dim) + " not supported (64 or 128)");
  if (a.n_kv_heads <= 0 || a.n_heads % a.n_kv_heads != 0)
    throw KernelError("flash_attention_prefill: n_heads " + std::to_string(a.n_heads) +
                      " is not a multiple of n_kv_heads " + std::to_string(a.n_kv_heads));
  if (a.n_query <= 0) return;
  if (a.pos0 < 0 || a.pos0 + a.n_query > a.max_seq || a.out_ld % 2 != 0 || a.out_ld < a.n_heads * a.head_dim)
    throw KernelError("flash_attention_prefill: need 0 <= pos0 and pos0 + n_query <= max_seq (got " +
                      std::to_string(a.pos0) + " + " + std::to_string(a.n_query) + " > " + std::to_string(a.max_seq) +
                      "?) and an even out_ld >= n_heads * head_dim (got " + std::to_string(a.out_ld) + ")");
  const dim3 grid((a.n_query + kBlockQ - 1) / kBlockQ, a.n_heads);
  if (a.head_dim == 128) flash_prefill_kernel<128><<<grid, kThreads, smem_bytes<128>(), stream>>>(a);
  else flash_prefill_kernel<64><<<grid, kThreads, smem_bytes<64>(), stream>>>(a);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
