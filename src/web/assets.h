/*
 * assets.h — the page of the web view, embedded in the binary at build
 * time (scripts/embed_assets.py writes build/gen/web_assets.c): index.html,
 * app.css and app.js from src/web/page/, and the graph layout library
 * (dagre, fetched by scripts/deps.sh by exact version and checksum) — so
 * the page loads nothing from elsewhere.
 */
#ifndef TARN_WEB_ASSETS_H
#define TARN_WEB_ASSETS_H

#include <stddef.h>

typedef struct {
    const char *path; /* "/app.js" */
    const char *ctype;
    const unsigned char *data;
    size_t len;
} web_asset;

extern const web_asset web_assets[];
extern const size_t web_nassets;

#endif
