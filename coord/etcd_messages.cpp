#include "coord/etcd_messages.hpp"

#include <boost/json.hpp>

#include <charconv>

#include "coord/base64.hpp"

namespace sp::coord {

namespace json = boost::json;

namespace {

std::string b64(std::string_view s) { return base64Encode(s); }

std::string toText(const json::object& o) { return json::serialize(o); }

// int64 fields come as strings ("42"); numbers are accepted too.
std::expected<int64_t, std::string> intField(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  if (it == o.end()) return 0;
  if (it->value().is_int64()) return it->value().as_int64();
  if (it->value().is_uint64()) return static_cast<int64_t>(it->value().as_uint64());
  if (!it->value().is_string()) return std::unexpected("field '" + std::string(name) + "' is not an integer");
  const auto& s = it->value().as_string();
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) {
    // member ids are uint64 and may pass INT64_MAX
    uint64_t u = 0;
    auto [q, ec2] = std::from_chars(s.data(), s.data() + s.size(), u);
    if (ec2 != std::errc() || q != s.data() + s.size()) return std::unexpected("field '" + std::string(name) + "' is not an integer");
    return static_cast<int64_t>(u);
  }
  return v;
}

std::expected<std::string, std::string> bytesField(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  if (it == o.end()) return std::string();
  if (!it->value().is_string()) return std::unexpected("field '" + std::string(name) + "' is not a string");
  auto decoded = base64Decode(std::string_view(it->value().as_string()));
  if (!decoded) return std::unexpected("field '" + std::string(name) + "' is not base64");
  return *decoded;
}

bool boolField(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  return it != o.end() && it->value().is_bool() && it->value().as_bool();
}

const json::object* objectField(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  if (it == o.end() || !it->value().is_object()) return nullptr;
  return &it->value().as_object();
}

const json::array* arrayField(const json::object& o, std::string_view name) {
  auto it = o.find(name);
  if (it == o.end() || !it->value().is_array()) return nullptr;
  return &it->value().as_array();
}

// The gateway's error object: {"error": "...", "code": n, "message": "..."}
// (in a stream: {"error": {"grpc_code": n, "message": "..."}}).
std::string errorText(const json::object& o) {
  std::string message;
  if (auto m = o.find("message"); m != o.end() && m->value().is_string()) message = m->value().as_string();
  if (auto e = o.find("error"); e != o.end()) {
    if (e->value().is_string() && message.empty()) message = e->value().as_string();
    if (e->value().is_object()) {
      if (auto m = e->value().as_object().find("message"); m != e->value().as_object().end() && m->value().is_string()) {
        message = m->value().as_string();
      }
    }
  }
  return "etcd error: " + (message.empty() ? std::string("(no message)") : message);
}

std::expected<json::object, std::string> parseObject(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return std::unexpected("malformed JSON from etcd: " + ec.message());
  if (!v.is_object()) return std::unexpected("malformed JSON from etcd: not an object");
  json::object o = std::move(v.as_object());
  if (o.contains("error")) return std::unexpected(errorText(o));
  return o;
}

// A message of a streamed answer: {"result": {...}}.
std::expected<json::object, std::string> streamedResult(std::string_view text, std::string_view what) {
  auto o = parseObject(text);
  if (!o) return std::unexpected(o.error());
  const json::object* result = objectField(*o, "result");
  if (!result) return std::unexpected("etcd " + std::string(what) + " without 'result'");
  return *result;
}

std::expected<EtcdHeader, std::string> readHeader(const json::object& o) {
  EtcdHeader h;
  const json::object* header = objectField(o, "header");
  if (!header) return h;
  auto rev = intField(*header, "revision");
  auto member = intField(*header, "member_id");
  auto term = intField(*header, "raft_term");
  if (!rev) return std::unexpected(rev.error());
  if (!member) return std::unexpected(member.error());
  if (!term) return std::unexpected(term.error());
  h.revision = *rev;
  h.member_id = static_cast<uint64_t>(*member);
  h.raft_term = static_cast<uint64_t>(*term);
  return h;
}

std::expected<EtcdKv, std::string> readKv(const json::object& o) {
  EtcdKv kv;
  auto key = bytesField(o, "key");
  if (!key) return std::unexpected(key.error());
  auto value = bytesField(o, "value");
  if (!value) return std::unexpected(value.error());
  kv.key = std::move(*key);
  kv.value = std::move(*value);
  for (auto [name, field] : {std::pair{"create_revision", &EtcdKv::create_revision},
                             std::pair{"mod_revision", &EtcdKv::mod_revision}, std::pair{"version", &EtcdKv::version},
                             std::pair{"lease", &EtcdKv::lease}}) {
    auto v = intField(o, name);
    if (!v) return std::unexpected(v.error());
    kv.*field = *v;
  }
  return kv;
}

std::expected<std::vector<EtcdKv>, std::string> readKvs(const json::object& o) {
  std::vector<EtcdKv> out;
  const json::array* kvs = arrayField(o, "kvs");
  if (!kvs) return out;
  for (const auto& item : *kvs) {
    if (!item.is_object()) return std::unexpected("malformed kvs entry");
    auto kv = readKv(item.as_object());
    if (!kv) return std::unexpected(kv.error());
    out.push_back(std::move(*kv));
  }
  return out;
}

json::object keyRange(std::string_view key, bool prefix) {
  json::object o;
  o["key"] = b64(key);
  if (prefix) o["range_end"] = b64(etcdPrefixEnd(key));
  return o;
}

// One compare of a txn: `key`'s `target` (CREATE, MOD, LEASE) equals `value`
// (`field`: the gateway's name for it, create_revision, mod_revision, lease).
json::object compareEqual(std::string_view key, std::string_view target, std::string_view field, int64_t value) {
  json::object c;
  c["key"] = b64(key);
  c["result"] = "EQUAL";
  c["target"] = target;
  c[field] = std::to_string(value);
  return c;
}

// A txn: when every compare holds, put `value` at `key` (under `lease`, 0:
// none); otherwise read `key`, so the caller sees what is there.
json::object putOrRead(json::array compares, std::string_view key, std::string_view value, int64_t lease) {
  json::object put;
  put["key"] = b64(key);
  put["value"] = b64(value);
  if (lease != 0) put["lease"] = std::to_string(lease);
  json::object success_op;
  success_op["request_put"] = std::move(put);
  json::object failure_op;
  failure_op["request_range"] = keyRange(key, false);
  json::object o;
  o["compare"] = std::move(compares);
  o["success"] = json::array{std::move(success_op)};
  o["failure"] = json::array{std::move(failure_op)};
  return o;
}

std::expected<EtcdLeaseResponse, std::string> readLease(const json::object& o) {
  EtcdLeaseResponse r;
  auto header = readHeader(o);
  if (!header) return std::unexpected(header.error());
  r.header = *header;
  auto id = intField(o, "ID");
  auto ttl = intField(o, "TTL");
  if (!id) return std::unexpected(id.error());
  if (!ttl) return std::unexpected(ttl.error());
  r.id = *id;
  r.ttl = *ttl;
  return r;
}

}  // namespace

