/* The web graph builder: see webgraph.h for the contract. */
#include "webgraph.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "chunks.h"
#include "clock.h"
#include "extsort.h"
#include "hashtab.h"
#include "links.h"
#include "rabin.h"
#include "recfile.h"

/* ---- hashing and URL tables ------------------------------------------------ */

uint64_t sh_url_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return sh_mix(h ^ n);
}

size_t sh_url_site(const char *url, size_t n, unsigned depth, char *out, size_t cap)
{
    sh_url_parts p;
    size_t len = 0, i, end;
    unsigned seg = 0;
    if (cap == 0) return 0;
    out[0] = '\0';
    if (sh_url_split(url, n, &p, NULL) != SH_OK || !p.has_scheme) return 0;
    /* scheme "://" authority, then depth - 1 whole path segments */
    end = p.has_auth ? p.auth_off + p.auth_len : p.scheme_off + p.scheme_len + 1;
    for (i = p.path_off; depth > 1 && i < p.path_off + p.path_len; i++) {
        if (url[i] == '/' && i > p.path_off) {
            if (++seg == depth - 1) { end = i + 1; break; }
        }
    }
    if (depth > 1 && seg < depth - 1) {
        /* fewer segments than asked: the directory part only */
        size_t last = p.path_off;
        for (i = p.path_off; i < p.path_off + p.path_len; i++)
            if (url[i] == '/') last = i + 1;
        end = last > p.path_off ? last : (p.has_auth ? p.auth_off + p.auth_len : end);
    }
    len = end < cap ? end : cap - 1;
    memcpy(out, url, len);
    out[len] = '\0';
    return len;
}

/* ---- the builder ------------------------------------------------------------ */

struct sh_webgraph {
    sh_webgraph_config cfg;
    char *dir, *temp_dir;
    sh_error fail;
    int failed;
    sh_htab urls;                 /* URL hash -> page id */
    sh_htab sites;                /* site hash -> site id */
    char *site_names;          /* NUL-terminated names back to back */
    size_t site_len, site_cap;
    sh_pagerec *pages;
    size_t n_pages, cap_pages;
    uint64_t url_bytes;
    sh_recwriter w_urls, w_chunks[SH_CHUNK_SCHEMES];
    FILE *raw;                 /* <src hash, dst hash> of every link found, for finish */
    char raw_path[4096];
    sh_chunker chunker;
    sh_chunks ch;
    sh_links links;
    char *buf;                 /* a page read from its file */
    size_t buf_cap;
    char *norm;                /* a normalized URL */
    size_t norm_cap;
    sh_chunkrec *cbuf;         /* chunk records for one page */
    size_t cbuf_cap;
    sh_webgraph_stats st;
};

