// atlas-bench ab: one suite on two configurations, interleaved, with medians, ratios, the
// paired judgement the gate uses (records/paired_judgement.hpp) and a greedy output-parity check.
#include "common/build_paths.hpp"
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>

#include "common/exit_code.hpp"
#include "engine/backend.hpp"
#include "records/store.hpp"
#include "suites/ab/ab.hpp"
#include "suites/engine_target.hpp"
#include "suites/record_provenance.hpp"
#include "suites/runner.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct AbArgs {
  std::string suite = "decode-anatomy";
  std::string a, b;
  std::string model;
  std::string backend = "cpu";
  std::string config = "pr";
  std::optional<int> warmup, repetitions;
  std::optional<std::uint64_t> seed;
  int parity_prompts = 200;
  double tolerance = 0.03;
  int max_rounds = 0;
  bool no_parity = false;
  std::string out_dir = ".benchmarks";
  std::string format = "text";
  bool no_store = false;
};

int ab_command(const AbArgs& args, const GlobalOptions& g) {
  const std::string data_dir = resolve_data_dir(g);
  engine::EngineOptions base;
  base.model = args.model.empty() ? data_dir + "/models/stories260K/stories260K.bin" : args.model;
  base.backend.name = args.backend;

  suites::AbRequest req;
  req.suite = args.suite;
  const auto config = suites::load_suite_set_config(args.config);
  req.options = suites::suite_options(config, args.suite, {args.warmup, args.repetitions, args.seed});
  req.options.data_dir = data_dir;
  req.a = suites::parse_side_spec(args.a, "a");
  req.b = suites::parse_side_spec(args.b, "b");
  req.parity = !args.no_parity;
  req.tolerance = args.tolerance;
  req.max_rounds = args.max_rounds;
  req.parity_config.prompts = args.parity_prompts;
  req.parity_config.seed = req.options.seed;
  auto progress = suites::make_progress(std::cerr, STDERR_FILENO);
  req.options.progress = nullptr;  // per-round progress comes from run_ab

  const auto result = suites::run_ab(
      req,
      [&](const suites::SideSpec& side) -> std::unique_ptr<suites::Target> {
        engine::EngineOptions eo = base;
        suites::apply_engine_options(eo, side.options);
        eo.backend = engine::backend_options_from_env(eo.backend);  // the side's env is applied here
        return std::make_unique<suites::EngineTarget>(eo);
      },
      progress.get());
  records::Record rec = result.record;
  suites::fill_run_provenance(rec, ATLAS_SOURCE_DIR);
  if (auto* a = dynamic_cast<suites::EngineTarget*>(&result.target_a->inner())) {
    suites::fill_model_provenance(rec, *a, data_dir);
  }
  rec.config["env"] = suites::atlas_environment();

  suites::make_table_printer(args.format)->print(suites::ab_table(result), std::cout);
  if (!args.no_store) std::cout << "\nrecord: " << records::write_to_store(rec, args.out_dir).string() << "\n";
  // Exit 1 when the sides' greedy outputs or their routing differ: the comparison was not of
  // the same computation.
  const bool same = result.parity.mismatches.empty() && result.parity.routing_mismatches.empty();
  return to_int(same ? ExitCode::pass : ExitCode::regression);
}

const RegisterCommand kAb{{
    "ab",
    "A/B one suite on two configurations (env or engine options per side), interleaved",
    [](CLI::App& sub, const GlobalOptions& g) -> std::function<int()> {
      auto a = std::make_shared<AbArgs>();
      sub.add_option("--suite", a->suite, "ttft | agentic | decode-anatomy")->capture_default_str();
      sub.add_option("--a", a->a, "Side A: \"ATLAS_X=1 threads=1 backend=cpu\" (env KEY=V, engine key=v)")->required();
      sub.add_option("--b", a->b, "Side B, same form")->required();
      sub.add_option("--model", a->model, "Model file (default <data-dir>/models/stories260K/stories260K.bin)");
      sub.add_option("--backend", a->backend, "Default backend of both sides: cpu | cuda")->capture_default_str();
      sub.add_option("--config", a->config, "pr | nightly | a suite-config JSON file (the suite's section)")
          ->capture_default_str();
      sub.add_option("--warmup", a->warmup, "Unmeasured runs per side before round 1")->check(CLI::NonNegativeNumber);
      sub.add_option("--repetitions", a->repetitions, "Rounds (AB, BA, AB, ...; at least this many)")
          ->check(CLI::PositiveNumber);
      sub.add_option("--max-rounds", a->max_rounds,
                     "Keep adding rounds (in AB BA pairs) until every timed metric is decided, up to this many")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--tolerance", a->tolerance,
                     "Relative change the timed judgement must resolve: 'same' only when a change this large would "
                     "have been detected")
          ->capture_default_str()
          ->check(CLI::Range(0.0001, 0.99));
      sub.add_option("--seed", a->seed, "Seed of every synthetic input");
      sub.add_option("--parity-prompts", a->parity_prompts, "Prompts of the greedy parity check")
          ->capture_default_str()->check(CLI::PositiveNumber);
      sub.add_flag("--no-parity", a->no_parity, "Skip the parity check");
      sub.add_option("--out-dir,--store", a->out_dir, "Record store directory (.benchmarks)")->capture_default_str();
      sub.add_option("--format", a->format, "Table: text | markdown")->capture_default_str();
      sub.add_flag("--no-store", a->no_store, "Do not write a record");
      return [a, &g] { return ab_command(*a, g); };
    },
}};

}  // namespace
}  // namespace atlas::cli
