import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { TRANSITIONS } from "../src/domain/transition-table.js";

const ROOT = join(import.meta.dirname, "..");
const TEXT = /\.(ts|md|json|bicep|sh|sql|yaml|yml|toml|cs|csproj|props)$|(^|\/)run$/;

/** The repository's files: what git tracks, and what it would track (untracked, not ignored). */
function repositoryFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return listed
    .split("\n")
    .filter((path) => TEXT.test(path) && path !== "package-lock.json" && existsSync(join(ROOT, path)))
    .map((path) => join(ROOT, path));
}

describe("the documentation", () => {
  it("names only documents the repository contains", () => {
    const missing: string[] = [];
    for (const file of repositoryFiles()) {
      const text = readFileSync(file, "utf8");
      for (const [reference] of text.matchAll(/(?<![\w/.:-])[\w./-]*[A-Za-z0-9_-]\.md\b/g)) {
        const candidates = [join(dirname(file), reference), join(ROOT, reference)];
        if (!candidates.some((path) => existsSync(path)))
          missing.push(`${relative(ROOT, file)}: ${reference}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("lists every page of docs/ in docs/index.md", () => {
    const index = readFileSync(join(ROOT, "docs/index.md"), "utf8");
    const listed = new Set([...index.matchAll(/\]\(([\w.-]+\.md)\)/g)].map(([, page]) => page));
    const pages = readdirSync(join(ROOT, "docs")).filter(
      (name) => name.endsWith(".md") && `docs/${name}` !== "docs/index.md",
    );
    expect(pages.filter((page) => !listed.has(page))).toEqual([]);
  });

  it("draws the state diagram with exactly the moves the transition table allows", () => {
    const text = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    const diagram = text.match(/```mermaid\n([\s\S]*?)```/)?.[1] ?? "";
    const drawn = new Set(
      [...diagram.matchAll(/^\s*(\w+) --> (\w+)/gm)].map(([, from, to]) => `${from} -> ${to}`),
    );
    const allowed = new Set(TRANSITIONS.flatMap((rule) => rule.to.map((to) => `${rule.from} -> ${to}`)));
    expect([...drawn].sort()).toEqual([...allowed].sort());
  });
});
