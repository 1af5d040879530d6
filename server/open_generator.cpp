// Kept apart from generator.cpp so that code using make_session_generator() on a model it
// loaded itself does not pull in every model format through load_model().
#include "engine/backend.hpp"
#include "engine/formats/load_for_backend.hpp"
#include "engine/model.hpp"
#include "server/generator.hpp"

namespace atlas::server {

std::unique_ptr<Generator> open_session_generator(const GeneratorOptions& opts) {
  engine::LoadOptions lo;
  lo.max_seq_len = opts.max_seq_len;
  lo.tokenizer_path = opts.tokenizer;
  engine::BackendOptions bo;
  bo.name = opts.backend;
  bo.max_seq_len = opts.max_seq_len;
  bo.threads = opts.threads;
  bo.inject_decode_delay_us = opts.inject_decode_delay_us;
  bo.inject_prefill_delay_us = opts.inject_prefill_delay_us;
  bo = engine::backend_options_from_env(bo);
  return make_session_generator(engine::load_model_for_backend(opts.model, lo, bo.name), bo);
}

}  // namespace atlas::server
