#include "data/parallel_corpus.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

#include "util/error.h"
#include "util/rng.h"
#include "util/text_io.h"

namespace tt::data {

namespace {

FormatError mismatch_error(const std::string& src_path, int64_t src_lines, const std::string& tgt_path,
                           int64_t tgt_lines) {
  return FormatError(src_path + " has " + std::to_string(src_lines) + " lines but " + tgt_path + " has " +
                         std::to_string(tgt_lines) + "; a parallel corpus needs the same number of lines in both",
                     "line N of one file must be the translation of line N of the other; check the pair "
                     "with 'wc -l'");
}

// Lines as LineReader counts them: one per '\n', plus an unterminated last line.
int64_t count_lines(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw IoError(path + ": cannot open: " + std::strerror(errno));
  std::vector<char> buffer(size_t{1} << 20);
  int64_t lines = 0;
  char last = '\n';
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file.get())) > 0) {
    lines += std::count(buffer.data(), buffer.data() + n, '\n');
    last = buffer[n - 1];
  }
  if (std::ferror(file.get())) throw IoError(path + ": read error: " + std::strerror(errno));
  return lines + (last != '\n');
}

// Up to `max` lines from each reader into the reused `src` / `tgt` vectors; returns how many pairs.
// One file ending before the other is the line-count mismatch (for stdin, which cannot be counted ahead).
size_t read_chunk(util::LineReader& src_reader, util::LineReader& tgt_reader, std::vector<std::string>& src,
                  std::vector<std::string>& tgt, size_t max) {
  size_t n = 0;
  for (; n < max; ++n) {
    const bool has_src = src_reader.next(src[n]);
    const bool has_tgt = tgt_reader.next(tgt[n]);
    if (has_src != has_tgt) {
      std::string rest;
      util::LineReader& longer = has_src ? src_reader : tgt_reader;
      while (longer.next(rest)) {
      }
      throw mismatch_error(src_reader.name(), static_cast<int64_t>(src_reader.line_number()), tgt_reader.name(),
                           static_cast<int64_t>(tgt_reader.line_number()));
    }
    if (!has_src) break;
  }
  return n;
}

// One worker's share of a chunk: the kept pairs in stored form, in input order.
struct Part {
  std::vector<int32_t> ids;
  std::vector<int32_t> lengths;  // source length, target length per kept pair
  std::vector<LineFate> fates;   // per line
  CorpusStats stats;             // all but `lines`
  std::exception_ptr error;      // the first failing line of this share; the share stops there
};

struct Side {
  const std::string& name;
  const SpmTokenizer& spm;
};

std::string where(const Side& side, size_t line_number) { return side.name + ":" + std::to_string(line_number) + ": "; }

void check_utf8(const Side& side, const std::string& line, size_t line_number) {
  size_t bad = 0;
  if (!util::is_valid_utf8(line, &bad)) {
    throw FormatError(where(side, line_number) + "invalid UTF-8 at byte " + std::to_string(bad + 1),
                      "the corpus must be UTF-8 text; convert the file (e.g. iconv -t UTF-8)");
  }
}

// Validates and encodes one line into `out` (its best segmentation); errors name file:line.
void encode_line(std::vector<int>& out, const Side& side, const std::string& line, size_t line_number) {
  check_utf8(side, line, line_number);
  try {
    side.spm.encode_ids(line, out);
  } catch (const Error& e) {
    throw FormatError(where(side, line_number), e);
  }
}

// The sampling keys of one line's two sides: Philox under the seed, counter = the line, stream = epoch and
// corpus, so they depend on nothing else.
util::Philox4 line_keys(const SubwordSampling& sampling, uint64_t line) {
  const uint64_t stream = util::rng_stream(util::RngPurpose::segmentation, sampling.epoch, sampling.corpus);
  return util::philox4x32(static_cast<uint32_t>(line), static_cast<uint32_t>(line >> 32), static_cast<uint32_t>(stream),
                          static_cast<uint32_t>(stream >> 32), static_cast<uint32_t>(sampling.seed),
                          static_cast<uint32_t>(sampling.seed >> 32));
}

