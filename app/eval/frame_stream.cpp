#include "frame_stream.h"

#include <ostream>

namespace dfi::eval {

void FrameStream::write(const protocol::Frame& frame) { write(std::span(&frame, 1)); }

void FrameStream::write(std::span<const protocol::Frame> frames) {
  std::lock_guard lock(mutex_);
  for (const protocol::Frame& frame : frames) protocol::writeFrame(out_, frame);
}

void FrameStream::flush() {
  std::lock_guard lock(mutex_);
  out_.flush();
}

}  // namespace dfi::eval
