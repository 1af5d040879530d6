#include "common/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <fstream>
#include <memory>
#include <vector>

#include "common/error.hpp"
#include "common/machine_error.hpp"

namespace atlas {
namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;

MdCtx new_ctx() {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) throw MachineError("sha256: OpenSSL init failed");
  return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx, md.data(), &len) != 1) throw MachineError("sha256: OpenSSL final failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  auto ctx = new_ctx();
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return finish(ctx.get());
}

std::string sha256_file_hex(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open for hashing");
  auto ctx = new_ctx();
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(path.string() + ": read failed while hashing");
  return finish(ctx.get());
}

}  // namespace atlas
