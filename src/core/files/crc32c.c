/*
 * crc32c.c: CRC-32C (see crc32c.h).
 *
 * Two ways to the same bits: the x86 CRC32 instruction (SSE4.2), eight
 * bytes a cycle or so, where the CPU has it, else eight table lookups per
 * eight bytes ("slicing by 8").  A 500 MB checkpoint is checked in a
 * tenth of a second either way on today's machines rather than a second
 * a byte at a time.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "attnscope/files/crc32c.h"

/* The reflected Castagnoli polynomial. */
#define CRC32C_POLY 0x82f63b78u

/* table[k][b]: the CRC of byte b followed by k zero bytes. */
static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int use_hardware;

static void
init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        table[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xff];
#if defined(__x86_64__) && defined(__GNUC__)
    use_hardware = __builtin_cpu_supports("sse4.2");
#endif
}

/* The table's way, on the inverted register c. */
static uint32_t
extend_table(uint32_t c, const unsigned char *p, size_t n)
{
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
            table[4][lo >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^
            table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return c;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The instruction's way (its polynomial is CRC-32C's), on the inverted register c. */
__attribute__((target("sse4.2"))) static uint32_t
extend_hardware(uint32_t c, const unsigned char *p, size_t n)
{
    uint64_t c64 = c;

    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8); /* x86 is little-endian, as the CRC reads bytes */
        c64 = __builtin_ia32_crc32di(c64, v);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
    while (n-- > 0)
        c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}
#endif

uint32_t
crc32c_extend(uint32_t crc, const unsigned char *data, size_t n)
{
    pthread_once(&table_once, init);
#if defined(__x86_64__) && defined(__GNUC__)
    if (use_hardware)
        return ~extend_hardware(~crc, data, n);
#endif
    return ~extend_table(~crc, data, n);
}

uint32_t
crc32c_extend_portable(uint32_t crc, const unsigned char *data, size_t n)
{
    pthread_once(&table_once, init);
    return ~extend_table(~crc, data, n);
}

/* LevelDB's mask: rotate right by 15 bits and add a constant. */
#define CRC32C_MASK_DELTA 0xa282ead8u

uint32_t
crc32c_mask(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + CRC32C_MASK_DELTA;
}

uint32_t
crc32c_unmask(uint32_t masked)
{
    uint32_t rot = masked - CRC32C_MASK_DELTA;

    return (rot >> 17) | (rot << 15);
}
