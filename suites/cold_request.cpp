#include "suites/cold_request.hpp"

#include <algorithm>
#include <random>

#include "suites/error.hpp"

namespace atlas::suites {

ColdRequests::ColdRequests(Target& target) : target_(&target), builder_(target.tokenizer()) {
  std::random_device rd;
  fallback_salt_ = mix_seed((static_cast<std::uint64_t>(rd()) << 32) | rd(), 0xC01DULL) | 1;
}

std::vector<int> ColdRequests::salted_ids(std::span<const int> ids, std::uint64_t salt, std::size_t max_len) const {
  std::vector<int> out(ids.begin(), ids.end());
  if (salt == 0) return out;
  const auto bos = target_->tokenizer().bos_id();
  const std::size_t at = bos && !out.empty() && out[0] == *bos ? 1 : 0;
  // Fewer salt ids only where the prompt is shorter than BOS + kSaltTokens (ttft keeps lengths).
  const std::size_t room = max_len > at ? max_len - at : 0;
  const std::vector<int> unique = builder_.filler(static_cast<int>(std::min<std::size_t>(kSaltTokens, room)), salt);
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), unique.begin(), unique.end());
  if (out.size() > max_len) {
    // Drop from the prompt's head after the salt; never the salt itself.
    const std::size_t after_salt = at + unique.size();
    const std::size_t drop = std::min(out.size() - max_len, out.size() - after_salt);
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(after_salt),
              out.begin() + static_cast<std::ptrdiff_t>(after_salt + drop));
  }
  return out;
}

std::string ColdRequests::salt_text(std::uint64_t salt) const {
  if (salt == 0) return "";
  // The random ids first: a fixed label in front would be one more head every request shares.
  return decode_ids(target_->tokenizer(), builder_.filler(kSaltTokens, salt)) + "\n";
}

int ColdRequests::allowed_cached(const engine::Tokenizer& tok, bool salted, bool chat) {
  return salted && chat ? kChatTemplateHeadTokens : (tok.bos_id() ? 1 : 0);
}

TargetResponse ColdRequests::send(const Build& build, const std::string& what) {
  // One reset per cold request, before the prompt is built: whether it worked decides the salt.
  target_->reset_session();
  return issue(build, what, target_->cold_salt());
}

TargetResponse ColdRequests::issue(const Build& build, const std::string& what, std::uint64_t first_base) {
  for (int attempt = 0;; ++attempt) {
    // A re-issued request always gets a unique head, also where the reset claimed success.
    const std::uint64_t base = attempt == 0 ? first_base : mix_seed(fallback_salt_, target_->cold_salt());
    const std::uint64_t salt = base == 0 ? 0 : (mix_seed(base, ++nonce_) | 1);
    TargetRequest req = build(salt);
    req.cold = true;
    salted_ += salt != 0;
    TargetResponse resp = target_->generate(req);
    if (!resp.ok) return resp;
    if (resp.cached_tokens <= allowed_cached(target_->tokenizer(), salt != 0, !req.messages.is_null())) return resp;
    if (attempt == 2) {
      throw SuiteError(what + ": the target reported cached_tokens = " + std::to_string(resp.cached_tokens) +
                       " on 3 cold requests with unique prefixes (" + target_->name() +
                       "); its cold latency cannot be measured");
    }
    ++reissued_;
  }
}

ColdRequests::Scored ColdRequests::send_scored(const Build& build, const std::string& what) {
  scored_ = true;
  target_->reset_session();
  const std::uint64_t base = target_->cold_salt();
  Scored s;
  // The answer is always the request as built: a salt would change what the model is asked
  // (greedy outputs, and so verdicts, differ with the salt), and verdicts are gated exactly.
  TargetRequest req = build(0);
  req.cold = true;
  s.answer = target_->generate(req);
  if (!s.answer.ok) return s;
  if (base == 0 && s.answer.cached_tokens <= allowed_cached(target_->tokenizer(), false, !req.messages.is_null())) {
    s.timing = s.answer;
    return s;
  }
  // Not a cold sample: the target could not empty its cache (salted), or said it served the
  // answer from its cache anyway. Time the same request with a unique head instead; its output
  // is not scored. The answer's prompt is in the cache now, but nothing after the salt can match.
  s.timed_separately = true;
  ++timed_separately_;
  s.timing = issue(build, what + " (salted timing request)", base != 0 ? base : fallback_salt_);
  return s;
}

TargetResponse ColdRequests::send_salted(const Build& build, const std::string& what) {
  const std::uint64_t base = target_->cold_salt();
  return issue(build, what + " (salted timing request)", base != 0 ? base : fallback_salt_);
}

void ColdRequests::add_details(nlohmann::json& details) const {
  details["cold_salted_requests"] = salted_;
  details["cold_reissued"] = reissued_;
  if (scored_) details["cold_timed_separately"] = timed_separately_;
}

}  // namespace atlas::suites
