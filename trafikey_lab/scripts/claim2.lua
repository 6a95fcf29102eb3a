-- claim2: claim the head of pending, as a queue without the native module does it.
-- KEYS: pending, active, prefix   ARGV: lease_ms
-- The same transition as EMQ.CLAIM (ghosts skipped, one HSET, deadline in active) except that
-- no lease_epoch is written: the row stays as it was enqueued, plus state and attempts.
-- Pending is read a page at a time from its head, never whole, so a claim costs what it
-- reads, not the size of the queue.
local PAGE = 16
local pending, active, prefix = KEYS[1], KEYS[2], KEYS[3]
local at, refusal = deadline_for(ARGV[1])
if not at then return redis.error_reply(refusal) end
if not (is_type(pending, 'zset') and is_type(active, 'zset')) then
  return redis.error_reply(WRONGTYPE)
end
local ghosts, claimed, attempts, start = {}, nil, 0, 0
repeat
  local page = redis.call('ZRANGE', pending, start, start + PAGE - 1)
  for _, id in ipairs(page) do
    local kind = redis.call('TYPE', prefix .. id).ok
    if kind == 'none' then
      table.insert(ghosts, id)
    elseif kind ~= 'hash' then
      return redis.error_reply(WRONGTYPE)
    else
      attempts = counter(redis.call('HGET', prefix .. id, 'attempts'))
      if attempts == nil then return redis.error_reply(NOT_INTEGER) end
      claimed = id
      break
    end
  end
  start = start + PAGE
until claimed or #page < PAGE
for _, ghost in ipairs(ghosts) do redis.call('ZREM', pending, ghost) end
if not claimed then return false end
redis.call('ZREM', pending, claimed)
redis.call('HSET', prefix .. claimed, 'state', 'active', 'attempts', string.format('%d', attempts + 1))
redis.call('ZADD', active, string.format('%d', at), claimed)
return {claimed, attempts + 1, at}
