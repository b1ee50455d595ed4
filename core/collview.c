/* The results of a collections run read back: see collview.h. */
#include "collview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "links.h"
#include "recfile.h"
#include "webgraph.h"

static void path_of(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static sh_status nomem(sh_error *err, const char *what)
{
    return sh_error_set(err, SH_ENOMEM, 0, "out of memory for %s; lower --memory or split the input", what);
}

struct sh_coll_view {
    sh_webgraph_files wf;     /* pages, URLs, sites */
    sh_recfile triv, memb, colls;
    const sh_pagerec *pg;     /* wf.pg */
    uint32_t np;
    sh_htab urls;             /* URL hash -> page */
    uint32_t *tsize;          /* trivial cluster sizes */
    uint32_t *page_cluster, *page_coll;
    size_t *cl_first;         /* members of cluster c: [cl_first[c - 1], cl_first[c]) */
    size_t ncl;
    char *norm;
    size_t norm_cap;
};

void sh_coll_view_close(sh_coll_view *v)
{
    if (!v) return;
    sh_webgraph_files_close(&v->wf);
    sh_recfile_close(&v->triv);
    sh_recfile_close(&v->memb);
    sh_recfile_close(&v->colls);
    sh_htab_free(&v->urls);
    free(v->tsize);
    free(v->page_cluster);
    free(v->page_coll);
    free(v->cl_first);
    free(v->norm);
    free(v);
}

sh_status sh_coll_view_open(sh_coll_view **out, const char *dir, sh_error *err)
{
    sh_coll_view *v = (sh_coll_view *)calloc(1, sizeof *v);
    char path[4096], file[128];
    sh_status s;
    uint64_t i;
    *out = NULL;
    if (!v) return nomem(err, "the results");
#define OPEN(field, name, magic, size) \
    path_of(path, sizeof path, dir, name); \
    if ((s = sh_recfile_open(&v->field, path, magic, size, 1, err)) != SH_OK) goto fail;
    if ((s = sh_webgraph_files_open(&v->wf, dir, err)) != SH_OK) goto fail;
    OPEN(memb, "members.bin", SH_MAGIC_MEMBERS, sizeof(sh_memberrec))
    OPEN(colls, "colls.bin", SH_MAGIC_COLLS, sizeof(sh_collrec))
    {
        char name[65];
        memcpy(name, v->colls.meta, v->colls.meta_size < 64 ? v->colls.meta_size : 64);
        name[v->colls.meta_size < 64 ? v->colls.meta_size : 64] = '\0';
        snprintf(file, sizeof file, "trivial-%s.bin", name);
    }
    OPEN(triv, file, SH_MAGIC_TRIVIAL, 4)
#undef OPEN
    v->pg = v->wf.pg;
    v->np = v->wf.np;
    if (v->triv.count != v->np) {
        s = sh_error_set(err, SH_EFORMAT, 0, "%s/%s does not match pages.bin: run the collections again", dir, file);
        goto fail;
    }
    v->tsize = (uint32_t *)calloc((size_t)v->np + 1, 4);
    v->page_cluster = (uint32_t *)calloc((size_t)v->np + 1, 4);
    v->page_coll = (uint32_t *)calloc((size_t)v->np + 1, 4);
    if (!v->tsize || !v->page_cluster || !v->page_coll) { s = nomem(err, "the results"); goto fail; }
    for (i = 0; i < v->np; i++) {
        size_t n;
        const char *u = sh_webgraph_url(&v->wf, (uint32_t)i, &n);
        uint32_t t = ((const uint32_t *)(const void *)v->triv.records)[i];
        if (sh_htab_put(&v->urls, sh_url_hash(u, n), (uint32_t)i) < 0) { s = nomem(err, "the results"); goto fail; }
        if (t < v->np) v->tsize[t]++;
    }
    {
        const sh_memberrec *m = (const sh_memberrec *)(const void *)v->memb.records;
        uint32_t maxc = 0;
        for (i = 0; i < v->memb.count; i++) if (m[i].cluster > maxc) maxc = m[i].cluster;
        v->ncl = maxc;
        v->cl_first = (size_t *)calloc((size_t)maxc + 2, sizeof(size_t));
        if (!v->cl_first) { s = nomem(err, "the results"); goto fail; }
        for (i = 0; i < v->memb.count; i++) {
            if (m[i].page >= v->np || m[i].cluster == 0) {
                s = sh_error_set(err, SH_EFORMAT, SH_RECFILE_HEADER + i * sizeof *m, "%s/members.bin: record %llu is out of range; "
                                 "run the collections again", dir, (unsigned long long)i);
                goto fail;
            }
            v->cl_first[m[i].cluster]++;
            if (!v->page_cluster[m[i].page]) {
                v->page_cluster[m[i].page] = m[i].cluster;
                v->page_coll[m[i].page] = m[i].collection;
            }
        }
        for (i = 1; i <= maxc; i++) v->cl_first[i] += v->cl_first[i - 1];
    }
    *out = v;
    return SH_OK;
fail:
    sh_coll_view_close(v);
    return s;
}

uint32_t sh_coll_view_npages(const sh_coll_view *v) { return v->np; }

uint32_t sh_coll_view_find(const sh_coll_view *v, const char *url, size_t n)
{
    char buf[8192];
    size_t len = 0;
    if (SH_URL_OUT_MAX(0, n) <= sizeof buf && sh_url_normalize(url, n, buf, sizeof buf, &len, NULL) == SH_OK)
        return sh_htab_get(&v->urls, sh_url_hash(buf, len));
    return sh_htab_get(&v->urls, sh_url_hash(url, n));
}

const sh_pagerec *sh_coll_view_page(const sh_coll_view *v, uint32_t page)
{
    return page < v->np ? &v->pg[page] : NULL;
}

const char *sh_coll_view_url(const sh_coll_view *v, uint32_t page, size_t *len)
{
    if (page >= v->np) { *len = 0; return NULL; }
    return sh_webgraph_url(&v->wf, page, len);
}

const char *sh_coll_view_site(const sh_coll_view *v, uint32_t site)
{
    return sh_webgraph_site(&v->wf, site);
}

uint32_t sh_coll_view_trivial(const sh_coll_view *v, uint32_t page, uint32_t *size)
{
    uint32_t t;
    if (page >= v->np) { *size = 0; return UINT32_MAX; }
    t = ((const uint32_t *)(const void *)v->triv.records)[page];
    *size = t < v->np ? v->tsize[t] : 1;
    return t;
}

uint32_t sh_coll_view_cluster(const sh_coll_view *v, uint32_t page, uint32_t *collection)
{
    if (page >= v->np) { *collection = 0; return 0; }
    *collection = v->page_coll[page];
    return v->page_cluster[page];
}

const sh_collrec *sh_coll_view_colls(const sh_coll_view *v, size_t *n)
{
    *n = (size_t)v->colls.count;
    return (const sh_collrec *)(const void *)v->colls.records;
}

const sh_memberrec *sh_coll_view_members(const sh_coll_view *v, uint32_t cluster, size_t *n)
{
    size_t a, b;
    if (cluster == 0 || cluster > v->ncl) { *n = 0; return NULL; }
    a = cluster >= 2 ? v->cl_first[cluster - 1] : 0;
    b = v->cl_first[cluster];
    *n = b - a;
    return (const sh_memberrec *)(const void *)v->memb.records + a;
}
