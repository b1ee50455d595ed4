/* The results of a collections run (core/collections.h) read back, for
 * look-ups: a page by URL, its trivial cluster and collection, the
 * collections of colls.bin and the members of a similar cluster (the roll-up
 * of ranked results and the crawler's avoid list, section 5 of Cho et al.).
 * Layouts: core/formats.h, docs/collections.md. Read-only and reentrant. */
#ifndef SHINGLE_COLLVIEW_H
#define SHINGLE_COLLVIEW_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"
#include "formats.h"

typedef struct sh_coll_view sh_coll_view;

/* Open the results in dir (after sh_coll_grow). Errors: SH_EIO, SH_EFORMAT
 * naming the file. */
sh_status sh_coll_view_open(sh_coll_view **out, const char *dir, sh_error *err);
void sh_coll_view_close(sh_coll_view *v);

uint32_t sh_coll_view_npages(const sh_coll_view *v);
/* The page with URL url[0..n) (normalized first), or UINT32_MAX. */
uint32_t sh_coll_view_find(const sh_coll_view *v, const char *url, size_t n);
const sh_pagerec *sh_coll_view_page(const sh_coll_view *v, uint32_t page);
const char *sh_coll_view_url(const sh_coll_view *v, uint32_t page, size_t *len);
const char *sh_coll_view_site(const sh_coll_view *v, uint32_t site);
/* The page's trivial cluster and its size. */
uint32_t sh_coll_view_trivial(const sh_coll_view *v, uint32_t page, uint32_t *size);
/* The cluster (1-based; 0: none) and collection of the page's first membership. */
uint32_t sh_coll_view_cluster(const sh_coll_view *v, uint32_t page, uint32_t *collection);
const sh_collrec *sh_coll_view_colls(const sh_coll_view *v, size_t *n);
/* The members of cluster id (1-based), in collection order; *n of them. */
const sh_memberrec *sh_coll_view_members(const sh_coll_view *v, uint32_t cluster, size_t *n);

#endif
