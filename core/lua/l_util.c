/* shingle.core functions that stand alone: Rabin fingerprints under a given
 * polynomial, irreducibility, the mixer, the confidence of section 4.2. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "lshingle.h"
#include "canon.h"

static int check_degree(lua_State *L, int i, lua_Integer def)
{
    lua_Integer k = luaL_optinteger(L, i, def);
    luaL_argcheck(L, k >= 16 && k <= 64, i, "degree k must be 16 to 64");
    return (int)k;
}

/* core.rabin(s, poly, k [, form]) with form "aug" (default), "raw" or "aug1" */
static int u_rabin(lua_State *L)
{
    static const char *const forms[] = { "aug", "raw", "aug1", NULL };
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    uint64_t p = shl_checku64(L, 2);
    int k = check_degree(L, 3, 64);
    int form = luaL_checkoption(L, 4, "aug", forms);
    sh_rabin r;
    uint64_t f;
    luaL_argcheck(L, k == 64 || (p >> k) == 0, 2, "give only the low k bits of the polynomial");
    sh_rabin_init(&r, p, k);
    f = form == 0 ? sh_rabin_aug(&r, s, n) : form == 1 ? sh_rabin_raw(&r, s, n) : sh_rabin_aug1(&r, s, n);
    shl_pushu64(L, f);
    return 1;
}

static int u_irreducible(lua_State *L)
{
    uint64_t p = shl_checku64(L, 1);
    int k = check_degree(L, 2, 64);
    lua_pushboolean(L, sh_poly_irreducible(p, k));
    return 1;
}

static int u_random_poly(lua_State *L)
{
    uint64_t seed = shl_checku64(L, 1);
    int k = check_degree(L, 2, 64);
    shl_pushu64(L, sh_poly_random(seed, k));
    return 1;
}

/* core.simd() -> the instruction set level the hot loops use by default:
 * the best the processor and build have, capped by SHINGLE_SIMD. */
static int u_simd(lua_State *L)
{
    int bad;
    sh_simd best = sh_simd_best(&bad);
    if (bad) return luaL_error(L, "SHINGLE_SIMD=%s names no level; use auto, portable, sse2, avx2 or avx512", getenv("SHINGLE_SIMD"));
    lua_pushstring(L, sh_simd_name(best));
    return 1;
}

static int u_mix(lua_State *L)
{
    shl_pushu64(L, sh_mix(shl_checku64(L, 1)));
    return 1;
}

/* fn(s, r, eps) of section 4.2, its arguments checked. */
static int binomial(lua_State *L, double (*fn)(uint32_t, double, double))
{
    lua_Integer s = luaL_checkinteger(L, 1);
    double r = luaL_checknumber(L, 2), eps = luaL_checknumber(L, 3);
    luaL_argcheck(L, s >= 1 && s <= 100000000, 1, "sample size s must be 1 to 10^8");
    luaL_argcheck(L, r >= 0 && r <= 1, 2, "resemblance r must be between 0 and 1");
    luaL_argcheck(L, eps >= 0 && eps <= 1, 3, "epsilon must be between 0 and 1");
    lua_pushnumber(L, fn((uint32_t)s, r, eps));
    return 1;
}

static int u_confidence(lua_State *L) { return binomial(L, sh_confidence); }
static int u_error_probability(lua_State *L) { return binomial(L, sh_error_probability); }

static int u_size_class(lua_State *L)
{
    lua_Integer n = luaL_checkinteger(L, 1);
    luaL_argcheck(L, n >= 0, 1, "a shingle count is not negative");
    lua_pushinteger(L, (lua_Integer)sh_size_class((uint64_t)n));
    return 1;
}

/* core.tohex(fp): a fingerprint as 16 hex digits, the same on every Lua */
static int u_tohex(lua_State *L)
{
    uint64_t v = shl_checku64(L, 1);
    char b[17];
    int i;
    for (i = 0; i < 16; i++) b[i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
    lua_pushlstring(L, b, 16);
    return 1;
}

/* core.utf8_check(s) -> true, or nil, message, byte offset (1-based) of the first bad byte */
static int u_utf8_check(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    sh_error err;
    if (sh_utf8_check(s, n, &err) == SH_OK) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushnil(L);
    lua_pushstring(L, err.msg);
    lua_pushinteger(L, (lua_Integer)err.offset + 1);
    return 3;
}

/* core.isatty(fd): whether fd (0, 1, 2) is a terminal, for progress output */
static int u_isatty(lua_State *L)
{
    lua_Integer fd = luaL_checkinteger(L, 1);
    lua_pushboolean(L, isatty((int)fd));
    return 1;
}

/* core.cpus(): online processors, the default number of sketching threads */
static int u_cpus(lua_State *L)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    lua_pushinteger(L, n > 0 ? (lua_Integer)n : 1);
    return 1;
}

/* core.crc32(s [, crc]): zlib's CRC-32 of s, continuing crc (for checking
 * text files the pipeline writes, such as docs.jsonl) */
static int u_crc32(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    lua_Integer c0 = luaL_optinteger(L, 2, 0);
    uLong c = (uLong)(uint32_t)c0;
    while (n > 0) {
        uInt k = (uInt)(n > (1u << 30) ? (1u << 30) : n);
        c = crc32(c, (const Bytef *)s, k);
        s += k;
        n -= k;
    }
    lua_pushinteger(L, (lua_Integer)(uint32_t)c);
    return 1;
}

void shl_open_util(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        { "rabin", u_rabin }, { "irreducible", u_irreducible }, { "random_poly", u_random_poly },
        { "mix", u_mix }, { "simd", u_simd }, { "confidence", u_confidence }, { "error_probability", u_error_probability },
        { "size_class", u_size_class }, { "tohex", u_tohex }, { "isatty", u_isatty }, { "cpus", u_cpus },
        { "utf8_check", u_utf8_check },
        { "crc32", u_crc32 },
        { NULL, NULL }
    };
    shl_setfuncs(L, funcs);
    lua_pushboolean(L, SHL_INT64);
    lua_setfield(L, -2, "int64");
}
