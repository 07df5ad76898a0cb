-- tg_upsert: the idempotent ingest/edit path of seed 002: re-deliver a
-- channel message (mostly existing ones, about 1 in 10 new) with
--   INSERT ... ON DUPLICATE KEY UPDATE text_body, content_hash, edited_at.
-- message_time and message_month follow from message_id as in bench/load.
local sp = require("sp_common")
local cons

function thread_init()
  cons = sp.connect()
end

function thread_done()
  sp.disconnect(cons)
end

function event()
  local peer_id = sysbench.rand.uniform(1, sysbench.opt.peers)
  local message_id = sysbench.rand.uniform(1, math.floor(sysbench.opt.peer_messages * 1.1))
  local con, tbl = sp.tgTarget(cons, peer_id)
  local edit = sysbench.rand.uniform(1, 1000000)
  con:query(string.format(
    "INSERT INTO %s (peer_id, message_id, message_month, message_time, text_body, " ..
    "content_hash, ingested_at) VALUES (%d, %d, '%s', '%s', 'edited body %d', '%064d', NOW(3)) " ..
    "ON DUPLICATE KEY UPDATE text_body = VALUES(text_body), " ..
    "content_hash = VALUES(content_hash), edited_at = NOW(3)",
    tbl, peer_id, message_id, sp.tgMonthOf(message_id), sp.tgTimeString(message_id), edit, edit))
end
