// Types of scripts/otelcol.mjs, for the Collector suite (apps/demo/test/collector.e2e.ts).

/** The Collector binary to run, or why there is none. */
export type FoundOtelcol =
  | { readonly found: true; readonly path: string }
  | { readonly found: false; readonly path: string | undefined; readonly reason: string };

/** The folder of the Collector's Go module (tools/otelcol). */
export declare const OTELCOL_DIR: string;
/** `${XDG_CACHE_HOME:-~/.cache}/gym-telemetry`. */
export declare function cacheDir(env?: NodeJS.ProcessEnv): string;
/** GYM_OTELCOL when set, else the cached build of tools/otelcol for this Go toolchain. */
export declare function findOtelcol(env?: NodeJS.ProcessEnv): FoundOtelcol;
/** Builds the binary into the cache unless it is there. */
export declare function buildOtelcol(env?: NodeJS.ProcessEnv): {
  readonly path: string;
  readonly built: boolean;
  readonly seconds?: number;
  readonly mib?: number;
};
