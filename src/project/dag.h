/*
 * dag.h — the model graph: edges from table references, a deterministic
 * topological order, and cycles reported by name.
 */
#ifndef TARN_PROJECT_DAG_H
#define TARN_PROJECT_DAG_H

#include "project/diag.h"
#include "project/project.h"

/* Fills p->order (upstream first; among independent models, by path). A
 * cycle adds one error naming it, at the file and line of the reference
 * that closes it; returns the number of errors added. Needs every model's
 * `up` list; fills `down`. */
int dag_build(tarn_project *p, diag_list *d);

/* Marks in `mark` (one byte per model) every model upstream of `m`
 * (direction -1) or downstream (+1), transitively; `m` itself is not
 * marked unless a cycle leads back to it. */
void dag_closure(const tarn_project *p, size_t m, int direction, unsigned char *mark);

#endif
