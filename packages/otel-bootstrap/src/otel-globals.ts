// Whether someone already registered an SDK piece with the OpenTelemetry API. The API keeps
// its globals in one slot, `globalThis[Symbol.for('opentelemetry.js.api.1')]`, shared by
// every 1.x copy of the API; an entry exists only after a registration. Reading the slot
// answers "is a real provider there?" without registering anything (a failed registration
// attempt would log a duplicate-registration error through diag). Whether the API this
// package loads can use what is there is a separate question (see sdk-pipeline.ts).

/** The four things the bootstrap may register. */
export type OtelGlobalKind = 'metrics' | 'trace' | 'context' | 'propagation';

type Slot = Partial<Record<OtelGlobalKind | 'version', unknown>>;

function slot(): Slot | undefined {
  return (globalThis as { [key: symbol]: Slot | undefined })[Symbol.for('opentelemetry.js.api.1')];
}

/** What is registered for `kind`, or `undefined`. */
export function registeredGlobal(kind: OtelGlobalKind): unknown {
  return slot()?.[kind];
}

/** True when someone registered a `kind` global (a MeterProvider, a TracerProvider, …). */
export function isGloballyRegistered(kind: OtelGlobalKind): boolean {
  return registeredGlobal(kind) !== undefined;
}

/** The version of the API copy that created the global slot (`1.9.1`), when it is a short string. */
export function apiSlotVersion(): string | undefined {
  const version = slot()?.version;
  return typeof version === 'string' && version.length <= 40 ? version : undefined;
}