static void path_of(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static char *dupstr(const char *s)
{
    size_t n;
    char *d;
    if (!s) return NULL;
    n = strlen(s) + 1;
    d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void sh_webgraph_get_stats(const sh_webgraph *g, sh_webgraph_stats *st)
{
    *st = g->st;
    st->pages = g->n_pages;
    st->sites = g->sites.n;
}

void sh_webgraph_free(sh_webgraph *g)
{
    int s;
    if (!g) return;
    sh_recwriter_abort(&g->w_urls);
    for (s = 0; s < SH_CHUNK_SCHEMES; s++) sh_recwriter_abort(&g->w_chunks[s]);
    if (g->raw) { fclose(g->raw); g->raw = NULL; }
    if (g->raw_path[0]) remove(g->raw_path);
    sh_htab_free(&g->urls);
    sh_htab_free(&g->sites);
    free(g->site_names);
    free(g->pages);
    sh_chunks_free(&g->ch);
    sh_links_free(&g->links);
    free(g->buf);
    free(g->norm);
    free(g->cbuf);
    free(g->dir);
    free(g->temp_dir);
    free(g);
}

sh_status sh_webgraph_new(sh_webgraph **out, const sh_webgraph_config *cfg, sh_error *err)
{
    sh_webgraph *g;
    char path[4096];
    sh_status st;
    int s;
    *out = NULL;
    if (!cfg || !cfg->dir) return sh_error_set(err, SH_EINVAL, 0, "sh_webgraph_new: an output directory is needed");
    if (cfg->site_depth < 1) return sh_error_set(err, SH_EINVAL, 0, "site depth must be at least 1 (1: the host)");
    g = (sh_webgraph *)calloc(1, sizeof *g);
    if (!g) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    g->cfg = *cfg;
    g->dir = dupstr(cfg->dir);
    g->temp_dir = dupstr(cfg->temp_dir ? cfg->temp_dir : cfg->dir);
    if (!g->dir || !g->temp_dir) { sh_webgraph_free(g); return sh_error_set(err, SH_ENOMEM, 0, "out of memory"); }
    g->cfg.dir = g->dir;
    g->cfg.temp_dir = g->temp_dir;
    sh_chunker_init(&g->chunker, cfg->seed, cfg->anchored);
    path_of(path, sizeof path, g->dir, "urls.bin");
    if ((st = sh_recwriter_open(&g->w_urls, path, SH_MAGIC_URLS, 1, NULL, 0, err)) != SH_OK) { sh_webgraph_free(g); return st; }
    for (s = 0; s < SH_CHUNK_SCHEMES; s++) {
        char name[64];
        snprintf(name, sizeof name, "chunks-%s.bin", sh_chunk_scheme_name(s));
        path_of(path, sizeof path, g->dir, name);
        if ((st = sh_recwriter_open(&g->w_chunks[s], path, SH_MAGIC_CHUNKS, sizeof(sh_chunkrec), NULL, 0, err)) != SH_OK) {
            sh_webgraph_free(g);
            return st;
        }
    }
    path_of(g->raw_path, sizeof g->raw_path, g->dir, "links-found.tmp");
    g->raw = fopen(g->raw_path, "wb");
    if (!g->raw) {
        st = sh_error_set(err, SH_EIO, 0, "cannot write %s: %s; check that the output directory is writable",
                          g->raw_path, strerror(errno));
        g->raw_path[0] = '\0';
        sh_webgraph_free(g);
        return st;
    }
    *out = g;
    return SH_OK;
}

static sh_status failed(sh_webgraph *g, sh_error *err)
{
    if (err) *err = g->fail;
    return g->fail.code;
}

static sh_status set_fail(sh_webgraph *g, sh_status st, sh_error *err)
{
    if (err) g->fail = *err;
    else sh_error_set(&g->fail, st, 0, "the web graph builder failed");
    g->fail.code = st;
    g->failed = 1;
    return st;
}

/* Normalize url into g->norm; falls back to the bytes as given. */
static sh_status normalize(sh_webgraph *g, const char *url, size_t n, size_t *len, int *ok)
{
    size_t cap = SH_URL_OUT_MAX(0, n);
    if (g->norm_cap < cap) {
        char *p = (char *)realloc(g->norm, cap);
        if (!p) return SH_ENOMEM;
        g->norm = p;
        g->norm_cap = cap;
    }
    if (sh_url_normalize(url, n, g->norm, cap, len, NULL) == SH_OK) { *ok = 1; return SH_OK; }
    memcpy(g->norm, url, n);
    *len = n;
    *ok = 0;
    return SH_OK;
}

static uint32_t site_id(sh_webgraph *g, const char *url, size_t n, int *nomem)
{
    char site[2048];
    size_t len = sh_url_site(url, n, g->cfg.site_depth, site, sizeof site);
    uint64_t h = sh_url_hash(site, len);
    uint32_t id = sh_htab_get(&g->sites, h);
    *nomem = 0;
    if (id != UINT32_MAX) return id;
    id = (uint32_t)g->sites.n;
    if (sh_htab_put(&g->sites, h, id) < 0) { *nomem = 1; return 0; }
    if (g->site_len + len + 1 > g->site_cap) {
        size_t cap = g->site_cap ? 2 * g->site_cap : 4096;
        char *p;
        while (cap < g->site_len + len + 1) cap *= 2;
        p = (char *)realloc(g->site_names, cap);
        if (!p) { *nomem = 1; return 0; }
        g->site_names = p;
        g->site_cap = cap;
    }
    memcpy(g->site_names + g->site_len, site, len);
    g->site_names[g->site_len + len] = '\0';
    g->site_len += len + 1;
    return id;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static sh_status read_file(sh_webgraph *g, const char *path, size_t *len, char msg[200])
{
    FILE *f = fopen(path, "rb");
    long size;
    if (!f) { snprintf(msg, 200, "cannot read %s: %s", path, strerror(errno)); return SH_EIO; }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(msg, 200, "cannot read %s: not a regular file", path);
        fclose(f);
        return SH_EIO;
    }
    if (g->cfg.max_bytes && (size_t)size > g->cfg.max_bytes) {
        snprintf(msg, 200, "%s is larger than the page size limit (%zu bytes); raise --max-bytes", path, g->cfg.max_bytes);
        fclose(f);
        return SH_EINVAL;
    }
    if (g->buf_cap < (size_t)size + 1) {
        char *p = (char *)realloc(g->buf, (size_t)size + 1);
        if (!p) { fclose(f); snprintf(msg, 200, "out of memory reading %s", path); return SH_ENOMEM; }
        g->buf = p;
        g->buf_cap = (size_t)size + 1;
    }
    *len = fread(g->buf, 1, (size_t)size, f);
    if (ferror(f)) { snprintf(msg, 200, "cannot read %s: %s", path, strerror(errno)); fclose(f); return SH_EIO; }
    fclose(f);
    return SH_OK;
}

static sh_status write_chunks(sh_webgraph *g, uint32_t id, sh_error *err)
{
    int s;
    for (s = 0; s < SH_CHUNK_SCHEMES; s++) {
        size_t i, n = g->ch.n[s];
        sh_status st;
        if (g->cbuf_cap < n) {
            sh_chunkrec *p = (sh_chunkrec *)realloc(g->cbuf, n * sizeof *p);
            if (!p) return sh_error_set(err, SH_ENOMEM, 0, "out of memory");
            g->cbuf = p;
            g->cbuf_cap = n;
        }
        for (i = 0; i < n; i++) { g->cbuf[i].page = id; g->cbuf[i].fp = g->ch.fp[s][i]; }
        if ((st = sh_recwriter_append(&g->w_chunks[s], g->cbuf, n, err)) != SH_OK) return st;
        g->st.chunks[s] += n;
    }
    return SH_OK;
}

static sh_status write_raw(sh_webgraph *g, uint64_t src, uint64_t dst, sh_error *err)
{
    uint64_t r[2];
    r[0] = src;
    r[1] = dst;
    if (fwrite(r, 16, 1, g->raw) != 1)
        return sh_error_set(err, SH_EIO, 0, "cannot write %s: %s (disk full?)", g->raw_path, strerror(errno));
    g->st.links_found++;
    return SH_OK;
}

sh_status sh_webgraph_add(sh_webgraph *g, const sh_page_in *pages, size_t n, uint8_t *status,
                          char (*msg)[200], sh_error *err)
{
    size_t i, j;
    sh_status st;
    double t0 = sh_now();
    if (g->failed) return failed(g, err);
    for (i = 0; i < n; i++) {
        const sh_page_in *in = &pages[i];
        sh_pagerec r;
        const char *data = in->data;
        size_t len = in->len, ulen;
        char m[200];
        int ok, nomem, fresh;
        uint64_t h;
        uint32_t id = (uint32_t)g->n_pages;
        m[0] = '\0';
        if (g->n_pages == UINT32_MAX - 1) {
            st = sh_error_set(err, SH_EINVAL, 0, "more than %u pages; split the input", (unsigned)(UINT32_MAX - 1));
            return set_fail(g, st, err);
        }
        memset(&r, 0, sizeof r);
        r.html = (uint8_t)(in->html != 0);
        if ((st = normalize(g, in->url ? in->url : "", in->url ? in->url_len : 0, &ulen, &ok)) != SH_OK) {
            sh_error_set(err, st, 0, "out of memory");
            return set_fail(g, st, err);
        }
        if (!ok) g->st.bad_urls++;
        h = sh_url_hash(g->norm, ulen);
        r.url_off = g->url_bytes;
        r.url_len = (uint32_t)ulen;
        r.site = site_id(g, g->norm, ulen, &nomem);
        if (nomem) { st = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); return set_fail(g, st, err); }
        if ((st = sh_recwriter_append(&g->w_urls, g->norm, ulen, err)) != SH_OK) return set_fail(g, st, err);
        g->url_bytes += ulen;
        fresh = sh_htab_put(&g->urls, h, id);
        if (fresh < 0) { st = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); return set_fail(g, st, err); }
        /* a directory URL names its index page */
        if (fresh && ok && (ends_with(g->norm, ulen, "/index.html") || ends_with(g->norm, ulen, "/index.htm"))) {
            size_t k = ulen;
            while (k > 0 && g->norm[k - 1] != '/') k--;
            if (sh_htab_put(&g->urls, sh_url_hash(g->norm, k), id) < 0) {
                st = sh_error_set(err, SH_ENOMEM, 0, "out of memory");
                return set_fail(g, st, err);
            }
        }
        if (!data) {
            sh_status rs = in->path ? read_file(g, in->path, &len, m) : SH_EINVAL;
            if (!in->path) snprintf(m, sizeof m, "page %s has neither text nor a path", g->norm);
            if (rs == SH_ENOMEM) { st = sh_error_set(err, SH_ENOMEM, 0, "%s", m); return set_fail(g, st, err); }
            if (rs == SH_OK) data = g->buf;
        } else if (g->cfg.max_bytes && len > g->cfg.max_bytes) {
            snprintf(m, sizeof m, "%.100s is larger than the page size limit (%zu bytes); raise --max-bytes",
                     g->norm, g->cfg.max_bytes);
            data = NULL;
        }
        if (!data) {
            r.status = SH_PAGE_UNREADABLE;
            g->st.unreadable++;
        } else {
            r.bytes = len;
            g->st.bytes += len;
            if ((st = sh_chunks_compute(&g->chunker, data, len, in->html, &g->ch, err)) != SH_OK)
                return set_fail(g, st, err);
            r.n_tokens = (uint32_t)(g->ch.n_tokens > UINT32_MAX ? UINT32_MAX : g->ch.n_tokens);
            r.n_lines = (uint32_t)(g->ch.n_lines > UINT32_MAX ? UINT32_MAX : g->ch.n_lines);
            if (!fresh) {
                r.status = SH_PAGE_DUPLICATE;
                g->st.duplicate_urls++;
            } else if (g->ch.n_tokens == 0) {
                r.status = SH_PAGE_EMPTY;
                g->st.empty++;
            } else {
                g->st.ok++;
                if ((st = write_chunks(g, id, err)) != SH_OK) return set_fail(g, st, err);
            }
            if (in->html) {
                /* the URL as given is the base: normalize may have changed it */
                if ((st = sh_links_extract(data, len, g->norm, ulen, &g->links, err)) != SH_OK)
                    return set_fail(g, st, err);
                for (j = 0; j < g->links.n; j++) {
                    const sh_link *l = &g->links.v[j];
                    if ((st = write_raw(g, h, sh_url_hash(g->links.text + l->off, l->len), err)) != SH_OK)
                        return set_fail(g, st, err);
                }
            }
        }
        if (status) status[i] = r.status;
        if (msg) memcpy(msg[i], m, sizeof m);
        if (g->n_pages == g->cap_pages) {
            size_t cap = g->cap_pages ? 2 * g->cap_pages : 1024;
            sh_pagerec *p = (sh_pagerec *)realloc(g->pages, cap * sizeof *p);
            if (!p) { st = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); return set_fail(g, st, err); }
            g->pages = p;
            g->cap_pages = cap;
        }
        g->pages[g->n_pages++] = r;
    }
    g->st.t_pages += sh_now() - t0;
    return SH_OK;
}

