// The public surface of @gym/sandbox-telemetry in one place. Every amount is optional on
// purpose: "absent" means "nobody told us", and a record that turned unknown into 0 would
// tell an operator that a sandbox was given nothing, which is a different (and false) fact.

import type { Context, MeterProvider, TracerProvider } from '@opentelemetry/api';

/**
 * Opaque identity of a thing that holds resources: a pod, a container, a VM, a host.
 * An identity, not an address: no endpoint, no credentials (values that look like a URL
 * are dropped).
 */
export interface ResourceDesignator {
  /** What kind of thing it is; matches `^[a-z0-9][a-z0-9_.-]{0,62}$` (e.g. `pod`, `host`, `process`). */
  readonly kind: string;
  /** Its identity within `scope` (1 to 256 characters). */
  readonly id: string;
  /** Where `id` is unique (a namespace, a cluster, a region); optional, 1 to 256 characters. */
  readonly scope?: string;
}

/**
 * Resource amounts. Every field is optional: absent means unknown, never 0. Numbers are
 * finite and ≥ 0.
 */
export interface SandboxResourceAmounts {
  /** CPU cores (fractions allowed: 0.5 is half a core). */
  readonly cpu?: number;
  /** Memory in MiB. */
  readonly memoryMib?: number;
  /** Disk in GiB. */
  readonly diskGib?: number;
  /** GPU count (fractions allowed, for shared GPUs). */
  readonly gpu?: number;
  /** GPU model, e.g. `a100-80gb` (1 to 128 characters). */
  readonly gpuType?: string;
}

/** What one component (a container of a pod, the process of a local sandbox) asked for and may use at most. */
export interface ComponentAllocation {
  /** Component name; matches `^[a-z0-9][a-z0-9_.-]{0,62}$` so attribute keys stay bounded. Unique within an allocation. */
  readonly name: string;
  /** What the component is guaranteed (scheduling requests). Use `{}` when unknown. */
  readonly requests: SandboxResourceAmounts;
  /** The most the component may use. Use `{}` when unknown. */
  readonly limits: SandboxResourceAmounts;
}

/** What the infrastructure actually gave a sandbox, as its provider knows it. */
export interface ResourceAllocation {
  /** Who reports it (`kubernetes`, `docker`, `local-process`); matches `^[a-z0-9][a-z0-9_.-]{0,62}$`. */
  readonly source: string;
  /** The components, each with its requests and limits; may be empty. */
  readonly components: readonly ComponentAllocation[];
  /** The sandbox's own identity at the provider (pod, container). */
  readonly designator?: ResourceDesignator;
  /** The machine it landed on. */
  readonly host?: ResourceDesignator;
}

/**
 * The minimal shape of a sandbox request this package reads: the requested resources.
 * A provider's own spec type may carry more (image, command, ...); those fields are ignored.
 */
export interface SandboxSpec {
  /** What the sandbox asks for. */
  readonly resources: SandboxResourceAmounts;
}

/** A sandbox as its provider hands it out. Providers extend it with what they need (a pid, a pod name). */
export interface SandboxHandle {
  /** The provider's id of the sandbox (may appear on spans, never on metrics). Non-empty. */
  readonly id: string;
  /**
   * True when this process created the sandbox and owns its lifetime; false for a borrowed
   * (attached) handle. Only the owner records allocation and samples, so a sandbox is never
   * sampled twice.
   */
  readonly owned: boolean;
  /** The context the sandbox's records are parented to (usually the context of the span that created it). */
  readonly context?: Context;
}

/** A span attribute value this package writes: primitives only. */
export type SandboxAttributeValue = string | number | boolean;

/** Span attributes; every key starts with `nemo.gym.sandbox.`. */
export type SandboxAttributes = Readonly<Record<string, SandboxAttributeValue>>;

/**
 * Optional capabilities of a sandbox provider. Implement what the infrastructure can tell;
 * leave the rest out rather than inventing numbers.
 */
export interface ResourceProvider<H extends SandboxHandle = SandboxHandle> {
  /** What the infrastructure gave the sandbox. May throw or reject: the record is dropped and logged once. */
  resourceAllocation?(handle: H): ResourceAllocation | Promise<ResourceAllocation>;
  /**
   * What the sandbox uses right now, as attributes under `nemo.gym.sandbox.` with primitive
   * values (e.g. `nemo.gym.sandbox.resource.memory_mib`). May throw or reject: the sampler
   * drops and counts it. Bad keys and values are dropped one by one and counted.
   */
  resourceSample?(handle: H): SandboxAttributes | Promise<SandboxAttributes>;
}

