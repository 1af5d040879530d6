#pragma once
// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface; used for model, data and diff hashes.
#include <filesystem>
#include <string>
#include <string_view>

namespace atlas {
/// Lower-case hex SHA-256 of a byte string.
std::string sha256_hex(std::string_view bytes);
/// Lower-case hex SHA-256 of a file, streamed in 1 MiB blocks. Throws atlas::InputError naming
/// the path when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);
}  // namespace atlas
