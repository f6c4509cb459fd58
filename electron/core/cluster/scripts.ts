// The shared crawl's atomic steps, as Redis scripts. Redis holds the state and guards each update;
// the throttle rules stay in the engine's pure step (throttle/): a worker locks a slot, computes its
// next state with those rules, and commits it with the lock's token. Times are Redis's own clock
// (TIME), in ms with three decimals, so the workers' clocks never matter.
//
// Keys of crawl S, all under the hash tag {S} (one cluster slot per crawl): see keys.ts.

/** Shared Lua helpers, prepended to every script. */
const LIB = `
local P = ARGV[1]
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local function fmt(x) return string.format('%.3f', x) end
local function num(x, d) local n = tonumber(x) if n == nil then return d end return n end
-- A reserved request not on the wire after this long (its worker stalled or died) no longer holds its slot.
local PEND_MS = 10000
-- The slot is offered to RESERVE at its ready time when it has work and room; else it leaves the index.
-- A locked slot stays offered: RESERVE passes it by until its lock is released or runs out (a worker
-- that died holding it must not take the slot out of the crawl).
local function place(slot)
  local sk = P .. 's:' .. slot
  local f = redis.call('HMGET', sk, 'inflight', 'conc', 'ready')
  if num(f[1], 0) < num(f[2], 1) and redis.call('ZCARD', P .. 'q:' .. slot) > 0 then
    redis.call('ZADD', P .. 'ready', f[3] or '0', slot)
  else
    redis.call('ZREM', P .. 'ready', slot)
  end
end
-- Queues requests: ARGV from index i, 7 values each: slot, dedup key ('' = none; '!key': not counted against
-- the page limit), priority, request JSON,
-- the new slot's policy JSON, concurrency and smallest gap (used only when the slot is new).
local function addRequests(i, n)
  local meta = P .. 'meta'
  local maxPages = num(redis.call('HGET', meta, 'maxPages'), 0)
  local added = 0
  for k = 0, n - 1 do
    local b = i + k * 7
    local slot, canon, prio, req = ARGV[b], ARGV[b + 1], tonumber(ARGV[b + 2]), ARGV[b + 3]
    local ok = true
    if string.sub(canon, 1, 1) == '!' then
      -- a redirect's target: de-duplicated, not counted against the page limit
      if redis.call('SADD', P .. 'seen', string.sub(canon, 2)) == 0 then ok = false end
    elseif canon ~= '' then
      if maxPages > 0 and num(redis.call('HGET', meta, 'accepted'), 0) >= maxPages then ok = false
      elseif redis.call('SADD', P .. 'seen', canon) == 0 then ok = false
      else redis.call('HINCRBY', meta, 'accepted', 1) end
    end
    if ok then
      local sk = P .. 's:' .. slot
      if redis.call('EXISTS', sk) == 0 then
        redis.call('HSET', sk, 'pol', ARGV[b + 4], 'last', '', 'inflight', 0, 'ready', '0', 'conc', ARGV[b + 5], 'mingap', ARGV[b + 6], 'lock', '')
        redis.call('SADD', P .. 'slots', slot)
      end
      local seq = redis.call('HINCRBY', meta, 'seq', 1)
      redis.call('ZADD', P .. 'q:' .. slot, fmt(-prio * 4294967296 + seq), req)
      redis.call('HINCRBY', meta, 'queued', 1)
      place(slot)
      added = added + 1
    end
  end
  return added
end
-- A worker that is gone: its leases go back to their slots' queues (fetched once more, by someone
-- else), the locks it held are freed. Returns how many requests went back.
-- One lease given back: its request to the queue, its slot's place, lock and pending send freed. 1 when it was held.
local function unlease(token)
  local l = redis.call('HGET', P .. 'leases', token)
  if not l then return 0 end
  local d = cjson.decode(l)
  local sk = P .. 's:' .. d.slot
  redis.call('HDEL', P .. 'leases', token)
  redis.call('SREM', P .. 'wl:' .. d.w, token)
  redis.call('HINCRBY', sk, 'inflight', -1)
  redis.call('HINCRBY', sk, 'v', 1)
  if redis.call('HGET', sk, 'lock') == token then redis.call('HSET', sk, 'lock', '') end
  if redis.call('HGET', sk, 'pend') == token then redis.call('HSET', sk, 'pend', '') end
  redis.call('ZADD', P .. 'q:' .. d.slot, d.score, d.req)
  redis.call('HINCRBY', P .. 'meta', 'queued', 1)
  place(d.slot)
  return 1
end
local function bury(w)
  local requeued = 0
  for _, token in ipairs(redis.call('SMEMBERS', P .. 'wl:' .. w)) do requeued = requeued + unlease(token) end
  redis.call('DEL', P .. 'wl:' .. w)
  if requeued > 0 then redis.call('HINCRBY', P .. 'meta', 'requeued', requeued) end
  return requeued
end
`;