/**
 * Where records go. Without `tracerProvider`, records go to the global tracer, and only while
 * traces really export and the `sandbox` span group is on; otherwise nothing is built at all.
 * An injected provider is used as is, whatever the span groups.
 */
export interface SandboxTelemetryOptions {
  /** A provider to take the package's tracer from. */
  readonly tracerProvider?: TracerProvider | undefined;
}

/** Options of {@link recordRequest}. */
export interface RecordRequestOptions extends SandboxTelemetryOptions {
  /** Parent of the `gym.sandbox.request` span; defaults to the active context. */
  readonly context?: Context | undefined;
}

/** Options of {@link ResourceSampler}. */
export interface ResourceSamplerOptions extends SandboxTelemetryOptions {
  /**
   * How long `stop()` waits for the last sample before it writes the final record without
   * one, in seconds, from 0 to 2147483.647. Default: 5 s, whatever the sampling interval. The
   * wait never keeps the process alive.
   */
  readonly stopTimeoutSeconds?: number | undefined;
}

/** Live counters of a {@link ResourceSampler}. */
export interface ResourceSamplerStats {
  /** Sample records written, the final one included. */
  readonly samples: number;
  /** Provider calls that threw, rejected, returned something other than an object, or (at stop) did not settle in time; also tracer failures. */
  readonly errors: number;
  /** Single sample values dropped: a key outside `nemo.gym.sandbox.` or reserved, or a value that is not a string, boolean or finite number. */
  readonly dropped: number;
  /** Ticks skipped because the previous sample was still running (a slow provider). */
  readonly skipped: number;
}

/** Where a {@link ResourceSampler} is in its life. */
export type ResourceSamplerState = 'idle' | 'running' | 'stopping' | 'stopped';

/** A sandbox that is a local child process (see {@link createProcessResourceProvider}). */
export interface ProcessSandboxHandle extends SandboxHandle {
  /** The process id; a positive integer. */
  readonly pid: number;
  /** What the launcher reserved for the process, if anything (reported as is in the allocation). */
  readonly requests?: SandboxResourceAmounts;
  /** Limits the launcher imposed on the process, if any (reported as is in the allocation). */
  readonly limits?: SandboxResourceAmounts;
}

/** The provider {@link createProcessResourceProvider} returns: both capabilities, with their exact return types. */
export interface ProcessResourceProvider extends ResourceProvider<ProcessSandboxHandle> {
  /** Names the process and host; amounts only as the handle states them. */
  resourceAllocation(handle: ProcessSandboxHandle): ResourceAllocation;
  /** Reads /proc; rejects when the process is gone, a zombie, or its pid was reused. */
  resourceSample(handle: ProcessSandboxHandle): Promise<SandboxAttributes>;
}

/** Options of {@link createProcessResourceProvider}. */
export interface ProcessResourceProviderOptions {
  /** Root of the proc filesystem. Default `/proc` (a container that sees the host's at `/host/proc` says so here). */
  readonly procRoot?: string;
  /** Kernel clock ticks per second of `/proc/<pid>/stat` CPU times (USER_HZ). Default 100, Linux's value on every mainstream architecture. */
  readonly clockTicksPerSecond?: number;
  /** Host identity reported in the allocation. Default `os.hostname()`. */
  readonly hostname?: string;
}

/** Options of {@link SandboxLifecycle}. */
export interface SandboxLifecycleOptions {
  /**
   * The sandbox provider, the one metric attribute (`nemo.gym.sandbox.provider`); matches
   * `^[a-z0-9][a-z0-9_.-]{0,62}$` (a name chosen in code, e.g. `docker`, never an id).
   */
  readonly provider: string;
  /**
   * `false` for a borrowed (attached) sandbox that another owner created and will remove:
   * it is never added to nor subtracted from `gym.sandbox.active` and records no startup.
   * Default `true`.
   */
  readonly owned?: boolean | undefined;
  /**
   * A provider to take the package's meter from. Without it, the global MeterProvider while
   * metrics export. Either way nothing is recorded while the `sandbox` span group is off.
   */
  readonly meterProvider?: MeterProvider | undefined;
}

/** Where a {@link SandboxLifecycle} is: not created yet, being created, held, released. */
export type SandboxLifecycleState = 'new' | 'creating' | 'held' | 'released';
