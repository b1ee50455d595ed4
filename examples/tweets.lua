-- Near-duplicate retweets, as in the 2009 "Shingling" post: short texts, so a
-- low modulus (MOD_3) and short shingles (w = 3); retweet markers, @mentions
-- and URLs dropped by the "tweet" rule set; the score of an indexed tweet is
-- how much of the query it contains.
--   lua5.4 examples/tweets.lua [TWEETS_FILE] [QUERY]
local shingle = require "shingle"

local path = arg[1] or "samples/tweets/tweets.txt"
local query = arg[2] or "confbot: 1 week until #luaconf26 - let me hear you say hooray!"
local sh = shingle.new{ canon = "tweet", w = 3, sketch = "mod", m = 3 }

local tweets = {}
for line in io.lines(path) do
  if line:match("%S") then tweets[#tweets + 1] = { text = line, sketch = assert(sh:sketch(line)) } end
end

local q = assert(sh:sketch(query))
local found = 0
for _, t in ipairs(tweets) do
  -- the query's containment in the tweet: matched shingles over the query's shingles
  if t.text ~= query and q:containment(t.sketch) >= 0.8 then
    found = found + 1
    print(("%d: %s"):format(found, t.text))
  end
end
print(("%d near-duplicates of: %s"):format(found, query))
