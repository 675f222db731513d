-- snowdrift lease protocol: release a lease on shutdown.
--
-- KEYS: as acquire.lua. ARGV: space name, node, token, issued (the time of the newest ID
-- the holder issued, at most; its generator is stopped first), next token (optional: the
-- one a renewal without a reply may have put in its place, see renew.lua).
-- Returns 1 when released, 0 (and writes nothing) when the id was no longer this lease's
-- or the records are not intact (they may have lost writes; the next acquire starts the
-- space over). The id's fence comes down to just after `issued`, so the next holder
-- starts there rather than at the lease's end; the id is reused once Redis's clock passes
-- it.
local meta, ends, tokens, holders = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local node, token, issued, next = ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]

local held = intact(meta, ends) and redis.call('HGET', tokens, node)
if not held or (held ~= token and (not next or next == '' or held ~= next)) then
  return 0
end
local fence = tonumber(redis.call('ZSCORE', ends, node))
if not fence then
  return 0
end
redis.call('ZADD', ends, math.min(fence, issued + 1), node)
redis.call('HDEL', tokens, node)
redis.call('HDEL', holders, node)
return 1
