-- stalled2: the stall sweep as a script, comparing stamps with the run_id its caller passes.
-- KEYS: active, pending, dead, prefix   ARGV: run_id, max_stalled [, LIMIT, n]
-- The caller reads run_id from INFO server before it sends the script. If the server restarts
-- in between, the script runs on the new process with the old run_id: every lease the old
-- process granted matches it and is counted as a stall, which is exactly what the stamp is
-- there to prevent. stalled2_info reads the run_id itself instead.
return stalled_sweep(KEYS, ARGV[1], {select(2, unpack(ARGV))})
