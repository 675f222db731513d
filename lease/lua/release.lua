-- snowdrift lease protocol: release a lease on shutdown.
--
-- KEYS: as acquire.lua. ARGV: space name, node, token, issued (the time of the newest ID
-- the holder issued, at most; its generator is stopped first).
-- Returns 1 when released, 0 when the id was no longer this lease's (or its records may
-- have lost writes). The id's fence comes down to just after `issued`, so the next holder
-- starts there rather than at the lease's end; the id is reused once Redis's clock passes
-- it.
local meta, ends, tokens, holders = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local node, token, issued = ARGV[2], ARGV[3], tonumber(ARGV[4])
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')

-- Records another Redis process wrote are not trusted (see acquire.lua): the next
-- acquire starts the space over.
if redis.call('HGET', tokens, node) ~= token or redis.call('HGET', meta, 'run') ~= run then
  return 0
end
local fence = tonumber(redis.call('ZSCORE', ends, node)) or 0
redis.call('ZADD', ends, math.min(fence, issued + 1), node)
redis.call('HDEL', tokens, node)
redis.call('HDEL', holders, node)
return 1
