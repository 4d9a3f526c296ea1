// What is registered with the OpenTelemetry API, read from the global slot every 1.x copy of the
// API shares, without registering anything (a refused registration would log through diag).

export type OtelGlobalKind = 'metrics' | 'trace' | 'context' | 'propagation';

type Slot = Partial<Record<OtelGlobalKind | 'version', unknown>>;

function slot(): Slot | undefined {
  return (globalThis as { [key: symbol]: Slot | undefined })[Symbol.for('opentelemetry.js.api.1')];
}

/** What is registered for `kind`, or `undefined`. */
export function registeredGlobal(kind: OtelGlobalKind): unknown {
  return slot()?.[kind];
}

/** True when someone registered a `kind` global. */
export function isGloballyRegistered(kind: OtelGlobalKind): boolean {
  return registeredGlobal(kind) !== undefined;
}

/** The version of the API copy that created the global slot. */
export function apiSlotVersion(): string | undefined {
  return slot()?.version as string | undefined;
}
