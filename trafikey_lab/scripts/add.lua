-- add: enqueue one job, as a queue without the native module does it.
-- KEYS: pending, prefix   ARGV: id, payload
-- Refuses an id whose row exists, so an add never overwrites a job in flight.
local pending, prefix = KEYS[1], KEYS[2]
local id, payload = ARGV[1], ARGV[2]
if not is_type(pending, 'zset') then return redis.error_reply(WRONGTYPE) end
if redis.call('EXISTS', prefix .. id) == 1 then
  return redis.error_reply('ERR EMQ job already exists')
end
redis.call('HSET', prefix .. id, 'state', 'pending', 'attempts', '0', 'payload', payload)
redis.call('ZADD', pending, 0, id)
return 1
