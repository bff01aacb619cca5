/* The 64x64 -> 128-bit product of two words with its halves xor-ed (wyhash's mum): one multiplication that mixes every
 * bit of both operands, the step of the tracer's key digests and of a sealed trace's stream digests. */
#ifndef HISTEG_MUM_H
#define HISTEG_MUM_H

#include <stdint.h>

static inline uint64_t
histeg_mum(uint64_t x, uint64_t y)
{
#ifdef __SIZEOF_INT128__
    __uint128_t r = (__uint128_t)x * y;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
    uint64_t xl = (uint32_t)x, xh = x >> 32, yl = (uint32_t)y, yh = y >> 32;
    uint64_t ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll, hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return lo ^ hi;
#endif
}

#endif
