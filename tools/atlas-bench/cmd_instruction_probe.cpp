// atlas-bench instruction-probe (hidden): the child the instructions suite runs under
// `valgrind --tool=callgrind --collect-atstart=no`; brackets prefill and decode with callgrind
// client requests (suites/instructions/instruction_probe.hpp) and prints a JSON report on stdout.
#include <iostream>
#include <memory>

#include "common/exit_code.hpp"
#include "suites/instructions/instruction_probe.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

const RegisterCommand kProbe{{
    "instruction-probe",
    "Internal: the region the instructions suite counts under callgrind",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      sub.group("");  // not listed in --help: users run `run --suite instructions`
      auto r = std::make_shared<suites::ProbeRequest>();
      r->engine.backend.name = "cpu";
      sub.add_option("--model", r->engine.model, "Model path")->required();
      sub.add_option("--tokenizer", r->engine.tokenizer, "Tokenizer file");
      sub.add_option("--max-seq-len", r->engine.max_seq_len, "KV cache capacity (0: the model's)");
      sub.add_option("--prompt-tokens", r->prompt_tokens, "Prefill region length")->check(CLI::PositiveNumber);
      sub.add_option("--decode-tokens", r->decode_tokens, "Decode region length")->check(CLI::PositiveNumber);
      sub.add_option("--seed", r->seed, "Prompt seed");
      sub.add_option("--inject-decode-delay-us", r->engine.backend.inject_decode_delay_us, "Test hook")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--inject-decode-work", r->engine.backend.inject_decode_work, "Test hook")
          ->check(CLI::NonNegativeNumber);
      return [r] {
        std::cout << suites::run_instruction_probe(*r).to_json().dump() << "\n";
        return to_int(ExitCode::pass);
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
