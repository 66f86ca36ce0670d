import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Environment, loadPipelineSettings } from "../../../src/config/settings.js";
import { DEMO_ENVIRONMENT } from "../../embedded/embedded-stack.js";
import { Cast, type CastOptions } from "./cast.js";
import { checkChaos, type OutageWindow } from "./chaos-check.js";
import { prepareHostDatabase, readStoredEvidence, type StoredEvidence } from "./chaos-evidence.js";

/**
 * What a chaos or soak run changes of the host's settings: nothing. Kills and outages are not the
 * orders' fault, and the shipped defaults must show it (the Supervisor spares attempts their host's
 * downtime cost, the circuit breakers defer calls to a partner that is down). Any setting can still be
 * given in the environment.
 */
export const CHAOS_ENVIRONMENT: Environment = {};

/** `base`, overridden by this process's environment, so MAX_RECOVERIES and the like can be set as usual. */
export function hostEnvironment(base: Environment): Environment {
  const own = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined);
  return { ...base, ...Object.fromEntries(own) };
}

/**
 * The frame of a chaos or soak run: a data directory with the audited host database, the two
 * processes, and at the end the check of what they left on disk. The directory is removed after a
 * run that passed, unless the caller chose it.
 */
export class RunStage {
  readonly cast: Cast;
  readonly dir: string;
  private readonly settings;

  constructor(
    private readonly options: CastOptions & { readonly data?: string; readonly upgrade?: boolean },
    name: string,
  ) {
    const hostEnv = hostEnvironment(CHAOS_ENVIRONMENT);
    this.settings = loadPipelineSettings({ ...DEMO_ENVIRONMENT, ...hostEnv, AGENT_MODE: options.agent });
    this.dir = options.data ?? mkdtempSync(join(tmpdir(), `sas-${name}-`));
    mkdirSync(this.dir, { recursive: true });
    prepareHostDatabase(this.dir);
    this.cast = new Cast(options, this.dir, hostEnv);
  }

  async start(): Promise<void> {
    await this.cast.startPartner();
    // An upgrade run's first host runs version 1; every restart, the default the settings give.
    await this.cast.startHost(0, this.options.upgrade ? { WORKFLOW_VERSION: "1" } : {});
  }

  /** Stops both processes and checks the stores and the ledger they left. */
  async finish(
    accepted: readonly string[],
    outages: readonly OutageWindow[] = [],
  ): Promise<{ stored: StoredEvidence; violations: string[] }> {
    await this.cast.host?.stop();
    await this.cast.partner?.stop();
    const stored = await readStoredEvidence(this.dir);
    const violations = checkChaos({
      accepted,
      ...stored,
      maxRecoveries: this.settings.recovery.maxRecoveries,
      onExhausted: this.settings.recovery.onExhausted,
      outages,
      breakerMaxOpenMs: this.settings.breaker.maxOpenMs,
    });
    return { stored, violations };
  }

  /** Where the run's data stays for inspection: the caller's directory, or ours after a failure. */
  kept(ok: boolean): string | null {
    return this.options.data ?? (ok ? null : this.dir);
  }

  /** Kills whatever still runs; removes our directory after a run that passed. */
  async cleanUp(ok: boolean, progress?: (line: string) => void): Promise<void> {
    await this.cast.host?.kill();
    await this.cast.partner?.kill();
    if (this.options.data !== undefined) return;
    if (ok) rmSync(this.dir, { recursive: true, force: true });
    else progress?.(`kept the run's data for inspection in ${this.dir}`);
  }
}
