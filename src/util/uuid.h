/*
 * uuid.h — new UUIDs (version 7, RFC 9562) made in C, for the names tarn
 * gives lake objects and files (what DuckDB's uuidv7() gives, without a
 * query per name).
 */
#ifndef TARN_UTIL_UUID_H
#define TARN_UTIL_UUID_H

/* A new version-7 UUID in canonical form ("01a22c01-1f44-7eb7-a54a-…"):
 * 48 bits of Unix time in milliseconds, then random bits. Caller frees. */
char *uuid_v7(void);
/* A new random (version 4) UUID, as DuckDB's uuid() gives. Caller frees. */
char *uuid_v4(void);

#endif
