// The Grafana dashboard, from one table of rows and panels: the core story (is the limit or the
// work slow?) first, then the causes. Every query is joined to `target_info`, so the service,
// server and run variables filter every panel the same way.

import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { type InstrumentId, OUTCOMES } from '@gym/constants';
import { alertRules } from './alert-rules.js';
import { eitherNaming, type Naming } from './prometheus-names.js';
import { recordedNames } from './recording-rules.js';
import { by, keptByLens, LABELS, LENS_KEPT_PREFIXES, TARGET_INFO } from './series.js';

const VARIABLES = { datasource: 'datasource', service: 'job', server: 'server', run: 'run_id' } as const;
const DATASOURCE: common.DataSourceRef = { type: 'prometheus', uid: `\${${VARIABLES.datasource}}` };

/** One query of a panel: its expression and its legend. */
type Target = readonly [expr: string, legend: string];

/** The processes the variables select: one series per (job, instance), value 1. */
function selectedTargets(extraLabels: readonly string[] = [], withServer = true): string {
  const server = withServer ? [`${LABELS.serverName}=~"$${VARIABLES.server}"`] : [];
  const matchers = [`job=~"$${VARIABLES.service}"`, ...server, `${LABELS.runId}=~"$${VARIABLES.run}"`];
  return `max ${by('job', 'instance', ...extraLabels)} (${TARGET_INFO}{${matchers.join(', ')}})`;
}

/** `agg by (labels)` of `expr` over the selected processes (the join keeps expr's labels and value). */
function over(agg: string, labels: readonly string[], expr: string): string {
  return `${agg} ${by(...labels)} ((${expr} * on (job, instance) group_left () ${selectedTargets()}))`;
}

/** `agg by (server, instance, extra)` of `expr`, with the server name copied onto each series. */
function perServer(agg: string, expr: string, ...extra: string[]): string {
  const join = `group_left (${LABELS.serverName}) ${selectedTargets([LABELS.serverName])}`;
  return `${agg} ${by(LABELS.serverName, 'instance', ...extra)} ((${expr} * on (job, instance) ${join}))`;
}

/** The q-quantile across the selected processes, by `labels`; the legend names the labels, `what` and `pNN`. */
function quantile(q: number, bucketRate: string, labels: readonly string[], what = ''): Target {
  const legend = [...labels.map((label) => `{{${label}}}`), what, `p${q * 100}`].filter((part) => part !== '');
  return [`histogram_quantile(${q}, ${over('sum', [...labels, 'le'], bucketRate)})`, legend.join(' ')];
}

/** The median and the p99 of one histogram, by `labels`. */
function p50p99(bucketRate: string, labels: readonly string[]): Target[] {
  return [quantile(0.5, bucketRate, labels), quantile(0.99, bucketRate, labels)];
}

/** A time-series panel with its queries (refIds A, B, …). */
function panel(title: string, unit: string, description: string, ...targets: Target[]): timeseries.PanelBuilder {
  const builder = new timeseries.PanelBuilder()
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
  targets.forEach(([expr, legend], index) => {
    const query = new prometheus.DataqueryBuilder().datasource(DATASOURCE).expr(expr).legendFormat(legend).range();
    builder.withTarget(query.refId(String.fromCharCode(65 + index)));
  });
  return builder;
}

/** What a panel says when its series do not pass NeMo Lens' metric filter (empty there), or ''. */
function filteredNote(names: Naming, ...ids: InstrumentId[]): string {
  const dropped = ids.flatMap((id) => names(id).map((variant) => variant.base)).filter((n) => !keptByLens(n));
  if (dropped.length === 0) return '';
  const prefixes = [...new Set(dropped.map((name) => `${name.split('_')[0]}_`))];
  return (
    ` Empty under a metric filter that keeps only ${LENS_KEPT_PREFIXES.join(', ')} (NeMo Lens' Prometheus), which drops the ${prefixes.map((p) => `${p}*`).join(', ')} series:` +
    ` add ${prefixes.join(', ')} to the filter's regex (see "Under a metric filter" in the @gym/dashboards README).`
  );
}

