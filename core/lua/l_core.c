/* luaopen_shingle_core: the C module under the `shingle` facade (lua/shingle/init.lua). */
#include "lshingle.h"
#include "version.h"

#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int luaopen_shingle_core(lua_State *L);

int luaopen_shingle_core(lua_State *L)
{
    lua_newtable(L);
    shl_open_aux(L);
    shl_open_sketch(L);
    shl_open_shingler(L);
    shl_open_util(L);
    shl_open_cluster(L);
    shl_open_report(L);
    shl_open_io(L);
    shl_open_index(L);
    shl_open_collections(L);
    shl_open_proc(L);
    shl_open_outdir(L);
    shl_open_jsonl(L);
    shl_open_ixcheck(L);
    shl_open_guard(L);
    shl_open_zio(L);
    shl_open_mail(L);
    shl_open_sketchfile(L);
    shl_open_lsh(L);
    shl_open_json(L);
    lua_pushliteral(L, SH_VERSION_STRING);
    lua_setfield(L, -2, "_VERSION");
    return 1;
}
