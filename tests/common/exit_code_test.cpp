// One mapping from what was thrown to the exit code every command returns (README, "Exit
// codes"): a bad input is 3, a failure of the machine or of the program is 4.
#include <doctest/doctest.h>

#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "common/machine_error.hpp"

namespace {

struct Mapped {
  int code;
  std::string printed;
};

/// Throws `e`, maps it inside the catch block as a main() does, and captures stderr.
template <class E>
Mapped map(const E& e) {
  std::ostringstream err;
  auto* old = std::cerr.rdbuf(err.rdbuf());
  int code = -1;
  try {
    throw e;
  } catch (...) {
    code = atlas::exit_code_of_current_exception("prog");
  }
  std::cerr.rdbuf(old);
  return {code, err.str()};
}

}  // namespace

TEST_CASE("exit codes: input errors are 3; machine errors, out of memory and untyped exceptions are 4") {
  const auto input = map(atlas::InputError("model.gguf: field n_layers: -1 is not > 0"));
  CHECK(input.code == 3);
  CHECK(input.printed == "prog: error: model.gguf: field n_layers: -1 is not > 0\n");

  const auto plain = map(atlas::Error("cannot write out.json: No space left on device"));
  CHECK(plain.code == 3);

  const auto machine = map(atlas::MachineError("cuda backend: no CUDA device"));
  CHECK(machine.code == 4);
  CHECK(machine.printed == "prog: machine error: cuda backend: no CUDA device\n");

  const auto oom = map(std::bad_alloc());
  CHECK(oom.code == 4);
  CHECK(oom.printed.rfind("prog: out of memory: ", 0) == 0);

  // A library's exception no layer translated is a bug in the program, never "your input".
  const auto bug = map(std::out_of_range("vector::_M_range_check"));
  CHECK(bug.code == 4);
  CHECK(bug.printed == "prog: internal error: vector::_M_range_check\n");

  const auto unknown = map(42);
  CHECK(unknown.code == 4);
  CHECK(unknown.printed == "prog: internal error: an exception of unknown type\n");
}

TEST_CASE("exit codes: the enum's values are the README's table") {
  CHECK(atlas::to_int(atlas::ExitCode::pass) == 0);
  CHECK(atlas::to_int(atlas::ExitCode::regression) == 1);
  CHECK(atlas::to_int(atlas::ExitCode::inconclusive) == 2);
  CHECK(atlas::to_int(atlas::ExitCode::input_error) == 3);
  CHECK(atlas::to_int(atlas::ExitCode::machine_error) == 4);
}
