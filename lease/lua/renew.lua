-- snowdrift lease protocol: renew a lease (the heartbeat).
--
-- KEYS: as acquire.lua. ARGV: space name, node, token, ttl ms.
-- Returns {until, now}: the new lease end and fence (never earlier than before), and
-- Redis's clock. Error LOST when the id is no longer this lease's: another holder took
-- it after the lease ended, or the records may have lost writes (a key missing, or
-- written by another Redis process: a restart, a failover; see acquire.lua).
local meta, ends, tokens = KEYS[1], KEYS[2], KEYS[3]
local space, node, token, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')

local score = redis.call('ZSCORE', ends, node)
if redis.call('HGET', tokens, node) ~= token or redis.call('HGET', meta, 'run') ~= run or not score then
  return redis.error_reply(string.format(
    "LOST node id %s of '%s' is no longer held by this lease (taken over after it ended, or Redis lost or may have lost its records: a restart, a failover, an eviction)",
    node, space))
end
local fence = math.max(tonumber(score), now + ttl)
redis.call('ZADD', ends, fence, node)
return {fence, now}
