#include "engine/cuda/blocks/head.hpp"

#include "engine/cuda/blocks/block_util.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemv.hpp"

namespace atlas::engine::cuda {

using kernels::padded_ld;

DeviceHead::DeviceHead(const ModelConfig& c, kernels::ElemType wt) : c_(c), wt_(wt), ld_dim_(padded_ld(c.dim)) {}

void DeviceHead::layout(Arenas& a) {
  const std::size_t start = a.weights.used();
  tok_embd_ = take(a.weights, wt_, static_cast<std::size_t>(c_.vocab_size) * ld_dim_);
  output_norm_ = take<float>(a.weights, ld_dim_);
  output_ = c_.tied_embeddings ? tok_embd_ : take(a.weights, wt_, static_cast<std::size_t>(c_.vocab_size) * ld_dim_);
  weight_bytes_ = a.weights.used() - start;
  logits_ = take<float>(a.workspace, c_.vocab_size);
  rope_cs_ = take<float>(a.workspace, c_.head_dim);
  argmax_scratch_ = a.workspace.take(kernels::argmax_scratch_bytes());
  logprobs_scratch_ = a.workspace.take(kernels::logprobs_scratch_bytes());
}

void DeviceHead::upload(const ModelWeights& w, Uploader& up) {
  up.rows(w.tok_embd, c_.vocab_size, c_.dim, tok_embd_, ld_dim_, ld_dim_, "token_embd");
  up.f32(w.output_norm, c_.dim, output_norm_, "output_norm");
  if (!c_.tied_embeddings) up.rows(w.output, c_.vocab_size, c_.dim, output_, ld_dim_, ld_dim_, "output");
}

void DeviceHead::embed(StepContext& s, const int* token) {
  s.tape.kernel(Stage::embed, [&] {
    kernels::embed_token(wt_, tok_embd_, ld_dim_, c_.dim, token, s.x, {s.pos, c_.head_dim, c_.rope_theta, rope_cs_},
                         s.tape.stream());
  });
}

void DeviceHead::logits_and_sample(LaunchTape& tape, const float* x, const kernels::DeviceSampling* sampling, int* token_out) {
  tape.kernel(Stage::lm_head, [&] {  // final norm fused into the prologue
    kernels::gemv({wt_, output_, c_.vocab_size, c_.dim, ld_dim_, kernels::GemvInput::rmsnorm, x, output_norm_, c_.rms_eps,
                   kernels::GemvOutput::store, logits_},
                  tape.stream());
  });
  tape.kernel(Stage::sample, [&] {
    kernels::sample_token(logits_, c_.vocab_size, sampling, token_out, argmax_scratch_, tape.stream());
  });
}

void DeviceHead::logprobs(LaunchTape& tape, kernels::StepLogprobs* out) {
  tape.kernel(Stage::sample, [&] { kernels::token_logprobs(logits_, c_.vocab_size, out, logprobs_scratch_, tape.stream()); });
}

void DeviceHead::embed_rows(LaunchTape& tape, const int* tokens, int n, float* x) {
  tape.work(Stage::embed, [&] { kernels::embed_rows(wt_, tok_embd_, ld_dim_, c_.dim, tokens, n, x, tape.stream()); });
}

std::size_t DeviceHead::bytes_per_token() const {
  const std::size_t es = kernels::elem_size(wt_);
  // lm_head, the float32 final-norm gain, the embedding row.
  return static_cast<std::size_t>(c_.vocab_size) * ld_dim_ * es + c_.dim * sizeof(float) + static_cast<std::size_t>(c_.dim) * es;
}

}  // namespace atlas::engine::cuda
