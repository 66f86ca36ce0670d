/** A digest of the files `bicep build infra/main.bicep` reads, to tell a compiled template from a stale one. */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Where `npm run check:infra` leaves the ARM template it compiled, and the digest of its sources. */
export const COMPILED_TEMPLATE = join(ROOT, ".build", "infra", "main.json");
export const COMPILED_TEMPLATE_DIGEST = join(ROOT, ".build", "infra", "main.sources.sha256");
export const INFRA_DIR = join(ROOT, "infra");

function files(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    })
    .filter((path) => /\.(bicep|json)$/.test(path));
}

export function infraSourcesDigest(infraDir: string): string {
  const hash = createHash("sha256");
  for (const path of files(infraDir).sort()) {
    hash.update(`${relative(infraDir, path)}\0`);
    hash.update(readFileSync(path));
    hash.update("\0");
  }
  return hash.digest("hex");
}
