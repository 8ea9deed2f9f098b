/*
 * duck_setting.c — registering a setting of tarn's own with DuckDB, so that
 * SET name = …, RESET name and current_setting('name') work as for an
 * extension's setting.
 *
 * The calls are those of DuckDB 1.5's C API (libduckdb 1.5 has them); the
 * duckdb.h tarn builds against is 1.4's and does not declare them, so they
 * are declared here, with an opaque type of tarn's own name.
 */
#include "duck/duck.h"

#include "tarn/error.h"

typedef struct duck_config_option_s *duck_config_option;
duck_config_option duckdb_create_config_option(void);
void duckdb_destroy_config_option(duck_config_option *option);
void duckdb_config_option_set_name(duck_config_option option, const char *name);
void duckdb_config_option_set_type(duck_config_option option, duckdb_logical_type type);
void duckdb_config_option_set_default_value(duck_config_option option, duckdb_value value);
void duckdb_config_option_set_default_scope(duck_config_option option, int scope);
void duckdb_config_option_set_description(duck_config_option option, const char *description);
duckdb_state duckdb_register_config_option(duckdb_connection con, duck_config_option option);

enum { DUCK_SCOPE_GLOBAL = 3 }; /* DUCKDB_CONFIG_OPTION_SCOPE_GLOBAL */

int duck_register_setting(duckdb_connection con, const char *name, const char *description,
                          duckdb_type type, const char *dflt)
{
    duck_config_option o = duckdb_create_config_option();
    duckdb_config_option_set_name(o, name);
    duckdb_config_option_set_description(o, description);
    duckdb_logical_type t = duckdb_create_logical_type(type);
    duckdb_config_option_set_type(o, t);
    duckdb_destroy_logical_type(&t);
    if (dflt) { /* DuckDB casts it to the setting's type */
        duckdb_value v = duckdb_create_varchar(dflt);
        duckdb_config_option_set_default_value(o, v);
        duckdb_destroy_value(&v);
    }
    duckdb_config_option_set_default_scope(o, DUCK_SCOPE_GLOBAL);
    duckdb_state st = duckdb_register_config_option(con, o);
    duckdb_destroy_config_option(&o);
    return st == DuckDBSuccess ? 0 : tarn_error_set(TARN_ERROR, "cannot register setting %s", name);
}
