// The contract every tt tool keeps with the shell, checked on the real binaries (man 7 tt, EXIT STATUS):
//   - output that cannot be written is an error: stdout on /dev/full or closed (>&-) gives exit 1 and
//     "write failed" on stderr; a reader that goes away (EPIPE) is a quiet exit 0;
//   - SIGINT/SIGTERM end a tool with 130/143;
//   - a missing, directory or unreadable input file is exit 1 with a message naming the file (usage
//     errors are exit 2; files and data are exit 1).
// A new tool joins by adding one line to kContracts; a tool in TT_TOOL_LIST without a line fails here.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "support/run_command.h"
#include "support/tmp_dir.h"

using tt::test::run_command;
using tt::test::TmpDir;

namespace {

// Commands are the tool's arguments, with {ref} {hyp} {text} {model} {dir} {input} replaced by fixture
// paths. `writes` writes to stdout; `reads` each open the data file {input}; `waits` blocks on stdin
// (for the signal checks). An empty string means "not checked yet" and must say why in a comment.
struct Contract {
  std::string tool;
  std::string writes;
  std::vector<std::string> reads;
  std::string waits;
};

const std::vector<Contract> kContracts = {
    {"tt-bleu", "{ref} -i {hyp}", {"{input} -i {hyp}", "{ref} -i {input}", "{ref} -i {hyp} {input}"}, "{ref}"},
    {"tt-tokenize",
     "encode -m {model} < {text}",
     {"encode -m {input} < {text}", "decode -m {input} < {text}", "vocab -m {input}",
      "train -i {input} -o {dir}/out --vocab-size 30"},
     "encode -m {model}"},
    {"tt-train",
     "--dry-run --preset tiny --vocab-size 100",
     {"--dry-run --config {input}", "--preset tiny --train {input} {text} --valid {text} {text} --spm {model} -o {dir}/r",
      "--preset tiny --train {text} {text} --spm {input} -o {dir}/r"},
     // Training reads no stdin; its signal handling (save, then 130/143) is tested in tests/train.
     ""},
    {"tt-translate", "-m {tmodel} --max-len-b 3 --threads 1 -q < {text}",
     {"-m {tmodel} -i {input}", "-m {tmodel} --shortlist {input} < {text}"}, "-m {tmodel}"},
    {"tt-attnviz", "-m {tmodel} --max-len-b 3 --threads 1 -q < {text}", {"-m {tmodel} -i {input}"}, "-m {tmodel}"},
    // tt-average writes a directory, not stdout, and reads no stdin.
    {"tt-average", "", {"{input} {tmodel} -o {dir}/never"}, ""},
    // tt-convert writes a directory, not stdout, and reads no stdin.
    {"tt-convert", "", {"export-ct2 {input} -o {dir}/never", "quantize {input} -o {dir}/never --type int8",
                        "import-marian {input} -o {dir}/never", "shortlist {input} --train {text} {text} -o {dir}/never",
                        "shortlist {tmodel} --train {input} {text} -o {dir}/never",
                        "shortlist {tmodel} --train {text} {input} -o {dir}/never"}, ""},
};

std::vector<std::string> tool_names() {
  std::vector<std::string> names;
  std::stringstream list(TT_TOOL_LIST);
  for (std::string name; list >> name;) names.push_back(name);
  return names;
}

const Contract* find_contract(const std::string& tool) {
  for (const auto& c : kContracts)
    if (c.tool == tool) return &c;
  return nullptr;
}

// Fixture files shared by every check; the tokenizer model is trained once with the real binary.
class Fixture {
 public:
  Fixture() {
    values_["{dir}"] = dir_.path();
    values_["{ref}"] = dir_.write("ref.txt", "the cat sat on the mat\na dog barked\nhello world\n");
    values_["{hyp}"] = dir_.write("hyp.txt", "the cat sat on a mat\na dog barks\nhello world\n");
    values_["{text}"] = dir_.write("text.txt", "Hello world.\nThe house is small.\n");
    const std::string corpus = std::string(TT_TEST_DATA_DIR) + "/tokenize/corpus.en";
    auto r = run_command(tt::test::tool("tt-tokenize") + " train -i " + corpus + " -o " + dir_.file("m") +
                         " --vocab-size 60 --threads 1");
    if (r.status != 0) throw std::runtime_error("fixture: tt-tokenize train failed: " + r.err);
    values_["{model}"] = dir_.file("m.model");
    values_["{corpus}"] = corpus;
    // A one-layer model over the same 60 pieces, carrying its SentencePiece model (for the model readers).
    const std::string tmodel = dir_.file("tmodel");
    r = run_command(tt::test::tool("tt-train") + " --preset tiny --layers 1 --vocab-size 60 --synthetic-steps 1" +
                    " --batch-size 2 --src-len 4 --tgt-len 4 --threads 1 -q -o " + tmodel);
    if (r.status != 0) throw std::runtime_error("fixture: tt-train failed: " + r.err);
    std::filesystem::copy_file(dir_.file("m.model"), tmodel + "/spm.model");
    std::string config = tt::test::read_file(tmodel + "/config.json");
    config.insert(config.find('{') + 1, "\"vocab\": {\"source\": \"spm.model\", \"target\": \"spm.model\"},");
    std::ofstream(tmodel + "/config.json") << config;
    values_["{tmodel}"] = tmodel;
    std::filesystem::create_directory(dir_.file("a-directory"));
  }
  std::string expand(const std::string& tool, std::string args, const std::string& input = "") const {
    auto values = values_;
    values["{input}"] = input;
    for (const auto& [key, value] : values)
      for (size_t at; (at = args.find(key)) != std::string::npos;) args.replace(at, key.size(), value);
    return tt::test::tool(tool) + " " + args;
  }
  std::string file(const std::string& name) const { return dir_.file(name); }
  std::string value(const std::string& key) const { return values_.at(key); }

