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
