-- Melodies that match when transposed: the MIDI extractor turns a file into
-- the intervals between successive notes, and shingles of 4 intervals compare
-- melodies the way 10-word shingles compare texts.
--   lua5.4 examples/midi_melodies.lua
local shingle = require "shingle"
local extractors = require "shingle.extractors"
local midi = require "shingle.extractors.midi"

local ode = { 64, 64, 65, 67, 67, 65, 64, 62, 60, 60, 62, 64, 64, 62, 62, 64, 64, 65, 67, 67, 65, 64, 62, 60, 60, 62, 64, 62, 60, 60 }
local up_a_fourth, variation = {}, {}
for i, p in ipairs(ode) do up_a_fourth[i] = p + 5 end
for i, p in ipairs(ode) do variation[i] = (i > 20) and p + (i % 3) or p end
local twinkle = { 60, 60, 67, 67, 69, 69, 67, 65, 65, 64, 64, 62, 62, 60, 67, 67, 65, 65, 64, 64, 62, 67, 67, 65, 65, 64, 64, 62 }

local sh = shingle.new{ w = 4, sketch = "full" }
local function sketch(pitches) return assert(extractors.sketch(midi, sh, midi.encode(pitches))) end
local base = sketch(ode)
for _, case in ipairs({ { "transposed up a fourth", up_a_fourth }, { "varied ending", variation }, { "another tune", twinkle } }) do
  print(("%-24s resemblance %.2f"):format(case[1], base:resemblance(sketch(case[2]))))
end
