/* shingle.Shingler: an independent, configured shingler (no global state; any
 * number can live in one Lua state). */
#include <stdlib.h>
#include <string.h>
#include "document.h"
#include "lshingle.h"

shl_shingler *shl_checkshingler(lua_State *L, int i)
{
    shl_shingler *u = (shl_shingler *)luaL_checkudata(L, i, SHL_SHINGLER);
    luaL_argcheck(L, !u->closed, i, "the shingler is closed");
    return u;
}

static const char *const kinds[] = { "", "min", "mod", "minmod", "class", "full", NULL };
static const char *const token_modes[] = { "rabin", "pad8", NULL };
static const char *const options[] = { "B", "A", NULL };
static const char *const invalids[] = { "error", "skip", "latin1", NULL };
/* as sh_simd_name gives them, in the order of sh_simd */
static const char *const simds[] = { "auto", "portable", "sse2", "avx2", "avx512", NULL };

/* core.new(config) -> shingler. The facade validates and documents the
 * options; this checks ranges again, since core can be used directly. */
static int shingler_new(lua_State *L)
{
    shl_shingler *u;
    sh_shingler_config c;
    sh_error err;
    lua_Integer s, m;
    luaL_checktype(L, 1, LUA_TTABLE);
    memset(&c, 0, sizeof c);
    c.w = (int)shl_opt_int(L, 1, "w", 10);
    c.k = (int)shl_opt_int(L, 1, "k", 64);
    c.seed = shl_opt_u64(L, 1, "seed", 0);
    c.poly = shl_opt_u64(L, 1, "poly", 0);
    c.idpoly = shl_opt_u64(L, 1, "idpoly", 0);
    c.tokens = (sh_token_mode)shl_opt_enum(L, 1, "tokens", "rabin", token_modes);
    c.option = (sh_option)shl_opt_enum(L, 1, "option", "B", options);
    c.canon.flags = (shl_opt_bool(L, 1, "html", 0) ? SH_CANON_HTML : 0) |
                    (shl_opt_bool(L, 1, "lowercase", 1) ? SH_CANON_LOWER : 0) |
                    (shl_opt_bool(L, 1, "numbers", 1) ? SH_CANON_NUMBERS : 0) |
                    (shl_opt_bool(L, 1, "punctuation", 0) ? SH_CANON_PUNCT : 0) |
                    (shl_opt_bool(L, 1, "fold", 0) ? SH_CANON_FOLD : 0) |
                    (shl_opt_bool(L, 1, "code", 0) ? SH_CANON_CODE : 0) |
                    (shl_opt_bool(L, 1, "tweet", 0) ? SH_CANON_TWEET : 0);
    c.canon.invalid = (sh_utf8_mode)shl_opt_enum(L, 1, "invalid", "error", invalids);
    c.simd = (sh_simd)shl_opt_enum(L, 1, "simd", "auto", simds);
    s = shl_opt_int(L, 1, "s", 200);
    m = shl_opt_int(L, 1, "m", 25);
    luaL_argcheck(L, s >= 1 && s <= 1000000, 1, "sketch size s must be 1 to 1000000");
    luaL_argcheck(L, m >= 1 && (uint64_t)m <= SH_SKETCH_MAX_M, 1, "modulus m must be 1 to 2^32");
    u = (shl_shingler *)shl_newhandle(L, sizeof *u, SHL_SHINGLER);
    u->closed = 1; /* nothing to free until init succeeds */
    if (sh_shingler_init(&u->sh, &c, &err) != SH_OK) return shl_raise(L, &err);
    u->sp.kind = (uint8_t)shl_opt_enum(L, 1, "sketch", "min", kinds);
    luaL_argcheck(L, u->sp.kind != 0, 1, "option 'sketch' must be min, mod, minmod, class or full");
    u->sp.s = (uint32_t)s;
    u->sp.m = (uint64_t)m;
    u->sp.rules = shl_opt_u64(L, 1, "rules", 0);
    {
        lua_Integer fl = shl_opt_int(L, 1, "floor", 8);
        luaL_argcheck(L, fl >= 0 && fl <= 1000, 1, "floor must be 0 to 1000");
        u->sp.floor = (uint32_t)fl;
    }
    {
        /* a large plain text (a query, on the caller's thread) is shingled
         * on two threads (sh_work.threads) unless the caller says 1 */
        lua_Integer th = shl_opt_int(L, 1, "threads", 2);
        luaL_argcheck(L, th == 1 || th == 2, 1, "threads must be 1 or 2");
        u->work.threads = (int)th;
    }
    u->closed = 0;
    return 1;
}

