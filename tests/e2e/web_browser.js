// tests/e2e/web_browser.js — the browser half of test_web_serve.sh: drives Debian's Chromium
// headless with puppeteer-core (pinned in scripts/web-test/, installed by scripts/deps.sh) through
// the page `tarn serve` serves, printing `ok - NAME` / `not ok - NAME` lines as lib.sh does.
//
//   node web_browser.js URL CHROMIUM SHOTS_DIR
//
// The project is the one test_web_serve.sh builds: core.customers, core.orders (merge, built
// twice, then failing its relationships test in run 3) and core.order_totals.
"use strict";
const path = require("path");
const {check, failed, launch, ready} = require("./web_lib.js");

const [url, chromium, shots] = process.argv.slice(2);
async function go(page, hash)
{
    await page.evaluate(() => { delete document.body.dataset.ready; });
    await page.evaluate((h) => { location.hash = h; }, hash);
    await ready(page);
}

(async () => {
    const browser = await launch(chromium);
    try {
        const page = await browser.newPage();
        await page.setViewport({width : 1280, height : 800});
        const errors = [];
        page.on("pageerror", (e) => errors.push(e.message));
        page.on("requestfailed", (r) => errors.push("request failed: " + r.url()));
        const offsite = [];
        page.on("request", (r) => {
            if (!r.url().startsWith(url))
                offsite.push(r.url());
        });

        await page.goto(url + "#/graph");
        await ready(page);
        const nodes =
            await page.$$eval("g.node", (gs) => gs.map((g) => [g.dataset.model, g.dataset.status]));
        const st = Object.fromEntries(nodes);
        check("the graph has the three models", nodes.length === 3, JSON.stringify(nodes));
        check("the graph colours each model by its last build",
              st["core.customers"] === "success" && st["core.orders"] === "failed" &&
                  st["core.order_totals"] === "skipped",
              JSON.stringify(st));
        const edges = await page.$$eval("path.edge",
                                        (es) => es.map((e) => e.getAttribute("class") + " " +
                                                              e.dataset.from + ">" + e.dataset.to));
        check("a data test's ordering edge is drawn differently",
              edges.includes("edge test core.customers>core.orders") &&
                  edges.includes("edge data core.customers>core.orders"),
              JSON.stringify(edges));
        const placed = await page.$$eval(
            "g.node", (gs) => new Set(gs.map((g) => g.getAttribute("transform"))).size);
        check("the layout library placed every node apart", placed === 3);
        const text = await page.$eval("g.node[data-model='core.orders']", (g) => g.textContent);
        check("a node shows strategy, status and rows",
              /merge/.test(text) && /failed/.test(text) && /4 rows/.test(text), text);
        await page.screenshot({path : path.join(shots, "graph.png")});
        const button = await page.$eval("#run-now", (b) => !b.hidden && b.offsetParent !== null);
        check("without --allow-runs the page has no Run now button", !button);
        const post =
            await page.evaluate(() => fetch("/api/runs", {method : "POST"}).then((r) => r.status));
        check("… and a POST to /api/runs from the page is refused (403)", post === 403, post);

        await page.evaluate(() => { delete document.body.dataset.ready; });
        await page.click("g.node[data-model='core.orders']");
        await ready(page);
        check("clicking a node opens its page",
              (await page.evaluate(() => location.hash)) === "#/models/core.orders",
              await page.evaluate(() => location.hash));
        await page.evaluate(() => { delete document.body.dataset.ready; });
        await page.click("#tab-history");
        await ready(page);
        const versions = await page.$$eval("table.snapshots tr[data-version]",
                                           (rs) => rs.map((r) => Number(r.dataset.version)));
        check("the history tab lists the model's snapshots",
              versions.length === 2 && versions[0] > versions[1], JSON.stringify(versions));
        const older = versions[versions.length - 1];
        await page.evaluate(() => { delete document.body.dataset.ready; });
        await page.click("table.snapshots tr[data-version='" + older + "']");
        await ready(page);
        const clause = await page.$eval("#at-clause", (e) => e.textContent);
        check("an older version shows its AT clause", clause === "AT (VERSION => " + older + ")",
              clause);
        const rows = await page.$$eval(
            "#preview tbody tr",
            (rs) => rs.map((r) => [...r.cells].map((c) => c.textContent).join(",")));
        check("an older version's preview shows its rows",
              JSON.stringify(rows) === JSON.stringify([ "10,1,5", "11,2,7", "12,3,9" ]),
              JSON.stringify(rows));
        // the newer version: compared with the older one by default (the change feed)
        await page.evaluate(() => { delete document.body.dataset.ready; });
        await page.click("table.snapshots tr[data-version='" + versions[0] + "']");
        await ready(page);
        const counts = await page.$eval("#changes-counts", (e) => e.textContent).catch(() => "");
        check("what changed between two versions: the change feed's counts",
              /^2 inserted, 1 deleted, \d+ updated after version 2 up to 4$/.test(counts), counts);
        const changed = await page.$$eval("#changes tbody tr", (rs) => rs.length);
        check("… and its rows", changed >= 3, changed);
        await page.screenshot({path : path.join(shots, "history.png"), fullPage : true});

        await go(page, "#/models/core.customers/history");
        const cells = await page.$$eval("#preview td", (cs) => cs.map((c) => c.textContent));
        const injected = await page.$$eval("#preview td b, #preview td img", (es) => es.length);
        check("user data is shown as text, never as HTML",
              cells.some((c) => c.includes("<b>bold</b>")) && injected === 0,
              JSON.stringify(cells));

        await go(page, "#/runs");
        const runs = await page.$$eval("tr[data-run]", (rs) => rs.map((r) => r.dataset.run));
        // test_web_serve.sh ran more runs after the three it built the project with
        const want = runs.map(Number).sort((a, b) => b - a).map(String);
        check("the runs page lists the runs, newest first",
              runs.length >= 4 && runs.includes("3") && runs[runs.length - 1] === "1" &&
                  JSON.stringify(runs) === JSON.stringify(want),
              JSON.stringify(runs));
        await page.screenshot({path : path.join(shots, "runs.png")});
        await page.evaluate(() => { delete document.body.dataset.ready; });
        await page.click("tr[data-run='3'] a");
        await ready(page);
        const failedTest =
            await page.$eval("tr[data-model='core.orders'] .test.failed", (e) => e.textContent)
                .catch(() => "");
        check("a run shows its failed data test with a sample",
              /relationships customer_id/.test(failedTest) && /1 violation/.test(failedTest) &&
                  /e\.g\. 9/.test(failedTest),
              failedTest);
        // the recorded sample of violating rows (tarn_model_run.tests' "sample"), drawn as a table
        const run3 = await page.evaluate(() => fetch("/api/runs/3").then((r) => r.json()));
        const recorded = run3.models.filter((m) => m.model === "core.orders")
                             .flatMap((m) => m.tests || [])
                             .filter((t) => t.violations > 0 && Array.isArray(t.sample));
        if (recorded.length) {
            const cells = await page.$$eval("tr[data-model='core.orders'] .test.failed table td",
                                            (cs) => cs.map((c) => c.textContent));
            check("a failed data test's sample of violating rows is shown as a table",
                  cells.includes("14") && cells.includes("9"), JSON.stringify(cells));
        }
        const up = await page.$eval("tr[data-model='core.orders']", (e) => e.textContent);
        check("a run shows each model's status and reason",
              /failed/.test(up) && /source file changed/.test(up), up);
        await page.screenshot({path : path.join(shots, "run.png"), fullPage : true});

        check("the page loaded nothing from elsewhere", offsite.length === 0, offsite.join("\n"));
        check("the page ran without errors", errors.length === 0, errors.join("\n"));
    } finally {
        await browser.close();
    }
    process.exit(failed() ? 1 : 0);
})().catch((e) => {
    console.log("not ok - the browser test ran");
    console.log("#   " + String(e && e.stack || e).split("\n").join("\n#   "));
    process.exit(1);
});
