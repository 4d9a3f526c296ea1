// The public types. Every amount is optional: absent means "nobody told us", which a record
// must never turn into 0 (a sandbox given nothing is a different, false, fact).

import type { Context, MeterProvider, TracerProvider } from '@opentelemetry/api';

/** Identity of a thing that holds resources (a pod, a host): `id` and `scope` are never endpoints. */
export interface ResourceDesignator {
  /** Matches `^[a-z0-9][a-z0-9_.-]{0,62}$` (e.g. `pod`, `host`). */
  readonly kind: string;
  /** 1 to 256 characters. */
  readonly id: string;
  /** Where `id` is unique (a namespace, a cluster); 1 to 256 characters. */
  readonly scope?: string;
}

/** Resource amounts: absent means unknown, never 0. Numbers are finite and ≥ 0. */
export interface SandboxResourceAmounts {
  /** CPU cores (0.5 is half a core). */
  readonly cpu?: number;
  readonly memoryMib?: number;
  readonly diskGib?: number;
  /** GPU count (fractions allowed, for shared GPUs). */
  readonly gpu?: number;
  /** GPU model, e.g. `a100-80gb` (1 to 128 characters). */
  readonly gpuType?: string;
}

/** What one component (a container of a pod, the process of a local sandbox) asked for and may use at most. */
export interface ComponentAllocation {
  /** Matches `^[a-z0-9][a-z0-9_.-]{0,62}$`; unique within an allocation. */
  readonly name: string;
  /** What the component is guaranteed; `{}` when unknown. */
  readonly requests: SandboxResourceAmounts;
  /** The most it may use; `{}` when unknown. */
  readonly limits: SandboxResourceAmounts;
}

/** What the infrastructure actually gave a sandbox, as its provider knows it. */
export interface ResourceAllocation {
  /** Who reports it (`kubernetes`, `docker`, `local-process`); matches `^[a-z0-9][a-z0-9_.-]{0,62}$`. */
  readonly source: string;
  readonly components: readonly ComponentAllocation[];
  /** The sandbox's own identity at the provider (pod, container). */
  readonly designator?: ResourceDesignator;
  /** The machine it landed on. */
  readonly host?: ResourceDesignator;
}

/** The part of a sandbox request this package reads; other fields of a provider's spec are ignored. */
export interface SandboxSpec {
  readonly resources: SandboxResourceAmounts;
}

/** A sandbox as its provider hands it out. Providers extend it with what they need (a pid, a pod name). */
export interface SandboxHandle {
  /** The provider's id of the sandbox (on spans, never on metrics). */
  readonly id: string;
  /** True when this process created the sandbox; only the owner records its allocation and samples. */
  readonly owned: boolean;
  /** The context the sandbox's records are parented to (usually that of the span that created it). */
  readonly context?: Context;
}

export type SandboxAttributeValue = string | number | boolean;

/** Span attributes; every key starts with `nemo.gym.sandbox.`. */
export type SandboxAttributes = Readonly<Record<string, SandboxAttributeValue>>;

/** What a sandbox provider can tell; implement what the infrastructure knows, leave the rest out. */
export interface ResourceProvider<H extends SandboxHandle = SandboxHandle> {
  /** What the infrastructure gave the sandbox. May throw or reject: the record is dropped and reported once. */
  resourceAllocation?(handle: H): ResourceAllocation | Promise<ResourceAllocation>;
  /**
   * What the sandbox uses now, as attributes under `nemo.gym.sandbox.` (e.g.
   * `nemo.gym.sandbox.resource.memory_mib`). May throw or reject: the sampler drops and counts it.
   */
  resourceSample?(handle: H): SandboxAttributes | Promise<SandboxAttributes>;
}

export interface SandboxTelemetryOptions {
  /** Used whatever the span groups; without it, the global one while traces export and `sandbox` is on. */
  readonly tracerProvider?: TracerProvider | undefined;
}

export interface RecordRequestOptions extends SandboxTelemetryOptions {
  /** Parent of the `gym.sandbox.request` span; defaults to the active context. */
  readonly context?: Context | undefined;
}

export interface ResourceSamplerOptions extends SandboxTelemetryOptions {
  /**
   * How long `stop()` waits for the last sample before it writes the final record without
   * it, in seconds, from 0 to 2147483.647. Default: 5 s, whatever the sampling interval.
   */
  readonly stopTimeoutSeconds?: number | undefined;
}

/** Live counters of a {@link ResourceSampler}. */
export interface ResourceSamplerStats {
  /** Sample records written, the final one included. */
  readonly samples: number;
  /** Provider calls that failed, returned no object or did not settle by the stop deadline; tracer failures. */
  readonly errors: number;
  /** Sample values dropped one by one (a reserved or foreign key, a bad value). */
  readonly dropped: number;
  /** Ticks skipped because the previous sample was still running. */
  readonly skipped: number;
}

export type ResourceSamplerState = 'idle' | 'running' | 'stopping' | 'stopped';

/** A sandbox that is a local child process (see {@link createProcessResourceProvider}). */
export interface ProcessSandboxHandle extends SandboxHandle {
  readonly pid: number;
  /** What the launcher reserved for and imposed on the process, if anything: reported as is. */
  readonly requests?: SandboxResourceAmounts;
  readonly limits?: SandboxResourceAmounts;
}

/** What {@link createProcessResourceProvider} returns: both capabilities, with their exact types. */
export interface ProcessResourceProvider extends ResourceProvider<ProcessSandboxHandle> {
  resourceAllocation(handle: ProcessSandboxHandle): ResourceAllocation;
  resourceSample(handle: ProcessSandboxHandle): Promise<SandboxAttributes>;
}

/** Defaults: `/proc`, USER_HZ 100, `os.hostname()`. */
export interface ProcessResourceProviderOptions {
  readonly procRoot?: string;
  readonly clockTicksPerSecond?: number;
  readonly hostname?: string;
}

export interface SandboxLifecycleOptions extends SandboxTelemetryOptions {
  /** `nemo.gym.sandbox.provider`: a name chosen in code (`docker`), never an id. */
  readonly provider: string;
  /** `false` for a borrowed sandbox: never added nor subtracted. Default `true`. */
  readonly owned?: boolean | undefined;
  /** Without it, the global MeterProvider while metrics export. */
  readonly meterProvider?: MeterProvider | undefined;
}

/** Where a {@link SandboxLifecycle} is: not created yet, being created, held, released. */
export type SandboxLifecycleState = 'new' | 'creating' | 'held' | 'released';
