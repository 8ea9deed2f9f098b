// app.js — tarn serve's page: the graph, the runs and a model's history,
// drawn from the JSON API under /api/. Every value from the lake reaches
// the page as text (textContent, never HTML): table names and rows are
// user data.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

// h("td", {class: "num"}, "text", child, …): an element; strings become text nodes.
function h(tag, attrs, ...kids)
{
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === null || v === undefined || v === false)
            continue;
        if (k.startsWith("on"))
            e.addEventListener(k.slice(2), v);
        else
            e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const k of kids.flat()) {
        if (k === null || k === undefined)
            continue;
        e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    }
    return e;
}
function s(tag, attrs, ...kids)
{
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {}))
        e.setAttribute(k, String(v));
    for (const k of kids)
        e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
}

// fetches /api/PATH; while the lake is busy (503 busy) it says so and retries
let generation = 0;
async function api(path, opts)
{
    const gen = generation;
    for (;;) {
        const res = await fetch("/api/" + path, opts);
        const body = await res.json().catch(() => ({error : "the server's answer was not JSON"}));
        if (gen !== generation)
            throw new Error("navigated away");
        if (res.status === 503 && body.busy) {
            $("busy").hidden = false;
            await new Promise((r) => setTimeout(r, 1500));
            if (gen !== generation)
                throw new Error("navigated away");
            continue;
        }
        $("busy").hidden = true;
        if (!res.ok) {
            const err = new Error(body.error || res.statusText);
            err.status = res.status;
            throw err;
        }
        return body;
    }
}

function statusBadge(st)
{
    const v = st || "none";
    return h("span", {class : "status st-" + v.replace(/[^a-z]/g, "")}, st || "not built");
}
function age(sec)
{
    if (sec === null || sec === undefined)
        return "never built";
    if (sec < 90)
        return sec + " s ago";
    if (sec < 5400)
        return Math.round(sec / 60) + " min ago";
    if (sec < 129600)
        return Math.round(sec / 3600) + " h ago";
    return Math.round(sec / 86400) + " d ago";
}
const num = (n) => (n === null || n === undefined ? "" : Number(n).toLocaleString("en"));
const modelHref = (name, tab) => "#/models/" + encodeURIComponent(name) + (tab ? "/" + tab : "");
function table(cols, rows, attrs)
{
    return h("table", attrs || {}, h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, c)))),
             h("tbody", {}, rows));
}
function gridTable(cols, rows)
{
    return table(cols,
                 rows.map((r) => h("tr", {},
                                   r.map((c) => c === null ? h("td", {class : "muted"}, "NULL")
                                                           : h("td", {}, c)))),
                 {class : "grid"});
}
function copyButton(text)
{
    return h("button", {
        class : "copy",
        onclick : (ev) => {
            navigator.clipboard && navigator.clipboard.writeText(text).catch(() => {});
            ev.target.textContent = "copied";
        }
    },
             "copy");
}

// ---- the graph -----------------------------------------------------------

async function showGraph(main)
{
    const g = await api("graph");
    main.append(h("h1", {}, "Models"));
    if (!g.nodes.length) {
        main.append(h("p", {class : "muted"}, "The project has no models yet."));
        return;
    }
    const lay = new dagre.graphlib.Graph({multigraph : true});
    lay.setGraph({rankdir : "LR", nodesep : 24, ranksep : 70, marginx : 16, marginy : 16});
    lay.setDefaultEdgeLabel(() => ({}));
    for (const n of g.nodes)
        lay.setNode(n.name, {width : 220, height : 66, data : n});
    for (const e of g.edges)
        lay.setEdge(e.from, e.to, {kind : e.kind}, e.kind);
    dagre.layout(lay);
    const gi = lay.graph();
    const svg = s("svg", {
        class : "graph",
        width : Math.ceil(gi.width),
        height : Math.ceil(gi.height),
        viewBox : "0 0 " + Math.ceil(gi.width) + " " + Math.ceil(gi.height)
    });
    svg.append(s("defs", {},
                 s("marker", {
                     id : "arrow",
                     viewBox : "0 0 10 10",
                     refX : 10,
                     refY : 5,
                     markerWidth : 7,
                     markerHeight : 7,
                     orient : "auto-start-reverse"
                 },
                   s("path", {d : "M 0 0 L 10 5 L 0 10 z", fill : "#8a94a6"}))));
    for (const ed of lay.edges()) {
        const e = lay.edge(ed);
        const d = e.points.map((p, i) => (i ? "L" : "M") + p.x.toFixed(1) + " " + p.y.toFixed(1))
                      .join(" ");
        svg.append(s("path", {
            class : "edge " + e.kind,
            d,
            "marker-end" : "url(#arrow)",
            "data-from" : ed.v,
            "data-to" : ed.w
        }));
    }
    for (const name of lay.nodes()) {
        const v = lay.node(name), n = v.data;
        const st = n.status || "none";
        const grp = s("g", {
            class : "node " + st.replace(/[^a-z]/g, ""),
            "data-model" : n.name,
            "data-status" : st,
            transform : "translate(" + (v.x - v.width / 2) + "," + (v.y - v.height / 2) + ")"
        });
        grp.append(s("rect", {width : v.width, height : v.height}));
        grp.append(s("text", {class : "title", x : 10, y : 18}, n.name));
        grp.append(
            s("text", {x : 10, y : 36},
              n.strategy + " \u00b7 " + (n.status || "not built") +
                  (n.tests ? " \u00b7 " + n.tests + " test" + (n.tests > 1 ? "s" : "") : "")));
        grp.append(
            s("text", {x : 10, y : 54},
              (n.rows === null ? "no table" : num(n.rows) + " rows") + " \u00b7 " + age(n.age_s)));
        const title = s("title", {}, n.name + (n.error ? "\n" + n.error : ""));
        grp.append(title);
        grp.addEventListener("click", () => { location.hash = modelHref(n.name); });
        grp.style.cursor = "pointer";
        svg.append(grp);
    }
    main.append(h("div", {class : "legend"},
                  [ "success", "failed", "skipped", "running" ].map((x) => statusBadge(x)),
                  statusBadge(null), h("span", {}, "\u2014 reads"),
                  h("span", {class : "legend-test"}, "- - a data test needs it built first")));
    main.append(svg);
}

