/*
 * duck_fn.c — registering tarn's own functions in DuckDB through the C API
 * (__tarn_pg_scan, __tarn_dv_positions, __tarn_deleted): whether a
 * connection's database has one already, and a table function of VARCHAR
 * arguments registered once. Functions live in the database, so a second
 * connection to it finds them there and registers nothing.
 */
#include "duck/duck.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

int duck_function_exists(int *out, duckdb_connection con, const char *name)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT count(*) FROM duckdb_functions() WHERE function_name = ");
    quote_literal(&sql, name);
    int64_t have = 0;
    int rc = duck_query_int64(&have, NULL, con, buf_cstr(&sql));
    buf_free(&sql);
    *out = have > 0;
    return rc;
}

int duck_table_function_register(duckdb_connection con, const char *name, size_t nargs,
                                 duckdb_table_function_bind_t bind,
                                 duckdb_table_function_init_t init, duckdb_table_function_t fn)
{
    int have = 0;
    int rc = duck_function_exists(&have, con, name);
    if (rc || have)
        return rc;
    duckdb_table_function f = duckdb_create_table_function();
    duckdb_table_function_set_name(f, name);
    duckdb_logical_type v = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    for (size_t i = 0; i < nargs; i++)
        duckdb_table_function_add_parameter(f, v);
    duckdb_destroy_logical_type(&v);
    duckdb_table_function_set_bind(f, bind);
    duckdb_table_function_set_init(f, init);
    duckdb_table_function_set_function(f, fn);
    if (duckdb_register_table_function(con, f) != DuckDBSuccess)
        rc = tarn_error_set(TARN_ERROR, "cannot register the function %s", name);
    duckdb_destroy_table_function(&f);
    return rc;
}
