-- snowdrift lease protocol: renew a lease (the heartbeat).
--
-- KEYS: as acquire.lua. ARGV: space name, node, token, ttl ms.
-- Returns {until, now}: the new lease end and fence (never earlier than before), and
-- Redis's clock. Error LOST when the id is no longer this lease's: its record is gone
-- (Redis lost its data) or another holder took it after the lease ended.
local meta, ends, tokens = KEYS[1], KEYS[2], KEYS[3]
local space, node, token, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

if redis.call('HGET', tokens, node) ~= token or redis.call('EXISTS', meta) == 0 then
  return redis.error_reply(string.format(
    "LOST node id %s of '%s' is no longer held by this lease (taken over after it ended, or Redis lost its data)",
    node, space))
end
local fence = math.max(tonumber(redis.call('ZSCORE', ends, node)) or 0, now + ttl)
redis.call('ZADD', ends, fence, node)
return {fence, now}
