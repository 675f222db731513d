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
