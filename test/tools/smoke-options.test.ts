/**
 * `npm run smoke`'s command line: the flags it takes, and a bad one refused with the usage and exit 2
 * before any request is made.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { randomCarts } from "../../tools/smoke/carts.js";
import { parseSmokeOptions, UsageError } from "../../tools/smoke/options.js";

const SMOKE = join(import.meta.dirname, "../../tools/smoke/smoke.ts");

function smoke(args: readonly string[]) {
  const result = spawnSync(process.execPath, ["--import", "tsx", SMOKE, ...args], { encoding: "utf8" });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("npm run smoke, its flags", () => {
  it("defaults to the storefront of npm start and npm run host", () => {
    expect(parseSmokeOptions([]).store).toBe("http://127.0.0.1:7080");
  });

  it("takes the store, and defaults to 10 orders within 300 s", () => {
    expect(parseSmokeOptions(["--store", "http://127.0.0.1:7080/"])).toEqual({
      store: "http://127.0.0.1:7080",
      orders: 10,
      timeoutSeconds: 300,
      seed: 1,
      concurrency: 4,
      outage: null,
    });
    const options = parseSmokeOptions([
      ...["--store", "https://shop.example.net/store/", "--orders", "50", "--timeout-seconds", "30"],
      ...["--seed=-3", "--concurrency", "8"],
    ]);
    expect(options).toEqual({
      store: "https://shop.example.net/store",
      orders: 50,
      timeoutSeconds: 30,
      seed: -3,
      concurrency: 8,
      outage: null,
    });
    expect(parseSmokeOptions(["--store", "http://localhost:7080"]).store).toBe("http://localhost:7080");
    expect(parseSmokeOptions(["--store", "http://[::1]:7080"]).store).toBe("http://[::1]:7080");
  });

  it("takes --outage, against npm start's operator API unless --api names another, with its key or token", () => {
    expect(parseSmokeOptions(["--outage", "30"]).outage).toEqual({
      seconds: 30,
      api: "http://127.0.0.1:7071",
    });
    expect(
      parseSmokeOptions([
        ...["--outage", "3600", "--api", "https://sas-func.azurewebsites.net/", "--key", "admin-key"],
      ]).outage,
    ).toEqual({ seconds: 3600, api: "https://sas-func.azurewebsites.net", key: "admin-key" });
    expect(
      parseSmokeOptions(["--outage", "1", "--api", "http://localhost:7071", "--token", "t".repeat(16)])
        .outage,
    ).toEqual({ seconds: 1, api: "http://localhost:7071", token: "t".repeat(16) });
  });

  it.each([
    [["--store", "shop"], /--store must be a URL; got shop/],
    [["--store", "http://shop.example.net"], /https URL, or http on loopback/],
    [["--store", "ftp://127.0.0.1"], /https URL, or http on loopback/],
    [["--store", "https://user:secret@shop.example.net"], /user name or password/],
    [["--store", "https://shop.example.net/?x=1"], /without \? or #/],
    [
      ["--store", "http://127.0.0.1:7080", "--orders", "0"],
      /--orders must be an integer from 1 to 10000; got 0/,
    ],
    [["--store", "http://127.0.0.1:7080", "--orders", "ten"], /--orders must be an integer/],
    [
      ["--store", "http://127.0.0.1:7080", "--timeout-seconds", "1.5"],
      /--timeout-seconds must be an integer/,
    ],
    [
      ["--store", "http://127.0.0.1:7080", "--concurrency", "33"],
      /--concurrency must be an integer from 1 to 32/,
    ],
    [["--store", "http://127.0.0.1:7080", "--order", "3"], /Unknown option '--order'/],
    [["--store"], /argument missing/],
    [["--outage", "0"], /--outage must be an integer from 1 to 3600; got 0/],
    [["--outage", "3601"], /--outage must be an integer from 1 to 3600; got 3601/],
    [["--outage", "2.5"], /--outage must be an integer from 1 to 3600; got 2.5/],
    [["--outage", "soon"], /--outage must be an integer/],
    [["--outage"], /argument missing/],
    [
      ["--outage", "5", "--api", "http://func.example.net"],
      /--api must be an https URL, or http on loopback/,
    ],
    [["--outage", "5", "--api", "https://user:pw@func.example.net"], /--api must not carry a user name/],
    [
      ["--outage", "5", "--api", "https://func.example.net/?code=x"],
      /--api must be the operator API's base URL/,
    ],
    [["--outage", "5", "--key", ""], /--key must not be empty/],
    [["--api", "http://127.0.0.1:7071"], /--api is for --outage <s>, which was not given/],
    [["--key", "admin-key"], /--key is for --outage <s>/],
    [["--token", "t".repeat(16)], /--token is for --outage <s>/],
  ])("refuses %j", (args, message) => {
    expect(() => parseSmokeOptions(args)).toThrow(UsageError);
    expect(() => parseSmokeOptions(args)).toThrow(message);
  });

  it("prints the usage and exits 2 on a bad flag, 0 on --help", () => {
    const refused = smoke(["--store", "http://shop.example.net", "--orders", "5"]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/^--store must be an https URL, or http on loopback/);
    expect(refused.stderr).toContain("usage: npm run smoke -- [--store <url>]");
    expect(refused.stdout).toBe("");
    const help = smoke(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("--timeout-seconds <s>");
    expect(help.stdout).toContain("--outage <s>");
  });

  it("prints the usage and exits 2 on a bad --outage, before any request", () => {
    // Nothing listens on port 9: had the run started, it would have failed with exit 1 instead.
    const refused = smoke(["--store", "http://127.0.0.1:9", "--orders", "20", "--outage", "0"]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(
      /^--outage must be an integer from 1 to 3600; got 0\n\nusage: npm run smoke/,
    );
    expect(refused.stdout).toBe("");
  });

  it("exits 1 naming the store when nothing answers there", () => {
    const result = smoke(["--store", "http://127.0.0.1:9", "--timeout-seconds", "5"]);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/the store could not be used: .*fetch failed/);
    expect(result.stdout).toContain("smoke: FAILED");
  });
});

describe("the smoke test's carts", () => {
  const skus = ["A", "B", "C", "D", "E"];

  it("are small, with each product once, and the same for the same seed", () => {
    const carts = randomCarts(skus, 200, 42);
    expect(randomCarts(skus, 200, 42)).toEqual(carts);
    expect(randomCarts(skus, 200, 43)).not.toEqual(carts);
    for (const cart of carts) {
      expect(cart.length).toBeGreaterThanOrEqual(1);
      expect(cart.length).toBeLessThanOrEqual(3);
      expect(new Set(cart.map((line) => line.sku)).size).toBe(cart.length);
      for (const line of cart) {
        expect(skus).toContain(line.sku);
        expect(line.quantity).toBeGreaterThanOrEqual(1);
        expect(line.quantity).toBeLessThanOrEqual(3);
      }
    }
    // Every size and every product turns up over 200 carts.
    expect(new Set(carts.map((cart) => cart.length))).toEqual(new Set([1, 2, 3]));
    expect(new Set(carts.flat().map((line) => line.sku))).toEqual(new Set(skus));
  });

  it("fit a catalogue of one product", () => {
    expect(randomCarts(["ONLY"], 5, 1).every((cart) => cart.length === 1 && cart[0]?.sku === "ONLY")).toBe(
      true,
    );
    expect(() => randomCarts([], 1, 1)).toThrow(/no products/);
  });
});
