// One mapping from what was thrown to the exit code and the printed line, used by every main().
#include "common/exit_code.hpp"

#include <exception>
#include <iostream>
#include <new>

#include "common/error.hpp"
#include "common/machine_error.hpp"

namespace atlas {

int exit_code_of_current_exception(std::string_view program) noexcept {
  const auto say = [&](std::string_view kind, const char* what) { std::cerr << program << ": " << kind << ": " << what << "\n"; };
  try {
    throw;
  } catch (const MachineError& e) {
    say("machine error", e.what());
    return to_int(ExitCode::machine_error);
  } catch (const Error& e) {
    // Every other typed error is about the input (InputError and the layers' errors beneath it).
    say("error", e.what());
    return to_int(ExitCode::input_error);
  } catch (const std::bad_alloc& e) {
    say("out of memory", e.what());
    return to_int(ExitCode::machine_error);
  } catch (const std::exception& e) {
    // Not one of the project's typed errors: a library's exception that no layer translated,
    // which is a bug in this program (the input would have been named by a typed error).
    say("internal error", e.what());
    return to_int(ExitCode::machine_error);
  } catch (...) {
    say("internal error", "an exception of unknown type");
    return to_int(ExitCode::machine_error);
  }
}

}  // namespace atlas
