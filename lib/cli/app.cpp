#include "cli/app.h"

#include <iostream>

#include "cli/completions.h"
#include "util/error.h"
#include "util/version.h"

namespace tt::cli {

std::string version_string(const std::string& tool) { return tool + " " + tt::version(); }

void configure_app(CLI::App& app, const std::string& tool) {
  app.name(tool);
  app.set_version_flag("--version", version_string(tool), "Print the version and exit");
  app.footer("See 'man " + tool + "' for details and examples. Exit status: 0 ok, 1 error, 2 usage error.\n");
  app.get_formatter()->column_width(34);
}

void parse(CLI::App& app, int argc, char** argv) {
  // `TOOL --completions SHELL`: the tool's shell completions, from the definitions parsed below.
  if (argc == 3 && std::string(argv[1]) == "--completions") {
    try {
      std::cout << completion_script(app, argv[2]);
    } catch (const ConfigError& e) {
      usage_error(app, e.what());
    }
    throw ExitRequest{0};
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e);  // prints help to stdout
    throw ExitRequest{0};
  } catch (const CLI::CallForAllHelp& e) {
    app.exit(e);
    throw ExitRequest{0};
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    throw ExitRequest{0};
  } catch (const CLI::ParseError& e) {
    // CLI11 checks required options before it complains about unknown ones, so `tool sub --bgus`
    // would say "--model is required": name the argument the user actually got wrong.
    std::string message = e.what();
    const std::vector<std::string> unknown = app.remaining(true);
    if (dynamic_cast<const CLI::RequiredError*>(&e) && !unknown.empty()) {
      message = "unknown argument '" + unknown.front() + "'";
    }
    std::cerr << app.get_name() << ": error: " << message << "\n"
              << "Run '" << app.get_name() << " --help' for usage.\n";
    throw ExitRequest{2};
  }
}

void usage_error(const CLI::App& app, const std::string& message) {
  std::cerr << app.get_name() << ": error: " << message << "\n"
            << "Run '" << app.get_name() << " --help' for usage.\n";
  throw ExitRequest{2};
}

}  // namespace tt::cli
