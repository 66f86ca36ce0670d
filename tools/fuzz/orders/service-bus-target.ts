import { FUNCTION_NAMES } from "../../../src/functions/function-names.js";
import { createSubmissionTrigger } from "../../../src/functions/handlers/submission-trigger.js";
import { orderQueueMessage } from "../../../src/scheduler/order-message-id.js";
import { breakages, CapturedLog } from "../captured-log.js";
import { DeadLetterCursor } from "../dead-letters.js";
import { refusingDurableClient } from "../fuzz-pipeline.js";
import type { FuzzTarget } from "../target.js";
import { OrderCaseRunner } from "./case-runner.js";
import { deliverOne } from "./functions-host.js";
import type { Observed } from "./judge.js";
import { type OrderCase, orderCase } from "./order-case.js";
import { openServiceBusApp, type ServiceBusApp } from "./service-bus-app.js";
import { queueBody, type Submission } from "./submission.js";

/**
 * Order messages sent to Service Bus (the in-process broker) with the adapter `sas send` uses, and
 * delivered to the Azure app's `submitOrder` function, which parks what it refuses on
 * `invalid-messages`. The starter it nudges after an accepted order is left out.
 */
export function serviceBusTarget(): FuzzTarget<OrderCase> {
  return {
    name: "orders: Service Bus",
    arbitrary: orderCase({ http: false }),
    open: async () => {
      const log = new CapturedLog();
      const app = await openServiceBusApp(log);
      const runner = new OrderCaseRunner(app.stores, serviceBusChannel(app, log));
      return { run: (value, tally) => runner.run(value, tally), close: () => app.close() };
    },
  };
}

function serviceBusChannel(app: ServiceBusApp, log: CapturedLog) {
  const trigger = createSubmissionTrigger(app.services, {
    nudgeStarter: async () => {},
    durableOf: () => NO_DURABLE_CLIENT,
  });
  // The SDK reads a parked message's reason from its application properties, as from a dead letter's.
  const parked = new DeadLetterCursor(app.invalidMessages);
  const deadLettered = new DeadLetterCursor(app.orders.deadLetterQueue);
  return {
    async send(submission: Submission): Promise<Observed> {
      const { wire, traceparent } = submission;
      const sent =
        wire.kind === "document"
          ? await app.sendDocument(wire.text, traceparent)
          : await app.orders.send(orderQueueMessage(queueBody(wire), traceparent));
      const queued = sent.accepted === 1;
      if (queued) await deliverOne(app.orders, FUNCTION_NAMES.submitOrder, trigger.submitOrder, log.logger);
      const deadLetters = [...(await parked.newMessages()), ...(await deadLettered.newMessages())];
      return {
        http: null,
        queued,
        deadLetters,
        unsettled: (await app.orders.peek(10)).length,
        breakages: breakages(log.take()),
      };
    },
  };
}

const NO_DURABLE_CLIENT = refusingDurableClient("no orchestration is started while orders are submitted");
