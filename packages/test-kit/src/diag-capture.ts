// Real DiagLoggers registered with `diag.setLogger`: one that keeps every message (tests assert
// "logged once" on the output itself), and one that throws on every call (telemetry must
// survive a broken logger).

import { type DiagLogger, DiagLogLevel, diag } from '@opentelemetry/api';

export type DiagLevel = 'error' | 'warn' | 'info' | 'debug' | 'verbose';

/** One message as `diag` delivered it. */
export interface DiagMessage {
  readonly level: DiagLevel;
  readonly message: string;
  readonly args: readonly unknown[];
}

/** Keeps every message of every level. */
export class DiagCapture implements DiagLogger {
  readonly messages: DiagMessage[] = [];
  private stopped = false;
  private keep(level: DiagLevel, message: string, args: unknown[]): void {
    if (!this.stopped) this.messages.push({ level, message, args });
  }
  error = (message: string, ...args: unknown[]): void => this.keep('error', message, args);
  warn = (message: string, ...args: unknown[]): void => this.keep('warn', message, args);
  info = (message: string, ...args: unknown[]): void => this.keep('info', message, args);
  debug = (message: string, ...args: unknown[]): void => this.keep('debug', message, args);
  verbose = (message: string, ...args: unknown[]): void => this.keep('verbose', message, args);

  /** Messages whose text starts with `prefix` (e.g. '@gym/metrics:'). */
  from(prefix: string): DiagMessage[] {
    return this.messages.filter((entry) => entry.message.startsWith(prefix));
  }

  /** Messages at `level` or more severe (error > warn > info > debug > verbose). */
  atLeast(level: DiagLevel): DiagMessage[] {
    const order: DiagLevel[] = ['error', 'warn', 'info', 'debug', 'verbose'];
    return this.messages.filter((entry) => order.indexOf(entry.level) <= order.indexOf(level));
  }

  /** Each message and its arguments as one line of text. */
  lines(level: DiagLevel = 'verbose'): string[] {
    return this.atLeast(level).map((entry) => [entry.message, ...entry.args.map(String)].join(' '));
  }

  clear(): void {
    this.messages.length = 0;
  }

  /** Stops keeping messages and unregisters the global diag logger. */
  stop(): void {
    this.stopped = true;
    resetDiag();
  }
}

const silent: DiagLogger = { error() {}, warn() {}, info() {}, debug() {}, verbose() {} };

/**
 * Unregisters whatever global diag logger a test installed. `diag.disable()` alone logs through
 * the logger it removes (a throwing logger would throw from the test's cleanup), so a silent
 * logger is swapped in first.
 */
export function resetDiag(): void {
  diag.setLogger(silent, { logLevel: DiagLogLevel.NONE, suppressOverrideMessage: true });
  diag.disable();
}

/** Registers a fresh capturing logger as the global diag logger, at every level. */
export function captureDiag(): DiagCapture {
  const logger = new DiagCapture();
  diag.setLogger(logger, { logLevel: DiagLogLevel.ALL, suppressOverrideMessage: true });
  return logger;
}

/** A logger that throws on every call once armed, counting the calls it threw from. */
export class ThrowingDiagLogger implements DiagLogger {
  calls = 0;
  /** Off while the API registers or removes it (it logs through the logger it registers). */
  armed = false;
  constructor(readonly failure: Error = new Error('diag logger down')) {}
  private fail = (): void => {
    if (!this.armed) return;
    this.calls++;
    throw this.failure;
  };
  error = this.fail;
  warn = this.fail;
  info = this.fail;
  debug = this.fail;
  verbose = this.fail;
  stop(): void {
    this.armed = false;
    resetDiag();
  }
}

/** Registers a logger that throws on every call as the global diag logger. */
export function installThrowingDiagLogger(error?: Error): ThrowingDiagLogger {
  const logger = new ThrowingDiagLogger(error);
  diag.setLogger(logger, { logLevel: DiagLogLevel.ALL, suppressOverrideMessage: true });
  logger.armed = true;
  return logger;
}
