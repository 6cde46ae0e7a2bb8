#include "train/training_run.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <deque>

#include "util/error.h"

namespace tt::train {

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::max_steps: return "max_steps";
    case StopReason::max_epochs: return "max_epochs";
    case StopReason::time_limit: return "time_limit";
    case StopReason::early_stop: return "early_stop";
    case StopReason::signal: return "signal";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double round_to(double x, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(x * f) / f;
}

// Where the metric improves: BLEU up, loss down.
bool better(const std::string& metric, double value, const std::optional<double>& best) {
  if (!best) return true;
  return metric == "bleu" ? value > *best : value < *best;
}

class Run {
 public:
  Run(Trainer& trainer, TrainerState& state, const Validator* validator, CheckpointContents checkpoint,
      const RunOptions& options, RunLog& log, const util::SignalGuard* signals, const RunCallbacks& callbacks)
      : trainer_(trainer), state_(state), validator_(validator), checkpoint_(std::move(checkpoint)), o_(options),
        log_(log), signals_(signals), callbacks_(callbacks), start_(Clock::now()), last_save_(start_),
        elapsed_base_(state.elapsed_s), comm_(trainer.communicator()), root_(comm_.is_root()) {
    checkpoint_.adam = &trainer.optimizer();
    checkpoint_.state = &state_;
    if (validator_) {
      const std::string metric = validator_->has_bleu() ? "bleu" : "loss";
      if (state_.best_metric_name != metric) {  // a resumed run that changed the metric starts its best afresh
        state_.best_metric.reset();
        state_.bad_validations = 0;
      }
      state_.best_metric_name = metric;
    }
    if (state_.step > 0) saved_step_ = state_.step;  // resumed: that step's checkpoint exists
  }

  RunResult run() {
    try {
      return run_loop();
    } catch (const Error& e) {  // a diverged loss, a full disk: the log says how the run ended too
      record({{"type", "end"}, {"step", state_.step}, {"reason", "error"}, {"message", e.what()},
              {"elapsed_s", round_to(elapsed_base_ + session_seconds(), 3)}});
      throw;
    }
  }

 private:
  RunResult run_loop() {
    RunResult result;
    std::optional<StopReason> stop = agree(limit_reached(), result);
    while (!stop) {
      const StepStats stats = trainer_.step();
      state_.step = stats.step;
      state_.position = trainer_.source().position();
      state_.elapsed_s = elapsed_base_ + session_seconds();
      account(stats);
      if (o_.report_every > 0 && stats.step % o_.report_every == 0) report();
      // Rank 0 decides (the others wait in agree()): a signal, a limit, or validation / saving.
      std::optional<StopReason> decision;
      if (signals_ && signals_->pending()) decision = StopReason::signal;
      if (root_ && !decision) {
        decision = limit_reached();
        if (decision) {
          // the end validates and saves
        } else if (validator_ && o_.valid_every > 0 && stats.step % o_.valid_every == 0) {
          if (validate()) decision = StopReason::early_stop;
        } else if ((o_.save_every > 0 && stats.step % o_.save_every == 0) ||
                   (o_.save_minutes > 0 &&
                    std::chrono::duration<double>(Clock::now() - last_save_).count() >= 60.0 * o_.save_minutes)) {
          save(false);
        }
      }
      stop = agree(decision, result);
    }
    result.reason = *stop;
    result.last_checkpoint = checkpoint_path(state_.step);
    if (!root_) {
      comm_.barrier();  // rank 0 validates and saves the last step
      return result;
    }
    // The end: validate (not after a signal: the user wants out) and make sure the last step is saved.
    if (tokens_since_report_ > 0 && o_.report_every > 0) report();
    if (*stop != StopReason::signal && validator_ && validated_step_ != state_.step) validate();
    if (saved_step_ != state_.step) save(false);
    result.last_checkpoint = checkpoint_path(state_.step);
    nlohmann::json end{{"type", "end"}, {"step", state_.step}, {"epoch", round_to(epoch(), 4)},
                       {"reason", stop_reason_name(*stop)}, {"elapsed_s", round_to(state_.elapsed_s, 3)},
                       {"checkpoint", result.last_checkpoint}};
    if (result.signal) end["signal"] = result.signal;
    if (state_.best_metric) {
      end["best_step"] = state_.best_step;
      end[state_.best_metric_name == "bleu" ? "best_bleu" : "best_loss"] = round_to(*state_.best_metric, 4);
    }
    record(end);
    comm_.barrier();
    return result;
  }

