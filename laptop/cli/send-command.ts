import { parseArgs } from "node:util";
import { type Command, showUsage } from "./command.js";
import { HELP, integer } from "./flags.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas send --count <n> [flags]

Posts generated order messages to the Service Bus queue named by the settings
(ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace, read from the environment
or from ./local.settings.json), as a submitting application does.

  --count <n>                 orders to send (required)
  --queue <name>              queue (default orders)
  --reply-to <name>           status queue named in each order (default order-status)
  --seed <n>                  seed of the generated orders (default: from the clock)
`;

export const SEND: Command = {
  name: "send",
  summary: [
    "post generated order messages to the Service Bus queue named by the settings",
    "(ServiceBusConnection or ServiceBusConnection__fullyQualifiedNamespace, read from the",
    "environment or from ./local.settings.json)",
  ],
  usage: USAGE,
  run: send,
};

async function send(args: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    options: {
      count: { type: "string" },
      queue: { type: "string" },
      "reply-to": { type: "string" },
      seed: { type: "string" },
      ...HELP,
    },
  });
  if (values.help) return showUsage(USAGE);
  if (values.count === undefined) throw new UsageError("--count is required");
  const count = integer(values, "count", 0, 1, 1_000_000);
  const seed = integer(values, "seed", Date.now() % 1_000_000, 0, 2_147_483_647);
  const { sendToServiceBus } = await import("./send-to-service-bus.js");
  const result = await sendToServiceBus({
    env: process.env,
    cwd: process.cwd(),
    queueName: values.queue ?? "orders",
    count,
    seed,
    replyTo: values["reply-to"] ?? "order-status",
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return 0;
}
