/*
 * hash.c — SHA-256 through libcrypto's EVP interface, and SQL
 * normalization for the model hash (see hash.h).
 */
#include "project/hash.h"

#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

void hash_sha256_hex(char out[65], const void *data, size_t n)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(data, n, md, &len, EVP_sha256(), NULL);
    for (unsigned int i = 0; i < len && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    out[64] = 0;
}

char *hash_normalize_sql(const char *sql)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, sql) != 0) {
        tarn_error_clear();
        return xstrdup(sql);
    }
    tarn_buf b = {0};
    for (size_t i = 0; i < tk.n; i++) {
        const sql_token *t = &tk.toks[i];
        if (i)
            buf_putc(&b, ' ');
        if (t->type == SQL_TOK_STRING)
            quote_literal(&b, t->text);
        else if (t->type == SQL_TOK_QIDENT)
            quote_ident(&b, t->text);
        else
            buf_puts(&b, t->text);
    }
    sql_tokens_free(&tk);
    return buf_detach(&b);
}
