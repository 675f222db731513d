-- snowdrift lease protocol: a space's leases, for operators (read-only).
--
-- KEYS: as acquire.lua. ARGV: none.
-- Returns {now, capacity, ttl, skew, created, next, node, until, holder, node, until,
-- holder, ...}: Redis's clock, the space's settings (empty strings for a space that does
-- not exist), then every id ever leased with its fence and holder ('' when released).
local meta, ends, holders = KEYS[1], KEYS[2], KEYS[4]

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local out = {now}
for _, v in ipairs(redis.call('HMGET', meta, 'capacity', 'ttl', 'skew', 'created', 'next')) do
  table.insert(out, v or '')
end
local all = redis.call('ZRANGE', ends, 0, -1, 'WITHSCORES')
for i = 1, #all, 2 do
  table.insert(out, tonumber(all[i]))
  table.insert(out, tonumber(all[i + 1]))
  table.insert(out, redis.call('HGET', holders, all[i]) or '')
end
return out