/* sh:close(): frees the scratch; also __gc and __close. Idempotent. */
static int shingler_close(lua_State *L)
{
    shl_shingler *u = (shl_shingler *)luaL_checkudata(L, 1, SHL_SHINGLER);
    if (!u->closed) {
        sh_work_free(&u->work);
        u->closed = 1;
    }
    return 0;
}

/* A text the canonicalizer rejects (invalid UTF-8 with invalid = "error") is
 * the input's fault: nil, message; anything else (memory) raises. */
static int text_failed(lua_State *L, const sh_error *err)
{
    return err->code == SH_EUTF8 ? shl_fail(L, err) : shl_raise(L, err);
}

static int kind_arg(lua_State *L, int i, int def)
{
    if (lua_isnoneornil(L, i)) return def;
    {
        int k = luaL_checkoption(L, i, NULL, kinds);
        luaL_argcheck(L, k != 0, i, "sketch kind must be min, mod, minmod, class or full");
        return k;
    }
}

/* The sketch of the shingles in u->work, made straight into a new userdata. */
static int build(lua_State *L, shl_shingler *u, int kind, int features, uint64_t ntok)
{
    sh_sketch_params p = u->sp;
    sh_sketch hdr, *sk;
    sh_error err;
    p.kind = (uint8_t)kind;
    if (sh_sketch_compute(&u->sh, &u->work, &p, features, ntok, &hdr, &err) != SH_OK) return shl_raise(L, &err);
    sk = shl_newsketch(L, hdr.n);
    *sk = hdr;
    if (hdr.n) memcpy(sk->v, u->work.vals, hdr.n * sizeof *sk->v); /* vals is NULL before the first shingle */
    return 1;
}

/* sh:sketch_text(text [, kind]) -> sketch, or nil, message for input the
 * canonicalizer rejects (invalid UTF-8 with invalid = "error"). */
static int shingler_sketch_text(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    int kind = kind_arg(L, 3, u->sp.kind);
    sh_error err;
    if (sh_shingle_text(&u->sh, &u->work, s, n, &err) != SH_OK) {
        return text_failed(L, &err);
    }
    return build(L, u, kind, 0, sh_work_tokens(&u->work));
}

/* Fill work.ids from a Lua list: strings are tokens (hashed like canonical
 * tokens), numbers and 8-byte values given as integers are ids as they are. */
static void ids_from_list(lua_State *L, shl_shingler *u, int t)
{
    shl_ids_from_list(L, t, &u->sh, &u->work);
}

/* sh:sketch_tokens(list [, kind]): shingle a token sequence given as a list */
static int shingler_sketch_tokens(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    int kind;
    sh_error err;
    luaL_checktype(L, 2, LUA_TTABLE);
    kind = kind_arg(L, 3, u->sp.kind);
    ids_from_list(L, u, 2);
    if (sh_shingle_ids(&u->sh, &u->work, &err) != SH_OK) return shl_raise(L, &err);
    return build(L, u, kind, 0, u->work.n_ids);
}

/* sh:sketch_features(list [, kind]): sketch a set of features (no shingling) */
static int shingler_sketch_features(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    sh_error err;
    int kind;
    luaL_checktype(L, 2, LUA_TTABLE);
    kind = kind_arg(L, 3, u->sp.kind);
    ids_from_list(L, u, 2);
    if (sh_shingle_features(&u->work, &err) != SH_OK) return shl_raise(L, &err);
    return build(L, u, kind, 1, u->work.n_ids);
}

/* A box of one document's results (sh_doc_out), released when collected. */
static void release_doc(void *p)
{
    sh_doc_release((sh_doc_out *)p);
}

