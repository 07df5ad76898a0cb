-- msg_range: the IM read path of seed 000, one page of a conversation:
--   SELECT ... FROM msg WHERE conv_id = ? AND seq > ? ORDER BY seq ASC LIMIT 50
-- for a random conversation and a random starting point. See sp_common.lua for modes.
local sp = require("sp_common")
local cons

function thread_init()
  cons = sp.connect()
end

function thread_done()
  sp.disconnect(cons)
end

function event()
  local conv_id = sysbench.rand.uniform(1, sysbench.opt.conversations)
  sp.msgRange(cons, conv_id, sysbench.rand.uniform(0, 60))
end
