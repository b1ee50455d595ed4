/* The hash -> id table (core/hashtab.h) against a plain array, through many
 * doublings; the first id of a hash stays; a hash of 0 is a key like any. */
#include <stdlib.h>
#include "../hashtab.h"
#include "../rabin.h"
#include "test.h"

static void keeps_every_first_id_through_growth(void)
{
    enum { N = 20000 };
    static uint64_t keys[N];
    sh_htab t;
    uint64_t st = 5;
    uint32_t i, bad = 0;
    memset(&t, 0, sizeof t);
    CHECK(sh_htab_get(&t, 42) == UINT32_MAX);
    for (i = 0; i < N; i++) {
        keys[i] = i == 7 ? 0 : sh_splitmix_next(&st);
        CHECK(sh_htab_put(&t, keys[i], i) == 1);
    }
    CHECK(t.n == N && t.cap >= 2 * N);
    for (i = 0; i < N; i++) {
        if (sh_htab_put(&t, keys[i], N + i) != 0) bad++;   /* there already: the first id stays */
        if (sh_htab_get(&t, keys[i]) != i) bad++;
    }
    CHECK(bad == 0);
    CHECK(sh_htab_get(&t, 0) == 7);
    CHECK(sh_htab_get(&t, sh_splitmix_next(&st)) == UINT32_MAX);
    sh_htab_free(&t);
    CHECK(t.cap == 0 && t.key == NULL);
}

int main(void)
{
    RUN(keeps_every_first_id_through_growth);
    return TEST_END();
}