sh_status sh_webgraph_add_edges(sh_webgraph *g, const char *const *src, const size_t *slen,
                                const char *const *dst, const size_t *dlen, size_t n, sh_error *err)
{
    size_t i, len;
    int ok;
    sh_status st;
    if (g->failed) return failed(g, err);
    for (i = 0; i < n; i++) {
        uint64_t hs, hd;
        if (normalize(g, src[i], slen[i], &len, &ok) != SH_OK) goto nomem;
        hs = sh_url_hash(g->norm, len);
        if (normalize(g, dst[i], dlen[i], &len, &ok) != SH_OK) goto nomem;
        hd = sh_url_hash(g->norm, len);
        if ((st = write_raw(g, hs, hd, err)) != SH_OK) return set_fail(g, st, err);
    }
    return SH_OK;
nomem:
    st = sh_error_set(err, SH_ENOMEM, 0, "out of memory");
    return set_fail(g, st, err);
}


#define CHUNK 65536

/* Read links-found.tmp, resolve both ends, sort <src, dst> unique, write links.bin. */
static sh_status resolve_links(sh_webgraph *g, sh_error *err)
{
    sh_extsort *s = NULL;
    sh_recwriter w;
    uint64_t *in = (uint64_t *)malloc((size_t)CHUNK * 16);
    unsigned char *rec = (unsigned char *)malloc((size_t)CHUNK * 8);
    sh_weblinkrec *outv = (sh_weblinkrec *)malloc((size_t)CHUNK * sizeof *outv);
    char path[4096];
    size_t n, i, k;
    sh_status st;
    memset(&w, 0, sizeof w);
    if (!in || !rec || !outv) { st = sh_error_set(err, SH_ENOMEM, 0, "out of memory"); goto done; }
    if ((st = sh_extsort_open(&s, 8, 8, g->cfg.memory, g->temp_dir, sh_extsort_keep_first, err)) != SH_OK) goto done;
    if (fflush(g->raw) != 0 || fseek(g->raw, 0, SEEK_SET) != 0) {
        st = sh_error_set(err, SH_EIO, 0, "cannot read back %s: %s", g->raw_path, strerror(errno));
        goto done;
    }
    /* the file was opened for writing only: reopen it for reading */
    fclose(g->raw);
    g->raw = fopen(g->raw_path, "rb");
    if (!g->raw) { st = sh_error_set(err, SH_EIO, 0, "cannot read back %s: %s", g->raw_path, strerror(errno)); goto done; }
    while ((n = fread(in, 16, CHUNK, g->raw)) > 0) {
        for (i = 0, k = 0; i < n; i++) {
            uint32_t a = sh_htab_get(&g->urls, in[2 * i]), b = sh_htab_get(&g->urls, in[2 * i + 1]);
            if (a == UINT32_MAX) { g->st.edges_unknown_source++; continue; }
            if (b == UINT32_MAX) { g->st.links_nowhere++; continue; }
            if (a == b) { g->st.self_links++; continue; }
            sh_store_be32(rec + 8 * k, a);
            sh_store_be32(rec + 8 * k + 4, b);
            k++;
        }
        if (k && (st = sh_extsort_add(s, rec, k, err)) != SH_OK) goto done;
    }
    if (ferror(g->raw)) { st = sh_error_set(err, SH_EIO, 0, "cannot read back %s: %s", g->raw_path, strerror(errno)); goto done; }
    if ((st = sh_extsort_finish(s, err)) != SH_OK) goto done;
    path_of(path, sizeof path, g->dir, "links.bin");
    if ((st = sh_recwriter_open(&w, path, SH_MAGIC_WEBLINKS, sizeof(sh_weblinkrec), NULL, 0, err)) != SH_OK) goto done;
    for (;;) {
        if ((st = sh_extsort_read(s, rec, CHUNK, &n, err)) != SH_OK) goto done;
        if (n == 0) break;
        for (i = 0; i < n; i++) {
            uint32_t a = sh_load_be32(rec + 8 * i), b = sh_load_be32(rec + 8 * i + 4);
            outv[i].src = a;
            outv[i].dst = b;
            g->pages[a].out_links++;
            g->pages[b].in_links++;
            if (g->pages[a].site != g->pages[b].site) g->pages[b].ext_in++;
        }
        g->st.links += n;
        if ((st = sh_recwriter_append(&w, outv, n, err)) != SH_OK) goto done;
    }
    {
        sh_extsort_stats x;
        sh_extsort_get_stats(s, &x);
        g->st.duplicate_links = x.records_in - x.records_out;
    }
    st = sh_recwriter_commit(&w, err);
done:
    if (st != SH_OK) sh_recwriter_abort(&w);
    sh_extsort_free(s);
    free(in);
    free(rec);
    free(outv);
    return st;
}

