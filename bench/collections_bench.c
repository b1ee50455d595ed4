/* Generates a web graph for the collections benchmark (bench/collections_bench.sh)
 * as JSON Lines pages with HTML text and relative links:
 *
 *   collections_bench PAGES OUT.jsonl [SEED]
 *
 * About 60% of the pages are in mirrored collections: collection templates of
 * 20 to 2000 pages (a tree: every page links to its parent, its children and
 * two random pages of the collection), each copied to 2 to 40 sites under
 * /docs/, each copy with its own one-line header on every page; one copy in
 * five is partial (its last third missing, links to it pointing at the first
 * copy's site), one in five older (a line of a tenth of its pages changed).
 * The rest is noise: unique pages on noise sites, 8 links each within their
 * site. Prints the ground truth (collections, copies, pages) to stderr. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint32_t below(uint32_t n) { return (uint32_t)(rnd() % n); }

#define LINES 24
#define WORDS 8

/* the text of page p of template t: LINES lines of WORDS words, deterministic */
static void page_text(FILE *f, uint32_t t, uint32_t p, int changed)
{
    uint64_t save = rng_state;
    int l, w;
    rng_state = ((uint64_t)t << 32) ^ p ^ 0x5eedULL;
    for (l = 0; l < LINES; l++) {
        fputs("<p>", f);
        for (w = 0; w < WORDS; w++) fprintf(f, "%sw%" PRIu32, w ? " " : "", below(50000));
        if (changed && l == LINES / 2) fputs(" revised in a later release", f);
        fputs("</p>", f);
    }
    rng_state = save;
}

int main(int argc, char **argv)
{
    uint64_t target, made = 0, in_coll = 0;
    uint32_t t = 0, noise_site = 0, n_copies_total = 0;
    FILE *f;
    if (argc < 3) { fprintf(stderr, "usage: collections_bench PAGES OUT.jsonl [SEED]\n"); return 2; }
    target = strtoull(argv[1], NULL, 10);
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 42;
    f = fopen(argv[2], "wb");
    if (!f) { perror(argv[2]); return 1; }
    while (in_coll < target * 6 / 10) {
        uint32_t size = 20 + below(below(10) == 0 ? 1981 : 200), copies = 2 + below(below(8) == 0 ? 39 : 6), c, p;
        for (c = 0; c < copies; c++) {
            int partial = c > 0 && below(5) == 0, older = c > 0 && !partial && below(5) == 0;
            uint32_t last = partial ? size - size / 3 : size;
            for (p = 0; p < last; p++) {
                uint32_t kids[3], k, nk = 0;
                fprintf(f, "{\"url\":\"http://c%" PRIu32 "-m%" PRIu32 ".example/docs/p%" PRIu32 ".html\",\"text\":\"<html><body>",
                        t, c, p);
                fprintf(f, "<div>mirror %" PRIu32 " of collection %" PRIu32 " page %" PRIu32 " header %" PRIu32 "</div>", c, t, p,
                        below(1000000));
                page_text(f, t, p, older && p % 10 == 0);
                for (k = 1; k <= 3; k++) if (3 * p + k < size) kids[nk++] = 3 * p + k;
                if (p > 0) fprintf(f, "<a href='p%" PRIu32 ".html'>up</a>", (p - 1) / 3);
                for (k = 0; k < nk; k++) {
                    if (kids[k] >= last)
                        fprintf(f, "<a href='http://c%" PRIu32 "-m0.example/docs/p%" PRIu32 ".html'>more</a>", t, kids[k]);
                    else
                        fprintf(f, "<a href='p%" PRIu32 ".html#top'>more</a>", kids[k]);
                }
                {
                    uint64_t save = rng_state;
                    rng_state = ((uint64_t)t << 32) ^ p ^ 0x1111ULL;
                    for (k = 0; k < 2; k++) {
                        uint32_t q = below(size);
                        if (q < last) fprintf(f, "<a href='./p%" PRIu32 ".html'>see</a>", q);
                    }
                    rng_state = save;
                }
                fputs("</body></html>\"}\n", f);
                made++;
                in_coll++;
            }
            n_copies_total++;
        }
        t++;
    }
    while (made < target) {
        uint32_t n = 50 + below(500), p, k, l, w;
        for (p = 0; p < n && made < target; p++) {
            fprintf(f, "{\"url\":\"http://noise%" PRIu32 ".example/n%" PRIu32 ".html\",\"text\":\"<html><body>", noise_site, p);
            for (l = 0; l < LINES; l++) {
                fputs("<p>", f);
                for (w = 0; w < WORDS; w++) fprintf(f, "%sw%" PRIu32, w ? " " : "", below(50000));
                fputs("</p>", f);
            }
            for (k = 0; k < 8; k++) fprintf(f, "<a href='n%" PRIu32 ".html'>x</a>", below(n));
            fputs("</body></html>\"}\n", f);
            made++;
        }
        noise_site++;
    }
    if (fclose(f) != 0) { perror(argv[2]); return 1; }
    fprintf(stderr, "pages %" PRIu64 ": %" PRIu64 " in %" PRIu32 " collections (%" PRIu32 " copies), %" PRIu64
            " noise on %" PRIu32 " sites\n", made, in_coll, t, n_copies_total, made - in_coll, noise_site);
    return 0;
}