/** The rows of the dashboard, in order, each with its panels. */
function rows(names: Naming): Record<string, timeseries.PanelBuilder[]> {
  const r = recordedNames(names);
  const raw = (id: InstrumentId): string => eitherNaming(names, id);
  const { operation: op, outcome, provider, destination, serverName, startupStage } = LABELS;
  const limit = [LABELS.component, LABELS.limitName];
  const limitLegend = `{{${LABELS.component}}}/{{${LABELS.limitName}}}`;
  const notOk = OUTCOMES.filter((value) => value !== 'ok').join('|');
  const server = `{{${serverName}}}`;
  const fleet = selectedTargets([], false);
  return {
    'Is the limit or the work slow? Queue time against run time': [
      panel(
        'Queue p99 against run p99, by operation',
        'ms',
        'Time waiting for a limit (queue) next to time running inside it (run). Queue above run: the limit, not the work, is where the time goes.',
        quantile(0.99, r.operationQueueBucketRate, [op], 'queue'),
        quantile(0.99, r.operationRunBucketRate, [op], 'run'),
      ),
      panel(
        'Queue p50 against run p50, by operation',
        'ms',
        'The typical call: how long it waited for its limit and how long it ran.',
        quantile(0.5, r.operationQueueBucketRate, [op], 'queue'),
        quantile(0.5, r.operationRunBucketRate, [op], 'run'),
      ),
      panel(
        'Waiting and running now, by operation',
        'short',
        'Operations waiting for their limit and running inside it.',
        [over('sum', [op], raw('operationQueued')), `{{${op}}} waiting`],
        [over('sum', [op], raw('operationActive')), `{{${op}}} running`],
      ),
      panel('Calls per second, by operation', 'reqps', 'Finished calls per second, every outcome.', [
        over('sum', [op], r.operationRunCountRate),
        `{{${op}}}`,
      ]),
    ],
    'Which limit is full? Saturation per limit': [
      panel(
        'Saturation (slots held / limit), busiest server',
        'percentunit',
        'Per limit, the highest share of slots held on any selected server. At 100% new callers queue.',
        [over('max', limit, r.concurrencySaturation), limitLegend],
      ),
      panel(
        'Queue depth per limit',
        'short',
        'Callers waiting for a slot right now, summed over the selected servers.',
        [over('sum', limit, raw('concurrencyQueueDepth')), limitLegend],
        [over('sum', limit, raw('concurrencyAvailable')), `${limitLegend} free slots`],
      ),
      panel(
        'Oldest wait per limit',
        'ms',
        'Per limit, how long the oldest caller still waiting for a slot has waited, on the selected server where it is longest; 0 when nobody waits. ' +
          'A busy limit that moves drops back each time a slot is handed on; a line that only climbs is a limit that completes nothing (what GymQueueStuck reads).',
        [over('max', limit, r.oldestWait), limitLegend],
      ),
      panel(
        'Admission refusals per second',
        'reqps',
        'Waits that ran out of admission time (timeout), were aborted by the caller (cancelled), or were refused because the queue was full (rejected).',
        [over('sum', limit, r.admissionTimeoutsRate), `${limitLegend} timeout`],
        [over('sum', limit, r.admissionCancelledRate), `${limitLegend} cancelled`],
        [over('sum', limit, r.admissionRejectedRate), `${limitLegend} rejected`],
      ),
    ],
    'How does work end? Outcome shares': [
      panel(
        'Share of calls not ending ok, by operation and outcome',
        'percentunit',
        'timeout: the call ran past its deadline; crashed: the worker died; error: the call threw; cancelled: the caller went away.',
        [
          `${over('sum', [op, outcome], `${r.operationRunCountRate}{${outcome}=~"${notOk}"}`)}` +
            ` / on (${op}) group_left () ${over('sum', [op], r.operationRunCountRate)}`,
          `{{${op}}} {{${outcome}}}`,
        ],
      ),
      panel('Calls per second, by outcome', 'reqps', 'Finished calls per second, by operation and outcome.', [
        over('sum', [op, outcome], r.operationRunCountRate),
        `{{${op}}} {{${outcome}}}`,
      ]),
    ],
    'Verify and rollouts': [
      panel('Verify duration', 'ms', 'One verify call, end to end.', ...p50p99(r.verifyBucketRate, [])),
      panel(
        'Verify success rate, by server',
        'percentunit',
        'Share of verify calls that completed (not whether the task passed): cumulative since each server started, and over the last 5 minutes (what GymVerifySuccessDropping reads).',
        [perServer('max', raw('verifySuccessRate')), server],
        [perServer('max', r.verifySuccessRatio), `${server} last 5m`],
      ).max(1),
      panel('Rollout duration', 'ms', 'One rollout, end to end.', ...p50p99(r.rolloutBucketRate, [])),
    ],
    'Is the whole fleet up?': [
      panel(
        'Servers in the fleet',
        'short',
        'gym.servers.active as the orchestrator reports it (its only writer), and the targets that answer their scrapes now. A drop means a server died; fewer answering than reported means one is down or hung.',
        [
          `max ${by('job', 'instance')} (${raw('serversActive')} * on (job, instance) group_left () ${fleet})`,
          '{{job}} {{instance}}',
        ],
        [`count ${by('job')} (${r.targetUp} * on (job, instance) group_left () ${fleet})`, '{{job}} targets answering'],
      ),
      panel(
        'Startup stages, by server',
        'ms',
        "How long each stage of each server's startup took (from the process's start to serving, one point per stage), and all its stages together. A slow stage after a restart is where a server's time to ready goes.",
        [over('max', [serverName, 'instance', startupStage], r.startupStageDuration), `${server} {{${startupStage}}}`],
        [over('sum', [serverName, 'instance'], r.startupStageDuration), `${server} all stages`],
      ),
    ],
    'Is the server itself slow? Event loop, CPU, memory': [
      panel(
        'Event-loop lag p99, by server',
        'ms',
        'How late a timer woke. Above a few ms, something blocks the loop and every request waits.',
        [perServer('max', r.eventLoopLagP99), server],
      ),
      panel(
        'CPU, by server and mode',
        'short',
        `CPU seconds per second (1 = one core busy).${filteredNote(names, 'processCpuTime')}`,
        [perServer('sum', r.cpuRate, LABELS.cpuMode), `${server} {{${LABELS.cpuMode}}}`],
      ),
      panel(
        'Memory, by server',
        'bytes',
        `Resident memory of each server process.${filteredNote(names, 'processMemoryUsage')}`,
        [perServer('sum', raw('processMemoryUsage')), server],
      ),
      panel('Requests in flight, by server', 'short', 'HTTP requests between arrival and response end.', [
        perServer('sum', raw('requestsInFlight')),
        server,
      ]),
      panel(
        'Time in garbage collection, by server',
        'percentunit',
        `Share of wall time spent in V8 garbage-collection pauses.${filteredNote(names, 'gcDuration')}`,
        [perServer('sum', r.gcTimeRate, LABELS.gcType), `${server} {{${LABELS.gcType}}}`],
      ),
      panel(
        'Threads and open file descriptors, by server',
        'short',
        `A steady climb is a leak.${filteredNote(names, 'processThreadCount', 'processOpenFds')}`,
        [perServer('sum', raw('processThreadCount')), `${server} threads`],
        [perServer('sum', raw('processOpenFds')), `${server} open fds`],
      ),
    ],
    'Sandboxes: held, startup, exec, retries': [
      panel('Sandboxes held, by provider', 'short', 'Sandboxes created and not yet released.', [
        over('sum', [provider], raw('sandboxActive')),
        `{{${provider}}}`,
      ]),
      panel(
        'Sandbox startup, by provider',
        'ms',
        'Time to create a sandbox.',
        ...p50p99(r.sandboxStartupBucketRate, [provider]),
      ),
      panel(
        'Sandbox exec, by provider',
        'ms',
        'One exec inside a sandbox.',
        ...p50p99(r.sandboxExecBucketRate, [provider]),
      ),
      panel('Sandbox create retries per second, by provider', 'reqps', 'Create attempts that were retried.', [
        over('sum', [provider], r.sandboxCreateRetryRate),
        `{{${provider}}}`,
      ]),
    ],
    'Do outgoing calls wait for connections? Connection pools, by destination': [
      panel(
        'Connection wait p50 and p99, by destination',
        'ms',
        'How long the calls that found no free pooled connection waited for one (calls that found one at once record no wait).',
        ...p50p99(r.poolQueueBucketRate, [destination]),
      ),
      panel(
        'Share of calls that queued for a connection, by server and destination',
        'percentunit',
        "Per server, the share of its calls to each destination over 5 minutes that waited for a pooled connection (what GymOutgoingCallsWaitForConnections reads). High with long waits: raise the pool's connections, or the destination is the bottleneck.",
        [perServer('max', r.poolQueuedRatio, destination), `${server} {{${destination}}}`],
      ).max(1),
      panel(
        'Outgoing calls per second, by destination',
        'reqps',
        'Calls that asked a pool for a connection, and those of them that had to wait.',
        [over('sum', [destination], r.poolConnectRate), `{{${destination}}} calls`],
        [over('sum', [destination], r.poolQueueCountRate), `{{${destination}}} queued`],
      ),
    ],
  };
}

