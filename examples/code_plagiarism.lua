-- Copied source code behind renamed variables and reformatting ("Intellectual
-- property and plagiarism" in "Syntactic Clustering of the Web"): the code
-- extractor normalises identifiers, numbers and strings, and drops comments.
--   lua5.4 examples/code_plagiarism.lua
local shingle = require "shingle"
local extractors = require "shingle.extractors"

local original = [[
static int binary_search(const int *a, int n, int key) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] == key) return mid;
        if (a[mid] < key) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}]]
local copied = [[
/* my own search, honest */
static int find(const int *arr, int len, int target)
{ int left = 0, right = len - 1;   // bounds
  while (left <= right) { int m = left + (right - left) / 2;
    if (arr[m] == target) return m;
    if (arr[m] < target) left = m + 1; else right = m - 1; }
  return -1; }]]
local different = [[
static int sum(const int *a, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += a[i];
    return s;
}]]

local ex = assert(extractors.get("code"))
local sh = shingle.new{ w = 8, sketch = "full" }
local a = assert(extractors.sketch(ex, sh, original))
print(("copied with renames:  resemblance %.2f"):format(a:resemblance(assert(extractors.sketch(ex, sh, copied)))))
print(("different function:   resemblance %.2f"):format(a:resemblance(assert(extractors.sketch(ex, sh, different)))))
print(("plain text shingles see the copy as: %.2f"):format(shingle.exact(original, copied, { w = 8 }).resemblance))