  // Every rank's view of whether to stop: rank 0's decision, or a signal that reached any rank. One
  // collective per step (a no-op in a single process).
  std::optional<StopReason> agree(std::optional<StopReason> decision, RunResult& result) {
    const int pending = signals_ ? signals_->pending() : 0;
    int64_t v[3] = {root_ && decision ? static_cast<int64_t>(*decision) + 1 : 0, pending ? 1 : 0,
                    root_ ? pending : 0};
    comm_.all_reduce_sum(v, 3);
    if (v[1] > 0 && (v[0] == 0 || v[0] - 1 == static_cast<int64_t>(StopReason::signal))) {
      result.signal = v[2] ? static_cast<int>(v[2]) : (pending ? pending : SIGTERM);
      return StopReason::signal;
    }
    if (v[0] > 0) return static_cast<StopReason>(v[0] - 1);
    return std::nullopt;
  }

  double session_seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  double epoch() const {
    const int64_t per_epoch = trainer_.source().batches_per_epoch();
    if (per_epoch <= 0) return 0;
    return static_cast<double>(state_.position.epoch) +
           static_cast<double>(state_.position.index) / static_cast<double>(per_epoch);
  }

  std::optional<StopReason> limit_reached() const {
    if (o_.max_steps > 0 && state_.step >= o_.max_steps) return StopReason::max_steps;
    if (o_.max_epochs > 0 && trainer_.source().batches_per_epoch() > 0 && state_.position.epoch >= o_.max_epochs)
      return StopReason::max_epochs;
    if (o_.time_limit_s > 0 && session_seconds() >= o_.time_limit_s) return StopReason::time_limit;
    return std::nullopt;
  }

  // Seconds to the nearest stop condition, from the recent step rate; -1 if there is none.
  double eta(double step_wall_s) const {
    double eta = -1;
    auto consider = [&](double s) { eta = eta < 0 ? s : std::min(eta, s); };
    if (o_.max_steps > 0) consider(static_cast<double>(o_.max_steps - state_.step) * step_wall_s);
    const int64_t per_epoch = trainer_.source().batches_per_epoch();
    if (o_.max_epochs > 0 && per_epoch > 0) {
      const double batches = static_cast<double>(o_.max_epochs * per_epoch -
                                                 (state_.position.epoch * per_epoch + state_.position.index));
      consider(batches / static_cast<double>(trainer_.batches_per_step()) * step_wall_s);
    }
    if (o_.time_limit_s > 0) consider(o_.time_limit_s - session_seconds());
    return eta < 0 ? eta : std::max(0.0, eta);
  }

  void account(const StepStats& stats) {
    loss_since_report_ += stats.loss_sum;
    nll_since_report_ += stats.nll_sum;
    tokens_since_report_ += stats.tokens;
    const double now = session_seconds();
    recent_.push_back({now, stats.tokens});
    while (recent_.size() > 2 && now - recent_.front().first > 10.0) recent_.pop_front();
    double tok_s = 0, step_s = 0;
    if (recent_.size() >= 2) {
      int64_t tokens = 0;
      for (size_t i = 1; i < recent_.size(); ++i) tokens += recent_[i].second;
      const double span = recent_.back().first - recent_.front().first;
      tok_s = span > 0 ? static_cast<double>(tokens) / span : 0;
      step_s = span / static_cast<double>(recent_.size() - 1);
    } else {
      step_s = now - last_step_end_;
      tok_s = step_s > 0 ? static_cast<double>(stats.tokens) / step_s : 0;
    }
    last_step_end_ = now;
    if (root_ && callbacks_.on_step) callbacks_.on_step(StepView{stats, state_, epoch(), tok_s, eta(step_s)});
  }