sh_status sh_webgraph_finish(sh_webgraph *g, sh_webgraph_stats *out, sh_error *err)
{
    char path[4096];
    sh_recwriter w;
    sh_status st;
    double t0 = sh_now();
    int s;
    if (g->failed) return failed(g, err);
    memset(&w, 0, sizeof w);
    if ((st = resolve_links(g, err)) != SH_OK) return set_fail(g, st, err);
    fclose(g->raw);
    g->raw = NULL;
    remove(g->raw_path);
    g->raw_path[0] = '\0';
    if ((st = sh_recwriter_commit(&g->w_urls, err)) != SH_OK) return set_fail(g, st, err);
    for (s = 0; s < SH_CHUNK_SCHEMES; s++)
        if ((st = sh_recwriter_commit(&g->w_chunks[s], err)) != SH_OK) return set_fail(g, st, err);
    path_of(path, sizeof path, g->dir, "sites.bin");
    if ((st = sh_recwriter_open(&w, path, SH_MAGIC_SITES, 1, NULL, 0, err)) != SH_OK ||
        (st = sh_recwriter_append(&w, g->site_names, g->site_len, err)) != SH_OK ||
        (st = sh_recwriter_commit(&w, err)) != SH_OK) {
        sh_recwriter_abort(&w);
        return set_fail(g, st, err);
    }
    {
        unsigned char meta[SH_PAGES_META_SIZE];
        sh_store_le32(meta, (uint32_t)g->cfg.site_depth);
        sh_store_le32(meta + 4, (uint32_t)(g->cfg.anchored != 0));
        path_of(path, sizeof path, g->dir, "pages.bin");
        if ((st = sh_recwriter_open(&w, path, SH_MAGIC_PAGES, sizeof(sh_pagerec), meta, sizeof meta, err)) != SH_OK ||
            (st = sh_recwriter_append(&w, g->pages, g->n_pages, err)) != SH_OK ||
            (st = sh_recwriter_commit(&w, err)) != SH_OK) {
            sh_recwriter_abort(&w);
            return set_fail(g, st, err);
        }
    }
    g->st.t_links = sh_now() - t0;
    sh_webgraph_get_stats(g, out);
    g->failed = 1;
    sh_error_set(&g->fail, SH_EINVAL, 0, "the web graph is finished; start a new one");
    return SH_OK;
}

