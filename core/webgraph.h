/* The web graph of Cho et al., "Finding replicated web collections"
 * (Definition 1: a node per page, an arc per hyperlink), built in bulk from
 * pages and, optionally, an edge list, into files of one output directory:
 *
 *   pages.bin        one sh_pagerec per page, ids 0..n-1 in the order added
 *   urls.bin         the pages' normalized URLs back to back (record size 1)
 *   sites.bin        the site names, each ended by a NUL, in site-id order
 *   links.bin        <src u32, dst u32> little-endian, sorted, unique, no self-links
 *   chunks-S.bin     <page u32, fp u32> for S = whole, lines4, lines2 (core/chunks.h)
 *
 * (record files, core/recfile.h; the records are in core/formats.h, and
 * docs/collections.md has the layouts.)
 *
 * Links: extracted from every HTML page (core/links.h: relative URLs, <base>,
 * "..", fragments dropped, normalized), or given as URL pairs. A link is kept
 * when its target is a page of the graph; a directory URL ".../" names the
 * page ".../index.html" (or index.htm) when there is one. Links to nowhere,
 * self-links and duplicates are counted and dropped.
 *
 * Sites: the scheme and host of the URL plus its first site_depth - 1 path
 * segments ("http://h/a/" for depth 2), so that a local mirror laid out as
 * dir/HOST/path, or a host holding several mirrors under /~user/, can be split.
 *
 * Memory: a URL hash table (16 bytes a slot) and one sh_pagerec per page;
 * links and chunks stream to files, and links are resolved and sorted by an
 * external sort within the memory budget at finish. Reentrant, no global
 * state; one thread at a time per builder. */
#ifndef SHINGLE_WEBGRAPH_H
#define SHINGLE_WEBGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "formats.h"
#include "recfile.h"

typedef struct sh_webgraph_config {
    const char *dir;         /* output directory (must exist) */
    size_t memory;           /* budget for the link sort, bytes */
    const char *temp_dir;    /* sort runs; NULL: dir */
    unsigned site_depth;     /* >= 1 */
    uint64_t seed;           /* chunk fingerprint polynomial */
    int anchored;            /* anchored chunk boundaries (chunks.h) */
    size_t max_bytes;        /* larger pages are unreadable; 0: no limit */
} sh_webgraph_config;

/* One page: its URL (absolute; normalized here) and either its bytes or a
 * path to read them from. */
typedef struct sh_page_in {
    const char *url;
    size_t url_len;
    const char *data;        /* NULL: read path */
    size_t len;
    const char *path;
    int html;                /* extract links and strip markup */
} sh_page_in;

typedef struct sh_webgraph_stats {
    uint64_t pages, ok, empty, unreadable, duplicate_urls, bad_urls, bytes;
    uint64_t sites;
    uint64_t links_found;    /* links extracted or edges given */
    uint64_t links;          /* distinct links between pages of the graph */
    uint64_t links_nowhere;  /* to URLs that are not pages of the graph */
    uint64_t self_links, duplicate_links;
    uint64_t edges_unknown_source;  /* edge-list edges from URLs that are not pages */
    uint64_t chunks[3];      /* fingerprints written per scheme */
    double t_pages, t_links; /* seconds: reading and fingerprinting; resolving and sorting links */
} sh_webgraph_stats;

typedef struct sh_webgraph sh_webgraph;

/* Start a graph in cfg->dir. Errors: SH_EINVAL (site_depth 0), SH_EIO
 * (cannot write the directory), SH_ENOMEM. */
sh_status sh_webgraph_new(sh_webgraph **out, const sh_webgraph_config *cfg, sh_error *err);

/* Add n pages (ids continue from the last call). Per-page problems are not
 * errors: status[i] (SH_PAGE_*; may be NULL) says what became of page i, and
 * msg[i] (may be NULL; each 200 bytes) says why it was unreadable. Errors:
 * SH_EIO writing the files, SH_ENOMEM; the builder is then failed. */
sh_status sh_webgraph_add(sh_webgraph *g, const sh_page_in *pages, size_t n, uint8_t *status,
                          char (*msg)[200], sh_error *err);

/* Add n links given as URL pairs (normalized here; an edge list). */
sh_status sh_webgraph_add_edges(sh_webgraph *g, const char *const *src, const size_t *slen,
                                const char *const *dst, const size_t *dlen, size_t n, sh_error *err);

/* Resolve and sort the links, write every file. */
sh_status sh_webgraph_finish(sh_webgraph *g, sh_webgraph_stats *st, sh_error *err);

/* Counters so far. */
void sh_webgraph_get_stats(const sh_webgraph *g, sh_webgraph_stats *st);

/* Remove unfinished files and free; NULL is a no-op. */
void sh_webgraph_free(sh_webgraph *g);

/* ---- the files of a finished graph, read back -------------------------------- */

/* pages.bin, urls.bin and sites.bin of a graph, mapped and checked, with an
 * index of the site names. */
typedef struct sh_webgraph_files {
    sh_recfile pages, urls, sites;
    const sh_pagerec *pg;    /* the pages, pg[0..np) */
    uint32_t np;
    uint32_t *site_off;      /* where each site's name starts in sites.bin */
    size_t nsites;
} sh_webgraph_files;

/* Open the graph in dir. Errors: SH_EIO, SH_EFORMAT naming the file, SH_ENOMEM.
 * Close with sh_webgraph_files_close whatever it returns. */
sh_status sh_webgraph_files_open(sh_webgraph_files *f, const char *dir, sh_error *err);
void sh_webgraph_files_close(sh_webgraph_files *f);
/* The URL of page p (p < np): *len bytes, not NUL-terminated. */
const char *sh_webgraph_url(const sh_webgraph_files *f, uint32_t p, size_t *len);
/* The name of site s, NUL-terminated; NULL if there is no such site. */
const char *sh_webgraph_site(const sh_webgraph_files *f, uint32_t s);

/* The site of the absolute URL url[0..n) at depth depth, into out (cap
 * bytes, NUL-terminated). Returns its length, or 0 if url has no scheme. */
size_t sh_url_site(const char *url, size_t n, unsigned depth, char *out, size_t cap);

/* A 64-bit hash of a byte string (for URL tables). */
uint64_t sh_url_hash(const char *s, size_t n);

#endif
