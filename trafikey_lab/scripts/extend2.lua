-- extend2: push a live lease's deadline, as a queue without the native module does it.
-- KEYS: active, row   ARGV: id, attempt, lease_ms
-- Live means: id in active, the row a hash in state active whose attempts equals attempt. The
-- same test as EMQ.EXTEND; the difference is that no lease_epoch is written.
local active, row = KEYS[1], KEYS[2]
local id = ARGV[1]
local attempt = non_negative(ARGV[2])
if attempt == nil then return redis.error_reply('ERR EMQ attempt must be a non-negative integer') end
local at, refusal = deadline_for(ARGV[3])
if not at then return redis.error_reply(refusal) end
if not (is_type(active, 'zset') and is_type(row, 'hash')) then
  return redis.error_reply(WRONGTYPE)
end
if not redis.call('ZSCORE', active, id) then return 0 end
if redis.call('TYPE', row).ok ~= 'hash' then return 0 end
if redis.call('HGET', row, 'state') ~= 'active' then return 0 end
local attempts = counter(redis.call('HGET', row, 'attempts'))
if attempts == nil then return redis.error_reply(NOT_INTEGER) end
if attempts ~= attempt then return 0 end
redis.call('ZADD', active, string.format('%d', at), id)
return 1
