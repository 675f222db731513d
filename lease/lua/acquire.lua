-- snowdrift lease protocol: acquire a node id of a space.
--
-- KEYS: {space}:meta (hash), {space}:ends (sorted set), {space}:token (hash),
--       {space}:holder (hash); one hash tag, so the script runs on Redis Cluster.
-- ARGV: space name, capacity (node ids), ttl ms, skew ms, token (unique per lease),
--       holder (a description for operators: host, pid), layout (the client's layout as
--       text: every field that decides where an ID's bits go).
-- Returns {node, not_before, until, now}: the node id; the ID time (Unix ms) the holder
-- must never issue at or before; the lease end, which is also the fence (the holder
-- issues only IDs timed before it); Redis's clock. Errors start with a code word:
-- LEASED (none free), CONFIG (the space is leased with other settings).
--
-- Every time is Redis's clock (TIME). A node's score in `ends` is the fence of its
-- newest lease: the next holder of that id issues only after it, and never at or before
-- Redis's clock at the grant. A space whose records are not intact (prelude.lua) may have lost
-- acknowledged grants and renewals. It starts over: every record is dropped (so its
-- holders' renewals are LOST and they stop), and every lease granted in its first
-- ttl + skew ms is fenced after that window, beyond anything a holder of the lost data
-- could still issue (its fence was at most its last renewal + ttl).
local meta, ends, tokens, holders = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local space, token, holder, layout = ARGV[1], ARGV[5], ARGV[6], ARGV[7]
local capacity, ttl, skew = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

local now = now_ms()

local ok, m, run = intact(meta, ends)
local created, nxt
if not ok then
  redis.call('DEL', meta, ends, tokens, holders)
  created, nxt = now, 0
  redis.call('HSET', meta, 'capacity', capacity, 'ttl', ttl, 'skew', skew, 'created', now, 'next', 0,
    'layout', layout, 'run', run)
else
  if tonumber(m[1]) ~= capacity or tonumber(m[2]) ~= ttl or tonumber(m[3]) ~= skew or m[6] ~= layout then
    return redis.error_reply(string.format(
      "CONFIG space '%s' leases %d node ids of layout \"%s\" for %d ms (skew %d ms); this client asked for %d node ids of layout \"%s\" for %d ms (skew %d ms)",
      space, tonumber(m[1]), m[6], tonumber(m[2]), tonumber(m[3]), capacity, layout, ttl, skew))
  end
  created, nxt = tonumber(m[4]), tonumber(m[5])
end

local node, not_before
if nxt < capacity then
  -- The lowest id never leased in this space.
  node, not_before = nxt, 0
  redis.call('HSET', meta, 'next', nxt + 1)
else
  -- The id whose lease ended longest ago, if one has ended.
  local oldest = redis.call('ZRANGE', ends, 0, 0, 'WITHSCORES')
  if #oldest == 0 or tonumber(oldest[2]) > now then
    return redis.error_reply(string.format("LEASED all %d node ids of '%s' are leased", capacity, space))
  end
  node, not_before = tonumber(oldest[1]), tonumber(oldest[2]) - 1
end

-- Never below Redis's clock: a holder whose host clock is behind still starts after
-- every ID a lost lease of this id could have issued before now.
not_before = math.max(not_before, now)
local guard = created + ttl + skew
if now < guard and not_before < guard then
  not_before = guard
end
local fence = now + ttl
redis.call('ZADD', ends, fence, node)
redis.call('HSET', tokens, node, token)
redis.call('HSET', holders, node, holder)
return {node, not_before, fence, now}