std::string etcdPrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto last = static_cast<unsigned char>(end.back());
    if (last < 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

std::string etcdRangeRequest(std::string_view key, bool prefix, bool keys_only) {
  json::object o = keyRange(key, prefix);
  if (keys_only) o["keys_only"] = true;
  return toText(o);
}

std::string etcdPutRequest(std::string_view key, std::string_view value, int64_t lease) {
  json::object o;
  o["key"] = b64(key);
  o["value"] = b64(value);
  if (lease != 0) o["lease"] = std::to_string(lease);
  return toText(o);
}

std::string etcdDeleteRequest(std::string_view key, bool prefix) { return toText(keyRange(key, prefix)); }

std::string etcdCasPutRequest(std::string_view key, int64_t expected_mod_revision, std::string_view value,
                              const EtcdGuard* guard, int64_t lease) {
  json::object compare;
  compare["key"] = b64(key);
  compare["result"] = "EQUAL";
  if (expected_mod_revision == 0) {
    compare["target"] = "CREATE";
    compare["create_revision"] = "0";
  } else {
    compare["target"] = "MOD";
    compare["mod_revision"] = std::to_string(expected_mod_revision);
  }
  json::array compares{std::move(compare)};
  if (guard) compares.push_back(compareEqual(guard->key, "CREATE", "create_revision", guard->create_revision));
  return toText(putOrRead(std::move(compares), key, value, lease));
}

std::string etcdFencedCreateRequest(std::string_view key, std::string_view value, const EtcdLeaseFence* fence) {
  json::array compares;
  if (fence) compares.push_back(compareEqual(fence->key, "LEASE", "lease", fence->lease));
  compares.push_back(compareEqual(key, "CREATE", "create_revision", 0));
  return toText(putOrRead(std::move(compares), key, value, 0));
}

std::string etcdGuardedDeleteRequest(std::string_view key, int64_t create_revision) {
  json::object compare;
  compare["key"] = b64(key);
  compare["result"] = "EQUAL";
  compare["target"] = "CREATE";
  compare["create_revision"] = std::to_string(create_revision);
  json::object remove;
  remove["request_delete_range"] = keyRange(key, false);
  json::object o;
  o["compare"] = json::array{std::move(compare)};
  o["success"] = json::array{std::move(remove)};
  return toText(o);
}

std::string etcdLeaseGrantRequest(int64_t ttl_seconds) {
  json::object o;
  o["TTL"] = std::to_string(ttl_seconds);
  return toText(o);
}

std::string etcdLeaseKeepAliveRequest(int64_t id) {
  json::object o;
  o["ID"] = std::to_string(id);
  return toText(o);
}

std::string etcdLeaseRevokeRequest(int64_t id) { return etcdLeaseKeepAliveRequest(id); }

std::string etcdWatchCreateRequest(std::string_view key, bool prefix, int64_t start_revision) {
  json::object create = keyRange(key, prefix);
  if (start_revision > 0) create["start_revision"] = std::to_string(start_revision);
  json::object o;
  o["create_request"] = std::move(create);
  return toText(o);
}

std::string etcdWatchRangeRequest(std::string_view key, std::string_view range_end, int64_t start_revision) {
  json::object create;
  create["key"] = b64(key);
  create["range_end"] = b64(range_end);
  if (start_revision > 0) create["start_revision"] = std::to_string(start_revision);
  json::object o;
  o["create_request"] = std::move(create);
  return toText(o);
}

std::expected<EtcdRangeResponse, std::string> parseEtcdRange(std::string_view text) {
  auto o = parseObject(text);
  if (!o) return std::unexpected(o.error());
  EtcdRangeResponse r;
  auto header = readHeader(*o);
  if (!header) return std::unexpected(header.error());
  r.header = *header;
  auto kvs = readKvs(*o);
  if (!kvs) return std::unexpected(kvs.error());
  r.kvs = std::move(*kvs);
  return r;
}

std::expected<EtcdHeader, std::string> parseEtcdPut(std::string_view text) {
  auto o = parseObject(text);
  if (!o) return std::unexpected(o.error());
  return readHeader(*o);
}

std::expected<EtcdTxnResponse, std::string> parseEtcdTxn(std::string_view text) {
  auto o = parseObject(text);
  if (!o) return std::unexpected(o.error());
  EtcdTxnResponse r;
  auto header = readHeader(*o);
  if (!header) return std::unexpected(header.error());
  r.header = *header;
  r.succeeded = boolField(*o, "succeeded");
  if (const json::array* responses = arrayField(*o, "responses")) {
    for (const auto& item : *responses) {
      if (!item.is_object()) return std::unexpected("malformed txn response");
      if (const json::object* range = objectField(item.as_object(), "response_range")) {
        auto kvs = readKvs(*range);
        if (!kvs) return std::unexpected(kvs.error());
        for (auto& kv : *kvs) r.range_kvs.push_back(std::move(kv));
      }
    }
  }
  return r;
}

std::expected<EtcdLeaseResponse, std::string> parseEtcdLeaseGrant(std::string_view text) {
  auto o = parseObject(text);
  if (!o) return std::unexpected(o.error());
  return readLease(*o);
}

std::expected<EtcdLeaseResponse, std::string> parseEtcdLeaseKeepAlive(std::string_view text) {
  auto result = streamedResult(text, "keepalive answer");
  if (!result) return std::unexpected(result.error());
  return readLease(*result);
}

std::expected<EtcdWatchMessage, std::string> parseEtcdWatchLine(std::string_view text) {
  auto streamed = streamedResult(text, "watch message");
  if (!streamed) return std::unexpected(streamed.error());
  const json::object* result = &*streamed;
  EtcdWatchMessage m;
  auto header = readHeader(*result);
  if (!header) return std::unexpected(header.error());
  m.header = *header;
  auto id = intField(*result, "watch_id");
  auto compact = intField(*result, "compact_revision");
  if (!id) return std::unexpected(id.error());
  if (!compact) return std::unexpected(compact.error());
  m.watch_id = *id;
  m.compact_revision = *compact;
  m.created = boolField(*result, "created");
  m.canceled = boolField(*result, "canceled");
  if (auto r = result->find("cancel_reason"); r != result->end() && r->value().is_string()) {
    m.cancel_reason = r->value().as_string();
  }
  if (const json::array* events = arrayField(*result, "events")) {
    for (const auto& item : *events) {
      if (!item.is_object()) return std::unexpected("malformed watch event");
      const auto& event = item.as_object();
      EtcdWatchEvent e;
      if (auto t = event.find("type"); t != event.end() && t->value().is_string()) e.is_delete = t->value().as_string() == "DELETE";
      if (const json::object* kv = objectField(event, "kv")) {
        auto parsed = readKv(*kv);
        if (!parsed) return std::unexpected(parsed.error());
        e.kv = std::move(*parsed);
      }
      m.events.push_back(std::move(e));
    }
  }
  return m;
}

}  // namespace sp::coord
