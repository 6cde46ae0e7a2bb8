#include "util/error.h"

namespace tt {

namespace {

// An option_ref is begin + field + end: characters no message or file name holds.
constexpr char ref_begin = '\x1e', ref_end = '\x1f';

std::string fill_refs(const std::string& text, const std::function<std::string(const std::string&)>& name) {
  std::string out;
  size_t from = 0;
  for (size_t b; (b = text.find(ref_begin, from)) != std::string::npos;) {
    const size_t e = text.find(ref_end, b + 1);
    if (e == std::string::npos) break;
    out.append(text, from, b - from);
    out += name ? name(text.substr(b + 1, e - b - 1)) : text.substr(b + 1, e - b - 1);
    from = e + 1;
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace

std::string option_ref(const std::string& field) { return ref_begin + field + ref_end; }

Error::Error(const std::string& what, std::string hint)
    : std::runtime_error(what),
      message_(what),
      hint_raw_(std::move(hint)),
      what_(fill_refs(message_, nullptr)),
      hint_(fill_refs(hint_raw_, nullptr)) {}

Error::Error(const std::string& context, const Error& inner) : Error(inner) {
  context_ = context + inner.context_;
  what_ = context_ + fill_refs(message_, nullptr);
}

void Error::name_options(const std::function<std::string(const std::string&)>& name) {
  what_ = context_ + fill_refs(message_, name);
  hint_ = fill_refs(hint_raw_, name);
}

}  // namespace tt