 private:
  TmpDir dir_;
  std::map<std::string, std::string> values_;
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("every tool has a line in the CLI contract table", "[cli]") {
  for (const auto& name : tool_names()) {
    INFO(name << ": add a line for it to kContracts in tests/cli/tool_contract_test.cpp");
    CHECK(find_contract(name) != nullptr);
  }
}

TEST_CASE("every tool's output command works, and a failed final write is exit 1 with a message", "[cli]") {
  for (const auto& name : tool_names()) {
    const Contract* c = find_contract(name);
    if (!c || c->writes.empty()) continue;
    const std::string cmd = fixture().expand(name, c->writes);
    INFO(cmd);
    auto ok = run_command(cmd);
    REQUIRE(ok.status == 0);
    REQUIRE_FALSE(ok.out.empty());

    auto full = run_command(cmd + " > /dev/full");
    CHECK(full.status == 1);
    CHECK(contains(full.err, name + ": error: <stdout>: write failed: No space left on device"));

    auto closed = run_command(cmd + " >&-");
    CHECK(closed.status == 1);
    CHECK(contains(closed.err, name + ": error: <stdout>: write failed: "));

    // --help and --version output are checked the same way.
    auto help = run_command(tt::test::tool(name) + " --help > /dev/full");
    CHECK(help.status == 1);
    CHECK(contains(help.err, "write failed"));

    // A reader that has already gone away: EPIPE is a quiet success. The reader `:` exits at once; the
    // tool is started a moment later so that its write meets a closed pipe.
    auto pipe = run_command("(sleep 0.05; " + cmd + "; echo \"status $?\" >&2) | :");
    CHECK(pipe.err == "status 0\n");
  }
}

TEST_CASE("SIGINT and SIGTERM end a waiting tool with 130 and 143", "[cli]") {
  for (const auto& name : tool_names()) {
    const Contract* c = find_contract(name);
    if (!c || c->waits.empty()) continue;
    // stdin is a FIFO this shell also holds open for writing, so the tool blocks reading it until the
    // signal arrives; `timeout --preserve-status` sends the signal and returns the tool's status.
    const std::string fifo = fixture().file("fifo-" + name);
    ::unlink(fifo.c_str());
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    for (auto [signal, status] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
      const std::string cmd = "exec 3<>" + fifo + "; timeout --preserve-status -k 5 -s " + signal + " 0.3 " +
                              fixture().expand(name, c->waits) + " < " + fifo;
      INFO(cmd);
      auto r = run_command(cmd);
      CHECK(r.status == status);
      CHECK(r.out.empty());
    }
    ::unlink(fifo.c_str());
  }
}

TEST_CASE("a missing, directory or unreadable input file is exit 1 naming the file", "[cli]") {
  std::vector<std::string> bad_inputs = {fixture().file("missing.txt"), fixture().file("a-directory")};
  // /proc/self/mem opens but cannot be read at offset 0 (EIO), even for root.
  if (std::filesystem::exists("/proc/self/mem")) bad_inputs.push_back("/proc/self/mem");
  if (::geteuid() != 0) {  // root reads a mode-000 file anyway
    const std::string locked = fixture().file("locked.txt");
    std::ofstream(locked) << "text\n";
    ::chmod(locked.c_str(), 0);
    bad_inputs.push_back(locked);
  }
  for (const auto& name : tool_names()) {
    const Contract* c = find_contract(name);
    if (!c) continue;
    for (const auto& reads : c->reads) {
      for (const auto& input : bad_inputs) {
        const std::string cmd = fixture().expand(name, reads, input);
        INFO(cmd);
        auto r = run_command(cmd);
        INFO(r.err);
        CHECK(r.status == 1);
        CHECK(contains(r.err, name + ": error: "));
        CHECK(contains(r.err, input));
        CHECK(r.out.empty());
      }
    }
  }
}

namespace {

// Where each tool writes a file or directory of its own (not stdout). {out} is the path under test;
// `suffix` is what the tool appends to it (tt-tokenize train writes PREFIX.model).
struct OutputPath {
  std::string tool;
  std::string command;
  std::string suffix;
  bool directory;
  bool follows_links = true;  // false: a link is refused (tt-average --force never deletes through one)
};

const std::vector<OutputPath> kOutputPaths = {
    {"tt-attnviz", "-m {tmodel} --max-len-b 3 --threads 1 -q --html {out} < {text}", "", false},
    {"tt-translate", "-m {tmodel} --max-len-b 3 --threads 1 -q --scores-file {out} < {text} > /dev/null", "", false},
    {"tt-tokenize", "train -i {corpus} -o {out} --vocab-size 40 --threads 1", ".model", false},
    {"tt-average", "{tmodel} --force -o {out}", "", true, false},
    {"tt-convert", "export-ct2 {tmodel} --force -o {out}", "", true, false},
    {"tt-convert", "quantize {tmodel} --type int8 --force -o {out}", "", true, false},
    {"tt-convert", "import-marian " + std::string(TT_TEST_DATA_DIR) + "/marian/tiny --force -o {out}", "", true, false},
    {"tt-convert", "shortlist {tmodel} --train {text} {text} --force -o {out}", "", false},
    {"tt-train",
     "--preset tiny --layers 1 --vocab-size 60 --synthetic-steps 1 --batch-size 2 --src-len 4 --tgt-len 4 "
     "--threads 1 -q -o {out}",
     "", true},
};

std::string with_out(const OutputPath& o, const std::string& out) {
  std::string args = o.command;
  args.replace(args.find("{out}"), 5, out);
  return fixture().expand(o.tool, args);
}

bool is_link(const std::string& p) { return std::filesystem::is_symlink(std::filesystem::symlink_status(p)); }

}  // namespace

TEST_CASE("an output path that is a symlink, a FIFO or a device is written through or refused, never replaced",
          "[cli]") {
  namespace fs = std::filesystem;
  for (const auto& o : kOutputPaths) {
    TmpDir tmp;
    const std::string prefix = tmp.file("out"), path = prefix + o.suffix;
    INFO(o.tool);
    // A symlink: what it names gets the output, the link stays.
    const std::string real = tmp.file(o.directory ? "real-dir" : "real-file");
    if (o.directory) fs::create_directory(real);
    else tmp.write("real-file", "old");
    fs::create_symlink(real, path);
    auto r = run_command(with_out(o, prefix));
    INFO(r.err);
    CHECK(r.status == (o.follows_links ? 0 : 1));
    CHECK(is_link(path));
    if (!o.follows_links) CHECK(contains(r.err, "symbolic link"));
    else if (o.directory) CHECK(fs::exists(real + "/config.json"));
    else CHECK(tt::test::read_file(real) != "old");
    fs::remove(path);

    // A FIFO: a file output is written through to its reader; a directory output is refused.
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    const std::string sink = tmp.file("sink");
    // (A refused directory output never opens the FIFO: the test opens it for the waiting reader then.)
    r = run_command("timeout 60 cat " + path + " > " + sink + " & " + with_out(o, prefix) + "; s=$?; " +
                    (o.directory ? ": > " + path + "; " : std::string()) + "wait; exit $s");
    INFO(r.err);
    CHECK(fs::is_fifo(fs::symlink_status(path)));
    if (o.directory) {
      CHECK(r.status == 1);
      CHECK(contains(r.err, path));
      CHECK(contains(r.err, "not a directory"));
    } else {
      CHECK(r.status == 0);
      CHECK_FALSE(tt::test::read_file(sink).empty());
    }
    fs::remove(path);

    // A device behind a link (so that a regression replaces the link, not the device).
    fs::create_symlink("/dev/null", path);
    r = run_command(with_out(o, prefix));
    CHECK(r.status == (o.directory ? 1 : 0));
    CHECK(is_link(path));
    fs::remove(path);
    fs::create_symlink("/dev/full", path);
    r = run_command(with_out(o, prefix));
    CHECK(r.status == 1);
    CHECK(contains(r.err, o.tool + ": error: "));
    if (!o.directory) CHECK(contains(r.err, path + ": write failed"));
    CHECK(is_link(path));
    CHECK(fs::is_character_file(fs::status("/dev/full")));
  }
}

TEST_CASE("options out of range or contradicting each other are usage errors (exit 2) in a short message", "[cli]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tt-translate -m {tmodel} --nbest 5 --beam 2", "--nbest"},
      {"tt-translate -m {tmodel} --workers 100 --threads 1", "--workers"},
      {"tt-translate -m {tmodel} --sampling topk:0", "--sampling"},
      {"tt-translate -m {tmodel} --alpha nan", "--alpha"},
      {"tt-translate -m {tmodel} --sampling full --temperature 0", "--temperature"},
      {"tt-translate -m {tmodel} --sampling full --temperature nan", "--temperature"},
      {"tt-translate -m {tmodel} --max-len-a -1", "--max-len-a"},
      {"tt-attnviz -m {tmodel} --html {dir}/p.html --format alignment", "--html"},
      {"tt-attnviz -m {tmodel} --alpha inf", "--alpha"},
      {"tt-average --last 0 {tmodel} -o {dir}/never", "--last"},
  };
  for (const auto& [command, option] : cases) {
    const std::string tool = command.substr(0, command.find(' '));
    const std::string cmd = fixture().expand(tool, command.substr(command.find(' ') + 1));
    INFO(cmd);
    auto r = run_command(cmd + " < /dev/null");
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(contains(r.err, option));
    CHECK(r.err.size() < 400);  // the bound in words, not "0.000000 to 17976931348623157081..."
    CHECK(r.out.empty());
  }
  CHECK_FALSE(std::filesystem::exists(fixture().file("never")));
}

