/**
 * The browser pages' static files, in the package's `web/` folder: one folder per page, and of each only
 * the files named here are served, so a request cannot reach anything else (`..` included). Each file is
 * read once, on its first request.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface WebAsset {
  readonly contentType: string;
  readonly body: string;
}

/** A page's files by name; `undefined` (the page's own address) is its `index.html`. */
export type WebFolder = (file: string | undefined) => Promise<WebAsset | undefined>;

/** The operator's dashboard, `web/dashboard/`. */
export const DASHBOARD_FILES = [
  "index.html",
  "dashboard.css",
  "dashboard.js",
  "api.js",
  "breakers.js",
  "charts.js",
  "commands.js",
  "format.js",
  "operator-rules.js",
  "order-life.js",
  "order-picture.js",
  "order.js",
  "orders.js",
  "overview.js",
  "partner.js",
  "router.js",
] as const;

/** The storefront's page, `web/storefront/` (served by the storefront application, storefront/). */
export const STOREFRONT_FILES = ["index.html", "store.css", "store.js"] as const;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
};

export function webFolder(name: string, files: readonly string[], root = webRoot()): WebFolder {
  const untyped = files.filter((file) => !CONTENT_TYPES[extname(file)]);
  if (untyped.length > 0) throw new Error(`no content type for ${untyped.join(", ")}`);
  const read = new Map<string, Promise<WebAsset>>();
  return (file = "index.html") => {
    if (!files.includes(file)) return Promise.resolve(undefined);
    let asset = read.get(file);
    if (!asset) {
      asset = readAsset(join(root, name, file));
      // A failed read (a package without the file) is not kept: the next request tries again.
      asset.catch(() => read.delete(file));
      read.set(file, asset);
    }
    return asset;
  };
}

async function readAsset(path: string): Promise<WebAsset> {
  return { contentType: CONTENT_TYPES[extname(path)] ?? "", body: await readFile(path, "utf8") };
}

/**
 * `web/` beside the package.json above this module: the same from the sources (`src/operator/`, run by
 * tsx) and from the built app (`dist/operator/`), whose package.json is one level above `dist/`.
 */
export function webRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return join(dir, "web");
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