  void report() {
    const double now = session_seconds();
    const double n = static_cast<double>(std::max<int64_t>(tokens_since_report_, 1));
    const double span = now - last_report_;
    record({{"type", "train"}, {"step", state_.step}, {"epoch", round_to(epoch(), 4)},
            {"loss", round_to(loss_since_report_ / n, 5)}, {"ppl", round_to(std::exp(nll_since_report_ / n), 4)},
            {"lr", trainer_.lr(std::max<int64_t>(state_.step, 1))},
            {"tgt_tok_s", round_to(span > 0 ? static_cast<double>(tokens_since_report_) / span : 0, 1)},
            {"elapsed_s", round_to(state_.elapsed_s, 3)}});
    loss_since_report_ = nll_since_report_ = 0;
    tokens_since_report_ = 0;
    last_report_ = now;
  }

  // Validates, updates the best, saves a checkpoint (every validation has one, so tt-average --best can
  // rank them). Returns true when early stopping is due.
  bool validate() {
    ValidationResult r;
    {
      const AverageInScope average(trainer_.average(), trainer_.model().params());  // --ema-decay: the average
      r = validator_->run(trainer_.model());
    }
    validated_step_ = state_.step;
    const double metric = r.bleu ? *r.bleu : r.loss;
    const bool improved = better(state_.best_metric_name, metric, state_.best_metric);
    if (improved) {
      state_.best_metric = metric;
      state_.best_step = state_.step;
      state_.bad_validations = 0;
    } else {
      ++state_.bad_validations;
    }
    const std::string checkpoint = save(improved, false);
    nlohmann::json j{{"type", "valid"}, {"step", state_.step}, {"epoch", round_to(epoch(), 4)},
                     {"loss", round_to(r.loss, 5)}, {"ppl", round_to(r.ppl, 4)}};
    if (r.bleu) j["bleu"] = round_to(*r.bleu, 2);
    j["best"] = improved;
    j["checkpoint"] = checkpoint;
    j["elapsed_s"] = round_to(state_.elapsed_s, 3);
    record(j);
    return o_.early_stop > 0 && state_.bad_validations >= o_.early_stop;
  }

  std::string save(bool best, bool log_it = true) {
    state_.elapsed_s = elapsed_base_ + session_seconds();
    const std::string path = write_checkpoint(o_.run_dir, checkpoint_);
    set_link(o_.run_dir, "last", path);
    if (best) set_link(o_.run_dir, "best", path);
    prune_checkpoints(o_.run_dir, o_.keep_last);
    saved_step_ = state_.step;
    last_save_ = Clock::now();
    if (log_it) record({{"type", "save"}, {"step", state_.step}, {"checkpoint", path}});
    return path;
  }

  void record(const nlohmann::json& j) {
    if (!root_) return;
    log_.write(j);
    if (callbacks_.on_record) callbacks_.on_record(j);
  }

  Trainer& trainer_;
  TrainerState& state_;
  const Validator* validator_;
  CheckpointContents checkpoint_;
  const RunOptions& o_;
  RunLog& log_;
  const util::SignalGuard* signals_;
  const RunCallbacks& callbacks_;
  Clock::time_point start_, last_save_;
  double elapsed_base_;
  dist::Communicator& comm_;
  bool root_;
  int64_t validated_step_ = -1, saved_step_ = -1;
  double loss_since_report_ = 0, nll_since_report_ = 0, last_report_ = 0, last_step_end_ = 0;
  int64_t tokens_since_report_ = 0;
  std::deque<std::pair<double, int64_t>> recent_;
};

}  // namespace

RunResult run_training(Trainer& trainer, TrainerState& state, const Validator* validator,
                       CheckpointContents checkpoint, const RunOptions& options, RunLog& log,
                       const util::SignalGuard* signals, const RunCallbacks& callbacks) {
  return Run(trainer, state, validator, std::move(checkpoint), options, log, signals, callbacks).run();
}

}  // namespace tt::train
