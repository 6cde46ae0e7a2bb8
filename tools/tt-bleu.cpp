// tt-bleu: BLEU, chrF and TER with sacreBLEU 2.x's numbers, flags and output formats.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <random>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/run_tool.h"
#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/corpus_reader.h"
#include "metrics/report.h"
#include "metrics/results_table.h"
#include "metrics/significance.h"
#include "metrics/ter.h"
#include "util/error.h"
#include "util/text_io.h"

namespace m = tt::metrics;

namespace {

// Largest --paired-bs-n/--paired-ar-n/--confidence-n: the resampling draws n x segments indices up front.
constexpr int max_resamples = 1'000'000;

// sacreBLEU's multi-letter single-dash flags, which CLI11 cannot declare, become their long forms.
std::vector<std::string> expand_short_flags(int argc, char** argv) {
  static const std::map<std::string, std::string> aliases = {
      {"-tok", "--tokenize"},    {"-lc", "--lowercase"},       {"-sv", "--smooth-value"},
      {"-cc", "--chrf-char-order"}, {"-cw", "--chrf-word-order"}, {"-sl", "--sentence-level"},
      {"-pbs", "--paired-bs"},   {"-par", "--paired-ar"},      {"-pbsn", "--paired-bs-n"},
      {"-parn", "--paired-ar-n"}, {"-ci", "--confidence"},      {"-cin", "--confidence-n"},
      {"-nr", "--num-refs"},     {"-nc", "--no-color"},        {"-sh", "--short"}};
  std::vector<std::string> args;
  for (int k = 0; k < argc; ++k) {
    auto it = aliases.find(argv[k]);
    args.push_back(it == aliases.end() ? argv[k] : it->second);
  }
  return args;
}

struct Flags {
  std::vector<std::string> refs, inputs;
  std::vector<std::string> metrics{"bleu"};
  std::string tokenize, language_pair, smooth_method = "exp", format = "json";
  double smooth_value = -1;
  bool lowercase = false, force = false, sentence_level = false, score_only = false, no_color = false;
  bool short_signature = false;
  int width = 1, num_refs = 1;
  std::string encoding = "utf-8";
  tt::cli::CommonOptions common;
  m::ChrfOptions chrf;
  bool chrf_eps = false;
  m::TercomOptions ter;
  bool paired_bs = false, paired_ar = false, confidence = false;
  int paired_bs_n = 1000, paired_ar_n = 10000, confidence_n = 1000;
  std::string seed;
};

// The target of a language pair as sacreBLEU takes it: the second '-'-separated field ("en-zh-tw" -> "zh").
// The pair has been validated to contain a '-'.
std::string target_language(const std::string& pair) {
  const size_t dash = pair.find('-');
  if (dash == std::string::npos) return "";
  const size_t end = pair.find('-', dash + 1);
  return pair.substr(dash + 1, end == std::string::npos ? std::string::npos : end - dash - 1);
}

// -nr N: each line of the one reference file holds N references separated by TABs (sacreBLEU's
// line.rstrip().split('\t', N - 1), which must give exactly N fields).
std::vector<std::vector<std::string>> split_references(const std::vector<std::string>& lines, int n,
                                                       const std::string& path) {
  std::vector<std::vector<std::string>> refs(static_cast<size_t>(n));
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t start = 0;
    for (int k = 0; k < n; ++k) {
      size_t tab = k + 1 < n ? lines[i].find('\t', start) : std::string::npos;
      if (k + 1 < n && tab == std::string::npos) {
        throw tt::FormatError(m::display_name(path) + ":" + std::to_string(i + 1) + ": expected " + std::to_string(n) +
                                  " TAB-separated references, found " + std::to_string(k + 1),
                              "with --num-refs N every reference line holds N references separated by TABs");
      }
      refs[static_cast<size_t>(k)].push_back(lines[i].substr(start, tab == std::string::npos ? tab : tab - start));
      start = tab + 1;
    }
  }
  return refs;
}

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A decimal seed, or "none" for a fresh random one (as SACREBLEU_SEED=None does).
uint64_t parse_seed(const std::string& text) {
  if (lowercase(text) == "none") return std::random_device{}();
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') {
    throw tt::ConfigError("invalid seed '" + text + "'; expected a non-negative integer",
                          "pass --seed N or set SACREBLEU_SEED=N");
  }
  return v;
}

