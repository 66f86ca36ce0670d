// Types shared by the modules. The queues and the Cosmos DB containers come from JSON files that the code's
// tests also read; typing them here makes the compiler check those files' shape too.

@export()
@description('Tags put on every resource.')
type tagsType = { *: string }

@export()
@description('A Service Bus queue of queues.json.')
type queueType = {
  name: string
  lockDuration: string
  @minValue(1)
  maxDeliveryCount: int
  requiresDuplicateDetection: bool
  duplicateDetectionHistoryTimeWindow: string
  defaultMessageTimeToLive: string
  deadLetteringOnMessageExpiration: bool
}

@export()
@description('queues.json: every queue the code uses, under the keys of QUEUE_NAMES in src/config/names.ts.')
type queuesType = {
  orders: queueType
  invalidMessages: queueType
  agentRequests: queueType
  agentResponses: queueType
  orderStatus: queueType
  storefrontStatus: queueType
}

@export()
@description('state-container.json or recovery-container.json: a Cosmos DB container of src/adapters/cosmos/container-definition.ts.')
type cosmosContainerType = {
  database: string
  id: string
  partitionKey: resourceInput<'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2026-03-15'>.properties.resource.partitionKey
  @description('-1: time to live on, documents expire only by their own ttl. Absent: off.')
  defaultTtl: int?
  indexingPolicy: resourceInput<'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2026-03-15'>.properties.resource.indexingPolicy
}
