import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium, which `.ci/run` installs where it is missing; playwright-core drives it. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Whether the page tests can run: Chromium is installed. Under CI its absence is an error, not a
 * reason to skip, since `.ci/run` installs it.
 */
export function chromiumAvailable(): boolean {
  const available = existsSync(CHROMIUM);
  if (!available && process.env.CI === "true") throw new Error(`${CHROMIUM} is missing: .ci/run installs it`);
  return available;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
  });
}
