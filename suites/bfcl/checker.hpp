#pragma once
// BFCL's AST checker (eval_checker/ast_eval/ast_checker.py, "AC"), rule for rule: the
// single-call check (spec §5), the simple / multiple / parallel dispatch (§2.6, §3, §4) and the
// error_type strings (§9). Quirks are kept on purpose and marked "quirk" with their section.
#include <string>
#include <vector>

#include "suites/bfcl/dataset.hpp"
#include "suites/bfcl/decode.hpp"

namespace atlas::suites::bfcl {

struct CheckResult {
  bool valid = true;
  std::string error_type;  ///< "" when valid (upstream may carry "...:unclear" on success)
  std::string error;       ///< human-readable reason
};

/// BFCL's string normalisation (AC standardize_string, spec §5.2): delete ` ,./-_*^`,
/// lower-case, turn `'` into `"`.
std::string standardize_string(std::string_view s);

/// The single-call check (AC:333-515, spec §5) of `call` against schema `schema` and ground truth
/// `gt`. `underscore_to_dot`: expect the schema name with '.' replaced by '_' (spec §5 step 1).
CheckResult check_single_call(const FunctionSchema& schema, const DecodedCall& call, const GroundTruthCall& gt,
                              bool underscore_to_dot);

/// ast_checker (AC:33-61): dispatches on the category name. `functions` is the entry's menu.
CheckResult check_ast(std::string_view category, const std::vector<FunctionSchema>& functions,
                      const std::vector<DecodedCall>& calls, const std::vector<GroundTruthCall>& gt,
                      bool underscore_to_dot);

}  // namespace atlas::suites::bfcl