/* sh:sketch_doc(bytes, list [, { features, full, sig_k, max_shingles }]) -> { sketch, full,
 * raw, canonical, set, tokens, sig }: a document that Lua canonicalized (list:
 * its tokens, or with features its feature set, as sketch_tokens and
 * sketch_features take them; bytes: the document as read) sketched as the
 * thread pool sketches the others (core/document.h), so it gets the same
 * fingerprints and signature whichever path made it. full: also the full
 * shingle set, which then makes the set fingerprint (exact verification);
 * sig_k: a min-hash signature of that many values, as a string of sig_k
 * little-endian u64s. max_shingles (0: none): a document with more shingles
 * gives nil, message. */
static int shingler_sketch_doc(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    size_t len;
    const char *bytes = luaL_checklstring(L, 2, &len);
    int features = 0, full = 0;
    lua_Integer sig_k = 0;
    lua_Number max_shingles = 0;
    sh_doc_out *o;
    sh_error err;
    luaL_checktype(L, 3, LUA_TTABLE);
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        features = shl_opt_bool(L, 4, "features", 0);
        full = shl_opt_bool(L, 4, "full", 0);
        sig_k = shl_opt_int(L, 4, "sig_k", 0);
        luaL_argcheck(L, sig_k >= 0 && sig_k <= 4096, 4, "sig_k must be 0 to 4096");
        max_shingles = shl_opt_num(L, 4, "max_shingles", 0);
        luaL_argcheck(L, max_shingles >= 0, 4, "max_shingles must be 0 (no limit) or a positive count");
    }
    ids_from_list(L, u, 3);
    u->work.max_shingles = (size_t)max_shingles;
    if ((features ? sh_shingle_features(&u->work, &err) : sh_shingle_ids(&u->sh, &u->work, &err)) != SH_OK) {
        u->work.max_shingles = 0;
        if (err.code == SH_ELIMIT) return shl_fail(L, &err); /* the document's problem, not a misuse */
        return shl_raise(L, &err);
    }
    u->work.max_shingles = 0;
    o = (sh_doc_out *)shl_newbox(L, sizeof *o, release_doc);
    if (sh_doc_sketch(&u->sh, &u->work, &u->sp, features, full, (uint32_t)sig_k, bytes, len, u->work.n_ids, o, &err) != SH_OK)
        return shl_raise(L, &err);
    lua_createtable(L, 0, 7);
    shl_pushsketch(L, o->sketch); lua_setfield(L, -2, "sketch");
    if (o->full) { shl_pushsketch(L, o->full); lua_setfield(L, -2, "full"); }
    shl_pushu64(L, o->raw_fp); lua_setfield(L, -2, "raw");
    shl_pushu64(L, o->canon_fp); lua_setfield(L, -2, "canonical");
    shl_pushu64(L, o->set_fp); lua_setfield(L, -2, "set");
    SHL_SETI(L, "tokens", o->n_tokens);
    if (o->sig) {
        char *b = (char *)lua_newuserdata(L, 8 * (size_t)sig_k);
        lua_Integer j;
        for (j = 0; j < sig_k; j++) sh_store_le64(b + 8 * j, o->sig[j]);
        lua_pushlstring(L, b, 8 * (size_t)sig_k);
        lua_setfield(L, -3, "sig");
        lua_pop(L, 1);
    }
    shl_box_done(L, -2);
    return 1;
}

/* sh:shingle_list(text) -> fingerprints, first byte, last byte (1-based,
 * inclusive, as string.sub takes them) of every shingle in document order;
 * sh:shingle_list(tokens) -> the fingerprints of a token list's shingles
 * (rule sets with Lua steps: their shingles without a window per call) */
