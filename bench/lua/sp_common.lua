-- Shared code of shardproxy's sysbench workloads (sysbench 1.0, LuaJIT).
--
-- Every workload runs in one of two modes:
--   --mode=proxy   one connection per thread to the proxy (--mysql-port=6033),
--                  statements on the logical tables (msg, tg_channel_message);
--   --mode=direct  what an application does without a proxy: each thread holds
--                  one connection to each backend and computes the physical
--                  table and backend itself from the shard map of conf/:
--                    msg: shard = conv_id % 16, table msg_NN, 0-7 on db0, 8-15 on db1
--                    tg:  bucket = crc32('channel:'..peer_id) % 64, shard s00..s03
--                         (16 buckets each), s00/s01 on db0, s02/s03 on db1
--                  Pass both backends as --mysql-port=DB0,DB1 (same host):
--                  sysbench's drv:connect() takes no arguments and hands out the
--                  listed ports round-robin, so a thread connects until it holds
--                  one connection whose @@port is --db0-port and one for
--                  --db1-port.
-- The data these workloads read is written by bench/load (same key layout).

local M = {}

sysbench.cmdline.options = {
  mode = {"proxy or direct", "proxy"},
  db0_port = {"direct mode: port of backend db0 (shards msg 0-7, tg s00/s01)", 3307},
  db1_port = {"direct mode: port of backend db1 (shards msg 8-15, tg s02/s03)", 3308},
  conversations = {"msg: conversation ids are 1..N", 10000},
  senders = {"msg: sender_uid values are 1..N", 1000},
  peers = {"tg: peer ids are 1..N", 200},
  peer_messages = {"tg: message ids per peer are 1..N", 1000},
  reads_per_append = {"msg_append: msg_range reads per INSERT", 1},
  scatter_group_by = {"scatter_count: also GROUP BY msg_type", false},
}

-- tg layout, shared with bench/load: messages of a peer are spread evenly
-- over 2026-01 .. 2026-06 (message_time grows with message_id).
M.kTgFirstDay = 1767225600  -- 2026-01-01 00:00:00 UTC
M.kTgSpanSeconds = 181 * 86400  -- 2026-01-01 .. 2026-06-30
M.kTgMonths = 6

-- CRC-32 (IEEE, reflected, as zlib and MariaDB's CRC32()).
local crcTable = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if bit.band(c, 1) == 1 then
      c = bit.bxor(bit.rshift(c, 1), 0xEDB88320)
    else
      c = bit.rshift(c, 1)
    end
  end
  crcTable[i] = c
end

function M.crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do
    c = bit.bxor(bit.rshift(c, 8), crcTable[bit.band(bit.bxor(c, s:byte(i)), 0xFF)])
  end
  c = bit.bnot(c)
  if c < 0 then c = c + 4294967296 end  -- LuaJIT bit ops are signed 32-bit
  return c
end

-- Physical placement (direct mode). Returns table name and backend index 0/1.
function M.msgShard(conv_id)
  local shard = conv_id % 16
  return string.format("msg_%02d", shard), (shard < 8) and 0 or 1
end

function M.tgShard(peer_id)
  local bucket = M.crc32("channel:" .. peer_id) % 64
  local shard = math.floor(bucket / 16)
  return string.format("tg_channel_message_s%02d", shard), (shard < 2) and 0 or 1
end

local function direct()
  return sysbench.opt.mode == "direct"
end

-- Per thread: con[0], con[1] (direct) or con[0] only (proxy).
function M.connect()
  local drv = sysbench.sql.driver()
  local cons = {}
  if not direct() then
    cons[0] = drv:connect()
    return cons
  end
  local want = {[tonumber(sysbench.opt.db0_port)] = 0, [tonumber(sysbench.opt.db1_port)] = 1}
  for _ = 1, 40 do
    if cons[0] and cons[1] then break end
    local c = drv:connect()
    local port = tonumber(c:query_row("SELECT @@port"))
    local idx = want[port]
    if idx ~= nil and cons[idx] == nil then
      cons[idx] = c
    else
      c:disconnect()
    end
  end
  if not (cons[0] and cons[1]) then
    error("direct mode: could not get a connection to both backends; pass --mysql-port=" ..
          sysbench.opt.db0_port .. "," .. sysbench.opt.db1_port)
  end
  return cons
end

function M.disconnect(cons)
  for _, c in pairs(cons) do c:disconnect() end
end

-- The connection and table name a statement on `logical` with key `key` uses.
function M.msgTarget(cons, conv_id)
  if not direct() then return cons[0], "msg" end
  local name, backend = M.msgShard(conv_id)
  return cons[backend], name
end

function M.tgTarget(cons, peer_id)
  if not direct() then return cons[0], "tg_channel_message" end
  local name, backend = M.tgShard(peer_id)
  return cons[backend], name
end

-- Reads every row of a result set (the client must consume it, as an application would).
function M.drain(rs)
  if rs == nil then return 0 end
  local n = 0
  for _ = 1, rs.nrows do
    rs:fetch_row()
    n = n + 1
  end
  rs:free()
  return n
end

function M.msgRange(cons, conv_id, after_seq)
  local con, tbl = M.msgTarget(cons, conv_id)
  return M.drain(con:query(string.format(
    "SELECT seq, msg_id, sender_uid, msg_type, content, created_at FROM %s " ..
    "WHERE conv_id = %d AND seq > %d ORDER BY seq ASC LIMIT 50", tbl, conv_id, after_seq)))
end

function M.tgMonthString(month_index)  -- 1 -> '2026-01-01'
  local year = 2026 + math.floor((month_index - 1) / 12)
  local month = (month_index - 1) % 12 + 1
  return string.format("%04d-%02d-01", year, month)
end

function M.tgTime(message_id)  -- deterministic message_time (epoch s, UTC) of a message
  local per = M.kTgSpanSeconds / sysbench.opt.peer_messages
  return M.kTgFirstDay + math.floor((message_id - 1) * per)
end

function M.tgTimeString(message_id)
  return os.date("!%Y-%m-%d %H:%M:%S", M.tgTime(message_id))
end

function M.tgMonthOf(message_id)  -- first day of the message's month
  return os.date("!%Y-%m-01", M.tgTime(message_id))
end

return M
