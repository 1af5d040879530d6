#pragma once
// Integer option values for the binaries that parse argv by hand (bench_logits,
// atlas-cuda-bench): a value that is not a whole integer in range is the user's error, an
// InputError naming the option and the value (exit 3), where std::stoi would throw
// std::invalid_argument, which reaches main() as an "internal error" (exit 4).
#include <string>
#include <string_view>

namespace atlas {

/// `value` as an int in [min_value, max_value]; throws InputError("<option> <value>: expected an
/// integer from <min_value> to <max_value>") when it is not (empty, trailing text, out of range).
int parse_int_option(std::string_view option, std::string_view value, int min_value, int max_value);

}  // namespace atlas