static int shingler_shingle_list(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    size_t n, i;
    const char *s;
    sh_error err;
    sh_work *w = &u->work;
    if (lua_type(L, 2) == LUA_TTABLE) {
        ids_from_list(L, u, 2);
        if (sh_shingle_ids(&u->sh, w, &err) != SH_OK) return shl_raise(L, &err);
        lua_createtable(L, (int)w->n_fps, 0);
        for (i = 0; i < w->n_fps; i++) {
            shl_pushu64(L, w->fps[i]);
            lua_rawseti(L, -2, (int)(i + 1));
        }
        return 1;
    }
    s = luaL_checklstring(L, 2, &n);
    if (sh_shingle_text(&u->sh, w, s, n, &err) != SH_OK) {
        return text_failed(L, &err);
    }
    lua_createtable(L, (int)w->n_fps, 0);
    lua_createtable(L, (int)w->n_fps, 0);
    lua_createtable(L, (int)w->n_fps, 0);
    for (i = 0; i < w->n_fps; i++) {
        size_t first, end;
        sh_shingle_span(&u->sh, w, i, &first, &end);
        shl_pushu64(L, w->fps[i]);
        lua_rawseti(L, -4, (int)(i + 1));
        lua_pushinteger(L, (lua_Integer)first + 1);
        lua_rawseti(L, -3, (int)(i + 1));
        lua_pushinteger(L, (lua_Integer)end);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 3;
}

/* sh:sketch(x [, kind]): x a text (as sketch_text) or a list of tokens (as
 * sketch_tokens). In the method table itself, so that the facade never adds
 * methods to this shared table. */
static int shingler_sketch(lua_State *L)
{
    shl_checkshingler(L, 1);
    switch (lua_type(L, 2)) {
    case LUA_TSTRING: return shingler_sketch_text(L);
    case LUA_TTABLE: return shingler_sketch_tokens(L);
    default:
        return luaL_argerror(L, 2, lua_pushfstring(L, "a text string or a list of tokens expected, got %s",
                                                   luaL_typename(L, 2)));
    }
}

static int shingles_next(lua_State *L)
{
    lua_Integer i = lua_tointeger(L, lua_upvalueindex(4)) + 1;
    if ((size_t)i > shl_rawlen(L, lua_upvalueindex(1))) return 0;
    lua_pushinteger(L, i);
    lua_replace(L, lua_upvalueindex(4));
    lua_pushinteger(L, i);
    lua_rawgeti(L, lua_upvalueindex(1), (int)i);
    lua_rawgeti(L, lua_upvalueindex(2), (int)i);
    lua_rawgeti(L, lua_upvalueindex(3), (int)i);
    return 4;
}

/* sh:shingles(text) -> iterator over (index, fingerprint, first byte, last
 * byte) of every shingle, the byte range (1-based, inclusive) being the
 * original text it covers. Raises on text the canonicalizer rejects. */
static int shingler_shingles(lua_State *L)
{
    lua_settop(L, 2);
    shingler_shingle_list(L); /* fingerprints, firsts, lasts at 3..5; or nil, message */
    if (!lua_istable(L, 3)) return luaL_error(L, "%s", lua_tostring(L, 4));
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, shingles_next, 4);
    return 1;
}

/* sh:tokens(text) -> canonical tokens, first byte, last byte */
static int shingler_tokens(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    size_t n, i;
    const char *s = luaL_checklstring(L, 2, &n);
    sh_error err;
    sh_tokens *t = &u->work.toks;
    if (sh_canon_tokenize(&u->sh.c.canon, s, n, t, &err) != SH_OK) {
        return text_failed(L, &err);
    }
    lua_createtable(L, (int)t->n, 0);
    lua_createtable(L, (int)t->n, 0);
    lua_createtable(L, (int)t->n, 0);
    for (i = 0; i < t->n; i++) {
        lua_pushlstring(L, t->text + t->tok[i].off, t->tok[i].len);
        lua_rawseti(L, -4, (int)(i + 1));
        lua_pushinteger(L, (lua_Integer)t->tok[i].src_off + 1);
        lua_rawseti(L, -3, (int)(i + 1));
        lua_pushinteger(L, (lua_Integer)(t->tok[i].src_off + t->tok[i].src_len));
        lua_rawseti(L, -2, (int)(i + 1));
    }
    return 3;
}

/* sh:fingerprint(s): the AUG Rabin fingerprint of a whole string under P
 * (documents, URLs); the "append nulls" form, so it looks random. */
static int shingler_fingerprint(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    shl_pushu64(L, sh_rabin_aug(&u->sh.win, s, n));
    return 1;
}

static int shingler_token_id(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    shl_pushu64(L, sh_token_id(&u->sh, s, n));
    return 1;
}

/* sh:window(ids): the fingerprint of a window of token ids (integers, or
 * 8-byte strings as token_id gives them on LuaJIT) computed from scratch,
 * byte by byte: the slow reference the sliding window must equal. */
