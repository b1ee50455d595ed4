/* Tests for core/unionfind: components against breadth-first search on random
 * graphs, star and clique giving the same clusters, growth, bulk calls. */
#include "unionfind.h"
#include "test.h"

#include <stdlib.h>

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* The slow obvious way: adjacency lists, then a breadth-first search from each
 * unvisited vertex in increasing order; the start is the component's smallest
 * id, which labels it. Returns the number of components. */
static uint32_t bfs_labels(uint32_t n, const uint32_t *pairs, size_t m, uint32_t *label)
{
    uint32_t *deg = calloc((size_t)n + 1, sizeof *deg), *adj = malloc(2 * m * sizeof *adj + 1);
    uint32_t *fill = malloc(((size_t)n + 1) * sizeof *fill), *queue = malloc((size_t)n * sizeof *queue + 1);
    uint32_t v, c = 0;
    size_t i;
    for (i = 0; i < 2 * m; i++)
        deg[pairs[i] + 1]++;
    for (v = 0; v < n; v++)
        deg[v + 1] += deg[v];  /* deg[v] is now the start of v's list */
    memcpy(fill, deg, ((size_t)n + 1) * sizeof *fill);
    for (i = 0; i < m; i++) {
        adj[fill[pairs[2 * i]]++] = pairs[2 * i + 1];
        adj[fill[pairs[2 * i + 1]]++] = pairs[2 * i];
    }
    for (v = 0; v < n; v++)
        label[v] = UINT32_MAX;
    for (v = 0; v < n; v++) {
        size_t head = 0, tail = 0;
        if (label[v] != UINT32_MAX)
            continue;
        c++;
        label[v] = v;
        queue[tail++] = v;
        while (head < tail) {
            uint32_t u = queue[head++], k;
            for (k = deg[u]; k < deg[u + 1]; k++) {
                if (label[adj[k]] == UINT32_MAX) {
                    label[adj[k]] = v;
                    queue[tail++] = adj[k];
                }
            }
        }
    }
    free(deg);
    free(adj);
    free(fill);
    free(queue);
    return c;
}

static uint32_t *random_pairs(uint32_t n, size_t m, uint64_t seed)
{
    uint32_t *p = malloc(2 * m * sizeof *p + 1);
    size_t i;
    for (i = 0; i < 2 * m; i++)
        p[i] = (uint32_t)(splitmix(&seed) % n);
    return p;
}

/* Union-find labels (both modes), sizes and counts equal breadth-first search's. */
static void check_random_graph(uint32_t n, size_t m, uint64_t seed)
{
    uint32_t *pairs = n ? random_pairs(n, m, seed) : NULL;
    uint32_t *want = malloc((size_t)n * sizeof *want + 1), *got = malloc((size_t)n * sizeof *got + 1);
    uint32_t *dense = malloc((size_t)n * sizeof *dense + 1), *size = calloc((size_t)n + 1, sizeof *size);
    uint32_t c, v, next = 0;
    sh_unionfind *uf;
    size_t joined = 0;
    int ok = 1;

    if (!n)
        m = 0;
    c = bfs_labels(n, pairs, m, want);
    CHECK(sh_uf_new(&uf, n, NULL) == SH_OK);
    CHECK(sh_uf_union_pairs(uf, pairs, m, &joined, NULL) == SH_OK);
    CHECK_EQ_U64(sh_uf_components(uf), c);
    CHECK_EQ_U64(joined, (uint64_t)n - c);  /* every join removes one component */
    CHECK_EQ_U64(sh_uf_labels(uf, got, SH_UF_LABEL_MIN), c);
    CHECK(n == 0 || memcmp(got, want, (size_t)n * sizeof *got) == 0);
    CHECK_EQ_U64(sh_uf_labels(uf, dense, SH_UF_LABEL_DENSE), c);
    /* dense ids number the components in order of their smallest vertex */
    for (v = 0; v < n; v++) {
        size[want[v]]++;
        if (want[v] == v)
            ok &= dense[v] == next++;
        else
            ok &= dense[v] == dense[want[v]];
    }
    CHECK(ok);
    for (v = 0; v < n; v++)
        ok &= sh_uf_component_size(uf, v) == size[want[v]] &&
              sh_uf_same(uf, v, want[v]) && sh_uf_find(uf, v) == sh_uf_find(uf, want[v]);
    CHECK(ok);
    sh_uf_free(uf);
    free(pairs);
    free(want);
    free(got);
    free(dense);
    free(size);
}