/**
 * RESERVE P worker max lockMs: takes up to `max` requests from due slots (next start ≤ now, in
 * flight < concurrency, not locked), each as a lease of the worker, and locks its slot for the
 * worker's commit of the start. The slot's next start is held at now + its smallest gap until
 * then, so even a worker that dies here cannot let a request through early.
 * Returns [now, status, queued, leases, nextDue, (slot, token, request, policy, queue score, in flight,
 * state version when the slot is 'det' and not locked, else '')…].
 */
export const RESERVE = `${LIB}
local w, max, lockMs = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local meta = P .. 'meta'
local now = nowMs()
local status = redis.call('HGET', meta, 'status') or ''
local out = {fmt(now), status, '0', '0', ''}
if status == 'running' and redis.call('EXISTS', P .. 'hb:' .. w) == 1 then
  local due = redis.call('ZRANGEBYSCORE', P .. 'ready', '-inf', fmt(now), 'LIMIT', 0, max * 2 + 8)
  local got = 0
  for _, slot in ipairs(due) do
    if got >= max then break end
    local sk = P .. 's:' .. slot
    local f = redis.call('HMGET', sk, 'inflight', 'conc', 'lock', 'lockExp', 'pol', 'ready', 'mingap', 'pend', 'pendExp', 'det')
    local inflight, conc = num(f[1], 0), num(f[2], 1)
    local locked = f[3] ~= false and f[3] ~= '' and num(f[4], 0) > now
    local sending = f[8] ~= false and f[8] ~= '' and num(f[9], 0) > now
    if locked or sending then
      -- another worker is committing this slot (its commit places it again), or its latest request is
      -- not on the wire yet: the next start counts from that send (SENT), whichever worker makes it
    elseif inflight >= conc then
      redis.call('ZREM', P .. 'ready', slot)
    elseif num(f[6], 0) > now then
      redis.call('ZADD', P .. 'ready', f[6], slot)
    else
      local popped = redis.call('ZPOPMIN', P .. 'q:' .. slot)
      if #popped == 0 then
        redis.call('ZREM', P .. 'ready', slot)
      else
        local token = w .. ':' .. redis.call('HINCRBY', meta, 'leaseSeq', 1)
        local hold = fmt(now + num(f[7], 0))
        -- A slot whose gap draws nothing (no randomization or no delay, no rampup: 'det') needs no
        -- start committed by the worker: its next start is now + that gap, and it is not locked.
        local det = f[10] == '1'
        -- With no gap at all, nothing waits for its send: the worker sends no SENT.
        local pend = (det and num(f[7], 0) == 0) and '' or token
        redis.call('HSET', sk, 'inflight', inflight + 1, 'lock', det and '' or token, 'lockExp', fmt(now + lockMs), 'last', fmt(now), 'ready', hold,
          'pend', pend, 'pendExp', fmt(now + PEND_MS))
        local v = redis.call('HINCRBY', sk, 'v', 1)
        redis.call('ZREM', P .. 'ready', slot)
        redis.call('HINCRBY', meta, 'queued', -1)
        redis.call('HSET', P .. 'leases', token, cjson.encode({ w = w, slot = slot, req = popped[1], score = popped[2] }))
        redis.call('SADD', P .. 'wl:' .. w, token)
        table.insert(out, slot)
        table.insert(out, token)
        table.insert(out, popped[1])
        table.insert(out, f[5] or '')
        table.insert(out, popped[2])
        table.insert(out, tostring(inflight + 1))
        table.insert(out, det and tostring(v) or '')
        got = got + 1
      end
    end
  end
end
out[3] = tostring(num(redis.call('HGET', meta, 'queued'), 0))
out[4] = tostring(redis.call('HLEN', P .. 'leases'))
local first = redis.call('ZRANGE', P .. 'ready', 0, 0, 'WITHSCORES')
if #first > 0 then out[5] = first[2] end
return out
`;

/**
 * STARTED P slot token policy ready conc mingap det: the worker's start of a reserved request, computed
 * by the engine's rules (the gap's random draw, rampup): the slot's state and next start, unlocked.
 * Returns the slot's state version (its next commit may skip the lock while it holds), or 0 when the
 * lock was lost (the request must not be sent).
 */
