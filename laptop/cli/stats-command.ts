import type { Command } from "./command.js";
import { ORDERS_USAGE, ordersCommand, processIo } from "./orders-command.js";

/** `sas stats`: `sas orders stats`, the action that needs no order. */
export const STATS: Command = {
  name: "stats",
  summary: [
    "the orders in each state, in flight, the oldest Pending order, dead-lettered and parked",
    "messages, the last Supervisor scan, throughput and the partner's circuit breakers",
  ],
  usage: ORDERS_USAGE,
  run: (args) => ordersCommand(["stats", ...args], processIo()),
};
