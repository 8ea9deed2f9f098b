/*
 * scan_input.h — a table's files as a scan reads them (scan_input.c): the
 * catalog queries that list them (the scan cache's prefill runs them for
 * every table at once) and the files of an open transaction.
 * Not part of libtarn's API.
 */
#ifndef TARN_LAKE_SCAN_INPUT_H
#define TARN_LAKE_SCAN_INPUT_H

#include "duck/duck.h"
#include "lake/handle.h"
#include "lake/txn.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t id, row_id_start, begin, partial_max; /* partial_max -1: none */
    int64_t record_count;
    char *path;     /* as passed to read_parquet */
    char *del_path; /* NULL: no delete file */
    int del_has_snap;
    char *pconst;     /* signature of the file's identity partition values ("" none) */
    int64_t *pk_cols; /* those values: column ids and texts (NULL: SQL NULL) */
    char **pk_vals;
    size_t npk;
    int64_t mapping_id;  /* its name mapping (namemap.h), -1: columns by field id */
    int pending;         /* written by the open transaction */
    int64_t index;       /* its place in the table's file list (file_index) */
    int64_t local_start; /* row id of its first row as a user reads it (LK_SCAN_LOCAL_ROWIDS) */
} scan_file;

typedef struct {
    scan_file *files;
    size_t n;
    int has_inline_deletes;
    int any_partitioned; /* some committed file was written under a partition spec */
} scan_input;

void scan_input_free(scan_input *in);
/* Frees what one file holds (not the file itself). */
void scan_file_free(scan_file *f);
/* A new zeroed file at the end of `in`. */
scan_file *scan_push_file(scan_input *in);
/* Appends the files transaction `txn` wrote for table `table_id` (begun
 * at its snapshot); with `renumbered`, under the ids its commit gave them. */
void scan_add_pending_files(scan_input *in, const lk_txn *txn, int64_t table_id, int renumbered);

/* Inside a transaction whose maintenance functions rewrote table
 * `table_id`: drops the committed files they replaced and appends the
 * files they wrote, as the commit will list them. */
void scan_apply_maintenance(scan_input *in, const lk_txn *txn, int64_t table_id);

/* The committed data files (and their delete files) live at snapshot s,
 * of table `table_id` or (-1) of every table, ordered by table and file
 * (columns: see scan_input.c). */
int scan_query_files(duck_table *r, lk_lake *lake, duckdb_connection con, int64_t table_id,
                     int64_t s);
/* Appends the files of rows [from, to) of a scan_query_files result; `dir`
 * is the table's directory (relative paths are under it). */
void scan_add_file_rows(scan_input *in, const duck_table *r, size_t from, size_t to,
                        const char *dir);
/* The identity partition values of committed files, of table `table_id`
 * or (-1) of every table, ordered by file. */
int scan_query_partition_values(duck_table *r, lk_lake *lake, duckdb_connection con,
                                int64_t table_id);
/* Gives each file of `in` its identity partition values from a
 * scan_query_partition_values result, and its group signature. */
void scan_apply_partition_values(scan_input *in, const lk_table *t, const duck_table *r);

#endif
