// The console exporter writes with console.dir / console.log; tests that use it keep what it
// writes here instead of dumping it into the test output, and may assert on it.

type ConsoleWrite = (...args: unknown[]) => void;

export interface ConsoleCapture {
  /** The arguments of every console.dir / console.log call since the capture began. */
  readonly calls: unknown[][];
  restore(): void;
}

/** Captures console.dir and console.log until `restore()`. */
export function captureConsole(): ConsoleCapture {
  const calls: unknown[][] = [];
  const saved = { dir: console.dir, log: console.log };
  const keep: ConsoleWrite = (...args) => {
    calls.push(args);
  };
  console.dir = keep;
  console.log = keep;
  return {
    calls,
    restore: () => {
      console.dir = saved.dir;
      console.log = saved.log;
    },
  };
}
