/*
 * hash.h — SHA-256 (OpenSSL libcrypto) and the model hash.
 *
 * The model hash identifies what a build writes: the model's SQL with
 * comments and whitespace normalized away (tokens, so reformatting changes
 * nothing while a changed literal or name does) plus the write-affecting
 * annotations. It is recorded with every build.
 */
#ifndef TARN_PROJECT_HASH_H
#define TARN_PROJECT_HASH_H

#include <stddef.h>

/* Lower-case hex SHA-256 of `data` into out (65 bytes with the NUL). */
void hash_sha256_hex(char out[65], const void *data, size_t n);

/* The normalized form of a SQL text: its tokens, one space apart, strings
 * and quoted names re-quoted (caller frees). Falls back to the raw text
 * when it does not tokenize. */
char *hash_normalize_sql(const char *sql);

#endif
