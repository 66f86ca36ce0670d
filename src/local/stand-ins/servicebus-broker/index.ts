export { ServiceBusTestBroker, type ServiceBusTestBrokerOptions } from "./broker.js";
export type { QueueEntity } from "./entity.js";
