/* Multiplication in GF(2)[x] / P for P of degree 64 with the carry-less
 * multiply instruction (x86-64 PCLMULQDQ), chosen at run time: the same
 * products as the sh_mulx tables, bit for bit, without their 16 KiB of table
 * per factor competing for the L1 cache. Barrett reduction (Barrett 1986;
 * as in Intel's CRC folding): with mu = floor(x^128 / P) = x^64 + mu_lo,
 *   (hi * x^64 + lo) mod P = lo ^ low64(clmul(hi ^ high64(clmul(hi, mu_lo)), p)).
 * Used by the shingler only when k = 64 and the processor has the instruction. */
#ifndef SHINGLE_CLMUL_H
#define SHINGLE_CLMUL_H

#include <stdint.h>

typedef struct sh_clmul {
    uint64_t p;       /* P's low 64 bits */
    uint64_t mu;      /* low 64 bits of floor(x^128 / P) */
} sh_clmul;

/* 1 if this build and processor can use the carry-less multiply. */
int sh_clmul_available(void);

/* The Barrett constant of P = x^64 + p. */
void sh_clmul_init(sh_clmul *c, uint64_t p);

/* Reference versions (also the fallback): a * c mod P and a * x^64 mod P. */
uint64_t sh_clmul_mul(const sh_clmul *c, uint64_t a, uint64_t b);
uint64_t sh_clmul_x64(const sh_clmul *c, uint64_t a);

#endif
