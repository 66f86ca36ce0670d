/**
 * Orders whose lives the dashboard's tests draw, each scripted through the domain's own transitions
 * (`applyTransition`), so that their histories are what the pipeline writes, with times chosen here.
 * Each comes with the picture it must give: its lanes by attempt, each lane's bars as
 * `step:outcome` (an undo as `undo step:outcome`), and its marks by kind.
 */

import { applyTransition } from "../../src/domain/apply-transition.js";
import { seededRandom } from "../../src/domain/backoff.js";
import type { StateRecord } from "../../src/domain/state-record.js";
import { addMilliseconds } from "../../src/domain/time.js";
import type { Actor, Command, RecoveryPolicy } from "../../src/domain/transition-commands.js";
import type { StepName } from "../../src/domain/workflow.js";
import { pendingRecord } from "../support/records.js";

export interface ExpectedPicture {
  readonly lanes: Readonly<Record<number, readonly string[]>>;
  readonly marks: readonly string[];
}

export interface OrderLife {
  readonly record: StateRecord;
  readonly picture: ExpectedPicture;
}

const POLICY: RecoveryPolicy = {
  maxRecoveries: 1,
  backoff: { baseMs: 1_000, capMs: 1_000 },
  extendedBackoffAfter: 10,
  extendedDelayMs: 60_000,
  onExhausted: "error",
};
const UNDO = { callsPerRequest: 2, amplification: 1 };

/** A record moved by one actor's commands after another; each command at `start` plus its offset. */
class Script {
  private record: StateRecord;

  constructor(
    orderId: string,
    private readonly start: string,
  ) {
    this.record = pendingRecord(orderId, { createdAt: start, updatedAt: start, notBefore: start });
  }

  private at(ms: number): string {
    return addMilliseconds(this.start, ms);
  }

  private get instanceId(): string {
    return this.record.lockedBy ?? "nobody";
  }

  private apply(actor: Actor, command: Command): this {
    const outcome = applyTransition(this.record, actor, command);
    if (!outcome.ok) throw outcome.error;
    this.record = outcome.value.record;
    return this;
  }

  claim(ms: number): this {
    return this.apply("starter", { type: "claim", now: this.at(ms), attemptTimeoutMs: 30_000 });
  }

  startStep(ms: number, step: StepName): this {
    const now = this.at(ms);
    return this.apply("orchestration", {
      type: "startStep",
      instanceId: this.instanceId,
      step,
      now,
      completeBy: addMilliseconds(now, 30_000),
      requestedCalls: 2,
      amplification: 1,
    });
  }

  completeStep(ms: number, step: StepName): this {
    const now = this.at(ms);
    return this.apply("orchestration", {
      type: "completeStep",
      instanceId: this.instanceId,
      step,
      now,
      reference: `${step}-ref`,
    });
  }

  /** `advance`: the step completed and the next started, in one update at one instant. */
  advance(ms: number, step: StepName, next: StepName): this {
    return this.completeStep(ms, step).startStep(ms, next);
  }

  finish(ms: number): this {
    return this.apply("orchestration", { type: "finish", instanceId: this.instanceId, now: this.at(ms) });
  }

  fail(ms: number, step: StepName): this {
    const failure = { kind: "permanent", code: "OutOfStock", message: "no stock", step } as const;
    return this.apply("orchestration", {
      type: "fail",
      instanceId: this.instanceId,
      now: this.at(ms),
      failure,
    });
  }

  defer(ms: number, step: StepName, untilMs: number): this {
    return this.apply("orchestration", {
      type: "defer",
      instanceId: this.instanceId,
      step,
      now: this.at(ms),
      until: this.at(untilMs),
      callsMade: 0,
      maxDeferralMs: 600_000,
      amplification: 1,
      reason: "the partner's breaker is open",
    });
  }

  recover(ms: number): this {
    return this.apply("supervisor", {
      type: "recover",
      expectedLockedBy: this.instanceId,
      now: this.at(ms),
      policy: POLICY,
      random: seededRandom(1),
    });
  }

