-- Email as input (core/mail.h): .eml files and mbox archives recognised by
-- content, headers set aside (Subject kept), bodies decoded (quoted-printable,
-- base64, charsets), multipart walked and HTML parts stripped as HTML, so
-- that templated spam with different headers and markup clusters by what it
-- says.
local core = require "shingle.core"
local pipeline = require "shingle.pipeline"
local input = require "shingle.input"
local shingle = require "shingle"
local support = require "support"
local tmpdir, write = support.tmpdir, support.write

local lua_cmd = support.shingle_cmd

-- Base64 with lines wrapped at 76 columns, as mailers write it.
local b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local q = {}
    for k = 3, 0, -1 do
      local v = math.floor(n / 64 ^ k) % 64
      q[#q + 1] = b64chars:sub(v + 1, v + 1)
    end
    if not b then q[3], q[4] = "=", "=" elseif not c then q[4] = "=" end
    out[#out + 1] = table.concat(q)
  end
  local s64 = table.concat(out)
  local lines = {}
  for i = 1, #s64, 76 do lines[#lines + 1] = s64:sub(i, i + 75) end
  return table.concat(lines, "\r\n")
end

-- Quoted-printable with soft line breaks at 76 columns (RFC 2045 6.7).
local function qp(s)
  local out, line = {}, ""
  for ch in s:gmatch(".") do
    local b = ch:byte()
    local enc = (b == 61 or b > 126 or (b < 32 and b ~= 10)) and ("=%02X"):format(b) or ch
    if ch == "\n" then
      out[#out + 1] = line
      line = ""
    else
      if #line + #enc > 75 then
        out[#out + 1] = line .. "="
        line = ""
      end
      line = line .. enc
    end
  end
  out[#out + 1] = line
  return table.concat(out, "\r\n")
end

local rand = support.rng(2024)

-- The spam template: what it says.
local pitch = "Dear valued customer, we are pleased to inform you that your account has been selected for an "
  .. "exclusive reward program. To claim your gift card worth five hundred dollars, simply confirm your "
  .. "details on our secure portal within the next forty eight hours. This offer is available only to a "
  .. "limited number of loyal customers and cannot be transferred. Our team verified every entry and "
  .. "your name appeared at the top of the list of winners this month. Do not miss this unique chance "
  .. "to receive the reward you deserve, act now before the offer expires at midnight on Friday."
local subject = "Your exclusive reward is waiting"

local function headers(i, extra)
  local h = {
    ("Return-Path: <bounce-%d@mailer%d.example>"):format(rand(99999), rand(50)),
    ("Received: from relay%d.example (relay%d.example [192.0.2.%d]) by mx.example.org with ESMTP id %d"):format(
      rand(99), rand(99), rand(254), rand(999999)),
    ("Message-ID: <%d.%d@mailer%d.example>"):format(rand(999999), i, rand(50)),
    ("Date: Mon, %d Jan 2024 %02d:%02d:00 +0000"):format(rand(28), rand(23), rand(59)),
    ("From: \"Rewards Team %d\" <rewards%d@promo%d.example>"):format(rand(9), rand(999), rand(99)),
    ("To: customer%d@example.org"):format(rand(99999)),
    ("X-Campaign-Id: %d-%d-%d"):format(rand(99999), rand(99999), rand(99999)),
    "MIME-Version: 1.0",
  }
  for _, x in ipairs(extra) do h[#h + 1] = x end
  return table.concat(h, "\r\n") .. "\r\n\r\n"
end

local function html_of(text, style)
  local words = {}
  for w in text:gmatch("%S+") do words[#words + 1] = w end
  local parts = {}
  for k, w in ipairs(words) do
    if style == 1 and k % 7 == 0 then w = ('<span style="color:#%06x;font-weight:bold">%s</span>'):format(rand(16777215), w) end
    if style == 2 and k % 5 == 0 then w = ('<a href="https://track%d.example/c?u=%d">%s</a>'):format(rand(9), rand(999999), w) end
    parts[#parts + 1] = w
  end
  return ('<!DOCTYPE html><html><head><style>body{font-family:Arial} .x%d{margin:0}</style></head>'
    .. '<body><table width="600"><tr><td class="x%d"><p>%s</p>'
    .. '<img src="https://pixel%d.example/o.gif?id=%d" width="1" height="1"></td></tr></table></body></html>')
    :format(rand(999), rand(999), table.concat(parts, " "), rand(9), rand(999999))
end

-- Six renderings of the one template, each with headers of its own.
local function spam(i)
  local kind = (i - 1) % 6
  local subj = kind == 3 and "=?UTF-8?B?" .. base64(subject):gsub("\r\n", "") .. "?=" or subject
  if kind == 0 then -- text/plain, 7bit
    return headers(i, { "Subject: " .. subj, "Content-Type: text/plain; charset=us-ascii" }) .. pitch .. "\r\n"
  elseif kind == 1 then -- text/html, quoted-printable
    return headers(i, { "Subject: " .. subj, "Content-Type: text/html; charset=utf-8",
      "Content-Transfer-Encoding: quoted-printable" }) .. qp(html_of(pitch, 1)) .. "\r\n"
  elseif kind == 2 then -- text/html, base64
    return headers(i, { "Subject: " .. subj, "Content-Type: text/html; charset=\"UTF-8\"",
      "Content-Transfer-Encoding: base64" }) .. base64(html_of(pitch, 2)) .. "\r\n"
  else -- multipart/alternative: a plain part (short) and the HTML part
    local b = ("=_Part_%d_%d"):format(rand(99999), i)
    return headers(i, { "Subject: " .. subj, ('Content-Type: multipart/alternative; boundary="%s"'):format(b) })
      .. "This is a multi-part message in MIME format.\r\n"
      .. "--" .. b .. "\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
      .. qp("View this message in a browser if it does not display correctly.") .. "\r\n"
      .. "--" .. b .. "\r\nContent-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: "
      .. (kind == 4 and "base64\r\n\r\n" .. base64(html_of(pitch, kind % 3)) or "quoted-printable\r\n\r\n" .. qp(html_of(pitch, 1)))
      .. "\r\n--" .. b .. "--\r\n"
  end
end

-- Unrelated messages with the spam's header template (same mailer, same
-- kind of headers and markup), so that headers or markup alone would join them.
local function ham(i)
  local text = table.concat(support.words(rand, 90, 30000), " ")
  return headers(100 + i, { "Subject: " .. subject, "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable" }) .. qp(html_of(text, 1)) .. "\r\n"
end

local function clusters_of(dir, inputs, extra)
  local cfg = { outdir = dir, quiet = true, threads = 2, threshold = 0.5 }
  for k, v in pairs(extra or {}) do cfg[k] = v end
  local p = pipeline.new(cfg)
  local sum = assert(p:run(inputs))
  local out = {}
  for c in p:clusters() do
    local u = {}
    for _, m in ipairs(c.members) do u[#u + 1] = m.url:match("[^/]+$") end
    table.sort(u)
    out[#out + 1] = table.concat(u, " ")
  end
  table.sort(out)
  return out, sum
end

describe("email messages", function()
  local dir
  setup(function()
    dir = tmpdir()
    assert(os.execute("mkdir -p " .. dir .. "/mail"))
    for i = 1, 6 do write(("%s/mail/spam%d.eml"):format(dir, i), spam(i)) end
    for i = 1, 6 do write(("%s/mail/ham%d"):format(dir, i), ham(i)) end -- no extension: by content
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("clusters templated spam by what it says: six renderings, one cluster, the other mail apart", function()
    local cl, sum = clusters_of(dir .. "/out", { dir .. "/mail" })
    assert.are.equal(12, sum.documents)
    assert.are.same({ "spam1.eml spam2.eml spam3.eml spam4.eml spam5.eml spam6.eml" }, cl)
  end)

  it("read as plain text (mail = false, what shingle did before), markup and headers decide instead", function()
    local cl = clusters_of(dir .. "/out-plain", { dir .. "/mail" }, { mail = false })
    assert.are_not.same({ "spam1.eml spam2.eml spam3.eml spam4.eml spam5.eml spam6.eml" }, cl)
  end)

  it("renders each message to the same words: subject and pitch, no header, no markup", function()
    local sh = shingle.new{ html = true, w = 4 }
    local ref = sh:sketch("<p>" .. subject .. "</p>" .. pitch, "full")
    for i = 1, 6 do
      local text, info = assert(core.mail_render(spam(i)))
      assert.are.equal(subject, info.subject)
      local r = ref:resemblance(sh:sketch(text, "full"))
      assert.is_true(r == 1, ("spam%d: resemblance %.3f to the template\n%s"):format(i, r, text))
    end
  end)

  it("recognises a message by content, and not a file that merely starts with a field", function()
    assert.are.equal("message", core.mail_sniff(spam(1)))
    assert.is_nil(core.mail_sniff("Package: shingle\nVersion: 1\nDepends: lua\n\ntext\n"))
    assert.is_nil(core.mail_sniff("Subject: notes\n\nmy notes on the meeting\n"))
  end)
end)

describe("charsets and transfer encodings", function()
  local words = "Gr\195\188\195\159e aus K\195\182ln: \226\128\156caf\195\169\226\128\157 \226\128\147 "
    .. "na\195\175ve r\195\169sum\195\169, 5 \226\130\172 the euro sign and quotes survive every encoding."
  -- the same text in ISO-8859-1 (no quotes or euro there), windows-1252 and UTF-8
  local latin1 = "Gr\252\223e aus K\246ln: \"caf\233\" - na\239ve r\233sum\233, 5 EUR the euro sign and quotes survive every encoding."
  local cp1252 = "Gr\252\223e aus K\246ln: \147caf\233\148 \150 na\239ve r\233sum\233, 5 \128 the euro sign and quotes survive every encoding."
  local function msg(cs, cte, body)
    return "From: a@example.org\r\nTo: b@example.org\r\nSubject: charsets\r\nMIME-Version: 1.0\r\n"
      .. "Content-Type: text/plain; charset=" .. cs .. "\r\nContent-Transfer-Encoding: " .. cte .. "\r\n\r\n" .. body .. "\r\n"
  end

  it("converts windows-1252 (quotes, dash, euro) and UTF-8 to the same text", function()
    -- line ends differ with the transfer encoding; the words do not
    local function norm(s) return (s:gsub("%s+", " ")) end
    local a = norm(core.mail_render(msg("windows-1252", "quoted-printable", qp(cp1252))))
    local b = norm(core.mail_render(msg("UTF-8", "base64", base64(words))))
    local c = norm(core.mail_render(msg("utf-8", "8bit", words)))
    assert.are.equal(b, a)
    assert.are.equal(b, c)
    assert.is_truthy(b:find(words, 1, true))
  end)

  it("converts ISO-8859-1 letters to UTF-8", function()
    local t = core.mail_render(msg("ISO-8859-1", "8bit", latin1))
    assert.is_truthy(t:find("Gr\195\188\195\159e aus K\195\182ln", 1, true), t)
    assert.is_truthy(t:find("r\195\169sum\195\169", 1, true), t)
  end)

  it("joins quoted-printable soft line breaks inside words", function()
    local long = ("supercalifragilistic"):rep(10)
    local body = qp("start " .. long .. " end")
    assert.is_truthy(body:find("=\r\n", 1, true)) -- the encoder did break the word
    local t = core.mail_render(msg("us-ascii", "quoted-printable", body))
    assert.is_truthy(t:find("start " .. long .. " end", 1, true))
  end)
end)

describe("mbox archives", function()
  local dir
  setup(function()
    dir = tmpdir()
    assert(os.execute("mkdir -p " .. dir .. "/arch"))
    local parts = {}
    for i = 1, 12 do
      local m = i <= 6 and spam(i) or ham(i)
      m = m:gsub("\r\n", "\n")
      if i == 2 then m = m .. "From the desk of the CEO: unescaped, and dated nowhere.\n>From here on, escaped once.\n" end
      parts[#parts + 1] = ("From sender%d@example.org Mon Jan  1 %02d:00:00 2024\n%s\n"):format(i, i, m)
    end
    write(dir .. "/arch/2024-January.txt", table.concat(parts))
    assert(os.execute("gzip -k " .. dir .. "/arch/2024-January.txt"))
    assert(os.execute("mv " .. dir .. "/arch/2024-January.txt.gz " .. dir .. "/2024-January.txt.gz"))
  end)
  teardown(function() os.execute("rm -rf " .. dir) end)

  it("splits an archive into its messages, recognised by content inside a directory", function()
    local cl, sum = clusters_of(dir .. "/out", { dir .. "/arch" })
    assert.are.equal(12, sum.documents)
    assert.are.equal(1, #cl)
    local ids = {}
    for n in cl[1]:gmatch("#(%d+)") do ids[#ids + 1] = tonumber(n) end
    table.sort(ids)
    assert.are.same({ 1, 2, 3, 4, 5, 6 }, ids)
  end)

  it("finds archives past the first 512 files of a directory (sniffed on a thread, a batch ahead)", function()
    local big = dir .. "/many"
    assert(os.execute("mkdir -p " .. big))
    local arch = support.read(dir .. "/arch/2024-January.txt")
    -- 1,100 files: archives at places 3, 700 (in the second sniff) and 1,100 (the last, in the third)
    for k = 1, 1100 do
      local name = ("%s/f%04d.txt"):format(big, k)
      if k == 3 or k == 700 or k == 1100 then write(name, arch)
      else write(name, ("plain file %d with a few words"):format(k)) end
    end
    local paths = input.walk(big)
    local src = input.paths_source(paths, {})
    local urls = {}
    repeat
      local docs, errors, done = src:batch(300)
      assert.are.same({}, errors)
      for _, d in ipairs(docs) do urls[#urls + 1] = d.url or d.path end
    until done
    assert.are.equal(1100 - 3 + 3 * 12, #urls)
    -- in order: each archive's messages at its place
    assert.are.equal(big .. "/f0003.txt#1", urls[3])
    assert.are.equal(big .. "/f0700.txt#12", urls[699 + 11 + 12])
    assert.are.equal(big .. "/f1100.txt#12", urls[#urls])
    -- the same kinds as sniffing every file on this thread
    local direct = core.mail_sniff_files(paths, 1, #paths)
    local h = core.mail_sniff_start(paths, 513, 1100)
    local threaded = h:wait()
    for k = 513, 1100 do assert.are.equal(direct[k], threaded[k], k) end
    assert.are.equal("mbox", threaded[1100])
  end)

  it("reads a gzip-compressed archive given as a file, with the From_ line's date", function()
    local docs = {}
    for d in input.documents(dir .. "/2024-January.txt.gz") do docs[#docs + 1] = d end
    assert.are.equal(12, #docs)
    assert.are.equal(dir .. "/2024-January.txt.gz#3", docs[3].url)
    assert.are.equal("Mon Jan  1 03:00:00 2024", docs[3].date)
    -- the unescaped "From the desk" line has no date: not a separator; ">From" lost one ">"
    assert.is_truthy(docs[2].text:find("\nFrom the desk of the CEO", 1, true))
    assert.is_truthy(docs[2].text:find("\nFrom here on, escaped once.", 1, true))
  end)

  it("reads an mbox from standard input", function()
    local out, code = support.run("zcat " .. dir .. "/2024-January.txt.gz | " .. lua_cmd() .. " cluster -q - -o " .. dir .. "/stdin")
    assert.are.equal(0, code, out)
    assert.is_truthy(out:find("documents 12 (skipped 0)", 1, true), out)
    assert.is_truthy(out:find("clusters 1 with 6 documents", 1, true), out)
  end)

  it("skips a message over the size limit, naming it, and reads the others", function()
    local big = "From big@example.org Mon Jan  1 00:00:00 2024\nFrom: big@example.org\nSubject: big\n\n"
      .. ("many words here "):rep(20000) .. "\n"
      .. "From small@example.org Mon Jan  1 00:00:01 2024\nFrom: small@example.org\nSubject: small\n\nsmall body\n"
    write(dir .. "/big.mbox", big)
    local src = assert(input.source(dir .. "/big.mbox", { max_bytes = 10000 }))
    local docs, errs = {}, {}
    repeat
      local d, e, done = src:batch(10)
      for _, x in ipairs(d) do docs[#docs + 1] = x end
      for _, x in ipairs(e) do errs[#errs + 1] = x end
    until done
    assert.are.equal(1, #docs)
    assert.is_truthy(docs[1].text:find("small body", 1, true))
    assert.is_truthy(errs[1]:find("big.mbox: message 1 of the mbox is larger than the limit of 10000 bytes", 1, true), errs[1])
  end)
end)
