/*
 * inputs.h — a model's inputs besides its SQL and upstream tables (config
 * statements, files, non-determinism), for change detection. Internal to
 * materialize/ (change.c).
 */
#ifndef TARN_MATERIALIZE_INPUTS_H
#define TARN_MATERIALIZE_INPUTS_H

#include "materialize/change.h"

/* Fills, for each model i with sel[i], cc->config_hash[i] (the hash of
 * the config statements it reaches and of its data tests),
 * cc->files_json[i] (the fingerprints of the files it names),
 * cc->vol[i] and cc->always[i] (why it runs every time, or NULL). */
void change_inputs_load(change_ctx *cc, const unsigned char *sel);

/* Whether cc->vol[i] `vol` names a function (printed with "()"), not a
 * keyword such as CURRENT_TIMESTAMP. */
int change_volatile_is_call(const char *vol);

/* The first half of a config hash covers the config statements, the
 * second the model's data tests. */
#define CONFIG_HALF 32

#endif