  operator(ms: number, type: "resubmit" | "compensate"): this {
    return this.apply("operator", { type, now: this.at(ms), reason: `${type} by alice: test` });
  }

  resumeCompensation(ms: number): this {
    return this.apply("orchestration", {
      type: "resumeCompensation",
      instanceId: this.instanceId,
      now: this.at(ms),
      undo: UNDO,
    });
  }

  resolveDoubt(ms: number, step: StepName, applied: boolean): this {
    return this.apply("orchestration", {
      type: "resolveDoubt",
      instanceId: this.instanceId,
      step,
      now: this.at(ms),
      applied,
      reference: applied ? `${step}-ref` : null,
    });
  }

  compensateStep(ms: number, step: StepName): this {
    return this.apply("orchestration", {
      type: "compensateStep",
      instanceId: this.instanceId,
      step,
      now: this.at(ms),
      outcome: "compensated",
    });
  }

  finishCompensation(ms: number): this {
    return this.apply("orchestration", {
      type: "finishCompensation",
      instanceId: this.instanceId,
      now: this.at(ms),
    });
  }

  done(): StateRecord {
    return this.record;
  }
}

/**
 * Recovered twice (its second step in doubt both times), so in `Error`; compensated by an operator:
 * the doubt resolved as applied, both effects undone.
 */
export function compensatedLife(orderId: string, start: string): OrderLife {
  const record = new Script(orderId, start)
    .claim(0)
    .startStep(100, "reserveInventory")
    .advance(1_200, "reserveInventory", "chargePayment")
    .recover(40_000)
    .claim(60_000)
    .startStep(60_100, "chargePayment")
    .recover(100_000)
    .operator(600_000, "compensate")
    .claim(601_000)
    .resumeCompensation(601_100)
    .resolveDoubt(602_000, "chargePayment", true)
    .compensateStep(603_000, "chargePayment")
    .compensateStep(604_000, "reserveInventory")
    .finishCompensation(604_100)
    .done();
  return {
    record,
    picture: {
      lanes: {
        1: ["reserveInventory:completed", "chargePayment:in doubt"],
        2: ["chargePayment:in doubt"],
        3: ["undo chargePayment:undone", "undo reserveInventory:undone"],
      },
      marks: ["recovery", "recovery", "operator"],
    },
  };
}

/** Refused by the partner at its first step, resubmitted by an operator, then processed. */
export function resubmittedLife(orderId: string, start: string): OrderLife {
  const record = new Script(orderId, start)
    .claim(0)
    .startStep(50, "reserveInventory")
    .fail(800, "reserveInventory")
    .operator(120_000, "resubmit")
    .claim(121_000)
    .startStep(121_050, "reserveInventory")
    .advance(121_500, "reserveInventory", "chargePayment")
    .advance(122_400, "chargePayment", "arrangeShipment")
    .advance(123_000, "arrangeShipment", "notifyCustomer")
    .completeStep(123_300, "notifyCustomer")
    .finish(123_300)
    .done();
  return {
    record,
    picture: {
      lanes: {
        1: ["reserveInventory:failed"],
        2: [
          "reserveInventory:completed",
          "chargePayment:completed",
          "arrangeShipment:completed",
          "notifyCustomer:completed",
        ],
      },
      marks: ["operator"],
    },
  };
}

/** Deferred once for an open breaker, then its second attempt still running its second step. */
export function runningLife(orderId: string, start: string): OrderLife {
  const record = new Script(orderId, start)
    .claim(0)
    .startStep(100, "reserveInventory")
    .defer(300, "reserveInventory", 5_000)
    .claim(6_000)
    .startStep(6_100, "reserveInventory")
    .advance(7_000, "reserveInventory", "chargePayment")
    .done();
  return {
    record,
    picture: {
      lanes: {
        1: ["reserveInventory:deferred"],
        2: ["reserveInventory:completed", "chargePayment:running"],
      },
      marks: [],
    },
  };
}
