// Whether someone already registered an SDK piece with the OpenTelemetry API. The API keeps
// its globals in one slot, `globalThis[Symbol.for('opentelemetry.js.api.1')]`, shared by
// every 1.x copy of the API; an entry exists only after a registration. Reading the slot
// answers "is a real provider there?" without registering anything (a failed registration
// attempt would log a duplicate-registration error through diag). Whether the API this
// package loads can use what is there is a separate question (see sdk-pipeline.ts).

/** The API's global slot (see @opentelemetry/api `internal/global-utils`). */
const OTEL_API_KEY = Symbol.for('opentelemetry.js.api.1');

/** The four things the bootstrap may register. */
export type OtelGlobalKind = 'metrics' | 'trace' | 'context' | 'propagation';

type OtelGlobalSlot = { [OTEL_API_KEY]?: Partial<Record<OtelGlobalKind | 'version', unknown>> };

function slot(): Partial<Record<OtelGlobalKind | 'version', unknown>> | undefined {
  try {
    const value = (globalThis as OtelGlobalSlot)[OTEL_API_KEY];
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** What is registered for `kind`, or `undefined`. Never throws. */
export function registeredGlobal(kind: OtelGlobalKind): unknown {
  try {
    return slot()?.[kind];
  } catch {
    return undefined;
  }
}

/** True when someone registered a `kind` global (a MeterProvider, a TracerProvider, …). */
export function isGloballyRegistered(kind: OtelGlobalKind): boolean {
  return registeredGlobal(kind) !== undefined;
}

/** The version of the API copy that created the global slot (`1.9.1`), when it is a short string. */
export function apiSlotVersion(): string | undefined {
  try {
    const version = slot()?.version;
    return typeof version === 'string' && version.length <= 40 ? version : undefined;
  } catch {
    return undefined;
  }
}
