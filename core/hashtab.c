#include "hashtab.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hkey(uint64_t h) { return h ? h : 1; }

static int grow(sh_htab *t)
{
    size_t cap = t->cap ? 2 * t->cap : 1024, i;
    uint64_t *k = (uint64_t *)calloc(cap, sizeof *k);
    uint32_t *v = (uint32_t *)malloc(cap * sizeof *v);
    if (!k || !v) { free(k); free(v); return -1; }
    for (i = 0; i < t->cap; i++) {
        size_t j;
        if (!t->key[i]) continue;
        for (j = (size_t)t->key[i] & (cap - 1); k[j]; j = (j + 1) & (cap - 1)) {}
        k[j] = t->key[i];
        v[j] = t->val[i];
    }
    free(t->key);
    free(t->val);
    t->key = k;
    t->val = v;
    t->cap = cap;
    return 0;
}

uint32_t sh_htab_get(const sh_htab *t, uint64_t h)
{
    size_t j;
    h = hkey(h);
    if (!t->cap) return UINT32_MAX;
    for (j = (size_t)h & (t->cap - 1); t->key[j]; j = (j + 1) & (t->cap - 1))
        if (t->key[j] == h) return t->val[j];
    return UINT32_MAX;
}

int sh_htab_put(sh_htab *t, uint64_t h, uint32_t v)
{
    size_t j;
    h = hkey(h);
    if (2 * (t->n + 1) > t->cap && grow(t) != 0) return -1;
    for (j = (size_t)h & (t->cap - 1); t->key[j]; j = (j + 1) & (t->cap - 1))
        if (t->key[j] == h) return 0;
    t->key[j] = h;
    t->val[j] = v;
    t->n++;
    return 1;
}

void sh_htab_free(sh_htab *t)
{
    free(t->key);
    free(t->val);
    memset(t, 0, sizeof *t);
}
