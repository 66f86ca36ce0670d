import type { Clock } from "../../src/ports/clock.js";
import type { Logger } from "../../src/ports/logger.js";
import type { ExtensionHost, ExtensionReady } from "./extension-process.js";

/** When an extension host that ended on its own is started again, and when that stops. */
export interface RestartPolicy {
  /** The host may end this many times within `windowMs`; once more and the supervisor gives up. */
  readonly maxExits: number;
  readonly windowMs: number;
  /** The wait before the first restart, doubled for each further exit within the window. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * As the Functions host restarts a failed host process: at once and then less and less eagerly, and
 * not forever. Three exits in a minute is not a crash any more but a host that cannot run.
 */
export const RESTART_POLICY: RestartPolicy = {
  maxExits: 3,
  windowMs: 60_000,
  firstDelayMs: 1_000,
  maxDelayMs: 16_000,
};

/** Starts one extension host; `onExit` is called if it ends without being asked to. */
export type StartExtensionHost = (
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void,
) => Promise<ExtensionHost>;

export interface SupervisorOptions {
  readonly start: StartExtensionHost;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The host kept ending (or would not start again): nothing runs the durable functions any more. */
  readonly onGiveUp: (error: Error) => void;
  readonly policy?: RestartPolicy;
}

/** The extension host that runs now (the last one that did, while it is being restarted). */
export interface SupervisedExtensionHost {
  readonly ready: ExtensionReady;
  readonly pid: number;
  /** Stops restarting, and closes the host that runs (waiting for one being started). */
  close(): Promise<void>;
}

/**
 * Keeps an extension host running: when it ends on its own (a crash, a kill), logs it and starts
 * another after a back-off, the backend handing the new one the work the old one held; when it has
 * ended `maxExits` times within the policy's window, or a new one cannot start, gives up. The first
 * start's failure is thrown, as without a supervisor.
 */
export async function superviseExtensionHost(options: SupervisorOptions): Promise<SupervisedExtensionHost> {
  const policy = options.policy ?? RESTART_POLICY;
  const { clock, logger } = options;
  const closing = new AbortController();
  const exits: number[] = [];
  let restarting: Promise<void> | undefined;

  const started = async (): Promise<ExtensionHost> => {
    const host = await options.start((code, signal) => {
      restarting = restart(host.pid, code === null ? `signal ${signal}` : `exit code ${code}`);
    });
    logger.info("extension.started", { pid: host.pid, rpcBaseUrl: host.ready.clientData.rpcBaseUrl });
    return host;
  };

  const restart = async (pid: number, how: string): Promise<void> => {
    const now = clock.now().getTime();
    exits.push(now);
    while (exits.length > 0 && (exits[0] ?? now) <= now - policy.windowMs) exits.shift();
    if (exits.length >= policy.maxExits)
      return giveUp(
        `ended ${exits.length} times within ${policy.windowMs / 1000} s (the last, pid ${pid}, by ${how})`,
      );
    const delayMs = Math.min(policy.firstDelayMs * 2 ** (exits.length - 1), policy.maxDelayMs);
    logger.warn("extension.restarting", { pid, how, inMs: delayMs, exitsInWindow: exits.length });
    try {
      await clock.sleep(delayMs, closing.signal);
      current = await started();
    } catch (error) {
      if (closing.signal.aborted) return;
      // The message's first line says why; the rest (the host's last lines) goes to the log only.
      const [first = "", ...lines] = (error as Error).message.split("\n");
      giveUp(`could not start again after pid ${pid} ended by ${how}: ${first}`, lines);
    }
  };

  const giveUp = (why: string, lastLines: readonly string[] = []): void => {
    logger.error("extension.gave-up", { why, lastLines });
    options.onGiveUp(new Error(`the extension host ${why}; its durable functions stopped`));
  };

  let current = await started();
  return {
    get ready() {
      return current.ready;
    },
    get pid() {
      return current.pid;
    },
    close: async () => {
      closing.abort(new Error("the extension host's supervisor closed"));
      await restarting;
      await current.close();
    },
  };
}
