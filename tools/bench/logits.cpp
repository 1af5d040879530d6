// bench_logits: runs a model on token ids and writes its logits, for cross-checks against other
// implementations (tools/llama-cpp-qwen3next-check.sh compares them with llama.cpp's) and for
// load-memory measurements (run it under /usr/bin/time -v: peak RSS vs the file size).
//
//   bench_logits MODEL --prompt 1,2,3 [--steps N] [--teacher FILE] [--threads T] [--max-seq-len L] [--out FILE]
//
// Prefills the prompt in one forward, then takes N single-token steps: each feeds the argmax of
// the previous logits (greedy), or the next id of --teacher (a file of whitespace-separated ids,
// prompt first, as written to OUT.tokens: teacher forcing). Writes OUT (float32 little-endian,
// [N + 1][vocab]: the logits after the prompt, then after each step) and OUT.tokens (prompt and
// fed ids). Prints the weights' bytes by storage type (what the model holds, typed views included)
// and the timings to stderr. Exits 3 on a usage or input error (the message names the argument,
// its value or the file), 4 on a failure of the machine (common/exit_code.hpp; README, "Exit codes").
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/exit_code.hpp"
#include "tools/cli_parse.hpp"
#include "engine/backend.hpp"
#include "engine/error.hpp"
#include "engine/model.hpp"

namespace {

using namespace atlas::engine;

/// Bytes the weights hold per storage type (views into the file count with the file's type).
std::map<std::string, std::size_t> held_bytes(const Model& m) {
  std::map<std::string, std::size_t> by;
  auto add = [&](const Weight& w) {
    if (!w.empty()) by[to_string(w.dtype())] += w.bytes().size();
  };
  // Experts: one Weight each (or, in older engines, one stacked Weight).
  auto add_all = [&](const auto& experts) {
    if constexpr (std::is_same_v<std::decay_t<decltype(experts)>, Weight>) add(experts);
    else for (const auto& w : experts) add(w);
  };
  add(m.weights.tok_embd);
  add(m.weights.output_norm);
  if (!m.config.tied_embeddings) add(m.weights.output);
  for (const auto& L : m.weights.layers) {
    for (const Weight* w : {&L.attn_norm, &L.wq, &L.wk, &L.wv, &L.wo, &L.q_norm, &L.k_norm, &L.gdn.in_qkvz, &L.gdn.in_ba, &L.gdn.conv1d,
                            &L.gdn.dt_bias, &L.gdn.a, &L.gdn.norm, &L.gdn.out, &L.ffn_norm, &L.w_gate, &L.w_up, &L.w_down, &L.moe.router,
                            &L.moe.shared_gate, &L.moe.gate_shexp, &L.moe.up_shexp, &L.moe.down_shexp})
      add(*w);
    add_all(L.moe.gate_exps);
    add_all(L.moe.up_exps);
    add_all(L.moe.down_exps);
  }
  return by;
}

int run(int argc, char** argv) {
  std::string model_path, out, teacher_file;
  std::vector<int> prompt, teacher;
  int steps = 0, threads = 1, max_seq_len = 0;
  // CLI11, as atlas-bench: a bad value (--steps many) or an unknown option is a usage error that
  // names it, exit 3 (tools/cli_parse.hpp).
  CLI::App app{"runs a model on token ids and writes its logits", "bench_logits"};
  app.add_option("model", model_path, "model file")->required();
  app.add_option("--prompt", prompt, "prompt token ids, comma-separated")->delimiter(',')->required()
      ->check(CLI::Range(0, INT_MAX));
  app.add_option("--steps", steps, "single-token steps after the prompt")->check(CLI::Range(0, 1'000'000));
  app.add_option("--teacher", teacher_file, "ids to feed instead of the argmax (whitespace-separated, prompt first)");
  app.add_option("--threads", threads, "CPU threads")->check(CLI::Range(0, 4096));
  app.add_option("--max-seq-len", max_seq_len, "context length (0: the model's)")->check(CLI::NonNegativeNumber);
  app.add_option("--out", out, "logits file (float32 [steps + 1][vocab]; ids in OUT.tokens)");
  if (const auto code = atlas::cli::parse_or_exit_code(app, argc, argv)) return *code;
  if (!teacher_file.empty()) {
    std::ifstream f(teacher_file);
    if (!f) throw EngineError("bench_logits: --teacher " + teacher_file + ": cannot open");
    for (int id; f >> id;) teacher.push_back(id);
  }
  if (prompt.empty()) throw EngineError("bench_logits: --prompt: give at least one token id");
  if (!teacher.empty() && teacher.size() < prompt.size() + static_cast<std::size_t>(steps))
    throw EngineError("bench_logits: --teacher holds " + std::to_string(teacher.size()) + " ids, the prompt and " + std::to_string(steps) +
                      " steps need " + std::to_string(prompt.size() + static_cast<std::size_t>(steps)));
  const auto t0 = std::chrono::steady_clock::now();
  LoadOptions lo;
  lo.max_seq_len = max_seq_len;
  const Model m = load_model(model_path, lo);
  const auto t1 = std::chrono::steady_clock::now();
  for (const auto& [t, b] : held_bytes(m)) std::cerr << "weights " << t << ": " << b << " bytes\n";
  BackendOptions o;
  o.threads = threads;
  o.max_seq_len = max_seq_len;
  auto backend = make_backend(m, o);
  std::vector<float> all;
  std::vector<int> fed = prompt;
  auto logits = backend->forward(prompt, 0);
  const auto t2 = std::chrono::steady_clock::now();
  all.insert(all.end(), logits.begin(), logits.end());
  int pos = static_cast<int>(prompt.size());
  for (int s = 0; s < steps; ++s) {
    int next = 0;
    if (!teacher.empty()) {
      next = teacher[static_cast<std::size_t>(pos)];
    } else {
      for (std::size_t i = 1; i < logits.size(); ++i) if (logits[i] > logits[static_cast<std::size_t>(next)]) next = static_cast<int>(i);
    }
    fed.push_back(next);
    logits = backend->forward(std::span<const int>(&next, 1), pos++);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  const auto t3 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::cerr << "load " << ms(t0, t1) << " ms, prefill " << prompt.size() << " tokens " << ms(t1, t2) << " ms, " << steps << " steps "
            << ms(t2, t3) << " ms (" << threads << " threads)\n";
  if (!out.empty()) {
    // Written as records are (common/atomic_file.hpp): a failure names the file and errno, and a
    // full disk (the machine, exit 4) is told from a wrong path (the input, exit 3).
    atlas::write_file_atomic(out, std::string_view(reinterpret_cast<const char*>(all.data()), all.size() * sizeof(float)));
    std::string ids;
    for (std::size_t i = 0; i < fed.size(); ++i) ids += (i ? " " : "") + std::to_string(fed[i]);
    atlas::write_file_atomic(out + ".tokens", ids + "\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (...) {
    return atlas::exit_code_of_current_exception("bench_logits");
  }
}
