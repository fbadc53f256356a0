/**
 * Binary min-heap of timed events, stored in typed arrays (no object per event): the simulator pushes one
 * completion per request, so allocation-free pushes and pops are what keeps a suite run in minutes.
 */
export class EventHeap {
  private times: Float64Array;
  private kinds: Int32Array;
  private payloads: Int32Array;
  private count = 0;

  constructor(capacity = 1024) {
    this.times = new Float64Array(capacity);
    this.kinds = new Int32Array(capacity);
    this.payloads = new Int32Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Time of the earliest event, or +Infinity when empty. */
  peekTime(): number {
    return this.count > 0 ? this.times[0] : Infinity;
  }

  push(time: number, kind: number, payload: number): void {
    if (this.count === this.times.length) this.grow();
    let i = this.count++;
    const times = this.times;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (times[parent] <= time) break;
      times[i] = times[parent];
      this.kinds[i] = this.kinds[parent];
      this.payloads[i] = this.payloads[parent];
      i = parent;
    }
    times[i] = time;
    this.kinds[i] = kind;
    this.payloads[i] = payload;
  }

  /** Removes the earliest event; read it first with peekTime/topKind/topPayload. */
  pop(): void {
    const n = --this.count;
    if (n === 0) return;
    const times = this.times;
    const time = times[n];
    const kind = this.kinds[n];
    const payload = this.payloads[n];
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && times[child + 1] < times[child]) child++;
      if (times[child] >= time) break;
      times[i] = times[child];
      this.kinds[i] = this.kinds[child];
      this.payloads[i] = this.payloads[child];
      i = child;
    }
    times[i] = time;
    this.kinds[i] = kind;
    this.payloads[i] = payload;
  }

  topKind(): number {
    return this.kinds[0];
  }

  topPayload(): number {
    return this.payloads[0];
  }

  private grow(): void {
    const size = this.times.length * 2;
    const times = new Float64Array(size);
    times.set(this.times);
    const kinds = new Int32Array(size);
    kinds.set(this.kinds);
    const payloads = new Int32Array(size);
    payloads.set(this.payloads);
    this.times = times;
    this.kinds = kinds;
    this.payloads = payloads;
  }
}
