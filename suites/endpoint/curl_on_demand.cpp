// libcurl, opened on first use. Binaries do not link libcurl: its ~30 dependent libraries
// (GnuTLS, Kerberos, LDAP, ...) cost ~4 ms of every process start, `atlas-bench --help`
// included, while only endpoint runs use it. These definitions of the libcurl functions the
// endpoint client calls (same names and signatures as curl.h, so the client's code is plain
// libcurl) forward to libcurl.so.4, opened with dlopen the first time one of them runs.
//
// When libcurl cannot be opened, the functions fail the way libcurl reports failure
// (curl_easy_init/curl_multi_init return null, curl_global_init CURLE_FAILED_INIT) and
// curl_easy_strerror says why; the client turns that into an EndpointError.
#ifdef ATLAS_HAVE_CURL
// The GCC type-checking macros would expand the definitions of curl_easy_setopt/getinfo below.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>

#include <cstdarg>
#include <mutex>
#include <string>

namespace {

struct Curl {
  void* lib = nullptr;
  std::string error;
  CURLcode (*global_init)(long) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  void (*easy_reset)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
  CURLM* (*multi_init)() = nullptr;
  CURLMcode (*multi_add_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_poll)(CURLM*, curl_waitfd[], unsigned int, int, int*) = nullptr;
  CURLMcode (*multi_perform)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_cleanup)(CURLM*) = nullptr;
  CURLMsg* (*multi_info_read)(CURLM*, int*) = nullptr;
};

template <typename Fn>
bool bind(Curl& c, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(::dlsym(c.lib, name));
  if (fn == nullptr && c.error.empty()) c.error = std::string("libcurl.so.4 has no ") + name;
  return fn != nullptr;
}

Curl open_curl() {
  Curl c;
  c.lib = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (c.lib == nullptr) {
    const char* why = ::dlerror();
    c.error = std::string("cannot open libcurl.so.4 (the endpoint client needs libcurl): ") + (why ? why : "dlopen failed");
    return c;
  }
  const bool ok = bind(c, c.global_init, "curl_global_init") & bind(c, c.easy_init, "curl_easy_init") &
                  bind(c, c.easy_setopt, "curl_easy_setopt") & bind(c, c.easy_getinfo, "curl_easy_getinfo") &
                  bind(c, c.easy_cleanup, "curl_easy_cleanup") & bind(c, c.easy_reset, "curl_easy_reset") &
                  bind(c, c.easy_strerror, "curl_easy_strerror") & bind(c, c.slist_append, "curl_slist_append") &
                  bind(c, c.slist_free_all, "curl_slist_free_all") & bind(c, c.multi_init, "curl_multi_init") &
                  bind(c, c.multi_add_handle, "curl_multi_add_handle") &
                  bind(c, c.multi_remove_handle, "curl_multi_remove_handle") & bind(c, c.multi_poll, "curl_multi_poll") &
                  bind(c, c.multi_perform, "curl_multi_perform") & bind(c, c.multi_cleanup, "curl_multi_cleanup") &
                  bind(c, c.multi_info_read, "curl_multi_info_read");
  if (!ok) c.lib = nullptr;  // stays open (harmless); every call reports the missing symbol
  return c;
}

const Curl& curl() {
  static const Curl c = open_curl();  // thread-safe initialisation; never closed
  return c;
}

}  // namespace

CURLcode curl_global_init(long flags) { return curl().lib ? curl().global_init(flags) : CURLE_FAILED_INIT; }

CURL* curl_easy_init() { return curl().lib ? curl().easy_init() : nullptr; }

// The third argument's type follows from the option number's range (curl.h, CURLOPTTYPE_*),
// which is how libcurl itself reads it.
CURLcode curl_easy_setopt(CURL* handle, CURLoption option, ...) {
  if (!curl().lib) return CURLE_FAILED_INIT;
  va_list ap;
  va_start(ap, option);
  CURLcode r;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    r = curl().easy_setopt(handle, option, va_arg(ap, long));
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    r = curl().easy_setopt(handle, option, va_arg(ap, void*));
  } else if (option < CURLOPTTYPE_OFF_T) {
    using AnyFn = void (*)();
    r = curl().easy_setopt(handle, option, va_arg(ap, AnyFn));
  } else if (option < CURLOPTTYPE_BLOB) {
    r = curl().easy_setopt(handle, option, va_arg(ap, curl_off_t));
  } else {
    r = curl().easy_setopt(handle, option, va_arg(ap, void*));
  }
  va_end(ap);
  return r;
}

// Every CURLINFO takes a pointer to where the value goes.
CURLcode curl_easy_getinfo(CURL* handle, CURLINFO info, ...) {
  if (!curl().lib) return CURLE_FAILED_INIT;
  va_list ap;
  va_start(ap, info);
  void* out = va_arg(ap, void*);
  va_end(ap);
  return curl().easy_getinfo(handle, info, out);
}

void curl_easy_cleanup(CURL* handle) {
  if (curl().lib) curl().easy_cleanup(handle);
}

void curl_easy_reset(CURL* handle) {
  if (curl().lib) curl().easy_reset(handle);
}

const char* curl_easy_strerror(CURLcode code) {
  return curl().lib ? curl().easy_strerror(code) : curl().error.c_str();
}

curl_slist* curl_slist_append(curl_slist* list, const char* data) {
  return curl().lib ? curl().slist_append(list, data) : nullptr;
}

void curl_slist_free_all(curl_slist* list) {
  if (curl().lib) curl().slist_free_all(list);
}

CURLM* curl_multi_init() { return curl().lib ? curl().multi_init() : nullptr; }

CURLMcode curl_multi_add_handle(CURLM* multi, CURL* handle) {
  return curl().lib ? curl().multi_add_handle(multi, handle) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* handle) {
  return curl().lib ? curl().multi_remove_handle(multi, handle) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_poll(CURLM* multi, curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms, int* ret) {
  return curl().lib ? curl().multi_poll(multi, extra_fds, extra_nfds, timeout_ms, ret) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_perform(CURLM* multi, int* running) {
  return curl().lib ? curl().multi_perform(multi, running) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_cleanup(CURLM* multi) { return curl().lib ? curl().multi_cleanup(multi) : CURLM_INTERNAL_ERROR; }

CURLMsg* curl_multi_info_read(CURLM* multi, int* msgs_in_queue) {
  return curl().lib ? curl().multi_info_read(multi, msgs_in_queue) : nullptr;
}

#endif  // ATLAS_HAVE_CURL
