#include "engine/backend.hpp"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/env_flag.hpp"
#include "engine/backend_module.hpp"
#include "engine/cpu/cpu_backend.hpp"
#include "engine/error.hpp"

namespace atlas::engine {

// Defined (engine/cuda/cuda_backend.cpp) only in a binary that links the CUDA backend
// statically (GPU tests, atlas-cuda-bench): such a binary uses its own copy, so that
// cuda_decoder_of() recognises the backends make_backend() made. Everywhere else this is null
// and the backend comes from the CUDA module, opened on first use (engine/backend_module.hpp).
[[gnu::weak]] std::unique_ptr<Backend> make_cuda_backend(const Model& model, const BackendOptions& opts);

namespace {
std::unique_ptr<Backend> make_cuda_backend_from_module(const Model& model, const BackendOptions& opts) {
  if (&make_cuda_backend != nullptr) return make_cuda_backend(model, opts);
  using MakeFn = std::unique_ptr<Backend> (*)(const Model&, const BackendOptions&);
  auto make = reinterpret_cast<MakeFn>(cuda_module_symbol("atlas_make_cuda_backend"));
  return make(model, opts);
}
}  // namespace

std::unique_ptr<Backend> make_backend(const Model& model, const BackendOptions& opts) {
  if (!(opts.inject_decode_delay_us >= 0)) {
    throw EngineError("backend option inject_decode_delay_us = " + std::to_string(opts.inject_decode_delay_us) +
                      " is invalid (must be >= 0)");
  }
  if (!(opts.inject_prefill_delay_us >= 0)) {
    throw EngineError("backend option inject_prefill_delay_us = " + std::to_string(opts.inject_prefill_delay_us) +
                      " is invalid (must be >= 0)");
  }
  if (opts.inject_decode_work < 0) {
    throw EngineError("backend option inject_decode_work = " + std::to_string(opts.inject_decode_work) +
                      " is invalid (must be >= 0)");
  }
  std::unique_ptr<Backend> b;
  if (opts.name == "cpu") {
    b = std::make_unique<cpu::CpuBackend>(model, opts);
  } else if (opts.name == "cuda") {
    b = make_cuda_backend_from_module(model, opts);
  } else {
    throw EngineError("backend '" + opts.name + "' is unknown (expected 'cpu' or 'cuda')");
  }
  b->set_inject_decode_delay_us(opts.inject_decode_delay_us);
  b->set_inject_decode_work(opts.inject_decode_work);
  b->set_inject_prefill_delay_us(opts.inject_prefill_delay_us);
  return b;
}

int Backend::forward_sample_logprobs(std::span<const int>, int, Sampler&, int, TokenLogprobs&) {
  throw UnsupportedFeatureError(std::string(name()), "logprobs");
}

int Backend::sample_with_logprobs(std::span<const float> logits, Sampler& sampler, int top_n, TokenLogprobs& out) {
  const int id = sampler.sample(logits);
  out = raw_logprobs(logits, id, top_n);
  return id;
}

void Backend::prefill_chunk_done(int chunk_tokens, bool more) {
  if (!in_prefill_) return;
  if (prefill_delay_us_ > 0 && chunk_tokens > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(prefill_delay_us_ * chunk_tokens));
  }
  if (more && prefill_cancelled_ && prefill_cancelled_()) {
    throw GenerationCancelled("prefill cancelled at a chunk boundary (the caller asked: client gone or drain timeout)");
  }
}

BackendOptions backend_options_from_env(BackendOptions base) {
  if (env_flag("ATLAS_NO_DECODE_GRAPHS")) base.decode_graphs = false;
  base.threads = env_int("ATLAS_THREADS", 1, 4096, base.threads);
  return base;
}

}  // namespace atlas::engine
