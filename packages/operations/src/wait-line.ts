// The FIFO line both waiting adapters keep in front of their limit: an intrusive doubly linked
// list, so a waiter that leaves (its signal aborted, its admission deadline passed) unlinks in
// O(1) wherever it stands, and the line allocates nothing but the waiters themselves.

/** A waiter that can stand in a {@link WaitLine}. */
export interface InLine {
  prev: InLine | undefined;
  next: InLine | undefined;
  /** Standing in the line now. */
  queued: boolean;
}

/** A FIFO line of waiters. */
export class WaitLine<W extends InLine> {
  private headOf: W | undefined = undefined;
  private tail: W | undefined = undefined;
  /** Waiters in the line. */
  size = 0;

  /** The first waiter, if any. */
  get head(): W | undefined {
    return this.headOf;
  }

  /** Puts `waiter` at the end of the line. */
  push(waiter: W): void {
    waiter.queued = true;
    this.size++;
    if (this.tail === undefined) {
      this.headOf = waiter;
    } else {
      waiter.prev = this.tail;
      this.tail.next = waiter;
    }
    this.tail = waiter;
  }

  /** Takes `waiter` out of the line, wherever it stands. It must be queued. */
  remove(waiter: W): void {
    waiter.queued = false;
    this.size--;
    const { prev, next } = waiter;
    if (prev === undefined) this.headOf = next as W | undefined;
    else prev.next = next;
    if (next === undefined) this.tail = prev as W | undefined;
    else next.prev = prev;
    waiter.prev = undefined;
    waiter.next = undefined;
  }
}
