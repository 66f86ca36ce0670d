import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freePorts } from "../../laptop/http/free-ports.js";

describe("freePorts", () => {
  it("draws ports that are all different, and free once drawn", async () => {
    // Drawn one listener at a time and closed at once, 200 ports repeat one with near certainty.
    const drawn = await freePorts(Array.from({ length: 200 }, (_, i) => `port-${i}`));
    const ports = Object.values(drawn);
    expect(ports).toHaveLength(200);
    expect(new Set(ports).size).toBe(200);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(ports[0], "127.0.0.1", () => resolve());
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
