-- snowdrift lease protocol: the functions every script uses. A client sends this file
-- and the script after it as one script (Redis scripts cannot import), so each is kept
-- once, here.

-- Whether the space's records are intact: its meta hash has every field and was written
-- by this Redis process, and `ends` holds a fence for each of the `next` ids ever leased.
-- Records that are not may have lost writes (a restart, a failover, a key evicted on its
-- own): no script trusts them, and only acquire writes to them, starting the space over.
-- Returns whether they are, the meta fields, and this process's run_id.
local function intact(meta, ends)
  local m = redis.call('HMGET', meta, 'capacity', 'ttl', 'skew', 'created', 'next', 'layout', 'run')
  local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
  for i = 1, 7 do
    if not m[i] then
      return false, m, run
    end
  end
  return m[7] == run and redis.call('ZCARD', ends) == tonumber(m[5]), m, run
end

-- Redis's clock, Unix ms.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
