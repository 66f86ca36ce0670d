import { describe, expect, it } from "vitest";
import { newAccessKey } from "../../laptop/http/access-key.js";

describe("newAccessKey", () => {
  it("makes keys that never begin with a dash, so that `--key <key>` reads as one flag and its value", () => {
    // One key in 64 would begin with "-" if drawn as is: 2,000 draws all but surely include some.
    const keys = Array.from({ length: 2_000 }, () => newAccessKey(30));
    expect(keys.filter((key) => key.startsWith("-"))).toEqual([]);
    expect(keys.every((key) => /^[\w-]{40}$/.test(key))).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
