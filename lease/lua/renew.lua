-- snowdrift lease protocol: renew a lease (the heartbeat).
--
-- KEYS: as acquire.lua. ARGV: space name, node, token, ttl ms, next token (optional).
-- Returns {until, now}: the new lease end and fence (never earlier than before), and
-- Redis's clock. Error LOST when the id is no longer this lease's: another holder took
-- it after the lease ended, a copy of this holder renewed first, or the records are not
-- intact (they may have lost writes: a restart, a failover, an eviction; the next acquire
-- starts the space over).
--
-- The token changes at every renewal: the lease's token becomes `next`, which the holder
-- drew at random and uses from the reply on. A renewal that finds `next` already there is
-- this holder's, sent again (its reply was lost): it renews. A copy of the holder (a VM
-- snapshot, a copied browser profile) holds the old token and draws another `next`: the
-- copy that renews second gets LOST.
local meta, ends, tokens = KEYS[1], KEYS[2], KEYS[3]
local space, node, token, ttl, next = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
if next == '' then
  next = nil
end

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

local score
local held = intact(meta, ends) and redis.call('HGET', tokens, node)
if held and (held == token or held == next) then
  score = redis.call('ZSCORE', ends, node)
end
if not score then
  return redis.error_reply(string.format(
    "LOST node id %s of '%s' is no longer held by this lease (taken over after it ended, renewed by a copy of this holder, or Redis lost or may have lost its records: a restart, a failover, an eviction)",
    node, space))
end
local fence = math.max(tonumber(score), now + ttl)
redis.call('ZADD', ends, fence, node)
if next then
  redis.call('HSET', tokens, node, next)
end
return {fence, now}
