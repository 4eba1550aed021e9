#pragma once
// The one writer of `serve`'s output: every frame goes through it, whole, under its lock, so a
// frame from the worker (records, progress, done) and one from the reading thread (an error for
// a request that does not decode) never interleave, and nothing else touches the stream (the
// reading thread must not flush it either: serve unties std::cin from std::cout).

#include <initializer_list>
#include <iosfwd>
#include <mutex>
#include <span>

#include "dfi/protocol/frame.h"

namespace dfi::eval {

class FrameStream {
 public:
  explicit FrameStream(std::ostream& out) : out_(out) {}
  FrameStream(const FrameStream&) = delete;
  FrameStream& operator=(const FrameStream&) = delete;

  void write(const protocol::Frame& frame);
  // Frames that belong together (an inspect answer and its done), with no other frame between.
  void write(std::span<const protocol::Frame> frames);
  void flush();

 private:
  std::ostream& out_;
  std::mutex mutex_;
};

}  // namespace dfi::eval
