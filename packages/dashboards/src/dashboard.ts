// The Grafana dashboard, built with the Grafana Foundation SDK's typed builders (the JSON is
// never edited by hand). Rows go from the core story (is the limit or the work slow?) to
// the causes (which limit, which outcome, the process itself, sandboxes). Every query reads
// recorded series where a rate or quantile is involved, joined to `target_info` so the
// service, server and run variables filter every panel the same way.

import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { OUTCOMES } from '@gym/constants';
import { ALERT_NAMES } from './alert-rules.js';
import { eitherNaming, type Naming, recordedNames } from './naming.js';
import { by } from './recording-rules.js';
import type { SeriesId } from './series.js';
import { LABELS, TARGET_INFO } from './series.js';

/** The dashboard's uid: stable, so re-importing replaces it. */
export const DASHBOARD_UID = 'gym-telemetry' as const;

/** Template variable names. */
export const VARIABLES = { datasource: 'datasource', service: 'job', server: 'server', run: 'run_id' } as const;

const DATASOURCE: common.DataSourceRef = { type: 'prometheus', uid: `\${${VARIABLES.datasource}}` };

/** The processes the variables select: one series per (job, instance), value 1. */
function selectedTargets(extraLabel?: string, withServer = true): string {
  const matchers = [`job=~"$${VARIABLES.service}"`];
  if (withServer) matchers.push(`${LABELS.serverName}=~"$${VARIABLES.server}"`);
  matchers.push(`${LABELS.runId}=~"$${VARIABLES.run}"`);
  const keep = extraLabel === undefined ? by('job', 'instance') : by('job', 'instance', extraLabel);
  return `max ${keep} (${TARGET_INFO}{${matchers.join(', ')}})`;
}

/** `expr` restricted to the selected processes (the join keeps expr's labels, value unchanged). */
function selected(expr: string): string {
  return `(${expr} * on (job, instance) group_left () ${selectedTargets()})`;
}

/** `expr` restricted to the selected processes, with the server name copied onto each series. */
function perServer(expr: string): string {
  return `(${expr} * on (job, instance) group_left (${LABELS.serverName}) ${selectedTargets(LABELS.serverName)})`;
}

function quantile(q: number, bucketRate: string, labels: readonly string[]): string {
  return `histogram_quantile(${q}, sum ${by(...labels, 'le')} (${selected(bucketRate)}))`;
}

function query(expr: string, legend: string): prometheus.DataqueryBuilder {
  return new prometheus.DataqueryBuilder().datasource(DATASOURCE).expr(expr).legendFormat(legend).range();
}

/** Fields the SDK's variable builders write that belong to interval variables only. */
const INTERVAL_ONLY_FIELDS = ['auto', 'auto_min', 'auto_count'] as const;

/**
 * What Grafana expects of the model and the builders leave out: a unique id for every panel and
 * row (in order), a refId for every query of a panel (A, B, …), and no interval-variable fields
 * on other kinds of variable.
 */
function finish(model: dashboard.Dashboard): dashboard.Dashboard {
  let id = 0;
  const number = (panel: dashboard.Panel | dashboard.RowPanel): void => {
    panel.id = ++id;
    if ('targets' in panel && Array.isArray(panel.targets)) {
      panel.targets.forEach((target, index) => {
        (target as { refId?: string }).refId = String.fromCharCode(65 + index);
      });
    }
    if (panel.type === 'row') for (const inner of (panel as dashboard.RowPanel).panels ?? []) number(inner);
  };
  for (const panel of model.panels ?? []) number(panel as dashboard.Panel | dashboard.RowPanel);
  for (const variable of model.templating?.list ?? []) {
    if (variable.type === 'interval') continue;
    for (const field of INTERVAL_ONLY_FIELDS) delete (variable as unknown as Record<string, unknown>)[field];
  }
  return model;
}

