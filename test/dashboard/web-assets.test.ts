import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DASHBOARD_FILES, webFolder, webRoot } from "../../src/adapters/web/web-assets.js";

const ROOT = join(import.meta.dirname, "../..");
let temporary: string | undefined;
afterEach(() => {
  if (temporary) rmSync(temporary, { recursive: true, force: true });
  temporary = undefined;
});

describe("the web/ folder's files", () => {
  it("are found beside the package.json above the sources and above the built app", () => {
    expect(webRoot()).toBe(join(ROOT, "web"));
    expect(webRoot(join(ROOT, "src/operator"))).toBe(join(ROOT, "web"));
    expect(webRoot(join(ROOT, "dist/operator"))).toBe(join(ROOT, "web"));
  });

  it("serve the dashboard's named files with their content types, index.html for the page itself", async () => {
    const dashboard = webFolder("dashboard", DASHBOARD_FILES);
    expect((await dashboard(undefined))?.contentType).toBe("text/html; charset=utf-8");
    expect((await dashboard("index.html"))?.body).toContain("<h1>Orders</h1>");
    expect((await dashboard("dashboard.css"))?.contentType).toBe("text/css; charset=utf-8");
    // The page's own modules, each imported with the page's key through index.html's import map.
    const modules = readdirSync(join(ROOT, "web/dashboard")).filter((file) => file.endsWith(".js"));
    expect(modules.length).toBeGreaterThan(3);
    for (const file of modules) {
      expect((await dashboard(file))?.contentType, file).toBe("text/javascript; charset=utf-8");
    }
    for (const file of ["..", "../../package.json", "../dashboard/index.html", "other.js", ""]) {
      expect(await dashboard(file), file).toBeUndefined();
    }
  });

  it("F27-1: name every module of the dashboard in its import map, so each import carries the function key", () => {
    const page = readFileSync(join(ROOT, "web/dashboard/index.html"), "utf8");
    const listed = /const MODULES = \[([^\]]*)\]/.exec(page)?.[1] ?? "";
    const named = [...listed.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    const modules = readdirSync(join(ROOT, "web/dashboard")).filter((file) => file.endsWith(".js"));
    expect(named.sort()).toEqual(modules.sort());
  });

  it("are read once, on their first request", async () => {
    temporary = mkdtempSync(join(tmpdir(), "web-assets-"));
    mkdirSync(join(temporary, "page"));
    writeFileSync(join(temporary, "page/index.html"), "first");
    const page = webFolder("page", ["index.html"], temporary);
    expect((await page(undefined))?.body).toBe("first");
    writeFileSync(join(temporary, "page/index.html"), "second");
    expect((await page(undefined))?.body).toBe("first");
  });

  it("refuses a file it has no content type for", () => {
    expect(() => webFolder("page", ["notes.txt"], "/nowhere")).toThrow("no content type for notes.txt");
  });
});