std::unique_ptr<m::Metric> make_metric(const std::string& name, const Flags& f) {
  if (name == "bleu") {
    m::BleuOptions o;
    o.lowercase = f.lowercase;
    std::string tok = f.tokenize;
    if (tok.empty()) {  // sacreBLEU picks zh for a Chinese target, MeCab tokenizers for ja and ko
      const std::string target = target_language(f.language_pair);
      if (target == "ja" || target == "ko") {
        throw tt::ConfigError("sacreBLEU scores a '" + target + "' target with its " + target +
                                  "-mecab tokenizer, which tt-bleu does not provide",
                              "pass -tok explicitly (e.g. -tok char or -tok intl) to choose a tokenizer");
      }
      tok = target == "zh" ? "zh" : "13a";
    }
    o.tokenizer = m::parse_tokenizer(tok);
    o.smooth_method = m::parse_smooth_method(f.smooth_method);
    if (f.smooth_value >= 0) o.smooth_value = f.smooth_value;
    o.effective_order = f.sentence_level;
    return std::make_unique<m::Bleu>(o);
  }
  if (name == "chrf") {
    m::ChrfOptions o = f.chrf;
    o.eps_smoothing = f.chrf_eps;
    return std::make_unique<m::Chrf>(o);
  }
  return std::make_unique<m::Ter>(f.ter);
}