function panel(title: string, description: string, unit: string): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title(title)
    .description(description)
    .datasource(DATASOURCE)
    .unit(unit)
    .height(8)
    .span(12)
    .min(0)
    .legend(
      new common.VizLegendOptionsBuilder()
        .showLegend(true)
        .displayMode(common.LegendDisplayMode.Table)
        .placement(common.LegendPlacement.Bottom)
        .calcs(['lastNotNull', 'max']),
    )
    .tooltip(
      new common.VizTooltipOptionsBuilder().mode(common.TooltipDisplayMode.Multi).sort(common.SortOrder.Descending),
    );
}

function labelVariable(
  name: string,
  label: string,
  values: string,
  description: string,
): dashboard.QueryVariableBuilder {
  return new dashboard.QueryVariableBuilder(name)
    .label(label)
    .description(description)
    .datasource(DATASOURCE)
    .query(values)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .sort(dashboard.VariableSort.AlphabeticalAsc)
    .multi(true)
    .includeAll(true)
    .allValue('.*')
    .current({ selected: true, text: 'All', value: '$__all' });
}

/** The dashboard, as the Grafana JSON model. */
export function buildDashboard(names: Naming): dashboard.Dashboard {
  const r = recordedNames(names);
  const raw = (id: SeriesId): string => eitherNaming(names, id, 'series');
  const op = LABELS.operation;
  const limit = [LABELS.component, LABELS.limitName];
  const limitLegend = `{{${LABELS.component}}}/{{${LABELS.limitName}}}`;
  const notOk = OUTCOMES.filter((outcome) => outcome !== 'ok').join('|');
  const server = `{{${LABELS.serverName}}}`;

  const builder = new dashboard.DashboardBuilder('Gym telemetry: where the time goes')
    .uid(DASHBOARD_UID)
    .description(
      'Queue time against run time per operation, limit saturation, outcomes, verify, fleet size and startup, the Node process, sandboxes and outgoing connection pools of Gym resources servers. Generated by @gym/dashboards.',
    )
    .tags(['gym', 'gym-telemetry', 'opentelemetry'])
    .editable()
    .refresh('30s')
    .time({ from: 'now-1h', to: 'now' })
    .timezone('browser')
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .annotation(
      new dashboard.AnnotationQueryBuilder()
        .name('Gym alerts firing')
        .datasource(DATASOURCE)
        .enable(true)
        .iconColor('red')
        .target(
          new prometheus.DataqueryBuilder()
            .expr(`ALERTS{alertstate="firing", alertname=~"${ALERT_NAMES.join('|')}", job=~"$${VARIABLES.service}"}`)
            .refId('Anno')
            .interval('60s'),
        )
        .titleFormat('{{alertname}}')
        .textFormat(`{{instance}} {{${LABELS.operation}}} {{${LABELS.limitName}}}`)
        .tagKeys('severity'),
    )
    .withVariable(
      new dashboard.DatasourceVariableBuilder(VARIABLES.datasource)
        .label('Prometheus')
        .type('prometheus')
        .description('The Prometheus that scrapes the fleet and evaluates the gym-telemetry rules.'),
    )
    .withVariable(
      labelVariable(
        VARIABLES.service,
        'Service (job)',
        `label_values(${TARGET_INFO}, job)`,
        'The Prometheus job: the scrape job, or the service name when metrics arrive over OTLP.',
      ),
    )
    .withVariable(
      labelVariable(
        VARIABLES.server,
        'Server',
        `label_values(${TARGET_INFO}{job=~"$${VARIABLES.service}"}, ${LABELS.serverName})`,
        'The Gym server name (resource attribute nemo.gym.server.name, read from target_info).',
      ),
    )
    .withVariable(
      labelVariable(
        VARIABLES.run,
        'Run id',
        `label_values(${TARGET_INFO}{job=~"$${VARIABLES.service}"}, ${LABELS.runId})`,
        'The run id shared by the whole fleet (resource attribute nemo.run.id, read from target_info).',
      ),
    );

  // Row 1: the core story.
  builder
    .withRow(new dashboard.RowBuilder('Is the limit or the work slow? Queue time against run time'))
    .withPanel(
      panel(
        'Queue p99 against run p99, by operation',
        'Time waiting for a limit (queue) next to time running inside it (run). Queue above run: the limit, not the work, is where the time goes.',
        'ms',
      )
        .withTarget(query(quantile(0.99, r.operationQueueBucketRate, [op]), `{{${op}}} queue p99`))
        .withTarget(query(quantile(0.99, r.operationRunBucketRate, [op]), `{{${op}}} run p99`)),
    )
    .withPanel(
      panel(
        'Queue p50 against run p50, by operation',
        'The typical call: how long it waited for its limit and how long it ran.',
        'ms',
      )
        .withTarget(query(quantile(0.5, r.operationQueueBucketRate, [op]), `{{${op}}} queue p50`))
        .withTarget(query(quantile(0.5, r.operationRunBucketRate, [op]), `{{${op}}} run p50`)),
    )
    .withPanel(
      panel(
        'Waiting and running now, by operation',
        'Operations waiting for their limit and running inside it.',
        'short',
      )
        .withTarget(query(`sum ${by(op)} (${selected(raw('operationQueued'))})`, `{{${op}}} waiting`))
        .withTarget(query(`sum ${by(op)} (${selected(raw('operationActive'))})`, `{{${op}}} running`)),
    )
    .withPanel(
      panel('Calls per second, by operation', 'Finished calls per second, every outcome.', 'reqps').withTarget(
        query(`sum ${by(op)} (${selected(r.operationRunCountRate)})`, `{{${op}}}`),
      ),
    );

  // Row 2: which limit.
  builder
    .withRow(new dashboard.RowBuilder('Which limit is full? Saturation per limit'))
    .withPanel(
      panel(
        'Saturation (slots held / limit), busiest server',
        'Per limit, the highest share of slots held on any selected server. At 100% new callers queue.',
        'percentunit',
      ).withTarget(query(`max ${by(...limit)} (${selected(r.concurrencySaturation)})`, limitLegend)),
    )
    .withPanel(
      panel('Queue depth per limit', 'Callers waiting for a slot right now, summed over the selected servers.', 'short')
        .withTarget(query(`sum ${by(...limit)} (${selected(raw('concurrencyQueueDepth'))})`, limitLegend))
        .withTarget(
          query(`sum ${by(...limit)} (${selected(raw('concurrencyAvailable'))})`, `${limitLegend} free slots`),
        ),
    )
    .withPanel(
      panel(
        'Admission refusals per second',
        'Waits that ran out of admission time (timeout), were aborted by the caller (cancelled), or were refused because the queue was full (rejected).',
        'reqps',
      )
        .withTarget(query(`sum ${by(...limit)} (${selected(r.admissionTimeoutsRate)})`, `${limitLegend} timeout`))
        .withTarget(query(`sum ${by(...limit)} (${selected(r.admissionCancelledRate)})`, `${limitLegend} cancelled`))
        .withTarget(query(`sum ${by(...limit)} (${selected(r.admissionRejectedRate)})`, `${limitLegend} rejected`)),
    );

  // Row 3: outcomes.
  builder
    .withRow(new dashboard.RowBuilder('How does work end? Outcome shares'))
    .withPanel(
      panel(
        'Share of calls not ending ok, by operation and outcome',
        'timeout: the call ran past its deadline; crashed: the worker died; error: the call threw; cancelled: the caller went away.',
        'percentunit',
      ).withTarget(
        query(
          `sum ${by(op, LABELS.outcome)} (${selected(`${r.operationRunCountRate}{${LABELS.outcome}=~"${notOk}"}`)})` +
            ` / on (${op}) group_left () sum ${by(op)} (${selected(r.operationRunCountRate)})`,
          `{{${op}}} {{${LABELS.outcome}}}`,
        ),
      ),
    )
    .withPanel(
      panel('Calls per second, by outcome', 'Finished calls per second, by operation and outcome.', 'reqps').withTarget(
        query(
          `sum ${by(op, LABELS.outcome)} (${selected(r.operationRunCountRate)})`,
          `{{${op}}} {{${LABELS.outcome}}}`,
        ),
      ),
    );

  // Row 4: verify and rollouts.
  builder
    .withRow(new dashboard.RowBuilder('Verify and rollouts'))
    .withPanel(
      panel('Verify duration', 'One verify call, end to end.', 'ms')
        .withTarget(query(quantile(0.5, r.verifyBucketRate, []), 'p50'))
        .withTarget(query(quantile(0.99, r.verifyBucketRate, []), 'p99')),
    )
    .withPanel(
      panel(
        'Verify success rate, by server',
        'Share of verify calls that completed (not whether the task passed): cumulative since each server started, and over the last 5 minutes (what GymVerifySuccessDropping reads).',
        'percentunit',
      )
        .max(1)
        .withTarget(query(`max ${by(LABELS.serverName, 'instance')} (${perServer(raw('verifySuccessRate'))})`, server))
        .withTarget(
          query(`max ${by(LABELS.serverName, 'instance')} (${perServer(r.verifySuccessRatio)})`, `${server} last 5m`),
        ),
    )
    .withPanel(
      panel('Rollout duration', 'One rollout, end to end.', 'ms')
        .withTarget(query(quantile(0.5, r.rolloutBucketRate, []), 'p50'))
        .withTarget(query(quantile(0.99, r.rolloutBucketRate, []), 'p99')),
    );

  // Row 5: the fleet.
  const fleetTargets = selectedTargets(undefined, false);
  builder.withRow(new dashboard.RowBuilder('Is the whole fleet up?')).withPanel(
    panel(
      'Servers in the fleet',
      'gym.servers.active as the orchestrator reports it (its only writer), and the targets that answer their scrapes now. A drop means a server died; fewer answering than reported means one is down or hung.',
      'short',
    )
      .withTarget(
        query(
          `max ${by('job', 'instance')} (${raw('serversActive')} * on (job, instance) group_left () ${fleetTargets})`,
          '{{job}} {{instance}}',
        ),
      )
      .withTarget(
        query(
          `count ${by('job')} (${r.targetUp} * on (job, instance) group_left () ${fleetTargets})`,
          '{{job}} targets answering',
        ),
      ),
  );

  builder.withPanel(
    panel(
      'Startup stages, by server',
      "How long each stage of each server's startup took (from the process's start to serving, one point per stage), and all its stages together. A slow stage after a restart is where a server's time to ready goes.",
      'ms',
    )
      .withTarget(
        query(
          `max ${by(LABELS.serverName, 'instance', LABELS.startupStage)} (${selected(r.startupStageDuration)})`,
          `${server} {{${LABELS.startupStage}}}`,
        ),
      )
      .withTarget(
        query(`sum ${by(LABELS.serverName, 'instance')} (${selected(r.startupStageDuration)})`, `${server} all stages`),
      ),
  );

  // Row 6: the process.
  builder
    .withRow(new dashboard.RowBuilder('Is the server itself slow? Event loop, CPU, memory'))
    .withPanel(
      panel(
        'Event-loop lag p99, by server',
        'How late a timer woke. Above a few ms, something blocks the loop and every request waits.',
        'ms',
      ).withTarget(query(`max ${by(LABELS.serverName, 'instance')} (${perServer(r.eventLoopLagP99)})`, server)),
    )
    .withPanel(
      panel('CPU, by server and mode', 'CPU seconds per second (1 = one core busy).', 'short').withTarget(
        query(
          `sum ${by(LABELS.serverName, 'instance', LABELS.cpuMode)} (${perServer(r.cpuRate)})`,
          `${server} {{${LABELS.cpuMode}}}`,
        ),
      ),
    )
    .withPanel(
      panel('Memory, by server', 'Resident memory of each server process.', 'bytes').withTarget(
        query(`sum ${by(LABELS.serverName, 'instance')} (${perServer(raw('processMemoryUsage'))})`, server),
      ),
    )
    .withPanel(
      panel('Requests in flight, by server', 'HTTP requests between arrival and response end.', 'short').withTarget(
        query(`sum ${by(LABELS.serverName, 'instance')} (${perServer(raw('requestsInFlight'))})`, server),
      ),
    )
    .withPanel(
      panel(
        'Time in garbage collection, by server',
        'Share of wall time spent in V8 garbage-collection pauses.',
        'percentunit',
      ).withTarget(
        query(
          `sum ${by(LABELS.serverName, 'instance', LABELS.gcType)} (${perServer(r.gcTimeRate)})`,
          `${server} {{${LABELS.gcType}}}`,
        ),
      ),
    )
    .withPanel(
      panel('Threads and open file descriptors, by server', 'A steady climb is a leak.', 'short')
        .withTarget(
          query(
            `sum ${by(LABELS.serverName, 'instance')} (${perServer(raw('processThreadCount'))})`,
            `${server} threads`,
          ),
        )
        .withTarget(
          query(`sum ${by(LABELS.serverName, 'instance')} (${perServer(raw('processOpenFds'))})`, `${server} open fds`),
        ),
    );

  // Row 7: sandboxes.
  const provider = LABELS.provider;
  builder
    .withRow(new dashboard.RowBuilder('Sandboxes: held, startup, exec, retries'))
    .withPanel(
      panel('Sandboxes held, by provider', 'Sandboxes created and not yet released.', 'short').withTarget(
        query(`sum ${by(provider)} (${selected(raw('sandboxActive'))})`, `{{${provider}}}`),
      ),
    )
    .withPanel(
      panel('Sandbox startup, by provider', 'Time to create a sandbox.', 'ms')
        .withTarget(query(quantile(0.5, r.sandboxStartupBucketRate, [provider]), `{{${provider}}} p50`))
        .withTarget(query(quantile(0.99, r.sandboxStartupBucketRate, [provider]), `{{${provider}}} p99`)),
    )
    .withPanel(
      panel('Sandbox exec, by provider', 'One exec inside a sandbox.', 'ms')
        .withTarget(query(quantile(0.5, r.sandboxExecBucketRate, [provider]), `{{${provider}}} p50`))
        .withTarget(query(quantile(0.99, r.sandboxExecBucketRate, [provider]), `{{${provider}}} p99`)),
    )
    .withPanel(
      panel('Sandbox create retries per second, by provider', 'Create attempts that were retried.', 'reqps').withTarget(
        query(`sum ${by(provider)} (${selected(r.sandboxCreateRetryRate)})`, `{{${provider}}}`),
      ),
    );

  // Row 8: outgoing calls and their connection pools.
  const destination = LABELS.destination;
  builder
    .withRow(new dashboard.RowBuilder('Do outgoing calls wait for connections? Connection pools, by destination'))
    .withPanel(
      panel(
        'Connection wait p50 and p99, by destination',
        'How long the calls that found no free pooled connection waited for one (calls that found one at once record no wait).',
        'ms',
      )
        .withTarget(query(quantile(0.5, r.poolQueueBucketRate, [destination]), `{{${destination}}} p50`))
        .withTarget(query(quantile(0.99, r.poolQueueBucketRate, [destination]), `{{${destination}}} p99`)),
    )
    .withPanel(
      panel(
        'Share of calls that queued for a connection, by server and destination',
        "Per server, the share of its calls to each destination over 5 minutes that waited for a pooled connection (what GymOutgoingCallsWaitForConnections reads). High with long waits: raise the pool's connections, or the destination is the bottleneck.",
        'percentunit',
      )
        .max(1)
        .withTarget(
          query(
            `max ${by(LABELS.serverName, 'instance', destination)} (${perServer(r.poolQueuedRatio)})`,
            `${server} {{${destination}}}`,
          ),
        ),
    )
    .withPanel(
      panel(
        'Outgoing calls per second, by destination',
        'Calls that asked a pool for a connection, and those of them that had to wait.',
        'reqps',
      )
        .withTarget(query(`sum ${by(destination)} (${selected(r.poolConnectRate)})`, `{{${destination}}} calls`))
        .withTarget(query(`sum ${by(destination)} (${selected(r.poolQueueCountRate)})`, `{{${destination}}} queued`)),
    );

  return finish(builder.build());
}
