-- snowdrift lease protocol: a space's leases, for operators (read-only).
--
-- KEYS: as acquire.lua. ARGV: space name.
-- Returns {now, capacity, ttl, skew, created, next, node, until, holder, node, until,
-- holder, ...}: Redis's clock, the space's settings, then every id ever leased with its
-- fence and holder ('' when released; '(description lost)' for an id whose lease holds a
-- token but whose description is gone). A space whose
-- records are not intact (below) is listed as one that does not exist, settings as empty
-- strings and no ids: the next acquire starts it over.
local meta, ends, tokens, holders = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

-- Whether the space's records are intact: its meta hash has every field and was written
-- by this Redis process, and `ends` holds a fence for each of the `next` ids ever leased.
-- Records that are not may have lost writes (a restart, a failover, a key evicted on its
-- own): no script trusts them, and only acquire writes to them, starting the space over.
-- The same function in every script (a script cannot import one). Returns whether they
-- are, the meta fields, and this process's run_id.
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

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local ok, m = intact(meta, ends)
if not ok then
  return {now, '', '', '', '', ''}
end
local out = {now, m[1], m[2], m[3], m[4], m[5]}
local all = redis.call('ZRANGE', ends, 0, -1, 'WITHSCORES')
for i = 1, #all, 2 do
  table.insert(out, tonumber(all[i]))
  table.insert(out, tonumber(all[i + 1]))
  local holder = redis.call('HGET', holders, all[i])
  if not holder then
    holder = redis.call('HEXISTS', tokens, all[i]) == 1 and '(description lost)' or ''
  end
  table.insert(out, holder)
end
return out
