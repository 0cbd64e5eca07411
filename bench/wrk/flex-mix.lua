-- wrk script for bench/flex-load.ts, scenario B: rotates over a list of
-- request paths (one per line in a file) and sends the API key on each.
--
--   wrk -t2 -c50 -d10s --latency -s bench/wrk/flex-mix.lua http://127.0.0.1:PORT -- KEY PATHS_FILE
--
-- wrk runs init() once per thread, each in its own Lua state; threads start
-- at different offsets (setup() numbers them) so the mix is spread from the
-- first request.
-- No response() callback: with one, wrk hands every response's headers and
-- body to Lua, which costs the client more than the server it measures.

local paths = {}
local i = 0
local headers = {}

-- setup() runs in the main Lua state, once per thread, before init().
local threads = 0
function setup(thread)
  thread:set("thread_index", threads)
  threads = threads + 1
end

function init(args)
  local key, file = args[1], args[2]
  if key == nil or file == nil then
    error("usage: -- KEY PATHS_FILE")
  end
  headers["X-API-Key"] = key
  headers["Accept"] = "application/x-ndjson"
  for line in io.lines(file) do
    if line ~= "" then paths[#paths + 1] = line end
  end
  if #paths == 0 then error("no paths in " .. file) end
  i = ((thread_index or 0) * 7) % #paths
end

function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i], headers)
end
