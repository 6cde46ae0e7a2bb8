// safetensors: round trip, the on-disk layout, and every kind of bad file (each a FormatError naming the
// file and, where it applies, the tensor).
#include <catch2/catch.hpp>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "support/tmp_dir.h"
#include "util/error.h"

using tt::io::SafetensorsReader;
using tt::io::StDType;
using tt::io::TensorRef;

namespace {

// A file with this exact header text and data section.
std::string raw_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string s(values.size() * 4, '\0');
  std::memcpy(s.data(), values.begin(), s.size());
  return s;
}

// The FormatError message produced by opening `content` as a file, or "" if it opens.
std::string open_error(const std::string& content) {
  tt::test::TmpDir dir;
  const std::string path = dir.write("bad.safetensors", content);
  try {
    SafetensorsReader r(path);
  } catch (const tt::FormatError& e) {
    std::string what = e.what();
    CHECK(what.find(path) != std::string::npos);  // always names the file
    return what;
  }
  return "";
}

}  // namespace

TEST_CASE("safetensors round trip: F32, I32, I64, scalars, empty tensors, metadata", "[safetensors]") {
  tt::test::TmpDir dir;
  const std::string path = dir.file("m.safetensors");
  std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, -7.0f};
  std::vector<int32_t> ids = {7, -1, 2147483647};
  std::vector<int64_t> step = {1234567890123LL};
  tt::io::write_safetensors(path,
                            {TensorRef{"layer.weight", StDType::f32, {2, 3}, w.data()},
                             TensorRef{"ids", StDType::i32, {3}, ids.data()},
                             TensorRef{"step", StDType::i64, {}, step.data()},
                             TensorRef{"empty", StDType::f32, {0, 4}, nullptr}},
                            {{"format", "pt"}, {"note", "hello"}});
  SafetensorsReader r(path);
  REQUIRE(r.tensors().size() == 4);
  CHECK(r.tensors()[0].name == "layer.weight");  // file order = write order
  CHECK(r.tensors()[1].name == "ids");
  CHECK(r.metadata().at("note") == "hello");
  CHECK(r.get("layer.weight").shape == std::vector<int64_t>{2, 3});
  CHECK(r.read_f32("layer.weight") == w);
  CHECK(r.read_i32("ids") == ids);
  CHECK(r.read_i64("ids") == std::vector<int64_t>{7, -1, 2147483647});
  CHECK(r.read_i64("step") == step);
  CHECK(r.get("step").shape.empty());
  CHECK(r.read_f32("empty").empty());
  CHECK(r.find("nope") == nullptr);
  CHECK_THROWS_WITH(r.get("nope"), Catch::Contains(path) && Catch::Contains("'nope'"));
  CHECK_THROWS_WITH(r.read_f32("ids"), Catch::Contains("'ids'") && Catch::Contains("F32"));
  CHECK_THROWS_WITH(r.read_i32("step"), Catch::Contains("'step'") && Catch::Contains("32 bits"));
}

TEST_CASE("safetensors layout: u64 header length, JSON header padded to 8 bytes, data after it", "[safetensors]") {
  tt::test::TmpDir dir;
  const std::string path = dir.file("m.safetensors");
  std::vector<float> a = {1, 2}, b = {3};
  tt::io::write_safetensors(path, {TensorRef{"a", StDType::f32, {2}, a.data()}, TensorRef{"b", StDType::f32, {1}, b.data()}});
  const std::string bytes = tt::test::read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK(n % 8 == 0);
  REQUIRE(bytes.size() == 8 + n + 12);
  auto header = nlohmann::json::parse(bytes.substr(8, n));
  CHECK(header["a"]["dtype"] == "F32");
  CHECK(header["a"]["shape"] == nlohmann::json::array({2}));
  CHECK(header["a"]["data_offsets"] == nlohmann::json::array({0, 8}));
  CHECK(header["b"]["data_offsets"] == nlohmann::json::array({8, 12}));
  CHECK(bytes.substr(8 + n) == floats({1, 2, 3}));
  CHECK_FALSE(header.contains("__metadata__"));
}

TEST_CASE("safetensors reads files written by others (unsorted offsets, metadata, no padding)", "[safetensors]") {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"z":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("a":{"dtype":"I64","shape":[1,1],"data_offsets":[4,12]}})";
  std::string data = floats({2.5f});
  int64_t v = 42;
  data.append(reinterpret_cast<const char*>(&v), 8);
  tt::test::TmpDir dir;
  SafetensorsReader r(dir.write("x.safetensors", raw_file(header, data)));
  CHECK(r.tensors()[0].name == "z");
  CHECK(r.read_f32("z") == std::vector<float>{2.5f});
  CHECK(r.read_i32("a") == std::vector<int32_t>{42});
}

