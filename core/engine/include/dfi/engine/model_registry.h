#pragma once
// Loaded models kept between requests of a long-lived engine (`dflash-eval serve`): the
// target and each drafter are read once, and a request for the same directory, devices and
// dtype reuses them. One target at a time: asking for another one drops the old target and
// its drafters first, so two large targets never sit in memory together.

#include <memory>

namespace dfi::engine {

class ModelRegistry {
 public:
  ModelRegistry();
  ~ModelRegistry();
  ModelRegistry(const ModelRegistry&) = delete;
  ModelRegistry& operator=(const ModelRegistry&) = delete;

  struct Impl;  // engine-internal (model_registry_impl.h): needs libtorch
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfi::engine
