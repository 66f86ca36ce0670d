// What needs a person: dead-lettered messages, messages parked on the invalid-messages queue, orders
// that ended in Error, compensations that failed, and a partner operation's circuit breaker opening (and
// closing again). All but the first two come from the app's log: the alert sink writes one JSON line per
// alert, `{ time, level, event: "operator.alert", kind, orderId, reason, ... }`.

import { tagsType } from '../types.bicep'

param location string
param tags tagsType
param serviceBusNamespaceName string
param invalidMessagesQueueName string
param appInsightsName string
@description('Email address for alert notifications; alerts still fire, without notification, when empty.')
param alertEmail string

resource serviceBus 'Microsoft.ServiceBus/namespaces@2026-01-01' existing = {
  name: serviceBusNamespaceName
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

var actionGroupName = 'ag-order-operators'
var actionGroupIds = empty(alertEmail) ? [] : [resourceId('Microsoft.Insights/actionGroups', actionGroupName)]

resource operators 'Microsoft.Insights/actionGroups@2023-01-01' = if (!empty(alertEmail)) {
  name: actionGroupName
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'orders-ops'
    enabled: true
    emailReceivers: [
      { name: 'operators', emailAddress: alertEmail, useCommonAlertSchema: true }
    ]
  }
}

// A gauge: the alert stays fired until someone drains the dead-letter queue.
resource deadLettered 'Microsoft.Insights/metricAlerts@2026-01-01' = {
  name: 'dead-lettered-messages'
  location: 'global'
  tags: tags
  dependsOn: [operators]
  properties: {
    description: 'A queue holds dead-lettered messages (past the maximum delivery count, or expired).'
    severity: 1
    enabled: true
    scopes: [serviceBus.id]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'DeadLetteredMessages'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'DeadletteredMessages'
          dimensions: [{ name: 'EntityName', operator: 'Include', values: ['*'] }]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    actions: [for id in actionGroupIds: { actionGroupId: id }]
  }
}

resource parkedMessages 'Microsoft.Insights/metricAlerts@2026-01-01' = {
  name: 'invalid-messages-parked'
  location: 'global'
  tags: tags
  dependsOn: [operators]
  properties: {
    description: 'A consumer refused a message (invalid or conflicting order, malformed Agent message) and parked it, with the reason, on ${invalidMessagesQueueName}.'
    severity: 2
    enabled: true
    scopes: [serviceBus.id]
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    autoMitigate: true
    criteria: {
      'odata.type': 'Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria'
      allOf: [
        {
          criterionType: 'StaticThresholdCriterion'
          name: 'ParkedMessages'
          metricNamespace: 'Microsoft.ServiceBus/namespaces'
          metricName: 'ActiveMessages'
          dimensions: [{ name: 'EntityName', operator: 'Include', values: [invalidMessagesQueueName] }]
          operator: 'GreaterThan'
          threshold: 0
          timeAggregation: 'Maximum'
        }
      ]
    }
    actions: [for id in actionGroupIds: { actionGroupId: id }]
  }
}

// The JSON line may follow a prefix the host adds, so it is parsed from its first brace.
var operatorAlerts = 'traces | where message has "operator.alert" | extend line = parse_json(substring(message, indexof(message, "{"))) | where tostring(line.event) == "operator.alert" | extend kind = tostring(line.kind), orderId = tostring(line.orderId)'

var logAlerts = [
  {
    name: 'orders-in-error'
    description: 'An order ended in Error: a permanent fault (OrderFailed), recoveries exhausted (RecoveriesExhausted), or its longest wait for an open circuit breaker (PartnerUnavailable).'
    severity: 1
    query: '${operatorAlerts} | where kind in ("OrderFailed", "RecoveriesExhausted", "PartnerUnavailable")'
  }
  {
    name: 'compensation-failed'
    description: 'An undo failed or stalled: the order is CompensationFailed and some steps are still applied at the partner.'
    severity: 0
    query: '${operatorAlerts} | where kind == "CompensationFailed"'
  }
  {
    name: 'partner-breaker-opened'
    description: 'A partner operation failed too often (a run of transient failures, or their rate in the window): its circuit breaker opened, and its orders wait for the next probe (BreakerOpened; the reason names the operation and until when).'
    severity: 2
    query: '${operatorAlerts} | where kind == "BreakerOpened"'
  }
  {
    name: 'partner-breaker-probe-failed'
    description: 'The first probe after a partner operation\'s circuit breaker opened failed: the operation is down, not flaky; its orders wait, and past MAX_DEFERRAL_MS they are parked in Error with PartnerUnavailable (BreakerProbeFailed).'
    severity: 2
    query: '${operatorAlerts} | where kind == "BreakerProbeFailed"'
  }
  {
    name: 'partner-breaker-closed'
    description: 'A probe of a partner operation was answered: its circuit breaker closed and its orders go on (BreakerClosed).'
    severity: 3
    query: '${operatorAlerts} | where kind == "BreakerClosed"'
  }
]

resource logAlert 'Microsoft.Insights/scheduledQueryRules@2026-03-01' = [
  for alert in logAlerts: {
    name: alert.name
    location: location
    tags: tags
    kind: 'LogAlert'
    dependsOn: [operators]
    properties: {
      displayName: alert.name
      description: alert.description
      severity: alert.severity
      enabled: true
      scopes: [appInsights.id]
      evaluationFrequency: 'PT5M'
      windowSize: 'PT5M'
      criteria: {
        allOf: [
          {
            query: alert.query
            timeAggregation: 'Count'
            dimensions: [{ name: 'kind', operator: 'Include', values: ['*'] }]
            operator: 'GreaterThan'
            threshold: 0
            failingPeriods: { numberOfEvaluationPeriods: 1, minFailingPeriodsToAlert: 1 }
          }
        ]
      }
      autoMitigate: false
      actions: { actionGroups: actionGroupIds }
    }
  }
]
