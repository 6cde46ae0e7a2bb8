#include "data/line_pipeline.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "util/error.h"

namespace tt::data {

namespace {

// Output is handed to the sink in pieces of about this size in the single-thread path.
constexpr size_t sink_bytes = size_t{1} << 16;

FormatError error_at(const std::string& name, size_t line_number, const Error& e) {
  return FormatError(name + ":" + std::to_string(line_number) + ": ", e);
}

struct Chunk {
  size_t first_line = 0;  // 1-based number of lines[0]
  std::vector<std::string> lines;
  std::string out;
  std::exception_ptr error;
  bool done = false;
};

// Processes a chunk; on failure keeps the output of the lines before the failing one and records the error.
void process_chunk(Chunk& chunk, const LineFunction& fn, const std::string& name) {
  for (size_t i = 0; i < chunk.lines.size(); ++i) {
    const size_t mark = chunk.out.size();
    try {
      fn(chunk.lines[i], chunk.out);
    } catch (const Error& e) {
      chunk.out.resize(mark);
      chunk.error = std::make_exception_ptr(error_at(name, chunk.first_line + i, e));
      break;
    } catch (...) {
      chunk.out.resize(mark);
      chunk.error = std::current_exception();
      break;
    }
    chunk.out += '\n';
  }
  chunk.lines = {};  // the input is no longer needed: free it before the chunk waits for its turn
}

// State shared by the reader/writer thread and the workers. Chunks in `window` have consecutive
// sequence numbers front_seq, front_seq + 1, ...; `pushed` counts every chunk ever added.
struct Shared {
  std::mutex mutex;
  std::condition_variable work_ready;
  std::condition_variable chunk_done;
  std::deque<std::shared_ptr<Chunk>> window;
  size_t front_seq = 0;
  size_t pushed = 0;
  bool closing = false;
};

void worker_loop(Shared& shared, const LineFunction& fn, const std::string& name, size_t first, size_t stride) {
  for (size_t next = first;; next += stride) {
    std::shared_ptr<Chunk> chunk;
    {
      std::unique_lock lock(shared.mutex);
      shared.work_ready.wait(lock, [&] { return shared.closing || next < shared.pushed; });
      if (shared.closing) return;
      // Chunk `next` is still in the window: only this worker can complete it, and only complete
      // chunks leave the window.
      chunk = shared.window[next - shared.front_seq];
    }
    process_chunk(*chunk, fn, name);
    {
      std::lock_guard lock(shared.mutex);
      chunk->done = true;
    }
    shared.chunk_done.notify_all();
  }
}

// Stops and joins the workers however the main loop ends (normally, on a bad line, on EPIPE).
class WorkerGroup {
 public:
  explicit WorkerGroup(Shared& shared) : shared_(shared) {}
  ~WorkerGroup() {
    {
      std::lock_guard lock(shared_.mutex);
      shared_.closing = true;
    }
    shared_.work_ready.notify_all();
    for (auto& t : threads_) t.join();
  }
  WorkerGroup(const WorkerGroup&) = delete;
  WorkerGroup& operator=(const WorkerGroup&) = delete;
  std::vector<std::thread>& threads() { return threads_; }

 private:
  Shared& shared_;
  std::vector<std::thread> threads_;
};

size_t run_sequential(util::LineReader& reader, const LineFunction& fn, const OutputSink& sink) {
  std::string line, out;
  size_t count = 0;
  while (reader.next(line)) {
    ++count;
    const size_t mark = out.size();
    try {
      fn(line, out);
    } catch (const Error& e) {
      out.resize(mark);
      if (!out.empty()) sink(out);
      throw error_at(reader.name(), reader.line_number(), e);
    } catch (...) {
      out.resize(mark);
      if (!out.empty()) sink(out);
      throw;
    }
    out += '\n';
    if (out.size() >= sink_bytes) {
      sink(out);
      out.clear();
    }
  }
  if (!out.empty()) sink(out);
  return count;
}

size_t run_parallel(util::LineReader& reader, const LineFunction& fn, const OutputSink& sink,
                    const LinePipelineOptions& options) {
  const size_t n_threads = static_cast<size_t>(options.threads);
  const size_t max_in_flight = 2 * n_threads;
  const std::string name = reader.name();
  Shared shared;
  WorkerGroup workers(shared);
  for (size_t t = 0; t < n_threads; ++t) {
    workers.threads().emplace_back(worker_loop, std::ref(shared), std::cref(fn), std::cref(name), t, n_threads);
  }

  size_t count = 0;
  bool eof = false;
  std::string line;
  while (!eof) {
    auto chunk = std::make_shared<Chunk>();
    chunk->first_line = reader.line_number() + 1;
    size_t bytes = 0;
    while (chunk->lines.size() < options.chunk_lines && bytes < options.chunk_bytes) {
      if (!reader.next(line)) {
        eof = true;
        break;
      }
      bytes += line.size() + 1;
      chunk->lines.push_back(std::move(line));
      line = std::string();
    }
    if (!chunk->lines.empty()) {
      count += chunk->lines.size();
      {
        std::lock_guard lock(shared.mutex);
        shared.window.push_back(std::move(chunk));
        ++shared.pushed;
      }
      shared.work_ready.notify_all();
    }
    // Write finished chunks in order; wait for the oldest when the window is full, or for all at EOF.
    for (;;) {
      std::shared_ptr<Chunk> front;
      {
        std::unique_lock lock(shared.mutex);
        if (shared.window.empty()) break;
        if (!shared.window.front()->done) {
          if (!eof && shared.window.size() < max_in_flight) break;
          shared.chunk_done.wait(lock, [&] { return shared.window.front()->done; });
        }
        front = std::move(shared.window.front());
        shared.window.pop_front();
        ++shared.front_seq;
      }
      if (!front->out.empty()) sink(front->out);
      if (front->error) std::rethrow_exception(front->error);
    }
  }
  return count;
}

}  // namespace

size_t run_line_pipeline(util::LineReader& reader, const LineFunction& fn, const OutputSink& sink,
                         const LinePipelineOptions& options) {
  if (options.threads < 1) throw ConfigError(option_ref("threads") + " must be at least 1");
  if (options.threads == 1) return run_sequential(reader, fn, sink);
  return run_parallel(reader, fn, sink, options);
}

}  // namespace tt::data
