/*
 * attach.h — attaching a project's lake read-only, for the commands and
 * views that only read it (plan, history, show, runs, `tarn serve`): the
 * ATTACH statements of config/ run with READ_ONLY added to the lake's, so
 * that readers work beside each other (its catalog file is opened with a
 * shared lock) and never create a lake.
 */
#ifndef TARN_PROJECT_ATTACH_H
#define TARN_PROJECT_ATTACH_H

#include "project/project.h"
#include "tarn/session.h"

/* Runs only the ATTACH statements of config/ (so that reading does not
 * depend on the sources), the lake's READ_ONLY. Returns 0, or < 0 with the
 * error in tarn_error_last(), prefixed with the config file and line of
 * the failing statement; TARN_ENOTFOUND when config/ attached no lake of
 * the project's alias. */
int project_attach_read_only(tarn_project *p, tarn_session *s);
/* The same, the lake attached as config/ says when !read_only (a command
 * that writes it). */
int project_attach_lake(tarn_project *p, tarn_session *s, int read_only);

/* 0 when the lake's catalog is a local file that does not exist yet
 * (nothing was built; a read-only ATTACH cannot create it). */
int project_lake_exists(const tarn_project *p);

#endif
