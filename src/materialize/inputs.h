/*
 * inputs.h — a model's inputs besides its SQL and its upstream tables
 * (inputs.c), for change detection (change.c): the config statements it
 * reaches, the files it names, what makes it run every time.
 */
#ifndef TARN_MATERIALIZE_INPUTS_H
#define TARN_MATERIALIZE_INPUTS_H

#include "materialize/change_state.h"

/* Fills, for each model i with sel[i], cc->config_hash[i] (the hash of
 * the config statements it reaches and of its data tests),
 * cc->files_json[i] (the fingerprints of the files it names),
 * cc->vol[i] and cc->always[i] (why it runs every time, or NULL). */
void change_inputs_load(change_ctx *cc, const unsigned char *sel);

/* Whether cc->vol[i] `vol` names a function (printed with "()"), not a
 * keyword such as CURRENT_TIMESTAMP. */
int change_volatile_is_call(const char *vol);

#endif
