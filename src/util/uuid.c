/*
 * uuid.c — version-7 UUIDs (see uuid.h): the time prefix makes names sort
 * by creation, the 74 random bits (getrandom) make them unique; and
 * random version-4 ones, DuckDB's uuid().
 */
#include "util/uuid.h"

#include "util/buf.h"
#include "util/clock.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

/* Fills `b` with random bytes; getrandom only fails before the kernel's
 * pool is ready or on an old kernel, where rand() stands in. */
static void random_bytes(unsigned char *b, size_t n)
{
    if (getrandom(b, n, 0) == (ssize_t)n)
        return;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(rand() & 0xff);
}

static char *uuid_text(const unsigned char *u)
{
    return xasprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                     u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
                     u[13], u[14], u[15]);
}

char *uuid_v4(void)
{
    unsigned char u[16];
    random_bytes(u, 16);
    u[6] = (unsigned char)(0x40 | (u[6] & 0x0f)); /* version 4 */
    u[8] = (unsigned char)(0x80 | (u[8] & 0x3f)); /* variant 10 */
    return uuid_text(u);
}

char *uuid_v7(void)
{
    uint64_t ms = (uint64_t)(clock_epoch_s() * 1000);
    unsigned char u[16];
    random_bytes(u + 6, 10);
    for (int i = 0; i < 6; i++)
        u[i] = (unsigned char)(ms >> (40 - 8 * i));
    u[6] = (unsigned char)(0x70 | (u[6] & 0x0f)); /* version 7 */
    u[8] = (unsigned char)(0x80 | (u[8] & 0x3f)); /* variant 10 */
    return uuid_text(u);
}
