/*
 * router.h — which handler answers a request of the web view: the page
 * (/, and its embedded files), the JSON API under /api/ (api.h), and 404
 * for anything else (JSON under /api/, text elsewhere).
 */
#ifndef TARN_WEB_ROUTER_H
#define TARN_WEB_ROUTER_H

#include "web/api.h"
#include "web/reply.h"

void web_route(web_reply *r, const web_req *q);

#endif
