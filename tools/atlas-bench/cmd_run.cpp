// atlas-bench run: runs suites on the in-process engine and writes one record to the store.
#include "common/build_paths.hpp"
#include <unistd.h>

#include <iostream>
#include <memory>

#include "common/exit_code.hpp"
#include "records/store.hpp"
#include "runs/suite_run.hpp"
#include "suites/progress.hpp"
#include "suites/report.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

/// Each suite's metrics table, then the tables it attached (details "table" and "extra_tables").
void print_suite_tables(const records::Record& rec, const std::string& format) {
  const auto printer = suites::make_table_printer(format);
  for (const auto& [name, s] : rec.suites) {
    std::cout << "\n";
    printer->print(suites::metrics_table(s), std::cout);
    if (s.details.contains("table")) {
      std::cout << "\n";
      printer->print(suites::table_from_json(s.details["table"]), std::cout);
    }
    if (s.details.contains("extra_tables"))
      for (const auto& t : s.details["extra_tables"]) {
        std::cout << "\n";
        printer->print(suites::table_from_json(t), std::cout);
      }
  }
}

/// The flags that choose what runs (runs::SuiteRunOptions), and how results are shown and stored.
struct RunArgs : runs::SuiteRunOptions {
  std::string out_dir = ".benchmarks";
  std::string format = "text";
  bool no_store = false;
};

/// A finished run's exit status: a record marked invalid (a suite failed, a request failed, a
/// load level whose client fell behind its schedule) is a measurement that cannot be trusted,
/// inconclusive (2), not a usage error (3: README's exit-code table). The reason is printed and
/// is in the record (invalid_reason).
int run_exit_status(const records::Record& rec) {
  if (rec.valid) return to_int(ExitCode::pass);
  std::cerr << "atlas-bench run: the run is invalid (exit 2, inconclusive): " << rec.invalid_reason << "\n";
  return to_int(ExitCode::inconclusive);
}

int run_command(const RunArgs& a, const GlobalOptions& g) {
  const std::string data_dir = resolve_data_dir(g);
  const engine::EngineOptions eo = runs::suite_run_engine_options(a, data_dir);
  suites::SuiteSetRequest req = runs::plan_suite_run(a, data_dir);
  auto progress = suites::make_progress(std::cerr, STDERR_FILENO);
  req.progress = progress.get();
  // Usage errors before any work: a bad table format or suite config must not cost a run.
  (void)suites::make_table_printer(a.format);
  suites::check_suite_set(req);

  const runs::RunStamp stamp{ATLAS_SOURCE_DIR, g.argv, a.api_key_env};
  const records::Record rec = a.endpoint.empty() ? runs::run_suites_on_engine(eo, req, stamp)
                                                 : runs::run_suites_on_endpoint(a, eo, req, stamp);
  print_suite_tables(rec, a.format);
  if (!a.no_store) std::cout << "\nrecord: " << records::write_to_store(rec, a.out_dir).string() << "\n";
  return run_exit_status(rec);
}

const RegisterCommand kRun{{
    "run",
    "Run benchmark suites on the in-process engine and write a record",
    [](CLI::App& sub, const GlobalOptions& g) -> std::function<int()> {
      auto a = std::make_shared<RunArgs>();
      sub.add_option("--suite", a->suite,
                     "ttft | agentic | decode-anatomy | bfcl | load | instructions | all, or a comma list (default: "
                     "all = the first four; load when --concurrency/--rate is given)");
      sub.add_option("--model", a->model, "Model file (default <data-dir>/models/stories260K/stories260K.bin)");
      sub.add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer (tok*.bin), or a tokenizer.json for a safetensors model directory; for a GGUF file either one replaces its own (default: beside the model / in the file)");
      CLI::Option* backend =
          sub.add_option("--backend", a->backend, "cpu | cuda (in process only)")->capture_default_str()->check(CLI::IsMember({"cpu", "cuda"}));
      CLI::Option* threads = sub.add_option("--threads", a->threads, "CPU threads (0: all; env ATLAS_THREADS; in process only)");
      sub.add_option("--config", a->config, "pr | nightly | a suite-config JSON file")->capture_default_str();
      sub.add_option("--warmup", a->warmup, "Unmeasured repetitions per suite (overrides the config)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--repetitions", a->repetitions, "Measured repetitions per suite (overrides the config)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--seed", a->seed, "Seed of every synthetic input (overrides the config)");
      sub.add_option("--out-dir,--store", a->out_dir, "Record store directory (.benchmarks)")->capture_default_str();
      sub.add_option("--format", a->format, "Tables: text | markdown")->capture_default_str();
      sub.add_flag("--no-store", a->no_store, "Print results without writing a record");
      sub.add_option("--endpoint", a->endpoint,
                     "Drive an OpenAI-compatible server at this base URL (e.g. http://127.0.0.1:8000/v1) instead of "
                     "the in-process engine; --model gives the local tokenizer");
      sub.add_option("--api-key-env", a->api_key_env, "Environment variable holding the endpoint's API key");
      sub.add_option("--inject-decode-delay-us", a->inject_decode_delay_us,
                     "Test hook: sleep this many microseconds (fractions allowed) per decoded token")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--served-model", a->served_model, "Model name to request (default: the first /v1/models lists)");
      sub.add_option("--context-length", a->context_length,
                     "Endpoint context in tokens (default: max_model_len, llama.cpp meta.n_ctx or /props)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--server-kind", a->server_kind, "Endpoint family for its extensions (default: from /v1/models owned_by)")
          ->check(CLI::IsMember({"vllm", "sglang", "llamacpp", "trtllm", "atlas-serve", "openai"}));
      sub.add_option("--concurrency", a->concurrency, "Load suite: closed-loop levels, requests in flight (e.g. 1,2,4)");
      sub.add_option("--rate", a->rates, "Load suite: open-loop levels, requests per second (e.g. 2,8)");
      sub.add_option("--burstiness", a->burstiness, "Load suite: gamma shape of arrival gaps (1 = Poisson)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--num-prompts", a->num_prompts, "Load suite: requests per level")->check(CLI::PositiveNumber);
      sub.add_option("--input-len", a->input_len, "Load suite: prompt tokens per request")->check(CLI::PositiveNumber);
      sub.add_option("--output-len", a->output_len, "Load suite: output tokens per request (exactly: ignore_eos)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--goodput", a->goodput, "Load suite: SLOs for goodput, e.g. ttft_ms:500,tpot_ms:50");
      sub.add_option("--max-concurrency", a->max_concurrency,
                     "Load suite, with --rate: most requests in flight; an arrival beyond it waits for a slot (vLLM's --max-concurrency)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--warmup-requests", a->warmup_requests,
                     "Load suite: unmeasured requests per level before its measured ones, at the level's load (default 0)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--max-send-lag-ms", a->max_send_lag_ms,
                     "Load suite: a level whose p99 send lag exceeds this is invalid (default 10)")
          ->check(CLI::NonNegativeNumber);
      return [a, &g, backend, threads] {
        a->backend_given = backend->count() > 0;
        a->threads_given = threads->count() > 0;
        return run_command(*a, g);
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