// `out` becomes the sample of a kept line keyed on `key`, or its best segmentation when the sample is
// empty or longer than max_len.
void sample_line(std::vector<int>& out, const Side& side, const std::string& line, size_t line_number, uint32_t key,
                 const SubwordSampling& sampling, int max_len) {
  try {
    side.spm.sample_encode_ids(line, sampling.nbest, sampling.alpha, key, out);
  } catch (const Error& e) {
    throw FormatError(where(side, line_number), e);
  }
  if (!out.empty() && out.size() <= static_cast<size_t>(max_len)) return;
  encode_line(out, side, line, line_number);
  if (out.empty() || out.size() > static_cast<size_t>(max_len))  // kept when the run started: not this line
    throw FormatError(where(side, line_number) + "the line changed during the run",
                      "restore the files, or start a new run");
}

LineFate judge(size_t ls, size_t lt, const CorpusFilter& filter) {
  const size_t shorter = std::min(ls, lt), longer = std::max(ls, lt);
  if (shorter == 0) return LineFate::empty;
  if (longer > static_cast<size_t>(filter.max_len)) return LineFate::too_long;
  if (filter.max_len_ratio > 0 && static_cast<double>(longer) / static_cast<double>(shorter) > filter.max_len_ratio)
    return LineFate::ratio;
  return LineFate::kept;
}

void count_dropped(CorpusStats& stats, LineFate fate) {
  if (fate == LineFate::empty) ++stats.dropped_empty;
  if (fate == LineFate::too_long) ++stats.dropped_long;
  if (fate == LineFate::ratio) ++stats.dropped_ratio;
}

void tokenise_part(Part& part, const std::vector<std::string>& src, const std::vector<std::string>& tgt,
                   size_t begin, size_t end, size_t first_line, const Side& src_side, const Side& tgt_side,
                   const CorpusFilter& filter, const SubwordSampling& sampling) {
  const int32_t eos = static_cast<int32_t>(src_side.spm.eos_id());
  std::vector<int> s, t;
  try {
    for (size_t i = begin; i < end; ++i) {
      const size_t line = first_line + i;
      LineFate fate;
      if (sampling.on()) {  // what to keep was decided on the best segmentation: only the samples are needed
        const std::vector<LineFate>& known = *sampling.fates;
        if (line > known.size())
          throw FormatError(where(src_side, line) + "the run started with " + std::to_string(known.size()) + " lines",
                            "the files changed during the run; restore them, or start a new run");
        check_utf8(src_side, src[i], line);
        check_utf8(tgt_side, tgt[i], line);
        fate = known[line - 1];
      } else {
        encode_line(s, src_side, src[i], line);
        encode_line(t, tgt_side, tgt[i], line);
        fate = judge(s.size(), t.size(), filter);
      }
      part.fates.push_back(fate);
      if (fate != LineFate::kept) {
        count_dropped(part.stats, fate);
        continue;
      }
      if (sampling.on()) {
        const util::Philox4 keys = line_keys(sampling, line);
        sample_line(s, src_side, src[i], line, keys.v[0], sampling, filter.max_len);
        sample_line(t, tgt_side, tgt[i], line, keys.v[1], sampling, filter.max_len);
      }
      const size_t ls = s.size(), lt = t.size();
      part.ids.insert(part.ids.end(), s.begin(), s.end());
      part.ids.push_back(eos);
      part.ids.insert(part.ids.end(), t.begin(), t.end());
      part.lengths.push_back(static_cast<int32_t>(ls + 1));
      part.lengths.push_back(static_cast<int32_t>(lt));
      ++part.stats.kept;
      part.stats.src_tokens += static_cast<int64_t>(ls + 1);
      part.stats.tgt_tokens += static_cast<int64_t>(lt);
    }
  } catch (...) {
    part.error = std::current_exception();
  }
}

// Joins the chunk's workers however the loop is left.
class Workers {
 public:
  ~Workers() { join(); }
  void join() {
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  std::vector<std::thread>& threads() { return threads_; }

 private:
  std::vector<std::thread> threads_;
};

}  // namespace

