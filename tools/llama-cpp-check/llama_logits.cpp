// llama_logits: the llama.cpp side of tools/llama-cpp-qwen3next-check.sh. Built by that script
// against llama.cpp's public C API (include/llama.h) and its static libraries; not part of the
// project's build (llama.cpp is not a dependency).
//
//   llama_logits MODEL.gguf TOKENS_FILE N_PROMPT OUT [THREADS]
//
// TOKENS_FILE holds whitespace-separated token ids (the prompt, then the ids to feed: our
// engine's greedy tokens, bench_logits' OUT.tokens). Decodes the first N_PROMPT ids as one batch,
// then every later id one at a time (teacher forcing, positions continuing), and writes OUT:
// float32 [1 + steps][n_vocab], the logits after the prompt and after each fed id (the layout
// bench_logits writes). Exit 3 on a usage error, 4 with a message when llama.cpp fails (it cannot
// load the file or make a context, a decode fails) or OUT cannot be written; the calling script
// counts any failure against the check.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "llama.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s MODEL.gguf TOKENS_FILE N_PROMPT OUT [THREADS]\n", argv[0]);
    return 3;  // a usage error (atlas-bench's README, "Exit codes")
  }
  std::vector<llama_token> ids;
  {
    std::ifstream f(argv[2]);
    for (int id; f >> id;) ids.push_back(id);
  }
  const int n_prompt = std::atoi(argv[3]);
  const int threads = argc > 5 ? std::atoi(argv[5]) : 1;
  if (n_prompt <= 0 || static_cast<std::size_t>(n_prompt) > ids.size()) {
    std::fprintf(stderr, "llama_logits: N_PROMPT %d outside the %zu ids of %s\n", n_prompt, ids.size(), argv[2]);
    return 3;
  }
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) {
    std::fprintf(stderr, "llama_logits: llama.cpp could not load %s\n", argv[1]);
    return 4;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = static_cast<uint32_t>(ids.size() + 16);
  cp.n_batch = static_cast<uint32_t>(ids.size() + 16);
  cp.n_ubatch = cp.n_batch;
  cp.n_threads = threads;
  cp.n_threads_batch = threads;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    std::fprintf(stderr, "llama_logits: no context for %s\n", argv[1]);
    return 4;
  }
  const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  std::vector<float> out;
  auto keep = [&]() -> bool {
    const float* l = llama_get_logits_ith(ctx, -1);
    if (!l) return false;
    out.insert(out.end(), l, l + n_vocab);
    return true;
  };
  if (llama_decode(ctx, llama_batch_get_one(ids.data(), n_prompt)) != 0 || !keep()) {
    std::fprintf(stderr, "llama_logits: llama_decode failed on the %d-token prompt\n", n_prompt);
    return 4;
  }
  for (std::size_t i = static_cast<std::size_t>(n_prompt); i < ids.size(); ++i) {
    if (llama_decode(ctx, llama_batch_get_one(&ids[i], 1)) != 0 || !keep()) {
      std::fprintf(stderr, "llama_logits: llama_decode failed at position %zu\n", i);
      return 4;
    }
  }
  std::ofstream f(argv[4], std::ios::binary);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(float)));
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return f ? 0 : 4;
}
