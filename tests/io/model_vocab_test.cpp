// The SentencePiece model(s) inside a model directory: copied in, found again, and clear errors.
#include <catch2/catch.hpp>
#include <filesystem>

#include "io/model_vocab.h"
#include "support/tmp_dir.h"
#include "util/error.h"

using tt::test::TmpDir;

TEST_CASE("copy_vocab_files: one file for a shared vocabulary, two for separate ones", "[io][vocab]") {
  TmpDir tmp;
  const std::string a = tmp.write("a.model", "AAA"), b = tmp.write("b.model", "BBB");
  std::filesystem::create_directory(tmp.file("shared"));
  auto j = tt::io::copy_vocab_files(tmp.file("shared"), a, tmp.path() + "/./a.model");
  CHECK(j == nlohmann::json{{"source", "spm.model"}, {"target", "spm.model"}});
  auto files = tt::io::vocab_files(tmp.file("shared"), nlohmann::json{{"vocab", j}});
  CHECK(files.shared());
  CHECK(tt::test::read_file(files.source) == "AAA");

  std::filesystem::create_directory(tmp.file("separate"));
  j = tt::io::copy_vocab_files(tmp.file("separate"), a, b);
  files = tt::io::vocab_files(tmp.file("separate"), nlohmann::json{{"vocab", j}});
  CHECK_FALSE(files.shared());
  CHECK(tt::test::read_file(files.source) == "AAA");
  CHECK(tt::test::read_file(files.target) == "BBB");
}

TEST_CASE("vocab_files: a missing section or file names config.json", "[io][vocab]") {
  TmpDir tmp;
  CHECK_THROWS_WITH(tt::io::vocab_files(tmp.path(), nlohmann::json{{"model", {}}}),
                    Catch::Contains("config.json") && Catch::Contains("no \"vocab\""));
  tmp.write("y.model", "Y");
  CHECK_THROWS_WITH(tt::io::vocab_files(tmp.path(), nlohmann::json{{"vocab", {{"source", "y.model"}}}}),
                    Catch::Contains("\"target\""));
  CHECK_THROWS_WITH(
      tt::io::vocab_files(tmp.path(), nlohmann::json{{"vocab", {{"source", "x.model"}, {"target", "x.model"}}}}),
      Catch::Contains("x.model is missing"));
  CHECK_THROWS_AS(tt::io::copy_vocab_files(tmp.path(), tmp.file("absent.model"), tmp.file("absent.model")),
                  tt::IoError);
  // A name longer than the file system allows (the fuzzer found std::filesystem's exception escaping here).
  const std::string long_name(300, 'x');
  const nlohmann::json too_long{{"vocab", {{"source", long_name}, {"target", "y.model"}}}};
  CHECK_THROWS_AS(tt::io::vocab_files(tmp.path(), too_long), tt::IoError);
  CHECK_THROWS_WITH(tt::io::vocab_files(tmp.path(), too_long), Catch::Contains(long_name) && Catch::Contains("too long"));
}