TEST_CASE("safetensors: every kind of bad file is a FormatError naming file and tensor", "[safetensors]") {
  const std::string one = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  CHECK(open_error(raw_file(one, floats({1, 2}))).empty());  // the good file the others break

  CHECK_THAT(open_error(""), Catch::Contains("too short"));
  CHECK_THAT(open_error("abc"), Catch::Contains("too short"));
  // Header length beyond the file (a truncated header, or garbage bytes at the start).
  std::string truncated_header = raw_file(one, floats({1, 2})).substr(0, 20);
  CHECK_THAT(open_error(truncated_header), Catch::Contains("header length"));
  CHECK_THAT(open_error(std::string(8, '\xff') + "{}"), Catch::Contains("header length"));
  CHECK_THAT(open_error(raw_file("{\"w\": [", "")), Catch::Contains("not valid JSON"));
  // A number too large for a double is nlohmann's out_of_range, not a parse_error: found by fuzz_safetensors.
  CHECK_THAT(open_error(raw_file(R"({"w":{"dtype":"F32","shape":[1e888],"data_offsets":[0,8]}})", floats({1, 2}))),
             Catch::Contains("not valid JSON") && Catch::Contains("1e888"));
  CHECK_THAT(open_error(raw_file("[1, 2]", "")), Catch::Contains("not a JSON object"));
  CHECK_THAT(open_error(raw_file(R"({"w":{"shape":[2],"data_offsets":[0,8]}})", floats({1, 2}))),
             Catch::Contains("'w'") && Catch::Contains("dtype"));
  CHECK_THAT(open_error(raw_file(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})", floats({1}))),
             Catch::Contains("'w'") && Catch::Contains("F16"));
  CHECK_THAT(open_error(raw_file(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", floats({1, 2}))),
             Catch::Contains("'w'") && Catch::Contains("shape"));
  CHECK_THAT(open_error(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", floats({1, 2}))),
             Catch::Contains("'w'") && Catch::Contains("data_offsets"));
  // Truncated data: the offsets point past the end of the file.
  CHECK_THAT(open_error(raw_file(one, floats({1}))), Catch::Contains("'w'") && Catch::Contains("outside"));
  CHECK_THAT(open_error(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", floats({1, 2}))),
             Catch::Contains("'w'") && Catch::Contains("outside"));
  // Byte size disagrees with shape x dtype.
  CHECK_THAT(open_error(raw_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", floats({1, 2}))),
             Catch::Contains("'w'") && Catch::Contains("needs 12"));
  CHECK_THAT(open_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                 floats({1, 2, 3}))),
             Catch::Contains("overlap") && Catch::Contains("'a'") && Catch::Contains("'b'"));
  CHECK_THAT(open_error(raw_file(R"({"__metadata__":{"n":1}})", "")), Catch::Contains("__metadata__"));
  CHECK_THAT(open_error(raw_file(R"({"w":[1]})", "")), Catch::Contains("'w'"));
}

TEST_CASE("safetensors: expect() reports a model mismatch with expected and found", "[safetensors]") {
  tt::test::TmpDir dir;
  const std::string path = dir.file("m.safetensors");
  std::vector<float> w(6, 1.0f);
  tt::io::write_safetensors(path, {TensorRef{"enc.w", StDType::f32, {2, 3}, w.data()}});
  SafetensorsReader r(path);
  CHECK(r.expect("enc.w", StDType::f32, {2, 3}).numel() == 6);
  CHECK_THROWS_AS(r.expect("enc.w", StDType::f32, {3, 2}), tt::FormatError);
  CHECK_THROWS_WITH(r.expect("enc.w", StDType::f32, {3, 2}),
                    Catch::Contains(path) && Catch::Contains("'enc.w'") && Catch::Contains("F32 [2, 3]") &&
                        Catch::Contains("expected F32 [3, 2]"));
  CHECK_THROWS_WITH(r.expect("enc.w", StDType::i32, {2, 3}), Catch::Contains("expected I32"));
  CHECK_THROWS_WITH(r.expect("dec.w", StDType::f32, {2, 3}), Catch::Contains("'dec.w'"));
}

TEST_CASE("safetensors: unreadable paths are IoErrors, failed writes leave nothing behind", "[safetensors]") {
  tt::test::TmpDir dir;
  CHECK_THROWS_AS(SafetensorsReader(dir.file("missing.safetensors")), tt::IoError);
  CHECK_THROWS_AS(SafetensorsReader(dir.path()), tt::IoError);
  std::vector<float> w = {1};
  CHECK_THROWS_AS(tt::io::write_safetensors(dir.file("no/such/dir/m.safetensors"),
                                            {TensorRef{"w", StDType::f32, {1}, w.data()}}),
                  tt::IoError);
  CHECK_THROWS(tt::io::write_safetensors(dir.file("dup.safetensors"), {TensorRef{"w", StDType::f32, {1}, w.data()},
                                                                       TensorRef{"w", StDType::f32, {1}, w.data()}}));
  CHECK_FALSE(std::filesystem::exists(dir.file("dup.safetensors")));
}
