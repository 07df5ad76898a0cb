// shardproxy entry point: parse flags, load and validate the configuration,
// run the server until SIGTERM/SIGINT.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "conf/config.hpp"
#include "protocol/auth.hpp"
#include "proxy/server.hpp"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: shardproxy --config FILE [--check] [--log-level LEVEL]\n"
               "       shardproxy --hash-password   (reads a password on stdin, prints its password_hash)\n"
               "  --config FILE      YAML configuration (see docs/configuration.md)\n"
               "  --check            validate the configuration and exit (0 = valid)\n"
               "  --log-level LEVEL  trace|debug|info|warn|error|critical|off (overrides server.log_level)\n");
}

// --hash-password: one line from stdin (the newline is not part of the
// password) to the mysql_native_password hash for users[].password_hash.
int hashPassword() {
  std::string password;
  int c;
  while ((c = std::getchar()) != EOF && c != '\n') password += static_cast<char>(c);
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) {
    std::fprintf(stderr, "shardproxy: empty password on stdin (an empty password needs allow_empty_password: true)\n");
    return 1;
  }
  std::printf("%s\n", sp::protocol::nativePasswordHash(password).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::string log_level;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--config" || arg == "-c") && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg == "--log-level" && i + 1 < argc) {
      log_level = argv[++i];
    } else if (arg == "--hash-password") {
      return hashPassword();
    } else if (arg == "--check") {
      check_only = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "shardproxy: unknown argument '%s'\n", arg.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (config_path.empty()) {
    usage(stderr);
    return 2;
  }
  auto config = sp::conf::loadConfig(config_path);
  if (!config) {
    std::fprintf(stderr, "shardproxy: invalid configuration:\n%s",
                 sp::conf::formatIssues(config.error(), config_path).c_str());
    return 1;
  }
  if (check_only) {
    std::printf("%s: configuration is valid\n", config_path.c_str());
    return 0;
  }
  auto logger = spdlog::stderr_color_mt("shardproxy");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%t] %v");
  auto level = spdlog::level::from_str(log_level.empty() ? config->server.log_level : log_level);
  spdlog::set_level(level);

  sp::proxy::Server server(std::move(*config));
  if (auto err = server.start(); !err.empty()) {
    spdlog::critical("{}", err);
    return 1;
  }
  server.runUntilSignalled();
  return 0;
}
