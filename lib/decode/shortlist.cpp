#include "decode/shortlist.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text_io.h"

namespace tt::decode {

namespace {

constexpr const char* kMagic = "tt-shortlist 1";

// The ids of one line, each in [0, limit); FormatError naming the line otherwise.
std::vector<int32_t> parse_ids(const std::string& text, int limit, const std::string& where) {
  std::vector<int32_t> ids;
  const char* p = text.c_str();
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    if (!*p) return ids;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(p, &end, 10);
    if (end == p || errno != 0 || v < 0 || v >= limit || (*end && *end != ' ' && *end != '\t' && *end != '\r'))
      throw FormatError(where + ": expected target ids in [0, " + std::to_string(limit) + "), got '" +
                            std::string(p, std::min<size_t>(std::strcspn(p, " \t"), 40)) + "'",
                        "write the shortlist again with tt-convert shortlist");
    ids.push_back(static_cast<int32_t>(v));
    p = end;
  }
}

}  // namespace

Shortlist::Shortlist(int frequent, std::vector<int32_t> by_frequency, std::vector<std::vector<int32_t>> best)
    : frequent_(frequent), by_frequency_(std::move(by_frequency)), best_(std::move(best)) {
  if (frequent_ < 0 || frequent_ > target_vocab())
    throw ConfigError("shortlist: frequent " + std::to_string(frequent_) + " is outside [0, " +
                      std::to_string(target_vocab()) + "]");
}

int Shortlist::best_per_source() const {
  size_t most = 0;
  for (const auto& list : best_) most = std::max(most, list.size());
  return static_cast<int>(most);
}

Shortlist Shortlist::load(const std::string& path) {
  util::LineReader in(path);
  std::string line;
  auto where = [&] { return in.name() + ":" + std::to_string(in.line_number()); };
  auto next = [&](const char* what) {
    if (!in.next(line))
      throw FormatError(in.name() + ": ends before " + what, "write the shortlist again with tt-convert shortlist");
  };
  next("its header");
  if (line != kMagic)
    throw FormatError(where() + ": not a tt shortlist (expected '" + std::string(kMagic) + "')",
                      "make one with tt-convert shortlist MODEL --train SRC TGT");
  next("its sizes");
  std::istringstream sizes(line);
  std::string k1, k2, k3, k4;
  long long VS = -1, VT = -1, F = -1, K = -1;
  sizes >> k1 >> VS >> k2 >> VT >> k3 >> F >> k4 >> K;
  std::string rest;
  if (!sizes || k1 != "source_vocab" || k2 != "target_vocab" || k3 != "frequent" || k4 != "best" || (sizes >> rest) ||
      VS < 1 || VT < 1 || VS > (1 << 24) || VT > (1 << 24) || F < 0 || F > VT || K < 0)
    throw FormatError(where() + ": expected 'source_vocab VS target_vocab VT frequent F best K'",
                      "write the shortlist again with tt-convert shortlist");
  next("its frequency order");
  std::vector<int32_t> order = parse_ids(line, static_cast<int>(VT), where());
  std::vector<char> seen(static_cast<size_t>(VT), 0);
  for (int32_t t : order) {
    if (seen[static_cast<size_t>(t)])
      throw FormatError(where() + ": target id " + std::to_string(t) + " is listed twice in the frequency order");
    seen[static_cast<size_t>(t)] = 1;
  }
  if (static_cast<long long>(order.size()) != VT)
    throw FormatError(where() + ": the frequency order lists " + std::to_string(order.size()) + " target ids, not " +
                      std::to_string(VT));
  std::vector<std::vector<int32_t>> best;  // grown line by line: a header's size alone allocates nothing
  while (static_cast<long long>(best.size()) < VS) {
    next("a line per source id");
    const std::vector<int32_t>& list = best.emplace_back(parse_ids(line, static_cast<int>(VT), where()));
    if (static_cast<long long>(list.size()) > K)
      throw FormatError(where() + ": " + std::to_string(list.size()) + " target ids, more than best " + std::to_string(K));
  }
  if (in.next(line)) throw FormatError(where() + ": more lines than source_vocab " + std::to_string(VS) + " announces");
  return Shortlist(static_cast<int>(F), std::move(order), std::move(best));
}

