/*
 * hex.h — one hexadecimal digit's value, for decoding the escapes of hive
 * partition paths (%2F) and PostgreSQL's bytea text (\x0a1b).
 */
#ifndef TARN_HEX_H
#define TARN_HEX_H

/* The value of hex digit c (0-9, a-f, A-F), or -1 when c is none. */
static inline int hex_digit_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
