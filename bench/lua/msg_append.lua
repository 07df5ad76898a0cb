-- msg_append: the IM write path of seed 000: INSERT the next message (seq =
-- previous + 1) into a random conversation, followed by --reads-per-append
-- msg_range reads of that conversation (the sender's client refreshing).
-- Conversations are partitioned between threads (conv_id % threads = thread
-- id) so that two threads never race for the same seq; each thread learns a
-- conversation's last seq with one routed MAX(seq) the first time it uses it.
local sp = require("sp_common")
local cons
local next_seq = {}

function thread_init()
  cons = sp.connect()
end

function thread_done()
  sp.disconnect(cons)
end

local function pickConversation()
  local threads = sysbench.opt.threads
  local n = sysbench.opt.conversations
  local slots = math.floor((n - 1 - sysbench.tid) / threads)
  if slots < 0 then slots = 0 end
  return sysbench.tid + 1 + threads * sysbench.rand.uniform(0, slots)
end

function event()
  local conv_id = pickConversation()
  local con, tbl = sp.msgTarget(cons, conv_id)
  local seq = next_seq[conv_id]
  if seq == nil then
    local last = con:query_row(string.format("SELECT MAX(seq) FROM %s WHERE conv_id = %d", tbl, conv_id))
    seq = (tonumber(last) or 0) + 1
  end
  next_seq[conv_id] = seq + 1
  con:query(string.format(
    "INSERT INTO %s (conv_id, seq, msg_id, sender_uid, msg_type, content, created_at) " ..
    "VALUES (%d, %d, %d, %d, 1, 'bench message body, short enough to stay inline', NOW(3))",
    tbl, conv_id, seq, conv_id * 1000000 + seq, sysbench.rand.uniform(1, sysbench.opt.senders)))
  for _ = 1, sysbench.opt.reads_per_append do
    sp.msgRange(cons, conv_id, math.max(0, seq - 50))
  end
end
