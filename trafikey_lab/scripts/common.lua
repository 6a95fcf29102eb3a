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
