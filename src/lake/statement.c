/*
 * statement.c — beginning and ending one writing statement on a lake (see
 * statement.h). No catalog rows of its own: an autocommit statement's
 * transaction commits through commit.c (or, when it fails, rolls back); a
 * statement inside BEGIN … COMMIT leaves its changes, or its failure, to
 * the open transaction (txn.h).
 */
#include "lake/statement.h"

#include "lake/lake.h"
#include "lake/txn.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>

int lk_statement_begin(lk_lake *l, duckdb_connection con, int explicit_txn)
{
    return lk_lake_begin(l, con, explicit_txn);
}

int lk_statement_end(lk_lake *l, duckdb_connection con, int explicit_txn, int rc)
{
    if (!rc && !explicit_txn && l->txn) {
        /* the commit reads rows an insert left in the stage (write.h):
         * the scratch tables go after it */
        rc = lk_lake_commit(l, con);
        tarn_error_saved err = tarn_error_save();
        lk_write_cleanup(NULL, con);
        tarn_error_restore(&err);
        return rc;
    }
    if (rc) {
        /* the cleanup may fail too (in an aborted transaction): keep the
         * error that matters */
        tarn_error_saved err = tarn_error_save(); /* message and position */
        lk_write_cleanup(l, con);
        tarn_error_restore(&err);
    } else {
        lk_write_cleanup(l, con);
    }
    if (!l->txn)
        return rc;
    if (rc) {
        if (!explicit_txn) {
            char *msg = xstrdup(tarn_error_last());
            int code = tarn_error_code();
            lk_lake_rollback(l, con); /* may clear the error */
            tarn_error_set(code, "%s", msg);
            free(msg);
        }
        return rc;
    }
    if (!explicit_txn)
        return lk_lake_commit(l, con);
    return lk_lake_sync_statement_views(l, con);
}
