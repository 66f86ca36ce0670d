export { ServiceBusStandIn, type ServiceBusStandInOptions } from "./broker.js";
export type { QueueEntity } from "./entity.js";
