import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 20_000,
    // The browser tests poll what Chromium draws; a draw takes about 0.4 s, more on a loaded machine,
    // against vitest's default of 1 s a poll.
    expect: { poll: { timeout: 5_000 } },
    // Vitest's default is one worker fewer than the cores, which on a 2-core machine runs every file
    // in turn. Much of the suite waits on child processes, sockets and timers rather than the CPU: on
    // 2 cores, two workers take about 40% off the wall time of one, and three a quarter off that of two.
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
