--- MIDI files as melodies: the sequence of intervals between successive
-- note onsets (in semitones), so a transposed copy of a melody gives the
-- same sequence. Reads Standard MIDI Files (formats 0 and 1): note-on events
-- of all tracks, merged by time; chords count from their lowest note.
local M = { name = "midi", kind = "sequence", c = "midi" } -- the pipeline runs core/midi.c: extract is its reference

local function u32(s, i) local a, b, c, d = s:byte(i, i + 3) return ((a * 256 + b) * 256 + c) * 256 + d end
local function u16(s, i) local a, b = s:byte(i, i + 1) return a * 256 + b end

-- a variable-length quantity at i: value, next position
local function vlq(s, i, limit)
  local v = 0
  for _ = 1, 4 do
    if i > limit then return nil end
    local b = s:byte(i)
    i = i + 1
    v = v * 128 + b % 128
    if b < 128 then return v, i end
  end
  return nil
end

--- The note-on events of a MIDI file as { time, pitch } sorted by time, or nil, err.
function M.notes(bytes, path)
  local where = path or "MIDI data"
  if #bytes < 14 or bytes:sub(1, 4) ~= "MThd" then return nil, where .. ": not a MIDI file (no MThd header at byte 0)" end
  local hlen = u32(bytes, 5)
  local ntracks = u16(bytes, 11)
  local pos = 9 + hlen
  local notes = {}
  for _ = 1, ntracks do
    if pos + 7 > #bytes then return nil, ("%s: truncated before a track header at byte %d"):format(where, pos - 1) end
    if bytes:sub(pos, pos + 3) ~= "MTrk" then return nil, ("%s: expected a track (MTrk) at byte %d"):format(where, pos - 1) end
    local len = u32(bytes, pos + 4)
    local i, stop = pos + 8, math.min(#bytes, pos + 7 + len)
    local t, status = 0, nil
    while i <= stop do
      local dt
      dt, i = vlq(bytes, i, stop)
      if not dt then return nil, ("%s: bad delta time near byte %d"):format(where, stop) end
      t = t + dt
      local b = bytes:byte(i)
      if not b then break end
      if b >= 0x80 then status = b; i = i + 1 end
      if not status then return nil, ("%s: running status without a status byte at byte %d"):format(where, i - 1) end
      local hi = status - status % 16
      if status == 0xFF then
        local l, at = nil, i + 1
        l, i = vlq(bytes, at, stop)
        if not l then return nil, ("%s: bad meta event near byte %d"):format(where, at) end
        i = i + l
        status = nil
      elseif status == 0xF0 or status == 0xF7 then
        local l, at = nil, i
        l, i = vlq(bytes, at, stop)
        if not l then return nil, ("%s: bad sysex near byte %d"):format(where, at) end
        i = i + l
        status = nil
      elseif hi == 0x90 then
        local pitch, vel = bytes:byte(i, i + 1)
        if not vel then break end
        if vel > 0 then notes[#notes + 1] = { t, pitch } end
        i = i + 2
      elseif hi == 0xC0 or hi == 0xD0 then
        i = i + 1
      else
        i = i + 2
      end
    end
    pos = pos + 8 + len
  end
  table.sort(notes, function(a, b) if a[1] ~= b[1] then return a[1] < b[1] end return a[2] < b[2] end)
  return notes
end

function M.extract(bytes, path)
  local notes, err = M.notes(bytes, path)
  if not notes then return nil, err end
  local seq, last_t, last_p = {}, nil, nil
  for _, n in ipairs(notes) do
    if n[1] ~= last_t then -- the lowest note of each onset
      if last_p then seq[#seq + 1] = "i" .. (n[2] - last_p) end
      last_t, last_p = n[1], n[2]
    end
  end
  return seq
end

--- A format-0 MIDI file of a melody (pitches, one per quarter note): for
-- examples and specs.
function M.encode(pitches)
  local ev = {}
  for _, p in ipairs(pitches) do
    ev[#ev + 1] = string.char(0x00, 0x90, p, 0x40) -- note on now
    ev[#ev + 1] = string.char(0x83, 0x60, 0x80, p, 0x40) -- note off after 480 ticks
  end
  ev[#ev + 1] = string.char(0x00, 0xFF, 0x2F, 0x00)
  local track = table.concat(ev)
  local function be32(n) return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256) end
  return "MThd" .. be32(6) .. string.char(0, 0, 0, 1, 0x01, 0xE0) .. "MTrk" .. be32(#track) .. track
end

return M
