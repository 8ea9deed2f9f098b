/*
 * murmur3.h — MurmurHash3 x86 32-bit, the hash of DuckLake's bucket(N)
 * partition transform (Iceberg spec, Appendix B: seed 0), and the byte
 * forms DuckLake hashes values of each type by. See murmur3.c.
 */
#ifndef TARN_LAKE_MURMUR3_H
#define TARN_LAKE_MURMUR3_H

#include <stddef.h>
#include <stdint.h>

/* MurmurHash3_x86_32 of `len` bytes with `seed`, as a signed 32-bit value. */
int32_t lk_murmur3_32(const void *data, size_t len, uint32_t seed);

/* The hash of a 64-bit integer: its 8 little-endian bytes, seed 0 (Iceberg
 * hashLong). Integers of every width, booleans (0/1), dates (days),
 * times and timestamps (their stored count) and DECIMALs of up to 18
 * digits (the unscaled value) are hashed this way. */
int32_t lk_murmur3_long(int64_t v);

/* The hash of a floating-point value: the bits of the value as a double,
 * -0.0 made 0.0 first, hashed as a long (FLOAT is widened to DOUBLE). */
int32_t lk_murmur3_double(double v);

/* The bucket of a hash among n (n >= 1): (hash & INT32_MAX) % n. */
int32_t lk_murmur3_bucket(int32_t hash, int32_t n);

#endif
