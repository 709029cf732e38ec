-- One wrk script for every run of scripts/bench, set by environment:
--   BENCH_KIND   echo | balance | purchase | status (by a reference seed-1…seed-1000000)
--                | storefront (GET / as a browser) | home (GET /dashboard, BENCH_KEYS the session cookies)
--                | data (POST the 1 GB MTN SME plan, mtn-sme-1gb, for 08031234567)
--                | purchase (anything else: POST ₦50 of MTN airtime for 08031234567)
--   BENCH_PATH   the request path
--   BENCH_KEYS   API keys, comma-separated (taken in turn)
--   BENCH_RUN    a tag that keeps references unique across runs on one database
--   BENCH_DELAY_MS  pause before each request on a connection (0: as fast as possible)
-- done() prints one line `BENCH_RESULT {json}` that the harness reads.

local kind = os.getenv("BENCH_KIND") or "balance"
local path = os.getenv("BENCH_PATH") or "/"
local run = os.getenv("BENCH_RUN") or "0"
local pause = tonumber(os.getenv("BENCH_DELAY_MS") or "0")
local keys = {}
for key in string.gmatch(os.getenv("BENCH_KEYS") or "none", "[^,]+") do
  keys[#keys + 1] = key
end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

local counter = 0
function request()
  counter = counter + 1
  local headers = {
    ["Authorization"] = "Bearer " .. keys[(counter + id) % #keys + 1],
    ["Content-Type"] = "application/json",
  }
  if kind == "balance" then
    return wrk.format("GET", path, headers, nil)
  end
  if kind == "storefront" then
    return wrk.format("GET", path, { ["Accept"] = "text/html,application/xhtml+xml,*/*;q=0.8" }, nil)
  end
  if kind == "home" then
    local cookie = keys[(counter + id) % #keys + 1]
    return wrk.format("GET", path, { ["Accept"] = "text/html", ["Cookie"] = cookie }, nil)
  end
  if kind == "status" then
    local query = string.format("?reference=seed-%d", math.random(1, 1000000))
    return wrk.format("GET", path .. query, headers, nil)
  end
  if kind == "data" then
    local body = string.format(
      '{"provider_id":"mtn","plan_id":"mtn-sme-1gb","phone":"08031234567","reference":"bench-%s-%d-%d"}',
      run, id, counter)
    return wrk.format("POST", path, headers, body)
  end
  local body = string.format(
    '{"provider_id":"mtn","phone":"08031234567","amount":50,"reference":"bench-%s-%d-%d"}',
    run, id, counter)
  return wrk.format("POST", path, headers, body)
end

if pause > 0 then
  function delay()
    return pause
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"connect_errors":%d,"read_errors":%d,' ..
    '"write_errors":%d,"status_errors":%d,"timeouts":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
