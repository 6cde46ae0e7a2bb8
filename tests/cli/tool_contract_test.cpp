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
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

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
    {"tt-translate", "-m {tmodel} --max-len-b 3 --threads 1 -q < {text}", {"-m {tmodel} -i {input}"}, "-m {tmodel}"},
    {"tt-attnviz", "-m {tmodel} --max-len-b 3 --threads 1 -q < {text}", {"-m {tmodel} -i {input}"}, "-m {tmodel}"},
    // tt-average writes a directory, not stdout, and reads no stdin.
    {"tt-average", "", {"{input} {tmodel} -o {dir}/never"}, ""},
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
