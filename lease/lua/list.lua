-- snowdrift lease protocol: a space's leases, for operators (read-only).
--
-- KEYS: as acquire.lua. ARGV: space name.
-- Returns {now, capacity, ttl, skew, created, next, node, until, holder, node, until,
-- holder, ...}: Redis's clock, the space's settings, then every id ever leased with its
-- fence and holder ('' when released; '(description lost)' for an id whose lease holds a
-- token but whose description is gone). A space whose
-- records are not intact (prelude.lua) is listed as one that does not exist, settings as empty
-- strings and no ids: the next acquire starts it over.
local meta, ends, tokens, holders = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

local now = now_ms()

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
