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

local now = now_ms()

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
