import type { PartnerFaults } from "../../partner/faults.js";
import { SystemClock } from "../../src/adapters/clock/system-clock.js";
import { createHttpPartnerControls } from "../../src/adapters/partner/http-partner-controls.js";
import type { EmbeddedDatabase } from "../../src/adapters/sqlite/database.js";
import { PARTNER_ACCESS_KEY_SETTING } from "../../src/config/names.js";
import { type Environment, loadPipelineSettings, type PipelineSettings } from "../../src/config/settings.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { KeyRing } from "../../src/ports/field-cipher.js";
import type { Logger } from "../../src/ports/logger.js";
import type { PartnerControls } from "../../src/ports/partner-controls.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";
import { newAccessKey } from "../http/access-key.js";
import { type PartnerThread, startPartnerThread } from "../simulation/partner/partner-thread.js";
import { startBackgroundCheckpoints } from "../sqlite/background-checkpoints.js";
import { LocalPipeline } from "./pipeline.js";

/** Timings that let faults play out in seconds rather than minutes; any of them can be overridden. */
export const DEMO_ENVIRONMENT: Environment = {
  ATTEMPT_TIMEOUT_MS: "20000",
  STEP_TIMEOUT_MS: "5000",
  PARTNER_CALL_TIMEOUT_MS: "1000",
  AGENT_BACKOFF_BASE_MS: "50",
  AGENT_BACKOFF_CAP_MS: "500",
  RECOVERY_BACKOFF_BASE_MS: "200",
  RECOVERY_BACKOFF_CAP_MS: "2000",
  EXTENDED_BACKOFF_AFTER: "3",
  EXTENDED_BACKOFF_MS: "5000",
  // Admission control: deadlines only mean something while the backlog in flight can meet them. At 400 a
  // 2-core machine stays busy (100 left it waiting for admissions) and still meets nearly every 5 s step.
  MAX_IN_FLIGHT: "400",
};

/**
 * The embedded host's durability, the same for `sas start` and `sas demo` (docs/performance.md,
 * "Durability"): WAL with `synchronous=NORMAL`. A killed process loses no commit; a power loss or an
 * operating-system crash may lose the last commits before the next WAL sync, never the database's
 * consistency. The Azure stores are the durable ones; this host is for laptops and tests.
 */
export const EMBEDDED_SYNCHRONOUS = "NORMAL" as const;

/** How long the simulated partner sits on a slow answer: past any step's deadline above. */
export const DEMO_SLOW_MS = 8_000;

export interface StackOptions {
  readonly db: EmbeddedDatabase;
  readonly logger: Logger;
  readonly faults: PartnerFaults;
  readonly duplicateReplies: number;
  readonly seed: number;
  readonly agent: "activity" | "queue";
  /**
   * A partner already running elsewhere (`sas partner`); when set, none is started here and `faults` is
   * unused. The Agents then send the environment's PARTNER_ACCESS_KEY, if it holds one.
   */
  readonly partnerUrl?: string;
  /** Settings from the environment; they override the demo timings. */
  readonly env: Environment;
  /** Where spans and metrics go (default: the global providers, no-ops unless registered). */
  readonly telemetry?: Telemetry;
  /** Seals the state store's personal and payment fields (`localKeys`). */
  readonly keyRing: KeyRing;
}

export interface EmbeddedStack {
  readonly pipeline: LocalPipeline;
  /** The simulated partner this stack started, or null when it uses `partnerUrl`. */
  readonly partner: PartnerThread | null;
  /** Its `partnerAccessKey` is the key this start generated for its own partner. */
  readonly settings: PipelineSettings;
  /** The partner's controls (its faults and outages), with the Agents' access key. */
  readonly partnerControls: PartnerControls;
  /** Stops the partner first (ending calls that wait on slow answers), then the pipeline. */
  stop(): Promise<void>;
}

/**
 * The simulated partner and the whole pipeline on real time, as `sas start` and `sas demo` run them.
 * Settings are validated first, so a bad one stops start-up before anything is opened. The partner
 * started here wants an access key, new at each start, which the Agents and the controls send: the
 * keyed path is the one that runs, as in Azure.
 */
export async function startEmbeddedStack(options: StackOptions): Promise<EmbeddedStack> {
  const ownKey = options.partnerUrl === undefined ? { [PARTNER_ACCESS_KEY_SETTING]: newAccessKey(32) } : {};
  const settings = loadPipelineSettings({
    ...DEMO_ENVIRONMENT,
    AGENT_MODE: options.agent,
    ...options.env,
    ...ownKey,
  });
  const clock = new SystemClock();
  const checkpoints = startBackgroundCheckpoints(options.db);
  let partner: PartnerThread | undefined;
  let pipeline: LocalPipeline | undefined;
  // Every part stops even if another fails to, so a shutdown never leaves a thread or a consumer running.
  const stop = async () => {
    const outcomes = [
      await settle(partner?.close()),
      await settle(pipeline?.stop()),
      await settle(checkpoints?.stop()),
    ];
    const failure = outcomes.find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
  };
  try {
    if (options.partnerUrl === undefined) {
      partner = await startPartnerThread({
        ...(settings.partnerAccessKey !== undefined ? { accessKey: settings.partnerAccessKey } : {}),
        logger: options.logger.child({ component: "partner" }),
        faults: options.faults,
        seed: options.seed,
        slowMs: DEMO_SLOW_MS,
      });
    }
    pipeline = await openPipeline(options, settings, clock, partner?.url ?? options.partnerUrl ?? "");
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  pipeline.start();
  const partnerControls = createHttpPartnerControls({
    url: partner?.url ?? options.partnerUrl ?? "",
    clock,
    ...(settings.partnerAccessKey !== undefined ? { accessKey: settings.partnerAccessKey } : {}),
  });
  return { pipeline, partner: partner ?? null, settings, partnerControls, stop };
}

async function settle(work: Promise<void> | undefined): Promise<PromiseSettledResult<void>> {
  try {
    await work;
    return { status: "fulfilled", value: undefined };
  } catch (reason) {
    return { status: "rejected", reason };
  }
}

function openPipeline(
  options: StackOptions,
  settings: PipelineSettings,
  clock: SystemClock,
  partnerUrl: string,
): Promise<LocalPipeline> {
  return LocalPipeline.open({
    db: options.db,
    clock,
    random: seededRandom(options.seed),
    logger: options.logger,
    settings,
    partnerUrl,
    starterIntervalMs: 500,
    supervisorIntervalMs: 1_000,
    duplicateReplies: options.duplicateReplies,
    keyRing: options.keyRing,
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  });
}