int bleu_main(int argc, char** argv) {
  CLI::App app{"Score translations with BLEU, chrF and TER, identical to sacreBLEU 2.x.\n"
               "Hypotheses are read from stdin (or -i FILE...); each REF file is one reference."};
  tt::cli::configure_app(app, "tt-bleu");
  Flags f;
  app.add_option("refs", f.refs, "Reference file(s); several files give multiple references")
      ->type_name("FILE")->required();
  app.add_option("-i,--input", f.inputs, "Hypothesis file(s) instead of stdin; several = several systems")
      ->type_name("FILE");
  app.add_option("-m,--metrics", f.metrics, "Metrics: bleu chrf ter (default: bleu)")
      ->check(CLI::IsMember({"bleu", "chrf", "ter"}));
  app.add_option("--tokenize", f.tokenize, "BLEU tokenizer: 13a (default), intl, zh, char, none (also -tok)")
      ->check(CLI::IsMember(m::tokenizer_names()));
  app.add_option("-l,--language-pair", f.language_pair, "Source-target pair; a zh target selects -tok zh")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return v.find('-') == std::string::npos ? "expected SRC-TGT (e.g. en-de), got '" + v + "'" : "";
          },
          "SRC-TGT"));
  app.add_flag("--lowercase", f.lowercase, "Case-insensitive BLEU (also -lc)");
  app.add_option("-s,--smooth-method", f.smooth_method, "BLEU smoothing: exp (default), floor, add-k, none")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}));
  app.add_option("--smooth-value", f.smooth_value, "Value for floor (0.1) and add-k (1) (also -sv)");
  app.add_flag("--force", f.force, "Accepted for sacreBLEU compatibility (no effect)");
  app.add_option("--chrf-char-order", f.chrf.char_order, "chrF character n-gram order (default 6; also -cc)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--chrf-word-order", f.chrf.word_order,
                 "chrF word n-gram order; 2 = chrF++; -k drops the k highest char orders (also -cw)")
      ->check(CLI::Range(-1000, 1000));
  app.add_option("--chrf-beta", f.chrf.beta, "chrF recall weight beta (default 2)");
  app.add_flag("--chrf-whitespace", f.chrf.whitespace, "Keep whitespace in chrF character n-grams");
  app.add_flag("--chrf-lowercase", f.chrf.lowercase, "Case-insensitive chrF");
  app.add_flag("--chrf-eps-smoothing", f.chrf_eps, "chrF++.py-style epsilon smoothing instead of effective order");
  app.add_flag("--ter-case-sensitive", f.ter.case_sensitive, "Case-sensitive TER");
  app.add_flag("--ter-asian-support", f.ter.asian_support, "Split CJK characters for TER");
  app.add_flag("--ter-no-punct", f.ter.no_punct, "Remove punctuation for TER");
  app.add_flag("--ter-normalized", f.ter.normalized, "Tercom normalization for TER");
  app.add_flag("--sentence-level", f.sentence_level, "One score per line for the first metric (also -sl)");
  app.add_flag("--paired-bs", f.paired_bs, "Paired bootstrap resampling test; first -i file is the baseline (-pbs)");
  app.add_flag("--paired-ar", f.paired_ar, "Paired approximate randomization test (also -par)");
  // Counts are checked here, at the boundary: 0 or a negative count has no meaning (and used to crash).
  const CLI::Range count(1, max_resamples);
  app.add_option("--paired-bs-n", f.paired_bs_n, "Bootstrap resamples (default 1000; also -pbsn)")->check(count);
  app.add_option("--paired-ar-n", f.paired_ar_n, "Randomization trials (default 10000; also -parn)")->check(count);
  app.add_flag("--confidence", f.confidence, "Bootstrap 95% confidence interval for one system (also -ci)");
  app.add_option("--confidence-n", f.confidence_n, "Resamples for --confidence (default 1000; also -cin)")
      ->check(count);
  app.add_option("--seed", f.seed, "Resampling seed (default: $SACREBLEU_SEED or 12345)");
  app.add_option("-f,--format", f.format, "Output format: json (default) or text")
      ->check(CLI::IsMember({"json", "text"}));
  app.add_flag("--short", f.short_signature, "Abbreviated signatures in text output (also -sh)");
  app.add_flag("--no-color", f.no_color, "Accepted for sacreBLEU compatibility: tt-bleu never colours (also -nc)");
  app.add_option("--num-refs", f.num_refs, "Split the one reference file on TABs into N references (also -nr)")
      ->check(CLI::Range(1, 10000));
  app.add_option("-e,--encoding", f.encoding, "Input encoding: only utf-8 (convert others with iconv)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const std::string l = lowercase(v);
            return l == "utf-8" || l == "utf8" || l == "utf_8" ? "" : "tt-bleu reads UTF-8 only, got '" + v + "'";
          },
          "{utf-8}"));
  app.add_flag("-b,--score-only", f.score_only, "Print only the score(s)");
  app.add_option("-w,--width", f.width, "Decimals in scores (default 1)")->check(CLI::Range(0, 20));
  tt::cli::add_threads_option(app, f.common, "Scoring threads (0: all cores; results do not depend on it)");
  tt::cli::add_quiet_flag(app, f.common, "Print no notes on stderr");
  // As with argparse, a repeated single-value option takes its last value (sacreBLEU ... -w 2 -w 4).
  for (CLI::Option* option : app.get_options()) {
    if (option->get_items_expected_max() == 1) option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  std::vector<std::string> args = expand_short_flags(argc, argv);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  tt::cli::parse(app, static_cast<int>(cargs.size()), cargs.data());
  // Flags that contradict each other are usage errors (exit 2), found before any file is read.
  if (f.paired_bs && f.paired_ar) tt::cli::usage_error(app, "--paired-bs and --paired-ar are mutually exclusive");
  bool paired = f.paired_bs || f.paired_ar;
  if (f.seed.empty()) f.seed = std::getenv("SACREBLEU_SEED") ? std::getenv("SACREBLEU_SEED") : "12345";

  if (f.num_refs > 1 && f.refs.size() != 1) {
    tt::cli::usage_error(app, "--num-refs N takes exactly one reference file (N TAB-separated references a line)");
  }
  if (f.sentence_level && (f.inputs.size() > 1 || paired || f.confidence)) {
    tt::cli::usage_error(app, "--sentence-level takes one system and no statistical test");
  }
  if (paired && f.inputs.size() < 2) tt::cli::usage_error(app, "paired tests need two or more systems given to -i");
  if (f.confidence && f.inputs.size() > 1) tt::cli::usage_error(app, "use --paired-bs or --paired-ar for several systems");

  std::vector<std::unique_ptr<m::Metric>> metrics;
  try {  // every refusal here is about a flag's value (-cw, -l, -tok)
    for (const auto& name : f.metrics) metrics.push_back(make_metric(name, f));
  } catch (const tt::ConfigError& e) {
    tt::cli::usage_error(app, e.what() + (e.hint().empty() ? "" : "; " + e.hint()));
  }
  std::vector<std::vector<std::string>> refs;
  if (f.num_refs > 1) {
    refs = split_references(m::read_corpus(f.refs[0]), f.num_refs, f.refs[0]);
    f.refs.assign(refs.size(), f.refs[0]);
  } else {
    for (const auto& path : f.refs) refs.push_back(m::read_corpus(path));
  }
  std::vector<std::string> names = f.inputs.empty() ? std::vector<std::string>{"-"} : f.inputs;
  std::vector<std::vector<std::string>> systems;
  for (const auto& path : names) {
    systems.push_back(m::read_corpus(path));
    for (size_t r = 0; r < refs.size(); ++r) m::check_same_length(systems.back(), path, refs[r], f.refs[r]);
  }

  const uint64_t seed = paired || f.confidence ? parse_seed(f.seed) : 0;
  m::FormatOptions fmt{f.width, f.score_only, f.format == "json", false, f.short_signature};
  const int threads = tt::cli::resolve_threads(f.common.threads);
  m::SignatureContext context{static_cast<int>(refs.size()), 0, 0, ""};

  if (f.sentence_level) {  // first metric only, one line per segment
    const m::Metric& metric = *metrics[0];
    std::vector<double> stats = m::corpus_stats(metric, systems[0], refs, threads);
    fmt.one_line = true;
    std::string out;
    for (size_t i = 0; i < systems[0].size(); ++i) {
      out += m::format_score(metric.score(stats.data() + i * metric.n_stats()), metric.signature(context), fmt) + "\n";
      if (out.size() > (1 << 16)) {
        tt::util::write_stdout(out);
        out.clear();
      }
    }
    tt::util::write_stdout(out);
    return 0;
  }
  if (systems.size() == 1) {  // sacreBLEU prints metrics sorted by name
    std::sort(metrics.begin(), metrics.end(), [](const auto& a, const auto& b) { return a->key() < b->key(); });
    std::vector<std::string> results;
    for (const auto& metric : metrics) {
      std::vector<double> stats = m::corpus_stats(*metric, systems[0], refs, threads);
      m::Score score = metric->score(m::sum_stats(stats, metric->n_stats()).data());
      m::SignatureContext ctx = context;
      std::optional<m::Confidence> conf;
      if (f.confidence) {
        ctx.bootstrap_samples = f.confidence_n;
        ctx.seed = lowercase(f.seed);
        auto [mean, ci] = m::bootstrap_confidence(*metric, stats, systems[0].size(), f.confidence_n, seed);
        conf = m::Confidence{mean, ci};
      }
      fmt.json = f.format == "json";
      results.push_back(m::format_score(score, metric->signature(ctx), fmt, conf));
    }
    tt::util::write_stdout(m::join_results(results, fmt.json) + "\n");
    return 0;
  }
  m::SystemsReport report;
  report.systems = names;
  report.paired = paired;
  if (!paired) std::sort(metrics.begin(), metrics.end(), [](const auto& a, const auto& b) { return a->key() < b->key(); });
  if (paired) {
    report.systems[0] = "Baseline: " + names[0];
    report.test = f.paired_bs ? m::PairedTest::bootstrap : m::PairedTest::randomization;
    report.n_samples = f.paired_bs ? f.paired_bs_n : f.paired_ar_n;
    context.seed = lowercase(f.seed);
    (f.paired_bs ? context.bootstrap_samples : context.ar_trials) = report.n_samples;
  }
  for (const auto& metric : metrics) {
    std::vector<std::vector<double>> stats;
    for (const auto& hyps : systems) stats.push_back(m::corpus_stats(*metric, hyps, refs, threads));
    std::vector<m::PairedResult> results;
    if (paired) {
      results = m::paired_test(*metric, stats, systems[0].size(), report.test, report.n_samples, seed);
    } else {
      for (const auto& s : stats) results.push_back({metric->score(m::sum_stats(s, metric->n_stats()).data()).score, {}, {}, {}});
    }
    report.metric_names.push_back(metric->score(m::sum_stats(stats[0], metric->n_stats()).data()).name);
    report.results.push_back(results);
    report.signatures.push_back(metric->signature(context).format(f.short_signature && f.format != "json"));
  }
  tt::util::write_stdout(m::format_systems_report(report, f.width, f.format == "json"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tt::cli::run_filter("tt-bleu", argc, argv, &bleu_main); }
