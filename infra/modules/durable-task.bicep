// The Durable Task Scheduler (DURABLE_BACKEND=dts): a managed backend for Durable Functions in place of the
// task hub in the host's storage account. The Function App reaches it with its identity (Durable Task Data
// Contributor, access.bicep) through DURABLE_TASK_SCHEDULER_CONNECTION_STRING (function-app.bicep); the
// scheduler's dashboard shows the task hub's orchestrations.

import { tagsType } from '../types.bicep'

param name string
param location string
param tags tagsType
@description('The task hub: TASKHUB_NAME, which host.json names as the hub.')
param taskHubName string

resource scheduler 'Microsoft.DurableTask/schedulers@2025-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    // Billed per action (a message dispatched to the app: an orchestration started, an activity scheduled or
    // its result processed, a timer fired), nothing while idle. Dedicated bills capacity units by the month.
    sku: { name: 'Consumption' }
    // Callers must hold a Durable Task data role (Entra ID); no network restriction, like the other services
    // here. An empty list would refuse everyone.
    ipAllowlist: ['0.0.0.0/0']
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2025-11-01' = {
  parent: scheduler
  name: taskHubName
}

output name string = scheduler.name
output endpoint string = scheduler.properties.endpoint
output dashboardUrl string = taskHub.properties.dashboardUrl
