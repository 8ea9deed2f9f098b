/*
 * ddl_alter_int.h — the changes of the table itself (ddl_alter_table.c)
 * that lk_alter_table (ddl_alter.c, the column changes) routes an ALTER
 * TABLE to; what both use is in ddl_int.h. Internal to lake/.
 */
#ifndef TARN_LAKE_DDL_ALTER_INT_H
#define TARN_LAKE_DDL_ALTER_INT_H

#include "lake/ddl.h"
#include "lake/model.h"

/* The table-level ALTERs (ddl_alter_table.c), 0 or < 0: RENAME TO; SET /
 * RESET PARTITIONED BY (1 when the spec is the one the table has: nothing
 * changes); SET / RESET SORTED BY. */
int ddl_rename_table(lk_lake *lake, lk_table *t, const char *new_name);
int ddl_set_partition(lk_lake *lake, lk_table *t, const lk_alter *op);
int ddl_set_sort(lk_lake *lake, lk_table *t, const lk_alter *op);

#endif