// ---- runs ----------------------------------------------------------------

async function showRuns(main)
{
    const {runs} = await api("runs");
    main.append(h("h1", {}, "Runs"));
    if (!runs.length) {
        main.append(
            h("p", {class : "muted"}, "No runs recorded yet: tarn run builds the project."));
        return;
    }
    main.append(table(
        [
            "run", "trigger", "status", "started (UTC)", "duration", "built", "unchanged",
            "skipped", "failed"
        ],
        runs.map((r) => h("tr", {"data-run" : r.id},
                          h("td", {}, h("a", {href : "#/runs/" + r.id}, "#" + r.id)),
                          h("td", {}, r.trigger), h("td", {}, statusBadge(r.status)),
                          h("td", {}, (r.started_at || "").replace("T", " ").replace("Z", "")),
                          h("td", {class : "num"},
                            r.duration_s === null ? "" : r.duration_s.toFixed(1) + " s"),
                          h("td", {class : "num"}, num(r.built)),
                          h("td", {class : "num"}, num(r.unchanged)),
                          h("td", {class : "num"}, num(r.skipped)),
                          h("td", {class : "num"}, num(r.failed))))));
}

function sampleTable(sample)
{
    if (!Array.isArray(sample) || !sample.length)
        return null;
    if (typeof sample[0] === "object" && sample[0] !== null && !Array.isArray(sample[0])) {
        const cols = Object.keys(sample[0]);
        return gridTable(cols, sample.map((o) => cols.map((c) => (o[c] === null ? null
                                                                  : typeof o[c] === "object"
                                                                      ? JSON.stringify(o[c])
                                                                      : String(o[c])))));
    }
    return gridTable([ "value" ],
                     sample.map((v) => [typeof v === "object" ? JSON.stringify(v) : String(v)]));
}

function testsCell(tests)
{
    if (!Array.isArray(tests) || !tests.length)
        return h("td", {class : "muted"}, "\u2014");
    return h("td", {}, tests.map((t) => {
        const bad = t.violations > 0;
        const warn = bad && t.severity === "warn";
        const sample = t.sample || t.samples;
        const mark = bad ? (warn ? "\u26a0 " : "\u2717 ") : "\u2713 ";
        const count = bad ? ": " + num(t.violations) + " violation" + (t.violations > 1 ? "s" : "") : "";
        const rows = Array.isArray(sample) && sample.length ? sample : null;
        return h("div", {class : "test" + (bad ? (warn ? " warned" : " failed") : ""), "data-test" : t.test},
                 h("span", {class : bad ? (warn ? "warn" : "err") : ""},
                   mark + t.test + count + (warn ? " (severity warn)" : "")),
                 bad && t.examples ? h("div", {class : "sample"}, "e.g. ", h("code", {}, t.examples)) : null,
                 bad && rows ? h("div", {class : "sample"},
                                 h("div", {class : "muted"}, "sample of violating rows (" + rows.length +
                                   (t.sample_dropped ? ", " + t.sample_dropped + " more left out for size" : "") + ")"),
                                 sampleTable(rows))
                             : null,
                 bad && t.sample_error ? h("div", {class : "sample muted"}, "no sample: " + t.sample_error) : null);
    }));
}

