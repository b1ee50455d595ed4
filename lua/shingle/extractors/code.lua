--- Source code as a token sequence with identifiers, numbers and strings
-- normalised and comments dropped (shingle.rules.code_tokens): renaming
-- variables or reformatting does not hide a copy ("Intellectual property and
-- plagiarism" in "Syntactic Clustering of the Web").
local rules = require "shingle.rules"

return {
  name = "code",
  kind = "sequence",
  tokenizer = "code", -- the pipeline tokenizes in C (core/codetok.c): extract is its reference
  extract = function(bytes) return rules.code_tokens(bytes) end,
}