export const STARTED = `${LIB}
local slot, token = ARGV[2], ARGV[3]
local sk = P .. 's:' .. slot
if redis.call('HGET', sk, 'lock') ~= token then return 0 end
local last = num(redis.call('HGET', sk, 'last'), 0)
redis.call('HSET', sk, 'pol', ARGV[4], 'ready', fmt(math.max(num(ARGV[5], 0), last)), 'conc', ARGV[6], 'mingap', ARGV[7], 'det', ARGV[8], 'lock', '')
place(slot)
return redis.call('HINCRBY', sk, 'v', 1)
`;

/**
 * SENT P slot gapMs token: the request's headers went out now (Redis's clock at this call, never
 * earlier than the send): its slot's gap counts from here, as the one-process engine's does, and the
 * slot may take its next request (RESERVE waits for this: a worker slow to send its request cannot
 * have it arrive after the next one).
 */
export const SENT = `${LIB}
local slot, gap, token = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local sk = P .. 's:' .. slot
local now = nowMs()
if redis.call('HGET', sk, 'pend') == token then redis.call('HSET', sk, 'pend', '') end
local last = num(redis.call('HGET', sk, 'last'), 0)
if now > last then
  local ready = math.max(num(redis.call('HGET', sk, 'ready'), 0), now + gap)
  redis.call('HSET', sk, 'last', fmt(now), 'ready', fmt(ready))
end
place(slot)
return 1
`;

/**
 * LOCK P slot token lockMs: locks a slot for a read-compute-commit (a response's step, a user's pin).
 * Returns [now, policy, last, inflight] or an empty list while someone else holds it. Taking it again
 * with the same token succeeds (the reply of the first was lost with the connection).
 */
export const LOCK = `${LIB}
local slot, token, lockMs = ARGV[2], ARGV[3], tonumber(ARGV[4])
local sk = P .. 's:' .. slot
local now = nowMs()
local f = redis.call('HMGET', sk, 'lock', 'lockExp', 'pol', 'last', 'inflight', 'ready')
if f[1] ~= false and f[1] ~= '' and f[1] ~= token and num(f[2], 0) > now then return {} end
if f[3] == false then return {} end
redis.call('HSET', sk, 'lock', token, 'lockExp', fmt(now + lockMs))
return {fmt(now), f[3], f[4] or '', tostring(num(f[5], 0)), f[6] or '0'}
`;

/**
 * COMMIT P slot token lease policy ready conc mingap record nAdd requeue lastRead det (adds…): one response's
 * end, atomically: the slot's new state (its step computed by the worker), the lease freed (or the
 * request put back: requeue = its queue score), the response's records appended to the stream,
 * and the links or retry it queued. With lease '' it only commits the state (a user's change).
 * 0 when the lock was lost (the caller locks and computes again). A token '=V' commits without the lock
 * when the slot's state is still version V (what a worker wrote at its start, nothing since).
 */
export const COMMIT = `${LIB}
local slot, token, lease = ARGV[2], ARGV[3], ARGV[4]
local sk = P .. 's:' .. slot
if string.sub(token, 1, 1) == '=' then
  -- Without the lock: the state is the version the worker computed from, and nobody holds the lock.
  local f = redis.call('HMGET', sk, 'v', 'lock', 'lockExp')
  if f[1] ~= string.sub(token, 2) then return 0 end
  if f[2] ~= false and f[2] ~= '' and num(f[3], 0) > nowMs() then return 0 end
elseif redis.call('HGET', sk, 'lock') ~= token then return 0 end
-- A request that ends (or is put back) without a send no longer holds its slot.
if lease ~= '' and redis.call('HGET', sk, 'pend') == lease then redis.call('HSET', sk, 'pend', '') end
local nAdd, requeue = tonumber(ARGV[10]), ARGV[11]
if lease ~= '' then
  local l = redis.call('HGET', P .. 'leases', lease)
  if l then
    local d = cjson.decode(l)
    redis.call('HDEL', P .. 'leases', lease)
    redis.call('SREM', P .. 'wl:' .. d.w, lease)
    redis.call('HINCRBY', sk, 'inflight', -1)
    if requeue ~= '' then
      redis.call('ZADD', P .. 'q:' .. slot, requeue, d.req)
      redis.call('HINCRBY', P .. 'meta', 'queued', 1)
    end
    -- Remembered (the latest 100,000), so a commit sent again after its reply was lost does nothing.
    redis.call('ZADD', P .. 'done', fmt(nowMs()), lease)
    redis.call('ZREMRANGEBYRANK', P .. 'done', 0, -100001)
  elseif redis.call('ZSCORE', P .. 'done', lease) then
    redis.call('HSET', sk, 'lock', '')
    return 1
  end
  -- A lease neither held nor done went back to the queue when its worker was counted dead: the
  -- response is still recorded (the site served it), and the request is fetched once more.
end
-- The next start was computed from the latest start read under the lock; a request sent since
-- (SENT needs no lock) moved that start later, and the next start moves with it.
local ready = num(ARGV[6], 0)
local lastRead, lastNow = num(ARGV[12], 0), num(redis.call('HGET', sk, 'last'), 0)
if ARGV[12] ~= '' and lastNow > lastRead then ready = ready + (lastNow - lastRead) end
redis.call('HSET', sk, 'pol', ARGV[5], 'ready', fmt(ready), 'conc', ARGV[7], 'mingap', ARGV[8], 'det', ARGV[13], 'lock', '')
redis.call('HINCRBY', sk, 'v', 1)
if ARGV[9] ~= '' then redis.call('XADD', P .. 'rec', '*', 'r', ARGV[9]) end
addRequests(14, nAdd)
place(slot)
return 1
`;

