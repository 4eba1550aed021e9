// dflash-eval render: the inspector's pictures of one block with no display. The engine never
// links Qt, so this runs the dflash-inspector executable (next to this one, in the build tree's
// app/inspector, or on PATH) in its offscreen --render mode.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dfi/base/error.h"

namespace dfi::eval {
namespace {

namespace fs = std::filesystem;

fs::path findInspector() {
  if (const char* env = std::getenv("DFI_INSPECTOR")) return env;
  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  for (const fs::path& candidate : {self / "dflash-inspector", self / "../inspector/dflash-inspector"})
    if (fs::exists(candidate)) return candidate;
  return "dflash-inspector";  // execvp searches PATH
}

int runInspector(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw IoError("cannot run the inspector (set DFI_INSPECTOR to its path)", {.file = args[0]});
  return WIFEXITED(status) ? WEXITSTATUS(status) : 70;
}

}  // namespace

void registerRenderCommand(CLI::App& app) {
  auto* sub = app.add_subcommand("render", "Render inspector views of one block to PNG/SVG/PDF without a display");
  struct Options {
    std::string session, views = "window", output;
    long long step = -1;
    std::string size;
    double dpi = 96;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--session", o->session, "Session file (.dfi)")->required()->check(CLI::ExistingFile);
  sub->add_option("--view", o->views,
                  "window, navigator, tokens, mask, mask-diff, mask-training-diff, tree, compare, attention, statistics, "
                  "positions, diagnosis (comma list)")
      ->capture_default_str();
  sub->add_option("--block,--step", o->step, "Step id (default: the first step of the first run)");
  sub->add_option("--size", o->size, "Picture size WIDTHxHEIGHT in pixels (default: each view's own)");
  sub->add_option("--dpi", o->dpi, "Picture resolution; the view is laid out at size x 96 / dpi")
      ->check(CLI::Range(10.0, 2400.0))
      ->capture_default_str();
  sub->add_option("-o,--out", o->output, "An image file (.png/.svg/.pdf) for one view, or a directory")->required();
  setAction(*sub, [o] {
    const fs::path out(o->output);
    const std::string suffix = out.extension().string();
    const bool singleFile = suffix == ".png" || suffix == ".svg" || suffix == ".pdf";
    if (singleFile && o->views.find(',') != std::string::npos)
      throw UsageError("-o names one file but several views were asked for; give a directory");
    const fs::path dir = singleFile ? (out.has_parent_path() ? out.parent_path() : fs::path(".")) : out;
    std::vector<std::string> args{findInspector().string(), "--render", o->views, "--out", dir.string(),
                                  "--format", singleFile ? suffix.substr(1) : "png"};
    if (o->step >= 0) args.insert(args.end(), {"--step", std::to_string(o->step)});
    if (!o->size.empty()) args.insert(args.end(), {"--size", o->size});
    args.insert(args.end(), {"--dpi", std::to_string(o->dpi)});
    args.push_back(o->session);
    const int code = runInspector(args);
    if (code == 0 && singleFile) fs::rename(dir / (o->views + suffix), out);
    return code;
  });
}

}  // namespace dfi::eval
