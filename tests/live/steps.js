// The scripted answers of a mock model: queued by the test, taken by the
// agent's requests in order; a request that finds none waits for the next.
export function stepQueue() {
  const steps = [];
  const waiting = [];
  return {
    /** Queues the model's next answer. */
    next(step) {
      const w = waiting.shift();
      if (w) w(step);
      else steps.push(step);
    },
    /** The next answer, once there is one. */
    take: () => (steps.length ? Promise.resolve(steps.shift()) : new Promise((resolve) => waiting.push(resolve))),
    /** How many requests wait for an answer. */
    waiting: () => waiting.length,
    /** Answers queued and not yet taken. */
    queued: () => steps.length,
  };
}