/** ADD P nAdd (adds…): queues requests (seeds). Returns how many were new. */
export const ADD = `${LIB}
return addRequests(3, tonumber(ARGV[2]))
`;

/** RECORD P record: appends records to the stream (events outside a response). */
export const RECORD = `${LIB}
redis.call('XADD', P .. 'rec', '*', 'r', ARGV[2])
return 1
`;

/**
 * SWEEP P: a worker whose heartbeat key expired (and that did not leave) is dead: its leases go back to their slots' queues.
 * Returns [requeued, dead workers…].
 */
export const SWEEP = `${LIB}
local requeued = 0
local out = {}
for _, w in ipairs(redis.call('HKEYS', P .. 'workers')) do
  if redis.call('EXISTS', P .. 'hb:' .. w) == 0 and redis.call('HEXISTS', P .. 'dead', w) == 0 and redis.call('HEXISTS', P .. 'left', w) == 0 then
    requeued = requeued + bury(w)
    redis.call('HSET', P .. 'dead', w, fmt(nowMs()))
    table.insert(out, w)
  end
end
table.insert(out, 1, tostring(requeued))
return out
`;

/**
 * JOIN P worker ttlMs info: a worker joins under its name. Refused (-1) while a live worker has that
 * name; leases left under the name by an earlier process (killed) go back to the queues first.
 * Returns how many went back.
 */
export const JOIN = `${LIB}
local w, ttl = ARGV[2], ARGV[3]
if redis.call('EXISTS', P .. 'hb:' .. w) == 1 then return -1 end
local requeued = bury(w)
redis.call('HDEL', P .. 'dead', w)
redis.call('HDEL', P .. 'left', w)
redis.call('SET', P .. 'hb:' .. w, '1', 'PX', ttl)
redis.call('HSET', P .. 'workers', w, ARGV[4])
return requeued
`;

/**
 * UNLEASE P token…: leases a worker holds in Redis but never learnt of (the reply of its RESERVE was
 * lost with the connection): their requests go back to the queue, unsent. Returns how many.
 */
export const UNLEASE = `${LIB}
local n = 0
for i = 2, #ARGV do n = n + unlease(ARGV[i]) end
return n
`;

/** FINISH P: marks a running crawl finished when nothing is queued and nothing leased. 1 when it did. */
export const FINISH = `${LIB}
local meta = P .. 'meta'
if redis.call('HGET', meta, 'status') ~= 'running' then return 0 end
if num(redis.call('HGET', meta, 'queued'), 0) > 0 or redis.call('HLEN', P .. 'leases') > 0 then return 0 end
redis.call('HSET', meta, 'status', 'finished', 'finishedAt', fmt(nowMs()))
return 1
`;

/**
 * HEARTBEAT P worker ttlMs info: the worker is alive for ttlMs more; its row in the Workers table.
 * 2 when it had been declared dead (late heartbeats): its leases were given to others meanwhile.
 */
export const HEARTBEAT = `${LIB}
local w, ttl = ARGV[2], ARGV[3]
local revived = redis.call('HDEL', P .. 'dead', w)
redis.call('SET', P .. 'hb:' .. w, '1', 'PX', ttl)
redis.call('HSET', P .. 'workers', w, ARGV[4])
return 1 + revived
`;
