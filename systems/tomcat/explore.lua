-- wrk script of the harness's web-exploration workload: each connection behaves like a
-- visitor walking the test site (home page, articles following their links, searches, the
-- stylesheet and the guide), and done() prints one machine-readable summary line.
--
-- wrk reports nothing while it runs, so each thread also counts the requests it issues per
-- wall-clock second (request() runs once per request anyway) and writes one HARNESS_INTERVAL
-- line when the second changes; done() writes every thread's last, partial second. Each line
-- is a single write, so lines of different threads never mix.

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end

local article = 0
local searches = {5000, 10000, 20000, 40000}

-- per thread: the wall-clock second being counted and the requests issued in it
interval_second = 0
interval_issued = 0

local function interval_line(thread_id, second, issued)
  return string.format("HARNESS_INTERVAL thread=%d second=%d requests=%d\n",
    thread_id, second, issued)
end

local function count_request()
  local now = os.time()
  if now ~= interval_second then
    if interval_issued > 0 then
      io.write(interval_line(tid, interval_second, interval_issued))
      io.stdout:flush()
    end
    interval_second = now
    interval_issued = 0
  end
  interval_issued = interval_issued + 1
end

function init(args)
  math.randomseed(1000 + tid)
  article = (tid * 131) % 1000
end

function request()
  local r = math.random()
  local path
  if r < 0.15 then
    path = "/"
  elseif r < 0.25 then
    path = "/static/site.css"
  elseif r < 0.60 then
    -- follow one of the five links of the current article, as a reader would
    article = (article + 37 * math.random(1, 5)) % 1000
    path = "/page?id=" .. article
  elseif r < 0.88 then
    path = "/cpu?n=" .. searches[math.random(1, #searches)]
  else
    path = "/static/guide.txt"
  end
  count_request()
  return wrk.format("GET", path, {["Accept-Encoding"] = "gzip"})
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    local issued = thread:get("interval_issued")
    if issued and issued > 0 then
      io.write(interval_line(thread:get("tid"), thread:get("interval_second"), issued))
    end
  end
  local e = summary.errors
  io.write(string.format(
    "HARNESS_RESULT requests=%d duration_us=%d bytes=%d lat_mean_us=%.1f lat_p50_us=%d " ..
    "lat_p99_us=%d lat_max_us=%d err_connect=%d err_read=%d err_write=%d err_status=%d " ..
    "err_timeout=%d\n",
    summary.requests, summary.duration, summary.bytes, latency.mean,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
