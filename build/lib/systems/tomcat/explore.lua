-- wrk script of the harness's web-exploration workload: each connection behaves like a
-- visitor walking the test site (home page, articles following their links, searches, the
-- stylesheet and the guide), and done() prints one machine-readable summary line.

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end

local article = 0
local searches = {5000, 10000, 20000, 40000}

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
  return wrk.format("GET", path, {["Accept-Encoding"] = "gzip"})
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "HARNESS_RESULT requests=%d duration_us=%d bytes=%d lat_mean_us=%.1f lat_p50_us=%d " ..
    "lat_p99_us=%d lat_max_us=%d err_connect=%d err_read=%d err_write=%d err_status=%d " ..
    "err_timeout=%d\n",
    summary.requests, summary.duration, summary.bytes, latency.mean,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
