// Drives proxy/binlog_stream and proxy/move_catchup against real servers for
// tests/integration/binlog_test.py, tests/integration/binlog_capture.py and the
// catch-up rate measurement (docs/benchmarks.md). Options are --name value.
//
//   binlog_probe dump --port P --user U --password W --from FILE:POS --until FILE:POS [--raw] [--quiet]
//       [--tls-ca PEM]  (TLS to the servers, verified against this CA)
//     Prints each rows event ("ROWS kind schema table", "COLS names...",
//     "IMG literal..." per image), with --raw "RAW type hex" for every event,
//     and last "END events rows seconds".
//   binlog_probe catchup --port P --user U --password W --from FILE:POS
//       (--until FILE:POS | --stop-file PATH) --schema S --table T --key K
//       --mod M --in a,b [--crc-prefix 'channel:'] [--pk-user U --pk-password W]
//       --target-port P --target-user U --target-password W --target-table `db`.`t`
//       [--batch-transactions N]  (source transactions per target transaction, default 500)
//     With --stop-file, follows the binlog until the file appears, then
//     applies up to the position written in it. Prints "END events rows
//     transactions seconds applied-position batches" (batches: target
//     transactions, i.e. round trips of the applier).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "proxy/backend/binlog_stream.hpp"
#include "proxy/move/move_catchup.hpp"
#include "routing/map/crc32.hpp"

namespace {

using namespace sp;
using Clock = std::chrono::steady_clock;

std::map<std::string, std::string> args;

std::string arg(const std::string& name, const std::string& fallback = {}) {
  auto it = args.find(name);
  return it == args.end() ? fallback : it->second;
}

protocol::BinlogPosition parsePosition(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) return {};
  return {text.substr(0, colon), std::stoull(text.substr(colon + 1))};
}

conf::BackendConfig backend(const std::string& port, const std::string& user, const std::string& password) {
  conf::BackendConfig b;
  b.name = "db:" + port;
  b.address.host = "127.0.0.1";
  b.address.port = static_cast<uint16_t>(std::stoi(port));
  b.user = user;
  b.password = password;
  b.connect_timeout_ms = 5000;
  if (args.count("tls-ca")) {
    conf::BackendTls tls;
    tls.ca = args["tls-ca"];
    b.tls = tls;
  }
  return b;
}

