-- stalled2_info: stalled2 that reads INFO server itself, so the run_id it compares with is that
-- of the process running it, whatever happened since the caller last looked.
-- KEYS: active, pending, dead, prefix   ARGV: max_stalled [, LIMIT, n]
-- The price is INFO server on every call: the server builds its whole server section as text
-- and the script searches it, where the module reads one cached value.
local run_id = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
return stalled_sweep(KEYS, run_id, ARGV)
