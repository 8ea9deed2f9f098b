// tests/e2e/web_browser_runs.js — the browser half of test_web_serve_runs.sh: with `tarn serve
// --allow-runs`, the page shows "Run now", a click starts `tarn run`, and the graph then shows the
// models it built. Drives Debian's Chromium headless with puppeteer-core (scripts/deps.sh),
// printing `ok - NAME` / `not ok - NAME` lines as lib.sh does.
//
//   node web_browser_runs.js URL CHROMIUM SHOTS_DIR
//
// The project is test_web_serve_runs.sh's: the scheduler built core.customers and
// core.tier_counts; core.orders and core.order_totals are not built yet.
"use strict";
const path = require("path");
const {check, failed, launch, ready} = require("./web_lib.js");

const [url, chromium, shots] = process.argv.slice(2);
const statuses = (page) => page.$$eval(
    "g.node", (gs) => Object.fromEntries(gs.map((g) => [g.dataset.model, g.dataset.status])));

(async () => {
    const browser = await launch(chromium);
    try {
        const page = await browser.newPage();
        await page.setViewport({width : 1280, height : 800});
        const errors = [];
        page.on("pageerror", (e) => errors.push(e.message));

        await page.goto(url + "#/graph");
        await ready(page);
        let st = await statuses(page);
        check("the graph shows what the scheduler built",
              st["core.tier_counts"] === "success" && st["core.customers"] === "success" &&
                  st["core.orders"] === "none",
              JSON.stringify(st));
        await page.waitForSelector("#run-now:not([hidden])", {timeout : 10000}).catch(() => null);
        const shown = await page.$eval("#run-now", (b) => !b.hidden);
        check("with --allow-runs the page has a Run now button", shown);

        await page.click("#run-now");
        await page.waitForFunction(() => location.hash === "#/runs", {timeout : 10000})
            .catch(() => null);
        check("Run now opens the runs page",
              (await page.evaluate(() => location.hash)) === "#/runs");
        // the run is its own process: poll the graph until it shows the models built
        let done = false;
        for (let i = 0; i < 120 && !done; i++) {
            await new Promise((r) => setTimeout(r, 500));
            await page.evaluate(() => {
                delete document.body.dataset.ready;
                location.hash = "#/graph?" + Date.now();
            });
            await ready(page);
            st = await statuses(page);
            done = st["core.orders"] === "success" && st["core.order_totals"] === "success";
        }
        check("the run Run now started built the models", done, JSON.stringify(st));
        await page.screenshot({path : path.join(shots, "run-now.png")});
        await page.evaluate(() => {
            delete document.body.dataset.ready;
            location.hash = "#/runs";
        });
        await ready(page);
        const runs =
            await page.$$eval("tr[data-run]", (rs) => rs.map((r) => r.cells[1].textContent + " " +
                                                                    r.cells[2].textContent));
        check("the runs page lists the manual run above the scheduler's",
              JSON.stringify(runs) === JSON.stringify([ "manual success", "scheduler success" ]),
              JSON.stringify(runs));
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