function upstreamCell(up)
{
    if (!Array.isArray(up) || !up.length)
        return h("td", {class : "muted"}, "\u2014");
    return h(
        "td", {},
        up.map((u) => h("div", {},
                        u.model
                            ? h("a", {href : modelHref(u.model, "history") + "?v=" + u.snapshot_id},
                                u.table)
                            : u.table,
                        " ", h("code", {}, "AT (VERSION => " + u.snapshot_id + ")"))));
}

async function showRun(main, id)
{
    const r = await api("runs/" + encodeURIComponent(id));
    main.append(h("h1", {}, "Run #" + r.id + " ", statusBadge(r.status)));
    main.append(h("p", {},
                  r.trigger + " run, started " + (r.started_at || "") +
                      (r.duration_s !== null ? ", " + r.duration_s.toFixed(1) + " s" : "") +
                      (r.selectors ? ", selecting " + r.selectors : "") + " \u00b7 built " +
                      num(r.built) + ", unchanged " + num(r.unchanged) + ", skipped " +
                      num(r.skipped) + ", failed " + num(r.failed)));
    main.append(table(
        [
            "model", "status", "rows", "snapshot", "why it ran", "upstream read", "data tests",
            "error / note"
        ],
        r.models.map(
            (m) => h("tr", {"data-model" : m.model},
                     h("td", {}, h("a", {href : modelHref(m.model)}, m.model),
                       h("div", {class : "muted"}, m.strategy || "")),
                     h("td", {}, statusBadge(m.status)), h("td", {class : "num"}, num(m.rows)),
                     h("td", {class : "num"},
                       m.snapshot === null
                           ? ""
                           : h("a", {href : modelHref(m.model, "history") + "?v=" + m.snapshot},
                               m.snapshot)),
                     h("td", {}, m.run_reason || ""), upstreamCell(m.upstream), testsCell(m.tests),
                     h("td", {}, m.error ? h("pre", {class : "err"}, m.error) : m.note || "")))));
}

// ---- a model ---------------------------------------------------------------

function modelHeader(main, m, tab)
{
    main.append(h("h1", {}, m.name));
    main.append(
        h("p", {class : "muted"},
          m.path + " \u00b7 " + m.strategy + (m.schedule ? " \u00b7 schedule " + m.schedule : "")));
    main.append(h("div", {class : "tabs"},
                  h("a", {href : modelHref(m.name), class : tab === "overview" ? "active" : null},
                    "Overview"),
                  h("a", {
                      href : modelHref(m.name, "history"),
                      class : tab === "history" ? "active" : null,
                      id : "tab-history"
                  },
                    "History")));
}

async function showModel(main, name)
{
    const m = await api("models/" + encodeURIComponent(name));
    modelHeader(main, m, "overview");
    const links = (xs) =>
        xs.length ? xs.map((x, i) => [i ? ", " : "", h("a", {href : modelHref(x)}, x)]) : "\u2014";
    main.append(
        h("p", {}, "reads: ", links(m.upstream), h("br"), "read by: ", links(m.downstream)));
    main.append(h("h2", {}, "Builds"));
    main.append(
        m.builds.length
            ? table(
                  [
                      "run", "finished (UTC)", "status", "rows", "snapshot", "why it ran",
                      "data tests", "error / note"
                  ],
                  m.builds.map(
                      (b) => h(
                          "tr", {},
                          h("td", {}, h("a", {href : "#/runs/" + b.run_id}, "#" + b.run_id)),
                          h("td", {}, (b.finished_at || "").replace("T", " ").replace("Z", "")),
                          h("td", {}, statusBadge(b.status)), h("td", {class : "num"}, num(b.rows)),
                          h("td", {class : "num"}, b.snapshot === null ? "" : b.snapshot),
                          h("td", {}, b.run_reason || ""), testsCell(b.tests),
                          h("td", {},
                            b.error ? h("pre", {class : "err"}, b.error) : b.note || ""))))
            : h("p", {class : "muted"}, "Never built."));
    main.append(h("h2", {}, "SQL"), h("pre", {}, m.sql));
}

