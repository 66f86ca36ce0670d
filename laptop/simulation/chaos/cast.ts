import { join } from "node:path";
import type { PartnerFaults } from "../../../partner/faults.js";
import type { Environment } from "../../../src/config/settings.js";
import { PARTNER_LEDGER } from "./chaos-evidence.js";
import { HOST_READY, PARTNER_READY, type SasProcess, startSas } from "./child-processes.js";

export interface CastOptions {
  readonly agent: "activity" | "queue";
  readonly faults: PartnerFaults;
  readonly duplicateReplies: number;
  readonly seed: number;
}

/**
 * The two processes of a chaos or soak run: the partner on its ledger file, and the host on its data
 * directory calling that partner. Each keeps the port it was first given, so a restart is found again.
 */
export class Cast {
  host: SasProcess | null = null;
  partner: SasProcess | null = null;
  private hostPort = "0";
  private partnerPort = "0";

  /** The partner's port, kept across its restarts (0 before its first start). */
  get partnerPortNumber(): number {
    return Number(this.partnerPort);
  }

  constructor(
    private readonly options: CastOptions,
    private readonly dir: string,
    private readonly hostEnv: Environment,
  ) {}

  async startPartner(): Promise<void> {
    const { faults, seed } = this.options;
    this.partner = await startSas(
      [
        ...["partner", "--port", this.partnerPort, "--ledger", join(this.dir, PARTNER_LEDGER)],
        ...["--transient-faults", String(faults.transient), "--permanent-faults", String(faults.permanent)],
        ...[
          "--slow",
          String(faults.slow),
          "--lost-replies",
          String(faults.lostReply),
          "--seed",
          String(seed),
        ],
      ],
      PARTNER_READY,
    );
    this.partnerPort = new URL(this.partner.url).port;
  }

  /** Starts the host; `env` adds to the run's environment for this start only. */
  async startHost(generation: number, env: Environment = {}): Promise<void> {
    const { agent, duplicateReplies, seed } = this.options;
    const host = await startSas(
      [
        ...["start", "--data", this.dir, "--port", this.hostPort, "--demo-orders", "0", "--no-store"],
        ...["--partner-url", `http://127.0.0.1:${this.partnerPort}`, "--agent", agent],
        ...["--duplicate-replies", String(duplicateReplies), "--seed", String(seed + generation)],
      ],
      HOST_READY,
      { env: { ...this.hostEnv, ...env } },
    );
    this.hostPort = new URL(host.url).port;
    this.host = host;
  }
}
