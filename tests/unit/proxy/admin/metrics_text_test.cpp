// The Prometheus exposition text: exact output for fixed values, so a change
// of a series name, label or number format shows up here first.
#include <gtest/gtest.h>

#include "proxy/admin/metrics_text.hpp"

namespace sp::proxy {
namespace {

const std::array<double, 3> kBounds = {0.001, 0.01, 0.1};

TEST(ExpositionWriter, CounterGaugeAndEscaping) {
  ExpositionWriter w;
  w.family("x_total", "counter", "Help with a \\ backslash\nand a newline.");
  w.sample("x_total", {{"a", "q\"uote"}, {"b", "back\\slash\nnl"}}, uint64_t{7});
  w.sample("x_total", {}, uint64_t{0});
  w.family("g", "gauge", "A gauge.");
  w.sample("g", {}, 0.25);
  w.sample("g", {{"k", "v"}}, 2.5e-05);
  EXPECT_EQ(w.take(),
            "# HELP x_total Help with a \\\\ backslash\\nand a newline.\n"
            "# TYPE x_total counter\n"
            "x_total{a=\"q\\\"uote\",b=\"back\\\\slash\\nnl\"} 7\n"
            "x_total 0\n"
            "# HELP g A gauge.\n"
            "# TYPE g gauge\n"
            "g 0.25\n"
            "g{k=\"v\"} 2.5e-05\n");
}

TEST(ExpositionWriter, HistogramIsCumulativeWithInf) {
  Histogram h(kBounds);
  for (double v : {0.0005, 0.001, 0.002, 0.05, 3.0}) h.observe(v);
  ExpositionWriter w;
  w.histogram("lat_seconds", {{"plan", "route"}}, h);
  EXPECT_EQ(w.take(),
            "lat_seconds_bucket{plan=\"route\",le=\"0.001\"} 2\n"
            "lat_seconds_bucket{plan=\"route\",le=\"0.01\"} 3\n"
            "lat_seconds_bucket{plan=\"route\",le=\"0.1\"} 4\n"
            "lat_seconds_bucket{plan=\"route\",le=\"+Inf\"} 5\n"
            "lat_seconds_sum{plan=\"route\"} 3.0535\n"
            "lat_seconds_count{plan=\"route\"} 5\n");
  ExpositionWriter bare;
  bare.histogram("f", {}, Histogram(kBounds));
  EXPECT_EQ(bare.take(),
            "f_bucket{le=\"0.001\"} 0\nf_bucket{le=\"0.01\"} 0\nf_bucket{le=\"0.1\"} 0\nf_bucket{le=\"+Inf\"} 0\n"
            "f_sum 0\nf_count 0\n");
}

TEST(SampleValue, ShortestRoundTrip) {
  EXPECT_EQ(formatSampleValue(1), "1");
  EXPECT_EQ(formatSampleValue(0.1), "0.1");
  EXPECT_EQ(formatSampleValue(1e-05), "1e-05");
  EXPECT_EQ(formatSampleValue(1764590000), "1764590000");
  EXPECT_EQ(formatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
}

// Pulls the lines of one family (its HELP, TYPE and samples) out of the text.
std::string familyText(const std::string& text, const std::string& name) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos + 1);
    pos = nl + 1;
    bool mine = line.starts_with("# HELP " + name + " ") || line.starts_with("# TYPE " + name + " ") ||
                line.starts_with(name + " ") || line.starts_with(name + "{");
    if (mine) out += line;
  }
  return out;
}

