// tests/e2e/web_lib.js — what the browser halves of the web tests (web_browser*.js) share:
// puppeteer-core (pinned in scripts/web-test/, installed by scripts/deps.sh) launched on Debian's
// Chromium, `ok - NAME` / `not ok - NAME` lines as lib.sh prints them, and waiting for the page
// to have drawn a route.
"use strict";
const path = require("path");
const puppeteer = require(path.join(__dirname, "../../deps/web-test/node_modules/puppeteer-core"));

let failures = 0;
function check(name, cond, detail)
{
    console.log((cond ? "ok - " : "not ok - ") + name);
    if (!cond) {
        failures++;
        if (detail !== undefined)
            console.log("#   " + String(detail).split("\n").join("\n#   "));
    }
}

// how many checks failed so far (the exit status of the script)
function failed()
{
    return failures;
}

function launch(chromium)
{
    return puppeteer.launch({
        executablePath : chromium,
        headless : true,
        args : [ "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage" ],
    });
}

// waits for the page to have drawn what the route asked for (app.js sets data-ready)
async function ready(page)
{
    await page.waitForFunction(() => document.body.dataset.ready !== undefined &&
                                     document.getElementById("main").childElementCount > 0,
                               {timeout : 60000});
}

module.exports = {check, failed, launch, ready};