namespace {

// A copy of the fixture's model directory, for damaging.
std::string copy_model(const TmpDir& tmp, const std::string& name) {
  const std::string dir = tmp.file(name);
  std::filesystem::copy(fixture().value("{tmodel}"), dir);
  return dir;
}

// Overwrites element `index` of tensor `tensor` in a safetensors file with `value`.
void poke(const std::string& path, const std::string& tensor, size_t index, float value) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  uint64_t header_size = 0;
  f.read(reinterpret_cast<char*>(&header_size), 8);
  std::string header(header_size, '\0');
  f.read(header.data(), static_cast<std::streamsize>(header_size));
  const auto entry = header.find("\"" + tensor + "\"");
  REQUIRE(entry != std::string::npos);
  const auto offsets = header.find("\"data_offsets\":[", entry) + 16;
  const uint64_t begin = std::stoull(header.substr(offsets));
  f.seekp(static_cast<std::streamoff>(8 + header_size + begin + 4 * index));
  f.write(reinterpret_cast<const char*>(&value), 4);
}

// The commands that load a whole model directory {m}.
const std::vector<std::string> kModelReaders = {
    "tt-translate -m {m} --threads 1 -q < {text}",
    "tt-translate -m {m} --beam 1 --threads 1 -q < {text}",
    "tt-attnviz -m {m} --threads 1 -q < {text}",
    "tt-average {m} {tmodel} -o {dir}/never",
    "tt-convert export-ct2 {m} -o {dir}/never",
    "tt-convert quantize {m} -o {dir}/never --type int8",
};

