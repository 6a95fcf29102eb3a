-- Shared by every script: the argument and counter rules the native verbs use, so a scripted
-- queue refuses exactly what the module refuses. Prepended to each script's own body.
local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local NOT_INTEGER = 'ERR EMQ row field is not an integer'
local LLONG_MAX = '9223372036854775807'
local DEADLINE_MAX = 2 ^ 53

-- An argument Valkey's StringToLongLong accepts, when it is not negative; nil otherwise.
local function non_negative(s)
  if s == '0' then return 0 end
  if not string.match(s, '^[1-9][0-9]*$') then return nil end
  if #s > 19 or (#s == 19 and s > LLONG_MAX) then return nil end
  return tonumber(s)
end

-- A row counter: absent is 0; nil when the stored value is not a canonical integer that can
-- be incremented exactly.
local function counter(s)
  if not s then return 0 end
  local n = non_negative(s)
  if n == nil or #s > 16 or n > DEADLINE_MAX - 1 then return nil end
  return n
end

local function is_type(key, allowed)
  local kind = redis.call('TYPE', key).ok
  return kind == 'none' or kind == allowed
end

-- The deadline a lease of ARGV-given length gets now, or an error reply.
local function deadline_for(lease_arg)
  local lease = non_negative(lease_arg)
  if not lease or lease < 1 then
    return nil, 'ERR EMQ lease must be a positive integer'
  end
  local t = redis.call('TIME')
  local at = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + lease
  if at > DEADLINE_MAX then return nil, 'ERR EMQ deadline out of range' end
  return at
end

local function positive(s, name)
  local n = non_negative(s)
  if not n or n < 1 then return nil, 'ERR EMQ ' .. name .. ' must be a positive integer' end
  return n
end

-- EMQ.STALLED.CHECK as a script: the same selection, verdicts, writes and reply, with the stamps
-- compared against run_id, which the caller supplies. KEYS: active, pending, dead, prefix;
-- opts: max_stalled [, LIMIT, n]. Each member costs two reads (TYPE, then one HMGET of the
-- three fields a verdict may need) and at most three writes, as in the module; all reads come
-- first, so a refusal writes nothing.
local function stalled_sweep(keys, run_id, opts)
  local active, pending, dead, prefix = keys[1], keys[2], keys[3], keys[4]
  if #keys ~= 4 or (#opts ~= 1 and #opts ~= 3) then
    return redis.error_reply('ERR EMQ a sweep takes 4 keys and max_stalled [LIMIT n]')
  end
  local max_stalled, refusal = positive(opts[1], 'max_stalled')
  if not max_stalled then return redis.error_reply(refusal) end
  local limit = 1000
  if #opts == 3 then
    if string.lower(opts[2]) ~= 'limit' then return redis.error_reply('ERR EMQ syntax error') end
    limit, refusal = positive(opts[3], 'limit')
    if not limit then return redis.error_reply(refusal) end
  end
  if not (is_type(active, 'zset') and is_type(pending, 'zset') and is_type(dead, 'zset')) then
    return redis.error_reply(WRONGTYPE)
  end
  if type(run_id) ~= 'string' or not string.match(run_id, '^' .. string.rep('[0-9a-f]', 40) .. '$') then
    return redis.error_reply('ERR EMQ run_id must be 40 characters of 0-9a-f')
  end
  local t = redis.call('TIME')
  local now = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  local plan = {}
  for i, id in ipairs(redis.call('ZRANGE', active, '-inf', now, 'BYSCORE', 'LIMIT', 0, limit)) do
    local row = prefix .. id
    local kind = redis.call('TYPE', row).ok
    local verdict, stalled = 'ghost', nil
    if kind == 'hash' then
      local f = redis.call('HMGET', row, 'group', 'lease_epoch', 'stalled')
      if f[1] then
        verdict = 'lane'
      elseif f[2] ~= run_id then
        verdict = 'exempt'
      else
        stalled = counter(f[3] or nil)
        if stalled == nil then return redis.error_reply(NOT_INTEGER) end
        stalled = stalled + 1
        verdict = stalled < max_stalled and 'recovered' or 'dead'
      end
    elseif kind ~= 'none' then
      return redis.error_reply(WRONGTYPE)
    end
    plan[i] = {id, row, verdict, stalled}
  end
  local recovered, died = {}, {}
  for _, m in ipairs(plan) do
    local id, row, verdict, stalled = m[1], m[2], m[3], m[4]
    if verdict ~= 'lane' then redis.call('ZREM', active, id) end
    if verdict == 'dead' then
      redis.call('ZADD', dead, now, id)
      redis.call('HSET', row, 'state', 'dead', 'stalled', string.format('%d', stalled))
      table.insert(died, id)
    elseif verdict == 'recovered' then
      redis.call('ZADD', pending, 0, id)
      redis.call('HSET', row, 'state', 'pending', 'stalled', string.format('%d', stalled))
      table.insert(recovered, id)
    elseif verdict == 'exempt' then
      redis.call('ZADD', pending, 0, id)
      redis.call('HSET', row, 'state', 'pending')
      table.insert(recovered, id)
    end
  end
  return {recovered, died}
end