void Shortlist::save(const std::string& path) const {
  util::AtomicFile file(path, false);
  std::ostream& out = file.stream();
  out << kMagic << "\nsource_vocab " << source_vocab() << " target_vocab " << target_vocab() << " frequent "
      << frequent_ << " best " << best_per_source() << "\n";
  auto write = [&](const std::vector<int32_t>& ids) {
    for (size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
    out << "\n";
  };
  write(by_frequency_);
  for (const auto& list : best_) write(list);
  file.commit();
}

Shortlist::Columns Shortlist::columns(const std::vector<std::vector<int32_t>>& sources,
                                      const std::vector<int32_t>& required) const {
  const int VT = target_vocab(), VS = source_vocab();
  std::vector<char> in(static_cast<size_t>(VT), 0);  // 1: kept, 2: sampled
  size_t count = 0;
  auto add = [&](int32_t t, char how) {
    if (t < 0 || t >= VT || in[static_cast<size_t>(t)]) return;
    in[static_cast<size_t>(t)] = how;
    ++count;
  };
  for (int i = 0; i < frequent_; ++i) add(by_frequency_[static_cast<size_t>(i)], 1);
  for (int32_t t : required) add(t, 1);
  for (const auto& source : sources)
    for (int32_t s : source)
      if (s >= 0 && s < VS)
        for (int32_t t : best_[static_cast<size_t>(s)]) add(t, 1);
  const size_t V = static_cast<size_t>(VT), R = std::min<size_t>(kSample, V - count);
  const size_t wanted = std::min(V, (count + R + kRound - 1) / kRound * kRound);
  for (size_t i = static_cast<size_t>(frequent_); count + R < wanted && i < V; ++i) add(by_frequency_[i], 1);
  // The rest in order of frequency, then R of them evenly spaced.
  std::vector<int32_t> rest;
  for (int32_t t : by_frequency_)
    if (!in[static_cast<size_t>(t)]) rest.push_back(t);
  const size_t sampled = std::min(R, rest.size());
  for (size_t k = 0; k < sampled; ++k) add(rest[k * rest.size() / sampled + rest.size() / sampled / 2], 2);
  Columns out;
  out.ids.reserve(count);
  for (int32_t t = 0; t < VT; ++t) {
    if (!in[static_cast<size_t>(t)]) continue;
    if (in[static_cast<size_t>(t)] == 2) out.sample.push_back(static_cast<int32_t>(out.ids.size()));
    out.ids.push_back(t);
  }
  const size_t unsampled = rest.size() - sampled;
  if (unsampled == 0) out.sample.clear();  // the whole vocabulary: nothing to estimate
  else out.rest_log_weight = static_cast<float>(std::log(static_cast<double>(unsampled) / static_cast<double>(sampled)));
  return out;
}

int32_t column_of(const std::vector<int32_t>* columns, int32_t token) {
  if (!columns) return token;
  const auto it = std::lower_bound(columns->begin(), columns->end(), token);
  return it != columns->end() && *it == token ? static_cast<int32_t>(it - columns->begin()) : -1;
}

ShortlistBuilder::ShortlistBuilder(int source_vocab, int target_vocab, std::vector<int32_t> skip)
    : source_vocab_(source_vocab),
      target_vocab_(target_vocab),
      skip_(static_cast<size_t>(target_vocab), 0),
      target_tokens_(static_cast<size_t>(target_vocab), 0),
      source_docs_(static_cast<size_t>(source_vocab), 0),
      target_docs_(static_cast<size_t>(target_vocab), 0),
      cooccur_(static_cast<size_t>(source_vocab)) {
  for (int32_t t : skip)
    if (t >= 0 && t < target_vocab) skip_[static_cast<size_t>(t)] = 1;
}

void ShortlistBuilder::add(const std::vector<int32_t>& source, const std::vector<int32_t>& target,
                           const std::string& where) {
  auto distinct = [&where](std::vector<int32_t>& seen, const std::vector<int32_t>& ids, int limit, const char* side) {
    seen.assign(ids.begin(), ids.end());
    for (int32_t id : seen)
      if (id < 0 || id >= limit)
        throw FormatError(where + ": " + side + " id " + std::to_string(id) + " is outside the model's vocabulary of " +
                          std::to_string(limit));
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  };
  distinct(src_seen_, source, source_vocab_, "source");
  distinct(tgt_seen_, target, target_vocab_, "target");
  ++pairs_;
  for (int32_t t : target) ++target_tokens_[static_cast<size_t>(t)];
  for (int32_t t : tgt_seen_) ++target_docs_[static_cast<size_t>(t)];
  for (int32_t s : src_seen_) {
    ++source_docs_[static_cast<size_t>(s)];
    auto& counts = cooccur_[static_cast<size_t>(s)];
    for (int32_t t : tgt_seen_)
      if (!skip_[static_cast<size_t>(t)]) ++counts[t];
  }
}

Shortlist ShortlistBuilder::build(int frequent, int best) const {
  if (frequent < 0 || best < 0) throw ConfigError("a shortlist needs frequent >= 0 and best >= 0");
  std::vector<int32_t> order(static_cast<size_t>(target_vocab_));
  std::iota(order.begin(), order.end(), 0);
  // Special pieces never occur in the text: they rank after every piece that does, by id.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return target_tokens_[static_cast<size_t>(a)] > target_tokens_[static_cast<size_t>(b)];
  });
  std::vector<std::vector<int32_t>> lists(static_cast<size_t>(source_vocab_));
  const double N = static_cast<double>(pairs_);
  std::vector<std::pair<double, int32_t>> scored;
  for (int s = 0; s < source_vocab_; ++s) {
    scored.clear();
    const double ns = static_cast<double>(source_docs_[static_cast<size_t>(s)]);
    for (const auto& [t, n] : cooccur_[static_cast<size_t>(s)]) {
      const double nst = n, nt = static_cast<double>(target_docs_[static_cast<size_t>(t)]);
      const double score = nst * std::log(nst * N / (ns * nt));
      if (score > 0) scored.emplace_back(score, t);
    }
    const size_t keep = std::min(scored.size(), static_cast<size_t>(best));
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(),
                      [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    auto& list = lists[static_cast<size_t>(s)];
    for (size_t i = 0; i < keep; ++i) list.push_back(scored[i].second);
  }
  return Shortlist(std::min(frequent, target_vocab_), std::move(order), std::move(lists));
}

}  // namespace tt::decode