std::string hex(const protocol::Bytes& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

const char* kindName(protocol::BinlogRowsEvent::Kind k) {
  switch (k) {
    case protocol::BinlogRowsEvent::Kind::kInsert: return "insert";
    case protocol::BinlogRowsEvent::Kind::kUpdate: return "update";
    case protocol::BinlogRowsEvent::Kind::kDelete: return "delete";
  }
  return "?";
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

proxy::awaitable<int> dump() {
  auto source = backend(arg("port"), arg("user"), arg("password"));
  const auto from = parsePosition(arg("from"));
  const auto until = parsePosition(arg("until"));
  proxy::BinlogStreamOptions options;
  options.keep_raw = args.count("raw") > 0;
  const bool quiet = args.count("quiet") > 0;
  auto stream = co_await proxy::BinlogStream::open(source, from, 4242, options);
  if (!stream) {
    std::cerr << stream.error() << "\n";
    co_return 1;
  }
  const auto start = Clock::now();
  uint64_t events = 0, rows = 0;
  while (protocol::binlogBefore((*stream)->position(), until)) {
    auto event = co_await (*stream)->next();
    if (!event) {
      std::cerr << event.error() << "\n";
      co_return 1;
    }
    ++events;
    if (options.keep_raw) std::cout << "RAW\t" << int(event->header.type) << '\t' << hex((*stream)->lastRawEvent()) << '\n';
    const auto* r = std::get_if<protocol::BinlogRowsEvent>(&event->body);
    if (!r) continue;
    rows += r->rows.size();
    if (quiet) continue;
    std::cout << "ROWS\t" << kindName(r->kind) << '\t' << r->schema << '\t' << r->table << '\n' << "COLS";
    for (const auto& name : r->column_names) std::cout << '\t' << name;
    std::cout << '\n';
    for (const auto& image : r->rows) {
      std::cout << "IMG";
      for (const auto& v : image) std::cout << '\t' << protocol::binlogValueLiteral(v);
      std::cout << '\n';
    }
  }
  std::cout << "END\t" << events << '\t' << rows << '\t' << secondsSince(start) << std::endl;
  co_return 0;
}

std::function<bool(const protocol::BinlogValue&)> predicate() {
  const uint64_t mod = std::stoull(arg("mod", "1"));
  std::set<uint64_t> wanted;
  std::stringstream list(arg("in", "0"));
  for (std::string item; std::getline(list, item, ',');) wanted.insert(std::stoull(item));
  const bool crc = args.count("crc-prefix") > 0;
  const uint32_t prefix_crc = routing::crc32(arg("crc-prefix"));
  return [=](const protocol::BinlogValue& v) {
    uint64_t key;
    if (v.kind == protocol::BinlogValue::Kind::kInt && v.i >= 0) key = static_cast<uint64_t>(v.i);
    else if (v.kind == protocol::BinlogValue::Kind::kUInt) key = v.u;
    else return false;
    const uint64_t h = crc ? routing::crc32OfPrefixedKey(prefix_crc, key) : key;
    return wanted.count(h % mod) > 0;
  };
}

proxy::awaitable<void> watchStopFile(proxy::MoveCatchup& catchup, const std::string& path, bool& seen) {
  auto ex = co_await proxy::asio::this_coro::executor;
  proxy::asio::steady_timer timer(ex);
  while (!std::filesystem::exists(path)) {
    timer.expires_after(std::chrono::milliseconds(50));
    co_await timer.async_wait(proxy::kNoThrow);
  }
  seen = true;
  catchup.requestStop();
}

proxy::awaitable<int> catchup() {
  auto source = backend(arg("port"), arg("user"), arg("password"));
  auto target_backend = backend(arg("target-port"), arg("target-user"), arg("target-password"));
  target_backend.database = "";
  auto target_conn = co_await proxy::BackendConnection::open(
      target_backend, proxy::kNoDatabase | protocol::cap::kMultiStatements, 1u << 30);
  if (!target_conn) {
    std::cerr << "target: " << target_conn.error().message << "\n";
    co_return 1;
  }
  proxy::CatchupConfig config;
  config.filter = {arg("schema"), arg("table"), arg("key"), predicate()};
  config.target_table = arg("target-table");
  config.batch_transactions = static_cast<uint32_t>(std::stoul(arg("batch-transactions", "500")));
  if (args.count("pk-user")) {
    auto pk_backend = backend(arg("port"), arg("pk-user"), arg("pk-password"));
    auto pk_conn = co_await proxy::BackendConnection::open(pk_backend, proxy::kNoDatabase, 1u << 24);
    if (!pk_conn) {
      std::cerr << "source (primary key): " << pk_conn.error().message << "\n";
      co_return 1;
    }
    auto pk = co_await proxy::primaryKeyColumns(**pk_conn, config.filter.schema, config.filter.table);
    if (!pk || pk->empty()) {
      std::cerr << "primary key: " << (pk ? std::string("none") : pk.error()) << "\n";
      co_return 1;
    }
    config.primary_key = *pk;
  }
  const auto from = parsePosition(arg("from"));
  proxy::BinlogStreamOptions options;
  options.heartbeat_period = std::chrono::milliseconds(200);
  auto stream = co_await proxy::BinlogStream::open(source, from, 4243, options);
  if (!stream) {
    std::cerr << stream.error() << "\n";
    co_return 1;
  }
  proxy::ConnectionCatchupTarget target(**target_conn, 4u << 20);
  proxy::MoveCatchup applier(**stream, target, std::move(config));
  const auto start = Clock::now();
  protocol::BinlogPosition until = parsePosition(arg("until"));
  if (args.count("stop-file")) {
    const std::string path = arg("stop-file");
    bool seen = false;
    auto ex = co_await proxy::asio::this_coro::executor;
    proxy::asio::co_spawn(ex, watchStopFile(applier, path, seen), proxy::asio::detached);
    auto following = co_await applier.runFollowing();
    if (!following) {
      std::cerr << following.error() << "\n";
      co_return 1;
    }
    std::ifstream in(path);
    std::string text;
    std::getline(in, text);
    until = parsePosition(text);
    std::cerr << "following stopped at " << protocol::toString(applier.progress().applied) << ", applying until "
              << text << "\n";
  }
  auto done = co_await applier.runUntil(until);
  if (!done) {
    std::cerr << done.error() << "\n";
    co_return 1;
  }
  const auto& p = applier.progress();
  std::cout << "END\t" << p.events << '\t' << p.rows_applied << '\t' << p.transactions_applied << '\t'
            << secondsSince(start) << '\t' << protocol::toString(p.applied) << '\t'
            << p.batches_applied << std::endl;
  co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string name = argv[i];
    if (!name.starts_with("--")) return 2;
    name.erase(0, 2);
    if (i + 1 < argc && !std::string(argv[i + 1]).starts_with("--")) {
      args[name] = argv[++i];
    } else {
      args[name] = "1";
    }
  }
  sp::proxy::asio::io_context io;
  int rc = 2;
  auto run = [&]() -> sp::proxy::awaitable<void> {
    if (mode == "dump") rc = co_await dump();
    if (mode == "catchup") rc = co_await catchup();
    io.stop();
  };
  sp::proxy::asio::co_spawn(io, run(), sp::proxy::asio::detached);
  io.run();
  return rc;
}
