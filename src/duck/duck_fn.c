/*
 * duck_fn.c — registering tarn's own functions in DuckDB through the C API
 * (__tarn_pg_scan, __tarn_dv_positions, __tarn_deleted): a table function
 * of VARCHAR arguments. They are registered on every attach, with no check
 * whether the database has them already: registering again replaces the
 * same function (a second connection to the database included), while
 * asking duckdb_functions() scans every function DuckDB has (30-100 ms,
 * more than a whole small commit).
 */
#include "duck/duck.h"

#include "tarn/error.h"

int duck_table_function_register(duckdb_connection con, const char *name, size_t nargs,
                                 duckdb_table_function_bind_t bind,
                                 duckdb_table_function_init_t init, duckdb_table_function_t fn)
{
    int rc = 0;
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
