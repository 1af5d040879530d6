#pragma once
// Record <-> JSON (schema: docs/record-schema.md, records/record.schema.json).
//
// Writing computes each metric's `summary` from its raw samples, so a summary can never
// disagree with the samples it describes. Reading validates every field it knows and throws
// RecordError naming the file, the JSON path of the field (RFC 6901 pointer) and the bad value;
// it ignores unknown keys (readers of a newer minor addition still work, as AIPerf's schema
// advises) and recomputes summaries instead of trusting the file.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "records/record.hpp"

namespace atlas::records {

/// JSON value of a record (schema_version kSchemaVersion), summaries computed from samples.
nlohmann::json to_json(const Record& r);

/// JSON value of one metric: {unit, better, kind, description, samples, summary}.
nlohmann::json to_json(const Metric& m);

/// Parses a record. `source` (usually the file path) prefixes every error message.
/// Throws RecordError: wrong type / missing required field / bad enum value (naming the JSON
/// pointer and the value), or an unsupported schema_version.
Record record_from_json(const nlohmann::json& j, const std::string& source);

/// Parses one metric at JSON pointer `where` (for messages).
Metric metric_from_json(const nlohmann::json& j, const std::string& source, const std::string& where);

/// Reads and parses a record file. Throws RecordError (also for unreadable or malformed JSON).
Record read_record(const std::filesystem::path& path);

/// The record as written to disk: 2-space indented JSON plus a trailing newline. Throws
/// RecordError naming the field when the record would not read back (a non-finite sample, an
/// invalid record without invalid_reason, an empty machine_class or gate_or_suite).
std::string record_text(const Record& r);

}  // namespace atlas::records
