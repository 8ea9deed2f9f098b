// tests/e2e/web_browser_busy.js — test_web_serve.sh's check of the page while a build holds the
// lake: the page says the lake is busy (never an error page), and once the writer is gone it
// draws the graph by itself (it retries). The test holds the catalog's lock; this script writes
// MARKER once it saw the busy banner, and the test then lets the lock go.
//
//   node web_browser_busy.js URL CHROMIUM MARKER
"use strict";
const fs = require("fs");
const {check, failed, launch} = require("./web_lib.js");

const [url, chromium, marker] = process.argv.slice(2);

(async () => {
    const browser = await launch(chromium);
    try {
        const page = await browser.newPage();
        await page.goto(url + "#/graph");
        const busy = await page.waitForSelector("#busy:not([hidden])", {timeout : 20000})
                         .then(() => true)
                         .catch(() => false);
        check("while a build holds the lake the page says it is busy", busy,
              await page.evaluate(() => document.body.innerText));
        const err = await page.$eval("#error", (e) => e.hidden);
        check("… and shows no error", err);
        fs.writeFileSync(marker, "busy seen\n");
        const drawn = await page
                          .waitForFunction(() => document.querySelectorAll("g.node").length === 3,
                                           {timeout : 30000})
                          .then(() => true)
                          .catch(() => false);
        check("once the writer is gone the page draws the graph by itself", drawn);
        check("… and the busy banner is gone", await page.$eval("#busy", (e) => e.hidden));
    } finally {
        await browser.close();
    }
    process.exit(failed() ? 1 : 0);
})().catch((e) => {
    console.log("not ok - the busy-page browser test ran");
    console.log("#   " + String(e && e.stack || e).split("\n").join("\n#   "));
    fs.writeFileSync(marker, "failed\n");
    process.exit(1);
});
