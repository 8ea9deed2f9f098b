/*
 * ddl_alter_int.h — what ALTER TABLE's two files share (ddl_alter.c, the
 * column changes and lk_alter_table; ddl_alter_table.c, the changes of the
 * table itself). Internal to lake/.
 */
#ifndef TARN_LAKE_DDL_ALTER_INT_H
#define TARN_LAKE_DDL_ALTER_INT_H

#include "lake/ddl.h"
#include "lake/model.h"

/* Records, once per table and commit, that t's layout changed (a
 * schema_versions row; with new_columns, a new inlined-data table when t
 * inlines). ddl_alter.c. */
void ddl_layout_changed(lk_lake *lake, lk_table *t, int new_columns);

/* The table-level ALTERs (ddl_alter_table.c), 0 or < 0: RENAME TO; SET /
 * RESET PARTITIONED BY (1 when the spec is the one the table has: nothing
 * changes); SET / RESET SORTED BY. */
int ddl_rename_table(lk_lake *lake, lk_table *t, const char *new_name);
int ddl_set_partition(lk_lake *lake, lk_table *t, const lk_alter *op);
int ddl_set_sort(lk_lake *lake, lk_table *t, const lk_alter *op);

#endif