/* ---- the files read back ------------------------------------------------------ */

void sh_webgraph_files_close(sh_webgraph_files *f)
{
    sh_recfile_close(&f->pages);
    sh_recfile_close(&f->urls);
    sh_recfile_close(&f->sites);
    free(f->site_off);
    memset(f, 0, sizeof *f);
}

sh_status sh_webgraph_files_open(sh_webgraph_files *f, const char *dir, sh_error *err)
{
    char path[4096];
    sh_status s;
    uint64_t i, start = 0;
    memset(f, 0, sizeof *f);
    path_of(path, sizeof path, dir, "pages.bin");
    if ((s = sh_recfile_open(&f->pages, path, SH_MAGIC_PAGES, sizeof(sh_pagerec), 1, err)) != SH_OK) return s;
    f->pg = (const sh_pagerec *)(const void *)f->pages.records;
    f->np = (uint32_t)f->pages.count;
    path_of(path, sizeof path, dir, "urls.bin");
    if ((s = sh_recfile_open(&f->urls, path, SH_MAGIC_URLS, 1, 1, err)) != SH_OK) return s;
    path_of(path, sizeof path, dir, "sites.bin");
    if ((s = sh_recfile_open(&f->sites, path, SH_MAGIC_SITES, 1, 1, err)) != SH_OK) return s;
    for (i = 0; i < f->sites.count; i++) if (f->sites.records[i] == 0) f->nsites++;
    f->site_off = (uint32_t *)malloc((f->nsites + 1) * sizeof *f->site_off);
    if (!f->site_off) return sh_error_set(err, SH_ENOMEM, 0, "out of memory for the sites of %s", dir);
    f->nsites = 0;
    for (i = 0; i < f->sites.count; i++)
        if (f->sites.records[i] == 0) { f->site_off[f->nsites++] = (uint32_t)start; start = i + 1; }
    for (i = 0; i < f->np; i++)
        if (f->pg[i].url_off + f->pg[i].url_len > f->urls.count)
            return sh_error_set(err, SH_EFORMAT, SH_RECFILE_HEADER + (size_t)i * sizeof(sh_pagerec),
                                "%s/pages.bin: page %llu's URL lies past the end of urls.bin; the files are from "
                                "different runs: run the collections again", dir, (unsigned long long)i);
    return SH_OK;
}

const char *sh_webgraph_url(const sh_webgraph_files *f, uint32_t p, size_t *len)
{
    *len = f->pg[p].url_len;
    return (const char *)f->urls.records + f->pg[p].url_off;
}

const char *sh_webgraph_site(const sh_webgraph_files *f, uint32_t s)
{
    return s < f->nsites ? (const char *)f->sites.records + f->site_off[s] : NULL;
}
