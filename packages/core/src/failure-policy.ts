// One sentence, the same in every README: what a user may rely on when telemetry fails.

/** The failure policy of every gym-telemetry package, word for word as each README states it. */
export const FAILURE_POLICY =
  'Telemetry never throws into your code and never changes what your code returns; a programming error in arguments throws at once, naming the value and what is allowed.' as const;