async function showHistory(main, name, params)
{
    const m = await api("models/" + encodeURIComponent(name));
    modelHeader(main, m, "history");
    if (!m.snapshots.length) {
        main.append(
            h("p", {class : "muted"}, "No snapshot of this model yet: tarn run builds it."));
        return;
    }
    const chosen = params.get("v") !== null ? Number(params.get("v")) : m.snapshots[0].version;
    const go =
        (p) => { location.hash = modelHref(name, "history") + "?" + new URLSearchParams(p); };
    const list =
        table([ "version", "time (UTC)", "rows written", "why", "commit message" ],
              m.snapshots.map(
                  (sn) => h("tr", {
                      "data-version" : sn.version,
                      class : sn.version === chosen ? "selected" : null,
                      onclick : () => go({v : sn.version})
                  },
                            h("td", {class : "num"}, sn.version),
                            h("td", {}, (sn.time || "").replace("T", " ").replace("Z", "")),
                            h("td", {class : "num"}, num(sn.rows)), h("td", {}, sn.reason || ""),
                            h("td", {}, sn.commit_message || ""))),
              {class : "snapshots"});
    const detail = h("div", {id : "version-detail"});
    main.append(h("div", {class : "history"}, h("div", {}, list), detail));

    const [pv, sc] = await Promise.all([
        api("models/" + encodeURIComponent(name) + "/preview?version=" + chosen),
        api("models/" + encodeURIComponent(name) + "/schema?version=" + chosen)
    ]);
    detail.append(
        h("h2", {}, "At version " + chosen),
        h("div", {class : "clause"}, h("code", {id : "at-clause"}, pv.clause),
          copyButton(pv.clause)),
        h("div", {class : "clause"}, h("code", {id : "at-query"}, pv.query), copyButton(pv.query)),
        h("p", {class : "muted"},
          (pv.total_rows === null ? "" : num(pv.total_rows) + " rows") +
              (pv.total_rows > pv.rows.length ? ", the first " + pv.rows.length + " shown" : "")),
        h("div", {id : "preview"}, gridTable(pv.columns, pv.rows)), h("h2", {}, "Schema"),
        table([ "column", "type", "nullable" ],
              sc.columns.map((c) => h("tr", {}, h("td", {}, c.name), h("td", {}, c.type),
                                      h("td", {}, c.nullable ? "yes" : "no")))));

    // what changed between two versions: the change feed
    const versions = m.snapshots.map((x) => x.version).sort((a, b) => a - b);
    const older = versions.filter((v) => v < chosen);
    const from = params.get("from") !== null ? Number(params.get("from"))
                 : older.length              ? older[older.length - 1]
                                             : null;
    const to = params.get("to") !== null ? Number(params.get("to")) : chosen;
    const pick = (id, val) =>
        h("select", {id},
          versions.map((v) => h("option", {value : v, selected : v === val ? true : null}, v)));
    const fsel = pick("changes-from", from), tsel = pick("changes-to", to);
    detail.append(h("h2", {}, "What changed"),
                  h("div", {class : "clause"}, "from version ", fsel, " to ", tsel,
                    h("button", {
                        id : "changes-go",
                        onclick : () => go({v : chosen, from : fsel.value, to : tsel.value})
                    },
                      "show")));
    if (from === null || from >= to) {
        detail.append(h("p", {class : "muted"}, "Pick an older version to compare with."));
        return;
    }
    const ch =
        await api("models/" + encodeURIComponent(name) + "/changes?from=" + from + "&to=" + to);
    detail.append(h("p", {id : "changes-counts"},
                    num(ch.counts.inserted) + " inserted, " + num(ch.counts.deleted) +
                        " deleted, " + num(ch.counts.updated) + " updated after version " + from +
                        " up to " + to),
                  h("div", {id : "changes"}, gridTable(ch.columns, ch.rows)));
}

// ---- routing ---------------------------------------------------------------

async function route()
{
    generation++;
    const main = $("main");
    main.replaceChildren();
    $("error").hidden = true;
    const [path, query] = (location.hash.replace(/^#/, "") || "/graph").split("?");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    const params = new URLSearchParams(query || "");
    $("nav-graph").className = parts[0] === "graph" ? "active" : "";
    $("nav-runs").className = parts[0] === "runs" ? "active" : "";
    try {
        if (parts[0] === "runs" && parts[1])
            await showRun(main, parts[1]);
        else if (parts[0] === "runs")
            await showRuns(main);
        else if (parts[0] === "models" && parts[2] === "history")
            await showHistory(main, parts[1], params);
        else if (parts[0] === "models" && parts[1])
            await showModel(main, parts[1]);
        else
            await showGraph(main);
        document.body.dataset.ready = String(generation);
    } catch (e) {
        if (e.message === "navigated away")
            return;
        $("error").textContent = e.message;
        $("error").hidden = false;
        document.body.dataset.ready = String(generation);
    }
}

async function start()
{
    window.addEventListener("hashchange", route);
    const btn = $("run-now");
    btn.addEventListener("click", async () => {
        btn.disabled = true;
        try {
            await api("runs", {method : "POST"});
            location.hash = "#/runs";
        } catch (e) {
            $("error").textContent = e.message;
            $("error").hidden = false;
        }
        setTimeout(() => {
            btn.disabled = false;
            route();
        }, 1500);
    });
    fetch("/api/config")
        .then((r) => r.json())
        .then((c) => {
            if (c.allow_runs)
                btn.hidden = false;
            $("lake").textContent = "tarn " + c.tarn_version;
        })
        .catch(() => {});
    route();
}
start();