std::string reader_command(const std::string& line, const std::string& model) {
  std::string args = line.substr(line.find(' ') + 1);
  args.replace(args.find("{m}"), 3, model);
  if (args.find("{m}") != std::string::npos) args.replace(args.find("{m}"), 3, model);
  return "timeout 60 " + fixture().expand(line.substr(0, line.find(' ')), args);
}

}  // namespace

TEST_CASE("a model with a NaN or infinite weight is refused at load naming file, tensor and index", "[cli]") {
  TmpDir tmp;
  const std::string nan = copy_model(tmp, "nan"), inf = copy_model(tmp, "inf");
  poke(nan + "/model.safetensors", "embeddings.shared.weight", 5 * 128 + 7, std::nanf(""));
  poke(inf + "/model.safetensors", "decoder.layers.0.self_attn_norm.bias", 3, INFINITY);
  for (const auto& line : kModelReaders) {
    for (const auto& [model, tensor, where] :
         {std::tuple{nan, "embeddings.shared.weight", "index 647 (row 5, column 7)"},
          std::tuple{inf, "decoder.layers.0.self_attn_norm.bias", "index 3"}}) {
      const std::string cmd = reader_command(line, model);
      INFO(cmd);
      auto r = run_command(cmd);
      INFO(r.err);
      CHECK(r.status == 1);
      CHECK(contains(r.err, model + "/model.safetensors"));
      CHECK(contains(r.err, tensor));
      CHECK(contains(r.err, where));
      CHECK(r.out.empty());
    }
  }
}

