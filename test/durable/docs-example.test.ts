import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

describe("docs/local-durable-runtime.md", () => {
  it("shows, as its example of testing an app on the runtime, the test that runs as test/local-durable-runtime-example.test.ts", () => {
    const doc = readFileSync(new URL("../../docs/local-durable-runtime.md", import.meta.url), "utf8");
    const section = doc.slice(doc.indexOf("## Running your own app's orchestrations in a test"));
    const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    const test = readFileSync(new URL("../local-durable-runtime-example.test.ts", import.meta.url), "utf8");
    expect(example).toBe(test);
  });
});