static void finds_the_components_of_random_graphs_like_bfs(void)
{
    static const uint32_t ns[] = { 0, 1, 2, 10, 1000, 100000 };
    static const double density[] = { 0.1, 0.5, 0.9, 1.5, 4 };
    size_t i, j;
    for (i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (j = 0; j < sizeof density / sizeof density[0]; j++)
            check_random_graph(ns[i], (size_t)(ns[i] * density[j]) + 1, i * 100 + j);
    check_random_graph(2000000, 1500000, 7);  /* near the giant-component threshold */
}

static void labels_do_not_depend_on_union_order(void)
{
    const uint32_t n = 50000;
    const size_t m = 30000;
    uint32_t *pairs = random_pairs(n, m, 3), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    uint32_t *d1 = malloc(n * sizeof *d1), *d2 = malloc(n * sizeof *d2);
    sh_unionfind *u1, *u2;
    uint64_t seed = 9;
    size_t i;
    CHECK(sh_uf_new(&u1, n, NULL) == SH_OK);
    CHECK(sh_uf_new(&u2, n, NULL) == SH_OK);
    CHECK(sh_uf_union_pairs(u1, pairs, m, NULL, NULL) == SH_OK);
    /* shuffle the pairs and swap the ends of some */
    for (i = m - 1; i > 0; i--) {
        size_t k = splitmix(&seed) % (i + 1);
        uint32_t t0 = pairs[2 * i], t1 = pairs[2 * i + 1];
        pairs[2 * i] = pairs[2 * k + (k & 1)];
        pairs[2 * i + 1] = pairs[2 * k + 1 - (k & 1)];
        pairs[2 * k] = t0;
        pairs[2 * k + 1] = t1;
    }
    for (i = 0; i < m; i++)
        CHECK(sh_uf_union(u2, pairs[2 * i], pairs[2 * i + 1]) >= 0);
    sh_uf_labels(u1, a, SH_UF_LABEL_MIN);
    sh_uf_labels(u2, b, SH_UF_LABEL_MIN);
    CHECK(memcmp(a, b, n * sizeof *a) == 0);
    sh_uf_labels(u1, d1, SH_UF_LABEL_DENSE);
    sh_uf_labels(u2, d2, SH_UF_LABEL_DENSE);
    CHECK(memcmp(d1, d2, n * sizeof *a) == 0);
    sh_uf_free(u1);
    sh_uf_free(u2);
    free(pairs);
    free(a);
    free(b);
    free(d1);
    free(d2);
}

static void star_and_clique_give_the_same_components(void)
{
    /* documents sharing a key: groups of random members over 10000 ids */
    const uint32_t n = 10000;
    uint32_t members[40], *clique = malloc(40 * 39 * sizeof *clique);
    uint32_t *ls = malloc(n * sizeof *ls), *lc = malloc(n * sizeof *lc);
    sh_unionfind *star, *cl;
    uint64_t seed = 1;
    size_t g, i, j, k, joined_star = 0, joined_clique = 0, js, jc;
    CHECK(sh_uf_new(&star, 0, NULL) == SH_OK);
    CHECK(sh_uf_new(&cl, 0, NULL) == SH_OK);
    for (g = 0; g < 2000; g++) {
        size_t size = 1 + splitmix(&seed) % 40;
        for (i = 0; i < size; i++)
            members[i] = (uint32_t)(splitmix(&seed) % n);
        for (i = k = 0; i < size; i++)
            for (j = i + 1; j < size; j++) {
                clique[k++] = members[i];
                clique[k++] = members[j];
            }
        CHECK(sh_uf_union_group(star, members, size, &js, NULL) == SH_OK);
        CHECK(sh_uf_union_pairs(cl, clique, k / 2, &jc, NULL) == SH_OK);
        CHECK(js <= size - 1);
        joined_star += js;
        joined_clique += jc;
    }
    sh_uf_grow(star, n, NULL);
    sh_uf_grow(cl, n, NULL);
    CHECK_EQ_U64(sh_uf_components(star), sh_uf_components(cl));
    CHECK_EQ_U64(joined_star, joined_clique);
    CHECK(sh_uf_components(star) > 1);
    sh_uf_labels(star, ls, SH_UF_LABEL_MIN);
    sh_uf_labels(cl, lc, SH_UF_LABEL_MIN);
    CHECK(memcmp(ls, lc, n * sizeof *ls) == 0);
    sh_uf_free(star);
    sh_uf_free(cl);
    free(clique);
    free(ls);
    free(lc);
}

static void grows_to_cover_new_ids_as_singletons(void)
{
    sh_unionfind *uf;
    uint32_t pairs[] = { 3, 5, 100, 7 }, labels[101];
    size_t joined;
    CHECK(sh_uf_new(&uf, 4, NULL) == SH_OK);
    CHECK_EQ_U64(sh_uf_vertices(uf), 4);
    CHECK_EQ_U64(sh_uf_components(uf), 4);
    CHECK(sh_uf_union(uf, 0, 4) == -1);  /* not a vertex yet: nothing happens */
    CHECK_EQ_U64(sh_uf_find(uf, 4), UINT32_MAX);
    CHECK_EQ_U64(sh_uf_component_size(uf, 4), 0);
    CHECK(sh_uf_union_pairs(uf, pairs, 2, &joined, NULL) == SH_OK);
    CHECK_EQ_U64(joined, 2);
    CHECK_EQ_U64(sh_uf_vertices(uf), 101);
    CHECK_EQ_U64(sh_uf_components(uf), 101 - 2);
    CHECK_EQ_U64(sh_uf_labels(uf, labels, SH_UF_LABEL_MIN), 99);
    CHECK_EQ_U64(labels[5], 3);
    CHECK_EQ_U64(labels[100], 7);
    CHECK_EQ_U64(labels[50], 50);
    CHECK(sh_uf_union(uf, 5, 3) == 0);
    CHECK(sh_uf_union(uf, 100, 5) == 1);
    CHECK_EQ_U64(sh_uf_component_size(uf, 7), 4);
    CHECK_EQ_U64(sh_uf_labels(uf, labels, SH_UF_LABEL_DENSE), 98);
    CHECK_EQ_U64(labels[0], 0);
    CHECK_EQ_U64(labels[3], 3);
    CHECK_EQ_U64(labels[100], 3);
    CHECK_EQ_U64(labels[4], 4);
    CHECK_EQ_U64(labels[6], 5);   /* 5 and 7 are in 3's component */
    CHECK_EQ_U64(labels[8], 6);
    CHECK(sh_uf_grow(uf, 50, NULL) == SH_OK);  /* never shrinks */
    CHECK_EQ_U64(sh_uf_vertices(uf), 101);
    sh_uf_free(uf);
    sh_uf_free(NULL);
}

static void rejects_the_reserved_id_after_applying_earlier_pairs(void)
{
    sh_unionfind *uf;
    uint32_t pairs[] = { 1, 2, 3, UINT32_MAX, 4, 5 };
    size_t joined = 99;
    sh_error err;
    CHECK(sh_uf_new(&uf, 0, NULL) == SH_OK);
    CHECK(sh_uf_union_pairs(uf, pairs, 3, &joined, &err) == SH_EINVAL);
    CHECK(strstr(err.msg, "index 3") != NULL);
    CHECK_EQ_U64(joined, 1);
    CHECK(sh_uf_same(uf, 1, 2));
    CHECK_EQ_U64(sh_uf_vertices(uf), 4);
    CHECK(!sh_uf_same(uf, 4, 5));
    sh_uf_free(uf);
}

static void keeps_sizes_through_long_chains(void)
{
    /* a path 0-1-2-...: the worst case for union without balancing */
    const uint32_t n = 1000000;
    sh_unionfind *uf;
    uint32_t v, *lab = malloc(n * sizeof *lab);
    int ok = 1;
    CHECK(sh_uf_new(&uf, n, NULL) == SH_OK);
    for (v = 1; v < n; v++)
        ok &= sh_uf_union(uf, v, v - 1) == 1;
    CHECK(ok);
    CHECK_EQ_U64(sh_uf_components(uf), 1);
    CHECK_EQ_U64(sh_uf_component_size(uf, n / 2), n);
    sh_uf_labels(uf, lab, SH_UF_LABEL_DENSE);
    for (v = 0; v < n; v++)
        ok &= lab[v] == 0;
    CHECK(ok);
    sh_uf_free(uf);
    free(lab);
}

int main(void)
{
    RUN(finds_the_components_of_random_graphs_like_bfs);
    RUN(labels_do_not_depend_on_union_order);
    RUN(star_and_clique_give_the_same_components);
    RUN(grows_to_cover_new_ids_as_singletons);
    RUN(rejects_the_reserved_id_after_applying_earlier_pairs);
    RUN(keeps_sizes_through_long_chains);
    return TEST_END();
}