TEST(RenderMetrics, FixedSnapshot) {
  MetricsSnapshot s;
  s.version = "1.2.3";
  s.start_time_seconds = 1764590000;
  StatementRecord r;
  r.begin({});
  routing::Plan plan;
  plan.kind = routing::PlanKind::kRoute;
  plan.targets.push_back({"db0", "07", "msg_07", "SELECT 1"});
  r.onPlan(plan, "db0");
  r.table = "msg";
  r.rows = 2;
  s.statements.record(r, 0.0004);
  r.begin({});
  plan = {};
  plan.kind = routing::PlanKind::kRefused;
  r.onPlan(plan, "db0");
  r.table = "msg";
  r.onError(9109);
  s.statements.record(r, 0.00002);
  r.begin({});
  plan = {};
  plan.kind = routing::PlanKind::kScatter;
  plan.scatter.emplace();
  plan.scatter->targets = {{"db0", "00", "msg_00", ""}, {"db1", "01", "msg_01", ""}, {"db0", "02", "msg_02", ""}};
  r.onPlan(plan, "db0");
  r.table = "msg";
  r.rows = 5;
  r.shards = {{"00", "db0", 10, 3}, {"01", "db1", 10, 4}, {"02", "db0", 10, 1}};
  r.merge_bytes = 120;
  r.merge_peak_bytes = 2000;
  s.statements.record(r, 0.003);
  MetricsSnapshot::Backend b;
  b.name = "db0";
  b.pool.max = 64;
  b.pool.total = 3;
  b.pool.idle = 2;
  b.pool.in_use = 1;
  b.pool.connects = 3;
  s.backends.push_back(b);
  s.sessions = 4;
  s.authenticated = 3;
  s.in_transaction = 1;
  s.pinned = 1;
  s.users = {{"app", 2}, {"report\"er", 1}};
  s.refused_per_host = 2;
  s.shard_map_version = 5;
  s.reloads_applied = 1;
  s.reloads_refused = 2;
  s.last_reload_seconds = 1764590100;
  const std::string text = renderMetrics(s);

  EXPECT_EQ(familyText(text, "shardproxy_build_info"),
            "# HELP shardproxy_build_info Always 1; the labels say which build runs.\n"
            "# TYPE shardproxy_build_info gauge\n"
            "shardproxy_build_info{version=\"1.2.3\"} 1\n");
  EXPECT_EQ(familyText(text, "shardproxy_statements_total"),
            "# HELP shardproxy_statements_total Statements (COM_QUERY, COM_STMT_EXECUTE) by logical table, plan "
            "kind and outcome.\n"
            "# TYPE shardproxy_statements_total counter\n"
            "shardproxy_statements_total{table=\"msg\",plan=\"route\",outcome=\"ok\"} 1\n"
            "shardproxy_statements_total{table=\"msg\",plan=\"scatter\",outcome=\"ok\"} 1\n"
            "shardproxy_statements_total{table=\"msg\",plan=\"refused\",outcome=\"error\"} 1\n");
  EXPECT_EQ(familyText(text, "shardproxy_refusals_total"),
            "# HELP shardproxy_refusals_total Statements the planner refused, by error code (91xx).\n"
            "# TYPE shardproxy_refusals_total counter\n"
            "shardproxy_refusals_total{code=\"9109\"} 1\n");
  EXPECT_EQ(familyText(text, "shardproxy_backend_statements_total"),
            "# HELP shardproxy_backend_statements_total Statements that ran on the backend.\n"
            "# TYPE shardproxy_backend_statements_total counter\n"
            "shardproxy_backend_statements_total{backend=\"db0\"} 2\n");
  EXPECT_NE(text.find("shardproxy_backend_rows_total{backend=\"db0\"} 6\n"), std::string::npos);  // 2 + 3 + 1
  EXPECT_NE(text.find("shardproxy_statement_duration_seconds_bucket{plan=\"route\",le=\"0.0005\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("shardproxy_statement_duration_seconds_count{plan=\"admin\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("shardproxy_scatter_fanout_shards_bucket{le=\"2\"} 0\n"
                      "shardproxy_scatter_fanout_shards_bucket{le=\"4\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("shardproxy_scatter_merge_rows_total 5\n"), std::string::npos);
  EXPECT_NE(text.find("shardproxy_scatter_merge_bytes_total 120\n"), std::string::npos);
  EXPECT_NE(text.find("shardproxy_scatter_merge_buffer_bytes_bucket{le=\"1024\"} 0\n"
                      "shardproxy_scatter_merge_buffer_bytes_bucket{le=\"4096\"} 1\n"),
            std::string::npos);
  // Per shard: the routed statement on 07, the scatter on 00-02 (the refusal ran nowhere).
  EXPECT_EQ(familyText(text, "shardproxy_shard_statements_total"),
            "# HELP shardproxy_shard_statements_total Statements that ran on the shard (a scatter counts on each "
            "of its shards).\n"
            "# TYPE shardproxy_shard_statements_total counter\n"
            "shardproxy_shard_statements_total{table=\"msg\",shard=\"00\"} 1\n"
            "shardproxy_shard_statements_total{table=\"msg\",shard=\"01\"} 1\n"
            "shardproxy_shard_statements_total{table=\"msg\",shard=\"02\"} 1\n"
            "shardproxy_shard_statements_total{table=\"msg\",shard=\"07\"} 1\n");
  EXPECT_NE(text.find("shardproxy_shard_rows_total{table=\"msg\",shard=\"01\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("shardproxy_shard_rows_total{table=\"msg\",shard=\"07\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("shardproxy_shard_statement_errors_total{table=\"msg\",shard=\"07\"} 0\n"),
            std::string::npos);
  EXPECT_EQ(familyText(text, "shardproxy_backend_pool_in_use_connections"),
            "# HELP shardproxy_backend_pool_in_use_connections Connections lent to sessions.\n"
            "# TYPE shardproxy_backend_pool_in_use_connections gauge\n"
            "shardproxy_backend_pool_in_use_connections{backend=\"db0\"} 1\n");
  EXPECT_EQ(familyText(text, "shardproxy_client_connections"),
            "# HELP shardproxy_client_connections Client connections by state (open includes the others).\n"
            "# TYPE shardproxy_client_connections gauge\n"
            "shardproxy_client_connections{state=\"open\"} 4\n"
            "shardproxy_client_connections{state=\"authenticated\"} 3\n"
            "shardproxy_client_connections{state=\"in_transaction\"} 1\n"
            "shardproxy_client_connections{state=\"pinned\"} 1\n");
  EXPECT_EQ(familyText(text, "shardproxy_user_connections"),
            "# HELP shardproxy_user_connections Logged-in client sessions per user.\n"
            "# TYPE shardproxy_user_connections gauge\n"
            "shardproxy_user_connections{user=\"app\"} 2\n"
            "shardproxy_user_connections{user=\"report\\\"er\"} 1\n");
  EXPECT_NE(text.find("shardproxy_client_refused_total{reason=\"per_host\"} 2\n"), std::string::npos);
  EXPECT_EQ(familyText(text, "shardproxy_shard_map_reloads_total"),
            "# HELP shardproxy_shard_map_reloads_total RELOAD / ROLLBACK / SIGHUP outcomes.\n"
            "# TYPE shardproxy_shard_map_reloads_total counter\n"
            "shardproxy_shard_map_reloads_total{result=\"applied\"} 1\n"
            "shardproxy_shard_map_reloads_total{result=\"refused\"} 2\n");
  EXPECT_NE(text.find("shardproxy_shard_map_last_reload_timestamp_seconds 1764590100\n"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

TEST(RenderMetrics, FleetGaugesOnlyInAFleet) {
  MetricsSnapshot alone;
  EXPECT_EQ(renderMetrics(alone).find("shardproxy_fleet_"), std::string::npos);
  MetricsSnapshot member;
  member.fleet_session = 1;
  member.fleet_map_revision = 42;
  const std::string text = renderMetrics(member);
  EXPECT_NE(text.find("\nshardproxy_fleet_session 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nshardproxy_fleet_map_revision 42\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace sp::proxy

namespace sp::proxy {
namespace {

// Replication groups: which server is each backend's primary, the role
// changes, and a fenced server's role label; nothing without replicas.
TEST(RenderMetrics, RolesAfterAFailover) {
  MetricsSnapshot alone;
  EXPECT_EQ(renderMetrics(alone).find("shardproxy_backend_primary"), std::string::npos);
  MetricsSnapshot s;
  auto topology = std::make_shared<Topology>();
  topology->version = 2;
  topology->groups.push_back(GroupTopology{"db0", "db0r1", {"db0r2"}, {"db0"}, "0-1-5", 1, "failover"});
  s.topology = topology;
  auto health = std::make_shared<ReplicaHealth>();
  ServerHealth fenced;
  fenced.backend = "db0";
  fenced.name = "db0";
  fenced.fenced = true;
  fenced.answered = true;
  fenced.read_only = true;
  health->servers.push_back(fenced);
  s.servers = health;
  const std::string text = renderMetrics(s);
  EXPECT_NE(text.find("shardproxy_backend_primary{backend=\"db0\",server=\"db0r1\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("shardproxy_topology_changes 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("shardproxy_server_read_only{backend=\"db0\",server=\"db0\",role=\"fenced\"} 1\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace sp::proxy
