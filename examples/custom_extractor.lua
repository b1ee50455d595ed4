-- A custom feature extractor: rows of a CSV table as the features of a
-- "database" (the paper: features of "images, video sequences, or databases"),
-- so two tables sharing most rows resemble each other whatever their order.
--   lua5.4 examples/custom_extractor.lua
local shingle = require "shingle"
local extractors = require "shingle.extractors"

local csv_rows = {
  name = "csv-rows",
  kind = "set",
  extract = function(bytes)
    local rows = {}
    for line in bytes:gmatch("[^\r\n]+") do rows[#rows + 1] = line:gsub("%s*,%s*", ",") end
    table.remove(rows, 1) -- the header
    return rows
  end,
}
assert(extractors.check(csv_rows, "csv-rows"))

local a = "id,name,city\n1,Ada,London\n2,Alan,Wilmslow\n3,Grace,Arlington\n4,Edsger,Austin\n"
local b = "id, name, city\n4, Edsger, Austin\n2, Alan, Wilmslow\n1, Ada, London\n5, Barbara, Boston\n"
local sh = shingle.new{ sketch = "full" }
local sa, sb = extractors.sketch(csv_rows, sh, a), extractors.sketch(csv_rows, sh, b)
local e = sa:estimate(sb)
print(("rows shared: resemblance %.2f, containment of A in B %.2f"):format(e.resemblance, e.containment))
-- the same extractor in a clustering run: pipeline.new{ extractor = csv_rows, ... }
-- or, saved as a file returning the table: shingle cluster --extractor ./csv_rows.lua ...
