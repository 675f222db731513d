// Headless Chromium as every browser test here starts it, through the caller's
// playwright-core `chromium`: Debian's binary (or $CHROMIUM), root without a sandbox, and
// no background connections (the machine has no network beyond 127.0.0.1 and the
// registries, and Chromium's own calls home would only fail).
export function launchChromium(chromium) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    timeout: 60_000,
  });
}

/**
 * Opens `url` in a new tab of `browser` and waits up to `timeout` ms for the page to set
 * `window.result`. Returns { result, errors }: the page's uncaught errors, and its console
 * errors unless `log` is given, which then receives every console message instead.
 */
export async function pageResult(browser, url, { timeout, log } = {}) {
  const tab = await browser.newPage();
  const errors = [];
  tab.on("pageerror", (e) => errors.push(String(e)));
  tab.on("console", (m) => {
    if (log) log(`console.${m.type()}: ${m.text()}`);
    else if (m.type() === "error") errors.push(m.text());
  });
  await tab.goto(url);
  await tab
    .waitForFunction(() => window.result !== undefined, null, { timeout })
    .catch(() => {
      throw new Error(`no result from ${url}: ${errors.join("; ")}`);
    });
  return { result: await tab.evaluate(() => window.result), errors };
}