void require_tt_special_ids(const SpmTokenizer& spm) {
  if (spm.has_tt_special_ids()) return;
  throw ConfigError(spm.path() + ": SentencePiece model lacks tt's special ids (it has pad " +
                        std::to_string(spm.pad_id()) + ", unk " + std::to_string(spm.unk_id()) + ", bos " +
                        std::to_string(spm.bos_id()) + ", eos " + std::to_string(spm.eos_id()) +
                        "; tt needs pad 0, unk 1, bos 2, eos 3)",
                    "make one with 'tt-tokenize train --input TEXT... --model-prefix PREFIX --vocab-size N', "
                    "which writes tt's special ids");
}

ParallelCorpus ParallelCorpus::load(const std::string& src_path, const std::string& tgt_path,
                                    const SpmTokenizer& src_spm, const SpmTokenizer& tgt_spm,
                                    const CorpusFilter& filter, int threads, const SubwordSampling& sampling,
                                    const std::atomic<bool>* cancel) {
  if (threads < 1) throw ConfigError("corpus loading needs at least 1 thread, got " + std::to_string(threads));
  if (filter.max_len < 1) {
    throw ConfigError("the maximum pair length must be at least 1 piece, got " + std::to_string(filter.max_len));
  }
  if (!(filter.max_len_ratio == 0 || filter.max_len_ratio >= 1)) {
    throw ConfigError("the maximum length ratio must be 0 (off) or at least 1, got " +
                      std::to_string(filter.max_len_ratio));
  }
  if (sampling.on() && !sampling.fates) throw InternalError("subword sampling without the corpus's line fates");
  if (src_spm.eos_id() < 0) {
    throw ConfigError(src_spm.path() + ": SentencePiece model has no eos piece, which ends every source sentence",
                      "make one with 'tt-tokenize train', which writes tt's special ids");
  }
  // Counting first makes a mismatched pair fail at once, not after tokenising a large corpus.
  if (src_path != "-" && tgt_path != "-") {
    const int64_t ns = count_lines(src_path), nt = count_lines(tgt_path);
    if (ns != nt) throw mismatch_error(src_path, ns, tgt_path, nt);
  }
  util::LineReader src_reader(src_path), tgt_reader(tgt_path);
  const Side src_side{src_reader.name(), src_spm}, tgt_side{tgt_reader.name(), tgt_spm};

  const size_t n_threads = static_cast<size_t>(threads);
  const size_t chunk = std::max<size_t>(4096, 1024 * n_threads);
  // Two chunk buffers: the main thread reads the next chunk while the workers tokenise this one.
  std::vector<std::string> src_lines[2] = {std::vector<std::string>(chunk), std::vector<std::string>(chunk)};
  std::vector<std::string> tgt_lines[2] = {std::vector<std::string>(chunk), std::vector<std::string>(chunk)};
  ParallelCorpus corpus;
  size_t first_line = 1;
  size_t n = read_chunk(src_reader, tgt_reader, src_lines[0], tgt_lines[0], chunk);
  for (int cur = 0; n > 0; cur ^= 1) {
    // Contiguous shares in line order, so the first failing share holds the first bad line.
    std::vector<Part> parts(n_threads);
    auto share = [&](size_t k) { return n * k / n_threads; };
    size_t next_n = 0;
    std::exception_ptr read_error;
    if (n_threads == 1) {
      tokenise_part(parts[0], src_lines[cur], tgt_lines[cur], 0, n, first_line, src_side, tgt_side, filter, sampling);
      try {
        next_n = read_chunk(src_reader, tgt_reader, src_lines[cur ^ 1], tgt_lines[cur ^ 1], chunk);
      } catch (...) {
        read_error = std::current_exception();
      }
    } else {
      Workers workers;
      for (size_t k = 0; k < n_threads; ++k) {
        workers.threads().emplace_back(tokenise_part, std::ref(parts[k]), std::cref(src_lines[cur]),
                                       std::cref(tgt_lines[cur]), share(k), share(k + 1), first_line,
                                       std::cref(src_side), std::cref(tgt_side), std::cref(filter),
                                       std::cref(sampling));
      }
      try {
        next_n = read_chunk(src_reader, tgt_reader, src_lines[cur ^ 1], tgt_lines[cur ^ 1], chunk);
      } catch (...) {
        read_error = std::current_exception();
      }
      workers.join();
    }
    // Errors in input order: a bad line in this chunk comes before anything found while reading on.
    for (const Part& part : parts) {
      if (part.error) std::rethrow_exception(part.error);
    }
    if (read_error) std::rethrow_exception(read_error);
    corpus.stats_.lines += static_cast<int64_t>(n);
    for (const Part& part : parts) {
      corpus.append(part.ids, part.lengths, part.stats);
      corpus.line_fates_.insert(corpus.line_fates_.end(), part.fates.begin(), part.fates.end());
    }
    first_line += n;
    n = cancel && cancel->load() ? 0 : next_n;
  }
  if (sampling.on() && corpus.line_fates_.size() != sampling.fates->size())
    throw FormatError(src_path + ", " + tgt_path + ": " + std::to_string(corpus.line_fates_.size()) +
                          " lines where the run started with " + std::to_string(sampling.fates->size()),
                      "the files changed during the run; restore them, or start a new run");
  corpus.ids_.shrink_to_fit();
  corpus.offsets_.shrink_to_fit();
  corpus.line_fates_.shrink_to_fit();
  return corpus;
}

