-- scatter_count: a question without the shard key, "how many messages did
-- this user send" (and optionally per msg_type), over all 16 msg shards.
--   proxy:  SELECT COUNT(*) FROM msg WHERE sender_uid = ?   (the proxy fans out
--           and merges; needs `scatter: aggregates` in the shard map)
--   direct: the application's own fan-out loop: the same COUNT on msg_00 ..
--           msg_15 over the two backend connections, summed in the client.
-- --scatter-group-by adds GROUP BY msg_type.
local sp = require("sp_common")
local cons

function thread_init()
  cons = sp.connect()
end

function thread_done()
  sp.disconnect(cons)
end

local function countQuery(tbl, sender)
  if sysbench.opt.scatter_group_by then
    return string.format("SELECT msg_type, COUNT(*) FROM %s WHERE sender_uid = %d GROUP BY msg_type",
                         tbl, sender)
  end
  return string.format("SELECT COUNT(*) FROM %s WHERE sender_uid = %d", tbl, sender)
end

function event()
  local sender = sysbench.rand.uniform(1, sysbench.opt.senders)
  if sysbench.opt.mode ~= "direct" then
    sp.drain(cons[0]:query(countQuery("msg", sender)))
    return
  end
  for shard = 0, 15 do
    local con = cons[(shard < 8) and 0 or 1]
    sp.drain(con:query(countQuery(string.format("msg_%02d", shard), sender)))
  end
end