/** The template variables that select processes. */
function labelVariables(): dashboard.QueryVariableBuilder[] {
  const fromService = `${TARGET_INFO}{job=~"$${VARIABLES.service}"}`;
  const variables = [
    [
      VARIABLES.service,
      'Service (job)',
      `label_values(${TARGET_INFO}, job)`,
      'The Prometheus job: the scrape job, or the service name when metrics arrive over OTLP.',
    ],
    [
      VARIABLES.server,
      'Server',
      `label_values(${fromService}, ${LABELS.serverName})`,
      'The Gym server name (resource attribute nemo.gym.server.name, read from target_info).',
    ],
    [
      VARIABLES.run,
      'Run id',
      `label_values(${fromService}, ${LABELS.runId})`,
      'The run id shared by the whole fleet (resource attribute nemo.run.id, read from target_info).',
    ],
  ] as const;
  return variables.map(([name, label, values, description]) =>
    new dashboard.QueryVariableBuilder(name)
      .label(label)
      .description(description)
      .datasource(DATASOURCE)
      .query(values)
      .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
      .sort(dashboard.VariableSort.AlphabeticalAsc)
      .multi(true)
      .includeAll(true)
      .allValue('.*')
      .current({ selected: true, text: 'All', value: '$__all' }),
  );
}

/** The dashboard, as the Grafana JSON model. */
export function buildDashboard(names: Naming): dashboard.Dashboard {
  const alerts = alertRules(names)
    .rules.map(({ alert }) => alert)
    .join('|');
  const builder = new dashboard.DashboardBuilder('Gym telemetry: where the time goes')
    .uid('gym-telemetry')
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
            .expr(`ALERTS{alertstate="firing", alertname=~"${alerts}", job=~"$${VARIABLES.service}"}`)
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
    );
  for (const variable of labelVariables()) builder.withVariable(variable);
  // Grafana wants a unique id on every row and panel, which the builders leave out.
  let id = 0;
  for (const [title, panels] of Object.entries(rows(names))) {
    builder.withRow(new dashboard.RowBuilder(title).id(++id));
    for (const panel of panels) builder.withPanel(panel.id(++id));
  }
  const model = builder.build();
  // The SDK's variable builders also write fields of interval variables, which Grafana's schema refuses.
  for (const variable of model.templating?.list ?? []) {
    for (const field of ['auto', 'auto_min', 'auto_count'] as const) delete variable[field];
  }
  return model;
}