void ParallelCorpus::append(const std::vector<int32_t>& ids, const std::vector<int32_t>& lengths,
                            const CorpusStats& stats) {
  ids_.insert(ids_.end(), ids.begin(), ids.end());
  for (int32_t length : lengths) offsets_.push_back(offsets_.back() + length);
  stats_.kept += stats.kept;
  stats_.dropped_empty += stats.dropped_empty;
  stats_.dropped_long += stats.dropped_long;
  stats_.dropped_ratio += stats.dropped_ratio;
  stats_.src_tokens += stats.src_tokens;
  stats_.tgt_tokens += stats.tgt_tokens;
}

void ParallelCorpus::append(const ParallelCorpus& other) {
  line_fates_.insert(line_fates_.end(), other.line_fates_.begin(), other.line_fates_.end());
  const int64_t base = offsets_.back();
  ids_.insert(ids_.end(), other.ids_.begin(), other.ids_.end());
  for (size_t k = 1; k < other.offsets_.size(); ++k) offsets_.push_back(base + other.offsets_[k]);
  stats_.lines += other.stats_.lines;
  stats_.kept += other.stats_.kept;
  stats_.dropped_empty += other.stats_.dropped_empty;
  stats_.dropped_long += other.stats_.dropped_long;
  stats_.dropped_ratio += other.stats_.dropped_ratio;
  stats_.src_tokens += other.stats_.src_tokens;
  stats_.tgt_tokens += other.stats_.tgt_tokens;
}

ParallelCorpus ParallelCorpus::from_ids(const std::vector<std::vector<int32_t>>& src,
                                        const std::vector<std::vector<int32_t>>& tgt) {
  if (src.size() != tgt.size()) {
    throw Error("parallel corpus from ids: " + std::to_string(src.size()) + " sources but " +
                std::to_string(tgt.size()) + " targets");
  }
  ParallelCorpus corpus;
  std::vector<int32_t> ids, lengths;
  CorpusStats stats;
  for (size_t i = 0; i < src.size(); ++i) {
    ids.insert(ids.end(), src[i].begin(), src[i].end());
    ids.insert(ids.end(), tgt[i].begin(), tgt[i].end());
    lengths.push_back(static_cast<int32_t>(src[i].size()));
    lengths.push_back(static_cast<int32_t>(tgt[i].size()));
    stats.src_tokens += static_cast<int64_t>(src[i].size());
    stats.tgt_tokens += static_cast<int64_t>(tgt[i].size());
  }
  stats.kept = static_cast<int64_t>(src.size());
  corpus.stats_.lines = stats.kept;
  corpus.line_fates_.assign(src.size(), LineFate::kept);
  corpus.append(ids, lengths, stats);
  return corpus;
}

}  // namespace tt::data