TEST_CASE("model files that are FIFOs or devices are refused at once, naming them", "[cli]") {
  TmpDir tmp;
  const std::string fifo = copy_model(tmp, "fifo"), device = copy_model(tmp, "device");
  std::filesystem::remove(fifo + "/model.safetensors");
  REQUIRE(::mkfifo((fifo + "/model.safetensors").c_str(), 0600) == 0);
  std::filesystem::remove(device + "/spm.model");
  std::filesystem::create_symlink("/dev/zero", device + "/spm.model");
  for (const auto& line : kModelReaders) {
    const std::string cmd = reader_command(line, fifo);
    INFO(cmd);
    auto r = run_command(cmd);
    INFO(r.err);
    CHECK(r.status == 1);  // not 124: timeout would have killed a reader hanging on the FIFO
    CHECK(contains(r.err, fifo + "/model.safetensors: is a FIFO"));
  }
  for (const auto& line : {kModelReaders[0], kModelReaders[2]}) {
    auto r = run_command(reader_command(line, device));
    CHECK(r.status == 1);
    CHECK(contains(r.err, device + "/spm.model: is a character device"));
  }
}

TEST_CASE("a SentencePiece model whose size differs from the model's vocabulary is refused naming both", "[cli]") {
  TmpDir tmp;
  const std::string model = copy_model(tmp, "other-spm");
  auto r = run_command(tt::test::tool("tt-tokenize") + " train -i " + std::string(TT_TEST_DATA_DIR) +
                       "/tokenize/corpus.en -o " + tmp.file("small") + " --vocab-size 40 --threads 1");
  REQUIRE(r.status == 0);
  std::filesystem::copy_file(tmp.file("small.model"), model + "/spm.model",
                             std::filesystem::copy_options::overwrite_existing);
  for (const auto& line : {kModelReaders[0], kModelReaders[2]}) {
    const std::string cmd = reader_command(line, model);
    INFO(cmd);
    r = run_command(cmd);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK(contains(r.err, model + "/spm.model has 40 pieces"));
    CHECK(contains(r.err, "60 ids"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("SIGTERM while stdout is blocked leaves only whole lines, also for lines longer than a pipe write",
          "[cli]") {
  TmpDir tmp;
  std::string many, long_lines;
  for (int i = 0; i < 40000; ++i) many += "The house is small and the cat sat on the mat " + std::to_string(i) + ".\n";
  for (int i = 0; i < 40; ++i) {
    for (int w = 0; w < 1500; ++w) long_lines += "word" + std::to_string(w % 7) + " ";
    long_lines += "\n";
  }
  for (const auto& [name, text] : {std::pair{"many.txt", many}, std::pair{"long.txt", long_lines}}) {
    const std::string input = tmp.write(name, text), fifo = tmp.file(std::string(name) + ".fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string tool = fixture().expand("tt-tokenize", "encode -m {model} --threads 1 < " + input);
    const auto whole = run_command(tool);
    REQUIRE(whole.status == 0);
    // The shell holds the FIFO open (fd 3) and reads nothing until the tool has had its signal; then it
    // reads for 3 s (a tool finishing a long line needs the reader), the FIFO never reaching end of file.
    // (It is signalled once blocked writing to the full pipe, or after 10 s where wchan cannot be read.)
    const std::string cmd = "exec 3<>" + fifo + "; " + tool + " > " + fifo + " 3>&- & pid=$!; " +
                            "for i in $(seq 100); do grep -q pipe_write /proc/$pid/wchan 2>/dev/null && break; " +
                            "sleep 0.1; done; kill -TERM $pid; sleep 0.2; timeout 3 cat <&3 & wait $pid; " +
                            "echo \"status $?\" >&2; wait";
    INFO(cmd);
    auto r = run_command(cmd);
    CHECK(contains(r.err, "status 143"));
    REQUIRE_FALSE(r.out.empty());
    CHECK(r.out.back() == '\n');
    CHECK(r.out.size() < whole.out.size());
    CHECK(whole.out.compare(0, r.out.size(), r.out) == 0);  // a prefix of whole lines
  }
}

TEST_CASE("tt-attnviz announces a sentence whose attention maps are large, with their size", "[cli]") {
  TmpDir tmp;
  std::string words;
  for (int i = 0; i < 1200; ++i) words += i % 2 ? "house " : "world ";
  const std::string src = tmp.write("src.txt", words + "\nHello world.\n"), tgt = tmp.write("tgt.txt", words + "\nHello.\n");
  // 1 layer, 4 heads, 1,023 source and target pieces: 3 kinds x 4 x 1,024^2 = 12.6 million weights.
  auto r = run_command(fixture().expand("tt-attnviz", "-m {tmodel} --threads 1 --precision 0 --max-src-len 2000 -i " +
                                                          src + " --target " + tgt + " > /dev/null"));
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.err, "warning: line 1: its attention maps hold 12.6 million weights"));
  CHECK_FALSE(contains(r.err, "line 2:"));
  r = run_command(fixture().expand("tt-attnviz", "-m {tmodel} --threads 1 -q --kind cross --max-src-len 2000 -i " + src +
                                                     " --target " + tgt + " > /dev/null"));
  CHECK(r.err.empty());  // cross attention alone: 4.2 million
}
