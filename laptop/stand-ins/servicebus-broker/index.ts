export { ServiceBusStandIn, type ServiceBusStandInOptions } from "./broker.js";
export type { QueueEntity, QueueObserver, QueueOperation } from "./entity.js";