static int shingler_window(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    size_t n, i;
    uint64_t *ids;
    luaL_checktype(L, 2, LUA_TTABLE);
    n = shl_rawlen(L, 2);
    if (!(ids = sh_work_ids(&u->work, n))) return luaL_error(L, "out of memory");
    for (i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)(i + 1));
        ids[i] = shl_checku64(L, lua_gettop(L));
        lua_pop(L, 1);
    }
    shl_pushu64(L, sh_window_slow(&u->sh, ids, n));
    return 1;
}

static int shingler_params(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    const sh_shingler_config *c = &u->sh.c;
    lua_createtable(L, 0, 16);
    lua_pushinteger(L, c->w); lua_setfield(L, -2, "w");
    lua_pushinteger(L, c->k); lua_setfield(L, -2, "k");
    shl_pushu64(L, c->seed); lua_setfield(L, -2, "seed");
    shl_pushu64(L, c->poly); lua_setfield(L, -2, "poly");
    shl_pushu64(L, c->idpoly); lua_setfield(L, -2, "idpoly");
    lua_pushstring(L, token_modes[c->tokens]); lua_setfield(L, -2, "tokens");
    lua_pushstring(L, options[c->option]); lua_setfield(L, -2, "option");
    lua_pushstring(L, kinds[u->sp.kind]); lua_setfield(L, -2, "sketch");
    lua_pushinteger(L, u->sp.s); lua_setfield(L, -2, "s");
    lua_pushinteger(L, (lua_Integer)u->sp.m); lua_setfield(L, -2, "m");
    lua_pushinteger(L, (lua_Integer)u->sp.floor); lua_setfield(L, -2, "floor");
    shl_pushu64(L, u->sp.rules); lua_setfield(L, -2, "rules");
    lua_pushboolean(L, (c->canon.flags & SH_CANON_HTML) != 0); lua_setfield(L, -2, "html");
    lua_pushboolean(L, (c->canon.flags & SH_CANON_LOWER) != 0); lua_setfield(L, -2, "lowercase");
    lua_pushboolean(L, (c->canon.flags & SH_CANON_NUMBERS) != 0); lua_setfield(L, -2, "numbers");
    lua_pushboolean(L, (c->canon.flags & SH_CANON_PUNCT) != 0); lua_setfield(L, -2, "punctuation");
    lua_pushboolean(L, (c->canon.flags & SH_CANON_FOLD) != 0); lua_setfield(L, -2, "fold");
    lua_pushstring(L, invalids[c->canon.invalid]); lua_setfield(L, -2, "invalid");
    lua_pushstring(L, sh_simd_name(u->sh.level)); lua_setfield(L, -2, "simd");
    return 1;
}

static int shingler_tostring(lua_State *L)
{
    shl_shingler *u = shl_checkshingler(L, 1);
    lua_pushfstring(L, "shingle.Shingler(w=%d, k=%d, sketch=%s)", u->sh.c.w, u->sh.c.k, kinds[u->sp.kind]);
    return 1;
}

void shl_open_shingler(lua_State *L)
{
    static const luaL_Reg methods[] = {
        { "sketch_text", shingler_sketch_text }, { "sketch_tokens", shingler_sketch_tokens },
        { "sketch_features", shingler_sketch_features }, { "sketch_doc", shingler_sketch_doc },
        { "shingle_list", shingler_shingle_list }, { "tokens", shingler_tokens }, { "fingerprint", shingler_fingerprint },
        { "token_id", shingler_token_id }, { "window", shingler_window },
        { "params", shingler_params }, { "sketch", shingler_sketch }, { "shingles", shingler_shingles },
        { NULL, NULL }
    };
    static const luaL_Reg meta[] = { { "__tostring", shingler_tostring }, { NULL, NULL } };
    shl_newclass(L, SHL_SHINGLER, methods, meta, shingler_close);
    luaL_getmetatable(L, SHL_SHINGLER);
    lua_getfield(L, -1, "__index");
    lua_setfield(L, -3, "Shingler");   /* module.Shingler: the method table */
    lua_pop(L, 1);
    lua_pushcfunction(L, shingler_new);
    lua_setfield(L, -2, "new");
}
