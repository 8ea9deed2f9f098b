/*
 * hostcheck.h — which requests `tarn serve` answers, by their Host and
 * Origin headers: the defence against DNS rebinding (a page on
 * evil.example whose name is made to resolve to 127.0.0.1 reads the API
 * with the browser's help; its requests carry `Host: evil.example`) and
 * against a page elsewhere starting runs (a cross-site POST carries its
 * own Origin). Pure string logic, unit-tested (tests/unit/test_hostcheck.c).
 */
#ifndef TARN_WEB_HOSTCHECK_H
#define TARN_WEB_HOSTCHECK_H

/* 1 when a request whose Host header is `host` (NULL: none, as HTTP/1.0
 * allows) may be answered: the host part (without the port) is an IP
 * address literal (127.0.0.1, [::1], 192.168.1.5: no name to rebind),
 * `localhost` or a name under `.localhost`, or one of the names in
 * `allowed` (comma-separated, case-insensitive; NULL for none: `tarn
 * serve --allow-host`). Else 0. */
int web_host_allowed(const char *host, const char *allowed);

/* 1 when a state-changing request (POST) with Origin header `origin`
 * (NULL: none, as curl sends) and Host header `host` comes from the page
 * itself: no Origin, or an Origin `http://HOST` naming the same host and
 * port as the Host header. Else 0 (another site's page, or "null"). */
int web_origin_same(const char *origin, const char *host);

#endif
