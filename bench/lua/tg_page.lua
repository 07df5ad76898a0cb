-- tg_page: the channel read path of seed 002: one page of a channel inside a
-- two-month window (the month column prunes partitions),
--   SELECT ... FROM tg_channel_message WHERE peer_id = ? AND message_month >= ?
--   AND message_month < ? ORDER BY message_time DESC, message_id DESC LIMIT 100
-- for a random peer and window. See sp_common.lua for modes.
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
  local first = sysbench.rand.uniform(1, sp.kTgMonths - 1)
  local con, tbl = sp.tgTarget(cons, peer_id)
  sp.drain(con:query(string.format(
    "SELECT peer_id, message_id, message_time, reply_to_msg_id, text_body, media_type " ..
    "FROM %s WHERE peer_id = %d AND message_month >= '%s' AND message_month < '%s' " ..
    "ORDER BY message_time DESC, message_id DESC LIMIT 100",
    tbl, peer_id, sp.tgMonthString(first), sp.tgMonthString(first + 2))))
end
